// Properties of RoPE that hold whatever the frequencies, checked through the API on both builds:
// norm preserved, q·k depends only on m - n (checked at positions up to 10^6), apply-then-inverse is the
// identity, and rerotate(delta) equals applying at position + delta (both signs).
//
// Tolerances: all inputs are randn float32; outputs carry ~2e-7 relative error per element (cos/sin of an
// angle reduced in double, see golden.test.js, plus float32 roundings).
// - norm, relative 2e-6: a sum of squares of D such elements moves by ~2 * 3e-7 relative at worst.
// - q·k, 1e-5 * |q||k|: the dot of two rotated vectors has error ~3e-7 * |q||k| * sqrt(D); at D = 128 that is
//   ~3.5e-6.
// - round trips (inverse, rerotate), 4e-6 * max(1, a) absolute (a = attention factor, which scales the
//   rotated values): two rotations, each ~2e-7 relative to the pair's magnitude |x_a| + |x_b| (<~ 8 for randn).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, maxAbsDiff, Worst, shapeFor } from './helpers.js';

const worst = new Worst();

const TOL_NORM = 2e-6;
const TOL_DOT = 1e-5;
const TOL_ROUND = 4e-6;

// Configurations with and without an attention factor, both pairings, partial rotary.
const CONFIGS = [
  { name: 'default hd64 half', options: { headDim: 64 } },
  { name: 'default hd128 interleaved base5e5', options: { headDim: 128, base: 500000, pairing: 'interleaved' } },
  { name: 'partial hd96 rot34 half', options: { headDim: 96, rotaryDim: 34 } },
  {
    name: 'llama3 hd128',
    options: {
      headDim: 128,
      base: 500000,
      scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 },
    },
  },
  {
    name: 'yarn hd64 interleaved (attention factor 1.277)',
    options: { headDim: 64, pairing: 'interleaved', scaling: { type: 'yarn', factor: 16, originalMaxPositionEmbeddings: 4096 } },
  },
  {
    name: 'longrope hd48 (attention factor)',
    options: {
      headDim: 48,
      maxPositionEmbeddings: 131072,
      scaling: {
        type: 'longrope',
        originalMaxPositionEmbeddings: 4096,
        shortFactor: Array.from({ length: 24 }, (_, i) => 1 + i / 24),
        longFactor: Array.from({ length: 24 }, (_, i) => 1 + i),
      },
    },
  },
  { name: 'proportional hd64 rot32', options: { headDim: 64, rotaryDim: 32, base: 1e6, scaling: { type: 'proportional' } } },
];

function norms(x, D) {
  const out = new Float64Array(x.length / D);
  for (let v = 0; v < out.length; v++) {
    let s = 0;
    for (let j = 0; j < D; j++) s += x[v * D + j] * x[v * D + j];
    out[v] = Math.sqrt(s);
  }
  return out;
}

