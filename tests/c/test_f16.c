/* test_f16.c — c/src/f16.h's conversions against a plain reference written here in double arithmetic
 * (frexp / ldexp / nearbyint, no bit tricks), and, in the SIMD build, SIMD lanes against the scalar functions.
 *
 *   every float16 and bfloat16 pattern: widening equals the reference value; round trip is the identity,
 *     except a signalling NaN comes back quiet (f16 | 0x0200, bf16 | 0x0040), sign and payload kept
 *   float32 -> float16 / bfloat16: every midpoint between neighbouring 16-bit values and the float32 values
 *     next to it, every exponent's boundaries, ±0, ±Inf, NaNs, and millions of random patterns
 *   SIMD (PE_SIMD build): the 8-wide array loops give the scalar function's bits on all of the above */
#include "test_util.h"
#include "../../c/src/f16.h"

#include <stdlib.h>

/* ---- reference ------------------------------------------------------------------------------ */
typedef struct {
    int mant_bits, min_exp, exp_bits;
} fmt; /* min_exp: exponent of the smallest normal */
static const fmt F16 = {10, -14, 5}, BF16 = {7, -126, 8};

/* 16-bit pattern -> value (NaNs handled by the caller) */
static double ref_decode(fmt f, uint16_t h) {
    const int e = (h >> f.mant_bits) & ((1 << f.exp_bits) - 1);
    const int m = h & ((1 << f.mant_bits) - 1);
    const double v =
        e == 0 ? ldexp(m, f.min_exp - f.mant_bits) : ldexp((1 << f.mant_bits) + m, e - 1 + f.min_exp - f.mant_bits);
    return (h >> 15) ? -v : v;
}
static int ref_is_nan(fmt f, uint16_t h) {
    const int emax = (1 << f.exp_bits) - 1;
    return ((h >> f.mant_bits) & emax) == emax && (h & ((1 << f.mant_bits) - 1)) != 0;
}
static int ref_is_inf(fmt f, uint16_t h) { return (h & 0x7fff) == (((1 << f.exp_bits) - 1) << f.mant_bits); }

/* float32 -> 16-bit, round to nearest even, overflow to Inf, NaN as documented in f16.h */
static uint16_t ref_encode(fmt f, float x) {
    const uint16_t sign = signbit(x) ? 0x8000 : 0;
    const int emax_field = (1 << f.exp_bits) - 1;
    const uint16_t inf = (uint16_t)(emax_field << f.mant_bits);
    if (isnan(x)) {
        uint32_t u;
        memcpy(&u, &x, 4);
        const uint32_t payload = (u & 0x7fffff) >> (23 - f.mant_bits);
        return (uint16_t)(sign | inf | (1u << (f.mant_bits - 1)) | payload);
    }
    double a = fabs((double)x);
    if (isinf(a)) return sign | inf;
    int e;
    frexp(a, &e); /* a = m * 2^e, m in [0.5, 1) */
    e -= 1;       /* a in [2^e, 2^(e+1)) */
    if (e < f.min_exp) e = f.min_exp;
    const double ulp = ldexp(1.0, e - f.mant_bits);
    const double q = nearbyint(a / ulp); /* exact quotient (a has 24 bits), rounded half to even */
    const double v = q * ulp;
    const double max_finite = ldexp((double)((2 << f.mant_bits) - 1), emax_field - 1 + f.min_exp - 1 - f.mant_bits);
    if (v > max_finite) return sign | inf;
    if (v < ldexp(1.0, f.min_exp)) return (uint16_t)(sign | (uint16_t)q); /* subnormal (q < 2^mant_bits) */
    int ev;
    const double mv = frexp(v, &ev); /* v = mv * 2^ev */
    const int field = ev - 1 - f.min_exp + 1;
    const int mant = (int)(ldexp(mv, 1 + f.mant_bits) - ldexp(1.0, f.mant_bits));
    return (uint16_t)(sign | (field << f.mant_bits) | mant);
}

