// pe.attention with an M-RoPE rope (Qwen2/2.5-VL chunked, Qwen3-VL interleaved), on the SIMD and scalar builds:
// - equal, bit for bit, to rotating q and k with rope.apply (three streams) and attending with no rope, over
//   random shapes, both layouts, both pairings, partial rotary, GQA, causal, key masks, ALiBi (by token order),
//   the returned weights, shared / per-sequence /
//   mixed positions, kRotated, strided views in a fused QKV buffer and pe.tensor inputs (left unmodified);
// - the SIMD and scalar builds agree bit for bit;
// - within 2e-5 of a naive double reference (M-RoPE written out from the section rules, attention with the
//   causal mask by token order): |q|, |k|, |v| <= 1 and headDim <= 24, so logits stay within ~±5 and the float32
//   dot product, expf and the float32 cos/sin tables each move the output by a few ulp (the bound of
//   attention-batch.test.js);
// - with the three streams equal, the same as plain RoPE attention bit for bit;
// - one frequency set for q and k, by default from max(all streams) + 1 (dynamic scaling);
// - bad positions are TypeErrors / RangeErrors naming options.positions.q / .k.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BUILDS, loadBuild, makeRng, assertThrowsNaming, assertBitEqual, shapeFor } from './helpers.js';
import { refBatch } from './attention-ref.js';
import { refMrope } from './mrope-ref.js';

const TOL = 2e-5;

function uniform(rng, n, amp = 1) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) a[i] = (rng.uniform() * 2 - 1) * amp;
  return a;
}

/** A random section for rd / 2 pairs: chunked ones tile the pairs, interleaved ones are any three counts. */
function randomSection(rng, half, interleaved) {
  if (interleaved) return [rng.int(0, half), rng.int(0, half), rng.int(0, half)];
  const a = rng.int(0, half);
  const b = rng.int(0, half - a);
  return [a, b, half - a - b];
}

/** Three streams of `rows` positions: text runs (t = h = w) and image-like blocks (t fixed, h / w a grid). */
function randomStreams(rng, rows, maxPos) {
  const p = new Int32Array(3 * rows);
  let next = rng.int(0, maxPos);
  for (let r = 0; r < rows; r++) {
    if (rng.uniform() < 0.5) {
      p[r] = p[rows + r] = p[2 * rows + r] = next++;
    } else {
      p[r] = next;
      p[rows + r] = next + rng.int(0, 3);
      p[2 * rows + r] = next + rng.int(0, 3);
    }
  }
  return p;
}

function randomCase(rng) {
  const layout = rng.pick(['bshd', 'bhsd']);
  const pairing = rng.pick(['half', 'interleaved']);
  const interleaved = rng.uniform() < 0.5;
  const D = rng.pick([8, 12, 16, 24]);
  const rd = rng.uniform() < 0.3 ? D / 2 - ((D / 2) % 2) : D; // partial rotary (even) sometimes
  const section = randomSection(rng, rd / 2, interleaved);
  const B = rng.int(1, 3);
  const KVH = rng.int(1, 2);
  const H = KVH * rng.int(1, 3);
  const Sk = rng.int(1, 9);
  const Sq = rng.uniform() < 0.3 ? rng.int(1, Sk) : rng.uniform() < 0.5 ? Sk : rng.int(1, 11);
  const s = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D };
  const causal = rng.uniform() < 0.6;
  let mask;
  if (rng.uniform() < 0.4) {
    mask = new Int32Array(B * Sk);
    for (let i = 0; i < mask.length; i++) mask[i] = rng.uniform() < 0.8 ? 1 : 0;
  }
  const qRows = B > 1 && rng.uniform() < 0.5 ? B * Sq : Sq;
  const kRows = B > 1 && rng.uniform() < 0.5 ? B * Sk : Sk;
  const maxPos = rng.pick([20, 5000, 2 ** 20]);
  return {
    layout, pairing, interleaved, D, rd, section, s, causal, mask,
    pq: randomStreams(rng, qRows, maxPos), qRows, pk: randomStreams(rng, kRows, maxPos), kRows,
    q: uniform(rng, B * H * Sq * D), k: uniform(rng, B * KVH * Sk * D), v: uniform(rng, B * KVH * Sk * D),
    kRotated: rng.uniform() < 0.2,
    base: rng.pick([1e4, 1e6]),
    alibi: rng.uniform() < 0.2,
  };
}

