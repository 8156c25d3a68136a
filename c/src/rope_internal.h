/* rope_internal.h — what the rope files share (rope_freq.c's frequencies, rope.c's rows and the prologue of
 * every function that turns positions into rows); not part of the public API. */
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

/* One cos/sin row at position pos (rope.c): the row pe_rope_cos_sin writes, so a caller that builds its rows
 * with it (the fused apply) matches the table bit for bit. */
void pe__rope_cos_sin_row(float *cos, float *sin, double pos, const double *inv_freq, int32_t n, float scale);

/* What a function that turns positions into cos/sin rows needs, resolved once. */
typedef struct pe__rope_rows {
    const double *inv_freq; /* the frequencies in force: rope's cache or the caller's scratch */
    float scale;            /* attention factor times extra_scale, rounded once */
} pe__rope_rows;

/* The shared prologue of pe_rope_cos_sin, pe_mrope_cos_sin and pe_rope_apply_positions (rope.c), in this order:
 * seq_len (>= PE_SEQ_LEN_FROM_POSITIONS, else PE_ERR_SEQ_LEN), extra_scale finite (PE_ERR_SCALE), every position
 * >= 0 (PE_ERR_POSITION; seq_len from the largest when PE_SEQ_LEN_FROM_POSITIONS), |attention_scaling *
 * extra_scale| <= PE_ROPE_MAX_SCALE (PE_ERR_SCALE), the frequency set at seq_len (PE_ERR_FACTOR). scratch:
 * PE_ROPE_MAX_FREQ doubles that out->inv_freq may point into, so it must live as long as out is used. */
pe_status pe__rope_rows_begin(pe__rope_rows *out, const pe_rope *rope, const int32_t *positions, int32_t n_positions,
                              int64_t seq_len, double extra_scale, double *scratch);

#endif
