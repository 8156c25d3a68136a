/* main.c — the posenc-model command line (native): train, eval, data, sample.
 *
 *   posenc-model train --task copy|lm --pe none|sinusoidal|learned|rope|alibi --out DIR [options]
 *       trains one model and writes DIR/model.safetensors, DIR/config.json (Hugging Face style),
 *       DIR/logits.json (native logits of the first check sequence, for the native-vs-wasm test) and
 *       DIR/train-log.json (the training loss of every step).
 *   posenc-model eval DIR [--tokens N] [--factors 1,2,4,8]
 *       JSON lines: loss / accuracy at each length (x the training length), with RoPE scalings for RoPE
 *       models and sliding-window evaluation for the LM.
 *   posenc-model data --task copy|lm --out FILE      the in-distribution check set, as JSON
 *   posenc-model sample --task copy|lm [--chars N]   a sample of the generated data
 * Build: scripts/train.mjs (gcc -O3 -ffp-contract=off, no -ffast-math, no -march: same weights on any x86-64).
 */
#include "posenc.h"
#include "model_internal.h"
#include "train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef PE_BUILD_FLAGS
#define PE_BUILD_FLAGS "?"
#endif
#ifndef PE_SOURCES_SHA256 /* scripts/model-build.mjs: sha256 over the C sources and headers the tool is built from */
#define PE_SOURCES_SHA256 "unknown"
#endif

#define PE__DATA_SEED 1    /* the training stream, the same for every encoding of a task */
#define PE__INIT_SEED 1234 /* weight init, the same for every encoding */
#define PE__LM_TRAIN_CORPUS (8u << 20)
#define PE__EVAL_TOKENS 16384 /* evaluation: targets per length */

typedef struct pe__hparams {
    int32_t layers, dim, heads, ff, batch;
    int64_t steps, warmup;
    double lr;
} pe__hparams;

/* Same data and budget for every encoding of a task. */
static pe__hparams pe__defaults(int32_t task) {
    pe__hparams h = {2, 64, 4, 256, 32, 2000, 100, 2e-3}; /* copy: 32 x 64 tokens a step, 4.1M tokens */
    if (task == PE__TASK_LM) h.batch = 16;                /* lm: 16 x 128 tokens a step, 4.1M tokens */
    return h;
}

static void pe__usage(void) {
    fprintf(stderr,
            "usage:\n"
            "  posenc-model train --task copy|lm --pe none|sinusoidal|learned|rope|alibi --out DIR\n"
            "        [--steps N] [--batch B] [--lr X] [--warmup N] [--layers L] [--dim D] [--heads H] [--ff F]\n"
            "        [--init-seed S] [--log-every N]\n"
            "  posenc-model eval DIR [--tokens N] [--factors 1,2,4,8]\n"
            "  posenc-model data --task copy|lm --out FILE\n"
            "  posenc-model sample --task copy|lm [--chars N]\n");
}

static const char *pe__arg(int argc, char **argv, const char *name) {
    for (int i = 0; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0) return argv[i + 1];
    return NULL;
}

static int pe__make_task(pe__task *t, const char *name, int for_eval) {
    int32_t id = name ? pe__task_id(name) : -1;
    if (id < 0) {
        fprintf(stderr, "unknown --task '%s' (copy, lm)\n", name ? name : "");
        return 0;
    }
    size_t n = 0;
    if (id == PE__TASK_LM) n = for_eval ? 16u * 1024 * 64 + 2 : PE__LM_TRAIN_CORPUS;
    if (!pe__task_make(t, id, for_eval ? PE__EVAL_SEED : PE__DATA_SEED, n)) {
        fprintf(stderr, "could not make task %s\n", name);
        return 0;
    }
    return 1;
}

/* ---- data ------------------------------------------------------------------------------------------- */

