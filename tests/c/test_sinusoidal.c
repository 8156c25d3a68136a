/* test_sinusoidal.c — sinusoidal tables against the transformers golden vectors (XLM interleaved, Marian
 * half, FSMT tensor2tensor), the paper's worked example, odd d_model, large positions, add, bad input. */
#include "posenc.h"
#include "test_util.h"
#include "golden.h"

#include <stdlib.h>
#include <string.h>

/* The references, column by column, in double (numpy / torch float64 semantics). */
static double ref_pe(int variant, double base, int d, double p, int j) {
    if (variant == PE_SINUSOIDAL_INTERLEAVED) {
        /* XLM: position_enc[p, j] = p / base^(2 (j//2) / d); out[:, 0::2] = sin, out[:, 1::2] = cos */
        double a = p / pow(base, (double)(2 * (j / 2)) / d);
        return (j % 2 == 0) ? sin(a) : cos(a);
    }
    if (variant == PE_SINUSOIDAL_HALF) {
        /* Marian: sentinel = ceil(d/2); out[:, :sentinel] = sin(position_enc[:, 0::2]),
         * out[:, sentinel:] = cos(position_enc[:, 1::2]) */
        int sentinel = d % 2 == 0 ? d / 2 : d / 2 + 1;
        int src = j < sentinel ? 2 * j : 2 * (j - sentinel) + 1; /* column of position_enc used */
        double a = p / pow(base, (double)(2 * (src / 2)) / d);
        return j < sentinel ? sin(a) : cos(a);
    }
    /* FSMT get_embedding: half = d // 2; emb = exp(arange(half) * -(ln(base) / (half - 1))); cat(sin, cos), pad 0 */
    int half = d / 2;
    if (j >= 2 * half) return 0.0;
    int i = j < half ? j : j - half;
    double a = p * exp((double)i * -(log(base) / (half - 1)));
    return j < half ? sin(a) : cos(a);
}

static void test_golden(void) {
    golden_doc doc;
    if (golden_load(&doc, "sinusoidal.json") != 0) {
        CHECK(0, "sinusoidal.json not loaded");
        return;
    }
    golden_case c = {0};
    char variant[32], id[128];
    int n_cases = 0;
    while (golden_next_case(&doc, &c)) {
        golden_string(&c, "variant", variant, sizeof variant);
        golden_string(&c, "id", id, sizeof id);
        int d = (int)golden_number(&c, "d_model", 0), n = (int)golden_number(&c, "num_positions", 0);
        pe_sinusoidal_config cfg = {0};
        if (strcmp(variant, "interleaved") == 0)
            cfg.variant = PE_SINUSOIDAL_INTERLEAVED;
        else if (strcmp(variant, "half_split") == 0)
            cfg.variant = PE_SINUSOIDAL_HALF;
        else if (strcmp(variant, "tensor2tensor") == 0)
            cfg.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
        else {
            CHECK(0, "%s: unknown variant %s", id, variant);
            continue;
        }
        if (!golden_is_null(&c, "padding_idx")) {
            cfg.use_padding_idx = 1;
            cfg.padding_idx = (int32_t)golden_number(&c, "padding_idx", 0);
        }
        size_t n32, n64;
        double *e32 = golden_array(&c, "pe_f32", &n32), *e64 = golden_array(&c, "pe_f64", &n64);
        CHECK(e32 && e64 && n32 == (size_t)n * d && n64 == n32, "%s: arrays", id);
        if (e32 && e64 && n32 == (size_t)n * d && n64 == n32) {
            float *out = malloc(sizeof(float) * n64);
            CHECK_STATUS(pe_sinusoidal_table(out, n, d, &cfg), PE_OK);
            int64_t worst64 = 0, worst32 = 0;
            double worst_abs32 = 0;
            for (size_t t = 0; t < n64; t++) {
                int64_t u = ulps(out[t], (float)e64[t]);
                if (u > worst64) worst64 = u;
                u = ulps(out[t], (float)e32[t]);
                if (u > worst32) worst32 = u;
                double a = fabs(out[t] - e32[t]);
                if (a > worst_abs32) worst_abs32 = a;
            }
            /* angles and sin/cos in double, one rounding: the f64 reference rounded to float, to 1 ulp
             * (libm's last-bit differences can move a rounding) */
            CHECK(worst64 <= 1, "%s: %lld ulps from (float)pe_f64", id, (long long)worst64);
            if (cfg.variant != PE_SINUSOIDAL_TENSOR2TENSOR) {
                /* XLM and Marian compute in numpy float64 and store float32: the same numbers */
                CHECK(worst32 <= 1, "%s: %lld ulps from pe_f32", id, (long long)worst32);
            } else {
                /* FSMT computes in float32: angle error ~ p * 2^-24 */
                CHECK(worst_abs32 <= (n + 1) * 0x1p-23, "%s: %.3g from pe_f32", id, worst_abs32);
            }
            printf("sinusoidal golden %s: %lld ulps vs pe_f64, %lld ulps vs pe_f32\n", id, (long long)worst64,
                   (long long)worst32);
            free(out);
        }
        free(e32);
        free(e64);
        n_cases++;
    }
    golden_free(&doc);
    CHECK(n_cases >= 3, "%d sinusoidal cases", n_cases);
}

