// rope-view.js — layouts, shapes and strided views for rope.apply / rope.rerotate (the geometry; the strided
// apply itself is rope-strided.js).
//
// Shapes: a named { batch, seq, heads, headDim } or an array in the tensor's own memory order, what x.shape
// prints in PyTorch or ORT: [b, s, h, d] for 'bshd', [b, h, s, d] for 'bhsd'.
//
// Views: head vector (b, s, h) of headDim contiguous floats starts at element
//     offset + b * strides.batch + s * strides.seq + h * strides.heads
// so q and k can be rotated where they lie inside a fused QKV projection output, and a bhsd KV cache with
// spare capacity is used as it is. Before the kernel runs, every element a call can touch is checked to lie
// inside the array: the furthest is offset + sum (count - 1) * stride + headDim - 1. Each term is compared
// with the array's length (< 2^30) before it is added, so every sum stays far below 2^53, where Numbers are
// exact; a product past 2^53 is rounded but then also past the length, so the comparison is still right.
// Head vectors that overlap (one would be rotated twice) are refused, within one view and between q and k.

import { checkInt, checkOptions, checkKnownKeys, knownKeys, typeError, INT32_MAX } from './errors.js';
import { MAX_TENSOR_LENGTH } from './memory.js';

/** The memory orders of rope.apply / rope.rerotate (and the families that take their layout option). */
export const LAYOUTS = Object.freeze(['bshd', 'bhsd']);

const SHAPE_KEYS = knownKeys('batch', 'seq', 'heads', 'headDim');
const STRIDE_KEYS = knownKeys('batch', 'seq', 'heads');
const AXES = ['batch', 'seq', 'heads'];

/**
 * options.shape -> [batch, seq, heads] (logical), checked against the rope's headDim and the size limit.
 * An array is read in the layout's memory order; a named object by name (headDim may be left out).
 */
