// attention-mrope.js — pe.attention with an M-RoPE rope (Qwen2-VL, Qwen2.5-VL: chunked; Qwen3-VL: interleaved).
//
// The C attention core rotates by one position stream. An M-RoPE rope needs three (t, h, w), so this file
// rotates q and k here, with the rope's own M-RoPE table (mrope.js) and pe_rope_apply — the table and kernel
// that rope.apply uses — and attention.js then runs the core with no rope. Attending with an M-RoPE rope is
// therefore, bit for bit, rope.apply on q and k followed by pe.attention without a rope.
//
// Positions: options.positions { q, k }, each three streams [t..., h..., w...] (HF's position_ids [3, batch,
// seq] flattened): 3·qLen values shared by the batch or 3·batch·qLen per sequence (left padding), kLen likewise.
// They drive the rotation only. The causal mask and ALiBi use the token order (key j at j, query i at
// kLen − qLen + i), as transformers masks Qwen-VL models by cache_position: every patch of an image shares its
// temporal position, so masking by the t stream would let an image's patches see each other both ways.
// One frequency set serves q and k: options.seqLen, else max over all six streams + 1 (dynamic scaling).
//
// Memory: q is rotated in the copy attention.js staged (a plain Float32Array's), or, when q is a pe.tensor or
// shares its staged copy with k or v (a fused QKV buffer), in a copy of its own (SLOT.MQ); k likewise
// (SLOT.MK). The slots and the position copies are reused from call to call.

import { checkKnownKeys, typeError, INT32_MAX } from './errors.js';
import { SLOT, copyInt32s } from './memory.js';
import { POSITIONS_BOUND, tableHit } from './rope-table.js';
import { mropeRows, buildMropeTable } from './mrope.js';
import { applyConfig, stridedConfig } from './rope-apply-config.js';

const BOUND = 'options.positions must be an object { q, k } for an M-RoPE options.rope, each three streams [t..., h..., w...] (HF position_ids [3, batch, seq] flattened)';
const copies = new WeakMap(); // rope state -> { q: Int32Array, k: Int32Array }, grown as needed

/** One positions part checked for length and copied, values checked, into the rope's reused buffer. */
function readPart(st, where, part, values, len, batch, lenName, required) {
  const name = `options.positions.${part}`;
  if (values === undefined || values === null) {
    if (!required) return null;
    throw new TypeError(
      `${where}: ${name} is required with an M-RoPE options.rope: three streams [t..., h..., w...] of ${lenName} positions, length 3 * ${lenName} = ${3 * len}${batch > 1 ? ` (or 3 * batch * ${lenName} = ${3 * batch * len}, one row per sequence)` : ''}`,
    );
  }
  const rows = mropeRows(where, name, values); // RangeError unless the length divides by 3
  if (rows !== len && rows !== batch * len) {
    throw new RangeError(
      `${where}: ${name} must hold three streams of ${lenName} (${len}) positions (shared by the batch) or of batch * ${lenName} (${batch * len}) (one row per sequence): length ${3 * len} or ${3 * batch * len}, got ${3 * rows}`,
    );
  }
  const n = 3 * rows;
  let c = copies.get(st);
  if (c === undefined) copies.set(st, (c = { q: new Int32Array(0), k: new Int32Array(0) }));
  if (c[part].length < n) c[part] = new Int32Array(Math.max(n, 2 * c[part].length));
  const buf = c[part];
  copyInt32s(where, name, values, n, buf, 0, 0, INT32_MAX, POSITIONS_BOUND);
  let max = 0;
  for (let i = 0; i < n; i++) {
    const v = buf[i];
    if (v < 0) throw new RangeError(`${where}: ${name}[${i}] must be ${POSITIONS_BOUND}, got ${v}`); // an Int32Array is copied unchecked
    if (v > max) max = v;
  }
  return { name, key: buf.subarray(0, n), rows, perBatch: rows !== len ? 1 : 0, max };
}

