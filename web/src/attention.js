// attention.js — pe.attention(q, k, v, options): fused scaled dot-product attention over c/src/attention.c,
//
//   out = softmax(scale · Q Kᵀ + bias) · V                 (Vaswani et al. 2017, 3.2.1)
//
// with the online softmax blocked over keys (Milakov & Gimelshein 2018; FlashAttention, Dao et al. 2022), so
// no (qLen × kLen) matrix exists unless `returnWeights` asks for one; RoPE (a pe.rope object: q and k are
// rotated on copies in the C core's scratch; with `kRotated`, k is a cache of keys already rotated, e.g. by
// rope.apply, and only q is rotated; an M-RoPE rope rotates by positions { q, k } of three streams in
// attention-mrope.js before the core, which then masks by token order) and ALiBi (slopes, no bias tensor) folded in; causal masking;
// grouped-query / multi-query attention (kvHeads dividing heads); qLen != kLen for decoding against a cache.
//
// Memory per call: copies of q, k, v and out when they are plain Float32Arrays (none for pe.tensor inputs),
// the C core's scratch (pe_attention_scratch_size: 0 without RoPE, rotated q and k plus cos/sin tables with
// it, q's only with kRotated), and the (batch, heads, qLen, kLen) weights only when requested. All of it lives in scratch slots that
// are reused from call to call, so the steady state allocates nothing and nothing grows with qLen · kLen.
//
// Positions: by default key j sits at position j and query i at kLen - qLen + i (the last qLen positions:
// decoding with a cache). They drive the causal mask (key j visible to query i iff kpos[j] <= qpos[i]),
// ALiBi (slope · (kpos[j] - qpos[i])) and RoPE. A fully masked query row (possible with causal and explicit
// positions, or qLen > kLen) gives an all-zero output row and an all-zero weights row.
//
// Real batches, in one call: positions { q, k } shared or per sequence (batch·qLen / batch·kLen), `mask`
// (batch·kLen, non-zero = attend) with `causal`, an additive `bias` of `biasShape` [1|batch, 1|heads, 1|qLen,
// kLen], `shape.vHeadDim` for v and out, `queryScale` (an array of qLen or batch·qLen factors, or the Llama 4
// temperature / llama_4_scaling_beta rule that pe.fromHFConfig puts in layer.queryScale, evaluated at the cache
// positions kLen − qLen + i as HF does), and views: `strides: { q, k, v, out }` ({ batch, seq, heads } elements)
// and `offsets`, each array checked to reach its view's furthest element before anything runs. One array given
// as q, k and v (a fused QKV buffer) is copied into wasm memory once.

