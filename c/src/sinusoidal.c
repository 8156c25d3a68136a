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
 * sin and cos are not libm calls per element: the angle is reduced in double (pe__reduce_pio2 in
 * pe_math.h, shared with rope.c: k = nearest(x·2/π), r = x − k·π/2 with π/2 in three parts, Cody & Waite
 * 1980, exact below PE_MAX_ANGLE, which the base check keeps every int32 position under) and fdlibm's __kernel_sin / __kernel_cos polynomials (Sun 1993, < 1 ulp of double on
 * |r| ≤ π/4) give sin r and cos r; the quadrant k mod 4 picks and signs them. That is within an ulp or two
 * of double of libm's sin/cos, so after the rounding to float32 it matches the float64 references (the
 * golden tests check 0 ulps), and it vectorises: f64x2 lanes run the same operations as the scalar code.
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"
#include "f16.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

typedef struct pe__sin_resolved {
    double base;
    int32_t variant;
    int32_t offset;
    int32_t use_pad;
    int32_t pad;
    int32_t dtype; /* pe_dtype of the table / x */
} pe__sin_resolved;

static int32_t pe__sin_nfreq_of(int32_t variant, int32_t d);

/* The largest frequency (radians per position step) of the table: 1 at i = 0, or the last one's. A NaN
 * (not possible from a finite base > 0, but cheap to refuse) counts as too large. */
static double pe__sin_max_frequency(const pe__sin_resolved *r, int32_t d) {
    const int32_t last = pe__sin_nfreq_of(r->variant, d) - 1;
    if (last < 1) return 1.0;
    double f;
    if (r->variant == PE_SINUSOIDAL_TENSOR2TENSOR)
        f = exp((double)last * -(log(r->base) / (double)(d / 2 - 1))); /* angle = p * f */
    else
        f = 1.0 / pow(r->base, (double)(2 * last) / (double)d); /* angle = p / base^(2i/d) */
    if (f != f) return INFINITY;
    return f > 1.0 ? f : 1.0;
}

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
    r->dtype = cfg->dtype;
    if (r->dtype < 0 || r->dtype >= PE_DTYPE_COUNT) return PE_ERR_FIELD_VALUE;
    if (d_model < 1) return PE_ERR_SHAPE;
    /* tensor2tensor divides by d/2 - 1: d_model 2 and 3 would divide by zero (torch gives NaN). */
    if (r->variant == PE_SINUSOIDAL_TENSOR2TENSOR && d_model < 4) return PE_ERR_SHAPE;
    /* Every angle of every int32 position must stay below PE_MAX_ANGLE, where the reduction is exact: each
     * frequency (radians per position) at most PE_MAX_FREQUENCY. Frequencies are monotone in i, so the
     * extremes are i = 0 (exactly 1) and the last one, computed here exactly as pe__sin_freqs_init does.
     * Only a base below 1 can fail: 1 / base^(2i/d) grows with i (e.g. base 5e-324 gives infinity). */
    if (pe__sin_max_frequency(r, d_model) > PE_MAX_FREQUENCY) return PE_ERR_BASE;
    return PE_OK;
}

/* ---- sin and cos in double without libm ------------------------------------------------------- */
/* fdlibm k_sin.c / k_cos.c */
#define PE__KS1 (-1.66666666666666324348e-01)
#define PE__KS2 8.33333333332248946124e-03
#define PE__KS3 (-1.98412698298579493134e-04)
#define PE__KS4 2.75573137070700676789e-06
#define PE__KS5 (-2.50507602534068634195e-08)
#define PE__KS6 1.58969099521155010221e-10
#define PE__KC1 4.16666666666666019037e-02
#define PE__KC2 (-1.38888888888741095749e-03)
#define PE__KC3 2.48015872894767294178e-05
#define PE__KC4 (-2.75573143513906633035e-07)
#define PE__KC5 2.08757232129817482790e-09
#define PE__KC6 (-1.13596475577881948265e-11)

