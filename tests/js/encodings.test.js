// Absolute encodings through the JS API, on the SIMD and the scalar build: pe.sinusoidal (+ .add) and pe.learned.
// - Golden: every case of tests/golden/sinusoidal.json (interleaved, half_split, tensor2tensor, with
//   padding_idx when a case has one) and learned_opt.json (positions derived from the attention mask and the
//   past length exactly as OPT does).
// - The worked example PE[1], PE[2] for dModel 4, against Math.sin / Math.cos of the paper's formula and,
//   loosely, against the published 3-4 digit numbers.
// - A formula sweep (odd dModel, bases, offsets up to 2^31 - 1) against a double reference written here.
// - add() against table rows, per-sequence positions, tensors; learned bounds; SIMD == scalar.
//
// Tolerances, and why:
// - sinusoidal vs *_f64 and vs the double reference: the C core forms the angle and takes sin/cos in double,
//   then rounds once to float32, so the error is the final rounding, <= 2^-25 ~ 3e-8 for |PE| <= 1, plus the
//   angle's own double rounding, which grows with the position p: a few ulps of p, ~4 p 2^-53 rad. Tolerance
//   6e-8 + 4 p 2^-53 (6e-8 is 2 x the rounding bound, so pow() differing from numpy's in the last bit of
//   the frequency is covered).
// - learned lookup / add: a row copy and one float32 addition; expected bit for bit (tolerance 0).
// - sinusoidal.add: the same float32 row as the table, added once: bit for bit equal to
//   fround(x + table[row]).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, makeRng, randnF32, maxAbsDiff, Worst, assertThrowsNaming, assertBitEqual } from './helpers.js';

const worst = new Worst();
const sinFile = loadGolden('sinusoidal.json');
const optFile = loadGolden('learned_opt.json');

const F32_HALF_ULP_1 = 2 ** -25 + 1e-15; // half a float32 ulp at 1, plus room for libm vs Math.sin in the last double bit
const TOL_SIN = 6e-8;
const tolAt = (p) => TOL_SIN + 4 * p * 2 ** -53;

/** The documented formula in double (posenc.h / the HF references), for one position. */
function refRow(p, d, { base = 10000, pairing = 'interleaved', variant = 'paper', paddingIdx = null } = {}) {
  const out = new Float64Array(d);
  if (paddingIdx !== null && p === paddingIdx) return out;
  if (variant === 'tensor2tensor') {
    const n = Math.floor(d / 2);
    for (let j = 0; j < d; j++) {
      if (j < n) out[j] = Math.sin(p * Math.exp((-j * Math.log(base)) / (n - 1)));
      else if (j < 2 * n) out[j] = Math.cos(p * Math.exp((-(j - n) * Math.log(base)) / (n - 1)));
      else out[j] = 0;
    }
    return out;
  }
  const angle = (i) => p / Math.pow(base, (2 * i) / d);
  if (pairing === 'interleaved') {
    for (let j = 0; j < d; j++) out[j] = j % 2 === 0 ? Math.sin(angle(j >> 1)) : Math.cos(angle(j >> 1));
  } else {
    const h = Math.ceil(d / 2);
    for (let j = 0; j < d; j++) out[j] = j < h ? Math.sin(angle(j)) : Math.cos(angle(j - h));
  }
  return out;
}

/** OPT: position_ids = (cumsum(mask) * mask - 1)[:, past:]; the lookup adds the offset (2). */
function optPositions(mask, past) {
  return mask.map((row) => {
    let c = 0;
    return row.map((m) => ((c += m), c * m - 1)).slice(past);
  });
}

const VARIANT_OPTIONS = {
  interleaved: { pairing: 'interleaved' },
  half_split: { pairing: 'half' },
  tensor2tensor: { variant: 'tensor2tensor' },
};