static int pe__write_check(const pe__task *task, const pe__task *ev, const char *path) {
    const int32_t T = task->train_len;
    int32_t *in = (int32_t *)malloc((size_t)T * sizeof(int32_t)), *tg = (int32_t *)malloc((size_t)T * sizeof(int32_t));
    char *text = (char *)malloc((size_t)T + 2), *mask = (char *)malloc((size_t)T + 1);
    pe__buf b = {0};
    pe__buf_puts(&b, "{\n  \"task\": ");
    pe__buf_json_string(&b, task->name);
    pe__buf_puts(&b, ",\n  \"vocab\": ");
    pe__buf_json_string(&b, task->vocab);
    pe__buf_printf(&b, ",\n  \"seq_len\": %d,\n  \"description\": ", T);
    pe__buf_json_string(&b, "the in-distribution check set: the first sequences of the evaluation stream at the "
                            "training length. text[i + 1] is the target of position i when scored[i] is '1'.");
    pe__buf_puts(&b, ",\n  \"sequences\": [\n");
    for (int32_t s = 0; s < PE__CHECK_SEQUENCES; s++) {
        if (pe__check_sequence(task, ev, s, T, in, tg) < 0) return 0;
        for (int32_t i = 0; i < T; i++) {
            text[i] = task->vocab[in[i]];
            mask[i] = tg[i] >= 0 ? '1' : '0';
        }
        /* the token after the last input: the last target if scored, else the true next token */
        int32_t last = tg[T - 1];
        if (last < 0) {
            int32_t *in2 = (int32_t *)malloc(((size_t)T + 1) * sizeof(int32_t)),
                    *tg2 = (int32_t *)malloc(((size_t)T + 1) * sizeof(int32_t));
            pe__check_sequence(task, ev, s, T + 1, in2, tg2);
            last = in2[T];
            free(in2);
            free(tg2);
        }
        text[T] = task->vocab[last];
        text[T + 1] = 0;
        mask[T] = 0;
        pe__buf_puts(&b, "    { \"text\": ");
        pe__buf_json_string(&b, text);
        pe__buf_puts(&b, ", \"scored\": ");
        pe__buf_json_string(&b, mask);
        pe__buf_puts(&b, s + 1 < PE__CHECK_SEQUENCES ? " },\n" : " }\n");
    }
    pe__buf_puts(&b, "  ]\n}\n");
    int ok = pe__write_file(path, b.data, b.len);
    free(b.data);
    free(in);
    free(tg);
    free(text);
    free(mask);
    return ok;
}

/* ---- train ------------------------------------------------------------------------------------------ */

static void pe__json_eval(pe__buf *b, const char *key, const pe__eval_result *r, int32_t len, int last) {
    pe__buf_printf(b, "      \"%s\": { \"seq_len\": %d, \"sequences\": %lld, \"targets\": %lld, \"loss\": ", key, len,
                   (long long)r->n_sequences, (long long)r->n_scored);
    pe__buf_double(b, r->loss);
    pe__buf_puts(b, ", \"accuracy\": ");
    pe__buf_double(b, r->accuracy);
    pe__buf_puts(b, last ? " }\n" : " },\n");
}

