/* fuzz.h — what the libFuzzer harnesses share: reading typed values from the fuzzer's bytes, exact-size
 * buffers, and the strict-mode check.
 *
 * The bytes are read front to back as a sequence of choices (sizes, flags, config fields); past the end every
 * read gives 0, so a short input is a valid, small case. Tensor contents come from a PRNG seeded by the input,
 * not from the bytes, so inputs stay a few dozen bytes and mutations change shapes and configs, where the
 * bugs live.
 *
 * Strict mode (PE_FUZZ_STRICT, on unless the environment sets it to 0): a call the library accepted (PE_OK)
 * must give finite outputs, and each harness's further invariants; fuzz_fail aborts so libFuzzer saves the
 * input. With PE_FUZZ_STRICT=0 only the sanitizers judge. */
#ifndef PE_FUZZ_H
#define PE_FUZZ_H

#include "posenc.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fuzz_input {
    const uint8_t *p;
    size_t n;
} fuzz_input;

static int fuzz_strict = 1;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    const char *s = getenv("PE_FUZZ_STRICT");
    fuzz_strict = !(s && s[0] == '0');
    return 0;
}

#define fuzz_fail(...)                                                            \
    do {                                                                          \
        fprintf(stderr, "fuzz: invariant broken at %s:%d: ", __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__);                                             \
        fputc('\n', stderr);                                                      \
        abort();                                                                  \
    } while (0)

/* Only in strict mode: an accepted call broke a promise. */
#define fuzz_require(cond, ...)                             \
    do {                                                    \
        if (fuzz_strict && !(cond)) fuzz_fail(__VA_ARGS__); \
    } while (0)

static inline uint64_t fuzz_bytes(fuzz_input *in, int nbytes) {
    uint64_t v = 0;
    for (int i = 0; i < nbytes && in->n; i++, in->p++, in->n--) v |= (uint64_t)in->p[0] << (8 * i);
    return v;
}

/* an integer in [lo, hi] (lo when the input is exhausted) */
static inline int64_t fuzz_range(fuzz_input *in, int64_t lo, int64_t hi) {
    const uint64_t span = (uint64_t)(hi - lo);
    const int nbytes = span < 0x100 ? 1 : span < 0x10000 ? 2 : span < 0x100000000ull ? 4 : 8;
    const uint64_t v = fuzz_bytes(in, nbytes);
    return span == UINT64_MAX ? (int64_t)v : lo + (int64_t)(v % (span + 1));
}

static inline int fuzz_bool(fuzz_input *in) { return (int)(fuzz_bytes(in, 1) & 1); }

/* An int32 that is usually ordinary and sometimes at an edge. */
static inline int32_t fuzz_int32(fuzz_input *in, int32_t ordinary_max) {
    static const int32_t edges[] = {0,         1,
                                    -1,        2,
                                    3,         7,
                                    8,         64,
                                    65,        4096,
                                    65535,     65536,
                                    1 << 20,   (1 << 29) + 1,
                                    INT32_MAX, INT32_MAX - 1,
                                    INT32_MIN, INT32_MIN + 1};
    switch (fuzz_bytes(in, 1) % 4) {
    case 0: return edges[fuzz_bytes(in, 1) % (sizeof edges / sizeof edges[0])];
    case 1: return (int32_t)(uint32_t)fuzz_bytes(in, 4);
    default: return (int32_t)fuzz_range(in, 0, ordinary_max);
    }
}

/* A double that is usually a plain value and sometimes special: 0, ±inf, NaN, subnormal, huge, tiny. */
static inline double fuzz_double(fuzz_input *in, double ordinary_lo, double ordinary_hi) {
    static const double edges[] = {0.0,    -0.0,   1.0,      -1.0,     0.5,   2.0,      1e-10,
                                   1e-309, 5e-324, 1e300,    -1e300,   1e308, INFINITY, -INFINITY,
                                   NAN,    1e-3,   0.999999, 1.000001, 32.0,  1e4,      1e6};
    switch (fuzz_bytes(in, 1) % 4) {
    case 0: return edges[fuzz_bytes(in, 1) % (sizeof edges / sizeof edges[0])];
    case 1: {
        const uint64_t b = fuzz_bytes(in, 8);
        double d;
        memcpy(&d, &b, 8);
        return d;
    }
    default: return ordinary_lo + (ordinary_hi - ordinary_lo) * (double)fuzz_bytes(in, 2) / 65535.0;
    }
}

/* splitmix64 over the input's remaining bytes: deterministic tensor contents */
typedef struct fuzz_rng {
    uint64_t s;
} fuzz_rng;
static inline fuzz_rng fuzz_rng_from(const fuzz_input *in) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ in->n;
    for (size_t i = 0; i < in->n && i < 64; i++) h = (h ^ in->p[i]) * 0x100000001b3ull;
    return (fuzz_rng){h};
}
static inline uint64_t fuzz_rng_next(fuzz_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
/* uniform in [-amp, amp) */
static inline float fuzz_rng_float(fuzz_rng *r, float amp) {
    return (float)(((double)(fuzz_rng_next(r) >> 11) * 0x1p-52 - 1.0) * amp);
}
static inline void fuzz_fill(float *x, size_t n, fuzz_rng *r, float amp) {
    for (size_t i = 0; i < n; i++) x[i] = fuzz_rng_float(r, amp);
}

/* A block of exactly n elements (ASan flags one past it); NULL for n == 0, as the kernels allow then. */
static inline void *fuzz_alloc(size_t n, size_t elem) {
    if (n == 0) return NULL;
    void *p = malloc(n * elem);
    if (!p) fuzz_fail("out of memory for %zu x %zu bytes", n, elem);
    return p;
}

/* the index of the first non-finite float, or -1 */
static inline long fuzz_first_nonfinite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return (long)i;
    return -1;
}

#endif
