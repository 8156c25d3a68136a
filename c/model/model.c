/* model.c — the tiny transformer's forward pass and safetensors loader, shared by the native trainer
 * (c/model/train.c) and both wasm builds (build.sh adds this file to them).
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

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the safetensors loader assumes a little-endian host (x86, arm64, wasm)"
#endif

/* ---- messages (no snprintf: keeps the wasm small) ------------------------------------------------ */

typedef struct pe__msg { char *p; size_t n, cap; } pe__msg;

static void pe__msg_s(pe__msg *m, const char *s) {
    if (!m->p) return;
    while (*s && m->n + 1 < m->cap) m->p[m->n++] = *s++;
    m->p[m->n] = 0;
}
static void pe__msg_i(pe__msg *m, long long v) {
    char b[24];
    int i = 23;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    b[i] = 0;
    do { b[--i] = (char)('0' + u % 10); u /= 10; } while (u);
    if (v < 0) b[--i] = '-';
    pe__msg_s(m, b + i);
}
static pe__msg pe__msg_start(char *buf, size_t cap) {
    pe__msg m = { buf, 0, cap };
    if (buf && cap) buf[0] = 0;
    return m;
}

/* ---- names ------------------------------------------------------------------------------------- */

static const char *const pe__position_names[PE_MODEL_POS_COUNT] = { "none", "sinusoidal", "learned", "rope", "alibi" };

const char *pe__position_name(int32_t p) {
    return (p >= 0 && p < PE_MODEL_POS_COUNT) ? pe__position_names[p] : "?";
}

int32_t pe__position_from_name(const char *name) {
    for (int32_t i = 0; i < PE_MODEL_POS_COUNT; i++)
        if (strcmp(name, pe__position_names[i]) == 0) return i;
    return -1;
}

size_t pe_model_struct_size(void) { return sizeof(pe_model); }

const char *pe_model_message(const pe_model *m) { return m ? m->message : "model is NULL"; }

/* ---- config ------------------------------------------------------------------------------------ */

