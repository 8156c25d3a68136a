/* train.c — the native trainer: backward pass, AdamW, the training loop, and the safetensors writer.
 * Native only (not in the wasm builds). Single-threaded with fixed summation orders, so the same seed and the
 * same toolchain give the same weights, bit for bit.
 *
 * Backward of each forward piece (model.c), in reverse:
 *   tied output   logits = hf E^T          dE += dlogits^T hf,  dhf = dlogits E
 *   RMSNorm       y = x r w, r = (mean x^2 + eps)^-1/2
 *                 dw += dy x r,  dx = r (dy w) - r^3 x mean(x dy w)
 *   linear        y = x W^T                dW += dy^T x,  dx = dy W
 *   GELU (tanh)   g = gelu(u)              du = dg gelu'(u)
 *   attention     o_i = sum_j P_ij v_j,  P = softmax_j(s_ij),  s_ij = scale q_i.k_j + alibi_ij (+ causal mask)
 *                 dv_j += P_ij do_i,  dP_ij = do_i.v_j,  ds_ij = P_ij (dP_ij - sum_k P_ik dP_ik),
 *                 dq_i += scale ds_ij k_j,  dk_j += scale ds_ij q_i       (ALiBi's bias is constant: no gradient)
 *   RoPE          q' = R(pos) q with R a block rotation: dq = R^T dq' = the inverse rotation, which is
 *                 pe_rope_apply(..., PE_ROTATE_INVERSE) with the same cos/sin tables (exactly the transpose).
 *   sinusoidal    constant, no gradient.   learned: dtable[pos] += dx0.   embedding: dE[tok] += mult dx0.
 * AdamW: Loshchilov & Hutter 2019 (decoupled weight decay), on matrices only (not embeddings, norms).
 */
#include "posenc.h"
#include "model_internal.h"
#include "train.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- allocation -------------------------------------------------------------------------------- */

static float *pe__falloc(size_t n) {
    float *p = (float *)calloc(n ? n : 1, sizeof(float));
    if (!p) {
        fprintf(stderr, "out of memory (%zu floats)\n", n);
        exit(1);
    }
    return p;
}

