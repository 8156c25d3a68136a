// learned.js — learned absolute position embeddings (GPT-2, Radford et al. 2019; OPT, Zhang et al. 2022):
// pe.learned(table, { maxLen, dModel, offset }) wraps a trained (maxLen + offset, dModel) table, over
// c/src/learned.c. Position p reads row p + offset.
//
// OPT keeps offset 2: its embedding has num_embeddings + 2 rows, and positions come from the attention mask,
// (cumsum(mask) * mask - 1)[:, past:], so a padded token has position -1 and reads row 1. Positions are
// therefore accepted in [-offset, maxLen - 1]: exactly the rows of the table, no more. A position >= maxLen
// throws a RangeError naming maxLen; nothing outside the table is ever read (the C core checks every row
// before it writes anything, and so does this wrapper for plain arrays).
//
// The table is copied into wasm memory once, when the object is made (or used in place, zero-copy, when it is
// a pe.tensor: then it must stay alive as long as this object).
//
// 16-bit storage: the table keeps its own dtype (options.dtype, default the table's: a pe.tensor's dtype, a
// Float16Array's float16, else float32), so a float16 table takes half the memory and a 16-bit tensor is used
// in place; x has its own dtype (add's options.dtype, default x's own). Any combination is added in float32
// (16-bit values widened exactly) and a 16-bit x rounded once on store. lookup() returns float32 rows (a
// 16-bit table's rows widened exactly).

import { checkInt, checkOptions, checkKnownKeys, knownKeys, typeError, INT32_MAX } from './errors.js';
import { readLayout } from './abi.js';
import {
  SLOT,
  MAX_TENSOR_LENGTH,
  copyOut,
  locateData,
  stageData,
  returnData,
  resolveDtype,
  dtypeBytes,
  DTYPES,
  tensorRecord,
  float32Length,
  halfLength,
  viewBuffer,
  viewByteOffset,
  int32sLength,
  stageInt32s,
  int32RangeErrorAt,
} from './memory.js';


const LEARNED_KEYS = knownKeys('maxLen', 'dModel', 'offset', 'dtype');
const ADD_KEYS = knownKeys('shape', 'positions', 'dtype');

// pe_learned_add_config fields in declaration order (pe_abi_learned_add_config_layout), all int32.
const ADD_FIELDS = ['batch', 'seq', 'd_model', 'n_rows', 'row_offset', 'per_batch_positions', 'dtype', 'table_dtype'];

/** pe_learned_add_config in the config scratch slot, laid out as the module reports (read once per instance). */
function addConfig(st, B, S, D, perBatch, dtype) {
  const { heap } = st.ctx;
  const { offsets: o, size } = st.ctx.learnedAddLayout;
  const cfg = heap.scratch(SLOT.CONFIG, size);
  const i32 = heap.i32;
  const p = cfg >>> 2;
  i32.fill(0, p, p + (size >>> 2));
  i32[p + (o.batch >>> 2)] = B;
  i32[p + (o.seq >>> 2)] = S;
  i32[p + (o.d_model >>> 2)] = D;
  i32[p + (o.n_rows >>> 2)] = st.nRows;
  i32[p + (o.row_offset >>> 2)] = st.offset;
  i32[p + (o.per_batch_positions >>> 2)] = perBatch;
  i32[p + (o.dtype >>> 2)] = dtype;
  i32[p + (o.table_dtype >>> 2)] = st.tableDtype;
  return cfg;
}


/** Pointer to the table: the own copy, or the tensor's memory (checked to be alive on every call). */
function tablePtr(st, where) {
  if (st.tensor === null) return st.ptr;
  const rec = tensorRecord(st.ctx.heap, st.tensor, where, 'the table tensor');
  return rec.ptr;
}

function bound(st) {
  return `an integer in [${-st.offset}, ${st.maxLen - 1}] (positions < maxLen = ${st.maxLen}${st.offset ? `, >= -offset = ${-st.offset}` : ''})`;
}

/** Stages positions (n of them, from int32sLength) in the POS slot; returns the pointer. */
function writePositions(st, where, name, positions, n) {
  return stageInt32s(st.ctx.heap, SLOT.POS, where, name, positions, n, -st.offset, st.maxLen - 1, bound(st));
}

/** The error after the C core refused staged positions: the first one out of range by name, else the status. */
function failed(st, where, name, posPtr, n, status) {
  const e = int32RangeErrorAt(st.ctx.heap, posPtr, n, where, name, -st.offset, st.maxLen - 1, bound(st));
  return e ?? st.ctx.statusError(where, status);
}