function ropeOf(pe, c) {
  return pe.rope({ headDim: c.D, rotaryDim: c.rd, base: c.base, pairing: c.pairing, mrope: { section: c.section, interleaved: c.interleaved } });
}

/** What the hook promises: rope.apply on copies of q and k, then attention with no rope. */
function viaApply(pe, rope, c) {
  const { s, layout } = c;
  const qr = rope.apply(c.q.slice(), { shape: shapeFor(layout, [s.batch, s.qLen, s.heads, s.headDim]), layout, positions: c.pq });
  const kr = c.kRotated ? c.k : rope.apply(c.k.slice(), { shape: shapeFor(layout, [s.batch, s.kLen, s.kvHeads, s.headDim]), layout, positions: c.pk });
  return pe.attention(qr, kr, c.v, { shape: s, layout, causal: c.causal, mask: c.mask, alibi: c.alibi, returnWeights: true });
}

function withMrope(pe, rope, c, extra = {}) {
  return pe.attention(c.q, c.k, c.v, {
    shape: c.s, layout: c.layout, causal: c.causal, mask: c.mask, alibi: c.alibi, rope, positions: { q: c.pq, k: c.pk }, kRotated: c.kRotated, ...extra,
  }).out;
}

const peOf = new Map();
async function both() {
  for (const b of BUILDS) if (!peOf.has(b.simd)) peOf.set(b.simd, await loadBuild(b.simd));
  return BUILDS.map((b) => [b.name, peOf.get(b.simd)]);
}

test('M-RoPE attention equals rope.apply then attention without a rope, bit for bit; both builds agree', async () => {
  const builds = await both();
  const rng = makeRng(1301);
  for (let t = 0; t < 60; t++) {
    const c = randomCase(rng);
    const what = `case ${t} ${c.layout} ${c.pairing} ${c.interleaved ? 'interleaved' : 'chunked'} [${c.section}] rd ${c.rd}/${c.D} ${JSON.stringify(c.s)} rows q ${c.qRows} k ${c.kRows}${c.kRotated ? ' kRotated' : ''}`;
    const outs = [];
    for (const [name, pe] of builds) {
      const rope = ropeOf(pe, c);
      const q0 = c.q.slice();
      const k0 = c.k.slice();
      const got = withMrope(pe, rope, c);
      assertBitEqual(c.q, q0, `${what} ${name}: q unmodified`);
      assertBitEqual(c.k, k0, `${what} ${name}: k unmodified`);
      const want = viaApply(pe, rope, c);
      assertBitEqual(got, want.out, `${what} ${name}: = rope.apply + attention`);
      const weights = pe.attention(c.q, c.k, c.v, {
        shape: c.s, layout: c.layout, causal: c.causal, mask: c.mask, alibi: c.alibi, rope, positions: { q: c.pq, k: c.pk }, kRotated: c.kRotated, returnWeights: true,
      }).weights;
      assertBitEqual(weights, want.weights, `${what} ${name}: weights`);
      outs.push(got);
      rope.free();
    }
    assertBitEqual(outs[0], outs[1], `${what}: SIMD = scalar`);
  }
});