int pe__trainer_init(pe__trainer *tr, const pe_model_config *cfg_in, int32_t batch, int32_t seq, uint64_t init_seed) {
    memset(tr, 0, sizeof *tr);
    pe_model_config cfg;
    if (pe__model_resolve(&cfg, cfg_in, tr->m.message) != PE_OK) {
        fprintf(stderr, "%s\n", tr->m.message);
        return 0;
    }
    tr->nt = pe__model_tensors(tr->t, &cfg);
    tr->nw = tr->t[tr->nt - 1].offset + tr->t[tr->nt - 1].numel;
    tr->w = pe__falloc(tr->nw);
    tr->g = pe__falloc(tr->nw);
    tr->am = pe__falloc(tr->nw);
    tr->av = pe__falloc(tr->nw);
    tr->B = batch;
    tr->S = seq;

    /* init: N(0, 1/D) embeddings (times the sqrt(D) multiplier: unit RMS at the input), N(0, 1/in) linear
     * weights, output projections (o_proj, down_proj) also scaled by 1/sqrt(2 layers) as in GPT-2, norms 1,
     * learned positions N(0, 0.2^2). One stream per tensor, so a tensor's values do not depend on the others. */
    for (int k = 0; k < tr->nt; k++) {
        const pe__tensor_info *t = &tr->t[k];
        pe__rng r = pe__rng_seed(init_seed, 1000 + (uint64_t)k);
        double std = 0;
        switch (t->kind) {
        case PE__T_EMBED: std = 1.0 / sqrt((double)cfg.hidden_size); break;
        case PE__T_POS: std = 0.2; break;
        case PE__T_NORM: std = 0; break;
        case PE__T_LINEAR: std = 1.0 / sqrt((double)t->shape[1]); break;
        case PE__T_LINEAR_OUT: std = 1.0 / sqrt((double)t->shape[1]) / sqrt(2.0 * cfg.num_hidden_layers); break;
        }
        for (size_t i = 0; i < t->numel; i++)
            tr->w[t->offset + i] = t->kind == PE__T_NORM ? 1.0f : (float)(std * pe__rng_normal(&r));
    }
    if (pe__model_bind(&tr->m, &cfg, tr->w) != PE_OK) {
        fprintf(stderr, "bind: %s\n", tr->m.message);
        return 0;
    }

    /* activations, kept for the backward */
    const size_t N = (size_t)batch * seq, D = (size_t)cfg.hidden_size, F = (size_t)cfg.intermediate_size;
    const size_t H = (size_t)cfg.num_attention_heads, V = (size_t)cfg.vocab_size, hd2 = D / H / 2 ? D / H / 2 : 1;
    const size_t per_layer = 8 * N * D + 2 * N + 2 * N * F + H * (size_t)batch * seq * seq;
    const size_t total = (size_t)cfg.num_hidden_layers * per_layer + 2 * N * D + N + N * D + 2 * (size_t)seq * hd2;
    tr->acts_mem = pe__falloc(total);
    float *p = tr->acts_mem;
#define PE__TAKE(ptr, n) \
    do {                 \
        (ptr) = p;       \
        p += (n);        \
    } while (0)
    for (int32_t l = 0; l < cfg.num_hidden_layers; l++) {
        pe__layer_acts *A = &tr->a.l[l];
        PE__TAKE(A->x_in, N * D);
        PE__TAKE(A->rms1, N);
        PE__TAKE(A->h1, N * D);
        PE__TAKE(A->q, N * D);
        PE__TAKE(A->k, N * D);
        PE__TAKE(A->v, N * D);
        PE__TAKE(A->p, H * (size_t)batch * seq * seq);
        PE__TAKE(A->att, N * D);
        PE__TAKE(A->x_mid, N * D);
        PE__TAKE(A->rms2, N);
        PE__TAKE(A->h2, N * D);
        PE__TAKE(A->u, N * F);
        PE__TAKE(A->g, N * F);
    }
    PE__TAKE(tr->a.x_out, N * D);
    PE__TAKE(tr->a.rmsf, N);
    PE__TAKE(tr->a.hf, N * D);
    PE__TAKE(tr->a.tmp, N * D);
    PE__TAKE(tr->a.cos, (size_t)seq * hd2);
    PE__TAKE(tr->a.sin, (size_t)seq * hd2);
#undef PE__TAKE
    tr->logits = pe__falloc(N * V);
    tr->dx = pe__falloc(N * D);
    tr->dh = pe__falloc(N * D);
    tr->dq = pe__falloc(N * D);
    tr->dk = pe__falloc(N * D);
    tr->dv = pe__falloc(N * D);
    tr->datt = pe__falloc(N * D);
    tr->du = pe__falloc(N * F);
    tr->dp = pe__falloc((size_t)seq);
    return 1;
}

void pe__trainer_free(pe__trainer *tr) {
    free(tr->w);
    free(tr->g);
    free(tr->am);
    free(tr->av);
    free(tr->acts_mem);
    free(tr->logits);
    free(tr->dx);
    free(tr->dh);
    free(tr->dq);
    free(tr->dk);
    free(tr->dv);
    free(tr->datt);
    free(tr->du);
    free(tr->dp);
    memset(tr, 0, sizeof *tr);
}

/* ---- backward building blocks ------------------------------------------------------------------- */

/* dW (out, in) += dy^T x, accumulated over rows in order; dx (n, in) = dy W (overwritten), or += when
 * accumulate, accumulated over outputs in order; dx may be NULL. Four rows (four outputs) go through each
 * element at once, still added one after another: the same sums as the plain loops, with a quarter of the
 * memory traffic. */
