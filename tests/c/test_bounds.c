/* test_bounds.c — what the kernels refuse so that nothing they accept goes wrong (issue 10):
 *   - angles: configurations whose angle position * frequency could leave PE_MAX_ANGLE for some int32
 *     position are refused at pe_rope_init / pe_sinusoidal_*, and accepted ones at the bound are exact;
 *   - scales: attention factors and extra scales that would make the tables non-finite are refused;
 *   - sizes: element counts whose product passes 2^64 (so even uint64_t arithmetic would wrap) are refused
 *     instead of being written through;
 *   - a random sweep of configurations in strict mode: whatever is accepted yields finite, bounded tables.
 */
#include "posenc.h"
#include "../../c/src/pe_math.h"
#include "../../c/src/pe_strict.h"
#include "test_util.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

static pe_rope_config cfg_of(int32_t head_dim, int32_t type, double base, double factor) {
    pe_rope_config c = {0};
    c.head_dim = head_dim;
    c.type = type;
    c.base = base;
    c.factor = factor;
    return c;
}

static pe_status init_with(pe_rope *rope, pe_rope_config c) { return pe_rope_init(rope, &c); }

/* The examples, each refused with the status that names its field. */
static void test_rope_refusals(void) {
    pe_rope rope;
    /* linear factor 1e-10: inv_freq 1e10, position 2147483647 gave cos ~ 4.8e18 */
    CHECK_STATUS(init_with(&rope, cfg_of(2, PE_ROPE_LINEAR, 0, 1e-10)), PE_ERR_FACTOR);
    /* linear factor 1e-309 (subnormal): inv_freq = inf, the angle NaN (UBSan: NaN -> int) */
    CHECK_STATUS(init_with(&rope, cfg_of(2, PE_ROPE_LINEAR, 0, 1e-309)), PE_ERR_FACTOR);
    CHECK_STATUS(init_with(&rope, cfg_of(2, PE_ROPE_LINEAR, 5e-324, 1e-309)), PE_ERR_FACTOR);
    /* base 5e-324: theta_i = 1 / base^(2i/d) overflows for i >= 1 */
    CHECK_STATUS(init_with(&rope, cfg_of(64, PE_ROPE_DEFAULT, 5e-324, 0)), PE_ERR_BASE);
    CHECK_STATUS(init_with(&rope, cfg_of(64, PE_ROPE_PROPORTIONAL, 5e-324, 0)), PE_ERR_BASE);
    /* head_dim 2 has only theta_0 = base^0 = 1: base 5e-324 is then harmless and accepted */
    CHECK_STATUS(init_with(&rope, cfg_of(2, PE_ROPE_DEFAULT, 5e-324, 0)), PE_OK);
    /* the bound itself: linear factor 1/2 doubles theta_0 = 1 to exactly PE_ROPE_MAX_INV_FREQ */
    CHECK_STATUS(init_with(&rope, cfg_of(8, PE_ROPE_LINEAR, 0, 0.5)), PE_OK);
    CHECK_STATUS(init_with(&rope, cfg_of(8, PE_ROPE_LINEAR, 0, 0.4999)), PE_ERR_FACTOR);
    /* dynamic NTK with a factor so large that f - (f - 1) rounds to 0: base' = 0, theta = inf */
    pe_rope_config d = cfg_of(8, PE_ROPE_DYNAMIC, 0, 1e17);
    d.max_position_embeddings = 16;
    CHECK_STATUS(init_with(&rope, d), PE_ERR_FACTOR);
    /* longrope: a tiny long factor is refused even though the short set is fine */
    double sf[4] = {1, 1, 1, 1}, lf[4] = {1, 1e-12, 1, 1};
    pe_rope_config lr = cfg_of(8, PE_ROPE_LONGROPE, 0, 0);
    lr.short_factor = sf;
    lr.long_factor = lf;
    lr.max_position_embeddings = 4096;
    lr.original_max_position_embeddings = 1024;
    CHECK_STATUS(init_with(&rope, lr), PE_ERR_FACTOR);
    lf[1] = 1;
    CHECK_STATUS(init_with(&rope, lr), PE_OK);
    /* ... and original_max 1 makes the derived factor sqrt(1 + ln f / ln 1) infinite */
    lr.original_max_position_embeddings = 1;
    CHECK_STATUS(init_with(&rope, lr), PE_ERR_ATTENTION_FACTOR);

    /* yarn mscale 1e300: attention factor (0.1 * 1e300 * ln 4 + 1) / (0.1 * ln 4 + 1) ~ 1e299 gave Infinity */
    pe_rope_config y = cfg_of(64, PE_ROPE_YARN, 0, 4);
    y.original_max_position_embeddings = 2048;
    y.mscale = 1e300;
    y.mscale_all_dim = 1;
    CHECK_STATUS(init_with(&rope, y), PE_ERR_ATTENTION_FACTOR);
    y.mscale = 1;
    y.mscale_all_dim = 1e300; /* the inverse ratio: tiny but finite tables, accepted */
    CHECK_STATUS(init_with(&rope, y), PE_OK);
    CHECK(rope.attention_scaling > 0 && rope.attention_scaling < 1e-290, "yarn tiny factor %g", rope.attention_scaling);
    y.mscale = 0;
    y.mscale_all_dim = 0;
    y.attention_factor = 1e200; /* finite and > 0, but scale * cos would overflow float32 */
    CHECK_STATUS(init_with(&rope, y), PE_ERR_ATTENTION_FACTOR);
    y.attention_factor = PE_ROPE_MAX_SCALE;
    CHECK_STATUS(init_with(&rope, y), PE_OK);

    /* extra_scale: the product with the attention factor must stay <= PE_ROPE_MAX_SCALE */
    CHECK_STATUS(init_with(&rope, cfg_of(8, PE_ROPE_DEFAULT, 0, 0)), PE_OK);
    float cs[4], sn[4];
    const int32_t pos[1] = {3};
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, 1, PE_SEQ_LEN_NONE, 1e300), PE_ERR_SCALE);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, 1, PE_SEQ_LEN_NONE, 1e39), PE_ERR_SCALE);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, 1, PE_SEQ_LEN_NONE, -PE_ROPE_MAX_SCALE), PE_OK);
    pe__strict_check(PE_OK, cs, 4, PE__STRICT_FINITE, 0, "cos at -2^127");
    CHECK(cs[0] == (float)(-PE_ROPE_MAX_SCALE * cos(3.0)), "cos scaled by -2^127: %g", (double)cs[0]);
}

