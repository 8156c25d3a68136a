/* test_learned.c — learned absolute positions: OPT's golden vectors (positions from the attention mask,
 * row offset 2), add vs lookup, range checks before any write (ASan catches any out-of-bounds read). */
#include "posenc.h"
#include "test_util.h"
#include "golden.h"

#include <stdlib.h>
#include <string.h>

/* OPTLearnedPositionalEmbedding.forward: position_ids = (cumsum(mask, 1) * mask - 1)[:, past:] */
/* pe_learned_add with the shapes as arguments (the tests' tables read better so) */
static pe_status learned_add(float *x, const float *table, const int32_t *positions, int32_t batch, int32_t seq,
                             int32_t d_model, int32_t n_rows, int32_t row_offset, int32_t per_batch_positions) {
    const pe_learned_add_config lc = {.batch = batch,
                                      .seq = seq,
                                      .d_model = d_model,
                                      .n_rows = n_rows,
                                      .row_offset = row_offset,
                                      .per_batch_positions = per_batch_positions};
    return pe_learned_add(x, table, positions, &lc);
}

static void opt_positions(int32_t *pos, const double *mask, int batch, int seq, int past) {
    for (int b = 0; b < batch; b++) {
        int64_t c = 0;
        for (int j = 0; j < seq; j++) {
            int m = (int)mask[b * seq + j];
            c += m;
            if (j >= past) pos[b * (seq - past) + (j - past)] = (int32_t)(c * m - 1);
        }
    }
}

static void test_golden(void) {
    golden_doc doc;
    if (golden_load(&doc, "learned_opt.json") != 0) {
        CHECK(0, "learned_opt.json not loaded");
        return;
    }
    golden_case c = {0};
    char id[128];
    int n_cases = 0;
    while (golden_next_case(&doc, &c)) {
        golden_string(&c, "id", id, sizeof id);
        size_t n_ts, n_tab, n_mask, n_rows_e, n_emb, n_shape;
        double *ts = golden_array(&c, "table_shape", &n_ts);
        double *tab_d = golden_array(&c, "table", &n_tab);
        double *mask = golden_array(&c, "attention_mask", &n_mask);
        double *rows_e = golden_array(&c, "rows", &n_rows_e);
        double *emb = golden_array(&c, "embeddings_f32", &n_emb);
        double *shape = golden_array(&c, "shape", &n_shape);
        int offset = (int)golden_number(&c, "offset", -1);
        int past = (int)golden_number(&c, "past_key_values_length", 0);
        int fields = ts && n_ts == 2 && tab_d && mask && rows_e && emb && shape && n_shape == 3 && offset >= 0;
        CHECK(fields, "%s: fields", id);
        if (fields) {
            int n_rows = (int)ts[0], d = (int)ts[1];
            int batch = (int)shape[0], seq_out = (int)shape[1];
            int seq = (int)(n_mask / (size_t)batch);
            CHECK(n_tab == (size_t)n_rows * d && seq - past == seq_out && (int)shape[2] == d &&
                      n_emb == (size_t)batch * seq_out * d && n_rows_e == (size_t)batch * seq_out,
                  "%s: sizes", id);
            float *table = malloc(sizeof(float) * n_tab);
            for (size_t t = 0; t < n_tab; t++) table[t] = (float)tab_d[t];
            int32_t *pos = malloc(sizeof(int32_t) * (size_t)batch * seq_out);
            opt_positions(pos, mask, batch, seq, past);
            int rows_ok = 1;
            for (int t = 0; t < batch * seq_out; t++) rows_ok &= pos[t] + offset == (int)rows_e[t];
            CHECK(rows_ok, "%s: rows = positions + offset", id);

            size_t n_out = (size_t)batch * seq_out * d;
            float *out = malloc(sizeof(float) * n_out), *x = calloc(n_out, sizeof(float));
            CHECK_STATUS(pe_learned_lookup(out, table, pos, batch * seq_out, d, n_rows, offset), PE_OK);
            CHECK_STATUS(learned_add(x, table, pos, batch, seq_out, d, n_rows, offset, 1), PE_OK);
            int exact = 1, add_ok = 1;
            for (size_t t = 0; t < n_out; t++) {
                exact &= out[t] == (float)emb[t];
                add_ok &= x[t] == out[t];
            }
            CHECK(exact, "%s: lookup == embeddings_f32", id);
            CHECK(add_ok, "%s: add to zeros == lookup", id);
            free(table);
            free(pos);
            free(out);
            free(x);
        }
        free(ts);
        free(tab_d);
        free(mask);
        free(rows_e);
        free(emb);
        free(shape);
        n_cases++;
    }
    golden_free(&doc);
    CHECK(n_cases >= 1, "%d learned cases", n_cases);
    printf("learned golden: %d OPT cases, exact\n", n_cases);
}