static void pe__linear_back(float *dx, float *dw, const float *dy, const float *x, const float *w, int32_t n,
                            int32_t in, int32_t out, int accumulate) {
    int32_t r = 0;
    for (; r + 4 <= n; r += 4) {
        const float *dy0 = dy + (size_t)r * out, *x0 = x + (size_t)r * in;
        for (int32_t o = 0; o < out; o++) {
            const float d0 = dy0[o], d1 = dy0[out + o], d2 = dy0[2 * out + o], d3 = dy0[3 * out + o];
            if (d0 == 0.0f && d1 == 0.0f && d2 == 0.0f && d3 == 0.0f) continue;
            float *dwo = dw + (size_t)o * in;
            for (int32_t i = 0; i < in; i++) {
                float a = dwo[i];
                a += d0 * x0[i];
                a += d1 * x0[in + i];
                a += d2 * x0[2 * in + i];
                a += d3 * x0[3 * in + i];
                dwo[i] = a;
            }
        }
    }
    for (; r < n; r++) {
        const float *dyr = dy + (size_t)r * out, *xr = x + (size_t)r * in;
        for (int32_t o = 0; o < out; o++) {
            const float d = dyr[o];
            if (d == 0.0f) continue;
            float *dwo = dw + (size_t)o * in;
            for (int32_t i = 0; i < in; i++) dwo[i] += d * xr[i];
        }
    }
    if (!dx) return;
    for (r = 0; r < n; r++) {
        const float *dyr = dy + (size_t)r * out;
        float *dxr = dx + (size_t)r * in;
        if (!accumulate) memset(dxr, 0, (size_t)in * sizeof(float));
        int32_t o = 0;
        for (; o + 4 <= out; o += 4) {
            const float d0 = dyr[o], d1 = dyr[o + 1], d2 = dyr[o + 2], d3 = dyr[o + 3];
            const float *w0 = w + (size_t)o * in;
            for (int32_t i = 0; i < in; i++) {
                float a = dxr[i];
                a += d0 * w0[i];
                a += d1 * w0[in + i];
                a += d2 * w0[2 * in + i];
                a += d3 * w0[3 * in + i];
                dxr[i] = a;
            }
        }
        for (; o < out; o++) {
            const float d = dyr[o];
            const float *wo = w + (size_t)o * in;
            for (int32_t i = 0; i < in; i++) dxr[i] += d * wo[i];
        }
    }
}

/* dx += RMSNorm backward of dy; dw += its weight gradient. */
static void pe__rmsnorm_back(float *dx, float *dw, const float *dy, const float *x, const float *rinv, const float *w,
                             int32_t n, int32_t d) {
    for (int32_t r = 0; r < n; r++) {
        const float *xr = x + (size_t)r * d, *dyr = dy + (size_t)r * d;
        float *dxr = dx + (size_t)r * d;
        const float ri = rinv[r];
        double dot = 0;
        for (int32_t i = 0; i < d; i++) {
            dw[i] += dyr[i] * xr[i] * ri;
            dot += (double)(dyr[i] * w[i]) * (double)xr[i];
        }
        const float c = (float)((double)ri * ri * ri * dot / d);
        for (int32_t i = 0; i < d; i++) dxr[i] += ri * (dyr[i] * w[i]) - c * xr[i];
    }
}

/* ---- loss, forward and backward ----------------------------------------------------------------- */

