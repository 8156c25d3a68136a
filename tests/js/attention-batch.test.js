// pe.attention for real batches, on the SIMD and the scalar build: a left-padded batch in one call (positions
// per sequence as HF builds them, the attention_mask, causal, GQA, RoPE) equals one call per sequence bit for
// bit and a naive double reference; bias of each broadcast shape, vHeadDim (DeepSeek MLA's 24 / 16), per-query
// scales (array and the Llama 4 rule against HF's values); strided views inside fused QKV buffers and a bhsd KV
// cache with spare capacity equal the dense call bit for bit; strict options and bad views are errors.
//
// Tolerance against the double reference: 2e-5 absolute with |q|, |k| <= 2, |v| <= 1, headDim <= 24 (logits
// within ~±10: the float32 dot product and expf each contribute a few ulp of the logit, which moves the
// output by at most ~2·δ·max|v|; the C test test_attention_batch uses the same bound).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, assertThrowsNaming, assertBitEqual, loadGolden } from './helpers.js';
import { paddedBatch, randomPads, refBatch as ref } from './attention-ref.js';

const TOL = 2e-5;

function uniform(rng, n, amp) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (rng() * 2 - 1) * amp;
  return a;
}

function maxErr(a, r) {
  let w = 0;
  for (let i = 0; i < a.length; i++) w = Math.max(w, Math.abs(a[i] - r[i]));
  return w;
}

const results = {};