/* Vaswani et al.'s d_model = 4 table, values from the formula with libm (not tuned constants). */
static void test_worked_example(void) {
    float pe[3 * 4];
    CHECK_STATUS(pe_sinusoidal_table(pe, 3, 4, NULL), PE_OK);
    for (int p = 0; p < 3; p++) {
        double w1 = 1.0 / pow(10000.0, 2.0 / 4.0); /* 0.01 */
        double want[4] = {sin(p), cos(p), sin(p * w1), cos(p * w1)};
        for (int j = 0; j < 4; j++)
            CHECK(pe[p * 4 + j] == (float)want[j], "PE[%d][%d] = %.9g, want %.9g", p, j, pe[p * 4 + j], want[j]);
    }
    /* and the rounded values as printed: PE[1] ~ [0.841, 0.540, 0.0100, 1.000], PE[2] ~ [0.909, -0.416, 0.0200, 0.9998] */
    const float printed[2][4] = {{0.841f, 0.540f, 0.0100f, 1.000f}, {0.909f, -0.416f, 0.0200f, 0.9998f}};
    for (int p = 1; p <= 2; p++)
        for (int j = 0; j < 4; j++)
            CHECK(fabsf(pe[p * 4 + j] - printed[p - 1][j]) < 6e-4f, "PE[%d][%d] = %g vs printed %g", p, j,
                  pe[p * 4 + j], printed[p - 1][j]);
}

/* Every variant, odd and even d (including > one 256-column chunk), offsets up to 1e6 and a non-default
 * base, against the reference formulas in double. */
