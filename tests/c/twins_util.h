/* twins_util.h — what the SIMD-against-scalar test binaries (tests/c/test_simd_twins*.c) share: the declaration
 * of a SIMD twin, allocation that cannot fail quietly, bytewise comparison, and the random views their cases are
 * drawn from (random positions are test_util.h's). Include after test_util.h. */
#ifndef PE_TWINS_UTIL_H
#define PE_TWINS_UTIL_H

#include "posenc.h"

#include <stdio.h>
#include <stdlib.h>

/* build.sh links the SIMD objects with every global symbol renamed simd_<name>: pe_x is the scalar build's */
#define SIMD_TWIN(name) extern __typeof__(name) simd_##name

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", __FILE__);
        exit(2);
    }
    return p;
}

/* index of the first differing byte of a and b, or -1 */
static long first_diff_bytes(const void *a, const void *b, size_t bytes) {
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < bytes; i++)
        if (x[i] != y[i]) return (long)i;
    return -1;
}

/* A view with gaps after each head vector, row and batch and a leading offset (q inside a fused QKV buffer, a
 * cache with spare capacity), or the dense tensor; returns the elements x must hold. */
static size_t random_view(pe_rope_apply_config *ac, pe_rng *rng, int32_t D) {
    const int64_t B = ac->batch, S = ac->seq, H = ac->heads;
    if (pe_rng_int(rng, 0, 2) == 0) return (size_t)(B * S * H * D);
    const int64_t g1 = pe_rng_int(rng, 0, 5), g2 = pe_rng_int(rng, 0, 9), g3 = pe_rng_int(rng, 0, 17);
    pe_strides *st = &ac->strides;
    if (ac->layout == PE_LAYOUT_BHSD)
        st->seq = D + g1, st->heads = S * st->seq + g2, st->batch = H * st->heads + g3;
    else
        st->heads = D + g1, st->seq = H * st->heads + g2, st->batch = S * st->seq + g3;
    ac->offset = pe_rng_int(rng, 0, 33);
    return (size_t)(ac->offset + (B - 1) * st->batch + (S - 1) * st->seq + (H - 1) * st->heads + D);
}

/* The scaling fields of c->type (c->head_dim and c->rotary_dim already set; factor arrays point into `factors`).
 * With rng, each factor is drawn from its family's usual range; without, one fixed config per family, each past
 * its switch point at large positions (dynamic recomputes its frequencies, longrope takes the long factors). */
static void set_scaling(pe_rope_config *c, pe_rng *rng, double factors[2][PE_ROPE_MAX_FREQ]) {
#define PICK(fixed, lo, hi) (rng ? (double)pe_rng_int(rng, lo, hi) : (double)(fixed))
    switch (c->type) {
    case PE_ROPE_LINEAR: c->factor = PICK(4, 1, 16); break;
    case PE_ROPE_DYNAMIC:
        c->factor = PICK(4, 2, 8);
        c->max_position_embeddings = 2048;
        break;
    case PE_ROPE_YARN:
        c->factor = PICK(16, 4, 32);
        c->original_max_position_embeddings = 4096;
        c->max_position_embeddings = 4096 * (int32_t)c->factor;
        break;
    case PE_ROPE_LONGROPE: {
        c->max_position_embeddings = 131072;
        c->original_max_position_embeddings = 4096;
        const int32_t n = (c->rotary_dim ? c->rotary_dim : c->head_dim) / 2;
        for (int32_t i = 0; i < n; i++) factors[0][i] = 1.0 + 0.05 * i, factors[1][i] = 1.0 + 0.5 * i;
        c->short_factor = factors[0];
        c->long_factor = factors[1];
        break;
    }
    case PE_ROPE_LLAMA3:
        c->factor = 8.0;
        c->low_freq_factor = 1.0;
        c->high_freq_factor = 4.0;
        c->original_max_position_embeddings = 8192;
        break;
    case PE_ROPE_PROPORTIONAL: c->factor = rng && pe_rng_int(rng, 0, 1) ? 0.0 : 2.0; break;
    default: break;
    }
#undef PICK
}

#endif
