// rope.js — pe.rope(options): rotary position embedding (Su et al. 2021, "RoFormer") with every scaling family
// of Hugging Face transformers' ROPE_INIT_FUNCTIONS, over the C core (c/src/rope_freq.c, c/src/rope.c).
//
// Options are checked once (rope-options.js) and pe_rope_init builds the C object (frequency tables in
// double) once per JS object; its resolved config is read back from it. Every later call only checks its own
// arguments (shape, layout, positions) and runs the kernels: no allocation in steady state, no per-element JS
// validation for typed positions (the C core scans them). apply() keeps the last cos/sin table it built
// (rope-table.js), so q and k (or repeated calls) at the same positions build it once; apply(q, { k }) rotates
// both in one call.
//
// Kept here: the Rope class and the factories (pe.rope, createRope for pe.ropeFromHFConfig / pe.rope2d,
// ropeHandle for pe.attention). rope.apply's body is rope-apply.js, its strided path (and rerotate's) is
// rope-strided.js, the apply config block is rope-apply-config.js.

import { checkInt, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, describe, INT32_MAX } from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, locateFloat32, returnFloat32, float32Overlap, float32Length, stageInt32s } from './memory.js';
import { halfLength, locateData, stageData, returnData, resolveDtype } from './memory-dtype.js';
import { cosSin16 } from './rope-cossin.js';
import { readShape, newView, LAYOUTS } from './rope-view.js';
import { limit } from './abi.js';
import { ROPE_NAMES, resolveRopeOptions, writeRopeConfig, readResolvedConfig, ropeInitError } from './rope-options.js';
import { POSITIONS_BOUND, positionsLength, seqLenArg, positionError, rerotateTable } from './rope-table.js';
import { writeMropeConfig, mropePairAxis, mropeCosSin, mropeDeltas } from './mrope.js';
import { applyConfig, configIndices } from './rope-apply-config.js';
import { applyRope } from './rope-apply.js';
import { rerotateStrided, mropeShiftTable } from './rope-strided.js';

export { LAYOUTS };

const APPLY = 'rope.apply';
const COS_SIN_KEYS = knownKeys('seqLen', 'out', 'dtype');
const OUT_KEYS = knownKeys('cos', 'sin');
const REROTATE_KEYS = knownKeys('shape', 'layout', 'seqLen', 'strides', 'offset', 'dtype');

