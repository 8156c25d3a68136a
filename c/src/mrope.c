/* mrope.c — M-RoPE cos/sin tables (Qwen2-VL, Wang et al. 2024, "Qwen2-VL: Enhancing Vision-Language Model's
 * Perception of the World at Any Resolution", section 2.1; Qwen3-VL's interleaved variant).
 *
 * Each token has three positions (temporal, height, width). The inverse frequencies are the rope's own, over
 * the whole rotary dimension; a section only decides which of the three positions pair i reads. The rows are
 * ordinary pe_rope tables, so pe_rope_apply rotates with them unchanged.
 */
#include "posenc.h"
#include "pe_math.h"
#include "rope_internal.h"

#include <math.h>

pe_status pe_mrope_pair_axis(int32_t *pair_axis, const pe_rope *rope, const pe_mrope_config *mrope) {
    if (!pair_axis || !rope || !mrope) return PE_ERR_NULL;
    const int32_t n = rope->n_freq;
    const int32_t s0 = mrope->section[0], s1 = mrope->section[1], s2 = mrope->section[2];
    if (mrope->interleaved != 0 && mrope->interleaved != 1) return PE_ERR_FIELD_VALUE;
    if (s0 < 0 || s1 < 0 || s2 < 0 || s0 > n || s1 > n || s2 > n) return PE_ERR_FIELD_VALUE;
    if (!mrope->interleaved) {
        /* HF splits cos into chunks of the section sizes (twice, one per half): they must tile the pairs */
        if ((int64_t)s0 + s1 + s2 != n) return PE_ERR_FIELD_VALUE;
        for (int32_t i = 0; i < n; i++) pair_axis[i] = i < s0 ? 0 : i < s0 + s1 ? 1 : 2;
    } else {
        /* Qwen3-VL assigns by stride-3 slices [1 : 3*s1 : 3] -> H and [2 : 3*s2 : 3] -> W over the T rows; every
         * pair neither slice reaches stays T, and section[0] is never read (HF checks no sum either) */
        for (int32_t i = 0; i < n; i++)
            pair_axis[i] = (i % 3 == 1 && i < 3 * (int64_t)s1) ? 1 : (i % 3 == 2 && i < 3 * (int64_t)s2) ? 2 : 0;
    }
    return PE_OK;
}

pe_status pe_mrope_cos_sin(float *cos, float *sin, const pe_rope *rope, const pe_mrope_config *mrope,
                           const int32_t *positions, int32_t n_positions, int64_t seq_len, double extra_scale) {
    if (!rope || !mrope) return PE_ERR_NULL;
    if (n_positions < 0) return PE_ERR_SHAPE;
    int32_t pair_axis[PE_ROPE_MAX_FREQ];
    pe_status st = pe_mrope_pair_axis(pair_axis, rope, mrope);
    if (st != PE_OK) return st;
    if (n_positions > 0 && (!cos || !sin || !positions)) return PE_ERR_NULL;
    /* the seq_len and scale checks come before the empty call returns, as in pe_rope_cos_sin */
    if (seq_len < PE_SEQ_LEN_FROM_POSITIONS) return PE_ERR_SEQ_LEN;
    if (!isfinite(extra_scale)) return PE_ERR_SCALE;
    if (n_positions == 0) return PE_OK;

    const int32_t n = rope->n_freq;
    /* the three streams are one array of 3 * n_positions int32s, and the tables must be addressable */
    if (!pe__floats_fit3(3, n_positions, 1) || !pe__floats_fit3(n_positions, n, 1)) return PE_ERR_SHAPE;
    double scratch[PE_ROPE_MAX_FREQ];
    pe__rope_rows rows;
    st = pe__rope_rows_begin(&rows, rope, positions, 3 * n_positions, seq_len, extra_scale, scratch);
    if (st != PE_OK) return st;

    const int32_t *stream[3] = {positions, positions + n_positions, positions + 2 * (size_t)n_positions};
    double pair_pos[PE_ROPE_MAX_FREQ];
    for (int32_t p = 0; p < n_positions; p++) {
        for (int32_t i = 0; i < n; i++) pair_pos[i] = (double)stream[pair_axis[i]][p];
        pe__rope_cos_sin_row_pairs(cos + (size_t)p * n, sin + (size_t)p * n, pair_pos, rows.inv_freq, n, rows.scale);
    }
    return PE_OK;
}
