// mrope.js — M-RoPE on a pe.rope (Qwen2-VL, Wang et al. 2024; Qwen3-VL's interleaved form): the `mrope` option,
// and the tables behind rope.cosSin / rope.apply for three position streams (c/src/mrope.c).
//
// An M-RoPE rope is an ordinary rope whose cos/sin rows read, per pair, the position of that pair's axis
// (temporal, height, width); pe_rope_apply rotates with them unchanged. Positions are [axis][n]: the t stream,
// then h, then w (HF's position_ids [3, batch, seq] flattened). rope.js calls in here only when the rope has
// an `mrope` option.

import { checkInt, checkKnownKeys, knownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, stageInt32s } from './memory.js';
import { POSITIONS_BOUND, positionsLength, seqLenArg, positionError, tableHit, stageTableKey, reserveTable } from './rope-table.js';

const MROPE_KEYS = Object.freeze(['section', 'interleaved']);

/**
 * Checks the `mrope` option of pe.rope (rotaryDim already checked): { section: [t, h, w], interleaved }.
 * Chunked sections must add up to rotaryDim / 2 (HF's torch.split needs it); interleaved ones need not
 * (Qwen3-VL reads only section[1] and section[2]), but each is at most rotaryDim / 2.
 */
export function resolveMropeOption(where, name, v, rotaryDim) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw typeError(where, `${name} must be an object such as { section: [16, 24, 24], interleaved: false }`, v);
  }
  const o = { ...v };
  checkKnownKeys(where, name, o, MROPE_KEYS);
  const half = rotaryDim / 2;
  const s = o.section;
  const bound = `${name}.section must be an array of 3 integers in [0, rotaryDim / 2 = ${half}] (pairs on t, h, w)`;
  if (s === null || typeof s !== 'object' || typeof s.length !== 'number') throw typeError(where, bound, s);
  if (s.length !== 3) throw new RangeError(`${where}: ${bound}, got length ${s.length}`);
  const section = [0, 0, 0];
  for (let i = 0; i < 3; i++) {
    const x = s[i];
    if (typeof x !== 'number') throw typeError(where, `${name}.section[${i}] must be an integer in [0, ${half}]`, x);
    if (!Number.isInteger(x) || x < 0 || x > half) throw rangeError(where, `${name}.section[${i}] must be an integer in [0, ${half}]`, x);
    section[i] = x;
  }
  const il = o.interleaved ?? false;
  if (typeof il !== 'boolean') throw typeError(where, `${name}.interleaved must be a boolean`, il);
  const sum = section[0] + section[1] + section[2];
  if (!il && sum !== half) {
    throw new RangeError(
      `${where}: ${name}.section must add up to rotaryDim / 2 = ${half} for chunked M-RoPE (interleaved: false), got [${section.join(', ')}] (sum ${sum})`,
    );
  }
  return Object.freeze({ section: Object.freeze(section), interleaved: il });
}

/** Writes the rope's pe_mrope_config (in its own block, st.mropePtr). */
export function writeMropeConfig(st) {
  const { heap, ropeLayout } = st.ctx;
  const o = ropeLayout.mrope.offsets;
  const i32 = heap.i32;
  const p = st.mropePtr >>> 2;
  for (let i = 0; i < 3; i++) i32[p + (o.section >>> 2) + i] = st.mrope.section[i];
  i32[p + (o.interleaved >>> 2)] = st.mrope.interleaved ? 1 : 0;
}

/** The axis (0 t, 1 h, 2 w) of each of the rope's nFreq pairs, as the C core assigns them. */
export function mropePairAxis(st, where) {
  const { heap, exports: ex } = st.ctx;
  const out = heap.scratch(SLOT.OUT, st.nFreq * 4, where, 'pairAxis');
  const status = ex.pe_mrope_pair_axis(out, st.ptr, st.mropePtr);
  if (status !== 0) throw st.ctx.statusError(where, status);
  return heap.i32.slice(out >>> 2, (out >>> 2) + st.nFreq);
}

/** The token count of a three-stream positions argument: its length / 3. */
export function mropeRows(where, name, positions) {
  const len = positionsLength(where, name, positions);
  if (len % 3 !== 0) {
    throw new RangeError(`${where}: ${name} must hold three streams [t..., h..., w...] of equal length (a length divisible by 3), got length ${len}`);
  }
  return len / 3;
}

const COSSIN_KEYS = knownKeys('seqLen');

/** rope.cosSin(positions3, seqLen | { seqLen }) for an M-RoPE rope: { cos, sin }, each (n, nFreq). */
export function mropeCosSin(st, where, positions, seqLenOrOptions) {
  const { heap, exports: ex } = st.ctx;
  let seqLen = seqLenOrOptions;
  if (seqLenOrOptions !== null && typeof seqLenOrOptions === 'object' && !ArrayBuffer.isView(seqLenOrOptions)) {
    // seqLen read once; no copy of the object per call
    checkKnownKeys(where, 'options', seqLenOrOptions, COSSIN_KEYS);
    seqLen = seqLenOrOptions.seqLen;
  }
  const sl = seqLenArg(where, seqLen, st.seqLenFromPositions);
  const n = mropeRows(where, 'positions', positions);
  const count = n * st.nFreq;
  if (count > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: (positions.length / 3) * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
  }
  const posPtr = stageInt32s(heap, SLOT.POS, where, 'positions', positions, 3 * n, 0, INT32_MAX, POSITIONS_BOUND);
  const cosPtr = heap.scratch(SLOT.COS, count * 4, where, 'the cos table');
  const sinPtr = heap.scratch(SLOT.SIN, count * 4, where, 'the sin table');
  const status = ex.pe_mrope_cos_sin(cosPtr, sinPtr, st.ptr, st.mropePtr, posPtr, n, sl, 1.0);
  if (status !== 0) throw positionError(st, where, 'positions', posPtr, 3 * n, status);
  const f32 = heap.f32;
  return { cos: f32.slice(cosPtr >>> 2, (cosPtr >>> 2) + count), sin: f32.slice(sinPtr >>> 2, (sinPtr >>> 2) + count) };
}

