// rope.js — pe.rope(options): rotary position embedding (Su et al. 2021, "RoFormer") with every scaling family
// of Hugging Face transformers' ROPE_INIT_FUNCTIONS, over the C core (c/src/rope_freq.c, c/src/rope.c).
//
// Options are validated and resolved once, here, into a pe_rope_config; pe_rope_init then builds the C object
// (frequency tables in double) once per JS object. Every later call only checks its own arguments (shape,
// layout, positions) and runs the kernels: no allocation in steady state, no per-element JS validation for
// typed positions (the C core scans them). apply() keeps the last cos/sin table it built, so q and k (or
// repeated calls) at the same positions build it once; apply(q, { k }) rotates both in one call.

import {
  checkInt,
  checkNumber,
  checkEnum,
  checkOptions,
  typeError,
  rangeError,
  describe,
  INT32_MAX,
} from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, float32Ptr, float32Scratch, float32Result, float32Overlap, float32Length } from './memory.js';
import { readLayout } from './abi.js';

export const ROPE_TYPES = Object.freeze(['default', 'linear', 'dynamic', 'yarn', 'longrope', 'llama3', 'proportional']);
export const PAIRINGS = Object.freeze(['half', 'interleaved']);
export const LAYOUTS = Object.freeze(['bshd', 'bhsd']);
export const MAX_HEAD_DIM = 1024; // PE_ROPE_MAX_HEAD_DIM

const SEQ_LEN_NONE = 0n; // PE_SEQ_LEN_NONE
const SEQ_LEN_FROM_POSITIONS = -1n; // PE_SEQ_LEN_FROM_POSITIONS
const ROTATE_FORWARD = 0;
const ROTATE_INVERSE = 1;

// pe_rope_config fields in declaration order, as pe_abi_rope_config_layout() reports their offsets.
const CONFIG_FIELDS = [
  ['head_dim', 'i32'],
  ['rotary_dim', 'i32'],
  ['base', 'f64'],
  ['type', 'i32'],
  ['pairing', 'i32'],
  ['factor', 'f64'],
  ['max_position_embeddings', 'i32'],
  ['original_max_position_embeddings', 'i32'],
  ['attention_factor', 'f64'],
  ['beta_fast', 'f64'],
  ['beta_slow', 'f64'],
  ['mscale', 'f64'],
  ['mscale_all_dim', 'f64'],
  ['yarn_no_truncate', 'i32'],
  ['low_freq_factor', 'f64'],
  ['high_freq_factor', 'f64'],
  ['short_factor', 'ptr'],
  ['long_factor', 'ptr'],
];

// pe_rope_apply_config fields in declaration order (pe_abi_rope_apply_config_layout), all int32.
const APPLY_FIELDS = ['batch', 'seq', 'heads', 'layout', 'per_batch_rows', 'rotation'];

/** Reads pe_rope_config's layout (and pe_rope_apply_config's, as .apply) from the module once per instance. */
export function readRopeLayout(ctx) {
  const layout = readLayout(ctx, 'pe_abi_rope_config_layout', CONFIG_FIELDS.map(([name]) => name), ['configSize', 'ropeSize']);
  layout.apply = readLayout(ctx, 'pe_abi_rope_apply_config_layout', APPLY_FIELDS);
  return layout;
}

/** Fills the rope's own pe_rope_apply_config block (allocated with it: no scratch, no growth per call). */
function applyConfig(st, B, S, H, layout, perBatch, rotation) {
  const i32 = st.ctx.heap.i32;
  const p = st.applyPtr >>> 2;
  const o = st.ctx.ropeLayout.apply.offsets;
  i32[p + (o.batch >>> 2)] = B;
  i32[p + (o.seq >>> 2)] = S;
  i32[p + (o.heads >>> 2)] = H;
  i32[p + (o.layout >>> 2)] = layout;
  i32[p + (o.per_batch_rows >>> 2)] = perBatch;
  i32[p + (o.rotation >>> 2)] = rotation;
  return st.applyPtr;
}

// -------------------------------------------------------------------------------------------------------------
// Option resolution
// -------------------------------------------------------------------------------------------------------------

// camelCase option -> HF snake_case spelling accepted inside `scaling` (hf-config.js reads it too).
export const SNAKE = Object.freeze({
  type: 'rope_type',
  factor: 'factor',
  originalMaxPositionEmbeddings: 'original_max_position_embeddings',
  attentionFactor: 'attention_factor',
  betaFast: 'beta_fast',
  betaSlow: 'beta_slow',
  mscale: 'mscale',
  mscaleAllDim: 'mscale_all_dim',
  truncate: 'truncate',
  lowFreqFactor: 'low_freq_factor',
  highFreqFactor: 'high_freq_factor',
  shortFactor: 'short_factor',
  longFactor: 'long_factor',
});

