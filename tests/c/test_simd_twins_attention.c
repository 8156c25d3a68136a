/* test_simd_twins_attention.c — padded-batch attention (per-sequence positions, key mask, bias shapes,
 * v_head_dim, per-query scales, ALiBi, RoPE) and strided views: the SIMD build equals the scalar build bit for
 * bit (linked as test_simd_twins.c is: the SIMD symbols renamed simd_*). */
#include "attn_batch_cases.h"

#define SIMD_TWIN(name) extern __typeof__(name) simd_##name
SIMD_TWIN(pe_attention_scratch_size);
SIMD_TWIN(pe_attention);

int main(void) {
    pe_rng rng = {0x7a1c5ULL};
    int diffs = 0, wdiffs = 0, sdiffs = 0;
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
        abc_free(&C);
    }
    CHECK(diffs == 0 && wdiffs == 0 && sdiffs == 0, "SIMD vs scalar: %d outputs, %d weights, %d statuses differ", diffs,
          wdiffs, sdiffs);
    printf("padded-batch attention twins: 150 cases, SIMD == scalar bit for bit\n");
    return pe_test_report("test_simd_twins_attention");
}
