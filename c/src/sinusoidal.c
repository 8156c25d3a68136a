/* sinusoidal.c — fixed sinusoidal position encodings.
 *
 * Vaswani et al. 2017, "Attention Is All You Need", section 3.5:
 *     PE(p, 2i) = sin(p / base^(2i/d)),  PE(p, 2i+1) = cos(p / base^(2i/d)),  base = 10000.
 * Each row is a point on d/2 circles of geometric wavelengths 2π .. 2π·base, so PE(p + k) is a fixed linear
 * function (a rotation per pair) of PE(p). The column placement follows the Hugging Face references exactly,
 * odd d_model included (see posenc.h): XLM/DistilBERT create_sinusoidal_embeddings (interleaved), Marian
 * create_weight (half) and FSMT get_embedding (tensor2tensor/fairseq, frequencies exp(-i ln(base)/(d/2-1))).
 *
 * Numerics: the frequency and the angle are formed in double exactly as the references' float64 numpy/torch
 * code does (p / base^(2i/d), division included), sin and cos in double, then one rounding to float32. So
 * a large position (1e6) is as exact as a small one; a float32 angle would be off by ~p·2^-24 rad.
 */
#include "posenc.h"
#include "simd.h"

#include <math.h>
#include <stddef.h>

/* Columns are produced in chunks: per chunk the per-column frequency (a double) and kind are computed once,
 * then reused for every row, so pow/exp are not evaluated per element. The chunk lives on the stack. */
#define PE__SIN_CHUNK 256

enum { PE__COL_SIN = 0, PE__COL_COS = 1, PE__COL_ZERO = 2 };

typedef struct pe__sin_cols {
    int32_t n;                    /* columns in this chunk */
    int32_t divide;               /* 1: angle = p / f[c] (paper, Marian); 0: angle = p * f[c] (tensor2tensor) */
    double f[PE__SIN_CHUNK];      /* base^(2i/d) (divide) or exp(-i ln(base)/(n-1)) */
    unsigned char kind[PE__SIN_CHUNK];
} pe__sin_cols;

typedef struct pe__sin_resolved {
    double base;
    int32_t variant;
    int32_t offset;
    int32_t use_pad;
    int32_t pad;
} pe__sin_resolved;

static pe_status pe__sin_resolve(pe__sin_resolved *r, int32_t d_model, const pe_sinusoidal_config *cfg) {
    static const pe_sinusoidal_config defaults = {0};
    if (!cfg) cfg = &defaults;
    r->base = cfg->base == 0.0 ? 10000.0 : cfg->base;
    if (!isfinite(r->base) || r->base <= 0.0) return PE_ERR_BASE;
    r->variant = cfg->variant;
    if (r->variant < 0 || r->variant >= PE_SINUSOIDAL_VARIANT_COUNT) return PE_ERR_PAIRING;
    r->offset = cfg->offset;
    if (r->offset < 0) return PE_ERR_POSITION;
    r->use_pad = cfg->use_padding_idx != 0;
    r->pad = cfg->padding_idx;
    if (d_model < 1) return PE_ERR_SHAPE;
    /* tensor2tensor divides by d/2 - 1: d_model 2 and 3 would divide by zero (torch gives NaN). */
    if (r->variant == PE_SINUSOIDAL_TENSOR2TENSOR && d_model < 4) return PE_ERR_SHAPE;
    return PE_OK;
}

/* Frequencies and kinds of columns [j0, j0 + n). */
static void pe__sin_cols_init(pe__sin_cols *c, const pe__sin_resolved *r, int32_t d, int32_t j0, int32_t n) {
    c->n = n;
    c->divide = r->variant != PE_SINUSOIDAL_TENSOR2TENSOR;
    const int32_t h_half = (d + 1) / 2;  /* Marian: sin columns [0, ceil(d/2)) */
    const int32_t n_t2t = d / 2;         /* tensor2tensor: sin [0, n), cos [n, 2n), zero column if d odd */
    const double t2t_step = r->variant == PE_SINUSOIDAL_TENSOR2TENSOR ? log(r->base) / (double)(n_t2t - 1) : 0.0;
    for (int32_t c_i = 0; c_i < n; c_i++) {
        const int32_t j = j0 + c_i;
        int32_t i, kind;
        switch (r->variant) {
        case PE_SINUSOIDAL_INTERLEAVED: i = j / 2; kind = (j & 1) ? PE__COL_COS : PE__COL_SIN; break;
        case PE_SINUSOIDAL_HALF:
            if (j < h_half) { i = j; kind = PE__COL_SIN; } else { i = j - h_half; kind = PE__COL_COS; }
            break;
        default: /* tensor2tensor */
            if (j < n_t2t) { i = j; kind = PE__COL_SIN; }
            else if (j < 2 * n_t2t) { i = j - n_t2t; kind = PE__COL_COS; }
            else { i = 0; kind = PE__COL_ZERO; }
            break;
        }
        c->kind[c_i] = (unsigned char)kind;
        /* numpy: np.power(10000, 2 * (j // 2) / dim) with a float64 exponent; torch (FSMT): exp(i * -step). */
        c->f[c_i] = c->divide ? pow(r->base, (double)(2 * i) / (double)d) : exp((double)i * -t2t_step);
    }
}

