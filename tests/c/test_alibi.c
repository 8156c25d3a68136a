/* test_alibi.c — ALiBi slopes and bias tensors against BLOOM's build_alibi_tensor (golden vectors) and the
 * formulas, plus the causal / decode offset convention and bad input. */
#include "posenc.h"
#include "test_util.h"
#include "golden.h"

#include <stdlib.h>
#include <string.h>

/* BLOOM's slope schedule, straight from build_alibi_tensor, in double. */
static double bloom_slope(int n, int h) {
    int n0 = 1 << (int)floor(log2((double)n));
    double base = pow(2.0, -pow(2.0, -(log2((double)n0) - 3.0)));
    if (h < n0) return pow(base, h + 1);
    double extra = pow(2.0, -pow(2.0, -(log2(2.0 * n0) - 3.0)));
    return pow(extra, 2 * (h - n0) + 1);
}

static void test_golden(void) {
    golden_doc doc;
    if (golden_load(&doc, "alibi.json") != 0) {
        CHECK(0, "alibi.json not loaded");
        return;
    }
    golden_case c = {0};
    int n_slopes = 0, n_bias = 0;
    int64_t worst_f32_ulps = 0, worst_bias_ulps = 0;
    double worst_f64_rel = 0;
    char kind[32], id[128];
    while (golden_next_case(&doc, &c)) {
        golden_string(&c, "kind", kind, sizeof kind);
        golden_string(&c, "id", id, sizeof id);
        int heads = (int)golden_number(&c, "num_heads", 0);
        if (strcmp(kind, "slopes") == 0) {
            size_t n32, n64;
            double *e32 = golden_array(&c, "slopes_f32", &n32), *e64 = golden_array(&c, "slopes_f64", &n64);
            CHECK(e32 && e64 && (int)n32 == heads && (int)n64 == heads, "%s: slopes arrays", id);
            if (e32 && e64 && (int)n64 == heads && (int)n32 == heads) {
                float *s = malloc(sizeof(float) * (size_t)heads);
                CHECK_STATUS(pe_alibi_slopes(s, heads), PE_OK);
                int exact = 1;
                for (int h = 0; h < heads; h++) {
                    /* computed in double, rounded once: equal to the f64 reference rounded to float */
                    exact &= s[h] == (float)e64[h];
                    double rel = fabs((double)s[h] - e64[h]) / e64[h];
                    if (rel > worst_f64_rel) worst_f64_rel = rel;
                    int64_t u = ulps(s[h], (float)e32[h]);
                    if (u > worst_f32_ulps) worst_f32_ulps = u;
                }
                CHECK(exact, "%s: slopes == (float)slopes_f64", id);
                free(s);
            }
            free(e32);
            free(e64);
            n_slopes++;
        } else if (strcmp(kind, "bias") == 0) {
            size_t nm, n32, n64;
            double *mask_d = golden_array(&c, "attention_mask", &nm);
            double *e32 = golden_array(&c, "alibi_f32", &n32), *e64 = golden_array(&c, "alibi_f64", &n64);
            size_t nshape;
            double *shape = golden_array(&c, "shape", &nshape);
            CHECK(mask_d && e32 && e64 && shape && nshape == 3, "%s: fields", id);
            if (mask_d && e32 && e64 && shape && nshape == 3) {
                int seq = (int)shape[2];
                int batch = (int)shape[0] / heads;
                CHECK((size_t)batch * (size_t)seq == nm && n64 == (size_t)batch * heads * seq && n32 == n64,
                      "%s: sizes", id);
                int32_t *mask = malloc(sizeof(int32_t) * nm);
                for (size_t t = 0; t < nm; t++) mask[t] = (int32_t)mask_d[t];
                float *bias = malloc(sizeof(float) * n64);
                CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, batch, heads, seq), PE_OK);
                int exact = 1;
                for (size_t t = 0; t < n64; t++) {
                    exact &= bias[t] == (float)e64[t];
                    int64_t u = ulps(bias[t], (float)e32[t]);
                    if (u > worst_bias_ulps) worst_bias_ulps = u;
                }
                CHECK(exact, "%s: bias == (float)alibi_f64", id);
                /* explicit slopes give the same thing */
                float *sl = malloc(sizeof(float) * (size_t)heads), *bias2 = malloc(sizeof(float) * n64);
                pe_alibi_slopes(sl, heads);
                CHECK_STATUS(pe_alibi_bias_from_mask(bias2, sl, mask, batch, heads, seq), PE_OK);
                CHECK(memcmp(bias, bias2, sizeof(float) * n64) == 0, "%s: NULL slopes == standard slopes", id);
                free(sl);
                free(bias2);
                free(mask);
                free(bias);
            }
            free(mask_d);
            free(e32);
            free(e64);
            free(shape);
            n_bias++;
        }
    }
    golden_free(&doc);
    CHECK(n_slopes >= 1 && n_bias >= 1, "cases: %d slopes, %d bias", n_slopes, n_bias);
    /* BLOOM's float32 path rounds the base to float first, then powers it in float (torch.pow): its own
     * slopes_f32 sit up to 6 ulps from slopes_f64 rounded (n = 32). Ours are the rounded f64 values. */
    CHECK(worst_f32_ulps <= 8, "slopes vs slopes_f32: %lld ulps", (long long)worst_f32_ulps);
    CHECK(worst_bias_ulps <= 4, "bias vs alibi_f32: %lld ulps", (long long)worst_bias_ulps);
    printf("alibi golden: %d slope cases, %d bias cases; slopes worst rel err vs f64 %.3g, "
           "worst ulps vs f32 reference: slopes %lld, bias %lld\n",
           n_slopes, n_bias, worst_f64_rel, (long long)worst_f32_ulps, (long long)worst_bias_ulps);
}

