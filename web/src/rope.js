// rope.js — pe.rope(options): rotary position embedding (Su et al. 2021, "RoFormer") with every scaling family
// of Hugging Face transformers' ROPE_INIT_FUNCTIONS, over the C core (c/src/rope_freq.c, c/src/rope.c).
//
// Options are checked once (rope-options.js) and pe_rope_init builds the C object (frequency tables in
// double) once per JS object; its resolved config is read back from it. Every later call only checks its own
// arguments (shape, layout, positions) and runs the kernels: no allocation in steady state, no per-element JS
// validation for typed positions (the C core scans them). apply() keeps the last cos/sin table it built
// (rope-table.js), so q and k (or repeated calls) at the same positions build it once; apply(q, { k }) rotates
// both in one call.

import { checkInt, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, describe, INT32_MAX } from './errors.js';
import {
  SLOT,
  MAX_TENSOR_LENGTH,
  locateFloat32,
  stageFloat32,
  returnFloat32,
  float32Overlap,
  float32Length,
  stageInt32s,
} from './memory.js';
import { viewBuffer, viewByteOffset, viewLength, typedArraySet } from './typed-arrays.js';
import { readShape, resolveView, viewsOverlap, newView, nestFailure } from './rope-view.js';
import { limit } from './abi.js';
import { ROPE_NAMES, resolveRopeOptions, writeRopeConfig, readResolvedConfig, ropeInitError } from './rope-options.js';
import { POSITIONS_BOUND, positionsLength, seqLenArg, positionError, tableHit, buildTable } from './rope-table.js';
import { writeMropeConfig, mropePairAxis, mropeRows, mropeCosSin, buildMropeTable, mropeDeltas, mropeRow } from './mrope.js';
import { resolveDtype, checkHalf, halfOverlap, halfIn, halfOut } from './rope-dtype.js';

export const LAYOUTS = Object.freeze(['bshd', 'bhsd']);

const APPLY = 'rope.apply';
const APPLY_KEYS = knownKeys('shape', 'layout', 'positions', 'inverse', 'seqLen', 'k', 'kHeads', 'dtype', 'strides', 'offset', 'kStrides', 'kOffset');
const COS_SIN_KEYS = knownKeys('seqLen', 'out');
const OUT_KEYS = knownKeys('cos', 'sin');
const REROTATE_KEYS = knownKeys('shape', 'layout', 'seqLen', 'strides', 'offset');
const X_NAMES = Object.freeze({ strides: 'options.strides', offset: 'options.offset', x: 'x' });
const K_NAMES = Object.freeze({ strides: 'options.kStrides', offset: 'options.kOffset', x: 'options.k' });

// The per-call key checks of the decode path: a switch over (interned) key strings costs a third of the Set
// lookups of checkKnownKeys, which still names any key the switch does not know (and passes one it forgot).
function checkApplyKeys(o) {
  for (const key in o) {
    switch (key) {
      case 'shape':
      case 'layout':
      case 'positions':
      case 'inverse':
      case 'seqLen':
      case 'k':
      case 'kHeads':
      case 'dtype':
      case 'strides':
      case 'offset':
      case 'kStrides':
      case 'kOffset':
        continue;
      default:
        checkKnownKeys(APPLY, 'options', o, APPLY_KEYS);
    }
  }
}

function checkCosSinKeys(where, o, out) {
  for (const key in o) if (key !== 'seqLen' && key !== 'out') checkKnownKeys(where, 'options', o, COS_SIN_KEYS);
  if (out !== null) for (const key in out) if (key !== 'cos' && key !== 'sin') checkKnownKeys(where, 'options.out', out, OUT_KEYS);
}

// The methods below run on every decode step, so their valid path is kept lean: each argument is tested inline
// with plain comparisons, and messages (template strings, lists of allowed values) are built only when an
// argument is wrong, by calling the same checks that name the argument and its bound. Nothing is allocated per
// call in the steady state: no placement objects, no closures, no arrays of dimensions.

/** A dimension: an integer in [1, INT32_MAX] (a number: no BigInt, no numeric string). */
function isDim(v) {
  return typeof v === 'number' && (v | 0) === v && v > 0;
}

/**
 * Fills the rope's own pe_rope_apply_config block (allocated with it: no scratch, no growth per call). The
 * block keeps what was written last, so a call with the same arguments (every decode step) writes nothing.
 */
