// Type test of web/src/index.d.ts, the single source of truth for the JS API's shape: `npm run typecheck`
// compiles this file (tsc --noEmit, strict) against the package as a user imports it ('posenc' and 'posenc/url'
// resolve through package.json's "exports", so the exports map's "types" are under test too). It is never run.
//
// It uses every call the README shows (the Example and "The API at a glance") and the parts of DESIGN.md's JS
// API contract that index.d.ts declares, and pins what each returns (Expect<Equal<...>>). Lines marked as
// expected errors are calls the types must refuse (tsc fails if such a line compiles). When the API grows
// (index.d.ts), add its calls here.
import { init } from 'posenc';
import { ModelFileError, parseSafetensors } from 'posenc/model';
import type { Posenc, Rope, Rope2d, Tensor, Learned, AttentionResult, TinyModel, SafetensorsInfo, HFPositionSpec, HFVision } from 'posenc';
import initDefault from 'posenc';
import { init as initUrl } from 'posenc/url';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
declare function use(...values: unknown[]): void;

// ---- init (DESIGN: cached; pe.simd; init({ simd: false }) forces scalar) ----------------------------------------
const pe = await init();
const scalar = await init({ simd: false });
const viaUrl = await initUrl({ simd: true });
type _init = Expect<Equal<typeof pe, Posenc>>;
type _initUrl = Expect<Equal<typeof viaUrl, Posenc>>;
type _default = Expect<Equal<typeof initDefault, typeof init>>;
const simd: boolean = pe.simd;
const bytes: number = scalar.memoryBytes;
// @ts-expect-error simd is read-only
pe.simd = false;
// @ts-expect-error init's option is a boolean
await init({ simd: 'yes' });

// ---- README Example ---------------------------------------------------------------------------------------------
declare const queries: Float32Array;
const rope = pe.ropeFromHFConfig({
  hidden_size: 4096, num_attention_heads: 32, max_position_embeddings: 131072, rope_theta: 500000,
  rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4,
    original_max_position_embeddings: 8192 } });
const { cos, sin } = rope.cosSin([0, 1, 2, 3]);
type _cos = Expect<Equal<typeof cos, Float32Array>>;
const q = pe.tensor(1 * 4 * 32 * 128);
q.array.set(queries);
const rotated = rope.apply(q, { shape: [1, 4, 32, 128], layout: 'bshd', positions: [0, 1, 2, 3] });
type _applyTensor = Expect<Equal<typeof rotated, Tensor>>;
use(q.array.slice(0, 8), sin);
q.free();

// ---- The API at a glance: RoPE ----------------------------------------------------------------------------------
const r1: Rope = pe.rope({ headDim: 64 });
const r2 = pe.rope({
  headDim: 128, rotaryDim: 64, base: 1e6, pairing: 'interleaved', maxPositionEmbeddings: 4096,
  scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096, betaFast: 32, betaSlow: 1 },
});
pe.rope({ headDim: 64, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } });
pe.rope({ headDim: 64, scaling: { rope_type: 'longrope', short_factor: [1, 1], long_factor: [2, 2] } }); // HF spelling
pe.rope({ headDim: 64, scaling: { type: 'dynamic', factor: 2 }, maxPositionEmbeddings: 2048 });
pe.rope({ headDim: 64, scaling: null });
// @ts-expect-error headDim is required
pe.rope({ base: 10000 });
// @ts-expect-error an unknown option (DESIGN: unknown keys are errors)
pe.rope({ headDim: 64, heads: 8 });
// @ts-expect-error pairing is 'half' or 'interleaved'
pe.rope({ headDim: 64, pairing: 'neox' });
// @ts-expect-error not a scaling type
pe.rope({ headDim: 64, scaling: { type: 'ntk' } });

const r3 = pe.ropeFromHFConfig({ rope_parameters: { rope_type: 'default', rope_theta: 10000 }, head_dim: 64 }, { pairing: 'half' });
pe.ropeFromHFConfig({ head_dim: 64, rope_parameters: { full_attention: {}, sliding_attention: {} } }, { layerType: 'sliding_attention' });
// @ts-expect-error a config is an object
pe.ropeFromHFConfig('config.json');