double pe__trainer_loss(pe__trainer *tr, const int32_t *tokens, const int32_t *targets, int backward,
                        int32_t *n_correct, int32_t *n_scored_out) {
    pe_model *m = &tr->m;
    const pe_model_config *c = &m->config;
    const int32_t B = tr->B, S = tr->S, N = B * S;
    const int32_t D = c->hidden_size, F = c->intermediate_size, H = c->num_attention_heads, V = c->vocab_size;
    const int32_t hd = D / H;
    pe_status st = pe__model_forward_batch(m, &m->rope, tokens, B, S, tr->logits, &tr->a);
    if (st != PE_OK) {
        fprintf(stderr, "forward failed: %s\n", pe_status_string(st));
        exit(1);
    }
    int32_t n_scored = 0, correct = 0;
    for (int32_t r = 0; r < N; r++) n_scored += targets[r] >= 0;
    if (n_scored_out) *n_scored_out = n_scored;
    /* cross-entropy over scored rows; logits become dlogits in place when backward */
    double loss = 0;
    for (int32_t r = 0; r < N; r++) {
        float *lr = tr->logits + (size_t)r * V;
        const int32_t y = targets[r];
        if (y < 0) {
            if (backward) memset(lr, 0, (size_t)V * sizeof(float));
            continue;
        }
        float mx = lr[0];
        int32_t am = 0;
        for (int32_t v = 1; v < V; v++)
            if (lr[v] > mx) {
                mx = lr[v];
                am = v;
            }
        correct += am == y;
        double se = 0;
        for (int32_t v = 0; v < V; v++) se += exp((double)lr[v] - mx);
        const double lse = mx + log(se);
        loss += lse - lr[y];
        if (backward) {
            const double inv = 1.0 / n_scored;
            for (int32_t v = 0; v < V; v++) lr[v] = (float)(exp((double)lr[v] - lse) * inv);
            lr[y] -= (float)inv;
        }
    }
    if (n_correct) *n_correct = correct;
    if (!backward || n_scored == 0) return n_scored ? loss / n_scored : 0.0;

    /* ---- backward ---- */
    memset(tr->g, 0, tr->nw * sizeof(float));
    const pe__tensor_info *T = tr->t;
    int ti = 0;
    float *gE = tr->g + T[ti++].offset;
    float *gPos = c->position_encoding == PE_MODEL_POS_LEARNED ? tr->g + T[ti++].offset : NULL;
    const int layer0 = ti;
    float *gFinal = tr->g + T[tr->nt - 1].offset;
    const float *dlogits = tr->logits;

    /* tied output: dE += dlogits^T hf; dhf = dlogits E */
    pe__linear_back(tr->dh, gE, dlogits, tr->a.hf, m->embed_tokens, N, D, V, 0);
    memset(tr->dx, 0, (size_t)N * D * sizeof(float));
    pe__rmsnorm_back(tr->dx, gFinal, tr->dh, tr->a.x_out, tr->a.rmsf, m->final_norm, N, D);

    const float scale = (float)(1.0 / sqrt((double)hd));
    for (int32_t l = c->num_hidden_layers - 1; l >= 0; l--) {
        const pe_model_layer *W = &m->layers[l];
        const pe__layer_acts *A = &tr->a.l[l];
        const int base = layer0 + 8 * l;
        float *g_in = tr->g + T[base + 0].offset, *g_q = tr->g + T[base + 1].offset, *g_k = tr->g + T[base + 2].offset;
        float *g_v = tr->g + T[base + 3].offset, *g_o = tr->g + T[base + 4].offset,
              *g_post = tr->g + T[base + 5].offset;
        float *g_up = tr->g + T[base + 6].offset, *g_down = tr->g + T[base + 7].offset;

        /* MLP: x_next = x_mid + W_down gelu(W_up h2); dx is d x_next and becomes d x_mid */
        pe__linear_back(tr->du, g_down, tr->dx, A->g, W->w_down, N, F, D, 0); /* du holds dg */
        pe__gelu_backward(tr->du, A->u, (size_t)N * F);
        pe__linear_back(tr->dh, g_up, tr->du, A->h2, W->w_up, N, D, F, 0);
        pe__rmsnorm_back(tr->dx, g_post, tr->dh, A->x_mid, A->rms2, W->post_norm, N, D);

        /* attention output projection: x_mid = x_in + W_o att */
        pe__linear_back(tr->datt, g_o, tr->dx, A->att, W->wo, N, D, D, 0);

        /* attention */
        memset(tr->dq, 0, (size_t)N * D * sizeof(float));
        memset(tr->dk, 0, (size_t)N * D * sizeof(float));
        memset(tr->dv, 0, (size_t)N * D * sizeof(float));
        for (int32_t b = 0; b < B; b++) {
            for (int32_t h = 0; h < H; h++) {
                for (int32_t i = 0; i < S; i++) {
                    const size_t qi = ((size_t)(b * S + i)) * D + (size_t)h * hd;
                    const float *P = A->p + (((size_t)b * H + h) * S + i) * S;
                    const float *dO = tr->datt + qi;
                    double sum = 0;
                    for (int32_t j = 0; j <= i; j++) {
                        const size_t kj = ((size_t)(b * S + j)) * D + (size_t)h * hd;
                        const float *vj = A->v + kj;
                        float d = 0;
                        for (int32_t e = 0; e < hd; e++) d += dO[e] * vj[e];
                        tr->dp[j] = d;
                        sum += (double)P[j] * d;
                        float *dvj = tr->dv + kj;
                        const float pj = P[j];
                        for (int32_t e = 0; e < hd; e++) dvj[e] += pj * dO[e];
                    }
                    const float fsum = (float)sum;
                    float *dqi = tr->dq + qi;
                    const float *qv = A->q + qi;
                    for (int32_t j = 0; j <= i; j++) {
                        const float ds = P[j] * (tr->dp[j] - fsum) * scale;
                        if (ds == 0.0f) continue;
                        const size_t kj = ((size_t)(b * S + j)) * D + (size_t)h * hd;
                        const float *kv = A->k + kj;
                        float *dkj = tr->dk + kj;
                        for (int32_t e = 0; e < hd; e++) {
                            dqi[e] += ds * kv[e];
                            dkj[e] += ds * qv[e];
                        }
                    }
                }
            }
        }
        if (c->position_encoding == PE_MODEL_POS_ROPE) {
            const pe_rope_apply_config rc = {.batch = B, .seq = S, .heads = H, .rotation = PE_ROTATE_INVERSE};
            pe_rope_apply(&m->rope, tr->dq, tr->a.cos, tr->a.sin, &rc);
            pe_rope_apply(&m->rope, tr->dk, tr->a.cos, tr->a.sin, &rc);
        }
        pe__linear_back(tr->dh, g_q, tr->dq, A->h1, W->wq, N, D, D, 0);
        pe__linear_back(tr->dh, g_k, tr->dk, A->h1, W->wk, N, D, D, 1);
        pe__linear_back(tr->dh, g_v, tr->dv, A->h1, W->wv, N, D, D, 1);
        pe__rmsnorm_back(tr->dx, g_in, tr->dh, A->x_in, A->rms1, W->input_norm, N, D);
    }
    /* embeddings: x0 = mult E[tok] + pos */
    const float mult = (float)c->embedding_multiplier;
    for (int32_t r = 0; r < N; r++) {
        float *ge = gE + (size_t)tokens[r] * D;
        const float *dxr = tr->dx + (size_t)r * D;
        for (int32_t i = 0; i < D; i++) ge[i] += mult * dxr[i];
        if (gPos) {
            float *gp = gPos + (size_t)(r % S) * D;
            for (int32_t i = 0; i < D; i++) gp[i] += dxr[i];
        }
    }
    return loss / n_scored;
}