pe_status pe__model_resolve(pe_model_config *out, const pe_model_config *in, char *msg) {
    pe__msg e = pe__msg_start(msg, PE_MODEL_MESSAGE_SIZE);
    pe_model_config c = *in;
    if (c.rope_theta == 0) c.rope_theta = 10000.0;
    if (c.rms_norm_eps == 0) c.rms_norm_eps = 1e-5;
    if (c.embedding_multiplier == 0) c.embedding_multiplier = sqrt((double)c.hidden_size);
#define PE__BAD(cond, text, val)                                                                          \
    if (cond) {                                                                                           \
        pe__msg_s(&e, "config: ");                                                                        \
        pe__msg_s(&e, text);                                                                              \
        pe__msg_i(&e, (long long)(val));                                                                  \
        return PE_ERR_SHAPE;                                                                              \
    }
    PE__BAD(c.vocab_size < 2 || c.vocab_size > PE_MODEL_MAX_VOCAB, "vocab_size must be in [2, 65536], got ", c.vocab_size);
    PE__BAD(c.hidden_size < 1 || c.hidden_size > PE_MODEL_MAX_DIM, "hidden_size must be in [1, 1024], got ", c.hidden_size);
    PE__BAD(c.num_hidden_layers < 1 || c.num_hidden_layers > PE_MODEL_MAX_LAYERS, "num_hidden_layers must be in [1, 8], got ", c.num_hidden_layers);
    PE__BAD(c.num_attention_heads < 1 || c.num_attention_heads > PE_MODEL_MAX_HEADS, "num_attention_heads must be in [1, 16], got ", c.num_attention_heads);
    PE__BAD(c.hidden_size % c.num_attention_heads != 0, "hidden_size must be a multiple of num_attention_heads, got hidden_size ", c.hidden_size);
    PE__BAD(c.intermediate_size < 1 || c.intermediate_size > PE_MODEL_MAX_DIM, "intermediate_size must be in [1, 1024], got ", c.intermediate_size);
    PE__BAD(c.max_position_embeddings < 1 || c.max_position_embeddings > (1 << 24), "max_position_embeddings must be in [1, 2^24], got ", c.max_position_embeddings);
    PE__BAD(c.position_encoding < 0 || c.position_encoding >= PE_MODEL_POS_COUNT, "unknown position_encoding ", c.position_encoding);
    PE__BAD(c.position_encoding == PE_MODEL_POS_ROPE && (c.hidden_size / c.num_attention_heads) % 2 != 0, "RoPE needs an even head_dim, got ", c.hidden_size / c.num_attention_heads);
#undef PE__BAD
    if (!(isfinite(c.rope_theta) && c.rope_theta > 1.0) || !(isfinite(c.rms_norm_eps) && c.rms_norm_eps > 0) ||
        !(isfinite(c.embedding_multiplier) && c.embedding_multiplier > 0)) {
        pe__msg_s(&e, "config: rope_theta must be > 1, rms_norm_eps and embedding_multiplier finite and > 0");
        return PE_ERR_FIELD_VALUE;
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
#define PE__ADD(nm_expr, kind_, d0, d1)                                                                   \
    do {                                                                                                  \
        pe__tensor_info *ti = &t[n++];                                                                    \
        nm_expr;                                                                                          \
        ti->kind = (kind_);                                                                               \
        ti->shape[0] = (d0);                                                                              \
        ti->shape[1] = (d1);                                                                              \
        ti->ndim = (d1) > 0 ? 2 : 1;                                                                      \
        ti->numel = (size_t)(d0) * (size_t)((d1) > 0 ? (d1) : 1);                                         \
        ti->offset = off;                                                                                 \
        off += ti->numel;                                                                                 \
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
        pe_rope_config rc = { 0 };
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
    pe_rope_config rc = { 0 };
    rc.head_dim = hd;
    rc.base = m->config.rope_theta;
    switch (scaling) {
    case PE_MODEL_ROPE_TRAINED: break;
    case PE_MODEL_ROPE_LINEAR: rc.type = PE_ROPE_LINEAR; rc.factor = factor; break;
    case PE_MODEL_ROPE_NTK:
        /* NTK-aware (bloc97, 2023), the static form dynamic NTK uses at its longest length:
         * base' = base * factor^(d / (d - 2)), so the lowest frequency is interpolated by `factor` and the
         * highest is left as it was. head_dim 2 has a single frequency: plain interpolation of the base. */
        rc.base = hd > 2 ? m->config.rope_theta * pow(factor, (double)hd / (double)(hd - 2))
                         : m->config.rope_theta * factor;
        break;
    case PE_MODEL_ROPE_DYNAMIC:
        rc.type = PE_ROPE_DYNAMIC; rc.factor = factor; rc.max_position_embeddings = L; break;
    case PE_MODEL_ROPE_YARN:
        rc.type = PE_ROPE_YARN; rc.factor = factor; rc.original_max_position_embeddings = L;
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
    union { float f; uint32_t u; } a;
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

pe_status pe__model_forward_batch(const pe_model *m, const pe_rope *rope, const int32_t *tokens, int32_t B,
                                  int32_t S, float *logits, const pe__acts *a) {
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
 * COS | SIN (each S*hd/2). The residual stream lives in X throughout, h1/h2/hf share H and u/g share U. */
pe_status pe_model_scratch_size(size_t *n_floats, const pe_model *m, int32_t seq_len) {
    if (!n_floats || !m) return PE_ERR_NULL;
    if (seq_len < 1) return PE_ERR_SHAPE;
    const pe_model_config *c = &m->config;
    const size_t S = (size_t)seq_len, D = (size_t)c->hidden_size, F = (size_t)c->intermediate_size;
    const size_t hd2 = D / (size_t)c->num_attention_heads / 2;
    *n_floats = S * (7 * D + F + 1 + 2 * (hd2 ? hd2 : 1));
    return PE_OK;
}

pe_status pe_model_forward(const pe_model *m, float *logits, float *attention, const int32_t *tokens,
                           int32_t seq_len, const pe_rope *rope, float *scratch, size_t n_scratch) {
    if (!m || !logits || !tokens || !scratch) return PE_ERR_NULL;
    pe_model *mm = (pe_model *)m; /* message only */
    pe__msg e = pe__msg_start(mm->message, sizeof mm->message);
    if (!m->embed_tokens) {
        pe__msg_s(&e, "forward: the model has no weights (call pe_model_load first)");
        return PE_ERR_NULL;
    }
    const pe_model_config *c = &m->config;
    size_t need;
    pe_status st = pe_model_scratch_size(&need, m, seq_len);
    if (st != PE_OK) {
        pe__msg_s(&e, "forward: seq_len must be >= 1");
        return st;
    }
    if (n_scratch < need) {
        pe__msg_s(&e, "forward: scratch too small, need ");
        pe__msg_i(&e, (long long)need);
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
        A->q = Q; A->k = K; A->v = Vv; A->att = ATT;
        A->u = A->g = U;
        A->p = attention ? attention + (size_t)l * per_layer : NULL;
    }
    a.x_out = X; a.rmsf = RMS; a.hf = Hh; a.tmp = TMP; a.cos = COS; a.sin = SIN;
    st = pe__model_forward_batch(m, rope ? rope : &m->rope, tokens, 1, seq_len, logits, &a);
    if (st != PE_OK) {
        pe__msg_s(&e, "forward: kernel failed: ");
        pe__msg_s(&e, pe_status_string(st));
    }
    return st;
}

/* ---- safetensors reader ------------------------------------------------------------------------
 *
 * Format (huggingface/safetensors): 8 bytes little-endian u64 N, then N bytes of UTF-8 JSON (may end with
 * spaces), then the data. The JSON is an object: "__metadata__" (optional; string -> string) and, per tensor,
 * {"dtype": "F32", "shape": [..], "data_offsets": [begin, end]} with offsets relative to the data section.
 * The spec requires the tensors to cover the data section without holes or overlaps; we check that too.
 * The parser below reads exactly that grammar (any JSON value is accepted and skipped nowhere: an unknown key
 * inside a tensor entry is an error), bounded at every step by the header's end. */

#define PE__ST_MAX_ENTRIES (PE__MAX_TENSORS + 4)
#define PE__ST_MAX_META 32
#define PE__ST_KEY 64
#define PE__ST_VAL 64
#define PE__ST_MAX_HEADER (16u << 20)

typedef struct pe__st_entry {
    char name[PE__ST_KEY];
    char dtype[16];
    int32_t ndim;
    uint64_t shape[4];
    uint64_t begin, end;
} pe__st_entry;

typedef struct pe__st {
    pe__st_entry t[PE__ST_MAX_ENTRIES];
    int n;
    char meta_key[PE__ST_MAX_META][PE__ST_KEY];
    char meta_val[PE__ST_MAX_META][PE__ST_VAL];
    int n_meta;
    uint64_t data_start, data_size;
} pe__st;

typedef struct pe__json {
    const uint8_t *p, *end;
    pe__msg *e;
} pe__json;

static void pe__json_ws(pe__json *j) {
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')) j->p++;
}

static int pe__json_fail(pe__json *j, const char *what) {
    pe__msg_s(j->e, "safetensors: malformed JSON header: ");
    pe__msg_s(j->e, what);
    return 0;
}

static int pe__json_char(pe__json *j, char c) {
    pe__json_ws(j);
    if (j->p < j->end && *j->p == (uint8_t)c) {
        j->p++;
        return 1;
    }
    return 0;
}

/* A JSON string into out (truncation is an error: every string we keep is short). */
static int pe__json_string(pe__json *j, char *out, size_t cap) {
    pe__json_ws(j);
    if (j->p >= j->end || *j->p != '"') return pe__json_fail(j, "expected a string");
    j->p++;
    size_t n = 0;
    while (1) {
        if (j->p >= j->end) return pe__json_fail(j, "unterminated string");
        uint8_t ch = *j->p++;
        if (ch == '"') break;
        if (ch < 0x20) return pe__json_fail(j, "control character in a string");
        if (ch == '\\') {
            if (j->p >= j->end) return pe__json_fail(j, "unterminated escape");
            uint8_t esc = *j->p++;
            switch (esc) {
            case '"': case '\\': case '/': ch = esc; break;
            case 'b': ch = '\b'; break;
            case 'f': ch = '\f'; break;
            case 'n': ch = '\n'; break;
            case 'r': ch = '\r'; break;
            case 't': ch = '\t'; break;
            case 'u': {
                if (j->end - j->p < 4) return pe__json_fail(j, "short \\u escape");
                unsigned cp = 0;
                for (int k = 0; k < 4; k++) {
                    uint8_t h = *j->p++;
                    cp <<= 4;
                    if (h >= '0' && h <= '9') cp |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') cp |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') cp |= (unsigned)(h - 'A' + 10);
                    else return pe__json_fail(j, "bad \\u escape");
                }
                /* keep code points below 0x80 as they are; others become '?' (no name we read uses them) */
                ch = cp < 0x80 ? (uint8_t)cp : (uint8_t)'?';
                break;
            }
            default: return pe__json_fail(j, "bad escape");
            }
        }
        if (n + 1 >= cap) return pe__json_fail(j, "a string is too long");
        out[n++] = (char)ch;
    }
    out[n] = 0;
    return 1;
}

static int pe__json_u64(pe__json *j, uint64_t *out) {
    pe__json_ws(j);
    if (j->p >= j->end || *j->p < '0' || *j->p > '9') return pe__json_fail(j, "expected a non-negative integer");
    uint64_t v = 0;
    while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
        uint64_t d = (uint64_t)(*j->p++ - '0');
        if (v > (UINT64_MAX - d) / 10) return pe__json_fail(j, "integer overflow");
        v = v * 10 + d;
    }
    if (j->p < j->end && (*j->p == '.' || *j->p == 'e' || *j->p == 'E')) return pe__json_fail(j, "expected an integer");
    *out = v;
    return 1;
}

static int pe__json_u64_array(pe__json *j, uint64_t *out, int32_t cap, int32_t *n) {
    if (!pe__json_char(j, '[')) return pe__json_fail(j, "expected '['");
    *n = 0;
    if (pe__json_char(j, ']')) return 1;
    do {
        uint64_t v = 0;
        if (!pe__json_u64(j, &v)) return 0;
        if (*n >= cap) return pe__json_fail(j, "array too long");
        out[(*n)++] = v;
    } while (pe__json_char(j, ','));
    if (!pe__json_char(j, ']')) return pe__json_fail(j, "expected ']'");
    return 1;
}

static int pe__st_entry_parse(pe__json *j, pe__st_entry *t) {
    int have_dtype = 0, have_shape = 0, have_off = 0;
    if (!pe__json_char(j, '{')) return pe__json_fail(j, "a tensor entry must be an object");
    if (!pe__json_char(j, '}')) {
        do {
            char key[32];
            if (!pe__json_string(j, key, sizeof key)) return 0;
            if (!pe__json_char(j, ':')) return pe__json_fail(j, "expected ':'");
            if (strcmp(key, "dtype") == 0) {
                if (!pe__json_string(j, t->dtype, sizeof t->dtype)) return 0;
                have_dtype = 1;
            } else if (strcmp(key, "shape") == 0) {
                if (!pe__json_u64_array(j, t->shape, 4, &t->ndim)) return 0;
                have_shape = 1;
            } else if (strcmp(key, "data_offsets") == 0) {
                uint64_t o[2];
                int32_t n;
                if (!pe__json_u64_array(j, o, 2, &n)) return 0;
                if (n != 2) return pe__json_fail(j, "data_offsets must be [begin, end]");
                t->begin = o[0];
                t->end = o[1];
                have_off = 1;
            } else {
                pe__msg_s(j->e, "safetensors: tensor '");
                pe__msg_s(j->e, t->name);
                pe__msg_s(j->e, "': unknown key '");
                pe__msg_s(j->e, key);
                pe__msg_s(j->e, "'");
                return 0;
            }
        } while (pe__json_char(j, ','));
        if (!pe__json_char(j, '}')) return pe__json_fail(j, "expected '}' after a tensor entry");
    }
    if (!have_dtype || !have_shape || !have_off) {
        pe__msg_s(j->e, "safetensors: tensor '");
        pe__msg_s(j->e, t->name);
        pe__msg_s(j->e, "' lacks ");
        pe__msg_s(j->e, !have_dtype ? "dtype" : !have_shape ? "shape" : "data_offsets");
        return 0;
    }
    return 1;
}

/* Parses the header and checks the offsets against the data section. Status + message on failure. */
static pe_status pe__st_parse(pe__st *st, const uint8_t *file, size_t size, pe__msg *e) {
    memset(st, 0, sizeof *st);
    if (size < 8) {
        pe__msg_s(e, "safetensors: file too short (");
        pe__msg_i(e, (long long)size);
        pe__msg_s(e, " bytes) for the 8-byte header length");
        return PE_ERR_FIELD_VALUE;
    }
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | file[i];
    if (hlen > size - 8) {
        pe__msg_s(e, "safetensors: header length ");
        pe__msg_i(e, (long long)(hlen > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : hlen));
        pe__msg_s(e, " runs past the end of the file (");
        pe__msg_i(e, (long long)size);
        pe__msg_s(e, " bytes): truncated or not a safetensors file");
        return PE_ERR_FIELD_VALUE;
    }
    if (hlen < 2 || hlen > PE__ST_MAX_HEADER) {
        pe__msg_s(e, "safetensors: implausible header length ");
        pe__msg_i(e, (long long)hlen);
        return PE_ERR_FIELD_VALUE;
    }
    st->data_start = 8 + hlen;
    st->data_size = size - 8 - hlen;
    pe__json j = { file + 8, file + 8 + hlen, e };
    if (!pe__json_char(&j, '{')) {
        pe__json_fail(&j, "the header must start with '{'");
        return PE_ERR_FIELD_VALUE;
    }
    if (!pe__json_char(&j, '}')) {
        do {
            char key[PE__ST_KEY];
            if (!pe__json_string(&j, key, sizeof key)) return PE_ERR_FIELD_VALUE;
            if (!pe__json_char(&j, ':')) {
                pe__json_fail(&j, "expected ':'");
                return PE_ERR_FIELD_VALUE;
            }
            if (strcmp(key, "__metadata__") == 0) {
                if (!pe__json_char(&j, '{')) {
                    pe__json_fail(&j, "__metadata__ must be an object");
                    return PE_ERR_FIELD_VALUE;
                }
                if (!pe__json_char(&j, '}')) {
                    do {
                        if (st->n_meta >= PE__ST_MAX_META) {
                            pe__json_fail(&j, "too many __metadata__ entries");
                            return PE_ERR_FIELD_VALUE;
                        }
                        if (!pe__json_string(&j, st->meta_key[st->n_meta], PE__ST_KEY)) return PE_ERR_FIELD_VALUE;
                        if (!pe__json_char(&j, ':')) {
                            pe__json_fail(&j, "expected ':'");
                            return PE_ERR_FIELD_VALUE;
                        }
                        if (!pe__json_string(&j, st->meta_val[st->n_meta], PE__ST_VAL)) return PE_ERR_FIELD_VALUE;
                        st->n_meta++;
                    } while (pe__json_char(&j, ','));
                    if (!pe__json_char(&j, '}')) {
                        pe__json_fail(&j, "expected '}' after __metadata__");
                        return PE_ERR_FIELD_VALUE;
                    }
                }
                continue;
            }
            if (st->n >= PE__ST_MAX_ENTRIES) {
                pe__json_fail(&j, "too many tensors");
                return PE_ERR_FIELD_VALUE;
            }
            pe__st_entry *t = &st->t[st->n++];
            strcpy(t->name, key);
            for (int i = 0; i < st->n - 1; i++) {
                if (strcmp(st->t[i].name, key) == 0) {
                    pe__msg_s(e, "safetensors: tensor '");
                    pe__msg_s(e, key);
                    pe__msg_s(e, "' appears twice");
                    return PE_ERR_FIELD_VALUE;
                }
            }
            if (!pe__st_entry_parse(&j, t)) return PE_ERR_FIELD_VALUE;
        } while (pe__json_char(&j, ','));
        if (!pe__json_char(&j, '}')) {
            pe__json_fail(&j, "expected ',' or '}'");
            return PE_ERR_FIELD_VALUE;
        }
    }
    pe__json_ws(&j); /* the spec allows trailing spaces as padding */
    if (j.p != j.end) {
        pe__json_fail(&j, "unexpected bytes after the JSON object");
        return PE_ERR_FIELD_VALUE;
    }
    /* offsets: in bounds, sizes consistent with dtype and shape, no overlaps, no holes */
    uint64_t total = 0;
    for (int i = 0; i < st->n; i++) {
        pe__st_entry *t = &st->t[i];
        if (t->begin > t->end || t->end > st->data_size) {
            pe__msg_s(e, "safetensors: tensor '");
            pe__msg_s(e, t->name);
            pe__msg_s(e, "': data_offsets [");
            pe__msg_i(e, (long long)(t->begin > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : t->begin));
            pe__msg_s(e, ", ");
            pe__msg_i(e, (long long)(t->end > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : t->end));
            pe__msg_s(e, "] outside the data section of ");
            pe__msg_i(e, (long long)st->data_size);
            pe__msg_s(e, " bytes (truncated file?)");
            return PE_ERR_FIELD_VALUE;
        }
        total += t->end - t->begin;
        for (int k = 0; k < i; k++) {
            const pe__st_entry *u = &st->t[k];
            if (t->begin < u->end && u->begin < t->end) {
                pe__msg_s(e, "safetensors: tensors '");
                pe__msg_s(e, u->name);
                pe__msg_s(e, "' and '");
                pe__msg_s(e, t->name);
                pe__msg_s(e, "' overlap");
                return PE_ERR_FIELD_VALUE;
            }
        }
    }
    if (total != st->data_size) {
        pe__msg_s(e, "safetensors: the tensors cover ");
        pe__msg_i(e, (long long)total);
        pe__msg_s(e, " of the ");
        pe__msg_i(e, (long long)st->data_size);
        pe__msg_s(e, " data bytes (holes or trailing bytes)");
        return PE_ERR_FIELD_VALUE;
    }
    return PE_OK;
}

/* The parsed header (~12 KiB): static rather than on the 256 KiB wasm stack. Not re-entrant, like the rest of
 * a single-threaded wasm module; the native trainer loads models one at a time. */
static pe__st pe__st_buf;

static const char *pe__st_meta(const pe__st *st, const char *key) {
    for (int i = 0; i < st->n_meta; i++)
        if (strcmp(st->meta_key[i], key) == 0) return st->meta_val[i];
    return NULL;
}

/* A metadata number: the whole string must parse. */
static int pe__meta_number(const pe__st *st, const char *key, double *out, pe__msg *e, pe_status *status) {
    const char *v = pe__st_meta(st, key);
    if (!v) {
        pe__msg_s(e, "safetensors: __metadata__ lacks '");
        pe__msg_s(e, key);
        pe__msg_s(e, "' (not a posenc model file?)");
        *status = PE_ERR_MISSING_FIELD;
        return 0;
    }
    char *endp = NULL;
    double d = strtod(v, &endp);
    if (endp == v || *endp != 0 || !isfinite(d)) {
        pe__msg_s(e, "safetensors: __metadata__ '");
        pe__msg_s(e, key);
        pe__msg_s(e, "' = '");
        pe__msg_s(e, v);
        pe__msg_s(e, "' is not a number");
        *status = PE_ERR_FIELD_VALUE;
        return 0;
    }
    *out = d;
    return 1;
}

static int pe__meta_int(const pe__st *st, const char *key, int32_t *out, pe__msg *e, pe_status *status) {
    double d;
    if (!pe__meta_number(st, key, &d, e, status)) return 0;
    if (d != floor(d) || d < -2147483648.0 || d > 2147483647.0) {
        pe__msg_s(e, "safetensors: __metadata__ '");
        pe__msg_s(e, key);
        pe__msg_s(e, "' is not an integer");
        *status = PE_ERR_FIELD_VALUE;
        return 0;
    }
    *out = (int32_t)d;
    return 1;
}

/* The config from __metadata__, and the tensor table checked against the file. */
static pe_status pe__st_check(pe_model_config *cfg, pe__tensor_info *t, int *nt, int *file_index, const pe__st *st, pe__msg *e) {
    pe_status status = PE_OK;
    pe_model_config c;
    memset(&c, 0, sizeof c);
    const char *pos = pe__st_meta(st, "position_encoding");
    if (!pos) {
        pe__msg_s(e, "safetensors: __metadata__ lacks 'position_encoding' (not a posenc model file?)");
        return PE_ERR_MISSING_FIELD;
    }
    c.position_encoding = pe__position_from_name(pos);
    if (c.position_encoding < 0) {
        pe__msg_s(e, "safetensors: unknown position_encoding '");
        pe__msg_s(e, pos);
        pe__msg_s(e, "' (none, sinusoidal, learned, rope, alibi)");
        return PE_ERR_FIELD_VALUE;
    }
    if (!pe__meta_int(st, "vocab_size", &c.vocab_size, e, &status) ||
        !pe__meta_int(st, "hidden_size", &c.hidden_size, e, &status) ||
        !pe__meta_int(st, "num_hidden_layers", &c.num_hidden_layers, e, &status) ||
        !pe__meta_int(st, "num_attention_heads", &c.num_attention_heads, e, &status) ||
        !pe__meta_int(st, "intermediate_size", &c.intermediate_size, e, &status) ||
        !pe__meta_int(st, "max_position_embeddings", &c.max_position_embeddings, e, &status) ||
        !pe__meta_number(st, "rope_theta", &c.rope_theta, e, &status) ||
        !pe__meta_number(st, "rms_norm_eps", &c.rms_norm_eps, e, &status) ||
        !pe__meta_number(st, "embedding_multiplier", &c.embedding_multiplier, e, &status))
        return status;
    const char *act = pe__st_meta(st, "hidden_act");
    if (act && strcmp(act, "gelu_pytorch_tanh") != 0) {
        pe__msg_s(e, "safetensors: hidden_act '");
        pe__msg_s(e, act);
        pe__msg_s(e, "' is not supported (gelu_pytorch_tanh)");
        return PE_ERR_FIELD_VALUE;
    }
    status = pe__model_resolve(cfg, &c, e->p);
    if (status != PE_OK) {
        e->n = strlen(e->p);
        return status;
    }
    *nt = pe__model_tensors(t, cfg);
    for (int i = 0; i < st->n; i++) {
        int k = 0;
        while (k < *nt && strcmp(t[k].name, st->t[i].name) != 0) k++;
        if (k == *nt) {
            pe__msg_s(e, "safetensors: unexpected tensor '");
            pe__msg_s(e, st->t[i].name);
            pe__msg_s(e, "' for this architecture");
            return PE_ERR_SHAPE;
        }
    }
    for (int k = 0; k < *nt; k++) {
        int i = 0;
        while (i < st->n && strcmp(t[k].name, st->t[i].name) != 0) i++;
        if (i == st->n) {
            pe__msg_s(e, "safetensors: missing tensor '");
            pe__msg_s(e, t[k].name);
            pe__msg_s(e, "'");
            return PE_ERR_MISSING_FIELD;
        }
        const pe__st_entry *f = &st->t[i];
        if (strcmp(f->dtype, "F32") != 0) {
            pe__msg_s(e, "safetensors: tensor '");
            pe__msg_s(e, f->name);
            pe__msg_s(e, "': dtype ");
            pe__msg_s(e, f->dtype);
            pe__msg_s(e, ", only F32 is supported");
            return PE_ERR_FIELD_VALUE;
        }
        int ok = f->ndim == t[k].ndim;
        for (int d = 0; ok && d < t[k].ndim; d++) ok = f->shape[d] == (uint64_t)t[k].shape[d];
        if (!ok) {
            pe__msg_s(e, "safetensors: tensor '");
            pe__msg_s(e, f->name);
            pe__msg_s(e, "': shape [");
            for (int d = 0; d < f->ndim; d++) {
                if (d) pe__msg_s(e, ", ");
                pe__msg_i(e, (long long)(f->shape[d] > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : f->shape[d]));
            }
            pe__msg_s(e, "], expected [");
            for (int d = 0; d < t[k].ndim; d++) {
                if (d) pe__msg_s(e, ", ");
                pe__msg_i(e, t[k].shape[d]);
            }
            pe__msg_s(e, "]");
            return PE_ERR_SHAPE;
        }
        if (f->end - f->begin != (uint64_t)t[k].numel * 4u) {
            pe__msg_s(e, "safetensors: tensor '");
            pe__msg_s(e, f->name);
            pe__msg_s(e, "': data_offsets span ");
            pe__msg_i(e, (long long)(f->end - f->begin));
            pe__msg_s(e, " bytes, its shape needs ");
            pe__msg_i(e, (long long)(t[k].numel * 4u));
            return PE_ERR_FIELD_VALUE;
        }
        file_index[k] = i;
    }
    return PE_OK;
}

pe_status pe_model_open(pe_model *m, size_t *n_weights, const uint8_t *file, size_t file_size) {
    if (!m) return PE_ERR_NULL;
    memset(m, 0, sizeof *m);
    pe__msg e = pe__msg_start(m->message, sizeof m->message);
    if (!file || !n_weights) {
        pe__msg_s(&e, "open: file and n_weights must not be NULL");
        return PE_ERR_NULL;
    }
    pe__st *stp = &pe__st_buf;
    pe__tensor_info t[PE__MAX_TENSORS];
    int nt = 0, idx[PE__MAX_TENSORS];
    pe_status s = pe__st_parse(stp, file, file_size, &e);
    if (s == PE_OK) s = pe__st_check(&m->config, t, &nt, idx, stp, &e);
    if (s != PE_OK) return s;
    m->n_weights = t[nt - 1].offset + t[nt - 1].numel;
    *n_weights = m->n_weights;
    return PE_OK;
}

pe_status pe_model_load(pe_model *m, float *weights, size_t n_floats, const uint8_t *file, size_t file_size) {
    if (!m) return PE_ERR_NULL;
    pe__msg e = pe__msg_start(m->message, sizeof m->message);
    if (!file || !weights) {
        pe__msg_s(&e, "load: file and weights must not be NULL");
        return PE_ERR_NULL;
    }
    pe__st *stp = &pe__st_buf;
    pe__tensor_info t[PE__MAX_TENSORS];
    int nt = 0, idx[PE__MAX_TENSORS];
    pe_model_config cfg;
    pe_status s = pe__st_parse(stp, file, file_size, &e);
    if (s == PE_OK) s = pe__st_check(&cfg, t, &nt, idx, stp, &e);
    if (s != PE_OK) return s;
    const size_t need = t[nt - 1].offset + t[nt - 1].numel;
    if (n_floats < need) {
        pe__msg_s(&e, "load: weights hold ");
        pe__msg_i(&e, (long long)n_floats);
        pe__msg_s(&e, " floats, the model needs ");
        pe__msg_i(&e, (long long)need);
        return PE_ERR_SHAPE;
    }
    for (int k = 0; k < nt; k++) {
        const pe__st_entry *f = &stp->t[idx[k]];
        memcpy(weights + t[k].offset, file + stp->data_start + f->begin, t[k].numel * sizeof(float));
    }
    for (size_t i = 0; i < need; i++) {
        if (!isfinite(weights[i])) {
            int k = nt - 1;
            while (k > 0 && t[k].offset > i) k--;
            pe__msg_s(&e, "load: tensor '");
            pe__msg_s(&e, t[k].name);
            pe__msg_s(&e, "' holds a NaN or infinity at element ");
            pe__msg_i(&e, (long long)(i - t[k].offset));
            return PE_ERR_FIELD_VALUE;
        }
    }
    s = pe__model_bind(m, &cfg, weights);
    if (s != PE_OK && !m->message[0]) {
        e = pe__msg_start(m->message, sizeof m->message);
        pe__msg_s(&e, "load: ");
        pe__msg_s(&e, pe_status_string(s));
    }
    return s;
}