function applyConfig(st, B, S, H, layout, perBatch, rotation, dtype = 0) {
  const last = st.applied;
  if (last[0] === B && last[1] === S && last[2] === H && last[3] === layout && last[4] === perBatch && last[5] === rotation && last[6] === dtype) {
    return st.applyPtr;
  }
  last[0] = B;
  last[1] = S;
  last[2] = H;
  last[3] = layout;
  last[4] = perBatch;
  last[5] = rotation;
  last[6] = dtype;
  const i32 = st.ctx.heap.i32;
  const p = st.applyPtr >>> 2;
  const o = st.ctx.ropeLayout.apply.offsets;
  i32[p + (o.batch >>> 2)] = B;
  i32[p + (o.seq >>> 2)] = S;
  i32[p + (o.heads >>> 2)] = H;
  i32[p + (o.layout >>> 2)] = layout;
  i32[p + (o.per_batch_rows >>> 2)] = perBatch;
  i32[p + (o.rotation >>> 2)] = rotation;
  i32[p + (o.dtype >>> 2)] = dtype;
  return st.applyPtr;
}

class Rope {
  #st; // see createRope
  constructor(st) {
    this.#st = st;
  }
  /** The state of `rope` if it is a Rope, else undefined. */
  static peek(rope) {
    return typeof rope === 'object' && rope !== null && #st in rope ? rope.#st : undefined;
  }
  /** The state of live rope `rope`; a TypeError naming `where` otherwise. */
  static live(rope, where) {
    const st = Rope.peek(rope);
    if (st === undefined) throw new TypeError(`${where}: called on something that is not a rope`);
    if (st.ptr === 0) throw new TypeError(`${where}: this rope was freed (free() was called on it)`);
    return st;
  }

  /** Dimensions per head. */
  get headDim() {
    return this.#st.config.headDim;
  }
  /** Dimensions rotated per head: rotaryDim (HF: int(head_dim * partial_rotary_factor)). */
  get rotaryDim() {
    return this.#st.config.rotaryDim ?? this.#st.headDim;
  }
  /** Frequencies per position: the width of invFreq() and of each cosSin() row (the C core's n_freq). */
  get nFreq() {
    return this.#st.nFreq;
  }
  get pairing() {
    return this.#st.config.pairing;
  }
  get type() {
    return this.#st.config.scaling.type;
  }
  get base() {
    return this.#st.config.base;
  }
  /**
   * The resolved config (every default filled in by the C core) in pe.rope()'s option shape, a fresh copy each
   * time: pe.rope(rope.config) builds the same RoPE.
   */
  get config() {
    const c = this.#st.config;
    const scaling = { ...c.scaling };
    if (scaling.shortFactor) scaling.shortFactor = Array.from(scaling.shortFactor);
    if (scaling.longFactor) scaling.longFactor = Array.from(scaling.longFactor);
    const out = { ...c, scaling };
    if (c.mrope) out.mrope = { section: [...c.mrope.section], interleaved: c.mrope.interleaved };
    return out;
  }
  /** M-RoPE: { section, interleaved, pairAxis } (pairAxis: each pair's axis, 0 t, 1 h, 2 w), or null. */
  get mrope() {
    const st = Rope.live(this, 'rope.mrope');
    if (st.mrope === null) return null;
    return { section: [...st.mrope.section], interleaved: st.mrope.interleaved, pairAxis: mropePairAxis(st, 'rope.mrope') };
  }
  get freed() {
    return this.#st.ptr === 0;
  }

  /** Inverse frequencies in double precision (what the C core uses to form angles). */
  invFreq64(seqLen) {
    const where = 'rope.invFreq64';
    const st = Rope.live(this, where);
    return invFreq64(st, where, seqLenArg(where, seqLen, st.seqLenNone));
  }

  /** Inverse frequencies rounded to float32. */
  invFreq(seqLen) {
    const where = 'rope.invFreq';
    const st = Rope.live(this, where);
    return Float32Array.from(invFreq64(st, where, seqLenArg(where, seqLen, st.seqLenNone)));
  }

  attentionScaling(seqLen) {
    const where = 'rope.attentionScaling';
    const st = Rope.live(this, where);
    const { heap, exports: ex } = st.ctx;
    const sl = seqLenArg(where, seqLen, st.seqLenNone);
    const out = heap.scratch(SLOT.OUT, 16);
    check(st, where, ex.pe_rope_inv_freq(0, out, st.ptr, sl));
    return heap.f64[out >>> 3];
  }

