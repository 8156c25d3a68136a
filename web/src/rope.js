// rope.js — pe.rope(options): rotary position embedding (Su et al. 2021, "RoFormer") with every scaling family
// of Hugging Face transformers' ROPE_INIT_FUNCTIONS, over the C core (c/src/rope_freq.c, c/src/rope.c).
//
// Options are validated and resolved once, here, into a pe_rope_config; pe_rope_init then builds the C object
// (frequency tables in double) once per JS object. Every later call only checks its own arguments (shape,
// layout, positions) and runs the kernels on scratch memory: no allocation in steady state, no per-element
// JS work for typed positions.

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
import { SLOT, MAX_TENSOR_LENGTH, placeFloat32, float32Length } from './memory.js';
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

/** Reads pe_rope_config's layout from the module once per instance. */
export function readRopeLayout(ctx) {
  return readLayout(ctx, 'pe_abi_rope_config_layout', CONFIG_FIELDS.map(([name]) => name), ['configSize', 'ropeSize']);
}

// -------------------------------------------------------------------------------------------------------------
// Option resolution
// -------------------------------------------------------------------------------------------------------------

// camelCase option -> HF snake_case spelling accepted inside `scaling`.
const SNAKE = {
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
};

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
      const orig = intPositive('originalMaxPositionEmbeddings', false) ?? maxPos;
      if (orig === undefined) {
        throw typeError(
          where,
          `${N('originalMaxPositionEmbeddings')} (or ${N('maxPositionEmbeddings')}) must be an integer in [1, ${INT32_MAX}]${forType}`,
          undefined,
        );
      }
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
      const orig = intPositive('originalMaxPositionEmbeddings', false) ?? maxPos;
      if (orig === undefined) {
        throw typeError(
          where,
          `${N('originalMaxPositionEmbeddings')} (or ${N('maxPositionEmbeddings')}) must be an integer in [1, ${INT32_MAX}]${forType}`,
          undefined,
        );
      }
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

/** seqLen -> BigInt for the C int64 argument. undefined/null -> `dflt`. */
function seqLenArg(where, seqLen, dflt) {
  if (seqLen === undefined || seqLen === null) return dflt;
  return BigInt(checkInt(where, 'seqLen', seqLen, 0, Number.MAX_SAFE_INTEGER));
}

/**
 * Copies positions into the POS scratch slot as int32 and checks them: non-negative integers < 2^31.
 * An Int32Array is copied with one memcpy and checked by the C scan (pe_positions_max), so there is no
 * per-element JS work; any other array-like is checked element by element while it is copied.
 * Returns { ptr, n }.
 */
