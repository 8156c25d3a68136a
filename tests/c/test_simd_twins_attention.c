/* test_simd_twins_attention.c — padded-batch attention (per-sequence positions, key mask, bias shapes,
 * v_head_dim, per-query scales, ALiBi, RoPE) and strided views, in float32 and in float16 / bfloat16 storage:
 * the SIMD build equals the scalar build bit for bit (linked as test_simd_twins.c is: the SIMD symbols renamed
 * simd_*). */
#include "../../c/src/f16.h"
#include "attn_batch_cases.h"

#define SIMD_TWIN(name) extern __typeof__(name) simd_##name
SIMD_TWIN(pe_attention_scratch_size);
SIMD_TWIN(pe_attention);

int main(void) {
    pe_rng rng = {0x7a1c5ULL};
    int diffs = 0, wdiffs = 0, sdiffs = 0, hdiffs = 0;
    for (int it = 0; it < 150; it++) {
        abc_case C;
        abc_make(&C, &rng, 1);
        pe_attention_config *c = &C.cfg;
        /* a strided q inside a wider buffer (every head vector followed by 2 spare floats) */
        float *qw = NULL;
        if (it % 3 == 0) {
            const int32_t B = c->batch, S = c->q_len, H = c->heads, D = c->head_dim;
            qw = abc_calloc((size_t)B * S * H * (D + 2) + 1, 4);
            abc_fill(qw, (size_t)B * S * H * (D + 2) + 1, &rng, 2.0f);
            c->q_strides = (pe_strides){(int64_t)S * H * (D + 2), (int64_t)H * (D + 2), D + 2};
            c->q_offset = 1;
        }
        const size_t nw = (size_t)c->batch * c->heads * c->q_len * c->k_len;
        const int want_w = it % 2 == 0;
        size_t n1 = 0, n2 = 0;
        CHECK_STATUS(pe_attention_scratch_size(&n1, c), PE_OK);
        CHECK_STATUS(simd_pe_attention_scratch_size(&n2, c), PE_OK);
        float *o1 = abc_calloc(C.no, 4), *o2 = abc_calloc(C.no, 4), *s1 = abc_calloc(n1, 4), *s2 = abc_calloc(n1, 4);
        float *w1 = want_w ? abc_calloc(nw, 4) : NULL, *w2 = want_w ? abc_calloc(nw, 4) : NULL;
        const float *q = qw ? qw : C.q;
        const pe_status r1 = pe_attention(o1, w1, q, C.k, C.v, s1, n1, c);
        const pe_status r2 = simd_pe_attention(o2, w2, q, C.k, C.v, s2, n1, c);
        CHECK(r1 == PE_OK, "twin case %d: %s", it, pe_status_string(r1));
        sdiffs += r1 != r2 || n1 != n2;
        diffs += abc_first_diff(o1, o2, C.no) >= 0;
        if (want_w) wdiffs += abc_first_diff(w1, w2, nw) >= 0;
        free(o1), free(o2), free(s1), free(s2), free(w1), free(w2), free(qw);

        /* the same case in 16-bit storage (the inputs rounded to the type; q strided as above when it was) */
        const int bf16 = it & 1;
        pe_attention_config h = *c;
        h.dtype = bf16 ? PE_DTYPE_BFLOAT16 : PE_DTYPE_FLOAT16;
        const size_t nqb = qw ? (size_t)c->batch * c->q_len * c->heads * (c->head_dim + 2) + 1 : C.nq;
        uint16_t *q16 = abc_calloc(nqb, 2), *k16 = abc_calloc(C.nk, 2), *v16 = abc_calloc(C.nv, 2);
        uint16_t *p1 = abc_calloc(C.no, 2), *p2 = abc_calloc(C.no, 2);
        float *qf = abc_calloc(nqb, 4);
        abc_fill(qf, nqb, &rng, 2.0f);
        for (size_t i = 0; i < nqb; i++) q16[i] = bf16 ? pe__f32_to_bf16(qf[i]) : pe__f32_to_f16(qf[i]);
        for (size_t i = 0; i < C.nk; i++) k16[i] = bf16 ? pe__f32_to_bf16(C.k[i]) : pe__f32_to_f16(C.k[i]);
        for (size_t i = 0; i < C.nv; i++) v16[i] = bf16 ? pe__f32_to_bf16(C.v[i]) : pe__f32_to_f16(C.v[i]);
        free(qf);
        CHECK_STATUS(pe_attention_scratch_size(&n1, &h), PE_OK);
        CHECK_STATUS(simd_pe_attention_scratch_size(&n2, &h), PE_OK);
        s1 = abc_calloc(n1, 4), s2 = abc_calloc(n1, 4);
        const pe_status t1 = pe_attention(p1, NULL, q16, k16, v16, s1, n1, &h);
        const pe_status t2 = simd_pe_attention(p2, NULL, q16, k16, v16, s2, n1, &h);
        CHECK(t1 == PE_OK, "16-bit twin case %d: %s", it, pe_status_string(t1));
        sdiffs += t1 != t2 || n1 != n2;
        hdiffs += memcmp(p1, p2, 2 * C.no) != 0;
        free(q16), free(k16), free(v16), free(p1), free(p2), free(s1), free(s2);
        abc_free(&C);
    }
    CHECK(diffs == 0 && wdiffs == 0 && sdiffs == 0 && hdiffs == 0,
          "SIMD vs scalar: %d outputs, %d weights, %d statuses, %d 16-bit outputs differ", diffs, wdiffs, sdiffs,
          hdiffs);
    printf("padded-batch attention twins: 150 cases in float32 and in 16 bits, SIMD == scalar bit for bit\n");
    return pe_test_report("test_simd_twins_attention");
}