  /**
   * cosSin(positions, seqLen?) or cosSin(positions, { seqLen, out: { cos, sin } }): the (n, nFreq) tables.
   * With out, they are written into out.cos / out.sin (Float32Arrays or pe.tensors of n * nFreq; a tensor is
   * written in place, zero-copy) and returned in the result instead of new arrays.
   */
  cosSin(positions, seqLenOrOptions) {
    const where = 'rope.cosSin';
    const st = Rope.live(this, where);
    if (st.mrope !== null) return mropeCosSin(st, where, positions, seqLenOrOptions); // positions [3][n]
    const { heap, exports: ex } = st.ctx;
    let seqLen = seqLenOrOptions;
    let out = null;
    if (
      seqLenOrOptions !== null &&
      typeof seqLenOrOptions === 'object' &&
      !Array.isArray(seqLenOrOptions) &&
      !ArrayBuffer.isView(seqLenOrOptions)
    ) {
      seqLen = seqLenOrOptions.seqLen;
      out = seqLenOrOptions.out ?? null;
      if (out !== null && (typeof out !== 'object' || Array.isArray(out) || ArrayBuffer.isView(out))) {
        throw typeError(where, 'options.out must be { cos, sin }: Float32Arrays or pe.tensors of positions.length * nFreq', out);
      }
      checkCosSinKeys(where, seqLenOrOptions, out);
    }
    const sl = seqLenArg(where, seqLen, st.seqLenFromPositions);
    const n = positionsLength(where, 'positions', positions);
    const count = n * st.nFreq;
    if (count > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: positions.length * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
    }
    // Outputs are located before anything is allocated (an allocation may detach a view of wasm memory).
    let outCos = null;
    let outSin = null;
    let cosLoc = -1;
    let sinLoc = -1;
    if (out !== null) {
      const what = `positions.length * nFreq`;
      outCos = out.cos;
      outSin = out.sin;
      cosLoc = locateFloat32(heap, outCos, count, where, 'options.out.cos', what);
      sinLoc = locateFloat32(heap, outSin, count, where, 'options.out.sin', what);
      if (count > 0 && float32Overlap(outCos, cosLoc, count, outSin, sinLoc, count)) {
        throw new RangeError(`${where}: options.out.cos and options.out.sin must not overlap`);
      }
    }
    // Positions: validated while staged (arrays), or by the C core's scan (Int32Array), then the table.
    const posPtr = stageInt32s(heap, SLOT.POS, where, 'positions', positions, n, 0, INT32_MAX, POSITIONS_BOUND);
    const cosPtr = cosLoc !== -1 ? cosLoc : heap.scratch(SLOT.COS, count * 4, where, 'the cos table (positions.length * nFreq floats)');
    const sinPtr = sinLoc !== -1 ? sinLoc : heap.scratch(SLOT.SIN, count * 4, where, 'the sin table (positions.length * nFreq floats)');
    const status = ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, n, sl, 1.0);
    if (status !== 0) throw positionError(st, where, 'positions', posPtr, n, status);
    if (out === null) {
      const f32 = heap.f32;
      return {
        cos: f32.slice(cosPtr >>> 2, (cosPtr >>> 2) + count),
        sin: f32.slice(sinPtr >>> 2, (sinPtr >>> 2) + count),
      };
    }
    return {
      cos: returnFloat32(heap, outCos, cosLoc, cosPtr, count),
      sin: returnFloat32(heap, outSin, sinLoc, sinPtr, count),
    };
  }

  /**
   * apply(x, { shape, layout, positions, inverse, seqLen, k, kHeads, dtype }): rotates x in place and returns it.
   * With options.k, k (shape [batch, seq, kHeads, headDim], same layout) is rotated in place too, from the same
   * cos/sin table. The table is cached per rope (rope-table.js). dtype 'float16' | 'bfloat16': x (and k) are
   * Uint16Arrays of raw bits or Float16Arrays (rope-dtype.js); a Float16Array alone means 'float16'.
   */
  apply(x, options) {
    const st = Rope.live(this, APPLY);
    const heap = st.ctx.heap;
    let o = options;
    if (o === null || typeof o !== 'object' || Array.isArray(o) || ArrayBuffer.isView(o)) o = checkOptions(APPLY, 'options', o);
    checkApplyKeys(o);

    // layout first: an array shape is read in the layout's memory order
    const l = o.layout;
    const layout =
      l === undefined || l === null || l === 'bshd'
        ? st.layoutBshd
        : l === 'bhsd'
          ? st.layoutBhsd
          : checkEnum(APPLY, 'options.layout', l, LAYOUTS); // throws
    const bhsd = layout === st.layoutBhsd;

    // shape: inline checks, each entry read once; readShape() names the bad entry when one fails, and reads
    // the named form
    const s = o.shape;
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

    const inv = o.inverse;
    if (inv !== undefined && inv !== null && typeof inv !== 'boolean') throw typeError(APPLY, 'options.inverse must be a boolean', inv);
    const inverse = inv === true;
    const sq = o.seqLen;
    const seqLen = sq === undefined || sq === null ? -1 : checkInt(APPLY, 'seqLen', sq, 0, Number.MAX_SAFE_INTEGER);

    // k: same batch, seq, headDim and layout; kHeads heads (default: heads)
    const k = o.k;
    const hasK = k !== undefined && k !== null;
    let kH = H;
    const kh = o.kHeads;
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
    const ks = o.kStrides;
    const ko = o.kOffset;
    if (!hasK && ((ks !== undefined && ks !== null) || (ko !== undefined && ko !== null))) {
      throw typeError(APPLY, `options.${ks !== undefined && ks !== null ? 'kStrides' : 'kOffset'} describes options.k; give options.k with it`, ks ?? ko);
    }
    const xs = o.strides;
    const xo = o.offset;
    if (
      (xs !== undefined && xs !== null) ||
      (xo !== undefined && xo !== null) ||
      (ks !== undefined && ks !== null) ||
      (ko !== undefined && ko !== null)
    ) {
      const rotation = inverse ? st.rotateInverse : st.rotateForward;
      return applyStrided(st, x, o, xs, xo, hasK ? k : null, ks, ko, B, S, H, kH, layout, bhsd, seqLen, inverse, rotation);
    }

    // x and k first: a view of wasm memory must be located before any allocation can detach it.
    const dtype = resolveDtype(APPLY, o.dtype, x);
    let xLoc = -1;
    let kLoc = -1;
    if (dtype !== 0) {
      // 16-bit data are always copied in and out (rope-dtype.js)
      checkHalf(APPLY, 'x', x, total, dtype);
      if (hasK) {
        checkHalf(APPLY, 'options.k', k, kTotal, dtype, 'batch * seq * kHeads * headDim');
        if (halfOverlap(x, total, k, kTotal)) throw new RangeError(`${APPLY}: options.k must not overlap x (each is rotated in place once)`);
      }
    } else {
      xLoc = locateFloat32(heap, x, total, APPLY, 'x');
    }
    if (hasK && dtype === 0) {
      kLoc = locateFloat32(heap, k, kTotal, APPLY, 'options.k', 'batch * seq * kHeads * headDim');
      if (float32Overlap(x, xLoc, total, k, kLoc, kTotal)) {
        throw new RangeError(`${APPLY}: options.k must not overlap x (each is rotated in place once)`);
      }
    }

    // positions: length seq (shared by the batch) or batch * seq; values are checked when a table is built
    const p = o.positions;
    let rows = S;
    let positions = null;
    if (p !== undefined && p !== null && st.mrope !== null) {
      // M-RoPE: three streams [t, h, w] of seq or batch * seq positions each
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
    // Forward: tables carry HF's attention factor a. Inverse: tables scaled by a * (1/a^2) = 1/a, so the
    // inverse rotation divides the factor back out: inverse(apply(x)) == x.
    const extra = inverse ? st.inverseScale : 1;
    if (st.mrope !== null && positions !== null) {
      if (!tableHit(st, positions, 3 * rows, seqLen, extra)) buildMropeTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
    } else if (!tableHit(st, positions, rows, seqLen, extra)) buildTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
    const cosPtr = st.tabPtr;
    const sinPtr = cosPtr + st.tabCap * 4;

    const ex = st.ctx.exports;
    const perBatch = rows !== S ? 1 : 0;
    const rotation = inverse ? st.rotateInverse : st.rotateForward;
    let xPtr;
    let kPtr = 0;
    if (dtype === 0) {
      xPtr = stageFloat32(heap, x, xLoc, total, SLOT.X, APPLY);
      if (hasK) kPtr = stageFloat32(heap, k, kLoc, kTotal, SLOT.K, APPLY);
    } else {
      // both blocks first, then the copies: no allocation after a copy
      xPtr = heap.scratch(SLOT.X, total * 2, APPLY, 'a copy of the 16-bit x');
      if (hasK) kPtr = heap.scratch(SLOT.K, kTotal * 2, APPLY, 'a copy of the 16-bit options.k');
      halfIn(heap, x, xPtr, total);
      if (hasK) halfIn(heap, k, kPtr, kTotal);
    }
    let status = ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, applyConfig(st, B, S, H, layout, perBatch, rotation, dtype));
    if (status !== 0) throw st.ctx.statusError(APPLY, status);
    if (hasK) {
      status = ex.pe_rope_apply(st.ptr, kPtr, cosPtr, sinPtr, applyConfig(st, B, S, kH, layout, perBatch, rotation, dtype));
      if (status !== 0) throw st.ctx.statusError(APPLY, status);
      if (dtype !== 0) halfOut(heap, k, kPtr, kTotal);
      else if (kLoc === -1) returnFloat32(heap, k, kLoc, kPtr, kTotal);
    }
    if (dtype !== 0) return halfOut(heap, x, xPtr, total);
    return returnFloat32(heap, x, xLoc, xPtr, total);
  }

  /**
   * Re-rotates already-rotated vectors (cached keys) by a position delta: x at position p becomes x at p + delta.
   * A pure rotation (no attention factor), so it composes: rerotate(apply(x, p), d) == apply(x, p + d).
   */
  rerotate(x, delta, options) {
    const where = 'rope.rerotate';
    const st = Rope.live(this, where);
    const { heap, exports: ex } = st.ctx;
    // M-RoPE: a delta per axis [dt, dh, dw] (mrope.js); a number shifts all three
    const deltas = st.mrope !== null && typeof delta === 'object' && delta !== null ? mropeDeltas(where, delta) : null;
    if (deltas === null) checkInt(where, 'delta', delta, -INT32_MAX, INT32_MAX);
    const o = checkOptions(where, 'options', options);
    checkKnownKeys(where, 'options', o, REROTATE_KEYS);
    const D = st.headDim;
    const l = o.layout;
    if (!(l === undefined || l === null || l === 'bshd' || l === 'bhsd')) checkEnum(where, 'options.layout', l, LAYOUTS);
    const bhsd = l === 'bhsd';
    const sl = seqLenArg(where, o.seqLen, st.seqLenNone);
    const strided = (o.strides !== undefined && o.strides !== null) || (o.offset !== undefined && o.offset !== null);
    let total;
    let dims = null;
    if (o.shape !== undefined) {
      dims = readShape(where, o.shape, D, bhsd);
      total = dims[0] * dims[1] * dims[2] * D;
    } else {
      if (strided) throw typeError(where, 'options.shape must be given with options.strides or options.offset', undefined);
      total = float32Length(heap, x, where, 'x');
      if (total % D !== 0) {
        throw new RangeError(`${where}: x.length must be a multiple of headDim (${D}) when options.shape is not given, got ${total}`);
      }
    }
    if (strided) return rerotateStrided(st, where, x, delta, o.strides, o.offset, dims, bhsd, sl);
    // Dense: every head vector turns by the same angle, so the layout does not matter here.
    const xLoc = locateFloat32(heap, x, total, where, 'x');
    const xPtr = stageFloat32(heap, x, xLoc, total, SLOT.X, where);
    if (deltas !== null) {
      // the positive parts forward, the negative ones inverse: rotations of a pair commute
      for (const [pos3, inverse] of [[deltas.map((d) => Math.max(d, 0)), false], [deltas.map((d) => Math.max(-d, 0)), true]]) {
        if (total === 0 || (pos3[0] === 0 && pos3[1] === 0 && pos3[2] === 0)) continue;
        const { cosPtr, sinPtr } = mropeRow(st, where, pos3, sl, 1 / st.scale);
        const rotation = inverse ? st.rotateInverse : st.rotateForward;
        check(st, where, ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, applyConfig(st, total / D, 1, 1, st.layoutBshd, 0, rotation)));
      }
      return returnFloat32(heap, x, xLoc, xPtr, total);
    }
    if (delta !== 0 && total !== 0) {
      // Every head vector is a row of the (rows, 1, 1, headDim) view of x.
      const { cosPtr, sinPtr } = rerotateTable(st, where, delta, 1, sl);
      const rotation = delta < 0 ? st.rotateInverse : st.rotateForward;
      check(st, where, ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, applyConfig(st, total / D, 1, 1, st.layoutBshd, 0, rotation)));
    }
    return returnFloat32(heap, x, xLoc, xPtr, total);
  }

  /** Releases the C object and the cached table; calling it again does nothing. Any other method then throws. */
  free() {
    const st = Rope.peek(this);
    if (st !== undefined && st.ptr !== 0) {
      st.ctx.heap.free(st.ptr);
      st.ptr = 0;
      st.ctx.heap.free(st.tabPtr);
      st.tabPtr = 0;
      st.tabCap = 0;
      st.tabValid = false;
    }
  }
}
if (typeof Symbol.dispose === 'symbol') Rope.prototype[Symbol.dispose] = Rope.prototype.free;

