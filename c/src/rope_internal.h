/* rope_internal.h — what the rope files share (rope_freq.c's frequencies, rope.c's rows and the prologue of
 * every function that turns positions into rows, the apply kernels' geometry and arithmetic); not part of the
 * public API. */
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

/* ---- the apply kernels: rope_apply.c (checks, views, float32; its row loops: rope_rows.h) and rope_apply16.c ---- */

/* Where a tensor's head vectors are: head (b, s, h) starts at x + b*sb + s*ss + h*sh (elements), head_dim
 * contiguous. heads 0: no such tensor (k absent). */
typedef struct pe__apply_geom {
    size_t sb, ss, sh;
} pe__apply_geom;

/* Pair lanes (va, vb) turned by (c, s), x'_a = x_a c - x_b s and x'_b = x_b c + x_a s (inverse, a constant in
 * the caller's scope: the s terms' signs flipped). One definition for both files: the 16-bit path's products
 * and sum are the float32 path's, so its result is exactly the float32 apply of the widened inputs. */
#define PE__ROT_A(va, vb, c, s)                                       \
    (inverse ? pe_f32x4_add(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s)) \
             : pe_f32x4_sub(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s)))
#define PE__ROT_B(va, vb, c, s)                                       \
    (inverse ? pe_f32x4_sub(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s)) \
             : pe_f32x4_add(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s)))

/* 16-bit storage (rope_apply16.c): heads head vectors per (b, s) of x (float16 bits, or bfloat16 when bf16) at
 * g, rotated in place by cos/sin rows of n pairs: row (b, s) at (per_batch_rows ? b * seq + s : s) * n. The
 * caller has checked the view; bf16, interleaved and inverse pick one of eight out-of-line instantiations. */
void pe__rope_apply16(uint16_t *x, const float *cos, const float *sin, int32_t batch, int32_t seq, int32_t heads,
                      pe__apply_geom g, int32_t n, int bhsd, int per_batch_rows, int bf16, int interleaved,
                      int inverse);

#endif
