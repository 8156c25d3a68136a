// memory.js — the one way data is placed in wasm memory: the heap (malloc/free, live views, scratch slots),
// float32 and int32 placement, and pe.tensor().
//
// Pointers are byte offsets into the module's memory, handled as unsigned (`>>> 0`): the memory may grow to
// 4 GiB, so a pointer can be >= 2^31, which an i32 export returns as a negative number.
//
// Sizes: every block goes through Heap.malloc, which refuses a byte count past MAX_BLOCK_BYTES (or not a
// non-negative integer) with a RangeError naming what the block was for, before malloc sees it. Scratch
// capacities round up to a power of two only while that stays within the bound, so no byte count ever wraps
// past 2^32 on its way to the C core, and a slot whose allocation fails is left empty, never with a size it
// does not have.
//
// Typed arrays: only real ones are accepted (typed-arrays.js asks the engine, never the object), and buffer /
// byteOffset / length are read through the intrinsic getters, each once, into a local.
//
// Views: a TypedArray over `memory.buffer` is detached whenever the memory grows (any malloc may grow it). The
// heap's getters re-derive their views when the cached buffer was detached, so `heap.f32` is always live.
// Inputs that view wasm memory are located (their pointer taken) before anything is allocated; the pointer
// stays valid, since allocations never move data.
//
// 16-bit data (float16 / bfloat16) and the dtype of a call: memory-dtype.js, over the same heap and tensors.
//
// Placement of float32 data, in three steps that allocate nothing per call beyond the scratch blocks:
//   locateFloat32   type and length check; the data's pointer in wasm memory, or -1 when it must be copied
//   stageFloat32    for -1: copy into a scratch slot (or only reserve it, for an output); returns the pointer
//   returnFloat32   once the kernel ran: copies a staged array back and returns what the API call returns

import { checkInt, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, rangeError } from './errors.js';
import {
  typedArrayTag,
  posesAsTypedArray,
  isDetached,
  viewLength,
  viewBuffer,
  viewByteOffset,
  typedArraySet,
} from './typed-arrays.js';

export { typedArrayTag, posesAsTypedArray, viewLength, isDetached, viewBuffer, viewByteOffset }; // for model.js and other families

// Scratch slot numbers, shared by every family module of one instance.
export const SLOT = Object.freeze({
  X: 0, // tensor data copied in/out
  POS: 1, // int32 positions
  COS: 2, // float32 cos table
  SIN: 3, // float32 sin table
  F64: 4, // float64 results (inv_freq)
  CONFIG: 5, // a config struct being filled in
  FACTORS: 6, // float64 short_factor | long_factor
  OUT: 7, // a few bytes of out-parameters
  IOTA: 8, // int32 0, 1, 2, ... (default positions); contents persist between calls
  Q: 9, // attention q copy
  K: 10, // attention k copy
  V: 11, // attention v copy
  RESULT: 12, // a result computed in wasm memory and copied out (attention out, tables, bias, lookups)
  WEIGHTS: 13, // attention weights (batch, heads, qLen, kLen), only when requested
  WORK: 14, // the C core's own scratch (pe_attention_scratch_size floats)
  SLOPES: 15, // float32 ALiBi slopes
  KPOS: 16, // int32 key positions (attention; POS holds the query positions)
  MASK: 17, // int32 attention key mask (batch, kLen)
  BIAS: 18, // float32 attention bias copy
  QSCALE: 19, // float32 attention per-query scales
  MQ: 20, // attention with an M-RoPE rope: q rotated in a copy of its own (attention-mrope.js)
  MK: 21, // ... and k
  COUNT: 22,
});

// The largest element count of one tensor argument: lengths stay within int32 so every C dimension product
// fits, and a float32 count times 4 is an exact double.
export const MAX_TENSOR_LENGTH = 2 ** 30 - 1;

// The largest block posenc asks malloc for. Byte counts stay non-negative int32s (the C core's i32 size
// parameters), and a block never takes more than half of the 4 GiB a wasm32 memory can reach.
export const MAX_BLOCK_BYTES = 2 ** 31 - 1;