/**
 * Checks options.positions (and options.dtype) for an M-RoPE rope (state `st`, from rope.js ropeHandle) against
 * shape `s`; k's are optional with kRotated (the keys are already rotated). Returns the plan rotateMrope carries out.
 */
export function readMropeAttention(st, where, o, s, kRotated) {
  if (o.dtype !== undefined && o.dtype !== null && o.dtype !== 'float32') {
    throw new RangeError(`${where}: options.dtype must be 'float32' with an M-RoPE options.rope (16-bit storage is not built for it), got ${JSON.stringify(o.dtype)}`);
  }
  const p = o.positions;
  if (p === undefined || p === null || typeof p !== 'object' || Array.isArray(p) || ArrayBuffer.isView(p) || typeof p.length === 'number') {
    throw typeError(where, BOUND, p);
  }
  checkKnownKeys(where, 'options.positions', p, ['q', 'k']);
  const q = readPart(st, where, 'q', p.q, s.qLen, s.batch, 'qLen', true);
  const k = readPart(st, where, 'k', p.k, s.kLen, s.batch, 'kLen', !kRotated);
  return { st, q, k: kRotated ? null : k, max: Math.max(q.max, k === null ? 0 : k.max) };
}

/**
 * Rotates one staged tensor (`ptr`, located at `loc` with `n` floats, view `view`) by part `part`'s table;
 * returns the pointer attention must read it from.
 */
function rotate(m, heap, part, slot, ptr, loc, n, shared, view, B, S, H, layout, seqLen, where) {
  const st = m.st;
  let x = ptr;
  if (loc.loc !== -1 || shared) {
    // a pe.tensor (zero-copy: the caller's data) or a copy that k or v also read: rotate a copy of our own
    x = heap.scratch(slot, n * 4, where, `a copy of ${part} to rotate`);
    heap.f32.copyWithin(x >>> 2, ptr >>> 2, (ptr >>> 2) + n);
  }
  const pp = m[part];
  if (!tableHit(st, pp.key, 3 * pp.rows, seqLen, 1)) buildMropeTable(st, where, pp.name, pp.key, pp.rows, seqLen, 1);
  const cosPtr = st.tabPtr;
  const sinPtr = cosPtr + st.tabCap * 4;
  const ex = st.ctx.exports;
  const first = x + view.offset * 4;
  let status;
  if (!view.given) {
    status = ex.pe_rope_apply(st.ptr, first, cosPtr, sinPtr, applyConfig(st, B, S, H, layout, pp.perBatch, st.rotateForward));
  } else {
    const v = { sb: view.strides[0], ss: view.strides[1], sh: view.strides[2] }; // 0: dense, as attention's views
    status = ex.pe_rope_apply(st.ptr, first, cosPtr, sinPtr, stridedConfig(st, B, S, H, layout, pp.perBatch, st.rotateForward, v));
  }
  if (status !== 0) throw st.ctx.statusError(where, status);
  return x;
}

/**
 * After attention.js has staged q, k and v: rotates q (and k unless kRotated) as plan `m` says and returns
 * { qPtr, kPtr }, the pointers the core reads. `a`: { qPtr, kPtr, vPtr, lq, lk, views, s, layout, seqLen }.
 */
export function rotateMrope(ctx, m, a, where) {
  const { heap } = ctx;
  const { s } = a;
  const seqLen = a.seqLen > 0 ? a.seqLen : m.max + 1;
  const qShared = a.qPtr === a.kPtr || a.qPtr === a.vPtr;
  const qPtr = rotate(m, heap, 'q', SLOT.MQ, a.qPtr, a.lq, a.lq.n, qShared, a.views.q, s.batch, s.qLen, s.heads, a.layout, seqLen, where);
  let kPtr = a.kPtr;
  if (m.k !== null) {
    const kShared = a.kPtr === a.qPtr || a.kPtr === a.vPtr;
    kPtr = rotate(m, heap, 'k', SLOT.MK, a.kPtr, a.lk, a.lk.n, kShared, a.views.k, s.batch, s.kLen, s.kvHeads, a.layout, seqLen, where);
  }
  return { qPtr, kPtr };
}
