/* rope_internal.h — what rope.c needs from rope_freq.c; not part of the public API. */
#ifndef PE_ROPE_INTERNAL_H
#define PE_ROPE_INTERNAL_H

#include "posenc.h"

/* The inverse frequencies in force at seq_len (>= 0): a pointer into rope's cached tables, or scratch
 * (PE_ROPE_MAX_FREQ doubles) filled when dynamic NTK must recompute them past max_position_embeddings;
 * NULL (PE_ERR_FACTOR for the caller) when a recomputed set leaves the range pe_rope_init checks. */
const double *pe__rope_inv_freq_at(const pe_rope *rope, int64_t seq_len, double *scratch);

/* 1 if every inv_freq[0..n) lies in [0, PE_ROPE_MAX_INV_FREQ] (NaN does not). */
int pe__rope_freqs_in_range(const double *inv_freq, int32_t n);

/* One cos/sin row where pair i sits at pair_pos[i] (rope.c; M-RoPE and 2D RoPE build their rows with it). */
void pe__rope_cos_sin_row_pairs(float *cos, float *sin, const double *pair_pos, const double *inv_freq, int32_t n,
                                float scale);

#endif
