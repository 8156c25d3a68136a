/* test_rope_stream.c — pe_rope_apply_qk on calls past 4 MiB of rotated q and k, where the bshd token loop pairs
 * q's head j with k's head j (rope_rows.h, PE__STREAM_BYTES) instead of q's heads in pairs: the result equals
 * two one-tensor pe_rope_apply calls and the rotation written out below, bit for bit, for equal and unequal head
 * counts (GQA either way round, odd leftovers), both pairings, both directions, partial rotary, rotary sizes off
 * the 16- and 4-pair steps, strided views in one fused buffer and bhsd decode batches. Built in both variants
 * (SIMD and scalar), so each build is checked against the same written-out arithmetic. */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int32_t B, S, QH, KH, D, rot, pairing, layout, rotation, fused;
} stream_case;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

/* Head (b, s, h) of a view: element offset from the buffer's start. */
static size_t head_at(const pe_rope_apply_config *c, int32_t D, int32_t b, int32_t s, int32_t h) {
    const int bhsd = c->layout == PE_LAYOUT_BHSD;
    const int64_t S = c->seq, H = c->heads;
    const int64_t sb = c->strides.batch ? c->strides.batch : S * H * D;
    const int64_t ss = c->strides.seq ? c->strides.seq : (bhsd ? D : H * D);
    const int64_t sh = c->strides.heads ? c->strides.heads : (bhsd ? S * D : D);
    return (size_t)(c->offset + b * sb + s * ss + h * sh);
}

/* The rotation of posenc.h, written out in float (every build has -ffp-contract=off): pair i of a head turns by
 * row (s) of the table. */
static void reference(float *x, const pe_rope_apply_config *c, const pe_rope *rope, const float *cos,
                      const float *sin) {
    const int32_t D = rope->config.head_dim, n = rope->n_freq;
    const int il = rope->config.pairing == PE_PAIRING_INTERLEAVED, inv = c->rotation == PE_ROTATE_INVERSE;
    for (int32_t b = 0; b < c->batch; b++)
        for (int32_t s = 0; s < c->seq; s++)
            for (int32_t h = 0; h < c->heads; h++) {
                float *v = x + head_at(c, D, b, s, h);
                for (int32_t i = 0; i < n; i++) {
                    float *pa = il ? v + 2 * i : v + i, *pb = il ? pa + 1 : pa + n;
                    const float xa = *pa, xb = *pb, cs = cos[(size_t)s * n + i], sn = sin[(size_t)s * n + i];
                    *pa = inv ? xa * cs + xb * sn : xa * cs - xb * sn;
                    *pb = inv ? xb * cs - xa * sn : xb * cs + xa * sn;
                }
            }
}

