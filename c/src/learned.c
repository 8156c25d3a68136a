/* learned.c — learned absolute position embeddings (a trained table, one row per position).
 *
 * GPT-2 (Radford et al. 2019) and OPT (Zhang et al. 2022) add table[position] to the token embeddings. OPT's
 * OPTLearnedPositionalEmbedding keeps 2 extra rows in front (row = position + 2) and derives positions from
 * the attention mask, cumsum(mask) * mask - 1, so padded tokens get position -1 and read row 1. Here the row
 * offset is a parameter and every row index is checked against the table before anything is written.
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"
#include "f16.h"

#include <stddef.h>
#include <string.h>

/* Checks that every position maps to a row in [0, n_rows). positions NULL means 0 .. n - 1. */
static pe_status pe__learned_check(const int32_t *positions, size_t n, int32_t n_rows, int32_t row_offset) {
    if (!positions) {
        /* rows row_offset .. row_offset + n - 1 */
        if (row_offset < 0 || (int64_t)row_offset + (int64_t)n > (int64_t)n_rows) return PE_ERR_OUT_OF_RANGE;
        return PE_OK;
    }
    for (size_t t = 0; t < n; t++) {
        const int64_t row = (int64_t)positions[t] + (int64_t)row_offset;
        if (row < 0 || row >= (int64_t)n_rows) return PE_ERR_OUT_OF_RANGE;
    }
    return PE_OK;
}

static pe_status pe__learned_dims(int32_t d_model, int32_t n_rows) {
    if (d_model < 1 || n_rows < 1) return PE_ERR_SHAPE;
    if ((uint64_t)n_rows * (uint64_t)d_model > (uint64_t)(SIZE_MAX / sizeof(float))) return PE_ERR_SHAPE;
    return PE_OK;
}

pe_status pe_learned_lookup(float *out, const float *table, const int32_t *positions, int32_t n_positions,
                            int32_t d_model, int32_t n_rows, int32_t row_offset) {
    // out is (n_positions, d_model); table is (n_rows, d_model).
    pe_status st = pe__learned_dims(d_model, n_rows);
    if (st != PE_OK) return st;
    if (n_positions < 0) return PE_ERR_SHAPE;
    if (n_positions == 0) return PE_OK;
    if (!out || !table || !positions) return PE_ERR_NULL;
    if ((uint64_t)n_positions * (uint64_t)d_model > (uint64_t)(SIZE_MAX / sizeof(float))) return PE_ERR_SHAPE;
    st = pe__learned_check(positions, (size_t)n_positions, n_rows, row_offset);
    if (st != PE_OK) return st;
    const size_t D = (size_t)d_model;
    for (int32_t p = 0; p < n_positions; p++) {
        const size_t row = (size_t)((int64_t)positions[p] + (int64_t)row_offset);
        memcpy(out + (size_t)p * D, table + row * D, D * sizeof(float));
    }
    return PE_OK;
}

/* x[0..n) += row[0..n): f32x4 body, scalar tail; the same additions in either build. */
static void pe__add_row(float *x, const float *row, int32_t n) {
    int32_t k = 0;
#if PE_SIMD
    for (; k + 4 <= n; k += 4) pe_f32x4_store(x + k, pe_f32x4_add(pe_f32x4_load(x + k), pe_f32x4_load(row + k)));
#endif
    for (; k < n; k++) x[k] += row[k];
}

/* f16.h's array helpers take an int32 count: 16-bit rows go through float32 blocks of this many elements. */
#define PE__LEARNED_CHUNK 256

static void pe__widen(float *dst, const uint16_t *src, int32_t n, int32_t dtype) {
    if (dtype == PE_DTYPE_FLOAT16)
        pe__load_f16(dst, src, n);
    else
        pe__load_bf16(dst, src, n);
}

/* x[0..n) += row[0..n) for any pe_dtype of each: widened exactly, pe__add_row's float32 additions, x rounded
 * to nearest even on store. The blocks are the same in both builds, so the builds agree bit for bit. */
static void pe__add_row_dt(void *x, int32_t x_dtype, const void *row, int32_t row_dtype, int32_t n) {
    if (x_dtype == PE_DTYPE_FLOAT32 && row_dtype == PE_DTYPE_FLOAT32) {
        pe__add_row((float *)x, (const float *)row, n);
        return;
    }
    float xb[PE__LEARNED_CHUNK], rb[PE__LEARNED_CHUNK];
    for (int32_t k = 0; k < n; k += PE__LEARNED_CHUNK) {
        const int32_t m = n - k < PE__LEARNED_CHUNK ? n - k : PE__LEARNED_CHUNK;
        float *xp = xb;
        const float *rp = rb;
        if (x_dtype == PE_DTYPE_FLOAT32)
            xp = (float *)x + k;
        else
            pe__widen(xb, (const uint16_t *)x + k, m, x_dtype);
        if (row_dtype == PE_DTYPE_FLOAT32)
            rp = (const float *)row + k;
        else
            pe__widen(rb, (const uint16_t *)row + k, m, row_dtype);
        pe__add_row(xp, rp, m);
        if (x_dtype == PE_DTYPE_FLOAT16)
            pe__store_f16((uint16_t *)x + k, xb, m);
        else if (x_dtype == PE_DTYPE_BFLOAT16)
            pe__store_bf16((uint16_t *)x + k, xb, m);
    }
}

pe_status pe_learned_add(void *x, const void *table, const int32_t *positions, const pe_learned_add_config *cfg) {
    // x is (batch, seq, d_model); table is (n_rows, d_model); positions NULL, (seq,) or (batch, seq).
    if (!cfg) return PE_ERR_NULL;
    const int32_t batch = cfg->batch, seq = cfg->seq, d_model = cfg->d_model, row_offset = cfg->row_offset;
    const int32_t x_dtype = cfg->dtype, t_dtype = cfg->table_dtype;
    if (x_dtype < 0 || x_dtype >= PE_DTYPE_COUNT || t_dtype < 0 || t_dtype >= PE_DTYPE_COUNT) return PE_ERR_FIELD_VALUE;
    pe_status st = pe__learned_dims(d_model, cfg->n_rows);
    if (st != PE_OK) return st;
    if (batch < 0 || seq < 0) return PE_ERR_SHAPE;
    if ((int64_t)batch * seq == 0) return PE_OK;
    if (!x || !table) return PE_ERR_NULL;
    if (!pe__floats_fit3(batch, seq, d_model)) return PE_ERR_SHAPE; /* three int32s can pass 2^64 */
    const int per_batch = positions && cfg->per_batch_positions;
    const size_t n_pos = per_batch ? (size_t)batch * (size_t)seq : (size_t)seq;
    st = pe__learned_check(positions, n_pos, cfg->n_rows, row_offset);
    if (st != PE_OK) return st;

    const size_t D = (size_t)d_model;
    const size_t xsz = x_dtype == PE_DTYPE_FLOAT32 ? sizeof(float) : sizeof(uint16_t);
    const size_t tsz = t_dtype == PE_DTYPE_FLOAT32 ? sizeof(float) : sizeof(uint16_t);
    for (int32_t b = 0; b < batch; b++)
        for (int32_t s = 0; s < seq; s++) {
            const size_t t = (size_t)b * (size_t)seq + (size_t)s;
            const int64_t p = positions ? positions[per_batch ? t : (size_t)s] : (int64_t)s;
            pe__add_row_dt((char *)x + t * D * xsz, x_dtype, (const char *)table + (size_t)(p + row_offset) * D * tsz,
                           t_dtype, d_model);
        }
    return PE_OK;
}
