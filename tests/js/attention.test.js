// pe.attention against a naive double-precision reference (attention-ref.js), on the SIMD and the scalar
// build: random shapes (tails of the 16-query / 32-key / 4-lane blocking, headDim not a multiple of 4, 1..16
// heads, grouped-query and multi-query), qLen 1 against kLen up to 4096, both layouts, causal or not, ALiBi
// (standard and custom slopes), RoPE of several scaling types (default, linear, yarn, llama3, dynamic,
// partial rotary, interleaved pairs), explicit positions; returnWeights; SIMD == scalar bit for bit.
//
// Tolerances, and why (u = 2^-24, the float32 unit roundoff):
// - The kernel's error is in the logits: a dot product of D float32 products summed in 4 lanes of D/4 terms
//   each (error <= (D/4 + 2) u Σ|q_d k_d|), times the float32 scale, plus the ALiBi term slope · (kpos − qpos)
//   rounded once, plus RoPE's rotated copies (~3u relative per element, and cos/sin within 2e-7). A logit error
//   δ moves a softmax weight by a relative δ and the output by at most ~2 δ max|v|; the expf polynomial
//   (~2 ulp), the normalisation and the accumulation Σ p v (kLen terms, but with weights summing to 1) add a few
//   u · max|v| more. For each case the test computes
//       bound = max|v| · (2 δmax + 16 u),   δmax = max over visible logits of (D/4 + 8) u (scale Σ|q_d k_d|) + 2 u |logit| + 2 u |bias|
//   from the double reference's own numbers and requires |out − ref| <= bound (weights: <= bound / max|v|).
//   These are worst-case bounds; the measured errors are printed as a fraction of them.
// - SIMD vs scalar: 0. attention.c runs the same operations in the same order in both builds (4-lane partial
//   sums combined as (p0 + p2) + (p1 + p3), one expf polynomial, -ffp-contract=off), and the RoPE copies come
//   from the RoPE kernels that already agree bit for bit.
// - Weights rows sum to 1 within kLen · 2u (each weight is rounded once after the division by the row sum).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, refApply, Worst, assertThrowsNaming, assertBitEqual } from './helpers.js';
import { refAttention, at } from './attention-ref.js';
import { makeInit, compileBytes, decodeBase64 } from '../../web/src/loader.js';
import { simdWasmBase64, scalarWasmBase64 } from '../../web/src/wasm-inline.js';

const worst = new Worst();
const U = 2 ** -24;

const ROPES = {
  default: { headDim: 0 },
  linear: { scaling: { type: 'linear', factor: 4 } },
  yarn: { maxPositionEmbeddings: 32768, scaling: { type: 'yarn', factor: 8, originalMaxPositionEmbeddings: 4096 } },
  llama3: {
    base: 500000,
    scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
  },
  dynamic: { maxPositionEmbeddings: 64, scaling: { type: 'dynamic', factor: 2 } },
  partial: { rotaryDimFraction: 0.5 },
  interleaved: { pairing: 'interleaved', base: 100 },
};

/** A pe.rope of kind `kind` for headDim D, and what the reference needs for a given seqLen. */
function makeRope(pe, kind, D) {
  const { rotaryDimFraction, headDim: _hd, ...o } = ROPES[kind];
  const opts = { headDim: D, ...o };
  if (rotaryDimFraction) opts.rotaryDim = Math.max(2, 2 * Math.floor((D * rotaryDimFraction) / 2));
  return pe.rope(opts);
}

function ropeRef(rope, seqLen) {
  return { invFreq: rope.invFreq64(seqLen), pairing: rope.pairing, scale: rope.attentionScaling(seqLen) };
}

/** Largest |x| */
function maxAbs(a) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]));
  return m;
}

/**
 * The per-case error bound described at the top: from the reference's rotated q, k and its logits. Returns
 * { out, weights } bounds.
 */
function bound(q, k, v, shape, opts, refQ, refK) {
  const { batch: B, heads: H, qLen: Sq, headDim: D } = shape;
  const KVH = shape.kvHeads ?? H;
  const Sk = shape.kLen ?? Sq;
  const layout = opts.layout ?? 'bshd';
  const scale = Math.abs(opts.scale ?? 1 / Math.sqrt(D));
  const qp = opts.qpos ?? Array.from({ length: Sq }, (_, i) => Sk - Sq + i);
  const kp = opts.kpos ?? Array.from({ length: Sk }, (_, j) => j);
  const group = H / KVH;
  let dmax = 0;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / group);
      const slope = opts.slopes ? Math.abs(opts.slopes[h]) : 0;
      for (let i = 0; i < Sq; i++) {
        for (let j = 0; j < Sk; j++) {
          if (opts.causal && kp[j] > qp[i]) continue;
          let absDot = 0;
          let dot = 0;
          for (let d = 0; d < D; d++) {
            const x = refQ[at(layout, Sq, H, D, b, h, i, d)] * refK[at(layout, Sk, KVH, D, b, g, j, d)];
            absDot += Math.abs(x);
            dot += x;
          }
          const bias = slope * Math.abs(kp[j] - qp[i]);
          const delta = (D / 4 + 8) * U * scale * absDot + 2 * U * Math.abs(scale * dot) + 2 * U * bias;
          if (delta > dmax) dmax = delta;
        }
      }
    }
  }
  const vmax = Math.max(maxAbs(v), 1e-30);
  return { out: vmax * (2 * dmax + 16 * U), weights: 2 * dmax + 16 * U };
}

