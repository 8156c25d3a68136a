// attention.js — pe.attention(q, k, v, options): fused scaled dot-product attention over c/src/attention.c,
//
//   out = softmax(scale · Q Kᵀ + bias) · V                 (Vaswani et al. 2017, 3.2.1)
//
// with the online softmax blocked over keys (Milakov & Gimelshein 2018; FlashAttention, Dao et al. 2022), so
// no (qLen × kLen) matrix exists unless `returnWeights` asks for one; RoPE (a pe.rope object: q and k are
// rotated on copies in the C core's scratch; with `kRotated`, k is a cache of keys already rotated, e.g. by
// rope.apply, and only q is rotated) and ALiBi (slopes, no bias tensor) folded in; causal masking;
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

import { checkInt, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import {
  SLOT,
  MAX_TENSOR_LENGTH,
  locateFloat32,
  stageFloat32,
  returnFloat32,
  overlaps,
  copyOut,
  int32sLength,
  stageInt32s,
  int32RangeErrorAt,
} from './memory.js';
import { typedArrayTag, posesAsTypedArray } from './typed-arrays.js';
import { ropeHandle, LAYOUTS } from './rope.js';
import { writeSlopes } from './alibi.js';
import { readLayout, limit } from './abi.js';

const CONFIG_FIELDS = ['batch', 'heads', 'kv_heads', 'q_len', 'k_len', 'head_dim', 'layout', 'causal', 'scale',
  'alibi_slopes', 'rope', 'q_positions', 'k_positions', 'rope_seq_len', 'k_rotated'];

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
  return cfg;
}

const ATTENTION_KEYS = knownKeys(
  'shape', 'layout', 'causal', 'rope', 'positions', 'alibi', 'scale', 'kRotated', 'returnWeights', 'out', 'seqLen',
);
const SHAPE_KEYS = knownKeys('batch', 'heads', 'kvHeads', 'qLen', 'kLen', 'headDim');
const POSITIONS_KEYS = knownKeys('q', 'k');

/** shape[key] (default dflt) checked to be an integer in [1, INT32_MAX]; the message is built only to throw. */
function dim(where, shape, key, dflt) {
  const v = shape[key] ?? dflt;
  if (typeof v === 'number' && (v | 0) === v && v > 0) return v;
  if (v === undefined) throw typeError(where, `options.shape.${key} must be an integer in [1, ${INT32_MAX}] (required)`, v);
  return checkInt(where, `options.shape.${key}`, v, 1, INT32_MAX); // throws
}

/** options.shape -> { batch, heads, kvHeads, qLen, kLen, headDim }, checked. */
function readShape(where, shape) {
  const bound = 'options.shape must be an object { batch, heads, kvHeads, qLen, kLen, headDim } of integers >= 1';
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
  if (heads % kvHeads !== 0) {
    throw new RangeError(
      `${where}: options.shape.kvHeads must divide options.shape.heads (${heads}) (grouped-query attention), got ${kvHeads}`,
    );
  }
  return { batch, heads, kvHeads, qLen, kLen, headDim };
}

/**
 * options.positions -> { q, k, qLen/kLen names }, checked for form and length (each length read once; values are
 * checked when staged). Forms: an array-like of kLen key positions (queries take the last qLen of them, qLen <=
 * kLen: self-attention or decoding with a cache; `tail` is then true), or { q, k } with either part optional.
 */
function readPositions(where, positions, qLen, kLen) {
  if (positions === undefined || positions === null) return { q: null, k: null, qName: '', kName: '', tail: false };
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
    return { q: null, k: positions, qName: name, kName: name, tail: true };
  }
  if (typeof positions !== 'object') {
    throw typeError(where, 'options.positions must be an array of kLen key positions or an object { q, k }', positions);
  }
  checkKnownKeys(where, 'options.positions', positions, POSITIONS_KEYS);
  const q = positions.q ?? null;
  const k = positions.k ?? null;
  if (q !== null) {
    const n = int32sLength(where, 'options.positions.q', q, POSITION_BOUND);
    if (n !== qLen) throw new RangeError(`${where}: options.positions.q.length must equal qLen (${qLen}), got ${n}`);
  }
  if (k !== null) {
    const n = int32sLength(where, 'options.positions.k', k, POSITION_BOUND);
    if (n !== kLen) throw new RangeError(`${where}: options.positions.k.length must equal kLen (${kLen}), got ${n}`);
  }
  return { q, k, qName: 'options.positions.q', kName: 'options.positions.k', tail: false };
}

