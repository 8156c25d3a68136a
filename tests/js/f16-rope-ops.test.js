// f16-rope-ops.test.js — rope.rerotate and rope.cosSin in 16-bit storage (options.dtype 'float16' | 'bfloat16'),
// on both builds (issue 11).
//
// Accuracy: every result within 1 ulp of the storage type of the float64 computation on the same 16-bit inputs
// (f16-ref.js decodes them): rerotate against helpers.js's refApply (double rotation by delta * inv_freq with
// the rope's own double frequencies), cosSin against the golden float64 tables and, for random positions up to
// 2^31 - 1, against Math.cos / Math.sin of the double angle. Rerotate's float32 arithmetic may add its own
// error, 2^-22 of the head's largest input, which only shows where a result cancels far below its inputs: that
// slack is allowed and how many results needed it is reported. cosSin needs none (a table value is the float32
// value rounded once more). SIMD and scalar builds give the same bits (NaNs: both NaN). Bad input is a
// TypeError / RangeError naming the argument.
import test from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, configJsonOf, refApply, makeRng, randnF32, assertThrowsNaming } from './helpers.js';
import { encode, decode, assertWithinUlp, assertHalfEqual, newStats } from './f16-ref.js';

const DT = ['float16', 'bfloat16'];
const F32_ERR = 2 ** -22;
const CASES = [...loadGolden('rope_apply_half_split.json').cases, ...loadGolden('rope_apply_interleaved.json').cases];
const cosSinFile = loadGolden('rope_cos_sin.json');
const DELTAS = [1, -7, 4096, 2147483647, -2147483647];
const outputs = new Map(); // `${build}|key` -> Uint16Array, for SIMD == scalar

function ropeFor(pe, c) {
  return c.variant === undefined ? pe.ropeFromHFConfig(configJsonOf(c.config)) : pe.ropeFromHFConfig(configJsonOf(c.config), { pairing: 'interleaved' });
}
const absMax = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

