/* fuzz_simd_twins.c — the SIMD and scalar builds agree bit for bit, on inputs the fuzzer steers toward the
 * vector loops' edges (tails, tile boundaries, causal bands, partial rotary, positions near INT32_MAX).
 *
 * scripts/fuzz.sh links this harness against the scalar library objects as they are and the SIMD ones with
 * every global symbol renamed simd_<name> (as build.sh does for tests/c/test_simd_twins.c), so pe_x is the
 * scalar kernel and simd_pe_x the SIMD one. Each input is one case of pe_rope_cos_sin + pe_rope_apply,
 * pe_attention, pe_sinusoidal_table or pe_alibi_bias, run through both on identical inputs; any difference
 * in status or in a single output bit aborts (in every mode: this is the promise itself, not a strict extra). */
#include "fuzz.h"

#define SIMD_TWIN(name) extern __typeof__(name) simd_##name
SIMD_TWIN(pe_rope_init);
SIMD_TWIN(pe_rope_cos_sin);
SIMD_TWIN(pe_rope_apply);
SIMD_TWIN(pe_attention_scratch_size);
SIMD_TWIN(pe_attention);
SIMD_TWIN(pe_sinusoidal_table);
SIMD_TWIN(pe_alibi_bias);

static pe_rope rope, rope_simd;

static void same(const float *a, const float *b, size_t n, const char *what) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i, b + i, 4) != 0) fuzz_fail("%s[%zu] differs: scalar %a, SIMD %a", what, i, a[i], b[i]);
}
static void same_status(pe_status a, pe_status b, const char *what) {
    if (a != b) fuzz_fail("%s: scalar %s, SIMD %s", what, pe_status_string(a), pe_status_string(b));
}

static int make_rope(fuzz_input *in, int32_t head_dim) {
    pe_rope_config c = {.head_dim = head_dim};
    if (fuzz_bool(in)) c.rotary_dim = 2 * (int32_t)fuzz_range(in, 1, head_dim / 2);
    c.pairing = fuzz_bool(in);
    switch (fuzz_range(in, 0, 4)) {
    case 1: c.type = PE_ROPE_LINEAR, c.factor = (double)fuzz_range(in, 1, 64); break;
    case 2: c.type = PE_ROPE_DYNAMIC, c.factor = 4.0, c.max_position_embeddings = 2048; break;
    case 3:
        c.type = PE_ROPE_YARN, c.factor = (double)fuzz_range(in, 2, 40), c.original_max_position_embeddings = 4096;
        break;
    case 4:
        c.type = PE_ROPE_LLAMA3, c.factor = 8.0, c.low_freq_factor = 1.0, c.high_freq_factor = 4.0;
        c.original_max_position_embeddings = 8192;
        break;
    default: break;
    }
    if (fuzz_bool(in)) c.base = (double)fuzz_range(in, 2, 5000000);
    const pe_status a = pe_rope_init(&rope, &c), b = simd_pe_rope_init(&rope_simd, &c);
    same_status(a, b, "pe_rope_init");
    if (a == PE_OK && (rope.n_freq != rope_simd.n_freq || rope.rot_dim != rope_simd.rot_dim ||
                       memcmp(rope.inv_freq, rope_simd.inv_freq, sizeof rope.inv_freq) != 0 ||
                       memcmp(rope.inv_freq_long, rope_simd.inv_freq_long, sizeof rope.inv_freq_long) != 0 ||
                       memcmp(&rope.attention_scaling, &rope_simd.attention_scaling, sizeof(double)) != 0))
        fuzz_fail("pe_rope_init resolved the config differently");
    return a == PE_OK;
}

