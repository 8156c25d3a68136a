/* test_attention.c — fused attention against a naive double-precision reference written here, on random
 * shapes (tails, head_dim not a multiple of 4, 1..16 heads, GQA/MQA, q_len 1 against k_len up to 4096, both
 * layouts), causal and not, with ALiBi, with RoPE of several scaling types, explicit positions; plus softmax
 * range (logits of ±1e4), fully masked rows, the permutation property, decode consistency and bad input. */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------- */
/* Reference                                                                                      */
/* ---------------------------------------------------------------------------------------------- */

static size_t idx(int layout, int B_, int H, int S, int D, int b, int h, int s, int d) {
    (void)B_;
    if (layout == PE_LAYOUT_BHSD) return (((size_t)b * H + h) * S + s) * D + d;
    return (((size_t)b * S + s) * H + h) * D + d;
}

static int64_t ref_qpos(const pe_attention_config *c, int i) {
    return c->q_positions ? c->q_positions[i] : (int64_t)c->k_len - c->q_len + i;
}
static int64_t ref_kpos(const pe_attention_config *c, int j) { return c->k_positions ? c->k_positions[j] : j; }

/* Rotates one head vector x (double) at position pos, as HF's apply_rotary_pos_emb does, in double. */
static void ref_rope(double *x, const pe_rope *rope, const double *inv_freq, double att, int64_t pos) {
    int n = rope->n_freq;
    for (int i = 0; i < n; i++) {
        double a = (double)pos * inv_freq[i];
        double cs = cos(a) * att, sn = sin(a) * att;
        int ia = rope->config.pairing == PE_PAIRING_INTERLEAVED ? 2 * i : i;
        int ib = rope->config.pairing == PE_PAIRING_INTERLEAVED ? 2 * i + 1 : i + n;
        double xa = x[ia], xb = x[ib];
        x[ia] = xa * cs - xb * sn;
        x[ib] = xb * cs + xa * sn;
    }
}

/* out (double, same layout as q) and weights (double, (B, H, Sq, Sk)); fully masked rows give zeros. */
static void ref_attention(double *out, double *w, const float *q, const float *k, const float *v,
                          const pe_attention_config *c) {
    int B = c->batch, H = c->heads, KVH = c->kv_heads ? c->kv_heads : c->heads;
    int Sq = c->q_len, Sk = c->k_len, D = c->head_dim, L = c->layout;
    double scale = c->scale != 0.0f ? c->scale : (double)(float)(1.0 / sqrt((double)D));
    double inv_freq[PE_ROPE_MAX_FREQ], att = 1.0;
    if (c->rope) {
        int64_t maxp = 0;
        for (int i = 0; i < Sq; i++) maxp = ref_qpos(c, i) > maxp ? ref_qpos(c, i) : maxp;
        for (int j = 0; j < Sk; j++) maxp = ref_kpos(c, j) > maxp ? ref_kpos(c, j) : maxp;
        int64_t seq_len = c->rope_seq_len > 0 ? c->rope_seq_len : maxp + 1;
        pe_rope_inv_freq(inv_freq, &att, c->rope, seq_len);
    }
    double *qi = malloc(sizeof(double) * D), *kj = malloc(sizeof(double) * D), *s = malloc(sizeof(double) * Sk);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int g = h / (H / KVH);
            for (int i = 0; i < Sq; i++) {
                int64_t qp = ref_qpos(c, i);
                for (int d = 0; d < D; d++) qi[d] = q[idx(L, B, H, Sq, D, b, h, i, d)];
                if (c->rope) ref_rope(qi, c->rope, inv_freq, att, qp);
                double mx = -INFINITY;
                for (int j = 0; j < Sk; j++) {
                    int64_t kp = ref_kpos(c, j);
                    for (int d = 0; d < D; d++) kj[d] = k[idx(L, B, KVH, Sk, D, b, g, j, d)];
                    if (c->rope) ref_rope(kj, c->rope, inv_freq, att, kp);
                    double dot = 0;
                    for (int d = 0; d < D; d++) dot += qi[d] * kj[d];
                    double x = dot * scale;
                    if (c->alibi_slopes) x += (double)c->alibi_slopes[h] * (double)(kp - qp);
                    if (c->causal && kp > qp) x = -INFINITY;
                    s[j] = x;
                    if (x > mx) mx = x;
                }
                double sum = 0;
                for (int j = 0; j < Sk; j++) {
                    s[j] = mx == -INFINITY ? 0.0 : exp(s[j] - mx);
                    sum += s[j];
                }
                for (int j = 0; j < Sk; j++) s[j] = sum > 0 ? s[j] / sum : 0.0;
                if (w)
                    for (int j = 0; j < Sk; j++) w[(((size_t)b * H + h) * Sq + i) * Sk + j] = s[j];
                for (int d = 0; d < D; d++) {
                    double acc = 0;
                    for (int j = 0; j < Sk; j++) acc += s[j] * v[idx(L, B, KVH, Sk, D, b, g, j, d)];
                    out[idx(L, B, H, Sq, D, b, h, i, d)] = acc;
                }
            }
        }
    free(qi);
    free(kj);
    free(s);
}

