/* test_attention_batch.c — attention for real batches: one call for a left-padded batch (per-sequence
 * positions, key mask, bias of every broadcast shape, v_head_dim, per-query scales) equals one call per
 * sequence bit for bit and a naive double reference; strided views inside a fused QKV buffer and a bhsd KV
 * cache with spare capacity equal the dense call bit for bit; bad views, shapes and scales are refused. */
#include "attn_batch_cases.h"

static float *run(const abc_case *C, const pe_attention_config *cfg, const float *q, const float *k, const float *v,
                  size_t n_out, float *weights, pe_status *st) {
    size_t ns = 0;
    *st = pe_attention_scratch_size(&ns, cfg);
    float *out = abc_calloc(n_out, 4), *scratch = abc_calloc(ns, 4);
    if (*st == PE_OK) *st = pe_attention(out, weights, q, k, v, scratch, ns, cfg);
    free(scratch);
    (void)C;
    return out;
}

static size_t at(int layout, int32_t H, int32_t S, int32_t D, int32_t b, int32_t h, int32_t s) {
    if (layout == PE_LAYOUT_BHSD) return (((size_t)b * H + h) * S + s) * D;
    return (((size_t)b * S + s) * H + h) * D;
}

static double worst_err;

/* Naive double reference (no RoPE): fully masked rows give zeros. Returns the largest |out - ref|. */
static double ref_check(const abc_case *C, const float *out) {
    const pe_attention_config *c = &C->cfg;
    const int32_t B = c->batch, H = c->heads, G = c->heads / c->kv_heads, Sq = c->q_len, Sk = c->k_len;
    const int32_t D = c->head_dim, Dv = c->v_head_dim ? c->v_head_dim : D, KVH = c->kv_heads;
    const float scale = c->scale != 0.0f ? c->scale : (float)(1.0 / sqrt((double)D));
    double *s = abc_calloc((size_t)Sk, sizeof(double)), worst = 0.0;
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++)
            for (int32_t i = 0; i < Sq; i++) {
                const float *qv = C->q + at(c->layout, H, Sq, D, b, h, i);
                const int32_t qp = c->q_positions[(size_t)b * Sq + i];
                const float qs = c->q_scale ? c->q_scale[(c->q_scale_per_batch ? (size_t)b * Sq : 0u) + i] : 1.0f;
                double mx = -INFINITY;
                for (int32_t j = 0; j < Sk; j++) {
                    const float *kv = C->k + at(c->layout, KVH, Sk, D, b, h / G, j);
                    const int32_t kp = c->k_positions[(size_t)b * Sk + j];
                    double dot = 0.0;
                    for (int32_t d = 0; d < D; d++) dot += (double)qv[d] * kv[d];
                    double x = dot * (double)(c->q_scale ? scale * qs : scale);
                    if (c->alibi_slopes) x += (double)c->alibi_slopes[h] * (double)(kp - qp);
                    if (c->bias) {
                        const int32_t bb = c->bias_batch > 1 ? b : 0, bh = c->bias_heads > 1 ? h : 0;
                        const int32_t nbh = c->bias_heads ? c->bias_heads : 1, nbq = c->bias_q_len ? c->bias_q_len : Sq;
                        const int32_t bi = nbq > 1 ? i : 0;
                        x += c->bias[(((size_t)bb * nbh + bh) * nbq + bi) * Sk + j];
                    }
                    if ((c->key_mask && c->key_mask[(size_t)b * Sk + j] == 0) || (c->causal && kp > qp)) x = -INFINITY;
                    s[j] = x;
                    mx = x > mx ? x : mx;
                }
                const float *o = out + at(c->layout, H, Sq, Dv, b, h, i);
                double l = 0.0;
                if (mx != -INFINITY)
                    for (int32_t j = 0; j < Sk; j++) l += (s[j] = exp(s[j] - mx));
                for (int32_t e = 0; e < Dv; e++) {
                    double acc = 0.0;
                    if (mx != -INFINITY)
                        for (int32_t j = 0; j < Sk; j++)
                            acc += s[j] * C->v[at(c->layout, KVH, Sk, Dv, b, h / G, j) + e];
                    const double r = mx == -INFINITY ? 0.0 : acc / l, err = fabs(o[e] - r);
                    if (mx == -INFINITY && o[e] != 0.0f) worst = INFINITY; /* must be exactly zero */
                    worst = err > worst ? err : worst;
                }
            }
    free(s);
    return worst;
}