/**
 * options.positions: length seq (shared by the batch) or batch * seq (M-RoPE: three such streams); values are
 * checked when a table is built. Builds (or reuses) the rope's table for them; returns the row count.
 */
function stridedTable(st, o, B, S, seqLen, extra) {
  const p = o.positions;
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
  if (st.mrope !== null && positions !== null) {
    if (!tableHit(st, positions, 3 * rows, seqLen, extra)) buildMropeTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
  } else if (!tableHit(st, positions, rows, seqLen, extra)) buildTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
  return rows;
}

/**
 * The table of a re-rotation by `delta`: `rows` equal rows for position |delta|, scaled by 1/a so that
 * a * (1/a) = 1 (a pure rotation); a negative delta turns the other way (the caller picks the direction).
 */
function rerotateTable(st, where, delta, rows, sl) {
  const heap = st.ctx.heap;
  const n = st.nFreq;
  const posPtr = heap.scratch(SLOT.POS, 4);
  heap.i32[posPtr >>> 2] = Math.abs(delta);
  const cosPtr = heap.scratch(SLOT.COS, rows * n * 4, where, 'the cos table');
  const sinPtr = heap.scratch(SLOT.SIN, rows * n * 4, where, 'the sin table');
  check(st, where, st.ctx.exports.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, 1, sl, 1 / st.scale));
  const f32 = heap.f32;
  for (const base of [cosPtr >>> 2, sinPtr >>> 2]) {
    for (let have = 1; have < rows; have *= 2) f32.copyWithin(base + have * n, base, base + Math.min(have, rows - have) * n);
  }
  return { cosPtr, sinPtr };
}