/* ---------------------------------------------------------------------------------------------- */
/* Harness                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

static double worst_out_err, worst_w_err;
static int n_cases_run;

static float *rand_array(pe_rng *rng, size_t n, float amp) {
    float *a = malloc(sizeof(float) * (n ? n : 1));
    for (size_t t = 0; t < n; t++) a[t] = amp * pe_rng_float(rng);
    return a;
}

/* Runs one configuration against the reference; returns the worst abs error of out (and checks weights). */
static void run_case(pe_rng *rng, const pe_attention_config *c, int want_weights, const char *label) {
    int KVH = c->kv_heads ? c->kv_heads : c->heads;
    size_t nq = (size_t)c->batch * c->heads * c->q_len * c->head_dim;
    size_t nk = (size_t)c->batch * KVH * c->k_len * c->head_dim;
    size_t nw = (size_t)c->batch * c->heads * c->q_len * c->k_len;
    float *q = rand_array(rng, nq, 1.0f), *k = rand_array(rng, nk, 1.0f), *v = rand_array(rng, nk, 1.0f);
    float *q0 = malloc(sizeof(float) * nq), *k0 = malloc(sizeof(float) * nk);
    memcpy(q0, q, sizeof(float) * nq);
    memcpy(k0, k, sizeof(float) * nk);
    float *out = malloc(sizeof(float) * nq), *w = want_weights ? malloc(sizeof(float) * nw) : NULL;
    size_t ns = 0;
    CHECK_STATUS(pe_attention_scratch_size(&ns, c), PE_OK);
    CHECK(c->rope ? ns > 0 : ns == 0, "%s: scratch %zu", label, ns);
    float *scratch = ns ? malloc(sizeof(float) * ns) : NULL;
    pe_status st = pe_attention(out, w, q, k, v, scratch, ns, c);
    CHECK_STATUS(st, PE_OK);
    if (st == PE_OK) {
        double *ro = malloc(sizeof(double) * nq), *rw = want_weights ? malloc(sizeof(double) * nw) : NULL;
        ref_attention(ro, rw, q, k, v, c);
        double e = 0, ew = 0;
        int finite = 1;
        for (size_t t = 0; t < nq; t++) {
            finite &= isfinite(out[t]);
            double d = fabs(out[t] - ro[t]);
            if (!(d <= e)) e = d;
        }
        for (size_t t = 0; want_weights && t < nw; t++) {
            double d = fabs(w[t] - rw[t]);
            if (!(d <= ew)) ew = d;
        }
        /* |v| <= 1 and the weights sum to 1, so out is O(1): float32 accumulation over up to 4096 keys and
         * the float RoPE tables stay far below 2e-5 */
        CHECK(finite && e <= 2e-5, "%s: out err %.3g", label, e);
        /* weights: float32 logits carry ~|logit|·2^-24 absolute error, and ALiBi with explicit positions
         * reaches logits ~100 (slope 0.5, distance 200): 7.6e-6 ulp there. */
        CHECK(ew <= 5e-6, "%s: weights err %.3g", label, ew);
        if (e > worst_out_err) worst_out_err = e;
        if (ew > worst_w_err) worst_w_err = ew;
        CHECK(memcmp(q, q0, sizeof(float) * nq) == 0 && memcmp(k, k0, sizeof(float) * nk) == 0,
              "%s: q and k unmodified", label);
        free(ro);
        free(rw);
    }
    n_cases_run++;
    free(q);
    free(k);
    free(v);
    free(q0);
    free(k0);
    free(out);
    free(w);
    free(scratch);
}

/* ---------------------------------------------------------------------------------------------- */
/* Tests                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

static pe_rope make_rope(int type, int head_dim, int rotary_dim, int pairing) {
    pe_rope_config rc = {0};
    rc.head_dim = head_dim;
    rc.rotary_dim = rotary_dim;
    rc.pairing = pairing;
    rc.type = type;
    switch (type) {
    case PE_ROPE_LINEAR: rc.factor = 4.0; break;
    case PE_ROPE_DYNAMIC:
        rc.factor = 2.0;
        rc.max_position_embeddings = 64;
        break;
    case PE_ROPE_YARN:
        rc.factor = 8.0;
        rc.original_max_position_embeddings = 32;
        break;
    case PE_ROPE_LLAMA3:
        rc.base = 500000.0;
        rc.factor = 8.0;
        rc.low_freq_factor = 1.0;
        rc.high_freq_factor = 4.0;
        rc.original_max_position_embeddings = 64;
        break;
    default: break;
    }
    /* longrope: per-frequency factors (read only by pe_rope_init); long ones used past position 48 */
    double short_f[PE_ROPE_MAX_FREQ], long_f[PE_ROPE_MAX_FREQ];
    if (type == PE_ROPE_LONGROPE) {
        int n = (rotary_dim ? rotary_dim : head_dim) / 2;
        for (int i = 0; i < n; i++) {
            short_f[i] = 1.0 + 0.1 * i;
            long_f[i] = 2.0 + 0.5 * i;
        }
        rc.short_factor = short_f;
        rc.long_factor = long_f;
        rc.original_max_position_embeddings = 48;
        rc.max_position_embeddings = 192;
    }
    pe_rope r;
    pe_status st = pe_rope_init(&r, &rc);
    CHECK_STATUS(st, PE_OK);
    return r;
}

