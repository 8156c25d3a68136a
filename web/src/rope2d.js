// rope2d.js — pe.rope2d({ kind, headDim, base, ... }): 2D RoPE of vision encoders over a patch grid
// (c/src/rope2d.c builds the tables; pe_rope_apply rotates with them).
//
//   'pixtral'   Pixtral: rows on the even frequencies, columns on the odd; each image of a sequence starts at
//               (0, 0); patches row-major. imageSize / patchSize bound the grid (max_patches_per_side).
//   'qwen2-vl'  the Qwen2-VL vision tower (also Qwen2.5-VL's and Qwen3-VL's): first D/4 pairs by row, the rest
//               by column, frequencies base^(-2j/(D/2)); tokens in merge-window order (spatialMergeSize).
//   'llama4'    Llama 4 vision: adjacent pairs, column + 1 on the first D/4, row + 1 on the rest, patches
//               row-major and the CLS token last with angle 0.

import { checkInt, checkEnum, checkKnownKeys, knownKeys, typeError, INT32_MAX } from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, locateFloat32, stageFloat32, returnFloat32 } from './memory.js';
import { limit } from './abi.js';
import { resolveRopeOptions } from './rope-options.js';
import { createRope, ropeHandle, LAYOUTS } from './rope.js';

export const ROPE2D_KINDS = Object.freeze(['pixtral', 'qwen2-vl', 'llama4']);
const KIND_CODE = Object.freeze({ pixtral: 'PE_ROPE2D_PIXTRAL', 'qwen2-vl': 'PE_ROPE2D_QWEN2_VL', llama4: 'PE_ROPE2D_LLAMA4' });
const KEYS = Object.freeze(['kind', 'headDim', 'base', 'imageSize', 'patchSize', 'spatialMergeSize']);
const NAMES = { where: 'rope2d', strict: true, name: (k) => k };

function dim(where, name, v) {
  return checkInt(where, name, v, 1, INT32_MAX);
}

const APPLY_KEYS = knownKeys('shape', 'layout', 'grid', 'inverse');
const SHAPE_AXES = Object.freeze(['batch', 'seq', 'heads', 'headDim']);

/** shape[i], an integer in [1, INT32_MAX]; the argument's name is written only when it is not */
function shapeDim(where, s, i) {
  const v = s[i];
  if (typeof v === 'number' && (v | 0) === v && v > 0) return v;
  return dim(where, `options.shape[${i}] (${SHAPE_AXES[i]})`, v);
}

class Rope2d {
  #st;
  constructor(st) {
    this.#st = st;
  }
  static live(v, where) {
    const st = v instanceof Rope2d ? v.#st : undefined;
    if (st === undefined) throw new TypeError(`${where}: called on something that is not a pe.rope2d`);
    if (st.rope.freed) throw new TypeError(`${where}: this rope2d was freed (free() was called on it)`);
    return st;
  }
  get kind() {
    return this.#st.kind;
  }
  get headDim() {
    return this.#st.headDim;
  }
  /** Pairs per token: the width of each cosSin() row (headDim / 2). */
  get nFreq() {
    return this.#st.headDim / 2;
  }

  /** The two position streams [a..., b...] (Int32Array(2 * n)) the tables turn by, for a grid (see cosSin). */
  positions(grid) {
    return gridPositions(Rope2d.live(this, 'rope2d.positions'), 'rope2d.positions', 'grid', grid);
  }

  /** cosSin(grid): { cos, sin, n }, each (n, headDim / 2) for the n tokens of the grid. */
  cosSin(grid) {
    const where = 'rope2d.cosSin';
    const st = Rope2d.live(this, where);
    const pos = gridPositions(st, where, 'grid', grid);
    const n = pos.length / 2;
    const { cosPtr, sinPtr, count } = buildTable(st, where, pos);
    const f32 = st.ctx.heap.f32;
    return { cos: f32.slice(cosPtr >>> 2, (cosPtr >>> 2) + count), sin: f32.slice(sinPtr >>> 2, (sinPtr >>> 2) + count), n };
  }