class Learned {
  #st; // { ctx, ptr, tensor, nRows, maxLen, dModel, offset, tableDtype, freed }
  constructor(st) {
    this.#st = st;
  }
  /** The state of live table `obj`; a TypeError naming `where` otherwise. */
  static #live(obj, where, freedOk = false) {
    const st = typeof obj === 'object' && obj !== null && #st in obj ? obj.#st : undefined;
    if (st === undefined) throw new TypeError(`${where}: called on something that is not a pe.learned table`);
    if (st.freed && !freedOk) throw new TypeError(`${where}: this learned table was freed (free() was called on it)`);
    return st;
  }
  /** Positions per table (rows minus offset). */
  get maxLen() {
    return this.#st.maxLen;
  }
  get dModel() {
    return this.#st.dModel;
  }
  /** Rows in front of position 0 (OPT: 2). */
  get offset() {
    return this.#st.offset;
  }
  get freed() {
    return this.#st.freed;
  }
  /** The table's storage type: 'float32' | 'float16' | 'bfloat16'. */
  get dtype() {
    return DTYPES[this.#st.tableDtype];
  }

  /** (positions.length, dModel): row positions[i] + offset of the table for each position. */
  lookup(positions) {
    const where = 'learned.lookup';
    const st = Learned.#live(this, where);
    const { heap, exports: ex } = st.ctx;
    const table = tablePtr(st, where);
    const n = int32sLength(where, 'positions', positions, bound(st));
    const total = n * st.dModel;
    if (total > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: positions.length * dModel must be at most ${MAX_TENSOR_LENGTH}, got ${total}`);
    }
    const posPtr = writePositions(st, where, 'positions', positions, n);
    if (n === 0) return new Float32Array(0);
    const out = heap.scratch(SLOT.RESULT, total * 4, where, 'the rows (positions.length * dModel floats)');
    let status;
    if (st.tableDtype === 0) {
      status = ex.pe_learned_lookup(out, table, posPtr, n, st.dModel, st.nRows, st.offset);
    } else {
      // -0 + v == v for every v (+0 too): the rows widened exactly, by add's own row loop
      heap.f32.fill(-0, out >>> 2, (out >>> 2) + total);
      status = ex.pe_learned_add(out, table, posPtr, addConfig(st, 1, n, st.dModel, 0, 0));
    }
    if (status !== 0) throw failed(st, where, 'positions', posPtr, n, status);
    return copyOut(heap, out, total);
  }

  /**
   * x[b, s, :] += table[position(b, s) + offset, :] in place; returns x. x is (batch, seq, dModel); positions
   * has length seq (shared by the batch) or batch * seq (one row per sequence); default 0 .. seq - 1.
   * options.dtype: x's storage type (default x's own); any table dtype goes with any x dtype.
   */
  add(x, options) {
    const where = 'learned.add';
    const st = Learned.#live(this, where);
    const { heap, exports: ex } = st.ctx;
    const o = checkOptions(where, 'options', options);
    checkKnownKeys(where, 'options', o, ADD_KEYS);
    const shape = o.shape;
    const sb = 'options.shape must be [batch, seq, dModel] of integers >= 1';
    if (shape === undefined || shape === null || typeof shape !== 'object' || typeof shape.length !== 'number') {
      throw typeError(where, sb, shape);
    }
    if (shape.length !== 3) throw new RangeError(`${where}: ${sb}, got length ${shape.length}`);
    const B = checkInt(where, 'options.shape[0] (batch)', shape[0], 1, INT32_MAX);
    const S = checkInt(where, 'options.shape[1] (seq)', shape[1], 1, INT32_MAX);
    const D = checkInt(where, 'options.shape[2] (dModel)', shape[2], 1, INT32_MAX);
    if (D !== st.dModel) {
      throw new RangeError(`${where}: options.shape[2] (dModel) must equal this table's dModel ${st.dModel}, got ${D}`);
    }
    const total = B * S * D;
    if (total > MAX_TENSOR_LENGTH) {
      throw new RangeError(`${where}: options.shape must hold at most ${MAX_TENSOR_LENGTH} elements, got ${total}`);
    }
    const hasPositions = o.positions !== undefined && o.positions !== null;
    if (!hasPositions && S > st.maxLen) {
      throw new RangeError(
        `${where}: options.shape[1] (seq) must be at most maxLen (${st.maxLen}) with the default positions 0 .. seq - 1, got ${S}`,
      );
    }
    const table = tablePtr(st, where);
    const dtype = resolveDtype(where, o.dtype, x);
    const xLoc = locateData(heap, x, total, dtype, where, 'x');
    let posPtr = 0;
    let perBatch = 0;
    let nPos = 0;
    if (hasPositions) {
      nPos = int32sLength(where, 'options.positions', o.positions, bound(st));
      if (nPos !== S && nPos !== B * S) {
        throw new RangeError(`${where}: options.positions.length must be seq (${S}) or batch * seq (${B * S}), got ${nPos}`);
      }
      posPtr = writePositions(st, where, 'options.positions', o.positions, nPos);
      perBatch = nPos !== S ? 1 : 0;
    }
    const xPtr = stageData(heap, x, xLoc, total, dtype, SLOT.X, where);
    const status = ex.pe_learned_add(xPtr, table, posPtr, addConfig(st, B, S, D, perBatch, dtype));
    if (status !== 0) {
      throw hasPositions ? failed(st, where, 'options.positions', posPtr, nPos, status) : st.ctx.statusError(where, status);
    }
    return returnData(heap, x, xLoc, xPtr, total, dtype);
  }

  /** Releases the wasm copy of the table (not a pe.tensor the table came from); calling it again does nothing. */
  free() {
    const st = Learned.#live(this, 'learned.free', true);
    if (st !== undefined && !st.freed) {
      if (st.tensor === null) st.ctx.heap.free(st.ptr);
      st.ptr = 0;
      st.tensor = null;
      st.freed = true;
    }
  }
}
if (typeof Symbol.dispose === 'symbol') Learned.prototype[Symbol.dispose] = Learned.prototype.free;

