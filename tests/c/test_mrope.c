/* test_mrope.c — M-RoPE and 2D vision RoPE tables against Hugging Face's values (tests/golden/mrope), the
 * section rules, and the property that equal streams give plain RoPE's table bit for bit. */
#include "posenc.h"
#include "golden.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static double max_d(double a, double b) { return a > b ? a : b; }

static int32_t *to_i32(const double *v, size_t n) {
    int32_t *out = (int32_t *)malloc((n ? n : 1) * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) out[i] = (int32_t)v[i];
    return out;
}

/* a rope for one golden case's config (default or yarn, as mrope.json has) */
static pe_status case_rope(pe_rope *rope, const golden_case *c, int32_t pairing) {
    pe_rope_config cfg = {0};
    char type[32];
    golden_string(c, "rope_type", type, sizeof type);
    cfg.head_dim = (int32_t)golden_number(c, "head_dim", 0);
    cfg.base = golden_number(c, "rope_theta", 0);
    if (cfg.base == 0) cfg.base = golden_number(c, "theta", 0);
    cfg.pairing = pairing;
    if (strcmp(type, "yarn") == 0) {
        cfg.type = PE_ROPE_YARN;
        cfg.factor = golden_number(c, "factor", 0);
        cfg.original_max_position_embeddings = (int32_t)golden_number(c, "original_max_position_embeddings", 0);
        cfg.max_position_embeddings = (int32_t)golden_number(c, "max_position_embeddings", 0);
    }
    return pe_rope_init(rope, &cfg);
}

/* |table - expected| over rows of n pairs; expected is (rows, width) with pair j at j (and j + n when
 * width == 2n, the half-split tables HF repeats) */
static double table_error(const float *t, const double *want, size_t rows, int32_t n, int32_t width) {
    double e = 0;
    for (size_t r = 0; r < rows; r++)
        for (int32_t j = 0; j < n; j++) {
            e = max_d(e, fabs(t[r * n + j] - want[r * width + j]));
            if (width == 2 * n) e = max_d(e, fabs(t[r * n + j] - want[r * width + j + n]));
        }
    return e;
}

static double rotate_error(const pe_rope *rope, const float *cs, const float *sn, const double *in, const double *want,
                           const double *shape, size_t n_elem, int per_batch_rows) {
    float *x = (float *)malloc(n_elem * sizeof(float));
    for (size_t i = 0; i < n_elem; i++) x[i] = (float)in[i];
    pe_rope_apply_config ac = {0};
    ac.batch = (int32_t)shape[0];
    ac.heads = (int32_t)shape[1];
    ac.seq = (int32_t)shape[2];
    ac.layout = PE_LAYOUT_BHSD;
    ac.per_batch_rows = per_batch_rows;
    double e = INFINITY;
    if (pe_rope_apply(rope, x, cs, sn, &ac) == PE_OK) {
        e = 0;
        for (size_t i = 0; i < n_elem; i++) e = max_d(e, fabs(x[i] - want[i]));
    }
    free(x);
    return e;
}