/* At the bound every int32 position is still exact: inv_freq 2 (linear factor 1/2), position INT32_MAX,
 * angle 2 * (2^31 - 1) = 4294967294 rad, against libm's double cos/sin of that exact double. */
static void test_rope_at_the_bound(void) {
    pe_rope rope;
    CHECK_STATUS(init_with(&rope, cfg_of(8, PE_ROPE_LINEAR, 0, 0.5)), PE_OK);
    CHECK(rope.inv_freq[0] == PE_ROPE_MAX_INV_FREQ, "inv_freq[0] %g", rope.inv_freq[0]);
    const int32_t pos[4] = {INT32_MAX, INT32_MAX - 1, 1 << 30, 123456789};
    float cs[16], sn[16];
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, 4, PE_SEQ_LEN_NONE, 1.0), PE_OK);
    double worst = 0;
    for (int p = 0; p < 4; p++)
        for (int i = 0; i < rope.n_freq; i++) {
            const double a = (double)pos[p] * rope.inv_freq[i];
            CHECK(a < PE_MAX_ANGLE, "angle %g", a);
            worst = fmax(worst, fabs(cs[p * rope.n_freq + i] - cos(a)));
            worst = fmax(worst, fabs(sn[p * rope.n_freq + i] - sin(a)));
        }
    /* float32 rounding (6e-8) plus the polynomial (~1 ulp): far from the 1e18 of an unreduced angle */
    CHECK(worst < 2e-7, "worst |cos/sin - libm| at the bound %g", worst);
}

/* base == 1 (posenc.h): every frequency is 1, which every type but yarn handles (yarn's correction range
 * divides by ln(base)). */