/** pe.attention(q, k, v, options) -> { out, weights? } */
export function attention(ctx, q, k, v, options) {
  const where = 'attention';
  const { heap, exports: ex } = ctx;
  if (options === undefined || options === null) {
    throw typeError(where, 'options must be an object with options.shape { batch, heads, kvHeads, qLen, kLen, headDim }', options);
  }
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, ATTENTION_KEYS);
  const s = readShape(where, o.shape);
  const layout = limit(ctx.limits, `PE_LAYOUT_${checkEnum(where, 'options.layout', o.layout ?? 'bshd', LAYOUTS).toUpperCase()}`);
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
  if (nQ > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: batch * heads * qLen * headDim (the size of q) must be at most ${MAX_TENSOR_LENGTH}, got ${nQ}`);
  }
  if (nK > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: batch * kvHeads * kLen * headDim (the size of k and v) must be at most ${MAX_TENSOR_LENGTH}, got ${nK}`);
  }
  const nW = s.batch * s.heads * s.qLen * s.kLen;
  if (returnWeights && nW > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: batch * heads * qLen * kLen (the size of the weights) must be at most ${MAX_TENSOR_LENGTH} with returnWeights, got ${nW}`);
  }

  let rope = null;
  if (o.rope !== undefined && o.rope !== null) {
    rope = ropeHandle(ctx, o.rope, where, 'options.rope');
    if (rope.headDim !== s.headDim) {
      throw new RangeError(`${where}: options.shape.headDim must equal options.rope's headDim ${rope.headDim}, got ${s.headDim}`);
    }
  }
  const alibi = o.alibi ?? false; // true, false, or slopes (checked, each length and element read once, by writeSlopes)
  if (typeof alibi !== 'boolean' && (alibi === null || typeof alibi !== 'object')) {
    throw typeError(where, `options.alibi must be true (standard slopes), false, or a Float32Array of ${s.heads} slopes (one per query head)`, alibi);
  }
  const pos = readPositions(where, o.positions, s.qLen, s.kLen);
  if (rope !== null && pos.q === null && !pos.tail && s.qLen > s.kLen) {
    throw new RangeError(
      `${where}: with options.rope and default positions qLen (${s.qLen}) must be <= kLen (${s.kLen}) (query i sits at kLen - qLen + i, which must be >= 0); give options.positions.q`,
    );
  }
  let seqLen = 0;
  if (o.seqLen !== undefined && o.seqLen !== null) seqLen = checkInt(where, 'options.seqLen', o.seqLen, 1, INT32_MAX);

  // Locate every float input before any allocation (an allocation may detach a caller's view of wasm memory).
  const lq = locateFloat32(heap, q, nQ, where, 'q');
  const lk = locateFloat32(heap, k, nK, where, 'k');
  const lv = locateFloat32(heap, v, nK, where, 'v');
  const out = o.out ?? null;
  const lo = out === null ? -1 : locateFloat32(heap, out, nQ, where, 'options.out');
  if (lo !== -1) {
    for (const [name, l, n] of [['q', lq, nQ], ['k', lk, nK], ['v', lv, nK]]) {
      if (l !== -1 && overlaps(lo, nQ * 4, l, n * 4)) {
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
  const kPos = pos.k === null ? 0 : stageInt32s(heap, SLOT.KPOS, where, pos.kName, pos.k, s.kLen, 0, INT32_MAX);
  const qPos = pos.tail
    ? kPos + (s.kLen - s.qLen) * 4
    : pos.q === null
      ? 0
      : stageInt32s(heap, SLOT.POS, where, pos.qName, pos.q, s.qLen, 0, INT32_MAX);

  const qPtr = stageFloat32(heap, q, lq, nQ, SLOT.Q, where);
  const kPtr = stageFloat32(heap, k, lk, nK, SLOT.K, where);
  const vPtr = stageFloat32(heap, v, lv, nK, SLOT.V, where);
  const outPtr = out === null ? heap.scratch(SLOT.RESULT, nQ * 4, where, 'the output') : stageFloat32(heap, out, lo, nQ, SLOT.RESULT, where, false);
  const weights = returnWeights ? heap.scratch(SLOT.WEIGHTS, nW * 4, where, 'the weights (batch * heads * qLen * kLen floats)') : 0;

  const cfg = writeConfig(ctx, { ...s, layout, causal, scale, slopes, rope: rope?.ptr, qPos, kPos, seqLen, kRotated });
  const sizePtr = heap.scratch(SLOT.OUT, 16);
  let status = ex.pe_attention_scratch_size(sizePtr, cfg);
  if (status !== 0) throw ctx.statusError(where, status);
  const nScratch = heap.dataView.getUint32(sizePtr, true);
  const expected = rope === null ? 0 : kRotated ? nQ + 2 * s.qLen * rope.nFreq : nQ + nK + 2 * (s.qLen + s.kLen) * rope.nFreq;
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
        (kPos !== 0 && int32RangeErrorAt(heap, kPos, s.kLen, where, pos.kName, 0, INT32_MAX)) ||
        (qPos !== 0 && !pos.tail && int32RangeErrorAt(heap, qPos, s.qLen, where, pos.qName, 0, INT32_MAX));
      if (e) throw e;
    }
    throw ctx.statusError(where, status);
  }
  const result = { out: out === null ? copyOut(heap, outPtr, nQ) : returnFloat32(heap, out, lo, outPtr, nQ) };
  if (returnWeights) result.weights = copyOut(heap, weights, nW);
  return result;
}
