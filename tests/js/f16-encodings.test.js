// f16-encodings.test.js — sinusoidal and learned absolute encodings with 16-bit storage (options.dtype
// 'float16' | 'bfloat16'), on both builds (issue 11).
//
// Accuracy: every result within 1 ulp of the storage type of the float64 sum of the same 16-bit x (decoded by
// f16-ref.js) and the encoding in double: the golden float64 tables (sinusoidal.json, learned_opt.json), and
// the posenc.h formula in double for random shapes with positions up to 2^31 - 1. The float32 addition may
// add its own error, 2^-22 of the addends' magnitude (plus, for a sinusoidal angle past 2^20, the double
// angle's own rounding, 4 p 2^-53), which only shows where a sum cancels: allowed, and counted. A float32 x
// plus a 16-bit table is checked exactly (float32 addition rounds once: Math.fround of the exact sum).
// SIMD and scalar builds give the same bits.
import test from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, makeRng, randnF32, assertThrowsNaming, assertBitEqual } from './helpers.js';
import { encode, decode, assertWithinUlp, assertHalfEqual, newStats } from './f16-ref.js';

const DT = ['float16', 'bfloat16'];
const F32_ERR = 2 ** -22;
const sinFile = loadGolden('sinusoidal.json');
const optFile = loadGolden('learned_opt.json');
const VARIANT_OPTIONS = { interleaved: { pairing: 'interleaved' }, half_split: { pairing: 'half' }, tensor2tensor: { variant: 'tensor2tensor' } };
const outputs = new Map(); // `${build}|${dtype}|key` -> Uint16Array

/** posenc.h's sinusoidal formula in double, row of position p (base 10000). */
function sinRow(p, d, { pairing = 'interleaved', variant = 'paper' }) {
  const out = new Float64Array(d);
  if (variant === 'tensor2tensor') {
    const n = Math.floor(d / 2);
    for (let j = 0; j < 2 * n; j++) {
      const i = j < n ? j : j - n;
      const a = p * Math.exp((-i * Math.log(10000)) / (n - 1));
      out[j] = j < n ? Math.sin(a) : Math.cos(a);
    }
    return out;
  }
  const angle = (i) => p / Math.pow(10000, (2 * i) / d);
  const h = Math.ceil(d / 2);
  for (let j = 0; j < d; j++) {
    if (pairing === 'interleaved') out[j] = j % 2 === 0 ? Math.sin(angle(j >> 1)) : Math.cos(angle(j >> 1));
    else out[j] = j < h ? Math.sin(angle(j)) : Math.cos(angle(j - h));
  }
  return out;
}

function halfOf(dtype, rng, n, scale) {
  return Uint16Array.from(randnF32(rng, n), (v) => encode(dtype, v * scale));
}