static int pe__cmd_train(int argc, char **argv) {
    const char *task_name = pe__arg(argc, argv, "--task"), *pe_name = pe__arg(argc, argv, "--pe");
    const char *out = pe__arg(argc, argv, "--out");
    if (!task_name || !pe_name || !out) {
        pe__usage();
        return 2;
    }
    const int32_t pos = pe__position_from_name(pe_name);
    if (pos < 0) {
        fprintf(stderr, "unknown --pe '%s'\n", pe_name);
        return 2;
    }
    pe__task task, ev;
    if (!pe__make_task(&task, task_name, 0) || !pe__make_task(&ev, task_name, 1)) return 1;
    pe__hparams h = pe__defaults(task.id);
    const char *v;
    if ((v = pe__arg(argc, argv, "--steps"))) h.steps = atoll(v);
    if ((v = pe__arg(argc, argv, "--batch"))) h.batch = atoi(v);
    if ((v = pe__arg(argc, argv, "--lr"))) h.lr = atof(v);
    if ((v = pe__arg(argc, argv, "--warmup"))) h.warmup = atoll(v);
    if ((v = pe__arg(argc, argv, "--layers"))) h.layers = atoi(v);
    if ((v = pe__arg(argc, argv, "--dim"))) h.dim = atoi(v);
    if ((v = pe__arg(argc, argv, "--heads"))) h.heads = atoi(v);
    if ((v = pe__arg(argc, argv, "--ff"))) h.ff = atoi(v);
    uint64_t init_seed = PE__INIT_SEED;
    if ((v = pe__arg(argc, argv, "--init-seed"))) init_seed = strtoull(v, NULL, 10);
    int32_t log_every = 100;
    if ((v = pe__arg(argc, argv, "--log-every"))) log_every = atoi(v);
    if (h.steps < 1 || h.batch < 1 || h.warmup < 0 || h.warmup >= h.steps || !(h.lr > 0)) {
        fprintf(stderr, "bad --steps / --batch / --warmup / --lr\n");
        return 2;
    }
    const int32_t T = task.train_len;
    pe_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.vocab_size = task.vocab_size;
    cfg.hidden_size = h.dim;
    cfg.num_hidden_layers = h.layers;
    cfg.num_attention_heads = h.heads;
    cfg.intermediate_size = h.ff;
    cfg.max_position_embeddings = T;
    cfg.position_encoding = pos;
    cfg.rope_theta = 10000.0;

    pe__trainer tr;
    if (!pe__trainer_init(&tr, &cfg, h.batch, T, init_seed)) return 1;
    char label[64];
    snprintf(label, sizeof label, "%s-%s", task.name, pe_name);
    fprintf(
        stderr,
        "%s: %zu parameters, %d layers, d_model %d, %d heads, d_ff %d, seq %d, batch %d, %lld steps (%lld tokens)\n",
        label, tr.nw, h.layers, h.dim, h.heads, h.ff, T, h.batch, (long long)h.steps, (long long)h.steps * h.batch * T);
    pe__train_opts o;
    memset(&o, 0, sizeof o);
    o.steps = h.steps;
    o.warmup = h.warmup;
    o.lr = h.lr;
    o.min_lr_frac = 0.1;
    o.adamw.beta1 = 0.9;
    o.adamw.beta2 = 0.95;
    o.adamw.eps = 1e-8;
    o.adamw.weight_decay = 0.1;
    o.adamw.clip = 1.0;
    o.data_seed = PE__DATA_SEED;
    o.log_every = log_every;
    o.label = label;
    o.loss_log = (double *)malloc((size_t)h.steps * sizeof(double));
    if (!o.loss_log) return 1;
    const double final_loss = pe__train_run(&tr, &task, &o);

    /* files: safetensors first, then evaluate through the loader (what the playground will read) */
    pe__buf st = {0};
    const char *meta[] = {"task", task.name, "format", "pt", NULL};
    pe__safetensors_write(&st, &tr.m.config, tr.t, tr.nt, tr.w, meta);
    char path[1024];
    snprintf(path, sizeof path, "%s/model.safetensors", out);
    if (!pe__write_file(path, st.data, st.len)) return 1;
    snprintf(path, sizeof path, "%s/train-log.json", out);
    if (!pe__write_train_log(path, label, &o, h.batch, T)) return 1;
    free(o.loss_log);

    pe_model m;
    size_t nw;
    float *w = NULL;
    if (pe_model_open(&m, &nw, st.data, st.len) != PE_OK || !(w = (float *)malloc(nw * sizeof(float))) ||
        pe_model_load(&m, w, nw, st.data, st.len) != PE_OK) {
        fprintf(stderr, "reloading %s failed: %s\n", path, m.message);
        return 1;
    }
    pe__eval_result check, full;
    if (!pe__evaluate(&check, &m, NULL, &task, &ev, T, (int64_t)PE__CHECK_SEQUENCES * T, 0) ||
        !pe__evaluate(&full, &m, NULL, &task, &ev, T, PE__EVAL_TOKENS, 0)) {
        fprintf(stderr, "evaluation failed\n");
        return 1;
    }
    fprintf(stderr, "%s: train loss %.4f; at the training length: loss %.4f accuracy %.4f (check set: %.4f / %.4f)\n",
            label, final_loss, full.loss, full.accuracy, check.loss, check.accuracy);

    const pe_model_config *c = &m.config;
    pe__buf b = {0};
    pe__buf_puts(
        &b, "{\n  \"architectures\": [\"PosencTinyTransformer\"],\n  \"model_type\": \"posenc_tiny_transformer\",\n");
    pe__buf_printf(
        &b,
        "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n  \"num_hidden_layers\": %d,\n"
        "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n"
        "  \"hidden_act\": \"gelu_pytorch_tanh\",\n  \"max_position_embeddings\": %d,\n  \"position_encoding\": \"%s\",\n",
        c->vocab_size, c->hidden_size, c->intermediate_size, c->num_hidden_layers, c->num_attention_heads,
        c->num_attention_heads, c->hidden_size / c->num_attention_heads, c->max_position_embeddings, pe_name);
    pe__buf_puts(&b, "  \"rope_theta\": ");
    pe__buf_double(&b, c->rope_theta);
    pe__buf_puts(&b, ",\n  \"rope_scaling\": null,\n  \"rms_norm_eps\": ");
    pe__buf_double(&b, c->rms_norm_eps);
    pe__buf_puts(&b, ",\n  \"embedding_multiplier\": ");
    pe__buf_double(&b, c->embedding_multiplier);
    pe__buf_puts(&b, ",\n  \"tie_word_embeddings\": true,\n  \"attention_bias\": false,\n  \"mlp_bias\": false,\n"
                     "  \"torch_dtype\": \"float32\",\n  \"posenc\": {\n    \"task\": ");
    pe__buf_json_string(&b, task.name);
    pe__buf_puts(&b, ",\n    \"vocab\": ");
    pe__buf_json_string(&b, task.vocab);
    pe__buf_puts(&b, ",\n    \"weights\": \"model.safetensors\",\n    \"check_data\": ");
    char check_name[64];
    snprintf(check_name, sizeof check_name, "../%s-check.json", task.name);
    pe__buf_json_string(&b, check_name);
    pe__buf_puts(&b, ",\n    \"training_data\": { \"description\": ");
    pe__buf_json_string(&b, task.description);
    pe__buf_printf(
        &b,
        ", \"seed\": %d, \"generator\": \"c/model/tasks.c\", \"license\": \"MIT (generated by posenc's own code)\" },\n",
        PE__DATA_SEED);
    pe__buf_printf(&b,
                   "    \"training\": { \"steps\": %lld, \"batch_size\": %d, \"seq_len\": %d, \"tokens\": %lld, "
                   "\"optimizer\": \"AdamW\", \"lr\": ",
                   (long long)h.steps, h.batch, T, (long long)h.steps * h.batch * T);
    pe__buf_double(&b, h.lr);
    pe__buf_printf(
        &b,
        ", \"warmup_steps\": %lld, \"schedule\": \"linear warmup, cosine to 0.1 lr\", \"betas\": [0.9, 0.95], "
        "\"eps\": 1e-8, \"weight_decay\": 0.1, \"weight_decay_on\": \"linear weights\", \"grad_clip\": 1.0, "
        "\"init_seed\": %llu, \"data_seed\": %d, \"toolchain\": \"gcc %s %s\", \"sources_sha256\": \"%s\", "
        "\"final_train_loss\": ",
        (long long)h.warmup, (unsigned long long)init_seed, PE__DATA_SEED, __VERSION__, PE_BUILD_FLAGS,
        PE_SOURCES_SHA256);
    pe__buf_double(&b, final_loss);
    pe__buf_puts(&b, " },\n    \"evaluation\": {\n");
    pe__json_eval(&b, "in_distribution", &check, T, 0);
    pe__json_eval(&b, "at_training_length", &full, T, 1);
    pe__buf_puts(&b, "    }\n  }\n}\n");
    snprintf(path, sizeof path, "%s/config.json", out);
    if (!pe__write_file(path, b.data, b.len)) return 1;

    /* native logits of the first check sequence's first 32 positions (causal: a prefix forward gives them) */
    const int32_t n_pos = T < 32 ? T : 32;
    int32_t *in = (int32_t *)malloc((size_t)T * sizeof(int32_t)), *tg = (int32_t *)malloc((size_t)T * sizeof(int32_t));
    pe__check_sequence(&task, &ev, 0, T, in, tg);
    size_t ns;
    pe_model_scratch_size(&ns, &m, n_pos);
    float *scratch = (float *)malloc(ns * sizeof(float)),
          *logits = (float *)malloc((size_t)n_pos * c->vocab_size * sizeof(float));
    if (pe_model_forward(&m, logits, NULL, in, n_pos, NULL, scratch, ns) != PE_OK) return 1;
    pe__buf lb = {0};
    char *text = (char *)malloc((size_t)n_pos + 1);
    pe__task_decode(&task, text, in, n_pos);
    pe__buf_puts(
        &lb,
        "{\n  \"description\": \"logits of the native forward (gcc) for text, (positions, vocab_size), row-major\",\n  \"text\": ");
    pe__buf_json_string(&lb, text);
    pe__buf_printf(&lb, ",\n  \"shape\": [%d, %d],\n  \"logits\": [", n_pos, c->vocab_size);
    for (size_t i = 0; i < (size_t)n_pos * c->vocab_size; i++) {
        if (i)
            pe__buf_puts(&lb, i % (size_t)c->vocab_size ? ", " : ",\n    ");
        else
            pe__buf_puts(&lb, "\n    ");
        pe__buf_printf(&lb, "%.9g", (double)logits[i]);
    }
    pe__buf_puts(&lb, "\n  ]\n}\n");
    snprintf(path, sizeof path, "%s/logits.json", out);
    if (!pe__write_file(path, lb.data, lb.len)) return 1;

    free(text);
    free(lb.data);
    free(scratch);
    free(logits);
    free(in);
    free(tg);
    free(b.data);
    free(st.data);
    free(w);
    pe__trainer_free(&tr);
    pe__task_free(&task);
    pe__task_free(&ev);
    return 0;
}