static void test_batch_vs_sequences(void) {
    pe_rng rng = {0xba7c4ULL};
    int cases = 0, seq_diffs = 0, w_diffs = 0, bad = 0, refs = 0;
    for (int it = 0; it < 150; it++) {
        abc_case C;
        abc_make(&C, &rng, 1);
        const pe_attention_config *c = &C.cfg;
        const int32_t B = c->batch, Sq = c->q_len, Sk = c->k_len, H = c->heads;
        const int want_w = pe_rng_int(&rng, 0, 2) == 0;
        const size_t nw = (size_t)B * H * Sq * Sk;
        float *w = want_w ? abc_calloc(nw, 4) : NULL;
        pe_status st;
        float *out = run(&C, c, C.q, C.k, C.v, C.no, w, &st);
        CHECK(st == PE_OK, "batch case %d: %s", it, pe_status_string(st));
        if (st != PE_OK) {
            bad++;
            continue;
        }
        /* one call per sequence: batch 1, every per-sequence array advanced to its row */
        for (int32_t b = 0; b < B; b++) {
            pe_attention_config c1 = *c;
            c1.batch = 1;
            c1.q_positions = c->q_positions + (size_t)b * Sq;
            c1.k_positions = c->k_positions + (size_t)b * Sk;
            if (c->key_mask) c1.key_mask = c->key_mask + (size_t)b * Sk;
            if (c->q_scale && c->q_scale_per_batch) c1.q_scale = c->q_scale + (size_t)b * Sq;
            if (c->bias && c->bias_batch > 1) {
                c1.bias_batch = 1;
                c1.bias = c->bias + (size_t)b * (C.nbias / (size_t)B);
            }
            float *w1 = want_w ? abc_calloc(nw / B, 4) : NULL;
            float *o1 =
                run(&C, &c1, C.q + b * (C.nq / B), C.k + b * (C.nk / B), C.v + b * (C.nv / B), C.no / B, w1, &st);
            seq_diffs += st != PE_OK || abc_first_diff(o1, out + b * (C.no / B), C.no / B) >= 0;
            if (want_w) w_diffs += abc_first_diff(w1, w + b * (nw / B), nw / B) >= 0;
            free(o1), free(w1);
        }
        if (!c->rope) {
            const double e = ref_check(&C, out);
            worst_err = e > worst_err ? e : worst_err;
            refs++;
        }
        cases++;
        free(out), free(w);
        abc_free(&C);
    }
    CHECK(seq_diffs == 0 && w_diffs == 0, "%d sequences' outputs / %d weights differ from one call per sequence",
          seq_diffs, w_diffs);
    CHECK(worst_err < 2e-5, "padded batch vs double reference: worst |out - ref| %.3g (tol 2e-5)", worst_err);
    printf("padded batch: %d cases (%d vs double reference, worst %.3g), one call == per-sequence calls bit for bit\n",
           cases, refs, worst_err);
    (void)bad;
}

/* Dense q, k, v (layout L) copied into a fused per-token QKV buffer [b, s, (h + 2 kv) d] (or for BHSD a
 * [b, (h + 2 kv), s, d] buffer) and into a bhsd KV cache with spare capacity; out into a larger buffer with an
 * offset: the strided call equals the dense one bit for bit. */
