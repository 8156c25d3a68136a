/* test_simd_twins.c — the SIMD build and the scalar build agree bit for bit, as the kernels promise.
 *
 * build.sh links this binary against both native builds at once: the scalar objects as they are, and the
 * SIMD objects (simd.h's native mapping) with every global symbol renamed simd_<name>. So pe_rope_apply here
 * is the scalar kernel and simd_pe_rope_apply the SIMD one, and each random case runs both on identical
 * inputs and compares every output bit (x whole, so the gaps of a strided view are compared too). Shapes are drawn so that every vector loop meets its scalar tail
 * (head dims and lengths that are not multiples of 4, 8 or 32, attention tiles of 64 and 512 keys). */
#include "posenc.h"
#include "test_util.h"
#include "twins_util.h"

#include <stdlib.h>
#include <string.h>

SIMD_TWIN(pe_rope_init);
SIMD_TWIN(pe_rope_cos_sin);
SIMD_TWIN(pe_rope_apply);
SIMD_TWIN(pe_attention_scratch_size);
SIMD_TWIN(pe_attention);
SIMD_TWIN(pe_sinusoidal_table);
SIMD_TWIN(pe_alibi_slopes);
SIMD_TWIN(pe_alibi_bias);

/* index of the first differing float of a and b (n floats), or -1 */
static long first_diff(const float *a, const float *b, size_t n) {
    const long d = first_diff_bytes(a, b, n * 4);
    return d < 0 ? -1 : d / 4;
}

static void fill(float *x, size_t n, pe_rng *rng, float amp) {
    for (size_t i = 0; i < n; i++) x[i] = pe_rng_float(rng) * amp;
}

/* A random valid RoPE config of any scaling type; factor arrays point into `factors`. */
static pe_rope_config random_rope_config(pe_rng *rng, double factors[2][PE_ROPE_MAX_FREQ]) {
    pe_rope_config c = {0};
    c.head_dim = 2 * pe_rng_int(rng, 1, pe_rng_int(rng, 0, 3) ? 40 : 160);
    if (pe_rng_int(rng, 0, 2) == 0) c.rotary_dim = 2 * pe_rng_int(rng, 1, c.head_dim / 2);
    c.base = pe_rng_int(rng, 0, 1) ? 10000.0 : 1e4 + 1e6 * (double)pe_rng_int(rng, 0, 500);
    c.pairing = pe_rng_int(rng, 0, 1);
    c.type = pe_rng_int(rng, 0, PE_ROPE_TYPE_COUNT - 1);
    set_scaling(&c, rng, factors);
    return c;
}

