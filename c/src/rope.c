/* rope.c — RoPE cos/sin tables (Su et al. 2021, "RoFormer"); the rotation itself is in rope_apply.c.
 *
 * Pair i of a head turns by angle pos * theta_i:   x'_a = x_a cos - x_b sin,   x'_b = x_b cos + x_a sin
 *
 *   half-split   [x0 .. x(n-1) | xn .. x(2n-1) | pass-through]    a = i,  b = i + n      (n = rot_dim / 2)
 *   interleaved  [(x0,x1) (x2,x3) ... (x(2n-2),x(2n-1)) | pass]   a = 2i, b = 2i + 1
 *
 * The SIMD and scalar builds of a table row agree bit for bit (pe__sincos4 runs pe__sincos_scalar lane by lane).
 */
#include "posenc.h"
#include "pe_math.h"
#include "rope_internal.h"
#include "simd.h"
#include "simd_bits.h"
#include "f16.h"

#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* sin and cos of pos * theta, exact for any int32 position                                       */
/* ---------------------------------------------------------------------------------------------- */
/* Why not float32 like the reference: pos * theta in float32 is off by ~pos * theta * 2^-24, 1e-2 rad at
 * position 131071. We form the angle in double and reduce it there (pe__reduce_pio2_q, pe_math.h: exact for
 * every angle below PE_MAX_ANGLE, which pe_rope_init guarantees for every int32 position by bounding each
 * inverse frequency by PE_ROPE_MAX_INV_FREQ). Only r (|r| <= pi/4) is rounded to float32, and short
 * minimax polynomials (Cephes sinf/cosf) give sin r and cos r to ~1 ulp of float32; k mod 4 picks the
 * quadrant. No libm call per element, and it vectorises: f64x2 for the reduction, f32x4 after. */
#define PE__S1 (-1.6666654611e-1f)
#define PE__S2 (8.3321608736e-3f)
#define PE__S3 (-1.9515295891e-4f)
#define PE__C1 (4.166664568298827e-2f)
#define PE__C2 (-1.388731625493765e-3f)
#define PE__C3 (2.443315711809948e-5f)

/* sin and cos of r, |r| <= pi/4 (slightly more at rounding boundaries, where the error stays ~1 ulp) */
static inline float pe__sin_poly(float r) {
    float z = r * r;
    return ((PE__S3 * z + PE__S2) * z + PE__S1) * z * r + r;
}
static inline float pe__cos_poly(float r) {
    float z = r * r;
    return ((PE__C3 * z + PE__C2) * z + PE__C1) * z * z - 0.5f * z + 1.0f;
}

/* Quadrant q = k mod 4 (its low two bits; pe__reduce_pio2_q):
 *   sin x = { s, c, -s, -c }[q],  cos x = { c, -s, -c, s }[q].
 * Branch-free, in the bits: odd q swaps s and c (d = (s ^ c) & swap, then s ^ d and c ^ d); bit 1 of q flips
 * the sign of sin, bit 1 of q + 1 (= bit 1 of q xor bit 0 of q) flips cos. scaled: scale is not 1 (times 1
 * changes no finite value, so skipping it leaves every bit). */
PE_INLINE void pe__sincos_scalar(float *out_sin, float *out_cos, double x, float scale, const int scaled) {
    uint32_t q;
    const double r = pe__reduce_pio2_q(x, &q);
    const float rf = (float)r;
    const float s = pe__sin_poly(rf), c = pe__cos_poly(rf);
    uint32_t su, cu;
    memcpy(&su, &s, 4);
    memcpy(&cu, &c, 4);
    const uint32_t odd = q << 31, sin_sign = (q << 30) & 0x80000000u, cos_sign = sin_sign ^ odd;
    const uint32_t d = (su ^ cu) & (0u - (odd >> 31));
    const uint32_t sin_u = su ^ d ^ sin_sign, cos_u = cu ^ d ^ cos_sign;
    float sv, cv;
    memcpy(&sv, &sin_u, 4);
    memcpy(&cv, &cos_u, 4);
    *out_sin = scaled ? sv * scale : sv;
    *out_cos = scaled ? cv * scale : cv;
}

#if PE_SIMD
/* Four angles at once, in two halves that run as two passes over a block of the row (pe__cos_sin_row): the
 * same operations as pe__sincos_scalar, lane by lane. Apart, each loop's constants fit in the 16 vector
 * registers V8 has on x64 (6 for the reduction, 10 for the polynomials and quadrants); together they spilled
 * and reloaded a dozen of them from the stack every step. */
PE_INLINE void pe__reduce4(float *out_r, int32_t *out_q, pe_v128 x01, pe_v128 x23) {
    pe_v128 t01, t23;
    const pe_v128 r01 = pe__reduce_pio2_2q(x01, &t01);
    const pe_v128 r23 = pe__reduce_pio2_2q(x23, &t23);
    pe_f32x4_store(out_r, pe_f64x2_demote_pair(r01, r23));
    pe_i32x4_store(out_q, pe_f64x2_low_words(t01, t23));
}

