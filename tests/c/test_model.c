/* test_model.c — the tiny transformer (c/model): gradient checks for every parameter tensor and every position
 * encoding, safetensors round trip and rejection of malformed files, forward errors, RoPE scalings, and a
 * short training run that is deterministic and whose loss falls.
 *
 * build.sh links the model tests against the c/src and c/model objects (all but main.c). */
#include "../../c/model/model_internal.h"
#include "../../c/model/train.h"

#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static pe_model_config tiny_config(int32_t pos, int32_t heads) {
    pe_model_config c;
    memset(&c, 0, sizeof c);
    c.vocab_size = 13;
    c.hidden_size = 8 * heads;
    c.num_hidden_layers = 2;
    c.num_attention_heads = heads;
    c.intermediate_size = 24;
    c.max_position_embeddings = 7;
    c.position_encoding = pos;
    c.rope_theta = 100.0; /* a small base: every frequency turns noticeably over 7 positions */
    return c;
}

enum {
    TB = 2,
    TS = 7
};

static void tiny_batch(int32_t *tok, int32_t *tg, uint64_t seed) {
    pe__rng r = pe__rng_seed(seed, 7);
    for (int i = 0; i < TB * TS; i++) {
        tok[i] = (int32_t)pe__rng_below(&r, 13);
        tg[i] = pe__rng_below(&r, 4) == 0 ? -1 : (int32_t)pe__rng_below(&r, 13);
    }
}

/* Randomises every tensor a little (norm weights around 1) so no gradient is special at init. */
static void perturb_weights(pe__trainer *tr, uint64_t seed) {
    pe__rng r = pe__rng_seed(seed, 99);
    for (int k = 0; k < tr->nt; k++) {
        const pe__tensor_info *t = &tr->t[k];
        for (size_t i = 0; i < t->numel; i++) tr->w[t->offset + i] += (float)(0.15 * pe__rng_normal(&r));
    }
}

/* Finite differences in float32, made robust: per tensor, (1) the directional derivative along the gradient
 * itself (the largest signal, |g|), (2) along a random direction, (3) the three largest elements one by one.
 * Central differences with step h; the loss is summed in double from float logits. */
