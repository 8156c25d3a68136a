/* test_simd_twins_f16.c — pe_rope_apply on float16 / bfloat16 storage: the SIMD build (simd_pe_rope_apply, the
 * 8-lane conversions and the f32x4 rotation) and the scalar build give the same bits. build.sh links this
 * binary against both native builds (see test_simd_twins.c). Inputs are raw random 16-bit patterns, so NaNs
 * (signalling too), Infs and subnormals go through both paths; rotary dims not multiples of 8 meet the tails.
 * A result that is NaN must be NaN in both, but its payload and sign may differ: which input NaN an arithmetic
 * operation propagates is not fixed by IEEE 754, nor by wasm (nondeterministic NaN payloads), and the compiler
 * may commute a product's operands. Every other result is compared bit for bit. */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define SIMD_TWIN(name) extern __typeof__(name) simd_##name
SIMD_TWIN(pe_rope_init);
SIMD_TWIN(pe_rope_cos_sin);
SIMD_TWIN(pe_rope_apply);

int main(void) {
    pe_rng rng = {0x13198a2e03707344ULL};
    long differ = 0, results = 0, nans = 0;
    const int cases = 400;
    for (int k = 0; k < cases; k++) {
        pe_rope_config c = {0};
        c.head_dim = 2 * pe_rng_int(&rng, 1, pe_rng_int(&rng, 0, 3) ? 40 : 200);
        if (pe_rng_int(&rng, 0, 2) == 0) c.rotary_dim = 2 * pe_rng_int(&rng, 1, c.head_dim / 2);
        c.pairing = pe_rng_int(&rng, 0, 1);
        pe_rope rope;
        CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
        const int32_t B = pe_rng_int(&rng, 1, 3), S = pe_rng_int(&rng, 1, 7), H = pe_rng_int(&rng, 1, 4);
        const int32_t n = rope.n_freq;
        int32_t pos[7];
        for (int32_t s = 0; s < S; s++) pos[s] = pe_rng_int(&rng, 0, 3) ? pe_rng_int(&rng, 0, 4096) : INT32_MAX - s;
        float *cs = malloc(sizeof(float) * (size_t)S * n), *sn = malloc(sizeof(float) * (size_t)S * n);
        /* the scalar build's tables for both: this test is about apply (cos_sin has its own twin test) */
        CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, S, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
        const size_t total = (size_t)B * S * H * c.head_dim;
        uint16_t *a = malloc(2 * total), *b = malloc(2 * total);
        if (!cs || !sn || !a || !b) return 2;
        /* two cases in three: half raw patterns (every class of value), half ordinary magnitudes; the third: ordinary
         * magnitudes only, with now and then one Inf or NaN (the SIMD build's cheap conversions, and a chunk
         * redone exactly around the rare one) */
        const int mixed = k % 3 != 0;
        for (size_t i = 0; i < total; i++) {
            const uint32_t r = (uint32_t)pe_rng_next(&rng);
            a[i] = (uint16_t)((mixed && (i & 1)) ? r : (r & 0x83ff) | (uint32_t)pe_rng_int(&rng, 0x3000, 0x4c00));
            if (!mixed && pe_rng_int(&rng, 0, 999) == 0)
                a[i] = (uint16_t)(0x7c00 | (r & 0x83ff)) | (r >> 31 ? 0x0380 : 0);
        }
        memcpy(b, a, 2 * total);
        const pe_rope_apply_config ac = {.batch = B,
                                         .seq = S,
                                         .heads = H,
                                         .layout = pe_rng_int(&rng, 0, 1),
                                         .rotation = pe_rng_int(&rng, 0, 1),
                                         .dtype = pe_rng_int(&rng, 0, 1) ? PE_DTYPE_BFLOAT16 : PE_DTYPE_FLOAT16};
        CHECK_STATUS(pe_rope_apply(&rope, a, cs, sn, &ac), PE_OK);
        CHECK_STATUS(simd_pe_rope_apply(&rope, b, cs, sn, &ac), PE_OK);
        const uint16_t inf = ac.dtype == PE_DTYPE_BFLOAT16 ? 0x7f80 : 0x7c00;
        for (size_t i = 0; i < total; i++) {
            const int nan_a = (a[i] & 0x7fff) > inf, nan_b = (b[i] & 0x7fff) > inf;
            nans += nan_a && nan_b;
            if ((nan_a != nan_b || (!nan_a && a[i] != b[i])) && differ++ < 5)
                fprintf(stderr, "case %d element %zu: scalar 0x%04x simd 0x%04x\n", k, i, a[i], b[i]);
        }
        results += (long)total;
        free(cs);
        free(sn);
        free(a);
        free(b);
    }
    CHECK(differ == 0, "%ld of %ld 16-bit results differ between the SIMD and scalar builds", differ, results);
    printf("test_simd_twins_f16: %d cases, %ld elements, SIMD == scalar bit for bit (%ld NaN in both)\n", cases,
           results, nans);
    return pe_test_report("test_simd_twins_f16");
}