/**
 * Writes the apply config block for a strided view (strides resolved by rope-view.js; the pointer passed to
 * the kernel is the view's first element, so the C offset stays 0) and marks the block as not what
 * applyConfig() last wrote. clearStrides() puts the dense zeros back.
 */
function stridedConfig(st, B, S, H, layout, perBatch, rotation, v, dtype = 0) {
  applyConfig(st, B, S, H, layout, perBatch, rotation, dtype);
  st.applied[0] = -1;
  const i32 = st.ctx.heap.i32;
  const p = st.applyPtr >>> 2;
  const o = st.ctx.ropeLayout.apply.offsets;
  // int64 fields, little-endian; every resolved stride is < 2^30 (it fits its array)
  i32[p + (o.stride_batch >>> 2)] = v.sb;
  i32[p + (o.stride_batch >>> 2) + 1] = 0;
  i32[p + (o.stride_seq >>> 2)] = v.ss;
  i32[p + (o.stride_seq >>> 2) + 1] = 0;
  i32[p + (o.stride_heads >>> 2)] = v.sh;
  i32[p + (o.stride_heads >>> 2) + 1] = 0;
  i32[p + (o.offset >>> 2)] = 0;
  i32[p + (o.offset >>> 2) + 1] = 0;
  return st.applyPtr;
}