/* sin and cos of x, 0 <= x < PE_MAX_ANGLE (positions are int32, every frequency <= PE_MAX_FREQUENCY). */
static inline void pe__sincos_d(double x, double *out_sin, double *out_cos) {
    double k;
    const double r = pe__reduce_pio2(x, &k);
    const double z = r * r;
    const double ps = PE__KS2 + z * (PE__KS3 + z * (PE__KS4 + z * (PE__KS5 + z * PE__KS6)));
    const double s = r + (z * r) * (PE__KS1 + z * ps);
    const double pc = z * (PE__KC1 + z * (PE__KC2 + z * (PE__KC3 + z * (PE__KC4 + z * (PE__KC5 + z * PE__KC6)))));
    const double hz = 0.5 * z, w = 1.0 - hz;
    const double c = w + (((1.0 - w) - hz) + z * pc);
    /* sin x = {s, c, -s, -c}[q], cos x = {c, -s, -c, s}[q], q = k mod 4 (k >= 0). Selects, not a switch:
     * the quadrant is data-dependent and a branch on it mispredicts half the time. */
    const int q = (int)(k - 4.0 * floor(k * 0.25));
    const double a = (q & 1) ? c : s, b = (q & 1) ? s : c;
    *out_sin = (q & 2) ? -a : a;
    *out_cos = ((q + 1) & 2) ? -b : b;
}

#if PE_SIMD

/* Two angles at once: the operations of pe__sincos_d, lane by lane. */
static inline void pe__sincos_d2(pe_v128 x, pe_v128 *out_sin, pe_v128 *out_cos) {
    pe_v128 k;
    const pe_v128 r = pe__reduce_pio2_2(x, &k);
    const pe_v128 z = pe_f64x2_mul(r, r);
#define PE__S2(c) pe_f64x2_splat(c)
    pe_v128 ps = pe_f64x2_add(PE__S2(PE__KS5), pe_f64x2_mul(z, PE__S2(PE__KS6)));
    ps = pe_f64x2_add(PE__S2(PE__KS4), pe_f64x2_mul(z, ps));
    ps = pe_f64x2_add(PE__S2(PE__KS3), pe_f64x2_mul(z, ps));
    ps = pe_f64x2_add(PE__S2(PE__KS2), pe_f64x2_mul(z, ps));
    const pe_v128 s =
        pe_f64x2_add(r, pe_f64x2_mul(pe_f64x2_mul(z, r), pe_f64x2_add(PE__S2(PE__KS1), pe_f64x2_mul(z, ps))));
    pe_v128 pc = pe_f64x2_add(PE__S2(PE__KC5), pe_f64x2_mul(z, PE__S2(PE__KC6)));
    pc = pe_f64x2_add(PE__S2(PE__KC4), pe_f64x2_mul(z, pc));
    pc = pe_f64x2_add(PE__S2(PE__KC3), pe_f64x2_mul(z, pc));
    pc = pe_f64x2_add(PE__S2(PE__KC2), pe_f64x2_mul(z, pc));
    pc = pe_f64x2_mul(z, pe_f64x2_add(PE__S2(PE__KC1), pe_f64x2_mul(z, pc)));
    const pe_v128 hz = pe_f64x2_mul(PE__S2(0.5), z), w = pe_f64x2_sub(PE__S2(1.0), hz);
    const pe_v128 c =
        pe_f64x2_add(w, pe_f64x2_add(pe_f64x2_sub(pe_f64x2_sub(PE__S2(1.0), w), hz), pe_f64x2_mul(z, pc)));
    const pe_v128 q = pe_f64x2_sub(k, pe_f64x2_mul(PE__S2(4.0), pe_f64x2_floor(pe_f64x2_mul(k, PE__S2(0.25)))));
    const pe_v128 q1 = pe_f64x2_eq(q, PE__S2(1.0)), q2 = pe_f64x2_eq(q, PE__S2(2.0)), q3 = pe_f64x2_eq(q, PE__S2(3.0));
#undef PE__S2
    const pe_v128 odd = pe_v128_or(q1, q3);
    const pe_v128 a = pe_v128_select(c, s, odd), b = pe_v128_select(s, c, odd);
    *out_sin = pe_v128_select(pe_f64x2_neg(a), a, pe_v128_or(q2, q3));
    *out_cos = pe_v128_select(pe_f64x2_neg(b), b, pe_v128_or(q1, q2));
}
#endif

/* ---- rows ---------------------------------------------------------------------------------------
 *
 * Work goes by frequency, not by column: frequency i has one angle, and its sin and cos land in two
 * columns (interleaved 2i and 2i+1; half i and ceil(d/2) + i; tensor2tensor i and d/2 + i), so each angle is
 * reduced once. Frequencies come in chunks of PE__SIN_CHUNK: per chunk the frequencies (pow/exp, double)
 * are computed once and reused for every row; sin and cos of a row's chunk go to two small stack buffers
 * and are then stored or added into place. Nothing here allocates. */
