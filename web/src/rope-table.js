// rope-table.js — the cos/sin tables behind rope.apply: positions staged once, the per-rope table cache, the
// errors for positions the C core refused, and the table of one shift for rope.rerotate (rerotateTable).
//
// Each rope keeps the last cos/sin table that apply() built, in its own block of wasm memory, with the key it
// was built for: the positions (a private copy of their values, or "the default 0 .. n-1"), their count, the
// seqLen argument (-1: max(positions) + 1) and the extra scale (inverse rotations use 1/a^2). A call whose
// key is equal reuses the table: q then k with the same positions build it once, and so do repeated calls
// with the same positions (a prefill re-run, a batch of layers). Positions are compared by value, not by
// object identity, so an array mutated in place between calls is noticed; the comparison reads n integers,
// where building costs n * nFreq double-precision angles and sincos. The table depends on nothing else: the
// inverse frequencies are fixed per rope, apart from seqLen, which is part of the key (dynamic and longrope
// choose their frequencies from it; with seqLen from the positions it follows from their values).

import { checkInt, typeError, rangeError, INT32_MAX } from './errors.js';
import { SLOT, int32sLength, copyInt32s, int32RangeErrorAt } from './memory.js';
import { typedArrayTag, viewLength } from './typed-arrays.js';

export const POSITIONS_BOUND = `an integer in [0, ${INT32_MAX}]`;

/** The length of a positions argument, read once (see memory.js int32sLength). */
export function positionsLength(where, name, positions) {
  return int32sLength(where, name, positions, POSITIONS_BOUND);
}

/** seqLen -> BigInt for the C int64 argument. undefined/null -> `dflt`. */
export function seqLenArg(where, seqLen, dflt) {
  if (seqLen === undefined || seqLen === null) return dflt;
  return BigInt(checkInt(where, 'seqLen', seqLen, 0, Number.MAX_SAFE_INTEGER));
}

/**
 * The error for a C status after a table build from n staged positions at `posPtr` (0: default positions):
 * the first negative one by name, else the C status.
 */
export function positionError(st, where, name, posPtr, n, status) {
  if (status === st.ctx.status.PE_ERR_POSITION && posPtr !== 0) {
    const e = int32RangeErrorAt(st.ctx.heap, posPtr, n, where, name, 0, INT32_MAX, POSITIONS_BOUND);
    if (e !== null) return e;
  }
  return st.ctx.statusError(where, status);
}

/** True when the cached table was built for this key. `positions` null means the default positions. */
export function tableHit(st, positions, rows, seqLen, extra) {
  if (!st.tabValid || st.tabRows !== rows || st.tabSeqLen !== seqLen || st.tabExtra !== extra) return false;
  if (positions === null) return st.tabIota;
  if (st.tabIota) return false;
  const a = st.tabPos;
  for (let i = 0; i < rows; i++) if (a[i] !== positions[i]) return false;
  return true;
}

/** The longest key that stageTableKey copies by an element loop (a decode step's 1-4 positions, M-RoPE's 3-12). */
const SMALL_KEY = 16;

/**
 * Copies n positions first into the rope's JS copy (the cache key; also safe from a positions array that views
 * wasm memory, which later allocations may detach), checking each, then into wasm scratch; returns the pointer.
 * A short key (a decode step's new positions) takes an element loop that writes key and scratch in one pass,
 * with the checks and messages of memory.js copyInt32s: a TypedArray.prototype.set call and the helper's
 * lookups cost more than the few elements.
 */
