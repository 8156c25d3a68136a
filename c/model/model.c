/* model.c — the tiny transformer: its config and tensor table, RoPE scaling at inference, and the forward pass,
 * shared by the native trainer (c/model/train.c) and the wasm model module (build.sh). The file reader
 * (pe_model_open / pe_model_load) is safetensors.c.
 *
 * A pre-norm decoder-only transformer (GPT-2, Radford et al. 2019; RMSNorm, Zhang & Sennrich 2019; tied
 * embeddings, Press & Wolf 2017). The position encodings run through the library's kernels:
 * pe_sinusoidal_add / pe_learned_add on the embeddings, pe_rope_cos_sin + pe_rope_apply on q and k,
 * pe_alibi_slopes + pe_attention (causal softmax(q k^T / sqrt(hd) + ALiBi) v, and the attention weights).
 *
 * Numerics: every sum has a fixed order (dot products use pe__dot's tree from c/src/pe_math.h, RMS sums
 * run in double), e^x is pe_math.h's pe__exp1 and GELU's tanh is our own arithmetic, so the native build, the
 * SIMD128 wasm and the scalar wasm compute the same arithmetic, with no libm call whose result could differ.
 * No allocation: the caller owns every buffer.
 */
#include "posenc.h"
#include "model_internal.h"
#include "../src/pe_math.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- names ------------------------------------------------------------------------------------- */

static const char *const pe__position_names[PE_MODEL_POS_COUNT] = {"none", "sinusoidal", "learned", "rope", "alibi"};

const char *pe__position_name(int32_t p) { return (p >= 0 && p < PE_MODEL_POS_COUNT) ? pe__position_names[p] : "?"; }

int32_t pe__position_from_name(const char *name) {
    for (int32_t i = 0; i < PE_MODEL_POS_COUNT; i++)
        if (strcmp(name, pe__position_names[i]) == 0) return i;
    return -1;
}

size_t pe_model_struct_size(void) { return sizeof(pe_model); }

const char *pe_model_message(const pe_model *m) { return m ? m->message : "model is NULL"; }

/* ---- config ------------------------------------------------------------------------------------ */

/* Floats of weights a config needs (the tensor table's total), in 64 bits: nothing here can wrap. */
static uint64_t pe__model_weight_floats(const pe_model_config *c) {
    const uint64_t D = (uint64_t)c->hidden_size, F = (uint64_t)c->intermediate_size;
    const uint64_t pos = c->position_encoding == PE_MODEL_POS_LEARNED ? (uint64_t)c->max_position_embeddings * D : 0;
    const uint64_t layer = 2 * D + 4 * D * D + 2 * F * D;
    return (uint64_t)c->vocab_size * D + pos + (uint64_t)c->num_hidden_layers * layer + D;
}