static void run_case(const stream_case *t, pe_rng *rng) {
    pe_rope rope;
    pe_rope_config rc = {0};
    rc.head_dim = t->D;
    rc.rotary_dim = t->rot;
    rc.pairing = t->pairing;
    CHECK_STATUS(pe_rope_init(&rope, &rc), PE_OK);
    const int32_t n = rope.n_freq;
    /* the streaming order needs more than 4 MiB of rotated floats (q and k together) */
    CHECK((double)t->B * t->S * (t->QH + t->KH) * n * 2 * 4 > 4.0 * 1024 * 1024, "%s: below the streaming size",
          t->name);

    int32_t *pos = xmalloc((size_t)t->S * sizeof *pos);
    for (int32_t s = 0; s < t->S; s++) pos[s] = pe_rng_int(rng, 0, 1 << 20);
    float *cos = xmalloc((size_t)t->S * n * 4), *sin = xmalloc((size_t)t->S * n * 4);
    CHECK_STATUS(pe_rope_cos_sin(cos, sin, &rope, pos, t->S, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);

    pe_rope_apply_config qc = {.batch = t->B, .seq = t->S, .heads = t->QH, .layout = t->layout};
    qc.rotation = t->rotation;
    pe_rope_apply_config kc = qc;
    kc.heads = t->KH;
    size_t nq = (size_t)t->B * t->S * t->QH * t->D, nk = (size_t)t->B * t->S * t->KH * t->D, total;
    if (t->fused) { /* per token q | k | v of one buffer: k's view starts after q's heads */
        const int64_t W = (int64_t)(t->QH + 2 * t->KH) * t->D;
        qc.strides.batch = kc.strides.batch = t->S * W;
        qc.strides.seq = kc.strides.seq = W;
        qc.strides.heads = kc.strides.heads = t->D;
        kc.offset = (int64_t)t->QH * t->D;
        total = (size_t)t->B * t->S * W;
    } else {
        total = nq + nk;
    }
    /* [0] input, [1] one call for q and k, [2] two one-tensor calls, [3] written out; k after q's elements */
    float *buf[4];
    for (int u = 0; u < 4; u++) buf[u] = xmalloc(total * 4);
    for (size_t i = 0; i < total; i++) buf[0][i] = pe_rng_float(rng) * 4.0f;
    for (int u = 1; u < 4; u++) memcpy(buf[u], buf[0], total * 4);
    const size_t k0 = t->fused ? 0 : nq; /* k's buffer start (the fused view's offset is in kc) */
    CHECK_STATUS(pe_rope_apply_qk(&rope, buf[1], buf[1] + k0, cos, sin, &qc, &kc), PE_OK);
    CHECK_STATUS(pe_rope_apply(&rope, buf[2], cos, sin, &qc), PE_OK);
    CHECK_STATUS(pe_rope_apply(&rope, buf[2] + k0, cos, sin, &kc), PE_OK);
    reference(buf[3], &qc, &rope, cos, sin);
    reference(buf[3] + k0, &kc, &rope, cos, sin);
    CHECK(memcmp(buf[1], buf[2], total * 4) == 0, "%s: q and k in one call != two calls", t->name);
    CHECK(memcmp(buf[1], buf[3], total * 4) == 0, "%s: q and k in one call != the written-out rotation", t->name);
    for (int u = 0; u < 4; u++) free(buf[u]);
    free(pos), free(cos), free(sin);
}

int main(void) {
    /* one case per line, as a table: clang-format would wrap the rows */
    // clang-format off
    static const stream_case cases[] = {
        /* name                                 B     S     QH KH D    rot pairing                 layout          rotation           fused */
        {"half, equal heads",                   1,    1100, 4, 4, 128, 0,  PE_PAIRING_HALF,        PE_LAYOUT_BSHD, PE_ROTATE_FORWARD, 0},
        {"interleaved, GQA 6 q / 2 k heads",    1,    1100, 6, 2, 128, 0,  PE_PAIRING_INTERLEAVED, PE_LAYOUT_BSHD, PE_ROTATE_FORWARD, 0},
        {"half, inverse, 2 q / 5 k, partial",   2,    1200, 2, 5, 96,  64, PE_PAIRING_HALF,        PE_LAYOUT_BSHD, PE_ROTATE_INVERSE, 0},
        {"interleaved, 3 q / 3 k, 36 pairs",    1,    2600, 3, 3, 72,  0,  PE_PAIRING_INTERLEAVED, PE_LAYOUT_BSHD, PE_ROTATE_INVERSE, 0},
        {"half, fused QKV buffer, 5 q / 2 k",   1,    2200, 5, 2, 72,  0,  PE_PAIRING_HALF,        PE_LAYOUT_BSHD, PE_ROTATE_FORWARD, 1},
        {"half, bhsd decode batch, 3 q / 4 k",  1200, 1,    3, 4, 128, 0,  PE_PAIRING_HALF,        PE_LAYOUT_BHSD, PE_ROTATE_FORWARD, 0},
    };
    // clang-format on
    pe_rng rng = {0x5eed5eedULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_case(&cases[i], &rng);
    return pe_test_report("test_rope_stream");
}
