// ALiBi through the JS API, on the SIMD and the scalar build: pe.alibiSlopes, pe.alibiBias, pe.alibiBiasFromMask.
// - Golden: every case of tests/golden/alibi.json (slopes for each n; BLOOM's mask-derived bias).
// - Slopes for any head count (1..300, 1000, 4097) against BLOOM's build_alibi_tensor written here in double.
// - Bias against slope · (j − (kLen − qLen + i)) on random shapes, causal or not, decode (qLen 1), qLen > kLen,
//   custom slopes; the mask form against ((cumsum(mask) − 1) · mask) on random masks; SIMD == scalar.
//
// Tolerances, and why:
// - slopes vs *_f64 (relative 2^-24 ~ 6e-8): computed in double and rounded once to float32, so the only error
//   is that rounding, <= 2^-24 relative. BLOOM's float32 path (*_f32) rounds the base to float32 and raises it
//   to integer powers up to n0 (the largest power of two <= n) with torch.pow in float32, so the relative
//   error of base^p grows like p · 2^-24: tolerance (n0 + 2) · 2^-24 (measured up to ~9 ulps at n = 64).
// - bias: one float32 product of the float32 slope and an exact integer distance, so bit for bit equal to
//   Math.fround(slope · d) (for |d| < 2^24, d is exact in float32); vs the f64 golden the slope's rounding
//   and the product's: relative 2 · 2^-24.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, makeRng, maxRelDiff, Worst, assertThrowsNaming, assertBitEqual } from './helpers.js';

const worst = new Worst();
const alibiFile = loadGolden('alibi.json');
const REL = 2 ** -24 * (1 + 1e-8); // one float32 rounding (relative bound 2^-24), plus room for the double reference's last bit

/** Tolerance vs BLOOM's float32 slopes: base rounded once, then raised to powers up to n0 in float32. */
function bloomF32Tol(n) {
  return (2 ** Math.floor(Math.log2(n)) + 2) * REL;
}

/** BLOOM's build_alibi_tensor slopes, in double (models/bloom/modeling_bloom.py). */
function bloomSlopes(n) {
  const cp = 2 ** Math.floor(Math.log2(n));
  const base = 2 ** -(2 ** -(Math.log2(cp) - 3));
  const out = [];
  for (let p = 1; p <= cp; p++) out.push(base ** p);
  if (cp !== n) {
    const extraBase = 2 ** -(2 ** -(Math.log2(2 * cp) - 3));
    const extra = Math.min(cp, n - cp);
    for (let k = 0; k < extra; k++) out.push(extraBase ** (1 + 2 * k));
  }
  return out;
}

/** ((cumsum(mask) - 1) * mask) per row, then slope * that, rows b * H + h. */
function refMaskBias(slopes, mask) {
  const H = slopes.length;
  const out = [];
  for (const row of mask) {
    let c = 0;
    const pos = row.map((m) => ((c += m), m ? c - 1 : 0)); // integer 0 (not -0) for padding, as the C ints
    for (let h = 0; h < H; h++) for (const p of pos) out.push(Math.fround(slopes[h] * p));
  }
  return Float32Array.from(out);
}

