/* test_util.h — tiny check macros and a seeded PRNG for the native C tests.
 * Each test binary ends with `NAME: N passed, N failed` and exits non-zero on any failure. */
#ifndef PE_TEST_UTIL_H
#define PE_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int pe_test_passed, pe_test_failed;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (cond) {                                                         \
            pe_test_passed++;                                               \
        } else {                                                            \
            pe_test_failed++;                                               \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
        }                                                                   \
    } while (0)

#define CHECK_STATUS(expr, want)                                                                           \
    do {                                                                                                   \
        pe_status got_ = (expr);                                                                           \
        CHECK(got_ == (want), "got %d (%s), want %d (%s)", (int)got_, pe_status_string(got_), (int)(want), \
              pe_status_string(want));                                                                     \
    } while (0)

static inline int pe_test_report(const char *name) {
    printf("%s: %d passed, %d failed\n", name, pe_test_passed, pe_test_failed);
    return pe_test_failed ? 1 : 0;
}

/* xorshift64*: deterministic across platforms */
typedef struct {
    uint64_t s;
} pe_rng;
static inline uint64_t pe_rng_next(pe_rng *r) {
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1DULL;
}
/* uniform integer in [lo, hi] */
static inline int32_t pe_rng_int(pe_rng *r, int32_t lo, int32_t hi) {
    return lo + (int32_t)(pe_rng_next(r) % (uint64_t)(hi - lo + 1));
}
/* uniform float in [-1, 1) */
static inline float pe_rng_float(pe_rng *r) { return (float)((pe_rng_next(r) >> 40) * 0x1p-23 - 1.0); }
/* a position near 0, mid-range, anywhere below INT32_MAX, or at its very top (the reduction's hardest angles) */
static inline int32_t random_position(pe_rng *rng) {
    switch (pe_rng_int(rng, 0, 3)) {
    case 0: return pe_rng_int(rng, 0, 64);
    case 1: return pe_rng_int(rng, 0, 1 << 20);
    case 2: return pe_rng_int(rng, 0, INT32_MAX - 1);
    default: return INT32_MAX - pe_rng_int(rng, 0, 8);
    }
}

/* float32 values apart, counted in representable steps (signed zeros equal; -x and x 2*ulps(x, 0) apart) */
static inline int64_t ulps(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    return llabs((long long)ia - (long long)ib);
}

#ifdef POSENC_H
/* pe_rope_apply with the shape and flags as arguments, so the tests' tables read better (for tests that include
 * posenc.h before this file) */
static inline pe_status rope_apply(const pe_rope *rope, float *x, const float *cs, const float *sn, int32_t batch,
                                   int32_t seq, int32_t heads, int32_t layout, int32_t per_batch_rows,
                                   int32_t rotation) {
    const pe_rope_apply_config ac = {.batch = batch,
                                     .seq = seq,
                                     .heads = heads,
                                     .layout = layout,
                                     .per_batch_rows = per_batch_rows,
                                     .rotation = rotation};
    return pe_rope_apply(rope, x, cs, sn, &ac);
}
#endif

#endif