function checkCosSinKeys(where, o, out) {
  for (const key in o) if (key !== 'seqLen' && key !== 'out' && key !== 'dtype') checkKnownKeys(where, 'options', o, COS_SIN_KEYS);
  if (out !== null) for (const key in out) if (key !== 'cos' && key !== 'sin') checkKnownKeys(where, 'options.out', out, OUT_KEYS);
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
   * cosSin(positions, seqLen?) or cosSin(positions, { seqLen, out: { cos, sin }, dtype }): the (n, nFreq) tables.
   * With out, they are written into out.cos / out.sin (Float32Arrays or pe.tensors of n * nFreq; a tensor is
   * written in place, zero-copy) and returned in the result instead of new arrays. dtype 'float16' | 'bfloat16'
   * (default: out.cos's own, if it is a tensor): the tables in 16-bit storage (rope-cossin.js), Uint16Arrays of
   * raw bits, or out's 16-bit arrays / tensors.
   */
  cosSin(positions, seqLenOrOptions) {
    const where = 'rope.cosSin';
    const st = Rope.live(this, where);
    const isOptions =
      seqLenOrOptions !== null && typeof seqLenOrOptions === 'object' && !Array.isArray(seqLenOrOptions) && !ArrayBuffer.isView(seqLenOrOptions);
    // 16-bit tables (rope-cossin.js): options.dtype, or the dtype of an options.out.cos tensor
    if (isOptions) {
      const o = seqLenOrOptions;
      const out = o.out ?? null;
      const dt = o.dtype;
      const outCos = out !== null && typeof out === 'object' ? out.cos : undefined;
      // out.cos's own type (a 16-bit tensor, a Float16Array) is the default dtype
      if ((dt !== undefined && dt !== null) || resolveDtype(where, undefined, outCos) !== 0) {
        if (out !== null && (typeof out !== 'object' || Array.isArray(out) || ArrayBuffer.isView(out))) {
          throw typeError(where, 'options.out must be { cos, sin }: arrays or pe.tensors of positions.length * nFreq', out);
        }
        checkCosSinKeys(where, o, out);
        const dtype = resolveDtype(where, dt, outCos, 'options.out.cos');
        if (dtype !== 0) return cosSin16(st, where, positions, o.seqLen, out, dtype);
      }
    }
    if (st.mrope !== null) {
      // positions [3][n]; mrope.js knows only seqLen, so a float32 dtype is taken off here
      if (isOptions && seqLenOrOptions.dtype !== undefined) {
        const { dtype: _, ...rest } = seqLenOrOptions;
        return mropeCosSin(st, where, positions, rest);
      }
      return mropeCosSin(st, where, positions, seqLenOrOptions);
    }
    const { heap, exports: ex } = st.ctx;
    let seqLen = seqLenOrOptions;
    let out = null;
    if (isOptions) {
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
    return applyRope(Rope.live(this, APPLY), x, options);
  }

  /**
   * Re-rotates already-rotated vectors (cached keys) by a position delta: x at position p becomes x at p + delta.
   * A pure rotation (no attention factor), so it composes: rerotate(apply(x, p), d) == apply(x, p + d).
   * options.dtype as for apply (default x's own): 16-bit x is turned in float32 arithmetic and rounded once.
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
    const dtype = resolveDtype(where, o.dtype, x);
    const strided = (o.strides !== undefined && o.strides !== null) || (o.offset !== undefined && o.offset !== null);
    let total;
    let dims = null;
    if (o.shape !== undefined) {
      dims = readShape(where, o.shape, D, bhsd);
      total = dims[0] * dims[1] * dims[2] * D;
    } else {
      if (strided) throw typeError(where, 'options.shape must be given with options.strides or options.offset', undefined);
      total = dtype === 0 ? float32Length(heap, x, where, 'x') : halfLength(heap, x, dtype, where, 'x');
      if (total % D !== 0) {
        throw new RangeError(`${where}: x.length must be a multiple of headDim (${D}) when options.shape is not given, got ${total}`);
      }
    }
    if (strided) return rerotateStrided(st, where, x, delta, o.strides, o.offset, dims, bhsd, sl, dtype, deltas);
    // Dense: every head vector turns by the same angle, so the layout does not matter here.
    const xLoc = locateData(heap, x, total, dtype, where, 'x');
    const xPtr = stageData(heap, x, xLoc, total, dtype, SLOT.X, where);
    if (total !== 0 && (deltas !== null ? deltas[0] !== 0 || deltas[1] !== 0 || deltas[2] !== 0 : delta !== 0)) {
      // Every head vector is a row of the (rows, 1, 1, headDim) view of x. M-RoPE: one pass, each pair by its
      // own axis's signed delta (rope-strided.js mropeShiftTable).
      const { cosPtr, sinPtr } = deltas !== null ? mropeShiftTable(st, where, deltas, 1, sl) : rerotateTable(st, where, delta, 1, sl);
      const rotation = deltas === null && delta < 0 ? st.rotateInverse : st.rotateForward;
      check(st, where, ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, applyConfig(st, total / D, 1, 1, st.layoutBshd, 0, rotation, dtype)));
    }
    return returnData(heap, x, xLoc, xPtr, total, dtype);
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
  // the pe_rope, then its two pe_rope_apply_configs (x's or q's, and k's; sizeof(pe_rope) and the config's size
  // are multiples of 8: aligned for them), zeroed so fields this wrapper does not set keep their zero default,
  // then its pe_mrope_config (int32s)
  const extraSize = 2 * layout.apply.size + layout.mrope.size;
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
    kApplyPtr: ptr + layout.ropeSize + layout.apply.size,
    mrope: request.mrope ?? null, // mrope.js: { section, interleaved }
    mropePtr: ptr + layout.ropeSize + 2 * layout.apply.size,
    cfgIdx: configIndices(layout.apply.offsets), // rope-apply-config.js: the blocks' field word indices
    applied: new Int32Array(10).fill(-1), // what the apply config blocks hold (-1: nothing yet)
    kApplied: new Int32Array(10).fill(-1),
    fusedPos: 0, // rope-strided.js applyTable: staged positions for the fused kernel, or 0 (the table)
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
 * this instance; a TypeError naming `name` otherwise. An M-RoPE rope only where the caller rotates by three
 * streams itself (allowMrope: pe.attention, via attention-mrope.js).
 */
export function ropeHandle(ctx, rope, where, name, allowMrope = false) {
  const st = Rope.peek(rope);
  if (st === undefined) {
    throw typeError(where, `${name} must be a rope made by pe.rope() or pe.ropeFromHFConfig()`, rope);
  }
  if (st.ctx !== ctx) {
    throw new TypeError(`${where}: ${name} is a rope of another posenc instance (made by a different init())`);
  }
  if (st.ptr === 0) throw new TypeError(`${where}: ${name} is a rope that was freed`);
  if (st.mrope !== null && !allowMrope) {
    throw new TypeError(`${where}: ${name} is an M-RoPE rope (options.mrope); ${where} rotates by one position stream: rotate with rope.apply(x, { positions }) (three streams)`);
  }
  // mrope: the rope's state for attention-mrope.js, which rotates by three streams itself
  return { ptr: st.ptr, headDim: st.headDim, nFreq: st.nFreq, mrope: st.mrope === null ? null : st };
}
