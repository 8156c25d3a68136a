/* pe_math.h — the numerics the kernels share, defined once: angle reduction, e^x and the dot product.
 * Private to posenc (static inline, pe__ prefix); included by rope.c, sinusoidal.c, attention*.c and
 * c/model/model.c. Each has a scalar form and, where a kernel vectorises it, an f32x4 / f64x2 twin that runs
 * the same IEEE operations in the same order, so the SIMD128 and scalar builds agree bit for bit. Every file
 * that includes this is compiled with -ffp-contract=off (no fused multiply-add in one build only).
 */
#ifndef PE_MATH_H
#define PE_MATH_H

#include "posenc.h"
#include "simd.h"

#include <stdint.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* Angle reduction: x = k * pi/2 + r, |r| <= pi/4                                                  */
/* ---------------------------------------------------------------------------------------------- */
/* Cody & Waite (1980): k = nearest(x * 2/pi), r = ((x - k*P1) - k*P2) - k*P3 with pi/2 = P1 + P2 + P3.
 * P1 and P2 carry 21 significant bits each, so k*P1 and k*P2 are exact for |k| < 2^32, and x - k*P1 is
 * exact (Sterbenz: the two are within a factor 2 of each other); P3 holds the next 53 bits, so the only
 * error left is the rounding of k*P3 and of the last subtractions: r is right to ~1 ulp of double.
 * The reduction is therefore exact for |x| < PE_MAX_ANGLE = 2^32 (then |k| < 2^32 * 2/pi + 1/2 < 2^32),
 * which is what the kernels' configuration checks guarantee: every angle is position * frequency with an
 * int32 position and a frequency <= PE_MAX_FREQUENCY = 2. Past 2^51 the rounding trick below would stop
 * producing an integer at all (the failure that gave cos ~ 4.8e18 at 2^64 rad). */
#define PE__TWO_OVER_PI 0x1.45f306dc9c883p-1
#define PE__PIO2_1 0x1.921fb00000000p+0  /* 21 bits */
#define PE__PIO2_2 0x1.5110b00000000p-22 /* the next 21 bits */
#define PE__PIO2_3 0x1.18469898cc517p-44 /* the rest, rounded to double */
#define PE__ROUND_MAGIC 0x1.8p52         /* (y + M) - M rounds y to the nearest even integer for |y| < 2^51 */

/* (integer constant expressions admit floating constants only as operands of casts) */
_Static_assert((unsigned long long)PE_MAX_ANGLE <= (1ull << 32), "k * PIO2_1 must stay exact: |k| < 2^32");
_Static_assert((unsigned long long)PE_MAX_FREQUENCY * 2147483647ull < (unsigned long long)PE_MAX_ANGLE, /* 2.0 */
               "every int32 position stays below PE_MAX_ANGLE");

/* r of x, and *k = nearest(x * 2/pi) as a double holding an integer. */
static inline double pe__reduce_pio2(double x, double *k) {
    const double kk = (x * PE__TWO_OVER_PI + PE__ROUND_MAGIC) - PE__ROUND_MAGIC;
    *k = kk;
    return ((x - kk * PE__PIO2_1) - kk * PE__PIO2_2) - kk * PE__PIO2_3;
}

#if PE_SIMD
/* The same on two lanes. f64x2.nearest rounds half to even like the magic-number sum does, so each lane
 * equals pe__reduce_pio2 exactly. */
PE_INLINE pe_v128 pe__reduce_pio2_2(pe_v128 x, pe_v128 *k) {
    const pe_v128 kk = pe_f64x2_nearest(pe_f64x2_mul(x, pe_f64x2_splat(PE__TWO_OVER_PI)));
    *k = kk;
    return pe_f64x2_sub(pe_f64x2_sub(pe_f64x2_sub(x, pe_f64x2_mul(kk, pe_f64x2_splat(PE__PIO2_1))),
                                     pe_f64x2_mul(kk, pe_f64x2_splat(PE__PIO2_2))),
                        pe_f64x2_mul(kk, pe_f64x2_splat(PE__PIO2_3)));
}
#endif

/* The same r, and the quadrant q = k mod 4 (in q's low two bits) without a second rounding or a float -> int
 * conversion: t = y + M (y = x * 2/pi) lies in [2^52, 2^53) where the ulp is 1, so t is 2^52 + 2^51 + k
 * exactly and its low 32 bits are k mod 2^32 (2^51 is 0 mod 2^32; negative k wraps the same way). k = t - M
 * is the double pe__reduce_pio2 computes (the same two roundings), so r is its r bit for bit. */
static inline double pe__reduce_pio2_q(double x, uint32_t *q) {
    const double t = x * PE__TWO_OVER_PI + PE__ROUND_MAGIC;
    const double kk = t - PE__ROUND_MAGIC;
    uint64_t bits;
    memcpy(&bits, &t, 8);
    *q = (uint32_t)bits;
    return ((x - kk * PE__PIO2_1) - kk * PE__PIO2_2) - kk * PE__PIO2_3;
}