function clearStrides(st) {
  const i32 = st.ctx.heap.i32;
  const p = st.applyPtr >>> 2;
  const o = st.ctx.ropeLayout.apply.offsets;
  for (const f of [o.stride_batch, o.stride_seq, o.stride_heads]) {
    i32[p + (f >>> 2)] = 0;
    i32[p + (f >>> 2) + 1] = 0;
  }
  st.applied[0] = -1;
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

/**
 * Locates a strided argument: [length, loc] with loc its byte pointer in wasm memory (float32 tensors and views
 * of wasm memory: rotated in place) or -1 (copied: any staged Float32Array, and 16-bit data always).
 */
function locateStrided(heap, a, name, dtype) {
  if (dtype === 0) {
    const len = float32Length(heap, a, APPLY, name);
    return [len, locateFloat32(heap, a, len, APPLY, name)];
  }
  const len = viewLength(a);
  checkHalf(APPLY, name, a, len, dtype);
  return [len, -1];
}

/** rope.apply with strides / offsets (see rope-view.js for the view and the checks). */
function applyStrided(st, x, o, xs, xo, k, ks, ko, B, S, H, kH, layout, bhsd, seqLen, inverse, rotation) {
  const heap = st.ctx.heap;
  const D = st.headDim;
  const dtype = resolveDtype(APPLY, o.dtype, x);
  const esz = dtype === 0 ? 4 : 2;
  // locate before anything is allocated (an allocation may detach a view of wasm memory)
  const [xLen, xLoc] = locateStrided(heap, x, 'x', dtype);
  const xv = resolveView(APPLY, X_NAMES, xs, xo, B, S, H, D, bhsd, xLen, st.xView);
  let kLoc = -1;
  let kv = null;
  let shared = false; // x and k are staged arrays whose touched spans share a buffer and intersect
  if (k !== null) {
    const [kLen, kl] = locateStrided(heap, k, 'options.k', dtype);
    kLoc = kl;
    kv = resolveView(APPLY, K_NAMES, ks, ko, B, S, kH, D, bhsd, kLen, st.kView);
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
  const rows = stridedTable(st, o, B, S, seqLen, extra);
  const cosPtr = st.tabPtr;
  const sinPtr = cosPtr + st.tabCap * 4;
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
  const ex = st.ctx.exports;
  // A per-token fused QKV buffer (k's heads continue q's: same batch, seq and heads strides, k's first head
  // where q's heads + 1 would be) is one view of heads + kHeads heads: rotated in one pass over each token's
  // q | k block instead of two passes over the buffer. Each head vector gets the same arithmetic either way.
  let merged = false;
  if (kv !== null && xv.sb === kv.sb && xv.ss === kv.ss) {
    const sh = H > 1 ? xv.sh : kH > 1 ? kv.sh : D;
    if ((H === 1 || kH === 1 || xv.sh === kv.sh) && kPtr === xPtr + H * sh * esz && nestFailure(B, S, H + kH, xv.sb, xv.ss, sh, D) === -1) {
      merged = true;
      st.kView.sh = sh; // the merged view: x's batch and seq strides, heads stride sh
      st.kView.sb = xv.sb;
      st.kView.ss = xv.ss;
    }
  }
  try {
    if (merged) {
      const status = ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, stridedConfig(st, B, S, H + kH, layout, perBatch, rotation, st.kView, dtype));
      if (status !== 0) throw st.ctx.statusError(APPLY, status);
      kv = null;
    }
    let status = merged ? 0 : ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, stridedConfig(st, B, S, H, layout, perBatch, rotation, xv, dtype));
    if (status !== 0) throw st.ctx.statusError(APPLY, status);
    if (kv !== null) {
      status = ex.pe_rope_apply(st.ptr, kPtr, cosPtr, sinPtr, stridedConfig(st, B, S, kH, layout, perBatch, rotation, kv, dtype));
      if (status !== 0) throw st.ctx.statusError(APPLY, status);
    }
  } finally {
    clearStrides(st);
  }
  if (xSpan !== null) unstageSpan(heap, xSpan, xSpanPtr);
  if (kSpan !== null) unstageSpan(heap, kSpan, kPtr);
  return xLoc === -1 ? x : returnFloat32(heap, x, xLoc, xLoc, xLen);
}

