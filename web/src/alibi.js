// alibi.js — ALiBi (Press, Smith & Lewis 2022, "Train Short, Test Long: Attention with Linear Biases"):
// pe.alibiSlopes, pe.alibiBias and BLOOM's padded-batch form pe.alibiBiasFromMask, over c/src/alibi.c.
//
// Head h adds slope[h] * (key position - query position) to its attention logits. Slopes follow BLOOM's
// build_alibi_tensor: 2^(-8(h+1)/n) for n a power of two, the paper's interleaving otherwise (any n >= 1).
// pe.attention takes `alibi: true` (these slopes) or explicit slopes and adds the bias inside the kernel
// without materialising it; alibiBias() is for inspection and for code that builds its own attention.

import { checkInt, checkOptions, checkKnownKeys, knownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import {
  SLOT,
  MAX_TENSOR_LENGTH,
  copyOut,
  numbersLength,
  stageInt32s,
  int32RangeErrorAt,
  locateFloat32,
  returnFloat32,
} from './memory.js';
import { typedArrayTag } from './typed-arrays.js';

/**
 * Validates optional explicit slopes (a Float32Array or an array-like of finite numbers, length nHeads; each
 * element read once) and writes them as float32 into the SLOPES slot. Returns the pointer, or 0 for "the
 * standard slopes" (slopes undefined/null).
 */
export function writeSlopes(ctx, where, name, slopes, nHeads) {
  if (slopes === undefined || slopes === null) return 0;
  const { heap } = ctx;
  const bound = `a Float32Array (or array) of ${nHeads} finite numbers, one per head`;
  const n = numbersLength(where, name, slopes, bound);
  if (n !== nHeads) throw new RangeError(`${where}: ${name} must be ${bound} (heads = ${nHeads}), got length ${n}`);
  const tag = typedArrayTag(slopes);
  if (tag !== undefined && heap.holds(slopes)) slopes = new globalThis[tag](slopes); // scratch may detach it
  const ptr = heap.scratch(SLOT.SLOPES, nHeads * 4, where, name);
  const f32 = heap.f32;
  const base = ptr >>> 2;
  for (let h = 0; h < nHeads; h++) {
    const s = slopes[h];
    if (typeof s !== 'number') throw typeError(where, `${name}[${h}] must be a finite number`, s);
    const f = Math.fround(s);
    if (!Number.isFinite(f)) throw rangeError(where, `${name}[${h}] must be a finite number (in float32 range)`, s);
    f32[base + h] = f;
  }
  return ptr;
}

const BIAS_KEYS = knownKeys('causal', 'slopes', 'out');
const FROM_MASK_KEYS = knownKeys('shape', 'slopes');

function check(ctx, where, status) {
  if (status !== 0) throw ctx.statusError(where, status);
}

/** pe.alibiSlopes(nHeads) -> Float32Array(nHeads) */
export function alibiSlopes(ctx, nHeads) {
  const where = 'alibiSlopes';
  checkInt(where, 'nHeads', nHeads, 1, MAX_TENSOR_LENGTH);
  const { heap, exports: ex } = ctx;
  const ptr = heap.scratch(SLOT.RESULT, nHeads * 4, where, 'the slopes (nHeads floats)');
  check(ctx, where, ex.pe_alibi_slopes(ptr, nHeads));
  return copyOut(heap, ptr, nHeads);
}

/**
 * pe.alibiBias(nHeads, qLen, kLen, { causal, slopes, out }) -> Float32Array(nHeads * qLen * kLen):
 * bias[h, i, j] = slope[h] * (j - (kLen - qLen + i)); causal: -Infinity where j > kLen - qLen + i.
 * options.out (a Float32Array or pe.tensor of that length) receives the bias instead of a new array and is
 * returned; a tensor is written in place by the kernel (zero-copy).
 */
export function alibiBias(ctx, nHeads, qLen, kLen, options) {
  const where = 'alibiBias';
  checkInt(where, 'nHeads', nHeads, 1, INT32_MAX);
  checkInt(where, 'qLen', qLen, 1, INT32_MAX);
  checkInt(where, 'kLen', kLen, 1, INT32_MAX);
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, BIAS_KEYS);
  const causal = o.causal ?? false;
  if (typeof causal !== 'boolean') throw typeError(where, 'options.causal must be a boolean', causal);
  const total = nHeads * qLen * kLen;
  if (total > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: nHeads * qLen * kLen must be at most ${MAX_TENSOR_LENGTH}, got ${total}`);
  }
  const { heap, exports: ex } = ctx;
  // out is located before anything is allocated (an allocation may detach a view of wasm memory)
  const out = o.out ?? null;
  const outLoc = out === null ? -1 : locateFloat32(heap, out, total, where, 'options.out', 'nHeads * qLen * kLen');
  const slopesPtr = writeSlopes(ctx, where, 'options.slopes', o.slopes, nHeads);
  const ptr = outLoc !== -1 ? outLoc : heap.scratch(SLOT.RESULT, total * 4, where, 'the bias (nHeads * qLen * kLen floats)');
  check(ctx, where, ex.pe_alibi_bias(ptr, slopesPtr, nHeads, qLen, kLen, causal ? 1 : 0));
  return out === null ? copyOut(heap, ptr, total) : returnFloat32(heap, out, outLoc, ptr, total);
}

/** One mask value: 0/1 or a boolean, as 0/1. */
function maskValue(where, name, v) {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'number') throw typeError(where, `${name} must be 0 or 1`, v);
  if (v !== 0 && v !== 1) throw rangeError(where, `${name} must be 0 or 1`, v);
  return v;
}

/**
 * The mask as flat 0/1 data plus its [batch, seq]: nested [batch][seq] arrays (numbers 0/1 or booleans), or
 * flat data (an Int32Array, or an array-like of 0/1 or booleans) with options.shape [batch, seq] (default
 * [1, length]). Every length and element is read once. `flat` is an Int32Array the caller stages (a real
 * Int32Array argument is passed through unchecked: the C core checks it).
 */
function readMask(ctx, where, mask, shape) {
  const bound = 'an array of rows [batch][seq] of 0/1, or flat 0/1 data with options.shape [batch, seq]';
  const n = numbersLength(where, 'attentionMask', mask, bound);
  const first = Array.isArray(mask) && n > 0 ? mask[0] : undefined;
  const nested = first !== null && typeof first === 'object';
  let batch;
  let seq;
  let flat;
  if (nested) {
    if (shape !== undefined && shape !== null) {
      throw new TypeError(`${where}: options.shape is only for flat attentionMask data; got nested rows and a shape`);
    }
    batch = n;
    seq = numbersLength(where, 'attentionMask[0]', first, 'a row of 0/1 values');
    if (batch * seq > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: attentionMask must hold at most ${MAX_TENSOR_LENGTH} values, got ${batch} rows of ${seq}`);
    }
    flat = new Int32Array(batch * seq);
    for (let b = 0; b < batch; b++) {
      const row = b === 0 ? first : mask[b];
      const rowBound = `a row of ${seq} values 0/1`;
      if (row === null || typeof row !== 'object') throw typeError(where, `attentionMask[${b}] must be ${rowBound}`, row);
      const len = numbersLength(where, `attentionMask[${b}]`, row, rowBound);
      if (len !== seq) {
        throw new RangeError(`${where}: attentionMask rows must all have the length of attentionMask[0] (${seq}), got attentionMask[${b}].length ${len}`);
      }
      for (let j = 0; j < seq; j++) flat[b * seq + j] = maskValue(where, `attentionMask[${b}][${j}]`, row[j]);
    }
  } else {
    if (shape === undefined || shape === null) {
      batch = 1;
      seq = n;
    } else {
      if (typeof shape !== 'object' || typeof shape.length !== 'number') {
        throw typeError(where, 'options.shape must be [batch, seq] of integers >= 1', shape);
      }
      const sl = shape.length;
      if (sl !== 2) throw new RangeError(`${where}: options.shape must be [batch, seq] of integers >= 1, got length ${sl}`);
      batch = checkInt(where, 'options.shape[0] (batch)', shape[0], 1, INT32_MAX);
      seq = checkInt(where, 'options.shape[1] (seq)', shape[1], 1, INT32_MAX);
      if (batch * seq !== n) {
        throw new RangeError(`${where}: attentionMask.length must equal batch * seq (${batch * seq}), got ${n}`);
      }
    }
    if (typedArrayTag(mask) === 'Int32Array') {
      flat = mask;
    } else {
      flat = new Int32Array(n); // flat array-likes of booleans are accepted as 0/1, like nested rows
      for (let t = 0; t < n; t++) flat[t] = maskValue(where, `attentionMask[${t}]`, mask[t]);
    }
  }
  if (batch < 1 || seq < 1) {
    throw new RangeError(`${where}: attentionMask must have at least one row and one column, got [${batch}, ${seq}]`);
  }
  return { flat, n: batch * seq, batch, seq };
}

