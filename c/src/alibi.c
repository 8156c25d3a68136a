/* alibi.c — ALiBi slopes and bias tensors.
 *
 * Press, Smith & Lewis 2022, "Train Short, Test Long: Attention with Linear Biases Enables Input Length
 * Extrapolation". Head h adds slope[h] * (key position - query position) to its logits instead of adding a
 * position embedding. The slope schedule and the padded-batch form follow BLOOM (Hugging Face transformers,
 * models/bloom/modeling_bloom.py::build_alibi_tensor).
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"

#include <math.h>
#include <stddef.h>

/* Slope of head h out of n (BLOOM): n0 = largest power of two <= n.
 *   h <  n0: 2^(-8 (h+1) / n0)                   (base 2^(-8/n0), powers 1..n0)
 *   h >= n0: 2^(-4 (2k+1) / n0), k = h - n0      (base 2^(-8/(2 n0)), odd powers 1, 3, 5, ...)
 * The exponent is a dyadic rational (n0 is a power of two), so it is exact in double; exp2 rounds once to
 * double and the cast once to float. */
static double pe__alibi_slope(int32_t h, int32_t n) {
    int32_t n0 = 1;
    while (n0 <= n / 2) n0 *= 2;
    if (h < n0) return exp2(-8.0 * (double)(h + 1) / (double)n0);
    return exp2(-4.0 * (double)(2 * (h - n0) + 1) / (double)n0);
}

pe_status pe_alibi_slopes(float *slopes, int32_t n_heads) {
    if (!slopes) return PE_ERR_NULL;
    if (n_heads < 1) return PE_ERR_HEADS;
    if (!pe__floats_fit3(n_heads, 1, 1)) return PE_ERR_SHAPE; /* wasm32: 2^30 floats at most */
    for (int32_t h = 0; h < n_heads; h++) slopes[h] = (float)pe__alibi_slope(h, n_heads);
    return PE_OK;
}

static pe_status pe__check_slopes(const float *slopes, int32_t n_heads) {
    if (!slopes) return PE_OK;
    for (int32_t h = 0; h < n_heads; h++)
        if (!isfinite(slopes[h])) return PE_ERR_FIELD_VALUE;
    return PE_OK;
}

/* One row of slope * (j - ip) for j in [0, n), ip the query's key position. n < 2^31 and |j - ip| < 2^31
 * (the caller checked the sizes), and the int -> float conversion is the same rounding in both paths. */
static void pe__alibi_row(float *row, float slope, int64_t ip, int32_t n) {
    int32_t j = 0;
#if PE_SIMD
    const pe_v128 vs = pe_f32x4_splat(slope);
    const pe_v128 four = pe_i32x4_splat(4);
    pe_v128 d = pe_i32x4_make((int32_t)(0 - ip), (int32_t)(1 - ip), (int32_t)(2 - ip), (int32_t)(3 - ip));
    for (; j + 4 <= n; j += 4) {
        pe_f32x4_store(row + j, pe_f32x4_mul(vs, pe_f32x4_from_i32x4(d)));
        d = pe_i32x4_add(d, four);
    }
#endif
    for (; j < n; j++) row[j] = slope * (float)(int32_t)((int64_t)j - ip);
}

pe_status pe_alibi_bias(float *bias, const float *slopes, int32_t n_heads, int32_t q_len, int32_t k_len,
                        int32_t causal) {
    // bias is (n_heads, q_len, k_len); query i at key position ip = k_len - q_len + i.
    if (n_heads < 1) return PE_ERR_HEADS;
    if (q_len < 0 || k_len < 0) return PE_ERR_SHAPE;
    /* |j - ip| <= q_len + k_len must fit int32 for the vector path's i32 lanes. */
    if ((int64_t)q_len + (int64_t)k_len > INT32_MAX) return PE_ERR_SHAPE;
    if (!pe__floats_fit3(n_heads, q_len, k_len)) return PE_ERR_SHAPE; /* three int32s can pass 2^64 */
    pe_status st = pe__check_slopes(slopes, n_heads);
    if (st != PE_OK) return st;
    if ((int64_t)q_len * k_len == 0) return PE_OK;
    if (!bias) return PE_ERR_NULL;

    for (int32_t h = 0; h < n_heads; h++) {
        const float slope = slopes ? slopes[h] : (float)pe__alibi_slope(h, n_heads);
        for (int32_t i = 0; i < q_len; i++) {
            float *row = bias + ((size_t)h * (size_t)q_len + (size_t)i) * (size_t)k_len;
            const int64_t ip = (int64_t)k_len - (int64_t)q_len + (int64_t)i;
            /* Keys j <= ip are visible; with causal the rest are -inf. No per-element branch. */
            int32_t n_vis = k_len;
            if (causal) n_vis = ip < 0 ? 0 : (ip + 1 < (int64_t)k_len ? (int32_t)(ip + 1) : k_len);
            pe__alibi_row(row, slope, ip, n_vis);
            for (int32_t j = n_vis; j < k_len; j++) row[j] = -INFINITY;
        }
    }
    return PE_OK;
}

pe_status pe_alibi_bias_from_mask(float *bias, const float *slopes, const int32_t *attention_mask, int32_t batch,
                                  int32_t n_heads, int32_t seq) {
    // attention_mask is (batch, seq) of 0/1; bias is (batch * n_heads, 1, seq).
    if (n_heads < 1) return PE_ERR_HEADS;
    if (batch < 0 || seq < 0) return PE_ERR_SHAPE;
    if (!pe__floats_fit3(batch, n_heads, seq)) return PE_ERR_SHAPE;
    pe_status st = pe__check_slopes(slopes, n_heads);
    if (st != PE_OK) return st;
    if ((int64_t)batch * seq == 0) return PE_OK;
    if (!bias || !attention_mask) return PE_ERR_NULL;
    const size_t n_mask = (size_t)batch * (size_t)seq;
    for (size_t t = 0; t < n_mask; t++)
        if (attention_mask[t] != 0 && attention_mask[t] != 1) return PE_ERR_FIELD_VALUE;

    /* The tensor is small ((B*H, 1, S), not (B*H, S, S)), so the cumsum is simply redone per head:
     * position of key j = (number of kept keys up to and including j) - 1, or 0 for a padded key. */
    for (int32_t b = 0; b < batch; b++) {
        const int32_t *m = attention_mask + (size_t)b * (size_t)seq;
        for (int32_t h = 0; h < n_heads; h++) {
            const float slope = slopes ? slopes[h] : (float)pe__alibi_slope(h, n_heads);
            float *row = bias + ((size_t)b * (size_t)n_heads + (size_t)h) * (size_t)seq;
            int32_t c = 0;
            for (int32_t j = 0; j < seq; j++) {
                c += m[j];
                row[j] = slope * (float)((c - 1) * m[j]);
            }
        }
    }
    return PE_OK;
}