/**
 * Builds the rope's cached table (rope-table.js's fields) from three streams of `rows` positions each. The
 * key is the 3 * rows positions; st.tabRows holds 3 * rows so that rope-table.js's tableHit(st, positions,
 * 3 * rows, ...) compares all of them.
 */
export function buildMropeTable(st, where, name, positions, rows, seqLen, extra) {
  st.tabValid = false;
  const posPtr = stageTableKey(st, where, name, positions, 3 * rows);
  tableFromStaged(st, where, name, posPtr, rows, seqLen, extra, reserveTable(st, rows, where));
}

/** buildMropeTable's C step: the table from the staged key at posPtr into the reserved block at cosPtr. */
function tableFromStaged(st, where, name, posPtr, rows, seqLen, extra, cosPtr) {
  const keyLen = 3 * rows;
  const status = st.ctx.exports.pe_mrope_cos_sin(
    cosPtr,
    cosPtr + st.tabCap * 4,
    st.ptr,
    st.mropePtr,
    posPtr,
    rows,
    seqLen === -1 ? st.seqLenFromPositions : BigInt(seqLen),
    extra,
  );
  if (status !== 0) throw positionError(st, where, name, posPtr, keyLen, status);
  st.tabRows = keyLen;
  st.tabIota = false;
  st.tabSeqLen = seqLen;
  st.tabExtra = extra;
  st.tabValid = true;
}

const APPLY = 'rope.apply';

/**
 * rope.apply's table step for an M-RoPE rope given positions `p` (rope-strided.js applyTable's M-RoPE branch,
 * with its checks and messages): builds (or reuses) the table, returns the row count. New positions of a short
 * sequence whose three streams agree token by token (generated text: t = h = w) build nothing: every pair then
 * reads the one position, so the row is the plain rope's row bit for bit (c/src/rope.c,
 * pe__rope_cos_sin_row_pairs), and st.fusedPos points at the staged t stream for pe_rope_apply_positions
 * (rotateQK), which keeps the rows as the table. seqLen from the positions is their max either way.
 */
export function mropeApplyTable(st, p, B, S, seqLen, extra, fusedMaxSeq) {
  const rows = mropeRows(APPLY, 'options.positions', p);
  if (rows !== S && rows !== B * S) {
    throw new RangeError(`${APPLY}: options.positions must hold 3 streams of seq (${S}) or batch * seq (${B * S}) positions, length ${3 * S} or ${3 * B * S}, got ${3 * rows}`);
  }
  if (rows * st.nFreq > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${APPLY}: positions.length * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${rows * st.nFreq}`);
  }
  st.fusedPos = 0;
  const keyLen = 3 * rows;
  if (tableHit(st, p, keyLen, seqLen, extra)) return rows;
  if (S > fusedMaxSeq) {
    buildMropeTable(st, APPLY, 'options.positions', p, rows, seqLen, extra);
    return rows;
  }
  st.tabValid = false; // until a kernel succeeds
  const posPtr = stageTableKey(st, APPLY, 'options.positions', p, keyLen);
  const key = st.tabPos; // checked copies: no user code runs while they are compared
  let same = true;
  for (let i = 0; i < rows && same; i++) same = key[i] === key[rows + i] && key[i] === key[2 * rows + i];
  const cosPtr = reserveTable(st, rows, APPLY);
  if (same) st.fusedPos = posPtr;
  else tableFromStaged(st, APPLY, 'options.positions', posPtr, rows, seqLen, extra, cosPtr);
  return rows;
}

/** rope.rerotate's per-axis delta: [dt, dh, dw], integers with |d| <= INT32_MAX. */
export function mropeDeltas(where, delta) {
  if (typeof delta.length !== 'number' || delta.length !== 3) {
    throw typeError(where, 'delta must be an integer, or for an M-RoPE rope [dt, dh, dw] (one per axis)', delta);
  }
  return [0, 1, 2].map((i) => checkInt(where, `delta[${i}]`, delta[i], -INT32_MAX, INT32_MAX));
}

/** One M-RoPE table row in scratch for the three positions pos3 (>= 0), at extra scale `extra`. */
export function mropeRow(st, where, pos3, seqLen, extra) {
  const { heap, exports: ex } = st.ctx;
  const posPtr = heap.scratch(SLOT.POS, 12, where, 'delta');
  for (let i = 0; i < 3; i++) heap.i32[(posPtr >>> 2) + i] = pos3[i];
  const cosPtr = heap.scratch(SLOT.COS, st.nFreq * 4, where, 'the cos row');
  const sinPtr = heap.scratch(SLOT.SIN, st.nFreq * 4, where, 'the sin row');
  const status = ex.pe_mrope_cos_sin(cosPtr, sinPtr, st.ptr, st.mropePtr, posPtr, 1, seqLen, extra);
  if (status !== 0) throw st.ctx.statusError(where, status);
  return { cosPtr, sinPtr };
}
