/* test_model_shipped.c — every shipped model (web/playground/public/models/<task>-<encoding>/) loads through the
 * C loader and reaches, on the in-distribution check set, the loss and accuracy its config.json records; its
 * logits match logits.json (written by the -O3 trainer); the shipped check sets equal what tasks.c generates.
 * Run from the repository root (scripts/run-c-tests.sh does).
 *
 * Tolerances: the kernels (pe_attention above all) may change their summation order after the models were
 * trained — config.json's posenc.training.sources_sha256 names the sources that made them, and `npm run train`
 * with the same sources reproduces them byte for byte. So against the recorded numbers: loss within 1e-4
 * (relative), accuracy within one target, logits within 1e-4 (observed: 0 with the training sources, < 5e-5
 * after pe_attention's reordering).
 *
 *   test_model_shipped --logits NAME    prints this build's native logits for the logits.json input, as JSON
 *                                       (tests/js/model.test.js compares the wasm forward with them). */
#include "../../c/model/model_internal.h"
#include "../../c/model/train.h"

#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define MODELS "web/playground/public/models"

static char *read_text(const char *path) {
    size_t n;
    uint8_t *p = pe__read_file(path, &n);
    if (!p) return NULL;
    char *s = (char *)realloc(p, n + 1);
    s[n] = 0;
    return s;
}

/* The number after "key": inside the object that follows "section" (enough for the trainer's own JSON). */
static int json_number(const char *text, const char *section, const char *key, double *out) {
    const char *s = strstr(text, section);
    if (!s) return 0;
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *k = strstr(s, pat);
    const char *end = strchr(s, '}');
    if (!k || (end && k > end)) return 0;
    *out = strtod(k + strlen(pat), NULL);
    return 1;
}

static void check_set_matches(const char *task_name) {
    pe__task task, ev;
    const int32_t id = pe__task_id(task_name);
    pe__task_make(&task, id, 1, 0);
    pe__task_make(&ev, id, PE__EVAL_SEED, id == PE__TASK_LM ? 16u * 1024 * 64 + 2 : 0);
    char path[256];
    snprintf(path, sizeof path, MODELS "/%s-check.json", task_name);
    char *text = read_text(path);
    CHECK(text != NULL, "%s missing (run npm run train)", path);
    if (!text) return;
    const int32_t T = task.train_len;
    int32_t in[256], tg[256], in2[257], tg2[257];
    char want[300];
    const char *at = text;
    int ok = 1;
    for (int s = 0; s < PE__CHECK_SEQUENCES; s++) {
        pe__check_sequence(&task, &ev, s, T + 1, in2, tg2);
        pe__check_sequence(&task, &ev, s, T, in, tg);
        /* as the trainer writes it: the T inputs, then the last target (or, unscored, the next token) */
        for (int32_t i = 0; i < T; i++) want[i] = task.vocab[in[i]];
        want[T] = task.vocab[tg[T - 1] >= 0 ? tg[T - 1] : in2[T]];
        want[T + 1] = 0;
        /* JSON-escape the newline the LM vocabulary has */
        char esc[600];
        size_t k = 0;
        for (int32_t i = 0; i <= T; i++) {
            if (want[i] == '\n') {
                esc[k++] = '\\';
                esc[k++] = 'n';
            } else
                esc[k++] = want[i];
        }
        esc[k] = 0;
        const char *f = strstr(at, esc);
        ok &= f != NULL;
        if (f) at = f + k;
    }
    CHECK(ok, "%s: the shipped check sequences differ from what tasks.c generates", path);
    free(text);
    pe__task_free(&ev);
    pe__task_free(&task);
}

