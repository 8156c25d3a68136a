/* test_f16_ops.c — 16-bit storage outside rope.apply: pe_convert, pe_sinusoidal_table / pe_sinusoidal_add and
 * pe_learned_add with a pe_dtype (issue 11).
 *
 * pe_convert is checked by properties that do not use f16.h: every finite 16-bit pattern widens to a float32
 * that narrows back to itself; a random float32 narrows to the nearest 16-bit value (the neighbours one step
 * either side are not nearer, a tie goes to the even pattern). The 16-bit encodings are checked against the
 * float32 kernels on the widened data, then narrowed by pe_convert: the same float32 additions, one rounding,
 * so bit for bit. Bad dtypes are PE_ERR_FIELD_VALUE. The accuracy against float64 is tests/js/f16-encodings. */
#include "posenc.h"
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float widen1(uint16_t h, int32_t dt) {
    float f;
    CHECK_STATUS(pe_convert(&f, PE_DTYPE_FLOAT32, &h, dt, 1), PE_OK);
    return f;
}

static void test_convert(void) {
    pe_rng rng = {0x5bd1e995ULL};
    for (int32_t dt = PE_DTYPE_FLOAT16; dt <= PE_DTYPE_BFLOAT16; dt++) {
        const uint16_t inf = dt == PE_DTYPE_FLOAT16 ? 0x7c00 : 0x7f80;
        long bad = 0;
        for (uint32_t h = 0; h < 0x10000; h++) {
            if ((h & 0x7fff) > inf) continue; /* NaN: quieted, checked below */
            const uint16_t in = (uint16_t)h;
            float f;
            uint16_t back;
            CHECK_STATUS(pe_convert(&f, PE_DTYPE_FLOAT32, &in, dt, 1), PE_OK);
            CHECK_STATUS(pe_convert(&back, dt, &f, PE_DTYPE_FLOAT32, 1), PE_OK);
            bad += back != in;
        }
        CHECK(bad == 0, "dtype %d: %ld finite patterns do not round-trip", (int)dt, bad);
        /* nearest, ties to even: compare with the neighbours of the result (same sign, finite range) */
        long far = 0;
        for (int i = 0; i < 200000; i++) {
            const float x = ldexpf(pe_rng_float(&rng), pe_rng_int(&rng, dt == PE_DTYPE_FLOAT16 ? -26 : -130, 15));
            uint16_t h;
            CHECK_STATUS(pe_convert(&h, dt, &x, PE_DTYPE_FLOAT32, 1), PE_OK);
            const double v = widen1(h, dt), e = fabs(v - (double)x);
            const uint16_t mag = h & 0x7fff;
            if (mag < inf - 1) {
                const double up = fabs((double)widen1((uint16_t)(h + 1), dt) - (double)x);
                far += up < e || (up == e && (h & 1));
            }
            if (mag > 0) {
                const double dn = fabs((double)widen1((uint16_t)(h - 1), dt) - (double)x);
                far += dn < e || (dn == e && (h & 1));
            }
        }
        CHECK(far == 0, "dtype %d: %ld float32 values not rounded to the nearest (ties to even)", (int)dt, far);
        /* NaN quieted with its sign; Inf and overflow; a plain copy keeps a signalling NaN */
        const float nan = -NAN, big = 1e30f;
        uint16_t h;
        CHECK_STATUS(pe_convert(&h, dt, &nan, PE_DTYPE_FLOAT32, 1), PE_OK);
        CHECK((h & 0x8000) && (h & 0x7fff) > inf, "dtype %d: -NaN -> 0x%04x", (int)dt, h);
        CHECK_STATUS(pe_convert(&h, dt, &big, PE_DTYPE_FLOAT32, 1), PE_OK);
        CHECK(h == (dt == PE_DTYPE_FLOAT16 ? inf : 0x714a), "dtype %d: 1e30 -> 0x%04x", (int)dt,
              h); /* 0x7149f2ca rounds up */
        const uint16_t snan = dt == PE_DTYPE_FLOAT16 ? 0x7c01 : 0x7f81;
        CHECK_STATUS(pe_convert(&h, dt, &snan, dt, 1), PE_OK);
        CHECK(h == snan, "a same-dtype copy changed 0x%04x to 0x%04x", snan, h);
    }
    /* float16 <-> bfloat16 through float32: 1.5 and 65504 are exact in both after rounding */
    const uint16_t f16[2] = {0x3e00, 0x7bff};
    uint16_t bf[2];
    CHECK_STATUS(pe_convert(bf, PE_DTYPE_BFLOAT16, f16, PE_DTYPE_FLOAT16, 2), PE_OK);
    CHECK(bf[0] == 0x3fc0 && bf[1] == 0x4780, "f16 -> bf16: 0x%04x 0x%04x", bf[0], bf[1]);
    /* statuses */
    float f = 0;
    CHECK_STATUS(pe_convert(&f, 3, &f, 0, 1), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_convert(&f, 0, &f, -1, 1), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_convert(&f, 1, &f, 0, -1), PE_ERR_SHAPE);
    CHECK_STATUS(pe_convert(NULL, 1, &f, 0, 1), PE_ERR_NULL);
    CHECK_STATUS(pe_convert(NULL, 1, NULL, 0, 0), PE_OK);
}