function copySpanIn(heap, span, ptr) {
  if (span instanceof Float32Array) heap.f32.set(span, ptr >>> 2);
  else heap.u8.set(span, ptr);
}

/**
 * rope.rerotate with strides / offset: every head vector of the view turns by the same angle. The kernel reads
 * one table row per seq index, so the shorter of the batch and seq axes is given to it as "seq" (the axes
 * only address elements here) and the table holds that many equal rows.
 */
function rerotateStrided(st, where, x, delta, xs, xo, dims, bhsd, sl) {
  const heap = st.ctx.heap;
  const D = st.headDim;
  const [B, S, H] = dims;
  const xLen = float32Length(heap, x, where, 'x');
  const xLoc = locateFloat32(heap, x, xLen, where, 'x');
  const v = resolveView(where, X_NAMES, xs, xo, B, S, H, D, bhsd, xLen, st.xView);
  let span = null;
  let xPtr;
  if (xLoc !== -1) {
    xPtr = xLoc + v.off * 4;
  } else {
    span = spanOf(x, v.off, v.end, 4);
    xPtr = stageSpan(heap, span, SLOT.X, where);
  }
  if (delta !== 0) {
    const swap = B < S;
    const cb = swap ? S : B;
    const cs = swap ? B : S;
    const view = swap ? { sb: v.ss, ss: v.sb, sh: v.sh } : v;
    const { cosPtr, sinPtr } = rerotateTable(st, where, delta, cs, sl);
    const rotation = delta < 0 ? st.rotateInverse : st.rotateForward;
    try {
      check(st, where, st.ctx.exports.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, stridedConfig(st, cb, cs, H, st.layoutBshd, 0, rotation, view)));
    } finally {
      clearStrides(st);
    }
  }
  if (span !== null) {
    unstageSpan(heap, span, xPtr);
    return x;
  }
  return returnFloat32(heap, x, xLoc, xLoc, xLen);
}

function check(st, where, status) {
  if (status !== 0) throw st.ctx.statusError(where, status);
}

function invFreq64(st, where, sl) {
  const heap = st.ctx.heap;
  const out = heap.scratch(SLOT.F64, st.nFreq * 8 + 8);
  check(st, where, st.ctx.exports.pe_rope_inv_freq(out, out + st.nFreq * 8, st.ptr, sl));
  return heap.f64.slice(out >>> 3, (out >>> 3) + st.nFreq);
}