export function stageTableKey(st, where, name, positions, n) {
  const heap = st.ctx.heap;
  if (st.tabPos.length < n) {
    let cap = 16;
    while (cap < n) cap *= 2;
    st.tabPos = new Int32Array(cap);
  }
  const key = st.tabPos;
  if (n <= SMALL_KEY) {
    if (typedArrayTag(positions) === 'Int32Array') {
      // unchecked here, as copyInt32s leaves it: the C core scans the staged values (positionError)
      if (viewLength(positions) !== n) copyInt32s(where, name, positions, n, key, 0, 0, INT32_MAX, POSITIONS_BOUND); // throws
      for (let i = 0; i < n; i++) key[i] = positions[i];
    } else {
      for (let i = 0; i < n; i++) {
        const v = positions[i];
        if (typeof v !== 'number') throw typeError(where, `${name}[${i}] must be ${POSITIONS_BOUND}`, v);
        if (!(Number.isInteger(v) && v >= 0 && v <= INT32_MAX)) throw rangeError(where, `${name}[${i}] must be ${POSITIONS_BOUND}`, v);
        key[i] = v;
      }
    }
  } else {
    copyInt32s(where, name, positions, n, key, 0, 0, INT32_MAX, POSITIONS_BOUND);
  }
  const posPtr = heap.scratch(SLOT.POS, n * 4, where, name);
  const i32 = heap.i32;
  if (n < 64) for (let i = 0, b = posPtr >>> 2; i < n; i++) i32[b + i] = key[i];
  else i32.set(key.length === n ? key : key.subarray(0, n), posPtr >>> 2);
  return posPtr;
}

/** Grows the rope's cos | sin block to hold `rows` rows (a failure leaves no block); returns the cos pointer. */
export function reserveTable(st, rows, where) {
  const heap = st.ctx.heap;
  const need = rows * st.nFreq;
  if (need > st.tabCap) {
    heap.free(st.tabPtr);
    st.tabPtr = 0;
    st.tabCap = 0;
    let cap = 64;
    while (cap < need && cap <= 2 ** 26) cap *= 2; // powers of two up to 2^27 floats (1 GiB for cos | sin)
    if (cap < need) cap = need;
    st.tabPtr = heap.malloc(cap * 8, where, 'the cos | sin table (2 * positions * nFreq floats)');
    st.tabCap = cap;
  }
  return st.tabPtr;
}

/**
 * Builds the rope's cached table for `rows` positions (null: 0 .. rows-1), checking them (memory.js
 * copyInt32s; an Int32Array is checked by the C core's scan). Locate the call's tensors before calling this:
 * it may allocate, and so detach views of wasm memory. A failure leaves no table cached, and the block's size
 * is the size it has.
 */
export function buildTable(st, where, name, positions, rows, seqLen, extra) {
  const { heap, exports: ex } = st.ctx;
  st.tabValid = false; // until the build succeeds
  let posPtr;
  if (positions === null) {
    posPtr = heap.iota(rows, where);
  } else {
    posPtr = stageTableKey(st, where, name, positions, rows);
  }
  const cosPtr = reserveTable(st, rows, where);
  const status = ex.pe_rope_cos_sin(
    cosPtr,
    cosPtr + st.tabCap * 4,
    st.ptr,
    posPtr,
    rows,
    seqLen === -1 ? st.seqLenFromPositions : BigInt(seqLen),
    extra,
  );
  if (status !== 0) throw positionError(st, where, name, positions === null ? 0 : posPtr, rows, status);
  st.tabRows = rows;
  st.tabIota = positions === null;
  st.tabSeqLen = seqLen;
  st.tabExtra = extra;
  st.tabValid = true;
}

/**
 * The table of a re-rotation by `delta`: `rows` equal rows for position |delta|, scaled by 1/a so that
 * a * (1/a) = 1 (a pure rotation); a negative delta turns the other way (the caller picks the direction).
 */
export function rerotateTable(st, where, delta, rows, sl) {
  const heap = st.ctx.heap;
  const n = st.nFreq;
  const posPtr = heap.scratch(SLOT.POS, 4);
  heap.i32[posPtr >>> 2] = Math.abs(delta);
  const cosPtr = heap.scratch(SLOT.COS, rows * n * 4, where, 'the cos table');
  const sinPtr = heap.scratch(SLOT.SIN, rows * n * 4, where, 'the sin table');
  const status = st.ctx.exports.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, 1, sl, 1 / st.scale);
  if (status !== 0) throw st.ctx.statusError(where, status);
  const f32 = heap.f32;
  for (const base of [cosPtr >>> 2, sinPtr >>> 2]) {
    for (let have = 1; have < rows; have *= 2) f32.copyWithin(base + have * n, base, base + Math.min(have, rows - have) * n);
  }
  return { cosPtr, sinPtr };
}