pe_status pe__model_resolve(pe_model_config *out, const pe_model_config *in, char *msg) {
    pe__msg e = pe__msg_start(msg, PE_MODEL_MESSAGE_SIZE);
    pe_model_config c = *in;
    if (c.rope_theta == 0) c.rope_theta = 10000.0;
    if (c.rms_norm_eps == 0) c.rms_norm_eps = 1e-5;
    if (c.embedding_multiplier == 0) c.embedding_multiplier = sqrt((double)c.hidden_size);
        /* Each bound is printed from the macro that sets it. */
#define PE__RANGE(field, lo, hi)                          \
    if (c.field < (lo) || c.field > (hi)) {               \
        pe__msg_s(&e, "config: " #field " must be in ["); \
        pe__msg_i(&e, (lo));                              \
        pe__msg_s(&e, ", ");                              \
        pe__msg_i(&e, (hi));                              \
        pe__msg_s(&e, "], got ");                         \
        pe__msg_i(&e, c.field);                           \
        return PE_ERR_SHAPE;                              \
    }
    PE__RANGE(vocab_size, 2, PE_MODEL_MAX_VOCAB);
    PE__RANGE(hidden_size, 1, PE_MODEL_MAX_DIM);
    PE__RANGE(num_hidden_layers, 1, PE_MODEL_MAX_LAYERS);
    PE__RANGE(num_attention_heads, 1, PE_MODEL_MAX_HEADS);
    PE__RANGE(intermediate_size, 1, PE_MODEL_MAX_DIM);
    PE__RANGE(max_position_embeddings, 1, PE_MODEL_MAX_POSITIONS);
    PE__RANGE(position_encoding, 0, PE_MODEL_POS_COUNT - 1);
#undef PE__RANGE
    const int32_t head_dim = c.hidden_size / c.num_attention_heads;
    if (c.hidden_size % c.num_attention_heads != 0 || (c.position_encoding == PE_MODEL_POS_ROPE && head_dim % 2 != 0)) {
        pe__msg_s(&e, "config: hidden_size ");
        pe__msg_i(&e, c.hidden_size);
        pe__msg_s(&e, c.position_encoding == PE_MODEL_POS_ROPE ? " must be an even multiple of num_attention_heads "
                                                               : " must be a multiple of num_attention_heads ");
        pe__msg_i(&e, c.num_attention_heads);
        pe__msg_s(&e, c.position_encoding == PE_MODEL_POS_ROPE ? " (RoPE needs an even head_dim)" : "");
        return PE_ERR_SHAPE;
    }
    if (!(isfinite(c.rope_theta) && c.rope_theta > 1.0) || !(isfinite(c.rms_norm_eps) && c.rms_norm_eps > 0) ||
        !(c.embedding_multiplier > 0 && c.embedding_multiplier <= PE_MODEL_MAX_WEIGHT)) {
        pe__msg_s(
            &e, "config: rope_theta must be finite and > 1, rms_norm_eps finite and > 0, embedding_multiplier in (0, ");
        pe__msg_i(&e, PE_MODEL_MAX_WEIGHT);
        pe__msg_s(&e, "] (PE_MODEL_MAX_WEIGHT)");
        return PE_ERR_FIELD_VALUE;
    }
    /* The weights are addressed with size_t, 32 bits on wasm32: a learned table of 2^24 rows of 1024 floats
     * alone is 64 GiB. Count the bytes in 64 bits and refuse what size_t cannot hold. */
    const uint64_t weight_bytes = pe__model_weight_floats(&c) * sizeof(float);
    if (weight_bytes > SIZE_MAX) {
        pe__msg_s(&e, "config: the weights take ");
        pe__msg_u(&e, weight_bytes);
        pe__msg_s(&e, " bytes, more than size_t holds here (");
        pe__msg_u(&e, SIZE_MAX);
        pe__msg_s(&e, ")");
        return PE_ERR_SHAPE;
    }
    *out = c;
    return PE_OK;
}

static void pe__name_layer(char *out, int32_t layer, const char *suffix) {
    pe__msg m = pe__msg_start(out, PE__NAME_SIZE);
    pe__msg_s(&m, "model.layers.");
    pe__msg_i(&m, layer);
    pe__msg_s(&m, ".");
    pe__msg_s(&m, suffix);
}

int pe__model_tensors(pe__tensor_info *t, const pe_model_config *c) {
    const int32_t D = c->hidden_size, F = c->intermediate_size;
    int n = 0;
    size_t off = 0;
#define PE__ADD(nm_expr, kind_, d0, d1)                           \
    do {                                                          \
        pe__tensor_info *ti = &t[n++];                            \
        nm_expr;                                                  \
        ti->kind = (kind_);                                       \
        ti->shape[0] = (d0);                                      \
        ti->shape[1] = (d1);                                      \
        ti->ndim = (d1) > 0 ? 2 : 1;                              \
        ti->numel = (size_t)(d0) * (size_t)((d1) > 0 ? (d1) : 1); \
        ti->offset = off;                                         \
        off += ti->numel;                                         \
    } while (0)
    PE__ADD(strcpy(ti->name, "model.embed_tokens.weight"), PE__T_EMBED, c->vocab_size, D);
    if (c->position_encoding == PE_MODEL_POS_LEARNED)
        PE__ADD(strcpy(ti->name, "model.embed_positions.weight"), PE__T_POS, c->max_position_embeddings, D);
    for (int32_t l = 0; l < c->num_hidden_layers; l++) {
        PE__ADD(pe__name_layer(ti->name, l, "input_layernorm.weight"), PE__T_NORM, D, 0);
        PE__ADD(pe__name_layer(ti->name, l, "self_attn.q_proj.weight"), PE__T_LINEAR, D, D);
        PE__ADD(pe__name_layer(ti->name, l, "self_attn.k_proj.weight"), PE__T_LINEAR, D, D);
        PE__ADD(pe__name_layer(ti->name, l, "self_attn.v_proj.weight"), PE__T_LINEAR, D, D);
        PE__ADD(pe__name_layer(ti->name, l, "self_attn.o_proj.weight"), PE__T_LINEAR_OUT, D, D);
        PE__ADD(pe__name_layer(ti->name, l, "post_attention_layernorm.weight"), PE__T_NORM, D, 0);
        PE__ADD(pe__name_layer(ti->name, l, "mlp.up_proj.weight"), PE__T_LINEAR, F, D);
        PE__ADD(pe__name_layer(ti->name, l, "mlp.down_proj.weight"), PE__T_LINEAR_OUT, D, F);
    }
    PE__ADD(strcpy(ti->name, "model.norm.weight"), PE__T_NORM, D, 0);
#undef PE__ADD
    return n;
}

pe_status pe__model_bind(pe_model *m, const pe_model_config *cfg, const float *w) {
    pe_model_config c;
    pe_status st = pe__model_resolve(&c, cfg, m->message);
    if (st != PE_OK) return st;
    pe__tensor_info t[PE__MAX_TENSORS];
    int n = pe__model_tensors(t, &c);
    m->config = c;
    m->n_weights = t[n - 1].offset + t[n - 1].numel;
    m->embed_tokens = w + t[0].offset;
    int i = 1;
    m->embed_positions = NULL;
    if (c.position_encoding == PE_MODEL_POS_LEARNED) m->embed_positions = w + t[i++].offset;
    for (int32_t l = 0; l < PE_MODEL_MAX_LAYERS; l++) {
        pe_model_layer *L = &m->layers[l];
        if (l >= c.num_hidden_layers) {
            memset(L, 0, sizeof *L);
            continue;
        }
        L->input_norm = w + t[i++].offset;
        L->wq = w + t[i++].offset;
        L->wk = w + t[i++].offset;
        L->wv = w + t[i++].offset;
        L->wo = w + t[i++].offset;
        L->post_norm = w + t[i++].offset;
        L->w_up = w + t[i++].offset;
        L->w_down = w + t[i++].offset;
    }
    m->final_norm = w + t[i].offset;
    memset(m->alibi_slopes, 0, sizeof m->alibi_slopes);
    if (c.position_encoding == PE_MODEL_POS_ALIBI) {
        st = pe_alibi_slopes(m->alibi_slopes, c.num_attention_heads);
        if (st != PE_OK) return st;
    }
    memset(&m->rope, 0, sizeof m->rope);
    if (c.position_encoding == PE_MODEL_POS_ROPE) {
        pe_rope_config rc = {0};
        rc.head_dim = c.hidden_size / c.num_attention_heads;
        rc.base = c.rope_theta;
        st = pe_rope_init(&m->rope, &rc);
        if (st != PE_OK) return st;
    }
    m->message[0] = 0;
    return PE_OK;
}

/* ---- RoPE scaling at inference ------------------------------------------------------------------- */

pe_status pe_model_rope(pe_rope *rope, const pe_model *m, int32_t scaling, double factor) {
    if (!rope || !m) return PE_ERR_NULL;
    if (m->config.position_encoding != PE_MODEL_POS_ROPE || scaling < 0 || scaling >= PE_MODEL_ROPE_SCALING_COUNT)
        return PE_ERR_FIELD_VALUE;
    if (scaling != PE_MODEL_ROPE_TRAINED && !(isfinite(factor) && factor > 0)) return PE_ERR_FACTOR;
    const int32_t hd = m->config.hidden_size / m->config.num_attention_heads;
    const int32_t L = m->config.max_position_embeddings;
    pe_rope_config rc = {0};
    rc.head_dim = hd;
    rc.base = m->config.rope_theta;
    switch (scaling) {
    case PE_MODEL_ROPE_TRAINED: break;
    case PE_MODEL_ROPE_LINEAR:
        rc.type = PE_ROPE_LINEAR;
        rc.factor = factor;
        break;
    case PE_MODEL_ROPE_NTK:
        /* NTK-aware (bloc97, 2023), the static form dynamic NTK uses at its longest length:
         * base' = base * factor^(d / (d - 2)), so the lowest frequency is interpolated by `factor` and the
         * highest is left as it was. head_dim 2 has a single frequency: plain interpolation of the base. */
        rc.base =
            hd > 2 ? m->config.rope_theta * pow(factor, (double)hd / (double)(hd - 2)) : m->config.rope_theta * factor;
        break;
    case PE_MODEL_ROPE_DYNAMIC:
        rc.type = PE_ROPE_DYNAMIC;
        rc.factor = factor;
        rc.max_position_embeddings = L;
        break;
    case PE_MODEL_ROPE_YARN:
        rc.type = PE_ROPE_YARN;
        rc.factor = factor;
        rc.original_max_position_embeddings = L;
        rc.max_position_embeddings = (int32_t)fmin(2147483647.0, floor(factor * L));
        break;
    }
    return pe_rope_init(rope, &rc);
}

/* ---- building blocks ---------------------------------------------------------------------------- */

/* Dot products: pe__dot (pe_math.h), the library's one summation tree, so every build computes the same
 * float result. */
/* y (n, out) = x (n, in) W^T with W (out, in). Four rows of x share each row of W while it is in cache. */
void pe__linear(float *y, const float *x, const float *w, int32_t n, int32_t in, int32_t out) {
    int32_t r = 0;
    for (; r + 4 <= n; r += 4) {
        const float *x0 = x + (size_t)r * in, *x1 = x0 + in, *x2 = x1 + in, *x3 = x2 + in;
        float *y0 = y + (size_t)r * out;
        for (int32_t o = 0; o < out; o++) {
            const float *wo = w + (size_t)o * in;
            y0[o] = pe__dot(x0, wo, in);
            y0[out + o] = pe__dot(x1, wo, in);
            y0[2 * out + o] = pe__dot(x2, wo, in);
            y0[3 * out + o] = pe__dot(x3, wo, in);
        }
    }
    for (; r < n; r++)
        for (int32_t o = 0; o < out; o++) y[(size_t)r * out + o] = pe__dot(x + (size_t)r * in, w + (size_t)o * in, in);
}

/* RMSNorm (Zhang & Sennrich 2019): y = x / sqrt(mean(x^2) + eps) * w; the mean of squares in double. */
static void pe__rmsnorm(float *y, float *rinv, const float *x, const float *w, int32_t n, int32_t d, double eps) {
    for (int32_t r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * d;
        float *yr = y + (size_t)r * d;
        double ss = 0;
        for (int32_t i = 0; i < d; i++) ss += (double)xr[i] * (double)xr[i];
        const float ri = (float)(1.0 / sqrt(ss / d + eps));
        rinv[r] = ri;
        for (int32_t i = 0; i < d; i++) yr[i] = (xr[i] * ri) * w[i];
    }
}

/* tanh from arithmetic alone: no libm, so the native build and both wasm builds give bit-identical GELUs
 * (every operation below is the same IEEE sequence in every build under -ffp-contract=off, no -ffast-math).
 * tanh(y) = sign(y) (1 - e) / (1 + e) with e = exp(-2|y|) from pe__exp1 (pe_math.h, the library's one e^x),
 * which is +-1 in float for |y| >= 9. */
static inline float pe__tanh(float y) {
    /* |y| clamped to 9 (tanh(9) rounds to 1 in float) on the bit pattern: an integer min, which vectorises
     * where a float compare-and-select would not (a NaN stays a NaN: its bits exceed 9's, so it becomes 9;
     * no NaN reaches here from finite weights). */
    union {
        float f;
        uint32_t u;
    } a;
    a.f = y;
    a.u &= 0x7fffffffu;
    a.u = a.u < 0x41100000u ? a.u : 0x41100000u;
    const float e = pe__exp1(-2.0f * a.f); /* -18 <= argument <= 0: e in (0, 1] */
    return copysignf((1.0f - e) / (1.0f + e), y);
}

/* GELU, tanh approximation (Hendrycks & Gimpel 2016; PyTorch approximate="tanh"):
 * 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3))). */
#define PE__GELU_C 0.7978845608028654f
static inline float pe__gelu_inl(float u) {
    const float t = pe__tanh(PE__GELU_C * (u + 0.044715f * u * u * u));
    return 0.5f * u * (1.0f + t);
}
static inline float pe__gelu_grad_inl(float u) {
    const float t = pe__tanh(PE__GELU_C * (u + 0.044715f * u * u * u));
    return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * PE__GELU_C * (1.0f + 3.0f * 0.044715f * u * u);
}
float pe__gelu(float u) { return pe__gelu_inl(u); }
float pe__gelu_grad(float u) { return pe__gelu_grad_inl(u); }
void pe__gelu_forward(float *g, const float *u, size_t n) {
    for (size_t i = 0; i < n; i++) g[i] = pe__gelu_inl(u[i]);
}
void pe__gelu_backward(float *dg, const float *u, size_t n) {
    for (size_t i = 0; i < n; i++) dg[i] *= pe__gelu_grad_inl(u[i]);
}

/* ---- forward ------------------------------------------------------------------------------------ */

pe_status pe__model_forward_batch(const pe_model *m, const pe_rope *rope, const int32_t *tokens, int32_t B, int32_t S,
                                  float *logits, const pe__acts *a) {
    const pe_model_config *c = &m->config;
    const int32_t D = c->hidden_size, F = c->intermediate_size, H = c->num_attention_heads, V = c->vocab_size;
    const int32_t hd = D / H;
    const int32_t N = B * S;
    const float mult = (float)c->embedding_multiplier;
    pe_status st;

    /* x0 = multiplier * E[token] (+ absolute position encoding) */
    float *x = a->l[0].x_in;
    for (int32_t r = 0; r < N; r++) {
        const float *e = m->embed_tokens + (size_t)tokens[r] * D;
        for (int32_t i = 0; i < D; i++) x[(size_t)r * D + i] = mult * e[i];
    }
    if (c->position_encoding == PE_MODEL_POS_SINUSOIDAL) {
        st = pe_sinusoidal_add(x, NULL, B, S, D, 0, NULL);
        if (st != PE_OK) return st;
    } else if (c->position_encoding == PE_MODEL_POS_LEARNED) {
        const pe_learned_add_config lc = {.batch = B, .seq = S, .d_model = D, .n_rows = c->max_position_embeddings};
        st = pe_learned_add(x, m->embed_positions, NULL, &lc);
        if (st != PE_OK) return st;
    }

    const int use_rope = c->position_encoding == PE_MODEL_POS_ROPE;
    if (use_rope) {
        if (rope->config.head_dim != hd) return PE_ERR_HEAD_DIM;
        /* positions 0 .. S-1, shared by the batch; seq_len S decides dynamic scaling as one HF forward does */
        int32_t *pos = (int32_t *)(void *)a->tmp; /* tmp is free until the first layer; N*D >= S ints */
        for (int32_t s = 0; s < S; s++) pos[s] = s;
        st = pe_rope_cos_sin(a->cos, a->sin, rope, pos, S, PE_SEQ_LEN_FROM_POSITIONS, 1.0);
        if (st != PE_OK) return st;
    }

    pe_attention_config ac;
    memset(&ac, 0, sizeof ac);
    ac.batch = B;
    ac.heads = H;
    ac.q_len = S;
    ac.k_len = S;
    ac.head_dim = hd;
    ac.layout = PE_LAYOUT_BSHD;
    ac.causal = 1;
    ac.alibi_slopes = c->position_encoding == PE_MODEL_POS_ALIBI ? m->alibi_slopes : NULL;

    for (int32_t l = 0; l < c->num_hidden_layers; l++) {
        const pe_model_layer *W = &m->layers[l];
        const pe__layer_acts *A = &a->l[l];
        float *x_next = l + 1 < c->num_hidden_layers ? a->l[l + 1].x_in : a->x_out;

        pe__rmsnorm(A->h1, A->rms1, A->x_in, W->input_norm, N, D, c->rms_norm_eps);
        pe__linear(A->q, A->h1, W->wq, N, D, D);
        pe__linear(A->k, A->h1, W->wk, N, D, D);
        pe__linear(A->v, A->h1, W->wv, N, D, D);
        /* copies only: what the layer computes next is the same with or without them */
        if (a->q_out) memcpy(a->q_out + (size_t)l * N * D, A->q, (size_t)N * D * sizeof(float));
        if (a->k_out) memcpy(a->k_out + (size_t)l * N * D, A->k, (size_t)N * D * sizeof(float));
        if (use_rope) {
            const pe_rope_apply_config rc = {.batch = B, .seq = S, .heads = H}; /* BSHD, forward */
            st = pe_rope_apply(rope, A->q, a->cos, a->sin, &rc);
            if (st == PE_OK) st = pe_rope_apply(rope, A->k, a->cos, a->sin, &rc);
            if (st != PE_OK) return st;
        }
        st = pe_attention(A->att, A->p, A->q, A->k, A->v, NULL, 0, &ac);
        if (st != PE_OK) return st;
        pe__linear(a->tmp, A->att, W->wo, N, D, D);
        for (size_t i = 0; i < (size_t)N * D; i++) A->x_mid[i] = A->x_in[i] + a->tmp[i];

        pe__rmsnorm(A->h2, A->rms2, A->x_mid, W->post_norm, N, D, c->rms_norm_eps);
        pe__linear(A->u, A->h2, W->w_up, N, D, F);
        pe__gelu_forward(A->g, A->u, (size_t)N * F);
        pe__linear(a->tmp, A->g, W->w_down, N, F, D);
        for (size_t i = 0; i < (size_t)N * D; i++) x_next[i] = A->x_mid[i] + a->tmp[i];
    }
    pe__rmsnorm(a->hf, a->rmsf, a->x_out, m->final_norm, N, D, c->rms_norm_eps);
    pe__linear(logits, a->hf, m->embed_tokens, N, D, V);
    return PE_OK;
}

/* Inference scratch layout (batch 1, S rows): X | H | Q | K | V | ATT | TMP (each S*D), U (S*F), RMS (S),
 * COS | SIN (each S*hd/2). The residual stream lives in X throughout, h1/h2/hf share H and u/g share U.
 * Counted in 64 bits: at most 2^31 * 9217 floats, so neither the floats nor their bytes can wrap here. */
static uint64_t pe__scratch_floats(const pe_model_config *c, int32_t seq_len) {
    const uint64_t D = (uint64_t)c->hidden_size, F = (uint64_t)c->intermediate_size;
    const uint64_t hd2 = D / (uint64_t)c->num_attention_heads / 2;
    return (uint64_t)seq_len * (7 * D + F + 1 + 2 * (hd2 ? hd2 : 1));
}

/* 1 when a block of `floats` floats (at most 2^62) can be addressed with size_t, 32 bits on wasm32; else 0 and
 * a message naming the bound. */
static int pe__fits_size_t(pe__msg *e, const char *what, int32_t seq_len, uint64_t floats) {
    if (floats <= SIZE_MAX / sizeof(float)) return 1;
    pe__msg_s(e, what);
    pe__msg_s(e, " for seq_len ");
    pe__msg_i(e, seq_len);
    pe__msg_s(e, " takes ");
    pe__msg_u(e, floats * sizeof(float));
    pe__msg_s(e, " bytes, more than size_t holds here (");
    pe__msg_u(e, SIZE_MAX);
    pe__msg_s(e, ")");
    return 0;
}

pe_status pe_model_scratch_size(size_t *n_floats, pe_model *m, int32_t seq_len) {
    if (!n_floats || !m) return PE_ERR_NULL;
    pe__msg e = pe__msg_start(m->message, sizeof m->message);
    if (seq_len < 1) {
        pe__msg_s(&e, "seq_len must be >= 1, got ");
        pe__msg_i(&e, seq_len);
        return PE_ERR_SHAPE;
    }
    const uint64_t floats = pe__scratch_floats(&m->config, seq_len);
    if (!pe__fits_size_t(&e, "the scratch", seq_len, floats)) return PE_ERR_SHAPE;
    *n_floats = (size_t)floats;
    return PE_OK;
}

pe_status pe_model_forward(pe_model *m, float *logits, float *attention, const int32_t *tokens, int32_t seq_len,
                           const pe_rope *rope, float *scratch, size_t n_scratch) {
    return pe_model_forward_qk(m, logits, attention, NULL, NULL, tokens, seq_len, rope, scratch, n_scratch);
}

pe_status pe_model_forward_qk(pe_model *m, float *logits, float *attention, float *q_out, float *k_out,
                              const int32_t *tokens, int32_t seq_len, const pe_rope *rope, float *scratch,
                              size_t n_scratch) {
    if (!m || !logits || !tokens || !scratch) return PE_ERR_NULL;
    pe__msg e = pe__msg_start(m->message, sizeof m->message);
    if (!m->embed_tokens) {
        pe__msg_s(&e, "forward: the model has no weights (call pe_model_load first)");
        return PE_ERR_NULL;
    }
    const pe_model_config *c = &m->config;
    if (seq_len < 1) {
        pe__msg_s(&e, "forward: seq_len must be >= 1, got ");
        pe__msg_i(&e, seq_len);
        return PE_ERR_SHAPE;
    }
    /* Every block's size in 64 bits against size_t before any pointer is formed. The attention weights are
     * layers * heads * S * S floats: rows (<= 2^38) is compared with the bound divided by S so nothing wraps. */
    const uint64_t need = pe__scratch_floats(c, seq_len);
    if (!pe__fits_size_t(&e, "forward: the scratch", seq_len, need) ||
        !pe__fits_size_t(&e, "forward: the logits", seq_len, (uint64_t)seq_len * (uint64_t)c->vocab_size))
        return PE_ERR_SHAPE;
    const uint64_t qk_floats = (uint64_t)c->num_hidden_layers * (uint64_t)seq_len * (uint64_t)c->hidden_size;
    if ((q_out || k_out) && !pe__fits_size_t(&e, "forward: q_out / k_out", seq_len, qk_floats)) return PE_ERR_SHAPE;
    const uint64_t attn_rows = (uint64_t)c->num_hidden_layers * (uint64_t)c->num_attention_heads * (uint64_t)seq_len;
    if (attention && attn_rows > SIZE_MAX / sizeof(float) / (uint64_t)seq_len) {
        pe__msg_s(&e, "forward: the attention weights for seq_len ");
        pe__msg_i(&e, seq_len);
        pe__msg_s(&e, " (layers x heads x seq_len^2 floats) take more bytes than size_t holds here (");
        pe__msg_u(&e, SIZE_MAX);
        pe__msg_s(&e, ")");
        return PE_ERR_SHAPE;
    }
    if (n_scratch < need) {
        pe__msg_s(&e, "forward: scratch too small, need ");
        pe__msg_u(&e, need);
        pe__msg_s(&e, " floats");
        return PE_ERR_SHAPE;
    }
    for (int32_t i = 0; i < seq_len; i++) {
        if (tokens[i] < 0 || tokens[i] >= c->vocab_size) {
            pe__msg_s(&e, "forward: token ");
            pe__msg_i(&e, tokens[i]);
            pe__msg_s(&e, " at index ");
            pe__msg_i(&e, i);
            pe__msg_s(&e, " is outside [0, vocab_size = ");
            pe__msg_i(&e, c->vocab_size);
            pe__msg_s(&e, ")");
            return PE_ERR_OUT_OF_RANGE;
        }
    }
    if (c->position_encoding == PE_MODEL_POS_LEARNED && seq_len > c->max_position_embeddings) {
        pe__msg_s(&e, "forward: learned positions end at max_position_embeddings = ");
        pe__msg_i(&e, c->max_position_embeddings);
        pe__msg_s(&e, "; seq_len ");
        pe__msg_i(&e, seq_len);
        pe__msg_s(&e, " is longer");
        return PE_ERR_OUT_OF_RANGE;
    }
    if (rope && c->position_encoding != PE_MODEL_POS_ROPE) {
        pe__msg_s(&e, "forward: a RoPE scaling was given to a model whose position_encoding is ");
        pe__msg_s(&e, pe__position_name(c->position_encoding));
        return PE_ERR_FIELD_VALUE;
    }
    const size_t S = (size_t)seq_len, D = (size_t)c->hidden_size, F = (size_t)c->intermediate_size;
    const size_t hd2 = D / (size_t)c->num_attention_heads / 2;
    float *X = scratch, *Hh = X + S * D, *Q = Hh + S * D, *K = Q + S * D, *Vv = K + S * D, *ATT = Vv + S * D;
    float *TMP = ATT + S * D, *U = TMP + S * D, *RMS = U + S * F, *COS = RMS + S, *SIN = COS + S * (hd2 ? hd2 : 1);
    pe__acts a;
    memset(&a, 0, sizeof a);
    const size_t per_layer = (size_t)c->num_attention_heads * S * S;
    for (int32_t l = 0; l < c->num_hidden_layers; l++) {
        pe__layer_acts *A = &a.l[l];
        A->x_in = A->x_mid = X;
        A->rms1 = A->rms2 = RMS;
        A->h1 = A->h2 = Hh;
        A->q = Q;
        A->k = K;
        A->v = Vv;
        A->att = ATT;
        A->u = A->g = U;
        A->p = attention ? attention + (size_t)l * per_layer : NULL;
    }
    a.x_out = X;
    a.rmsf = RMS;
    a.hf = Hh;
    a.tmp = TMP;
    a.cos = COS;
    a.sin = SIN;
    a.q_out = q_out;
    a.k_out = k_out;
    const pe_status st = pe__model_forward_batch(m, rope ? rope : &m->rope, tokens, 1, seq_len, logits, &a);
    if (st != PE_OK) {
        pe__msg_s(&e, "forward: kernel failed: ");
        pe__msg_s(&e, pe_status_string(st));
    }
    return st;
}
