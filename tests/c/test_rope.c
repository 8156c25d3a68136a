/* test_rope.c — native checks of the RoPE kernels against a naive double-precision reference.
 * (Golden vectors from transformers are checked by the JS suite on both wasm builds.) */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static pe_rope_config base_config(int32_t head_dim) {
    pe_rope_config c = {0};
    c.head_dim = head_dim;
    return c;
}

static pe_status init_with(pe_rope_config c) {
    pe_rope rope;
    return pe_rope_init(&rope, &c);
}

static void test_validation(void) {
    pe_rope rope;
    pe_rope_config c = base_config(64);
    CHECK_STATUS(pe_rope_init(NULL, &c), PE_ERR_NULL);
    CHECK_STATUS(pe_rope_init(&rope, NULL), PE_ERR_NULL);
    CHECK_STATUS(init_with(c), PE_OK);

    int32_t bad_heads[] = {0, -2, 7, 1026};
    for (size_t i = 0; i < sizeof bad_heads / sizeof *bad_heads; i++)
        CHECK_STATUS(init_with(base_config(bad_heads[i])), PE_ERR_HEAD_DIM);

    c = base_config(64);
    c.rotary_dim = 33;
    CHECK_STATUS(init_with(c), PE_ERR_ROTARY_DIM);
    c = base_config(64);
    c.rotary_dim = 66;
    CHECK_STATUS(init_with(c), PE_ERR_ROTARY_DIM);
    c = base_config(64);
    c.rotary_dim = -2;
    CHECK_STATUS(init_with(c), PE_ERR_ROTARY_DIM);
    c = base_config(64);
    c.base = -1.0;
    CHECK_STATUS(init_with(c), PE_ERR_BASE);
    c = base_config(64);
    c.base = NAN;
    CHECK_STATUS(init_with(c), PE_ERR_BASE);
    c = base_config(64);
    c.base = INFINITY;
    CHECK_STATUS(init_with(c), PE_ERR_BASE);
    c = base_config(64);
    c.type = 99;
    CHECK_STATUS(init_with(c), PE_ERR_ROPE_TYPE);
    c = base_config(64);
    c.type = -1;
    CHECK_STATUS(init_with(c), PE_ERR_ROPE_TYPE);
    c = base_config(64);
    c.pairing = 2;
    CHECK_STATUS(init_with(c), PE_ERR_PAIRING);
    c = base_config(64);
    c.type = PE_ROPE_LINEAR;
    CHECK_STATUS(init_with(c), PE_ERR_MISSING_FIELD);
    c.factor = -2.0;
    CHECK_STATUS(init_with(c), PE_ERR_FACTOR);
    c.factor = 2.0;
    CHECK_STATUS(init_with(c), PE_OK);
    c = base_config(64);
    c.type = PE_ROPE_DYNAMIC;
    c.factor = 2.0;
    CHECK_STATUS(init_with(c), PE_ERR_MISSING_FIELD);
    c.max_position_embeddings = 2048;
    CHECK_STATUS(init_with(c), PE_OK);
    c = base_config(64);
    c.type = PE_ROPE_YARN;
    CHECK_STATUS(init_with(c), PE_ERR_MISSING_FIELD);
    c.original_max_position_embeddings = 4096;
    CHECK_STATUS(init_with(c), PE_ERR_MISSING_FIELD); /* no factor, no max */
    c.factor = 4.0;
    CHECK_STATUS(init_with(c), PE_OK);
    c.base = 1.0;
    CHECK_STATUS(init_with(c), PE_ERR_BASE);
    c = base_config(64);
    c.type = PE_ROPE_LLAMA3;
    c.factor = 8;
    c.low_freq_factor = 1;
    CHECK_STATUS(init_with(c), PE_ERR_MISSING_FIELD);
    c.high_freq_factor = 4;
    c.original_max_position_embeddings = 8192;
    CHECK_STATUS(init_with(c), PE_OK);
    c.high_freq_factor = 1;
    CHECK_STATUS(init_with(c), PE_ERR_FIELD_VALUE);

    double short_f[4] = {1, 1, 1, 1}, long_f[4] = {1, 2, 3, -4};
    c = base_config(8);
    c.type = PE_ROPE_LONGROPE;
    c.original_max_position_embeddings = 4096;
    CHECK_STATUS(init_with(c), PE_ERR_MISSING_FIELD);
    c.short_factor = short_f;
    c.long_factor = long_f;
    CHECK_STATUS(init_with(c), PE_ERR_FACTOR);
    long_f[3] = 4;
    CHECK_STATUS(init_with(c), PE_OK);

    for (int s = 0; s < PE_STATUS_COUNT; s++) CHECK(strlen(pe_status_string((pe_status)s)) > 0, "status %d", s);
    CHECK(strcmp(pe_status_string((pe_status)1000), "unknown status") == 0, "out-of-range status");
}