static void rope_case(fuzz_input *in) {
    if (!make_rope(in, 2 * (int32_t)fuzz_range(in, 1, fuzz_bool(in) ? 12 : 160))) return;
    const int32_t B = (int32_t)fuzz_range(in, 0, 3), S = (int32_t)fuzz_range(in, 0, 24);
    const int32_t H = (int32_t)fuzz_range(in, 1, 6), per_batch = fuzz_bool(in);
    const int32_t layout = fuzz_bool(in), rotation = fuzz_bool(in);
    pe_rope_apply_config ac = {
        .batch = B, .seq = S, .heads = H, .layout = layout, .per_batch_rows = per_batch, .rotation = rotation};
    const int top = fuzz_bool(in);
    const int64_t seq_len = fuzz_bool(in) ? PE_SEQ_LEN_FROM_POSITIONS : PE_SEQ_LEN_NONE;
    const size_t rows = per_batch ? (size_t)B * S : (size_t)S, nf = (size_t)rope.n_freq;
    const int64_t D = rope.config.head_dim;
    size_t nx = (size_t)(B * S * H * D);
    if (fuzz_bool(in) && nx) { /* a view with gaps after each head vector, row and batch, and an offset */
        const int64_t g1 = fuzz_range(in, 0, 5), g2 = fuzz_range(in, 0, 9), g3 = fuzz_range(in, 0, 17);
        pe_strides *st = &ac.strides;
        if (layout == PE_LAYOUT_BHSD)
            st->seq = D + g1, st->heads = S * st->seq + g2, st->batch = H * st->heads + g3;
        else
            st->heads = D + g1, st->seq = H * st->heads + g2, st->batch = S * st->seq + g3;
        ac.offset = fuzz_range(in, 0, 33);
        nx = (size_t)(ac.offset + (B - 1) * st->batch + (S - 1) * st->seq + (H - 1) * st->heads + D);
    }
    if (nx > (1 << 15)) return;
    fuzz_rng rng = fuzz_rng_from(in);
    int32_t *pos = fuzz_alloc(rows, 4);
    for (size_t i = 0; i < rows; i++)
        pos[i] = top ? INT32_MAX - (int32_t)(fuzz_rng_next(&rng) % 1000000) : (int32_t)(fuzz_rng_next(&rng) % 300000);
    float *c1 = fuzz_alloc(rows * nf, 4), *s1 = fuzz_alloc(rows * nf, 4);
    float *c2 = fuzz_alloc(rows * nf, 4), *s2 = fuzz_alloc(rows * nf, 4);
    float *x1 = fuzz_alloc(nx, 4), *x2 = fuzz_alloc(nx, 4);
    fuzz_fill(x1, nx, &rng, 4.0f);
    if (nx) memcpy(x2, x1, nx * 4);
    const pe_status a = pe_rope_cos_sin(c1, s1, &rope, pos, (int32_t)rows, seq_len, 1.0);
    same_status(a, simd_pe_rope_cos_sin(c2, s2, &rope_simd, pos, (int32_t)rows, seq_len, 1.0), "pe_rope_cos_sin");
    if (a == PE_OK) {
        same(c1, c2, rows * nf, "cos");
        same(s1, s2, rows * nf, "sin");
        same_status(pe_rope_apply(&rope, x1, c1, s1, &ac), simd_pe_rope_apply(&rope_simd, x2, c1, s1, &ac),
                    "pe_rope_apply");
        same(x1, x2, nx, "x");
    }
    free(pos), free(c1), free(s1), free(c2), free(s2), free(x1), free(x2);
}

