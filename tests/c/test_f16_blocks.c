/* test_f16_blocks.c — f16.h's SIMD forms against its scalar functions, lane by lane (the scalar functions are
 * checked against a plain reference in test_f16.c):
 *   - the exact 4-lane functions and 8-lane blocks, bit for bit;
 *   - the cheap forms (pe__f16x8_to_f32_finite, pe__f32_to_{f16,bf16}x8_no_nan) on every block they are meant
 *     for, and on every other block the flag that sends it to the exact forms: pe__f16_noted after noting the
 *     f16 patterns read and written, pe__bf16_noted after noting the float32 values narrowed;
 *   - inputs: every float16 / bfloat16 pattern, 8 to a block in two orders (one that mixes exponent-31 lanes
 *     into ordinary blocks, one that keeps them together); float32 around every rounding boundary the
 *     formulation has (each binade's ends, the f16 and bf16 rounding ties and their neighbours, the clamp at
 *     2^16, the subnormal clamp at 2^-14, float32 subnormals, Inf, NaNs with every payload position) and
 *     random patterns;
 *   - PE_F16_EXHAUSTIVE=1 in the environment: all 2^32 float32 patterns through both 8-lane narrowings and
 *     their cheap forms (about a minute unsanitized, much longer under ASan: not part of the usual run).
 * The scalar build has no SIMD forms; it only says so. */
#include "test_util.h"
#include "../../c/src/f16.h"

#include <stdlib.h>

#if PE_SIMD
static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static float float_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static void store_u16x8(pe_v128 v, uint16_t out[8]) { pe_u16x8_store(out, v); }
static void store_u32x4(pe_v128 v, uint32_t out[4]) { memcpy(out, &v, 16); }

typedef struct {
    long exact8, exact4, cheap, flag, blocks;
} narrow_bad;

/* one block of 8 float32 values through every narrowing form of one format */
static void narrow_block(const float x[8], int bf16, narrow_bad *bad) {
    uint16_t want[8], got[8];
    int nan = 0, special_out = 0;
    for (int l = 0; l < 8; l++) {
        want[l] = bf16 ? pe__f32_to_bf16(x[l]) : pe__f32_to_f16(x[l]);
        nan |= x[l] != x[l];
        special_out |= bf16 ? (x[l] != x[l] || x[l] - x[l] != 0.0f) : (want[l] & 0x7c00) == 0x7c00;
    }
    const pe_v128 lo = pe_f32x4_load(x), hi = pe_f32x4_load(x + 4);
    store_u16x8(bf16 ? pe__f32_to_bf16x8(lo, hi) : pe__f32_to_f16x8(lo, hi), got);
    if (memcmp(got, want, 16) && bad->exact8++ < 4)
        fprintf(stderr, "%s 8-lane: 0x%08x -> 0x%04x, scalar 0x%04x\n", bf16 ? "bf16" : "f16", bits_of(x[0]), got[0],
                want[0]);
    for (int half = 0; half < 2; half++) {
        uint32_t g4[4];
        const pe_v128 v = half ? hi : lo;
        store_u32x4(bf16 ? pe__f32x4_to_bf16x4(v) : pe__f32x4_to_f16x4(v), g4);
        for (int l = 0; l < 4; l++)
            if (g4[l] != want[4 * half + l] && bad->exact4++ < 4)
                fprintf(stderr, "%s 4-lane: 0x%08x -> 0x%08x, scalar 0x%04x\n", bf16 ? "bf16" : "f16",
                        bits_of(x[4 * half + l]), g4[l], want[4 * half + l]);
    }
    /* the cheap form: the scalar's bits where no lane is NaN, and a raised flag wherever the bits may differ */
    const pe_v128 cheap = bf16 ? pe__f32_to_bf16x8_no_nan(lo, hi) : pe__f32_to_f16x8_no_nan(lo, hi);
    store_u16x8(cheap, got);
    if (!nan && memcmp(got, want, 16) && bad->cheap++ < 4)
        fprintf(stderr, "%s cheap: 0x%08x -> 0x%04x, scalar 0x%04x\n", bf16 ? "bf16" : "f16", bits_of(x[0]), got[0],
                want[0]);
    const pe_v128 zero = pe_i32x4_splat(0);
    const int noted =
        bf16 ? pe__bf16_noted(pe__bf16_note(pe__bf16_note(zero, lo), hi)) : pe__f16_noted(pe__f16_note(zero, cheap));
    if ((noted != 0) != (special_out != 0) && bad->flag++ < 4)
        fprintf(stderr, "%s flag %d for a block with 0x%08x.. (special %d)\n", bf16 ? "bf16" : "f16", noted,
                bits_of(x[0]), special_out);
    bad->blocks++;
}