static void test_add_and_range(void) {
    pe_rng rng = {77};
    enum {
        ROWS = 18,
        D = 13,
        B = 2,
        S = 5,
        OFF = 2
    };
    /* the table sits exactly at the end of its allocation so ASan flags any read past it */
    float *table = malloc(sizeof(float) * ROWS * D);
    for (int t = 0; t < ROWS * D; t++) table[t] = pe_rng_float(&rng);
    float x0[B * S * D], x[B * S * D];
    for (int t = 0; t < B * S * D; t++) x0[t] = pe_rng_float(&rng);

    /* positions NULL: s, shared by the batch */
    memcpy(x, x0, sizeof x);
    CHECK_STATUS(learned_add(x, table, NULL, B, S, D, ROWS, OFF, 0), PE_OK);
    int ok = 1;
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < D; j++)
                ok &= x[(b * S + s) * D + j] == x0[(b * S + s) * D + j] + table[(s + OFF) * D + j];
    CHECK(ok, "add, default positions");

    /* shared positions, extremes of the valid range: -OFF (row 0) and ROWS - OFF - 1 (last row) */
    int32_t pos[S] = {-OFF, ROWS - OFF - 1, 0, 3, -1};
    memcpy(x, x0, sizeof x);
    CHECK_STATUS(learned_add(x, table, pos, B, S, D, ROWS, OFF, 0), PE_OK);
    ok = 1;
    for (int b = 0; b < B; b++)
        for (int s = 0; s < S; s++)
            for (int j = 0; j < D; j++)
                ok &= x[(b * S + s) * D + j] == x0[(b * S + s) * D + j] + table[(pos[s] + OFF) * D + j];
    CHECK(ok, "add, shared positions at the ends of the table");

    /* past the end: position ROWS - OFF (= max_len) reads row ROWS; refused before any write */
    int32_t bad[B * S] = {0, 1, 2, 3, 4, 5, 6, 7, 8, ROWS - OFF};
    memcpy(x, x0, sizeof x);
    CHECK_STATUS(learned_add(x, table, bad, B, S, D, ROWS, OFF, 1), PE_ERR_OUT_OF_RANGE);
    CHECK(memcmp(x, x0, sizeof x) == 0, "x untouched after out-of-range");
    bad[9] = -OFF - 1;
    CHECK_STATUS(learned_add(x, table, bad, B, S, D, ROWS, OFF, 1), PE_ERR_OUT_OF_RANGE);
    bad[9] = INT32_MAX;
    CHECK_STATUS(learned_add(x, table, bad, B, S, D, ROWS, OFF, 1), PE_ERR_OUT_OF_RANGE);
    bad[9] = INT32_MIN;
    CHECK_STATUS(learned_add(x, table, bad, B, S, D, ROWS, OFF, 1), PE_ERR_OUT_OF_RANGE);
    CHECK(memcmp(x, x0, sizeof x) == 0, "x untouched");
    float out[S * D], out0[S * D];
    memset(out0, 0x7f, sizeof out0);
    memcpy(out, out0, sizeof out);
    CHECK_STATUS(pe_learned_lookup(out, table, bad, S * 2, D, ROWS, OFF), PE_ERR_OUT_OF_RANGE);
    CHECK(memcmp(out, out0, sizeof out) == 0, "lookup output untouched after out-of-range");
    /* default positions 0 .. seq-1 must fit too: seq 17 with offset 2 reads row 18 */
    float big[1 * 17 * D];
    memset(big, 0, sizeof big);
    CHECK_STATUS(learned_add(big, table, NULL, 1, 17, D, ROWS, OFF, 0), PE_ERR_OUT_OF_RANGE);
    CHECK_STATUS(learned_add(big, table, NULL, 1, 16, D, ROWS, OFF, 0), PE_OK);
    CHECK_STATUS(learned_add(big, table, NULL, 1, 1, D, ROWS, -1, 0), PE_ERR_OUT_OF_RANGE);
    CHECK_STATUS(learned_add(big, table, NULL, 1, 1, D, ROWS, INT32_MAX, 0), PE_ERR_OUT_OF_RANGE);
    free(table);
}