static void test_fixed_shapes(void) {
    pe_rng rng = {0xA77E};
    /* head_dim sweep: tails of every length, 8-chunks, large */
    const int dims[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, 64, 100, 128, 130};
    for (size_t di = 0; di < sizeof dims / sizeof *dims; di++)
        for (int layout = 0; layout < 2; layout++)
            for (int causal = 0; causal < 2; causal++) {
                pe_attention_config c = {0};
                c.batch = 2;
                c.heads = 2;
                c.q_len = 19;
                c.k_len = 37;
                c.head_dim = dims[di];
                c.layout = layout;
                c.causal = causal;
                char label[96];
                snprintf(label, sizeof label, "D=%d layout=%d causal=%d", dims[di], layout, causal);
                run_case(&rng, &c, 1, label);
            }
    /* decode: q_len 1 against long caches, MQA and GQA, with and without ALiBi */
    const int lens[] = {1, 31, 32, 33, 1000, 4096};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++) {
        float slopes[16];
        pe_alibi_slopes(slopes, 16);
        pe_attention_config c = {0};
        c.batch = 1;
        c.heads = 16;
        c.kv_heads = li % 2 ? 1 : 4;
        c.q_len = 1;
        c.k_len = lens[li];
        c.head_dim = 64;
        c.causal = 1;
        c.alibi_slopes = li % 3 == 0 ? NULL : slopes;
        char label[96];
        snprintf(label, sizeof label, "decode k_len=%d kv_heads=%d alibi=%d", lens[li], c.kv_heads,
                 c.alibi_slopes != NULL);
        run_case(&rng, &c, lens[li] <= 1000, label);
    }
}

/* Cross-attention shapes (q_len > k_len), and RoPE at large explicit positions. */
static void test_more_shapes(void) {
    pe_rng rng = {0xBEEF};
    for (int causal = 0; causal < 2; causal++)
        for (int layout = 0; layout < 2; layout++) {
            pe_attention_config c = {0};
            c.batch = 2;
            c.heads = 6;
            c.kv_heads = 3;
            c.q_len = 50;
            c.k_len = 7;
            c.head_dim = 10;
            c.causal = causal;
            c.layout = layout;
            char label[96];
            snprintf(label, sizeof label, "q_len > k_len causal=%d layout=%d", causal, layout);
            run_case(&rng, &c, 1, label);
        }
    int32_t qp[5], kp[40];
    for (int i = 0; i < 5; i++) qp[i] = 100000 + 7 * i;
    for (int j = 0; j < 40; j++) kp[j] = 99990 + j;
    for (int pairing = 0; pairing < 2; pairing++) {
        pe_rope rope = make_rope(PE_ROPE_DEFAULT, 32, 24, pairing);
        pe_attention_config c = {0};
        c.batch = 1;
        c.heads = 4;
        c.kv_heads = 2;
        c.q_len = 5;
        c.k_len = 40;
        c.head_dim = 32;
        c.causal = 1;
        c.rope = &rope;
        c.q_positions = qp;
        c.k_positions = kp;
        char label[96];
        snprintf(label, sizeof label, "rope at positions ~1e5, partial rotary, pairing=%d", pairing);
        run_case(&rng, &c, 1, label);
    }
}

