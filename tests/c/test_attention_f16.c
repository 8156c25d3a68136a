/* test_attention_f16.c — pe_attention with float16 / bfloat16 storage (pe_attention_config.dtype).
 *
 * The promise (posenc.h): 16-bit q, k, v are widened exactly, the softmax and the accumulation are the float32
 * path's, and out is rounded to nearest even; with RoPE the rotated q and k are rounded to the type first, as
 * pe_rope_apply on the 16-bit data stores them. So, on the random padded-batch cases of attn_batch_cases.h
 * (per-sequence positions, key mask, bias shapes, v_head_dim, query scales, ALiBi, RoPE with and without
 * k_rotated, both layouts), bit for bit:
 *   16-bit attention (q, out strided inside wider buffers with an offset)
 *     == narrow(float32 attention of the widened inputs), RoPE done beforehand by pe_rope_apply in 16 bits;
 * and the elements of out's buffer outside its view keep their bits. Also: an unknown dtype is
 * PE_ERR_FIELD_VALUE, the scratch size is the header's formula, k_len 0 gives +0 everywhere. (The float64
 * reference on the same 16-bit inputs is tests/js/attention-f16.test.js's.) */
#include "../../c/src/f16.h"
#include "attn_batch_cases.h"

static uint16_t narrow1(int bf16, float f) { return bf16 ? pe__f32_to_bf16(f) : pe__f32_to_f16(f); }
static float widen1(int bf16, uint16_t h) { return bf16 ? pe__bf16_to_f32(h) : pe__f16_to_f32(h); }

static uint16_t *to16(const float *x, size_t n, int bf16, float *widened) {
    uint16_t *h = abc_calloc(n, 2);
    for (size_t i = 0; i < n; i++) {
        h[i] = narrow1(bf16, x[i]);
        widened[i] = widen1(bf16, h[i]);
    }
    return h;
}

/* x (B, S, H, D dense for the layout) copied into a buffer where each head vector is followed by `pad`
 * spare elements, starting at element `off`; fills the view's strides. Spare elements hold `fill`. */
static uint16_t *spread(const uint16_t *x, int layout, int32_t B, int32_t S, int32_t H, int32_t D, int32_t pad,
                        int32_t off, uint16_t fill, pe_strides *st, size_t *n) {
    const int64_t P = D + pad;
    *n = (size_t)off + (size_t)B * S * H * (size_t)P;
    uint16_t *y = abc_calloc(*n, 2);
    for (size_t i = 0; i < *n; i++) y[i] = fill;
    const int bhsd = layout == PE_LAYOUT_BHSD;
    *st = bhsd ? (pe_strides){(int64_t)H * S * P, P, (int64_t)S * P}
               : (pe_strides){(int64_t)S * H * P, (int64_t)H * P, P};
    for (int32_t b = 0; b < B; b++)
        for (int32_t s = 0; s < S; s++)
            for (int32_t h = 0; h < H; h++) {
                const size_t di = bhsd ? (((size_t)b * H + h) * S + s) * D : (((size_t)b * S + s) * H + h) * D;
                memcpy(y + off + b * st->batch + s * st->seq + h * st->heads, x + di, 2 * (size_t)D);
            }
    return y;
}

static float *attend32(const pe_attention_config *c, const float *q, const float *k, const float *v, size_t no) {
    size_t ns = 0;
    CHECK_STATUS(pe_attention_scratch_size(&ns, c), PE_OK);
    float *out = abc_calloc(no, 4), *scratch = abc_calloc(ns, 4);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, ns, c), PE_OK);
    free(scratch);
    return out;
}

/* rotates dense 16-bit x (B, S, H, D) in place at per-sequence positions pos (B*S), as rope.apply would */
static void rope16(const pe_rope *rope, uint16_t *x, int layout, int32_t B, int32_t S, int32_t H, const int32_t *pos,
                   int64_t seq_len, int dtype) {
    const size_t rows = (size_t)B * S, nf = (size_t)rope->n_freq;
    float *cs = abc_calloc(rows * nf, 4), *sn = abc_calloc(rows * nf, 4);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, rope, pos, (int32_t)rows, seq_len, 1.0), PE_OK);
    const pe_rope_apply_config rc = {
        .batch = B, .seq = S, .heads = H, .layout = layout, .per_batch_rows = 1, .dtype = dtype};
    CHECK_STATUS(pe_rope_apply(rope, x, cs, sn, &rc), PE_OK);
    free(cs), free(sn);
}

