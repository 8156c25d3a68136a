/* fuzz_attention.c — pe_attention and pe_attention_scratch_size on random dimensions (zero counts included),
 * GQA / MQA head ratios (and ones that do not divide), both layouts, causal, ALiBi slopes, RoPE (every
 * pairing, partial rotary, pre-rotated keys), explicit query and key positions (any int32), rope_seq_len and
 * scale, with and without the weights output. q, k, v, out, weights, positions and scratch are allocated to
 * exactly the sizes the config gives (scratch: what pe_attention_scratch_size said), so AddressSanitizer
 * reports anything touched past them.
 *
 * Strict invariants when the call is accepted (inputs are bounded: |q|, |k| <= 2, |v| <= 1, |slope| <= 8):
 *   - out and weights are finite;
 *   - each out element is a convex combination of v: |out| <= max |v| of its kv head (or 0 for a fully masked
 *     row);
 *   - each weights row sums to 1 (or is all zeros), every weight in [0, 1].
 * A refused call leaves out and weights untouched. */
#include "fuzz.h"

static pe_rope rope;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size};
    pe_attention_config cfg = {0};
    cfg.batch = (int32_t)fuzz_range(&in, -1, 3);
    cfg.kv_heads = (int32_t)fuzz_range(&in, -1, 4);
    cfg.heads = fuzz_bool(&in) ? (cfg.kv_heads > 0 ? cfg.kv_heads : 1) * (int32_t)fuzz_range(&in, 1, 4)
                               : (int32_t)fuzz_range(&in, -1, 9);
    cfg.q_len = (int32_t)fuzz_range(&in, -1, fuzz_bool(&in) ? 4 : 80);
    cfg.k_len = (int32_t)fuzz_range(&in, -1, fuzz_range(&in, 0, 7) == 0 ? 1100 : 130);
    cfg.head_dim = (int32_t)fuzz_range(&in, -1, fuzz_bool(&in) ? 16 : 136);
    cfg.layout = (int32_t)fuzz_range(&in, -1, 2);
    cfg.causal = (int32_t)fuzz_range(&in, 0, 2);
    if (fuzz_bool(&in)) cfg.scale = (float)fuzz_double(&in, 0.0, 1.0);
    const int with_alibi = fuzz_bool(&in), with_rope = fuzz_bool(&in), explicit_pos = fuzz_bool(&in);
    const int wild_pos = explicit_pos && fuzz_range(&in, 0, 3) == 0, want_weights = fuzz_bool(&in);
    if (with_rope) {
        pe_rope_config rc = {.head_dim = cfg.head_dim > 0 && cfg.head_dim % 2 == 0 ? cfg.head_dim : 2};
        if (fuzz_range(&in, 0, 7) == 0) rc.head_dim = (int32_t)fuzz_range(&in, 1, 8) * 2; /* maybe a mismatch */
        if (fuzz_bool(&in)) rc.rotary_dim = 2 * (int32_t)fuzz_range(&in, 1, rc.head_dim / 2);
        rc.pairing = fuzz_bool(&in);
        if (fuzz_bool(&in)) rc.type = PE_ROPE_DYNAMIC, rc.factor = 4.0, rc.max_position_embeddings = 64;
        if (pe_rope_init(&rope, &rc) != PE_OK) return 0;
        cfg.rope = &rope;
        cfg.k_rotated = fuzz_bool(&in);
        if (fuzz_bool(&in)) cfg.rope_seq_len = fuzz_int32(&in, 1 << 12);
    }
    /* bound the work per input to about 2^16 multiply-adds (thousands of runs a second under the sanitizers);
     * the long-key cases (decode's 512-key tiles) then come with few heads and a small head_dim */
    const int64_t kvh = cfg.kv_heads > 0 ? cfg.kv_heads : cfg.heads;
    if (cfg.batch > 0 && cfg.heads > 0 && cfg.q_len > 0 && cfg.k_len > 0 && cfg.head_dim > 0 &&
        (int64_t)cfg.batch * cfg.heads * cfg.q_len * cfg.k_len * cfg.head_dim > (1 << 16))
        return 0;
    const int neg = cfg.batch < 0 || cfg.heads < 0 || kvh < 0 || cfg.q_len < 0 || cfg.k_len < 0 || cfg.head_dim < 0;
    const size_t B = neg ? 0 : (size_t)cfg.batch, H = neg ? 0 : (size_t)cfg.heads, KH = neg ? 0 : (size_t)kvh;
    const size_t Q = neg ? 0 : (size_t)cfg.q_len, K = neg ? 0 : (size_t)cfg.k_len, D = neg ? 0 : (size_t)cfg.head_dim;

    fuzz_rng rng = fuzz_rng_from(&in);
    float slopes[16];
    for (int h = 0; h < 16; h++) slopes[h] = fuzz_rng_float(&rng, 8.0f);
    float *alibi = NULL;
    if (with_alibi && H <= 16) {
        alibi = fuzz_alloc(H, sizeof(float)); /* exactly heads slopes */
        if (H) memcpy(alibi, slopes, H * sizeof(float));
        cfg.alibi_slopes = alibi ? alibi : slopes;
    }
    int32_t *qpos = NULL, *kpos = NULL;
    if (explicit_pos) {
        qpos = fuzz_alloc(Q, sizeof *qpos);
        kpos = fuzz_alloc(K, sizeof *kpos);
        const int32_t base = (int32_t)(fuzz_rng_next(&rng) % 100000);
        for (size_t j = 0; j < K; j++)
            kpos[j] = wild_pos ? (int32_t)(uint32_t)fuzz_rng_next(&rng)
                               : base + (int32_t)j + (int32_t)(fuzz_rng_next(&rng) % 3);
        for (size_t i = 0; i < Q; i++)
            qpos[i] = wild_pos ? (int32_t)(uint32_t)fuzz_rng_next(&rng)
                               : base + (int32_t)K - (int32_t)Q + (int32_t)i + (int32_t)(fuzz_rng_next(&rng) % 5);
        static int32_t one_position = 0; /* non-NULL for zero-length arrays */
        cfg.q_positions = qpos ? qpos : &one_position;
        cfg.k_positions = kpos ? kpos : &one_position;
    }

    size_t n_scratch = 0;
    const pe_status sst = pe_attention_scratch_size(&n_scratch, &cfg);
    const size_t nq = B * H * Q * D, nk = B * KH * K * D, nw = B * H * Q * K;
    float *q = fuzz_alloc(nq, 4), *k = fuzz_alloc(nk, 4), *v = fuzz_alloc(nk, 4);
    float *out = fuzz_alloc(nq, 4), *w = want_weights ? fuzz_alloc(nw, 4) : NULL;
    float *scratch = sst == PE_OK ? fuzz_alloc(n_scratch, 4) : NULL;
    fuzz_fill(q, nq, &rng, 2.0f);
    fuzz_fill(k, nk, &rng, 2.0f);
    fuzz_fill(v, nk, &rng, 1.0f);
    for (size_t i = 0; i < nq; i++) out[i] = 1234.5f;
    for (size_t i = 0; w && i < nw; i++) w[i] = 1234.5f;

    const pe_status st = pe_attention(out, w, q, k, v, scratch, n_scratch, &cfg);
    if (st != PE_OK) {
        for (size_t i = 0; i < nq; i++)
            fuzz_require(out[i] == 1234.5f, "refused call (%s) wrote out[%zu]", pe_status_string(st), i);
        for (size_t i = 0; w && i < nw; i++) fuzz_require(w[i] == 1234.5f, "refused call wrote weights[%zu]", i);
    } else {
        fuzz_require(sst == PE_OK, "attention accepted a config whose scratch size was refused (%s)",
                     pe_status_string(sst));
        const long bo = fuzz_first_nonfinite(out, nq);
        fuzz_require(bo < 0, "out[%ld] = %g", bo, bo < 0 ? 0.0 : out[bo]);
        /* |out| <= max |v| over the whole of v: looser than per head, and layout-free */
        float vmax = 0.0f;
        for (size_t i = 0; i < nk; i++) vmax = fabsf(v[i]) > vmax ? fabsf(v[i]) : vmax;
        for (size_t i = 0; i < nq; i++)
            fuzz_require(fabsf(out[i]) <= vmax * (1.0f + 1e-5f), "out[%zu] = %g outside the hull of v (max |v| %g)", i,
                         out[i], vmax);
        for (size_t r = 0; w && r < B * H * Q; r++) {
            double sum = 0.0;
            for (size_t j = 0; j < K; j++) {
                const float x = w[r * K + j];
                fuzz_require(x >= 0.0f && x <= 1.0f, "weights[%zu, %zu] = %g", r, j, x);
                sum += x;
            }
            fuzz_require(K == 0 || sum == 0.0 || fabs(sum - 1.0) <= 1e-4, "weights row %zu sums to %.9g", r, sum);
        }
    }
    free(alibi), free(qpos), free(kpos), free(q), free(k), free(v), free(out), free(w), free(scratch);
    return 0;
}
