/* test_simd_twins_apply.c — the paired apply kernels (q and k in one pass, pe_rope_apply_qk) and the fused
 * decode path (pe_rope_apply_positions): each equals, bit for bit, the path it replaces in both builds, and the
 * SIMD build equals the scalar one.
 *
 * Linked like test_simd_twins.c: pe_* is the scalar build, simd_pe_* the SIMD build. Per random case:
 *   reference  the rotation written out from its formula, in float, from the pe_rope_cos_sin tables (float32)
 *   baseline   pe_rope_apply(q) then pe_rope_apply(k) with those tables (the scalar build)
 *   qk         pe_rope_apply_qk(q, k) and simd_pe_rope_apply_qk
 *   fused      pe_rope_apply_positions(q, k, positions) and its SIMD twin (which also keeps its rows: they
 *              must be the table's)
 * and every one must give the baseline's bytes, the gaps of strided views included; for float32 the baseline
 * must give the reference's. Head dims are drawn from the common rotary sizes (32 .. 256, full and partial, the
 * unrolled loops) and from odd ones (every loop's tail), with GQA head counts, odd head counts (a q head paired
 * with a k head), up to 9 heads each (8 or more take the interleaved token rows), strides, offsets, both
 * pairings, layouts, directions and dtypes. test_rows: the fused path's
 * own rows for every scaling family against the table's and against libm. */
#include "posenc.h"
#include "test_util.h"
#include "twins_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

SIMD_TWIN(pe_rope_apply_qk);
SIMD_TWIN(pe_rope_apply_positions);
SIMD_TWIN(pe_rope_cos_sin);

/* dense strides for the layout where the config gives none, as pe_rope_apply resolves them */
static void resolved(int64_t st[3], const pe_rope_apply_config *c, int64_t D) {
    const int64_t S = c->seq, H = c->heads;
    const int bhsd = c->layout == PE_LAYOUT_BHSD;
    st[0] = c->strides.batch ? c->strides.batch : S * H * D;
    st[1] = c->strides.seq ? c->strides.seq : (bhsd ? D : H * D);
    st[2] = c->strides.heads ? c->strides.heads : (bhsd ? S * D : D);
}

/* x[i] = x_a cos - x_b sin, x_b cos + x_a sin (inverse: the other sign), pair by pair, from the tables */
static void reference(float *x, const pe_rope_apply_config *c, const pe_rope *rope, const float *cos,
                      const float *sin) {
    const int64_t D = rope->config.head_dim, nf = rope->n_freq;
    int64_t st[3];
    resolved(st, c, D);
    const int il = rope->config.pairing == PE_PAIRING_INTERLEAVED, inv = c->rotation == PE_ROTATE_INVERSE;
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t s = 0; s < c->seq; s++)
            for (int64_t h = 0; h < c->heads; h++) {
                float *v = x + c->offset + b * st[0] + s * st[1] + h * st[2];
                const int64_t row = (c->per_batch_rows ? b * c->seq + s : s) * nf;
                for (int64_t i = 0; i < nf; i++) {
                    float *pa = v + (il ? 2 * i : i), *pb = v + (il ? 2 * i + 1 : i + nf);
                    const float xa = *pa, xb = *pb, cc = cos[row + i], ss = sin[row + i];
                    *pa = inv ? xa * cc + xb * ss : xa * cc - xb * ss;
                    *pb = inv ? xb * cc - xa * ss : xb * cc + xa * ss;
                }
            }
}

static int32_t random_head_dim(pe_rng *rng, int32_t *rotary_dim) {
    static const int32_t common[] = {32, 64, 96, 128, 256};
    *rotary_dim = 0;
    if (pe_rng_int(rng, 0, 2) == 0) return 2 * pe_rng_int(rng, 1, 70); /* any: the tails */
    const int32_t rot = common[pe_rng_int(rng, 0, 4)];
    if (pe_rng_int(rng, 0, 3) == 0) { /* partial rotary: the head is longer than the rotated part */
        *rotary_dim = rot;
        return rot + 2 * pe_rng_int(rng, 1, 40);
    }
    return rot;
}