static void test_base_one(void) {
    pe_rope rope;
    const int32_t types[] = {PE_ROPE_DEFAULT, PE_ROPE_LINEAR, PE_ROPE_DYNAMIC, PE_ROPE_LLAMA3, PE_ROPE_PROPORTIONAL};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
        pe_rope_config c = cfg_of(8, types[t], 1.0, 2.0);
        c.max_position_embeddings = 64;
        c.original_max_position_embeddings = 64;
        c.low_freq_factor = 1;
        c.high_freq_factor = 4;
        CHECK_STATUS(init_with(&rope, c), PE_OK);
        float cs[4 * 3], sn[4 * 3];
        const int32_t pos[3] = {0, 7, INT32_MAX};
        CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, 3, 1000, 1.0), PE_OK);
        pe__strict_check(PE_OK, cs, (size_t)3 * rope.n_freq, PE__STRICT_FINITE, 1.0 + 1e-6, "base 1 cos");
        pe__strict_check(PE_OK, sn, (size_t)3 * rope.n_freq, PE__STRICT_FINITE, 1.0 + 1e-6, "base 1 sin");
    }
    pe_rope_config y = cfg_of(8, PE_ROPE_YARN, 1.0, 4.0);
    y.original_max_position_embeddings = 64;
    CHECK_STATUS(init_with(&rope, y), PE_ERR_BASE);
}

static void test_sinusoidal_bounds(void) {
    float out[2 * 8];
    pe_sinusoidal_config c = {0};
    /* sinusoidal(2, 8, base 5e-324) had six non-finite values */
    c.base = 5e-324;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_ERR_BASE);
    CHECK_STATUS(pe_sinusoidal_add(out, NULL, 1, 2, 8, 0, &c), PE_ERR_BASE);
    c.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_ERR_BASE);
    /* d_model 8, interleaved: the last frequency is 1 / base^(6/8); base 0.4 gives 1.99 (accepted), 0.39
     * gives 2.03 (refused). tensor2tensor's last is 1 / base: 0.5 accepted, 0.49 refused. */
    c.variant = PE_SINUSOIDAL_INTERLEAVED;
    c.base = 0.39;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_ERR_BASE);
    c.base = 0.4;
    c.offset = INT32_MAX - 1;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_OK);
    double worst = 0;
    for (int r = 0; r < 2; r++)
        for (int j = 0; j < 8; j++) {
            const double a = (double)(INT32_MAX - 1 + r) / pow(0.4, (double)(2 * (j / 2)) / 8.0);
            worst = fmax(worst, fabs(out[r * 8 + j] - (j % 2 ? cos(a) : sin(a))));
        }
    CHECK(worst < 1e-7, "sinusoidal at the bound: worst %g", worst);
    c.offset = 0;
    c.variant = PE_SINUSOIDAL_TENSOR2TENSOR;
    c.base = 0.49;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_ERR_BASE);
    c.base = 0.5;
    CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_OK);
    /* base 1: every frequency 1, accepted for every variant */
    for (int32_t v = 0; v < PE_SINUSOIDAL_VARIANT_COUNT; v++) {
        c.variant = v;
        c.base = 1.0;
        CHECK_STATUS(pe_sinusoidal_table(out, 2, 8, &c), PE_OK);
        pe__strict_check(PE_OK, out, 16, PE__STRICT_FINITE, 1.0, "sinusoidal base 1");
        CHECK(out[8] == (float)sin(1.0), "base 1, position 1, column 0: %g", (double)out[8]);
    }
}

/* Products of three or four int32 sizes that wrap even in uint64_t (here exactly 2^64, which wraps to 0)
 * must be refused before anything is written: the buffers below are tiny, so a write would trip ASan. */
