// rope-apply-config.js — writes a rope's own two pe_rope_apply_config blocks, q's (or x's) and k's (allocated
// after its pe_rope by createRope in rope.js). Dense calls (applyConfig) remember what they wrote last, so a decode step with the
// same arguments writes nothing; strided calls (stridedConfig) fill the stride fields and clearStrides() puts
// the dense zeros back. Shared by the dense path (rope-apply.js, rope.js) and the strided one (rope-strided.js).

/** Writes the dense fields of the config block at `ptr`, unless `last` says it holds them already. */
function writeConfig(st, ptr, last, B, S, H, layout, perBatch, rotation, dtype) {
  if (last[0] === B && last[1] === S && last[2] === H && last[3] === layout && last[4] === perBatch && last[5] === rotation && last[6] === dtype) {
    return ptr;
  }
  last[0] = B;
  last[1] = S;
  last[2] = H;
  last[3] = layout;
  last[4] = perBatch;
  last[5] = rotation;
  last[6] = dtype;
  const i32 = st.ctx.heap.i32;
  const p = ptr >>> 2;
  const o = st.ctx.ropeLayout.apply.offsets;
  i32[p + (o.batch >>> 2)] = B;
  i32[p + (o.seq >>> 2)] = S;
  i32[p + (o.heads >>> 2)] = H;
  i32[p + (o.layout >>> 2)] = layout;
  i32[p + (o.per_batch_rows >>> 2)] = perBatch;
  i32[p + (o.rotation >>> 2)] = rotation;
  i32[p + (o.dtype >>> 2)] = dtype;
  return ptr;
}

/**
 * Fills the rope's own pe_rope_apply_config block (allocated with it: no scratch, no growth per call). The
 * block keeps what was written last, so a call with the same arguments (every decode step) writes nothing.
 */
export function applyConfig(st, B, S, H, layout, perBatch, rotation, dtype = 0) {
  return writeConfig(st, st.applyPtr, st.applied, B, S, H, layout, perBatch, rotation, dtype);
}

/** The same for the rope's second block, k's config for pe_rope_apply_qk / pe_rope_apply_positions. */
export function kApplyConfig(st, B, S, H, layout, perBatch, rotation, dtype = 0) {
  return writeConfig(st, st.kApplyPtr, st.kApplied, B, S, H, layout, perBatch, rotation, dtype);
}

/**
 * Writes a config block (k's when `forK`) for a strided view (strides resolved by rope-view.js; the pointer
 * passed to the kernel is the view's first element, so the C offset stays 0) and marks the block as not what
 * applyConfig() / kApplyConfig() last wrote. clearStrides() puts the dense zeros back.
 */
export function stridedConfig(st, B, S, H, layout, perBatch, rotation, v, dtype = 0, forK = false) {
  const ptr = forK ? st.kApplyPtr : st.applyPtr;
  const last = forK ? st.kApplied : st.applied;
  writeConfig(st, ptr, last, B, S, H, layout, perBatch, rotation, dtype);
  last[0] = -1;
  const i32 = st.ctx.heap.i32;
  const p = ptr >>> 2;
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
  return ptr;
}

/** Puts the dense zeros back in both blocks' stride fields. */
export function clearStrides(st) {
  const i32 = st.ctx.heap.i32;
  const o = st.ctx.ropeLayout.apply.offsets;
  zeroStrides(i32, st.applyPtr >>> 2, o);
  zeroStrides(i32, st.kApplyPtr >>> 2, o);
  st.applied[0] = -1;
  st.kApplied[0] = -1;
}

function zeroStrides(i32, p, o) {
  i32[p + (o.stride_batch >>> 2)] = 0;
  i32[p + (o.stride_batch >>> 2) + 1] = 0;
  i32[p + (o.stride_seq >>> 2)] = 0;
  i32[p + (o.stride_seq >>> 2) + 1] = 0;
  i32[p + (o.stride_heads >>> 2)] = 0;
  i32[p + (o.stride_heads >>> 2) + 1] = 0;
}
