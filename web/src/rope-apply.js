// rope-apply.js — the body of rope.apply(x, options), the call every decode step makes: its per-call option
// checks and the dense path (x and k contiguous, float32 in place or staged, 16-bit data copied in and out).
// Calls with strides or offsets go on to rope-strided.js. The Rope class (rope.js) checks that the rope is live
// and passes its state here: a plain function call, nothing allocated for it.

import { checkInt, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, INT32_MAX } from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, tensorRecord } from './memory.js';
import { locateData, stageData, returnData, dataOverlap, resolveDtype } from './memory-dtype.js';
import { readShape, LAYOUTS } from './rope-view.js';
import { halfIn } from './rope-dtype.js';
import { applyConfig, kApplyConfig } from './rope-apply-config.js';
import { applyStrided, applyTable, rotateQK, FUSED_MAX_SEQ } from './rope-strided.js';
import { mropeApplyTable } from './mrope.js';

const APPLY = 'rope.apply';
const APPLY_KEYS = knownKeys('shape', 'layout', 'positions', 'inverse', 'seqLen', 'k', 'kHeads', 'dtype', 'strides', 'offset', 'kStrides', 'kOffset');

// applyRope runs on every decode step, so its valid path is kept lean: each argument is tested inline
// with plain comparisons, and messages (template strings, lists of allowed values) are built only when an
// argument is wrong, by calling the same checks that name the argument and its bound. Nothing is allocated per
// call in the steady state: no placement objects, no closures, no arrays of dimensions.

/** A dimension: an integer in [1, INT32_MAX] (a number: no BigInt, no numeric string). */
function isDim(v) {
  return typeof v === 'number' && (v | 0) === v && v > 0;
}

/**
 * rope.apply(x, options) for the state `st` of a live rope (see Rope.apply in rope.js): rotates x (and
 * options.k) in place and returns x.
 */
