// rope-view.js — shapes and strided views for rope.apply / rope.rerotate.
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

/** The dense strides [batch, seq, heads] of a (B, S, H, D) tensor in the layout's memory order. */
function denseStrides(S, H, D, bhsd) {
  return bhsd ? [H * S * D, D, S * D] : [S * H * D, H * D, D];
}

/**
 * Resolves and checks one view: strides (an object with any of batch, seq, heads; the rest dense for the
 * layout) and offset, for (B, S, H) head vectors of D floats in an array of `length` floats. `names` spells
 * the options in messages ({ strides: 'options.strides', offset: 'options.offset', x: 'x' }).
 * Returns { off, sb, ss, sh, end } with end = the furthest element touched + 1.
 */
export function resolveView(where, names, strides, offset, B, S, H, D, bhsd, length) {
  const counts = [B, S, H];
  const st = denseStrides(S, H, D, bhsd);
  if (strides !== undefined && strides !== null) {
    if (typeof strides !== 'object' || Array.isArray(strides) || ArrayBuffer.isView(strides)) {
      throw typeError(where, `${names.strides} must be { batch, seq, heads }: element strides (integers >= 0)`, strides);
    }
    const o = { ...strides };
    checkKnownKeys(where, names.strides, o, STRIDE_KEYS);
    for (let a = 0; a < 3; a++) {
      const v = o[AXES[a]];
      if (v !== undefined) st[a] = checkInt(where, `${names.strides}.${AXES[a]}`, v, 0, Number.MAX_SAFE_INTEGER);
    }
  }
  const off = offset === undefined || offset === null ? 0 : checkInt(where, names.offset, offset, 0, Number.MAX_SAFE_INTEGER);
  // extent: offset + sum (count - 1) * stride + D <= length, each term checked before it is added
  const sum = `${names.offset} + (batch - 1) * ${names.strides}.batch + (seq - 1) * ${names.strides}.seq + (heads - 1) * ${names.strides}.heads + headDim`;
  const bound = `${names.x}.length (${length})`;
  let end = off + D;
  const past = off > length;
  for (let a = 0; a < 3; a++) {
    if (counts[a] === 1) {
      st[a] = 0; // never used: the C core's 0 (dense) addresses nothing else
      continue;
    }
    const span = (counts[a] - 1) * st[a];
    if (span > length) {
      throw new RangeError(
        `${where}: ${names.x}'s view reaches past its end: ${sum} must be at most ${bound}; (${AXES[a]} - 1) * ${names.strides}.${AXES[a]} alone is ${span} (${AXES[a]} ${counts[a]}, stride ${st[a]})`,
      );
    }
    end += span; // each term <= length < 2^30: exact
  }
  if (past || end > length) {
    throw new RangeError(`${where}: ${names.x}'s view reaches past its end: ${sum} must be at most ${bound}, got ${end} (offset ${off}, strides { batch: ${st[0]}, seq: ${st[1]}, heads: ${st[2]} })`);
  }
  // no two head vectors overlap: the axes with more than one element, sorted by stride, nest (the smallest
  // stride >= headDim, each next one >= the previous stride * its count), as the C core requires too
  const axes = [0, 1, 2].filter((a) => counts[a] > 1).sort((p, q) => st[p] - st[q]);
  let need = D;
  let needWhat = 'headDim';
  for (const a of axes) {
    if (st[a] < need) {
      throw new RangeError(
        `${where}: ${names.strides}.${AXES[a]} (${st[a]}) makes ${names.x}'s head vectors overlap: it must be at least ${needWhat} (${need})`,
      );
    }
    need = st[a] * counts[a];
    needWhat = `${names.strides}.${AXES[a]} * ${AXES[a]} (${st[a]} * ${counts[a]})`;
  }
  return { off, sb: st[0], ss: st[1], sh: st[2], end };
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
  const cands = s === 0 ? [0] : [Math.floor(-delta / s), Math.ceil(-delta / s)];
  for (const c of cands) {
    const m = Math.min(mHi, Math.max(mLo, c));
    if (Math.abs(delta + m * s) < D) return 'a head vector of options.k shares elements with one of x';
  }
  return null;
}