for (const build of BUILDS) {
  test(`sinusoidal in 16-bit storage: golden tables, add onto 16-bit x [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(51);
    const stats = { float16: newStats(), bfloat16: newStats() };
    for (const c of sinFile.cases) {
      const opts = { ...VARIANT_OPTIONS[c.variant] };
      if (c.padding_idx !== undefined && c.padding_idx !== null) opts.paddingIdx = c.padding_idx;
      const [N, D] = c.expected.shape;
      const pe64 = c.expected.pe_f64;
      for (const dtype of DT) {
        const table = pe.sinusoidal(N, D, { ...opts, dtype });
        assert.ok(table instanceof Uint16Array);
        assertWithinUlp(stats[dtype], dtype, table, pe64, null, `${c.id} table`);
        const bits = halfOf(dtype, rng, 2 * N * D, 1);
        const xin = Float64Array.from(bits, (h) => decode(dtype, h));
        const want = xin.map((v, i) => v + pe64[i % (N * D)]);
        const x = pe.sinusoidal.add(Uint16Array.from(bits), { shape: [2, N, D], ...opts, dtype });
        assertWithinUlp(stats[dtype], dtype, x, want, (i) => F32_ERR * (Math.abs(xin[i]) + 1), `${c.id} add`);
        outputs.set(`${build.name}|${dtype}|sin ${c.id} table`, table);
        outputs.set(`${build.name}|${dtype}|sin ${c.id} add`, x);
      }
    }
    for (const dt of DT) t.diagnostic(`${dt}: ${stats[dt].n} results, worst ${stats[dt].worst.toFixed(4)} ulps, ${stats[dt].over} over 1 ulp (float32 slack)`);
  });

  test(`sinusoidal.add in 16-bit storage: random shapes, positions up to 2^31 - 1, tensors [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(53);
    const int = (lo, hi) => lo + Math.floor(rng.uniform() * (hi - lo + 1));
    const stats = newStats();
    for (let k = 0; k < 24; k++) {
      const dtype = DT[k % 2];
      const opts = [{ pairing: 'interleaved' }, { pairing: 'half' }, { variant: 'tensor2tensor' }][k % 3];
      const [B, S] = [int(1, 3), int(1, 6)];
      const D = (opts.variant ? 4 : 1) + int(0, 300); // odd widths, chunk tails past 128 pairs
      const perBatch = rng.uniform() < 0.5;
      const positions = Int32Array.from({ length: perBatch ? B * S : S }, () => (rng.uniform() < 0.2 ? 2147483647 - int(0, 3) : int(0, 2147483647)));
      const bits = halfOf(dtype, rng, B * S * D, rng.uniform() < 0.5 ? 1 : 300);
      const xin = Float64Array.from(bits, (h) => decode(dtype, h));
      const want = new Float64Array(B * S * D);
      for (let r = 0; r < B * S; r++) {
        const p = positions[perBatch ? r : r % S];
        const row = sinRow(p, D, opts);
        for (let j = 0; j < D; j++) want[r * D + j] = xin[r * D + j] + row[j];
      }
      const slack = (i) => F32_ERR * (Math.abs(xin[i]) + 1) + 4 * 2147483647 * 2 ** -53;
      const viaTensor = k % 4 === 0;
      let got;
      if (viaTensor) {
        const tx = pe.tensor(bits, { dtype });
        assert.equal(pe.sinusoidal.add(tx, { shape: [B, S, D], positions, ...opts }), tx, 'a tensor is returned, its dtype the default');
        got = Uint16Array.from(tx.array);
        tx.free();
      } else {
        got = pe.sinusoidal.add(Uint16Array.from(bits), { shape: [B, S, D], positions, ...opts, dtype });
      }
      assertWithinUlp(stats, dtype, got, want, slack, `case ${k} (${JSON.stringify(opts)}, D ${D})`);
      outputs.set(`${build.name}|${dtype}|sin random ${k}`, got);
    }
    t.diagnostic(`${stats.n} results, worst ${stats.worst.toFixed(4)} ulps, ${stats.over} over 1 ulp (float32 slack)`);
  });

  test(`learned in 16-bit storage: golden OPT table, 16-bit x and/or table, lookup [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(55);
    const stats = newStats();
    for (const c of optFile.cases) {
      const [rows, D] = c.table_shape;
      const maxLen = c.num_embeddings;
      const table32 = Float32Array.from(c.table);
      const positions = Int32Array.from({ length: 9 }, (_, i) => [-c.offset, maxLen - 1, 0][i % 3] + (i % 3 === 2 ? i : 0));
      for (const dtype of DT) {
        const tbits = Uint16Array.from(table32, (v) => encode(dtype, v));
        const tables = [
          ['float32 table', pe.learned(table32, { maxLen, dModel: D, offset: c.offset }), Float64Array.from(table32)],
          [`${dtype} table`, pe.learned(tbits, { dModel: D, offset: c.offset, dtype }), Float64Array.from(tbits, (h) => decode(dtype, h))],
        ];
        for (const [what, L, t64] of tables) {
          try {
            assert.equal(L.dtype, what.split(' ')[0]);
            const bits = halfOf(dtype, rng, 9 * D, 1);
            const xin = Float64Array.from(bits, (h) => decode(dtype, h));
            const want = xin.map((v, i) => v + t64[(positions[Math.floor(i / D)] + c.offset) * D + (i % D)]);
            const x = L.add(Uint16Array.from(bits), { shape: [1, 9, D], positions, dtype });
            assertWithinUlp(stats, dtype, x, want, (i) => F32_ERR * (Math.abs(xin[i]) + Math.abs(want[i] - xin[i])), `${c.id} ${what}`);
            outputs.set(`${build.name}|${dtype}|learned ${c.id} ${what}`, x);
            // a float32 x plus the table: one float32 rounding of the exact sum
            const x32 = randnF32(rng, 9 * D);
            const exact = Float32Array.from(x32, (v, i) => Math.fround(v + t64[(positions[Math.floor(i / D)] + c.offset) * D + (i % D)]));
            assertBitEqual(L.add(Float32Array.from(x32), { shape: [1, 9, D], positions }), exact, `${c.id} ${what}: float32 x`);
            // lookup: the rows as float32 (a 16-bit table's widened exactly)
            const rowsWant = Float32Array.from({ length: 9 * D }, (_, i) => t64[(positions[Math.floor(i / D)] + c.offset) * D + (i % D)]);
            assertBitEqual(L.lookup(positions), rowsWant, `${c.id} ${what}: lookup`);
          } finally {
            L.free();
          }
        }
        assert.equal(rows, maxLen + c.offset);
      }
    }
    // a 16-bit tensor table is used in place; -0 and subnormal rows survive lookup exactly
    const tt = pe.tensor(Uint16Array.of(0x8000, 0x0001, 0x3c00, 0xbc00), { dtype: 'float16' });
    const L = pe.learned(tt, { dModel: 2 });
    try {
      assert.equal(L.dtype, 'float16');
      assertBitEqual(L.lookup([0, 1]), Float32Array.of(-0, 2 ** -24, 1, -1), 'lookup of a float16 tensor table');
    } finally {
      L.free();
      tt.free();
    }
    t.diagnostic(`${stats.n} results, worst ${stats.worst.toFixed(4)} ulps, ${stats.over} over 1 ulp (float32 slack)`);
  });

  test(`sinusoidal / learned 16-bit errors name the argument and the bound [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const shape = [1, 2, 4];
    assertThrowsNaming(() => pe.sinusoidal.add(new Float32Array(8), { shape, dtype: 'float16' }), TypeError, 'x', 'float16', 'Uint16Array');
    assertThrowsNaming(() => pe.sinusoidal.add(new Uint16Array(8), { shape }), TypeError, 'x', 'Float32Array');
    assertThrowsNaming(() => pe.sinusoidal.add(new Uint16Array(7), { shape, dtype: 'bfloat16' }), RangeError, 'x.length', '8');
    assertThrowsNaming(() => pe.sinusoidal.add(pe.tensor(8, { dtype: 'bfloat16' }), { shape, dtype: 'float16' }), TypeError, 'x', 'bfloat16', 'float16');
    assertThrowsNaming(() => pe.sinusoidal(2, 4, { dtype: 'float16', out: new Float32Array(8) }), TypeError, 'options.out', 'float16');
    assertThrowsNaming(() => pe.sinusoidal(2, 4, { dtype: 'float16', out: new Uint16Array(9) }), RangeError, 'options.out.length', '8');
    assertThrowsNaming(() => pe.sinusoidal(2, 4, { dtype: 'fp16' }), RangeError, 'options.dtype');
    const L = pe.learned(new Float32Array(16), { dModel: 4 });
    try {
      assertThrowsNaming(() => L.add(new Float32Array(8), { shape, dtype: 'bfloat16' }), TypeError, 'x', 'bfloat16');
      assertThrowsNaming(() => L.add(new Uint16Array(8), { shape }), TypeError, 'x', 'Float32Array');
      assertThrowsNaming(() => L.add(new Uint16Array(12), { shape, dtype: 'float16' }), RangeError, 'x.length', '8');
      assertThrowsNaming(() => L.add(new Uint16Array(8), { shape, dtype: 'float16', positions: [0, 4] }), RangeError, 'options.positions[1]', 'maxLen');
      assertThrowsNaming(() => L.add(new Uint16Array(8), { shape, dtype: 'float16', dtpye: 1 }), TypeError, 'options.dtpye', 'dtype');
    } finally {
      L.free();
    }
    assertThrowsNaming(() => pe.learned(new Uint16Array(16), { dModel: 4 }), TypeError, 'table', 'Float32Array');
    assertThrowsNaming(() => pe.learned(new Float32Array(16), { dModel: 4, dtype: 'float16' }), TypeError, 'table', 'float16');
    assertThrowsNaming(() => pe.learned(new Uint16Array(15), { dModel: 4, dtype: 'float16' }), RangeError, 'table.length', 'dModel');
    assertThrowsNaming(() => pe.learned(pe.tensor(16, { dtype: 'float16' }), { dModel: 4, dtype: 'bfloat16' }), TypeError, 'table', 'float16', 'bfloat16');
  });
}