/** Runs one case on a build and checks it against the reference; returns the output for the cross-build check. */
function checkCase(pe, build, c, ref, tol, label) {
  const opts = { ...c.options };
  if (c.ropeKind) opts.rope = c.ropes[build];
  const res = pe.attention(c.q, c.k, c.v, opts);
  assert.ok(res.out instanceof Float32Array);
  let err = 0;
  for (let i = 0; i < ref.out.length; i++) {
    const e = Math.abs(res.out[i] - ref.out[i]);
    if (!(e <= err)) err = e;
  }
  worst.record(`${label} out vs reference (abs, per-case bound)`, build, err, tol.out, c.id);
  assert.ok(err <= tol.out, `${c.id} [${build}]: out error ${err} > bound ${tol.out}`);
  if (c.options.returnWeights) {
    assert.ok(res.weights instanceof Float32Array);
    assert.equal(res.weights.length, ref.weights.length);
    let werr = 0;
    let serr = 0;
    const Sk = c.shape.kLen ?? c.shape.qLen;
    for (let r = 0; r < ref.weights.length / Sk; r++) {
      let sum = 0;
      let refSum = 0;
      for (let j = 0; j < Sk; j++) {
        const w = res.weights[r * Sk + j];
        const e = Math.abs(w - ref.weights[r * Sk + j]);
        if (!(e <= werr)) werr = e;
        if (ref.weights[r * Sk + j] === 0 && c.options.causal) assert.equal(w, 0, 'masked weights are exactly 0');
        sum += w;
        refSum += ref.weights[r * Sk + j];
      }
      if (refSum === 0) assert.equal(sum, 0, 'a fully masked row has all-zero weights');
      else serr = Math.max(serr, Math.abs(sum - 1));
    }
    const sumTol = Sk * 2 * U + 4 * U;
    worst.record(`${label} weights vs reference (abs, per-case bound)`, build, werr, tol.weights, c.id);
    worst.record(`${label} weights row sum − 1 (abs, kLen · 2u)`, build, serr, sumTol, c.id);
    assert.ok(werr <= tol.weights, `${c.id} [${build}]: weights error ${werr} > ${tol.weights}`);
    assert.ok(serr <= sumTol, `${c.id} [${build}]: a weights row sums to 1 ± ${serr}`);
  } else {
    assert.equal('weights' in res, false, 'no weights unless asked');
  }
  return res;
}

/** Builds a random case (seeded): inputs, options, and the reference. */
function randomCase(rng, id, pes, forced = {}) {
  const H = forced.heads ?? rng.pick([1, 2, 3, 4, 5, 6, 8, 12, 16]);
  const divisors = Array.from({ length: H }, (_, i) => i + 1).filter((d) => H % d === 0);
  const KVH = forced.kvHeads ?? rng.pick(divisors);
  const ropeKind = forced.ropeKind !== undefined ? forced.ropeKind : rng.uniform() < 0.45 ? rng.pick(Object.keys(ROPES)) : null;
  let D = forced.headDim ?? rng.pick([1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 31, 32, 33, 48, 64, 65, 96, 128]);
  if (ropeKind && D % 2 === 1) D += 1;
  const Sq = forced.qLen ?? rng.pick([1, 1, 2, 3, 4, 5, 7, 15, 16, 17, 20, 31, 33, 40]);
  let Sk = forced.kLen ?? Math.max(1, Sq + rng.pick([0, 0, 0, 1, 5, 16, 31, 32, 33, 70]) - (rng.uniform() < 0.1 ? Sq : 0));
  const posForm = forced.positions ?? (rng.uniform() < 0.25 ? rng.pick(['array', 'qk', 'q', 'k']) : 'default');
  if (ropeKind && (posForm === 'default' || posForm === 'k') && Sk < Sq) Sk = Sq; // default query positions would be negative
  if (posForm === 'array' && Sk < Sq) Sk = Sq;
  const B = forced.batch ?? rng.int(1, 3);
  const shape = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D };
  const layout = forced.layout ?? rng.pick(['bshd', 'bhsd']);
  const causal = forced.causal ?? rng.uniform() < 0.5;
  const alibiKind = 'alibi' in forced ? forced.alibi : rng.pick([null, null, 'standard', 'custom']);
  const returnWeights = forced.returnWeights ?? rng.uniform() < 0.35;
  const scale = 'scale' in forced ? forced.scale : rng.uniform() < 0.2 ? rng.pick([0.05, 0.5, 1.7, -0.3]) : undefined;
  const q = randnF32(rng, B * H * Sq * D);
  const k = randnF32(rng, B * KVH * Sk * D);
  const v = randnF32(rng, B * KVH * Sk * D);

  const options = { shape, layout, causal, returnWeights };
  if (scale !== undefined) options.scale = scale;
  let slopes = null;
  if (alibiKind === 'standard') {
    options.alibi = true;
    slopes = pes.simd.alibiSlopes(H);
  } else if (alibiKind === 'custom') {
    slopes = Float32Array.from({ length: H }, () => rng.normal() * 0.2);
    options.alibi = slopes;
  }
  let qpos = null;
  let kpos = null;
  if (posForm !== 'default') {
    // increasing key positions with gaps (a cache with holes), queries anywhere up to past the last key
    const keys = [];
    let p = rng.int(0, 3000);
    for (let j = 0; j < Sk; j++) keys.push((p += rng.int(1, 4)));
    const qs = Array.from({ length: Sq }, () => rng.int(0, p + 3));
    if (posForm === 'array') {
      options.positions = rng.uniform() < 0.5 ? Int32Array.from(keys) : keys;
      kpos = keys;
      qpos = keys.slice(Sk - Sq);
    } else if (posForm === 'qk') {
      options.positions = { q: Int32Array.from(qs), k: keys };
      qpos = qs;
      kpos = keys;
    } else if (posForm === 'q') {
      options.positions = { q: qs };
      qpos = qs;
    } else {
      options.positions = { k: keys };
      kpos = keys;
    }
  }
  const ropes = {};
  let rope = null;
  if (ropeKind) {
    ropes.simd = makeRope(pes.simd, ropeKind, D);
    ropes.scalar = makeRope(pes.scalar, ropeKind, D);
    const qp = qpos ?? Array.from({ length: Sq }, (_, i) => Sk - Sq + i);
    const kp = kpos ?? Array.from({ length: Sk }, (_, j) => j);
    const seqLen = Math.max(...qp, ...kp) + 1; // the C default: max position + 1, as one HF forward call
    rope = ropeRef(ropes.simd, seqLen);
  }
  const refOpts = { layout, causal, scale, slopes, qpos, kpos, rope };
  const ref = refAttention(q, k, v, shape, refOpts);
  const label = ropeKind ? `RoPE ${ropeKind}` : slopes ? 'ALiBi' : 'plain';
  const c = { id, shape, options, q, k, v, ropeKind, ropes, refOpts, label };
  // the bound needs the reference's rotated q and k
  let rq = q;
  let rk = k;
  if (rope) {
    const { invFreq, pairing, scale: a } = rope;
    rq = refApplyShared(q, B, Sq, H, D, layout, refOpts.qpos ?? Array.from({ length: Sq }, (_, i) => Sk - Sq + i), invFreq, pairing, a);
    rk = refApplyShared(k, B, Sk, KVH, D, layout, refOpts.kpos ?? Array.from({ length: Sk }, (_, j) => j), invFreq, pairing, a);
  }
  const tol = bound(q, k, v, shape, refOpts, rq, rk);
  return { c, ref, tol };
}