/* ---- AdamW -------------------------------------------------------------------------------------- */

double pe__trainer_grad_norm(const pe__trainer *tr) {
    double ss = 0;
    for (size_t i = 0; i < tr->nw; i++) ss += (double)tr->g[i] * (double)tr->g[i];
    return sqrt(ss);
}

void pe__trainer_adamw(pe__trainer *tr, const pe__adamw *o, double lr, int64_t step) {
    double clip = 1.0;
    if (o->clip > 0) {
        const double gn = pe__trainer_grad_norm(tr);
        if (gn > o->clip) clip = o->clip / gn;
    }
    const double bc1 = 1.0 - pow(o->beta1, (double)step), bc2 = 1.0 - pow(o->beta2, (double)step);
    const float b1 = (float)o->beta1, b2 = (float)o->beta2, fclip = (float)clip;
    const float step_size = (float)(lr / bc1), inv_sqrt_bc2 = (float)(1.0 / sqrt(bc2)), eps = (float)o->eps;
    for (int k = 0; k < tr->nt; k++) {
        const pe__tensor_info *t = &tr->t[k];
        const int decay = t->kind == PE__T_LINEAR || t->kind == PE__T_LINEAR_OUT;
        const float wd = decay ? (float)(1.0 - lr * o->weight_decay) : 1.0f;
        float *w = tr->w + t->offset, *g = tr->g + t->offset, *m = tr->am + t->offset, *v = tr->av + t->offset;
        for (size_t i = 0; i < t->numel; i++) {
            const float gi = g[i] * fclip;
            m[i] = b1 * m[i] + (1.0f - b1) * gi;
            v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
            w[i] = w[i] * wd - step_size * m[i] / (sqrtf(v[i]) * inv_sqrt_bc2 + eps);
        }
    }
}

/* ---- safetensors + config writers ----------------------------------------------------------------- */