static void test_sizes_that_wrap(void) {
    float buf[16] = {0};
    pe_rope rope;
    CHECK_STATUS(init_with(&rope, cfg_of(1024, PE_ROPE_DEFAULT, 0, 0)), PE_OK);
    /* 2^22 * 2^22 * 2^10 * 1024 = 2^64 */
    const pe_rope_apply_config ac = {.batch = 1 << 22, .seq = 1 << 22, .heads = 1 << 10};
    CHECK_STATUS(pe_rope_apply(&rope, buf, buf, buf, &ac), PE_ERR_SHAPE);
    /* 2^22 * 2^22 * 2^20 = 2^64 */
    CHECK_STATUS(pe_sinusoidal_add(buf, NULL, 1 << 22, 1 << 22, 1 << 20, 0, NULL), PE_ERR_SHAPE);
    const pe_learned_add_config lc = {.batch = 1 << 22, .seq = 1 << 22, .d_model = 1 << 20, .n_rows = 1 << 22};
    CHECK_STATUS(pe_learned_add(buf, buf, NULL, &lc), PE_ERR_SHAPE);
    CHECK_STATUS(pe_alibi_bias(buf, NULL, 1 << 22, 1 << 21, 1 << 21, 0), PE_ERR_SHAPE);
    int32_t mask[4] = {1, 1, 1, 1};
    CHECK_STATUS(pe_alibi_bias_from_mask(buf, NULL, mask, 1 << 22, 1 << 20, 1 << 22), PE_ERR_SHAPE);
    /* attention: (B, H, q_len, k_len) weights at 2^64 are refused, the same shape without weights too
     * (q alone is B * H * q_len * D = 2^22 * 2^10 * 2^22 * 2^10) */
    pe_attention_config at = {0};
    at.batch = 1 << 22;
    at.heads = 1 << 10;
    at.q_len = 1 << 22;
    at.k_len = 1 << 10;
    at.head_dim = 1 << 10;
    size_t ns = 0;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &at), PE_ERR_SHAPE);
    CHECK_STATUS(pe_attention(buf, buf, buf, buf, buf, NULL, 0, &at), PE_ERR_SHAPE);
    for (int i = 0; i < 16; i++) CHECK(buf[i] == 0.0f, "buf[%d] written", i);
}

/* Random configurations (log-uniform bases and factors, every type, both pairings) in strict mode: any that
 * pe_rope_init accepts gives finite tables with |v| <= |attention scale| at the extreme positions. */
static void test_random_configs_strict(void) {
    pe_rng rng = {20261201};
    int accepted = 0, refused = 0;
    for (int t = 0; t < 3000; t++) {
        const double u = (double)(pe_rng_next(&rng) >> 11) * 0x1p-53, w = (double)(pe_rng_next(&rng) >> 11) * 0x1p-53;
        pe_rope_config c = {0};
        c.head_dim = 2 * pe_rng_int(&rng, 1, 64);
        c.type = pe_rng_int(&rng, 0, PE_ROPE_TYPE_COUNT - 1);
        c.pairing = pe_rng_int(&rng, 0, 1);
        c.base = pow(10.0, -6.0 + 14.0 * u);  /* 1e-6 .. 1e8 */
        c.factor = pow(10.0, -4.0 + 8.0 * w); /* 1e-4 .. 1e4 */
        c.max_position_embeddings = pe_rng_int(&rng, 1, 1 << 20);
        c.original_max_position_embeddings = pe_rng_int(&rng, 1, c.max_position_embeddings);
        c.low_freq_factor = 1;
        c.high_freq_factor = 4;
        if (pe_rng_int(&rng, 0, 3) == 0) c.mscale = pow(10.0, -3.0 + 6.0 * u), c.mscale_all_dim = 1;
        double sf[PE_ROPE_MAX_FREQ], lf[PE_ROPE_MAX_FREQ];
        for (int i = 0; i < c.head_dim / 2; i++) {
            sf[i] = pow(10.0, -1.0 + 2.0 * (double)(pe_rng_next(&rng) >> 11) * 0x1p-53);
            lf[i] = pow(10.0, -1.0 + 3.0 * (double)(pe_rng_next(&rng) >> 11) * 0x1p-53);
        }
        c.short_factor = sf;
        c.long_factor = lf;
        pe_rope rope;
        if (pe_rope_init(&rope, &c) != PE_OK) {
            refused++;
            continue;
        }
        accepted++;
        const int32_t pos[4] = {0, 1, INT32_MAX - pe_rng_int(&rng, 0, 1000), INT32_MAX};
        const int n = rope.n_freq;
        float *cs = malloc(sizeof(float) * 4 * (size_t)n), *sn = malloc(sizeof(float) * 4 * (size_t)n);
        const double bound = fabs(rope.attention_scaling) * (1.0 + 1e-6);
        const int64_t seq_lens[3] = {PE_SEQ_LEN_NONE, PE_SEQ_LEN_FROM_POSITIONS, (int64_t)pe_rng_int(&rng, 1, 1 << 30)};
        for (int s = 0; s < 3; s++) {
            pe_status st = pe_rope_cos_sin(cs, sn, &rope, pos, 4, seq_lens[s], 1.0);
            CHECK(st == PE_OK, "accepted config refused at cos_sin: %s", pe_status_string(st));
            pe__strict_check(st, cs, 4 * (size_t)n, PE__STRICT_FINITE, bound, "pe_rope_cos_sin cos");
            pe__strict_check(st, sn, 4 * (size_t)n, PE__STRICT_FINITE, bound, "pe_rope_cos_sin sin");
        }
        free(cs);
        free(sn);
    }
    CHECK(accepted > 1000 && refused > 100, "sweep: %d accepted, %d refused", accepted, refused);
    printf("  strict sweep: %d random configs accepted (tables finite and bounded), %d refused\n", accepted, refused);
}