/**
 * pe.alibiBiasFromMask(nHeads, attentionMask, { shape, slopes }) -> Float32Array(batch * nHeads * seq), shaped
 * [batch * nHeads, 1, seq] as BLOOM's build_alibi_tensor: row b * nHeads + h holds slope[h] times each key's
 * position counted over the kept tokens, ((cumsum(mask) - 1) * mask)[b, j]; padded keys get 0.
 */
export function alibiBiasFromMask(ctx, nHeads, attentionMask, options) {
  const where = 'alibiBiasFromMask';
  checkInt(where, 'nHeads', nHeads, 1, INT32_MAX);
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, FROM_MASK_KEYS);
  const { flat, n, batch, seq } = readMask(ctx, where, attentionMask, o.shape);
  const total = batch * nHeads * seq;
  if (total > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: batch * nHeads * seq must be at most ${MAX_TENSOR_LENGTH}, got ${total}`);
  }
  const { heap, exports: ex } = ctx;
  const slopesPtr = writeSlopes(ctx, where, 'options.slopes', o.slopes, nHeads);
  const maskPtr = stageInt32s(heap, SLOT.POS, where, 'attentionMask', flat, n, 0, 1, '0 or 1');
  const ptr = heap.scratch(SLOT.RESULT, total * 4, where, 'the bias (batch * nHeads * seq floats)');
  const status = ex.pe_alibi_bias_from_mask(ptr, slopesPtr, maskPtr, batch, nHeads, seq);
  if (status !== 0) throw int32RangeErrorAt(heap, maskPtr, n, where, 'attentionMask', 0, 1, '0 or 1') ?? ctx.statusError(where, status);
  return copyOut(heap, ptr, total);
}
