// Bad input: each case must throw a TypeError (wrong type) or RangeError (bad value) whose message names the
// argument (and, where there is one, the bound); afterwards the instance, and a rope made before, must still
// compute exactly what they computed before the error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, assertThrowsNaming } from './helpers.js';

const LONG24 = Array.from({ length: 24 }, () => 1);

// [description, (pe, rope) => void, error class, ...text the message must contain]
// `rope` is a healthy { headDim: 48 } rope; shape [2, 3, 5, 48].
const SHAPE = [2, 3, 5, 48];
const SHAPE_BHSD = [2, 5, 3, 48]; // the same (batch 2, seq 3, heads 5) tensor's own shape in 'bhsd'
const N = 2 * 3 * 5 * 48;
const ok = () => new Float32Array(N);

const CREATION = [
  ['options not an object', (pe) => pe.rope(64), TypeError, 'options'],
  ['headDim missing', (pe) => pe.rope({}), TypeError, 'headDim', '[2, 1024]'],
  ['headDim odd', (pe) => pe.rope({ headDim: 7 }), RangeError, 'headDim', '[2, 1024]', 'got 7'],
  ['headDim 0', (pe) => pe.rope({ headDim: 0 }), RangeError, 'headDim', 'got 0'],
  ['headDim too large', (pe) => pe.rope({ headDim: 1026 }), RangeError, 'headDim', '1024', 'got 1026'],
  ['headDim fractional', (pe) => pe.rope({ headDim: 63.5 }), RangeError, 'headDim'],
  ['headDim NaN', (pe) => pe.rope({ headDim: NaN }), RangeError, 'headDim', 'NaN'],
  ['headDim a string', (pe) => pe.rope({ headDim: '64' }), TypeError, 'headDim', '"64"'],
  ['rotaryDim odd', (pe) => pe.rope({ headDim: 64, rotaryDim: 31 }), RangeError, 'rotaryDim', 'got 31'],
  ['rotaryDim > headDim', (pe) => pe.rope({ headDim: 64, rotaryDim: 128 }), RangeError, 'rotaryDim', 'headDim = 64', 'got 128'],
  ['rotaryDim 0', (pe) => pe.rope({ headDim: 64, rotaryDim: 0 }), RangeError, 'rotaryDim'],
  ['base 0', (pe) => pe.rope({ headDim: 64, base: 0 }), RangeError, 'base', '> 0'],
  ['base negative', (pe) => pe.rope({ headDim: 64, base: -10000 }), RangeError, 'base', 'got -10000'],
  ['base Infinity', (pe) => pe.rope({ headDim: 64, base: Infinity }), RangeError, 'base', 'finite'],
  ['base NaN', (pe) => pe.rope({ headDim: 64, base: NaN }), RangeError, 'base'],
  // base 1 makes every frequency 1, which is a valid (if useless) RoPE; only YaRN divides by ln(base), and the C
  // core refuses it there (pe_rope_init's PE_ERR_BASE, named as the option).
  ['base 1 (yarn)', (pe) => pe.rope({ headDim: 64, base: 1, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096 } }), RangeError, 'base', '!= 1', "'yarn'", 'got 1'],
  ['base a string', (pe) => pe.rope({ headDim: 64, base: '10000' }), TypeError, 'base'],
  ['pairing unknown', (pe) => pe.rope({ headDim: 64, pairing: 'neox' }), RangeError, 'pairing', "'half'", "'interleaved'"],
  ['pairing not a string', (pe) => pe.rope({ headDim: 64, pairing: 1 }), TypeError, 'pairing'],
  ['maxPositionEmbeddings 0', (pe) => pe.rope({ headDim: 64, maxPositionEmbeddings: 0 }), RangeError, 'maxPositionEmbeddings'],
  ['scaling not an object', (pe) => pe.rope({ headDim: 64, scaling: 'linear' }), TypeError, 'scaling'],
  ['scaling without type', (pe) => pe.rope({ headDim: 64, scaling: { factor: 2 } }), TypeError, 'scaling.type'],
  ['unknown rope type', (pe) => pe.rope({ headDim: 64, scaling: { type: 'ntk' } }), RangeError, 'scaling.type', "'yarn'", '"ntk"'],
  ['rope type not a string', (pe) => pe.rope({ headDim: 64, scaling: { type: 3 } }), TypeError, 'scaling.type'],
  ['linear factor 0', (pe) => pe.rope({ headDim: 64, scaling: { type: 'linear', factor: 0 } }), RangeError, 'scaling.factor', '> 0'],
  ['linear factor negative', (pe) => pe.rope({ headDim: 64, scaling: { type: 'linear', factor: -2 } }), RangeError, 'scaling.factor', 'got -2'],
  ['linear factor NaN', (pe) => pe.rope({ headDim: 64, scaling: { type: 'linear', factor: NaN } }), RangeError, 'scaling.factor'],
  ['linear factor missing', (pe) => pe.rope({ headDim: 64, scaling: { type: 'linear' } }), TypeError, 'scaling.factor', "required for 'linear'"],
  ['snake_case spelling: rope_type, factor 0', (pe) => pe.rope({ headDim: 64, scaling: { rope_type: 'linear', factor: 0 } }), RangeError, 'scaling.factor'],
  ['dynamic factor missing', (pe) => pe.rope({ headDim: 64, maxPositionEmbeddings: 2048, scaling: { type: 'dynamic' } }), TypeError, 'scaling.factor', "'dynamic'"],
  ['dynamic without maxPositionEmbeddings', (pe) => pe.rope({ headDim: 64, scaling: { type: 'dynamic', factor: 2 } }), TypeError, 'maxPositionEmbeddings', "'dynamic'"],
  ['yarn without original / max', (pe) => pe.rope({ headDim: 64, scaling: { type: 'yarn', factor: 4 } }), TypeError, 'scaling.originalMaxPositionEmbeddings', 'maxPositionEmbeddings'],
  ['yarn factor missing without max', (pe) => pe.rope({ headDim: 64, scaling: { type: 'yarn', originalMaxPositionEmbeddings: 4096 } }), TypeError, 'scaling.factor'],
  ['yarn factor 0', (pe) => pe.rope({ headDim: 64, scaling: { type: 'yarn', factor: 0, originalMaxPositionEmbeddings: 4096 } }), RangeError, 'scaling.factor'],
  ['yarn betaFast negative', (pe) => pe.rope({ headDim: 64, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096, betaFast: -1 } }), RangeError, 'scaling.betaFast'],
  ['yarn attentionFactor 0 given', (pe) => pe.rope({ headDim: 64, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096, attention_factor: -1 } }), RangeError, 'scaling.attentionFactor'],
  ['yarn truncate not boolean', (pe) => pe.rope({ headDim: 64, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096, truncate: 'no' } }), TypeError, 'scaling.truncate'],
  ['llama3 lowFreqFactor missing', (pe) => pe.rope({ headDim: 64, scaling: { type: 'llama3', factor: 8, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } }), TypeError, 'scaling.lowFreqFactor', "'llama3'"],
  ['llama3 highFreqFactor missing', (pe) => pe.rope({ headDim: 64, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, originalMaxPositionEmbeddings: 8192 } }), TypeError, 'scaling.highFreqFactor'],
  ['llama3 original max missing', (pe) => pe.rope({ headDim: 64, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4 } }), TypeError, 'scaling.originalMaxPositionEmbeddings'],
  ['llama3 factor missing', (pe) => pe.rope({ headDim: 64, scaling: { type: 'llama3', lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } }), TypeError, 'scaling.factor'],
  ['llama3 high <= low', (pe) => pe.rope({ headDim: 64, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 4, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } }), RangeError, 'scaling.highFreqFactor', 'scaling.lowFreqFactor'],
  ['longrope shortFactor missing', (pe) => pe.rope({ headDim: 48, maxPositionEmbeddings: 131072, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, longFactor: LONG24 } }), TypeError, 'scaling.shortFactor', '24'],
  ['longrope longFactor missing', (pe) => pe.rope({ headDim: 48, maxPositionEmbeddings: 131072, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, shortFactor: LONG24 } }), TypeError, 'scaling.longFactor'],
  ['longrope shortFactor length', (pe) => pe.rope({ headDim: 48, maxPositionEmbeddings: 131072, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, shortFactor: LONG24.slice(1), longFactor: LONG24 } }), RangeError, 'scaling.shortFactor', '24', 'got length 23'],
  ['longrope longFactor length (partial rotary: rotaryDim / 2)', (pe) => pe.rope({ headDim: 64, rotaryDim: 48, maxPositionEmbeddings: 131072, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, shortFactor: LONG24, longFactor: LONG24.concat(LONG24) } }), RangeError, 'scaling.longFactor', 'got length 48'],
  ['longrope factor element 0', (pe) => pe.rope({ headDim: 48, maxPositionEmbeddings: 131072, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, shortFactor: LONG24, longFactor: [...LONG24.slice(0, 3), 0, ...LONG24.slice(4)] } }), RangeError, 'scaling.longFactor[3]', '> 0'],
  ['longrope without original / max', (pe) => pe.rope({ headDim: 48, scaling: { type: 'longrope', shortFactor: LONG24, longFactor: LONG24 } }), TypeError, 'scaling.originalMaxPositionEmbeddings'],
  ['proportional factor negative', (pe) => pe.rope({ headDim: 64, scaling: { type: 'proportional', factor: -1 } }), RangeError, 'scaling.factor'],
];