static void grad_check(int32_t pos, int32_t heads) {
    pe_model_config cfg = tiny_config(pos, heads);
    pe__trainer tr;
    CHECK(pe__trainer_init(&tr, &cfg, TB, TS, 42), "init %s", pe__position_name(pos));
    perturb_weights(&tr, 5 + (uint64_t)pos);
    int32_t tok[TB * TS], tg[TB * TS];
    tiny_batch(tok, tg, 11);
    pe__trainer_loss(&tr, tok, tg, 1, NULL, NULL);
    float *g = (float *)malloc(tr.nw * sizeof(float));
    memcpy(g, tr.g, tr.nw * sizeof(float));
    float *w0 = (float *)malloc(tr.nw * sizeof(float));
    memcpy(w0, tr.w, tr.nw * sizeof(float));
    pe__rng r = pe__rng_seed(77, (uint64_t)pos);
    double worst = 0;
    for (int k = 0; k < tr.nt; k++) {
        const pe__tensor_info *t = &tr.t[k];
        const float *gk = g + t->offset;
        double gn = 0;
        for (size_t i = 0; i < t->numel; i++) gn += (double)gk[i] * gk[i];
        gn = sqrt(gn);
        CHECK(gn > 1e-6, "%s %s: zero gradient (%g)", pe__position_name(pos), t->name, gn);
        if (!(gn > 1e-6)) continue;
        double *u = (double *)malloc(t->numel * sizeof(double));
        for (int dir = 0; dir < 2; dir++) {
            double un = 0, gu = 0;
            for (size_t i = 0; i < t->numel; i++) {
                u[i] = dir == 0 ? gk[i] : pe__rng_normal(&r);
                un += u[i] * u[i];
            }
            un = sqrt(un);
            for (size_t i = 0; i < t->numel; i++) {
                u[i] /= un;
                gu += gk[i] * u[i];
            }
            const double h = 2e-3;
            double lp, lm;
            for (size_t i = 0; i < t->numel; i++) tr.w[t->offset + i] = (float)(w0[t->offset + i] + h * u[i]);
            lp = pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
            for (size_t i = 0; i < t->numel; i++) tr.w[t->offset + i] = (float)(w0[t->offset + i] - h * u[i]);
            lm = pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
            memcpy(tr.w + t->offset, w0 + t->offset, t->numel * sizeof(float));
            const double fd = (lp - lm) / (2 * h);
            const double err = fabs(fd - gu) / (gn + 1e-12);
            if (err > worst) worst = err;
            CHECK(err < 1e-2, "%s %s: direction %d: finite difference %.6g, analytic %.6g (|g| %.3g, err %.2e)",
                  pe__position_name(pos), t->name, dir, fd, gu, gn, err);
        }
        free(u);
        /* the three largest elements */
        for (int rep = 0; rep < 3; rep++) {
            size_t best = 0;
            double bv = -1;
            for (size_t i = 0; i < t->numel; i++) {
                double a = fabs(gk[i]);
                int used = 0;
                (void)used;
                if (a > bv) {
                    bv = a;
                    best = i;
                }
            }
            if (rep > 0) { /* the rep-th largest: pick a pseudo-random element instead, above 20% of the max */
                size_t tries = 0;
                do best = pe__rng_below(&r, (uint32_t)t->numel);
                while (fabs(gk[best]) < 0.2 * bv && ++tries < 1000);
            }
            const double h = 2e-3;
            const float keep = tr.w[t->offset + best];
            tr.w[t->offset + best] = (float)(keep + h);
            const double hp = (double)tr.w[t->offset + best] - keep;
            const double lp = pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
            tr.w[t->offset + best] = (float)(keep - h);
            const double hm = keep - (double)tr.w[t->offset + best];
            const double lm = pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
            tr.w[t->offset + best] = keep;
            const double fd = (lp - lm) / (hp + hm);
            const double err = fabs(fd - gk[best]) / (fabs(gk[best]) + 0.05 * gn + 1e-9);
            CHECK(err < 3e-2, "%s %s[%zu]: finite difference %.6g, analytic %.6g (err %.2e)", pe__position_name(pos),
                  t->name, best, fd, (double)gk[best], err);
        }
    }
    printf("gradient check %-10s heads %d: %d tensors, worst directional error %.2e\n", pe__position_name(pos), heads,
           tr.nt, worst);
    free(g);
    free(w0);
    pe__trainer_free(&tr);
}

/* ---- safetensors ---------------------------------------------------------------------------------- */

static uint8_t *file_of(pe__trainer *tr, size_t *n, const char *const *meta) {
    pe__buf b = {0};
    pe__safetensors_write(&b, &tr->m.config, tr->t, tr->nt, tr->w, meta);
    *n = b.len;
    return b.data;
}

/* Rebuilds a file with header text `json` and `data_len` data bytes (zeros). */
static uint8_t *raw_file(const char *json, size_t data_len, size_t *n) {
    size_t h = strlen(json);
    uint8_t *p = (uint8_t *)calloc(8 + h + data_len + 1, 1);
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(p + 8, json, h);
    *n = 8 + h + data_len;
    return p;
}

static pe_status try_load(const uint8_t *file, size_t n, char *msg) {
    pe_model m;
    size_t nw = 0;
    pe_status s = pe_model_open(&m, &nw, file, n);
    if (s == PE_OK) {
        float *w = (float *)malloc((nw ? nw : 1) * sizeof(float));
        s = pe_model_load(&m, w, nw, file, n);
        free(w);
    }
    if (msg) strcpy(msg, m.message);
    return s;
}

/* Replaces the first occurrence of `from` in the header with `to` (same length keeps offsets valid). */
static uint8_t *edit_header(const uint8_t *file, size_t n, const char *from, const char *to, size_t *n_out) {
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | file[i];
    char *hdr = (char *)malloc(hlen + 1);
    memcpy(hdr, file + 8, hlen);
    hdr[hlen] = 0;
    char *at = strstr(hdr, from);
    if (!at) {
        free(hdr);
        return NULL;
    }
    size_t nh = hlen - strlen(from) + strlen(to);
    uint8_t *p = (uint8_t *)malloc(8 + nh + (n - 8 - hlen));
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)nh >> (8 * i));
    size_t pre = (size_t)(at - hdr);
    memcpy(p + 8, hdr, pre);
    memcpy(p + 8 + pre, to, strlen(to));
    memcpy(p + 8 + pre + strlen(to), at + strlen(from), hlen - pre - strlen(from));
    memcpy(p + 8 + nh, file + 8 + hlen, n - 8 - hlen);
    *n_out = 8 + nh + (n - 8 - hlen);
    free(hdr);
    return p;
}