/* The swap mask is odd's sign spread over the lane (an arithmetic shift: as a compare, LLVM makes the AND a
 * select, 3 x64 instructions in V8 instead of 1). */
PE_INLINE void pe__sincos4(float *out_sin, float *out_cos, const float *in_r, const int32_t *in_q, pe_v128 scale,
                           const int scaled) {
    const pe_v128 r = pe_f32x4_load(in_r), q = pe_i32x4_load(in_q);
    const pe_v128 z = pe_f32x4_mul(r, r);
    const pe_v128 s = pe_f32x4_add(
        pe_f32x4_mul(pe_f32x4_mul(pe_f32x4_add(pe_f32x4_mul(pe_f32x4_add(pe_f32x4_mul(pe_f32x4_splat(PE__S3), z),
                                                                         pe_f32x4_splat(PE__S2)),
                                                            z),
                                               pe_f32x4_splat(PE__S1)),
                                  z),
                     r),
        r);
    const pe_v128 c = pe_f32x4_add(
        pe_f32x4_sub(
            pe_f32x4_mul(pe_f32x4_mul(pe_f32x4_add(pe_f32x4_mul(pe_f32x4_add(pe_f32x4_mul(pe_f32x4_splat(PE__C3), z),
                                                                             pe_f32x4_splat(PE__C2)),
                                                                z),
                                                   pe_f32x4_splat(PE__C1)),
                                      z),
                         z),
            pe_f32x4_mul(pe_f32x4_splat(0.5f), z)),
        pe_f32x4_splat(1.0f));

    const pe_v128 odd = pe_i32x4_shl(q, 31);
    const pe_v128 sin_sign = pe_v128_and(pe_i32x4_shl(q, 30), pe_i32x4_splat(INT32_MIN));
    const pe_v128 cos_sign = pe_v128_xor(sin_sign, odd);
    const pe_v128 d = pe_v128_and(pe_v128_xor(s, c), pe_i32x4_shr(odd, 31));
    const pe_v128 sin_v = pe_v128_xor(pe_v128_xor(s, d), sin_sign);
    const pe_v128 cos_v = pe_v128_xor(pe_v128_xor(c, d), cos_sign);
    pe_f32x4_store(out_sin, scaled ? pe_f32x4_mul(sin_v, scale) : sin_v);
    pe_f32x4_store(out_cos, scaled ? pe_f32x4_mul(cos_v, scale) : cos_v);
}
#define PE__ROW_BLOCK 64 /* frequencies per pair of passes: 512 bytes of r and q on the stack */
#endif

/* cos[i], sin[i] of pos[i] * inv_freq[i] (pos_step 1) or of pos[0] * inv_freq[i] (pos_step 0), times scale.
 * Exact up to position 2^31 - 1: the angle is the double product pos * inv_freq, as the float64 reference forms
 * it (a float32 angle would be up to 128 rad off there), and stays below PE_MAX_ANGLE = 2^32 since every inverse
 * frequency is at most 2; so k < 2^32 * 2/pi < 2^51, k * P1 and k * P2 are exact (21-bit constants), the magic
 * sum holds k exactly and r is right to ~1 ulp of double before its one rounding to float32 (pe_math.h).
 * test_rows in tests/c/test_simd_twins_apply.c checks INT32_MAX and random positions against libm. */
PE_INLINE void pe__cos_sin_row(float *cos, float *sin, const double *pos, int pos_step, const double *inv_freq,
                               int32_t n, float scale, const int scaled) {
    int32_t i = 0;
#if PE_SIMD
    const pe_v128 sc = pe_f32x4_splat(scale), p = pe_f64x2_splat(pos[0]);
    float rb[PE__ROW_BLOCK];
    int32_t qb[PE__ROW_BLOCK];
    const int32_t n4 = n & ~3;
    for (int32_t j0 = 0; j0 < n4; j0 += PE__ROW_BLOCK) {
        const int32_t m = n4 - j0 < PE__ROW_BLOCK ? n4 - j0 : PE__ROW_BLOCK;
        const double *f = inv_freq + j0;
        if (pos_step) {
            const double *pp = pos + j0;
            for (int32_t j = 0; j < m; j += 4)
                pe__reduce4(rb + j, qb + j, pe_f64x2_mul(pe_f64x2_load(pp + j), pe_f64x2_load(f + j)),
                            pe_f64x2_mul(pe_f64x2_load(pp + j + 2), pe_f64x2_load(f + j + 2)));
        } else {
            for (int32_t j = 0; j < m; j += 4)
                pe__reduce4(rb + j, qb + j, pe_f64x2_mul(p, pe_f64x2_load(f + j)),
                            pe_f64x2_mul(p, pe_f64x2_load(f + j + 2)));
        }
        for (int32_t j = 0; j < m; j += 4) pe__sincos4(sin + j0 + j, cos + j0 + j, rb + j, qb + j, sc, scaled);
    }
    i = n4;
#endif
    for (; i < n; i++) pe__sincos_scalar(sin + i, cos + i, pos[pos_step ? i : 0] * inv_freq[i], scale, scaled);
}