const invFreq: Float32Array = r2.invFreq();
const invFreq8k: Float32Array = r2.invFreq(8192);
const invFreq64: Float64Array = r2.invFreq64(8192);
const factor: number = r2.attentionScaling();
const factor8k: number = r2.attentionScaling(8192);
use(invFreq, invFreq8k, invFreq64, factor, factor8k);
const headDim: number = r2.headDim, rotaryDim: number = r2.rotaryDim, nFreq: number = r2.nFreq;
const type: 'default' | 'linear' | 'dynamic' | 'yarn' | 'longrope' | 'llama3' | 'proportional' = r2.type;
const pairing: 'half' | 'interleaved' = r2.pairing;
use(headDim, rotaryDim, nFreq, type, pairing, r2.base, r2.config, r2.freed);

const tables = r1.cosSin(Int32Array.of(0, 5, 9), 4096);
const tablesNull = r1.cosSin([0, 1], null);
type _tables = Expect<Equal<typeof tables, { cos: Float32Array; sin: Float32Array }>>;
const outCos = pe.tensor(3 * 32);
const outSin = new Float32Array(3 * 32);
const written = r1.cosSin([0, 1, 2], { out: { cos: outCos, sin: outSin } });
type _written = Expect<Equal<typeof written, { cos: Tensor; sin: typeof outSin }>>; // out's own types back
const withSeqLen = r1.cosSin([0, 1, 2], { seqLen: 8192 });
type _withSeqLen = Expect<Equal<typeof withSeqLen, { cos: Float32Array; sin: Float32Array }>>;
use(tablesNull);

const x = new Float32Array(2 * 3 * 4 * 64);
const same = r1.apply(x, { shape: [2, 4, 3, 64], layout: 'bhsd', positions: Int32Array.of(7, 8, 9), inverse: true, seqLen: 10 }); // [b, h, s, d]
type _applyArray = Expect<Equal<typeof same, typeof x>>; // in place: x's own type back
r1.apply(x, { shape: [2, 3, 4, 64], positions: [0, 1, 2, 10, 11, 12] }); // per sequence: batch * seq positions
const k = pe.tensor(2 * 3 * 2 * 64);
r1.apply(x, { shape: [2, 3, 4, 64], k, kHeads: 2 }); // q and k from one table
// @ts-expect-error layout is 'bshd' or 'bhsd'
r1.apply(x, { shape: [2, 3, 4, 64], layout: 'bsdh' });
// @ts-expect-error shape is required
r1.apply(x, { positions: [0] });
// @ts-expect-error an unknown option
r1.apply(x, { shape: [2, 3, 4, 64], position: [0] });
// @ts-expect-error x is float data
r1.apply([1, 2, 3], { shape: [1, 1, 1, 2] });

// strided views: fused QKV (k in the same buffer), named shapes, a cache with spare capacity
r1.apply(x, { shape: { batch: 1, seq: 3, heads: 2 }, strides: { batch: 768, seq: 256, heads: 64 }, offset: 0, k: x, kHeads: 1, kStrides: { seq: 256 }, kOffset: 128 });
r1.rerotate(x, 2, { shape: [1, 2, 3, 64], layout: 'bhsd', strides: { batch: 1024, seq: 64, heads: 512 }, offset: 64 });
// @ts-expect-error strides is an object, not an array
r1.apply(x, { shape: [2, 3, 4, 64], strides: [768, 256, 64] });
// @ts-expect-error a named shape has no 'head' key
r1.apply(x, { shape: { batch: 1, seq: 3, head: 2 } });
const moved = r1.rerotate(k, -5, { shape: [2, 3, 2, 64], layout: 'bshd' });
type _rerotate = Expect<Equal<typeof moved, Tensor>>;
r1.rerotate(x, 3);
r1.rerotate(x, 3, { seqLen: 4096 });
r1.free(); r2.free(); r3.free();

// ---- ALiBi, sinusoidal, learned -----------------------------------------------------------------------------
const slopes: Float32Array = pe.alibiSlopes(12);
const bias: Float32Array = pe.alibiBias(8, 4, 16, { causal: true });
pe.alibiBias(8, 4, 16);
const biasOut = pe.alibiBias(8, 4, 16, { out: pe.tensor(8 * 4 * 16), slopes });
type _biasOut = Expect<Equal<typeof biasOut, Tensor>>;
const maskBias: Float32Array = pe.alibiBiasFromMask(8, [[0, 1, 1], [1, 1, 1]]);
pe.alibiBiasFromMask(8, Int32Array.of(1, 1, 0, 1), { shape: [2, 2] });
pe.alibiBiasFromMask(8, [[true, false]]);
// @ts-expect-error causal is a boolean
pe.alibiBias(8, 4, 16, { causal: 1 });
use(bias, maskBias);