static size_t scratch_formula(const pe_attention_config *c) {
    const size_t B = (size_t)c->batch, H = (size_t)c->heads, KVH = (size_t)c->kv_heads, Sq = (size_t)c->q_len;
    const size_t Sk = (size_t)c->k_len, D = (size_t)c->head_dim, Dv = c->v_head_dim ? (size_t)c->v_head_dim : D;
    size_t n = 0;
    if (c->rope) {
        const size_t nf = (size_t)c->rope->n_freq, qrows = B * Sq, krows = c->k_rotated ? 0 : B * Sk;
        n = B * H * Sq * D + (c->k_rotated ? 0 : B * KVH * Sk * D) + 2 * (qrows + krows) * nf;
    }
    const size_t rows = H / KVH * Sq < 32 ? H / KVH * Sq : 32, keys = Sk < 512 ? Sk : 512;
    n += rows * Dv + keys * Dv + (c->rope ? 0 : rows * D) + (!c->rope || c->k_rotated ? keys * D : 0);
    return n;
}

static void test_exact(void) {
    pe_rng rng = {0xf16a77ULL};
    int cases = 0, diffs = 0, spare = 0, ropes = 0;
    for (int it = 0; it < 80; it++) {
        abc_case C;
        abc_make(&C, &rng, 1);
        const int bf16 = it & 1, dtype = bf16 ? PE_DTYPE_BFLOAT16 : PE_DTYPE_FLOAT16;
        const pe_attention_config *c = &C.cfg;
        const int32_t B = c->batch, H = c->heads, KVH = c->kv_heads, Sq = c->q_len, Sk = c->k_len;
        const int32_t D = c->head_dim, Dv = c->v_head_dim ? c->v_head_dim : D;
        float *qw = abc_calloc(C.nq, 4), *kw = abc_calloc(C.nk, 4), *vw = abc_calloc(C.nv, 4);
        uint16_t *q16 = to16(C.q, C.nq, bf16, qw), *k16 = to16(C.k, C.nk, bf16, kw), *v16 = to16(C.v, C.nv, bf16, vw);

        /* the reference: float32 attention of the widened inputs (rotated beforehand in 16 bits), narrowed */
        pe_attention_config r = *c;
        if (c->rope) {
            ropes++;
            int32_t mx = 0;
            for (size_t i = 0; i < (size_t)B * Sk; i++) mx = c->k_positions[i] > mx ? c->k_positions[i] : mx;
            for (size_t i = 0; i < (size_t)B * Sq; i++) mx = c->q_positions[i] > mx ? c->q_positions[i] : mx;
            uint16_t *qr = abc_calloc(C.nq, 2), *kr = abc_calloc(C.nk, 2);
            memcpy(qr, q16, 2 * C.nq), memcpy(kr, k16, 2 * C.nk);
            rope16(c->rope, qr, c->layout, B, Sq, H, c->q_positions, (int64_t)mx + 1, dtype);
            if (!c->k_rotated) rope16(c->rope, kr, c->layout, B, Sk, KVH, c->k_positions, (int64_t)mx + 1, dtype);
            for (size_t i = 0; i < C.nq; i++) qw[i] = widen1(bf16, qr[i]);
            for (size_t i = 0; i < C.nk; i++) kw[i] = widen1(bf16, kr[i]);
            free(qr), free(kr);
            r.rope = NULL;
            r.k_rotated = 0;
        }
        float *ref = attend32(&r, qw, kw, vw, C.no);

        /* the 16-bit call: q and out strided inside wider buffers, every other case */
        pe_attention_config h = *c;
        h.dtype = dtype;
        const int strided = it % 4 < 2;
        size_t nqb = C.nq, nob = C.no;
        uint16_t *qb = q16, *ob;
        if (strided) {
            qb = spread(q16, c->layout, B, Sq, H, D, 3, 5, 0x7e00, &h.q_strides, &nqb);
            h.q_offset = 5;
            uint16_t *dense0 = abc_calloc(C.no, 2);
            ob = spread(dense0, c->layout, B, Sq, H, Dv, 2, 1, 0xabcd, &h.out_strides, &nob);
            h.out_offset = 1;
            free(dense0);
        } else {
            ob = abc_calloc(C.no, 2);
        }
        size_t ns = 0;
        CHECK_STATUS(pe_attention_scratch_size(&ns, &h), PE_OK);
        CHECK(ns == scratch_formula(&h), "case %d: scratch %zu, formula %zu", it, ns, scratch_formula(&h));
        float *scratch = abc_calloc(ns, 4);
        CHECK_STATUS(pe_attention(ob, NULL, qb, k16, v16, scratch, ns, &h), PE_OK);
        const pe_strides os = strided ? h.out_strides : (pe_strides){0, 0, 0};
        const int bhsd = c->layout == PE_LAYOUT_BHSD;
        int bad = 0;
        for (int32_t b = 0; b < B; b++)
            for (int32_t s = 0; s < Sq; s++)
                for (int32_t hh = 0; hh < H; hh++) {
                    const size_t di =
                        bhsd ? (((size_t)b * H + hh) * Sq + s) * Dv : (((size_t)b * Sq + s) * H + hh) * Dv;
                    const size_t oi = strided ? (size_t)(1 + b * os.batch + s * os.seq + hh * os.heads) : di;
                    for (int32_t e = 0; e < Dv; e++) {
                        bad += ob[oi + e] != narrow1(bf16, ref[di + e]);
                        if (strided) ob[oi + e] = 0xabcd; /* then every element of the buffer must be the fill */
                    }
                }
        diffs += bad > 0;
        if (bad)
            fprintf(stderr, "case %d (%s, rope %d): %d elements differ\n", it, bf16 ? "bf16" : "f16", !!c->rope, bad);
        if (strided)
            for (size_t i = 0; i < nob; i++) spare += ob[i] != 0xabcd;
        cases++;
        free(scratch), free(ref), free(qw), free(kw), free(vw), free(q16), free(k16), free(v16), free(ob);
        if (strided) free(qb);
        abc_free(&C);
    }
    CHECK(diffs == 0, "%d of %d cases differ from narrow(float32 attention of the widened inputs)", diffs, cases);
    CHECK(spare == 0, "%d elements of out outside its view changed", spare);
    printf("16-bit attention: %d cases (%d with RoPE), == narrow(float32 of widened) bit for bit\n", cases, ropes);
}

