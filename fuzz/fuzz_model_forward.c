/* fuzz_model_forward.c — libFuzzer harness for the tiny model's forward (c/model): a random small valid model
 * (every position encoding, 1..3 layers, 1..4 heads, head_dim 2..8, vocab 2..40), random bounded weights, a
 * random sequence length (including past the training length and, for learned positions, past the table) and
 * tokens, optionally an inference-time RoPE scaling, with and without attention weights.
 *
 * Strict mode (fuzz.h): for an accepted input every logit is finite and every attention row is a softmax row (finite,
 * non-negative, sums to 1, zero above the diagonal); a refused input leaves a message. Weights are in
 * [-1, 1) (norm weights around 1), so finite outputs are what the model promises.
 * Build: clang -fsanitize=fuzzer,address,undefined -Ic/include fuzz/fuzz_model_forward.c, every c/src .c,
 * c/model/model.c c/model/safetensors.c -lm (scripts/fuzz.sh). Seeds: fuzz/corpus/model_forward/. */
#include "fuzz.h"
#include "../c/model/model_internal.h"

/* Always checked: what the model promises of a valid input's status and messages. The softmax and finiteness
 * checks are strict mode's (fuzz.h). */
#define FUZZ_CHECK(cond, what)              \
    do {                                    \
        if (!(cond)) fuzz_fail("%s", what); \
    } while (0)

/* The input as a stream of choices (fuzz.h: zeros past its end). */
typedef fuzz_input reader;
static uint32_t take(reader *r) { return (uint32_t)fuzz_bytes(r, 1); }
static uint32_t take_below(reader *r, uint32_t n) { return (uint32_t)fuzz_range(r, 0, (int64_t)n - 1); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size};
    pe_model_config c;
    memset(&c, 0, sizeof c);
    c.position_encoding = (int32_t)take_below(&r, PE_MODEL_POS_COUNT);
    c.num_attention_heads = 1 + (int32_t)take_below(&r, 4);
    const int32_t hd = 2 * (1 + (int32_t)take_below(&r, 4));
    c.hidden_size = c.num_attention_heads * hd;
    c.num_hidden_layers = 1 + (int32_t)take_below(&r, 3);
    c.intermediate_size = 1 + (int32_t)take_below(&r, 32);
    c.vocab_size = 2 + (int32_t)take_below(&r, 39);
    c.max_position_embeddings = 1 + (int32_t)take_below(&r, 24);
    c.rope_theta = take(&r) & 1 ? 10000.0 : 2.0 + take_below(&r, 1000);
    const int32_t seq_len = 1 + (int32_t)take_below(&r, 48);
    const int want_attention = (int)(take(&r) & 1);
    const uint32_t scaling = take_below(&r, PE_MODEL_ROPE_SCALING_COUNT + 1); /* COUNT: none given */
    const double factor = 0.25 + take_below(&r, 64) * 0.25;

    pe_model_config resolved;
    char msg[PE_MODEL_MESSAGE_SIZE];
    FUZZ_CHECK(pe__model_resolve(&resolved, &c, msg) == PE_OK, "a valid config refused");
    pe__tensor_info t[PE__MAX_TENSORS];
    const int nt = pe__model_tensors(t, &resolved);
    const size_t nw = t[nt - 1].offset + t[nt - 1].numel;
    float *w = malloc(nw * sizeof(float));
    FUZZ_CHECK(w, "out of memory");
    for (int k = 0; k < nt; k++)
        for (size_t i = 0; i < t[k].numel; i++) {
            const float u = ((float)take(&r) - 128.0f) / 128.0f; /* [-1, 1) */
            w[t[k].offset + i] = t[k].kind == PE__T_NORM ? 1.0f + 0.5f * u : u;
        }

    pe_model *m = malloc(sizeof *m);
    memset(m, 0, sizeof *m);
    FUZZ_CHECK(pe__model_bind(m, &c, w) == PE_OK, "binding valid weights refused");

    pe_rope rope;
    const pe_rope *use = NULL;
    if (scaling < PE_MODEL_ROPE_SCALING_COUNT) {
        pe_status st = pe_model_rope(&rope, m, (int32_t)scaling, factor);
        /* other models: refused; RoPE models: built, or refused for a factor that would push a frequency past
         * PE_ROPE_MAX_INV_FREQ (linear below ~1/2, NTK's base below ~1) */
        if (c.position_encoding != PE_MODEL_POS_ROPE)
            FUZZ_CHECK(st == PE_ERR_FIELD_VALUE, "pe_model_rope: RoPE models only");
        else
            FUZZ_CHECK(st == PE_OK || st == PE_ERR_FACTOR || st == PE_ERR_BASE, "pe_model_rope: unexpected status");
        if (st == PE_OK) use = &rope;
    }

    int32_t *tokens = malloc((size_t)seq_len * sizeof(int32_t));
    for (int32_t i = 0; i < seq_len; i++) tokens[i] = (int32_t)take_below(&r, (uint32_t)c.vocab_size);
    size_t ns = 0;
    FUZZ_CHECK(pe_model_scratch_size(&ns, m, seq_len) == PE_OK, "scratch size refused");
    float *scratch = malloc(ns * sizeof(float));
    const size_t n_logits = (size_t)seq_len * (size_t)c.vocab_size;
    const size_t rows = (size_t)c.num_hidden_layers * (size_t)c.num_attention_heads * (size_t)seq_len;
    float *logits = malloc(n_logits * sizeof(float));
    float *attn = want_attention ? malloc(rows * (size_t)seq_len * sizeof(float)) : NULL;
    FUZZ_CHECK(tokens && scratch && logits && (attn || !want_attention), "out of memory");

    const pe_status st = pe_model_forward(m, logits, attn, tokens, seq_len, use, scratch, ns);
    const int too_long = c.position_encoding == PE_MODEL_POS_LEARNED && seq_len > c.max_position_embeddings;
    FUZZ_CHECK((st == PE_OK) == !too_long, "forward refused a valid input or accepted one past the learned table");
    FUZZ_CHECK((st == PE_OK) == (pe_model_message(m)[0] == 0), "message empty exactly on success");
    if (st == PE_OK) {
        for (size_t i = 0; i < n_logits; i++)
            fuzz_require(isfinite(logits[i]), "logit %zu is %g", i, (double)logits[i]);
        for (size_t row = 0; attn && row < rows; row++) {
            const size_t q = row % (size_t)seq_len;
            double sum = 0;
            for (size_t j = 0; j < (size_t)seq_len; j++) {
                const float p = attn[row * (size_t)seq_len + j];
                fuzz_require(isfinite(p) && p >= 0.0f, "attention weight %g", (double)p);
                fuzz_require(j <= q || p == 0.0f, "attention above the diagonal");
                sum += p;
            }
            fuzz_require(fabs(sum - 1.0) < 1e-4, "attention row %zu sums to %g", row, sum);
        }
    }
    free(attn);
    free(logits);
    free(scratch);
    free(tokens);
    free(m);
    free(w);
    return 0;
}