static void expect_reject(const uint8_t *file, size_t n, const char *what, const char *needle) {
    char msg[PE_MODEL_MESSAGE_SIZE];
    pe_status s = try_load(file, n, msg);
    CHECK(s != PE_OK, "%s: accepted", what);
    CHECK(msg[0] != 0, "%s: no message", what);
    CHECK(!needle || strstr(msg, needle), "%s: message '%s' lacks '%s'", what, msg, needle);
}

static void test_safetensors(void) {
    pe_model_config cfg = tiny_config(PE_MODEL_POS_LEARNED, 2);
    pe__trainer tr;
    pe__trainer_init(&tr, &cfg, TB, TS, 3);
    size_t n;
    const char *meta[] = {"task", "test", NULL};
    uint8_t *file = file_of(&tr, &n, meta);

    /* round trip: the loaded model's forward equals the trainer's, row by row */
    pe_model m;
    size_t nw;
    CHECK_STATUS(pe_model_open(&m, &nw, file, n), PE_OK);
    CHECK(nw == tr.nw, "n_weights %zu vs %zu", nw, tr.nw);
    CHECK((8 + (file[0] | (size_t)file[1] << 8)) % 8 == 0, "data section not 8-byte aligned");
    float *w = (float *)malloc(nw * sizeof(float));
    CHECK_STATUS(pe_model_load(&m, w, nw, file, n), PE_OK);
    CHECK(memcmp(w, tr.w, nw * sizeof(float)) == 0, "weights differ after the round trip");
    CHECK(m.config.position_encoding == PE_MODEL_POS_LEARNED && m.config.vocab_size == 13 && m.config.hidden_size == 16,
          "config from __metadata__");
    CHECK(fabs(m.config.embedding_multiplier - 4.0) < 1e-12, "embedding_multiplier %g", m.config.embedding_multiplier);
    int32_t tok[TB * TS], tg[TB * TS];
    tiny_batch(tok, tg, 1);
    pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
    size_t ns;
    CHECK_STATUS(pe_model_scratch_size(&ns, &m, TS), PE_OK);
    float *scratch = (float *)malloc(ns * sizeof(float)), logits[TS * 13];
    float attn[2 * 2 * TS * TS];
    CHECK_STATUS(pe_model_forward(&m, logits, attn, tok + TS, TS, NULL, scratch, ns), PE_OK);
    double md = 0;
    for (int i = 0; i < TS * 13; i++) md = fmax(md, fabs(logits[i] - tr.logits[TS * 13 + i]));
    CHECK(md == 0, "forward of the loaded model differs from the trainer's by %g", md);
    /* attention rows are distributions over the visible keys */
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < TS; i++) {
                double s = 0;
                for (int j = 0; j < TS; j++) {
                    float p = attn[((l * 2 + h) * TS + i) * TS + j];
                    if (j > i) CHECK(p == 0, "attention above the diagonal");
                    s += p;
                }
                CHECK(fabs(s - 1) < 1e-5, "attention row sums to %g", s);
            }
    /* pe_model_forward_qk: the same logits and attention bit for bit, and each layer's q and k as the trainer's
     * forward made them for the same sequence (this model has no RoPE, so the trainer keeps them unturned) */
    {
        float logits2[TS * 13], attn2[2 * 2 * TS * TS], qo[2 * TS * 16], ko[2 * TS * 16];
        CHECK_STATUS(pe_model_forward_qk(&m, logits2, attn2, qo, ko, tok + TS, TS, NULL, scratch, ns), PE_OK);
        CHECK(memcmp(logits2, logits, sizeof logits) == 0, "forward_qk logits differ from forward's");
        CHECK(memcmp(attn2, attn, sizeof attn) == 0, "forward_qk attention differs from forward's");
        for (int l = 0; l < 2; l++) {
            CHECK(memcmp(qo + (size_t)l * TS * 16, tr.a.l[l].q + (size_t)TS * 16, TS * 16 * sizeof(float)) == 0,
                  "layer %d q differs from the trainer's", l);
            CHECK(memcmp(ko + (size_t)l * TS * 16, tr.a.l[l].k + (size_t)TS * 16, TS * 16 * sizeof(float)) == 0,
                  "layer %d k differs from the trainer's", l);
        }
        CHECK_STATUS(pe_model_forward_qk(&m, logits2, NULL, qo, NULL, tok + TS, TS, NULL, scratch, ns), PE_OK);
        CHECK(memcmp(logits2, logits, sizeof logits) == 0, "forward_qk (k_out NULL) logits");
    }
    /* forward errors */
    CHECK_STATUS(pe_model_forward(&m, logits, NULL, tok, TS, NULL, scratch, ns - 1), PE_ERR_SHAPE);
    CHECK_STATUS(pe_model_forward(&m, logits, NULL, tok, TS + 1, NULL, scratch, ns * 2), PE_ERR_OUT_OF_RANGE);
    CHECK(strstr(m.message, "max_position_embeddings") != NULL, "learned length message: %s", m.message);
    int32_t bad[TS];
    memcpy(bad, tok, sizeof bad);
    bad[3] = 13;
    CHECK_STATUS(pe_model_forward(&m, logits, NULL, bad, TS, NULL, scratch, ns), PE_ERR_OUT_OF_RANGE);
    CHECK(strstr(m.message, "index 3") != NULL, "token message: %s", m.message);
    pe_rope rope;
    CHECK_STATUS(pe_model_rope(&rope, &m, PE_MODEL_ROPE_LINEAR, 2.0), PE_ERR_FIELD_VALUE);

    /* malformed files: every one rejected with a message, nothing read out of bounds (ASan) */
    char what[64];
    for (size_t cut = 0; cut < n; cut += (cut < 64 ? 1 : 97)) {
        snprintf(what, sizeof what, "truncated to %zu bytes", cut);
        uint8_t *t = (uint8_t *)malloc(cut ? cut : 1);
        memcpy(t, file, cut);
        expect_reject(t, cut, what, "safetensors");
        free(t);
    }
    expect_reject(file, n - 1, "one byte short", "data_offsets");
    {
        uint8_t *t = (uint8_t *)malloc(n);
        memcpy(t, file, n);
        t[0] = 0xff;
        t[1] = 0xff;
        t[2] = 0x0f;
        expect_reject(t, n, "header length past the end", "past the end");
        memcpy(t, file, n);
        t[7] = 0x80;
        expect_reject(t, n, "huge header length", "past the end");
        memcpy(t, file, n);
        t[8] = '[';
        expect_reject(t, n, "header not an object", "malformed JSON");
        free(t);
    }
    struct {
        const char *from, *to, *needle, *what;
    } edits[] = {
        {"\"dtype\":\"F32\"", "\"dtype\":\"F16\"", "only F32", "wrong dtype"},
        {"\"dtype\":\"F32\"", "\"dtype\":\"BF16\"", "only F32", "wrong dtype BF16"},
        {"model.norm.weight", "model.nrm.weight", "unexpected tensor", "renamed tensor"},
        {"\"position_encoding\":\"learned\"", "\"position_encoding\":\"spiral\"", "unknown position_encoding",
         "bad encoding"},
        {"\"position_encoding\":\"learned\"", "\"positional_encoding\":\"learned\"", "position_encoding",
         "missing metadata"},
        {"\"hidden_size\":\"16\"", "\"hidden_size\":\"1x\"", "not a number", "non-numeric metadata"},
        {"\"hidden_size\":\"16\"", "\"hidden_size\":\"32\"", "shape", "metadata disagrees with shapes"},
        {"\"num_hidden_layers\":\"2\"", "\"num_hidden_layers\":\"1\"", "unexpected tensor",
         "fewer layers than tensors"},
        {"\"shape\":[13,16]", "\"shape\":[16,13]", "expected [13, 16]", "transposed shape"},
        {"\"data_offsets\":[0,", "\"data_offsets\":[4,", NULL, "shifted offsets"},
        {"{\"__metadata__\"", "[\"__metadata__\"", "malformed JSON", "array header"},
        {"\"dtype\"", "\"dtyp\\u0065\"", NULL, "escaped key (valid JSON, same meaning)"},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        size_t n2;
        uint8_t *f2 = edit_header(file, n, edits[i].from, edits[i].to, &n2);
        CHECK(f2 != NULL, "edit %s: pattern not found", edits[i].what);
        if (!f2) continue;
        if (i == sizeof edits / sizeof edits[0] - 1) {
            CHECK_STATUS(try_load(f2, n2, NULL), PE_OK); /* the escape decodes to the same key */
        } else {
            expect_reject(f2, n2, edits[i].what, edits[i].needle);
        }
        free(f2);
    }
    /* missing tensor: drop the final norm's entry and its 64 bytes at the end of the data */
    {
        char json[512];
        snprintf(
            json, sizeof json,
            "{\"__metadata__\":{\"position_encoding\":\"none\",\"vocab_size\":\"4\",\"hidden_size\":\"2\","
            "\"num_hidden_layers\":\"1\",\"num_attention_heads\":\"1\",\"intermediate_size\":\"2\","
            "\"max_position_embeddings\":\"4\",\"rope_theta\":\"10000\",\"rms_norm_eps\":\"1e-5\",\"embedding_multiplier\":\"1\"},"
            "\"model.embed_tokens.weight\":{\"dtype\":\"F32\",\"shape\":[4,2],\"data_offsets\":[0,32]}}");
        size_t n3;
        uint8_t *f3 = raw_file(json, 32, &n3);
        expect_reject(f3, n3, "missing tensors", "missing tensor 'model.layers.0.input_layernorm.weight'");
        free(f3);
        /* overlap and holes */
        snprintf(json, sizeof json,
                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                 "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}");
        f3 = raw_file(json, 12, &n3);
        expect_reject(f3, n3, "overlapping tensors", "overlap");
        free(f3);
        snprintf(json, sizeof json, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}");
        f3 = raw_file(json, 12, &n3);
        expect_reject(f3, n3, "hole after the data", "holes");
        free(f3);
        snprintf(json, sizeof json, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}, \"a\":{}}");
        f3 = raw_file(json, 8, &n3);
        expect_reject(f3, n3, "duplicate key", "twice");
        free(f3);
        snprintf(json, sizeof json, "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"x\":1}}");
        f3 = raw_file(json, 8, &n3);
        expect_reject(f3, n3, "unknown key in a tensor", "unknown key");
        free(f3);
        snprintf(json, sizeof json,
                 "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,99999999999999999999999]}}");
        f3 = raw_file(json, 8, &n3);
        expect_reject(f3, n3, "offset overflow", "overflow");
        free(f3);
    }
    /* a NaN in the weights */
    {
        uint8_t *t = (uint8_t *)malloc(n);
        memcpy(t, file, n);
        const float nan = NAN;
        memcpy(t + n - 8, &nan, 4);
        expect_reject(t, n, "NaN weight", "NaN");
        /* finite but huge: its logits would overflow (the fuzzer's finding); the bound itself is accepted */
        const float huge = 1.7702046e31f, over = (float)PE_MODEL_MAX_WEIGHT * 1.0001f, at = (float)PE_MODEL_MAX_WEIGHT;
        memcpy(t + n - 8, &huge, 4);
        expect_reject(t, n, "weight 1.77e31", "beyond +-10000 (PE_MODEL_MAX_WEIGHT), at element");
        memcpy(t + n - 8, &over, 4);
        expect_reject(t, n, "weight just past PE_MODEL_MAX_WEIGHT", "model.norm.weight");
        memcpy(t + n - 8, &at, 4);
        char msg[PE_MODEL_MESSAGE_SIZE];
        CHECK_STATUS(try_load(t, n, msg), PE_OK);
        CHECK(msg[0] == 0, "message after a successful load: %s", msg);
        free(t);
    }
    /* sizes in 64 bits: the scratch count is exact where 32 bits would wrap (5957222 tokens of copy-rope's
     * shape: 5957222 * 721 floats, past 2^32), and failures say why */
    {
        pe_model big;
        memset(&big, 0, sizeof big);
        big.config.hidden_size = 64;
        big.config.intermediate_size = 256;
        big.config.num_attention_heads = 4;
        size_t nf = 0;
        CHECK_STATUS(pe_model_scratch_size(&nf, &big, 5957222), PE_OK);
        CHECK((uint64_t)nf == 5957222ULL * 721ULL, "scratch floats %zu, expected %llu", nf, 5957222ULL * 721ULL);
        CHECK(big.message[0] == 0, "message after success: %s", big.message);
        CHECK_STATUS(pe_model_scratch_size(&nf, &big, 0), PE_ERR_SHAPE);
        CHECK(strstr(big.message, "seq_len must be >= 1, got 0") != NULL, "message: %s", big.message);
        CHECK_STATUS(pe_model_forward(&m, logits, NULL, tok, 0, NULL, scratch, ns), PE_ERR_SHAPE);
        CHECK(strstr(m.message, "forward: seq_len must be >= 1") != NULL, "message: %s", m.message);
        /* a failed call leaves the model as it was */
        float again[TS * 13];
        CHECK_STATUS(pe_model_forward(&m, again, NULL, tok + TS, TS, NULL, scratch, ns), PE_OK);
        CHECK(memcmp(again, logits, sizeof again) == 0, "logits after failed calls differ");
    }
    /* config messages name the macro's bound */
    {
        pe_model_config bad = tiny_config(PE_MODEL_POS_ROPE, 2), out;
        char msg[PE_MODEL_MESSAGE_SIZE];
        bad.vocab_size = PE_MODEL_MAX_VOCAB + 1;
        CHECK_STATUS(pe__model_resolve(&out, &bad, msg), PE_ERR_SHAPE);
        CHECK(strcmp(msg, "config: vocab_size must be in [2, 65536], got 65537") == 0, "message: %s", msg);
        bad = tiny_config(PE_MODEL_POS_ROPE, 2);
        bad.max_position_embeddings = PE_MODEL_MAX_POSITIONS + 1;
        CHECK_STATUS(pe__model_resolve(&out, &bad, msg), PE_ERR_SHAPE);
        CHECK(strcmp(msg, "config: max_position_embeddings must be in [1, 16777216], got 16777217") == 0, "message: %s",
              msg);
        bad = tiny_config(PE_MODEL_POS_ROPE, 2);
        bad.hidden_size = 18; /* head_dim 9 */
        CHECK_STATUS(pe__model_resolve(&out, &bad, msg), PE_ERR_SHAPE);
        CHECK(strstr(msg, "even multiple of num_attention_heads 2") != NULL, "message: %s", msg);
        bad = tiny_config(PE_MODEL_POS_ROPE, 2);
        bad.embedding_multiplier = 2 * PE_MODEL_MAX_WEIGHT;
        CHECK_STATUS(pe__model_resolve(&out, &bad, msg), PE_ERR_FIELD_VALUE);
        CHECK(strstr(msg, "embedding_multiplier in (0, 10000]") != NULL, "message: %s", msg);
        /* the largest learned table (2^24 x 1024 floats, 64 GiB): accepted where size_t is 64 bits */
        bad = tiny_config(PE_MODEL_POS_LEARNED, 1);
        bad.hidden_size = PE_MODEL_MAX_DIM;
        bad.max_position_embeddings = PE_MODEL_MAX_POSITIONS;
        CHECK_STATUS(pe__model_resolve(&out, &bad, msg), SIZE_MAX > 0xffffffffu ? PE_OK : PE_ERR_SHAPE);
    }
    /* random corruption of the header: never a crash; each file either loads or says why */
    pe__rng r = pe__rng_seed(9, 9);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = (hlen << 8) | file[i];
    int rejected = 0;
    for (int it = 0; it < 400; it++) {
        uint8_t *t = (uint8_t *)malloc(n);
        memcpy(t, file, n);
        for (int k = 0; k < 1 + (int)(it % 3); k++)
            t[8 + pe__rng_below(&r, (uint32_t)hlen)] = (uint8_t)pe__rng_below(&r, 256);
        char msg[PE_MODEL_MESSAGE_SIZE];
        pe_status s = try_load(t, n, msg);
        if (s != PE_OK) {
            rejected++;
            CHECK(msg[0] != 0, "corrupted header rejected without a message");
        }
        free(t);
    }
    CHECK(rejected > 300, "only %d of 400 corrupted headers rejected", rejected);
    printf("safetensors: round trip, %d malformed-file checks, %d/400 random corruptions rejected\n",
           (int)(sizeof edits / sizeof edits[0]) + 8, rejected);
    free(scratch);
    free(w);
    free(file);
    pe__trainer_free(&tr);
}