// The alignment of every block Heap.malloc returns: a cache line (see malloc). malloc is asked for
// BLOCK_ALIGN_SLACK bytes more than the block, so it sees at most MAX_BLOCK_BYTES + BLOCK_ALIGN_SLACK.
const BLOCK_ALIGN = 64;
export const BLOCK_ALIGN_SLACK = BLOCK_ALIGN - 8;

function changedLength(where, n, now) {
  return new RangeError(`${where}: a Float32Array argument changed length during the call (${n}, then ${now}): its buffer was resized`);
}

export function detachedError(where, name, tag) {
  return new TypeError(
    `${where}: ${name} is a detached ${tag} (its buffer was transferred, or the wasm memory grew since it was taken: read tensor.array again)`,
  );
}

export function notRealMessage(name, bound) {
  return `${name} must be ${bound}; an object with a typed array's prototype or a Proxy is not a typed array`;
}

// ---------------------------------------------------------------------------------------------------------
// The heap
// ---------------------------------------------------------------------------------------------------------

export class Heap {
  constructor(exports) {
    this.exports = exports;
    this.memory = exports.memory;
    this._buffer = null;
    this._u8 = this._i32 = this._f32 = this._f64 = null;
    this._dv = null;
    this._scratchPtr = new Array(SLOT.COUNT).fill(0);
    this._scratchCap = new Array(SLOT.COUNT).fill(0);
    this.iotaLength = 0; // how many entries of the IOTA slot hold 0, 1, 2, ...
    this._rawBlock = new Map(); // a block's aligned start -> the pointer malloc gave, where they differ
  }

  _refresh() {
    const b = this.memory.buffer;
    this._buffer = b;
    this._u8 = new Uint8Array(b);
    this._i32 = new Int32Array(b);
    this._f32 = new Float32Array(b);
    this._f64 = new Float64Array(b);
    this._dv = new DataView(b);
  }

  // A grown memory detaches the old buffer (byteLength 0). A memory of 0 bytes would refresh on every access,
  // which is correct too.
  get buffer() {
    if (this._buffer === null || this._buffer.byteLength === 0) this._refresh();
    return this._buffer;
  }
  get u8() {
    if (this._buffer === null || this._buffer.byteLength === 0) this._refresh();
    return this._u8;
  }
  get i32() {
    if (this._buffer === null || this._buffer.byteLength === 0) this._refresh();
    return this._i32;
  }
  get f32() {
    if (this._buffer === null || this._buffer.byteLength === 0) this._refresh();
    return this._f32;
  }
  get f64() {
    if (this._buffer === null || this._buffer.byteLength === 0) this._refresh();
    return this._f64;
  }
  get dataView() {
    if (this._buffer === null || this._buffer.byteLength === 0) this._refresh();
    return this._dv;
  }

  /**
   * A new block of `bytes` bytes; throws a RangeError (naming `where` and `what`, the block's purpose) for a
   * byte count past MAX_BLOCK_BYTES or when the memory cannot grow. May grow (and so detach views of) the memory.
   */
  malloc(bytes, where = 'posenc', what = 'a block') {
    if (!(Number.isInteger(bytes) && bytes >= 0 && bytes <= MAX_BLOCK_BYTES)) {
      throw new RangeError(
        `${where}: ${what} would take ${bytes} bytes of wasm memory; one block holds at most ${MAX_BLOCK_BYTES} bytes`,
      );
    }
    // Every block starts on a cache line. malloc's blocks are only 8-byte aligned, and a tensor that starts 8
    // bytes into a line has one v128 load in four split across two lines (~1.1x on a large rotation); 56 spare
    // bytes are enough to move any 8-aligned start to the next multiple of 64.
    const raw = this.exports.malloc(Math.max(bytes, 8) + BLOCK_ALIGN_SLACK) >>> 0;
    if (raw === 0) throw new RangeError(`${where}: out of WebAssembly memory allocating ${bytes} bytes for ${what}`);
    const ptr = ((raw + BLOCK_ALIGN - 1) & -BLOCK_ALIGN) >>> 0;
    if (ptr !== raw) this._rawBlock.set(ptr, raw);
    return ptr;
  }