static void test_rope(void) {
    pe_rng rng = {0x70be7ULL};
    static double factors[2][PE_ROPE_MAX_FREQ];
    static pe_rope rope, rope_simd;
    int cases = 0, table_diffs = 0, apply_diffs = 0, status_diffs = 0;
    for (int it = 0; it < 400; it++) {
        pe_rope_config cfg = random_rope_config(&rng, factors);
        pe_status s1 = pe_rope_init(&rope, &cfg), s2 = simd_pe_rope_init(&rope_simd, &cfg);
        status_diffs += s1 != s2;
        if (s1 != PE_OK || s2 != PE_OK) {
            CHECK(0, "random config %d rejected: %s (type %d, head_dim %d)", it, pe_status_string(s1), cfg.type,
                  cfg.head_dim);
            continue;
        }
        status_diffs += memcmp(&rope, &rope_simd, sizeof rope) != 0; /* init has no SIMD path: same bytes */

        const int32_t B = pe_rng_int(&rng, 1, 3), S = pe_rng_int(&rng, 1, 9), H = pe_rng_int(&rng, 1, 5);
        const int32_t per_batch = pe_rng_int(&rng, 0, 1), n_pos = per_batch ? B * S : S;
        const int64_t seq_len = pe_rng_int(&rng, 0, 1) ? PE_SEQ_LEN_FROM_POSITIONS : PE_SEQ_LEN_NONE;
        const double extra = pe_rng_int(&rng, 0, 1) ? 1.0 : 0.5 + pe_rng_float(&rng) * 0.25;
        const size_t nf = (size_t)rope.n_freq, D = (size_t)cfg.head_dim;
        int32_t *pos = xcalloc((size_t)n_pos, sizeof *pos);
        for (int32_t p = 0; p < n_pos; p++) pos[p] = random_position(&rng);
        float *cos1 = xcalloc((size_t)n_pos * nf, 4), *sin1 = xcalloc((size_t)n_pos * nf, 4);
        float *cos2 = xcalloc((size_t)n_pos * nf, 4), *sin2 = xcalloc((size_t)n_pos * nf, 4);
        s1 = pe_rope_cos_sin(cos1, sin1, &rope, pos, n_pos, seq_len, extra);
        s2 = simd_pe_rope_cos_sin(cos2, sin2, &rope, pos, n_pos, seq_len, extra);
        status_diffs += s1 != s2;
        const long dc = first_diff(cos1, cos2, (size_t)n_pos * nf), ds = first_diff(sin1, sin2, (size_t)n_pos * nf);
        if (dc >= 0 || ds >= 0) {
            table_diffs++;
            if (table_diffs <= 3)
                fprintf(stderr, "  table differs: type %d n_freq %zu position %d, cos[%ld] sin[%ld]\n", cfg.type, nf,
                        pos[(dc >= 0 ? dc : ds) / (long)nf], dc, ds);
        }

        pe_rope_apply_config ac = {
            .batch = B, .seq = S, .heads = H, .layout = pe_rng_int(&rng, 0, 1), .per_batch_rows = per_batch};
        ac.rotation = pe_rng_int(&rng, 0, 1);
        const int32_t layout = ac.layout;
        const size_t nx = random_view(&ac, &rng, (int32_t)D);
        float *x1 = xcalloc(nx, 4), *x2 = xcalloc(nx, 4);
        fill(x1, nx, &rng, 4.0f);
        memcpy(x2, x1, nx * 4);
        s1 = pe_rope_apply(&rope, x1, cos1, sin1, &ac);
        s2 = simd_pe_rope_apply(&rope, x2, cos1, sin1, &ac);
        status_diffs += s1 != s2 || s1 != PE_OK;
        const long dx = first_diff(x1, x2, nx);
        if (dx >= 0) {
            apply_diffs++;
            if (apply_diffs <= 3)
                fprintf(stderr, "  apply differs: D %zu rot_dim %d pairing %d layout %d at %ld: %a vs %a\n", D,
                        rope.rot_dim, cfg.pairing, layout, dx, x1[dx], x2[dx]);
        }
        cases++;
        free(pos);
        free(cos1), free(sin1), free(cos2), free(sin2), free(x1), free(x2);
    }
    CHECK(status_diffs == 0, "%d RoPE calls where the builds' statuses or resolved configs differ", status_diffs);
    CHECK(table_diffs == 0, "%d of %d random RoPE tables differ between SIMD and scalar", table_diffs, cases);
    CHECK(apply_diffs == 0, "%d of %d random RoPE applies differ between SIMD and scalar", apply_diffs, cases);
    CHECK(cases >= 390, "only %d RoPE cases ran", cases);
}