const CALLS = [
  // positions
  ['positions negative (array)', (pe, r) => r.cosSin([0, 1, -3]), RangeError, 'positions[2]', 'got -3'],
  ['positions negative (Int32Array, found by the C scan)', (pe, r) => r.cosSin(Int32Array.from([4, -1, 2])), RangeError, 'positions[1]', 'got -1'],
  ['positions fractional', (pe, r) => r.cosSin([0, 1.5]), RangeError, 'positions[1]', 'got 1.5'],
  ['positions NaN', (pe, r) => r.cosSin([NaN]), RangeError, 'positions[0]', 'NaN'],
  ['positions >= 2^31', (pe, r) => r.cosSin([2 ** 31]), RangeError, 'positions[0]', '2147483647'],
  ['positions >= 2^31 (Uint32Array)', (pe, r) => r.cosSin(Uint32Array.from([1, 2 ** 31])), RangeError, 'positions[1]'],
  ['positions element a string', (pe, r) => r.cosSin([0, '1']), TypeError, 'positions[1]'],
  ['positions a number', (pe, r) => r.cosSin(5), TypeError, 'positions', 'Int32Array'],
  ['positions a string', (pe, r) => r.cosSin('012'), TypeError, 'positions'],
  ['positions a BigInt64Array', (pe, r) => r.cosSin(new BigInt64Array(2)), TypeError, 'positions'],
  ['apply positions negative', (pe, r) => r.apply(ok(), { shape: SHAPE, positions: [0, -1, 2] }), RangeError, 'options.positions[1]'],
  ['apply positions length neither seq nor batch*seq', (pe, r) => r.apply(ok(), { shape: SHAPE, positions: [0, 1, 2, 3] }), RangeError, 'options.positions.length', 'seq (3)', 'batch * seq (6)', 'got 4'],
  // x
  ['x length != product of shape', (pe, r) => r.apply(new Float32Array(N - 1), { shape: SHAPE }), RangeError, 'x.length', `${N}`],
  ['x a Float64Array', (pe, r) => r.apply(new Float64Array(N), { shape: SHAPE }), TypeError, 'x', 'Float32Array', 'Float64Array'],
  ['x a plain array', (pe, r) => r.apply(Array.from({ length: N }, () => 0), { shape: SHAPE }), TypeError, 'x', 'Float32Array'],
  ['x missing', (pe, r) => r.apply(undefined, { shape: SHAPE }), TypeError, 'x'],
  ['x a tensor of the wrong length', (pe, r) => r.apply(pe.tensor(N + 48), { shape: SHAPE }), RangeError, 'x.length'],
  // shape / layout / options
  ['options missing', (pe, r) => r.apply(ok()), TypeError, 'options.shape'],
  ['shape not an array', (pe, r) => r.apply(ok(), { shape: 720 }), TypeError, 'options.shape'],
  ['shape of 3 dims', (pe, r) => r.apply(ok(), { shape: [6, 5, 48] }), RangeError, 'options.shape', 'got length 3'],
  ['shape with a zero dim', (pe, r) => r.apply(ok(), { shape: [2, 0, 5, 48] }), RangeError, 'options.shape[1] (seq)', 'got 0'],
  ['shape with a fractional dim', (pe, r) => r.apply(ok(), { shape: [2, 3, 2.5, 48] }), RangeError, 'options.shape[2] (heads)'],
  ['shape headDim != rope headDim', (pe, r) => r.apply(new Float32Array(2 * 3 * 5 * 64), { shape: [2, 3, 5, 64] }), RangeError, 'options.shape[3]', '48', 'got 64'],
  ['layout unknown', (pe, r) => r.apply(ok(), { shape: SHAPE, layout: 'bsdh' }), RangeError, 'options.layout', "'bshd'", "'bhsd'"],
  ['layout not a string', (pe, r) => r.apply(ok(), { shape: SHAPE, layout: 1 }), TypeError, 'options.layout'],
  ['inverse not boolean', (pe, r) => r.apply(ok(), { shape: SHAPE, inverse: 'yes' }), TypeError, 'options.inverse'],
  ['seqLen negative', (pe, r) => r.apply(ok(), { shape: SHAPE, seqLen: -2 }), RangeError, 'seqLen'],
  ['seqLen fractional (cosSin)', (pe, r) => r.cosSin([1, 2], 2.5), RangeError, 'seqLen', 'got 2.5'],
  ['seqLen a string (invFreq)', (pe, r) => r.invFreq('5'), TypeError, 'seqLen'],
  ['seqLen negative (attentionScaling)', (pe, r) => r.attentionScaling(-1), RangeError, 'seqLen'],
  // rerotate
  ['rerotate delta fractional', (pe, r) => r.rerotate(ok(), 1.5, { shape: SHAPE }), RangeError, 'delta', 'got 1.5'],
  ['rerotate delta a string', (pe, r) => r.rerotate(ok(), '3', { shape: SHAPE }), TypeError, 'delta'],
  ['rerotate delta too large', (pe, r) => r.rerotate(ok(), 2 ** 31, { shape: SHAPE }), RangeError, 'delta'],
  ['rerotate x a Float64Array', (pe, r) => r.rerotate(new Float64Array(N), 3), TypeError, 'x', 'Float32Array'],
  ['rerotate x length not a multiple of headDim', (pe, r) => r.rerotate(new Float32Array(50), 3), RangeError, 'x.length', 'headDim (48)'],
  // tensors
  ['tensor length negative', (pe) => pe.tensor(-1), RangeError, 'length'],
  ['tensor length fractional', (pe) => pe.tensor(1.5), RangeError, 'length'],
  ['tensor of a plain array', (pe) => pe.tensor([1, 2, 3]), TypeError, 'Float32Array'],
  ['tensor of a string', (pe) => pe.tensor('3'), TypeError, 'length'],
  [
    'freed tensor passed as x',
    (pe, r) => {
      const t = pe.tensor(N);
      t.free();
      r.apply(t, { shape: SHAPE });
    },
    TypeError,
    'x',
    'freed',
  ],
  [
    'freed tensor read',
    (pe) => {
      const t = pe.tensor(4);
      t.free();
      return t.array;
    },
    TypeError,
    'tensor',
    'freed',
  ],
  // ropeFromHFConfig: messages name the config.json keys
  ['HF config not an object', (pe) => pe.ropeFromHFConfig('llama'), TypeError, 'config'],
  ['HF head_dim odd', (pe) => pe.ropeFromHFConfig({ head_dim: 63, rope_theta: 10000 }), RangeError, 'head_dim', 'got 63'],
  ['HF hidden_size // num_attention_heads odd', (pe) => pe.ropeFromHFConfig({ hidden_size: 100, num_attention_heads: 3 }), RangeError, 'hidden_size // num_attention_heads', 'got 33'],
  ['HF no head size at all', (pe) => pe.ropeFromHFConfig({ rope_theta: 10000 }), TypeError, 'head_dim', 'hidden_size', 'num_attention_heads'],
  ['HF rope_parameters.factor 0', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_parameters: { rope_type: 'linear', rope_theta: 10000, factor: 0 } }), RangeError, 'rope_parameters.factor'],
  ['HF rope_scaling.factor missing', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_theta: 10000, rope_scaling: { type: 'linear' } }), TypeError, 'rope_scaling.factor'],
  ['HF unknown rope_type', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_parameters: { rope_type: 'ntk', rope_theta: 10000 } }), RangeError, 'rope_parameters.rope_type', '"ntk"'],
  ['HF unknown rope_scaling.type', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_scaling: { type: 'su2' } }), RangeError, 'rope_scaling.type'],
  ['HF rope_theta 0', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_theta: 0 }), RangeError, 'rope_theta'],
  ['HF partial_rotary_factor > 1', (pe) => pe.ropeFromHFConfig({ head_dim: 64, partial_rotary_factor: 1.5 }), RangeError, 'partial_rotary_factor'],
  ['HF rotary dim odd from partial_rotary_factor', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_parameters: { rope_theta: 10000, rope_type: 'default', partial_rotary_factor: 0.4 } }), RangeError, 'partial_rotary_factor', 'got 25'],
  ['HF llama3 low_freq_factor missing', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_parameters: { rope_type: 'llama3', rope_theta: 5e5, factor: 8, high_freq_factor: 4, original_max_position_embeddings: 8192 } }), TypeError, 'rope_parameters.low_freq_factor'],
  ['HF per-layer rope_parameters without layerType', (pe) => pe.ropeFromHFConfig({ head_dim: 64, rope_parameters: { full_attention: { rope_type: 'default', rope_theta: 1e6 }, sliding_attention: { rope_type: 'default', rope_theta: 1e4 } } }), TypeError, 'options.layerType', "'full_attention'"],
  ['HF pairing unknown', (pe) => pe.ropeFromHFConfig({ head_dim: 64 }, { pairing: 'gptj' }), RangeError, 'options.pairing'],
];