#define PE__SIN_CHUNK 128

typedef struct pe__sin_freqs {
    int32_t i0, n;  /* frequencies i0 .. i0 + n - 1 */
    int32_t divide; /* 1: angle = p / f (paper, Marian, as numpy divides); 0: angle = p * f (tensor2tensor) */
    double f[PE__SIN_CHUNK];
} pe__sin_freqs;

/* Number of frequencies: interleaved and half use ceil(d/2) (an odd d ends with one more sin than cos);
 * tensor2tensor uses floor(d/2) (and a zero column for odd d). */
static int32_t pe__sin_nfreq_of(int32_t variant, int32_t d) {
    return variant == PE_SINUSOIDAL_TENSOR2TENSOR ? d / 2 : (d + 1) / 2;
}
static int32_t pe__sin_nfreq(const pe__sin_resolved *r, int32_t d) { return pe__sin_nfreq_of(r->variant, d); }

static void pe__sin_freqs_init(pe__sin_freqs *F, const pe__sin_resolved *r, int32_t d, int32_t i0, int32_t n) {
    F->i0 = i0;
    F->n = n;
    F->divide = r->variant != PE_SINUSOIDAL_TENSOR2TENSOR;
    /* numpy: np.power(10000, 2 * (j // 2) / dim), a float64 exponent; torch (FSMT, float64):
     * exp(i * -(ln(base) / (d/2 - 1))) */
    const double step = F->divide ? 0.0 : log(r->base) / (double)(d / 2 - 1);
    for (int32_t k = 0; k < n; k++) {
        const int32_t i = i0 + k;
        F->f[k] = F->divide ? pow(r->base, (double)(2 * i) / (double)d) : exp((double)i * -step);
    }
}

/* sn[k], cs[k] = sin, cos of pos's angle at frequency i0 + k, rounded once to float. */
static void pe__sin_freqs_row(float *sn, float *cs, const pe__sin_freqs *F, int32_t pos) {
    const double p = (double)pos;
    int32_t k = 0;
#if PE_SIMD
    const pe_v128 vp = pe_f64x2_splat(p);
    for (; k + 4 <= F->n; k += 4) {
        const pe_v128 f01 = pe_f64x2_load(F->f + k), f23 = pe_f64x2_load(F->f + k + 2);
        const pe_v128 x01 = F->divide ? pe_f64x2_div(vp, f01) : pe_f64x2_mul(vp, f01);
        const pe_v128 x23 = F->divide ? pe_f64x2_div(vp, f23) : pe_f64x2_mul(vp, f23);
        pe_v128 s01, c01, s23, c23;
        pe__sincos_d2(x01, &s01, &c01);
        pe__sincos_d2(x23, &s23, &c23);
        pe_f32x4_store(sn + k, pe_f64x2_demote_pair(s01, s23));
        pe_f32x4_store(cs + k, pe_f64x2_demote_pair(c01, c23));
    }
#endif
    for (; k < F->n; k++) {
        double a = F->divide ? p / F->f[k] : p * F->f[k], s_, c_;
        pe__sincos_d(a, &s_, &c_);
        sn[k] = (float)s_;
        cs[k] = (float)c_;
    }
}

/* dst[0..n) = src (add == 0) or += src (add != 0): f32x4 body, scalar tail; the same additions either way. */
static void pe__put(float *dst, const float *src, int32_t n, int add) {
    int32_t k = 0;
    if (add) {
#if PE_SIMD
        for (; k + 4 <= n; k += 4)
            pe_f32x4_store(dst + k, pe_f32x4_add(pe_f32x4_load(dst + k), pe_f32x4_load(src + k)));
#endif
        for (; k < n; k++) dst[k] += src[k];
    } else {
        memcpy(dst, src, sizeof(float) * (size_t)(n > 0 ? n : 0));
    }
}

/* pe__put into 16-bit storage (n <= 2 PE__SIN_CHUNK): widened exactly, the float32 additions of pe__put, one
 * rounding to nearest even on store (f16.h). */
