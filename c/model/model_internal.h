/* model_internal.h — private to c/model: the tensor table, activations, the batched forward, tasks, training.
 * Nothing here is public API; names are pe__ (private) and may change. */
#ifndef PE_MODEL_INTERNAL_H
#define PE_MODEL_INTERNAL_H

#include "posenc.h"

#include <stddef.h>
#include <stdint.h>

/* ---- messages into a caller's buffer, no snprintf (keeps the wasm small) (model.c, safetensors.c) ---- */

typedef struct pe__msg {
    char *p;
    size_t n, cap;
} pe__msg;

static inline pe__msg pe__msg_start(char *buf, size_t cap) {
    pe__msg m = {buf, 0, cap};
    if (buf && cap) buf[0] = 0;
    return m;
}
static inline void pe__msg_s(pe__msg *m, const char *s) {
    if (!m->p || !m->cap) return;
    while (*s && m->n + 1 < m->cap) m->p[m->n++] = *s++;
    m->p[m->n] = 0;
}
static inline void pe__msg_u(pe__msg *m, uint64_t u) {
    char b[24];
    int i = 23;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    pe__msg_s(m, b + i);
}
static inline void pe__msg_i(pe__msg *m, long long v) {
    if (v < 0) pe__msg_s(m, "-");
    pe__msg_u(m, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
}

/* ---- tensor table (model.c) --------------------------------------------------------------------- */

#define PE__MAX_TENSORS (3 + 8 * PE_MODEL_MAX_LAYERS)
#define PE__NAME_SIZE 64

typedef struct pe__tensor_info {
    char name[PE__NAME_SIZE]; /* Hugging Face style, e.g. "model.layers.0.self_attn.q_proj.weight" */
    int32_t ndim;             /* 1 or 2 */
    int32_t shape[2];
    size_t numel;
    size_t offset; /* in floats, into the flat weights (canonical order = the order of this table) */
    int32_t kind;  /* pe__tensor_kind: how it is initialised and whether it is decayed */
} pe__tensor_info;

enum pe__tensor_kind {
    PE__T_EMBED,
    PE__T_POS,
    PE__T_NORM,
    PE__T_LINEAR,
    PE__T_LINEAR_OUT
};

/* Fills the table for a resolved config; returns the number of tensors. */
int pe__model_tensors(pe__tensor_info *t, const pe_model_config *cfg);

/* Resolves defaults (rope_theta, eps, multiplier) and validates; on failure writes msg (may be NULL). */
pe_status pe__model_resolve(pe_model_config *out, const pe_model_config *in, char *msg);

/* Points m at weights laid out as pe__model_tensors says; resolves the RoPE and ALiBi slopes. */
pe_status pe__model_bind(pe_model *m, const pe_model_config *cfg, const float *weights);

const char *pe__position_name(int32_t position_encoding); /* "none", "sinusoidal", ... */
int32_t pe__position_from_name(const char *name);         /* -1 if unknown */

/* ---- forward with saved activations (model.c) ----------------------------------------------------- */

/* Per-layer activations, each (N, ...) with N = batch * seq rows. For inference the residual pointers (x_in,
 * x_mid, and the next layer's x_in / x_out) may all alias one buffer, as may h1/h2/hf and u/g: the forward
 * reads each only before it overwrites it. For training they are distinct and kept for the backward. */
typedef struct pe__layer_acts {
    float *x_in;  /* (N, D) residual stream entering the layer */
    float *rms1;  /* (N) 1 / rms(x_in) */
    float *h1;    /* (N, D) RMSNorm(x_in) * input_norm */
    float *q, *k; /* (N, D) = (B, S, H, hd) BSHD, after RoPE */
    float *v;     /* (N, D) */
    float *p;     /* (B, H, S, S) attention weights, or NULL (not needed: inference) */
    float *att;   /* (N, D) attention output, before W_o */
    float *x_mid; /* (N, D) x_in + W_o att */
    float *rms2;  /* (N) */
    float *h2;    /* (N, D) */
    float *u;     /* (N, F) W_up h2 */
    float *g;     /* (N, F) gelu(u) */
} pe__layer_acts;

typedef struct pe__acts {
    pe__layer_acts l[PE_MODEL_MAX_LAYERS];
    float *x_out;         /* (N, D) after the last layer */
    float *rmsf;          /* (N) */
    float *hf;            /* (N, D) final RMSNorm output */
    float *tmp;           /* (N, D) scratch */
    float *cos, *sin;     /* (S, head_dim / 2) RoPE tables for positions 0 .. S-1 (RoPE models) */
    float *q_out, *k_out; /* NULL, or (layers, N, D): each layer's q and k before RoPE (pe_model_forward_qk) */
} pe__acts;

/* tokens (B, S) -> logits (B*S, V). rope: the RoPE to use (RoPE models), ignored otherwise. */
pe_status pe__model_forward_batch(const pe_model *m, const pe_rope *rope, const int32_t *tokens, int32_t batch,
                                  int32_t seq, float *logits, const pe__acts *a);

/* Fixed-order building blocks, shared with the backward. */
void pe__linear(float *y, const float *x, const float *w, int32_t n, int32_t in, int32_t out);
float pe__gelu(float u);
float pe__gelu_grad(float u);
void pe__gelu_forward(float *g, const float *u, size_t n);   /* g = gelu(u); g may be u */
void pe__gelu_backward(float *dg, const float *u, size_t n); /* dg *= gelu'(u) */

/* ---- safetensors writer and helpers (model.c / train.c) ------------------------------------------ */

/* Appends to a growing byte buffer (native only). */
typedef struct pe__buf {
    uint8_t *data;
    size_t len, cap;
} pe__buf;

/* ---- PRNG: splitmix64 (Steele, Lea & Flood 2014), deterministic everywhere (tasks.c) --------------- */

typedef struct pe__rng {
    uint64_t s;
} pe__rng;
uint64_t pe__rng_next(pe__rng *r);
pe__rng pe__rng_seed(uint64_t seed, uint64_t stream); /* independent streams from one seed */
uint32_t pe__rng_below(pe__rng *r, uint32_t n);       /* uniform in [0, n), n >= 1, unbiased */
double pe__rng_uniform(pe__rng *r);                   /* [0, 1), 53 bits */
double pe__rng_normal(pe__rng *r);                    /* Box-Muller, N(0, 1) */

/* ---- tasks (tasks.c) --------------------------------------------------------------------------- */

enum pe__task_id {
    PE__TASK_COPY = 0,
    PE__TASK_LM = 1,
    PE__TASK_COUNT
};

typedef struct pe__task {
    int32_t id;
    const char *name;  /* "copy" / "lm" */
    const char *vocab; /* token i is the character vocab[i] */
    int32_t vocab_size;
    int32_t train_len;       /* training context length (max_position_embeddings) */
    const char *description; /* provenance of the data, for config.json */
    /* LM only: a generated corpus of n_corpus tokens */
    uint8_t *corpus;
    size_t n_corpus;
} pe__task;

/* Makes the task; for the LM generates a corpus of n_corpus characters from seed (malloc; pe__task_free). */
int pe__task_make(pe__task *t, int32_t id, uint64_t seed, size_t n_corpus);
void pe__task_free(pe__task *t);
int32_t pe__task_id(const char *name);

/* Sequence `index` of a stream: inputs (len,) and targets (len,), targets[i] = the token after inputs[i] when
 * it is scored, else -1. Copy: generated from (seed, index); LM: the window at a pseudo-random offset of the
 * corpus (train) — for evaluation use pe__task_window. Returns the number of scored targets. */
int32_t pe__task_sample(const pe__task *t, uint64_t seed, uint64_t index, int32_t len, int32_t *inputs,
                        int32_t *targets);

/* LM: the window of the corpus starting at `start` (len + 1 tokens must fit). Every target is scored except
 * the first `skip` (sliding-window evaluation). */
int32_t pe__task_window(const pe__task *t, size_t start, int32_t len, int32_t skip, int32_t *inputs, int32_t *targets);

/* Writes the character form of a token sequence (for samples and debugging). */
void pe__task_decode(const pe__task *t, char *out, const int32_t *tokens, int32_t n);

#endif