function dot(a, b) {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

for (const build of BUILDS) {
  test(`norm is preserved when there is no attention factor [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(11);
    for (const cfg of CONFIGS) {
      const rope = pe.rope(cfg.options);
      if (rope.attentionScaling() !== 1) {
        rope.free();
        continue;
      }
      await t.test(cfg.name, () => {
        try {
          const D = rope.headDim;
          const shape = [2, 6, 3, D];
          const x = randnF32(rng, 2 * 6 * 3 * D);
          const positions = [0, 1, 4096, 65535, 999999, 1000000];
          for (const layout of ['bshd', 'bhsd']) {
            const y = rope.apply(Float32Array.from(x), { shape: shapeFor(layout, shape), layout, positions });
            const nx = norms(x, D);
            const ny = norms(y, D);
            let err = 0;
            for (let v = 0; v < nx.length; v++) err = Math.max(err, Math.abs(ny[v] - nx[v]) / nx[v]);
            worst.record('norm preserved (rel)', build.name, err, TOL_NORM, cfg.name);
            assert.ok(err <= TOL_NORM, `${layout}: norm changed by ${err} relative`);
          }
        } finally {
          rope.free();
        }
      });
    }
  });

  test(`q·k after rotation depends only on m - n, positions up to 1e6 [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(12);
    for (const cfg of CONFIGS) {
      await t.test(cfg.name, () => {
        const rope = pe.rope(cfg.options);
        try {
          const D = rope.headDim;
          const a2 = rope.attentionScaling() ** 2; // q and k both carry the factor
          const q = randnF32(rng, D);
          const k = randnF32(rng, D);
          const qk = Math.sqrt(dot(q, q) * dot(k, k)) * a2;
          for (const delta of [0, 1, 7, 100, 4097, 65536]) {
            // Pairs (m, n) = (o + delta, o) with offsets up to 1e6 - delta: all should give the same q·k.
            const offsets = [0, 3, 1000, 123457, 500000, 1000000 - delta];
            const dots = offsets.map((o) => {
              // One call for both: q at m as "batch 0", k at n as "batch 1" (per-sequence positions).
              const qk2 = new Float32Array(2 * D);
              qk2.set(q, 0);
              qk2.set(k, D);
              rope.apply(qk2, { shape: [2, 1, 1, D], positions: [o + delta, o], seqLen: 1 });
              return dot(qk2.subarray(0, D), qk2.subarray(D));
            });
            const spread = Math.max(...dots) - Math.min(...dots);
            worst.record('q·k shift invariance (abs / |q||k|a²)', build.name, spread / qk, TOL_DOT, `${cfg.name} delta ${delta}`);
            assert.ok(spread <= TOL_DOT * qk, `delta ${delta}: q·k over offsets ${offsets} spread ${spread}: ${dots}`);
          }
        } finally {
          rope.free();
        }
      });
    }
  });

  test(`apply then inverse gives back the input [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(13);
    for (const cfg of CONFIGS) {
      await t.test(cfg.name, () => {
        const rope = pe.rope(cfg.options);
        try {
          const D = rope.headDim;
          for (const layout of ['bshd', 'bhsd']) {
            const shape = [3, 5, 3, D];
            const x = randnF32(rng, 3 * 5 * 3 * D);
            // per-sequence positions, up to 1e6 (and past longrope's original max, so its long factors)
            const positions = Int32Array.from({ length: 15 }, (_, i) => (i % 5 === 0 ? 0 : rng.int(0, 1000000)));
            const y = Float32Array.from(x);
            rope.apply(y, { shape: shapeFor(layout, shape), layout, positions });
            assert.ok(maxAbsDiff(y, x).err > 1e-3, 'apply changed x');
            rope.apply(y, { shape: shapeFor(layout, shape), layout, positions, inverse: true });
            const d = maxAbsDiff(y, x);
            worst.record('apply then inverse (abs)', build.name, d.err, TOL_ROUND, `${cfg.name} ${layout}`);
            assert.ok(d.err <= TOL_ROUND, `${layout}: round trip error ${d.err} at ${d.at}`);
          }
        } finally {
          rope.free();
        }
      });
    }
  });

  test(`rerotate(delta) equals applying at position + delta, both signs [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(14);
    // Frequencies must not depend on the sequence length for this to hold, so fix seqLen (dynamic and
    // longrope pick frequencies by it).
    for (const cfg of CONFIGS) {
      await t.test(cfg.name, () => {
        const rope = pe.rope(cfg.options);
        try {
          const D = rope.headDim;
          for (const layout of ['bshd', 'bhsd']) {
            const shape = [2, 4, 3, D];
            const x = randnF32(rng, 2 * 4 * 3 * D);
            const positions = Int32Array.from([1000, 1001, 1002, 1003, 500000, 500001, 1999, 5000]);
            for (const delta of [1, -1, 37, -10, 123456, -999]) {
              const moved = Int32Array.from(positions, (p) => p + delta);
              const seqLen = 1; // a fixed regime (longrope: short factors) for both sides
              const viaRerotate = rope.apply(Float32Array.from(x), { shape: shapeFor(layout, shape), layout, positions, seqLen });
              rope.rerotate(viaRerotate, delta, { shape: shapeFor(layout, shape), layout, seqLen });
              const direct = rope.apply(Float32Array.from(x), { shape: shapeFor(layout, shape), layout, positions: moved, seqLen });
              const d = maxAbsDiff(viaRerotate, direct);
              const tol = TOL_ROUND * Math.max(1, rope.attentionScaling());
              worst.record('rerotate vs apply at p + delta (abs)', build.name, d.err, tol, `${cfg.name} ${layout} delta ${delta}`);
              assert.ok(d.err <= tol, `${layout} delta ${delta}: ${d.err} at ${d.at}`);
            }
          }
        } finally {
          rope.free();
        }
      });
    }
  });
}

test('properties: worst measured errors (summary)', (t) => {
  worst.report(t);
  assert.ok(worst.rows.size > 0);
});