/* dst[c] = PE(pos, j0 + c) for the chunk's columns. */
static void pe__sin_cols_row(float *dst, const pe__sin_cols *c, const pe__sin_resolved *r, int32_t pos) {
    if (r->use_pad && pos == r->pad) {
        for (int32_t k = 0; k < c->n; k++) dst[k] = 0.0f;
        return;
    }
    const double p = (double)pos;
    for (int32_t k = 0; k < c->n; k++) {
        const double a = c->divide ? p / c->f[k] : p * c->f[k];
        const int kind = c->kind[k];
        dst[k] = kind == PE__COL_SIN ? (float)sin(a) : kind == PE__COL_COS ? (float)cos(a) : 0.0f;
    }
}

pe_status pe_sinusoidal_table(float *out, int32_t seq_len, int32_t d_model, const pe_sinusoidal_config *cfg) {
    // out is (seq_len, d_model), row r at position offset + r.
    if (!out) return PE_ERR_NULL;
    pe__sin_resolved r;
    pe_status st = pe__sin_resolve(&r, d_model, cfg);
    if (st != PE_OK) return st;
    if (seq_len < 1) return PE_ERR_SHAPE;
    if ((int64_t)r.offset + (int64_t)seq_len - 1 > INT32_MAX) return PE_ERR_SHAPE;
    if ((uint64_t)seq_len * (uint64_t)d_model > (uint64_t)(SIZE_MAX / sizeof(float))) return PE_ERR_SHAPE;

    pe__sin_cols cols;
    for (int32_t j0 = 0; j0 < d_model; j0 += PE__SIN_CHUNK) {
        const int32_t n = d_model - j0 < PE__SIN_CHUNK ? d_model - j0 : PE__SIN_CHUNK;
        pe__sin_cols_init(&cols, &r, d_model, j0, n);
        for (int32_t s = 0; s < seq_len; s++)
            pe__sin_cols_row(out + (size_t)s * (size_t)d_model + (size_t)j0, &cols, &r, r.offset + s);
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

pe_status pe_sinusoidal_add(float *x, const int32_t *positions, int32_t batch, int32_t seq, int32_t d_model,
                            int32_t per_batch_positions, const pe_sinusoidal_config *cfg) {
    // x is (batch, seq, d_model); positions NULL, (seq,) or (batch, seq).
    if (!x) return PE_ERR_NULL;
    pe__sin_resolved r;
    pe_status st = pe__sin_resolve(&r, d_model, cfg);
    if (st != PE_OK) return st;
    if (batch < 1 || seq < 1) return PE_ERR_SHAPE;
    if ((uint64_t)batch * (uint64_t)seq * (uint64_t)d_model > (uint64_t)(SIZE_MAX / sizeof(float)))
        return PE_ERR_SHAPE;
    const int per_batch = positions && per_batch_positions;
    if (positions) {
        const size_t n_pos = per_batch ? (size_t)batch * (size_t)seq : (size_t)seq;
        for (size_t t = 0; t < n_pos; t++)
            if (positions[t] < 0) return PE_ERR_POSITION;
    } else if ((int64_t)r.offset + (int64_t)seq - 1 > INT32_MAX) {
        return PE_ERR_SHAPE;
    }

    pe__sin_cols cols;
    float row[PE__SIN_CHUNK];
    const size_t D = (size_t)d_model;
    for (int32_t j0 = 0; j0 < d_model; j0 += PE__SIN_CHUNK) {
        const int32_t n = d_model - j0 < PE__SIN_CHUNK ? d_model - j0 : PE__SIN_CHUNK;
        pe__sin_cols_init(&cols, &r, d_model, j0, n);
        if (per_batch) {
            for (int32_t b = 0; b < batch; b++)
                for (int32_t s = 0; s < seq; s++) {
                    const size_t t = (size_t)b * (size_t)seq + (size_t)s;
                    pe__sin_cols_row(row, &cols, &r, positions[t]);
                    pe__add_row(x + t * D + (size_t)j0, row, n);
                }
        } else {
            /* One row per sequence index, computed once and added to every batch row. */
            for (int32_t s = 0; s < seq; s++) {
                pe__sin_cols_row(row, &cols, &r, positions ? positions[s] : r.offset + s);
                for (int32_t b = 0; b < batch; b++)
                    pe__add_row(x + ((size_t)b * (size_t)seq + (size_t)s) * D + (size_t)j0, row, n);
            }
        }
    }
    return PE_OK;
}