static void test_random_shapes(void) {
    pe_rng rng = {0xC0FFEE};
    const int rope_types[] = {-1,           PE_ROPE_DEFAULT, PE_ROPE_LINEAR,   PE_ROPE_DYNAMIC,
                              PE_ROPE_YARN, PE_ROPE_LLAMA3,  PE_ROPE_LONGROPE, PE_ROPE_PROPORTIONAL};
    for (int it = 0; it < 200; it++) {
        pe_attention_config c = {0};
        c.batch = pe_rng_int(&rng, 1, 2);
        c.heads = pe_rng_int(&rng, 1, 16);
        /* a divisor of heads for kv_heads (0 = heads sometimes) */
        int divs[16], nd = 0;
        for (int d = 1; d <= c.heads; d++)
            if (c.heads % d == 0) divs[nd++] = d;
        c.kv_heads = pe_rng_int(&rng, 0, 3) == 0 ? 0 : divs[pe_rng_int(&rng, 0, nd - 1)];
        c.head_dim = 2 * pe_rng_int(&rng, 1, 40); /* even, for RoPE */
        if (pe_rng_int(&rng, 0, 3) == 0) c.head_dim += 1;
        c.k_len = pe_rng_int(&rng, 1, 80);
        c.q_len = pe_rng_int(&rng, 0, 2) == 0 ? 1 : pe_rng_int(&rng, 1, c.k_len);
        c.layout = pe_rng_int(&rng, 0, 1);
        c.causal = pe_rng_int(&rng, 0, 1);
        if (pe_rng_int(&rng, 0, 4) == 0) c.scale = 0.05f + 0.5f * (pe_rng_float(&rng) + 1.0f);
        float slopes[16];
        if (pe_rng_int(&rng, 0, 2) == 0) {
            pe_alibi_slopes(slopes, c.heads);
            c.alibi_slopes = slopes;
        }
        int32_t qpos[80], kpos[80];
        int explicit_pos = pe_rng_int(&rng, 0, 3) == 0;
        if (explicit_pos) {
            /* arbitrary (unsorted, repeated) positions: exercises masking without the band skip, and
             * with causal, rows whose keys are all in the future */
            for (int i = 0; i < c.q_len; i++) qpos[i] = pe_rng_int(&rng, 0, 200);
            for (int j = 0; j < c.k_len; j++) kpos[j] = pe_rng_int(&rng, 0, 200);
            c.q_positions = qpos;
            c.k_positions = kpos;
        }
        pe_rope rope;
        int rt = rope_types[pe_rng_int(&rng, 0, 7)];
        if (rt >= 0 && c.head_dim % 2 == 0) {
            int rot = pe_rng_int(&rng, 0, 2) == 0 ? 2 * pe_rng_int(&rng, 1, c.head_dim / 2) : 0;
            rope = make_rope(rt, c.head_dim, rot, pe_rng_int(&rng, 0, 1));
            c.rope = &rope;
            if (pe_rng_int(&rng, 0, 3) == 0) c.rope_seq_len = pe_rng_int(&rng, 1, 300);
        }
        char label[160];
        snprintf(label, sizeof label,
                 "random #%d B=%d H=%d KVH=%d Sq=%d Sk=%d D=%d L=%d causal=%d alibi=%d rope=%d pos=%d", it, c.batch,
                 c.heads, c.kv_heads, c.q_len, c.k_len, c.head_dim, c.layout, c.causal, c.alibi_slopes != NULL,
                 c.rope ? rt : -1, explicit_pos);
        run_case(&rng, &c, pe_rng_int(&rng, 0, 1), label);
    }
    /* a few long ones with RoPE and ALiBi */
    for (int it = 0; it < 4; it++) {
        pe_rope rope = make_rope(it == 0 ? PE_ROPE_YARN : PE_ROPE_DEFAULT, 64, 0, it & 1);
        float slopes[8];
        pe_alibi_slopes(slopes, 8);
        pe_attention_config c = {0};
        c.batch = 1;
        c.heads = 8;
        c.kv_heads = 2;
        c.q_len = it < 2 ? 1 : 70;
        c.k_len = it < 2 ? 4096 : 700;
        c.head_dim = 64;
        c.causal = 1;
        c.layout = it & 1;
        c.rope = &rope;
        c.alibi_slopes = it == 3 ? slopes : NULL;
        char label[96];
        snprintf(label, sizeof label, "long #%d Sq=%d Sk=%d rope alibi=%d", it, c.q_len, c.k_len, it == 3);
        run_case(&rng, &c, 0, label);
    }
}

/* Logits of +-1e4 (scale 1, D 1, q = 100, k = +-100) and a mix: softmax stays finite and exact. */
static void test_extreme_logits(void) {
    enum {
        SK = 7
    };
    float q[2] = {100.0f, -100.0f}, k[SK], v[SK], out[2], w[2 * SK];
    const float kk[SK] = {100, -100, 50, -100, 99, 100, 0};
    for (int j = 0; j < SK; j++) {
        k[j] = kk[j];
        v[j] = (float)j;
    }
    pe_attention_config c = {0};
    c.batch = 1;
    c.heads = 1;
    c.q_len = 2;
    c.k_len = SK;
    c.head_dim = 1;
    c.scale = 1.0f;
    CHECK_STATUS(pe_attention(out, w, q, k, v, NULL, 0, &c), PE_OK);
    /* query 0: logits 1e4 at keys 0 and 5 (others <= 9900): weights 1/2, 1/2; out = (0 + 5) / 2 */
    CHECK(out[0] == 2.5f && w[0] == 0.5f && w[5] == 0.5f && w[4] == 0.0f, "q=+100: out %g w0 %g w5 %g w4 %g", out[0],
          w[0], w[5], w[4]);
    /* query 1: logits 1e4 at keys 1 and 3: out = (1 + 3) / 2 */
    CHECK(out[1] == 2.0f && w[SK + 1] == 0.5f && w[SK + 3] == 0.5f, "q=-100: out %g", out[1]);
    int finite = 1;
    for (int t = 0; t < 2 * SK; t++) finite &= isfinite(w[t]) && w[t] >= 0;
    CHECK(finite, "weights finite");
    /* huge but finite scale: logits ~ +-1e30 still finite, argmax wins */
    c.scale = 1e26f;
    CHECK_STATUS(pe_attention(out, w, q, k, v, NULL, 0, &c), PE_OK);
    CHECK(out[0] == 2.5f && out[1] == 2.0f, "scale 1e26: %g %g", out[0], out[1]);
}