function refApplyShared(x, B, S, NH, D, layout, positions, invFreq, pairing, scale) {
  return refApply(x, { shape: [B, S, NH, D], layout, positions, invFreq, pairing, scale });
}

function freeCase(c) {
  for (const r of Object.values(c.ropes)) r.free();
}

async function bothBuilds() {
  return { simd: await loadBuild(true), scalar: await loadBuild(false) };
}

test('attention vs naive double reference: random shapes, both builds, SIMD == scalar', async (t) => {
  const pes = await bothBuilds();
  const rng = makeRng(51);
  const N = 220;
  let identical = 0;
  for (let n = 0; n < N; n++) {
    const { c, ref, tol } = randomCase(rng, `case${n}`, pes);
    const a = checkCase(pes.simd, 'simd', c, ref, tol, c.label);
    const b = checkCase(pes.scalar, 'scalar', c, ref, tol, c.label);
    assertBitEqual(a.out, b.out, `${c.id}: SIMD vs scalar out`);
    if (c.options.returnWeights) assertBitEqual(a.weights, b.weights, `${c.id}: SIMD vs scalar weights`);
    identical++;
    freeCase(c);
  }
  worst.record('SIMD vs scalar attention (abs)', 'both', 0, 1e-30, `${identical} random cases, bit for bit`);
  t.diagnostic(`${identical} random cases; SIMD and scalar bit for bit identical`);
});

test('attention: one query against kLen up to 4096 (decode), GQA/MQA, ALiBi, RoPE yarn/llama3', async (t) => {
  const pes = await bothBuilds();
  const rng = makeRng(52);
  const specs = [
    { qLen: 1, kLen: 4096, heads: 8, kvHeads: 2, headDim: 64, ropeKind: 'yarn', alibi: null, causal: true, returnWeights: true },
    { qLen: 1, kLen: 4096, heads: 16, kvHeads: 1, headDim: 33, ropeKind: null, alibi: 'standard', causal: true, returnWeights: false },
    { qLen: 1, kLen: 4095, heads: 4, kvHeads: 4, headDim: 128, ropeKind: 'llama3', alibi: null, causal: false, returnWeights: true },
    { qLen: 3, kLen: 2049, heads: 6, kvHeads: 3, headDim: 65, ropeKind: null, alibi: 'custom', causal: true, returnWeights: false },
    { qLen: 70, kLen: 1000, heads: 2, kvHeads: 1, headDim: 32, ropeKind: 'linear', alibi: null, causal: true, returnWeights: true },
  ];
  for (const [n, s] of specs.entries()) {
    const { c, ref, tol } = randomCase(rng, `long${n} q${s.qLen} k${s.kLen} h${s.heads}/${s.kvHeads} d${s.headDim}`, pes, {
      batch: 1,
      positions: 'default',
      scale: undefined,
      layout: n % 2 ? 'bhsd' : 'bshd',
      ...s,
    });
    const a = checkCase(pes.simd, 'simd', c, ref, tol, 'long');
    const b = checkCase(pes.scalar, 'scalar', c, ref, tol, 'long');
    assertBitEqual(a.out, b.out, `${c.id}: SIMD vs scalar out`);
    if (c.options.returnWeights) assertBitEqual(a.weights, b.weights, `${c.id}: SIMD vs scalar weights`);
    freeCase(c);
    t.diagnostic(`${c.id}: ok`);
  }
});