/* One table row: cos[i], sin[i] of pos * inv_freq[i], times scale. The attention factor is 1 for most
 * scalings: that row skips the multiply (the same bits). */
void pe__rope_cos_sin_row(float *cos, float *sin, double pos, const double *inv_freq, int32_t n, float scale) {
    if (scale == 1.0f)
        pe__cos_sin_row(cos, sin, &pos, 0, inv_freq, n, scale, 0);
    else
        pe__cos_sin_row(cos, sin, &pos, 0, inv_freq, n, scale, 1);
}

/* The same with a position per pair: cos[i], sin[i] of pair_pos[i] * inv_freq[i], times scale. M-RoPE and the
 * 2D vision ropes give each pair the position of its own axis; the angle is the same double product as
 * above, so with every pair_pos[i] == pos the row equals pe__rope_cos_sin_row's bit for bit (both builds). */
void pe__rope_cos_sin_row_pairs(float *cos, float *sin, const double *pair_pos, const double *inv_freq, int32_t n,
                                float scale) {
    if (scale == 1.0f)
        pe__cos_sin_row(cos, sin, pair_pos, 1, inv_freq, n, scale, 0);
    else
        pe__cos_sin_row(cos, sin, pair_pos, 1, inv_freq, n, scale, 1);
}

pe_status pe_positions_max(int32_t *max_position, const int32_t *positions, int32_t n_positions) {
    if (!max_position || (n_positions > 0 && !positions)) return PE_ERR_NULL;
    if (n_positions < 0) return PE_ERR_SHAPE;
    /* one pass, no branch per element: OR collects any sign bit, max the largest */
    int32_t any_negative = 0, max = 0;
    for (int32_t i = 0; i < n_positions; i++) {
        any_negative |= positions[i];
        max = positions[i] > max ? positions[i] : max;
    }
    if (any_negative < 0) return PE_ERR_POSITION;
    *max_position = max;
    return PE_OK;
}

pe_status pe__rope_rows_begin(pe__rope_rows *out, const pe_rope *rope, const int32_t *positions, int32_t n_positions,
                              int64_t seq_len, double extra_scale, double *scratch) {
    if (seq_len < PE_SEQ_LEN_FROM_POSITIONS) return PE_ERR_SEQ_LEN;
    if (!isfinite(extra_scale)) return PE_ERR_SCALE;
    int32_t max_position = 0;
    pe_status st = pe_positions_max(&max_position, positions, n_positions);
    if (st != PE_OK) return st;
    /* HF's dynamic update reads max(position_ids) + 1 (over all three rows for M-RoPE) */
    if (seq_len == PE_SEQ_LEN_FROM_POSITIONS) seq_len = (int64_t)max_position + 1;
    /* HF multiplies the float32 cos/sin by the attention factor; we round the product of the factors once.
     * Bounded so that scale * cos (|cos| <= 1, and a hair more from the polynomial) stays finite. */
    const double scale_d = rope->attention_scaling * extra_scale;
    if (!(fabs(scale_d) <= PE_ROPE_MAX_SCALE)) return PE_ERR_SCALE;
    out->scale = (float)scale_d;
    /* the cached frequencies are used in place: a decode step's single row costs no copy */
    out->inv_freq = pe__rope_inv_freq_at(rope, seq_len, scratch);
    return out->inv_freq ? PE_OK : PE_ERR_FACTOR;
}

pe_status pe_rope_cos_sin(float *cos, float *sin, const pe_rope *rope, const int32_t *positions, int32_t n_positions,
                          int64_t seq_len, double extra_scale) {
    if (!rope) return PE_ERR_NULL;
    if (n_positions < 0) return PE_ERR_SHAPE;
    if (n_positions > 0 && (!cos || !sin || !positions)) return PE_ERR_NULL;
    const int32_t n = rope->n_freq;
    double scratch[PE_ROPE_MAX_FREQ];
    pe__rope_rows rows;
    const pe_status st = pe__rope_rows_begin(&rows, rope, positions, n_positions, seq_len, extra_scale, scratch);
    if (st != PE_OK) return st;
    /* the table must be addressable (wasm32: size_t is 32 bits) */
    if (!pe__floats_fit3(n_positions, n, 1)) return PE_ERR_SHAPE;
    for (int32_t p = 0; p < n_positions; p++)
        pe__rope_cos_sin_row(cos + (size_t)p * n, sin + (size_t)p * n, (double)positions[p], rows.inv_freq, n,
                             rows.scale);
    return PE_OK;
}
