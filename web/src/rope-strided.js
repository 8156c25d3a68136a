// rope-strided.js — rope.apply and rope.rerotate with strides / offsets: q and k rotated where they lie (a
// fused QKV output, a bhsd KV cache with spare capacity). rope-view.js resolves and checks each view; this file
// locates the arrays, stages the touched span of any array that is not in wasm memory (16-bit data always),
// builds the table and runs the kernel with the view's strides (rope-apply-config.js). Kept apart from the
// dense decode path (rope-apply.js), which never reaches it unless a call gives strides or offsets.

import { SLOT, MAX_TENSOR_LENGTH, float32Length, tensorRecord } from './memory.js';
import { returnData, halfLength, locateData, resolveDtype } from './memory-dtype.js';
import { viewBuffer, viewByteOffset, typedArraySet } from './typed-arrays.js';
import { resolveView, viewsOverlap } from './rope-view.js';
import { positionsLength, tableHit, buildTable, rerotateTable, positionError, stageTableKey, reserveTable } from './rope-table.js';
import { mropeRows, buildMropeTable, mropeRow, mropePairAxis } from './mrope.js';
import { stridedConfig } from './rope-apply-config.js';

const APPLY = 'rope.apply';
const X_NAMES = Object.freeze({ strides: 'options.strides', offset: 'options.offset', x: 'x' });
const K_NAMES = Object.freeze({ strides: 'options.kStrides', offset: 'options.kOffset', x: 'options.k' });

/**
 * The longest sequence (per batch entry) that rope.apply rotates by the fused kernel, pe_rope_apply_positions,
 * when its positions' table is not the cached one: a decode step's new positions. Its cos/sin rows are computed
 * inside the apply (the same rows, bit for bit) and used while in cache, so the step pays no separate table
 * pass and one call fewer; the rows are also stored as the cached table. Longer sequences build the table first
 * (bhsd reads each row once per head group, over all positions).
 */
export const FUSED_MAX_SEQ = 4;

/**
 * options.positions (`p`, read by the caller): length seq (shared by the batch) or batch * seq (M-RoPE: three such streams); values are
 * checked when a table is built. Builds (or reuses) the rope's table for them; returns the row count. The one
 * table step of rope.apply, dense and strided alike. For new positions of a short sequence (FUSED_MAX_SEQ) it
 * builds nothing: st.fusedPos is then the pointer of the staged positions (else 0), and pe_rope_apply_positions
 * (rotateQK) computes the rows inside the apply, keeping them in the table for the next call.
 */
