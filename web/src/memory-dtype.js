// memory-dtype.js — data of any storage type (pe_dtype): float32, or float16 / bfloat16 as a Uint16Array of raw
// bits, a Float16Array (float16, where the engine has it) or a pe.tensor of that dtype. The dtype of a call
// (its option, else the data's own), the 16-bit checks, and locate / stage / return for 16-bit data, the
// counterparts of memory.js's float32 ones (a tensor or a view of wasm memory in place, another array copied in
// and out), plus dtype-generic forms that pick either. Shared by every family that takes 16-bit data.

import { typeError, checkEnum } from './errors.js';
import { typedArrayTag, posesAsTypedArray, isDetached, viewLength, viewBuffer, viewByteOffset } from './typed-arrays.js';
import {
  DTYPES,
  DTYPE_FLOAT32,
  DTYPE_FLOAT16,
  DTYPE_BFLOAT16,
  HAS_FLOAT16ARRAY,
  tensorDtype,
  tensorRecord,
  locateFloat32,
  stageFloat32,
  returnFloat32,
  overlaps,
  detachedError,
  notRealMessage,
} from './memory.js';

export { DTYPES, DTYPE_FLOAT32, DTYPE_FLOAT16, DTYPE_BFLOAT16 };

// memory.js re-exports this module's functions (its callers import placement from there), so the two import each
// other: nothing here reads memory.js's bindings at load time, only inside functions, which keeps the cycle safe
// whichever module loads first.
const dtypeList = () => DTYPES.map((d) => `'${d}'`).join(', ');

/**
 * The pe_dtype of data argument `x` under option `dtype` (named `optName`): the option when given, else x's
 * own type (a pe.tensor's dtype, float16 for a Float16Array), else float32. A pe.tensor whose dtype differs
 * from the option is a TypeError naming both: its bits would be read as another type.
 */
export function resolveDtype(where, dtype, x, name = 'x', optName = 'options.dtype') {
  const own = tensorDtype(x);
  let d;
  if (dtype === undefined || dtype === null) {
    if (own !== -1) return own;
    return HAS_FLOAT16ARRAY && typedArrayTag(x) === 'Float16Array' ? DTYPE_FLOAT16 : DTYPE_FLOAT32;
  }
  if (dtype === 'float32') d = DTYPE_FLOAT32;
  else if (dtype === 'float16') d = DTYPE_FLOAT16;
  else if (dtype === 'bfloat16') d = DTYPE_BFLOAT16;
  else if (typeof dtype !== 'string') throw typeError(where, `${optName} must be one of ${dtypeList()}`, dtype);
  else checkEnum(where, optName, dtype, DTYPES); // throws for an unknown string
  if (own !== -1 && own !== d) {
    throw new TypeError(`${where}: ${name} is a ${DTYPES[own]} tensor but ${optName} is '${DTYPES[d]}'; give the tensor's own dtype or none`);
  }
  return d;
}

/**
 * Checks that array `a` holds `n` elements of 16-bit dtype `dtype`: a Uint16Array (raw bits, either dtype) or
 * a Float16Array (float16 only). TypeError naming `name` and the dtype for any other array, RangeError for the
 * length. (pe.tensors are checked by locateHalf.)
 */
export function checkHalf(where, name, a, n, dtype, what = 'the product of shape') {
  const tag = typedArrayTag(a);
  const dt = DTYPES[dtype];
  const ok = tag === 'Uint16Array' || (tag === 'Float16Array' && dtype === DTYPE_FLOAT16);
  if (!ok) {
    const allowed = `a Uint16Array (raw bits)${dtype === DTYPE_FLOAT16 && HAS_FLOAT16ARRAY ? ', a Float16Array' : ''} or a ${dt} pe.tensor`;
    if (posesAsTypedArray(a)) throw typeError(where, notRealMessage(name, allowed), a);
    throw typeError(where, `${name} must be ${allowed} for dtype '${dt}'`, a);
  }
  const length = viewLength(a);
  if (length === 0 && isDetached(a)) throw detachedError(where, name, tag);
  if (length !== n) throw new RangeError(`${where}: ${name}.length must equal ${what} (${n}), got ${length}`);
}

/**
 * The length of 16-bit data `a` of dtype `dtype` (a Uint16Array, a Float16Array for float16, or a pe.tensor of
 * that dtype and this heap), read once; TypeError otherwise.
 */