/* ---- RoPE scalings and forward across encodings ----------------------------------------------------- */

static void test_rope_scalings(void) {
    pe_model_config cfg = tiny_config(PE_MODEL_POS_ROPE, 2);
    pe__trainer tr;
    pe__trainer_init(&tr, &cfg, 1, 28, 3);
    pe_rope rope;
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, PE_MODEL_ROPE_TRAINED, 0), PE_OK);
    CHECK(rope.inv_freq[1] == tr.m.rope.inv_freq[1], "trained rope");
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, PE_MODEL_ROPE_LINEAR, 4), PE_OK);
    CHECK(fabs(rope.inv_freq[1] * 4 - tr.m.rope.inv_freq[1]) < 1e-15, "linear divides inv_freq by the factor");
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, PE_MODEL_ROPE_NTK, 4), PE_OK);
    /* d = 8: base' = 100 * 4^(8/6); the lowest frequency base'^(-6/8) = 100^(-6/8) / 4 */
    CHECK(fabs(rope.inv_freq[3] - pow(100.0, -0.75) / 4) < 1e-12, "NTK: lowest frequency interpolated by 4 (%g)",
          rope.inv_freq[3]);
    CHECK(rope.inv_freq[0] == 1.0, "NTK keeps the highest frequency");
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, PE_MODEL_ROPE_DYNAMIC, 2), PE_OK);
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, PE_MODEL_ROPE_YARN, 4), PE_OK);
    CHECK(rope.attention_scaling > 1.0, "YaRN attention factor %g", rope.attention_scaling);
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, 9, 4), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_model_rope(&rope, &tr.m, PE_MODEL_ROPE_LINEAR, 0), PE_ERR_FACTOR);
    /* forward at 4x the training length under each scaling: finite logits */
    size_t ns;
    pe_model_scratch_size(&ns, &tr.m, 28);
    float *scratch = (float *)malloc(ns * sizeof(float)), *logits = (float *)malloc(28 * 13 * sizeof(float));
    int32_t tok[28];
    for (int i = 0; i < 28; i++) tok[i] = (i * 5) % 13;
    for (int s = 0; s < PE_MODEL_ROPE_SCALING_COUNT; s++) {
        pe_model_rope(&rope, &tr.m, s, s == PE_MODEL_ROPE_DYNAMIC ? 2 : 4);
        CHECK_STATUS(pe_model_forward(&tr.m, logits, NULL, tok, 28, &rope, scratch, ns), PE_OK);
        int finite = 1;
        for (int i = 0; i < 28 * 13; i++) finite &= isfinite(logits[i]);
        CHECK(finite, "scaling %d: non-finite logits", s);
    }
    free(scratch);
    free(logits);
    pe__trainer_free(&tr);
}