/* x16 widened, the float32 kernel, narrowed: what the 16-bit kernel must give bit for bit */
static void test_sinusoidal(void) {
    pe_rng rng = {0x9e3779b97f4a7c15ULL};
    long differ = 0, total_all = 0;
    for (int k = 0; k < 120; k++) {
        const int32_t dt = 1 + k % 2, B = pe_rng_int(&rng, 1, 3), S = pe_rng_int(&rng, 1, 5);
        pe_sinusoidal_config cfg = {0};
        cfg.variant = k % 3;
        const int32_t D = (cfg.variant == PE_SINUSOIDAL_TENSOR2TENSOR ? 4 : 1) + pe_rng_int(&rng, 0, 300);
        if (k % 5 == 0) {
            cfg.use_padding_idx = 1;
            cfg.padding_idx = 2;
        }
        const size_t n = (size_t)B * S * D;
        int32_t pos[15];
        for (int32_t i = 0; i < B * S; i++) pos[i] = pe_rng_int(&rng, 0, 3) ? pe_rng_int(&rng, 0, 5000) : INT32_MAX - i;
        const int per_batch = k % 4 == 0;
        uint16_t *x = malloc(2 * n), *want = malloc(2 * n), *tab = malloc(2 * (size_t)S * D);
        float *x32 = malloc(4 * n), *t32 = malloc(4 * (size_t)S * D);
        if (!x || !want || !tab || !x32 || !t32) exit(2);
        for (size_t i = 0; i < n; i++) x[i] = (uint16_t)pe_rng_next(&rng);
        CHECK_STATUS(pe_convert(x32, 0, x, dt, (int64_t)n), PE_OK);
        cfg.dtype = 0;
        CHECK_STATUS(pe_sinusoidal_add(x32, pos, B, S, D, per_batch, &cfg), PE_OK);
        CHECK_STATUS(pe_convert(want, dt, x32, 0, (int64_t)n), PE_OK);
        cfg.dtype = dt;
        CHECK_STATUS(pe_sinusoidal_add(x, pos, B, S, D, per_batch, &cfg), PE_OK);
        const uint16_t inf = dt == PE_DTYPE_FLOAT16 ? 0x7c00 : 0x7f80;
        for (size_t i = 0; i < n; i++)
            differ += x[i] != want[i] && !((x[i] & 0x7fff) > inf && (want[i] & 0x7fff) > inf);
        /* the table: the float32 table narrowed */
        cfg.offset = pos[0];
        cfg.dtype = 0;
        if ((int64_t)cfg.offset + S - 1 > INT32_MAX) cfg.offset = INT32_MAX - S + 1;
        CHECK_STATUS(pe_sinusoidal_table(t32, S, D, &cfg), PE_OK);
        CHECK_STATUS(pe_convert(want, dt, t32, 0, (int64_t)S * D), PE_OK);
        cfg.dtype = dt;
        CHECK_STATUS(pe_sinusoidal_table(tab, S, D, &cfg), PE_OK);
        differ += memcmp(tab, want, 2 * (size_t)S * D) != 0;
        total_all += (long)n;
        free(x);
        free(want);
        free(tab);
        free(x32);
        free(t32);
    }
    CHECK(differ == 0, "sinusoidal: %ld 16-bit results differ from the float32 kernel narrowed", differ);
    pe_sinusoidal_config bad = {0};
    bad.dtype = 3;
    uint16_t one[4] = {0};
    CHECK_STATUS(pe_sinusoidal_add(one, NULL, 1, 1, 4, 0, &bad), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_sinusoidal_table(one, 1, 4, &bad), PE_ERR_FIELD_VALUE);
    printf("  sinusoidal: %ld 16-bit results == float32 kernel narrowed\n", total_all);
}

