/* test_rope_strides.c — pe_rope_apply on strided views (pe_rope_apply_config.strides / offset): q and k rotated
 * in place inside fused QKV buffers and a bhsd KV cache with spare capacity equal the dense rotation bit for
 * bit, nothing outside the view is touched, and views that overlap or cannot be addressed are refused. */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

enum {
    B = 2,
    S = 5,
    H = 3,
    KV = 2,
    D = 12
};

static pe_rope make_rope(int32_t pairing, int32_t rotary_dim) {
    pe_rope rope;
    pe_rope_config c = {0};
    c.head_dim = D;
    c.rotary_dim = rotary_dim;
    c.pairing = pairing;
    c.type = PE_ROPE_YARN; /* attention factor != 1: the tables are scaled too */
    c.factor = 4;
    c.original_max_position_embeddings = 64;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    return rope;
}

/* Per-token rows of positions for (B, S): left padding makes them differ per sequence. */
static void tables(const pe_rope *rope, float *cs, float *sn) {
    int32_t pos[B * S];
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++) pos[b * S + s] = b == 0 ? s : (s < 2 ? 0 : s - 2 + 1000);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, rope, pos, B * S, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
}

/* x_dense[b, s, h, :] (BSHD) <-> view element at base + b*sb + s*ss + h*sh */
static void gather(float *dense, const float *view, int64_t off, int64_t sb, int64_t ss, int64_t sh, int heads) {
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int h = 0; h < heads; h++)
                memcpy(dense + ((size_t)(b * S + s) * heads + h) * D, view + off + b * sb + s * ss + h * sh,
                       sizeof(float) * D);
}

static int same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, sizeof(float) * n) == 0; }

/* Rotates the view and a dense copy with the same tables; compares, and checks the rest of buf is as it was. */
static void check_view(const pe_rope *rope, const float *cs, const float *sn, float *buf, const float *buf0,
                       size_t n_buf, int heads, int64_t off, pe_strides st, int32_t rotation, const char *what) {
    float dense[B * S * H * D], got[B * S * H * D];
    gather(dense, buf, off, st.batch, st.seq, st.heads, heads);
    pe_rope_apply_config dc = {.batch = B, .seq = S, .heads = heads, .per_batch_rows = 1, .rotation = rotation};
    CHECK_STATUS(pe_rope_apply(rope, dense, cs, sn, &dc), PE_OK);
    pe_rope_apply_config vc = dc;
    vc.strides = st;
    vc.offset = off;
    CHECK_STATUS(pe_rope_apply(rope, buf, cs, sn, &vc), PE_OK);
    gather(got, buf, off, st.batch, st.seq, st.heads, heads);
    CHECK(same_bits(got, dense, (size_t)B * S * heads * D), "%s: strided == dense, bit for bit", what);
    /* everything outside the view: scatter the expected result back into a copy of the original */
    float *want = malloc(sizeof(float) * n_buf);
    memcpy(want, buf0, sizeof(float) * n_buf);
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int h = 0; h < heads; h++)
                memcpy(want + off + b * st.batch + s * st.seq + h * st.heads,
                       dense + ((size_t)(b * S + s) * heads + h) * D, sizeof(float) * D);
    CHECK(same_bits(buf, want, n_buf), "%s: only the view changed", what);
    free(want);
}