/* Causal with explicit positions where a query precedes every key: zeros out and weights. */
static void test_fully_masked(void) {
    pe_rng rng = {5};
    enum {
        SQ = 3,
        SK = 5,
        D = 6
    };
    float *q = rand_array(&rng, SQ * D, 1), *k = rand_array(&rng, SK * D, 1), *v = rand_array(&rng, SK * D, 1);
    float out[SQ * D], w[SQ * SK];
    int32_t qp[SQ] = {10, 2, 0}, kp[SK] = {3, 4, 5, 1, 6};
    pe_attention_config c = {0};
    c.batch = 1;
    c.heads = 1;
    c.q_len = SQ;
    c.k_len = SK;
    c.head_dim = D;
    c.causal = 1;
    c.q_positions = qp;
    c.k_positions = kp;
    memset(out, 0x7f, sizeof out);
    CHECK_STATUS(pe_attention(out, w, q, k, v, NULL, 0, &c), PE_OK);
    int zero = 1;
    for (int d = 0; d < D; d++) zero &= out[2 * D + d] == 0.0f;
    for (int j = 0; j < SK; j++) zero &= w[2 * SK + j] == 0.0f;
    CHECK(zero, "query at 0 before every key: zero output and weights");
    /* query at 2 sees only key 3 (position 1): out = v[3] exactly */
    int one = w[SK + 3] == 1.0f;
    for (int d = 0; d < D; d++) one &= out[D + d] == v[3 * D + d];
    CHECK(one, "single visible key: out = its value");
    /* q_len > k_len, causal, default positions: query 0 sits at position -1 */
    pe_attention_config c2 = {0};
    c2.batch = 1;
    c2.heads = 1;
    c2.q_len = 4;
    c2.k_len = 2;
    c2.head_dim = D;
    c2.causal = 1;
    float out2[4 * D], w2[4 * 2];
    float *q2 = rand_array(&rng, 4 * D, 1);
    CHECK_STATUS(pe_attention(out2, w2, q2, k, v, NULL, 0, &c2), PE_OK);
    free(q2);
    zero = 1;
    for (int t = 0; t < 2 * D; t++) zero &= out2[t] == 0.0f;
    for (int t = 0; t < 4; t++) zero &= w2[t] == 0.0f;
    CHECK(zero && w2[4] == 1.0f && w2[5] == 0.0f, "q_len > k_len causal: first rows masked");
    free(q);
    free(k);
    free(v);
}

/* Permute the keys and values together (non-causal): attention alone is blind to order. With ALiBi, RoPE
 * or sinusoidal embeddings added to the tokens, the output changes. */
static void test_permutation(void) {
    pe_rng rng = {0x6A7};
    enum {
        SQ = 3,
        SK = 9,
        D = 16,
        H = 2
    };
    /* tokens x (SK, H, D) in BSHD; queries fixed */
    float *x = rand_array(&rng, SK * H * D, 1), *q = rand_array(&rng, SQ * H * D, 1);
    float xp[SK * H * D], kk[SK * H * D], kp_[SK * H * D];
    int perm[SK] = {4, 0, 8, 2, 7, 1, 3, 6, 5};
    for (int j = 0; j < SK; j++) memcpy(xp + j * H * D, x + perm[j] * H * D, sizeof(float) * H * D);
    float o1[SQ * H * D], o2[SQ * H * D];
    pe_attention_config c = {0};
    c.batch = 1;
    c.heads = H;
    c.q_len = SQ;
    c.k_len = SK;
    c.head_dim = D;

    double diff = 0;
    CHECK_STATUS(pe_attention(o1, NULL, q, x, x, NULL, 0, &c), PE_OK);
    CHECK_STATUS(pe_attention(o2, NULL, q, xp, xp, NULL, 0, &c), PE_OK);
    for (int t = 0; t < SQ * H * D; t++) diff = fmax(diff, fabs(o1[t] - o2[t]));
    CHECK(diff < 1e-6, "no position encoding: permutation-invariant (max diff %.3g)", diff);
    printf("permutation, no PE: max diff %.3g\n", diff);

    float slopes[H];
    pe_alibi_slopes(slopes, H);
    c.alibi_slopes = slopes;
    pe_attention(o1, NULL, q, x, x, NULL, 0, &c);
    pe_attention(o2, NULL, q, xp, xp, NULL, 0, &c);
    diff = 0;
    for (int t = 0; t < SQ * H * D; t++) diff = fmax(diff, fabs(o1[t] - o2[t]));
    CHECK(diff > 1e-3, "ALiBi: order matters (max diff %.3g)", diff);
    c.alibi_slopes = NULL;

    pe_rope rope = make_rope(PE_ROPE_DEFAULT, D, 0, PE_PAIRING_HALF);
    c.rope = &rope;
    size_t ns = 0;
    pe_attention_scratch_size(&ns, &c);
    float *scratch = malloc(sizeof(float) * ns);
    pe_attention(o1, NULL, q, x, x, scratch, ns, &c);
    pe_attention(o2, NULL, q, xp, xp, scratch, ns, &c);
    diff = 0;
    for (int t = 0; t < SQ * H * D; t++) diff = fmax(diff, fabs(o1[t] - o2[t]));
    CHECK(diff > 1e-3, "RoPE: order matters (max diff %.3g)", diff);
    free(scratch);
    c.rope = NULL;

    /* sinusoidal: k = v = token + PE(position); permuting the tokens does not permute the encodings */
    memcpy(kk, x, sizeof kk);
    memcpy(kp_, xp, sizeof kp_);
    CHECK_STATUS(pe_sinusoidal_add(kk, NULL, 1, SK, H * D, 0, NULL), PE_OK);
    CHECK_STATUS(pe_sinusoidal_add(kp_, NULL, 1, SK, H * D, 0, NULL), PE_OK);
    pe_attention(o1, NULL, q, kk, kk, NULL, 0, &c);
    pe_attention(o2, NULL, q, kp_, kp_, NULL, 0, &c);
    diff = 0;
    for (int t = 0; t < SQ * H * D; t++) diff = fmax(diff, fabs(o1[t] - o2[t]));
    CHECK(diff > 1e-3, "sinusoidal: order matters (max diff %.3g)", diff);
    free(x);
    free(q);
}