for (const build of BUILDS) {
  test(`softmax stays finite for logits of ±1e4; fully masked rows give zeros [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    // headDim 1, scale 1: logits q·k = 100 · [100, −100, 99.99] = [1e4, −1e4, ~9999]
    const q = Float32Array.from([100]);
    const k = Float32Array.from([100, -100, 99.99]);
    const v = Float32Array.from([1, 2, 3]);
    const shape = { heads: 1, qLen: 1, kLen: 3, headDim: 1 };
    const { out, weights } = pe.attention(q, k, v, { shape, scale: 1, returnWeights: true });
    const ref = refAttention(q, k, v, { batch: 1, ...shape }, { scale: 1 });
    assert.ok(Number.isFinite(out[0]) && weights.every(Number.isFinite));
    // logit rounding at 1e4 is ~1e4 · 2^-24 ~ 6e-4, so the weights are right to ~1e-3
    const e = Math.abs(out[0] - ref.out[0]);
    worst.record('logits ±1e4 out vs reference (abs)', build.name, e, 2e-3, 'q=100, k=[100, -100, 99.99]');
    assert.ok(e <= 2e-3, `out ${out[0]} vs ${ref.out[0]}`);
    assert.equal(weights[1], 0, 'e^(−2e4) underflows to exactly 0');
    // all logits −1e4: uniform weights, the mean of v
    const u = pe.attention(q, Float32Array.from([-100, -100, -100]), v, { shape, scale: 1, returnWeights: true });
    assert.ok(Math.abs(u.out[0] - 2) <= 4 * U * 3);
    assert.ok(u.weights.every((w) => Math.abs(w - 1 / 3) <= 4 * U));
    // many random logits of size ~1e4 (scale 1e4 / headDim): finite, each row of weights sums to 1
    const rng = makeRng(53);
    const big = { batch: 2, heads: 3, qLen: 19, kLen: 37, headDim: 8 };
    const Q = randnF32(rng, 2 * 3 * 19 * 8);
    const K = randnF32(rng, 2 * 3 * 37 * 8);
    const V = randnF32(rng, 2 * 3 * 37 * 8);
    for (const sgn of [1, -1]) {
      const r = pe.attention(Q, K, V, { shape: big, scale: sgn * 1250, causal: true, returnWeights: true });
      assert.ok(r.out.every(Number.isFinite) && r.weights.every(Number.isFinite), 'finite');
      for (let row = 0; row < 2 * 3 * 19; row++) {
        let s = 0;
        for (let j = 0; j < 37; j++) s += r.weights[row * 37 + j];
        assert.ok(Math.abs(s - 1) <= 37 * 2 * U + 4 * U, `row ${row} sums to ${s}`);
      }
    }

    // Fully masked rows (documented: all-zero output and weights). causal, qLen 3 > kLen 1: queries sit at
    // kLen − qLen + i = −2, −1, 0, so the first two see no key.
    const m = pe.attention(Float32Array.from([1, 2, 3, 4, 5, 6]), Float32Array.from([1, 1]), Float32Array.from([7, 8]), {
      shape: { heads: 1, qLen: 3, kLen: 1, headDim: 2 },
      causal: true,
      returnWeights: true,
    });
    assert.deepEqual(Array.from(m.out), [0, 0, 0, 0, 7, 8]);
    assert.deepEqual(Array.from(m.weights), [0, 0, 1]);
    // explicit positions: the query at 0 before keys at 5, 6 (RoPE and ALiBi too)
    const rope = pe.rope({ headDim: 2 });
    const e2 = pe.attention(Float32Array.from([1, 2]), Float32Array.from([1, 1, 2, 2]), Float32Array.from([7, 8, 9, 10]), {
      shape: { heads: 1, qLen: 1, kLen: 2, headDim: 2 },
      causal: true,
      positions: { q: [0], k: [5, 6] },
      rope,
      alibi: true,
      returnWeights: true,
    });
    assert.deepEqual(Array.from(e2.out), [0, 0]);
    assert.deepEqual(Array.from(e2.weights), [0, 0]);
    rope.free();
  });

  test(`decode consistency: row i of a causal pass == one query against the first i + 1 keys [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(54);
    const [H, KVH, S, D] = [4, 2, 37, 24];
    const q = randnF32(rng, H * S * D);
    const k = randnF32(rng, KVH * S * D);
    const v = randnF32(rng, KVH * S * D);
    const rope = pe.rope({ headDim: D, scaling: { type: 'linear', factor: 2 } });
    const full = pe.attention(q, k, v, { shape: { heads: H, kvHeads: KVH, qLen: S, headDim: D }, layout: 'bshd', causal: true, rope, alibi: true });
    for (const i of [0, 1, 15, 16, 17, 31, 32, 33, 36]) {
      const one = pe.attention(q.subarray(i * H * D, (i + 1) * H * D), k.subarray(0, (i + 1) * KVH * D), v.subarray(0, (i + 1) * KVH * D), {
        shape: { heads: H, kvHeads: KVH, qLen: 1, kLen: i + 1, headDim: D },
        causal: true,
        rope,
        alibi: true,
      });
      assert.deepEqual(one.out, full.out.subarray(i * H * D, (i + 1) * H * D), `row ${i}`);
    }
    rope.free();
  });
}