static void pe__put16(uint16_t *dst, const float *src, int32_t n, int add, int32_t dtype) {
    const int bf16 = dtype == PE_DTYPE_BFLOAT16;
    if (n <= 0) return;
    if (!add) {
        if (bf16)
            pe__store_bf16(dst, src, n);
        else
            pe__store_f16(dst, src, n);
        return;
    }
    float buf[2 * PE__SIN_CHUNK];
    if (bf16)
        pe__load_bf16(buf, dst, n);
    else
        pe__load_f16(buf, dst, n);
    pe__put(buf, src, n, 1);
    if (bf16)
        pe__store_bf16(dst, buf, n);
    else
        pe__store_f16(dst, buf, n);
}

/* Columns [col, col + n) of row x (elements of dtype) get src: stored, or added. */
static void pe__put_at(void *x, int32_t dtype, int32_t col, const float *src, int32_t n, int add) {
    if (dtype == PE_DTYPE_FLOAT32)
        pe__put((float *)x + col, src, n, add);
    else
        pe__put16((uint16_t *)x + col, src, n, add, dtype);
}

/* Element i of x (elements of dtype), as a pointer. */
static void *pe__elem(void *x, int32_t dtype, size_t i) {
    return (char *)x + i * (dtype == PE_DTYPE_FLOAT32 ? sizeof(float) : sizeof(uint16_t));
}

/* Places one row's chunk of sin/cos into the row x (d columns of dtype): store, or add. */
static void pe__sin_emit(void *x, int32_t dtype, const float *sn, const float *cs, const pe__sin_freqs *F,
                         const pe__sin_resolved *r, int32_t d, int add) {
    const int32_t i0 = F->i0, n = F->n;
    if (r->variant == PE_SINUSOIDAL_INTERLEAVED) {
        /* [sin f, cos f] pairs, zipped into a buffer, then columns 2 i0 .. (odd d: the last cos is past d) */
        float zip[2 * PE__SIN_CHUNK];
        int32_t k = 0;
#if PE_SIMD
        for (; k + 4 <= n; k += 4) {
            const pe_v128 a = pe_f32x4_load(sn + k), b = pe_f32x4_load(cs + k);
            pe_f32x4_store(zip + 2 * k, pe_f32x4_zip_lo(a, b));
            pe_f32x4_store(zip + 2 * k + 4, pe_f32x4_zip_hi(a, b));
        }
#endif
        for (; k < n; k++) {
            zip[2 * k] = sn[k];
            zip[2 * k + 1] = cs[k];
        }
        const int32_t j0 = 2 * i0, m = d - j0 < 2 * n ? d - j0 : 2 * n;
        pe__put_at(x, dtype, j0, zip, m, add);
    } else if (r->variant == PE_SINUSOIDAL_HALF) {
        /* sin in [0, h), cos in [h, d), h = ceil(d/2): d - h cos columns */
        const int32_t h = (d + 1) / 2, n_cos = d - h;
        pe__put_at(x, dtype, i0, sn, n, add);
        const int32_t m = n_cos - i0 < n ? n_cos - i0 : n;
        if (m > 0) pe__put_at(x, dtype, h + i0, cs, m, add);
    } else {
        /* tensor2tensor: sin in [0, n), cos in [n, 2n); the zero column of an odd d is left to the caller */
        const int32_t nt = d / 2;
        pe__put_at(x, dtype, i0, sn, n, add);
        pe__put_at(x, dtype, nt + i0, cs, n, add);
    }
}