/* Decoding the last token against the cache gives exactly the last row of full causal attention: the same
 * online-softmax steps (64 keys each, whatever the tile size: a decode block streams 512-key tiles, a prefill
 * block of 32 rows 64-key ones), the same order of operations. Lengths across several steps and tiles, MHA and
 * GQA, ALiBi and RoPE, both layouts. */
static void test_decode_consistency(void) {
    pe_rng rng = {99};
    enum {
        H = 4,
        D = 20
    };
    const int lens[] = {45, 64, 65, 300, 1100};
    for (size_t li = 0; li < sizeof lens / sizeof *lens; li++)
        for (int variant = 0; variant < 4; variant++) {
            const int S = lens[li], KVH = variant & 1 ? 2 : H, layout = variant >> 1;
            float *q = rand_array(&rng, (size_t)S * H * D, 1), *k = rand_array(&rng, (size_t)S * KVH * D, 1);
            float *v = rand_array(&rng, (size_t)S * KVH * D, 1);
            float *full = malloc(sizeof(float) * (size_t)S * H * D), last[H * D], lastq[H * D];
            float slopes[H];
            pe_alibi_slopes(slopes, H);
            pe_rope rope = make_rope(PE_ROPE_DEFAULT, D, 0, PE_PAIRING_HALF);
            pe_attention_config c = {0};
            c.batch = 1;
            c.heads = H;
            c.kv_heads = KVH;
            c.q_len = S;
            c.k_len = S;
            c.head_dim = D;
            c.causal = 1;
            c.alibi_slopes = variant < 2 ? slopes : NULL;
            c.rope = &rope;
            c.layout = layout ? PE_LAYOUT_BHSD : PE_LAYOUT_BSHD;
            size_t ns = 0;
            pe_attention_scratch_size(&ns, &c);
            float *scratch = malloc(sizeof(float) * ns);
            CHECK_STATUS(pe_attention(full, NULL, q, k, v, scratch, ns, &c), PE_OK);
            /* the last query of every head, (1, 1, H, D) in either layout */
            for (int h = 0; h < H; h++)
                memcpy(lastq + h * D, q + idx(c.layout, 1, H, S, D, 0, h, S - 1, 0), sizeof(float) * D);
            c.q_len = 1;
            CHECK_STATUS(pe_attention(last, NULL, lastq, k, v, scratch, ns, &c), PE_OK);
            int same = 1;
            for (int h = 0; h < H; h++)
                same &= memcmp(last + h * D, full + idx(c.layout, 1, H, S, D, 0, h, S - 1, 0), sizeof(float) * D) == 0;
            CHECK(same, "decode row == last row of full attention (S=%d KVH=%d alibi=%d layout=%d)", S, KVH,
                  variant < 2, layout);
            free(scratch);
            free(full);
            free(q);
            free(k);
            free(v);
        }
}

/* k_rotated: keys rotated once by the caller (a KV cache of rotated keys) give the same output as letting
 * pe_attention rotate them, bit for bit, with a smaller scratch; k is read in place and left alone. */