export function readShape(where, shape, headDim, bhsd) {
  const order = bhsd ? '[batch, heads, seq, headDim] (bhsd memory order)' : '[batch, seq, heads, headDim] (bshd memory order)';
  const bound = `options.shape must be ${order} of integers >= 1, or { batch, seq, heads, headDim }`;
  if (shape === null || typeof shape !== 'object') throw typeError(where, bound, shape);
  let B;
  let S;
  let H;
  let d;
  if (typeof shape.length === 'number') {
    const n = shape.length;
    if (n !== 4) throw new RangeError(`${where}: ${bound}, got length ${n}`);
    const names = bhsd ? ['batch', 'heads', 'seq', 'headDim'] : ['batch', 'seq', 'heads', 'headDim'];
    const v = [0, 0, 0, 0];
    for (let i = 0; i < 4; i++) v[i] = checkInt(where, `options.shape[${i}] (${names[i]})`, shape[i], 1, INT32_MAX);
    B = v[0];
    S = bhsd ? v[2] : v[1];
    H = bhsd ? v[1] : v[2];
    d = v[3];
    if (d !== headDim) {
      throw new RangeError(`${where}: options.shape[3] (headDim) must equal this rope's headDim ${headDim}, got ${d}`);
    }
  } else {
    const o = checkOptions(where, 'options.shape', shape);
    checkKnownKeys(where, 'options.shape', o, SHAPE_KEYS);
    B = checkInt(where, 'options.shape.batch', o.batch, 1, INT32_MAX);
    S = checkInt(where, 'options.shape.seq', o.seq, 1, INT32_MAX);
    H = checkInt(where, 'options.shape.heads', o.heads, 1, INT32_MAX);
    if (o.headDim !== undefined && checkInt(where, 'options.shape.headDim', o.headDim, 1, INT32_MAX) !== headDim) {
      throw new RangeError(`${where}: options.shape.headDim must equal this rope's headDim ${headDim}, got ${o.headDim}`);
    }
  }
  const total = B * S * H * headDim;
  if (total > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: options.shape must hold at most ${MAX_TENSOR_LENGTH} elements, got ${total}`);
  }
  return [B, S, H];
}

const MAX_STRIDE = Number.MAX_SAFE_INTEGER;
// (v >>> 0) === v: an integer in [0, 2^32) in one comparison (every stride a runtime passes); larger integers
// up to 2^53 by the long test
const isStride = (v) => typeof v === 'number' && ((v >>> 0) === v || (v >= 0 && v <= MAX_STRIDE && Math.floor(v) === v));

// The stride values the last resolveView call read (checked numbers, or undefined for an axis not given)
let lastB;
let lastS;
let lastH;

// The nesting check's scratch (no allocation per call; nothing the caller controls runs while it is in use)
const nestStride = new Float64Array(3);
const nestCount = new Float64Array(3);
const nestAxis = new Int32Array(3);

/**
 * A view { off, sb, ss, sh, end }, for resolveView to fill (one per rope and argument, reused); B, S, H, D: the
 * counts its strides were last proven not to overlap for (0: none yet).
 */
export function newView() {
  return { off: 0, sb: 0, ss: 0, sh: 0, end: 0, B: 0, S: 0, H: 0, D: 0 };
}

/**
 * Resolves and checks one view into `v`: strides (an object with any of batch, seq, heads, each read once;
 * the rest dense for the layout) and offset, for (B, S, H) head vectors of D floats in an array of `length`
 * floats. `names` spells the options in messages ({ strides: 'options.strides', offset: 'options.offset',
 * x: 'x' }). Fills v with { off, sb, ss, sh, end }, end = the furthest element touched + 1; a stride of an
 * axis of one element is set to 0 (it addresses nothing). Returns v. `sameAsLast`: strides is the object the
 * previous resolveView call read (q and k in one fused buffer pass one strides object for both): its values
 * are taken from that read, so each is read once per call.
 */
export function resolveView(where, names, strides, offset, B, S, H, D, bhsd, length, v, sameAsLast = false) {
  let sb = bhsd ? H * S * D : S * H * D;
  let ss = bhsd ? D : H * D;
  let sh = bhsd ? S * D : D;
  if (sameAsLast && strides !== undefined && strides !== null) {
    if (lastB !== undefined) sb = lastB;
    if (lastS !== undefined) ss = lastS;
    if (lastH !== undefined) sh = lastH;
  } else if (strides !== undefined && strides !== null) {
    if (typeof strides !== 'object' || Array.isArray(strides) || ArrayBuffer.isView(strides)) {
      throw typeError(where, `${names.strides} must be { batch, seq, heads }: element strides (integers >= 0)`, strides);
    }
    // one pass: each key checked and read once, through the enum cache whatever the object's shape (named
    // loads of strides objects of several shapes go megamorphic)
    let b;
    let s;
    let h;
    for (const key in strides) {
      if (key === 'batch') b = strides[key];
      else if (key === 'seq') s = strides[key];
      else if (key === 'heads') h = strides[key];
      else checkKnownKeys(where, names.strides, strides, STRIDE_KEYS); // throws
    }
    if (b !== undefined) sb = isStride(b) ? b : checkInt(where, `${names.strides}.batch`, b, 0, MAX_STRIDE);
    if (s !== undefined) ss = isStride(s) ? s : checkInt(where, `${names.strides}.seq`, s, 0, MAX_STRIDE);
    if (h !== undefined) sh = isStride(h) ? h : checkInt(where, `${names.strides}.heads`, h, 0, MAX_STRIDE);
    lastB = b;
    lastS = s;
    lastH = h;
  }
  const off = offset === undefined || offset === null ? 0 : isStride(offset) ? offset : checkInt(where, names.offset, offset, 0, MAX_STRIDE);
  if (B === 1) sb = 0; // the C core's 0 (dense) then addresses nothing else
  if (S === 1) ss = 0;
  if (H === 1) sh = 0;
  // extent: offset + sum (count - 1) * stride + D <= length, each term checked before it is added
  const tb = (B - 1) * sb;
  const ts = (S - 1) * ss;
  const th = (H - 1) * sh;
  const end = off + D + tb + ts + th; // exact when every term is <= length (< 2^30), checked next
  if (off > length || tb > length || ts > length || th > length || end > length) {
    throw extentError(where, names, off, [B, S, H], [sb, ss, sh], [tb, ts, th], end, length);
  }
  // no two head vectors overlap: the axes with more than one element, sorted by stride, nest (the smallest
  // stride >= headDim, each next one >= the previous stride * its count), as the C core requires too
  // (a function of the counts and strides only: the view that passed last time with the same ones, every
  // decode step of a runtime, passes again without the sort)
  if (v.B !== B || v.S !== S || v.H !== H || v.D !== D || v.sb !== sb || v.ss !== ss || v.sh !== sh) {
    const bad = nestFailure(B, S, H, sb, ss, sh, D);
    if (bad !== -1) throw overlapError(where, names, bad, bad === 0 ? D : nestStride[bad - 1] * nestCount[bad - 1], D);
    v.B = B;
    v.S = S;
    v.H = H;
    v.D = D;
  }
  v.off = off;
  v.sb = sb;
  v.ss = ss;
  v.sh = sh;
  v.end = end;
  return v;
}

/**
 * -1 when the (B, S, H) head vectors of D floats at strides (sb, ss, sh) do not overlap (the axes of more than
 * one element, sorted by stride, nest), else the sorted index of the first axis that breaks it (nestAxis,
 * nestStride and nestCount then describe the sorted axes).
 */
export function nestFailure(B, S, H, sb, ss, sh, D) {
  let m = 0;
  if (B > 1) (nestStride[m] = sb), (nestCount[m] = B), (nestAxis[m++] = 0);
  if (S > 1) (nestStride[m] = ss), (nestCount[m] = S), (nestAxis[m++] = 1);
  if (H > 1) (nestStride[m] = sh), (nestCount[m] = H), (nestAxis[m++] = 2);
  for (let i = 1; i < m; i++) {
    for (let j = i; j > 0 && nestStride[j] < nestStride[j - 1]; j--) {
      const t0 = nestStride[j];
      const t1 = nestCount[j];
      const t2 = nestAxis[j];
      nestStride[j] = nestStride[j - 1];
      nestCount[j] = nestCount[j - 1];
      nestAxis[j] = nestAxis[j - 1];
      nestStride[j - 1] = t0;
      nestCount[j - 1] = t1;
      nestAxis[j - 1] = t2;
    }
  }
  let need = D;
  for (let i = 0; i < m; i++) {
    if (nestStride[i] < need) return i;
    need = nestStride[i] * nestCount[i];
  }
  return -1;
}

function extentError(where, names, off, counts, st, terms, end, length) {
  const sum = `${names.offset} + (batch - 1) * ${names.strides}.batch + (seq - 1) * ${names.strides}.seq + (heads - 1) * ${names.strides}.heads + headDim`;
  const bound = `${names.x}.length (${length})`;
  for (let a = 0; a < 3; a++) {
    if (terms[a] > length) {
      return new RangeError(
        `${where}: ${names.x}'s view reaches past its end: ${sum} must be at most ${bound}; (${AXES[a]} - 1) * ${names.strides}.${AXES[a]} alone is ${terms[a]} (${AXES[a]} ${counts[a]}, stride ${st[a]})`,
      );
    }
  }
  return new RangeError(
    `${where}: ${names.x}'s view reaches past its end: ${sum} must be at most ${bound}, got ${end} (offset ${off}, strides { batch: ${st[0]}, seq: ${st[1]}, heads: ${st[2]} })`,
  );
}