/** Names of options in messages for pe.rope(); hf-config.js supplies its own (config.json key names). */
export const ROPE_NAMES = {
  where: 'rope',
  name: (key) => (key in SNAKE ? `scaling.${key}` : key),
};

function scalingValue(s, key) {
  let v = s[key];
  if (v === undefined || v === null) v = s[SNAKE[key]];
  if (key === 'type' && (v === undefined || v === null)) v = s.type ?? s.rope_type; // both HF spellings
  return v === null ? undefined : v;
}

function floatArray(where, name, v, length) {
  const bound = `an array of ${length} finite numbers > 0 (rotaryDim / 2)`;
  if (v === undefined) throw typeError(where, `${name} must be ${bound}`, v);
  if (typeof v !== 'object' || v === null || typeof v.length !== 'number') {
    throw typeError(where, `${name} must be ${bound}`, v);
  }
  if (v.length !== length) {
    throw new RangeError(`${where}: ${name} must be ${bound}, got length ${v.length}`);
  }
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) {
    const x = v[i];
    if (typeof x !== 'number') throw typeError(where, `${name}[${i}] must be a finite number > 0`, x);
    if (!(Number.isFinite(x) && x > 0)) throw rangeError(where, `${name}[${i}] must be a finite number > 0`, x);
    out[i] = x;
  }
  return out;
}

/**
 * Validates pe.rope() options and resolves every default the way Hugging Face does, so the C config gets
 * explicit values. Throws TypeError / RangeError naming the option (through `names`).
 */