const table: Float32Array = pe.sinusoidal(128, 64);
pe.sinusoidal(128, 64, { base: 10000, offset: 2, pairing: 'half' });
pe.sinusoidal(128, 64, { variant: 'tensor2tensor', paddingIdx: 1 });
const tableOut = pe.sinusoidal(16, 8, { out: pe.tensor(16 * 8) });
type _tableOut = Expect<Equal<typeof tableOut, Tensor>>;
const embeddings = new Float32Array(2 * 16 * 8);
const added = pe.sinusoidal.add(embeddings, { shape: [2, 16, 8], positions: [0, 1] });
type _added = Expect<Equal<typeof added, typeof embeddings>>;
// @ts-expect-error sinusoidal pairing is 'interleaved' or 'half'
pe.sinusoidal(4, 4, { pairing: 'neox' });
use(table);

const learned: Learned = pe.learned(new Float32Array(10 * 8), { dModel: 8, maxLen: 8, offset: 2 });
const rows: Float32Array = learned.lookup([-1, 0, 7]);
const emb = learned.add(pe.tensor(1 * 3 * 8), { shape: [1, 3, 8], positions: Int32Array.of(0, 1, 2) });
type _learnedAdd = Expect<Equal<typeof emb, Tensor>>;
const ml: number = learned.maxLen, dm: number = learned.dModel, off: number = learned.offset;
use(rows, ml, dm, off, learned.freed);
// @ts-expect-error dModel is required
pe.learned(new Float32Array(8), { maxLen: 1 });
learned.free();

// ---- Attention ----------------------------------------------------------------------------------------------
const ar = pe.rope({ headDim: 64 });
const qa = new Float32Array(1 * 1 * 8 * 64), ka = new Float32Array(1 * 16 * 2 * 64), va = new Float32Array(1 * 16 * 2 * 64);
const res = pe.attention(qa, ka, va, {
  shape: { batch: 1, heads: 8, kvHeads: 2, qLen: 1, kLen: 16, headDim: 64 }, layout: 'bshd', causal: true, rope: ar,
  positions: { q: [15], k: Int32Array.from({ length: 16 }, (_, i) => i) }, alibi: true, scale: 0.125,
  returnWeights: true, seqLen: 16,
});
type _att = Expect<Equal<typeof res, AttentionResult<Float32Array>>>;
const outA: Float32Array = res.out;
const weights: Float32Array | undefined = res.weights;
pe.attention(qa, ka, va, { shape: { heads: 8, kvHeads: 2, qLen: 1, kLen: 16, headDim: 64 }, alibi: slopes, positions: [3, 4] });
pe.attention(qa, ka, va, { shape: { heads: 8, kvHeads: 2, qLen: 1, kLen: 16, headDim: 64 }, rope: ar, kRotated: true });
const intoTensor = pe.attention(qa, ka, va, { shape: { heads: 8, kvHeads: 2, qLen: 1, kLen: 16, headDim: 64 }, out: pe.tensor(8 * 64) });
type _attOut = Expect<Equal<typeof intoTensor.out, Tensor>>;
// @ts-expect-error shape.heads is required
pe.attention(qa, ka, va, { shape: { qLen: 1, headDim: 64 } });
use(outA, weights);
// a left-padded batch: per-sequence positions, the mask, a bias of a broadcast shape, vHeadDim, query scales
const batchShape = { batch: 2, heads: 8, kvHeads: 2, qLen: 1, kLen: 16, headDim: 64, vHeadDim: 32 };
const padded = pe.attention(qa, ka, va, {
  shape: batchShape, causal: true, positions: { q: Int32Array.of(15, 9), k: new Int32Array(32) }, mask: new Uint8Array(32),
  bias: new Float32Array(2 * 16), biasShape: [2, 1, 1, 16], queryScale: [1, 1.5],
});
type _padded = Expect<Equal<typeof padded.out, Float32Array>>;
pe.attention(qa, ka, va, { shape: batchShape, mask: [1, 1, 0], bias: pe.tensor(16), biasShape: [1, 1, 1, 16] });
pe.attention(qa, ka, va, { shape: batchShape, queryScale: { type: 'llama4_temperature', floorScale: 8192, attnScale: 0.1 } });
pe.attention(qa, ka, va, { shape: batchShape, queryScale: { type: 'llama_4', beta: 0.1, originalMaxPositionEmbeddings: 8192 } });
// views: q inside a fused QKV buffer, k and v a bhsd cache with spare capacity, out padded
pe.attention(qa, ka, va, {
  shape: batchShape, layout: 'bhsd', out: new Float32Array(600),
  strides: { q: { batch: 1536, seq: 768, heads: 64 }, k: { batch: 4096, seq: 64, heads: 2048 }, v: { seq: 32 }, out: { heads: 40 } },
  offsets: { q: 0, k: 64, v: 0, out: 1 },
});
// @ts-expect-error biasShape has four entries
pe.attention(qa, ka, va, { shape: batchShape, bias: new Float32Array(32), biasShape: [2, 16] });
// @ts-expect-error strides name batch, seq and heads
pe.attention(qa, ka, va, { shape: batchShape, strides: { q: { sequence: 4 } } });
// 16-bit storage: Uint16Array bits in, Uint16Array bits out (or into options.out)
const qh = new Uint16Array(qa.length), kh = new Uint16Array(ka.length), vh = new Uint16Array(va.length);
const half = pe.attention(qh, kh, vh, { shape: batchShape, dtype: 'float16', mask: new Int32Array(32), causal: true });
type _half = Expect<Equal<typeof half.out, Uint16Array>>;
const intoHalf = pe.attention(qh, kh, vh, { shape: batchShape, dtype: 'bfloat16', out: new Uint16Array(256) });
const intoHalfOut: Uint16Array = intoHalf.out;
use(intoHalfOut);
const kt = pe.tensor(ka.length, { dtype: 'float16' }), qt = pe.tensor(qa.length, { dtype: 'float16' });
const fromTensors = pe.attention(qt, kt, kt, { shape: batchShape });
type _fromTensors = Expect<Equal<typeof fromTensors.out, Uint16Array>>;
// @ts-expect-error 16-bit data need a 16-bit dtype
pe.attention(qh, kh, vh, { shape: batchShape, dtype: 'float32' });
// @ts-expect-error float32 data with a 16-bit dtype
pe.attention(qa, ka, va, { shape: batchShape, dtype: 'float16' });
// @ts-expect-error unknown dtype
pe.attention(qh, kh, vh, { shape: batchShape, dtype: 'half' });
ar.free();