static void test_inv_freq(void) {
    pe_rope rope;
    pe_rope_config c = base_config(128);
    c.rotary_dim = 64;
    c.base = 500000.0;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    CHECK(rope.n_freq == 32 && rope.rot_dim == 64, "n_freq %d", rope.n_freq);
    double f[PE_ROPE_MAX_FREQ], att = 0;
    CHECK_STATUS(pe_rope_inv_freq(f, &att, &rope, PE_SEQ_LEN_NONE), PE_OK);
    double worst = 0;
    for (int i = 0; i < 32; i++) worst = fmax(worst, fabs(f[i] - pow(500000.0, -2.0 * i / 64.0)) / f[i]);
    CHECK(worst < 1e-14 && att == 1.0, "default inv_freq rel err %g", worst);
    CHECK_STATUS(pe_rope_inv_freq(f, &att, &rope, -1), PE_ERR_SEQ_LEN);

    /* dynamic: unchanged up to max_position_embeddings, base grows past it (lower frequencies) */
    c = base_config(64);
    c.type = PE_ROPE_DYNAMIC;
    c.factor = 2;
    c.max_position_embeddings = 2048;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    double at_max[32], past[32];
    pe_rope_inv_freq(at_max, NULL, &rope, 2048);
    pe_rope_inv_freq(past, NULL, &rope, 4096);
    double grown = 10000.0 * pow(2.0 * 4096 / 2048 - 1.0, 64.0 / 62.0);
    CHECK(fabs(at_max[5] - pow(10000.0, -10.0 / 64)) < 1e-15, "dynamic at max %g", at_max[5]);
    CHECK(fabs(past[5] - pow(grown, -10.0 / 64)) < 1e-15, "dynamic past max %g", past[5]);

    /* longrope switches to the long factors strictly past the original context */
    double short_f[4] = {1, 1, 1, 1}, long_f[4] = {1, 2, 4, 8};
    c = base_config(8);
    c.type = PE_ROPE_LONGROPE;
    c.original_max_position_embeddings = 4096;
    c.max_position_embeddings = 4 * 4096;
    c.short_factor = short_f;
    c.long_factor = long_f;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    double at[4], over[4];
    pe_rope_inv_freq(at, &att, &rope, 4096);
    pe_rope_inv_freq(over, NULL, &rope, 4097);
    CHECK(at[3] == pow(10000.0, -6.0 / 8) && fabs(over[3] - at[3] / 8) < 1e-18, "longrope switch %g %g", at[3],
          over[3]);
    CHECK(fabs(att - sqrt(1 + log(4.0) / log(4096.0))) < 1e-15, "longrope attention factor %g", att);
}

/* cos/sin of pos * theta against libm in double, up to the largest int32 position */
static void test_cos_sin_precision(void) {
    pe_rope rope;
    pe_rope_config c = base_config(256);
    c.base = 10000.0;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    int32_t positions[] = {0, 1, 2, 7, 100, 4095, 65535, 131071, 1000000, 1 << 20, 1 << 24, 123456789, INT32_MAX};
    int32_t np = sizeof positions / sizeof *positions, n = rope.n_freq;
    float *cs = malloc(sizeof(float) * np * n), *sn = malloc(sizeof(float) * np * n);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, positions, np, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
    double worst = 0;
    for (int p = 0; p < np; p++)
        for (int i = 0; i < n; i++) {
            double x = (double)positions[p] * rope.inv_freq[i];
            worst = fmax(worst, fabs(cs[p * n + i] - cos(x)));
            worst = fmax(worst, fabs(sn[p * n + i] - sin(x)));
        }
    /* float32 rounding of r (3e-8) plus ~1 ulp from each polynomial */
    CHECK(worst < 1.5e-7, "cos/sin worst abs err %g", worst);
    printf("  cos/sin vs libm (double angle), positions to 2^31-1: worst %.3g\n", worst);

    /* attention scaling multiplies both tables */
    c.type = PE_ROPE_YARN;
    c.factor = 4;
    c.original_max_position_embeddings = 4096;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, positions, 1, PE_SEQ_LEN_NONE, 1.0), PE_OK);
    CHECK(fabs(cs[0] - (0.1 * log(4.0) + 1)) < 1e-6 && sn[0] == 0.0f, "yarn scaled cos(0) %g", cs[0]);

    int32_t negative[] = {3, -1, 5};
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, negative, 3, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_ERR_POSITION);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, positions, 1, -2, 1.0), PE_ERR_SEQ_LEN);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, positions, 1, 0, NAN), PE_ERR_SCALE);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, positions, -1, 0, 1.0), PE_ERR_SHAPE);
    free(cs);
    free(sn);
}

