/* test_simd_twins_f16_ops.c — the 16-bit paths outside rope.apply, SIMD build against scalar build (build.sh
 * links this binary against both; the SIMD one's symbols are simd_*): pe_convert in every direction, the
 * 16-bit sinusoidal table and add, pe_learned_add with each x / table dtype. Raw random 16-bit patterns send
 * NaNs, Infs and subnormals through both; lengths and widths that are not multiples of 8 meet the tails. A NaN
 * result must be NaN in both (its payload is open, as in test_simd_twins_f16.c); all else is bit for bit. */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define SIMD_TWIN(name) extern __typeof__(name) simd_##name
SIMD_TWIN(pe_convert);
SIMD_TWIN(pe_sinusoidal_add);
SIMD_TWIN(pe_sinusoidal_table);
SIMD_TWIN(pe_learned_add);

static long differ, results;

static void compare(const void *a, const void *b, size_t n, int32_t dt, const char *what, int k) {
    for (size_t i = 0; i < n; i++) {
        int same;
        if (dt == PE_DTYPE_FLOAT32) {
            const float x = ((const float *)a)[i], y = ((const float *)b)[i];
            same = !memcmp(&x, &y, 4) || (x != x && y != y);
        } else {
            const uint16_t x = ((const uint16_t *)a)[i], y = ((const uint16_t *)b)[i];
            const uint16_t inf = dt == PE_DTYPE_FLOAT16 ? 0x7c00 : 0x7f80;
            same = x == y || ((x & 0x7fff) > inf && (y & 0x7fff) > inf);
        }
        if (!same && differ++ < 5) fprintf(stderr, "%s case %d element %zu differs\n", what, k, i);
    }
    results += (long)n;
}

int main(void) {
    pe_rng rng = {0xa0761d6478bd642fULL};
    for (int k = 0; k < 300; k++) {
        const size_t n = (size_t)pe_rng_int(&rng, 1, 700);
        uint16_t *h = malloc(2 * n), *ha = malloc(2 * n), *hb = malloc(2 * n);
        float *f = malloc(4 * n), *fa = malloc(4 * n), *fb = malloc(4 * n);
        if (!h || !ha || !hb || !f || !fa || !fb) return 2;
        for (size_t i = 0; i < n; i++) {
            h[i] = (uint16_t)pe_rng_next(&rng);
            const uint32_t u = (uint32_t)pe_rng_next(&rng);
            memcpy(&f[i], &u, 4);
        }
        const int32_t dt = 1 + k % 2;
        CHECK_STATUS(pe_convert(ha, dt, f, 0, (int64_t)n), PE_OK);
        CHECK_STATUS(simd_pe_convert(hb, dt, f, 0, (int64_t)n), PE_OK);
        compare(ha, hb, n, dt, "convert f32 -> 16", k);
        CHECK_STATUS(pe_convert(fa, 0, h, dt, (int64_t)n), PE_OK);
        CHECK_STATUS(simd_pe_convert(fb, 0, h, dt, (int64_t)n), PE_OK);
        compare(fa, fb, n, 0, "convert 16 -> f32", k);
        CHECK_STATUS(pe_convert(ha, 3 - dt, h, dt, (int64_t)n), PE_OK);
        CHECK_STATUS(simd_pe_convert(hb, 3 - dt, h, dt, (int64_t)n), PE_OK);
        compare(ha, hb, n, 3 - dt, "convert 16 -> 16", k);
        free(h);
        free(ha);
        free(hb);
        free(f);
        free(fa);
        free(fb);
    }
    for (int k = 0; k < 200; k++) {
        const int32_t dt = 1 + k % 2, B = pe_rng_int(&rng, 1, 3), S = pe_rng_int(&rng, 1, 5);
        pe_sinusoidal_config cfg = {.variant = k % 3, .dtype = dt};
        const int32_t D = (cfg.variant == PE_SINUSOIDAL_TENSOR2TENSOR ? 4 : 1) + pe_rng_int(&rng, 0, 300);
        const size_t n = (size_t)B * S * D;
        int32_t pos[15];
        for (int32_t i = 0; i < B * S; i++) pos[i] = pe_rng_int(&rng, 0, 1) ? pe_rng_int(&rng, 0, 9999) : INT32_MAX - i;
        uint16_t *a = malloc(2 * n), *b = malloc(2 * n);
        if (!a || !b) return 2;
        for (size_t i = 0; i < n; i++) a[i] = (uint16_t)pe_rng_next(&rng);
        memcpy(b, a, 2 * n);
        CHECK_STATUS(pe_sinusoidal_add(a, pos, B, S, D, 1, &cfg), PE_OK);
        CHECK_STATUS(simd_pe_sinusoidal_add(b, pos, B, S, D, 1, &cfg), PE_OK);
        compare(a, b, n, dt, "sinusoidal add", k);
        cfg.offset = pe_rng_int(&rng, 0, 1 << 30);
        CHECK_STATUS(pe_sinusoidal_table(a, B * S, D, &cfg), PE_OK);
        CHECK_STATUS(simd_pe_sinusoidal_table(b, B * S, D, &cfg), PE_OK);
        compare(a, b, n, dt, "sinusoidal table", k);
        free(a);
        free(b);
    }
    for (int k = 0; k < 180; k++) {
        const int32_t xdt = k % 3, tdt = (k / 3) % 3, B = pe_rng_int(&rng, 1, 3), S = pe_rng_int(&rng, 1, 4);
        const int32_t D = pe_rng_int(&rng, 1, 600), rows = 6;
        const size_t n = (size_t)B * S * D, tn = (size_t)rows * D, xsz = xdt ? 2 : 4, tsz = tdt ? 2 : 4;
        unsigned char *a = malloc(xsz * n), *b = malloc(xsz * n), *t = malloc(tsz * tn);
        if (!a || !b || !t) return 2;
        for (size_t i = 0; i < xsz * n; i++) a[i] = (unsigned char)pe_rng_next(&rng);
        for (size_t i = 0; i < tsz * tn; i++) t[i] = (unsigned char)pe_rng_next(&rng);
        memcpy(b, a, xsz * n);
        int32_t pos[4];
        for (int32_t i = 0; i < S; i++) pos[i] = pe_rng_int(&rng, 0, rows - 1);
        const pe_learned_add_config c = {
            .batch = B, .seq = S, .d_model = D, .n_rows = rows, .dtype = xdt, .table_dtype = tdt};
        CHECK_STATUS(pe_learned_add(a, t, pos, &c), PE_OK);
        CHECK_STATUS(simd_pe_learned_add(b, t, pos, &c), PE_OK);
        compare(a, b, n, xdt, "learned add", k);
        free(a);
        free(b);
        free(t);
    }
    CHECK(differ == 0, "%ld of %ld results differ between the SIMD and scalar builds", differ, results);
    printf("test_simd_twins_f16_ops: %ld results, SIMD == scalar bit for bit\n", results);
    return pe_test_report("test_simd_twins_f16_ops");
}
