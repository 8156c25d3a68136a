// rope-dtype.js — 16-bit storage for rope.apply: options.dtype 'float16' | 'bfloat16' (pe_rope_apply_config.dtype,
// c/src/f16.h). Data come as a Uint16Array holding the raw 16-bit patterns, or (float16 only) a Float16Array
// where the engine has one. They are copied into wasm memory, rotated there by the C core (widened exactly,
// float32 arithmetic, rounded to nearest even on store) and copied back: the array is rotated in place.

import { typeError, checkEnum } from './errors.js';
import { typedArrayTag, viewLength, isDetached } from './typed-arrays.js';
import { overlaps } from './memory.js';

export const DTYPES = Object.freeze(['float32', 'float16', 'bfloat16']);
/** pe_dtype values */
export const DTYPE_FLOAT32 = 0;
export const DTYPE_FLOAT16 = 1;
export const DTYPE_BFLOAT16 = 2;

const HAS_FLOAT16ARRAY = typeof globalThis.Float16Array === 'function';
const bytesOf = (a) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/**
 * The pe_dtype of options.dtype (undefined/null: float32, or float16 for a Float16Array x: the array's own type).
 * Throws a TypeError naming options.dtype for anything else.
 */
export function resolveDtype(where, dtype, x) {
  if (dtype === undefined || dtype === null) return HAS_FLOAT16ARRAY && typedArrayTag(x) === 'Float16Array' ? DTYPE_FLOAT16 : DTYPE_FLOAT32;
  if (dtype === 'float32') return DTYPE_FLOAT32;
  if (dtype === 'float16') return DTYPE_FLOAT16;
  if (dtype === 'bfloat16') return DTYPE_BFLOAT16;
  if (typeof dtype !== 'string') throw typeError(where, `options.dtype must be one of ${DTYPES.map((d) => `'${d}'`).join(', ')}`, dtype);
  return checkEnum(where, 'options.dtype', dtype, DTYPES); // throws for an unknown string
}

/**
 * Checks that `a` holds `n` elements of 16-bit dtype `dtype`: a Uint16Array (raw bits, either dtype) or a
 * Float16Array (float16 only). TypeError naming `name` and the dtype for any other array, RangeError for the length.
 */
export function checkHalf(where, name, a, n, dtype, what = 'the product of shape') {
  const tag = typedArrayTag(a);
  const dt = dtype === DTYPE_FLOAT16 ? 'float16' : 'bfloat16';
  const ok = tag === 'Uint16Array' || (tag === 'Float16Array' && dtype === DTYPE_FLOAT16);
  if (!ok) {
    const allowed = dtype === DTYPE_FLOAT16 ? `a Uint16Array (raw bits)${HAS_FLOAT16ARRAY ? ' or a Float16Array' : ''}` : 'a Uint16Array (raw bits)';
    throw typeError(where, `${name} must be ${allowed} for options.dtype '${dt}'`, a);
  }
  const length = viewLength(a);
  if (length === 0 && isDetached(a)) throw new TypeError(`${where}: ${name} is a detached ${tag}`);
  if (length !== n) throw new RangeError(`${where}: ${name}.length must equal ${what} (${n}), got ${length}`);
}

/** True when 16-bit arrays a (n elements) and b (m elements) share bytes. */
export function halfOverlap(a, n, b, m) {
  return a.buffer === b.buffer && overlaps(a.byteOffset, 2 * n, b.byteOffset, 2 * m);
}

/** Copies 16-bit array `a` (n elements) into wasm memory at ptr (the memory is not grown after this). */
export function halfIn(heap, a, ptr, n) {
  heap.u8.set(bytesOf(a).subarray(0, 2 * n), ptr);
}

/** Copies n 16-bit elements at ptr back into `a` and returns it. */
export function halfOut(heap, a, ptr, n) {
  bytesOf(a).set(heap.u8.subarray(ptr, ptr + 2 * n));
  return a;
}
