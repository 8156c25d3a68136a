// pe.attention with 16-bit storage (options.dtype 'float16' | 'bfloat16'), on the SIMD and the scalar build.
//
// Random padded batches (per-sequence positions, the key mask, causal, GQA, vHeadDim, both layouts; key counts
// that leave every tail of the 4-, 8-, 64- and 512-key loops; q read inside a fused per-token QKV buffer and out
// written into a padded buffer through strides and offsets) with q, k, v given as raw 16-bit patterns:
//   - against a naive float64 attention of the same 16-bit inputs (decoded exactly): out is the float32 result
//     rounded once to the storage type, so |out − ref| ≤ u·(|ref| + E) + E + s, with u the unit roundoff of the
//     type (2^-11 float16, 2^-8 bfloat16), E = 2e-5 the float32 attention's own error at these sizes (|q|, |k| ≤ 2,
//     |v| ≤ 1, headDim ≤ 40: the bound attention-batch.test.js justifies) and s half the float16 subnormal step
//     (2^-25; 0 for bfloat16, whose subnormals lie far below E);
//   - the elements of out's buffer outside its view keep their bits;
//   - SIMD == scalar bit for bit.
// With a rope: attending with the rope equals rotating q and k first with rope.apply in the same dtype and
// attending without one (or with kRotated) bit for bit, since both round the rotated values to the type.
// (tests/c/test_attention_f16.c checks the exact relation: narrow(float32 attention of the widened inputs).)
// And the errors: a dtype that does not match an argument names the argument.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, assertThrowsNaming, assertBitEqual } from './helpers.js';
import { at, paddedBatch, randomPads, refBatch as ref } from './attention-ref.js';

const U = { float16: 2 ** -11, bfloat16: 2 ** -8 };
const E = 2e-5;

/** 16-bit pattern -> its exact value */
function decode(dtype, h) {
  const mant = dtype === 'float16' ? 10 : 7;
  const expBits = 15 - mant;
  const bias = (1 << (expBits - 1)) - 1;
  const e = (h >> mant) & ((1 << expBits) - 1);
  const m = h & ((1 << mant) - 1);
  const sign = h & 0x8000 ? -1 : 1;
  if (e === (1 << expBits) - 1) return m ? NaN : sign * Infinity;
  return sign * (e === 0 ? m * 2 ** (1 - bias - mant) : (2 ** mant + m) * 2 ** (e - bias - mant));
}

/** n random 16-bit patterns of values in (−amp, amp), amp a power of two; an exact zero now and then */
function randomHalf(rng, dtype, n, amp) {
  const mant = dtype === 'float16' ? 10 : 7;
  const bias = dtype === 'float16' ? 15 : 127;
  const top = Math.log2(amp) - 1 + bias; // largest exponent field
  const h = new Uint16Array(n);
  for (let i = 0; i < n; i++) {
    if (rng() < 0.02) continue;
    const e = top - Math.floor(rng() * 8);
    h[i] = (rng() < 0.5 ? 0x8000 : 0) | (e << mant) | Math.floor(rng() * (1 << mant));
  }
  return h;
}

/** A random case; the same seed gives the same case on both builds. */
function makeCase(seed) {
  const rng = makeRng(seed).uniform;
  const int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));
  const dtype = seed % 2 ? 'bfloat16' : 'float16';
  const KVH = int(1, 3);
  const H = KVH * int(1, 3);
  const prefill = rng() < 0.4;
  const kLen = prefill ? int(1, 40) : rng() < 0.2 ? int(513, 600) : int(1, 90);
  const qLen = prefill ? kLen : int(1, Math.min(3, kLen));
  const B = int(1, 4);
  const D = int(1, 40);
  const Dv = rng() < 0.3 ? int(1, 40) : D;
  const layout = rng() < 0.5 ? 'bshd' : 'bhsd';
  const causal = rng() < 0.7;
  const { mask, kpos, qpos } = paddedBatch(B, kLen, qLen, randomPads(int, B, kLen));
  const s = { batch: B, heads: H, kvHeads: KVH, qLen, kLen, headDim: D, vHeadDim: Dv };
  const q = randomHalf(rng, dtype, B * H * qLen * D, 2);
  const k = randomHalf(rng, dtype, B * KVH * kLen * D, 2);
  const v = randomHalf(rng, dtype, B * KVH * kLen * Dv, 1);
  return { rng, dtype, s, layout, causal, mask, kpos, qpos, q, k, v, fused: rng() < 0.4, padOut: rng() < 0.4 };
}