export function resolveRopeOptions(options, names = ROPE_NAMES) {
  const where = names.where;
  const N = names.name;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError(where, 'options must be an object such as { headDim: 64 }', options);
  }
  const o = options;
  const r = {};

  // headDim: even, 2..1024
  const hd = o.headDim;
  const hdBound = `${N('headDim')} must be an even integer in [2, ${MAX_HEAD_DIM}]`;
  if (typeof hd !== 'number') throw typeError(where, hdBound, hd);
  if (!Number.isInteger(hd) || hd < 2 || hd > MAX_HEAD_DIM || hd % 2 !== 0) throw rangeError(where, hdBound, hd);
  r.headDim = hd;

  // rotaryDim: even, 2..headDim; default headDim
  const rd = o.rotaryDim ?? hd;
  const rdBound = `${N('rotaryDim')} must be an even integer in [2, headDim = ${hd}]`;
  if (typeof rd !== 'number') throw typeError(where, rdBound, rd);
  if (!Number.isInteger(rd) || rd < 2 || rd > hd || rd % 2 !== 0) throw rangeError(where, rdBound, rd);
  r.rotaryDim = rd;

  // base (rope_theta): finite, > 0, != 1 (base 1 makes every frequency 1 and YaRN divides by ln(base))
  const base = o.base ?? 10000;
  const baseBound = `${N('base')} must be a finite number > 0 and != 1`;
  if (typeof base !== 'number') throw typeError(where, baseBound, base);
  if (!(Number.isFinite(base) && base > 0 && base !== 1)) throw rangeError(where, baseBound, base);
  r.base = base;

  r.pairing = checkEnum(where, N('pairing'), o.pairing ?? 'half', PAIRINGS);

  r.maxPositionEmbeddings =
    o.maxPositionEmbeddings === undefined || o.maxPositionEmbeddings === null
      ? undefined
      : checkInt(where, N('maxPositionEmbeddings'), o.maxPositionEmbeddings, 1, INT32_MAX);

  // scaling
  let s = o.scaling;
  if (s === undefined || s === null) s = { type: 'default' };
  if (typeof s !== 'object' || Array.isArray(s)) {
    throw typeError(where, `${N('scaling')} must be an object such as { type: 'linear', factor: 2 }`, s);
  }
  const typeName = scalingValue(s, 'type');
  const typeBound = `${N('type')} must be one of ${ROPE_TYPES.map((t) => `'${t}'`).join(', ')}`;
  if (typeof typeName !== 'string') throw typeError(where, typeBound, typeName);
  if (!ROPE_TYPES.includes(typeName)) throw rangeError(where, typeBound, typeName);
  r.type = typeName;

  const get = (key) => scalingValue(s, key);
  const forType = ` (required for '${typeName}')`;
  const positive = (key, required) => {
    const v = get(key);
    if (v === undefined) {
      if (required) throw typeError(where, `${N(key)} must be a finite number > 0${forType}`, v);
      return undefined;
    }
    return checkNumber(where, N(key), v, { positive: true });
  };
  const nonNegative = (key) => {
    const v = get(key);
    return v === undefined ? undefined : checkNumber(where, N(key), v, { nonNegative: true });
  };
  const intPositive = (key, required, what = forType) => {
    const v = get(key);
    if (v === undefined) {
      if (required) throw typeError(where, `${N(key)} must be an integer in [1, ${INT32_MAX}]${what}`, v);
      return undefined;
    }
    return checkInt(where, N(key), v, 1, INT32_MAX);
  };
  const maxPos = r.maxPositionEmbeddings;
  // yarn, longrope (HF): original_max_position_embeddings defaults to max_position_embeddings
  const originalMax = () => {
    const orig = intPositive('originalMaxPositionEmbeddings', false) ?? maxPos;
    if (orig === undefined) {
      throw typeError(
        where,
        `${N('originalMaxPositionEmbeddings')} (or ${N('maxPositionEmbeddings')}) must be an integer in [1, ${INT32_MAX}]${forType}`,
        undefined,
      );
    }
    return orig;
  };

  switch (typeName) {
    case 'default':
      break;
    case 'linear':
      r.factor = positive('factor', true);
      break;
    case 'dynamic':
      r.factor = positive('factor', true);
      if (maxPos === undefined) {
        throw typeError(where, `${N('maxPositionEmbeddings')} must be an integer in [1, ${INT32_MAX}]${forType}`, undefined);
      }
      break;
    case 'yarn': {
      // HF: original_max_position_embeddings defaults to max_position_embeddings; factor None -> max / original.
      const orig = originalMax();
      r.originalMaxPositionEmbeddings = orig;
      r.factor = positive('factor', false);
      if (r.factor === undefined) {
        if (maxPos === undefined) {
          throw typeError(
            where,
            `${N('factor')} (or ${N('maxPositionEmbeddings')}, for factor = max / original) must be a finite number > 0${forType}`,
            undefined,
          );
        }
        r.factor = maxPos / orig;
      }
      r.attentionFactor = positive('attentionFactor', false);
      r.betaFast = nonNegative('betaFast'); // 0 means the default, as HF's `or 32`
      r.betaSlow = nonNegative('betaSlow');
      const ms = get('mscale');
      const msad = get('mscaleAllDim');
      r.mscale = ms === undefined ? undefined : checkNumber(where, N('mscale'), ms);
      r.mscaleAllDim = msad === undefined ? undefined : checkNumber(where, N('mscaleAllDim'), msad);
      const tr = get('truncate');
      if (tr !== undefined && typeof tr !== 'boolean') throw typeError(where, `${N('truncate')} must be a boolean`, tr);
      r.truncate = tr ?? true;
      break;
    }
    case 'longrope': {
      const orig = originalMax();
      r.originalMaxPositionEmbeddings = orig;
      // HF: factor defaults to max_position_embeddings / original (Phi-3); without a max it is 1.
      r.factor = positive('factor', false) ?? (maxPos !== undefined ? maxPos / orig : 1);
      r.attentionFactor = positive('attentionFactor', false);
      r.shortFactor = floatArray(where, N('shortFactor'), get('shortFactor'), rd / 2);
      r.longFactor = floatArray(where, N('longFactor'), get('longFactor'), rd / 2);
      break;
    }
    case 'llama3': {
      r.factor = positive('factor', true);
      r.lowFreqFactor = positive('lowFreqFactor', true);
      r.highFreqFactor = positive('highFreqFactor', true);
      if (!(r.highFreqFactor > r.lowFreqFactor)) {
        throw rangeError(where, `${N('highFreqFactor')} must be > ${N('lowFreqFactor')} (${r.lowFreqFactor})`, r.highFreqFactor);
      }
      r.originalMaxPositionEmbeddings = intPositive('originalMaxPositionEmbeddings', true);
      break;
    }
    case 'proportional':
      r.factor = positive('factor', false) ?? 1;
      break;
  }
  return r;
}

// -------------------------------------------------------------------------------------------------------------
// Argument helpers shared by the methods
// -------------------------------------------------------------------------------------------------------------
//
// The methods below run on every decode step, so their valid path is kept lean: each argument is tested inline
// with plain comparisons, and messages (template strings, lists of allowed values) are built only when an
// argument is wrong, by calling the same checks that name the argument and its bound. Nothing is allocated per
// call in the steady state: no placement objects, no closures, no arrays of dimensions.

const PE_ERR_POSITION = 11; // pe_status
const APPLY = 'rope.apply';
const POSITIONS_BOUND = `an integer in [0, ${INT32_MAX}]`;

/** A dimension: an integer in [1, INT32_MAX] (a number: no BigInt, no numeric string). */
function isDim(v) {
  return typeof v === 'number' && (v | 0) === v && v > 0;
}