static void test_paths(void) {
    pe_rng rng = {0xa991e5ULL};
    static pe_rope rope;
    int cases = 0, ref_diffs = 0, qk_diffs = 0, fused_diffs = 0, status_bad = 0, common_cases = 0, il_token_cases = 0;
    for (int it = 0; it < 500; it++) {
        pe_rope_config rc = {0};
        rc.head_dim = random_head_dim(&rng, &rc.rotary_dim);
        rc.pairing = pe_rng_int(&rng, 0, 1);
        if (pe_rng_int(&rng, 0, 3) == 0) { /* a scaled rope: the attention factor multiplies the rows */
            rc.type = PE_ROPE_YARN;
            rc.factor = 8.0;
            rc.original_max_position_embeddings = 4096;
        }
        if (pe_rope_init(&rope, &rc) != PE_OK) {
            CHECK(0, "case %d: rope rejected (head_dim %d rotary_dim %d)", it, rc.head_dim, rc.rotary_dim);
            continue;
        }
        common_cases += rope.n_freq % 16 == 0;
        const int decode = pe_rng_int(&rng, 0, 1);
        const int32_t B = pe_rng_int(&rng, 1, 3), S = decode ? pe_rng_int(&rng, 1, 4) : pe_rng_int(&rng, 5, 11);
        const int32_t H = pe_rng_int(&rng, 1, 9), KH = pe_rng_int(&rng, 0, 2) ? H : pe_rng_int(&rng, 1, 9);
        const int32_t per_batch = pe_rng_int(&rng, 0, 1), n_pos = per_batch ? B * S : S;
        const int64_t seq_len = pe_rng_int(&rng, 0, 1) ? PE_SEQ_LEN_FROM_POSITIONS : PE_SEQ_LEN_NONE;
        const double extra = pe_rng_int(&rng, 0, 1) ? 1.0 : 0.5 + pe_rng_float(&rng) * 0.25;
        const int32_t dtype = pe_rng_int(&rng, 0, 3) == 0 ? pe_rng_int(&rng, 1, 2) : PE_DTYPE_FLOAT32;
        const size_t esz = dtype == PE_DTYPE_FLOAT32 ? 4 : 2, nf = (size_t)rope.n_freq;
        const int32_t D = rc.head_dim;

        int32_t *pos = xcalloc((size_t)n_pos, sizeof *pos);
        for (int32_t p = 0; p < n_pos; p++) pos[p] = random_position(&rng);
        float *cos = xcalloc((size_t)n_pos * nf, 4), *sin = xcalloc((size_t)n_pos * nf, 4);
        float *cos2 = xcalloc((size_t)n_pos * nf, 4), *sin2 = xcalloc((size_t)n_pos * nf, 4);
        status_bad += pe_rope_cos_sin(cos, sin, &rope, pos, n_pos, seq_len, extra) != PE_OK;

        pe_rope_apply_config qc = {.batch = B, .seq = S, .heads = H, .layout = pe_rng_int(&rng, 0, 1)};
        /* the SIMD build's interleaved rows expanded once per token (rope_rows.h, PE__IL_MIN_HEADS): token order,
         * n a multiple of 8 up to 128, 8 or more heads of q and k together */
        il_token_cases += rc.pairing == PE_PAIRING_INTERLEAVED && rope.n_freq % 8 == 0 && rope.n_freq <= 128 &&
                          (qc.layout == PE_LAYOUT_BSHD || S <= 8) && H + KH >= 8;
        qc.per_batch_rows = per_batch;
        qc.rotation = pe_rng_int(&rng, 0, 1);
        qc.dtype = dtype;
        pe_rope_apply_config kc = qc;
        kc.heads = KH;
        const size_t nq = random_view(&qc, &rng, D), nk = random_view(&kc, &rng, D);
        /* [0] the input, [1] baseline, [2] qk scalar, [3] qk SIMD, [4] fused scalar, [5] fused SIMD, [6] reference */
        unsigned char *q[7], *k[7];
        for (int t = 0; t < 7; t++) q[t] = xcalloc(nq, esz), k[t] = xcalloc(nk, esz);
        for (size_t i = 0; i < nq; i++) {
            const float v = pe_rng_float(&rng) * 4.0f;
            if (esz == 4)
                memcpy(q[0] + 4 * i, &v, 4);
            else { /* any 16-bit pattern of a finite value in range: the top half of a float (bf16 view) */
                uint32_t u;
                memcpy(&u, &v, 4);
                const uint16_t h =
                    dtype == PE_DTYPE_BFLOAT16 ? (uint16_t)(u >> 16) : (uint16_t)(pe_rng_next(&rng) & 0x7bffu);
                memcpy(q[0] + 2 * i, &h, 2);
            }
        }
        for (size_t i = 0; i < nk; i++) {
            const float v = pe_rng_float(&rng) * 4.0f;
            if (esz == 4)
                memcpy(k[0] + 4 * i, &v, 4);
            else {
                uint32_t u;
                memcpy(&u, &v, 4);
                const uint16_t h =
                    dtype == PE_DTYPE_BFLOAT16 ? (uint16_t)(u >> 16) : (uint16_t)(pe_rng_next(&rng) & 0xfbffu);
                memcpy(k[0] + 2 * i, &h, 2);
            }
        }
        for (int t = 1; t < 7; t++) memcpy(q[t], q[0], nq * esz), memcpy(k[t], k[0], nk * esz);

        status_bad += pe_rope_apply(&rope, q[1], cos, sin, &qc) != PE_OK;
        status_bad += pe_rope_apply(&rope, k[1], cos, sin, &kc) != PE_OK;
        status_bad += pe_rope_apply_qk(&rope, q[2], k[2], cos, sin, &qc, &kc) != PE_OK;
        status_bad += simd_pe_rope_apply_qk(&rope, q[3], k[3], cos, sin, &qc, &kc) != PE_OK;
        status_bad += pe_rope_apply_positions(&rope, q[4], k[4], NULL, NULL, pos, seq_len, extra, &qc, &kc) != PE_OK;
        status_bad +=
            simd_pe_rope_apply_positions(&rope, q[5], k[5], cos2, sin2, pos, seq_len, extra, &qc, &kc) != PE_OK;
        /* the fused call's kept rows are the table's */
        if (first_diff_bytes(cos2, cos, (size_t)n_pos * nf * 4) >= 0 ||
            first_diff_bytes(sin2, sin, (size_t)n_pos * nf * 4) >= 0)
            fused_diffs++;
        if (esz == 4) {
            reference((float *)q[6], &qc, &rope, cos, sin);
            reference((float *)k[6], &kc, &rope, cos, sin);
            if (first_diff_bytes(q[6], q[1], nq * 4) >= 0 || first_diff_bytes(k[6], k[1], nk * 4) >= 0) {
                if (++ref_diffs <= 3)
                    fprintf(stderr, "  baseline != reference: D %d rot %d pairing %d layout %d\n", D, rope.rot_dim,
                            rc.pairing, qc.layout);
            }
        }
        for (int t = 2; t < 6; t++) {
            const long dq = first_diff_bytes(q[t], q[1], nq * esz), dk = first_diff_bytes(k[t], k[1], nk * esz);
            if (dq < 0 && dk < 0) continue;
            int *count = t < 4 ? &qk_diffs : &fused_diffs;
            if (++*count <= 3)
                fprintf(
                    stderr,
                    "  %s %s differs: D %d rot %d pairing %d layout %d dtype %d B %d S %d H %d KH %d at q %ld k %ld\n",
                    t < 4 ? "qk" : "fused", t % 2 ? "SIMD" : "scalar", D, rope.rot_dim, rc.pairing, qc.layout, dtype, B,
                    S, H, KH, dq, dk);
        }
        cases++;
        for (int t = 0; t < 7; t++) free(q[t]), free(k[t]);
        free(pos), free(cos), free(sin), free(cos2), free(sin2);
    }
    CHECK(status_bad == 0, "%d calls failed on valid arguments", status_bad);
    CHECK(ref_diffs == 0, "%d of %d float32 baselines differ from the written-out rotation", ref_diffs, cases);
    CHECK(qk_diffs == 0, "%d pe_rope_apply_qk results (of %d cases x 2 builds) differ from two pe_rope_apply calls",
          qk_diffs, cases);
    CHECK(fused_diffs == 0, "%d pe_rope_apply_positions results (of %d cases x 2 builds) differ from table + apply",
          fused_diffs, cases);
    CHECK(cases == 500 && common_cases >= 150, "only %d cases ran, %d with a common rotary size", cases, common_cases);
    CHECK(il_token_cases >= 40, "only %d cases took the interleaved token rows", il_token_cases);
}

