// pe.mropePositions against Hugging Face's get_rope_index (tests/golden/mrope/mrope_index.json, the primary
// versions the README names: Qwen2-VL @ 00b676f8, Qwen2.5-VL @ efa7189c, Qwen3-VL @ 68a7b7e2), exact integers,
// and the argument errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BUILDS, loadBuild, assertThrowsNaming } from './helpers.js';

const GOLDEN = JSON.parse(readFileSync(new URL('../golden/mrope/mrope_index.json', import.meta.url), 'utf8'));
const pe = await loadBuild(BUILDS[0].simd);

const configOf = (c) => ({ model_type: c.model, ...c.config });
function optionsOf(c) {
  const i = c.inputs;
  const o = { config: configOf(c), attentionMask: i.attention_mask, imageGridThw: i.image_grid_thw, videoGridThw: i.video_grid_thw };
  if (i.second_per_grid_ts !== undefined) o.secondPerGridTs = i.second_per_grid_ts;
  return o;
}

test('the golden set has the 9 public cases over the three models (the hidden half may be added)', () => {
  assert.ok(GOLDEN.cases.length >= 9);
  assert.deepEqual(new Set(GOLDEN.cases.map((c) => c.model)), new Set(['qwen2_vl', 'qwen2_5_vl', 'qwen3_vl']));
});

for (const c of GOLDEN.cases) {
  test(`${c.id}: positions and deltas equal HF's (${c.symbolic.join(' | ')})`, () => {
    const { positions, deltas } = pe.mropePositions(c.inputs.input_ids, optionsOf(c));
    assert.ok(positions instanceof Int32Array);
    assert.deepEqual(Array.from(positions), c.expected.position_ids.flat(Infinity));
    assert.deepEqual(Array.from(deltas), c.expected.mrope_position_deltas.flat());
    // the next generated token's position: max + 1 = S + delta
    const S = c.inputs.input_ids[0].length;
    assert.deepEqual(Array.from(deltas, (d) => d + S), c.expected.next_position);
  });
}

test('the positions feed rope.apply of an M-RoPE rope: [3][batch * seq], per sequence', () => {
  const c = GOLDEN.cases.find((x) => x.id === 'idx_pub_q2vl_rect_leftpad');
  const { positions } = pe.mropePositions(c.inputs.input_ids, optionsOf(c));
  const rope = pe.rope({ headDim: 16, mrope: { section: [2, 3, 3] } });
  const B = 2;
  const S = 17;
  const x = new Float32Array(B * S * 16).fill(1);
  rope.apply(x, { shape: [B, S, 1, 16], positions });
  // token (b=1, s=10): t 4, h 4, w 5 -> pair 0 (t) turns by 4 rad
  const at = (1 * S + 10) * 16;
  assert.ok(Math.abs(x[at] - (Math.cos(4) - Math.sin(4))) < 1e-6);
  rope.free();
});