test('permutation: without a position encoding attention is blind to order ("猫 吃 鱼" vs "鱼 吃 猫"); sinusoidal, RoPE, ALiBi see it', async (t) => {
  const pes = await bothBuilds();
  for (const [build, pe] of Object.entries(pes)) {
    const rng = makeRng(55);
    const D = 16;
    const emb = { 猫: randnF32(rng, D), 吃: randnF32(rng, D), 鱼: randnF32(rng, D) };
    const sentence = (words) => {
      const x = new Float32Array(words.length * D);
      words.forEach((w, i) => x.set(emb[w], i * D));
      return x;
    };
    const A = sentence(['猫', '吃', '鱼']);
    const B = sentence(['鱼', '吃', '猫']);
    const shape = { heads: 1, qLen: 3, kLen: 3, headDim: D };
    // Self-attention with identity projections: q = k = v = the sentence. Output row i belongs to word i.
    const rowOf = (out, i) => Array.from(out.subarray(i * D, (i + 1) * D));
    const diff = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));
    // Compare what "吃" (position 1 in both sentences) attends to, and 猫's row wherever it stands.
    const compare = (outA, outB) => ({
      eat: diff(rowOf(outA, 1), rowOf(outB, 1)),
      cat: diff(rowOf(outA, 0), rowOf(outB, 2)),
    });

    // 1. No position encoding: identical up to the order of float32 sums (the online softmax visits keys in
    //    a different order); tolerance 16u · max|v| per the bound above.
    const plainA = pe.attention(A, A, A, { shape }).out;
    const plainB = pe.attention(B, B, B, { shape }).out;
    const p = compare(plainA, plainB);
    const tolPerm = 16 * U * maxAbs(A) * 4;
    worst.record('permutation, no PE: |out(猫 吃 鱼) − out(鱼 吃 猫)| (abs)', build, Math.max(p.eat, p.cat), tolPerm, '3 words, d 16');
    assert.ok(p.eat <= tolPerm && p.cat <= tolPerm, `no PE: outputs differ by ${p.eat}, ${p.cat}`);

    // 2. Sinusoidal added to the inputs: the same words at other positions are other vectors.
    const sA = pe.sinusoidal.add(Float32Array.from(A), { shape: [1, 3, D] });
    const sB = pe.sinusoidal.add(Float32Array.from(B), { shape: [1, 3, D] });
    const s = compare(pe.attention(sA, sA, sA, { shape }).out, pe.attention(sB, sB, sB, { shape }).out);
    // 3. RoPE on q and k inside the kernel.
    const rope = pe.rope({ headDim: D });
    const r = compare(pe.attention(A, A, A, { shape, rope }).out, pe.attention(B, B, B, { shape, rope }).out);
    rope.free();
    // 4. ALiBi: bias by signed distance.
    const al = compare(pe.attention(A, A, A, { shape, alibi: [1] }).out, pe.attention(B, B, B, { shape, alibi: [1] }).out);
    for (const [name, d] of [['sinusoidal', s], ['RoPE', r], ['ALiBi', al]]) {
      assert.ok(d.eat > 1e-3, `${name}: "吃" should attend differently in the two sentences, differs by ${d.eat}`);
      t.diagnostic(`[${build}] ${name}: "吃" differs by ${d.eat.toFixed(4)}, "猫" by ${d.cat.toFixed(4)}; no PE: ${p.eat.toExponential(2)}`);
    }

    // 5. Random keys and values permuted together, many queries, GQA, non-causal: every output unchanged.
    const [H, KVH, Sq, Sk] = [4, 2, 9, 50];
    const Q = randnF32(rng, H * Sq * D);
    const K = randnF32(rng, KVH * Sk * D);
    const V = randnF32(rng, KVH * Sk * D);
    const perm = Array.from({ length: Sk }, (_, j) => j);
    for (let j = Sk - 1; j > 0; j--) {
      const i = rng.int(0, j);
      [perm[i], perm[j]] = [perm[j], perm[i]];
    }
    const permute = (X) => {
      const Y = new Float32Array(X.length);
      for (let j = 0; j < Sk; j++) Y.set(X.subarray(perm[j] * KVH * D, (perm[j] + 1) * KVH * D), j * KVH * D);
      return Y;
    };
    const sh = { heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D };
    const o1 = pe.attention(Q, K, V, { shape: sh }).out;
    const o2 = pe.attention(Q, permute(K), permute(V), { shape: sh }).out;
    const e = Math.max(...o1.map((x, i) => Math.abs(x - o2[i])));
    const tolRand = 16 * U * maxAbs(V) * 4;
    worst.record('permutation, random keys/values (abs)', build, e, tolRand, 'h4/2 q9 k50 d16');
    assert.ok(e <= tolRand, `permuting keys and values changed the output by ${e}`);
    // with RoPE / ALiBi the same permutation changes it
    const rope2 = pe.rope({ headDim: D });
    const withRope = Math.max(
      ...pe.attention(Q, K, V, { shape: sh, rope: rope2 }).out.map((x, i) => Math.abs(x - pe.attention(Q, permute(K), permute(V), { shape: sh, rope: rope2 }).out[i])),
    );
    rope2.free();
    assert.ok(withRope > 1e-3, `RoPE: permuting keys should change the output (${withRope})`);
  }
});