static void test_mrope_golden(void) {
    golden_doc doc;
    CHECK(golden_load(&doc, "mrope/mrope.json") == 0, "mrope.json");
    if (!doc.text) return;
    golden_case c = {0};
    int cases = 0;
    while (golden_next_case(&doc, &c)) {
        char id[128], layout[32];
        golden_string(&c, "id", id, sizeof id);
        golden_string(&c, "layout", layout, sizeof layout);
        pe_rope rope;
        CHECK_STATUS(case_rope(&rope, &c, PE_PAIRING_HALF), PE_OK);
        size_t ns, np, na, nshape, nshape_k;
        double *sec = golden_array(&c, "mrope_section", &ns);
        double *pos = golden_array(&c, "position_ids", &np);
        double *axis = golden_array(&c, "pair_axis", &na);
        double *shape = golden_array(&c, "shape", &nshape);
        double *shape_k = golden_array(&c, "shape_k", &nshape_k);
        double a = golden_number(&c, "attention_scaling", 1);
        pe_mrope_config m = {{(int32_t)sec[0], (int32_t)sec[1], (int32_t)sec[2]}, strcmp(layout, "interleaved") == 0};
        int32_t n = rope.n_freq, got_axis[PE_ROPE_MAX_FREQ];
        CHECK(fabs(rope.attention_scaling - a) < 1e-12, "%s: attention scaling %.17g, want %.17g", id,
              rope.attention_scaling, a);
        CHECK_STATUS(pe_mrope_pair_axis(got_axis, &rope, &m), PE_OK);
        int axis_ok = (int32_t)na == n;
        for (int32_t i = 0; axis_ok && i < n; i++) axis_ok = got_axis[i] == (int32_t)axis[i];
        CHECK(axis_ok, "%s: pair_axis", id);

        size_t rows = np / 3;
        int32_t *p32 = to_i32(pos, np);
        float *cs = (float *)malloc(rows * n * sizeof(float)), *sn = (float *)malloc(rows * n * sizeof(float));
        CHECK_STATUS(pe_mrope_cos_sin(cs, sn, &rope, &m, p32, (int32_t)rows, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
        size_t nc, nsn, nq, nk, nqe, nke;
        double *cos_w = golden_array(&c, "cos_f64", &nc), *sin_w = golden_array(&c, "sin_f64", &nsn);
        double tol_cs = 2e-6 * max_d(1, a), tol_qk = 3e-5 * max_d(1, a);
        double ec = table_error(cs, cos_w, rows, n, 2 * n), es = table_error(sn, sin_w, rows, n, 2 * n);
        CHECK(ec <= tol_cs && es <= tol_cs, "%s: cos err %.3g sin err %.3g", id, ec, es);
        double *q = golden_array(&c, "q", &nq), *k = golden_array(&c, "k", &nk);
        double *qe = golden_array(&c, "q_embed_f64", &nqe), *ke = golden_array(&c, "k_embed_f64", &nke);
        double eq = rotate_error(&rope, cs, sn, q, qe, shape, nq, 1);
        double ek = rotate_error(&rope, cs, sn, k, ke, shape_k, nk, 1);
        CHECK(eq <= tol_qk && ek <= tol_qk, "%s: q err %.3g k err %.3g", id, eq, ek);
        printf("  %-36s cos %.2e sin %.2e q %.2e k %.2e\n", id, ec, es, eq, ek);
        free(sec);
        free(pos);
        free(axis);
        free(shape);
        free(shape_k);
        free(p32);
        free(cs);
        free(sn);
        free(cos_w);
        free(sin_w);
        free(q);
        free(k);
        free(qe);
        free(ke);
        cases++;
    }
    CHECK(cases == 8, "mrope.json: %d cases", cases);
    golden_free(&doc);
}

static void test_rope2d_golden(void) {
    golden_doc doc;
    CHECK(golden_load(&doc, "mrope/rope2d.json") == 0, "rope2d.json");
    if (!doc.text) return;
    golden_case c = {0};
    int cases = 0;
    while (golden_next_case(&doc, &c)) {
        char id[128], kind[32];
        golden_string(&c, "id", id, sizeof id);
        golden_string(&c, "kind", kind, sizeof kind);
        int32_t k2 = strcmp(kind, "pixtral") == 0           ? PE_ROPE2D_PIXTRAL
                     : strcmp(kind, "qwen2_vl_vision") == 0 ? PE_ROPE2D_QWEN2_VL
                                                            : PE_ROPE2D_LLAMA4;
        pe_rope rope;
        CHECK_STATUS(case_rope(&rope, &c, k2 == PE_ROPE2D_LLAMA4 ? PE_PAIRING_INTERLEAVED : PE_PAIRING_HALF), PE_OK);
        size_t nshape, nq, nk, nqe, nke, nc, nsn;
        double *shape = golden_array(&c, "shape", &nshape);
        int32_t seq = (int32_t)shape[2], n = rope.n_freq;
        /* the two streams, built from the case's own layout fields */
        int32_t *pos = (int32_t *)calloc(2 * (size_t)seq, sizeof(int32_t));
        if (k2 == PE_ROPE2D_PIXTRAL) {
            size_t ni;
            double *hw = golden_array(&c, "images_hw", &ni);
            int32_t t = 0;
            for (size_t im = 0; im + 1 < ni; im += 2)
                for (int32_t r = 0; r < (int32_t)hw[im]; r++)
                    for (int32_t col = 0; col < (int32_t)hw[im + 1]; col++, t++) pos[t] = r, pos[seq + t] = col;
            CHECK(t == seq, "%s: %d patches", id, t);
            free(hw);
        } else if (k2 == PE_ROPE2D_QWEN2_VL) {
            size_t nr;
            double *rc = golden_array(&c, "rotary_pos_ids", &nr);
            CHECK((int32_t)nr == 2 * seq, "%s: rotary_pos_ids", id);
            for (int32_t t = 0; t < seq && 2 * (size_t)t + 1 < nr; t++)
                pos[t] = (int32_t)rc[2 * t], pos[seq + t] = (int32_t)rc[2 * t + 1];
            free(rc);
        } else {
            int32_t side = (int32_t)golden_number(&c, "patches_per_side", 0);
            for (int32_t t = 0; t + 1 < seq; t++) pos[t] = t % side + 1, pos[seq + t] = t / side + 1;
            CHECK(side * side + 1 == seq, "%s: side %d", id, side); /* CLS last: (0, 0) from calloc */
        }
        float *cs = (float *)malloc((size_t)seq * n * sizeof(float)),
              *sn = (float *)malloc((size_t)seq * n * sizeof(float));
        CHECK_STATUS(pe_rope2d_cos_sin(cs, sn, &rope, k2, pos, seq), PE_OK);
        double *cos_w = golden_array(&c, "cos_f64", &nc), *sin_w = golden_array(&c, "sin_f64", &nsn);
        int32_t width = (int32_t)(nc / (size_t)seq);
        double ec = table_error(cs, cos_w, (size_t)seq, n, width), es = table_error(sn, sin_w, (size_t)seq, n, width);
        CHECK(ec <= 2e-6 && es <= 2e-6, "%s: cos err %.3g sin err %.3g", id, ec, es);
        double *q = golden_array(&c, "q", &nq), *k = golden_array(&c, "k", &nk);
        double *qe = golden_array(&c, "q_embed_f64", &nqe), *ke = golden_array(&c, "k_embed_f64", &nke);
        double eq = rotate_error(&rope, cs, sn, q, qe, shape, nq, 0),
               ek = rotate_error(&rope, cs, sn, k, ke, shape, nk, 0);
        CHECK(eq <= 3e-5 && ek <= 3e-5, "%s: q err %.3g k err %.3g", id, eq, ek);
        printf("  %-36s cos %.2e sin %.2e q %.2e k %.2e\n", id, ec, es, eq, ek);
        free(shape);
        free(pos);
        free(cs);
        free(sn);
        free(cos_w);
        free(sin_w);
        free(q);
        free(k);
        free(qe);
        free(ke);
        cases++;
    }
    CHECK(cases == 6, "rope2d.json: %d cases", cases);
    golden_free(&doc);
}

static void test_sections(void) {
    pe_rope_config cfg = {0};
    cfg.head_dim = 16;
    pe_rope rope;
    CHECK_STATUS(pe_rope_init(&rope, &cfg), PE_OK);
    int32_t ax[PE_ROPE_MAX_FREQ];
    pe_mrope_config m = {{2, 3, 3}, 0};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_OK);
    m = (pe_mrope_config){{2, 3, 2}, 0};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_ERR_FIELD_VALUE); /* chunked sum 7 != 8 */
    m = (pe_mrope_config){{4, 3, 3}, 0};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_ERR_FIELD_VALUE);
    m = (pe_mrope_config){{-1, 6, 3}, 0};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_ERR_FIELD_VALUE);
    m = (pe_mrope_config){{2, 3, 3}, 2};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_ERR_FIELD_VALUE);
    /* interleaved: no sum rule, section[0] unread; [0, 2, 9] is out of range (9 > 8 pairs) */
    m = (pe_mrope_config){{0, 2, 1}, 1};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_OK);
    const int32_t want[8] = {0, 1, 2, 0, 1, 0, 0, 0};
    CHECK(memcmp(ax, want, sizeof want) == 0, "interleaved [0,2,1]");
    m = (pe_mrope_config){{0, 2, 9}, 1};
    CHECK_STATUS(pe_mrope_pair_axis(ax, &rope, &m), PE_ERR_FIELD_VALUE);
    /* positions: negative in any stream, NULL, negative count */
    float cs[8 * 2], sn[8 * 2];
    int32_t pos[6] = {0, 1, 0, 1, 0, -1};
    m = (pe_mrope_config){{2, 3, 3}, 0};
    CHECK_STATUS(pe_mrope_cos_sin(cs, sn, &rope, &m, pos, 2, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_ERR_POSITION);
    CHECK_STATUS(pe_mrope_cos_sin(cs, sn, &rope, &m, NULL, 2, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_ERR_NULL);
    CHECK_STATUS(pe_mrope_cos_sin(cs, sn, &rope, &m, pos, -1, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_ERR_SHAPE);
    CHECK_STATUS(pe_mrope_cos_sin(NULL, NULL, &rope, &m, NULL, 0, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
    CHECK_STATUS(pe_mrope_cos_sin(cs, sn, &rope, NULL, pos, 2, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_ERR_NULL);
    /* 2D: kind, pairing, head_dim % 4 */
    int32_t p2[2] = {0, 0};
    CHECK_STATUS(pe_rope2d_cos_sin(cs, sn, &rope, PE_ROPE2D_LLAMA4, p2, 1), PE_ERR_PAIRING);
    CHECK_STATUS(pe_rope2d_cos_sin(cs, sn, &rope, 3, p2, 1), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_rope2d_cos_sin(cs, sn, &rope, PE_ROPE2D_PIXTRAL, p2, 1), PE_OK);
    cfg.head_dim = 18;
    CHECK_STATUS(pe_rope_init(&rope, &cfg), PE_OK);
    CHECK_STATUS(pe_rope2d_cos_sin(cs, sn, &rope, PE_ROPE2D_QWEN2_VL, p2, 1), PE_ERR_HEAD_DIM);
    /* Pixtral at D = 18: 9 frequencies, rows on the 5 even ones, columns on the 4 odd ones */
    float c18[9], s18[9];
    int32_t p18[2] = {3, 7};
    CHECK_STATUS(pe_rope2d_cos_sin(c18, s18, &rope, PE_ROPE2D_PIXTRAL, p18, 1), PE_OK);
    for (int32_t j = 0; j < 9; j++) {
        double angle = j < 5 ? 3.0 * rope.inv_freq[2 * j] : 7.0 * rope.inv_freq[2 * (j - 5) + 1];
        CHECK(fabs(c18[j] - cos(angle)) < 2e-7 && fabs(s18[j] - sin(angle)) < 2e-7, "pixtral D=18 pair %d", j);
    }
}

/* t = h = w: the table is pe_rope_cos_sin's, bit for bit, for random configs, sections and positions */
static void test_equal_streams_is_rope(void) {
    pe_rng rng = {0x5eed13u};
    for (int trial = 0; trial < 200; trial++) {
        pe_rope_config cfg = {0};
        cfg.head_dim = 2 * pe_rng_int(&rng, 1, 96);
        if (pe_rng_int(&rng, 0, 2) == 0) cfg.rotary_dim = 2 * pe_rng_int(&rng, 1, cfg.head_dim / 2);
        cfg.base = pe_rng_int(&rng, 0, 1) ? 1e4 : 5e6;
        if (pe_rng_int(&rng, 0, 1)) {
            cfg.type = PE_ROPE_YARN;
            cfg.factor = 4;
            cfg.original_max_position_embeddings = 32768;
        }
        pe_rope rope;
        CHECK_STATUS(pe_rope_init(&rope, &cfg), PE_OK);
        int32_t n = rope.n_freq, s0 = pe_rng_int(&rng, 0, n), s1 = pe_rng_int(&rng, 0, n - s0);
        pe_mrope_config m = {{s0, s1, n - s0 - s1}, pe_rng_int(&rng, 0, 1)};
        int32_t rows = pe_rng_int(&rng, 1, 9);
        int32_t pos3[27], pos[9];
        for (int32_t p = 0; p < rows; p++) {
            pos[p] = pe_rng_int(&rng, 0, 3) ? pe_rng_int(&rng, 0, 1 << 20) : INT32_MAX - pe_rng_int(&rng, 0, 9);
            pos3[p] = pos3[rows + p] = pos3[2 * rows + p] = pos[p];
        }
        float c1[9 * PE_ROPE_MAX_FREQ], s1t[9 * PE_ROPE_MAX_FREQ], c2[9 * PE_ROPE_MAX_FREQ], s2t[9 * PE_ROPE_MAX_FREQ];
        CHECK_STATUS(pe_mrope_cos_sin(c1, s1t, &rope, &m, pos3, rows, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
        CHECK_STATUS(pe_rope_cos_sin(c2, s2t, &rope, pos, rows, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
        size_t bytes = (size_t)rows * n * sizeof(float);
        CHECK(memcmp(c1, c2, bytes) == 0 && memcmp(s1t, s2t, bytes) == 0, "trial %d: head_dim %d sections %d %d %d",
              trial, cfg.head_dim, m.section[0], m.section[1], m.section[2]);
    }
}

int main(void) {
    test_sections();
    test_equal_streams_is_rope();
    test_mrope_golden();
    test_rope2d_golden();
    return pe_test_report("test_mrope");
}