static void test_fused_and_cache(void) {
    pe_rng rng = {4242};
    for (int32_t pairing = 0; pairing <= 1; pairing++)
        for (int32_t rot = 0; rot <= 1; rot++) {
            const pe_rope rope = make_rope(pairing, pairing ? D : 8); /* half-split: partial rotary too */
            float cs[B * S * D / 2], sn[B * S * D / 2];
            tables(&rope, cs, sn);

            /* per-token fused QKV [B, S, (H + 2 KV) D]: q at 0, k at H D */
            enum {
                W = (H + 2 * KV) * D,
                N1 = B * S * W
            };
            float *buf = malloc(sizeof(float) * N1), *buf0 = malloc(sizeof(float) * N1);
            for (int i = 0; i < N1; i++) buf0[i] = buf[i] = pe_rng_float(&rng);
            const pe_strides tok = {.batch = (int64_t)S * W, .seq = W, .heads = D};
            check_view(&rope, cs, sn, buf, buf0, N1, H, 0, tok, rot, "fused per-token q");
            memcpy(buf0, buf, sizeof(float) * N1);
            check_view(&rope, cs, sn, buf, buf0, N1, KV, (int64_t)H * D, tok, rot, "fused per-token k");
            free(buf);
            free(buf0);

            /* per-head fused [B, S, H, 3D]: q at 0, k at D */
            enum {
                N2 = B * S * H * 3 * D
            };
            buf = malloc(sizeof(float) * N2);
            buf0 = malloc(sizeof(float) * N2);
            for (int i = 0; i < N2; i++) buf0[i] = buf[i] = pe_rng_float(&rng);
            const pe_strides head = {.batch = (int64_t)S * H * 3 * D, .seq = (int64_t)H * 3 * D, .heads = 3 * D};
            check_view(&rope, cs, sn, buf, buf0, N2, H, D, head, rot, "fused per-head k");

            /* bhsd cache of C = 9 positions per head, S of them used: heads stride C D, seq stride D */
            enum {
                C = 9,
                N3 = B * KV * C * D
            };
            float *cache = malloc(sizeof(float) * N3), *cache0 = malloc(sizeof(float) * N3);
            for (int i = 0; i < N3; i++) cache0[i] = cache[i] = pe_rng_float(&rng);
            float dense[B * S * KV * D], got[B * S * KV * D];
            const pe_strides cst = {.batch = (int64_t)KV * C * D, .seq = D, .heads = (int64_t)C * D};
            gather(dense, cache, 0, cst.batch, cst.seq, cst.heads, KV);
            pe_rope_apply_config dc = {.batch = B, .seq = S, .heads = KV, .per_batch_rows = 1, .rotation = rot};
            CHECK_STATUS(pe_rope_apply(&rope, dense, cs, sn, &dc), PE_OK);
            pe_rope_apply_config vc = dc;
            vc.layout = PE_LAYOUT_BHSD; /* the cache's own order: per head pair, every position */
            vc.strides = cst;
            CHECK_STATUS(pe_rope_apply(&rope, cache, cs, sn, &vc), PE_OK);
            gather(got, cache, 0, cst.batch, cst.seq, cst.heads, KV);
            CHECK(same_bits(got, dense, (size_t)B * S * KV * D), "bhsd cache with capacity == dense");
            int spare = 1;
            for (int b = 0; b < B; b++)
                for (int h = 0; h < KV; h++)
                    for (int s = S; s < C; s++)
                        spare &= same_bits(cache + b * cst.batch + h * cst.heads + s * D,
                                           cache0 + b * cst.batch + h * cst.heads + s * D, D);
            CHECK(spare, "bhsd cache: spare capacity untouched");
            free(buf);
            free(buf0);
            free(cache);
            free(cache0);
        }
}

/* Zero strides are the dense ones, with the same numbers as a config without them. */
static void test_zero_is_dense(void) {
    const pe_rope rope = make_rope(PE_PAIRING_HALF, D);
    float cs[B * S * D / 2], sn[B * S * D / 2];
    tables(&rope, cs, sn);
    for (int32_t layout = 0; layout <= 1; layout++) {
        float a[B * S * H * D], b[B * S * H * D];
        pe_rng rng = {9};
        for (int i = 0; i < B * S * H * D; i++) a[i] = b[i] = pe_rng_float(&rng);
        pe_rope_apply_config c = {.batch = B, .seq = S, .heads = H, .layout = layout, .per_batch_rows = 1};
        CHECK_STATUS(pe_rope_apply(&rope, a, cs, sn, &c), PE_OK);
        const int64_t dense[2][3] = {{S * H * D, H * D, D}, {H * S * D, D, S * D}};
        c.strides = (pe_strides){dense[layout][0], dense[layout][1], dense[layout][2]};
        CHECK_STATUS(pe_rope_apply(&rope, b, cs, sn, &c), PE_OK);
        CHECK(same_bits(a, b, (size_t)B * S * H * D), "layout %d: explicit dense strides == zero strides", layout);
    }
}

static void test_bad_views(void) {
    const pe_rope rope = make_rope(PE_PAIRING_HALF, D);
    float x[4 * D] = {0}, cs[D], sn[D];
    pe_rope_apply_config c = {.batch = 1, .seq = 2, .heads = 2};
    c.strides.seq = -1;
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.strides = (pe_strides){0};
    c.offset = -1;
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.offset = INT64_MAX; /* the furthest element cannot be addressed */
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.offset = 0;
    c.strides = (pe_strides){.seq = D, .heads = D}; /* (s=1, h=0) and (s=0, h=1) are the same vector */
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.strides = (pe_strides){.seq = 2 * D, .heads = D - 1}; /* neighbouring heads overlap */
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.strides = (pe_strides){.seq = D, .heads = 2 * D}; /* interleaved tokens inside heads: fine, 4 vectors */
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_OK);
    c.strides = (pe_strides){.seq = INT64_MAX / 2, .heads = D}; /* the span passes any address space */
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    /* a stride on an axis of one element does not matter (it is never multiplied by more than 0) */
    c.strides = (pe_strides){.batch = INT64_MAX, .seq = 2 * D, .heads = D};
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_OK);
    /* an empty call is validated first: a negative stride or offset is refused even with batch 0 (found by
       fuzz_rope_apply) */
    c = (pe_rope_apply_config){.batch = 0, .seq = 1, .heads = 8, .strides = {29, -1, -1}, .offset = -1};
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.strides = (pe_strides){0};
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_ERR_SHAPE);
    c.offset = 0;
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &c), PE_OK);
}

int main(void) {
    test_fused_and_cache();
    test_zero_is_dense();
    test_bad_views();
    return pe_test_report("test_rope_strides");
}
