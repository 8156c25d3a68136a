// SIMD build vs scalar build vs a naive double-precision reference (helpers.refApply), on seeded random
// shapes: both layouts, both pairings, odd head counts, headDim 2..256, rotaryDim < headDim, widths whose
// frequency count is not a multiple of 4 (the SIMD tails), positions up to 2^24, positions per sequence.
//
// Tolerances:
// - SIMD vs scalar: bit for bit, as rope.c promises (the C kernels run the same float operations in the same
//   order in both builds). A tolerance here once let a changed SIMD polynomial coefficient pass; a reordering
//   that changes bits must now change that promise too.
// - vs the reference: inputs are randn (|x| <~ 5). Each output x_a*cos - x_b*sin in float32 carries the
//   cos/sin error (~2e-7, angles reduced in double, see golden.test.js) times |x| plus three roundings
//   (2^-24 relative each): <~ 3e-6 * a at |x| ~ 5. 1e-5 * max(1, a) leaves a margin of ~3. The reference forms
//   angles in double with Math.cos / Math.sin, so positions up to 2^24 need no extra allowance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BUILDS, loadBuild, makeRng, randnF32, refApply, defaultInvFreq, maxAbsDiff, maxRelDiff, Worst, assertBitEqual, shapeFor } from './helpers.js';

const TOL_REF = 1e-5;
const TOL_COS_SIN = 2e-6;

const worst = new Worst();
let identical = 0;
let compared = 0;

/** Scaling families whose frequencies the reference takes from the rope itself (golden-tested elsewhere). */
function scalingFor(rng, type, rotaryDim) {
  switch (type) {
    case 'linear':
      return { type, factor: rng.pick([2, 4, 8]) };
    case 'llama3':
      return { type, factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 };
    case 'yarn':
      return { type, factor: rng.pick([4, 16, 40]), originalMaxPositionEmbeddings: 4096 };
    case 'longrope':
      return {
        type,
        shortFactor: Array.from({ length: rotaryDim / 2 }, () => 1 + rng.uniform()),
        longFactor: Array.from({ length: rotaryDim / 2 }, () => 1 + 10 * rng.uniform()),
        originalMaxPositionEmbeddings: 4096,
      };
    case 'proportional':
      return { type, factor: rng.pick([1, 2]) };
    default:
      return undefined;
  }
}

function randomCase(rng, i) {
  const headDim = rng.even(2, 256);
  const rotaryDim = rng.uniform() < 0.5 ? headDim : rng.even(2, headDim);
  const type =
    i % 3 === 0 ? rng.pick(['linear', 'llama3', 'yarn', 'longrope', 'proportional']) : 'default';
  const batch = rng.int(1, 3);
  const seq = rng.int(1, 9);
  const heads = rng.pick([1, 3, 5, 7, 2]);
  const positionsKind = rng.pick(['none', 'small', 'large', 'mixed']);
  const perBatch = batch > 1 && rng.uniform() < 0.5;
  let positions;
  if (positionsKind !== 'none') {
    const n = perBatch ? batch * seq : seq;
    const max = positionsKind === 'small' ? 2048 : 2 ** 24;
    positions = Array.from({ length: n }, () => (positionsKind === 'mixed' && rng.uniform() < 0.5 ? rng.int(0, 16) : rng.int(0, max)));
    if (rng.uniform() < 0.5) positions = Int32Array.from(positions);
  }
  return {
    id: `case${i}`,
    options: {
      headDim,
      rotaryDim,
      base: rng.pick([10000, 500000, 1e6, 100 + Math.floor(rng.uniform() * 1e5)]),
      pairing: rng.pick(['half', 'interleaved']),
      maxPositionEmbeddings: 2 ** 17,
      scaling: scalingFor(rng, type, rotaryDim),
    },
    shape: [batch, seq, heads, headDim],
    layout: rng.pick(['bshd', 'bhsd']),
    positions,
  };
}

/** Fixed sweep of widths around the SIMD width (4 frequencies) and its tails, plus the extremes. */
function sweepCases() {
  const out = [];
  const widths = [
    [2, 2],
    [4, 4],
    [6, 6],
    [8, 8],
    [10, 10],
    [14, 6],
    [18, 18],
    [24, 22],
    [34, 34],
    [64, 16],
    [66, 66],
    [130, 130],
    [256, 2],
    [256, 254],
    [256, 256],
  ];
  for (const [headDim, rotaryDim] of widths) {
    for (const pairing of ['half', 'interleaved']) {
      for (const layout of ['bshd', 'bhsd']) {
        out.push({
          id: `sweep hd${headDim} rot${rotaryDim} ${pairing} ${layout}`,
          options: { headDim, rotaryDim, pairing },
          shape: [2, 5, 3, headDim], // 10 positions = batch * seq: one row per sequence
          layout,
          positions: Int32Array.from([0, 1, 4095, 65537, 2 ** 24, 123456, 7, 1000000, 3, 16777215]),
        });
      }
    }
  }
  return out;
}

const rng = makeRng(20240601);
const CASES = [...sweepCases(), ...Array.from({ length: 120 }, (_, i) => randomCase(rng, i))];