// ---- pe.tensor ----------------------------------------------------------------------------------------------
const t: Tensor = pe.tensor(new Float32Array([1, 2, 3]));
const view: Float32Array = t.array;
const n: number = t.length;
const freed: boolean = t.freed;
// @ts-expect-error array is read-only
t.array = new Float32Array(3);
// @ts-expect-error a length or a Float32Array
pe.tensor([1, 2, 3]);
use(view, n, freed);
t.free();

// ---- Tiny models ------------------------------------------------------------------------------------------------
declare const safetensors: Uint8Array;
const model: TinyModel = await pe.loadModel(safetensors, {
  vocab_size: 64, hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 256,
  max_position_embeddings: 64, position_encoding: 'rope', rope_theta: 10000,
});
const fetched: TinyModel = await pe.fetchModel('models/copy-rope/', { fetch });
const fwd = model.forward('abc', { attention: true, ropeScaling: { type: 'yarn', factor: 2 } });
const logits: Float32Array = fwd.logits;
const attention: Float32Array | undefined = fwd.attention;
const qk = model.forward('abc', { qk: true });
const qProj: Float32Array | undefined = qk.q, kProj: Float32Array | undefined = qk.k;
const ev = fetched.evaluate(Int32Array.of(1, 2, 3), { targets: [2, 3] });
const loss: number = ev.loss, accuracy: number = ev.accuracy;
const tokens: Int32Array = model.encode('hello');
const text: string = model.decode(tokens);
const info: SafetensorsInfo = parseSafetensors(safetensors);
const viaModels: SafetensorsInfo = (await pe.models).parseSafetensors(safetensors);
const err: Error = new ModelFileError('bad file');
// @ts-expect-error not a position encoding
model.forward('abc', { ropeScaling: { type: 'longrope' } });
use(logits, attention, qProj, kProj, loss, accuracy, text, info, viaModels, err);
model.free();
fetched.free();