/* ---- short training: deterministic, loss falls -------------------------------------------------------- */

static uint8_t *short_run(int32_t task_id, int32_t pos, size_t *n, double *first, double *last) {
    pe__task task;
    pe__task_make(&task, task_id, 1, task_id == PE__TASK_LM ? 200000 : 0);
    pe_model_config c;
    memset(&c, 0, sizeof c);
    c.vocab_size = task.vocab_size;
    c.hidden_size = 32;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 4;
    c.intermediate_size = 64;
    c.max_position_embeddings = 32;
    c.position_encoding = pos;
    pe__trainer tr;
    pe__trainer_init(&tr, &c, 8, 32, 1234);
    pe__train_opts o;
    memset(&o, 0, sizeof o);
    o.steps = 40;
    o.warmup = 5;
    o.lr = 3e-3;
    o.min_lr_frac = 0.1;
    o.adamw.beta1 = 0.9;
    o.adamw.beta2 = 0.95;
    o.adamw.eps = 1e-8;
    o.adamw.weight_decay = 0.1;
    o.adamw.clip = 1.0;
    o.data_seed = 1;
    /* loss before and after, on the same held-out batch */
    int32_t tok[8 * 32], tg[8 * 32];
    for (int b = 0; b < 8; b++) pe__task_sample(&task, 555, (uint64_t)b, 32, tok + b * 32, tg + b * 32);
    *first = pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
    pe__train_run(&tr, &task, &o);
    *last = pe__trainer_loss(&tr, tok, tg, 0, NULL, NULL);
    pe__buf b = {0};
    pe__safetensors_write(&b, &tr.m.config, tr.t, tr.nt, tr.w, NULL);
    *n = b.len;
    pe__trainer_free(&tr);
    pe__task_free(&task);
    return b.data;
}