test('SIMD vs scalar vs naive reference: apply on random shapes', async (t) => {
  const [simd, scalar] = await Promise.all(BUILDS.map((b) => loadBuild(b.simd)));
  const data = makeRng(7);
  for (const c of CASES) {
    await t.test(`${c.id}: ${JSON.stringify({ ...c.options, scaling: c.options.scaling?.type })} shape ${c.shape} ${c.layout}`, () => {
      const ropes = [simd.rope(c.options), scalar.rope(c.options)];
      try {
        const [B, S, H, D] = c.shape;
        const x = randnF32(data, B * S * H * D);
        const positionsUsed = c.positions ?? Array.from({ length: S }, (_, i) => i);
        const outs = ropes.map((r) => r.apply(Float32Array.from(x), { shape: shapeFor(c.layout, c.shape), layout: c.layout, positions: c.positions }));

        const r0 = ropes[0];
        const type = r0.type;
        // Reference frequencies: independent for 'default'; from the rope for scaled types (their formulas
        // are checked against transformers by the golden suite).
        const maxPos = Math.max(...positionsUsed);
        let invFreq = r0.invFreq64(maxPos + 1);
        if (type === 'default') {
          const ind = defaultInvFreq(c.options.base ?? 10000, c.options.rotaryDim ?? D);
          const fr = maxRelDiff(invFreq, ind);
          assert.ok(fr.err <= 1e-14, `default inv_freq differs from 1/base^(2i/r) by ${fr.err} relative`);
          invFreq = ind;
        }
        const scale = r0.attentionScaling(maxPos + 1);
        const want = refApply(x, { shape: c.shape, layout: c.layout, positions: positionsUsed, invFreq, pairing: c.options.pairing, scale });

        compared++;
        assertBitEqual(outs[0], outs[1], `${c.id}: SIMD vs scalar apply`);
        identical++;
        // The cos/sin tables at the same positions.
        const [t0, t1] = ropes.map((r) => r.cosSin(positionsUsed));
        assertBitEqual(t0.cos, t1.cos, `${c.id}: SIMD vs scalar cos`);
        assertBitEqual(t0.sin, t1.sin, `${c.id}: SIMD vs scalar sin`);
        const tol = TOL_REF * Math.max(1, scale);
        for (let b = 0; b < 2; b++) {
          const d = maxAbsDiff(outs[b], want);
          worst.record('apply vs naive reference (abs)', BUILDS[b].name, d.err, tol, c.id);
          assert.ok(d.err <= tol, `${BUILDS[b].name} vs reference: ${d.err} at ${d.at}`);
        }
        // The pass-through dimensions are untouched, bit for bit.
        const rot = type === 'proportional' ? D : c.options.rotaryDim;
        for (let v = 0; v < B * S * H; v++) {
          for (let j = rot; j < D; j++) assert.ok(Object.is(outs[0][v * D + j], x[v * D + j]), `dimension ${j} changed`);
        }
      } finally {
        ropes.forEach((r) => r.free());
      }
    });
  }
});

test('SIMD vs scalar vs naive reference: cos/sin tables up to position 2^24', async (t) => {
  const [simd, scalar] = await Promise.all(BUILDS.map((b) => loadBuild(b.simd)));
  const prng = makeRng(99);
  for (const rotaryDim of [2, 6, 8, 10, 18, 64, 66, 128, 254]) {
    await t.test(`rotaryDim ${rotaryDim}`, () => {
      const opts = { headDim: rotaryDim, base: 10000 };
      const positions = Int32Array.from({ length: 40 }, (_, i) => (i < 8 ? i : prng.int(0, 2 ** 24)));
      positions[39] = 2 ** 24;
      const tabs = [simd, scalar].map((pe) => {
        const r = pe.rope(opts);
        try {
          return r.cosSin(positions);
        } finally {
          r.free();
        }
      });
      const inv = defaultInvFreq(10000, rotaryDim);
      const n = rotaryDim / 2;
      const wantCos = new Float64Array(positions.length * n);
      const wantSin = new Float64Array(positions.length * n);
      positions.forEach((p, k) => {
        for (let i = 0; i < n; i++) {
          wantCos[k * n + i] = Math.cos(p * inv[i]);
          wantSin[k * n + i] = Math.sin(p * inv[i]);
        }
      });
      assertBitEqual(tabs[0].cos, tabs[1].cos, `rot${rotaryDim}: SIMD vs scalar cos`);
      assertBitEqual(tabs[0].sin, tabs[1].sin, `rot${rotaryDim}: SIMD vs scalar sin`);
      tabs.forEach((tab, b) => {
        const e = Math.max(maxAbsDiff(tab.cos, wantCos).err, maxAbsDiff(tab.sin, wantSin).err);
        worst.record('cos/sin vs Math.cos/sin to 2^24 (abs)', BUILDS[b].name, e, TOL_COS_SIN, `rot${rotaryDim}`);
        assert.ok(e <= TOL_COS_SIN, `${BUILDS[b].name}: ${e}`);
      });
    });
  }
});

test('random: worst measured errors (summary)', (t) => {
  t.diagnostic(`SIMD and scalar apply outputs (and their cos/sin tables) bit-identical in ${identical} of ${compared} cases`);
  assert.equal(identical, compared, 'every case compared SIMD and scalar bit for bit');
  worst.report(t);
  assert.ok(compared > 0);
});
