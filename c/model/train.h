/* train.h — private to c/model: the native trainer, evaluation and file helpers (not in the wasm builds). */
#ifndef PE_MODEL_TRAIN_H
#define PE_MODEL_TRAIN_H

#include "model_internal.h"

typedef struct pe__trainer {
    pe_model m; /* bound to w */
    pe__tensor_info t[PE__MAX_TENSORS];
    int nt;
    size_t nw;
    float *w, *g, *am, *av; /* weights, gradients, Adam moments */
    int32_t B, S;
    pe__acts a;
    float *acts_mem, *logits;
    float *dx, *dh, *dq, *dk, *dv, *datt, *du, *dp;
} pe__trainer;

typedef struct pe__adamw {
    double beta1, beta2, eps, weight_decay, clip;
} pe__adamw;

/* Allocates for batch x seq, initialises the weights from init_seed. 0 on failure (message on stderr). */
int pe__trainer_init(pe__trainer *tr, const pe_model_config *cfg, int32_t batch, int32_t seq, uint64_t init_seed);
void pe__trainer_free(pe__trainer *tr);

/* tokens, targets: (B, S); targets < 0 are not scored. Mean cross-entropy over scored targets; with backward,
 * tr->g holds its gradient (overwritten). n_correct: argmax hits (may be NULL). */
double pe__trainer_loss(pe__trainer *tr, const int32_t *tokens, const int32_t *targets, int backward,
                        int32_t *n_correct, int32_t *n_scored);
double pe__trainer_grad_norm(const pe__trainer *tr);
void pe__trainer_adamw(pe__trainer *tr, const pe__adamw *o, double lr, int64_t step);

/* The training loop: steps of batch sequences (task, data_seed, step * batch + b), AdamW with linear warmup
 * then cosine decay to min_lr_frac * lr. Prints progress every log_every steps (0: silent) to stderr. */
typedef struct pe__train_opts {
    int64_t steps, warmup;
    double lr, min_lr_frac;
    pe__adamw adamw;
    uint64_t data_seed;
    int32_t log_every;
    const char *label; /* printed at the start of each progress line */
    double *loss_log;  /* NULL, or steps doubles: each step's training loss (train-log.json; arithmetic unchanged) */
} pe__train_opts;

/* Returns the mean training loss over the last min(100, steps) steps. */
double pe__train_run(pe__trainer *tr, const pe__task *task, const pe__train_opts *o);

/* train-log.json: every step's training loss of a run, written beside its model.safetensors (the playground's
 * training curves). Deterministic: losses printed with 6 significant digits (%.6g), enough for a curve. */
int pe__write_train_log(const char *path, const char *label, const pe__train_opts *o, int32_t batch, int32_t seq);

/* growing byte buffer */
void pe__buf_puts(pe__buf *b, const char *s);
void pe__buf_printf(pe__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pe__buf_json_string(pe__buf *b, const char *s);
void pe__buf_double(pe__buf *b, double v);

/* extra_meta: NULL or a NULL-terminated list of key, value strings added to __metadata__. */
void pe__safetensors_write(pe__buf *out, const pe_model_config *c, const pe__tensor_info *t, int nt, const float *w,
                           const char *const *extra_meta);
int pe__write_file(const char *path, const void *data, size_t n);
uint8_t *pe__read_file(const char *path, size_t *n);

/* ---- evaluation (eval.c) ---- */

typedef struct pe__eval_result {
    double loss;     /* mean cross-entropy (nats) over scored targets */
    double accuracy; /* argmax == target */
    int64_t n_scored;
    int64_t n_sequences;
} pe__eval_result;

/* Evaluation streams: copy sequences come from (eval seed, index); the LM from its own eval corpus. */
#define PE__EVAL_SEED 0xE7A1ULL
#define PE__CHECK_SEQUENCES 16 /* the in-distribution check set: 16 sequences at the training length */

/* Evaluates m (with rope, NULL for the trained one) at sequence length len over about n_tokens tokens.
 * mode 0: non-overlapping windows; mode 1 (LM): sliding windows with stride len/4, scoring the last stride. */
int pe__evaluate(pe__eval_result *out, pe_model *m, const pe_rope *rope, const pe__task *task,
                 const pe__task *eval_corpus, int32_t len, int64_t n_tokens, int mode);

/* The check set: the first PE__CHECK_SEQUENCES sequences of the evaluation stream at the training length. */
int pe__check_sequence(const pe__task *task, const pe__task *eval_corpus, int32_t index, int32_t len, int32_t *inputs,
                       int32_t *targets);

#endif