static void test_k_rotated(void) {
    pe_rng rng = {0x407A7E};
    const int types[] = {PE_ROPE_DEFAULT, PE_ROPE_YARN, PE_ROPE_DYNAMIC, PE_ROPE_LONGROPE};
    for (int it = 0; it < 16; it++) {
        const int rt = types[it % 4], H = 4, KVH = it & 1 ? 2 : 4, D = it & 2 ? 16 : 34;
        const int Sk = it < 8 ? 1 + 37 * it : 700, Sq = it % 3 == 0 ? 1 : (Sk < 5 ? Sk : 5), layout = (it >> 2) & 1;
        pe_rope rope = make_rope(rt, D, it & 4 ? D - 4 : 0, it & 1);
        float slopes[4];
        pe_alibi_slopes(slopes, H);
        int32_t *qpos = malloc(sizeof(int32_t) * Sq), *kpos = malloc(sizeof(int32_t) * Sk);
        for (int j = 0; j < Sk; j++) kpos[j] = 3 * j;
        for (int i = 0; i < Sq; i++) qpos[i] = 3 * (Sk - Sq + i);
        pe_attention_config c = {0};
        c.batch = 1 + (it & 1);
        c.heads = H;
        c.kv_heads = KVH;
        c.q_len = Sq;
        c.k_len = Sk;
        c.head_dim = D;
        c.layout = layout;
        c.causal = 1;
        c.rope = &rope;
        c.alibi_slopes = it % 5 == 0 ? slopes : NULL;
        if (it & 8) {
            c.q_positions = qpos;
            c.k_positions = kpos;
        }
        const size_t nq = (size_t)c.batch * H * Sq * D, nk = (size_t)c.batch * KVH * Sk * D;
        float *q = rand_array(&rng, nq, 1), *k = rand_array(&rng, nk, 1), *v = rand_array(&rng, nk, 1);
        float *o1 = malloc(sizeof(float) * nq), *o2 = malloc(sizeof(float) * nq), *kr = malloc(sizeof(float) * nk);
        size_t ns1 = 0, ns2 = 0;
        CHECK_STATUS(pe_attention_scratch_size(&ns1, &c), PE_OK);
        float *scratch = malloc(sizeof(float) * ns1);
        CHECK_STATUS(pe_attention(o1, NULL, q, k, v, scratch, ns1, &c), PE_OK);

        /* the cache: k rotated at its positions with the frequencies of this call's seq_len (max position + 1) */
        int32_t maxp = 0;
        for (int j = 0; j < Sk; j++) maxp = (c.k_positions ? kpos[j] : j) > maxp ? (c.k_positions ? kpos[j] : j) : maxp;
        for (int i = 0; i < Sq; i++) {
            const int32_t p = c.q_positions ? qpos[i] : Sk - Sq + i;
            maxp = p > maxp ? p : maxp;
        }
        int32_t *kp_all = malloc(sizeof(int32_t) * Sk);
        for (int j = 0; j < Sk; j++) kp_all[j] = c.k_positions ? kpos[j] : j;
        float *cs = malloc(sizeof(float) * Sk * rope.n_freq), *sn = malloc(sizeof(float) * Sk * rope.n_freq);
        CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, kp_all, Sk, (int64_t)maxp + 1, 1.0), PE_OK);
        memcpy(kr, k, sizeof(float) * nk);
        CHECK_STATUS(rope_apply(&rope, kr, cs, sn, c.batch, Sk, KVH, layout, 0, PE_ROTATE_FORWARD), PE_OK);
        float *kr0 = malloc(sizeof(float) * nk);
        memcpy(kr0, kr, sizeof(float) * nk);

        c.k_rotated = 1;
        CHECK_STATUS(pe_attention_scratch_size(&ns2, &c), PE_OK);
        CHECK(ns2 == nq + 2 * (size_t)Sq * rope.n_freq, "k_rotated scratch %zu (q copy + q tables)", ns2);
        CHECK(ns2 < ns1, "k_rotated needs less scratch (%zu < %zu)", ns2, ns1);
        CHECK_STATUS(pe_attention(o2, NULL, q, kr, v, scratch, ns2, &c), PE_OK);
        CHECK(memcmp(o1, o2, sizeof(float) * nq) == 0, "k_rotated #%d (type %d, Sq %d, Sk %d): same output", it, rt, Sq,
              Sk);
        CHECK(memcmp(kr, kr0, sizeof(float) * nk) == 0, "k_rotated: keys untouched");
        CHECK_STATUS(pe_attention(o2, NULL, q, kr, v, scratch, ns2 - 1, &c), PE_ERR_SHAPE);
        /* without rope the flag changes nothing */
        c.rope = NULL;
        CHECK_STATUS(pe_attention_scratch_size(&ns2, &c), PE_OK);
        CHECK(ns2 == 0, "k_rotated without rope: no scratch");
        free(q);
        free(k);
        free(v);
        free(o1);
        free(o2);
        free(kr);
        free(kr0);
        free(scratch);
        free(cs);
        free(sn);
        free(kp_all);
        free(qpos);
        free(kpos);
    }
}

static void test_bad_input(void) {
    float q[64] = {0}, k[64] = {0}, v[64] = {0}, out[64], scratch[1024];
    pe_attention_config c = {0};
    c.batch = 1;
    c.heads = 2;
    c.q_len = 2;
    c.k_len = 2;
    c.head_dim = 4;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &c), PE_OK);
    CHECK_STATUS(pe_attention(NULL, NULL, q, k, v, NULL, 0, &c), PE_ERR_NULL);
    CHECK_STATUS(pe_attention(out, NULL, NULL, k, v, NULL, 0, &c), PE_ERR_NULL);
    CHECK_STATUS(pe_attention(out, NULL, q, NULL, v, NULL, 0, &c), PE_ERR_NULL);
    CHECK_STATUS(pe_attention(out, NULL, q, k, NULL, NULL, 0, &c), PE_ERR_NULL);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, NULL), PE_ERR_NULL);
    pe_attention_config b;
    b = c;
    b.heads = 0;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_HEADS);
    b = c;
    b.kv_heads = 3;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_HEADS);
    b = c;
    b.kv_heads = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_HEADS);
    b = c;
    b.batch = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_SHAPE); /* 0: test_zero_sizes */
    b = c;
    b.q_len = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_SHAPE);
    b = c;
    b.k_len = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_SHAPE);
    b = c;
    b.head_dim = 0;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_SHAPE);
    b = c;
    b.layout = 2;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_LAYOUT);
    b = c;
    b.scale = NAN;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_SCALE);
    b = c;
    b.scale = INFINITY;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_SCALE);
    float bad_slopes[2] = {0.5f, NAN};
    b = c;
    b.alibi_slopes = bad_slopes;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_FIELD_VALUE);
    int32_t neg[2] = {0, -1};
    b = c;
    b.q_positions = neg;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_POSITION);
    b = c;
    b.k_positions = neg;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_POSITION);
    b = c;
    b.batch = INT32_MAX;
    b.heads = INT32_MAX;
    b.q_len = INT32_MAX;
    b.head_dim = INT32_MAX;
    size_t ns = 0;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &b), PE_ERR_SHAPE);
    CHECK_STATUS(pe_attention_scratch_size(NULL, &c), PE_ERR_NULL);
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_OK);
    CHECK(ns == 0, "no rope: no scratch");

    pe_rope rope = make_rope(PE_ROPE_DEFAULT, 4, 0, 0);
    b = c;
    b.rope = &rope;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &b), PE_OK);
    CHECK(ns == 2 * 8 + 2 * 8 + 2 * (2 + 2) * 2, "rope scratch %zu", ns);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_NULL);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, ns - 1, &b), PE_ERR_SHAPE);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, ns, &b), PE_OK);
    b.rope_seq_len = -2;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, ns, &b), PE_ERR_SEQ_LEN);
    b.rope_seq_len = 0;
    b.q_len = 3; /* default query positions k_len - q_len + i would be negative */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, sizeof scratch / sizeof *scratch, &b), PE_ERR_POSITION);
    /* ALiBi's relative position must fit in an int32: explicit key positions up to 2^31 - 1 against default
     * query positions below 0 (q_len > k_len) do not */
    int32_t far[2] = {0, INT32_MAX};
    float sl2[2] = {0.5f, 0.25f};
    b = c;
    b.alibi_slopes = sl2;
    b.k_positions = far;
    b.q_len = 3;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_ERR_POSITION);
    b.q_len = 2; /* query positions 0, 1 */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_OK);
    b.q_len = 3;
    b.alibi_slopes = NULL; /* the mask alone compares, never subtracts */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &b), PE_OK);
    pe_rope rope8 = make_rope(PE_ROPE_DEFAULT, 8, 0, 0);
    b = c;
    b.rope = &rope8;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, sizeof scratch / sizeof *scratch, &b), PE_ERR_SHAPE);
}