static void report_narrow(const char *what, int bf16, const narrow_bad *b) {
    const char *fmt = bf16 ? "bfloat16" : "float16";
    CHECK(b->exact8 == 0, "%s %s: 8-lane narrowing differs from scalar in %ld of %ld blocks", fmt, what, b->exact8,
          b->blocks);
    CHECK(b->exact4 == 0, "%s %s: 4-lane narrowing differs from scalar on %ld lanes", fmt, what, b->exact4);
    CHECK(b->cheap == 0, "%s %s: cheap narrowing differs on %ld NaN-free blocks", fmt, what, b->cheap);
    CHECK(b->flag == 0, "%s %s: flag wrong on %ld blocks", fmt, what, b->flag);
}

/* float32 values around every boundary of the formulation, and random ones */
static size_t boundary_inputs(float *x, size_t cap, pe_rng *rng) {
    size_t n = 0;
    static const uint32_t low[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001,  0x1fff,  0x2000,   0x2001, /* f16 ties */
                                   0x7fff, 0x8000, 0x8001, 0xffff, 0x10000, 0x18000, 0x7f0000, 0x7fe000, 0x7fffff};
    static const uint32_t top[] = {0, 1, 0x100, 0x3fe000, 0x400000, 0x7fe000, 0x7f0000}; /* mantissa tops */
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t e = 0; e < 256; e++)
            for (size_t t = 0; t < sizeof top / sizeof top[0]; t++)
                for (size_t k = 0; k < sizeof low / sizeof low[0]; k++)
                    if (n < cap) x[n++] = float_of((s << 31) | (e << 23) | ((top[t] | low[k]) & 0x7fffff));
    /* f16's own range densely: every exponent from float32 subnormals to past 2^16, random mantissas */
    while (n < cap / 2) {
        const uint32_t r = (uint32_t)pe_rng_next(rng);
        x[n++] = float_of((r & 0x807fffffu) | ((uint32_t)pe_rng_int(rng, 0, 127 + 17) << 23));
    }
    while (n < cap) x[n++] = float_of((uint32_t)pe_rng_next(rng));
    return n;
}

static void check_narrowing(void) {
    pe_rng rng = {0x2545f4914f6cdd1dULL};
    const size_t cap = 2 * 256 * 7 * 17 + (size_t)2000000;
    float *x = malloc(cap * sizeof *x);
    if (!x) exit(2);
    const size_t n = boundary_inputs(x, cap, &rng) & ~(size_t)7;
    for (int bf16 = 0; bf16 < 2; bf16++) {
        narrow_bad bad = {0};
        for (size_t i = 0; i < n; i += 8) narrow_block(x + i, bf16, &bad);
        /* each value also alone in an ordinary block, so a NaN elsewhere never hides its lane from the cheap form */
        for (size_t i = 0; i < n; i += 97) {
            float blk[8] = {1.0f, -2.5f, 0.0f, 3e-6f, 1000.0f, -0.0f, 7e-8f, 0.0f};
            blk[i % 8] = x[i];
            narrow_block(blk, bf16, &bad);
        }
        report_narrow("boundaries + random", bf16, &bad);
        printf("%s: %ld blocks of 8 narrowed, SIMD == scalar (%s)\n", bf16 ? "bfloat16" : "float16", bad.blocks,
               PE_SIMD_ISA);
    }
    free(x);
}