static void test_attention(void) {
    pe_rng rng = {0xa77e7710ULL};
    static pe_rope rope;
    int cases = 0, out_diffs = 0, w_diffs = 0, status_diffs = 0;
    for (int it = 0; it < 160; it++) {
        pe_attention_config cfg = {0};
        cfg.batch = pe_rng_int(&rng, 1, 2);
        cfg.kv_heads = pe_rng_int(&rng, 1, 3);
        cfg.heads = cfg.kv_heads * pe_rng_int(&rng, 1, 3);
        if (pe_rng_int(&rng, 0, 3) == 0) cfg.kv_heads = 0; /* the default: heads */
        const int decode = pe_rng_int(&rng, 0, 2) == 0;
        cfg.k_len = pe_rng_int(&rng, 0, 5) == 0 ? pe_rng_int(&rng, 500, 1100) : pe_rng_int(&rng, 1, 150);
        cfg.q_len = decode ? pe_rng_int(&rng, 1, 2) : pe_rng_int(&rng, 1, cfg.k_len < 90 ? cfg.k_len + 3 : 90);
        const int with_rope = pe_rng_int(&rng, 0, 2) == 0;
        cfg.head_dim = with_rope ? 2 * pe_rng_int(&rng, 1, 40) : pe_rng_int(&rng, 1, 80);
        cfg.layout = pe_rng_int(&rng, 0, 1);
        cfg.causal = pe_rng_int(&rng, 0, 1);
        if (pe_rng_int(&rng, 0, 3) == 0) cfg.scale = 0.05f + 0.1f * (float)pe_rng_int(&rng, 0, 9);
        const int32_t kvh = cfg.kv_heads ? cfg.kv_heads : cfg.heads;

        float slopes[16];
        if (pe_rng_int(&rng, 0, 2) == 0) {
            pe_alibi_slopes(slopes, cfg.heads);
            cfg.alibi_slopes = slopes;
        }
        if (with_rope) {
            pe_rope_config rc = {.head_dim = cfg.head_dim, .pairing = pe_rng_int(&rng, 0, 1)};
            if (pe_rng_int(&rng, 0, 1)) rc.rotary_dim = 2 * pe_rng_int(&rng, 1, cfg.head_dim / 2);
            CHECK_STATUS(pe_rope_init(&rope, &rc), PE_OK);
            cfg.rope = &rope;
            cfg.k_rotated = pe_rng_int(&rng, 0, 3) == 0;
        }
        int32_t *qpos = NULL, *kpos = NULL;
        if (pe_rng_int(&rng, 0, 2) == 0) { /* explicit positions: a gap, shuffled keys, a repeated position */
            qpos = xcalloc((size_t)cfg.q_len, sizeof *qpos);
            kpos = xcalloc((size_t)cfg.k_len, sizeof *kpos);
            const int32_t base = pe_rng_int(&rng, 0, 1) ? 0 : pe_rng_int(&rng, 0, 1 << 20);
            for (int32_t j = 0; j < cfg.k_len; j++) kpos[j] = base + j + (j > cfg.k_len / 2 ? 7 : 0);
            if (cfg.k_len > 3) kpos[1] = kpos[2];
            for (int32_t i = 0; i < cfg.q_len; i++) {
                const int32_t p = base + cfg.k_len - cfg.q_len + i + pe_rng_int(&rng, 0, 9);
                qpos[i] = p < 0 ? 0 : p;
            }
            cfg.q_positions = qpos;
            cfg.k_positions = kpos;
        } else if ((cfg.rope || cfg.alibi_slopes) && cfg.q_len > cfg.k_len) {
            cfg.q_len = cfg.k_len; /* default query positions k_len - q_len + i would start below 0 */
        }

        const size_t D = (size_t)cfg.head_dim, B = (size_t)cfg.batch;
        const size_t nq = B * cfg.heads * cfg.q_len * D, nk = B * kvh * cfg.k_len * D;
        const size_t nw = B * cfg.heads * cfg.q_len * cfg.k_len;
        float *q = xcalloc(nq, 4), *k = xcalloc(nk, 4), *v = xcalloc(nk, 4);
        fill(q, nq, &rng, 2.0f);
        fill(k, nk, &rng, 2.0f);
        fill(v, nk, &rng, 1.0f);
        size_t ns1 = 0, ns2 = 0;
        CHECK_STATUS(pe_attention_scratch_size(&ns1, &cfg), PE_OK);
        CHECK_STATUS(simd_pe_attention_scratch_size(&ns2, &cfg), PE_OK);
        status_diffs += ns1 != ns2;
        const int want_weights = pe_rng_int(&rng, 0, 2) == 0;
        float *o1 = xcalloc(nq, 4), *o2 = xcalloc(nq, 4), *sc1 = xcalloc(ns1, 4), *sc2 = xcalloc(ns1, 4);
        float *w1 = want_weights ? xcalloc(nw, 4) : NULL, *w2 = want_weights ? xcalloc(nw, 4) : NULL;
        const pe_status s1 = pe_attention(o1, w1, q, k, v, sc1, ns1, &cfg);
        const pe_status s2 = simd_pe_attention(o2, w2, q, k, v, sc2, ns1, &cfg);
        status_diffs += s1 != s2;
        CHECK(s1 == PE_OK, "attention case %d: %s", it, pe_status_string(s1));
        const long d_out = first_diff(o1, o2, nq), d_w = want_weights ? first_diff(w1, w2, nw) : -1;
        if (d_out >= 0) {
            out_diffs++;
            if (out_diffs <= 3)
                fprintf(stderr,
                        "  attention out differs: B %zu H %d/%d q %d k %d D %zu layout %d causal %d alibi %d"
                        " rope %d at %ld: %a vs %a\n",
                        B, cfg.heads, kvh, cfg.q_len, cfg.k_len, D, cfg.layout, cfg.causal, cfg.alibi_slopes != NULL,
                        with_rope, d_out, o1[d_out], o2[d_out]);
        }
        w_diffs += d_w >= 0;
        cases++;
        free(qpos), free(kpos), free(q), free(k), free(v), free(o1), free(o2), free(sc1), free(sc2), free(w1), free(w2);
    }
    CHECK(status_diffs == 0, "%d attention calls where the builds' statuses or scratch sizes differ", status_diffs);
    CHECK(out_diffs == 0, "%d of %d random attention outputs differ between SIMD and scalar", out_diffs, cases);
    CHECK(w_diffs == 0, "%d random attention weight tensors differ between SIMD and scalar", w_diffs);
}