test('16-bit sinusoidal and learned: SIMD and scalar builds give the same bits', async () => {
  let compared = 0;
  for (const [key, simdOut] of outputs) {
    if (!key.startsWith('simd|')) continue;
    assertHalfEqual(key.split('|')[1], simdOut, outputs.get(`scalar|${key.slice(5)}`), key);
    compared++;
  }
  assert.ok(compared >= sinFile.cases.length * 4 + 24, `compared ${compared} outputs`);
  // special values of x (Inf, NaN, subnormals, near overflow) onto both encodings
  const [simd, scalar] = [await loadBuild(true), await loadBuild(false)];
  for (const dtype of DT) {
    const specials = dtype === 'float16' ? [0x7c00, 0xfc00, 0x7e00, 0x0001, 0x83ff, 0x7bff, 0xfbff, 0x8000] : [0x7f80, 0xff80, 0x7fc0, 0x0001, 0x807f, 0x7f7f, 0xff7f, 0x8000];
    const x = Uint16Array.from({ length: 3 * 133 }, (_, i) => specials[(i * 5) % specials.length]);
    const outs = [simd, scalar].map((pe) => {
      const a = pe.sinusoidal.add(Uint16Array.from(x), { shape: [1, 3, 133], dtype, positions: [0, 65519, 2147483647] });
      const L = pe.learned(Float32Array.from({ length: 4 * 133 }, (_, i) => (i % 3) - 1 + i * 1e-3), { dModel: 133 });
      try {
        return [a, L.add(Uint16Array.from(x), { shape: [1, 3, 133], dtype, positions: [3, 0, 1] })];
      } finally {
        L.free();
      }
    });
    assertHalfEqual(dtype, outs[0][0], outs[1][0], `${dtype} sinusoidal specials`);
    assertHalfEqual(dtype, outs[0][1], outs[1][1], `${dtype} learned specials`);
  }
});