for (const build of BUILDS) {
  test(`golden sinusoidal.json [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(sinFile.cases.length > 0);
    for (const c of sinFile.cases) {
      await t.test(c.id, () => {
        const opts = { ...VARIANT_OPTIONS[c.variant] };
        assert.ok(opts, `unknown variant ${c.variant}`);
        if (c.padding_idx !== undefined && c.padding_idx !== null) opts.paddingIdx = c.padding_idx;
        const [N, D] = c.expected.shape;
        assert.equal(D, c.d_model);
        assert.equal(c.positions, `0..${N - 1}`);
        const table = pe.sinusoidal(N, D, opts);
        assert.ok(table instanceof Float32Array);
        assert.equal(table.length, N * D);
        const e64 = maxAbsDiff(table, c.expected.pe_f64);
        const e32 = maxAbsDiff(table, c.expected.pe_f32);
        const tol = tolAt(N - 1);
        // pe_f32 is what the reference computes: XLM and Marian round the same double formula once (so at most
        // one float32 ulp from ours), FSMT forms the angle in float32 (error ~ p 2^-24 rad, README), hence the
        // extra 4 (N - 1) 2^-24.
        const tol32 = 2 * tol + 4 * (N - 1) * 2 ** -24;
        worst.record(`sinusoidal golden ${c.variant} vs f64 (abs)`, build.name, e64.err, tol, c.id);
        worst.record(`sinusoidal golden ${c.variant} vs f32 (abs)`, build.name, e32.err, tol32, c.id);
        assert.ok(e64.err <= tol, `vs pe_f64: ${e64.err} at ${e64.at}`);
        assert.ok(e32.err <= tol32, `vs pe_f32: ${e32.err} at ${e32.at}`);
        if (opts.paddingIdx !== undefined && opts.paddingIdx < N) {
          assert.ok(table.subarray(opts.paddingIdx * D, (opts.paddingIdx + 1) * D).every((x) => x === 0), 'padding row is zero');
        }
        // The add form at the same positions gives the same rows (onto zeros: exactly the table).
        const x = pe.sinusoidal.add(new Float32Array(N * D), { shape: [1, N, D], ...opts });
        assert.deepEqual(x, table);
      });
    }
  });

  test(`worked example PE[1], PE[2] for dModel 4 [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const table = pe.sinusoidal(3, 4); // interleaved, base 10000: angles p and p / 100
    const pe1 = Array.from(table.subarray(4, 8));
    const pe2 = Array.from(table.subarray(8, 12));
    const formula = (p) => [Math.sin(p), Math.cos(p), Math.sin(p / 100), Math.cos(p / 100)];
    // exact: the paper's formula in double, one float32 rounding
    for (const [p, row] of [[1, pe1], [2, pe2]]) {
      const f = formula(p);
      for (let i = 0; i < 4; i++) {
        const err = Math.abs(row[i] - f[i]);
        worst.record('worked example vs formula (abs)', build.name, err, F32_HALF_ULP_1, `PE[${p}][${i}]`);
        assert.ok(err <= F32_HALF_ULP_1, `PE[${p}][${i}] = ${row[i]}, formula ${f[i]}`);
      }
    }
    // loose: the published digits, each to half a unit of its last digit
    const published = [
      [1, [0.841, 0.54, 0.01, 1.0], [5e-4, 5e-4, 5e-4, 5e-4]],
      [2, [0.909, -0.416, 0.02, 0.9998], [5e-4, 5e-4, 5e-4, 5e-5]],
    ];
    for (const [p, digits, tols] of published) {
      const row = p === 1 ? pe1 : pe2;
      for (let i = 0; i < 4; i++) assert.ok(Math.abs(row[i] - digits[i]) <= tols[i], `PE[${p}][${i}] = ${row[i]} vs published ${digits[i]}`);
    }
    assert.deepEqual(Array.from(table.subarray(0, 4)), [0, 1, 0, 1], 'PE[0] = [sin 0, cos 0, sin 0, cos 0]');
    t.diagnostic(`PE[1] = [${pe1.map((x) => x.toFixed(4)).join(', ')}], PE[2] = [${pe2.map((x) => x.toFixed(4)).join(', ')}]`);
  });

  test(`sinusoidal formula sweep: odd dModel, bases, offsets to 2^31 - 1 [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(31);
    const dims = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 300, 513, 1024];
    const offsets = [0, 1, 1000, 65536, 1000000, 2 ** 24 + 3, 2 ** 31 - 8];
    let cases = 0;
    for (const d of dims) {
      for (const [pairing, variant] of [['interleaved', 'paper'], ['half', 'paper'], ['half', 'tensor2tensor']]) {
        if (variant === 'tensor2tensor' && d < 4) continue;
        const offset = offsets[rng.int(0, offsets.length - 1)];
        const base = rng.pick([10000, 500000, 2, 10.5]);
        const n = 8;
        const opts = { pairing, variant, base };
        const table = pe.sinusoidal(n, d, { ...opts, offset });
        let err = 0;
        for (let r = 0; r < n; r++) {
          const ref = refRow(offset + r, d, opts);
          for (let j = 0; j < d; j++) err = Math.max(err, Math.abs(table[r * d + j] - ref[j]));
        }
        const tol = tolAt(offset + n - 1);
        const id = `d${d} ${pairing} ${variant} base ${base} offset ${offset}`;
        worst.record('sinusoidal formula sweep (abs)', build.name, err, tol, id);
        assert.ok(err <= tol, `${id}: ${err}`);
        cases++;
      }
    }
    assert.ok(cases > 50);
  });

  test(`sinusoidal.add: positions shared or per sequence, offset, tensors, bit for bit [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(32);
    for (let c = 0; c < 40; c++) {
      const B = rng.int(1, 3);
      const S = rng.int(1, 9);
      const D = rng.pick([1, 3, 4, 6, 17, 64, 258]);
      const opts = rng.pick([{}, { pairing: 'half' }, { variant: 'tensor2tensor', paddingIdx: 1 }, { base: 500 }]);
      if (opts.variant && D < 4) continue;
      const form = rng.int(0, 2);
      const x = randnF32(rng, B * S * D);
      let positions;
      let add;
      if (form === 0) {
        const offset = rng.int(0, 5000);
        positions = Array.from({ length: B * S }, (_, k) => offset + (k % S));
        add = { offset };
      } else if (form === 1) {
        const shared = Array.from({ length: S }, () => rng.int(0, 100000));
        positions = Array.from({ length: B * S }, (_, k) => shared[k % S]);
        add = { positions: Int32Array.from(shared) };
      } else {
        positions = Array.from({ length: B * S }, () => rng.int(0, 2 ** 31 - 1));
        add = { positions };
      }
      const expected = new Float32Array(B * S * D);
      for (let k = 0; k < B * S; k++) {
        const row = pe.sinusoidal(1, D, { ...opts, offset: positions[k] });
        for (let j = 0; j < D; j++) expected[k * D + j] = Math.fround(x[k * D + j] + row[j]);
      }
      const y = Float32Array.from(x);
      assert.equal(pe.sinusoidal.add(y, { shape: [B, S, D], ...opts, ...add }), y, 'returns x');
      assert.deepEqual(y, expected);
      const tx = pe.tensor(x);
      assert.equal(pe.sinusoidal.add(tx, { shape: [B, S, D], ...opts, ...add }), tx, 'a tensor is worked on in place');
      assert.deepEqual(tx.array, expected);
      tx.free();
    }
  });

  test(`golden learned_opt.json: positions from the attention mask as OPT [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(optFile.cases.length > 0);
    for (const c of optFile.cases) {
      await t.test(c.id, () => {
        const [rows, D] = c.table_shape;
        assert.equal(rows, c.num_embeddings + c.offset);
        const table = Float32Array.from(c.table);
        const learned = pe.learned(table, { maxLen: c.num_embeddings, dModel: D, offset: c.offset });
        try {
          assert.equal(learned.maxLen, c.num_embeddings);
          const pos = optPositions(c.attention_mask, c.past_key_values_length);
          assert.deepEqual(pos.map((r) => r.map((p) => p + c.offset)), c.expected.rows, 'rows as OPT reads them');
          const [B, S] = [pos.length, pos[0].length];
          assert.deepEqual(c.expected.shape, [B, S, D]);
          const flat = pos.flat();
          const expected = Float32Array.from(c.expected.embeddings_f32);
          const looked = learned.lookup(flat);
          assert.deepEqual(looked, expected, 'lookup, bit for bit');
          assert.deepEqual(learned.lookup(Int32Array.from(flat)), expected, 'lookup with an Int32Array');
          const added = learned.add(new Float32Array(B * S * D), { shape: [B, S, D], positions: flat });
          assert.deepEqual(added, expected, 'add onto zeros, per-sequence positions');
          worst.record('learned OPT golden (abs)', build.name, maxAbsDiff(looked, expected).err, 1e-30, c.id);
        } finally {
          learned.free();
        }
      });
    }
  });

  test(`learned: bounds, defaults, add, tensors, free [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(33);
    const maxLen = 40;
    const D = 7;
    const offset = 2;
    const data = randnF32(rng, (maxLen + offset) * D);
    const L = pe.learned(data, { dModel: D, offset }); // maxLen derived from the table
    assert.equal(L.maxLen, maxLen);
    assert.equal(L.offset, offset);
    assert.equal(L.dModel, D);
    const row = (p) => data.subarray((p + offset) * D, (p + offset + 1) * D);
    // lookup of the extremes: -offset .. maxLen - 1 are exactly the table's rows
    const all = Array.from({ length: maxLen + offset }, (_, i) => i - offset);
    assert.deepEqual(L.lookup(all), data);
    assert.equal(L.lookup([]).length, 0);
    // position maxLen: RangeError naming maxLen, nothing read; below -offset likewise
    assertThrowsNaming(() => L.lookup([0, maxLen]), RangeError, 'positions[1]', `maxLen = ${maxLen}`, `got ${maxLen}`);
    assertThrowsNaming(() => L.lookup(Int32Array.from([maxLen + 5])), RangeError, 'positions[0]', 'maxLen', `got ${maxLen + 5}`);
    assertThrowsNaming(() => L.lookup([-offset - 1]), RangeError, 'positions[0]', `got ${-offset - 1}`);
    assertThrowsNaming(() => L.lookup(Int32Array.from([1, -3])), RangeError, 'positions[1]', 'got -3');
    // add: default positions 0..seq-1, shared, per sequence; a failed add leaves x untouched
    const B = 3;
    const S = 5;
    const x = randnF32(rng, B * S * D);
    const expect = (posOf) => {
      const e = new Float32Array(B * S * D);
      for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) {
        const r = row(posOf(b, s));
        for (let j = 0; j < D; j++) e[(b * S + s) * D + j] = Math.fround(x[(b * S + s) * D + j] + r[j]);
      }
      return e;
    };
    assert.deepEqual(L.add(Float32Array.from(x), { shape: [B, S, D] }), expect((b, s) => s));
    const shared = [3, -1, 39, 0, 7];
    assert.deepEqual(L.add(Float32Array.from(x), { shape: [B, S, D], positions: shared }), expect((b, s) => shared[s]));
    const per = Array.from({ length: B * S }, () => rng.int(-offset, maxLen - 1));
    assert.deepEqual(L.add(Float32Array.from(x), { shape: [B, S, D], positions: Int32Array.from(per) }), expect((b, s) => per[b * S + s]));
    const y = Float32Array.from(x);
    const bad = per.slice();
    bad[B * S - 1] = maxLen;
    assertThrowsNaming(() => L.add(y, { shape: [B, S, D], positions: Int32Array.from(bad) }), RangeError, `options.positions[${B * S - 1}]`, 'maxLen');
    assert.deepEqual(y, x, 'x untouched after the error');
    assertThrowsNaming(() => L.add(y, { shape: [1, maxLen + 1, D] }), RangeError, 'options.shape[1] (seq)', `maxLen (${maxLen})`);
    assertThrowsNaming(() => L.add(y, { shape: [B, S, D + 1] }), RangeError, 'options.shape[2] (dModel)', `${D}`);
    // the table was copied once: changing the source afterwards changes nothing
    const before = L.lookup([0]);
    data[offset * D] += 1;
    assert.deepEqual(L.lookup([0]), before);
    data[offset * D] -= 1;
    // a tensor table is used in place (zero-copy): changes show through
    const tt = pe.tensor(data);
    const LT = pe.learned(tt, { dModel: D, maxLen, offset });
    assert.deepEqual(LT.lookup([5]), row(5));
    tt.array[(5 + offset) * D] = 42;
    assert.equal(LT.lookup([5])[0], 42);
    LT.free();
    assert.equal(tt.freed, false, 'freeing the learned object leaves the tensor alone');
    tt.free();
    // a learned over a freed tensor refuses to run
    const tt2 = pe.tensor(data);
    const LT2 = pe.learned(tt2, { dModel: D, offset });
    tt2.free();
    assertThrowsNaming(() => LT2.lookup([0]), TypeError, 'table', 'freed');
    // free
    L.free();
    L.free();
    assert.equal(L.freed, true);
    assertThrowsNaming(() => L.lookup([0]), TypeError, 'learned.lookup', 'freed');
  });

}

