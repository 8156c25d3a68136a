// memory.js — the wasm heap seen from JS: malloc/free, typed views, reusable scratch blocks, pe.tensor().
//
// Pointers are byte offsets into the module's memory, handled as unsigned (`>>> 0`): the memory may grow to
// 4 GiB, so a pointer can be >= 2^31, which an i32 export returns as a negative number.
//
// Views: a TypedArray over `memory.buffer` is detached whenever the memory grows (any malloc may grow it), and
// a detached buffer has byteLength 0. The getters below check the cached buffer's byteLength on every access
// (cheap; reading `memory.buffer` is a call into the engine) and re-derive the views when it was detached, so
// code that reads `heap.f32` after a call always gets a live view. Nothing in this package keeps a view across
// a call that may allocate.
//
// Scratch: every API call that copies data in or out uses a numbered scratch block that lives for the life of
// the instance and only grows (to the next power of two), so the steady-state call path allocates nothing.

import { checkInt, typeError, rangeError, describe } from './errors.js';

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
  // attention and the other encodings (several inputs copied in at once)
  Q: 9, // attention q copy
  K: 10, // attention k copy
  V: 11, // attention v copy
  RESULT: 12, // a result computed in wasm memory and copied out (attention out, tables, bias, lookups)
  WEIGHTS: 13, // attention weights (batch, heads, qLen, kLen), only when requested
  WORK: 14, // the C core's own scratch (pe_attention_scratch_size floats)
  SLOPES: 15, // float32 ALiBi slopes
  KPOS: 16, // int32 key positions (attention; POS holds the query positions)
  COUNT: 17,
});

// The largest float32 count a tensor can have: 4 GiB of memory holds 2^30 floats, and the scratch for a copy
// needs the same again; keep lengths within int32 so every C dimension product fits.
export const MAX_TENSOR_LENGTH = 2 ** 30 - 1;

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

  /** malloc that throws instead of returning NULL. May grow (and so detach views of) the memory. */
  malloc(bytes) {
    const ptr = this.exports.malloc(Math.max(bytes, 8)) >>> 0;
    if (ptr === 0) throw new RangeError(`posenc: out of WebAssembly memory allocating ${bytes} bytes`);
    return ptr;
  }

  free(ptr) {
    if (ptr) this.exports.free(ptr);
  }

  /** A block of at least `bytes` bytes for scratch slot `slot`; contents are not preserved when it grows. */
  scratch(slot, bytes) {
    if (bytes <= this._scratchCap[slot]) return this._scratchPtr[slot];
    let cap = 64;
    while (cap < bytes) cap *= 2;
    this.free(this._scratchPtr[slot]);
    this._scratchPtr[slot] = 0;
    this._scratchCap[slot] = 0;
    if (slot === SLOT.IOTA) this.iotaLength = 0;
    const ptr = this.malloc(cap);
    this._scratchPtr[slot] = ptr;
    this._scratchCap[slot] = cap;
    return ptr;
  }

  /** Pointer to n int32 values 0, 1, ..., n-1 (the default positions), filled once and kept. */
  iota(n) {
    const ptr = this.scratch(SLOT.IOTA, n * 4);
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

  /** True when `a` is a typed array over this module's current memory. */
  isView(a) {
    return a.buffer === this.buffer;
  }
}

/**
 * A float32 array that lives in wasm memory. Pass it wherever a Float32Array is accepted: the kernels work on
 * it in place, with no copy. `.array` is a getter: it returns a view that is re-derived whenever the memory
 * has grown, so read it again after any posenc call instead of keeping it.
 */