/* The decode step's own rows (pe_rope_apply_positions keeps them in cos_out / sin_out) against the table's
 * (pe_rope_cos_sin), in both builds, bit for bit: every scaling family, random positions up to 2^31 - 1, row
 * lengths on and off the 4-frequency SIMD step and past the 64-frequency block of the two-pass row. And each
 * value against cos / sin of the same double angle in libm, times the attention factor: the angle reduction is
 * exact for every int32 position (pe_math.h), so what is left is the rounding of r to float32 (<= 2^-25 rad)
 * and ~1 ulp of each polynomial, ~1e-7, and the factor's float32 product (2^-24 relative). */
static void test_rows(void) {
    pe_rng rng = {0x5eed0f5ULL};
    static pe_rope rope;
    static double factors[2][PE_ROPE_MAX_FREQ], inv[PE_ROPE_MAX_FREQ];
    const int32_t dims[] = {2, 8, 14, 64, 128, 138, 256};
    int cases = 0, row_diffs = 0, status_bad = 0;
    double worst = 0;
    for (int32_t type = 0; type < PE_ROPE_TYPE_COUNT; type++)
        for (int it = 0; it < 24; it++) {
            const int32_t D = dims[it % (int)(sizeof dims / sizeof *dims)];
            pe_rope_config rc = {.head_dim = D, .type = type};
            set_scaling(&rc, NULL, factors);
            if (pe_rope_init(&rope, &rc) != PE_OK) {
                CHECK(0, "family %d head_dim %d rejected", type, D);
                continue;
            }
            const int32_t S = pe_rng_int(&rng, 1, 4), nf = rope.n_freq;
            const double extra = it % 3 ? 1.0 : 0.75;
            int32_t pos[4], max_pos = 0;
            for (int32_t p = 0; p < S; p++) {
                pos[p] = it == 0 && p == 0 ? INT32_MAX : random_position(&rng);
                max_pos = pos[p] > max_pos ? pos[p] : max_pos;
            }
            /* [0] table scalar, [1] table SIMD, [2] fused scalar, [3] fused SIMD */
            static float cs[4][4 * PE_ROPE_MAX_FREQ], sn[4][4 * PE_ROPE_MAX_FREQ], x[2][4 * PE_ROPE_MAX_HEAD_DIM];
            const pe_rope_apply_config qc = {.batch = 1, .seq = S, .heads = 1};
            status_bad += pe_rope_cos_sin(cs[0], sn[0], &rope, pos, S, PE_SEQ_LEN_FROM_POSITIONS, extra) != PE_OK;
            status_bad += simd_pe_rope_cos_sin(cs[1], sn[1], &rope, pos, S, PE_SEQ_LEN_FROM_POSITIONS, extra) != PE_OK;
            status_bad += pe_rope_apply_positions(&rope, x[0], NULL, cs[2], sn[2], pos, PE_SEQ_LEN_FROM_POSITIONS,
                                                  extra, &qc, NULL) != PE_OK;
            status_bad += simd_pe_rope_apply_positions(&rope, x[1], NULL, cs[3], sn[3], pos, PE_SEQ_LEN_FROM_POSITIONS,
                                                       extra, &qc, NULL) != PE_OK;
            const size_t bytes = (size_t)S * (size_t)nf * 4;
            for (int t = 1; t < 4; t++)
                if (first_diff_bytes(cs[t], cs[0], bytes) >= 0 || first_diff_bytes(sn[t], sn[0], bytes) >= 0) {
                    if (++row_diffs <= 3)
                        fprintf(stderr, "  rows differ: family %d head_dim %d path %d position %d\n", type, D, t,
                                pos[0]);
                }
            double att;
            status_bad += pe_rope_inv_freq(inv, &att, &rope, (int64_t)max_pos + 1) != PE_OK;
            const double a = att * extra;
            for (int32_t p = 0; p < S; p++)
                for (int32_t i = 0; i < nf; i++) {
                    const double ang = (double)pos[p] * inv[i];
                    const double ec = fabs(cs[0][p * nf + i] - cos(ang) * a),
                                 es = fabs(sn[0][p * nf + i] - sin(ang) * a);
                    worst = fmax(worst, fmax(ec, es) / fmax(1.0, fabs(a)));
                }
            cases++;
        }
    CHECK(status_bad == 0, "%d row calls failed on valid arguments", status_bad);
    CHECK(row_diffs == 0, "%d of %d decode rows differ from the table's", row_diffs, cases);
    CHECK(worst < 2e-7, "decode rows vs libm (double angle): worst %g x max(1, factor)", worst);
    CHECK(cases == 24 * PE_ROPE_TYPE_COUNT, "only %d row cases ran", cases);
    printf("  decode rows: %d cases, every family, bit for bit the table's; vs libm worst %.3g\n", cases, worst);
}