static void check_model(const char *name) {
    char path[256];
    snprintf(path, sizeof path, MODELS "/%s/model.safetensors", name);
    size_t n;
    uint8_t *file = pe__read_file(path, &n);
    CHECK(file != NULL, "%s missing (run npm run train)", path);
    if (!file) return;
    pe_model m;
    size_t nw;
    pe_status st = pe_model_open(&m, &nw, file, n);
    CHECK(st == PE_OK, "%s: %s", path, m.message);
    float *w = (float *)malloc(nw * sizeof(float));
    if (st == PE_OK) st = pe_model_load(&m, w, nw, file, n);
    CHECK(st == PE_OK, "%s: %s", path, m.message);
    snprintf(path, sizeof path, MODELS "/%s/config.json", name);
    char *cfg = read_text(path);
    CHECK(cfg != NULL, "%s missing", path);
    if (st != PE_OK || !cfg) {
        free(w);
        free(file);
        free(cfg);
        return;
    }
    const char *task_name = strncmp(name, "lm-", 3) == 0 ? "lm" : "copy";
    pe__task task, ev;
    pe__task_make(&task, pe__task_id(task_name), 1, 0);
    pe__task_make(&ev, task.id, PE__EVAL_SEED, task.id == PE__TASK_LM ? 16u * 1024 * 64 + 2 : 0);
    CHECK(m.config.max_position_embeddings == task.train_len, "%s: training length", name);
    double rec_loss = -1, rec_acc = -1, rec_targets = -1;
    CHECK(json_number(cfg, "\"in_distribution\"", "loss", &rec_loss) &&
              json_number(cfg, "\"in_distribution\"", "accuracy", &rec_acc) &&
              json_number(cfg, "\"in_distribution\"", "targets", &rec_targets),
          "%s: config.json lacks posenc.evaluation.in_distribution", name);
    pe__eval_result r;
    CHECK(pe__evaluate(&r, &m, NULL, &task, &ev, task.train_len, (int64_t)PE__CHECK_SEQUENCES * task.train_len, 0),
          "%s: evaluate", name);
    CHECK((double)r.n_scored == rec_targets, "%s: %lld targets, config says %g", name, (long long)r.n_scored,
          rec_targets);
    CHECK(fabs(r.loss - rec_loss) <= 1e-4 * fmax(1.0, rec_loss), "%s: loss %.9g, config.json records %.9g", name,
          r.loss, rec_loss);
    CHECK(fabs(r.accuracy - rec_acc) <= 1.0 / (double)r.n_scored + 1e-12, "%s: accuracy %.9g, config.json records %.9g",
          name, r.accuracy, rec_acc);
    /* logits.json: the trainer's (-O3) logits of the first check sequence's prefix */
    snprintf(path, sizeof path, MODELS "/%s/logits.json", name);
    char *lj = read_text(path);
    CHECK(lj != NULL, "%s missing", path);
    if (lj) {
        const char *p = strstr(lj, "\"logits\": [");
        const int32_t P = task.train_len < 32 ? task.train_len : 32, V = m.config.vocab_size;
        int32_t *in = (int32_t *)malloc((size_t)task.train_len * sizeof(int32_t)),
                *tg = (int32_t *)malloc((size_t)task.train_len * sizeof(int32_t));
        pe__check_sequence(&task, &ev, 0, task.train_len, in, tg);
        size_t ns;
        pe_model_scratch_size(&ns, &m, P);
        float *scratch = (float *)malloc(ns * sizeof(float)), *logits = (float *)malloc((size_t)P * V * sizeof(float));
        CHECK_STATUS(pe_model_forward(&m, logits, NULL, in, P, NULL, scratch, ns), PE_OK);
        double md = 0;
        int count = 0;
        if (p) {
            p += strlen("\"logits\": [");
            for (int i = 0; i < P * V; i++) {
                char *endp;
                double v = strtod(p, &endp);
                if (endp == p) break;
                md = fmax(md, fabs(v - logits[i]));
                count++;
                p = endp;
                while (*p == ',' || *p == ' ' || *p == '\n') p++;
            }
        }
        CHECK(count == P * V, "%s: %d logits, expected %d", path, count, P * V);
        CHECK(md <= 1e-4, "%s: logits differ from the trainer's by %g", name, md);
        printf("%-16s loss %.4f accuracy %6.2f%% (%lld targets) as recorded; logits within %.1e of the trainer's\n",
               name, r.loss, 100 * r.accuracy, (long long)r.n_scored, md);
        free(in);
        free(tg);
        free(scratch);
        free(logits);
        free(lj);
    }
    pe__task_free(&task);
    pe__task_free(&ev);
    free(cfg);
    free(w);
    free(file);
}

/* The native logits of the logits.json input (first 32 tokens of check sequence 0), as JSON on stdout. */
static int dump_logits(const char *name) {
    char path[256];
    snprintf(path, sizeof path, MODELS "/%s/model.safetensors", name);
    size_t n, nw;
    uint8_t *file = pe__read_file(path, &n);
    pe_model m;
    if (!file || pe_model_open(&m, &nw, file, n) != PE_OK) {
        fprintf(stderr, "%s: %s\n", path, file ? m.message : "cannot read");
        free(file);
        return 1;
    }
    float *w = (float *)malloc(nw * sizeof(float));
    if (pe_model_load(&m, w, nw, file, n) != PE_OK) {
        fprintf(stderr, "%s: %s\n", path, m.message);
        free(w);
        free(file);
        return 1;
    }
    pe__task task, ev;
    const int32_t id = strncmp(name, "lm-", 3) == 0 ? PE__TASK_LM : PE__TASK_COPY;
    pe__task_make(&task, id, 1, 0);
    pe__task_make(&ev, id, PE__EVAL_SEED, id == PE__TASK_LM ? 16u * 1024 * 64 + 2 : 0);
    const int32_t T = task.train_len, P = T < 32 ? T : 32, V = m.config.vocab_size;
    int32_t *in = (int32_t *)malloc((size_t)T * sizeof(int32_t)), *tg = (int32_t *)malloc((size_t)T * sizeof(int32_t));
    pe__check_sequence(&task, &ev, 0, T, in, tg);
    size_t ns;
    pe_model_scratch_size(&ns, &m, P);
    float *scratch = (float *)malloc(ns * sizeof(float)), *logits = (float *)malloc((size_t)P * V * sizeof(float));
    const int ok = pe_model_forward(&m, logits, NULL, in, P, NULL, scratch, ns) == PE_OK;
    if (ok) {
        printf("{\"shape\": [%d, %d], \"logits\": [", P, V);
        for (int32_t i = 0; i < P * V; i++) printf("%s%.9g", i ? "," : "", (double)logits[i]);
        printf("]}\n");
    }
    free(in);
    free(tg);
    free(scratch);
    free(logits);
    free(w);
    free(file);
    pe__task_free(&task);
    pe__task_free(&ev);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--logits") == 0) return dump_logits(argv[2]);
    static const char *const tasks[] = {"copy", "lm"};
    static const char *const pes[] = {"none", "sinusoidal", "learned", "rope", "alibi"};
    for (int t = 0; t < 2; t++) {
        check_set_matches(tasks[t]);
        for (int p = 0; p < 5; p++) {
            char name[32];
            snprintf(name, sizeof name, "%s-%s", tasks[t], pes[p]);
            check_model(name);
        }
    }
    return pe_test_report("test_model_shipped");
}