for (const build of BUILDS) {
  test(`rerotate in 16-bit storage: golden inputs, deltas up to ±(2^31 - 1) [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const stats = { float16: newStats(), bfloat16: newStats() };
    for (const c of CASES) {
      const rope = ropeFor(pe, c);
      try {
        const [B, H, S, D] = c.shape;
        const invFreq = rope.invFreq64();
        const pairing = rope.pairing === 'interleaved' ? 'interleaved' : 'half';
        const rows = B * H * S;
        for (const which of ['q', 'k']) {
          for (const dtype of DT) {
            const bits = Uint16Array.from(c.inputs[which], (v) => encode(dtype, Math.fround(v)));
            const xin = Float64Array.from(bits, (h) => decode(dtype, h));
            const slack = F32_ERR * 2 * absMax(xin);
            for (const delta of DELTAS) {
              const want = refApply(xin, { shape: [rows, 1, 1, D], layout: 'bshd', positions: [delta], invFreq, pairing });
              const x = Uint16Array.from(bits);
              assert.equal(rope.rerotate(x, delta, { shape: [B, H, S, D], layout: 'bhsd', dtype }), x, 'in place, x returned');
              assertWithinUlp(stats[dtype], dtype, x, want, () => slack, `${c.id} ${which} delta ${delta}`);
              outputs.set(`${build.name}|${dtype}|rerotate ${c.id} ${which} ${delta}`, x);
            }
          }
        }
      } finally {
        rope.free();
      }
    }
    for (const dt of DT) t.diagnostic(`${dt}: ${stats[dt].n} results, worst ${stats[dt].worst.toFixed(4)} ulps, ${stats[dt].over} over 1 ulp (within the float32 slack)`);
  });

  test(`rerotate in 16-bit storage: random shapes, strided caches, tensors, M-RoPE deltas [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(41);
    const int = (lo, hi) => lo + Math.floor(rng.uniform() * (hi - lo + 1));
    const stats = newStats();
    for (let k = 0; k < 30; k++) {
      const D = 2 * int(1, 40);
      const rotaryDim = rng.uniform() < 0.3 ? 2 * int(1, D / 2) : D;
      const pairing = rng.uniform() < 0.5 ? 'half' : 'interleaved';
      const rope = pe.rope({ headDim: D, rotaryDim, pairing, base: rng.uniform() < 0.5 ? 10000 : 1e6 });
      try {
        const [B, H, S] = [int(1, 3), int(1, 4), int(1, 7)];
        const C = S + int(0, 5); // cache capacity per head
        const dtype = DT[k % 2];
        const delta = (rng.uniform() < 0.5 ? -1 : 1) * Math.floor(rng.uniform() * 2147483647);
        const n = B * H * S * D;
        const bits = Uint16Array.from(randnF32(rng, n), (v) => encode(dtype, v * 50));
        const xin = Float64Array.from(bits, (h) => decode(dtype, h));
        const want = refApply(xin, { shape: [B * H * S, 1, 1, D], layout: 'bshd', positions: [delta], invFreq: rope.invFreq64(), pairing });
        const dense = rope.rerotate(Uint16Array.from(bits), delta, { dtype }); // shape from x.length
        const slack = F32_ERR * 2 * absMax(xin);
        assertWithinUlp(stats, dtype, dense, want, () => slack, `case ${k} (D ${D}, ${pairing}, delta ${delta})`);
        outputs.set(`${build.name}|${dtype}|rerotate random ${k}`, dense);
        // the same heads inside a bhsd cache of capacity C, as a 16-bit tensor: rotated where they lie
        const cache = pe.tensor(B * H * C * D, { dtype });
        const fill = Uint16Array.from({ length: B * H * C * D }, (_, i) => i & 0x3bff);
        const ca = cache.array;
        ca.set(fill);
        for (let r = 0; r < B * H; r++) ca.set(bits.subarray(r * S * D, (r + 1) * S * D), r * C * D);
        rope.rerotate(cache, delta, { shape: [B, H, S, D], layout: 'bhsd', strides: { batch: H * C * D, heads: C * D, seq: D } });
        const got = cache.array;
        for (let r = 0; r < B * H; r++) {
          assert.deepEqual(got.subarray(r * C * D, r * C * D + S * D), dense.subarray(r * S * D, (r + 1) * S * D), `case ${k}: strided == dense`);
          assert.deepEqual(got.subarray(r * C * D + S * D, (r + 1) * C * D), fill.subarray(r * C * D + S * D, (r + 1) * C * D), `case ${k}: spare slots untouched`);
        }
        cache.free();
      } finally {
        rope.free();
      }
    }
    // M-RoPE: a delta per axis with mixed signs turns in one pass (each pair by its axis's signed delta) and is
    // rounded once; strided (a bhsd cache with spare slots) == dense, float32 and 16-bit
    const mrope = pe.rope({ headDim: 16, base: 1e6, mrope: { section: [4, 2, 2] } });
    try {
      const axis = mrope.mrope.pairAxis;
      const invFreq = mrope.invFreq64();
      for (const dtype of DT) {
        const deltas = [123456, -98765, 2147483647];
        const bits = Uint16Array.from(randnF32(rng, 5 * 16), (v) => encode(dtype, v));
        const xin = Float64Array.from(bits, (h) => decode(dtype, h));
        const want = Float64Array.from(xin);
        for (let r = 0; r < 5; r++) {
          for (let i = 0; i < 8; i++) {
            const a = deltas[axis[i]] * invFreq[i];
            const [x0, x1] = [xin[r * 16 + i], xin[r * 16 + i + 8]];
            want[r * 16 + i] = x0 * Math.cos(a) - x1 * Math.sin(a);
            want[r * 16 + i + 8] = x1 * Math.cos(a) + x0 * Math.sin(a);
          }
        }
        const x = mrope.rerotate(Uint16Array.from(bits), deltas, { dtype });
        assertWithinUlp(stats, dtype, x, want, () => F32_ERR * 2 * absMax(xin), `M-RoPE ${dtype}`);
        outputs.set(`${build.name}|${dtype}|rerotate mrope`, x);
        // the 5 heads as [1, 5, 1, 16] inside a cache with 3 spare slots per head row
        const cache = new Uint16Array(5 * 19).fill(0x3c00);
        for (let r = 0; r < 5; r++) cache.set(bits.subarray(r * 16, r * 16 + 16), r * 19);
        mrope.rerotate(cache, deltas, { dtype, shape: [1, 5, 1, 16], strides: { batch: 95, seq: 19, heads: 19 } });
        for (let r = 0; r < 5; r++) {
          assert.deepEqual(cache.subarray(r * 19, r * 19 + 16), x.subarray(r * 16, r * 16 + 16), `M-RoPE ${dtype} strided row ${r}`);
          assert.deepEqual(Array.from(cache.subarray(r * 19 + 16, r * 19 + 19)), [0x3c00, 0x3c00, 0x3c00], 'spare slots untouched');
        }
        const f32 = Float32Array.from(xin);
        const f32cache = new Float32Array(5 * 19).fill(7);
        for (let r = 0; r < 5; r++) f32cache.set(f32.subarray(r * 16, r * 16 + 16), r * 19);
        mrope.rerotate(f32, deltas);
        mrope.rerotate(f32cache, deltas, { shape: [1, 5, 1, 16], strides: { batch: 95, seq: 19, heads: 19 } });
        for (let r = 0; r < 5; r++) assert.deepEqual(f32cache.subarray(r * 19, r * 19 + 16), f32.subarray(r * 16, r * 16 + 16), `M-RoPE float32 strided row ${r}`);
      }
    } finally {
      mrope.free();
    }
    t.diagnostic(`${stats.n} results, worst ${stats.worst.toFixed(4)} ulps, ${stats.over} over 1 ulp (within the float32 slack)`);
  });

  test(`cosSin in 16-bit storage: golden tables, positions up to 2^31 - 1, out, M-RoPE [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const stats = { float16: newStats(), bfloat16: newStats() };
    for (const c of cosSinFile.cases) {
      const rope = pe.ropeFromHFConfig(configJsonOf(c.config));
      try {
        const e = c.expected;
        const [B, S, W] = e.shape;
        const n = rope.nFreq;
        const positions = Int32Array.from(c.position_ids.flat());
        const want = { cos: new Float64Array(B * S * n), sin: new Float64Array(B * S * n) };
        for (let row = 0; row < B * S; row++) {
          for (let i = 0; i < n; i++) {
            want.cos[row * n + i] = e.cos_f64[row * W + i];
            want.sin[row * n + i] = e.sin_f64[row * W + i];
          }
        }
        for (const dtype of DT) {
          const got = rope.cosSin(positions, { dtype });
          assert.ok(got.cos instanceof Uint16Array && got.sin instanceof Uint16Array);
          for (const part of ['cos', 'sin']) {
            assertWithinUlp(stats[dtype], dtype, got[part], want[part], null, `${c.id} ${part}`);
            outputs.set(`${build.name}|${dtype}|cosSin ${c.id} ${part}`, got[part]);
          }
        }
      } finally {
        rope.free();
      }
    }
    // random positions up to 2^31 - 1 with a yarn rope (attention factor != 1), into 16-bit tensors
    const rng = makeRng(43);
    const rope = pe.rope({ headDim: 64, base: 1e6, scaling: { type: 'yarn', factor: 8, originalMaxPositionEmbeddings: 8192 } });
    try {
      const positions = Int32Array.from({ length: 40 }, (_, i) => (i < 3 ? [0, 2147483647, 2147483646][i] : Math.floor(rng.uniform() * 2147483647)));
      const invFreq = rope.invFreq64();
      const scale = rope.attentionScaling();
      const n = rope.nFreq;
      const want = { cos: new Float64Array(40 * n), sin: new Float64Array(40 * n) };
      for (let p = 0; p < 40; p++) {
        for (let i = 0; i < n; i++) {
          want.cos[p * n + i] = Math.cos(positions[p] * invFreq[i]) * scale;
          want.sin[p * n + i] = Math.sin(positions[p] * invFreq[i]) * scale;
        }
      }
      for (const dtype of DT) {
        const out = { cos: pe.tensor(40 * n, { dtype }), sin: pe.tensor(40 * n, { dtype }) };
        const r = rope.cosSin(positions, { out, seqLen: 0 }); // the tensors' dtype
        assert.equal(r.cos, out.cos, 'out.cos returned');
        const plain = rope.cosSin(positions, { dtype, seqLen: 0 });
        for (const part of ['cos', 'sin']) {
          assert.deepEqual(out[part].array, plain[part], `${dtype} ${part}: tensor out == new array`);
          assertWithinUlp(stats[dtype], dtype, plain[part], want[part], null, `random ${part}`);
          outputs.set(`${build.name}|${dtype}|cosSin random ${part}`, plain[part]);
        }
        // a Uint16Array out, and the 16-bit table is the float32 table rounded once
        const arr = { cos: new Uint16Array(40 * n), sin: new Uint16Array(40 * n) };
        rope.cosSin(positions, { out: arr, dtype, seqLen: 0 });
        const f32 = rope.cosSin(positions, { seqLen: 0 });
        assert.deepEqual(arr.cos, Uint16Array.from(f32.cos, (v) => encode(dtype, v)));
        assert.deepEqual(arr.sin, Uint16Array.from(f32.sin, (v) => encode(dtype, v)));
        out.cos.free();
        out.sin.free();
      }
    } finally {
      rope.free();
    }
    // M-RoPE: the float32 M-RoPE table rounded
    const m = pe.rope({ headDim: 16, mrope: { section: [4, 2, 2] } });
    try {
      const pos3 = Int32Array.from([0, 5, 2147483647, 1, 7, 9, 3, 3, 100]);
      const f32 = m.cosSin(pos3);
      const h = m.cosSin(pos3, { dtype: 'bfloat16' });
      assert.deepEqual(h.cos, Uint16Array.from(f32.cos, (v) => encode('bfloat16', v)));
      assert.deepEqual(h.sin, Uint16Array.from(f32.sin, (v) => encode('bfloat16', v)));
    } finally {
      m.free();
    }
    for (const dt of DT) t.diagnostic(`${dt}: ${stats[dt].n} table values, worst ${stats[dt].worst.toFixed(4)} ulps`);
    assert.equal(stats.float16.over + stats.bfloat16.over, 0, 'no table value past 1 ulp');
  });

  test(`rerotate / cosSin 16-bit errors name the argument and the bound [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: 8 });
    try {
      const n = 2 * 8;
      assertThrowsNaming(() => rope.rerotate(new Float32Array(n), 3, { dtype: 'float16' }), TypeError, 'x', 'float16', 'Uint16Array');
      assertThrowsNaming(() => rope.rerotate(new Uint16Array(n), 3), TypeError, 'x', 'Float32Array');
      assertThrowsNaming(() => rope.rerotate(new Uint16Array(n), 3, { dtype: 'bfloat16', shape: [1, 3, 1, 8] }), RangeError, 'x.length', '24');
      assertThrowsNaming(() => rope.rerotate(new Uint16Array(n - 1), 3, { dtype: 'float16' }), RangeError, 'x.length', 'headDim');
      assertThrowsNaming(() => rope.rerotate(pe.tensor(n, { dtype: 'float16' }), 3, { dtype: 'bfloat16' }), TypeError, 'x', 'float16', 'bfloat16');
      assertThrowsNaming(() => rope.rerotate(new Uint16Array(n), 3, { dtype: 'f16' }), RangeError, 'options.dtype');
      assertThrowsNaming(() => rope.rerotate(new Uint16Array(n), 3, { dtype: 'float16', shape: [1, 4, 1, 8], strides: { seq: 8 } }), RangeError, 'x');
      assertThrowsNaming(() => rope.cosSin([0, 1], { dtype: 'float16', out: { cos: new Uint16Array(7), sin: new Uint16Array(8) } }), RangeError, 'options.out.cos', '8');
      assertThrowsNaming(() => rope.cosSin([0, 1], { dtype: 'float16', out: { cos: new Float32Array(8), sin: new Uint16Array(8) } }), TypeError, 'options.out.cos', 'float16');
      assertThrowsNaming(() => rope.cosSin([0, 1], { out: { cos: pe.tensor(8, { dtype: 'float16' }), sin: pe.tensor(8) } }), TypeError, 'options.out.sin', 'float16');
      assertThrowsNaming(() => rope.cosSin([0, 1], { out: { cos: new Uint16Array(8), sin: new Uint16Array(8) } }), TypeError, 'options.out.cos', 'Float32Array');
      const shared = new Uint16Array(12);
      assertThrowsNaming(() => rope.cosSin([0, 1], { dtype: 'float16', out: { cos: shared.subarray(0, 8), sin: shared.subarray(4, 12) } }), RangeError, 'overlap');
      assertThrowsNaming(() => rope.cosSin([0, -1], { dtype: 'bfloat16' }), RangeError, 'positions[1]');
      assertThrowsNaming(() => rope.cosSin([0], { dtype: 'bfloat16', dtpye: 1 }), TypeError, 'options.dtpye', 'dtype');
    } finally {
      rope.free();
    }
  });
}