#if PE_SIMD
/* Two lanes of pe__reduce_pio2_q: returns r, and *t the rounding sums (pe_f64x2_low_words of two such gives
 * the four quadrants as i32x4). The same operations lane by lane as the scalar form; the magic sum rounds y
 * half to even as f64x2.nearest does, so r also equals pe__reduce_pio2_2's. */
PE_INLINE pe_v128 pe__reduce_pio2_2q(pe_v128 x, pe_v128 *t) {
    const pe_v128 magic = pe_f64x2_splat(PE__ROUND_MAGIC);
    const pe_v128 tt = pe_f64x2_add(pe_f64x2_mul(x, pe_f64x2_splat(PE__TWO_OVER_PI)), magic);
    const pe_v128 kk = pe_f64x2_sub(tt, magic);
    *t = tt;
    return pe_f64x2_sub(pe_f64x2_sub(pe_f64x2_sub(x, pe_f64x2_mul(kk, pe_f64x2_splat(PE__PIO2_1))),
                                     pe_f64x2_mul(kk, pe_f64x2_splat(PE__PIO2_2))),
                        pe_f64x2_mul(kk, pe_f64x2_splat(PE__PIO2_3)));
}
#endif

/* ---------------------------------------------------------------------------------------------- */
/* e^x in float32, any input                                                                      */
/* ---------------------------------------------------------------------------------------------- */
/* Cephes expf (Moshier): n = nearest(x * log2 e), r = x - n*ln2 with ln 2 split in two (Cody & Waite:
 * C1 = 0.693359375 has 9 bits, so n*C1 is exact), e^r by a degree-7 polynomial on |r| <= ln2/2 (~1 ulp),
 * times 2^n built in the exponent bits. "nearest" is (y + 1.5*2^23) - 1.5*2^23, round-to-nearest-even in
 * float arithmetic, and n is read from the low bits of that sum, so the scalar and vector forms are the
 * same operations.
 * Range: x is clamped to [PE__EXP_MIN, PE__EXP_MAX] before anything else, so n stays in [-126, 127] and
 * 2^n is a normal float; no integer step can overflow, whatever x is.
 *   x < -87 (and -inf, and NaN)  -> 0. e^-87 ~ 1.6e-38 is at the edge of the normal range: below it a
 *                                   softmax weight is 0 for every purpose, and masked logits (-inf) give 0
 *                                   exactly. A NaN (only from non-finite inputs upstream) gives 0, not UB.
 *   x > 88 (and +inf)            -> e^88 ~ 1.65e38: saturates, finite (e^88.73 is past FLT_MAX).
 * attention.c calls it with x <= 0 only; model.c's GELU with -18 <= x <= 0. */
#define PE__EXP_MIN (-87.0f)
#define PE__EXP_MAX 88.0f
#define PE__LOG2E 1.44269504088896341f
#define PE__LN2_C1 0.693359375f
#define PE__LN2_C2 (-2.12194440e-4f)
#define PE__EXP_MAGIC 12582912.0f /* 1.5 * 2^23 */
#define PE__EXP_MAGIC_BITS 0x4B400000
#define PE__E1 1.9875691500e-4f
#define PE__E2 1.3981999507e-3f
#define PE__E3 8.3334519073e-3f
#define PE__E4 4.1665795894e-2f
#define PE__E5 1.6666665459e-1f
#define PE__E6 5.0000001201e-1f

static inline float pe__exp1(float x) {
    const int keep = x >= PE__EXP_MIN; /* false for -inf and NaN */
    float xc = keep ? x : PE__EXP_MIN;
    xc = xc <= PE__EXP_MAX ? xc : PE__EXP_MAX;
    const float t = xc * PE__LOG2E + PE__EXP_MAGIC;
    const float n = t - PE__EXP_MAGIC;
    const float r = (xc - n * PE__LN2_C1) - n * PE__LN2_C2;
    const float z = r * r;
    const float p = (((((PE__E1 * r + PE__E2) * r + PE__E3) * r + PE__E4) * r + PE__E5) * r + PE__E6) * z + r + 1.0f;
    uint32_t tb;
    memcpy(&tb, &t, 4);
    /* n + 127 in [1, 254]: the biased exponent of a normal 2^n. Unsigned, as the i32x4 lanes wrap. */
    const uint32_t eb = (tb - (uint32_t)PE__EXP_MAGIC_BITS + 127u) << 23;
    float pow2n;
    memcpy(&pow2n, &eb, 4);
    return keep ? p * pow2n : 0.0f;
}