static void test_slopes_formula(void) {
    /* every head count up to 300 against BLOOM's formula in double; powers of two are exact powers of 2 */
    float s[300];
    double worst = 0;
    for (int n = 1; n <= 300; n++) {
        CHECK_STATUS(pe_alibi_slopes(s, n), PE_OK);
        for (int h = 0; h < n; h++) {
            double want = bloom_slope(n, h);
            double rel = fabs(s[h] - want) / want;
            if (rel > worst) worst = rel;
        }
    }
    CHECK(worst <= 0x1p-24 * 1.0001, "slopes n=1..300 worst rel err %.3g (half ulp 5.96e-8)", worst);
    pe_alibi_slopes(s, 8);
    for (int h = 0; h < 8; h++) CHECK(s[h] == ldexpf(1.0f, -(h + 1)), "n=8 slope %d = %g", h, s[h]);
    /* n = 12: the 8 of n0 = 8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (odd powers of the 16-head base) */
    pe_alibi_slopes(s, 12);
    for (int k = 0; k < 4; k++) CHECK(s[8 + k] == (float)exp2(-0.5 * (2 * k + 1)), "n=12 extra slope %d", k);
}

static void test_bias(void) {
    const int H = 3, Q = 4, K = 7;
    float slopes[3] = {0.5f, 0.25f, -0.125f};
    float bias[3 * 4 * 7];
    CHECK_STATUS(pe_alibi_bias(bias, slopes, H, Q, K, 0), PE_OK);
    int ok = 1;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < Q; i++)
            for (int j = 0; j < K; j++) ok &= bias[(h * Q + i) * K + j] == slopes[h] * (float)(j - (K - Q + i));
    CHECK(ok, "non-causal bias = slope * (j - (k_len - q_len + i))");

    CHECK_STATUS(pe_alibi_bias(bias, slopes, H, Q, K, 1), PE_OK);
    ok = 1;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < Q; i++)
            for (int j = 0; j < K; j++) {
                float v = bias[(h * Q + i) * K + j];
                int ip = K - Q + i;
                ok &= j > ip ? (isinf(v) && v < 0) : v == slopes[h] * (float)(j - ip);
            }
    CHECK(ok, "causal bias: -inf exactly where j > k_len - q_len + i");
    /* decode: one query at the last position sees every key; last key gets bias 0 */
    float row[9];
    CHECK_STATUS(pe_alibi_bias(row, slopes, 1, 1, 9, 1), PE_OK);
    ok = 1;
    for (int j = 0; j < 9; j++) ok &= row[j] == 0.5f * (float)(j - 8);
    CHECK(ok && row[8] == 0.0f, "decode row");
    /* q_len > k_len, causal: query 0 sits at position -1, fully masked */
    float b2[3 * 2];
    CHECK_STATUS(pe_alibi_bias(b2, slopes, 1, 3, 2, 1), PE_OK);
    CHECK(isinf(b2[0]) && isinf(b2[1]) && b2[2] == 0.0f && isinf(b2[3]) && b2[4] == -0.5f && b2[5] == 0.0f,
          "q_len > k_len causal: %g %g | %g %g | %g %g", b2[0], b2[1], b2[2], b2[3], b2[4], b2[5]);
    /* NULL slopes = standard slopes; a long row exercises the vector loop and tail */
    enum {
        LK = 1031
    };
    static float a[4 * 2 * LK], b[4 * 2 * LK];
    float std_slopes[4];
    pe_alibi_slopes(std_slopes, 4);
    CHECK_STATUS(pe_alibi_bias(a, NULL, 4, 2, LK, 1), PE_OK);
    CHECK_STATUS(pe_alibi_bias(b, std_slopes, 4, 2, LK, 1), PE_OK);
    CHECK(memcmp(a, b, sizeof a) == 0, "NULL slopes == pe_alibi_slopes");
    ok = 1;
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < LK; j++) {
                float v = a[(h * 2 + i) * LK + j];
                int ip = LK - 2 + i;
                ok &= j > ip ? isinf(v) : v == std_slopes[h] * (float)(j - ip);
            }
    CHECK(ok, "long rows (k_len %d)", LK);
    /* the mask form with a full mask is the per-row shift of the (j - i) form: softmax-equivalent */
    int32_t mask[LK];
    for (int j = 0; j < LK; j++) mask[j] = 1;
    static float m[4 * LK];
    CHECK_STATUS(pe_alibi_bias_from_mask(m, NULL, mask, 1, 4, LK), PE_OK);
    ok = 1;
    for (int h = 0; h < 4; h++)
        for (int j = 0; j < LK; j++) ok &= m[h * LK + j] == std_slopes[h] * (float)j;
    CHECK(ok, "mask form, full mask: slope * j");
}