  free(ptr) {
    if (!ptr) return;
    const raw = this._rawBlock.get(ptr);
    if (raw === undefined) {
      this.exports.free(ptr);
    } else {
      this._rawBlock.delete(ptr);
      this.exports.free(raw);
    }
  }

  /**
   * A block of at least `bytes` bytes for scratch slot `slot`; contents are not preserved when it grows. Refuses
   * what malloc refuses, with the same message; the slot is then empty.
   */
  scratch(slot, bytes, where, what) {
    if (bytes <= this._scratchCap[slot]) return this._scratchPtr[slot];
    this.free(this._scratchPtr[slot]);
    this._scratchPtr[slot] = 0;
    this._scratchCap[slot] = 0;
    if (slot === SLOT.IOTA) this.iotaLength = 0;
    let cap = 64;
    while (cap < bytes && cap <= MAX_BLOCK_BYTES / 2) cap *= 2;
    if (cap < bytes) cap = bytes; // past 2^30 bytes: exactly what is asked (malloc refuses too much)
    const ptr = this.malloc(cap, where, what);
    this._scratchPtr[slot] = ptr;
    this._scratchCap[slot] = cap;
    return ptr;
  }

  /** Pointer to n int32 values 0, 1, ..., n-1 (the default positions), filled once and kept. */
  iota(n, where) {
    const ptr = this.scratch(SLOT.IOTA, n * 4, where, 'the default positions');
    if (this.iotaLength < n) {
      const i32 = this.i32;
      const base = ptr >>> 2;
      for (let i = this.iotaLength; i < n; i++) i32[base + i] = i;
      this.iotaLength = n;
    }
    return ptr;
  }

  /** The NUL-terminated C string at `ptr` (ASCII: the module's names and messages). */
  cString(ptr) {
    const u8 = this.u8;
    let s = '';
    for (let i = ptr; u8[i] !== 0; i++) s += String.fromCharCode(u8[i]);
    return s;
  }

  /** True when real typed array `a` views this module's current memory. */
  holds(a) {
    return viewBuffer(a) === this.buffer;
  }
}

// ---------------------------------------------------------------------------------------------------------
// pe.tensor
// ---------------------------------------------------------------------------------------------------------

// Storage types (pe_dtype values, c/include/posenc.h). Index = the C enum value.
export const DTYPES = Object.freeze(['float32', 'float16', 'bfloat16']);
export const DTYPE_FLOAT32 = 0;
export const DTYPE_FLOAT16 = 1;
export const DTYPE_BFLOAT16 = 2;
export const HAS_FLOAT16ARRAY = typeof globalThis.Float16Array === 'function';

/**
 * An array that lives in wasm memory: float32, or float16 / bfloat16 held as raw 16-bit patterns. Pass it
 * wherever data of its dtype is accepted: the kernels work on it in place, with no copy, and its dtype is the
 * call's default. `.array` is a getter: it returns a view that is re-derived whenever the memory has grown,
 * so read it again after any posenc call instead of keeping it.
 *
 * A 16-bit tensor's `.array` is a Uint16Array of the bit patterns in every engine, also where Float16Array
 * exists: one type for both 16-bit dtypes (bfloat16 has no typed array), and bits kept exactly (a Float16Array
 * element read or written passes through a JS number, which need not keep a NaN's payload). Wrap it when
 * numbers are wanted: `new Float16Array(a.buffer, a.byteOffset, a.length)`.
 */