test('the encodings agree bit for bit between the SIMD and scalar builds', async (t) => {
  const simd = await loadBuild(true);
  const scalar = await loadBuild(false);
  const rng = makeRng(34);
  let n = 0;
  for (const d of [1, 3, 4, 5, 8, 63, 64, 130, 1000]) {
    for (const opts of [{}, { pairing: 'half' }, ...(d >= 4 ? [{ variant: 'tensor2tensor' }] : [])]) {
      const offset = rng.int(0, 2 ** 30);
      const what = `d ${d} ${JSON.stringify(opts)}`;
      assertBitEqual(simd.sinusoidal(17, d, { ...opts, offset }), scalar.sinusoidal(17, d, { ...opts, offset }), `${what}: table`);
      const x = randnF32(rng, 2 * 5 * d);
      const positions = Array.from({ length: 10 }, () => rng.int(0, 1e6));
      assertBitEqual(
        simd.sinusoidal.add(Float32Array.from(x), { shape: [2, 5, d], positions, ...opts }),
        scalar.sinusoidal.add(Float32Array.from(x), { shape: [2, 5, d], positions, ...opts }),
        `${what}: add`,
      );
      const table = randnF32(rng, 20 * d);
      const [a, b] = [simd.learned(table, { dModel: d }), scalar.learned(table, { dModel: d })];
      const lp = Array.from({ length: 10 }, () => rng.int(0, 19));
      assertBitEqual(a.add(Float32Array.from(x), { shape: [2, 5, d], positions: lp }), b.add(Float32Array.from(x), { shape: [2, 5, d], positions: lp }), `${what}: learned add`);
      a.free();
      b.free();
      n++;
    }
  }
  worst.record('SIMD vs scalar sinusoidal / learned (abs)', 'both', 0, 1e-30, `${n} configurations, bit for bit`);
  t.diagnostic(`${n} configurations identical`);
});