static void test_formula(void) {
    const int dims[] = {1, 2, 3, 4, 5, 7, 8, 33, 64, 257, 300, 515};
    const int32_t offsets[] = {0, 1, 999, 1000000, INT32_MAX - 3};
    const double bases[] = {0.0, 10000.0, 500.0};
    int64_t worst = 0;
    for (int v = 0; v < PE_SINUSOIDAL_VARIANT_COUNT; v++)
        for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
            for (size_t oi = 0; oi < sizeof offsets / sizeof *offsets; oi++)
                for (size_t bi = 0; bi < sizeof bases / sizeof *bases; bi++) {
                    int d = dims[di];
                    pe_sinusoidal_config cfg = {0};
                    cfg.variant = v;
                    cfg.offset = offsets[oi];
                    cfg.base = bases[bi];
                    enum {
                        N = 4
                    };
                    float *out = malloc(sizeof(float) * N * (size_t)d);
                    pe_status st = pe_sinusoidal_table(out, N, d, &cfg);
                    if (v == PE_SINUSOIDAL_TENSOR2TENSOR && d < 4) {
                        CHECK_STATUS(st, PE_ERR_SHAPE);
                        free(out);
                        continue;
                    }
                    CHECK_STATUS(st, PE_OK);
                    double base = bases[bi] == 0.0 ? 10000.0 : bases[bi];
                    for (int r = 0; r < N; r++)
                        for (int j = 0; j < d; j++) {
                            float want = (float)ref_pe(v, base, d, (double)cfg.offset + r, j);
                            int64_t u = ulps(out[r * d + j], want);
                            if (u > worst) worst = u;
                        }
                    free(out);
                }
    CHECK(worst <= 1, "formula sweep: worst %lld ulps", (long long)worst);
    /* many positions against libm: the in-house double sin/cos rounds to the same float almost always */
    {
        enum {
            D = 128,
            N = 2000
        };
        float *out = malloc(sizeof(float) * N * D);
        long long mismatches = 0, total = 0;
        int64_t w2 = 0;
        for (int64_t s64 = 0; s64 < 2000000000; s64 += 199999999) {
            const int32_t start = (int32_t)s64;
            pe_sinusoidal_config cfg = {0};
            cfg.offset = start;
            CHECK_STATUS(pe_sinusoidal_table(out, N, D, &cfg), PE_OK);
            for (int r = 0; r < N; r++)
                for (int j = 0; j < D; j++) {
                    float want = (float)ref_pe(PE_SINUSOIDAL_INTERLEAVED, 10000.0, D, (double)start + r, j);
                    int64_t u = ulps(out[r * D + j], want);
                    mismatches += u != 0;
                    total++;
                    if (u > w2) w2 = u;
                }
        }
        free(out);
        CHECK(w2 <= 1 && mismatches * 10000 < total, "vs libm: %lld of %lld differ, worst %lld ulps", mismatches, total,
              (long long)w2);
        printf("sinusoidal vs libm sin/cos rounded to float: %lld of %lld values differ (by <= %lld ulp)\n", mismatches,
               total, (long long)w2);
    }
    /* the odd-d conventions, spelled out */
    float o[5];
    pe_sinusoidal_config cfg = {0};
    cfg.offset = 3;
    pe_sinusoidal_table(o, 1, 5, &cfg);
    CHECK(o[4] == (float)sin(3.0 / pow(10000.0, 4.0 / 5.0)), "interleaved d=5: last column is sin of frequency 2");
    cfg.variant = PE_SINUSOIDAL_HALF;
    pe_sinusoidal_table(o, 1, 5, &cfg);
    CHECK(o[2] == (float)sin(3.0 / pow(10000.0, 4.0 / 5.0)) && o[3] == (float)cos(3.0) &&
              o[4] == (float)cos(3.0 / pow(10000.0, 2.0 / 5.0)),
          "half d=5: 3 sin columns, then 2 cos columns");
    cfg.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
    pe_sinusoidal_table(o, 1, 5, &cfg);
    CHECK(o[4] == 0.0f && o[0] == (float)sin(3.0) && o[2] == (float)cos(3.0), "tensor2tensor d=5: zero last column");
    /* padding_idx zeroes that position's row (FSMT) */
    float t[4 * 8];
    cfg = (pe_sinusoidal_config){0};
    cfg.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
    cfg.use_padding_idx = 1;
    cfg.padding_idx = 1;
    pe_sinusoidal_table(t, 4, 8, &cfg);
    int zero = 1, nonzero = 0;
    for (int j = 0; j < 8; j++) {
        zero &= t[8 + j] == 0.0f;
        nonzero |= t[16 + j] != 0.0f;
    }
    CHECK(zero && nonzero && t[1] == 0.0f && t[4] == 1.0f, "padding row zeroed");
}

static void test_add(void) {
    pe_rng rng = {0x5151};
    const int B = 3, S = 5, D = 301;
    const size_t n = (size_t)B * S * D;
    float *x = malloc(sizeof(float) * n), *x0 = malloc(sizeof(float) * n), *tab = malloc(sizeof(float) * 64 * D);
    for (size_t t = 0; t < n; t++) x0[t] = pe_rng_float(&rng);
    pe_sinusoidal_config cfg = {0};
    cfg.variant = PE_SINUSOIDAL_HALF;
    CHECK_STATUS(pe_sinusoidal_table(tab, 64, D, &cfg), PE_OK);

    /* positions NULL: offset + s */
    cfg.offset = 7;
    memcpy(x, x0, sizeof(float) * n);
    CHECK_STATUS(pe_sinusoidal_add(x, NULL, B, S, D, 0, &cfg), PE_OK);
    int ok = 1;
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < D; j++) {
                size_t t = ((size_t)b * S + s) * D + j;
                ok &= x[t] == x0[t] + tab[(size_t)(7 + s) * D + j];
            }
    CHECK(ok, "add, default positions offset + s");

    /* shared positions (seq,) */
    int32_t pos[5] = {40, 0, 63, 2, 2};
    memcpy(x, x0, sizeof(float) * n);
    CHECK_STATUS(pe_sinusoidal_add(x, pos, B, S, D, 0, &cfg), PE_OK);
    ok = 1;
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < D; j++) {
                size_t t = ((size_t)b * S + s) * D + j;
                ok &= x[t] == x0[t] + tab[(size_t)pos[s] * D + j];
            }
    CHECK(ok, "add, shared positions");

    /* per-batch positions (batch, seq) */
    int32_t pb[15];
    for (int t = 0; t < 15; t++) pb[t] = pe_rng_int(&rng, 0, 63);
    memcpy(x, x0, sizeof(float) * n);
    CHECK_STATUS(pe_sinusoidal_add(x, pb, B, S, D, 1, &cfg), PE_OK);
    ok = 1;
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < D; j++) {
                size_t t = ((size_t)b * S + s) * D + j;
                ok &= x[t] == x0[t] + tab[(size_t)pb[b * S + s] * D + j];
            }
    CHECK(ok, "add, per-batch positions");

    /* a negative position fails before anything is written */
    pb[14] = -1;
    memcpy(x, x0, sizeof(float) * n);
    CHECK_STATUS(pe_sinusoidal_add(x, pb, B, S, D, 1, &cfg), PE_ERR_POSITION);
    CHECK(memcmp(x, x0, sizeof(float) * n) == 0, "x untouched on error");
    free(x);
    free(x0);
    free(tab);
}