static void test_sinusoidal_and_alibi(void) {
    pe_rng rng = {0x51a05ULL};
    int diffs = 0;
    for (int it = 0; it < 120; it++) {
        pe_sinusoidal_config cfg = {.variant = pe_rng_int(&rng, 0, PE_SINUSOIDAL_VARIANT_COUNT - 1)};
        cfg.offset = pe_rng_int(&rng, 0, 1) ? 0 : random_position(&rng) / 2;
        if (pe_rng_int(&rng, 0, 2) == 0) cfg.base = 100.0 + pe_rng_int(&rng, 0, 100000);
        const int32_t S = pe_rng_int(&rng, 1, 12), DM = pe_rng_int(&rng, 4, 140);
        float *t1 = xcalloc((size_t)S * DM, 4), *t2 = xcalloc((size_t)S * DM, 4);
        const pe_status s1 = pe_sinusoidal_table(t1, S, DM, &cfg), s2 = simd_pe_sinusoidal_table(t2, S, DM, &cfg);
        diffs += s1 != s2 || (s1 == PE_OK && first_diff(t1, t2, (size_t)S * DM) >= 0);
        free(t1), free(t2);

        const int32_t H = pe_rng_int(&rng, 1, 40), Q = pe_rng_int(&rng, 1, 20), K = pe_rng_int(&rng, 1, 70);
        float sl1[40], sl2[40];
        pe_alibi_slopes(sl1, H);
        simd_pe_alibi_slopes(sl2, H);
        diffs += first_diff(sl1, sl2, (size_t)H) >= 0;
        float *b1 = xcalloc((size_t)H * Q * K, 4), *b2 = xcalloc((size_t)H * Q * K, 4);
        const int32_t causal = pe_rng_int(&rng, 0, 1);
        pe_alibi_bias(b1, NULL, H, Q, K, causal);
        simd_pe_alibi_bias(b2, NULL, H, Q, K, causal);
        diffs += first_diff(b1, b2, (size_t)H * Q * K) >= 0;
        free(b1), free(b2);
    }
    CHECK(diffs == 0, "%d sinusoidal tables / ALiBi slopes and biases differ between SIMD and scalar", diffs);
}

int main(void) {
    test_rope();
    test_attention();
    test_sinusoidal_and_alibi();
    return pe_test_report("test_simd_twins");
}