/* naive reference: the rotation written out per element, in double */
static void reference_apply(double *x, const pe_rope *rope, const int32_t *positions, int32_t batch, int32_t seq,
                            int32_t heads, int bhsd, int per_batch, double scale, int inverse) {
    int32_t d = rope->config.head_dim, n = rope->n_freq;
    int interleaved = rope->config.pairing == PE_PAIRING_INTERLEAVED;
    for (int32_t b = 0; b < batch; b++)
        for (int32_t s = 0; s < seq; s++)
            for (int32_t h = 0; h < heads; h++) {
                double *row =
                    x + (bhsd ? (((size_t)b * heads + h) * seq + s) : (((size_t)b * seq + s) * heads + h)) * d;
                double pos = positions[per_batch ? b * seq + s : s];
                for (int32_t i = 0; i < n; i++) {
                    double ang = pos * rope->inv_freq[i], c = cos(ang) * scale, sn = sin(ang) * scale;
                    if (inverse) sn = -sn;
                    int ia = interleaved ? 2 * i : i, ib = interleaved ? 2 * i + 1 : i + n;
                    double xa = row[ia], xb = row[ib];
                    row[ia] = xa * c - xb * sn;
                    row[ib] = xb * c + xa * sn;
                }
            }
}

static void test_apply_random(void) {
    pe_rng rng = {0x9e3779b97f4a7c15ULL};
    double worst = 0, worst_roundtrip = 0;
    int cases = 0;
    for (int t = 0; t < 300; t++) {
        pe_rope_config c = base_config(2 * pe_rng_int(&rng, 1, 128));
        c.rotary_dim = 2 * pe_rng_int(&rng, 1, c.head_dim / 2);
        c.pairing = pe_rng_int(&rng, 0, 1);
        if (t % 3 == 1) {
            c.type = PE_ROPE_YARN;
            c.factor = 8;
            c.original_max_position_embeddings = 2048;
        }
        pe_rope rope;
        if (pe_rope_init(&rope, &c) != PE_OK) {
            CHECK(0, "init failed");
            continue;
        }
        int32_t batch = pe_rng_int(&rng, 1, 3), seq = pe_rng_int(&rng, 1, 9), heads = pe_rng_int(&rng, 1, 7);
        int bhsd = pe_rng_int(&rng, 0, 1), per_batch = pe_rng_int(&rng, 0, 1);
        int32_t rows = per_batch ? batch * seq : seq, n = rope.n_freq;
        size_t len = (size_t)batch * seq * heads * c.head_dim;
        int32_t *pos = malloc(sizeof(int32_t) * rows);
        for (int r = 0; r < rows; r++) pos[r] = pe_rng_int(&rng, 0, t % 2 ? (1 << 24) : 4096);
        float *x = malloc(sizeof(float) * len), *x0 = malloc(sizeof(float) * len);
        double *ref = malloc(sizeof(double) * len);
        float *cs = malloc(sizeof(float) * rows * n), *sn = malloc(sizeof(float) * rows * n);
        for (size_t i = 0; i < len; i++) ref[i] = x0[i] = x[i] = pe_rng_float(&rng);

        CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, rows, PE_SEQ_LEN_NONE, 1.0), PE_OK);
        CHECK_STATUS(rope_apply(&rope, x, cs, sn, batch, seq, heads, bhsd, per_batch, PE_ROTATE_FORWARD), PE_OK);
        reference_apply(ref, &rope, pos, batch, seq, heads, bhsd, per_batch, rope.attention_scaling, 0);
        double err = 0;
        for (size_t i = 0; i < len; i++) err = fmax(err, fabs(x[i] - ref[i]));
        worst = fmax(worst, err / rope.attention_scaling);
        /* dimensions past rot_dim pass through untouched */
        int untouched = 1;
        for (size_t i = 0; i < len; i++)
            if ((int32_t)(i % c.head_dim) >= rope.rot_dim && x[i] != x0[i]) untouched = 0;
        CHECK(untouched, "partial rotary tail modified (head_dim %d rot %d)", c.head_dim, rope.rot_dim);

        /* inverse with 1/scale^2 tables undoes the scaled forward rotation */
        double s = rope.attention_scaling;
        CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, rows, PE_SEQ_LEN_NONE, 1.0 / (s * s)), PE_OK);
        CHECK_STATUS(rope_apply(&rope, x, cs, sn, batch, seq, heads, bhsd, per_batch, PE_ROTATE_INVERSE), PE_OK);
        double back = 0;
        for (size_t i = 0; i < len; i++) back = fmax(back, fabs(x[i] - x0[i]));
        worst_roundtrip = fmax(worst_roundtrip, back);
        cases++;
        free(pos);
        free(x);
        free(x0);
        free(ref);
        free(cs);
        free(sn);
    }
    /* inputs in [-1, 1): each output is two products of rounded float32 values */
    CHECK(worst < 1e-6, "apply vs reference worst abs err %g", worst);
    CHECK(worst_roundtrip < 1e-6, "apply then inverse worst abs err %g", worst_roundtrip);
    printf("  apply vs naive double reference (%d random cases): worst %.3g; round trip %.3g\n", cases, worst,
           worst_roundtrip);
}