/* ---- helpers -------------------------------------------------------------------------------- */
static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static uint16_t narrow(fmt f, float x) { return f.mant_bits == 10 ? pe__f32_to_f16(x) : pe__f32_to_bf16(x); }
static float widen(fmt f, uint16_t h) { return f.mant_bits == 10 ? pe__f16_to_f32(h) : pe__bf16_to_f32(h); }

/* all 65536 patterns of one format: widen exactly, round trip */
static void check_patterns(fmt f, const char *name) {
    long bad_value = 0, bad_trip = 0;
    const uint16_t quiet = (uint16_t)(1u << (f.mant_bits - 1));
    for (uint32_t i = 0; i < 65536; i++) {
        const uint16_t h = (uint16_t)i;
        const float w = widen(f, h);
        if (ref_is_nan(f, h)) {
            /* NaN: sign and payload moved to the top of the float32 mantissa; f16 quiets, bf16 shifts */
            const uint32_t want = ((uint32_t)(h & 0x8000) << 16) | 0x7f800000u |
                                  ((uint32_t)(h & ((1u << f.mant_bits) - 1)) << (23 - f.mant_bits)) |
                                  (f.mant_bits == 10 ? 0x00400000u : 0u);
            if (f_bits(w) != want && bad_value++ < 5) fprintf(stderr, "%s 0x%04x -> 0x%08x\n", name, h, f_bits(w));
            if (narrow(f, w) != (h | quiet) && bad_trip++ < 5) fprintf(stderr, "%s trip 0x%04x\n", name, h);
            continue;
        }
        const double want = ref_is_inf(f, h) ? ((h >> 15) ? -INFINITY : INFINITY) : ref_decode(f, h);
        if (((double)w != want || (signbit(w) != 0) != (h >> 15 != 0)) && bad_value++ < 5)
            fprintf(stderr, "%s 0x%04x -> %a, want %a\n", name, h, (double)w, want);
        if (narrow(f, w) != h && bad_trip++ < 5) fprintf(stderr, "%s trip 0x%04x -> 0x%04x\n", name, h, narrow(f, w));
    }
    CHECK(bad_value == 0, "%s: %ld patterns widen wrongly", name, bad_value);
    CHECK(bad_trip == 0, "%s: %ld patterns do not round-trip", name, bad_trip);
}

/* the float32 inputs: edges then random; returns the count */
static size_t make_inputs(fmt f, float *x, size_t cap, pe_rng *rng) {
    size_t n = 0;
    /* midpoints between neighbouring positive finite 16-bit values (exact in float32), and ±1 float32 ulp */
    const uint16_t top = (uint16_t)(((1 << f.exp_bits) - 1) << f.mant_bits); /* +Inf */
    for (uint32_t h = 0; h < top; h++) {
        const double lo = ref_decode(f, (uint16_t)h);
        const double hi =
            h + 1 == top ? ldexp(1.0, (1 << f.exp_bits) - 1 + f.min_exp - 1) : ref_decode(f, (uint16_t)(h + 1));
        const float mid = (float)((lo + hi) / 2);
        const float vals[5] = {mid, nextafterf(mid, 0.0f), nextafterf(mid, INFINITY), (float)lo,
                               nextafterf((float)lo, INFINITY)};
        for (int k = 0; k < 5; k++) {
            x[n++] = vals[k];
            x[n++] = -vals[k];
        }
    }
    const float specials[] = {0.0f,
                              -0.0f,
                              INFINITY,
                              -INFINITY,
                              bits_f(0x7fc00000),
                              bits_f(0xffc00000),
                              bits_f(0x7f800001),
                              bits_f(0xff800001),
                              bits_f(0x7fbfffff),
                              bits_f(0x7fffffff),
                              bits_f(0x7f802000),
                              bits_f(0x00000001),
                              bits_f(0x80000001),
                              bits_f(0x007fffff),
                              bits_f(0x7f7fffff),
                              bits_f(0xff7fffff),
                              65504.0f,
                              65519.996f,
                              65520.0f,
                              -65520.0f};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) x[n++] = specials[k];
    /* every float32 exponent's boundaries and middle */
    for (uint32_t e = 0; e < 256; e++)
        for (uint32_t m = 0; m < 8; m++) {
            const uint32_t mant[8] = {0, 1, 0x1000, 0x0fff, 0x8000, 0x7fff, 0x400000, 0x7fffff};
            x[n++] = bits_f((e << 23) | mant[m]);
            x[n++] = bits_f(0x80000000u | (e << 23) | mant[m]);
        }
    /* random: whole range of patterns, and concentrated where the format is finite and not trivial */
    while (n < cap) {
        const uint32_t r = (uint32_t)pe_rng_next(rng);
        if (n & 1) {
            x[n++] = bits_f(r);
        } else {
            const int32_t e = f.mant_bits == 10 ? pe_rng_int(rng, 127 - 26, 127 + 16) : pe_rng_int(rng, 0, 255);
            x[n++] = bits_f((r & 0x807fffffu) | ((uint32_t)e << 23));
        }
    }
    return n;
}