static void attention_case(fuzz_input *in) {
    pe_attention_config cfg = {0};
    cfg.batch = (int32_t)fuzz_range(in, 1, 2);
    cfg.kv_heads = (int32_t)fuzz_range(in, 1, 3);
    cfg.heads = cfg.kv_heads * (int32_t)fuzz_range(in, 1, 3);
    cfg.k_len = (int32_t)fuzz_range(in, 0, fuzz_range(in, 0, 5) == 0 ? 1100 : 140);
    cfg.q_len = (int32_t)fuzz_range(in, 0, fuzz_bool(in) ? 2 : 80);
    const int with_rope = fuzz_bool(in);
    cfg.head_dim = with_rope ? 2 * (int32_t)fuzz_range(in, 1, 40) : (int32_t)fuzz_range(in, 1, 80);
    cfg.layout = fuzz_bool(in);
    cfg.causal = fuzz_bool(in);
    if (fuzz_bool(in)) cfg.scale = (float)fuzz_range(in, 1, 100) / 64.0f;
    const int with_alibi = fuzz_bool(in), explicit_pos = fuzz_bool(in), want_weights = fuzz_bool(in);
    if (with_rope) {
        if (!make_rope(in, cfg.head_dim)) return;
        cfg.rope = &rope; /* the SIMD kernel reads the same resolved rope: init is compared above */
        cfg.k_rotated = fuzz_bool(in);
    }
    const size_t B = (size_t)cfg.batch, H = (size_t)cfg.heads, KH = (size_t)cfg.kv_heads;
    const size_t Q = (size_t)cfg.q_len, K = (size_t)cfg.k_len, D = (size_t)cfg.head_dim;
    if (B * H * Q * K * D > (1 << 16)) return;
    fuzz_rng rng = fuzz_rng_from(in);
    float slopes[9];
    for (int h = 0; h < 9; h++) slopes[h] = fuzz_rng_float(&rng, 2.0f);
    if (with_alibi) cfg.alibi_slopes = slopes;
    int32_t *qpos = NULL, *kpos = NULL;
    if (explicit_pos && Q && K) {
        qpos = fuzz_alloc(Q, 4), kpos = fuzz_alloc(K, 4);
        const int32_t base = (int32_t)(fuzz_rng_next(&rng) % 200000);
        for (size_t j = 0; j < K; j++) kpos[j] = base + (int32_t)j + (int32_t)(fuzz_rng_next(&rng) % 3);
        for (size_t i = 0; i < Q; i++)
            qpos[i] = base + (int32_t)K - 1 + (int32_t)(fuzz_rng_next(&rng) % 4) - (int32_t)(Q - 1 - i);
        for (size_t i = 0; i < Q; i++) qpos[i] = qpos[i] < 0 ? 0 : qpos[i];
        cfg.q_positions = qpos, cfg.k_positions = kpos;
    }
    size_t ns = 0, ns2 = 0;
    const pe_status sa = pe_attention_scratch_size(&ns, &cfg);
    same_status(sa, simd_pe_attention_scratch_size(&ns2, &cfg), "pe_attention_scratch_size");
    if (sa != PE_OK) goto done;
    if (ns != ns2) fuzz_fail("scratch sizes differ: %zu vs %zu", ns, ns2);
    const size_t nq = B * H * Q * D, nk = B * KH * K * D, nw = B * H * Q * K;
    float *q = fuzz_alloc(nq, 4), *k = fuzz_alloc(nk, 4), *v = fuzz_alloc(nk, 4);
    float *o1 = fuzz_alloc(nq, 4), *o2 = fuzz_alloc(nq, 4), *sc1 = fuzz_alloc(ns, 4), *sc2 = fuzz_alloc(ns, 4);
    float *w1 = want_weights ? fuzz_alloc(nw, 4) : NULL, *w2 = want_weights ? fuzz_alloc(nw, 4) : NULL;
    fuzz_fill(q, nq, &rng, 2.0f);
    fuzz_fill(k, nk, &rng, 2.0f);
    fuzz_fill(v, nk, &rng, 1.0f);
    const pe_status a = pe_attention(o1, w1, q, k, v, sc1, ns, &cfg);
    same_status(a, simd_pe_attention(o2, w2, q, k, v, sc2, ns, &cfg), "pe_attention");
    if (a == PE_OK) {
        same(o1, o2, nq, "out");
        if (want_weights) same(w1, w2, nw, "weights");
    }
    free(q), free(k), free(v), free(o1), free(o2), free(sc1), free(sc2), free(w1), free(w2);
done:
    free(qpos), free(kpos);
}

static void table_case(fuzz_input *in) {
    const int32_t S = (int32_t)fuzz_range(in, 0, 16), DM = (int32_t)fuzz_range(in, 1, 200);
    pe_sinusoidal_config sc = {.variant = (int32_t)fuzz_range(in, 0, PE_SINUSOIDAL_VARIANT_COUNT - 1)};
    sc.offset = fuzz_bool(in) ? (int32_t)fuzz_range(in, 0, INT32_MAX - 16) : (int32_t)fuzz_range(in, 0, 5000);
    if (fuzz_bool(in)) sc.base = (double)fuzz_range(in, 2, 1000000);
    float *t1 = fuzz_alloc((size_t)S * DM, 4), *t2 = fuzz_alloc((size_t)S * DM, 4);
    const pe_status a = pe_sinusoidal_table(t1, S, DM, &sc);
    same_status(a, simd_pe_sinusoidal_table(t2, S, DM, &sc), "pe_sinusoidal_table");
    if (a == PE_OK) same(t1, t2, (size_t)S * DM, "sinusoidal");
    free(t1), free(t2);

    const int32_t H = (int32_t)fuzz_range(in, 1, 40), Q = (int32_t)fuzz_range(in, 0, 24);
    const int32_t K = (int32_t)fuzz_range(in, 0, 90), causal = fuzz_bool(in);
    float *b1 = fuzz_alloc((size_t)H * Q * K, 4), *b2 = fuzz_alloc((size_t)H * Q * K, 4);
    const pe_status b = pe_alibi_bias(b1, NULL, H, Q, K, causal);
    same_status(b, simd_pe_alibi_bias(b2, NULL, H, Q, K, causal), "pe_alibi_bias");
    if (b == PE_OK) same(b1, b2, (size_t)H * Q * K, "alibi bias");
    free(b1), free(b2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size};
    switch (fuzz_range(&in, 0, 2)) {
    case 0: rope_case(&in); break;
    case 1: attention_case(&in); break;
    default: table_case(&in); break;
    }
    return 0;
}