  /** apply(x, { shape: [batch, seq, heads, headDim], layout, grid, inverse }): rotates x in place (seq = the grid's tokens). */
  apply(x, options) {
    const where = 'rope2d.apply';
    const st = Rope2d.live(this, where);
    const { heap, exports: ex, limits } = st.ctx;
    if (options === null || typeof options !== 'object' || Array.isArray(options)) throw typeError(where, 'options must be { shape, layout, grid }', options);
    // each option read once into a local; no copy of the object (a spread per call made a fresh hidden class)
    checkKnownKeys(where, 'options', options, APPLY_KEYS);
    const s = options.shape;
    const lay = options.layout;
    const grid = options.grid;
    const inverse = options.inverse;
    if (s === null || typeof s !== 'object' || s.length !== 4) throw typeError(where, 'options.shape must be [batch, seq, heads, headDim]', s);
    const B = shapeDim(where, s, 0);
    const S = shapeDim(where, s, 1);
    const H = shapeDim(where, s, 2);
    const D = shapeDim(where, s, 3);
    if (D !== st.headDim) throw new RangeError(`${where}: options.shape[3] (headDim) must equal this rope2d's headDim ${st.headDim}, got ${D}`);
    const total = B * S * H * D;
    if (total > MAX_TENSOR_LENGTH) throw new RangeError(`${where}: options.shape must hold at most ${MAX_TENSOR_LENGTH} elements, got ${total}`);
    const layout = limit(limits, checkEnum(where, 'options.layout', lay ?? 'bshd', LAYOUTS) === 'bshd' ? 'PE_LAYOUT_BSHD' : 'PE_LAYOUT_BHSD');
    if (inverse !== undefined && typeof inverse !== 'boolean') throw typeError(where, 'options.inverse must be a boolean', inverse);
    const pos = gridPositions(st, where, 'options.grid', grid);
    const n = pos.length / 2;
    if (n !== S) throw new RangeError(`${where}: options.shape[1] (seq) must equal the grid's token count ${n}, got ${S}`);
    const xLoc = locateFloat32(heap, x, total, where, 'x');
    const { cosPtr, sinPtr } = buildTable(st, where, pos);
    const xPtr = stageFloat32(heap, x, xLoc, total, SLOT.X, where);
    const i32 = heap.i32;
    const off = st.ctx.ropeLayout.apply.offsets;
    const p = st.applyPtr >>> 2;
    heap.u8.fill(0, st.applyPtr, st.applyPtr + st.ctx.ropeLayout.apply.size);
    i32[p + (off.batch >>> 2)] = B;
    i32[p + (off.seq >>> 2)] = S;
    i32[p + (off.heads >>> 2)] = H;
    i32[p + (off.layout >>> 2)] = layout;
    i32[p + (off.rotation >>> 2)] = limit(limits, inverse === true ? 'PE_ROTATE_INVERSE' : 'PE_ROTATE_FORWARD');
    const status = ex.pe_rope_apply(st.handle.ptr, xPtr, cosPtr, sinPtr, st.applyPtr);
    if (status !== 0) throw st.ctx.statusError(where, status);
    return returnFloat32(heap, x, xLoc, xPtr, total);
  }

  free() {
    const st = this.#st;
    if (!st.rope.freed) {
      st.rope.free();
      st.ctx.heap.free(st.applyPtr);
      st.applyPtr = 0;
    }
  }
}
if (typeof Symbol.dispose === 'symbol') Rope2d.prototype[Symbol.dispose] = Rope2d.prototype.free;