/* posenc.h "Sizes": batch or q_len 0 is a no-op (nothing written, NULL arrays and no scratch allowed);
 * k_len 0 leaves every query row without a key, so out is all zeros as for any fully masked row; the
 * structural sizes are still checked. */
static void test_zero_sizes(void) {
    enum {
        H = 2,
        D = 4
    };
    float q[2 * H * D], out[2 * H * D];
    for (int i = 0; i < 2 * H * D; i++) q[i] = 0.25f * (float)(i + 1);
    pe_attention_config c = {0};
    c.batch = 0;
    c.heads = H;
    c.q_len = 2;
    c.k_len = 3;
    c.head_dim = D;
    c.causal = 1;
    size_t ns = 99;
    pe_rope rope;
    pe_rope_config rc = {0};
    rc.head_dim = D;
    CHECK_STATUS(pe_rope_init(&rope, &rc), PE_OK);
    c.rope = &rope;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_OK);
    CHECK(ns == 0, "batch 0 scratch %zu", ns);
    memset(out, 0x7f, sizeof out);
    CHECK_STATUS(pe_attention(out, NULL, q, q, q, NULL, 0, &c), PE_OK);
    CHECK_STATUS(pe_attention(NULL, NULL, NULL, NULL, NULL, NULL, 0, &c), PE_OK);
    c.batch = 1;
    c.q_len = 0;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_OK);
    CHECK(ns == 0, "q_len 0 scratch %zu", ns);
    CHECK_STATUS(pe_attention(out, NULL, q, q, q, NULL, 0, &c), PE_OK);
    int untouched = 1;
    for (int i = 0; i < 2 * H * D; i++) untouched &= out[i] == out[0] && out[0] > 1e38f;
    CHECK(untouched, "attention wrote with batch or q_len 0");
    c.head_dim = 0;
    CHECK_STATUS(pe_attention(out, NULL, q, q, q, NULL, 0, &c), PE_ERR_SHAPE);
    c.head_dim = D;
    c.heads = 0;
    CHECK_STATUS(pe_attention(out, NULL, q, q, q, NULL, 0, &c), PE_ERR_HEADS);

    /* k_len 0, no RoPE (explicit query positions): zeros, weights empty; k and v may be NULL */
    const int32_t qpos[2] = {0, 1};
    c.heads = H;
    c.rope = NULL;
    c.q_len = 2;
    c.k_len = 0;
    c.q_positions = qpos;
    memset(out, 0x7f, sizeof out);
    CHECK_STATUS(pe_attention(out, NULL, q, NULL, NULL, NULL, 0, &c), PE_OK);
    int zeros = 1;
    for (int i = 0; i < 2 * H * D; i++) zeros &= out[i] == 0.0f;
    CHECK(zeros, "k_len 0: out all zeros");
    /* with RoPE and default query positions, q_len > k_len puts queries below position 0: refused as before */
    c.rope = &rope;
    c.q_positions = NULL;
    float scratch[64];
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_OK);
    CHECK(ns <= 64, "scratch %zu", ns);
    CHECK_STATUS(pe_attention(out, NULL, q, NULL, NULL, scratch, ns, &c), PE_ERR_POSITION);
}

int main(void) {
    test_zero_sizes();
    test_fixed_shapes();
    test_more_shapes();
    test_random_shapes();
    test_extreme_logits();
    test_fully_masked();
    test_permutation();
    test_decode_consistency();
    test_k_rotated();
    test_bad_input();
    printf(
        "attention: %d cases vs double reference; worst |out - ref| %.3g (tol 2e-5), worst |w - ref| %.3g (tol 5e-6)\n",
        n_cases_run, worst_out_err, worst_w_err);
    return pe_test_report("test_attention");
}
