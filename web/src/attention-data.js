// attention-data.js — the storage type of pe.attention's q, k, v and out (options.dtype): one for all four, named
// argument by argument when they disagree. Placement by type is memory-dtype.js's (locateData / stageData / returnData:
// float32, or float16 / bfloat16 as a Uint16Array of raw bits, a Float16Array for float16, a 16-bit pe.tensor).

import { typeError, checkEnum } from './errors.js';
import {
  DTYPES,
  DTYPE_FLOAT32,
  DTYPE_FLOAT16,
  tensorDtype,
  tensorRecord,
  float32Length,
} from './memory.js';
import { halfLength, locateData, stageData, returnData } from './memory-dtype.js';
import { typedArrayTag } from './typed-arrays.js';

const HAS_FLOAT16ARRAY = typeof globalThis.Float16Array === 'function';
const DTYPE_LIST = DTYPES.map((d) => `'${d}'`).join(', ');

/** The pe_dtype data argument x carries itself (a pe.tensor's dtype, float16 for a Float16Array), or -1. */
function ownDtype(heap, x, where, name) {
  if (tensorRecord(heap, x, where, name) !== null) return tensorDtype(x);
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
 * must carry that one: a mismatch is a TypeError naming the argument, its type and the call's. out: null when
 * options.out is not given. (Arguments one by one, not a list of pairs: this runs on every call.)
 */
export function attentionDtype(heap, where, dtype, q, k, v, out) {
  let d;
  if (dtype === undefined || dtype === null) {
    d = ownDtype(heap, q, where, 'q');
    if (d === -1) {
      if (typedArrayTag(q) === 'Uint16Array') {
        throw new TypeError(`${where}: q is a Uint16Array of raw 16-bit patterns: options.dtype must say which, 'float16' or 'bfloat16'`);
      }
      d = DTYPE_FLOAT32; // the float32 checks then name what q should be
    }
  } else {
    if (typeof dtype !== 'string') throw typeError(where, `options.dtype must be one of ${DTYPE_LIST}`, dtype);
    d = DTYPES.indexOf(checkEnum(where, 'options.dtype', dtype, DTYPES));
  }
  matchDtype(heap, where, dtype, d, 'q', q);
  matchDtype(heap, where, dtype, d, 'k', k);
  matchDtype(heap, where, dtype, d, 'v', v);
  if (out !== null) matchDtype(heap, where, dtype, d, 'options.out', out);
  return d;
}

function matchDtype(heap, where, dtype, d, name, x) {
  const own = ownDtype(heap, x, where, name);
  if (own !== -1 && own !== d) {
    const why = dtype === undefined || dtype === null ? `q's (${DTYPES[d]}; options.dtype not given)` : `options.dtype '${DTYPES[d]}'`;
    throw new TypeError(`${where}: ${name} is ${describe(x, own)}, which does not match ${why}: q, k, v and options.out share one storage type`);
  }
}

/** The length of data x of pe_dtype dtype (checked to be of that type), read once. */
export function dataLength(heap, x, dtype, where, name) {
  return dtype === DTYPE_FLOAT32 ? float32Length(heap, x, where, name) : halfLength(heap, x, dtype, where, name);
}

/** A new array of n elements of dtype copied from wasm memory at ptr: a Float32Array, or a Uint16Array of bits. */
export function copyOutData(heap, ptr, n, dtype) {
  if (dtype === DTYPE_FLOAT32) return heap.f32.slice(ptr >>> 2, (ptr >>> 2) + n);
  return new Uint16Array(heap.u8.slice(ptr, ptr + 2 * n).buffer);
}

export { DTYPES, locateData, stageData, returnData };