test('argument forms: tensors (zero-copy), out, views of wasm memory, positions forms, seqLen, defaults', async () => {
  const pes = await bothBuilds();
  for (const pe of Object.values(pes)) {
    const rng = makeRng(56);
    const shape = { batch: 2, heads: 4, kvHeads: 2, qLen: 5, kLen: 9, headDim: 12 };
    const nQ = 2 * 4 * 5 * 12;
    const nK = 2 * 2 * 9 * 12;
    const q = randnF32(rng, nQ);
    const k = randnF32(rng, nK);
    const v = randnF32(rng, nK);
    const rope = pe.rope({ headDim: 12, maxPositionEmbeddings: 4, scaling: { type: 'dynamic', factor: 2 } });
    const base = { shape, rope, causal: true, alibi: true, returnWeights: true };
    const expected = pe.attention(q, k, v, base);
    // inputs are not modified
    assert.deepEqual(q, randnF32(makeRng(56), nQ));
    // tensors, zero-copy, and an out tensor
    const [tq, tk, tv, to] = [pe.tensor(q), pe.tensor(k), pe.tensor(v), pe.tensor(nQ)];
    const r = pe.attention(tq, tk, tv, { ...base, out: to });
    assert.equal(r.out, to, 'out is the given tensor');
    assert.deepEqual(to.array, expected.out);
    assert.deepEqual(r.weights, expected.weights);
    // a view of wasm memory as input, a Float32Array as out
    const outArr = new Float32Array(nQ);
    const r2 = pe.attention(tq.array, tk, tv.array, { ...base, out: outArr });
    assert.equal(r2.out, outArr);
    assert.deepEqual(outArr, expected.out);
    // out overlapping an input is refused
    assertThrowsNaming(() => pe.attention(tq, tk, tv, { ...base, out: tq }), RangeError, 'options.out', 'overlap', 'q');
    for (const t of [tq, tk, tv, to]) t.free();
    // positions: default == explicit k = 0..kLen-1 as one array == { q, k } spelled out
    const kp = Array.from({ length: 9 }, (_, j) => j);
    assert.deepEqual(pe.attention(q, k, v, { ...base, positions: kp }), expected);
    assert.deepEqual(pe.attention(q, k, v, { ...base, positions: { q: [4, 5, 6, 7, 8], k: Int32Array.from(kp) } }), expected);
    assert.deepEqual(pe.attention(q, k, v, { ...base, positions: { q: [4, 5, 6, 7, 8] } }), expected);
    // seqLen: dynamic's base grows with it; the default is max position + 1 = 9
    assert.deepEqual(pe.attention(q, k, v, { ...base, seqLen: 9 }), expected);
    assert.notDeepEqual(pe.attention(q, k, v, { ...base, seqLen: 100 }).out, expected.out);
    // defaults: batch 1, kvHeads = heads, kLen = qLen, layout 'bshd', scale 1/sqrt(headDim)
    const q1 = randnF32(rng, 3 * 2 * 8);
    const a = pe.attention(q1, q1, q1, { shape: { heads: 2, qLen: 3, headDim: 8 } });
    const b = pe.attention(q1, q1, q1, { shape: { batch: 1, heads: 2, kvHeads: 2, qLen: 3, kLen: 3, headDim: 8 }, layout: 'bshd', scale: 1 / Math.sqrt(8) });
    assert.deepEqual(a, b);
    assert.deepEqual(Object.keys(a), ['out']);
    rope.free();
  }
});