test('16-bit rerotate and cosSin: SIMD and scalar builds give the same bits', async () => {
  let compared = 0;
  for (const [key, simdOut] of outputs) {
    if (!key.startsWith('simd|')) continue;
    const dtype = key.split('|')[1];
    assertHalfEqual(dtype, simdOut, outputs.get(`scalar|${key.slice(5)}`), key);
    compared++;
  }
  assert.ok(compared > CASES.length * 20, `compared ${compared} outputs`);
  // special inputs: Inf, NaN, subnormals, the largest finite values, through both builds
  const [simd, scalar] = [await loadBuild(true), await loadBuild(false)];
  for (const dtype of DT) {
    const specials = dtype === 'float16' ? [0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x0400, 0x8000] : [0x7f80, 0xff80, 0x7fc0, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x0080, 0x8000];
    const x = Uint16Array.from({ length: 6 * 10 }, (_, i) => specials[(i * 7) % specials.length]);
    const outs = [simd, scalar].map((pe) => {
      const rope = pe.rope({ headDim: 10, pairing: 'interleaved' });
      try {
        return rope.rerotate(Uint16Array.from(x), 77777, { dtype });
      } finally {
        rope.free();
      }
    });
    assertHalfEqual(dtype, outs[0], outs[1], `${dtype} specials`);
  }
});