function overlapError(where, names, i, need, D) {
  const a = nestAxis[i];
  const what = i === 0 ? 'headDim' : `${names.strides}.${AXES[nestAxis[i - 1]]} * ${AXES[nestAxis[i - 1]]} (${nestStride[i - 1]} * ${nestCount[i - 1]})`;
  return new RangeError(
    `${where}: ${names.strides}.${AXES[a]} (${nestStride[i]}) makes ${names.x}'s head vectors overlap: it must be at least ${what} (${i === 0 ? D : need})`,
  );
}

/**
 * Whether two views over the same memory share an element: q and k, whose first head vectors are `delta`
 * elements apart (k's minus q's), with B, S shared and Hq / Hk heads of D floats. Exact for the layouts a
 * runtime has (fused per-token and per-head QKV, separate regions); a pair it cannot tell apart in O(1) is
 * reported as overlapping, with a message that says so. Returns null when they are apart, else a reason.
 */
export function viewsOverlap(q, k, delta, B, S, Hq, Hk, D) {
  // disjoint hulls
  if (delta >= q.end - q.off || -delta >= k.end - k.off) return null;
  const why = 'their head vectors could not be proven apart (give q and k the same batch, seq and heads strides)';
  // the token lattice b * sb + s * ss must be common to both views
  if ((B > 1 && q.sb !== k.sb) || (S > 1 && q.ss !== k.ss)) return why;
  // W: the smallest token stride in use; distinct tokens are at least W apart (the token axes nest)
  let W = Infinity;
  if (B > 1) W = Math.min(W, q.sb);
  if (S > 1) W = Math.min(W, q.ss);
  const spanQ = (Hq - 1) * q.sh + D;
  const spanK = (Hk - 1) * k.sh + D;
  const lo = Math.min(0, delta);
  const hi = Math.max(spanQ, delta + spanK);
  if (hi - lo > W) return why; // one token's q and k heads do not fit in one token's window
  // within one token: q heads start at i * sq (i < Hq), k heads at delta + j * sk (j < Hk)
  if (Hq > 1 && Hk > 1 && q.sh !== k.sh) return why;
  const s = Hk > 1 ? k.sh : q.sh;
  const mLo = Hq > 1 ? -(Hq - 1) : 0;
  const mHi = Hk > 1 ? Hk - 1 : 0;
  // some m in [mLo, mHi] with |delta + m * s| < D?
  const c0 = s === 0 ? 0 : Math.floor(-delta / s);
  const m0 = Math.min(mHi, Math.max(mLo, c0));
  const m1 = Math.min(mHi, Math.max(mLo, c0 + 1));
  if (Math.abs(delta + m0 * s) < D || Math.abs(delta + m1 * s) < D) return 'a head vector of options.k shares elements with one of x';
  return null;
}