class Tensor {
  // The record { heap, ptr, length, dtype, view }: a private field, so a look-alike object has none.
  #r;
  constructor(r) {
    this.#r = r;
  }
  /** The record of `t` if it is a Tensor, else undefined. */
  static record(t) {
    return typeof t === 'object' && t !== null && #r in t ? t.#r : undefined;
  }
  get array() {
    const r = this.#r;
    if (r.ptr === 0) throw new TypeError('tensor.array: this tensor was freed (free() was called on it)');
    if (r.view === null || r.view.buffer !== r.heap.memory.buffer) {
      r.view = r.dtype === DTYPE_FLOAT32 ? new Float32Array(r.heap.memory.buffer, r.ptr, r.length) : new Uint16Array(r.heap.memory.buffer, r.ptr, r.length);
    }
    return r.view;
  }
  get length() {
    return this.#r.length;
  }
  /** 'float32' | 'float16' | 'bfloat16' */
  get dtype() {
    return DTYPES[this.#r.dtype];
  }
  /** True once free() has been called. */
  get freed() {
    return this.#r.ptr === 0;
  }
  /** Releases the memory; calling it again does nothing. */
  free() {
    const r = this.#r;
    if (r.ptr !== 0) {
      r.heap.free(r.ptr);
      r.ptr = 0;
      r.view = null;
    }
  }
}
if (typeof Symbol.dispose === 'symbol') Tensor.prototype[Symbol.dispose] = Tensor.prototype.free;

const TENSOR_KEYS = knownKeys('dtype');

/** The pe_dtype of a pe.tensor (any heap), or -1 for anything else. */
export function tensorDtype(t) {
  const r = Tensor.record(t);
  return r === undefined ? -1 : r.dtype;
}

/**
 * pe.tensor(lengthOrArray, { dtype }): every check comes before the block is allocated, and a failure frees
 * it. dtype 'float32' (default), 'float16' or 'bfloat16'. Sources: a Float32Array (any dtype: a 16-bit one is
 * rounded to nearest even, as the kernels store), a Uint16Array of raw bits (a 16-bit dtype must be given: the
 * bits alone do not say which), a Float16Array (float16; its own dtype when none is given).
 */
export function createTensor(heap, lengthOrArray, options) {
  const where = 'tensor';
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, TENSOR_KEYS);
  let dtype = o.dtype === undefined || o.dtype === null ? -1 : DTYPES.indexOf(checkEnum(where, 'options.dtype', o.dtype, DTYPES));
  const bound = `a length (integer), a Float32Array, a Uint16Array (raw 16-bit patterns, with options.dtype)${HAS_FLOAT16ARRAY ? ' or a Float16Array' : ''}`;
  let length;
  let source = null;
  let sourceDtype = DTYPE_FLOAT32;
  const tag = typedArrayTag(lengthOrArray);
  if (typeof lengthOrArray === 'number') {
    length = checkInt(where, 'length', lengthOrArray, 0, MAX_TENSOR_LENGTH);
  } else if (tag === 'Float32Array' || tag === 'Uint16Array' || (tag === 'Float16Array' && HAS_FLOAT16ARRAY)) {
    source = lengthOrArray;
    if (tag === 'Uint16Array') {
      if (dtype === -1 || dtype === DTYPE_FLOAT32) {
        throw typeError(where, `the argument is a Uint16Array of raw 16-bit patterns: options.dtype must say which, 'float16' or 'bfloat16'`, dtype === -1 ? undefined : 'float32');
      }
      sourceDtype = dtype;
    } else if (tag === 'Float16Array') {
      if (dtype !== -1 && dtype !== DTYPE_FLOAT16) {
        throw typeError(where, `the argument is a Float16Array, which makes a 'float16' tensor: options.dtype must be 'float16' or not given`, DTYPES[dtype]);
      }
      sourceDtype = DTYPE_FLOAT16;
    }
    if (dtype === -1) dtype = sourceDtype;
    length = viewLength(source);
    if (length === 0 && isDetached(source)) throw detachedError(where, 'the argument', tag);
    if (length > MAX_TENSOR_LENGTH) throw rangeError(where, `length must be at most ${MAX_TENSOR_LENGTH}`, length);
    if (heap.holds(source)) source = new globalThis[tag](source); // malloc below may detach it
  } else if (posesAsTypedArray(lengthOrArray)) {
    throw typeError(where, notRealMessage('the argument', bound), lengthOrArray);
  } else {
    throw typeError(where, `the argument must be ${bound}`, lengthOrArray);
  }
  if (dtype === -1) dtype = DTYPE_FLOAT32;
  const esz = dtype === DTYPE_FLOAT32 ? 4 : 2;
  const ptr = heap.malloc(length * esz, where, 'the tensor');
  try {
    if (source === null) {
      heap.u8.fill(0, ptr, ptr + length * esz);
    } else if (sourceDtype === dtype) {
      heap.u8.set(new Uint8Array(viewBuffer(source), viewByteOffset(source), length * esz), ptr);
    } else {
      // float32 -> 16-bit, rounded by the C core (the kernels' own store), through scratch
      const tmp = heap.scratch(SLOT.X, length * 4, where, 'the float32 data being converted');
      heap.f32.set(source, tmp >>> 2);
      const status = heap.exports.pe_convert(ptr, dtype, tmp, DTYPE_FLOAT32, BigInt(length));
      if (status !== 0) throw new RangeError(`${where}: converting the Float32Array to ${DTYPES[dtype]} failed (status ${status})`);
    }
  } catch (e) {
    heap.free(ptr);
    throw e;
  }
  return new Tensor({ heap, ptr, length, dtype, view: null });
}

