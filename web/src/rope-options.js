// rope-options.js — pe.rope() options to a pe_rope_config and back (hf-config.js maps config.json onto the same
// options).
//
// The JS side checks what an option is (a number, an integer, a string of a known set, an array of the right
// length) and what a type requires, so a message can name the option as the caller spelled it. It does not
// re-derive Hugging Face's defaults or repeat the C core's range rules: an option not given is written as 0,
// pe_rope_init resolves it (c/src/rope_freq.c) and validates the whole config, a refusal comes back as a
// RangeError naming the field the status is about, and the resolved values are read back from the pe_rope,
// as sokol's sg_query_desc returns a desc with its defaults applied. `rope.config` is that read-back in the
// shape pe.rope() takes, so pe.rope({ ...rope.config, headDim: 24 }) builds the same RoPE for another head size.

import { checkInt, checkNumber, checkEnum, checkKnownKeys, knownKeys, typeError, rangeError, describe, INT32_MAX } from './errors.js';
import { SLOT, numbersLength } from './memory.js';
import { readLayout, limit } from './abi.js';
import { resolveMropeOption } from './mrope.js';

export const ROPE_TYPES = Object.freeze(['default', 'linear', 'dynamic', 'yarn', 'longrope', 'llama3', 'proportional']);
export const PAIRINGS = Object.freeze(['half', 'interleaved']);

// Option values -> the names of their C enum values (the values come from the module: abi.js readLimits).
const ROPE_TYPE_CODE = Object.freeze(Object.fromEntries(ROPE_TYPES.map((t) => [t, `PE_ROPE_${t.toUpperCase()}`])));
const PAIRING_CODE = Object.freeze({ half: 'PE_PAIRING_HALF', interleaved: 'PE_PAIRING_INTERLEAVED' });

/** The option value whose C enum value is `code`. */
function nameOfCode(limits, codes, code) {
  for (const [name, macro] of Object.entries(codes)) if (limits[macro] === code) return name;
  throw new Error(`posenc: the wasm module reports an enum value ${code} this wrapper does not know; rebuild the wasm and the JS together`);
}

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

const ROPE_KEYS = knownKeys('headDim', 'rotaryDim', 'base', 'pairing', 'maxPositionEmbeddings', 'scaling', 'mrope');
const SCALING_KEYS = knownKeys(...new Set([...Object.keys(SNAKE), ...Object.values(SNAKE)]));

/** Names of options in messages for pe.rope(); hf-config.js supplies its own (config.json key names). */
export const ROPE_NAMES = {
  where: 'rope',
  strict: true, // unknown keys are errors (a config.json carries keys transformers does not read either)
  name: (key) => (key in SNAKE ? `scaling.${key}` : key),
};

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

// pe_rope_apply_config fields in declaration order (pe_abi_rope_apply_config_layout): int32 up to rotation,
// then int64 strides (batch, seq, heads) and offset, left 0 (dense, no offset) until the API exposes them.
const APPLY_FIELDS = ['batch', 'seq', 'heads', 'layout', 'per_batch_rows', 'rotation', 'stride_batch', 'stride_seq', 'stride_heads', 'offset', 'dtype'];

/**
 * Reads the layouts of pe_rope_config, pe_rope (as .rope: where the resolved config, n_freq and the attention
 * scaling sit) and pe_rope_apply_config (as .apply) from the module once per instance.
 */
export function readRopeLayout(ctx) {
  const config = readLayout(ctx, 'pe_abi_rope_config_layout', CONFIG_FIELDS.map(([name]) => name), ['configSize', 'ropeSize']);
  const rope = readLayout(ctx, 'pe_abi_rope_layout', ['config', 'rot_dim', 'n_freq', 'attention_scaling'], ['size']);
  const apply = readLayout(ctx, 'pe_abi_rope_apply_config_layout', APPLY_FIELDS);
  const mrope = readLayout(ctx, 'pe_abi_mrope_config_layout', ['section', 'interleaved']); // mrope.js
  return { ...config, rope: rope.offsets, apply, mrope };
}

function scalingValue(s, key) {
  let v = s[key];
  if (v === undefined || v === null) v = s[SNAKE[key]];
  if (key === 'type' && (v === undefined || v === null)) v = s.type ?? s.rope_type; // both HF spellings
  return v === null ? undefined : v;
}