static void test_short_training(void) {
    for (int32_t task_id = 0; task_id < PE__TASK_COUNT; task_id++) {
        const int32_t pos = task_id == PE__TASK_COPY ? PE_MODEL_POS_ROPE : PE_MODEL_POS_ALIBI;
        size_t n1, n2;
        double f1, l1, f2, l2;
        uint8_t *a = short_run(task_id, pos, &n1, &f1, &l1);
        uint8_t *b = short_run(task_id, pos, &n2, &f2, &l2);
        CHECK(n1 == n2 && memcmp(a, b, n1) == 0, "task %d: two runs gave different weights", task_id);
        CHECK(l1 < f1 - 0.3, "task %d: loss did not fall enough: %.4f -> %.4f", task_id, f1, l1);
        printf("short training (%s, %s): held-out loss %.4f -> %.4f in 40 steps, two runs byte-identical (%zu bytes)\n",
               task_id == PE__TASK_COPY ? "copy" : "lm", pe__position_name(pos), f1, l1, n1);
        free(a);
        free(b);
    }
}

/* ---- tasks ---------------------------------------------------------------------------------------- */

static void test_tasks(void) {
    pe__task t;
    CHECK(pe__task_make(&t, PE__TASK_COPY, 1, 0), "copy task");
    int32_t in[200], tg[200], in2[64], tg2[64];
    int32_t n = pe__task_sample(&t, 1, 3, 200, in, tg);
    pe__task_sample(&t, 1, 3, 64, in2, tg2);
    CHECK(memcmp(in, in2, sizeof in2) == 0, "copy: a shorter sequence is a prefix of the longer one");
    CHECK(n > 60, "copy: %d scored of 200", n);
    /* every scored target is predictable: it equals the token n+1 back (a letter) or closes with '.' */
    int ok = 1;
    for (int i = 0; i < 200; i++) {
        if (i + 1 < 200 && tg[i] >= 0) ok &= tg[i] == in[i + 1];
    }
    CHECK(ok, "copy: targets are the next tokens");
    CHECK(in[0] == 0, "copy: starts with '.'");
    pe__task_free(&t);
    CHECK(pe__task_make(&t, PE__TASK_LM, 1, 50000), "lm task");
    int counts[32] = {0};
    for (size_t i = 0; i < t.n_corpus; i++) counts[t.corpus[i]]++;
    CHECK(counts[0] > 5000 && counts[t.vocab_size - 1] > 100, "lm: spaces %d, newlines %d", counts[0],
          counts[t.vocab_size - 1]);
    pe__task t2;
    pe__task_make(&t2, PE__TASK_LM, 1, 50000);
    CHECK(memcmp(t.corpus, t2.corpus, 50000) == 0, "lm corpus deterministic");
    pe__task_free(&t2);
    pe__task_make(&t2, PE__TASK_LM, 2, 50000);
    CHECK(memcmp(t.corpus, t2.corpus, 50000) != 0, "lm corpus depends on the seed");
    pe__task_free(&t2);
    pe__task_free(&t);
}

int main(void) {
    test_tasks();
    for (int32_t pos = 0; pos < PE_MODEL_POS_COUNT; pos++) grad_check(pos, 2);
    grad_check(PE_MODEL_POS_ALIBI, 3); /* non-power-of-two ALiBi slopes */
    grad_check(PE_MODEL_POS_ROPE, 3);
    test_safetensors();
    test_rope_scalings();
    test_short_training();
    return pe_test_report("test_model");
}