/**
 * The tensor record behind `t` if it is a pe.tensor (of this heap), else null. Throws a TypeError for a freed
 * tensor or one made by another posenc instance.
 */
export function tensorRecord(heap, t, where, name) {
  const r = Tensor.record(t);
  if (r === undefined) return null;
  if (r.heap !== heap) {
    throw new TypeError(`${where}: ${name} is a tensor of another posenc instance (made by a different init())`);
  }
  if (r.ptr === 0) throw new TypeError(`${where}: ${name} is a tensor that was freed`);
  return r;
}

// ---------------------------------------------------------------------------------------------------------
// float32 data
// ---------------------------------------------------------------------------------------------------------

function notFloat32Tensor(where, name, rec) {
  return new TypeError(`${where}: ${name} is a ${DTYPES[rec.dtype]} tensor; here it must be float32 data (a Float32Array or a float32 pe.tensor)`);
}

function float32TypeError(where, name, x) {
  if (posesAsTypedArray(x)) return typeError(where, notRealMessage(name, 'a Float32Array or a pe.tensor'), x);
  return typeError(where, `${name} must be a Float32Array or a pe.tensor`, x);
}

/** The length of float32 data `x` (a Float32Array or a pe.tensor of this heap); TypeError otherwise. */
export function float32Length(heap, x, where, name) {
  const rec = tensorRecord(heap, x, where, name);
  if (rec !== null) {
    if (rec.dtype !== DTYPE_FLOAT32) throw notFloat32Tensor(where, name, rec);
    return rec.length;
  }
  if (typedArrayTag(x) !== 'Float32Array') throw float32TypeError(where, name, x);
  return viewLength(x);
}

/**
 * Where float32 data `x` (a Float32Array, a pe.tensor, or a Float32Array viewing wasm memory) lives, found
 * without allocating: the byte pointer of its data for a pe.tensor of this heap or a view of this heap's
 * memory, or -1 for any other Float32Array (stageFloat32 copies it). Checks its type and that its length is
 * `n`; `what` describes that length in the message. Locate every input of a call before anything is allocated.
 */
export function locateFloat32(heap, x, n, where, name, what = 'the product of shape') {
  const rec = Tensor.record(x);
  if (rec !== undefined) {
    if (rec.heap !== heap) {
      throw new TypeError(`${where}: ${name} is a tensor of another posenc instance (made by a different init())`);
    }
    if (rec.ptr === 0) throw new TypeError(`${where}: ${name} is a tensor that was freed`);
    if (rec.dtype !== DTYPE_FLOAT32) throw notFloat32Tensor(where, name, rec);
    if (rec.length !== n) throw new RangeError(`${where}: ${name}.length must equal ${what} (${n}), got ${rec.length}`);
    return rec.ptr;
  }
  if (typedArrayTag(x) !== 'Float32Array') throw float32TypeError(where, name, x);
  const length = viewLength(x);
  if (length === 0 && isDetached(x)) throw detachedError(where, name, 'Float32Array');
  if (length !== n) {
    throw new RangeError(`${where}: ${name}.length must equal ${what} (${n}), got ${length}`);
  }
  return viewBuffer(x) === heap.buffer ? viewByteOffset(x) : -1;
}