export function applyRope(st, x, options) {
  const heap = st.ctx.heap;
  let o = options;
  if (o === null || typeof o !== 'object' || Array.isArray(o) || ArrayBuffer.isView(o)) o = checkOptions(APPLY, 'options', o);
  // One pass over the options: each key checked and its value read once (a getter runs once). A for-in with
  // o[key] reads through V8's enum cache whatever the object's shape, where named loads (o.shape, ...) turn
  // megamorphic once a program passes options of many shapes and cost ~20 ns each. An unknown key goes to
  // checkKnownKeys, which names it and the nearest known key.
  let s;
  let l;
  let p;
  let inv;
  let sq;
  let k;
  let kh;
  let dt;
  let xs;
  let xo;
  let ks;
  let ko;
  for (const key in o) {
    switch (key) {
      case 'shape':
        s = o[key];
        break;
      case 'layout':
        l = o[key];
        break;
      case 'positions':
        p = o[key];
        break;
      case 'inverse':
        inv = o[key];
        break;
      case 'seqLen':
        sq = o[key];
        break;
      case 'k':
        k = o[key];
        break;
      case 'kHeads':
        kh = o[key];
        break;
      case 'dtype':
        dt = o[key];
        break;
      case 'strides':
        xs = o[key];
        break;
      case 'offset':
        xo = o[key];
        break;
      case 'kStrides':
        ks = o[key];
        break;
      case 'kOffset':
        ko = o[key];
        break;
      default:
        checkKnownKeys(APPLY, 'options', o, APPLY_KEYS); // throws
    }
  }

  // layout first: an array shape is read in the layout's memory order
  const layout =
    l === undefined || l === null || l === 'bshd'
      ? st.layoutBshd
      : l === 'bhsd'
        ? st.layoutBhsd
        : checkEnum(APPLY, 'options.layout', l, LAYOUTS); // throws
  const bhsd = layout === st.layoutBhsd;

  // shape: inline checks, each entry read once; readShape() names the bad entry when one fails, and reads
  // the named form
  if (s === undefined) throw typeError(APPLY, 'options.shape must be [batch, seq, heads, headDim] (bshd) or [batch, heads, seq, headDim] (bhsd), or { batch, seq, heads, headDim }', undefined);
  const D = st.headDim;
  let B;
  let S;
  let H;
  let d1;
  let d2;
  if (
    s !== null &&
    typeof s === 'object' &&
    s.length === 4 &&
    isDim((B = s[0])) &&
    isDim((d1 = s[1])) &&
    isDim((d2 = s[2])) &&
    s[3] === D &&
    B * d1 * d2 * D <= MAX_TENSOR_LENGTH
  ) {
    S = bhsd ? d2 : d1;
    H = bhsd ? d1 : d2;
  } else {
    [B, S, H] = readShape(APPLY, s, D, bhsd);
  }
  const total = B * S * H * D;

  if (inv !== undefined && inv !== null && typeof inv !== 'boolean') throw typeError(APPLY, 'options.inverse must be a boolean', inv);
  const inverse = inv === true;
  const seqLen = sq === undefined || sq === null ? -1 : checkInt(APPLY, 'seqLen', sq, 0, Number.MAX_SAFE_INTEGER);

  // k: same batch, seq, headDim and layout; kHeads heads (default: heads)
  const hasK = k !== undefined && k !== null;
  let kH = H;
  if (kh !== undefined && kh !== null) {
    if (!hasK) throw typeError(APPLY, 'options.kHeads is the head count of options.k; give options.k with it', kh);
    if (!isDim(kh)) checkInt(APPLY, 'options.kHeads', kh, 1, INT32_MAX);
    kH = kh;
  }
  const kTotal = B * S * kH * D;
  if (hasK && kTotal > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${APPLY}: batch * seq * kHeads * headDim (the size of options.k) must be at most ${MAX_TENSOR_LENGTH}, got ${kTotal}`);
  }

  // strides / offsets: the strided path (rope-view.js), which checks each view against its array
  if (!hasK && ((ks !== undefined && ks !== null) || (ko !== undefined && ko !== null))) {
    throw typeError(APPLY, `options.${ks !== undefined && ks !== null ? 'kStrides' : 'kOffset'} describes options.k; give options.k with it`, ks ?? ko);
  }
  if (
    (xs !== undefined && xs !== null) ||
    (xo !== undefined && xo !== null) ||
    (ks !== undefined && ks !== null) ||
    (ko !== undefined && ko !== null)
  ) {
    const rotation = inverse ? st.rotateInverse : st.rotateForward;
    return applyStrided(st, x, p, dt, xs, xo, hasK ? k : null, ks, ko, B, S, H, kH, layout, bhsd, seqLen, inverse, rotation);
  }

  // x and k first: a view of wasm memory must be located before any allocation can detach it. The usual
  // decode call passes pe.tensors: one record lookup each gives the dtype, the pointer and the length, and
  // nothing is staged or copied back. Anything else (an option dtype, a length that does not match, arrays)
  // takes the general checks, which name the argument and the bound.
  const xr = tensorRecord(heap, x, APPLY, 'x');
  let dtype;
  let xLoc;
  if (xr !== null && (dt === undefined || dt === null) && xr.length === total) {
    dtype = xr.dtype;
    xLoc = xr.ptr;
  } else {
    dtype = resolveDtype(APPLY, dt, x);
    xLoc = locateData(heap, x, total, dtype, APPLY, 'x');
  }
  // 16-bit data: a pe.tensor (or a view of wasm memory) in place, an array copied in and out (memory.js)
  const esz = dtype === 0 ? 4 : 2;
  let kLoc = -1;
  if (hasK) {
    const kr = tensorRecord(heap, k, APPLY, 'options.k');
    kLoc =
      kr !== null && kr.dtype === dtype && kr.length === kTotal
        ? kr.ptr
        : locateData(heap, k, kTotal, dtype, APPLY, 'options.k', 'batch * seq * kHeads * headDim');
    if (dataOverlap(x, xLoc, total, k, kLoc, kTotal, esz)) {
      throw new RangeError(`${APPLY}: options.k must not overlap x (each is rotated in place once)`);
    }
  }

  // Forward: tables carry HF's attention factor a. Inverse: tables scaled by a * (1/a^2) = 1/a, so the
  // inverse rotation divides the factor back out: inverse(apply(x)) == x.
  const extra = inverse ? st.inverseScale : 1;
  const rows =
    st.mrope !== null && p !== undefined && p !== null
      ? mropeApplyTable(st, p, B, S, seqLen, extra, FUSED_MAX_SEQ)
      : applyTable(st, p, B, S, seqLen, extra);
  const perBatch = rows !== S ? 1 : 0;
  const rotation = inverse ? st.rotateInverse : st.rotateForward;
  // both blocks first, then the copies: no allocation after a copy
  const xPtr = xLoc !== -1 ? xLoc : stageData(heap, x, xLoc, total, dtype, SLOT.X, APPLY, false);
  const kPtr = !hasK ? 0 : kLoc !== -1 ? kLoc : stageData(heap, k, kLoc, kTotal, dtype, SLOT.K, APPLY, false);
  if (xLoc === -1) copyIn(heap, x, xPtr, total, dtype);
  if (kLoc === -1 && hasK) copyIn(heap, k, kPtr, kTotal, dtype);
  // q and k in one kernel call (each cos/sin vector loaded once for a head of each), by the table or fused
  const kCfg = hasK ? kApplyConfig(st, B, S, kH, layout, perBatch, rotation, dtype) : 0;
  rotateQK(st, xPtr, kPtr, applyConfig(st, B, S, H, layout, perBatch, rotation, dtype), kCfg, rows, seqLen, extra);
  if (kLoc === -1 && hasK) returnData(heap, k, kLoc, kPtr, kTotal, dtype);
  // a tensor is returned as it is (its .array is re-derived when read); arrays get their data back
  return xr !== null ? x : returnData(heap, x, xLoc, xPtr, total, dtype);
}

function copyIn(heap, a, ptr, n, dtype) {
  if (dtype === 0) heap.f32.set(a, ptr >>> 2);
  else halfIn(heap, a, ptr, n);
}