/** seqLen -> BigInt for the C int64 argument. undefined/null -> `dflt`. */
function seqLenArg(where, seqLen, dflt) {
  if (seqLen === undefined || seqLen === null) return dflt;
  return BigInt(checkInt(where, 'seqLen', seqLen, 0, Number.MAX_SAFE_INTEGER));
}

/** The positions type check: an Int32Array, or an array-like that is not a BigInt array. */
function checkPositionsType(where, name, positions) {
  if (
    !(positions instanceof Int32Array) &&
    (positions === null ||
      typeof positions !== 'object' ||
      typeof positions.length !== 'number' ||
      positions instanceof BigInt64Array ||
      positions instanceof BigUint64Array)
  ) {
    throw typeError(where, `${name} must be an Int32Array or an array of integers in [0, ${INT32_MAX}]`, positions);
  }
  const n = positions.length;
  if (!Number.isInteger(n) || n < 0 || n > MAX_TENSOR_LENGTH) {
    throw rangeError(where, `${name}.length must be an integer in [0, ${MAX_TENSOR_LENGTH}]`, n);
  }
  return n;
}

/**
 * Copies n positions into `dst` (an Int32Array with room for n) as int32. An Int32Array is copied with one
 * set() and not checked here: the C core's table builder checks it (one scan, before it writes anything), and
 * positionError() names the bad element afterwards. Any other array-like is checked element by element while
 * it is copied. `dst` may be a view of wasm memory or a JS array (never both the source's memory and a
 * block allocated after it: callers copy before allocating).
 */
function copyPositions(where, name, positions, n, dst, offset) {
  if (positions instanceof Int32Array) {
    dst.set(positions, offset);
    return;
  }
  for (let i = 0; i < n; i++) {
    const v = positions[i];
    if (typeof v !== 'number') throw typeError(where, `${name}[${i}] must be ${POSITIONS_BOUND}`, v);
    if (!(Number.isInteger(v) && v >= 0 && v <= INT32_MAX)) throw rangeError(where, `${name}[${i}] must be ${POSITIONS_BOUND}`, v);
    dst[offset + i] = v;
  }
}

/** The error for a C status after a table build: the first negative position by name, else the C status. */
function positionError(st, where, name, positions, n, status) {
  if (status === PE_ERR_POSITION && positions !== null) {
    for (let i = 0; i < n; i++) {
      if (positions[i] < 0) return rangeError(where, `${name}[${i}] must be ${POSITIONS_BOUND}`, positions[i]);
    }
  }
  return st.ctx.statusError(where, status);
}

/**
 * shape [batch, seq, heads, headDim] -> numbers, checked against the rope's headDim and the size limit.
 * Throws TypeError / RangeError naming the offending entry.
 */