/* ---- eval ------------------------------------------------------------------------------------------- */

static void pe__print_result(const char *model, const char *variant, const char *mode, int32_t factor, int32_t len,
                             const pe__eval_result *r, int ok, const char *why) {
    printf("{\"model\":\"%s\",\"variant\":\"%s\",\"mode\":\"%s\",\"factor\":%d,\"seq_len\":%d", model, variant, mode,
           factor, len);
    if (ok)
        printf(",\"loss\":%.6f,\"accuracy\":%.6f,\"targets\":%lld,\"sequences\":%lld}\n", r->loss, r->accuracy,
               (long long)r->n_scored, (long long)r->n_sequences);
    else
        printf(",\"loss\":null,\"accuracy\":null,\"why\":\"%s\"}\n", why);
    fflush(stdout);
}

static int pe__cmd_eval(int argc, char **argv) {
    if (argc < 1) {
        pe__usage();
        return 2;
    }
    const char *dir = argv[0];
    int64_t n_tokens = PE__EVAL_TOKENS;
    const char *v;
    if ((v = pe__arg(argc, argv, "--tokens"))) n_tokens = atoll(v);
    int32_t factors[8] = {1, 2, 4, 8}, nf = 4;
    if ((v = pe__arg(argc, argv, "--factors"))) {
        nf = 0;
        for (const char *p = v; *p && nf < 8;) {
            factors[nf++] = atoi(p);
            while (*p && *p != ',') p++;
            if (*p) p++;
        }
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    size_t n;
    uint8_t *file = pe__read_file(path, &n);
    if (!file) {
        perror(path);
        return 1;
    }
    pe_model m;
    size_t nw;
    if (pe_model_open(&m, &nw, file, n) != PE_OK) {
        fprintf(stderr, "%s: %s\n", path, m.message);
        return 1;
    }
    float *w = (float *)malloc(nw * sizeof(float));
    if (pe_model_load(&m, w, nw, file, n) != PE_OK) {
        fprintf(stderr, "%s: %s\n", path, m.message);
        return 1;
    }
    /* the task is named in __metadata__; the model name is the directory's */
    const char *task_name = strstr(dir, "lm-") ? "lm" : "copy";
    {
        /* prefer the metadata's "task" when present */
        const char *needle = "\"task\":\"";
        uint64_t hlen = 0;
        for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | file[i];
        char *hdr = (char *)malloc(hlen + 1);
        memcpy(hdr, file + 8, hlen);
        hdr[hlen] = 0;
        char *p = strstr(hdr, needle);
        if (p && strncmp(p + strlen(needle), "lm\"", 3) == 0)
            task_name = "lm";
        else if (p && strncmp(p + strlen(needle), "copy\"", 5) == 0)
            task_name = "copy";
        free(hdr);
    }
    const char *model = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    if (!*model) model = dir;
    pe__task task, ev;
    if (!pe__make_task(&task, task_name, 0) || !pe__make_task(&ev, task_name, 1)) return 1;
    pe__task_free(&task); /* the training corpus is not needed */
    const int32_t T = m.config.max_position_embeddings;
    const int n_modes = task.id == PE__TASK_LM ? 2 : 1;
    static const char *const mode_names[2] = {"nonoverlapping", "sliding"};
    static const char *const scaling_names[PE_MODEL_ROPE_SCALING_COUNT] = {"trained", "linear", "ntk", "dynamic",
                                                                           "yarn"};
    const int n_var = m.config.position_encoding == PE_MODEL_POS_ROPE ? PE_MODEL_ROPE_SCALING_COUNT : 1;
    for (int mode = 0; mode < n_modes; mode++) {
        for (int vi = 0; vi < n_var; vi++) {
            for (int fi = 0; fi < nf; fi++) {
                const int32_t f = factors[fi], len = f * T;
                pe__eval_result r;
                if (vi > 0 && f == 1) continue; /* every scaling is the identity (or not defined) at 1x */
                if (m.config.position_encoding == PE_MODEL_POS_LEARNED && len > T) {
                    pe__print_result(model, scaling_names[vi], mode_names[mode], f, len, &r, 0,
                                     "learned positions end at max_position_embeddings");
                    continue;
                }
                pe_rope rope;
                const pe_rope *rp = NULL;
                if (vi > 0) {
                    /* factor: the extension ratio L / T; dynamic NTK keeps HF's usual factor 2 and grows the base
                     * with each sequence's own length */
                    const double factor = vi == PE_MODEL_ROPE_DYNAMIC ? 2.0 : (double)f;
                    if (pe_model_rope(&rope, &m, vi, factor) != PE_OK) {
                        fprintf(stderr, "pe_model_rope failed\n");
                        return 1;
                    }
                    rp = &rope;
                }
                const int ok = pe__evaluate(&r, &m, rp, &task, &ev, len, n_tokens, mode);
                pe__print_result(model, scaling_names[vi], mode_names[mode], f, len, &r, ok, "evaluation failed");
            }
        }
    }
    free(w);
    free(file);
    pe__task_free(&ev);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    if (argc < 2) {
        pe__usage();
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "train") == 0) return pe__cmd_train(argc - 2, argv + 2);
    if (strcmp(cmd, "eval") == 0) return pe__cmd_eval(argc - 2, argv + 2);
    if (strcmp(cmd, "data") == 0 || strcmp(cmd, "sample") == 0) {
        pe__task task, ev;
        const char *name = pe__arg(argc, argv, "--task");
        if (!pe__make_task(&task, name, 0) || !pe__make_task(&ev, name, 1)) return 1;
        if (strcmp(cmd, "data") == 0) {
            const char *out = pe__arg(argc, argv, "--out");
            if (!out) {
                pe__usage();
                return 2;
            }
            return pe__write_check(&task, &ev, out) ? 0 : 1;
        }
        const char *v = pe__arg(argc, argv, "--chars");
        int32_t len = v ? atoi(v) : 400;
        int32_t *in = (int32_t *)malloc((size_t)len * sizeof(int32_t)),
                *tg = (int32_t *)malloc((size_t)len * sizeof(int32_t));
        char *text = (char *)malloc((size_t)len + 1);
        pe__task_sample(&task, PE__DATA_SEED, 0, len, in, tg);
        pe__task_decode(&task, text, in, len);
        printf("%s\n", text);
        free(in);
        free(tg);
        free(text);
        pe__task_free(&task);
        pe__task_free(&ev);
        return 0;
    }
    pe__usage();
    return 2;
}