export function applyTable(st, p, B, S, seqLen, extra) {
  let rows = S;
  let positions = null;
  if (p !== undefined && p !== null && st.mrope !== null) {
    rows = mropeRows(APPLY, 'options.positions', p);
    if (rows !== S && rows !== B * S) {
      throw new RangeError(`${APPLY}: options.positions must hold 3 streams of seq (${S}) or batch * seq (${B * S}) positions, length ${3 * S} or ${3 * B * S}, got ${3 * rows}`);
    }
    positions = p;
  } else if (p !== undefined && p !== null) {
    rows = positionsLength(APPLY, 'options.positions', p);
    if (rows !== S && rows !== B * S) {
      throw new RangeError(`${APPLY}: options.positions.length must be seq (${S}) or batch * seq (${B * S}), got ${rows}`);
    }
    positions = p;
  }
  if (rows * st.nFreq > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${APPLY}: positions.length * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${rows * st.nFreq}`);
  }
  st.fusedPos = 0;
  if (st.mrope !== null && positions !== null) {
    if (!tableHit(st, positions, 3 * rows, seqLen, extra)) buildMropeTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
  } else if (!tableHit(st, positions, rows, seqLen, extra)) {
    if (positions !== null && S <= FUSED_MAX_SEQ) {
      // the fused kernel fills the table as it goes: the key now, marked valid once the kernel succeeds
      st.tabValid = false;
      st.fusedPos = stageTableKey(st, APPLY, 'options.positions', positions, rows);
      reserveTable(st, rows, APPLY);
    } else {
      buildTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
    }
  }
  return rows;
}

/**
 * Rotates q at qPtr (and k at kPtr unless 0) after applyTable: by the cached table, or fused from the staged
 * positions. qCfg / kCfg: their config blocks. Throws the C status as rope.apply's error.
 */
export function rotateQK(st, qPtr, kPtr, qCfg, kCfg, rows, seqLen, extra) {
  const ex = st.ctx.exports;
  const posPtr = st.fusedPos;
  if (posPtr !== 0) {
    st.fusedPos = 0;
    const sl = seqLen === -1 ? st.seqLenFromPositions : BigInt(seqLen);
    const cosPtr = st.tabPtr;
    const status = ex.pe_rope_apply_positions(st.ptr, qPtr, kPtr, cosPtr, cosPtr + st.tabCap * 4, posPtr, sl, extra, qCfg, kCfg);
    if (status !== 0) throw positionError(st, APPLY, 'options.positions', posPtr, rows, status);
    // the kernel kept its rows in the table: the next call with these positions reads them (an M-RoPE rope's
    // key is its three equal streams, mrope.js mropeApplyTable)
    st.tabRows = st.mrope !== null ? 3 * rows : rows;
    st.tabIota = false;
    st.tabSeqLen = seqLen;
    st.tabExtra = extra;
    st.tabValid = true;
    return;
  }
  const cosPtr = st.tabPtr;
  const status = ex.pe_rope_apply_qk(st.ptr, qPtr, kPtr, cosPtr, cosPtr + st.tabCap * 4, qCfg, kCfg);
  if (status !== 0) throw st.ctx.statusError(APPLY, status);
}

/**
 * A view over elements [from, to) of a staged array x of `esz`-byte elements, made without x's own
 * (overridable) methods: a Float32Array for float32, the bytes (Uint8Array) for 16-bit data.
 */
function spanOf(x, from, to, esz) {
  return esz === 4
    ? new Float32Array(viewBuffer(x), viewByteOffset(x) + from * 4, to - from)
    : new Uint8Array(viewBuffer(x), viewByteOffset(x) + from * 2, (to - from) * 2);
}

/** Copies span view `span` (spanOf) into scratch slot `slot`; returns the pointer. */
function stageSpan(heap, span, slot, where) {
  const bytes = span.byteLength;
  const ptr = heap.scratch(slot, bytes, where, 'a copy of the span of an array argument that the call touches');
  if (span instanceof Float32Array) heap.f32.set(span, ptr >>> 2);
  else heap.u8.set(span, ptr);
  return ptr;
}

/** Copies the staged span back from ptr. */
function unstageSpan(heap, span, ptr) {
  if (span instanceof Float32Array) typedArraySet(span, heap.f32.subarray(ptr >>> 2, (ptr >>> 2) + span.length));
  else typedArraySet(span, heap.u8.subarray(ptr, ptr + span.length));
}

/** A strided argument's length in elements of its dtype (checked to be data of that type). */
function stridedLength(heap, a, name, dtype, where = APPLY) {
  return dtype === 0 ? float32Length(heap, a, where, name) : halfLength(heap, a, dtype, where, name);
}

/**
 * rope.apply with strides / offsets (see rope-view.js for the view and the checks); p and dt: options.positions
 * and options.dtype, as read by applyRope.
 */
export function applyStrided(st, x, p, dt, xs, xo, k, ks, ko, B, S, H, kH, layout, bhsd, seqLen, inverse, rotation) {
  const heap = st.ctx.heap;
  const D = st.headDim;
  // locate before anything is allocated (an allocation may detach a view of wasm memory); a pe.tensor (the
  // usual case) by one record lookup: its dtype, length and pointer
  const xr = tensorRecord(heap, x, APPLY, 'x');
  let dtype;
  let xLen;
  let xLoc;
  if (xr !== null && (dt === undefined || dt === null)) {
    dtype = xr.dtype;
    xLen = xr.length;
    xLoc = xr.ptr;
  } else {
    dtype = resolveDtype(APPLY, dt, x);
    xLen = stridedLength(heap, x, 'x', dtype);
    xLoc = locateData(heap, x, xLen, dtype, APPLY, 'x');
  }
  const esz = dtype === 0 ? 4 : 2;
  const xv = resolveView(APPLY, X_NAMES, xs, xo, B, S, H, D, bhsd, xLen, st.xView);
  let kLoc = -1;
  let kv = null;
  let shared = false; // x and k are staged arrays whose touched spans share a buffer and intersect
  if (k !== null) {
    const kr = k === x ? xr : tensorRecord(heap, k, APPLY, 'options.k');
    let kLen;
    if (kr !== null && kr.dtype === dtype) {
      kLen = kr.length;
      kLoc = kr.ptr;
    } else {
      kLen = stridedLength(heap, k, 'options.k', dtype);
      kLoc = locateData(heap, k, kLen, dtype, APPLY, 'options.k');
    }
    kv = resolveView(APPLY, K_NAMES, ks, ko, B, S, kH, D, bhsd, kLen, st.kView, ks === xs);
    // x and k in the same memory (wasm memory, or one buffer of staged arrays): element addresses there
    const inWasm = xLoc !== -1;
    if (inWasm === (kLoc !== -1) && (inWasm || viewBuffer(x) === viewBuffer(k))) {
      const bx = inWasm ? xLoc / esz : viewByteOffset(x) / esz;
      const bk = inWasm ? kLoc / esz : viewByteOffset(k) / esz;
      const why = Number.isInteger(bk - bx) ? viewsOverlap(xv, kv, bk + kv.off - (bx + xv.off), B, S, H, kH, D) : 'x and options.k are not aligned to each other';
      if (why !== null) throw new RangeError(`${APPLY}: options.k must not overlap x (each is rotated in place once): ${why}`);
      shared = !inWasm && bx + xv.off < bk + kv.end && bk + kv.off < bx + xv.end;
    }
  }
  const extra = inverse ? st.inverseScale : 1;
  const rows = applyTable(st, p, B, S, seqLen, extra);
  const perBatch = rows !== S ? 1 : 0;

  // the pointers the kernel works on: a view's first element, in place or in a copy of the touched span
  let xSpan = null;
  let kSpan = null;
  let xSpanPtr = 0;
  let xPtr = xLoc !== -1 ? xLoc + xv.off * esz : 0;
  let kPtr = kv !== null && kLoc !== -1 ? kLoc + kv.off * esz : 0;
  if (shared) {
    // one copy of the union of both spans, so neither copy-back undoes the other's rotation
    const kShift = (viewByteOffset(k) - viewByteOffset(x)) / esz; // k's element 0 in x's coordinates
    const from = Math.min(xv.off, kShift + kv.off);
    const to = Math.max(xv.end, kShift + kv.end);
    xSpan = spanOf(x, from, to, esz);
    xSpanPtr = stageSpan(heap, xSpan, SLOT.X, APPLY);
    xPtr = xSpanPtr + (xv.off - from) * esz;
    kPtr = xSpanPtr + (kShift + kv.off - from) * esz;
  } else {
    // both blocks first, then the copies: no allocation after a copy
    if (xLoc === -1) xSpan = spanOf(x, xv.off, xv.end, esz);
    if (kv !== null && kLoc === -1) kSpan = spanOf(k, kv.off, kv.end, esz);
    if (xSpan !== null) xSpanPtr = xPtr = heap.scratch(SLOT.X, xSpan.byteLength, APPLY, 'a copy of the span of x that the call touches');
    if (kSpan !== null) kPtr = heap.scratch(SLOT.K, kSpan.byteLength, APPLY, 'a copy of the span of options.k that the call touches');
    if (xSpan !== null) copySpanIn(heap, xSpan, xPtr);
    if (kSpan !== null) copySpanIn(heap, kSpan, kPtr);
  }
  // q and k go to pe_rope_apply_qk as two views, also where k's heads continue q's in a per-token fused QKV
  // buffer: the kernel then walks them in the order it walks two dense tensors (past its streaming size, q's
  // head j with k's head j). Merged into one view of heads + kHeads heads, a fused [1, 2048, (32 + 2*8)*128]
  // prefill ran 1.58x the dense call; as two views 0.92x.
  // (the config blocks remember these strides: the next call with the same view writes nothing, a dense one
  // writes its zeros back)
  const qCfg = stridedConfig(st, B, S, H, layout, perBatch, rotation, xv, dtype);
  const kCfg = kv !== null ? stridedConfig(st, B, S, kH, layout, perBatch, rotation, kv, dtype, true) : 0;
  rotateQK(st, xPtr, kv !== null ? kPtr : 0, qCfg, kCfg, rows, seqLen, extra);
  if (xSpan !== null) unstageSpan(heap, xSpan, xSpanPtr);
  if (kSpan !== null) unstageSpan(heap, kSpan, kPtr);
  return xLoc === -1 || xr !== null ? x : returnData(heap, x, xLoc, xLoc, xLen, dtype);
}

function copySpanIn(heap, span, ptr) {
  if (span instanceof Float32Array) heap.f32.set(span, ptr >>> 2);
  else heap.u8.set(span, ptr);
}

/**
 * The table of an M-RoPE shift by one delta per axis [dt, dh, dw]: `rows` equal rows for the positions |delta|,
 * scaled by 1/a (a pure rotation), with the sin of every pair whose axis delta is negative negated. Cos is even
 * and sin odd, so one forward pass turns each pair by its own signed angle: mixed signs cost one pass, and
 * 16-bit data are rounded once.
 */
export function mropeShiftTable(st, where, deltas, rows, sl) {
  const heap = st.ctx.heap;
  const n = st.nFreq;
  if (st.mropeAxis === undefined) st.mropeAxis = mropePairAxis(st, where);
  const axis = st.mropeAxis;
  // grown first: mropeRow's one-row request then keeps these blocks
  heap.scratch(SLOT.COS, rows * n * 4, where, 'the cos table');
  heap.scratch(SLOT.SIN, rows * n * 4, where, 'the sin table');
  const { cosPtr, sinPtr } = mropeRow(st, where, deltas.map(Math.abs), sl, 1 / st.scale);
  const f32 = heap.f32;
  const s0 = sinPtr >>> 2;
  for (let i = 0; i < n; i++) if (deltas[axis[i]] < 0) f32[s0 + i] = -f32[s0 + i];
  for (const base of [cosPtr >>> 2, s0]) {
    for (let have = 1; have < rows; have *= 2) f32.copyWithin(base + have * n, base, base + Math.min(have, rows - have) * n);
  }
  return { cosPtr, sinPtr };
}

/**
 * rope.rerotate with strides / offset: every head vector of the view turns by the same angle. The kernel reads
 * one table row per seq index, so the shorter of the batch and seq axes is given to it as "seq" (the axes
 * only address elements here) and the table holds that many equal rows. dtype: x's pe_dtype (resolved);
 * deltas: M-RoPE's [dt, dh, dw] (then `delta` is not read), or null.
 */
export function rerotateStrided(st, where, x, delta, xs, xo, dims, bhsd, sl, dtype = 0, deltas = null) {
  const heap = st.ctx.heap;
  const D = st.headDim;
  const [B, S, H] = dims;
  const esz = dtype === 0 ? 4 : 2;
  const xLen = stridedLength(heap, x, 'x', dtype, where);
  const xLoc = locateData(heap, x, xLen, dtype, where, 'x');
  const v = resolveView(where, X_NAMES, xs, xo, B, S, H, D, bhsd, xLen, st.xView);
  let span = null;
  let xPtr;
  if (xLoc !== -1) {
    xPtr = xLoc + v.off * esz;
  } else {
    span = spanOf(x, v.off, v.end, esz);
    xPtr = stageSpan(heap, span, SLOT.X, where);
  }
  if (deltas !== null ? deltas[0] !== 0 || deltas[1] !== 0 || deltas[2] !== 0 : delta !== 0) {
    const swap = B < S;
    const cb = swap ? S : B;
    const cs = swap ? B : S;
    const view = swap ? { sb: v.ss, ss: v.sb, sh: v.sh } : v;
    const { cosPtr, sinPtr } = deltas !== null ? mropeShiftTable(st, where, deltas, cs, sl) : rerotateTable(st, where, delta, cs, sl);
    const rotation = deltas === null && delta < 0 ? st.rotateInverse : st.rotateForward;
    const status = st.ctx.exports.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, stridedConfig(st, cb, cs, H, st.layoutBshd, 0, rotation, view, dtype));
    if (status !== 0) throw st.ctx.statusError(where, status);
  }
  if (span !== null) {
    unstageSpan(heap, span, xPtr);
    return x;
  }
  return returnData(heap, x, xLoc, xLoc, xLen, dtype);
}