/* pe_math.h's e^x takes any float: no integer step can overflow (UBSan aborts this binary if one does). */
static void test_exp_any_input(void) {
    CHECK(pe__exp1(NAN) == 0.0f, "e^NaN -> 0");
    CHECK(pe__exp1(-INFINITY) == 0.0f, "e^-inf -> 0");
    CHECK(pe__exp1(-88.0f) == 0.0f && pe__exp1(-1e30f) == 0.0f, "below -87 -> 0");
    const float sat = pe__exp1(PE__EXP_MAX);
    CHECK(isfinite(sat) && fabs(sat / exp(88.0) - 1.0) < 1e-6, "e^88 %g", (double)sat);
    CHECK(pe__exp1(INFINITY) == sat && pe__exp1(1e30f) == sat && pe__exp1(89.0f) == sat, "saturates at e^88");
    double worst = 0;
    for (int i = 0; i <= 175000; i++) {
        const float x = -87.0f + 0.001f * (float)i;
        if (x > PE__EXP_MAX) break; /* past 88 it saturates by design */
        worst = fmax(worst, fabs(pe__exp1(x) / exp((double)x) - 1.0));
    }
    CHECK(worst < 3e-7, "e^x relative error on [-87, 88] %g", worst); /* ~2 ulp of float32 */
}

/* Logits that overflow float32 (q.k of 1e30-sized vectors) are outside pe_attention's contract (finite
 * scale * q.k), but must still be well-defined: no UB in e^x (the model with 9.7e35 weights), a
 * status, finite output. */
static void test_attention_overflowing_logits(void) {
    enum {
        S = 5,
        D = 4
    };
    float q[S * D], k[S * D], v[S * D], out[S * D], w[S * S];
    for (int i = 0; i < S * D; i++) {
        q[i] = (i % 3 ? 1e30f : -1e30f);
        k[i] = (i % 2 ? 9.7e35f : -9.7e35f);
        v[i] = 0.5f;
    }
    pe_attention_config c = {0};
    c.batch = 1;
    c.heads = 1;
    c.q_len = S;
    c.k_len = S;
    c.head_dim = D;
    c.causal = 1;
    CHECK_STATUS(pe_attention(out, w, q, k, v, NULL, 0, &c), PE_OK);
    for (int i = 0; i < S * D; i++) CHECK(isfinite(out[i]), "out[%d] = %g", i, (double)out[i]);
}

/* Every status has its own message, and the messages carry the header's bounds (status.c stringizes them). */
static void test_status_strings(void) {
    for (int s = 0; s < PE_STATUS_COUNT; s++)
        CHECK(strcmp(pe_status_string((pe_status)s), "unknown status") != 0, "status %d has no message", s);
    CHECK(strcmp(pe_status_string(PE_STATUS_COUNT), "unknown status") == 0, "past the end");
    CHECK(strstr(pe_status_string(PE_ERR_HEAD_DIM), "[2, 1024]") != NULL, "%s", pe_status_string(PE_ERR_HEAD_DIM));
    CHECK(strstr(pe_status_string(PE_ERR_ATTENTION_FACTOR), "2^127") != NULL, "%s",
          pe_status_string(PE_ERR_ATTENTION_FACTOR));
}

int main(void) {
    test_status_strings();
    test_exp_any_input();
    test_attention_overflowing_logits();
    test_rope_refusals();
    test_rope_at_the_bound();
    test_base_one();
    test_sinusoidal_bounds();
    test_sizes_that_wrap();
    test_random_configs_strict();
    return pe_test_report("test_bounds");
}