static void check_narrowing(fmt f, const char *name, size_t n_random) {
    pe_rng rng = {0x9e3779b97f4a7c15ULL ^ (uint64_t)f.mant_bits};
    const size_t cap = 5 * 2 * 65536 + 8192 + n_random;
    float *x = malloc(cap * sizeof *x);
    uint16_t *simd = malloc(cap * sizeof *simd);
    float *wide = malloc(cap * sizeof *wide);
    if (!x || !simd || !wide) exit(2);
    const size_t n = make_inputs(f, x, cap, &rng);
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        const uint16_t got = narrow(f, x[i]), want = ref_encode(f, x[i]);
        if (got != want && bad++ < 8)
            fprintf(stderr, "%s: %a (0x%08x) -> 0x%04x, want 0x%04x\n", name, (double)x[i], f_bits(x[i]), got, want);
    }
    CHECK(bad == 0, "%s: %ld of %zu float32 values round wrongly", name, bad, n);
    printf("%s: %zu float32 values narrowed against the reference\n", name, n);
#if PE_SIMD
    /* the array functions run 8 lanes at a time; n rounded down to a multiple of 8 stays in the SIMD loop */
    const int32_t m = (int32_t)(n & ~(size_t)7);
    if (f.mant_bits == 10)
        pe__store_f16(simd, x, m);
    else
        pe__store_bf16(simd, x, m);
    long bad_simd = 0;
    for (int32_t i = 0; i < m; i++)
        if (simd[i] != narrow(f, x[i]) && bad_simd++ < 8)
            fprintf(stderr, "%s SIMD: 0x%08x -> 0x%04x, scalar 0x%04x\n", name, f_bits(x[i]), simd[i], narrow(f, x[i]));
    CHECK(bad_simd == 0, "%s: SIMD narrowing differs from scalar on %ld values", name, bad_simd);
    /* widening: all 65536 patterns, with an odd tail so the scalar loop runs too */
    for (uint32_t i = 0; i < 65536 + 3; i++) simd[i] = (uint16_t)(i * 40503u); /* a permutation, then 3 more */
    if (f.mant_bits == 10)
        pe__load_f16(wide, simd, 65536 + 3);
    else
        pe__load_bf16(wide, simd, 65536 + 3);
    long bad_wide = 0;
    for (uint32_t i = 0; i < 65536 + 3; i++)
        if (f_bits(wide[i]) != f_bits(widen(f, simd[i])) && bad_wide++ < 8)
            fprintf(stderr, "%s SIMD widen 0x%04x -> 0x%08x\n", name, simd[i], f_bits(wide[i]));
    CHECK(bad_wide == 0, "%s: SIMD widening differs from scalar on %ld patterns", name, bad_wide);
    printf("%s: SIMD == scalar on %d narrowings and 65539 widenings (%s)\n", name, m, PE_SIMD_ISA);
#endif
    free(x);
    free(simd);
    free(wide);
}

int main(void) {
    check_patterns(F16, "float16");
    check_patterns(BF16, "bfloat16");
    check_narrowing(F16, "float16", 4000000);
    check_narrowing(BF16, "bfloat16", 4000000);
    return pe_test_report("test_f16");
}