static void pe__buf_put(pe__buf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n) cap *= 2;
        uint8_t *q = (uint8_t *)realloc(b->data, cap);
        if (!q) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        b->data = q;
        b->cap = cap;
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}
void pe__buf_puts(pe__buf *b, const char *s) { pe__buf_put(b, s, strlen(s)); }
void pe__buf_printf(pe__buf *b, const char *fmt, ...) {
    char tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp) {
        fprintf(stderr, "pe__buf_printf: too long\n");
        exit(1);
    }
    pe__buf_put(b, tmp, (size_t)n);
}
void pe__buf_json_string(pe__buf *b, const char *s) {
    pe__buf_puts(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"')
            pe__buf_puts(b, "\\\"");
        else if (ch == '\\')
            pe__buf_puts(b, "\\\\");
        else if (ch == '\n')
            pe__buf_puts(b, "\\n");
        else if (ch < 0x20)
            pe__buf_printf(b, "\\u%04x", ch);
        else
            pe__buf_put(b, s, 1);
    }
    pe__buf_puts(b, "\"");
}
/* A double that round-trips (shortest %.17g is not needed: %.9g round-trips floats, %.17g doubles). */
void pe__buf_double(pe__buf *b, double v) {
    char tmp[40];
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) break;
    }
    pe__buf_puts(b, tmp);
}

/* The safetensors bytes of the model: header with __metadata__ (the architecture, as strings), tensors in the
 * canonical order, header padded with spaces so the data starts 8-byte aligned (as huggingface/safetensors
 * does). */
void pe__safetensors_write(pe__buf *out, const pe_model_config *c, const pe__tensor_info *t, int nt, const float *w,
                           const char *const *extra_meta) {
    pe__buf h = {0};
    pe__buf_puts(&h, "{\"__metadata__\":{");
    pe__buf_printf(
        &h,
        "\"architecture\":\"PosencTinyTransformer\",\"vocab_size\":\"%d\",\"hidden_size\":\"%d\","
        "\"num_hidden_layers\":\"%d\",\"num_attention_heads\":\"%d\",\"intermediate_size\":\"%d\","
        "\"max_position_embeddings\":\"%d\",\"position_encoding\":\"%s\",\"hidden_act\":\"gelu_pytorch_tanh\",",
        c->vocab_size, c->hidden_size, c->num_hidden_layers, c->num_attention_heads, c->intermediate_size,
        c->max_position_embeddings, pe__position_name(c->position_encoding));
    pe__buf_puts(&h, "\"rope_theta\":\"");
    pe__buf_double(&h, c->rope_theta);
    pe__buf_puts(&h, "\",\"rms_norm_eps\":\"");
    pe__buf_double(&h, c->rms_norm_eps);
    pe__buf_puts(&h, "\",\"embedding_multiplier\":\"");
    pe__buf_double(&h, c->embedding_multiplier);
    pe__buf_puts(&h, "\"");
    for (int i = 0; extra_meta && extra_meta[i]; i += 2) {
        pe__buf_puts(&h, ",");
        pe__buf_json_string(&h, extra_meta[i]);
        pe__buf_puts(&h, ":");
        pe__buf_json_string(&h, extra_meta[i + 1]);
    }
    pe__buf_puts(&h, "}");
    size_t off = 0;
    for (int k = 0; k < nt; k++) {
        pe__buf_printf(&h, ",\"%s\":{\"dtype\":\"F32\",\"shape\":[%d", t[k].name, t[k].shape[0]);
        if (t[k].ndim == 2) pe__buf_printf(&h, ",%d", t[k].shape[1]);
        pe__buf_printf(&h, "],\"data_offsets\":[%zu,%zu]}", off, off + t[k].numel * 4);
        off += t[k].numel * 4;
    }
    pe__buf_puts(&h, "}");
    while ((8 + h.len) % 8) pe__buf_puts(&h, " ");
    uint8_t len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (uint8_t)((uint64_t)h.len >> (8 * i));
    out->len = 0;
    pe__buf_put(out, len8, 8);
    pe__buf_put(out, h.data, h.len);
    for (int k = 0; k < nt; k++) pe__buf_put(out, w + t[k].offset, t[k].numel * sizeof(float));
    free(h.data);
}

int pe__write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 0;
    }
    int ok = fwrite(data, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok) fprintf(stderr, "%s: write failed\n", path);
    return ok;
}

uint8_t *pe__read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = (uint8_t *)malloc(sz > 0 ? (size_t)sz : 1);
    if (!p || (sz > 0 && fread(p, 1, (size_t)sz, f) != (size_t)sz)) {
        free(p);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *n = (size_t)sz;
    return p;
}