function buildTable(st, where, pos) {
  const { heap, exports: ex } = st.ctx;
  const n = pos.length / 2;
  const count = n * (st.headDim / 2);
  if (count > MAX_TENSOR_LENGTH) throw new RangeError(`${where}: tokens * headDim / 2 must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
  const posPtr = heap.scratch(SLOT.POS, pos.length * 4, where, 'the grid positions');
  heap.i32.set(pos, posPtr >>> 2);
  const cosPtr = heap.scratch(SLOT.COS, count * 4, where, 'the cos table');
  const sinPtr = heap.scratch(SLOT.SIN, count * 4, where, 'the sin table');
  const status = ex.pe_rope2d_cos_sin(cosPtr, sinPtr, st.handle.ptr, st.kindCode, posPtr, n);
  if (status !== 0) throw st.ctx.statusError(where, status);
  return { cosPtr, sinPtr, count };
}

const GRID_KEYS = Object.freeze({
  pixtral: knownKeys('gridH', 'gridW', 'images'),
  'qwen2-vl': knownKeys('gridH', 'gridW', 'gridT', 'gridThw'),
  llama4: knownKeys('gridH', 'gridW'),
});

/** a list of grids from { gridH, gridW } or the kind's list form, each checked */
function readGrids(st, where, name, grid) {
  if (grid === null || typeof grid !== 'object' || Array.isArray(grid)) {
    const forms = { pixtral: '{ gridH, gridW } or { images: [[h, w], ...] }', 'qwen2-vl': '{ gridH, gridW, gridT? } or { gridThw: [[t, h, w], ...] }', llama4: '{ gridH, gridW }' };
    throw typeError(where, `${name} must be ${forms[st.kind]}`, grid);
  }
  // each key read once into a local (no copy of the object per call)
  const listKey = st.kind === 'pixtral' ? 'images' : st.kind === 'qwen2-vl' ? 'gridThw' : null;
  checkKnownKeys(where, name, grid, GRID_KEYS[st.kind]);
  const list = listKey === null ? undefined : grid[listKey];
  const gridH = grid.gridH;
  const gridW = grid.gridW;
  const gridT = st.kind === 'qwen2-vl' ? grid.gridT : undefined;
  const out = [];
  if (list !== undefined) {
    if (gridH !== undefined || gridW !== undefined) throw typeError(where, `${name}: give either ${listKey} or gridH / gridW`, grid);
    if (!Array.isArray(list)) throw typeError(where, `${name}.${listKey} must be an array`, list);
    const len = st.kind === 'pixtral' ? 2 : 3;
    list.forEach((e, i) => {
      if (!Array.isArray(e) || e.length !== len) throw typeError(where, `${name}.${listKey}[${i}] must be [${len === 2 ? 'h, w' : 't, h, w'}] (integers >= 1)`, e);
      const v = e.map((x, a) => dim(where, `${name}.${listKey}[${i}][${a}]`, x));
      out.push(len === 2 ? { t: 1, h: v[0], w: v[1], names: [`${name}.${listKey}[${i}][0]`, `${name}.${listKey}[${i}][1]`] } : { t: v[0], h: v[1], w: v[2], names: [`${name}.${listKey}[${i}][1]`, `${name}.${listKey}[${i}][2]`] });
    });
  } else {
    const h = dim(where, `${name}.gridH`, gridH);
    const w = dim(where, `${name}.gridW`, gridW);
    const t = gridT === undefined ? 1 : dim(where, `${name}.gridT`, gridT);
    out.push({ t, h, w, names: [`${name}.gridH`, `${name}.gridW`] });
  }
  for (const e of out) {
    if (st.side !== 0 && st.kind === 'pixtral' && (e.h > st.side || e.w > st.side)) {
      throw new RangeError(`${where}: ${e.names[0]} and ${e.names[1]} must be at most imageSize / patchSize = ${st.side}, got ${e.h} x ${e.w}`);
    }
    if (st.kind === 'llama4' && (e.h !== st.side || e.w !== st.side)) {
      throw new RangeError(`${where}: ${e.names[0]} and ${e.names[1]} must both be imageSize / patchSize = ${st.side} (Llama 4 tiles are square), got ${e.h} x ${e.w}`);
    }
    if (st.kind === 'qwen2-vl' && (e.h % st.merge !== 0 || e.w % st.merge !== 0)) {
      throw new RangeError(`${where}: ${e.names[0]} and ${e.names[1]} must be multiples of spatialMergeSize ${st.merge}, got ${e.h} x ${e.w}`);
    }
  }
  return out;
}

/** the two streams for a grid, as each model lays its tokens out */
function gridPositions(st, where, name, grid) {
  const grids = readGrids(st, where, name, grid);
  let n = 0;
  for (const { t, h, w } of grids) n += t * h * w;
  if (st.kind === 'llama4') n += 1; // CLS
  if (n > MAX_TENSOR_LENGTH / 2) throw new RangeError(`${where}: ${name} has ${n} tokens, more than ${MAX_TENSOR_LENGTH / 2}`);
  const pos = new Int32Array(2 * n);
  let k = 0;
  const put = (a, b) => {
    pos[k] = a;
    pos[n + k] = b;
    k++;
  };
  for (const { t, h, w } of grids) {
    if (st.kind === 'pixtral') {
      for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) put(r, c);
    } else if (st.kind === 'qwen2-vl') {
      const m = st.merge;
      for (let f = 0; f < t; f++)
        for (let bh = 0; bh < h / m; bh++)
          for (let bw = 0; bw < w / m; bw++)
            for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) put(bh * m + i, bw * m + j);
    } else {
      for (let p = 0; p < h * w; p++) put((p % w) + 1, Math.floor(p / w) + 1);
    }
  }
  if (st.kind === 'llama4') put(0, 0); // CLS: angle 0
  return pos;
}

/** pe.rope2d(options) */
export function rope2d(ctx, options) {
  const where = 'rope2d';
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw typeError(where, "options must be an object such as { kind: 'pixtral', headDim: 64 }", options);
  }
  const o = { ...options };
  checkKnownKeys(where, 'options', o, KEYS);
  const kind = checkEnum(where, 'kind', o.kind, ROPE2D_KINDS);
  const hd = o.headDim;
  // Pixtral splits the frequencies into evens and odds (any even headDim); the others a quarter per coordinate
  const maxHd = limit(ctx.limits, 'PE_ROPE_MAX_HEAD_DIM');
  const step = kind === 'pixtral' ? 2 : 4;
  const hdBound = `headDim must be a multiple of ${step} in [${step}, ${maxHd}]${step === 4 ? ` for kind '${kind}' (a quarter of the pairs per coordinate)` : ''}`;
  if (typeof hd !== 'number') throw typeError(where, hdBound, hd);
  if (!Number.isInteger(hd) || hd < step || hd % step !== 0 || hd > maxHd) throw new RangeError(`${where}: ${hdBound}, got ${hd}`);
  let side = 0;
  if (o.imageSize !== undefined || o.patchSize !== undefined || kind === 'llama4') {
    const is = dim(where, 'imageSize', o.imageSize);
    const ps = dim(where, 'patchSize', o.patchSize);
    side = Math.floor(is / ps);
    if (side < 1) throw new RangeError(`${where}: imageSize must be at least patchSize (${ps}), got ${is}`);
  }
  let merge = 0;
  if (kind === 'qwen2-vl') merge = o.spatialMergeSize === undefined ? 2 : dim(where, 'spatialMergeSize', o.spatialMergeSize);
  else if (o.spatialMergeSize !== undefined) throw typeError(where, "spatialMergeSize is read by kind 'qwen2-vl' only", o.spatialMergeSize);
  const request = resolveRopeOptions({ headDim: hd, base: o.base, pairing: kind === 'llama4' ? 'interleaved' : 'half' }, NAMES, ctx.limits);
  const rope = createRope(ctx, request, NAMES);
  const handle = ropeHandle(ctx, rope, where, 'rope');
  const applyPtr = ctx.heap.malloc(ctx.ropeLayout.apply.size, where, 'the pe_rope_apply_config');
  return new Rope2d({ ctx, kind, kindCode: limit(ctx.limits, KIND_CODE[kind]), headDim: hd, side, merge, rope, handle, applyPtr });
}