import { checkInt, checkEnum, checkOptions, checkKnownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import {
  SLOT,
  MAX_TENSOR_LENGTH,
  locateFloat32,
  float32Length,
  stageFloat32,
  returnFloat32,
  overlaps,
  copyOut,
  int32sLength,
  stageInt32s,
  int32RangeErrorAt,
} from './memory.js';
import { typedArrayTag, posesAsTypedArray, viewLength } from './typed-arrays.js';
import { ropeHandle, LAYOUTS } from './rope.js';
import { writeSlopes } from './alibi.js';
import { readLayout, limit } from './abi.js';
import { readMropeAttention, rotateMrope } from './attention-mrope.js';

const CONFIG_FIELDS = ['batch', 'heads', 'kv_heads', 'q_len', 'k_len', 'head_dim', 'layout', 'causal', 'scale',
  'alibi_slopes', 'rope', 'q_positions', 'k_positions', 'rope_seq_len', 'k_rotated', 'per_batch_positions',
  'key_mask', 'bias', 'bias_batch', 'bias_heads', 'bias_q_len', 'v_head_dim', 'q_scale', 'q_scale_per_batch',
  'q_strides', 'k_strides', 'v_strides', 'out_strides', 'q_offset', 'k_offset', 'v_offset', 'out_offset'];

const OPTION_KEYS = ['shape', 'layout', 'causal', 'rope', 'positions', 'mask', 'bias', 'biasShape', 'alibi', 'scale',
  'queryScale', 'kRotated', 'seqLen', 'dtype', 'returnWeights', 'out', 'strides', 'offsets'];
const SHAPE_KEYS = ['batch', 'heads', 'kvHeads', 'qLen', 'kLen', 'headDim', 'vHeadDim'];
const TENSORS = ['q', 'k', 'v', 'out'];
const STRIDE_KEYS = ['batch', 'seq', 'heads'];
const STRIDE_FIELDS = TENSORS.map((t) => `${t}_strides`);
const OFFSET_FIELDS = TENSORS.map((t) => `${t}_offset`);

/** Reads pe_attention_config's layout from the module once per instance. */
export function readAttentionLayout(ctx) {
  return readLayout(ctx, 'pe_abi_attention_config_layout', CONFIG_FIELDS);
}

const POSITION_BOUND = `an integer in [0, ${INT32_MAX}]`;

function writeConfig(ctx, c) {
  const { heap } = ctx;
  const { offsets: CFG, size } = ctx.attentionLayout;
  const cfg = heap.scratch(SLOT.CONFIG, size);
  heap.u8.fill(0, cfg, cfg + size);
  const dv = heap.dataView;
  const i32 = (name, v) => dv.setInt32(cfg + CFG[name], v ?? 0, true);
  const ptr = (name, v) => dv.setUint32(cfg + CFG[name], v ?? 0, true);
  i32('batch', c.batch);
  i32('heads', c.heads);
  i32('kv_heads', c.kvHeads);
  i32('q_len', c.qLen);
  i32('k_len', c.kLen);
  i32('head_dim', c.headDim);
  i32('layout', c.layout);
  i32('causal', c.causal ? 1 : 0);
  dv.setFloat32(cfg + CFG.scale, c.scale ?? 0, true);
  ptr('alibi_slopes', c.slopes);
  ptr('rope', c.rope);
  ptr('q_positions', c.qPos);
  ptr('k_positions', c.kPos);
  i32('rope_seq_len', c.seqLen);
  i32('k_rotated', c.kRotated ? 1 : 0);
  i32('per_batch_positions', c.perBatch ? 1 : 0);
  ptr('key_mask', c.mask);
  ptr('bias', c.bias);
  i32('bias_batch', c.biasShape?.[0]);
  i32('bias_heads', c.biasShape?.[1]);
  i32('bias_q_len', c.biasShape?.[2]);
  i32('v_head_dim', c.vHeadDim);
  ptr('q_scale', c.qScale);
  i32('q_scale_per_batch', c.qScalePerBatch ? 1 : 0);
  // int64 strides and offsets: values in [0, 2^30) (checked), so the low word holds them and the high word,
  // zeroed by the fill above, stays 0 (BigInt conversions would cost more than the rest of the call)
  for (let t = 0; t < 4; t++) {
    const v = c.views[TENSORS[t]];
    if (!v.given) continue;
    const at = cfg + CFG[STRIDE_FIELDS[t]];
    dv.setUint32(at, v.strides[0], true);
    dv.setUint32(at + 8, v.strides[1], true);
    dv.setUint32(at + 16, v.strides[2], true);
    dv.setUint32(cfg + CFG[OFFSET_FIELDS[t]], v.offset, true);
  }
  return cfg;
}

/** shape[key] (default dflt) checked to be an integer in [1, INT32_MAX]; the message is built only to throw. */
function dim(where, shape, key, dflt) {
  const v = shape[key] ?? dflt;
  if (typeof v === 'number' && (v | 0) === v && v > 0) return v;
  if (v === undefined) throw typeError(where, `options.shape.${key} must be an integer in [1, ${INT32_MAX}] (required)`, v);
  return checkInt(where, `options.shape.${key}`, v, 1, INT32_MAX); // throws
}

/** options.shape -> { batch, heads, kvHeads, qLen, kLen, headDim, vHeadDim }, checked. */
function readShape(where, shape) {
  const bound = 'options.shape must be an object { batch, heads, kvHeads, qLen, kLen, headDim, vHeadDim } of integers >= 1';
  if (shape === undefined || shape === null || typeof shape !== 'object' || Array.isArray(shape) || ArrayBuffer.isView(shape)) {
    throw typeError(where, bound, shape);
  }
  checkKnownKeys(where, 'options.shape', shape, SHAPE_KEYS);
  const batch = dim(where, shape, 'batch', 1);
  const heads = dim(where, shape, 'heads');
  const kvHeads = dim(where, shape, 'kvHeads', heads);
  const qLen = dim(where, shape, 'qLen');
  const kLen = dim(where, shape, 'kLen', qLen);
  const headDim = dim(where, shape, 'headDim');
  const vHeadDim = dim(where, shape, 'vHeadDim', headDim);
  if (heads % kvHeads !== 0) {
    throw new RangeError(
      `${where}: options.shape.kvHeads must divide options.shape.heads (${heads}) (grouped-query attention), got ${kvHeads}`,
    );
  }
  return { batch, heads, kvHeads, qLen, kLen, headDim, vHeadDim };
}

/**
 * options.positions -> { q, k, qLen/kLen names }, checked for form and length (each length read once; values are
 * checked when staged). Forms: an array-like of kLen key positions (queries take the last qLen of them, qLen <=
 * kLen: self-attention or decoding with a cache; `tail` is then true), or { q, k } with either part optional.
 */
function readPositions(where, positions, qLen, kLen, batch) {
  if (positions === undefined || positions === null) return { q: null, k: null, qName: '', kName: '', tail: false, qn: 0, kn: 0 };
  const tag = typedArrayTag(positions);
  const len = tag === undefined && !posesAsTypedArray(positions) && typeof positions === 'object' ? positions.length : undefined;
  if (tag !== undefined || posesAsTypedArray(positions) || typeof len === 'number') {
    const name = 'options.positions';
    const n = int32sLength(where, name, positions, POSITION_BOUND, len);
    if (n !== kLen) {
      throw new RangeError(
        `${where}: options.positions (an array) must hold the kLen (${kLen}) key positions, the queries taking the last qLen; got length ${n}`,
      );
    }
    if (qLen > kLen) {
      throw new RangeError(
        `${where}: options.positions as one array needs qLen <= kLen (queries are the last qLen keys); give { q, k } for qLen (${qLen}) > kLen (${kLen})`,
      );
    }
    return { q: null, k: positions, qName: name, kName: name, tail: true, qn: 0, kn: n };
  }
  if (typeof positions !== 'object') {
    throw typeError(where, 'options.positions must be an array of kLen key positions or an object { q, k }', positions);
  }
  checkKnownKeys(where, 'options.positions', positions, ['q', 'k']);
  const q = positions.q ?? null;
  const k = positions.k ?? null;
  let qn = 0;
  let kn = 0;
  if (q !== null) {
    qn = int32sLength(where, 'options.positions.q', q, POSITION_BOUND);
    if (qn !== qLen && qn !== batch * qLen) {
      throw new RangeError(`${where}: options.positions.q.length must equal qLen (${qLen}) (shared by the batch) or batch * qLen (${batch * qLen}) (one row per sequence), got ${qn}`);
    }
  }
  if (k !== null) {
    kn = int32sLength(where, 'options.positions.k', k, POSITION_BOUND);
    if (kn !== kLen && kn !== batch * kLen) {
      throw new RangeError(`${where}: options.positions.k.length must equal kLen (${kLen}) (shared by the batch) or batch * kLen (${batch * kLen}) (one row per sequence), got ${kn}`);
    }
  }
  return { q, k, qName: 'options.positions.q', kName: 'options.positions.k', tail: false, qn, kn };
}

/**
 * One tensor's view: strides (elements, [batch, seq, heads]; dense for the layout where 0 or not given) and
 * offset, and `end`, the furthest element + 1 it can touch (exact: every term < 2^53). `given`: strides or
 * offset were given (the array may then be longer than the dense size).
 */
function readView(where, o, t, bhsd, B, S, H, hd) {
  const st = o.strides?.[t];
  const off = o.offsets?.[t];
  const dense = [S * H * hd, bhsd ? hd : H * hd, bhsd ? S * hd : hd];
  const strides = [0, 0, 0];
  if (st !== undefined && st !== null) {
    if (typeof st !== 'object' || Array.isArray(st)) throw typeError(where, `options.strides.${t} must be an object { batch, seq, heads } of element strides`, st);
    checkKnownKeys(where, `options.strides.${t}`, st, STRIDE_KEYS);
    STRIDE_KEYS.forEach((key, a) => {
      if (st[key] !== undefined) strides[a] = checkInt(where, `options.strides.${t}.${key}`, st[key], 0, MAX_TENSOR_LENGTH);
    });
  }
  const offset = off === undefined || off === null ? 0 : checkInt(where, `options.offsets.${t}`, off, 0, MAX_TENSOR_LENGTH);
  const eff = strides.map((x, a) => x || dense[a]);
  const end = B === 0 || S === 0 ? 0 : offset + (B - 1) * eff[0] + (S - 1) * eff[1] + (H - 1) * eff[2] + hd;
  return { strides, offset, end, given: (st !== undefined && st !== null) || offset !== 0, dense: B * S * H * hd };
}

/** The length a float input must have: its dense size, or at least the view's end when strides/offsets are given. */
function locateView(heap, x, view, where, name) {
  if (!view.given) return { loc: locateFloat32(heap, x, view.dense, where, name), n: view.dense };
  const n = float32Length(heap, x, where, name);
  if (n < view.end) {
    throw new RangeError(`${where}: ${name} is too short for its view (options.strides / options.offsets): the furthest element it reaches is ${view.end - 1}, so length must be at least ${view.end}, got ${n}`);
  }
  return { loc: locateFloat32(heap, x, n, where, name, 'its length'), n };
}

/** Stages positions; a shared row is repeated per sequence when the other part is per sequence. */
function stagePositions(heap, slot, where, name, values, n, len, batch, perBatch) {
  if (!perBatch || n === batch * len) return stageInt32s(heap, slot, where, name, values, n, 0, INT32_MAX);
  const ptr = stageInt32s(heap, slot, where, name, values, n, 0, INT32_MAX); // checked once
  const row = heap.i32.slice(ptr >>> 2, (ptr >>> 2) + len);
  const all = heap.scratch(slot === SLOT.POS ? SLOT.POS : SLOT.KPOS, batch * len * 4, where, name);
  for (let b = 0; b < batch; b++) heap.i32.set(row, (all >>> 2) + b * len);
  return all;
}

const SCALE_RULES = {
  // Llama 4 NoPE layers (HF Llama4TextAttention): 1 + attn_scale * ln(floor((pos + 1) / floor_scale) + 1)
  llama4_temperature: { keys: ['type', 'floorScale', 'attnScale', 'at'], at: (r, p) => Math.log(Math.floor((p + 1) / r.floorScale) + 1) * r.attnScale + 1 },
  // Mistral / Ministral llama_4_scaling_beta: 1 + beta * ln(1 + floor(pos / original_max_position_embeddings))
  llama_4: { keys: ['type', 'beta', 'originalMaxPositionEmbeddings', 'at'], at: (r, p) => 1 + r.beta * Math.log(1 + Math.floor(p / r.originalMaxPositionEmbeddings)) },
};

/** options.queryScale -> float32 scales staged, { ptr, perBatch } (or ptr 0). */
function stageQueryScale(ctx, where, qs, s) {
  const { heap } = ctx;
  if (qs === undefined || qs === null) return { ptr: 0, perBatch: false };
  const name = 'options.queryScale';
  if (typeof qs === 'object' && typedArrayTag(qs) === undefined && !Array.isArray(qs) && !posesAsTypedArray(qs)) {
    const rule = SCALE_RULES[qs.type];
    if (rule === undefined) throw typeError(where, `${name}.type must be one of ${Object.keys(SCALE_RULES).join(', ')} (or give an array of qLen or batch * qLen scales)`, qs.type);
    checkKnownKeys(where, name, qs, rule.keys);
    for (const key of rule.keys.slice(1, 3)) {
      const v = qs[key];
      const positive = key !== 'attnScale' && key !== 'beta';
      if (typeof v !== 'number' || !Number.isFinite(v) || (positive && !(v > 0))) {
        throw (typeof v === 'number' ? rangeError : typeError)(where, `${name}.${key} must be a finite number${positive ? ' > 0' : ''}`, v);
      }
    }
    // evaluated at the cache positions kLen - qLen + i, as HF does (cache_position, not the per-row position_ids)
    const ptr = heap.scratch(SLOT.QSCALE, s.qLen * 4, where, name);
    const f = heap.f32;
    for (let i = 0; i < s.qLen; i++) f[(ptr >>> 2) + i] = rule.at(qs, s.kLen - s.qLen + i);
    return { ptr, perBatch: false };
  }
  const n = typedArrayTag(qs) === 'Float32Array' ? viewLength(qs) : numbersLengthOf(where, name, qs);
  if (n !== s.qLen && n !== s.batch * s.qLen) {
    throw new RangeError(`${where}: ${name}.length must equal qLen (${s.qLen}) or batch * qLen (${s.batch * s.qLen}), got ${n}`);
  }
  const ptr = heap.scratch(SLOT.QSCALE, n * 4, where, name);
  const f = heap.f32;
  for (let i = 0; i < n; i++) {
    const v = qs[i];
    if (typeof v !== 'number') throw typeError(where, `${name}[${i}] must be a finite number`, v);
    if (!Number.isFinite(Math.fround(v))) throw rangeError(where, `${name}[${i}] must be finite in float32`, v);
    f[(ptr >>> 2) + i] = v;
  }
  return { ptr, perBatch: n !== s.qLen };
}

function numbersLengthOf(where, name, a) {
  if (typeof a !== 'object' || typeof a.length !== 'number') throw typeError(where, `${name} must be a Float32Array or an array of numbers, or a scale rule { type, ... }`, a);
  return a.length;
}

/** options.bias / biasShape -> { loc, shape } checked (shape [b, h, q, kLen] with b in {1, batch}, h in {1, heads}, q in {1, qLen}). */
function readBias(heap, where, o, s) {
  if (o.bias === undefined || o.bias === null) {
    if (o.biasShape !== undefined && o.biasShape !== null) throw new TypeError(`${where}: options.biasShape is given without options.bias`);
    return null;
  }
  let shape = [s.batch, s.heads, s.qLen, s.kLen];
  if (o.biasShape !== undefined && o.biasShape !== null) {
    const bs = o.biasShape;
    if (!Array.isArray(bs) || bs.length !== 4) throw typeError(where, 'options.biasShape must be an array [b, h, qLen, kLen]', bs);
    const allowed = [[1, s.batch], [1, s.heads], [1, s.qLen], [s.kLen]];
    const names = ['batch', 'heads', 'qLen', 'kLen'];
    shape = bs.map((v, a) => {
      if (typeof v !== 'number' || !allowed[a].includes(v)) {
        throw (typeof v === 'number' ? rangeError : typeError)(where, `options.biasShape[${a}] must be ${[...new Set(allowed[a])].join(' or ')} (1 or ${names[a]})`, v);
      }
      return v;
    });
  }
  const n = shape[0] * shape[1] * shape[2] * shape[3];
  return { loc: locateFloat32(heap, o.bias, n, where, 'options.bias', `the product of options.biasShape [${shape.join(', ')}]`), shape, n };
}

// The C core refuses an out view whose head vectors overlap (the JS checks left nothing else for PE_ERR_SHAPE).
function outViewError(where) {
  return new RangeError(`${where}: options.strides.out must not make two output head vectors overlap (each is written once)`);
}

/** pe.attention(q, k, v, options) -> { out, weights? } */
export function attention(ctx, q, k, v, options) {
  const where = 'attention';
  const { heap, exports: ex } = ctx;
  if (options === undefined || options === null) {
    throw typeError(where, 'options must be an object with options.shape { batch, heads, kvHeads, qLen, kLen, headDim }', options);
  }
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, OPTION_KEYS);
  for (const key of ['strides', 'offsets']) {
    const x = o[key];
    if (x === undefined || x === null) continue;
    if (typeof x !== 'object' || Array.isArray(x)) throw typeError(where, `options.${key} must be an object { q, k, v, out }`, x);
    checkKnownKeys(where, `options.${key}`, x, TENSORS);
  }
  if (o.dtype !== undefined && o.dtype !== 'float32') {
    throw rangeError(where, "options.dtype must be 'float32' (16-bit storage for attention is not built yet)", o.dtype);
  }
  const s = readShape(where, o.shape);
  const layoutName = checkEnum(where, 'options.layout', o.layout ?? 'bshd', LAYOUTS);
  const layout = limit(ctx.limits, `PE_LAYOUT_${layoutName.toUpperCase()}`);
  const bhsd = layoutName === 'bhsd';
  const causal = o.causal ?? false;
  if (typeof causal !== 'boolean') throw typeError(where, 'options.causal must be a boolean', causal);
  const returnWeights = o.returnWeights ?? false;
  if (typeof returnWeights !== 'boolean') throw typeError(where, 'options.returnWeights must be a boolean', returnWeights);
  const kRotated = o.kRotated ?? false;
  if (typeof kRotated !== 'boolean') throw typeError(where, 'options.kRotated must be a boolean', kRotated);

  // scale: the C core reads a float32 and treats 0 as "1/sqrt(headDim)", so 0 and values that round to 0 or
  // overflow in float32 are refused rather than silently replaced.
  let scale;
  if (o.scale !== undefined && o.scale !== null) {
    const sb = 'options.scale must be a finite number other than 0, within float32 range (omit it for 1/sqrt(headDim))';
    if (typeof o.scale !== 'number') throw typeError(where, sb, o.scale);
    const f = Math.fround(o.scale);
    if (!Number.isFinite(f) || f === 0) throw rangeError(where, sb, o.scale);
    scale = o.scale;
  }

  const nQ = s.batch * s.heads * s.qLen * s.headDim;
  const nK = s.batch * s.kvHeads * s.kLen * s.headDim;
  const nV = s.batch * s.kvHeads * s.kLen * s.vHeadDim;
  const nO = s.batch * s.heads * s.qLen * s.vHeadDim;
  for (const [n, what] of [[nQ, 'batch * heads * qLen * headDim (the size of q)'], [nK, 'batch * kvHeads * kLen * headDim (the size of k)'],
    [nV, 'batch * kvHeads * kLen * vHeadDim (the size of v)'], [nO, 'batch * heads * qLen * vHeadDim (the size of out)']]) {
    if (n > MAX_TENSOR_LENGTH) throw new RangeError(`${where}: ${what} must be at most ${MAX_TENSOR_LENGTH}, got ${n}`);
  }
  const nW = s.batch * s.heads * s.qLen * s.kLen;
  if (returnWeights && nW > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: batch * heads * qLen * kLen (the size of the weights) must be at most ${MAX_TENSOR_LENGTH} with returnWeights, got ${nW}`);
  }

  let rope = null;
  let mrope = null; // an M-RoPE rope: attention-mrope.js rotates q and k by three streams, the core gets no rope
  if (o.rope !== undefined && o.rope !== null) {
    rope = ropeHandle(ctx, o.rope, where, 'options.rope', true);
    if (rope.headDim !== s.headDim) {
      throw new RangeError(`${where}: options.shape.headDim must equal options.rope's headDim ${rope.headDim}, got ${s.headDim}`);
    }
    if (rope.mrope !== null) {
      mrope = readMropeAttention(rope.mrope, where, o, s, kRotated);
      rope = null;
    }
  }
  const alibi = o.alibi ?? false; // true, false, or slopes (checked, each length and element read once, by writeSlopes)
  if (typeof alibi !== 'boolean' && (alibi === null || typeof alibi !== 'object')) {
    throw typeError(where, `options.alibi must be true (standard slopes), false, or a Float32Array of ${s.heads} slopes (one per query head)`, alibi);
  }
  const pos = readPositions(where, mrope === null ? o.positions : null, s.qLen, s.kLen, s.batch);
  const perBatch = s.batch > 1 && ((pos.q !== null && pos.qn !== s.qLen) || (pos.k !== null && !pos.tail && pos.kn !== s.kLen));
  if (rope !== null && pos.q === null && !pos.tail && s.qLen > s.kLen) {
    throw new RangeError(
      `${where}: with options.rope and default positions qLen (${s.qLen}) must be <= kLen (${s.kLen}) (query i sits at kLen - qLen + i, which must be >= 0); give options.positions.q`,
    );
  }
  let seqLen = 0;
  if (o.seqLen !== undefined && o.seqLen !== null) seqLen = checkInt(where, 'options.seqLen', o.seqLen, 1, INT32_MAX);
  let maskN = 0;
  if (o.mask !== undefined && o.mask !== null) {
    maskN = int32sLength(where, 'options.mask', o.mask, 'an integer (non-zero = attend)');
    if (maskN !== s.batch * s.kLen) throw new RangeError(`${where}: options.mask.length must equal batch * kLen (${s.batch * s.kLen}) (HF's attention_mask), got ${maskN}`);
  }

  // Views, then every float input located before any allocation (an allocation may detach a caller's view of wasm memory).
  const views = {
    q: readView(where, o, 'q', bhsd, s.batch, s.qLen, s.heads, s.headDim),
    k: readView(where, o, 'k', bhsd, s.batch, s.kLen, s.kvHeads, s.headDim),
    v: readView(where, o, 'v', bhsd, s.batch, s.kLen, s.kvHeads, s.vHeadDim),
    out: readView(where, o, 'out', bhsd, s.batch, s.qLen, s.heads, s.vHeadDim),
  };
  const out = o.out ?? null;
  if (out === null && views.out.given) throw new TypeError(`${where}: options.strides.out / options.offsets.out need options.out (the array they address)`);
  const lq = locateView(heap, q, views.q, where, 'q');
  const lk = locateView(heap, k, views.k, where, 'k');
  const lv = locateView(heap, v, views.v, where, 'v');
  const lo = out === null ? { loc: -1, n: nO } : locateView(heap, out, views.out, where, 'options.out');
  const bias = readBias(heap, where, o, s);
  if (out !== null) {
    for (const [name, x, l] of [['q', q, lq], ['k', k, lk], ['v', v, lv]]) {
      if (x === out || (lo.loc !== -1 && l.loc !== -1 && overlaps(lo.loc, lo.n * 4, l.loc, l.n * 4))) {
        throw new RangeError(`${where}: options.out must not overlap ${name} (it is the accumulator)`);
      }
    }
  }

  // Small inputs next (they are checked while written), then the big copies.
  let slopes = 0;
  if (alibi === true) {
    slopes = heap.scratch(SLOT.SLOPES, s.heads * 4);
    const st = ex.pe_alibi_slopes(slopes, s.heads);
    if (st !== 0) throw ctx.statusError(where, st);
  } else if (alibi !== false) {
    slopes = writeSlopes(ctx, where, 'options.alibi', alibi, s.heads);
  }
  // Positions are staged once; in the one-array form the query positions are the tail of the staged keys.
  const kPos = pos.k === null ? 0 : stagePositions(heap, SLOT.KPOS, where, pos.kName, pos.k, pos.kn, s.kLen, s.batch, perBatch);
  const qPos = pos.tail
    ? kPos + (s.kLen - s.qLen) * 4
    : pos.q === null
      ? 0
      : stagePositions(heap, SLOT.POS, where, pos.qName, pos.q, pos.qn, s.qLen, s.batch, perBatch);
  const mask = maskN === 0 ? 0 : stageInt32s(heap, SLOT.MASK, where, 'options.mask', o.mask, maskN, -(2 ** 31), INT32_MAX);
  const qScale = stageQueryScale(ctx, where, o.queryScale, s);

  // Big copies; one array given as several of q, k, v (a fused QKV buffer) is copied once.
  let qPtr = stageFloat32(heap, q, lq.loc, lq.n, SLOT.Q, where);
  let kPtr = k === q ? qPtr : stageFloat32(heap, k, lk.loc, lk.n, SLOT.K, where);
  const vPtr = v === q ? qPtr : v === k ? kPtr : stageFloat32(heap, v, lv.loc, lv.n, SLOT.V, where);
  const biasPtr = bias === null ? 0 : stageFloat32(heap, o.bias, bias.loc, bias.n, SLOT.BIAS, where);
  // a staged out with a view is copied in too, so the elements outside the view come back unchanged
  const outPtr = out === null ? heap.scratch(SLOT.RESULT, nO * 4, where, 'the output') : stageFloat32(heap, out, lo.loc, lo.n, SLOT.RESULT, where, views.out.given);
  const weights = returnWeights ? heap.scratch(SLOT.WEIGHTS, nW * 4, where, 'the weights (batch * heads * qLen * kLen floats)') : 0;
  if (mrope !== null) ({ qPtr, kPtr } = rotateMrope(ctx, mrope, { qPtr, kPtr, vPtr, lq, lk, views, s, layout, seqLen }, where));

  const cfg = writeConfig(ctx, {
    ...s, layout, causal, scale, slopes, rope: rope?.ptr, qPos, kPos, seqLen, kRotated, perBatch, mask,
    bias: biasPtr, biasShape: bias?.shape, qScale: qScale.ptr, qScalePerBatch: qScale.perBatch, views,
  });
  const sizePtr = heap.scratch(SLOT.OUT, 16);
  let status = ex.pe_attention_scratch_size(sizePtr, cfg);
  if (status === ctx.status.PE_ERR_SHAPE && views.out.given) throw outViewError(where);
  if (status !== 0) throw ctx.statusError(where, status);
  const nScratch = heap.dataView.getUint32(sizePtr, true);
  const qRows = pos.q !== null && perBatch ? s.batch * s.qLen : s.qLen;
  const kRows = pos.k !== null && perBatch ? s.batch * s.kLen : s.kLen;
  const expected = rope === null ? 0 : kRotated ? nQ + 2 * qRows * rope.nFreq : nQ + nK + 2 * (qRows + kRows) * rope.nFreq;
  if (nScratch !== expected) {
    throw new Error(
      `posenc: the wasm module's pe_attention_config does not match this wrapper (scratch ${nScratch} floats, expected ${expected}); rebuild the wasm and the JS together`,
    );
  }
  const scratch = nScratch > 0 ? heap.scratch(SLOT.WORK, nScratch * 4, where, 'the attention scratch') : 0;

  status = ex.pe_attention(outPtr, weights, qPtr, kPtr, vPtr, scratch, nScratch, cfg);
  if (status !== 0) {
    if (status === ctx.status.PE_ERR_POSITION) {
      const e =
        (kPos !== 0 && int32RangeErrorAt(heap, kPos, perBatch ? s.batch * s.kLen : s.kLen, where, pos.kName, 0, INT32_MAX)) ||
        (qPos !== 0 && !pos.tail && int32RangeErrorAt(heap, qPos, perBatch ? s.batch * s.qLen : s.qLen, where, pos.qName, 0, INT32_MAX));
      if (e) throw e;
    }
    throw ctx.statusError(where, status);
  }
  const result = { out: out === null ? copyOut(heap, outPtr, nO) : returnFloat32(heap, out, lo.loc, outPtr, lo.n) };
  if (returnWeights) result.weights = copyOut(heap, weights, nW);
  return result;
}