for (const build of BUILDS) {
  test(`padded batch in one call == per-sequence calls, and the double reference [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(11).uniform;
    const rope = pe.rope({ headDim: 16, base: 10000 });
    let worst = 0;
    for (const [B, H, KVH, Sk, Sq, D, Dv, L, withRope] of [
      [3, 4, 2, 9, 9, 16, 16, 'bshd', false], // prefill, left padded
      [8, 4, 1, 70, 1, 16, 16, 'bhsd', false], // decode, batch 8, MQA, tiles past 64 keys
      [3, 2, 2, 9, 9, 16, 16, 'bhsd', true],
      [4, 4, 2, 33, 1, 16, 16, 'bshd', true],
      [2, 3, 3, 12, 12, 24, 16, 'bshd', false], // DeepSeek MLA head sizes
    ]) {
      const pads = randomPads((lo, hi) => lo + Math.floor(rng() * (hi - lo)), B, Sk); // pads 0 .. Sk − 2
      const { mask, kpos, qpos } = paddedBatch(B, Sk, Sq, pads);
      const s = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D, vHeadDim: Dv };
      const q = uniform(rng, B * H * Sq * D, 2);
      const k = uniform(rng, B * KVH * Sk * D, 2);
      const v = uniform(rng, B * KVH * Sk * Dv, 1);
      const opts = { shape: s, layout: L, causal: true, positions: { q: qpos, k: kpos }, mask, rope: withRope ? rope : null };
      const { out } = pe.attention(q, k, v, opts);
      const nq = H * Sq * D;
      const nk = KVH * Sk * D;
      const nv = KVH * Sk * Dv;
      const no = H * Sq * Dv;
      for (let b = 0; b < B; b++) {
        const one = pe.attention(q.subarray(b * nq, (b + 1) * nq), k.subarray(b * nk, (b + 1) * nk), v.subarray(b * nv, (b + 1) * nv), {
          ...opts,
          shape: { ...s, batch: 1 },
          positions: { q: qpos.subarray(b * Sq, (b + 1) * Sq), k: kpos.subarray(b * Sk, (b + 1) * Sk) },
          mask: mask.subarray(b * Sk, (b + 1) * Sk),
        });
        assertBitEqual(out.subarray(b * no, (b + 1) * no), one.out, `sequence ${b} of ${B} (pad ${pads[b]})`);
      }
      if (!withRope) worst = Math.max(worst, maxErr(out, ref(q, k, v, s, { layout: L, causal: true, qpos, kpos, mask })));
      results[`${build.name}:${B}:${Sk}:${L}:${withRope}`] = out;
    }
    assert.ok(worst < TOL, `padded batch vs double reference: ${worst} (tolerance ${TOL})`);
  });

  test(`explicit causal-compatible positions equal the default-positions call bit for bit; q, k at shared positions [${build.name}]`, async () => {
    // The core walks only the causal band when the key positions never decrease over the kept keys (the
    // default positions, and explicit ones such as 0..n-1 or HF's left padding), and rotates q and k in one
    // pass from one table when they sit at the same positions: each must give the numbers of the general path.
    const pe = await loadBuild(build.simd);
    const rng = makeRng(14).uniform;
    const rope = pe.rope({ headDim: 16, base: 10000 });
    for (const [B, H, KVH, Sq, Sk, L] of [[1, 4, 2, 70, 70, 'bshd'], [2, 2, 1, 33, 33, 'bhsd'], [2, 4, 2, 5, 600, 'bshd'], [1, 2, 2, 1, 513, 'bhsd']]) {
      const s = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: 16 };
      const q = uniform(rng, B * H * Sq * 16, 2);
      const k = uniform(rng, B * KVH * Sk * 16, 2);
      const v = uniform(rng, B * KVH * Sk * 16, 1);
      const kIota = Int32Array.from({ length: Sk }, (_, j) => j);
      const qTail = kIota.slice(Sk - Sq);
      const what = `[${B},${H}/${KVH},${Sq},${Sk}] ${L}`;
      for (const extra of [{ rope }, { alibi: true }, {}]) {
        const base = { shape: s, layout: L, causal: true, returnWeights: true, ...extra };
        const want = pe.attention(q, k, v, base);
        // q's positions given per sequence (the same values) while k's are shared: q and k then sit in different
        // tables and are rotated by two calls, which must equal the one-pass rotation of the shared table
        const qPerSeq = new Int32Array(B * Sq);
        for (let b = 0; b < B; b++) qPerSeq.set(qTail, b * Sq);
        for (const positions of [kIota, { q: qTail, k: kIota }, { k: kIota }, { q: qTail }, { q: qPerSeq, k: kIota }]) {
          const got = pe.attention(q, k, v, { ...base, positions });
          assertBitEqual(got.out, want.out, `${what} ${Object.keys(extra)} explicit positions: out`);
          assertBitEqual(got.weights, want.weights, `${what} ${Object.keys(extra)} explicit positions: weights`);
        }
        if (extra.rope) continue;
        // shifted by a constant (no rope: only kpos − qpos matters), and the positions per sequence
        const shift = (a, c) => Int32Array.from(a, (x) => x + c);
        const perSeq = { q: new Int32Array(B * Sq), k: new Int32Array(B * Sk) };
        for (let b = 0; b < B; b++) {
          perSeq.q.set(shift(qTail, 1000 * b + 7), b * Sq);
          perSeq.k.set(shift(kIota, 1000 * b + 7), b * Sk);
        }
        for (const positions of [{ q: shift(qTail, 123), k: shift(kIota, 123) }, perSeq]) {
          const got = pe.attention(q, k, v, { ...base, positions });
          assertBitEqual(got.out, want.out, `${what} ${Object.keys(extra)} shifted positions: out`);
          assertBitEqual(got.weights, want.weights, `${what} ${Object.keys(extra)} shifted positions: weights`);
        }
      }
      // non-monotone positions (the general path) and a monotone run with repeats against the double reference
      const shuffled = Int32Array.from(kIota).reverse();
      const repeats = Int32Array.from(kIota, (j) => j >> 1);
      for (const kp of [shuffled, repeats]) {
        const kpos = new Int32Array(B * Sk);
        const qpos = new Int32Array(B * Sq);
        for (let b = 0; b < B; b++) {
          kpos.set(kp, b * Sk);
          for (let i = 0; i < Sq; i++) qpos[b * Sq + i] = (Sk - Sq + i) >> 1;
        }
        const { out } = pe.attention(q, k, v, { shape: s, layout: L, causal: true, positions: { q: qpos, k: kpos } });
        const err = maxErr(out, ref(q, k, v, s, { layout: L, causal: true, qpos, kpos }));
        assert.ok(err < TOL, `${what}: explicit positions vs the double reference: ${err}`);
      }
    }
    rope.free();
  });

  test(`bias of each broadcast shape, queryScale, fully masked rows [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(12).uniform;
    const [B, H, Sq, Sk, D] = [2, 3, 5, 7, 8];
    const s = { batch: B, heads: H, qLen: Sq, kLen: Sk, headDim: D };
    const q = uniform(rng, B * H * Sq * D, 2);
    const k = uniform(rng, B * H * Sk * D, 2);
    const v = uniform(rng, B * H * Sk * D, 1);
    let worst = 0;
    for (const bs of [[1, 1, Sq, Sk], [B, 1, Sq, Sk], [1, H, Sq, Sk], [B, H, 1, Sk], [B, H, Sq, Sk]]) {
      const bias = uniform(rng, bs[0] * bs[1] * bs[2] * bs[3], 3);
      bias[3] = -Infinity;
      const { out } = pe.attention(q, k, v, { shape: s, bias, biasShape: bs, causal: true });
      worst = Math.max(worst, maxErr(out, ref(q, k, v, s, { bias, biasShape: bs, causal: true })));
    }
    for (const qscale of [uniform(rng, Sq, 0.5).map((x) => 1 + x), uniform(rng, B * Sq, 0.5).map((x) => 1.2 + x)]) {
      const { out } = pe.attention(q, k, v, { shape: s, queryScale: qscale });
      worst = Math.max(worst, maxErr(out, ref(q, k, v, s, { qscale })));
    }
    assert.ok(worst < TOL, `bias / queryScale vs double reference: ${worst}`);
    // a shared row of query positions next to per-sequence key positions is the same as that row repeated
    const kp = Int32Array.from({ length: B * Sk }, (_, j) => (j % Sk) + 3 * Math.floor(j / Sk));
    const qRow = Int32Array.from({ length: Sq }, (_, i) => i + 2);
    const qAll = new Int32Array(B * Sq);
    for (let b = 0; b < B; b++) qAll.set(qRow, b * Sq);
    assertBitEqual(
      pe.attention(q, k, v, { shape: s, causal: true, alibi: true, positions: { q: qRow, k: kp } }).out,
      pe.attention(q, k, v, { shape: s, causal: true, alibi: true, positions: { q: qAll, k: kp } }).out,
      'shared query positions with per-sequence key positions',
    );
    // a sequence whose mask is all zeros gives zeros; the other is untouched by it
    const mask = new Int32Array(B * Sk).fill(1);
    mask.fill(0, Sk);
    const { out } = pe.attention(q, k, v, { shape: s, mask });
    assert.ok(out.subarray(H * Sq * D).every((x) => x === 0), 'fully masked sequence: zeros');
    assertBitEqual(out.subarray(0, H * Sq * D), pe.attention(q.subarray(0, H * Sq * D), k.subarray(0, H * Sk * D), v.subarray(0, H * Sk * D), { shape: { ...s, batch: 1 } }).out, 'sequence 0');
  });

  test(`queryScale rule: Llama 4 attention temperature equals HF's attn_scales [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const g = loadGolden('mrope/llama4_text.json').cases.find((c) => c.config.attn_temperature_tuning);
    const rule = { type: 'llama4_temperature', floorScale: g.config.floor_scale, attnScale: g.config.attn_scale };
    const rng = makeRng(13).uniform;
    const D = 4;
    g.cache_position.forEach((p, idx) => {
      // decode at cache position p: qLen 1 against kLen p + 1 (the rule is evaluated at kLen - qLen + i = p)
      const s = { batch: 1, heads: 1, qLen: 1, kLen: p + 1, headDim: D };
      const q = uniform(rng, D, 2);
      const k = uniform(rng, (p + 1) * D, 2);
      const v = uniform(rng, (p + 1) * D, 1);
      const byRule = pe.attention(q, k, v, { shape: s, queryScale: rule }).out;
      // HF's float64 scale rounded once to float32 (its float32 run rounds log1p in float32: within 1 ulp)
      const hf = Math.fround(g.expected.attn_scales_f64[idx]);
      assert.ok(Math.abs(hf - g.expected.attn_scales_f32[idx]) <= 2 ** -23 * 2, `HF float32 ${g.expected.attn_scales_f32[idx]} vs float64 ${hf}`);
      const byHF = pe.attention(q, k, v, { shape: s, queryScale: new Float32Array([hf]) }).out;
      assertBitEqual(byRule, byHF, `position ${p}: rule vs HF's scale ${g.expected.attn_scales_f64[idx]}`);
    });
  });

  test(`strided views (fused QKV per token and per head, bhsd cache with spare capacity, out view) == dense [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(14).uniform;
    const [B, S, H, KVH, D] = [2, 6, 4, 2, 8];
    const rope = pe.rope({ headDim: D });
    const s = { batch: B, heads: H, kvHeads: KVH, qLen: S, kLen: S, headDim: D };
    const W = H + 2 * KVH;
    // per token: [b, s, (h + 2 kv) d]
    const fused = uniform(rng, B * S * W * D, 2);
    const pick = (h0, nh) => {
      const x = new Float32Array(B * S * nh * D);
      for (let b = 0; b < B; b++) for (let t = 0; t < S; t++) for (let h = 0; h < nh; h++) for (let d = 0; d < D; d++) x[((b * S + t) * nh + h) * D + d] = fused[((b * S + t) * W + h0 + h) * D + d];
      return x;
    };
    const q = pick(0, H);
    const k = pick(H, KVH);
    const v = pick(H + KVH, KVH);
    for (const r of [null, rope]) {
      const dense = pe.attention(q, k, v, { shape: s, causal: true, rope: r }).out;
      const st = { batch: S * W * D, seq: W * D, heads: D };
      const viaFused = pe.attention(fused, fused, fused, {
        shape: s, causal: true, rope: r, strides: { q: st, k: st, v: st }, offsets: { k: H * D, v: (H + KVH) * D },
      }).out;
      assertBitEqual(viaFused, dense, `fused per-token QKV${r ? ' with RoPE' : ''}`);
      // out into a larger array: heads padded by 2 floats, offset 3
      const big = new Float32Array(3 + B * S * H * (D + 2)).fill(9);
      pe.attention(q, k, v, { shape: s, causal: true, rope: r, out: big, strides: { out: { batch: S * H * (D + 2), seq: H * (D + 2), heads: D + 2 } }, offsets: { out: 3 } });
      for (let b = 0; b < B; b++) for (let t = 0; t < S; t++) for (let h = 0; h < H; h++) {
        const o = 3 + ((b * S + t) * H + h) * (D + 2);
        assertBitEqual(big.subarray(o, o + D), dense.subarray(((b * S + t) * H + h) * D, ((b * S + t) * H + h + 1) * D), `out view (${b}, ${t}, ${h})`);
        assert.deepEqual([big[o + D], big[o + D + 1]], [9, 9], 'elements outside the out view are untouched');
      }
    }
    // per head: [b, s, h, 3d] (GPT-NeoX), H == KVH
    const s2 = { batch: B, heads: H, qLen: S, kLen: S, headDim: D };
    const ph = uniform(rng, B * S * H * 3 * D, 2);
    const part = (c) => {
      const x = new Float32Array(B * S * H * D);
      for (let t = 0; t < B * S * H; t++) x.set(ph.subarray(t * 3 * D + c * D, t * 3 * D + (c + 1) * D), t * D);
      return x;
    };
    const st2 = { batch: S * H * 3 * D, seq: H * 3 * D, heads: 3 * D };
    assertBitEqual(
      pe.attention(ph, ph, ph, { shape: s2, rope, strides: { q: st2, k: st2, v: st2 }, offsets: { k: D, v: 2 * D } }).out,
      pe.attention(part(0), part(1), part(2), { shape: s2, rope }).out,
      'fused per-head QKV',
    );
    // bhsd cache of capacity C > kLen: heads stride C d, seq stride d
    const C = 11;
    const kc = new Float32Array(B * KVH * C * D);
    const vc = new Float32Array(B * KVH * C * D);
    const kd = uniform(rng, B * KVH * S * D, 2);
    const vd = uniform(rng, B * KVH * S * D, 1);
    for (let b = 0; b < B; b++) for (let h = 0; h < KVH; h++) {
      kc.set(kd.subarray(((b * KVH + h) * S) * D, ((b * KVH + h) * S + S) * D), (b * KVH + h) * C * D);
      vc.set(vd.subarray(((b * KVH + h) * S) * D, ((b * KVH + h) * S + S) * D), (b * KVH + h) * C * D);
    }
    const qd = uniform(rng, B * H * 1 * D, 2);
    const sd = { batch: B, heads: H, kvHeads: KVH, qLen: 1, kLen: S, headDim: D };
    const cst = { batch: KVH * C * D, seq: D, heads: C * D };
    assertBitEqual(
      pe.attention(qd, kc, vc, { shape: sd, layout: 'bhsd', rope, strides: { k: cst, v: cst } }).out,
      pe.attention(qd, kd, vd, { shape: sd, layout: 'bhsd', rope }).out,
      'bhsd cache with spare capacity',
    );
  });

  test(`strict options and bad batches / views are errors naming the argument and the bound [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const s = { batch: 2, heads: 2, qLen: 3, kLen: 4, headDim: 4 };
    const q = new Float32Array(2 * 2 * 3 * 4);
    const k = new Float32Array(2 * 2 * 4 * 4);
    const v = new Float32Array(2 * 2 * 4 * 4);
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, mak: [1] }), TypeError, 'options.mak is not an option', 'did you mean mask');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: { ...s, headdim: 4 } }), TypeError, 'options.shape.headdim', 'headDim');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, positions: { q: [0, 1, 2], kk: [] } }), TypeError, 'options.positions.kk', 'did you mean k');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, mask: new Int32Array(4) }), RangeError, 'options.mask.length', 'batch * kLen (8)');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, positions: { q: new Int32Array(5) } }), RangeError, 'options.positions.q.length', 'batch * qLen (6)');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, bias: new Float32Array(12), biasShape: [2, 1, 3, 2] }), RangeError, 'options.biasShape[3]', '4');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, bias: new Float32Array(11), biasShape: [1, 1, 3, 4] }), RangeError, 'options.bias.length', '12');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, bias: new Float32Array(11), biasShape: [3, 1, 3, 4] }), RangeError, 'options.biasShape[0]', '1 or 2');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, queryScale: new Float32Array(4) }), RangeError, 'options.queryScale.length', 'qLen (3)', 'batch * qLen (6)');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, queryScale: { type: 'llama4_temperature', floorScale: 0, attnScale: 0.1 } }), RangeError, 'options.queryScale.floorScale', '> 0');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, strides: { q: { seq: 12 } } }), RangeError, 'q is too short for its view', 'at least 56'); // 24 + 2 * 12 + 4 + 4
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, strides: { q: { sequence: 8 } } }), TypeError, 'options.strides.q.sequence', 'seq');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, strides: { k: { heads: -1 } } }), RangeError, 'options.strides.k.heads');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, offsets: { v: 1 } }), RangeError, 'v is too short', `at least ${v.length + 1}`);
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, strides: { out: { heads: 4 } } }), TypeError, 'need options.out');
    const out = new Float32Array(64);
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, out, strides: { out: { batch: 24, seq: 8, heads: 2 } } }), RangeError, 'options.strides.out', 'overlap');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, dtype: 'float16' }), TypeError, 'q is a Float32Array');
  });
}

test('padded-batch attention: SIMD == scalar bit for bit', async () => {
  for (const key of Object.keys(results)) {
    if (!key.startsWith('simd:')) continue;
    const other = results[`scalar:${key.slice(5)}`];
    assert.ok(other, `scalar result for ${key}`);
    assertBitEqual(results[key], other, key);
  }
});