test('bad input throws TypeError / RangeError naming the argument; the instance keeps working', async (t) => {
  const pes = await bothBuilds();
  for (const [build, pe] of Object.entries(pes)) {
    const rng = makeRng(57);
    const shape = { batch: 1, heads: 4, kvHeads: 2, qLen: 3, kLen: 5, headDim: 8 };
    const q = randnF32(rng, 4 * 3 * 8);
    const k = randnF32(rng, 2 * 5 * 8);
    const v = randnF32(rng, 2 * 5 * 8);
    const rope = pe.rope({ headDim: 8 });
    const r16 = pe.rope({ headDim: 16 });
    const otherRope = pes[build === 'simd' ? 'scalar' : 'simd'].rope({ headDim: 8 });
    const good = { shape, rope, alibi: true, causal: true, returnWeights: true };
    const before = pe.attention(q, k, v, good);
    const S = (o) => ({ ...shape, ...o });
    const cases = [
      ['options missing', () => pe.attention(q, k, v), TypeError, 'options', 'shape'],
      ['shape missing', () => pe.attention(q, k, v, {}), TypeError, 'options.shape'],
      ['shape an array', () => pe.attention(q, k, v, { shape: [1, 4, 3, 8] }), TypeError, 'options.shape'],
      ['heads missing', () => pe.attention(q, k, v, { shape: { qLen: 3, headDim: 8 } }), TypeError, 'options.shape.heads', 'required'],
      ['heads 0', () => pe.attention(q, k, v, { shape: S({ heads: 0 }) }), RangeError, 'options.shape.heads', 'got 0'],
      ['qLen negative', () => pe.attention(q, k, v, { shape: S({ qLen: -3 }) }), RangeError, 'options.shape.qLen', 'got -3'],
      ['kLen negative', () => pe.attention(q, k, v, { shape: S({ kLen: -1 }) }), RangeError, 'options.shape.kLen', 'got -1'],
      ['headDim fractional', () => pe.attention(q, k, v, { shape: S({ headDim: 7.5 }) }), RangeError, 'options.shape.headDim'],
      ['batch a string', () => pe.attention(q, k, v, { shape: S({ batch: '1' }) }), TypeError, 'options.shape.batch'],
      ['kvHeads does not divide heads', () => pe.attention(q, k, v, { shape: S({ kvHeads: 3 }) }), RangeError, 'options.shape.kvHeads', 'divide', 'heads (4)', 'got 3'],
      ['kvHeads > heads', () => pe.attention(q, k, v, { shape: S({ kvHeads: 8 }) }), RangeError, 'options.shape.kvHeads', 'got 8'],
      ['q length mismatch', () => pe.attention(q.subarray(1), k, v, { shape }), RangeError, 'q.length', '96'],
      ['k length mismatch', () => pe.attention(q, q, v, { shape }), RangeError, 'k.length', '80', 'got 96'],
      ['v length mismatch', () => pe.attention(q, k, new Float32Array(81), { shape }), RangeError, 'v.length', '80'],
      ['q a Float64Array', () => pe.attention(new Float64Array(96), k, v, { shape }), TypeError, 'q', 'Float32Array', 'Float64Array'],
      ['k a plain array', () => pe.attention(q, Array.from(k), v, { shape }), TypeError, 'k', 'Float32Array'],
      ['v missing', () => pe.attention(q, k, undefined, { shape }), TypeError, 'v'],
      ['sizes too large', () => pe.attention(q, k, v, { shape: S({ qLen: 2 ** 28 }) }), RangeError, 'size of q', String(2 ** 30 - 1)],
      ['weights too large', () => pe.attention(q, k, v, { shape: S({ qLen: 40000, kLen: 40000, headDim: 1 }), returnWeights: true }), RangeError, 'weights'],
      ['layout unknown', () => pe.attention(q, k, v, { shape, layout: 'bsdh' }), RangeError, 'options.layout', "'bshd'"],
      ['causal not boolean', () => pe.attention(q, k, v, { shape, causal: 'yes' }), TypeError, 'options.causal'],
      ['returnWeights not boolean', () => pe.attention(q, k, v, { shape, returnWeights: 1 }), TypeError, 'options.returnWeights'],
      ['scale NaN', () => pe.attention(q, k, v, { shape, scale: NaN }), RangeError, 'options.scale', 'finite', 'NaN'],
      ['scale Infinity', () => pe.attention(q, k, v, { shape, scale: Infinity }), RangeError, 'options.scale', 'finite'],
      ['scale 0', () => pe.attention(q, k, v, { shape, scale: 0 }), RangeError, 'options.scale', 'other than 0', 'got 0'],
      ['scale past float32', () => pe.attention(q, k, v, { shape, scale: 1e39 }), RangeError, 'options.scale', 'float32'],
      ['scale a string', () => pe.attention(q, k, v, { shape, scale: '0.1' }), TypeError, 'options.scale'],
      ['wrong slope count', () => pe.attention(q, k, v, { shape, alibi: new Float32Array(2) }), RangeError, 'options.alibi', '4', 'got length 2'],
      ['slope NaN', () => pe.attention(q, k, v, { shape, alibi: [1, 1, NaN, 1] }), RangeError, 'options.alibi[2]', 'NaN'],
      ['alibi a string', () => pe.attention(q, k, v, { shape, alibi: 'bloom' }), TypeError, 'options.alibi'],
      ['alibi a number', () => pe.attention(q, k, v, { shape, alibi: 1 }), TypeError, 'options.alibi'],
      ['rope not a rope', () => pe.attention(q, k, v, { shape, rope: { headDim: 8 } }), TypeError, 'options.rope', 'pe.rope()'],
      ['rope headDim mismatch', () => pe.attention(q, k, v, { shape, rope: r16 }), RangeError, 'options.shape.headDim', '16', 'got 8'],
      [
        'rope freed',
        () => {
          const r = pe.rope({ headDim: 8 });
          r.free();
          pe.attention(q, k, v, { shape, rope: r });
        },
        TypeError,
        'options.rope',
        'freed',
      ],
      ['rope of the other build', () => pe.attention(q, k, v, { shape, rope: otherRope }), TypeError, 'options.rope', 'another posenc instance'],
      ['rope with qLen > kLen and default positions', () => pe.attention(new Float32Array(4 * 6 * 8), k, v, { shape: S({ qLen: 6 }), rope }), RangeError, 'qLen (6)', 'kLen (5)', 'positions.q'],
      ['positions array of the wrong length', () => pe.attention(q, k, v, { shape, positions: [0, 1, 2] }), RangeError, 'options.positions', 'kLen (5)', 'got length 3'],
      ['positions.q wrong length', () => pe.attention(q, k, v, { shape, positions: { q: [1, 2] } }), RangeError, 'options.positions.q.length', 'qLen (3)', 'got 2'],
      ['positions.k wrong length', () => pe.attention(q, k, v, { shape, positions: { k: [1, 2] } }), RangeError, 'options.positions.k.length', 'kLen (5)'],
      ['positions.k negative', () => pe.attention(q, k, v, { shape, positions: { k: [0, 1, -2, 3, 4] } }), RangeError, 'options.positions.k[2]', 'got -2'],
      ['positions.q negative (Int32Array, found after the C check)', () => pe.attention(q, k, v, { shape, rope, positions: { q: Int32Array.from([0, -1, 2]) } }), RangeError, 'options.positions.q[1]', 'got -1'],
      ['positions fractional', () => pe.attention(q, k, v, { shape, positions: [0, 1, 2.5, 3, 4] }), RangeError, 'options.positions[2]', 'got 2.5'],
      ['positions a number', () => pe.attention(q, k, v, { shape, positions: 5 }), TypeError, 'options.positions'],
      ['positions.q a string', () => pe.attention(q, k, v, { shape, positions: { q: 7 } }), TypeError, 'options.positions.q'],
      ['seqLen 0', () => pe.attention(q, k, v, { shape, rope, seqLen: 0 }), RangeError, 'options.seqLen', 'got 0'],
      ['out a Float64Array', () => pe.attention(q, k, v, { shape, out: new Float64Array(96) }), TypeError, 'options.out'],
      ['out of the wrong length', () => pe.attention(q, k, v, { shape, out: new Float32Array(95) }), RangeError, 'options.out.length', '96'],
      [
        'q a freed tensor',
        () => {
          const tq = pe.tensor(q);
          tq.free();
          pe.attention(tq, k, v, { shape });
        },
        TypeError,
        'q',
        'freed',
      ],
    ];
    for (const [name, fn, cls, ...needles] of cases) {
      await t.test(`${name} [${build}]`, () => {
        const qc = Float32Array.from(q);
        assertThrowsNaming(fn, cls, ...needles);
        assert.deepEqual(q, qc, 'inputs untouched');
        assert.deepEqual(pe.attention(q, k, v, good), before, 'the instance computes the same afterwards');
      });
    }
    for (const r of [rope, r16, otherRope]) r.free();
  }
});