/* every 16-bit pattern, 8 to a block: order 0 mixes (a permutation), order 1 is sequential */
static void check_widening(void) {
    for (int bf16 = 0; bf16 < 2; bf16++) {
        long bad_exact = 0, bad4 = 0, bad_cheap = 0, bad_flag = 0, blocks = 0, cheap_blocks = 0;
        for (int order = 0; order < 2; order++)
            for (uint32_t i = 0; i < 65536; i += 8) {
                uint16_t h[8];
                int top = 0;
                for (int l = 0; l < 8; l++) {
                    h[l] = (uint16_t)(order ? i + l : (i + l) * 40503u);
                    top |= !bf16 && (h[l] & 0x7c00) == 0x7c00;
                }
                const pe_v128 hv = pe_u16x8_load(h);
                pe_v128 out[2];
                uint32_t want[8], got[8];
                for (int l = 0; l < 8; l++) want[l] = bits_of(bf16 ? pe__bf16_to_f32(h[l]) : pe__f16_to_f32(h[l]));
                if (bf16)
                    pe__bf16x8_to_f32(hv, out);
                else
                    pe__f16x8_to_f32(hv, out);
                memcpy(got, out, 32);
                bad_exact += memcmp(got, want, 32) != 0;
                const pe_v128 w0 = bf16 ? pe__bf16x4_to_f32x4(pe_u32x4_extend_low_u16x8(hv))
                                        : pe__f16x4_to_f32x4(pe_u32x4_extend_low_u16x8(hv));
                const pe_v128 w1 = bf16 ? pe__bf16x4_to_f32x4(pe_u32x4_extend_high_u16x8(hv))
                                        : pe__f16x4_to_f32x4(pe_u32x4_extend_high_u16x8(hv));
                memcpy(got, &w0, 16);
                memcpy(got + 4, &w1, 16);
                bad4 += memcmp(got, want, 32) != 0;
                if (!bf16) {
                    pe__f16x8_to_f32_finite(hv, out);
                    memcpy(got, out, 32);
                    if (!top) bad_cheap += memcmp(got, want, 32) != 0, cheap_blocks++;
                    bad_flag += !pe__f16_noted(pe__f16_note(pe_i32x4_splat(0), hv)) != !top;
                }
                blocks++;
            }
        const char *fmt = bf16 ? "bfloat16" : "float16";
        CHECK(bad_exact == 0, "%s: 8-lane widening differs from scalar in %ld of %ld blocks", fmt, bad_exact, blocks);
        CHECK(bad4 == 0, "%s: 4-lane widening differs from scalar in %ld blocks", fmt, bad4);
        CHECK(bad_cheap == 0, "%s: cheap widening differs in %ld of %ld finite blocks", fmt, bad_cheap, cheap_blocks);
        CHECK(bad_flag == 0, "%s: exponent-31 flag wrong in %ld blocks", fmt, bad_flag);
        printf("%s: every pattern widened in %ld blocks (%ld through the cheap form), SIMD == scalar\n", fmt, blocks,
               cheap_blocks);
    }
}

static void check_exhaustive(void) {
    const char *env = getenv("PE_F16_EXHAUSTIVE");
    if (!env || strcmp(env, "1") != 0) {
        printf("all 2^32 float32 patterns: skipped (PE_F16_EXHAUSTIVE=1 runs them)\n");
        return;
    }
    for (int bf16 = 0; bf16 < 2; bf16++) {
        narrow_bad bad = {0};
        uint32_t u = 0;
        do {
            float x[8];
            for (int l = 0; l < 8; l++) x[l] = float_of(u + (uint32_t)l);
            narrow_block(x, bf16, &bad);
            u += 8;
        } while (u != 0);
        report_narrow("all patterns", bf16, &bad);
        printf("%s: all 2^32 float32 patterns narrowed, SIMD == scalar (%s)\n", bf16 ? "bfloat16" : "float16",
               PE_SIMD_ISA);
    }
}
#endif

int main(void) {
#if PE_SIMD
    check_widening();
    check_narrowing();
    check_exhaustive();
#else
    printf("test_f16_blocks: the scalar build has no SIMD conversions (%s)\n", PE_SIMD_ISA);
    CHECK(1, "nothing to compare");
#endif
    return pe_test_report("test_f16_blocks");
}