test('M-RoPE attention is within 2e-5 of a naive double reference (causal by token order)', async () => {
  const builds = await both();
  const rng = makeRng(1302);
  for (let t = 0; t < 30; t++) {
    const c = { ...randomCase(rng), kRotated: false, alibi: false };
    const { s, layout } = c;
    const common = { layout, rd: c.rd, base: c.base, pairing: c.pairing, section: c.section, interleaved: c.interleaved };
    const qd = refMrope(c.q, { ...common, shape: [s.batch, s.qLen, s.heads, s.headDim], pos3: c.pq, rows: c.qRows });
    const kd = refMrope(c.k, { ...common, shape: [s.batch, s.kLen, s.kvHeads, s.headDim], pos3: c.pk, rows: c.kRows });
    const want = refBatch(qd, kd, c.v, s, c);
    for (const [name, pe] of builds) {
      const rope = ropeOf(pe, c);
      const got = withMrope(pe, rope, c);
      let worst = 0;
      for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
      assert.ok(worst <= TOL, `case ${t} ${name} ${layout} [${c.section}] ${c.interleaved ? 'interleaved' : 'chunked'}: max |out − ref| = ${worst}`);
      rope.free();
    }
  }
});

test('M-RoPE attention with the three streams equal is plain RoPE attention, bit for bit', async () => {
  const builds = await both();
  const rng = makeRng(1303);
  for (let t = 0; t < 20; t++) {
    const c = randomCase(rng);
    const { s } = c;
    // plain RoPE masks by its positions, M-RoPE by token order: equal when the positions are the token order
    // (causal) or when nothing is masked by position (not causal)
    const iota = !c.causal ? null : s.qLen <= s.kLen ? 'tail' : null;
    if (c.causal && iota === null) c.causal = false;
    const p1q = new Int32Array(c.qRows);
    const p1k = new Int32Array(c.kRows);
    for (let r = 0; r < c.qRows; r++) p1q[r] = iota ? s.kLen - s.qLen + (r % s.qLen) : rng.int(0, 3000);
    for (let r = 0; r < c.kRows; r++) p1k[r] = iota ? r % s.kLen : rng.int(0, 3000);
    const three = (p) => {
      const o = new Int32Array(3 * p.length);
      for (let a = 0; a < 3; a++) o.set(p, a * p.length);
      return o;
    };
    for (const [name, pe] of builds) {
      const m = ropeOf(pe, c);
      const plain = pe.rope({ headDim: c.D, rotaryDim: c.rd, base: c.base, pairing: c.pairing });
      const common = { shape: s, layout: c.layout, causal: c.causal, mask: c.mask, kRotated: false };
      const a = pe.attention(c.q, c.k, c.v, { ...common, rope: m, positions: { q: three(p1q), k: three(p1k) } }).out;
      const b = pe.attention(c.q, c.k, c.v, { ...common, rope: plain, positions: { q: p1q, k: p1k } }).out;
      assertBitEqual(a, b, `case ${t} ${name}: equal streams = plain RoPE`);
      m.free();
      plain.free();
    }
  }
});