/* ---- the training loop --------------------------------------------------------------------------- */

static double pe__now(void) {
    struct timespec ts; /* C11 timespec_get: wall clock, for progress lines only */
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void pe__fmt_time(char *out, size_t n, double s) {
    if (s < 0) s = 0;
    int t = (int)(s + 0.5);
    if (t >= 60)
        snprintf(out, n, "%dm%02ds", t / 60, t % 60);
    else
        snprintf(out, n, "%ds", t);
}

double pe__train_run(pe__trainer *tr, const pe__task *task, const pe__train_opts *o) {
    const int32_t B = tr->B, S = tr->S;
    int32_t *tokens = (int32_t *)malloc((size_t)B * S * sizeof(int32_t));
    int32_t *targets = (int32_t *)malloc((size_t)B * S * sizeof(int32_t));
    if (!tokens || !targets) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    const int64_t tail = o->steps < 100 ? o->steps : 100;
    double tail_loss = 0, log_loss = 0;
    int64_t log_n = 0;
    const double t0 = pe__now();
    for (int64_t step = 0; step < o->steps; step++) {
        for (int32_t b = 0; b < B; b++)
            pe__task_sample(task, o->data_seed, (uint64_t)(step * B + b), S, tokens + (size_t)b * S,
                            targets + (size_t)b * S);
        const double loss = pe__trainer_loss(tr, tokens, targets, 1, NULL, NULL);
        double lr;
        if (step < o->warmup)
            lr = o->lr * (double)(step + 1) / (double)o->warmup;
        else {
            const double p =
                (double)(step - o->warmup) / (double)(o->steps - o->warmup > 1 ? o->steps - o->warmup - 1 : 1);
            lr = o->lr * (o->min_lr_frac + (1.0 - o->min_lr_frac) * 0.5 * (1.0 + cos(3.141592653589793 * p)));
        }
        pe__trainer_adamw(tr, &o->adamw, lr, step + 1);
        if (o->loss_log) o->loss_log[step] = loss;
        if (step >= o->steps - tail) tail_loss += loss;
        log_loss += loss;
        log_n++;
        if (o->log_every > 0 && ((step + 1) % o->log_every == 0 || step + 1 == o->steps)) {
            const double el = pe__now() - t0;
            const double tps = (double)(step + 1) * B * S / (el > 1e-9 ? el : 1e-9);
            const double left = el / (double)(step + 1) * (double)(o->steps - step - 1);
            char e1[16], e2[16];
            pe__fmt_time(e1, sizeof e1, el);
            pe__fmt_time(e2, sizeof e2, left);
            fprintf(stderr, "%s step %6lld/%lld  loss %.4f  lr %.2e  %6.0f tok/s  elapsed %s  left %s\n",
                    o->label ? o->label : "", (long long)(step + 1), (long long)o->steps, log_loss / (double)log_n, lr,
                    tps, e1, e2);
            log_loss = 0;
            log_n = 0;
        }
    }
    free(tokens);
    free(targets);
    return tail ? tail_loss / (double)tail : 0;
}

int pe__write_train_log(const char *path, const char *label, const pe__train_opts *o, int32_t batch, int32_t seq) {
    pe__buf b = {0};
    pe__buf_puts(
        &b,
        "{\n  \"description\": \"training loss at every step: mean cross-entropy (nats, 6 significant digits) over the step's "
        "scored targets, before that step's update; written by c/model/train.c\",\n  \"model\": ");
    pe__buf_json_string(&b, label);
    pe__buf_printf(&b, ",\n  \"steps\": %lld,\n  \"batch_size\": %d,\n  \"seq_len\": %d,\n  \"warmup_steps\": %lld,\n",
                   (long long)o->steps, batch, seq, (long long)o->warmup);
    pe__buf_puts(&b, "  \"loss\": [");
    for (int64_t i = 0; i < o->steps; i++) {
        pe__buf_puts(&b, i == 0 ? "\n    " : i % 10 ? ", " : ",\n    ");
        pe__buf_printf(&b, "%.6g", o->loss_log[i]);
    }
    pe__buf_puts(&b, "\n  ]\n}\n");
    const int ok = pe__write_file(path, b.data, b.len);
    free(b.data);
    return ok;
}