/**
 * The pointer the kernel works on for `x` located at `loc`: `loc` itself when the data are in wasm memory,
 * else scratch slot `slot`, filled from x when copyIn (an output only reserves it). May allocate.
 */
export function stageFloat32(heap, x, loc, n, slot, where, copyIn = true) {
  if (loc !== -1) return loc;
  if (viewLength(x) !== n) throw changedLength(where, n, viewLength(x)); // a resizable buffer shrunk meanwhile
  const ptr = heap.scratch(slot, n * 4, where, 'a copy of a Float32Array argument');
  if (copyIn) heap.f32.set(x, ptr >>> 2);
  return ptr;
}

/**
 * What a call that wrote float32 data `x` (located at `loc`, worked on at `ptr`) returns: a staged
 * Float32Array gets the data back and is returned; a tensor is returned as is; a view of wasm memory is
 * returned as is, or, if the call grew the memory and so detached it, as a fresh view of the same elements.
 */
export function returnFloat32(heap, x, loc, ptr, n) {
  if (loc === -1) {
    if (viewLength(x) !== n) throw changedLength('posenc', n, viewLength(x));
    typedArraySet(x, heap.f32.subarray(ptr >>> 2, (ptr >>> 2) + n));
    return x;
  }
  if (Tensor.record(x) !== undefined || viewBuffer(x).byteLength !== 0) return x;
  return new Float32Array(heap.buffer, ptr, n);
}

/** True when byte ranges [a, a + aBytes) and [b, b + bBytes) overlap. */
export function overlaps(a, aBytes, b, bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

/**
 * True when two located float32 inputs share memory: both in wasm memory with overlapping bytes, or both
 * Float32Arrays to be staged over the same buffer with overlapping bytes.
 */
export function float32Overlap(x, xLoc, xn, y, yLoc, yn) {
  if (xLoc !== -1 && yLoc !== -1) return overlaps(xLoc, xn * 4, yLoc, yn * 4);
  if (xLoc === -1 && yLoc === -1 && viewBuffer(x) === viewBuffer(y)) {
    return overlaps(viewByteOffset(x), xn * 4, viewByteOffset(y), yn * 4);
  }
  return false;
}

/** A copy of float32 elements [ptr, ptr + 4n) of wasm memory as a new Float32Array. */
export function copyOut(heap, ptr, n) {
  return heap.f32.slice(ptr >>> 2, (ptr >>> 2) + n);
}

// ---------------------------------------------------------------------------------------------------------
// Integer data (positions, masks) and small float arrays (slopes, factors)
// ---------------------------------------------------------------------------------------------------------

/**
 * The length of an integer argument, read once: a real Int32Array (copied as it is, checked by the C core or
 * by int32RangeErrorAt) or an array-like of numbers (checked while copied), never a BigInt array, a look-alike
 * typed array or a string. `bound` is the text after "must be" for its elements. `lengthRead`: the length,
 * when the caller had to read it already.
 */
export function int32sLength(where, name, values, bound, lengthRead) {
  const tag = typedArrayTag(values);
  let n;
  if (lengthRead !== undefined) {
    n = lengthRead; // the caller read it (once) to tell an array from an options object
  } else if (tag !== undefined) {
    if (tag === 'BigInt64Array' || tag === 'BigUint64Array') {
      throw typeError(where, `${name} must be an Int32Array or an array of integers (each ${bound})`, values);
    }
    n = viewLength(values);
    if (n === 0 && isDetached(values)) throw detachedError(where, name, tag);
  } else if (posesAsTypedArray(values)) {
    throw typeError(where, notRealMessage(name, `an Int32Array or an array of integers (each ${bound})`), values);
  } else if (values !== null && typeof values === 'object') {
    n = values.length;
    if (typeof n !== 'number') throw typeError(where, `${name} must be an Int32Array or an array of integers (each ${bound})`, values);
  } else {
    throw typeError(where, `${name} must be an Int32Array or an array of integers (each ${bound})`, values);
  }
  if (!Number.isInteger(n) || n < 0 || n > MAX_TENSOR_LENGTH) {
    throw rangeError(where, `${name}.length must be an integer in [0, ${MAX_TENSOR_LENGTH}]`, n);
  }
  return n;
}

/**
 * Copies the first n values of an integer argument (n from int32sLength) into `dst` (an Int32Array: a heap
 * view or a JS array) at `offset`, as int32. A real Int32Array is copied with one set() and not checked; it must
 * still hold n values (an error names it if it changed). Any other array-like is checked element by element
 * against [lo, hi]; each element is read once. Call it before allocating if `values` may view wasm memory.
 */
export function copyInt32s(where, name, values, n, dst, offset, lo, hi, bound) {
  if (typedArrayTag(values) === 'Int32Array') {
    if (viewLength(values) !== n) {
      throw new RangeError(`${where}: ${name} changed length while it was read (${n}, then ${viewLength(values)})`);
    }
    typedArraySet(dst, values, offset);
    return;
  }
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (typeof v !== 'number') throw typeError(where, `${name}[${i}] must be ${bound}`, v);
    if (!(Number.isInteger(v) && v >= lo && v <= hi)) throw rangeError(where, `${name}[${i}] must be ${bound}`, v);
    dst[offset + i] = v;
  }
}