test('M-RoPE attention: strided views in a fused QKV buffer and pe.tensor inputs equal the dense call', async () => {
  const builds = await both();
  const rng = makeRng(1304);
  for (const [name, pe] of builds) {
    for (const layout of ['bshd', 'bhsd']) {
      const B = 2, H = 4, KVH = 2, S = 7, D = 16;
      const rope = pe.rope({ headDim: D, base: 1e6, mrope: { section: [2, 3, 3] } });
      const s = { batch: B, heads: H, kvHeads: KVH, qLen: S, kLen: S, headDim: D };
      const q = uniform(rng, B * H * S * D);
      const k = uniform(rng, B * KVH * S * D);
      const v = uniform(rng, B * KVH * S * D);
      const pos = randomStreams(rng, B * S, 100);
      const dense = pe.attention(q, k, v, { shape: s, layout, causal: true, rope, positions: { q: pos, k: pos } }).out;
      // bshd only for the fused buffer: per token [q heads | k heads | v heads]
      if (layout === 'bshd') {
        const W = (H + 2 * KVH) * D;
        const fused = new Float32Array(B * S * W);
        for (let b = 0; b < B; b++) {
          for (let t = 0; t < S; t++) {
            const row = (b * S + t) * W;
            fused.set(q.subarray((b * S + t) * H * D, (b * S + t + 1) * H * D), row);
            fused.set(k.subarray((b * S + t) * KVH * D, (b * S + t + 1) * KVH * D), row + H * D);
            fused.set(v.subarray((b * S + t) * KVH * D, (b * S + t + 1) * KVH * D), row + (H + KVH) * D);
          }
        }
        const before = fused.slice();
        const st = { batch: S * W, seq: W, heads: D };
        const got = pe.attention(fused, fused, fused, {
          shape: s, layout, causal: true, rope, positions: { q: pos, k: pos },
          strides: { q: st, k: st, v: st }, offsets: { k: H * D, v: (H + KVH) * D },
        }).out;
        assertBitEqual(got, dense, `${name}: fused QKV views = dense`);
        assertBitEqual(fused, before, `${name}: the fused buffer is left unmodified`);
      }
      if (layout === 'bhsd') {
        // a bhsd KV cache with spare capacity C per head (heads stride C·D, seq stride D), keys at offset 0
        const C = S + 3;
        const kc = new Float32Array(B * KVH * C * D).fill(7);
        const vc = new Float32Array(B * KVH * C * D).fill(-7);
        for (let b = 0; b < B; b++) {
          for (let g = 0; g < KVH; g++) {
            kc.set(k.subarray(((b * KVH + g) * S) * D, ((b * KVH + g) * S + S) * D), (b * KVH + g) * C * D);
            vc.set(v.subarray(((b * KVH + g) * S) * D, ((b * KVH + g) * S + S) * D), (b * KVH + g) * C * D);
          }
        }
        const cs = { batch: KVH * C * D, seq: D, heads: C * D };
        const got = pe.attention(q, kc, vc, { shape: s, layout, causal: true, rope, positions: { q: pos, k: pos }, strides: { k: cs, v: cs } }).out;
        assertBitEqual(got, dense, `${name}: a bhsd cache with spare capacity = dense`);
      }
      const [tq, tk, tv] = [pe.tensor(q), pe.tensor(k), pe.tensor(v)];
      const got = pe.attention(tq, tk, tv, { shape: s, layout, causal: true, rope, positions: { q: pos, k: pos } }).out;
      assertBitEqual(got, dense, `${name} ${layout}: pe.tensor inputs = arrays`);
      assertBitEqual(tq.array, q, `${name} ${layout}: q tensor unmodified`);
      assertBitEqual(tk.array, k, `${name} ${layout}: k tensor unmodified`);
      // one array as q and k (self-attention over the same projections): each rotated once
      const vh = uniform(rng, B * H * S * D);
      const same = pe.attention(q, q, vh, { shape: { ...s, kvHeads: H }, layout, rope, positions: { q: pos, k: pos } }).out;
      const qr = rope.apply(q.slice(), { shape: shapeFor(layout, [B, S, H, D]), layout, positions: pos });
      assertBitEqual(same, pe.attention(qr, qr, vh, { shape: { ...s, kvHeads: H }, layout }).out, `${name} ${layout}: q === k`);
      for (const x of [tq, tk, tv]) x.free();
      rope.free();
    }
  }
});

test('M-RoPE attention: one frequency set for q and k, seqLen by default max(all streams) + 1 (dynamic)', async () => {
  const builds = await both();
  const rng = makeRng(1305);
  for (const [name, pe] of builds) {
    const D = 16;
    const rope = pe.rope({ headDim: D, base: 1e4, maxPositionEmbeddings: 16, scaling: { type: 'dynamic', factor: 2 }, mrope: { section: [2, 3, 3] } });
    const s = { batch: 1, heads: 2, qLen: 1, kLen: 6, headDim: D };
    const q = uniform(rng, 2 * D);
    const k = uniform(rng, 6 * 2 * D);
    const v = uniform(rng, 6 * 2 * D);
    const pq = Int32Array.from([30, 31, 32]);
    const pk = Int32Array.from([0, 1, 2, 3, 4, 5, 0, 1, 1, 60, 2, 3, 0, 1, 2, 2, 3, 4]); // the max, 60, is in k's h stream
    const opts = { shape: s, rope, positions: { q: pq, k: pk } };
    const viaApplyAt = (sl) => {
      const qr = rope.apply(q.slice(), { shape: [1, 1, 2, D], positions: pq, seqLen: sl });
      const kr = rope.apply(k.slice(), { shape: [1, 6, 2, D], positions: pk, seqLen: sl });
      return pe.attention(qr, kr, v, { shape: s }).out;
    };
    assertBitEqual(pe.attention(q, k, v, opts).out, viaApplyAt(61), `${name}: default seqLen 61`);
    assertBitEqual(pe.attention(q, k, v, { ...opts, seqLen: 200 }).out, viaApplyAt(200), `${name}: seqLen 200`);
    assert.notDeepEqual(viaApplyAt(61), viaApplyAt(33), `${name}: the test can tell the frequency sets apart`);
    rope.free();
  }
});