function checkShape(where, shape, headDim) {
  if (shape !== null && typeof shape === 'object' && shape.length === 4) {
    const B = shape[0];
    const S = shape[1];
    const H = shape[2];
    if (isDim(B) && isDim(S) && isDim(H) && shape[3] === headDim && B * S * H * headDim <= MAX_TENSOR_LENGTH) {
      return [B, S, H, headDim];
    }
  }
  const bound = `options.shape must be [batch, seq, heads, headDim] of integers >= 1`;
  if (shape === null || typeof shape !== 'object' || typeof shape.length !== 'number') {
    throw typeError(where, bound, shape);
  }
  if (shape.length !== 4) throw new RangeError(`${where}: ${bound}, got length ${shape.length}`);
  const dims = [0, 0, 0, 0];
  const axis = ['batch', 'seq', 'heads', 'headDim'];
  for (let i = 0; i < 4; i++) {
    dims[i] = checkInt(where, `options.shape[${i}] (${axis[i]})`, shape[i], 1, INT32_MAX);
  }
  if (dims[3] !== headDim) {
    throw new RangeError(`${where}: options.shape[3] (headDim) must equal this rope's headDim ${headDim}, got ${dims[3]}`);
  }
  const total = dims[0] * dims[1] * dims[2] * dims[3];
  if (total > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: options.shape must hold at most ${MAX_TENSOR_LENGTH} elements, got ${total}`);
  }
  return dims;
}

// -------------------------------------------------------------------------------------------------------------
// The table cache
// -------------------------------------------------------------------------------------------------------------
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

/** True when the cached table was built for this key. `positions` null means the default positions. */
function tableHit(st, positions, rows, seqLen, extra) {
  if (!st.tabValid || st.tabRows !== rows || st.tabSeqLen !== seqLen || st.tabExtra !== extra) return false;
  if (positions === null) return st.tabIota;
  if (st.tabIota) return false;
  const a = st.tabPos;
  for (let i = 0; i < rows; i++) if (a[i] !== positions[i]) return false;
  return true;
}

/**
 * Builds the rope's cached table for `rows` positions (null: 0 .. rows-1), checking them (see copyPositions).
 * Locate the call's tensors before calling this: it may allocate, and so detach views of wasm memory.
 */
function buildTable(st, where, name, positions, rows, seqLen, extra) {
  const { heap, exports: ex } = st.ctx;
  st.tabValid = false; // until the build succeeds
  let posPtr;
  if (positions === null) {
    posPtr = heap.iota(rows);
  } else {
    // First into the rope's JS copy (the key; also safe from a positions array that views wasm memory, which the
    // allocations below may detach), then into wasm scratch.
    if (st.tabPos.length < rows) {
      let cap = 16;
      while (cap < rows) cap *= 2;
      st.tabPos = new Int32Array(cap);
    }
    const key = st.tabPos;
    copyPositions(where, name, positions, rows, key, 0);
    posPtr = heap.scratch(SLOT.POS, rows * 4);
    const i32 = heap.i32;
    if (rows < 64) for (let i = 0, b = posPtr >>> 2; i < rows; i++) i32[b + i] = key[i];
    else i32.set(key.length === rows ? key : key.subarray(0, rows), posPtr >>> 2);
  }
  const need = rows * st.nFreq;
  if (need > st.tabCap) {
    heap.free(st.tabPtr);
    st.tabPtr = 0;
    st.tabCap = 0;
    let cap = 64;
    while (cap < need) cap *= 2;
    st.tabPtr = heap.malloc(cap * 8); // cos | sin
    st.tabCap = cap;
  }
  const cosPtr = st.tabPtr;
  const status = ex.pe_rope_cos_sin(
    cosPtr,
    cosPtr + st.tabCap * 4,
    st.ptr,
    posPtr,
    rows,
    seqLen === -1 ? SEQ_LEN_FROM_POSITIONS : BigInt(seqLen),
    extra,
  );
  if (status !== 0) throw positionError(st, where, name, positions === null ? null : st.tabPos, rows, status);
  st.tabRows = rows;
  st.tabIota = positions === null;
  st.tabSeqLen = seqLen;
  st.tabExtra = extra;
  st.tabValid = true;
}

// -------------------------------------------------------------------------------------------------------------
// The rope object
// -------------------------------------------------------------------------------------------------------------

const ropeState = new WeakMap(); // Rope -> private state (the getters and ropeHandle; methods use the field)

function state(rope, where) {
  const st = ropeState.get(rope);
  if (st === undefined) throw new TypeError(`${where}: called on something that is not a rope`);
  if (st.ptr === 0) throw new Error(`${where}: this rope was freed`);
  return st;
}

class Rope {
  // The same state as in ropeState, in a private field: the per-call methods read it with a property load
  // instead of a WeakMap lookup.
  #st;
  constructor(st) {
    this.#st = st;
  }
  static #of(rope, where) {
    const st = typeof rope === 'object' && rope !== null && #st in rope ? rope.#st : undefined;
    if (st === undefined) throw new TypeError(`${where}: called on something that is not a rope`);
    if (st.ptr === 0) throw new Error(`${where}: this rope was freed`);
    return st;
  }

  /** Dimensions per head. */
  get headDim() {
    return ropeState.get(this).resolved.headDim;
  }
  /** Dimensions rotated per head: rotaryDim (HF: int(head_dim * partial_rotary_factor)). */
  get rotaryDim() {
    return ropeState.get(this).resolved.rotaryDim;
  }
  /** Frequencies per position: the width of invFreq() and of each cosSin() row. rotaryDim/2, or headDim/2 for 'proportional'. */
  get nFreq() {
    return ropeState.get(this).nFreq;
  }
  get pairing() {
    return ropeState.get(this).resolved.pairing;
  }
  get type() {
    return ropeState.get(this).resolved.type;
  }
  get base() {
    return ropeState.get(this).resolved.base;
  }
  /** The resolved options (defaults filled in, HF's way); a fresh copy each time. */
  get config() {
    const r = ropeState.get(this).resolved;
    const c = { ...r };
    if (r.shortFactor) c.shortFactor = Array.from(r.shortFactor);
    if (r.longFactor) c.longFactor = Array.from(r.longFactor);
    return c;
  }
  get freed() {
    return ropeState.get(this).ptr === 0;
  }

  /** Inverse frequencies in double precision (what the C core uses to form angles). */
  invFreq64(seqLen) {
    const where = 'rope.invFreq64';
    const st = state(this, where);
    return st.invFreq64(where, seqLenArg(where, seqLen, SEQ_LEN_NONE));
  }

  /** Inverse frequencies rounded to float32. */
  invFreq(seqLen) {
    const where = 'rope.invFreq';
    const st = state(this, where);
    return Float32Array.from(st.invFreq64(where, seqLenArg(where, seqLen, SEQ_LEN_NONE)));
  }

  attentionScaling(seqLen) {
    const where = 'rope.attentionScaling';
    const st = state(this, where);
    const { heap, exports: ex } = st.ctx;
    const sl = seqLenArg(where, seqLen, SEQ_LEN_NONE);
    const out = heap.scratch(SLOT.OUT, 16);
    st.check(where, ex.pe_rope_inv_freq(0, out, st.ptr, sl));
    return heap.f64[out >>> 3];
  }

  /**
   * cosSin(positions, seqLen?) or cosSin(positions, { seqLen, out: { cos, sin } }): the (n, nFreq) tables.
   * With out, they are written into out.cos / out.sin (Float32Arrays or pe.tensors of n * nFreq; a tensor is
   * written in place, zero-copy) and returned in the result instead of new arrays.
   */
  cosSin(positions, seqLenOrOptions) {
    const where = 'rope.cosSin';
    const st = Rope.#of(this, where);
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
    }
    const sl = seqLenArg(where, seqLen, SEQ_LEN_FROM_POSITIONS);
    const n = checkPositionsType(where, 'positions', positions);
    const count = n * st.nFreq;
    if (count > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: positions.length * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
    }
    // Outputs are located before anything is allocated (an allocation may detach a view of wasm memory).
    let cosLoc = -1;
    let sinLoc = -1;
    if (out !== null) {
      const what = `positions.length * nFreq`;
      cosLoc = float32Ptr(heap, out.cos, count, where, 'options.out.cos', what);
      sinLoc = float32Ptr(heap, out.sin, count, where, 'options.out.sin', what);
      if (count > 0 && float32Overlap(out.cos, cosLoc, count, out.sin, sinLoc, count)) {
        throw new RangeError(`${where}: options.out.cos and options.out.sin must not overlap`);
      }
    }
    // Positions: validated while copied (arrays), or by the C core's scan (Int32Array), then the table.
    if (ArrayBuffer.isView(positions) && heap.isView(positions)) positions = positions.slice(); // scratch may detach it
    const posPtr = heap.scratch(SLOT.POS, n * 4);
    copyPositions(where, 'positions', positions, n, heap.i32, posPtr >>> 2);
    const cosPtr = cosLoc !== -1 ? cosLoc : heap.scratch(SLOT.COS, count * 4);
    const sinPtr = sinLoc !== -1 ? sinLoc : heap.scratch(SLOT.SIN, count * 4);
    const status = ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, n, sl, 1.0);
    if (status !== 0) throw positionError(st, where, 'positions', positions, n, status);
    if (out === null) {
      const f32 = heap.f32;
      return {
        cos: f32.slice(cosPtr >>> 2, (cosPtr >>> 2) + count),
        sin: f32.slice(sinPtr >>> 2, (sinPtr >>> 2) + count),
      };
    }
    return {
      cos: float32Result(heap, out.cos, cosLoc, cosPtr, count),
      sin: float32Result(heap, out.sin, sinLoc, sinPtr, count),
    };
  }

  /**
   * apply(x, { shape, layout, positions, inverse, seqLen, k, kHeads }): rotates x in place and returns it.
   * With options.k, k (shape [batch, seq, kHeads, headDim], same layout) is rotated in place too, from the same
   * cos/sin table. The table is cached per rope (see "The table cache" above).
   */
  apply(x, options) {
    const st = Rope.#of(this, APPLY);
    const heap = st.ctx.heap;
    let o = options;
    if (o === null || typeof o !== 'object' || Array.isArray(o) || ArrayBuffer.isView(o)) o = checkOptions(APPLY, 'options', o);

    // shape: inline checks; checkShape() names the bad entry when one fails
    const s = o.shape;
    if (s === undefined) throw typeError(APPLY, 'options.shape must be [batch, seq, heads, headDim]', undefined);
    const D = st.headDim;
    let B;
    let S;
    let H;
    if (
      s !== null &&
      typeof s === 'object' &&
      s.length === 4 &&
      isDim((B = s[0])) &&
      isDim((S = s[1])) &&
      isDim((H = s[2])) &&
      s[3] === D &&
      B * S * H * D <= MAX_TENSOR_LENGTH
    ) {
      // valid
    } else {
      [B, S, H] = checkShape(APPLY, s, D);
    }
    const total = B * S * H * D;

    const l = o.layout;
    const layout =
      l === undefined || l === null || l === 'bshd' ? 0 : l === 'bhsd' ? 1 : LAYOUTS.indexOf(checkEnum(APPLY, 'options.layout', l, LAYOUTS));
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

    // x and k first: a view of wasm memory must be located before any allocation can detach it.
    const xLoc = float32Ptr(heap, x, total, APPLY, 'x');
    let kLoc = -1;
    if (hasK) {
      kLoc = float32Ptr(heap, k, kTotal, APPLY, 'options.k', 'batch * seq * kHeads * headDim');
      if (float32Overlap(x, xLoc, total, k, kLoc, kTotal)) {
        throw new RangeError(`${APPLY}: options.k must not overlap x (each is rotated in place once)`);
      }
    }

    // positions: length seq (shared by the batch) or batch * seq; values are checked when a table is built
    const p = o.positions;
    let rows = S;
    let positions = null;
    if (p !== undefined && p !== null) {
      rows = checkPositionsType(APPLY, 'options.positions', p);
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
    if (!tableHit(st, positions, rows, seqLen, extra)) buildTable(st, APPLY, 'options.positions', positions, rows, seqLen, extra);
    const cosPtr = st.tabPtr;
    const sinPtr = cosPtr + st.tabCap * 4;

    const ex = st.ctx.exports;
    const perBatch = rows !== S ? 1 : 0;
    const rotation = inverse ? ROTATE_INVERSE : ROTATE_FORWARD;
    const xPtr = xLoc !== -1 ? xLoc : float32Scratch(heap, x, SLOT.X);
    const kPtr = !hasK ? 0 : kLoc !== -1 ? kLoc : float32Scratch(heap, k, SLOT.K);
    let status = ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, applyConfig(st, B, S, H, layout, perBatch, rotation));
    if (status !== 0) throw st.ctx.statusError(APPLY, status);
    if (hasK) {
      status = ex.pe_rope_apply(st.ptr, kPtr, cosPtr, sinPtr, applyConfig(st, B, S, kH, layout, perBatch, rotation));
      if (status !== 0) throw st.ctx.statusError(APPLY, status);
      if (kLoc === -1) float32Result(heap, k, kLoc, kPtr, kTotal);
    }
    return float32Result(heap, x, xLoc, xPtr, total);
  }

  /**
   * Re-rotates already-rotated vectors (cached keys) by a position delta: x at position p becomes x at p + delta.
   * A pure rotation (no attention factor), so it composes: rerotate(apply(x, p), d) == apply(x, p + d).
   */
  rerotate(x, delta, options) {
    const where = 'rope.rerotate';
    const st = Rope.#of(this, where);
    const { heap, exports: ex } = st.ctx;
    checkInt(where, 'delta', delta, -INT32_MAX, INT32_MAX);
    const o = checkOptions(where, 'options', options);
    const D = st.headDim;
    let total;
    if (o.shape !== undefined) {
      const [B, S, H] = checkShape(where, o.shape, D);
      total = B * S * H * D;
    } else {
      total = float32Length(heap, x, where, 'x');
      if (total % D !== 0) {
        throw new RangeError(`${where}: x.length must be a multiple of headDim (${D}) when options.shape is not given, got ${total}`);
      }
    }
    const l = o.layout;
    if (!(l === undefined || l === null || l === 'bshd' || l === 'bhsd')) checkEnum(where, 'options.layout', l, LAYOUTS); // every row turns by the same angle
    const sl = seqLenArg(where, o.seqLen, SEQ_LEN_NONE);
    const xLoc = float32Ptr(heap, x, total, where, 'x');
    const xPtr = xLoc !== -1 ? xLoc : float32Scratch(heap, x, SLOT.X);
    if (delta !== 0 && total !== 0) {
      // One table row for position |delta|, scaled by 1/a so that a * (1/a) = 1: a pure rotation. A negative
      // delta turns the other way. Every head vector is a row of the (rows, 1, 1, headDim) view of x.
      const posPtr = heap.scratch(SLOT.POS, 4);
      heap.i32[posPtr >>> 2] = Math.abs(delta);
      const cosPtr = heap.scratch(SLOT.COS, st.nFreq * 4);
      const sinPtr = heap.scratch(SLOT.SIN, st.nFreq * 4);
      st.check(where, ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, 1, sl, 1 / st.scale));
      st.check(
        where,
        ex.pe_rope_apply(st.ptr, xPtr, cosPtr, sinPtr, applyConfig(st, total / D, 1, 1, 0, 0, delta < 0 ? ROTATE_INVERSE : ROTATE_FORWARD)),
      );
    }
    return float32Result(heap, x, xLoc, xPtr, total);
  }

  /** Releases the C object and the cached table; calling it again does nothing. Any other method then throws. */
  free() {
    const st = ropeState.get(this);
    if (st && st.ptr !== 0) {
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

/** Creates the C pe_rope for resolved options and wraps it. */
export function createRope(ctx, resolved, where = 'rope') {
  const { heap, exports: ex } = ctx;
  const layout = ctx.ropeLayout;
  const r = resolved;
  const half = r.rotaryDim / 2;

  // Scratch for the config struct and the factor arrays; pe_rope_init copies what it needs.
  const cfg = heap.scratch(SLOT.CONFIG, layout.configSize);
  let factors = 0;
  if (r.shortFactor) {
    factors = heap.scratch(SLOT.FACTORS, 2 * half * 8);
    const f64 = heap.f64;
    f64.set(r.shortFactor, factors >>> 3);
    f64.set(r.longFactor, (factors >>> 3) + half);
  }
  // the pe_rope, then its pe_rope_apply_config (sizeof(pe_rope) is a multiple of 8: aligned for it)
  const ptr = heap.malloc(layout.ropeSize + layout.apply.size);

  heap.u8.fill(0, cfg, cfg + layout.configSize);
  const dv = heap.dataView;
  const off = layout.offsets;
  const i32 = (name, v) => dv.setInt32(cfg + off[name], v ?? 0, true);
  const f64 = (name, v) => dv.setFloat64(cfg + off[name], v ?? 0, true);
  i32('head_dim', r.headDim);
  i32('rotary_dim', r.rotaryDim);
  f64('base', r.base);
  i32('type', ROPE_TYPES.indexOf(r.type));
  i32('pairing', PAIRINGS.indexOf(r.pairing));
  f64('factor', r.factor);
  i32('max_position_embeddings', r.maxPositionEmbeddings);
  i32('original_max_position_embeddings', r.originalMaxPositionEmbeddings);
  f64('attention_factor', r.attentionFactor);
  f64('beta_fast', r.betaFast);
  f64('beta_slow', r.betaSlow);
  f64('mscale', r.mscale);
  f64('mscale_all_dim', r.mscaleAllDim);
  i32('yarn_no_truncate', r.truncate === false ? 1 : 0);
  f64('low_freq_factor', r.lowFreqFactor);
  f64('high_freq_factor', r.highFreqFactor);
  dv.setUint32(cfg + off.short_factor, factors, true);
  dv.setUint32(cfg + off.long_factor, factors ? factors + half * 8 : 0, true);

  const status = ex.pe_rope_init(ptr, cfg);
  if (status !== 0) {
    heap.free(ptr);
    throw ctx.statusError(where, status);
  }

  const st = {
    ctx,
    ptr,
    applyPtr: ptr + layout.ropeSize,
    resolved: Object.freeze({ ...r }),
    headDim: r.headDim,
    nFreq: r.type === 'proportional' ? r.headDim / 2 : half,
    scale: 1, // the attention factor a
    inverseScale: 1, // 1 / a^2: the extra scale of inverse tables
    // the table cache (see "The table cache")
    tabPtr: 0, // cos | sin, tabCap floats each
    tabCap: 0,
    tabValid: false,
    tabRows: 0,
    tabIota: false,
    tabSeqLen: -1,
    tabExtra: 1,
    tabPos: new Int32Array(0),
    check(where, status) {
      if (status !== 0) throw ctx.statusError(where, status);
    },
    invFreq64(where, sl) {
      const out = heap.scratch(SLOT.F64, this.nFreq * 8 + 8);
      this.check(where, ex.pe_rope_inv_freq(out, out + this.nFreq * 8, this.ptr, sl));
      const f = heap.f64;
      return f.slice(out >>> 3, (out >>> 3) + this.nFreq);
    },
  };
  const rope = new Rope(st);
  ropeState.set(rope, st);
  st.scale = rope.attentionScaling(); // constant per rope (the C core's rope->attention_scaling)
  if (!(st.scale > 0 && Number.isFinite(st.scale))) {
    rope.free();
    throw new RangeError(`${where}: the resolved attention factor must be finite and > 0, got ${describe(st.scale)}`);
  }
  st.inverseScale = 1 / (st.scale * st.scale);
  return rope;
}

/** pe.rope(options) */
export function rope(ctx, options) {
  return createRope(ctx, resolveRopeOptions(options, ROPE_NAMES));
}

/**
 * For the families that take a rope (pe.attention): the C object and sizes of `rope` if it is a live rope of
 * this instance; a TypeError naming `name` otherwise.
 */
export function ropeHandle(ctx, rope, where, name) {
  const st = ropeState.get(rope);
  if (st === undefined) {
    throw typeError(where, `${name} must be a rope made by pe.rope() or pe.ropeFromHFConfig()`, rope);
  }
  if (st.ctx !== ctx) {
    throw new TypeError(`${where}: ${name} is a rope of another posenc instance (made by a different init())`);
  }
  if (st.ptr === 0) throw new TypeError(`${where}: ${name} is a rope that was freed`);
  return { ptr: st.ptr, headDim: st.resolved.headDim, nFreq: st.nFreq };
}
