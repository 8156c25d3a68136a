// sinusoidal.js — fixed sinusoidal position encodings (Vaswani et al. 2017, "Attention Is All You Need", 3.5):
// pe.sinusoidal(seqLen, dModel, options) builds the (seqLen, dModel) table and pe.sinusoidal.add(x, options)
// adds it in place to (batch, seq, dModel) embeddings, over c/src/sinusoidal.c.
//
//   PE(p, 2i) = sin(p / base^(2i/d)),  PE(p, 2i+1) = cos(p / base^(2i/d))         (pairing 'interleaved')
//   [sin a0 .. sin a(h-1) | cos a0 .. cos a(d-h-1)], h = ceil(d/2)                 (pairing 'half': Marian)
//   variant 'tensor2tensor': sin | cos halves with frequencies exp(-i ln(base) / (d/2 - 1)) (fairseq, FSMT)
//
// Angles are formed in double and rounded to float32 once, so position 10^6 is as exact as position 10.
// options.dtype 'float16' | 'bfloat16' (default: x's or out's own, a pe.tensor's dtype or a Float16Array's): the
// table, or x for add, in 16-bit storage; add widens x exactly, adds in float32 and rounds once on store.

import { checkInt, checkNumber, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, INT32_MAX } from './errors.js';
import {
  SLOT,
  MAX_TENSOR_LENGTH,
  copyOut,
  int32sLength,
  stageInt32s,
  int32RangeErrorAt,
  locateData,
  stageData,
  returnData,
  resolveDtype,
  dtypeBytes,
} from './memory.js';
import { readLayout, limit } from './abi.js';

export const SINUSOIDAL_PAIRINGS = Object.freeze(['interleaved', 'half']);
export const SINUSOIDAL_VARIANTS = Object.freeze(['paper', 'tensor2tensor']);


const POSITION_BOUND = `an integer in [0, ${INT32_MAX}]`;
const TABLE_KEYS = knownKeys('base', 'offset', 'pairing', 'variant', 'paddingIdx', 'out', 'dtype');
const ADD_KEYS = knownKeys('shape', 'positions', 'offset', 'base', 'pairing', 'variant', 'paddingIdx', 'dtype');
const CONFIG_FIELDS = ['base', 'offset', 'variant', 'use_padding_idx', 'padding_idx', 'dtype'];

/** Reads pe_sinusoidal_config's layout from the module once per instance. */
export function readSinusoidalLayout(ctx) {
  return readLayout(ctx, 'pe_abi_sinusoidal_config_layout', CONFIG_FIELDS);
}

/** Validates the options shared by the table and add forms. */
function resolveOptions(where, o, dModel) {
  const base = o.base ?? 10000;
  checkNumber(where, 'options.base', base, { positive: true });
  const variant = checkEnum(where, 'options.variant', o.variant ?? 'paper', SINUSOIDAL_VARIANTS);
  const t2t = variant === 'tensor2tensor';
  const pairing = checkEnum(where, 'options.pairing', o.pairing ?? (t2t ? 'half' : 'interleaved'), SINUSOIDAL_PAIRINGS);
  if (t2t && pairing !== 'half') {
    throw new RangeError(`${where}: options.pairing must be 'half' with options.variant 'tensor2tensor' (sin | cos halves), got '${pairing}'`);
  }
  if (t2t && dModel < 4) {
    throw new RangeError(`${where}: dModel must be an integer >= 4 with options.variant 'tensor2tensor' (it divides by dModel/2 - 1), got ${dModel}`);
  }
  let paddingIdx = o.paddingIdx;
  if (paddingIdx !== undefined && paddingIdx !== null) checkInt(where, 'options.paddingIdx', paddingIdx, 0, INT32_MAX);
  else paddingIdx = null;
  const code = t2t ? 'PE_SINUSOIDAL_TENSOR2TENSOR' : pairing === 'half' ? 'PE_SINUSOIDAL_HALF' : 'PE_SINUSOIDAL_INTERLEAVED'; // pe_sinusoidal_variant
  return { base, code, paddingIdx };
}

/**
 * The error for a status of the C core: PE_ERR_BASE names options.base and the bound that keeps every angle
 * finite (PE_MAX_FREQUENCY, where the module has it); anything else as the C core states it.
 */
function statusError(ctx, where, status, r) {
  if (status === ctx.status.PE_ERR_BASE) {
    const max = ctx.limits.PE_MAX_FREQUENCY;
    const keeps = max === undefined ? '' : ` that keeps every frequency at most ${max} (PE_MAX_FREQUENCY)`;
    return new RangeError(`${where}: options.base must be a finite number > 0${keeps}, got ${r.base} (PE_ERR_BASE)`);
  }
  return ctx.statusError(where, status);
}

function writeConfig(ctx, r, offset, dtype) {
  const { heap } = ctx;
  const { offsets: CFG, size } = ctx.sinusoidalLayout;
  const cfg = heap.scratch(SLOT.CONFIG, size);
  heap.u8.fill(0, cfg, cfg + size);
  const dv = heap.dataView;
  dv.setFloat64(cfg + CFG.base, r.base, true);
  dv.setInt32(cfg + CFG.offset, offset, true);
  dv.setInt32(cfg + CFG.variant, limit(ctx.limits, r.code), true);
  dv.setInt32(cfg + CFG.use_padding_idx, r.paddingIdx === null ? 0 : 1, true);
  dv.setInt32(cfg + CFG.padding_idx, r.paddingIdx ?? 0, true);
  dv.setInt32(cfg + CFG.dtype, dtype, true);
  return cfg;
}