static void test_learned(void) {
    pe_rng rng = {0x2545f4914f6cdd1dULL};
    long differ = 0;
    for (int k = 0; k < 90; k++) {
        const int32_t xdt = k % 3, tdt = (k / 3) % 3, B = pe_rng_int(&rng, 1, 3), S = pe_rng_int(&rng, 1, 6);
        const int32_t D = pe_rng_int(&rng, 1, 600), rows = 8;
        const size_t n = (size_t)B * S * D, tn = (size_t)rows * D;
        const size_t xsz = xdt ? 2 : 4, tsz = tdt ? 2 : 4;
        unsigned char *x = malloc(xsz * n), *table = malloc(tsz * tn), *want = malloc(xsz * n);
        float *x32 = malloc(4 * n), *t32 = malloc(4 * tn);
        if (!x || !table || !want || !x32 || !t32) exit(2);
        for (size_t i = 0; i < n; i++) {
            if (xdt)
                ((uint16_t *)x)[i] = (uint16_t)pe_rng_next(&rng);
            else
                ((float *)x)[i] = pe_rng_float(&rng) * 10;
        }
        for (size_t i = 0; i < tn; i++) {
            if (tdt)
                ((uint16_t *)table)[i] = (uint16_t)pe_rng_next(&rng);
            else
                ((float *)table)[i] = pe_rng_float(&rng);
        }
        int32_t pos[18];
        for (int32_t i = 0; i < B * S; i++) pos[i] = pe_rng_int(&rng, -1, rows - 2);
        CHECK_STATUS(pe_convert(x32, 0, x, xdt, (int64_t)n), PE_OK);
        CHECK_STATUS(pe_convert(t32, 0, table, tdt, (int64_t)tn), PE_OK);
        pe_learned_add_config c = {.batch = B, .seq = S, .d_model = D, .n_rows = rows, .row_offset = 1};
        c.per_batch_positions = 1;
        CHECK_STATUS(pe_learned_add(x32, t32, pos, &c), PE_OK);
        CHECK_STATUS(pe_convert(want, xdt, x32, 0, (int64_t)n), PE_OK);
        c.dtype = xdt;
        c.table_dtype = tdt;
        CHECK_STATUS(pe_learned_add(x, table, pos, &c), PE_OK);
        for (size_t i = 0; i < n; i++) {
            if (xdt) {
                const uint16_t a = ((uint16_t *)x)[i], b = ((uint16_t *)want)[i], inf = xdt == 1 ? 0x7c00 : 0x7f80;
                differ += a != b && !((a & 0x7fff) > inf && (b & 0x7fff) > inf);
            } else {
                const float a = ((float *)x)[i], b = ((float *)want)[i];
                differ += memcmp(&a, &b, 4) != 0 && !(a != a && b != b);
            }
        }
        free(x);
        free(table);
        free(want);
        free(x32);
        free(t32);
    }
    CHECK(differ == 0, "learned: %ld results differ from the float32 kernel on widened data", differ);
    pe_learned_add_config bad = {.batch = 1, .seq = 1, .d_model = 1, .n_rows = 1, .table_dtype = 7};
    float one = 0;
    CHECK_STATUS(pe_learned_add(&one, &one, NULL, &bad), PE_ERR_FIELD_VALUE);
    bad.table_dtype = 0;
    bad.dtype = -1;
    CHECK_STATUS(pe_learned_add(&one, &one, NULL, &bad), PE_ERR_FIELD_VALUE);
}

int main(void) {
    test_convert();
    test_sinusoidal();
    test_learned();
    return pe_test_report("test_f16_ops");
}