static void test_strided_views(void) {
    pe_rng rng = {0x57d1ULL};
    int diffs = 0, cases = 0;
    for (int it = 0; it < 80; it++) {
        abc_case C;
        abc_make(&C, &rng, 1);
        pe_attention_config *c = &C.cfg;
        c->v_head_dim = 0; /* fused QKV: one head size */
        const int32_t B = c->batch, Sq = c->q_len, Sk = c->k_len, H = c->heads, KVH = c->kv_heads, D = c->head_dim;
        if (Sq != Sk) { /* fused QKV is a prefill buffer: q, k, v share the tokens */
            abc_free(&C);
            continue;
        }
        const int32_t S = Sk, W = H + 2 * KVH, L = c->layout;
        C.nv = C.nk;
        C.no = C.nq;
        free(C.v);
        C.v = abc_calloc(C.nv, 4);
        abc_fill(C.v, C.nv, &rng, 1.0f);
        pe_status st;
        float *dense = run(&C, c, C.q, C.k, C.v, C.no, NULL, &st);
        CHECK(st == PE_OK, "strided case %d dense: %s", it, pe_status_string(st));

        const size_t nf = (size_t)B * S * W * D;
        float *fused = abc_calloc(nf, 4);
        for (int32_t b = 0; b < B; b++)
            for (int32_t s = 0; s < S; s++) {
                for (int32_t h = 0; h < H; h++)
                    memcpy(fused + at(L, W, S, D, b, h, s), C.q + at(L, H, S, D, b, h, s), 4u * D);
                for (int32_t h = 0; h < KVH; h++) {
                    memcpy(fused + at(L, W, S, D, b, H + h, s), C.k + at(L, KVH, S, D, b, h, s), 4u * D);
                    memcpy(fused + at(L, W, S, D, b, H + KVH + h, s), C.v + at(L, KVH, S, D, b, h, s), 4u * D);
                }
            }
        pe_attention_config f = *c;
        const int64_t sb = (int64_t)S * W * D, ss = L ? D : (int64_t)W * D, sh = L ? (int64_t)S * D : D;
        f.q_strides = f.k_strides = f.v_strides = (pe_strides){sb, ss, sh};
        f.q_offset = 0, f.k_offset = (int64_t)H * sh, f.v_offset = (int64_t)(H + KVH) * sh;
        /* out: every head vector padded by 3 floats, after 5 floats of offset */
        const int64_t osh = L ? (int64_t)S * (D + 3) : D + 3, oss = L ? D + 3 : (int64_t)H * (D + 3);
        const int64_t osb = (int64_t)S * H * (D + 3);
        f.out_strides = (pe_strides){osb, oss, osh};
        f.out_offset = 5;
        const size_t no = 5 + (size_t)osb * B;
        size_t ns = 0;
        CHECK_STATUS(pe_attention_scratch_size(&ns, &f), PE_OK);
        float *big = abc_calloc(no, 4), *scratch = abc_calloc(ns, 4);
        CHECK_STATUS(pe_attention(big, NULL, fused, fused, fused, scratch, ns, &f), PE_OK);
        int d = 0;
        for (int32_t b = 0; b < B; b++)
            for (int32_t s = 0; s < S; s++)
                for (int32_t h = 0; h < H; h++)
                    d |= memcmp(big + 5 + b * osb + s * oss + h * osh, dense + at(L, H, S, D, b, h, s), 4u * D) != 0;
        diffs += d;

        /* k and v in a bhsd cache of capacity Cap > S: heads stride Cap d, seq stride d (BHSD only) */
        if (L == PE_LAYOUT_BHSD) {
            const int32_t Cap = S + pe_rng_int(&rng, 1, 9);
            float *kc = abc_calloc((size_t)B * KVH * Cap * D, 4), *vc = abc_calloc((size_t)B * KVH * Cap * D, 4);
            for (int32_t b = 0; b < B; b++)
                for (int32_t h = 0; h < KVH; h++)
                    for (int32_t s = 0; s < S; s++) {
                        memcpy(kc + (((size_t)b * KVH + h) * Cap + s) * D, C.k + at(L, KVH, S, D, b, h, s), 4u * D);
                        memcpy(vc + (((size_t)b * KVH + h) * Cap + s) * D, C.v + at(L, KVH, S, D, b, h, s), 4u * D);
                    }
            pe_attention_config g = *c;
            g.k_strides = g.v_strides = (pe_strides){(int64_t)KVH * Cap * D, D, (int64_t)Cap * D};
            float *o2 = run(&C, &g, C.q, kc, vc, C.no, NULL, &st);
            diffs += st != PE_OK || abc_first_diff(o2, dense, C.no) >= 0;
            free(o2), free(kc), free(vc);
        }
        cases++;
        free(big), free(scratch), free(fused), free(dense);
        abc_free(&C);
    }
    CHECK(diffs == 0, "%d strided calls differ from the dense call", diffs);
    printf("strided views (fused QKV, bhsd cache, padded out): %d cases, bit for bit\n", cases);
}

static void test_bad_views(void) {
    float q[64] = {0}, k[64] = {0}, v[64] = {0}, out[64], bias[64] = {0}, qs[4] = {1, 1, 1, 1};
    pe_attention_config c = {.batch = 2, .heads = 2, .q_len = 2, .k_len = 2, .head_dim = 4};
    pe_attention_config t;
    t = c, t.q_strides.seq = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.v_offset = -4;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.k_offset = INT64_MAX - 2;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.k_strides.batch = INT64_MAX / 2 + 1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.out_strides = (pe_strides){16, 8, 2}; /* out heads 2 floats apart: they overlap */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.q_strides = (pe_strides){16, 8, 2}; /* inputs may overlap (read only) */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_OK);
    t = c, t.bias = bias, t.bias_batch = 3;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.bias = bias, t.bias_heads = 2, t.bias_q_len = 3;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    t = c, t.v_head_dim = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SHAPE);
    qs[1] = NAN;
    t = c, t.q_scale = qs;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SCALE);
    qs[1] = 1e38f;
    t = c, t.q_scale = qs, t.scale = 100.0f;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_SCALE);
    int32_t pos[4] = {0, 1, -1, 0};
    t = c, t.q_positions = pos, t.per_batch_positions = 1; /* the second sequence's row has -1 */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_ERR_POSITION);
    /* a fully masked sequence gives zeros, the other its attention */
    int32_t mask[4] = {1, 1, 0, 0};
    for (int i = 0; i < 64; i++) v[i] = 1.0f, out[i] = 7.0f;
    t = c, t.key_mask = mask;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &t), PE_OK);
    int ok = 1;
    for (int i = 0; i < 16; i++) ok &= out[i] == 1.0f && out[16 + i] == 0.0f;
    CHECK(ok, "key mask: sequence 0 averages v (1), sequence 1 (all masked) is zeros");
}

int main(void) {
    test_batch_vs_sequences();
    test_strided_views();
    test_bad_views();
    return pe_test_report("test_attention_batch");
}
