/* attn_batch_cases.h — random padded-batch attention cases (left padding via key_mask and per-sequence
 * positions, as HF builds them; bias of every broadcast shape; v_head_dim; per-query scales; ALiBi; RoPE),
 * shared by test_attention_batch.c (against per-sequence calls and a double reference) and
 * test_simd_twins_attention.c (SIMD against scalar). */
#ifndef ATTN_BATCH_CASES_H
#define ATTN_BATCH_CASES_H
#include "posenc.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *abc_calloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

typedef struct abc_case {
    pe_attention_config cfg;
    pe_rope rope;
    float *q, *k, *v, *bias, *qscale, slopes[16];
    int32_t *qpos, *kpos, *mask;
    size_t nq, nk, nv, no, nbias; /* dense element counts (no: out) */
} abc_case;

static void abc_fill(float *x, size_t n, pe_rng *rng, float amp) {
    for (size_t i = 0; i < n; i++) x[i] = pe_rng_float(rng) * amp;
}

/* A padded batch: sequence b has pad[b] padding keys first (mask 0), real keys after them at positions
 * 0, 1, ... (padding at position 1, HF's position_ids.masked_fill_(mask == 0, 1)); queries are the last q_len
 * keys (prefill q_len = k_len, or decode). allow_rope: RoPE may be drawn. */
static void abc_make(abc_case *C, pe_rng *rng, int allow_rope) {
    memset(C, 0, sizeof *C);
    pe_attention_config *c = &C->cfg;
    c->batch = pe_rng_int(rng, 1, 5);
    c->kv_heads = pe_rng_int(rng, 1, 3);
    c->heads = c->kv_heads * pe_rng_int(rng, 1, 3);
    c->k_len = pe_rng_int(rng, 0, 4) == 0 ? pe_rng_int(rng, 300, 700) : pe_rng_int(rng, 1, 90);
    c->q_len = pe_rng_int(rng, 0, 1) ? c->k_len : pe_rng_int(rng, 1, c->k_len < 3 ? c->k_len : 3);
    const int with_rope = allow_rope && pe_rng_int(rng, 0, 2) == 0;
    c->head_dim = with_rope ? 2 * pe_rng_int(rng, 1, 20) : pe_rng_int(rng, 1, 40);
    if (pe_rng_int(rng, 0, 2) == 0) c->v_head_dim = pe_rng_int(rng, 1, 40);
    c->layout = pe_rng_int(rng, 0, 1);
    c->causal = pe_rng_int(rng, 0, 3) != 0;
    if (pe_rng_int(rng, 0, 3) == 0) c->scale = 0.05f + 0.1f * (float)pe_rng_int(rng, 0, 9);
    const int32_t B = c->batch, Sq = c->q_len, Sk = c->k_len, H = c->heads, KVH = c->kv_heads;
    const int32_t Dv = c->v_head_dim ? c->v_head_dim : c->head_dim;
    if (pe_rng_int(rng, 0, 2) == 0) {
        pe_alibi_slopes(C->slopes, H);
        c->alibi_slopes = C->slopes;
    }
    if (with_rope) {
        pe_rope_config rc = {.head_dim = c->head_dim, .pairing = pe_rng_int(rng, 0, 1)};
        if (pe_rng_int(rng, 0, 1)) rc.rotary_dim = 2 * pe_rng_int(rng, 1, c->head_dim / 2);
        pe_rope_init(&C->rope, &rc);
        c->rope = &C->rope;
        c->k_rotated = pe_rng_int(rng, 0, 3) == 0;
    }
    /* padding, mask and positions */
    C->mask = abc_calloc((size_t)B * Sk, sizeof(int32_t));
    C->kpos = abc_calloc((size_t)B * Sk, sizeof(int32_t));
    C->qpos = abc_calloc((size_t)B * Sq, sizeof(int32_t));
    for (int32_t b = 0; b < B; b++) {
        int32_t pad = b == 0 ? 0 : pe_rng_int(rng, 0, Sk - 1);
        if (b == 2 && pe_rng_int(rng, 0, 2) == 0) pad = Sk; /* a sequence with every key masked */
        for (int32_t j = 0; j < Sk; j++) {
            C->mask[(size_t)b * Sk + j] = j >= pad ? pe_rng_int(rng, 1, 3) : 0; /* any non-zero attends */
            C->kpos[(size_t)b * Sk + j] = j >= pad ? j - pad : 1;
        }
        for (int32_t i = 0; i < Sq; i++) C->qpos[(size_t)b * Sq + i] = C->kpos[(size_t)b * Sk + (Sk - Sq + i)];
    }
    c->per_batch_positions = 1;
    c->q_positions = C->qpos;
    c->k_positions = C->kpos;
    c->key_mask = pe_rng_int(rng, 0, 4) == 0 ? NULL : C->mask;
    if (pe_rng_int(rng, 0, 1)) { /* bias of a random broadcast shape; a few -inf entries */
        c->bias_batch = pe_rng_int(rng, 0, 1) ? B : pe_rng_int(rng, 0, 1);
        c->bias_heads = pe_rng_int(rng, 0, 1) ? H : pe_rng_int(rng, 0, 1);
        c->bias_q_len = pe_rng_int(rng, 0, 2) == 0 ? 1 : (pe_rng_int(rng, 0, 1) ? Sq : 0);
        const int32_t bb = c->bias_batch ? c->bias_batch : 1, bh = c->bias_heads ? c->bias_heads : 1;
        const int32_t bq = c->bias_q_len ? c->bias_q_len : Sq;
        C->nbias = (size_t)bb * bh * bq * Sk;
        C->bias = abc_calloc(C->nbias, sizeof(float));
        abc_fill(C->bias, C->nbias, rng, 3.0f);
        for (size_t t = 0; t < C->nbias; t += (size_t)pe_rng_int(rng, 5, 40)) C->bias[t] = -INFINITY;
        c->bias = C->bias;
    }
    if (pe_rng_int(rng, 0, 2) == 0) {
        c->q_scale_per_batch = pe_rng_int(rng, 0, 1);
        const size_t n = (size_t)Sq * (c->q_scale_per_batch ? (size_t)B : 1u);
        C->qscale = abc_calloc(n, sizeof(float));
        for (size_t i = 0; i < n; i++) C->qscale[i] = 1.0f + 0.5f * pe_rng_float(rng);
        c->q_scale = C->qscale;
    }
    C->nq = (size_t)B * H * Sq * c->head_dim;
    C->nk = (size_t)B * KVH * Sk * c->head_dim;
    C->nv = (size_t)B * KVH * Sk * Dv;
    C->no = (size_t)B * H * Sq * Dv;
    C->q = abc_calloc(C->nq, 4);
    C->k = abc_calloc(C->nk, 4);
    C->v = abc_calloc(C->nv, 4);
    abc_fill(C->q, C->nq, rng, 2.0f);
    abc_fill(C->k, C->nk, rng, 2.0f);
    abc_fill(C->v, C->nv, rng, 1.0f);
}

static void abc_free(abc_case *C) {
    free(C->q), free(C->k), free(C->v), free(C->bias), free(C->qscale);
    free(C->qpos), free(C->kpos), free(C->mask);
}

/* index of the first differing 32-bit word, or -1 */
static long abc_first_diff(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(a + i, b + i, 4) != 0) return (long)i;
    return -1;
}
#endif
