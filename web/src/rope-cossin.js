// rope-cossin.js — rope.cosSin(positions, { dtype: 'float16' | 'bfloat16', seqLen, out }): the (n, nFreq) cos and
// sin tables written in 16-bit storage. The table is built as the float32 one is (angles reduced in double,
// the attention factor applied), then each value rounded once to the storage type by the C core's conversion
// (pe_convert: nearest even, the kernels' own store), so a 16-bit table is the float32 table rounded.
// Plain and M-RoPE ropes alike (the float32 M-RoPE table is mrope.js's, left in the COS / SIN scratch slots).

import { SLOT, MAX_TENSOR_LENGTH, locateHalf, returnHalf, dataOverlap, stageInt32s } from './memory.js';
import { INT32_MAX } from './errors.js';
import { POSITIONS_BOUND, positionsLength, seqLenArg, positionError } from './rope-table.js';
import { mropeRows, mropeCosSin } from './mrope.js';

/**
 * The 16-bit tables for `positions` (M-RoPE: three streams [axis][n]); `seqLen` the options' value, `out` null or
 * { cos, sin } (Uint16Arrays, Float16Arrays for float16, or pe.tensors of that dtype: written in place).
 * dtype: the resolved pe_dtype (1 or 2). Returns { cos, sin }: out's, or new Uint16Arrays.
 */
export function cosSin16(st, where, positions, seqLen, out, dtype) {
  const { heap, exports: ex } = st.ctx;
  const mrope = st.mrope !== null;
  const n = mrope ? mropeRows(where, 'positions', positions) : positionsLength(where, 'positions', positions);
  const count = n * st.nFreq;
  if (count > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: ${mrope ? '(positions.length / 3)' : 'positions.length'} * nFreq must be at most ${MAX_TENSOR_LENGTH}, got ${count}`);
  }
  // outputs located before anything is allocated (an allocation may detach a view of wasm memory)
  let outCos = null;
  let outSin = null;
  let cosLoc = -1;
  let sinLoc = -1;
  if (out !== null) {
    const what = mrope ? '(positions.length / 3) * nFreq' : 'positions.length * nFreq';
    outCos = out.cos;
    outSin = out.sin;
    cosLoc = locateHalf(heap, outCos, count, dtype, where, 'options.out.cos', what);
    sinLoc = locateHalf(heap, outSin, count, dtype, where, 'options.out.sin', what);
    if (count > 0 && dataOverlap(outCos, cosLoc, count, outSin, sinLoc, count, 2)) {
      throw new RangeError(`${where}: options.out.cos and options.out.sin must not overlap`);
    }
  }
  let cosPtr;
  let sinPtr;
  if (mrope) {
    mropeCosSin(st, where, positions, { seqLen }); // the float32 table, left in the COS / SIN slots
    cosPtr = heap.scratch(SLOT.COS, count * 4, where, 'the cos table');
    sinPtr = heap.scratch(SLOT.SIN, count * 4, where, 'the sin table');
  } else {
    const sl = seqLenArg(where, seqLen, st.seqLenFromPositions);
    const posPtr = stageInt32s(heap, SLOT.POS, where, 'positions', positions, n, 0, INT32_MAX, POSITIONS_BOUND);
    cosPtr = heap.scratch(SLOT.COS, count * 4, where, 'the cos table (positions.length * nFreq floats)');
    sinPtr = heap.scratch(SLOT.SIN, count * 4, where, 'the sin table (positions.length * nFreq floats)');
    const status = ex.pe_rope_cos_sin(cosPtr, sinPtr, st.ptr, posPtr, n, sl, 1.0);
    if (status !== 0) throw positionError(st, where, 'positions', posPtr, n, status);
  }
  // where the 16-bit values go: out in wasm memory, else one scratch block (cos | sin)
  const res = cosLoc === -1 || sinLoc === -1 ? heap.scratch(SLOT.RESULT, count * 4, where, 'the 16-bit cos and sin tables') : 0;
  const dc = cosLoc !== -1 ? cosLoc : res;
  const ds = sinLoc !== -1 ? sinLoc : res + count * 2;
  const n64 = BigInt(count);
  let status = ex.pe_convert(dc, dtype, cosPtr, 0, n64);
  if (status === 0) status = ex.pe_convert(ds, dtype, sinPtr, 0, n64);
  if (status !== 0) throw st.ctx.statusError(where, status);
  if (out === null) {
    return { cos: new Uint16Array(heap.buffer, dc, count).slice(), sin: new Uint16Array(heap.buffer, ds, count).slice() };
  }
  return { cos: returnHalf(heap, outCos, cosLoc, dc, count), sin: returnHalf(heap, outSin, sinLoc, ds, count) };
}
