// attention-data.js — the storage type of pe.attention's q, k, v and out (options.dtype), and their placement in
// wasm memory by type: float32 through memory.js's float32 helpers, float16 / bfloat16 (a Uint16Array of raw
// bits, a Float16Array for float16, or a 16-bit pe.tensor) as 16-bit copies.

import { typeError, checkEnum } from './errors.js';
import { locateFloat32, float32Length, stageFloat32, returnFloat32, tensorRecord, SLOT } from './memory.js';
import { typedArrayTag, viewLength, viewBuffer, viewByteOffset, isDetached } from './typed-arrays.js';
import { DTYPES, DTYPE_FLOAT32, DTYPE_FLOAT16 } from './rope-dtype.js';

const HAS_FLOAT16ARRAY = typeof globalThis.Float16Array === 'function';
const DTYPE_LIST = DTYPES.map((d) => `'${d}'`).join(', ');

/** The pe_dtype data argument x carries itself (a pe.tensor's dtype, float16 for a Float16Array), or -1. */
function ownDtype(heap, x, where, name) {
  const rec = tensorRecord(heap, x, where, name);
  if (rec !== null) return rec.dtype ?? DTYPE_FLOAT32;
  const tag = typedArrayTag(x);
  if (tag === 'Float32Array') return DTYPE_FLOAT32;
  if (tag === 'Float16Array' && HAS_FLOAT16ARRAY) return DTYPE_FLOAT16;
  return -1;
}

function describe(x, d) {
  const tag = typedArrayTag(x);
  return d !== -1 && tag === undefined ? `a ${DTYPES[d]} pe.tensor` : `a ${tag ?? typeof x}`;
}

/**
 * The pe_dtype of the call: options.dtype, or (not given) the type q carries (float32 for a Float32Array or a
 * float32 tensor, float16 for a Float16Array, a 16-bit tensor's own). Every data argument that carries a type
 * must carry that one: a mismatch is a TypeError naming the argument, its type and the call's.
 */
export function attentionDtype(heap, where, dtype, args) {
  let d;
  if (dtype === undefined || dtype === null) {
    const [name, q] = args[0];
    d = ownDtype(heap, q, where, name);
    if (d === -1) {
      if (typedArrayTag(q) === 'Uint16Array') {
        throw new TypeError(`${where}: q is a Uint16Array of raw 16-bit patterns: options.dtype must say which, 'float16' or 'bfloat16'`);
      }
      d = DTYPE_FLOAT32; // the float32 checks name what q should be
    }
  } else {
    if (typeof dtype !== 'string') throw typeError(where, `options.dtype must be one of ${DTYPE_LIST}`, dtype);
    d = DTYPES.indexOf(checkEnum(where, 'options.dtype', dtype, DTYPES));
  }
  for (const [name, x] of args) {
    const own = ownDtype(heap, x, where, name);
    if (own !== -1 && own !== d) {
      const why = dtype === undefined || dtype === null ? `q's (${DTYPES[d]}; options.dtype not given)` : `options.dtype '${DTYPES[d]}'`;
      throw new TypeError(`${where}: ${name} is ${describe(x, own)}, which does not match ${why}: q, k, v and options.out share one storage type`);
    }
  }
  return d;
}

/** The length of data x of pe_dtype dtype (checked to be of that type), read once. */
export function dataLength(heap, x, dtype, where, name) {
  if (dtype === DTYPE_FLOAT32) return float32Length(heap, x, where, name);
  const rec = tensorRecord(heap, x, where, name);
  if (rec !== null) return rec.length;
  checkHalfType(where, name, x, dtype);
  return viewLength(x);
}

function checkHalfType(where, name, x, dtype) {
  const tag = typedArrayTag(x);
  if (tag === 'Uint16Array' || (tag === 'Float16Array' && dtype === DTYPE_FLOAT16)) {
    if (viewLength(x) === 0 && isDetached(x)) throw new TypeError(`${where}: ${name} is a detached ${tag}`);
    return;
  }
  const allowed = `a Uint16Array (raw bits)${dtype === DTYPE_FLOAT16 && HAS_FLOAT16ARRAY ? ', a Float16Array' : ''} or a ${DTYPES[dtype]} pe.tensor`;
  throw typeError(where, `${name} must be ${allowed} for options.dtype '${DTYPES[dtype]}'`, x);
}

/** locateFloat32 by type: the byte pointer of data in wasm memory, or -1 when it must be copied. */
export function locateData(heap, x, n, dtype, where, name, what) {
  if (dtype === DTYPE_FLOAT32) return locateFloat32(heap, x, n, where, name, what);
  const rec = tensorRecord(heap, x, where, name);
  const length = rec !== null ? rec.length : (checkHalfType(where, name, x, dtype), viewLength(x));
  if (length !== n) throw new RangeError(`${where}: ${name}.length must equal ${what} (${n}), got ${length}`);
  if (rec !== null) return rec.ptr;
  return viewBuffer(x) === heap.buffer ? viewByteOffset(x) : -1;
}

const halfBytes = (x, n) => new Uint8Array(viewBuffer(x), viewByteOffset(x), 2 * n);

/** stageFloat32 by type (16-bit data are copied as bytes). */
export function stageData(heap, x, loc, n, dtype, slot, where, copyIn = true) {
  if (dtype === DTYPE_FLOAT32) return stageFloat32(heap, x, loc, n, slot, where, copyIn);
  if (loc !== -1) return loc;
  const ptr = heap.scratch(slot, n * 2, where, 'a copy of a 16-bit array argument');
  if (copyIn) heap.u8.set(halfBytes(x, n), ptr);
  return ptr;
}

/** returnFloat32 by type. */
export function returnData(heap, x, loc, ptr, n, dtype) {
  if (dtype === DTYPE_FLOAT32) return returnFloat32(heap, x, loc, ptr, n);
  if (loc === -1) {
    halfBytes(x, n).set(heap.u8.subarray(ptr, ptr + 2 * n));
    return x;
  }
  if (tensorRecord(heap, x, 'posenc', 'the output') !== null || viewBuffer(x).byteLength !== 0) return x;
  return new globalThis[typedArrayTag(x)](heap.buffer, ptr, n);
}

/** A new array of n elements of dtype copied from wasm memory at ptr: Float32Array, or Uint16Array of bits. */
export function copyOutData(heap, ptr, n, dtype) {
  if (dtype === DTYPE_FLOAT32) return heap.f32.slice(ptr >>> 2, (ptr >>> 2) + n);
  return new Uint16Array(heap.u8.slice(ptr, ptr + 2 * n).buffer);
}

export { SLOT };