class Tensor {
  // The record { heap, ptr, length, view } lives in a private field: reading it is a property load, where a
  // WeakMap lookup costs a hash probe on every call that takes a tensor.
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
    if (r.ptr === 0) throw new Error('tensor: used after free()');
    if (r.view === null || r.view.buffer !== r.heap.memory.buffer) {
      r.view = new Float32Array(r.heap.memory.buffer, r.ptr, r.length);
    }
    return r.view;
  }
  get length() {
    return this.#r.length;
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

export function createTensor(heap, lengthOrArray) {
  const where = 'tensor';
  let length;
  let source = null;
  if (typeof lengthOrArray === 'number') {
    length = checkInt(where, 'length', lengthOrArray, 0, MAX_TENSOR_LENGTH);
  } else if (lengthOrArray instanceof Float32Array) {
    source = lengthOrArray;
    length = source.length;
    if (length > MAX_TENSOR_LENGTH) throw rangeError(where, `length must be at most ${MAX_TENSOR_LENGTH}`, length);
    if (heap.isView(source)) source = source.slice(); // malloc below may detach it
  } else {
    throw typeError(where, 'argument must be a length (integer) or a Float32Array', lengthOrArray);
  }
  const ptr = heap.malloc(length * 4);
  if (source) heap.f32.set(source, ptr >>> 2);
  else heap.f32.fill(0, ptr >>> 2, (ptr >>> 2) + length);
  return new Tensor({ heap, ptr, length, view: null });
}

/**
 * The tensor record behind `t` if it is a pe.tensor (of this heap), else null. Throws for a freed tensor or
 * one made by another posenc instance.
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

/**
 * Where float32 data `x` (a Float32Array, a pe.tensor, or a Float32Array viewing wasm memory) lives, found
 * without allocating anything: the byte pointer of its data in wasm memory for a pe.tensor of this heap or a
 * view of this heap's memory, or -1 for any other Float32Array (its data must be copied into scratch). Checks
 * its type and that its length is `expectedLength`; `what` describes that length in the message. Locate every
 * input of a call before allocating any scratch, since an allocation may grow the memory and so detach a view
 * the caller passed (the pointer stays valid: allocations never move data).
 */
export function float32Ptr(heap, x, expectedLength, where, name, what = 'the product of shape') {
  const rec = Tensor.record(x);
  if (rec !== undefined) {
    if (rec.heap !== heap) {
      throw new TypeError(`${where}: ${name} is a tensor of another posenc instance (made by a different init())`);
    }
    if (rec.ptr === 0) throw new TypeError(`${where}: ${name} is a tensor that was freed`);
    if (rec.length !== expectedLength) {
      throw new RangeError(`${where}: ${name}.length must equal ${what} (${expectedLength}), got ${rec.length}`);
    }
    return rec.ptr;
  }
  if (!(x instanceof Float32Array)) {
    throw typeError(where, `${name} must be a Float32Array or a pe.tensor`, x);
  }
  if (x.length !== expectedLength) {
    if (x.length === 0 && x.buffer.byteLength === 0 && expectedLength > 0) {
      throw new TypeError(
        `${where}: ${name} is a detached view (the wasm memory grew since it was taken; read tensor.array again), got ${describe(x)}`,
      );
    }
    throw new RangeError(`${where}: ${name}.length must equal ${what} (${expectedLength}), got ${x.length}`);
  }
  return x.buffer === heap.buffer ? x.byteOffset : -1;
}

/**
 * Copies the Float32Array `x` into scratch slot `slot` (for float32Ptr's -1) and returns the pointer; with
 * copyIn false only reserves the block (an output).
 */
export function float32Scratch(heap, x, slot, copyIn = true) {
  const ptr = heap.scratch(slot, x.length * 4);
  if (copyIn) heap.f32.set(x, ptr >>> 2);
  return ptr;
}

/**
 * What a call that wrote float32 data `x` in place (or into it, as an output) returns, once the kernel is done:
 * `loc` is float32Ptr's result and `ptr` where the data were worked on. A copied Float32Array gets the data
 * back and is returned; a tensor is returned as is; a view of wasm memory is returned as is, or, if the call
 * grew the memory and so detached it, as a fresh view of the same elements.
 */
export function float32Result(heap, x, loc, ptr, n) {
  if (loc === -1) {
    const f32 = heap.f32;
    x.set(f32.subarray(ptr >>> 2, (ptr >>> 2) + n));
    return x;
  }
  if (!(x instanceof Float32Array) || x.buffer.byteLength !== 0) return x;
  return new Float32Array(heap.buffer, ptr, n);
}

/**
 * Finds where float32 data `x` lives (float32Ptr), as { kind: 'tensor' | 'view' | 'copy', ptr } (ptr 0 for
 * 'copy': the data must be copied into scratch).
 */
export function locateFloat32(heap, x, expectedLength, where, name) {
  const ptr = float32Ptr(heap, x, expectedLength, where, name);
  if (ptr === -1) return { kind: 'copy', ptr: 0 };
  return { kind: x instanceof Float32Array ? 'view' : 'tensor', ptr };
}

/**
 * Completes a placement made by locateFloat32: a 'copy' gets scratch slot `slot` (filled from x when copyIn).
 * Returns { ptr, finish() }: finish() copies back (copied input) and returns what the API call returns: the
 * Float32Array, the tensor, or for a view of wasm memory the view itself or, if the call grew the memory and
 * detached it, a fresh view of the same elements.
 */
export function materialize(heap, loc, x, expectedLength, slot, copyIn = true) {
  if (loc.kind === 'tensor') return { ptr: loc.ptr, finish: () => x };
  if (loc.kind === 'view') {
    const ptr = loc.ptr;
    return { ptr, finish: () => float32Result(heap, x, ptr, ptr, expectedLength) };
  }
  const ptr = heap.scratch(slot, expectedLength * 4);
  if (copyIn) heap.f32.set(x, ptr >>> 2);
  return { ptr, finish: () => float32Result(heap, x, -1, ptr, expectedLength) };
}

/**
 * Places float32 data `x` (a Float32Array, a pe.tensor, or a Float32Array viewing wasm memory) where the
 * kernels can use it, and says how to hand the result back. `expectedLength` is checked first. The pointer
 * stays valid whatever is allocated afterwards (allocations never move data, they can only detach views).
 * Returns { ptr, finish() }: finish() copies back (copied input) and returns what the API call returns.
 * `slot` is the scratch slot a copied Float32Array goes to (SLOT.X unless several inputs are placed at once).
 */
export function placeFloat32(heap, x, expectedLength, where, name, slot = SLOT.X) {
  const loc = locateFloat32(heap, x, expectedLength, where, name);
  return materialize(heap, loc, x, expectedLength, slot);
}

/** True when byte ranges [a, a + aBytes) and [b, b + bBytes) overlap. */
export function overlaps(a, aBytes, b, bBytes) {
  return a < b + bBytes && b < a + aBytes;
}

/**
 * True when two float32 inputs share memory: both in wasm memory (float32Ptr >= 0) with overlapping bytes, or
 * both plain Float32Arrays over the same buffer with overlapping bytes.
 */
export function float32Overlap(x, xLoc, xn, y, yLoc, yn) {
  if (xLoc !== -1 && yLoc !== -1) return overlaps(xLoc, xn * 4, yLoc, yn * 4);
  if (xLoc === -1 && yLoc === -1 && x.buffer === y.buffer) return overlaps(x.byteOffset, xn * 4, y.byteOffset, yn * 4);
  return false;
}

/** A copy of float32 elements [ptr, ptr + 4n) of wasm memory as a new Float32Array. */
export function copyOut(heap, ptr, n) {
  return heap.f32.slice(ptr >>> 2, (ptr >>> 2) + n);
}

/** True when an array-like of integers is acceptable as positions (not BigInt arrays, not strings). */
function isIntArrayLike(v) {
  return (
    v !== null &&
    typeof v === 'object' &&
    typeof v.length === 'number' &&
    !(v instanceof BigInt64Array) &&
    !(v instanceof BigUint64Array)
  );
}

/**
 * Copies integer data (positions, a mask) into scratch slot `slot` as int32. An Int32Array is copied with one
 * set() and NOT checked here: the caller lets the C core check it (it validates before writing anything) and
 * on failure builds the message with int32RangeError(). Any other array-like is checked element by element
 * against [lo, hi] while it is copied. `bound` is the text after "must be" in messages. Returns { ptr, n }.
 */
export function writeInt32s(heap, slot, where, name, values, lo, hi, bound = `an integer in [${lo}, ${hi}]`) {
  if (!(values instanceof Int32Array) && !isIntArrayLike(values)) {
    throw typeError(where, `${name} must be an Int32Array or an array of integers (each ${bound})`, values);
  }
  const n = values.length;
  if (!Number.isInteger(n) || n < 0 || n > MAX_TENSOR_LENGTH) {
    throw rangeError(where, `${name}.length must be an integer in [0, ${MAX_TENSOR_LENGTH}]`, n);
  }
  if (ArrayBuffer.isView(values) && heap.isView(values)) values = values.slice(); // scratch may detach it
  const ptr = heap.scratch(slot, n * 4);
  if (values instanceof Int32Array) {
    heap.i32.set(values, ptr >>> 2);
  } else {
    const i32 = heap.i32;
    const base = ptr >>> 2;
    for (let i = 0; i < n; i++) {
      const v = values[i];
      if (typeof v !== 'number') throw typeError(where, `${name}[${i}] must be ${bound}`, v);
      if (!(Number.isInteger(v) && v >= lo && v <= hi)) throw rangeError(where, `${name}[${i}] must be ${bound}`, v);
      i32[base + i] = v;
    }
  }
  return { ptr, n };
}

/** The RangeError for the first element of `values` outside [lo, hi] (after the C core refused them), or null. */
export function int32RangeError(where, name, values, lo, hi, bound = `an integer in [${lo}, ${hi}]`) {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!(v >= lo && v <= hi)) return rangeError(where, `${name}[${i}] must be ${bound}`, v);
  }
  return null;
}

/** The length of float32 data `x` (a Float32Array or a pe.tensor of this heap); TypeError otherwise. */
export function float32Length(heap, x, where, name) {
  const rec = tensorRecord(heap, x, where, name);
  if (rec !== null) return rec.length;
  if (!(x instanceof Float32Array)) throw typeError(where, `${name} must be a Float32Array or a pe.tensor`, x);
  return x.length;
}