/** pe.learned(table, { maxLen, dModel, offset, dtype }) */
export function learned(ctx, table, options) {
  const where = 'learned';
  const { heap } = ctx;
  const o = checkOptions(where, 'options', options);
  if (options === undefined || options === null) {
    throw typeError(where, 'options must be an object such as { dModel: 768 } (dModel is required)', options);
  }
  checkKnownKeys(where, 'options', o, LEARNED_KEYS);
  const dModel = o.dModel;
  if (dModel === undefined) throw typeError(where, `options.dModel must be an integer in [1, ${INT32_MAX}]`, dModel);
  checkInt(where, 'options.dModel', dModel, 1, INT32_MAX);
  const offset = checkInt(where, 'options.offset', o.offset ?? 0, 0, INT32_MAX);
  const tdt = resolveDtype(where, o.dtype, table, 'table');
  const length = tdt === 0 ? float32Length(heap, table, where, 'table') : halfLength(heap, table, tdt, where, 'table');
  if (length === 0 || length % dModel !== 0) {
    throw new RangeError(`${where}: table.length must be a positive multiple of dModel (${dModel}): (maxLen + offset) rows, got ${length}`);
  }
  const nRows = length / dModel;
  let maxLen;
  if (o.maxLen === undefined || o.maxLen === null) {
    maxLen = nRows - offset;
    if (maxLen < 1) {
      throw new RangeError(`${where}: the table has ${nRows} rows, which leaves no position after options.offset (${offset}) rows`);
    }
  } else {
    maxLen = checkInt(where, 'options.maxLen', o.maxLen, 1, INT32_MAX);
    if (maxLen + offset !== nRows) {
      throw new RangeError(
        `${where}: table.length must be (maxLen + offset) * dModel = (${maxLen} + ${offset}) * ${dModel} = ${(maxLen + offset) * dModel}, got ${length}`,
      );
    }
  }
  if (nRows > INT32_MAX) throw new RangeError(`${where}: the table must have at most ${INT32_MAX} rows, got ${nRows}`);

  if (!ctx.learnedAddLayout) ctx.learnedAddLayout = readLayout(ctx, 'pe_abi_learned_add_config_layout', ADD_FIELDS);
  const st = { ctx, ptr: 0, tensor: null, nRows, maxLen, dModel, offset, tableDtype: tdt, freed: false };
  const loc = locateData(heap, table, length, tdt, where, 'table');
  if (tensorRecord(heap, table, where, 'table') !== null) {
    st.tensor = table; // zero-copy
  } else {
    // Our own copy. A view of wasm memory is located (above) before malloc may detach it.
    const bytes = length * dtypeBytes(tdt);
    const own = heap.malloc(bytes, where, 'the copy of the table');
    if (loc !== -1) heap.u8.copyWithin(own, loc, loc + bytes);
    else if (tdt === 0) heap.f32.set(table, own >>> 2);
    else heap.u8.set(new Uint8Array(viewBuffer(table), viewByteOffset(table), bytes), own);
    st.ptr = own;
  }
  return new Learned(st);
}