for (const build of BUILDS) {
  test(`bad input throws TypeError / RangeError naming the argument; everything keeps working [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: 48 });
    const rng = makeRng(5);
    const x = randnF32(rng, N);
    const positions = [3, 1000, 65537, 0, 1, 2];
    const baseline = () => ({
      y: rope.apply(Float32Array.from(x), { shape: SHAPE_BHSD, layout: 'bhsd', positions }),
      cs: rope.cosSin([0, 7, 123456]),
    });
    const before = baseline();
    const check = () => {
      const now = baseline();
      assert.deepEqual(now.y, before.y, 'the rope made before the error computes the same');
      assert.deepEqual(now.cs, before.cs);
      // and the instance can still make new ropes that agree
      const fresh = pe.rope({ headDim: 48 });
      try {
        assert.deepEqual(fresh.apply(Float32Array.from(x), { shape: SHAPE_BHSD, layout: 'bhsd', positions }), before.y);
      } finally {
        fresh.free();
      }
    };
    for (const [name, fn, cls, ...needles] of [...CREATION, ...CALLS]) {
      await t.test(name, () => {
        assertThrowsNaming(() => fn(pe, rope), cls, ...needles);
        check();
      });
    }

    await t.test('a freed rope throws, others keep working', () => {
      const r = pe.rope({ headDim: 48 });
      r.free();
      r.free(); // idempotent
      assert.equal(r.freed, true);
      // use after free is a TypeError (the object is no longer a rope one can use), naming the object
      assertThrowsNaming(() => r.cosSin([1]), TypeError, 'rope.cosSin', 'rope', 'freed');
      assertThrowsNaming(() => r.apply(ok(), { shape: SHAPE }), TypeError, 'rope.apply', 'rope', 'freed');
      check();
    });

    await t.test('a tensor of another instance is refused', async () => {
      const other = await loadBuild(!build.simd);
      const t2 = other.tensor(N);
      try {
        assertThrowsNaming(() => rope.apply(t2, { shape: SHAPE }), TypeError, 'x', 'another posenc instance');
      } finally {
        t2.free();
      }
      check();
    });
    rope.free();
  });
}

test('init rejects bad options with a TypeError naming them', async () => {
  const { init } = await import('../../web/src/index.js');
  await assert.rejects(init({ simd: 'yes' }), (e) => e instanceof TypeError && e.message.includes('options.simd'));
  await assert.rejects(init(42), (e) => e instanceof TypeError && e.message.includes('options'));
});