test('M-RoPE attention: bad positions are TypeErrors / RangeErrors naming the argument', async () => {
  const [[, pe]] = await both();
  const rope = pe.rope({ headDim: 8, mrope: { section: [1, 1, 2] } });
  const s = { batch: 2, heads: 1, qLen: 3, kLen: 4, headDim: 8 };
  const q = new Float32Array(2 * 3 * 8);
  const k = new Float32Array(2 * 4 * 8);
  const call = (positions, extra = {}) => pe.attention(q, k, k, { shape: s, rope, positions, ...extra });
  const p9 = new Int32Array(9);
  const p12 = new Int32Array(12);
  assertThrowsNaming(() => call(undefined), TypeError, 'options.positions', '{ q, k }');
  assertThrowsNaming(() => call(p12), TypeError, 'options.positions', '{ q, k }');
  assertThrowsNaming(() => call({ k: p12 }), TypeError, 'options.positions.q', 'required', 'length 3 * qLen = 9');
  assertThrowsNaming(() => call({ q: p9 }), TypeError, 'options.positions.k', 'required');
  assertThrowsNaming(() => call({ q: new Int32Array(3), k: p12 }), RangeError, 'options.positions.q', 'length 9 or 18', 'got 3');
  assertThrowsNaming(() => call({ q: new Int32Array(10), k: p12 }), RangeError, 'options.positions.q', 'divisible by 3');
  assertThrowsNaming(() => call({ q: p9, k: new Int32Array(4) }), RangeError, 'options.positions.k', 'divisible by 3');
  assertThrowsNaming(() => call({ q: p9, k: new Int32Array(15) }), RangeError, 'options.positions.k', 'length 12 or 24', 'got 15');
  assertThrowsNaming(() => call({ q: [0, 1, 2, 0, 1, 2, 0, 1, -1], k: p12 }), RangeError, 'options.positions.q[8]');
  assertThrowsNaming(() => call({ q: Int32Array.from([0, 0, 0, 0, -5, 0, 0, 0, 0]), k: p12 }), RangeError, 'options.positions.q[4]');
  assertThrowsNaming(() => call({ q: [0, 1, 2, 0, 1.5, 2, 0, 1, 2], k: p12 }), RangeError, 'options.positions.q[4]');
  assertThrowsNaming(() => call({ q: p9, k: p12, ks: p12 }), TypeError, 'options.positions.ks', 'did you mean k');
  // kRotated: k's positions are not needed (the keys are already rotated)
  assert.equal(call({ q: p9 }, { kRotated: true }).out.length, 2 * 3 * 8);
  assertThrowsNaming(() => pe.attention(q, k, k, { shape: { ...s, headDim: 4 }, rope, positions: { q: p9, k: p12 } }), RangeError, 'options.shape.headDim');
  // 16-bit storage is not built for M-RoPE attention: refused, naming the argument (float32 data with a 16-bit
  // dtype is refused first, as in every attention call)
  assertThrowsNaming(() => call({ q: p9, k: p12 }, { dtype: 'float16' }), TypeError, 'q is a Float32Array', "'float16'");
  const h = pe.tensor(2 * 3 * 8, { dtype: 'float16' });
  const hk = pe.tensor(2 * 4 * 8, { dtype: 'float16' });
  assertThrowsNaming(() => pe.attention(h, k, k, { shape: s, rope, positions: { q: p9, k: p12 } }), TypeError, 'q', 'float16');
  assertThrowsNaming(() => pe.attention(h, hk, hk, { shape: s, rope, positions: { q: p9, k: p12 } }), RangeError, 'M-RoPE', 'float32');
  assertThrowsNaming(() => pe.attention(h, hk, hk, { shape: s, rope, positions: { q: p9, k: p12 }, dtype: 'float16' }), RangeError, 'M-RoPE');
  h.free();
  hk.free();
  // plain rope.apply-style one-stream positions are refused by length, not read as one stream
  assertThrowsNaming(() => call({ q: new Int32Array(3), k: new Int32Array(4) }), RangeError, 'options.positions.q');
  rope.free();
});