pe_status pe_sinusoidal_table(void *out, int32_t seq_len, int32_t d_model, const pe_sinusoidal_config *cfg) {
    // out is (seq_len, d_model), row r at position offset + r.
    pe__sin_resolved r;
    pe_status st = pe__sin_resolve(&r, d_model, cfg);
    if (st != PE_OK) return st;
    if (seq_len < 0) return PE_ERR_SHAPE;
    if ((int64_t)r.offset + (int64_t)seq_len - 1 > INT32_MAX) return PE_ERR_SHAPE;
    if ((uint64_t)seq_len * (uint64_t)d_model > (uint64_t)(SIZE_MAX / sizeof(float))) return PE_ERR_SHAPE;
    if (seq_len == 0) return PE_OK;
    if (!out) return PE_ERR_NULL;

    const size_t D = (size_t)d_model;
    const int32_t nf = pe__sin_nfreq(&r, d_model);
    pe__sin_freqs F;
    float sn[PE__SIN_CHUNK], cs[PE__SIN_CHUNK];
    for (int32_t i0 = 0; i0 < nf; i0 += PE__SIN_CHUNK) {
        pe__sin_freqs_init(&F, &r, d_model, i0, nf - i0 < PE__SIN_CHUNK ? nf - i0 : PE__SIN_CHUNK);
        for (int32_t s = 0; s < seq_len; s++) {
            pe__sin_freqs_row(sn, cs, &F, r.offset + s);
            pe__sin_emit(pe__elem(out, r.dtype, (size_t)s * D), r.dtype, sn, cs, &F, &r, d_model, 0);
        }
    }
    /* zeros are zero bits in every dtype */
    const size_t esz = r.dtype == PE_DTYPE_FLOAT32 ? sizeof(float) : sizeof(uint16_t);
    if (r.variant == PE_SINUSOIDAL_TENSOR2TENSOR && d_model % 2)
        for (int32_t s = 0; s < seq_len; s++) /* FSMT's zero pad column */
            memset(pe__elem(out, r.dtype, (size_t)s * D + D - 1), 0, esz);
    if (r.use_pad && (int64_t)r.pad >= (int64_t)r.offset && (int64_t)r.pad < (int64_t)r.offset + seq_len)
        memset(pe__elem(out, r.dtype, (size_t)(r.pad - r.offset) * D), 0, esz * D); /* FSMT: the padding row is 0 */
    return PE_OK;
}

pe_status pe_sinusoidal_add(void *x, const int32_t *positions, int32_t batch, int32_t seq, int32_t d_model,
                            int32_t per_batch_positions, const pe_sinusoidal_config *cfg) {
    // x is (batch, seq, d_model); positions NULL, (seq,) or (batch, seq).
    pe__sin_resolved r;
    pe_status st = pe__sin_resolve(&r, d_model, cfg);
    if (st != PE_OK) return st;
    if (batch < 0 || seq < 0) return PE_ERR_SHAPE;
    if (!pe__floats_fit3(batch, seq, d_model)) return PE_ERR_SHAPE; /* three int32s can pass 2^64 */
    if ((int64_t)batch * seq == 0) return PE_OK;
    if (!x) return PE_ERR_NULL;
    const int per_batch = positions && per_batch_positions;
    if (positions) {
        const size_t n_pos = per_batch ? (size_t)batch * (size_t)seq : (size_t)seq;
        for (size_t t = 0; t < n_pos; t++)
            if (positions[t] < 0) return PE_ERR_POSITION;
    } else if ((int64_t)r.offset + (int64_t)seq - 1 > INT32_MAX) {
        return PE_ERR_SHAPE;
    }

    const size_t D = (size_t)d_model;
    const int32_t nf = pe__sin_nfreq(&r, d_model);
    pe__sin_freqs F;
    float sn[PE__SIN_CHUNK], cs[PE__SIN_CHUNK];
    /* (the zero column of tensor2tensor adds nothing, and neither does the padding position) */
    for (int32_t i0 = 0; i0 < nf; i0 += PE__SIN_CHUNK) {
        pe__sin_freqs_init(&F, &r, d_model, i0, nf - i0 < PE__SIN_CHUNK ? nf - i0 : PE__SIN_CHUNK);
        if (per_batch) {
            for (size_t t = 0; t < (size_t)batch * (size_t)seq; t++) {
                if (r.use_pad && positions[t] == r.pad) continue;
                pe__sin_freqs_row(sn, cs, &F, positions[t]);
                pe__sin_emit(pe__elem(x, r.dtype, t * D), r.dtype, sn, cs, &F, &r, d_model, 1);
            }
        } else {
            /* one row of values per sequence index, computed once and added to every batch row */
            for (int32_t s = 0; s < seq; s++) {
                const int32_t pos = positions ? positions[s] : r.offset + s;
                if (r.use_pad && pos == r.pad) continue;
                pe__sin_freqs_row(sn, cs, &F, pos);
                for (int32_t b = 0; b < batch; b++)
                    pe__sin_emit(pe__elem(x, r.dtype, ((size_t)b * (size_t)seq + (size_t)s) * D), r.dtype, sn, cs, &F,
                                 &r, d_model, 1);
            }
        }
    }
    return PE_OK;
}
