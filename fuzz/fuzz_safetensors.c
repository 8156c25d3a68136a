/* fuzz_safetensors.c — libFuzzer harness for the tiny model's file reader (c/model): pe_model_open and
 * pe_model_load on arbitrary bytes.
 *
 * The input is the whole file, copied into a block of exactly its size so AddressSanitizer sees any read past
 * the end. Properties checked beyond "no sanitizer report":
 *   - every call leaves a NUL-terminated message within PE_MODEL_MESSAGE_SIZE, empty exactly on success;
 *   - an accepted file's weights come from the file: n_weights * 4 bytes fit in its data section;
 *   - pe_model_load on the same bytes agrees with pe_model_open, and loads only weights within
 *     +-PE_MODEL_MAX_WEIGHT;
 *   - a loaded model runs a forward of 1 and 3 tokens (and refuses 0) with finite logits (strict mode).
 * Build: clang -fsanitize=fuzzer,address,undefined -Ic/include fuzz/fuzz_safetensors.c, every c/src .c, c/model/model.c
 * c/model/safetensors.c -lm (scripts/fuzz.sh does this for every fuzz/fuzz_*.c). Seeds: fuzz/corpus/safetensors/. */
#include "fuzz.h"

/* Always checked (memory, messages, agreement); finite outputs only in strict mode (fuzz.h). */
#define FUZZ_CHECK(cond, what)              \
    do {                                    \
        if (!(cond)) fuzz_fail("%s", what); \
    } while (0)

static void check_message(const pe_model *m, pe_status st) {
    const char *msg = pe_model_message(m);
    FUZZ_CHECK(memchr(msg, 0, PE_MODEL_MESSAGE_SIZE) != NULL, "message not NUL-terminated");
    FUZZ_CHECK((st == PE_OK) == (msg[0] == 0), "message empty exactly on success");
}

static void run_forward(pe_model *m, int32_t seq_len) {
    size_t ns = 0;
    pe_status st = pe_model_scratch_size(&ns, m, seq_len);
    if (seq_len < 1) {
        FUZZ_CHECK(st != PE_OK, "scratch size for seq_len < 1 accepted");
        return;
    }
    FUZZ_CHECK(st == PE_OK, "scratch size of a loaded model refused");
    const size_t n_logits = (size_t)seq_len * (size_t)m->config.vocab_size;
    float *scratch = malloc(ns * sizeof(float));
    float *logits = malloc(n_logits * sizeof(float));
    int32_t tokens[3] = {0, m->config.vocab_size - 1, 1 % m->config.vocab_size};
    FUZZ_CHECK(scratch && logits, "out of memory");
    st = pe_model_forward(m, logits, NULL, tokens, seq_len, NULL, scratch, ns);
    check_message(m, st);
    if (st == PE_OK)
        for (size_t i = 0; i < n_logits; i++)
            fuzz_require(isfinite(logits[i]), "logit %zu is %g", i, (double)logits[i]);
    free(scratch);
    free(logits);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *file = malloc(size ? size : 1);
    FUZZ_CHECK(file, "out of memory");
    if (size) memcpy(file, data, size);

    pe_model *m = malloc(sizeof *m);
    size_t n_weights = 0;
    pe_status st = pe_model_open(m, &n_weights, file, size);
    check_message(m, st);
    if (st == PE_OK) {
        FUZZ_CHECK(n_weights > 0 && n_weights <= size / sizeof(float), "n_weights larger than the file");
        float *w = malloc(n_weights * sizeof(float));
        FUZZ_CHECK(w, "out of memory");
        /* one float short is refused before anything is written */
        st = pe_model_load(m, w, n_weights - 1, file, size);
        FUZZ_CHECK(st != PE_OK, "load into a short weights buffer accepted");
        check_message(m, st);
        st = pe_model_load(m, w, n_weights, file, size);
        check_message(m, st);
        if (st == PE_OK) {
            for (size_t i = 0; i < n_weights; i++)
                FUZZ_CHECK(fabsf(w[i]) <= (float)PE_MODEL_MAX_WEIGHT, "a weight past PE_MODEL_MAX_WEIGHT loaded");
            int32_t max_len =
                m->config.position_encoding == PE_MODEL_POS_LEARNED ? m->config.max_position_embeddings : 3;
            run_forward(m, 0);
            run_forward(m, 1);
            if (max_len >= 3) run_forward(m, 3);
        }
        free(w);
    } else {
        /* load re-reads the header on its own: it must refuse what open refused */
        float w[4];
        pe_model *m2 = malloc(sizeof *m2);
        memset(m2, 0, sizeof *m2);
        st = pe_model_load(m2, w, 4, file, size);
        FUZZ_CHECK(st != PE_OK, "load accepted a file open refused");
        check_message(m2, st);
        free(m2);
    }
    free(m);
    free(file);
    return 0;
}