static void test_edges(void) {
    uint16_t q[8], k[8], v[8], out[8];
    for (int i = 0; i < 8; i++) q[i] = k[i] = v[i] = 0x3c00, out[i] = 0xffff;
    pe_attention_config c = {.batch = 1, .heads = 2, .q_len = 1, .k_len = 0, .head_dim = 4, .dtype = PE_DTYPE_FLOAT16};
    size_t ns = 1;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_OK);
    float scratch[64];
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, 64, &c), PE_OK);
    int nz = 0;
    for (int i = 0; i < 8; i++) nz += out[i] != 0;
    CHECK(nz == 0, "k_len 0: %d of 8 outputs are not +0", nz);
    c.k_len = 1;
    c.dtype = PE_DTYPE_COUNT;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_ERR_FIELD_VALUE);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, 64, &c), PE_ERR_FIELD_VALUE);
    c.dtype = -1;
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, 64, &c), PE_ERR_FIELD_VALUE);
    /* the 16-bit buffers are scratch: too little of it is refused, as for RoPE */
    c.dtype = PE_DTYPE_BFLOAT16;
    CHECK_STATUS(pe_attention_scratch_size(&ns, &c), PE_OK);
    CHECK(ns == 4 * 4, "scratch for 1 row per kv head, 1 key, D = Dv = 4: %zu", ns);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, ns - 1, &c), PE_ERR_SHAPE);
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, NULL, 0, &c), PE_ERR_NULL);
    /* one key of ones: out = v exactly */
    CHECK_STATUS(pe_attention(out, NULL, q, k, v, scratch, ns, &c), PE_OK);
    CHECK(out[0] == 0x3c00 && out[7] == 0x3c00, "one key: out = v (0x%04x)", out[0]);
}

int main(void) {
    (void)abc_first_diff; /* shared by the other users of attn_batch_cases.h */
    test_exact();
    test_edges();
    return pe_test_report("test_attention_f16");
}
