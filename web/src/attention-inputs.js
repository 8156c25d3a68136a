// attention-inputs.js — pe.attention's option readers: the named shape, positions (shared or per sequence, or
// the one-array form whose queries are the last qLen keys), each tensor's view (strides, offsets, furthest
// element), the key mask, the bias and its broadcast shape, and queryScale (an array or a rule evaluated at the
// cache positions). Each reads every length once, names the argument and the bound in its errors, and stages
// what it checks through memory.js; attention.js calls them in an order that locates every float input before
// anything is allocated.

import { checkInt, checkKnownKeys, knownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, locateFloat32, int32sLength, stageInt32s } from './memory.js';
import { typedArrayTag, posesAsTypedArray, viewLength, typedArraySet } from './typed-arrays.js';
import { dataLength, locateData } from './attention-data.js';

const SHAPE_KEYS = knownKeys('batch', 'heads', 'kvHeads', 'qLen', 'kLen', 'headDim', 'vHeadDim');
const STRIDE_KEYS = knownKeys('batch', 'seq', 'heads');
const POSITIONS_KEYS = knownKeys('q', 'k');
const POSITION_BOUND = `an integer in [0, ${INT32_MAX}]`;

/** shape[key] (default dflt) checked to be an integer in [1, INT32_MAX]; the message is built only to throw. */
function dim(where, shape, key, dflt) {
  const v = shape[key] ?? dflt;
  if (typeof v === 'number' && (v | 0) === v && v > 0) return v;
  if (v === undefined) throw typeError(where, `options.shape.${key} must be an integer in [1, ${INT32_MAX}] (required)`, v);
  return checkInt(where, `options.shape.${key}`, v, 1, INT32_MAX); // throws
}

/** options.shape -> { batch, heads, kvHeads, qLen, kLen, headDim, vHeadDim }, checked. */
export function readShape(where, shape) {
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
export function readPositions(where, positions, qLen, kLen, batch) {
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
  checkKnownKeys(where, 'options.positions', positions, POSITIONS_KEYS);
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
export function readView(where, o, t, bhsd, B, S, H, hd) {
  const st = o.strides?.[t];
  const off = o.offsets?.[t];
  const given = (st !== undefined && st !== null) || (off !== undefined && off !== null && off !== 0);
  // the usual call gives neither: its view is the dense one, whose end is its size (no arrays made per call)
  if (!given) return { strides: null, offset: 0, end: B === 0 || S === 0 ? 0 : B * S * H * hd, given: false, dense: B * S * H * hd };
  const strides = [0, 0, 0];
  if (st !== undefined && st !== null) {
    if (typeof st !== 'object' || Array.isArray(st)) throw typeError(where, `options.strides.${t} must be an object { batch, seq, heads } of element strides`, st);
    checkKnownKeys(where, `options.strides.${t}`, st, STRIDE_KEYS);
    STRIDE_KEYS.list.forEach((key, a) => {
      if (st[key] !== undefined) strides[a] = checkInt(where, `options.strides.${t}.${key}`, st[key], 0, MAX_TENSOR_LENGTH);
    });
  }
  const offset = off === undefined || off === null ? 0 : checkInt(where, `options.offsets.${t}`, off, 0, MAX_TENSOR_LENGTH);
  const dense = [S * H * hd, bhsd ? hd : H * hd, bhsd ? S * hd : hd];
  const eff = strides.map((x, a) => x || dense[a]);
  const end = B === 0 || S === 0 ? 0 : offset + (B - 1) * eff[0] + (S - 1) * eff[1] + (H - 1) * eff[2] + hd;
  return { strides, offset, end, given: (st !== undefined && st !== null) || offset !== 0, dense: B * S * H * hd };
}

/**
 * The length a data input (of pe_dtype dtype) must have: its dense size, or at least the view's end when
 * strides/offsets are given.
 */
export function locateView(heap, x, view, dtype, where, name) {
  if (!view.given) return { loc: locateData(heap, x, view.dense, dtype, where, name, 'the product of shape'), n: view.dense };
  const n = dataLength(heap, x, dtype, where, name);
  if (n < view.end) {
    throw new RangeError(`${where}: ${name} is too short for its view (options.strides / options.offsets): the furthest element it reaches is ${view.end - 1}, so length must be at least ${view.end}, got ${n}`);
  }
  return { loc: locateData(heap, x, n, dtype, where, name, 'its length'), n };
}

/** Stages positions; a shared row is repeated per sequence when the other part is per sequence. */
export function stagePositions(heap, slot, where, name, values, n, len, batch, perBatch) {
  if (!perBatch || n === batch * len) return stageInt32s(heap, slot, where, name, values, n, 0, INT32_MAX);
  const ptr = stageInt32s(heap, slot, where, name, values, n, 0, INT32_MAX); // checked once
  const row = heap.i32.slice(ptr >>> 2, (ptr >>> 2) + len);
  const all = heap.scratch(slot === SLOT.POS ? SLOT.POS : SLOT.KPOS, batch * len * 4, where, name);
  for (let b = 0; b < batch; b++) heap.i32.set(row, (all >>> 2) + b * len);
  return all;
}

const INT_ARRAYS = new Set(['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array']);

/**
 * Stages the key mask as int32 (0 = masked, anything else attends). An integer typed array is converted by the
 * engine in one set() (a Uint32Array's values past INT32_MAX wrap to negative ones, still non-zero), not element
 * by element; other array-likes are checked per element.
 */
export function stageMask(heap, where, m, n) {
  const tag = typedArrayTag(m);
  if (!INT_ARRAYS.has(tag)) return stageInt32s(heap, SLOT.MASK, where, 'options.mask', m, n, -(2 ** 31), INT32_MAX);
  if (heap.holds(m)) m = new globalThis[tag](m); // the scratch allocation may detach it
  const ptr = heap.scratch(SLOT.MASK, n * 4, where, 'options.mask');
  if (viewLength(m) !== n) throw new RangeError(`${where}: options.mask changed length while it was read (${n}, then ${viewLength(m)})`);
  typedArraySet(heap.i32, m, ptr >>> 2);
  return ptr;
}

const SCALE_RULES = {
  // Llama 4 NoPE layers (HF Llama4TextAttention): 1 + attn_scale * ln(floor((pos + 1) / floor_scale) + 1)
  llama4_temperature: { keys: ['type', 'floorScale', 'attnScale', 'at'], at: (r, p) => Math.log(Math.floor((p + 1) / r.floorScale) + 1) * r.attnScale + 1 },
  // Mistral / Ministral llama_4_scaling_beta: 1 + beta * ln(1 + floor(pos / original_max_position_embeddings))
  llama_4: { keys: ['type', 'beta', 'originalMaxPositionEmbeddings', 'at'], at: (r, p) => 1 + r.beta * Math.log(1 + Math.floor(p / r.originalMaxPositionEmbeddings)) },
};

/** options.queryScale -> float32 scales staged, { ptr, perBatch } (or ptr 0). */
export function stageQueryScale(ctx, where, qs, s) {
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
export function readBias(heap, where, o, s) {
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