static void test_bad_input(void) {
    float t[8], x[8];
    int32_t pos[2] = {0, 1};
    CHECK_STATUS(learned_add(NULL, t, pos, 1, 2, 4, 2, 0, 0), PE_ERR_NULL);
    CHECK_STATUS(learned_add(x, NULL, pos, 1, 2, 4, 2, 0, 0), PE_ERR_NULL);
    CHECK_STATUS(learned_add(x, t, pos, -1, 2, 4, 2, 0, 0), PE_ERR_SHAPE); /* 0: test_zero_sizes */
    CHECK_STATUS(learned_add(x, t, pos, 1, -2, 4, 2, 0, 0), PE_ERR_SHAPE);
    CHECK_STATUS(learned_add(x, t, pos, 1, 2, 0, 2, 0, 0), PE_ERR_SHAPE);
    CHECK_STATUS(learned_add(x, t, pos, 1, 2, 4, 0, 0, 0), PE_ERR_SHAPE);
    CHECK_STATUS(pe_learned_lookup(NULL, t, pos, 2, 4, 2, 0), PE_ERR_NULL);
    CHECK_STATUS(pe_learned_lookup(x, t, NULL, 2, 4, 2, 0), PE_ERR_NULL);
    CHECK_STATUS(pe_learned_lookup(x, t, pos, -1, 4, 2, 0), PE_ERR_SHAPE);
    CHECK_STATUS(pe_learned_lookup(x, t, pos, 2, 4, 2, 0), PE_OK);
}

/* posenc.h "Sizes": n_positions / batch / seq 0 are no-ops that write nothing (NULL arrays allowed, no
 * position is read); d_model and n_rows are still checked. */
static void test_zero_sizes(void) {
    float t[8] = {1, 2, 3, 4, 5, 6, 7, 8}, x[8] = {7, 7, 7, 7, 7, 7, 7, 7};
    int32_t far[2] = {100, -100};
    CHECK_STATUS(pe_learned_lookup(x, t, far, 0, 4, 2, 0), PE_OK);
    CHECK_STATUS(pe_learned_lookup(NULL, NULL, NULL, 0, 4, 2, 0), PE_OK);
    CHECK_STATUS(learned_add(x, t, far, 0, 2, 4, 2, 0, 1), PE_OK);
    CHECK_STATUS(learned_add(x, t, far, 2, 0, 4, 2, 0, 0), PE_OK);
    const pe_learned_add_config empty = {.batch = 0, .seq = 2, .d_model = 4, .n_rows = 2};
    CHECK_STATUS(pe_learned_add(NULL, NULL, NULL, &empty), PE_OK);
    int untouched = 1;
    for (int i = 0; i < 8; i++) untouched &= x[i] == 7;
    CHECK(untouched, "learned wrote with a zero count");
    CHECK_STATUS(pe_learned_lookup(x, t, far, 0, 0, 2, 0), PE_ERR_SHAPE);
    CHECK_STATUS(learned_add(x, t, far, 0, 2, 4, 0, 0, 0), PE_ERR_SHAPE);
    CHECK_STATUS(pe_learned_add(x, t, NULL, NULL), PE_ERR_NULL);
}

int main(void) {
    test_zero_sizes();
    test_golden();
    test_add_and_range();
    test_bad_input();
    return pe_test_report("test_learned");
}