/** Builds the C pe_rope for a checked request (rope-options.js) and wraps it. */
export function createRope(ctx, request, names = ROPE_NAMES) {
  const { heap, exports: ex } = ctx;
  const where = names.where;
  const layout = ctx.ropeLayout;
  const cfg = writeRopeConfig(ctx, request);
  // the pe_rope, then its pe_rope_apply_config (sizeof(pe_rope) is a multiple of 8: aligned for it), zeroed so
  // fields this wrapper does not set keep their zero default, then its pe_mrope_config (int32s)
  const extraSize = layout.apply.size + layout.mrope.size;
  const ptr = heap.malloc(layout.ropeSize + extraSize, where, 'the pe_rope');
  heap.u8.fill(0, ptr + layout.ropeSize, ptr + layout.ropeSize + extraSize);
  const status = ex.pe_rope_init(ptr, cfg);
  if (status !== 0) {
    heap.free(ptr);
    throw ropeInitError(ctx, where, names, status, request);
  }
  const dv = heap.dataView;
  const scale = dv.getFloat64(ptr + layout.rope.attention_scaling, true); // HF's attention factor a
  // The tables are float32 and carry a: past float32's range every cos and sin would be infinite.
  if (!(scale > 0 && Number.isFinite(Math.fround(scale)))) {
    heap.free(ptr);
    const N = names.name;
    throw new RangeError(
      `${where}: the attention factor (${N('attentionFactor')}, or as resolved from ${N('factor')}, ${N('mscale')} and ${N('mscaleAllDim')}) must be a finite number > 0 within float32 range (at most 3.4e38), got ${describe(scale)}`,
    );
  }
  const config = readResolvedConfig(ctx, ptr, request);
  if (request.mrope) config.mrope = request.mrope;
  const { limits } = ctx;
  const st = {
    ctx,
    ptr,
    applyPtr: ptr + layout.ropeSize,
    mrope: request.mrope ?? null, // mrope.js: { section, interleaved }
    mropePtr: ptr + layout.ropeSize + layout.apply.size,
    applied: new Int32Array(7).fill(-1), // what the apply config block holds (-1: nothing yet)
    xView: newView(), // strided calls: x's and k's resolved views (rope-view.js), reused
    kView: newView(),
    config,
    headDim: config.headDim,
    nFreq: dv.getInt32(ptr + layout.rope.n_freq, true),
    scale,
    inverseScale: 1 / (scale * scale), // the extra scale of inverse tables
    seqLenNone: BigInt(limit(limits, 'PE_SEQ_LEN_NONE')),
    seqLenFromPositions: BigInt(limit(limits, 'PE_SEQ_LEN_FROM_POSITIONS')),
    layoutBshd: limit(limits, 'PE_LAYOUT_BSHD'),
    layoutBhsd: limit(limits, 'PE_LAYOUT_BHSD'),
    rotateForward: limit(limits, 'PE_ROTATE_FORWARD'),
    rotateInverse: limit(limits, 'PE_ROTATE_INVERSE'),
    // the table cache (rope-table.js)
    tabPtr: 0, // cos | sin, tabCap floats each
    tabCap: 0,
    tabValid: false,
    tabRows: 0,
    tabIota: false,
    tabSeqLen: -1,
    tabExtra: 1,
    tabPos: new Int32Array(0),
  };
  if (st.mrope !== null) writeMropeConfig(st);
  return new Rope(st);
}

/** pe.rope(options) */
export function rope(ctx, options) {
  return createRope(ctx, resolveRopeOptions(options, ROPE_NAMES, ctx.limits), ROPE_NAMES);
}

/**
 * For the families that take a rope (pe.attention): the C object and sizes of `rope` if it is a live rope of
 * this instance; a TypeError naming `name` otherwise.
 */
export function ropeHandle(ctx, rope, where, name) {
  const st = Rope.peek(rope);
  if (st === undefined) {
    throw typeError(where, `${name} must be a rope made by pe.rope() or pe.ropeFromHFConfig()`, rope);
  }
  if (st.ctx !== ctx) {
    throw new TypeError(`${where}: ${name} is a rope of another posenc instance (made by a different init())`);
  }
  if (st.ptr === 0) throw new TypeError(`${where}: ${name} is a rope that was freed`);
  if (st.mrope !== null) {
    throw new TypeError(`${where}: ${name} is an M-RoPE rope (options.mrope); ${where} rotates by one position stream, so it does not take M-RoPE ropes yet: rotate q and k with rope.apply(x, { positions }) and pass no rope`);
  }
  return { ptr: st.ptr, headDim: st.headDim, nFreq: st.nFreq };
}