/**
 * Stages n values of an integer argument (see copyInt32s) in scratch slot `slot` and returns the pointer.
 * Values viewing wasm memory are copied out first (the scratch allocation may detach them).
 */
export function stageInt32s(heap, slot, where, name, values, n, lo, hi, bound = `an integer in [${lo}, ${hi}]`) {
  const tag = typedArrayTag(values);
  if (tag !== undefined && heap.holds(values)) values = new globalThis[tag](values); // same type, exact copy
  const ptr = heap.scratch(slot, n * 4, where, name);
  copyInt32s(where, name, values, n, heap.i32, ptr >>> 2, lo, hi, bound);
  return ptr;
}

/**
 * The RangeError for the first staged value outside [lo, hi] (n int32s at `ptr`, after the C core refused
 * them), or null. Reads the staged copy, which nothing else can change.
 */
export function int32RangeErrorAt(heap, ptr, n, where, name, lo, hi, bound = `an integer in [${lo}, ${hi}]`) {
  const i32 = heap.i32;
  const base = ptr >>> 2;
  for (let i = 0; i < n; i++) {
    const v = i32[base + i];
    if (!(v >= lo && v <= hi)) return rangeError(where, `${name}[${i}] must be ${bound}`, v);
  }
  return null;
}

/**
 * The length of a numeric array argument (Float32Array, Float64Array, or an array-like of numbers), read
 * once; TypeError for anything else (BigInt arrays, look-alikes, strings).
 */
export function numbersLength(where, name, values, bound) {
  const tag = typedArrayTag(values);
  if (tag !== undefined) {
    if (tag === 'BigInt64Array' || tag === 'BigUint64Array') throw typeError(where, `${name} must be ${bound}`, values);
    const n = viewLength(values);
    if (n === 0 && isDetached(values)) throw detachedError(where, name, tag);
    return n;
  }
  if (posesAsTypedArray(values)) throw typeError(where, notRealMessage(name, bound), values);
  if (values === null || typeof values !== 'object') throw typeError(where, `${name} must be ${bound}`, values);
  const n = values.length;
  if (typeof n !== 'number') throw typeError(where, `${name} must be ${bound}`, values);
  if (!Number.isInteger(n) || n < 0 || n > MAX_TENSOR_LENGTH) {
    throw rangeError(where, `${name}.length must be an integer in [0, ${MAX_TENSOR_LENGTH}]`, n);
  }
  return n;
}