static void test_bad_input(void) {
    float out[64];
    int32_t pos[2] = {0, 1};
    pe_sinusoidal_config cfg = {0};
    CHECK_STATUS(pe_sinusoidal_table(NULL, 1, 4, NULL), PE_ERR_NULL);
    CHECK_STATUS(pe_sinusoidal_table(out, 0, 0, NULL), PE_ERR_SHAPE); /* seq_len 0 alone: test_zero_sizes */
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 0, NULL), PE_ERR_SHAPE);
    CHECK_STATUS(pe_sinusoidal_table(out, -1, 4, NULL), PE_ERR_SHAPE);
    cfg.base = -2;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_ERR_BASE);
    cfg.base = NAN;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_ERR_BASE);
    cfg.base = INFINITY;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_ERR_BASE);
    cfg = (pe_sinusoidal_config){0};
    cfg.variant = 3;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_ERR_PAIRING);
    cfg.variant = -1;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_ERR_PAIRING);
    cfg = (pe_sinusoidal_config){0};
    cfg.offset = -1;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_ERR_POSITION);
    cfg.offset = INT32_MAX;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 4, &cfg), PE_ERR_SHAPE);
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 4, &cfg), PE_OK);
    cfg = (pe_sinusoidal_config){0};
    cfg.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
    CHECK_STATUS(pe_sinusoidal_table(out, 1, 3, &cfg), PE_ERR_SHAPE);
    CHECK_STATUS(pe_sinusoidal_add(NULL, pos, 1, 2, 4, 0, NULL), PE_ERR_NULL);
    CHECK_STATUS(pe_sinusoidal_add(out, pos, -1, 2, 4, 0, NULL), PE_ERR_SHAPE);
    CHECK_STATUS(pe_sinusoidal_add(out, pos, 1, -1, 4, 0, NULL), PE_ERR_SHAPE);
    CHECK_STATUS(pe_sinusoidal_add(out, pos, 1, 2, 0, 0, NULL), PE_ERR_SHAPE);
}

/* posenc.h "Sizes": seq_len / batch / seq 0 are no-ops that write nothing (NULL arrays allowed); d_model,
 * the variant's minimum and the config are still checked. */
static void test_zero_sizes(void) {
    float out[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    int32_t neg[2] = {-1, -1};
    pe_sinusoidal_config cfg = {0};
    CHECK_STATUS(pe_sinusoidal_table(out, 0, 4, NULL), PE_OK);
    CHECK_STATUS(pe_sinusoidal_table(NULL, 0, 4, NULL), PE_OK);
    CHECK_STATUS(pe_sinusoidal_add(out, NULL, 0, 2, 4, 0, NULL), PE_OK);
    CHECK_STATUS(pe_sinusoidal_add(out, NULL, 2, 0, 4, 1, NULL), PE_OK);
    CHECK_STATUS(pe_sinusoidal_add(NULL, neg, 0, 2, 4, 1, NULL), PE_OK); /* no position is read */
    int untouched = 1;
    for (int i = 0; i < 8; i++) untouched &= out[i] == 7;
    CHECK(untouched, "sinusoidal wrote with a zero count");
    CHECK_STATUS(pe_sinusoidal_table(out, 0, 0, NULL), PE_ERR_SHAPE);
    CHECK_STATUS(pe_sinusoidal_add(out, NULL, 0, 2, 0, 0, NULL), PE_ERR_SHAPE);
    cfg.base = -1;
    CHECK_STATUS(pe_sinusoidal_table(out, 0, 4, &cfg), PE_ERR_BASE);
    cfg = (pe_sinusoidal_config){0};
    cfg.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
    CHECK_STATUS(pe_sinusoidal_add(out, NULL, 0, 0, 3, 0, &cfg), PE_ERR_SHAPE);
}

int main(void) {
    test_zero_sizes();
    test_golden();
    test_worked_example();
    test_formula();
    test_add();
    test_bad_input();
    return pe_test_report("test_sinusoidal");
}