export function halfLength(heap, a, dtype, where, name) {
  const rec = tensorRecord(heap, a, where, name);
  if (rec !== null) {
    if (rec.dtype !== dtype) throw new TypeError(`${where}: ${name} is a ${DTYPES[rec.dtype]} tensor; here it must be ${DTYPES[dtype]} data`);
    return rec.length;
  }
  const tag = typedArrayTag(a);
  if (tag !== 'Uint16Array' && !(tag === 'Float16Array' && dtype === DTYPE_FLOAT16)) checkHalf(where, name, a, -1, dtype); // throws
  return viewLength(a);
}

/**
 * Where 16-bit data `x` of dtype `dtype` lives (see locateFloat32): the byte pointer of a pe.tensor of this
 * heap or of an array viewing this heap's memory, or -1 for an array to be copied. Checks type and length n.
 */
export function locateHalf(heap, x, n, dtype, where, name, what = 'the product of shape') {
  const rec = tensorRecord(heap, x, where, name);
  if (rec !== null) {
    if (rec.dtype !== dtype) throw new TypeError(`${where}: ${name} is a ${DTYPES[rec.dtype]} tensor; here it must be ${DTYPES[dtype]} data`);
    if (rec.length !== n) throw new RangeError(`${where}: ${name}.length must equal ${what} (${n}), got ${rec.length}`);
    return rec.ptr;
  }
  checkHalf(where, name, x, n, dtype, what);
  return viewBuffer(x) === heap.buffer ? viewByteOffset(x) : -1;
}

/** The bytes of real 16-bit array `a`'s first n elements, through the intrinsic getters. */
function halfBytes(a, n) {
  return new Uint8Array(viewBuffer(a), viewByteOffset(a), 2 * n);
}

/** stageFloat32 for 16-bit data located by locateHalf. */
export function stageHalf(heap, x, loc, n, slot, where, copyIn = true) {
  if (loc !== -1) return loc;
  if (viewLength(x) !== n) throw new RangeError(`${where}: a 16-bit array argument changed length during the call (${n}, then ${viewLength(x)}): its buffer was resized`);
  const ptr = heap.scratch(slot, n * 2, where, 'a copy of a 16-bit array argument');
  if (copyIn) heap.u8.set(halfBytes(x, n), ptr);
  return ptr;
}

/** returnFloat32 for 16-bit data: copies a staged array back, or returns the tensor / a live view of x's elements. */
export function returnHalf(heap, x, loc, ptr, n) {
  if (loc === -1) {
    if (viewLength(x) !== n) throw new RangeError(`posenc: a 16-bit array argument changed length during the call (${n}, then ${viewLength(x)})`);
    halfBytes(x, n).set(heap.u8.subarray(ptr, ptr + 2 * n));
    return x;
  }
  if (tensorDtype(x) !== -1 || viewBuffer(x).byteLength !== 0) return x;
  return new globalThis[typedArrayTag(x)](heap.buffer, ptr, n);
}

/** Element size in bytes of pe_dtype `dtype`. */
export function dtypeBytes(dtype) {
  return dtype === DTYPE_FLOAT32 ? 4 : 2;
}

/** locateFloat32 / locateHalf by dtype. */
export function locateData(heap, x, n, dtype, where, name, what = 'the product of shape') {
  return dtype === DTYPE_FLOAT32 ? locateFloat32(heap, x, n, where, name, what) : locateHalf(heap, x, n, dtype, where, name, what);
}

/** stageFloat32 / stageHalf by dtype. */
export function stageData(heap, x, loc, n, dtype, slot, where, copyIn = true) {
  return dtype === DTYPE_FLOAT32 ? stageFloat32(heap, x, loc, n, slot, where, copyIn) : stageHalf(heap, x, loc, n, slot, where, copyIn);
}

/** returnFloat32 / returnHalf by dtype. */
export function returnData(heap, x, loc, ptr, n, dtype) {
  return dtype === DTYPE_FLOAT32 ? returnFloat32(heap, x, loc, ptr, n) : returnHalf(heap, x, loc, ptr, n);
}

/** float32Overlap for elements of `esz` bytes. */
export function dataOverlap(x, xLoc, xn, y, yLoc, yn, esz) {
  if (xLoc !== -1 && yLoc !== -1) return overlaps(xLoc, xn * esz, yLoc, yn * esz);
  if (xLoc === -1 && yLoc === -1 && viewBuffer(x) === viewBuffer(y)) {
    return overlaps(viewByteOffset(x), xn * esz, viewByteOffset(y), yn * esz);
  }
  return false;
}
