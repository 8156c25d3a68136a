// rope-apply-config.js — writes a rope's own two pe_rope_apply_config blocks, q's (or x's) and k's (allocated
// after its pe_rope by createRope in rope.js). Each block remembers what it holds (st.applied / st.kApplied:
// dims, layout, rows per batch, rotation, dtype and the three strides), so a call with the same arguments as
// the last one on that block — every decode step, dense or strided — writes nothing. Dense calls
// (applyConfig) write zero strides (the C core's "dense"), strided calls (stridedConfig) the view's. Shared by
// the dense path (rope-apply.js, rope.js), the strided one (rope-strided.js) and attention-mrope.js.
//
// The int64 stride fields are written as their low words: the high words are zero from createRope's fill and
// stay zero, since every resolved stride fits its array (< 2^30 elements). The offset field stays 0 too: the
// pointer passed to the kernel is a view's first element.

/** The int32 word index of each pe_rope_apply_config field (from its byte offset): made once per rope. */
export function configIndices(offsets) {
  return Object.freeze({
    batch: offsets.batch >>> 2,
    seq: offsets.seq >>> 2,
    heads: offsets.heads >>> 2,
    layout: offsets.layout >>> 2,
    perBatch: offsets.per_batch_rows >>> 2,
    rotation: offsets.rotation >>> 2,
    dtype: offsets.dtype >>> 2,
    sb: offsets.stride_batch >>> 2, // low words (little-endian)
    ss: offsets.stride_seq >>> 2,
    sh: offsets.stride_heads >>> 2,
  });
}

/** Writes the config block at `ptr`, unless `last` says it holds these values already. Returns ptr. */
function writeConfig(st, ptr, last, B, S, H, layout, perBatch, rotation, dtype, sb, ss, sh) {
  if (
    last[0] === B &&
    last[1] === S &&
    last[2] === H &&
    last[3] === layout &&
    last[4] === perBatch &&
    last[5] === rotation &&
    last[6] === dtype &&
    last[7] === sb &&
    last[8] === ss &&
    last[9] === sh
  ) {
    return ptr;
  }
  const i32 = st.ctx.heap.i32;
  const p = ptr >>> 2;
  const f = st.cfgIdx;
  i32[p + f.batch] = last[0] = B;
  i32[p + f.seq] = last[1] = S;
  i32[p + f.heads] = last[2] = H;
  i32[p + f.layout] = last[3] = layout;
  i32[p + f.perBatch] = last[4] = perBatch;
  i32[p + f.rotation] = last[5] = rotation;
  i32[p + f.dtype] = last[6] = dtype;
  i32[p + f.sb] = last[7] = sb;
  i32[p + f.ss] = last[8] = ss;
  i32[p + f.sh] = last[9] = sh;
  return ptr;
}

/**
 * Fills the rope's own pe_rope_apply_config block (allocated with it: no scratch, no growth per call) for a
 * dense tensor. The block keeps what was written last, so a call with the same arguments writes nothing.
 */
export function applyConfig(st, B, S, H, layout, perBatch, rotation, dtype = 0) {
  return writeConfig(st, st.applyPtr, st.applied, B, S, H, layout, perBatch, rotation, dtype, 0, 0, 0);
}

/** The same for the rope's second block, k's config for pe_rope_apply_qk / pe_rope_apply_positions. */
export function kApplyConfig(st, B, S, H, layout, perBatch, rotation, dtype = 0) {
  return writeConfig(st, st.kApplyPtr, st.kApplied, B, S, H, layout, perBatch, rotation, dtype, 0, 0, 0);
}

/**
 * A config block (k's when `forK`) for a strided view v (strides resolved by rope-view.js, every one < 2^30).
 * The next dense call on the block writes the dense zeros back (its strides differ from what the block holds).
 */
export function stridedConfig(st, B, S, H, layout, perBatch, rotation, v, dtype = 0, forK = false) {
  return forK
    ? writeConfig(st, st.kApplyPtr, st.kApplied, B, S, H, layout, perBatch, rotation, dtype, v.sb, v.ss, v.sh)
    : writeConfig(st, st.applyPtr, st.applied, B, S, H, layout, perBatch, rotation, dtype, v.sb, v.ss, v.sh);
}