/**
 * pe.sinusoidal(seqLen, dModel, options) -> Float32Array(seqLen * dModel); row r is position offset + r.
 * options.out (a Float32Array or pe.tensor of seqLen * dModel) receives the table instead of a new array and is
 * returned; a tensor is written in place by the kernel (zero-copy). options.dtype 16-bit: a Uint16Array of raw
 * bits (or out: 16-bit data of that dtype).
 */
export function sinusoidal(ctx, seqLen, dModel, options) {
  const where = 'sinusoidal';
  checkInt(where, 'seqLen', seqLen, 1, INT32_MAX);
  checkInt(where, 'dModel', dModel, 1, INT32_MAX);
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, TABLE_KEYS);
  const r = resolveOptions(where, o, dModel);
  const offset = checkInt(where, 'options.offset', o.offset ?? 0, 0, INT32_MAX);
  if (offset + seqLen - 1 > INT32_MAX) {
    throw new RangeError(`${where}: options.offset + seqLen - 1 (the last position) must be at most ${INT32_MAX}, got ${offset + seqLen - 1}`);
  }
  const total = seqLen * dModel;
  if (total > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: seqLen * dModel must be at most ${MAX_TENSOR_LENGTH}, got ${total}`);
  }
  const { heap, exports: ex } = ctx;
  // out is located before anything is allocated (an allocation may detach a view of wasm memory)
  const out = o.out ?? null;
  const dtype = resolveDtype(where, o.dtype, out, 'options.out');
  const outLoc = out === null ? -1 : locateData(heap, out, total, dtype, where, 'options.out', 'seqLen * dModel');
  const cfg = writeConfig(ctx, r, offset, dtype);
  const ptr = outLoc !== -1 ? outLoc : heap.scratch(SLOT.RESULT, total * dtypeBytes(dtype), where, 'the table (seqLen * dModel values)');
  const status = ex.pe_sinusoidal_table(ptr, seqLen, dModel, cfg);
  if (status !== 0) throw statusError(ctx, where, status, r);
  if (out !== null) return returnData(heap, out, outLoc, ptr, total, dtype);
  return dtype === 0 ? copyOut(heap, ptr, total) : new Uint16Array(heap.buffer, ptr, total).slice();
}

/**
 * pe.sinusoidal.add(x, { shape: [batch, seq, dModel], positions, offset, ...table options }): x[b, s, :] +=
 * PE(position of (b, s)) in place; returns x. positions: length seq (shared) or batch * seq (one row per
 * sequence); default offset + s. offset and positions are exclusive.
 */
export function sinusoidalAdd(ctx, x, options) {
  const where = 'sinusoidal.add';
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, ADD_KEYS);
  const shape = o.shape;
  const bound = 'options.shape must be [batch, seq, dModel] of integers >= 1';
  if (shape === undefined || shape === null || typeof shape !== 'object' || typeof shape.length !== 'number') {
    throw typeError(where, bound, shape);
  }
  if (shape.length !== 3) throw new RangeError(`${where}: ${bound}, got length ${shape.length}`);
  const B = checkInt(where, 'options.shape[0] (batch)', shape[0], 1, INT32_MAX);
  const S = checkInt(where, 'options.shape[1] (seq)', shape[1], 1, INT32_MAX);
  const D = checkInt(where, 'options.shape[2] (dModel)', shape[2], 1, INT32_MAX);
  const total = B * S * D;
  if (total > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: options.shape must hold at most ${MAX_TENSOR_LENGTH} elements, got ${total}`);
  }
  const r = resolveOptions(where, o, D);
  const hasPositions = o.positions !== undefined && o.positions !== null;
  let offset = 0;
  if (o.offset !== undefined && o.offset !== null) {
    if (hasPositions) {
      throw new TypeError(`${where}: give options.offset (positions offset + s) or options.positions, not both`);
    }
    offset = checkInt(where, 'options.offset', o.offset, 0, INT32_MAX);
    if (offset + S - 1 > INT32_MAX) {
      throw new RangeError(`${where}: options.offset + seq - 1 (the last position) must be at most ${INT32_MAX}, got ${offset + S - 1}`);
    }
  }
  const { heap, exports: ex } = ctx;
  // x first: a view of wasm memory must be located before any scratch allocation can detach it.
  const dtype = resolveDtype(where, o.dtype, x);
  const xLoc = locateData(heap, x, total, dtype, where, 'x');
  let posPtr = 0;
  let perBatch = 0;
  let nPos = 0;
  if (hasPositions) {
    const name = 'options.positions';
    nPos = int32sLength(where, name, o.positions, POSITION_BOUND);
    if (nPos !== S && nPos !== B * S) {
      throw new RangeError(`${where}: options.positions.length must be seq (${S}) or batch * seq (${B * S}), got ${nPos}`);
    }
    posPtr = stageInt32s(heap, SLOT.POS, where, name, o.positions, nPos, 0, INT32_MAX);
    perBatch = nPos !== S ? 1 : 0;
  }
  const xPtr = stageData(heap, x, xLoc, total, dtype, SLOT.X, where);
  const cfg = writeConfig(ctx, r, offset, dtype);
  const status = ex.pe_sinusoidal_add(xPtr, posPtr, B, S, D, perBatch, cfg);
  if (status !== 0) {
    const e = hasPositions ? int32RangeErrorAt(heap, posPtr, nPos, where, 'options.positions', 0, INT32_MAX) : null;
    throw e ?? statusError(ctx, where, status, r);
  }
  return returnData(heap, x, xLoc, xPtr, total, dtype);
}