for (const build of BUILDS) {
  test(`golden alibi.json [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const slopeCases = alibiFile.cases.filter((c) => c.kind === 'slopes');
    const biasCases = alibiFile.cases.filter((c) => c.kind === 'bias');
    assert.ok(slopeCases.length > 0 && biasCases.length > 0);
    for (const c of slopeCases) {
      await t.test(c.id, () => {
        const s = pe.alibiSlopes(c.num_heads);
        assert.ok(s instanceof Float32Array);
        assert.equal(s.length, c.num_heads);
        const r64 = maxRelDiff(s, c.expected.slopes_f64);
        const r32 = maxRelDiff(s, c.expected.slopes_f32);
        const tol32 = bloomF32Tol(c.num_heads);
        worst.record('slopes golden vs f64 (rel)', build.name, r64.err, REL, c.id);
        worst.record('slopes golden vs f32 (rel)', build.name, r32.err, tol32, c.id);
        assert.ok(r64.err <= REL, `vs slopes_f64: ${r64.err} at head ${r64.at}`);
        assert.ok(r32.err <= tol32, `vs slopes_f32: ${r32.err} at head ${r32.at}`);
      });
    }
    for (const c of biasCases) {
      await t.test(c.id, () => {
        const H = c.num_heads;
        const mask = c.attention_mask;
        const [B, S] = [mask.length, mask[0].length];
        assert.deepEqual(c.expected.shape, [B * H, 1, S]);
        const bias = pe.alibiBiasFromMask(H, mask);
        assert.equal(bias.length, B * H * S);
        const r64 = maxRelDiff(bias, c.expected.alibi_f64);
        const r32 = maxRelDiff(bias, c.expected.alibi_f32);
        const tol32 = bloomF32Tol(H) + REL; // + the product's rounding
        // two float32 roundings: the slope's and the product's
        worst.record('mask bias golden vs f64 (rel)', build.name, r64.err, 2 * REL, c.id);
        worst.record('mask bias golden vs f32 (rel)', build.name, r32.err, tol32, c.id);
        assert.ok(r64.err <= 2 * REL, `vs alibi_f64: ${r64.err} at ${r64.at}`);
        assert.ok(r32.err <= tol32, `vs alibi_f32: ${r32.err} at ${r32.at}`);
        // the other argument forms give the same numbers
        const flat = Int32Array.from(mask.flat());
        assert.deepEqual(pe.alibiBiasFromMask(H, flat, { shape: [B, S] }), bias, 'flat Int32Array + shape');
        assert.deepEqual(pe.alibiBiasFromMask(H, mask.map((r) => r.map((m) => m === 1))), bias, 'boolean rows');
        assert.deepEqual(pe.alibiBiasFromMask(H, mask, { slopes: pe.alibiSlopes(H) }), bias, 'explicit standard slopes');
      });
    }
  });

  test(`slopes for any head count vs BLOOM's schedule in double [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const counts = [...Array.from({ length: 300 }, (_, i) => i + 1), 1000, 4097];
    for (const n of counts) {
      const s = pe.alibiSlopes(n);
      const ref = bloomSlopes(n);
      const r = maxRelDiff(s, ref);
      worst.record('slopes vs BLOOM formula, n = 1..300, 1000, 4097 (rel)', build.name, r.err, REL, `n=${n}`);
      assert.ok(r.err <= REL, `n=${n}: ${r.err} at head ${r.at}`);
      assert.ok(s.every((x) => x > 0 && x < 1), `n=${n}: every slope in (0, 1)`);
    }
    // The paper's geometric sequence for powers of two: 2^-8/n, ratio 2^-8/n.
    assert.deepEqual(Array.from(pe.alibiSlopes(8)), [1, 2, 3, 4, 5, 6, 7, 8].map((k) => 2 ** -k));
  });

  test(`alibiBias = slope · (j − (kLen − qLen + i)), causal, decode [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(41);
    const shapes = [
      [1, 1, 1],
      [4, 1, 4096], // decode: one query against a cache
      [3, 7, 7],
      [5, 6, 20],
      [2, 9, 4], // qLen > kLen: with causal the first rows are fully masked
      [12, 17, 33],
    ];
    for (let c = 0; c < 30; c++) shapes.push([rng.int(1, 16), rng.int(1, 24), rng.int(1, 40)]);
    let n = 0;
    for (const [H, Q, K] of shapes) {
      for (const causal of [false, true]) {
        const custom = rng.uniform() < 0.3 ? Float32Array.from({ length: H }, () => rng.normal()) : null;
        const slopes = custom ?? pe.alibiSlopes(H);
        const bias = pe.alibiBias(H, Q, K, custom ? { causal, slopes: custom } : { causal });
        assert.equal(bias.length, H * Q * K);
        for (let h = 0; h < H; h++) {
          for (let i = 0; i < Q; i++) {
            const ip = K - Q + i;
            for (let j = 0; j < K; j++) {
              const e = causal && j > ip ? -Infinity : Math.fround(slopes[h] * (j - ip));
              const got = bias[(h * Q + i) * K + j];
              if (!Object.is(got, e) && !(got === 0 && e === 0)) {
                assert.fail(`H${H} Q${Q} K${K} causal ${causal}: bias[${h}, ${i}, ${j}] = ${got}, expected ${e}`);
              }
            }
          }
        }
        n++;
      }
    }
    worst.record('alibiBias vs fround(slope · (j − i)) (abs)', build.name, 0, 1e-30, `${n} shapes, bit for bit`);
    // 'non-causal' uses the signed distance: softmax-equivalent to BLOOM's per-key slope · j (row constant).
    const H = 6;
    const S = 9;
    const full = pe.alibiBias(H, S, S);
    const bloom = pe.alibiBiasFromMask(H, [Array(S).fill(1)]);
    const slopes = pe.alibiSlopes(H);
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < S; i++) {
        for (let j = 0; j < S; j++) {
          const diff = full[(h * S + i) * S + j] - bloom[h * S + j];
          assert.ok(Math.abs(diff + slopes[h] * i) <= 1e-6 * (1 + slopes[h] * S), 'differs from the mask form by -slope · i per row');
        }
      }
    }
  });

  test(`alibiBiasFromMask on random masks (left/right padding, all padding) [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(42);
    for (let c = 0; c < 60; c++) {
      const H = rng.int(1, 20);
      const B = rng.int(1, 4);
      const S = rng.int(1, 30);
      const mask = Array.from({ length: B }, () => {
        const kind = rng.int(0, 3);
        const pad = rng.int(0, S);
        return Array.from({ length: S }, (_, j) =>
          kind === 0 ? (j >= pad ? 1 : 0) : kind === 1 ? (j < S - pad ? 1 : 0) : kind === 2 ? rng.int(0, 1) : 0,
        );
      });
      const custom = rng.uniform() < 0.3 ? Float32Array.from({ length: H }, () => rng.normal()) : null;
      const got = pe.alibiBiasFromMask(H, mask, custom ? { slopes: custom } : undefined);
      assert.deepEqual(got, refMaskBias(custom ?? pe.alibiSlopes(H), mask), `case ${c}`);
    }
  });
}