/* The arguments both entry points refuse, with pe_rope_apply's statuses and the table's. */
static void test_statuses(void) {
    static pe_rope rope;
    const pe_rope_config rc = {.head_dim = 64};
    CHECK_STATUS(pe_rope_init(&rope, &rc), PE_OK);
    float q[4 * 64] = {0}, k[4 * 64] = {0}, cos[4 * 32] = {0}, sin[4 * 32] = {0};
    const int32_t pos[4] = {0, 1, 2, 3}, neg[2] = {3, -1};
    const pe_rope_apply_config qc = {.batch = 1, .seq = 2, .heads = 2};
    pe_rope_apply_config kc = qc;
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, cos, sin, &qc, NULL), PE_ERR_NULL);
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, NULL, cos, sin, &qc, NULL), PE_OK); /* q only */
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, NULL, sin, &qc, &kc), PE_ERR_NULL);
    CHECK_STATUS(pe_rope_apply_positions(&rope, q, k, NULL, NULL, NULL, -1, 1.0, &qc, &kc), PE_ERR_NULL);
    kc.seq = 1;
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, cos, sin, &qc, &kc), PE_ERR_FIELD_VALUE);
    kc = qc, kc.layout = PE_LAYOUT_BHSD;
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, cos, sin, &qc, &kc), PE_ERR_FIELD_VALUE);
    kc = qc, kc.rotation = PE_ROTATE_INVERSE;
    CHECK_STATUS(pe_rope_apply_positions(&rope, q, k, NULL, NULL, pos, -1, 1.0, &qc, &kc), PE_ERR_FIELD_VALUE);
    kc = qc, kc.dtype = PE_DTYPE_FLOAT16;
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, cos, sin, &qc, &kc), PE_ERR_FIELD_VALUE);
    kc = qc, kc.heads = 0;
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, cos, sin, &qc, &kc), PE_ERR_HEADS);
    kc = qc, kc.strides.heads = 1; /* overlapping head vectors */
    CHECK_STATUS(pe_rope_apply_qk(&rope, q, k, cos, sin, &qc, &kc), PE_ERR_SHAPE);
    kc = qc;
    CHECK_STATUS(pe_rope_apply_positions(&rope, q, k, NULL, NULL, neg, -1, 1.0, &qc, &kc), PE_ERR_POSITION);
    CHECK_STATUS(pe_rope_apply_positions(&rope, q, k, NULL, NULL, pos, -2, 1.0, &qc, &kc), PE_ERR_SEQ_LEN);
    CHECK_STATUS(pe_rope_apply_positions(&rope, q, k, NULL, NULL, pos, -1, INFINITY, &qc, &kc), PE_ERR_SCALE);
    CHECK_STATUS(pe_rope_apply_positions(&rope, q, k, NULL, NULL, pos, -1, 1e300, &qc, &kc), PE_ERR_SCALE);
    /* an empty call is validated, then does nothing: NULL data are fine */
    pe_rope_apply_config empty = qc;
    empty.seq = 0;
    kc.seq = 0;
    CHECK_STATUS(pe_rope_apply_positions(&rope, NULL, NULL, NULL, NULL, NULL, -1, 1.0, &empty, &kc), PE_OK);
    CHECK_STATUS(pe_rope_apply_qk(&rope, NULL, NULL, NULL, NULL, &empty, &kc), PE_OK);
    empty.layout = 7;
    CHECK_STATUS(pe_rope_apply_qk(&rope, NULL, NULL, NULL, NULL, &empty, NULL), PE_ERR_LAYOUT);
}

int main(void) {
    test_paths();
    test_rows();
    test_statuses();
    return pe_test_report("test_simd_twins_apply");
}
