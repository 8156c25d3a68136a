// The JS API fuzzer (tests/js/fuzz/), fixed seed: a few hundred cases per build over every public entry point
// with adversarial values. Property: every call ends in success with a right result (double-precision
// references for cosSin, apply, rerotate, alibiSlopes, alibiBias, sinusoidal, learned and attention) or in a
// clean TypeError / RangeError naming the function and the argument — never another error class, never a wasm
// trap, never a hang — and afterwards the instance still computes the known-good RoPE apply bit for bit, its
// allocator works and unrelated live tensors are unchanged. A failure prints the shrunk case; replay and run
// longer with `npm run fuzz:js -- --seed N`.
import test from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { init } from '../../web/src/index.js';
import { BUILDS } from './helpers.js';
import { fuzz } from './fuzz/run.js';

const SEED = 20261201;
const RUNS = 500;

for (const { name, simd } of BUILDS) {
  test(`fuzz-api (${name}): ${RUNS} adversarial cases, seed ${SEED}: right result or a clean named error, instance intact`, { timeout: 120_000 }, async () => {
    const r = await fuzz({ simd, seed: SEED, runs: RUNS, mode: 'assert' });
    assert.equal(r.runs, RUNS);
  });
}

test('fuzz-api: init(options) resolves to a build or rejects with a TypeError naming options', { timeout: 60_000 }, async () => {
  const optionArb = fc.oneof(
    fc.constantFrom(undefined, null, {}, { simd: true }, { simd: false }, { simd: undefined }),
    fc.constantFrom(5, 'simd', true, [], [false], { simd: 1 }, { simd: 'false' }, { simd: null }, { smid: false }, { simd: false, threads: 2 }),
  );
  await fc.assert(
    fc.asyncProperty(optionArb, async (options) => {
      let pe;
      try {
        pe = await init(options);
      } catch (e) {
        assert.ok(e instanceof TypeError, `init(${JSON.stringify(options)}) threw ${e?.name}: ${e?.message}`);
        assert.match(e.message, /init/);
        assert.match(e.message, /options|simd|smid|threads/);
        return;
      }
      assert.equal(typeof pe.simd, 'boolean');
      if (options?.simd === false) assert.equal(pe.simd, false);
      // whatever was asked, a returned build computes
      assert.deepEqual(Array.from(pe.alibiSlopes(2)), [0.0625, 0.00390625]);
    }),
    { seed: SEED, numRuns: 60 },
  );
});

// DESIGN "Strict options" (issue 11): an unknown key is a TypeError naming it, one near-miss key per options object
// (the fuzz property above demands it too, policy.unknownKey). NOT_YET_STRICT may name entries that do not have it
// yet (reported as todo); it is empty since every entry point became strict (jscore 979d681).
const NOT_YET_STRICT = new Set([]);
const UNKNOWN_KEY_CALLS = [
  ['pe.rope', (pe) => pe.rope({ headDim: 8, theta: 10000 }), 'theta'],
  ['rope.apply', (pe) => pe.rope({ headDim: 2 }).apply(new Float32Array(2), { shape: [1, 1, 1, 2], position: [5] }), 'position'],
  ['rope.cosSin', (pe) => pe.rope({ headDim: 2 }).cosSin([1], { seqlen: 4 }), 'seqlen'],
  ['rope.rerotate', (pe) => pe.rope({ headDim: 2 }).rerotate(new Float32Array(2), 1, { layuot: 'bshd' }), 'layuot'],
  ['alibiBias', (pe) => pe.alibiBias(2, 2, 2, { casual: true }), 'casual'],
  ['alibiBiasFromMask', (pe) => pe.alibiBiasFromMask(2, [[1, 1]], { slope: [1, 2] }), 'slope'],
  ['sinusoidal', (pe) => pe.sinusoidal(2, 4, { offest: 3 }), 'offest'],
  ['sinusoidal.add', (pe) => pe.sinusoidal.add(new Float32Array(8), { shape: [1, 2, 4], offest: 3 }), 'offest'],
  ['learned', (pe) => pe.learned(new Float32Array(8), { dModel: 4, maxlen: 2 }), 'maxlen'],
  ['learned.add', (pe) => pe.learned(new Float32Array(8), { dModel: 4 }).add(new Float32Array(4), { shape: [1, 1, 4], position: [0] }), 'position'],
  ['attention', (pe) => pe.attention(new Float32Array(2), new Float32Array(2), new Float32Array(2), { shape: { heads: 1, qLen: 1, headDim: 2 }, causual: true }), 'causual'],
  ['attention shape', (pe) => pe.attention(new Float32Array(2), new Float32Array(2), new Float32Array(2), { shape: { heads: 1, qLen: 1, headDim: 2, kvheads: 1 } }), 'kvheads'],
  ['tensor', (pe) => pe.tensor(4, { dtpye: 'float32' }), 'dtpye'],
  ['init', () => init({ smid: false }), 'smid'],
];

for (const { name, simd } of BUILDS) {
  for (const [what, call, key] of UNKNOWN_KEY_CALLS) {
    const todo = NOT_YET_STRICT.has(what) ? 'strict options (issue 11) not implemented here yet' : false;
    test(`fuzz-api (${name}): ${what} with the unknown option key ${key} is a TypeError naming it`, { todo }, async () => {
      const pe = await init({ simd });
      await assert.rejects(
        async () => call(pe),
        (e) => e instanceof TypeError && e.message.includes(key),
      );
    });
  }
}