static void test_bad_input(void) {
    float s[4], bias[64];
    int32_t mask[4] = {1, 1, 0, 1};
    CHECK_STATUS(pe_alibi_slopes(NULL, 4), PE_ERR_NULL);
    CHECK_STATUS(pe_alibi_slopes(s, 0), PE_ERR_HEADS);
    CHECK_STATUS(pe_alibi_slopes(s, -3), PE_ERR_HEADS);
    CHECK_STATUS(pe_alibi_bias(NULL, NULL, 1, 1, 1, 0), PE_ERR_NULL);
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 0, 1, 1, 0), PE_ERR_HEADS);
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 1, -1, 1, 0), PE_ERR_SHAPE); /* q_len 0 is a no-op: test_zero_sizes */
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 1, 1, -1, 0), PE_ERR_SHAPE);
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 1, INT32_MAX, INT32_MAX, 0), PE_ERR_SHAPE);
    float bad[2] = {0.5f, NAN};
    CHECK_STATUS(pe_alibi_bias(bias, bad, 2, 2, 2, 0), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, NULL, 1, 1, 4), PE_ERR_NULL);
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, -1, 1, 4), PE_ERR_SHAPE);
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, 1, 0, 4), PE_ERR_HEADS);
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, bad, mask, 1, 2, 4), PE_ERR_FIELD_VALUE);
    mask[2] = 2;
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, 1, 1, 4), PE_ERR_FIELD_VALUE);
}

/* posenc.h "Sizes": counts of 0 are no-ops that write nothing (NULL arrays allowed); structural sizes
 * (n_heads) are still checked. */
static void test_zero_sizes(void) {
    float bias[4] = {7, 7, 7, 7};
    int32_t mask[4] = {1, 1, 1, 1};
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 2, 0, 3, 1), PE_OK);
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 2, 3, 0, 0), PE_OK);
    CHECK_STATUS(pe_alibi_bias(NULL, NULL, 2, 0, 0, 0), PE_OK);
    CHECK(bias[0] == 7 && bias[3] == 7, "alibi_bias wrote with q_len or k_len 0");
    CHECK_STATUS(pe_alibi_bias(bias, NULL, 0, 0, 3, 0), PE_ERR_HEADS);
    float bad[2] = {0.5f, NAN};
    CHECK_STATUS(pe_alibi_bias(NULL, bad, 2, 0, 3, 0), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, 0, 2, 4), PE_OK);
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, 2, 2, 0), PE_OK);
    CHECK_STATUS(pe_alibi_bias_from_mask(NULL, NULL, NULL, 0, 2, 4), PE_OK);
    CHECK(bias[0] == 7 && bias[3] == 7, "alibi_bias_from_mask wrote with batch or seq 0");
    CHECK_STATUS(pe_alibi_bias_from_mask(bias, NULL, mask, 0, 0, 4), PE_ERR_HEADS);
}

int main(void) {
    test_zero_sizes();
    test_golden();
    test_slopes_formula();
    test_bias();
    test_bad_input();
    return pe_test_report("test_alibi");
}