test('ALiBi agrees bit for bit between the SIMD and scalar builds', async () => {
  const simd = await loadBuild(true);
  const scalar = await loadBuild(false);
  const rng = makeRng(43);
  for (const n of [1, 3, 8, 13, 64, 100]) assertBitEqual(simd.alibiSlopes(n), scalar.alibiSlopes(n), `slopes(${n})`);
  for (let c = 0; c < 40; c++) {
    const [H, Q, K] = [rng.int(1, 16), rng.int(1, 40), rng.int(1, 70)];
    const causal = rng.uniform() < 0.5;
    assertBitEqual(simd.alibiBias(H, Q, K, { causal }), scalar.alibiBias(H, Q, K, { causal }), `bias ${H}x${Q}x${K} causal ${causal}`);
    const mask = [Array.from({ length: K }, () => rng.int(0, 1))];
    assertBitEqual(simd.alibiBiasFromMask(H, mask), scalar.alibiBiasFromMask(H, mask), `mask bias ${H}x${K}`);
  }
  worst.record('SIMD vs scalar ALiBi (abs)', 'both', 0, 1e-30, 'slopes, bias, mask bias: bit for bit');
});

test('ALiBi bad input throws TypeError / RangeError naming the argument; the instance keeps working', async (t) => {
  for (const build of BUILDS) {
    const pe = await loadBuild(build.simd);
    const before = [pe.alibiSlopes(12), pe.alibiBias(3, 4, 5, { causal: true }), pe.alibiBiasFromMask(2, [[0, 1, 1]])];
    const cases = [
      ['nHeads 0', () => pe.alibiSlopes(0), RangeError, 'nHeads', 'got 0'],
      ['nHeads negative', () => pe.alibiBias(-2, 1, 1), RangeError, 'nHeads', 'got -2'],
      ['nHeads fractional', () => pe.alibiSlopes(2.5), RangeError, 'nHeads', 'got 2.5'],
      ['nHeads a string', () => pe.alibiSlopes('8'), TypeError, 'nHeads'],
      ['qLen 0', () => pe.alibiBias(2, 0, 4), RangeError, 'qLen', 'got 0'],
      ['kLen negative', () => pe.alibiBias(2, 3, -4), RangeError, 'kLen', 'got -4'],
      ['bias too large', () => pe.alibiBias(64, 8192, 8192), RangeError, 'nHeads * qLen * kLen', String(2 ** 30 - 1)],
      ['causal not boolean', () => pe.alibiBias(2, 3, 4, { causal: 1 }), TypeError, 'options.causal'],
      ['options not an object', () => pe.alibiBias(2, 3, 4, 'causal'), TypeError, 'options'],
      ['wrong slope count', () => pe.alibiBias(4, 2, 2, { slopes: new Float32Array(3) }), RangeError, 'options.slopes', '4', 'got length 3'],
      ['slope NaN', () => pe.alibiBias(2, 2, 2, { slopes: [0.5, NaN] }), RangeError, 'options.slopes[1]', 'NaN'],
      ['slope Infinity', () => pe.alibiBiasFromMask(2, [[1, 1]], { slopes: [Infinity, 1] }), RangeError, 'options.slopes[0]'],
      ['slopes a string', () => pe.alibiBias(2, 2, 2, { slopes: 'ab' }), TypeError, 'options.slopes'],
      ['slope element a string', () => pe.alibiBias(2, 2, 2, { slopes: [1, '2'] }), TypeError, 'options.slopes[1]'],
      ['mask value 2', () => pe.alibiBiasFromMask(2, [[1, 2]]), RangeError, 'attentionMask[0][1]', '0 or 1', 'got 2'],
      ['mask value 2 (Int32Array, found after the C check)', () => pe.alibiBiasFromMask(2, Int32Array.from([1, 1, 2]), { shape: [1, 3] }), RangeError, 'attentionMask[2]', 'got 2'],
      ['mask ragged rows', () => pe.alibiBiasFromMask(2, [[1, 1], [1]]), RangeError, 'attentionMask[1].length', 'got attentionMask[1].length 1'],
      ['mask a number', () => pe.alibiBiasFromMask(2, 5), TypeError, 'attentionMask'],
      ['mask empty', () => pe.alibiBiasFromMask(2, []), RangeError, 'attentionMask'],
      ['mask shape mismatch', () => pe.alibiBiasFromMask(2, [1, 1, 1], { shape: [2, 2] }), RangeError, 'attentionMask.length', 'batch * seq (4)', 'got 3'],
      ['mask shape of 3 dims', () => pe.alibiBiasFromMask(2, [1, 1, 1], { shape: [1, 1, 3] }), RangeError, 'options.shape', 'got length 3'],
      ['mask element a string', () => pe.alibiBiasFromMask(2, [['1', 1]]), TypeError, 'attentionMask[0][0]'],
    ];
    for (const [name, fn, cls, ...needles] of cases) {
      await t.test(`${name} [${build.name}]`, () => {
        assertThrowsNaming(fn, cls, ...needles);
        assert.deepEqual([pe.alibiSlopes(12), pe.alibiBias(3, 4, 5, { causal: true }), pe.alibiBiasFromMask(2, [[0, 1, 1]])], before);
      });
    }
  }
});

test('worst errors (ALiBi)', (t) => {
  worst.report(t);
});