static void test_apply_errors(void) {
    pe_rope rope;
    pe_rope_config c = base_config(8);
    pe_rope_init(&rope, &c);
    float x[8] = {0}, cs[4] = {1, 1, 1, 1}, sn[4] = {0};
    CHECK_STATUS(rope_apply(&rope, x, cs, sn, 1, 1, 1, 2, 0, 0), PE_ERR_LAYOUT);
    CHECK_STATUS(rope_apply(&rope, x, cs, sn, -1, 1, 1, 0, 0, 0), PE_ERR_SHAPE);
    CHECK_STATUS(rope_apply(&rope, x, cs, sn, 1, 1, 1, 0, 0, 7), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(rope_apply(&rope, NULL, cs, sn, 1, 1, 1, 0, 0, 0), PE_ERR_NULL);
    CHECK_STATUS(rope_apply(&rope, NULL, NULL, NULL, 0, 1, 1, 0, 0, 0), PE_OK);
    CHECK_STATUS(rope_apply(NULL, x, cs, sn, 1, 1, 1, 0, 0, 0), PE_ERR_NULL);
    int32_t mx = -5, pos[3] = {4, 9, 2};
    CHECK_STATUS(pe_positions_max(&mx, pos, 3), PE_OK);
    CHECK(mx == 9, "max %d", mx);
    pos[1] = INT32_MIN;
    CHECK_STATUS(pe_positions_max(&mx, pos, 3), PE_ERR_POSITION);
}

/* posenc.h "Sizes": batch, seq or n_positions 0 is a no-op (nothing written, NULL arrays allowed);
 * heads and the flags are still checked. */
static void test_zero_sizes(void) {
    pe_rope rope;
    pe_rope_config c = base_config(8);
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    float x[8] = {7, 7, 7, 7, 7, 7, 7, 7}, cs[4] = {7, 7, 7, 7}, sn[4] = {7, 7, 7, 7};
    const int32_t neg[1] = {-1};
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, neg, 0, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
    CHECK_STATUS(pe_rope_cos_sin(NULL, NULL, &rope, NULL, 0, PE_SEQ_LEN_NONE, 1.0), PE_OK);
    pe_rope_apply_config ac = {0};
    ac.batch = 0;
    ac.seq = 3;
    ac.heads = 2;
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &ac), PE_OK);
    CHECK_STATUS(pe_rope_apply(&rope, NULL, NULL, NULL, &ac), PE_OK);
    ac.batch = 2;
    ac.seq = 0;
    ac.per_batch_rows = 1;
    CHECK_STATUS(pe_rope_apply(&rope, NULL, NULL, NULL, &ac), PE_OK);
    int untouched = 1;
    for (int i = 0; i < 8; i++) untouched &= x[i] == 7;
    for (int i = 0; i < 4; i++) untouched &= cs[i] == 7 && sn[i] == 7;
    CHECK(untouched, "rope wrote with a zero count");
    ac.heads = 0;
    CHECK_STATUS(pe_rope_apply(&rope, NULL, NULL, NULL, &ac), PE_ERR_HEADS);
    ac.heads = 1;
    ac.layout = 5;
    CHECK_STATUS(pe_rope_apply(&rope, NULL, NULL, NULL, &ac), PE_ERR_LAYOUT);
    ac.layout = 0;
    ac.rotation = 2;
    CHECK_STATUS(pe_rope_apply(&rope, NULL, NULL, NULL, &ac), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, NULL), PE_ERR_NULL);
}

int main(void) {
    test_zero_sizes();
    test_validation();
    test_inv_freq();
    test_cos_sin_precision();
    test_apply_random();
    test_apply_errors();
    return pe_test_report("test_rope");
}