/** An array of `length` finite numbers > 0, each element read once, as a Float64Array. */
function factorArray(where, name, v, length) {
  const bound = `an array of ${length} finite numbers > 0 (rotaryDim / 2)`;
  if (v === undefined) throw typeError(where, `${name} must be ${bound}`, v);
  const n = numbersLength(where, name, v, bound);
  if (n !== length) throw new RangeError(`${where}: ${name} must be ${bound}, got length ${n}`);
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
 * Checks pe.rope() options (kinds, and the fields each type requires) and returns the request: every option
 * given, undefined for the rest (the C core's default). Throws TypeError / RangeError naming the option through
 * `names`. `limits` are the module's (PE_ROPE_MAX_HEAD_DIM).
 */
export function resolveRopeOptions(options, names, limits) {
  const where = names.where;
  const N = names.name;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError(where, 'options must be an object such as { headDim: 64 }', options);
  }
  const o = { ...options }; // each option read once (a snapshot; scaling likewise below)
  if (names.strict) checkKnownKeys(where, 'options', o, ROPE_KEYS);
  const r = {};
  const maxHeadDim = limit(limits, 'PE_ROPE_MAX_HEAD_DIM');

  const hd = o.headDim;
  const hdBound = `${N('headDim')} must be an even integer in [2, ${maxHeadDim}]`;
  if (typeof hd !== 'number') throw typeError(where, hdBound, hd);
  if (!Number.isInteger(hd) || hd < 2 || hd > maxHeadDim || hd % 2 !== 0) throw rangeError(where, hdBound, hd);
  r.headDim = hd;

  const rd = o.rotaryDim ?? hd;
  const rdBound = `${N('rotaryDim')} must be an even integer in [2, headDim = ${hd}]`;
  if (typeof rd !== 'number') throw typeError(where, rdBound, rd);
  if (!Number.isInteger(rd) || rd < 2 || rd > hd || rd % 2 !== 0) throw rangeError(where, rdBound, rd);
  r.rotaryDim = rd;
  // M-RoPE (mrope.js): three position streams, the section picking each pair's axis
  if (o.mrope !== undefined && o.mrope !== null) r.mrope = resolveMropeOption(where, N('mrope'), o.mrope, rd);

  r.base = o.base === undefined || o.base === null ? undefined : checkNumber(where, N('base'), o.base, { positive: true });
  r.pairing = checkEnum(where, N('pairing'), o.pairing ?? 'half', PAIRINGS);
  r.maxPositionEmbeddings =
    o.maxPositionEmbeddings === undefined || o.maxPositionEmbeddings === null
      ? undefined
      : checkInt(where, N('maxPositionEmbeddings'), o.maxPositionEmbeddings, 1, INT32_MAX);

  let s = o.scaling;
  if (s === undefined || s === null) s = { type: 'default' };
  if (typeof s !== 'object' || Array.isArray(s)) {
    throw typeError(where, `${N('scaling')} must be an object such as { type: 'linear', factor: 2 }`, s);
  }
  s = { ...s };
  if (names.strict) checkKnownKeys(where, N('scaling'), s, SCALING_KEYS);
  const typeName = scalingValue(s, 'type');
  const typeBound = `${N('type')} must be one of ${ROPE_TYPES.map((t) => `'${t}'`).join(', ')}`;
  if (typeof typeName !== 'string') throw typeError(where, typeBound, typeName);
  if (!ROPE_TYPES.includes(typeName)) throw rangeError(where, typeBound, typeName);
  r.type = typeName;

  // Each option is read once; `required` ones have no default in the C core either.
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
  const finite = (key, opts) => {
    const v = get(key);
    return v === undefined ? undefined : checkNumber(where, N(key), v, opts);
  };
  const intPositive = (key, required) => {
    const v = get(key);
    if (v === undefined) {
      if (required) throw typeError(where, `${N(key)} must be an integer in [1, ${INT32_MAX}]${forType}`, v);
      return undefined;
    }
    return checkInt(where, N(key), v, 1, INT32_MAX);
  };
  const maxPos = r.maxPositionEmbeddings;
  // yarn, longrope: the original context length is original_max_position_embeddings, else max_position_embeddings
  const needOriginal = (orig) => {
    if (orig === undefined && maxPos === undefined) {
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
      r.originalMaxPositionEmbeddings = needOriginal(intPositive('originalMaxPositionEmbeddings', false));
      r.factor = positive('factor', false);
      if (r.factor === undefined && maxPos === undefined) {
        throw typeError(
          where,
          `${N('factor')} (or ${N('maxPositionEmbeddings')}, for factor = max / original) must be a finite number > 0${forType}`,
          undefined,
        );
      }
      r.attentionFactor = positive('attentionFactor', false);
      r.betaFast = finite('betaFast', { nonNegative: true }); // 0 means the default, as HF's `or 32`
      r.betaSlow = finite('betaSlow', { nonNegative: true });
      r.mscale = finite('mscale');
      r.mscaleAllDim = finite('mscaleAllDim');
      const tr = get('truncate');
      if (tr !== undefined && typeof tr !== 'boolean') throw typeError(where, `${N('truncate')} must be a boolean`, tr);
      r.truncate = tr;
      break;
    }
    case 'longrope':
      r.originalMaxPositionEmbeddings = needOriginal(intPositive('originalMaxPositionEmbeddings', false));
      r.factor = positive('factor', false);
      r.attentionFactor = positive('attentionFactor', false);
      r.shortFactor = factorArray(where, N('shortFactor'), get('shortFactor'), rd / 2);
      r.longFactor = factorArray(where, N('longFactor'), get('longFactor'), rd / 2);
      break;
    case 'llama3':
      r.factor = positive('factor', true);
      r.lowFreqFactor = positive('lowFreqFactor', true);
      r.highFreqFactor = positive('highFreqFactor', true);
      r.originalMaxPositionEmbeddings = intPositive('originalMaxPositionEmbeddings', true);
      break;
    case 'proportional':
      r.factor = positive('factor', false);
      break;
  }
  return r;
}

/** Writes the request into a zeroed pe_rope_config in scratch (factor arrays beside it); returns its pointer. */
export function writeRopeConfig(ctx, r) {
  const { heap } = ctx;
  const layout = ctx.ropeLayout;
  const half = r.rotaryDim / 2;
  const cfg = heap.scratch(SLOT.CONFIG, layout.configSize);
  let factors = 0;
  if (r.shortFactor) {
    factors = heap.scratch(SLOT.FACTORS, 2 * half * 8);
    const f64 = heap.f64;
    f64.set(r.shortFactor, factors >>> 3);
    f64.set(r.longFactor, (factors >>> 3) + half);
  }
  heap.u8.fill(0, cfg, cfg + layout.configSize);
  const dv = heap.dataView;
  const off = layout.offsets;
  const i32 = (name, v) => dv.setInt32(cfg + off[name], v ?? 0, true);
  const f64 = (name, v) => dv.setFloat64(cfg + off[name], v ?? 0, true);
  i32('head_dim', r.headDim);
  i32('rotary_dim', r.rotaryDim);
  f64('base', r.base);
  i32('type', limit(ctx.limits, ROPE_TYPE_CODE[r.type]));
  i32('pairing', limit(ctx.limits, PAIRING_CODE[r.pairing]));
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
  return cfg;
}

// The fields each type reads, as pe.rope() names them inside `scaling` (maxPositionEmbeddings is top-level).
const TYPE_FIELDS = {
  default: [],
  linear: ['factor'],
  dynamic: ['factor'],
  yarn: ['factor', 'originalMaxPositionEmbeddings', 'attentionFactor', 'betaFast', 'betaSlow', 'mscale', 'mscaleAllDim', 'truncate'],
  longrope: ['factor', 'originalMaxPositionEmbeddings', 'attentionFactor', 'shortFactor', 'longFactor'],
  llama3: ['factor', 'lowFreqFactor', 'highFreqFactor', 'originalMaxPositionEmbeddings'],
  proportional: ['factor'],
};

/**
 * The resolved config of the pe_rope at `ropePtr` (pe_rope_init filled in every default), in pe.rope()'s
 * option shape. `request` supplies what the pe_rope does not keep (the longrope factor arrays).
 */
export function readResolvedConfig(ctx, ropePtr, request) {
  const layout = ctx.ropeLayout;
  const dv = ctx.heap.dataView;
  const base = ropePtr + layout.rope.config;
  const off = layout.offsets;
  const i32 = (name) => dv.getInt32(base + off[name], true);
  const f64 = (name) => dv.getFloat64(base + off[name], true);
  const type = nameOfCode(ctx.limits, ROPE_TYPE_CODE, i32('type'));
  const all = {
    factor: f64('factor'),
    originalMaxPositionEmbeddings: i32('original_max_position_embeddings'),
    attentionFactor: f64('attention_factor'),
    betaFast: f64('beta_fast'),
    betaSlow: f64('beta_slow'),
    mscale: f64('mscale'),
    mscaleAllDim: f64('mscale_all_dim'),
    truncate: i32('yarn_no_truncate') === 0,
    lowFreqFactor: f64('low_freq_factor'),
    highFreqFactor: f64('high_freq_factor'),
    shortFactor: request.shortFactor,
    longFactor: request.longFactor,
  };
  const scaling = { type };
  for (const key of TYPE_FIELDS[type]) {
    // mscale and mscaleAllDim count only as a pair (the attention factor is resolved from them): 0 is "unset"
    if ((key === 'mscale' || key === 'mscaleAllDim') && all[key] === 0) continue;
    scaling[key] = all[key];
  }
  // rotaryDim only when partial: full rotation is the default, so { ...config, headDim } keeps meaning "all of it"
  const config = { headDim: i32('head_dim') };
  const rotaryDim = i32('rotary_dim');
  if (rotaryDim !== config.headDim) config.rotaryDim = rotaryDim;
  config.base = f64('base');
  config.pairing = nameOfCode(ctx.limits, PAIRING_CODE, i32('pairing'));
  const maxPos = i32('max_position_embeddings');
  if (maxPos !== 0) config.maxPositionEmbeddings = maxPos;
  config.scaling = scaling;
  return config;
}

/** " that keep(s) <what> at most <limit>" when the module has that limit (for messages). */
function keeps(limits, what, name, verb = 'keeps') {
  return limits[name] === undefined ? '' : ` that ${verb} ${what} at most ${limits[name]} (${name})`;
}

/**
 * The option a pe_rope_init refusal is about, with its bound as the C core states it, or null for a status
 * that names no single option.
 */
function refusedOption(status, r, N, limits) {
  const t = ` for '${r.type}'`;
  switch (status) {
    case 'PE_ERR_HEAD_DIM':
      return { key: 'headDim', value: r.headDim, bound: `must be an even integer in [2, ${limits.PE_ROPE_MAX_HEAD_DIM}]` };
    case 'PE_ERR_ROTARY_DIM':
      return { key: 'rotaryDim', value: r.rotaryDim, bound: 'must be an even integer in [2, headDim]' };
    case 'PE_ERR_BASE': {
      const freq = keeps(limits, 'every frequency', 'PE_MAX_FREQUENCY');
      const yarn = r.type === 'yarn' ? ` and != 1${t} (its correction range divides by ln(base))` : '';
      return { key: 'base', value: r.base ?? 10000, bound: `must be a finite number > 0${freq}${yarn}` };
    }
    case 'PE_ERR_FACTOR': {
      const inv = keeps(limits, 'every inverse frequency', 'PE_ROPE_MAX_INV_FREQ');
      if (r.type === 'longrope' && r.factor === undefined) {
        const keep = keeps(limits, 'every inverse frequency', 'PE_ROPE_MAX_INV_FREQ', 'keep');
        return { key: 'shortFactor', value: r.shortFactor, bound: `and ${N('longFactor')} must hold finite numbers > 0${keep}` };
      }
      const base = ` with ${N('base')} ${r.base ?? 10000}`; // the frequencies are base's, divided by the factor
      return { key: 'factor', value: r.factor, bound: `must be a finite number > 0${inv}${base}` };
    }
    case 'PE_ERR_ATTENTION_FACTOR': {
      const max = limits.PE_ROPE_MAX_SCALE === undefined ? '' : ` with magnitude at most ${limits.PE_ROPE_MAX_SCALE} (PE_ROPE_MAX_SCALE)`;
      if (r.attentionFactor !== undefined || r.type !== 'yarn') {
        return { key: 'attentionFactor', value: r.attentionFactor, bound: `(the attention factor) must be finite${max}` };
      }
      return {
        key: 'mscale',
        value: r.mscale,
        bound: `and ${N('mscaleAllDim')} (${r.mscaleAllDim}) must give an attention factor (with ${N('factor')}) that is finite${max}`,
      };
    }
    case 'PE_ERR_FIELD_VALUE':
      if (r.type === 'llama3') {
        return { key: 'highFreqFactor', value: r.highFreqFactor, bound: `must be > ${N('lowFreqFactor')} (${r.lowFreqFactor})${t}` };
      }
      if (r.type === 'yarn') return { key: 'betaFast', value: r.betaFast, bound: `and ${N('betaSlow')} must be finite numbers > 0${t}` };
      return null;
    default:
      return null;
  }
}

/**
 * The error for a config pe_rope_init refused: a RangeError naming the option and the bound, with the C
 * status it came from; a status about no single option is reported as the C core states it.
 */
export function ropeInitError(ctx, where, names, status, r) {
  const statusName = Object.keys(ctx.status).find((k) => ctx.status[k] === status);
  const refused = refusedOption(statusName, r, names.name, ctx.limits);
  if (refused === null) return ctx.statusError(where, status);
  const { key, value, bound } = refused;
  return new RangeError(`${where}: ${names.name(key)} ${bound}, got ${describe(value)} (pe_rope_init: ${statusName})`);
}