test('memory: without weights, attention does not grow the wasm memory with qLen · kLen; no leaks', async (t) => {
  // Fresh instances (not the cached ones the other tests have grown): a separate init over the same modules.
  const freshInit = makeInit({
    simd: () => compileBytes(decodeBase64(simdWasmBase64)),
    scalar: () => compileBytes(decodeBase64(scalarWasmBase64)),
  });
  for (const build of BUILDS) {
    const pe = await freshInit({ simd: build.simd });
    assert.notEqual(pe, await loadBuild(build.simd), 'a fresh instance');
    const rng = makeRng(58);
    const D = 8;
    const run = (S, opts = {}) => {
      const q = randnF32(rng, S * D);
      return pe.attention(q, q, q, { shape: { heads: 1, qLen: S, kLen: S, headDim: D }, causal: true, ...opts });
    };
    const rope = pe.rope({ headDim: D });
    run(64, { rope, alibi: true }); // warm: small scratch
    const small = pe.memoryBytes;
    // 4096 × 4096: a weights matrix would be 64 MiB; q, k, v, out copies and the RoPE scratch are ~1 MiB in all.
    const S = 4096;
    run(S, { rope, alibi: true });
    const grown = pe.memoryBytes - small;
    const inputs = 4 * S * D * 4; // q, k, v, out copies
    const ropeScratch = (2 * S * D + 2 * 2 * S * (D / 2)) * 4;
    const allowed = 2 * (inputs + ropeScratch) + (1 << 20);
    t.diagnostic(`[${build.name}] qLen = kLen = ${S}, headDim ${D}: memory grew by ${(grown / 2 ** 20).toFixed(2)} MiB (a weights matrix alone: 64 MiB; allowed ${(allowed / 2 ** 20).toFixed(2)} MiB)`);
    assert.ok(grown <= allowed, `memory grew by ${grown} bytes for qLen = kLen = ${S}`);
    // steady state: repeated calls of sizes seen before allocate nothing
    const out = pe.tensor(16 * D);
    const calls = (count) => {
      for (let n = 0; n < count; n++) {
        run(n % 2 ? 200 : S / 32, { rope, alibi: n % 3 === 0, returnWeights: n % 5 === 0 });
        const tq = pe.tensor(randnF32(rng, 16 * D));
        pe.attention(tq, tq, tq, { shape: { heads: 2, qLen: 8, headDim: D }, rope, out });
        tq.free();
      }
    };
    calls(10); // warm: the weights slot and the 200-long copies get their size
    const steady = pe.memoryBytes;
    calls(200);
    out.free();
    assert.equal(pe.memoryBytes, steady, 'no growth over 400 calls of sizes seen before');
    // with weights the (qLen, kLen) matrix must exist: the contrast
    const before = pe.memoryBytes;
    const w = run(S, { returnWeights: true });
    assert.equal(w.weights.length, S * S);
    assert.ok(pe.memoryBytes - before >= S * S * 4 - (1 << 20), 'returnWeights needs the qLen · kLen matrix');
    rope.free();
  }
});

test('API surface: the encodings and attention are on every instance', async () => {
  for (const build of BUILDS) {
    const pe = await loadBuild(build.simd);
    for (const name of ['alibiSlopes', 'alibiBias', 'alibiBiasFromMask', 'sinusoidal', 'learned', 'attention']) {
      assert.equal(typeof pe[name], 'function', name);
    }
    assert.equal(typeof pe.sinusoidal.add, 'function', 'pe.sinusoidal.add');
    assert.ok(Object.isFrozen(pe) && Object.isFrozen(pe.sinusoidal));
    const L = pe.learned(new Float32Array(8), { dModel: 2 });
    for (const m of ['lookup', 'add', 'free']) assert.equal(typeof L[m], 'function', `learned.${m}`);
    L.free();
  }
});

test('worst errors (attention)', (t) => {
  worst.report(t);
});