// ---- 16-bit storage (issue 11): tensors of a dtype, and the dtype flowing into calls ------------------------------
const h16 = pe.tensor(2 * 3 * 64, { dtype: 'float16' });
type _h16 = Expect<Equal<typeof h16, Tensor<'float16'>>>;
type _h16array = Expect<Equal<typeof h16.array, Uint16Array>>;
type _h16dtype = Expect<Equal<typeof h16.dtype, 'float16'>>;
const b16 = pe.tensor(Float32Array.of(1, 2), { dtype: 'bfloat16' });
const b16bits = pe.tensor(new Uint16Array(4), { dtype: 'bfloat16' });
type _b16 = Expect<Equal<typeof b16, Tensor<'bfloat16'>>>;
const f32t = pe.tensor(4, { dtype: 'float32' });
type _f32t = Expect<Equal<typeof f32t.array, Float32Array>>;
// @ts-expect-error a Uint16Array needs a 16-bit dtype
pe.tensor(new Uint16Array(4));
const h16rot = r1.apply(h16, { shape: [1, 2, 3, 64] }); // its own dtype
type _h16rot = Expect<Equal<typeof h16rot, Tensor<'float16'>>>;
r1.apply(new Uint16Array(64), { shape: [1, 1, 1, 64], dtype: 'bfloat16', k: b16bits.array.subarray(0, 0) });
// @ts-expect-error a 16-bit tensor is not float32 input
pe.alibiBias(1, 2, 2, { out: h16 });
const rerot16 = r1.rerotate(h16, -5, { dtype: 'float16' });
type _rerot16 = Expect<Equal<typeof rerot16, Tensor<'float16'>>>;
const cs16 = r1.cosSin([0, 1], { dtype: 'bfloat16' });
type _cs16 = Expect<Equal<typeof cs16.cos, Uint16Array>>;
const cs32 = r1.cosSin([0, 1], { dtype: 'float32' });
type _cs32 = Expect<Equal<typeof cs32.sin, Float32Array>>;
const csOut = r1.cosSin([0], { out: { cos: pe.tensor(32, { dtype: 'float16' }), sin: new Uint16Array(32) } });
type _csOut = Expect<Equal<typeof csOut.cos, Tensor<'float16'>>>;
const sinTab16: Uint16Array = pe.sinusoidal(4, 8, { dtype: 'float16' });
const sinAdd16: Uint16Array = pe.sinusoidal.add(new Uint16Array(8), { shape: [1, 1, 8], dtype: 'bfloat16' }); // x's own type back
const learned16 = pe.learned(new Uint16Array(16), { dModel: 8, dtype: 'float16' });
const l16dtype: 'float32' | 'float16' | 'bfloat16' = learned16.dtype;
learned16.add(b16, { shape: [1, 1, 2] });
use(sinTab16, l16dtype, sinAdd16);
use(b16, b16bits);

use(simd, bytes);

// ---- Multimodal: M-RoPE, the position-id builder, 2D vision RoPE, config.json (issue 13) --------------------------
declare const qwenVl: Record<string, unknown>;
const mr: Rope = pe.rope({ headDim: 128, base: 1e6, mrope: { section: [16, 24, 24], interleaved: false } });
const mrPos = pe.mropePositions([[1, 2, 3]], { config: qwenVl, imageGridThw: [[1, 4, 4]] });
type _mrPos = Expect<Equal<typeof mrPos.positions, Int32Array>>;
mr.apply(new Float32Array(3 * 128), { shape: [1, 3, 1, 128], positions: mrPos.positions });
mr.rerotate(new Float32Array(128), [1, 0, 0]);
const mrOut = pe.attention(qa, ka, va, { shape: { heads: 8, kvHeads: 2, qLen: 1, kLen: 16, headDim: 128 }, rope: mr, positions: { q: new Int32Array(3), k: new Int32Array(48) }, causal: true });
use(mrOut.out);
const specVl: HFPositionSpec = pe.fromHFConfig(qwenVl);
const vision: HFVision | undefined = specVl.vision;
if (vision !== undefined && vision.kind !== 'learned' && vision.kind !== 'unknown') {
  const vr: Rope2d = vision.rope;
  use(vr.cosSin({ gridH: 2, gridW: 2 }).cos, vision.headDim, vision.spatialMergeSize);
}
const visRope: Rope2d = pe.ropeFromHFConfig(qwenVl, { part: 'vision' });
const textRope: Rope = pe.ropeFromHFConfig(qwenVl, { part: 'text' });
use(visRope.kind, textRope.mrope);
// @ts-expect-error part is 'text' or 'vision'
pe.ropeFromHFConfig(qwenVl, { part: 'audio' });
const vis2: Rope2d = pe.rope2d({ kind: 'qwen2-vl', headDim: 80, spatialMergeSize: 2 });
vis2.free();