test('bad arguments are TypeErrors / RangeErrors naming the argument', () => {
  const c = GOLDEN.cases.find((x) => x.id === 'idx_pub_q2vl_image');
  const ids = c.inputs.input_ids;
  const config = configOf(c);
  const run = (o, input = ids) => () => pe.mropePositions(input, { config, ...o });
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 6]] }), RangeError, 'options.imageGridThw[0]', 'needs 6', 'has 4');
  assertThrowsNaming(run({ imageGridThw: [[1, 2, 2]] }), RangeError, 'options.imageGridThw[0]', 'needs 1');
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 4], [1, 2, 2]] }), RangeError, 'options.imageGridThw', '2 grids');
  assertThrowsNaming(run({ imageGridThw: [[1, 4.5, 4]] }), RangeError, 'options.imageGridThw[0][1]');
  assertThrowsNaming(run({ imageGridThw: [[1, '4', 4]] }), TypeError, 'options.imageGridThw[0][1]');
  assertThrowsNaming(run({ imageGridThw: [[1, 3, 4]] }), RangeError, 'options.imageGridThw[0]', 'multiples of spatial_merge_size');
  assertThrowsNaming(run({ imageGridThw: [[1, 4]] }), RangeError, 'options.imageGridThw[0]', 'length 2');
  assertThrowsNaming(run({ videoGridThw: [[1, 4, 4]] }), RangeError, 'image blocks', 'options.imageGridThw');
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 4]], attentionMask: [[1, 1]] }), RangeError, 'options.attentionMask');
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 4]], secondPerGridTs: [1] }), TypeError, 'options.secondPerGridTs');
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 4]], grids: 1 }), TypeError, 'grids');
  assertThrowsNaming(() => pe.mropePositions(ids, { config: { ...config, model_type: 'llava' } }), RangeError, 'model_type');
  assertThrowsNaming(() => pe.mropePositions([[1, 2], [3]], { config }), RangeError, 'inputIds', 'same length');
  assertThrowsNaming(() => pe.mropePositions([[1, -2]], { config }), RangeError, 'inputIds[0][1]');
  // non-integer and out-of-range grids, per axis; a number out of range is a RangeError, anything else a TypeError
  for (const [g, name] of [[[0, 4, 4], '[0][0]'], [[1.5, 4, 4], '[0][0]'], [[1, NaN, 4], '[0][1]'], [[1, 4, Infinity], '[0][2]'], [[1, 2 ** 40, 4], '[0][1]']]) {
    assertThrowsNaming(run({ imageGridThw: [g] }), RangeError, `options.imageGridThw${name}`);
  }
  assertThrowsNaming(run({ imageGridThw: Int32Array.from([1, 4, 4]) }), TypeError, 'options.imageGridThw', 'array of [t, h, w]');
  assertThrowsNaming(run({ imageGridThw: [4] }), TypeError, 'options.imageGridThw[0]');
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 4]], attentionMask: [ids[0].map(() => 2)] }), RangeError, 'options.attentionMask[0][0]');
  assertThrowsNaming(() => pe.mropePositions(ids, { config: { ...config, spatial_merge_size: 1.5 }, imageGridThw: [[1, 4, 4]] }), RangeError, 'spatial_merge_size');
  assertThrowsNaming(() => pe.mropePositions(ids, { config: { ...config, spatial_merge_size: '2' }, imageGridThw: [[1, 4, 4]] }), TypeError, 'spatial_merge_size');
  // placeholders with no grid block before them
  assertThrowsNaming(run({ imageGridThw: [[1, 4, 4]] }, [[...ids[0], 151655]]), RangeError, 'placeholder');
  // Qwen2.5-VL videos need tokens_per_second (top level or vision_config)
  const v = GOLDEN.cases.find((x) => x.id === 'idx_pub_q25_video_spg1');
  const { tokens_per_second: tps, ...noTps } = configOf(v);
  assertThrowsNaming(() => pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), config: noTps }), TypeError, 'tokens_per_second');
  const nested = pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), config: { ...noTps, vision_config: { tokens_per_second: tps } } });
  assert.deepEqual(Array.from(nested.positions), v.expected.position_ids.flat(Infinity));
  assertThrowsNaming(() => pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), secondPerGridTs: [1, 2] }), RangeError, 'options.secondPerGridTs', 'one entry per video');
  assertThrowsNaming(() => pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), secondPerGridTs: [-1] }), RangeError, 'options.secondPerGridTs[0]');
  assertThrowsNaming(() => pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), secondPerGridTs: ['1'] }), TypeError, 'options.secondPerGridTs[0]');
  assertThrowsNaming(() => pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), config: { ...noTps, tokens_per_second: NaN } }), RangeError, 'tokens_per_second');
  assertThrowsNaming(() => pe.mropePositions(v.inputs.input_ids, { ...optionsOf(v), videoGridThw: [[4, 4.5, 4]] }), RangeError, 'options.videoGridThw[0][1]');
  // one flat row is batch 1
  const one = pe.mropePositions(ids[0], { config, imageGridThw: [[1, 4, 4]] });
  assert.deepEqual(Array.from(one.positions), c.expected.position_ids.flat(Infinity));
});