#if PE_SIMD
PE_INLINE pe_v128 pe__exp4(pe_v128 x) {
    const pe_v128 lo = pe_f32x4_splat(PE__EXP_MIN), hi = pe_f32x4_splat(PE__EXP_MAX);
    const pe_v128 magic = pe_f32x4_splat(PE__EXP_MAGIC);
    const pe_v128 keep = pe_f32x4_ge(x, lo);
    pe_v128 xc = pe_v128_select(x, lo, keep);         /* the scalar's keep ? x : lo */
    xc = pe_v128_select(xc, hi, pe_f32x4_ge(hi, xc)); /* xc <= hi ? xc : hi */
    const pe_v128 t = pe_f32x4_add(pe_f32x4_mul(xc, pe_f32x4_splat(PE__LOG2E)), magic);
    const pe_v128 n = pe_f32x4_sub(t, magic);
    const pe_v128 r = pe_f32x4_sub(pe_f32x4_sub(xc, pe_f32x4_mul(n, pe_f32x4_splat(PE__LN2_C1))),
                                   pe_f32x4_mul(n, pe_f32x4_splat(PE__LN2_C2)));
    const pe_v128 z = pe_f32x4_mul(r, r);
    pe_v128 p = pe_f32x4_add(pe_f32x4_mul(pe_f32x4_splat(PE__E1), r), pe_f32x4_splat(PE__E2));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E3));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E4));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E5));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E6));
    p = pe_f32x4_add(pe_f32x4_add(pe_f32x4_mul(p, z), r), pe_f32x4_splat(1.0f));
    const pe_v128 eb =
        pe_i32x4_shl(pe_i32x4_add(pe_i32x4_sub(t, pe_i32x4_splat(PE__EXP_MAGIC_BITS)), pe_i32x4_splat(127)), 23);
    return pe_v128_and(pe_f32x4_mul(p, eb), keep);
}
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Dot product with one fixed summation tree                                                       */
/* ---------------------------------------------------------------------------------------------- */
/* sum_i a[i] b[i] for i < n, in this order and no other:
 *   four partial sums p_l = sum over chunks c of a[4c + l] b[4c + l] (l = 0..3, chunks ascending),
 *   combined as (p0 + p2) + (p1 + p3)  (pe_f32x4_sum's order),
 *   then the tail i >= 4*floor(n/4) added one by one, ascending.
 * The f32x4 form keeps the four partial sums in the lanes of one vector; attention_kernels.c's tiled score loops
 * (several rows and keys at once) keep exactly this tree per dot product. */
static inline float pe__dot(const float *a, const float *b, int32_t n) {
    const int32_t n4 = n & ~3;
    int32_t i = 0;
#if PE_SIMD
    pe_v128 acc = pe_f32x4_splat(0.0f);
    for (; i < n4; i += 4) acc = pe_f32x4_add(acc, pe_f32x4_mul(pe_f32x4_load(a + i), pe_f32x4_load(b + i)));
    float s = pe_f32x4_sum(acc);
#else
    float p0 = 0.0f, p1 = 0.0f, p2 = 0.0f, p3 = 0.0f;
    for (; i < n4; i += 4) {
        p0 += a[i] * b[i];
        p1 += a[i + 1] * b[i + 1];
        p2 += a[i + 2] * b[i + 2];
        p3 += a[i + 3] * b[i + 3];
    }
    float s = (p0 + p2) + (p1 + p3);
#endif
    for (; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ---------------------------------------------------------------------------------------------- */
/* Sizes                                                                                          */
/* ---------------------------------------------------------------------------------------------- */
/* Element counts are products of several int32 dimensions: three of them can pass 2^64, so even uint64_t
 * arithmetic wraps unless each step is checked. PE__MAX_FLOATS is the most floats an array can hold and be
 * indexed with size_t (wasm32: 2^30 - 1), the limit every kernel checks its counts against. */
#define PE__MAX_FLOATS ((uint64_t)(SIZE_MAX / sizeof(float)))

/* The product of n non-negative factors, or UINT64_MAX when it exceeds limit (which is < UINT64_MAX). */
static inline uint64_t pe__count(uint64_t limit, int n, const int64_t *factors) {
    uint64_t acc = 1;
    for (int i = 0; i < n; i++) {
        const uint64_t f = (uint64_t)factors[i];
        if (factors[i] < 0 || (f != 0 && acc > limit / f)) return UINT64_MAX;
        acc *= f;
    }
    return acc;
}
/* 1 if a * b * c (each >= 0) is at most PE__MAX_FLOATS; the common check of a 3-d tensor. */
static inline int pe__floats_fit3(int64_t a, int64_t b, int64_t c) {
    const int64_t f[3] = {a, b, c};
    return pe__count(PE__MAX_FLOATS, 3, f) <= PE__MAX_FLOATS;
}

#endif /* PE_MATH_H */