/** Dense (B, S, NH, hd) in layout -> a wider buffer: each head vector followed by `pad` elements, from `off`. */
function spread(x, layout, B, S, NH, hd, pad, off, fill) {
  const P = hd + pad;
  const y = new Uint16Array(off + B * S * NH * P).fill(fill);
  const strides = layout === 'bhsd' ? { batch: NH * S * P, seq: P, heads: S * P } : { batch: S * NH * P, seq: NH * P, heads: P };
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < S; t++) {
      for (let h = 0; h < NH; h++) {
        const src = at(layout, S, NH, hd, b, h, t, 0);
        y.set(x.subarray(src, src + hd), off + b * strides.batch + t * strides.seq + h * strides.heads);
      }
    }
  }
  return { y, strides };
}

const results = {};
const CASES = 60;

for (const build of BUILDS) {
  test(`16-bit attention: random padded batches against a float64 reference on the same inputs [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    let worst = 0;
    for (let c = 0; c < CASES; c++) {
      const C = makeCase(1000 + c);
      const { s, layout, dtype } = C;
      const opts = { shape: s, layout, causal: C.causal, positions: { q: C.qpos, k: C.kpos }, mask: C.mask, dtype };
      let q = C.q;
      const strides = {};
      const offsets = {};
      if (C.fused) { // q inside a wider buffer (spare elements hold NaN patterns: reading one would show)
        const sp = spread(C.q, layout, s.batch, s.qLen, s.heads, s.headDim, 3, 5, 0x7fff);
        q = sp.y;
        strides.q = sp.strides;
        offsets.q = 5;
      }
      let out;
      let outView = null;
      if (C.padOut) {
        outView = spread(new Uint16Array(s.batch * s.heads * s.qLen * s.vHeadDim), layout, s.batch, s.qLen, s.heads, s.vHeadDim, 2, 1, 0xabcd);
        strides.out = outView.strides;
        offsets.out = 1;
        opts.out = outView.y;
      }
      if (C.fused || C.padOut) Object.assign(opts, { strides, offsets });
      const r = pe.attention(q, C.k, C.v, opts).out;
      assert.ok(r instanceof Uint16Array, 'out is a Uint16Array of bits');
      // read the view back densely, then check that the rest of out's buffer is untouched
      if (outView) {
        out = new Uint16Array(s.batch * s.heads * s.qLen * s.vHeadDim);
        const st = outView.strides;
        for (let b = 0; b < s.batch; b++) {
          for (let t = 0; t < s.qLen; t++) {
            for (let h = 0; h < s.heads; h++) {
              const at0 = 1 + b * st.batch + t * st.seq + h * st.heads;
              out.set(r.subarray(at0, at0 + s.vHeadDim), at(layout, s.qLen, s.heads, s.vHeadDim, b, h, t, 0));
              r.fill(0xabcd, at0, at0 + s.vHeadDim);
            }
          }
        }
        assert.ok(r.every((x) => x === 0xabcd), `case ${c}: out's elements outside its view changed`);
      } else {
        out = r;
      }
      results[`${build.simd}:${c}`] = out;
      const dec = (a) => Float64Array.from(a, (h) => decode(dtype, h));
      const want = ref(dec(C.q), dec(C.k), dec(C.v), s, C);
      const sub = dtype === 'float16' ? 2 ** -25 : 0;
      for (let i = 0; i < want.length; i++) {
        const got = decode(dtype, out[i]);
        const bound = U[dtype] * (Math.abs(want[i]) + E) + E + sub;
        const err = Math.abs(got - want[i]);
        worst = Math.max(worst, err / bound);
        if (!(err <= bound)) assert.fail(`case ${c} (${dtype}, ${JSON.stringify(s)}, ${layout}) element ${i}: ${got} vs ${want[i]}, err ${err} > ${bound}`);
      }
    }
    console.log(`# 16-bit attention [${build.name}]: ${CASES} cases, worst err / bound ${worst.toFixed(3)}`);
  });

  test(`16-bit attention with a rope == rope.apply in the same dtype, then attention without one [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    for (let c = 0; c < 16; c++) {
      const C = makeCase(5000 + c);
      const { s, layout, dtype } = C;
      const D = 2 * Math.max(1, s.headDim >> 1);
      const sh = { ...s, headDim: D };
      const q = randomHalf(C.rng, dtype, s.batch * s.heads * s.qLen * D, 2);
      const k = randomHalf(C.rng, dtype, s.batch * s.kvHeads * s.kLen * D, 2);
      const rope = pe.rope({ headDim: D, base: 10000, pairing: c % 2 ? 'interleaved' : 'half' });
      const common = { shape: sh, layout, causal: C.causal, mask: C.mask, dtype, positions: { q: C.qpos, k: C.kpos } };
      const inside = pe.attention(q, k, C.v, { ...common, rope }).out;
      const shapeOf = (S, NH) => (layout === 'bshd' ? [s.batch, S, NH, D] : [s.batch, NH, S, D]);
      const qr = rope.apply(q.slice(), { shape: shapeOf(s.qLen, s.heads), layout, positions: C.qpos, dtype });
      const kr = rope.apply(k.slice(), { shape: shapeOf(s.kLen, s.kvHeads), layout, positions: C.kpos, dtype });
      assertBitEqual(pe.attention(qr, kr, C.v, common).out, inside, `case ${c}: rope inside vs rope.apply first`);
      assertBitEqual(pe.attention(q, kr, C.v, { ...common, rope, kRotated: true }).out, inside, `case ${c}: kRotated`);
      rope.free();
    }
  });

  test(`16-bit attention: pe.tensor inputs and out (zero-copy, dtype from the tensors) == Uint16Array inputs [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    for (const seed of [7001, 7002]) {
      const C = makeCase(seed);
      const { s, layout, dtype } = C;
      const opts = { shape: s, layout, causal: C.causal, positions: { q: C.qpos, k: C.kpos }, mask: C.mask };
      const want = pe.attention(C.q, C.k, C.v, { ...opts, dtype }).out;
      const [q, k, v] = [C.q, C.k, C.v].map((x) => pe.tensor(x, { dtype }));
      const out = pe.tensor(want.length, { dtype });
      assert.equal(pe.attention(q, k, v, { ...opts, out }).out, out, 'returns options.out');
      assertBitEqual(out.array.slice(), want, `seed ${seed}: tensors`);
      assertBitEqual(pe.attention(q, k, v, opts).out, want, `seed ${seed}: tensors, new out`);
      for (const t of [q, k, v, out]) t.free();
    }
  });

  test(`16-bit attention: dtype errors name the argument [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const s = { batch: 1, heads: 2, qLen: 2, kLen: 3, headDim: 4 };
    const q = new Uint16Array(16);
    const k = new Uint16Array(24);
    const v = new Uint16Array(24);
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s }), TypeError, 'q is a Uint16Array', 'options.dtype');
    assertThrowsNaming(() => pe.attention(q, new Float32Array(24), v, { shape: s, dtype: 'float16' }), TypeError, 'k is a Float32Array', "'float16'");
    assertThrowsNaming(() => pe.attention(q, k, new Int16Array(24), { shape: s, dtype: 'bfloat16' }), TypeError, 'v must be a Uint16Array');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, dtype: 'float16', out: new Float32Array(16) }), TypeError, 'options.out is a Float32Array');
    assertThrowsNaming(() => pe.attention(new Float32Array(16), new Float32Array(24), new Float32Array(24), { shape: s, out: new Uint16Array(16) }), TypeError, 'options.out must be a Float32Array');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, dtype: 'half' }), RangeError, 'options.dtype', 'float16');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, dtype: 16 }), TypeError, 'options.dtype');
    assertThrowsNaming(() => pe.attention(q, k.subarray(1), v, { shape: s, dtype: 'float16' }), RangeError, 'k.length', '24');
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, dtype: 'float16', out: q }), RangeError, 'options.out', 'overlap q');
    // views count 16-bit elements
    assertThrowsNaming(() => pe.attention(q, k, v, { shape: s, dtype: 'float16', offsets: { k: 1 } }), RangeError, 'k is too short', 'at least 25');
    // one key of value 1 in every dimension: out = v, exactly (weights 1)
    const one = new Uint16Array(4).fill(0x3c00);
    const r = pe.attention(one, one, Uint16Array.of(0x3c00, 0x4000, 0xc000, 0x0001), { shape: { batch: 1, heads: 1, qLen: 1, kLen: 1, headDim: 4 }, dtype: 'float16' }).out;
    assert.deepEqual(Array.from(r), [0x3c00, 0x4000, 0xc000, 0x0001]);
  });
}

test('16-bit attention: SIMD == scalar bit for bit', () => {
  for (let c = 0; c < CASES; c++) assertBitEqual(results[`true:${c}`], results[`false:${c}`], `case ${c}`);
});
