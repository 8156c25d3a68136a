/* eval.c — loss and accuracy of a model at a sequence length, through the public pe_model_forward (the same
 * code path the wasm builds run). Native only.
 *
 * copy: sequences (eval seed, index) of the given length; loss and accuracy over the scored targets.
 * lm:   the evaluation corpus (a different grammar seed from training), n_tokens + 1 characters.
 *       mode 0, non-overlapping: consecutive windows of len characters, every target scored (the first ones in a
 *       window see little context).
 *       mode 1, sliding window: windows of len characters every stride = len / 4; each scores only the targets
 *       not scored before (the last stride), so every target but the first window's sees >= 3/4 len context.
 *       Both score every target of [0, n_tokens) exactly once (Press et al. 2022, section 4 and appendix B).
 */
#include "posenc.h"
#include "model_internal.h"
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pe__check_sequence(const pe__task *task, const pe__task *eval_corpus, int32_t index, int32_t len, int32_t *inputs,
                       int32_t *targets) {
    if (task->id == PE__TASK_COPY) return pe__task_sample(task, PE__EVAL_SEED, (uint64_t)index, len, inputs, targets);
    const size_t start = (size_t)index * (size_t)len;
    if (!eval_corpus || start + (size_t)len + 1 > eval_corpus->n_corpus) return -1;
    return pe__task_window(eval_corpus, start, len, 0, inputs, targets);
}

typedef struct pe__acc {
    double loss;
    int64_t n, correct;
} pe__acc;

static void pe__score(pe__acc *acc, const float *logits, const int32_t *targets, int32_t len, int32_t V) {
    for (int32_t i = 0; i < len; i++) {
        const int32_t y = targets[i];
        if (y < 0) continue;
        const float *l = logits + (size_t)i * V;
        float mx = l[0];
        int32_t am = 0;
        for (int32_t v = 1; v < V; v++)
            if (l[v] > mx) {
                mx = l[v];
                am = v;
            }
        double se = 0;
        for (int32_t v = 0; v < V; v++) se += exp((double)l[v] - mx);
        acc->loss += mx + log(se) - l[y];
        acc->correct += am == y;
        acc->n++;
    }
}

int pe__evaluate(pe__eval_result *out, pe_model *m, const pe_rope *rope, const pe__task *task,
                 const pe__task *eval_corpus, int32_t len, int64_t n_tokens, int mode) {
    memset(out, 0, sizeof *out);
    const int32_t V = m->config.vocab_size;
    size_t ns;
    if (pe_model_scratch_size(&ns, m, len) != PE_OK) return 0;
    float *scratch = (float *)malloc(ns * sizeof(float));
    float *logits = (float *)malloc((size_t)len * V * sizeof(float));
    int32_t *in = (int32_t *)malloc((size_t)len * sizeof(int32_t));
    int32_t *tg = (int32_t *)malloc((size_t)len * sizeof(int32_t));
    int ok = scratch && logits && in && tg;
    pe__acc acc = {0, 0, 0};
    int64_t n_seq = 0;
#define PE__RUN()                                                                      \
    do {                                                                               \
        pe_status st_ = pe_model_forward(m, logits, NULL, in, len, rope, scratch, ns); \
        if (st_ != PE_OK) {                                                            \
            fprintf(stderr, "eval: %s\n", pe_model_message(m));                        \
            ok = 0;                                                                    \
            break;                                                                     \
        }                                                                              \
        pe__score(&acc, logits, tg, len, V);                                           \
        n_seq++;                                                                       \
    } while (0)
    if (ok && task->id == PE__TASK_COPY) {
        const int64_t n = n_tokens / len > 0 ? n_tokens / len : 1;
        for (int64_t i = 0; ok && i < n; i++) {
            pe__task_sample(task, PE__EVAL_SEED, (uint64_t)i, len, in, tg);
            PE__RUN();
        }
    } else if (ok) {
        const size_t total = (size_t)n_tokens; /* targets 1 .. total of the corpus */
        if (!eval_corpus || total + 1 > eval_corpus->n_corpus || (size_t)len > total) {
            ok = 0;
        } else if (mode == 0) {
            for (size_t s = 0; ok && s + (size_t)len <= total; s += (size_t)len) {
                pe__task_window(eval_corpus, s, len, 0, in, tg);
                PE__RUN();
            }
        } else {
            const size_t stride = (size_t)(len / 4 > 0 ? len / 4 : 1);
            size_t prev_end = 0, end = (size_t)len;
            while (ok && prev_end < total) {
                if (end > total) end = total;
                const size_t start = end - (size_t)len;
                pe__task_window(eval_corpus, start, len, (int32_t)((size_t)len - (end - prev_end)), in, tg);
                PE__RUN();
                prev_end = end;
                end += stride;
            }
        }
    }
#undef PE__RUN
    free(scratch);
    free(logits);
    free(in);
    free(tg);
    if (!ok || acc.n == 0) return 0;
    out->loss = acc.loss / (double)acc.n;
    out->accuracy = (double)acc.correct / (double)acc.n;
    out->n_scored = acc.n;
    out->n_sequences = n_seq;
    return 1;
}