test('a left-padded batch: pe.mropePositions feeds pe.attention (mask + causal) = one call per sequence, the double reference', async () => {
  const builds = await both();
  const INDEX = JSON.parse(readFileSync(new URL('../golden/mrope/mrope_index.json', import.meta.url), 'utf8'));
  const rng = makeRng(1307);
  for (const c of INDEX.cases.filter((x) => x.inputs.attention_mask !== null)) {
    const i = c.inputs;
    const o = { config: { model_type: c.model, ...c.config }, attentionMask: i.attention_mask, imageGridThw: i.image_grid_thw, videoGridThw: i.video_grid_thw };
    if (i.second_per_grid_ts !== undefined) o.secondPerGridTs = i.second_per_grid_ts;
    const [, B, S] = c.expected.shape;
    const D = 16;
    const s = { batch: B, heads: 2, kvHeads: 1, qLen: S, kLen: S, headDim: D };
    const q = uniform(rng, B * S * 2 * D);
    const k = uniform(rng, B * S * D);
    const v = uniform(rng, B * S * D);
    const mask = Int32Array.from(i.attention_mask.flat());
    const section = [2, 3, 3];
    const interleaved = c.model === 'qwen3_vl';
    for (const [name, pe] of builds) {
      const { positions } = pe.mropePositions(i.input_ids, o);
      assert.deepEqual(Array.from(positions), c.expected.position_ids.flat(Infinity), `${c.id}: the golden position ids`);
      const rope = pe.rope({ headDim: D, base: 1e4, mrope: { section, interleaved } });
      const got = pe.attention(q, k, v, { shape: s, causal: true, mask, rope, positions: { q: positions, k: positions } }).out;
      const qd = refMrope(q, { shape: [B, S, 2, D], layout: 'bshd', pos3: positions, rows: B * S, rd: D, base: 1e4, pairing: 'half', section, interleaved });
      const kd = refMrope(k, { shape: [B, S, 1, D], layout: 'bshd', pos3: positions, rows: B * S, rd: D, base: 1e4, pairing: 'half', section, interleaved });
      const want = refBatch(qd, kd, v, s, { layout: 'bshd', causal: true, mask });
      let worst = 0;
      for (let e = 0; e < got.length; e++) worst = Math.max(worst, Math.abs(got[e] - want[e]));
      assert.ok(worst <= TOL, `${c.id} ${name}: max |out − ref| = ${worst}`);
      // each sequence of the padded batch = a batch-1 call on it (same kLen, its mask row), bit for bit
      for (let b = 0; b < B; b++) {
        const sub = (x, w) => x.slice(b * S * w, (b + 1) * S * w);
        const p1 = new Int32Array(3 * S);
        for (let a = 0; a < 3; a++) p1.set(positions.subarray(a * B * S + b * S, a * B * S + (b + 1) * S), a * S);
        const one = pe.attention(sub(q, 2 * D), sub(k, D), sub(v, D), { shape: { ...s, batch: 1 }, causal: true, mask: sub(mask, 1), rope, positions: { q: p1, k: p1 } }).out;
        assertBitEqual(sub(got, 2 * D), one, `${c.id} ${name}: sequence ${b} = its own call`);
      }
      rope.free();
    }
  }
});
