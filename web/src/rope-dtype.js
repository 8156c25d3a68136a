// rope-dtype.js — 16-bit storage for rope.apply / rope.rerotate: options.dtype 'float16' | 'bfloat16'
// (pe_rope_apply_config.dtype, c/src/f16.h). Data come as a Uint16Array holding the raw 16-bit patterns, a
// Float16Array (float16) where the engine has one, or a pe.tensor of that dtype (its dtype is the default).
// Tensors and arrays viewing wasm memory are rotated where they lie; other arrays are copied into wasm memory,
// rotated there by the C core (widened exactly, float32 arithmetic, rounded to nearest even on store) and
// copied back. The dtype resolution and checks are memory-dtype.js's, shared with every family that takes 16-bit data.

import { overlaps, viewBuffer, viewByteOffset } from './memory.js';


const bytesOf = (a, n) => new Uint8Array(viewBuffer(a), viewByteOffset(a), 2 * n);

/** True when 16-bit arrays a (n elements) and b (m elements) share bytes. */
export function halfOverlap(a, n, b, m) {
  return viewBuffer(a) === viewBuffer(b) && overlaps(viewByteOffset(a), 2 * n, viewByteOffset(b), 2 * m);
}

/** Copies 16-bit array `a` (n elements) into wasm memory at ptr (the memory is not grown after this). */
export function halfIn(heap, a, ptr, n) {
  heap.u8.set(bytesOf(a, n), ptr);
}

/** Copies n 16-bit elements at ptr back into `a` and returns it. */
export function halfOut(heap, a, ptr, n) {
  bytesOf(a, n).set(heap.u8.subarray(ptr, ptr + 2 * n));
  return a;
}