function writePositions(ctx, where, name, positions) {
  const { heap, exports: ex } = ctx;
  const isInt32 = positions instanceof Int32Array;
  if (
    !isInt32 &&
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
  if (ArrayBuffer.isView(positions) && heap.isView(positions)) positions = positions.slice(); // scratch may detach it
  const ptr = heap.scratch(SLOT.POS, n * 4);
  if (isInt32) {
    heap.i32.set(positions, ptr >>> 2);
    if (n > 0) {
      const out = heap.scratch(SLOT.OUT, 16);
      const st = ex.pe_positions_max(out, ptr, n);
      if (st !== 0) {
        const i = positions.findIndex((v) => v < 0);
        throw rangeError(where, `${name}[${i}] must be an integer in [0, ${INT32_MAX}]`, positions[i]);
      }
    }
  } else {
    const i32 = heap.i32;
    const base = ptr >>> 2;
    for (let i = 0; i < n; i++) {
      const v = positions[i];
      if (typeof v !== 'number') throw typeError(where, `${name}[${i}] must be an integer in [0, ${INT32_MAX}]`, v);
      if (!(Number.isInteger(v) && v >= 0 && v <= INT32_MAX)) {
        throw rangeError(where, `${name}[${i}] must be an integer in [0, ${INT32_MAX}]`, v);
      }
      i32[base + i] = v;
    }
  }
  return { ptr, n };
}

/** shape [batch, seq, heads, headDim] -> numbers, checked against x's length and the rope's headDim. */
function checkShape(where, shape, headDim) {
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
// The rope object
// -------------------------------------------------------------------------------------------------------------

const ropeState = new WeakMap(); // Rope -> private state

function state(rope, where) {
  const st = ropeState.get(rope);
  if (st === undefined) throw new TypeError(`${where}: called on something that is not a rope`);
  if (st.ptr === 0) throw new Error(`${where}: this rope was freed`);
  return st;
}

class Rope {
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

  cosSin(positions, seqLen) {
    const where = 'rope.cosSin';
    const st = state(this, where);
    const { heap, exports: ex } = st.ctx;
    const sl = seqLenArg(where, seqLen, SEQ_LEN_FROM_POSITIONS);
    const pos = writePositions(st.ctx, where, 'positions', positions);
    const count = pos.n * st.nFreq;
    if (count > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: positions.length * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
    }
    const cosPtr = heap.scratch(SLOT.COS, count * 4);
    const sinPtr = heap.scratch(SLOT.SIN, count * 4);
    st.check(where, ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, pos.ptr, pos.n, sl, 1.0));
    const f32 = heap.f32;
    return {
      cos: f32.slice(cosPtr >>> 2, (cosPtr >>> 2) + count),
      sin: f32.slice(sinPtr >>> 2, (sinPtr >>> 2) + count),
    };
  }

  apply(x, options) {
    const where = 'rope.apply';
    const st = state(this, where);
    const { heap, exports: ex } = st.ctx;
    const o = checkOptions(where, 'options', options);
    if (o.shape === undefined) throw typeError(where, 'options.shape must be [batch, seq, heads, headDim]', undefined);
    const [B, S, H, D] = checkShape(where, o.shape, st.resolved.headDim);
    const layout = LAYOUTS.indexOf(checkEnum(where, 'options.layout', o.layout ?? 'bshd', LAYOUTS));
    const inverse = o.inverse ?? false;
    if (typeof inverse !== 'boolean') throw typeError(where, 'options.inverse must be a boolean', inverse);
    const sl = seqLenArg(where, o.seqLen, SEQ_LEN_FROM_POSITIONS);
    const total = B * S * H * D;

    // x first: a view of wasm memory must be located before any scratch allocation can detach it.
    const placed = placeFloat32(heap, x, total, where, 'x');
    let posPtr;
    let nPos;
    if (o.positions === undefined || o.positions === null) {
      posPtr = heap.iota(S);
      nPos = S;
    } else {
      ({ ptr: posPtr, n: nPos } = writePositions(st.ctx, where, 'options.positions', o.positions));
      if (nPos !== S && nPos !== B * S) {
        throw new RangeError(
          `${where}: options.positions.length must be seq (${S}) or batch * seq (${B * S}), got ${nPos}`,
        );
      }
    }
    const perBatch = nPos !== S ? 1 : 0;
    const count = nPos * st.nFreq;
    if (count > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: positions.length * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
    }
    const cosPtr = heap.scratch(SLOT.COS, count * 4);
    const sinPtr = heap.scratch(SLOT.SIN, count * 4);
    // Forward: tables carry HF's attention factor a. Inverse: tables scaled by a * (1/a^2) = 1/a, so the
    // inverse rotation divides the factor back out: inverse(apply(x)) == x.
    const extra = inverse ? 1 / (st.scale * st.scale) : 1;
    st.check(where, ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, nPos, sl, extra));
    st.check(
      where,
      ex.pe_rope_apply(st.ptr, placed.ptr, cosPtr, sinPtr, B, S, H, layout, perBatch, inverse ? ROTATE_INVERSE : ROTATE_FORWARD),
    );
    return placed.finish();
  }

  /**
   * Re-rotates already-rotated vectors (cached keys) by a position delta: x at position p becomes x at p + delta.
   * A pure rotation (no attention factor), so it composes: rerotate(apply(x, p), d) == apply(x, p + d).
   */
  rerotate(x, delta, options) {
    const where = 'rope.rerotate';
    const st = state(this, where);
    const { heap, exports: ex } = st.ctx;
    checkInt(where, 'delta', delta, -INT32_MAX, INT32_MAX);
    const o = checkOptions(where, 'options', options);
    const D = st.resolved.headDim;
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
    checkEnum(where, 'options.layout', o.layout ?? 'bshd', LAYOUTS); // every row turns by the same angle
    const sl = seqLenArg(where, o.seqLen, SEQ_LEN_NONE);
    const placed = placeFloat32(heap, x, total, where, 'x');
    if (delta === 0 || total === 0) return placed.finish();
    // One table row for position |delta|, scaled by 1/a so that a * (1/a) = 1: a pure rotation. A negative
    // delta turns the other way. Every head vector is a row of the (rows, 1, 1, headDim) view of x.
    const posPtr = heap.scratch(SLOT.POS, 4);
    heap.i32[posPtr >>> 2] = Math.abs(delta);
    const cosPtr = heap.scratch(SLOT.COS, st.nFreq * 4);
    const sinPtr = heap.scratch(SLOT.SIN, st.nFreq * 4);
    st.check(where, ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, 1, sl, 1 / st.scale));
    st.check(
      where,
      ex.pe_rope_apply(st.ptr, placed.ptr, cosPtr, sinPtr, total / D, 1, 1, 0, 0, delta < 0 ? ROTATE_INVERSE : ROTATE_FORWARD),
    );
    return placed.finish();
  }

  /** Releases the C object; calling it again does nothing. Any other method then throws. */
  free() {
    const st = ropeState.get(this);
    if (st && st.ptr !== 0) {
      st.ctx.heap.free(st.ptr);
      st.ptr = 0;
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
  const ptr = heap.malloc(layout.ropeSize);

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

  const rope = new Rope();
  const st = {
    ctx,
    ptr,
    resolved: Object.freeze({ ...r }),
    nFreq: r.type === 'proportional' ? r.headDim / 2 : half,
    scale: 1,
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
  ropeState.set(rope, st);
  st.scale = rope.attentionScaling(); // constant per rope (the C core's rope->attention_scaling)
  if (!(st.scale > 0 && Number.isFinite(st.scale))) {
    rope.free();
    throw new RangeError(`${where}: the resolved attention factor must be finite and > 0, got ${describe(st.scale)}`);
  }
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