test('worst errors (encodings)', (t) => {
  worst.report(t);
});

test('encodings bad input throws TypeError / RangeError naming the argument; the instance keeps working', async (t) => {
  for (const build of BUILDS) {
    const pe = await loadBuild(build.simd);
    const table = Float32Array.from({ length: 18 * 4 }, (_, i) => i / 7);
    const L = pe.learned(table, { maxLen: 16, dModel: 4, offset: 2 });
    const x = () => new Float32Array(2 * 3 * 4);
    const baseline = () => [
      pe.sinusoidal(5, 6, { pairing: 'half', offset: 3 }),
      pe.sinusoidal.add(Float32Array.from({ length: 24 }, (_, i) => i), { shape: [2, 3, 4], positions: [0, 9, 99] }),
      L.lookup([-1, 0, 15]),
      L.add(Float32Array.from({ length: 24 }, (_, i) => -i), { shape: [2, 3, 4] }),
    ];
    const before = baseline();
    const cases = [
      // sinusoidal table
      ['seqLen 0', () => pe.sinusoidal(0, 4), RangeError, 'seqLen', 'got 0'],
      ['seqLen negative', () => pe.sinusoidal(-1, 4), RangeError, 'seqLen', 'got -1'],
      ['dModel fractional', () => pe.sinusoidal(4, 4.5), RangeError, 'dModel', 'got 4.5'],
      ['dModel a string', () => pe.sinusoidal(4, '4'), TypeError, 'dModel'],
      ['base 0', () => pe.sinusoidal(4, 4, { base: 0 }), RangeError, 'options.base', '> 0'],
      ['base NaN', () => pe.sinusoidal(4, 4, { base: NaN }), RangeError, 'options.base'],
      ['offset negative', () => pe.sinusoidal(4, 4, { offset: -1 }), RangeError, 'options.offset', 'got -1'],
      ['offset past int32 with seqLen', () => pe.sinusoidal(4, 4, { offset: 2 ** 31 - 2 }), RangeError, 'options.offset + seqLen - 1', '2147483647'],
      ['pairing unknown', () => pe.sinusoidal(4, 4, { pairing: 'gptj' }), RangeError, 'options.pairing', "'interleaved'", "'half'"],
      ['variant unknown', () => pe.sinusoidal(4, 4, { variant: 'fairseq' }), RangeError, 'options.variant', "'tensor2tensor'"],
      ['tensor2tensor interleaved', () => pe.sinusoidal(4, 8, { variant: 'tensor2tensor', pairing: 'interleaved' }), RangeError, 'options.pairing', "'half'"],
      ['tensor2tensor dModel 3', () => pe.sinusoidal(4, 3, { variant: 'tensor2tensor' }), RangeError, 'dModel', '>= 4', 'got 3'],
      ['paddingIdx negative', () => pe.sinusoidal(4, 4, { paddingIdx: -1 }), RangeError, 'options.paddingIdx'],
      ['table too large', () => pe.sinusoidal(2 ** 20, 2 ** 11), RangeError, 'seqLen * dModel', String(2 ** 30 - 1)],
      ['options a string', () => pe.sinusoidal(4, 4, 'half'), TypeError, 'options'],
      // sinusoidal.add
      ['add shape missing', () => pe.sinusoidal.add(x(), {}), TypeError, 'options.shape'],
      ['add shape of 4 dims', () => pe.sinusoidal.add(x(), { shape: [1, 2, 3, 4] }), RangeError, 'options.shape', 'got length 4'],
      ['add x length mismatch', () => pe.sinusoidal.add(new Float32Array(23), { shape: [2, 3, 4] }), RangeError, 'x.length', '24'],
      ['add x a Float64Array', () => pe.sinusoidal.add(new Float64Array(24), { shape: [2, 3, 4] }), TypeError, 'x', 'Float32Array'],
      ['add positions negative', () => pe.sinusoidal.add(x(), { shape: [2, 3, 4], positions: [0, -1, 2] }), RangeError, 'options.positions[1]', 'got -1'],
      ['add positions negative (Int32Array, found after the C check)', () => pe.sinusoidal.add(x(), { shape: [2, 3, 4], positions: Int32Array.from([0, 1, 2, 3, 4, -5]) }), RangeError, 'options.positions[5]', 'got -5'],
      ['add positions wrong length', () => pe.sinusoidal.add(x(), { shape: [2, 3, 4], positions: [0, 1] }), RangeError, 'options.positions.length', 'seq (3)', 'batch * seq (6)'],
      ['add offset with positions', () => pe.sinusoidal.add(x(), { shape: [2, 3, 4], positions: [0, 1, 2], offset: 3 }), TypeError, 'options.offset', 'options.positions'],
      // learned
      ['learned options missing', () => pe.learned(table), TypeError, 'options', 'dModel'],
      ['learned dModel missing', () => pe.learned(table, { maxLen: 16 }), TypeError, 'options.dModel'],
      ['learned dModel 0', () => pe.learned(table, { dModel: 0 }), RangeError, 'options.dModel', 'got 0'],
      ['learned table not a multiple of dModel', () => pe.learned(table, { dModel: 5 }), RangeError, 'table.length', 'dModel (5)', 'got 72'],
      ['learned maxLen + offset != rows', () => pe.learned(table, { dModel: 4, maxLen: 16 }), RangeError, 'table.length', '(16 + 0) * 4', 'got 72'],
      ['learned offset negative', () => pe.learned(table, { dModel: 4, offset: -2 }), RangeError, 'options.offset'],
      ['learned offset eats the table', () => pe.learned(table, { dModel: 4, offset: 18 }), RangeError, 'options.offset', '18 rows'],
      ['learned table a plain array', () => pe.learned(Array.from(table), { dModel: 4 }), TypeError, 'table', 'Float32Array'],
      ['learned lookup past maxLen', () => L.lookup([3, 16]), RangeError, 'positions[1]', 'maxLen = 16', 'got 16'],
      ['learned lookup below -offset', () => L.lookup([-3]), RangeError, 'positions[0]', 'got -3'],
      ['learned lookup a number', () => L.lookup(3), TypeError, 'positions'],
      ['learned add past maxLen (per sequence)', () => L.add(x(), { shape: [2, 3, 4], positions: [0, 1, 2, 3, 4, 99] }), RangeError, 'options.positions[5]', 'maxLen = 16', 'got 99'],
      ['learned add seq past maxLen (default positions)', () => L.add(new Float32Array(17 * 4), { shape: [1, 17, 4] }), RangeError, 'options.shape[1] (seq)', 'maxLen (16)', 'got 17'],
      ['learned add dModel mismatch', () => L.add(new Float32Array(30), { shape: [2, 3, 5] }), RangeError, 'options.shape[2] (dModel)', '4', 'got 5'],
      ['learned add x a plain array', () => L.add(Array.from(x()), { shape: [2, 3, 4] }), TypeError, 'x'],
    ];
    for (const [name, fn, cls, ...needles] of cases) {
      await t.test(`${name} [${build.name}]`, () => {
        assertThrowsNaming(fn, cls, ...needles);
        assert.deepEqual(baseline(), before, 'the instance and the learned table compute the same afterwards');
      });
    }
    L.free();
  }
});
