/* fuzz_rope_apply.c — pe_rope_cos_sin and pe_rope_apply on random shapes, positions, layouts, pairings,
 * partial rotary dims, per-token rows, rotations and views (strides with gaps, as in a fused QKV buffer or a
 * KV cache with spare capacity, strides of any size, offsets), invalid values and zero counts included, with
 * every buffer — positions, cos, sin, x — allocated to exactly the size its shape gives (x: offset to the end
 * of the furthest head vector), so AddressSanitizer reports any element read or written past it.
 *
 * Strict invariants when both calls are accepted:
 *   - x stays finite (its inputs are bounded, |x| <= 4, so a non-finite value is the kernel's);
 *   - dimensions >= rot_dim of every head are untouched, bit for bit, and so is every element between
 *     head vectors; the head vectors of an accepted view do not overlap;
 *   - each rotated pair keeps its length times the table's scale (|x'|^2 = s^2 |x|^2 up to rounding).
 * When a call is refused, x is left exactly as it was. */
#include "fuzz.h"

static pe_rope rope;

/* a modest config: the apply and table paths, not init's corners (fuzz_rope_init covers those) */
static int make_rope(fuzz_input *in) {
    pe_rope_config c = {0};
    c.head_dim = fuzz_bool(in) ? 2 * (int32_t)fuzz_range(in, 1, 20) : 2 * (int32_t)fuzz_range(in, 1, 160);
    if (fuzz_bool(in)) c.rotary_dim = 2 * (int32_t)fuzz_range(in, 1, c.head_dim / 2);
    c.pairing = (int32_t)fuzz_range(in, 0, 1);
    switch (fuzz_range(in, 0, 3)) {
    case 1: c.type = PE_ROPE_LINEAR, c.factor = (double)fuzz_range(in, 1, 64); break;
    case 2: c.type = PE_ROPE_DYNAMIC, c.factor = (double)fuzz_range(in, 1, 16), c.max_position_embeddings = 2048; break;
    case 3: c.type = PE_ROPE_PROPORTIONAL; break;
    default:
        if (fuzz_bool(in)) c.base = (double)fuzz_range(in, 2, 5000000);
        break;
    }
    return pe_rope_init(&rope, &c) == PE_OK;
}

/* The element offset of head vector (b, s, h) under the effective strides. */
typedef struct view {
    int64_t sb, ss, sh, offset;
} view;
static int64_t at(const view *v, int64_t b, int64_t s, int64_t h) {
    return v->offset + b * v->sb + s * v->ss + h * v->sh;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size};
    if (!make_rope(&in)) return 0;
    pe_rope_apply_config ac = {0};
    ac.batch = (int32_t)fuzz_range(&in, -1, 4);
    ac.seq = (int32_t)fuzz_range(&in, -1, 40);
    ac.heads = (int32_t)fuzz_range(&in, -1, 9);
    ac.layout = (int32_t)fuzz_range(&in, -1, 2);
    ac.rotation = (int32_t)fuzz_range(&in, -1, 2);
    ac.per_batch_rows = fuzz_bool(&in);
    const int wild_positions = fuzz_range(&in, 0, 3) == 0;
    const int64_t seq_len = fuzz_bool(&in) ? PE_SEQ_LEN_FROM_POSITIONS : fuzz_range(&in, 0, 1 << 16);
    const double extra = fuzz_bool(&in) ? 1.0 : fuzz_double(&in, 0.25, 2.0);
    const int64_t B = ac.batch, S = ac.seq, H = ac.heads, D = rope.config.head_dim;

    /* the view: dense (0), a dense layout with gaps between heads, rows and batches (a fused QKV buffer, a
     * cache with spare capacity), or strides of any size (overlapping ones must be refused) */
    const int64_t dense_sh = ac.layout == PE_LAYOUT_BHSD ? S * D : D,
                  dense_ss = ac.layout == PE_LAYOUT_BHSD ? D : H * D;
    const int64_t dense_sb = S * H * D;
    switch (fuzz_range(&in, 0, 3)) {
    case 1: {
        const int64_t g1 = fuzz_range(&in, 0, 5), g2 = fuzz_range(&in, 0, 9), g3 = fuzz_range(&in, 0, 17);
        if (ac.layout == PE_LAYOUT_BHSD) {
            ac.strides.seq = D + g1, ac.strides.heads = S * (D + g1) + g2;
            ac.strides.batch = H * ac.strides.heads + g3;
        } else {
            ac.strides.heads = D + g1, ac.strides.seq = H * (D + g1) + g2;
            ac.strides.batch = S * ac.strides.seq + g3;
        }
        ac.offset = fuzz_range(&in, 0, 33);
        break;
    }
    case 2:
        ac.strides.batch = fuzz_range(&in, -1, 4 * D * (H > 0 ? H : 1) * (S > 0 ? S : 1));
        ac.strides.seq = fuzz_range(&in, -1, 3 * D * (H > 0 ? H : 1));
        ac.strides.heads = fuzz_range(&in, -1, 3 * D);
        ac.offset = fuzz_range(&in, -1, 9);
        break;
    default: break;
    }
    const view v = {ac.strides.batch ? ac.strides.batch : dense_sb, ac.strides.seq ? ac.strides.seq : dense_ss,
                    ac.strides.heads ? ac.strides.heads : dense_sh, ac.offset};
    const int bad_shape = B < 0 || S < 0 || H < 0 || v.sb < 0 || v.ss < 0 || v.sh < 0 || v.offset < 0;
    const int64_t n_vec = bad_shape ? 0 : B * S * H;
    /* x spans exactly offset .. the end of the furthest head vector */
    const int64_t extent = n_vec ? at(&v, B - 1, S - 1, H - 1) + D : 0;
    if (extent > (1 << 15)) return 0; /* keeps a run well under a millisecond; the corners are all smaller */
    const size_t nf = (size_t)rope.n_freq, rot = (size_t)rope.rot_dim, nx = (size_t)extent;
    const size_t n_rows = bad_shape ? 1 : ac.per_batch_rows ? (size_t)(B * S) : (size_t)S;

    fuzz_rng rng = fuzz_rng_from(&in);
    int32_t *pos = fuzz_alloc(n_rows, sizeof *pos);
    for (size_t i = 0; i < n_rows; i++)
        pos[i] = wild_positions ? (int32_t)(uint32_t)fuzz_rng_next(&rng) : (int32_t)(fuzz_rng_next(&rng) % 70000);
    float *cos = fuzz_alloc(n_rows * nf, sizeof(float)), *sin = fuzz_alloc(n_rows * nf, sizeof(float));
    float *x = fuzz_alloc(nx ? nx : 1, sizeof(float)), *x0 = fuzz_alloc(nx ? nx : 1, sizeof(float));
    fuzz_fill(x, nx ? nx : 1, &rng, 4.0f);
    memcpy(x0, x, (nx ? nx : 1) * sizeof(float));

    if (pe_rope_cos_sin(cos, sin, &rope, pos, (int32_t)n_rows, seq_len, extra) == PE_OK) {
        fuzz_require(fuzz_first_nonfinite(cos, n_rows * nf) < 0 && fuzz_first_nonfinite(sin, n_rows * nf) < 0,
                     "accepted table has a non-finite value (extra_scale %g, attention scaling %g, type %d, "
                     "seq_len %lld)",
                     extra, rope.attention_scaling, rope.config.type, (long long)seq_len);
        const pe_status st = pe_rope_apply(&rope, x, cos, sin, &ac);
        if (bad_shape)
            fuzz_require(st != PE_OK,
                         "negative count, stride or offset accepted (%lld %lld %lld, strides %lld "
                         "%lld %lld, offset %lld)",
                         (long long)B, (long long)S, (long long)H, (long long)ac.strides.batch,
                         (long long)ac.strides.seq, (long long)ac.strides.heads, (long long)ac.offset);
        if (st != PE_OK) {
            fuzz_require(memcmp(x, x0, (nx ? nx : 1) * sizeof(float)) == 0, "refused apply (%s) modified x",
                         pe_status_string(st));
        } else if (n_vec) {
            /* which elements belong to a head vector; accepted views must not overlap */
            unsigned char *owner = calloc(nx, 1);
            for (int64_t b = 0; b < B; b++)
                for (int64_t s = 0; s < S; s++)
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t d = 0; d < D; d++)
                            if (owner[at(&v, b, s, h) + d]++)
                                fuzz_fail("accepted strides whose head vectors overlap "
                                          "(strides %lld %lld %lld, D %lld)",
                                          (long long)v.sb, (long long)v.ss, (long long)v.sh, (long long)D);
            for (size_t i = 0; i < nx; i++)
                fuzz_require(owner[i] || memcmp(x + i, x0 + i, 4) == 0, "element %zu outside every head vector changed",
                             i);
            free(owner);
            const long bad = fuzz_first_nonfinite(x, nx);
            fuzz_require(bad < 0, "x[%ld] = %g after apply", bad, bad < 0 ? 0.0 : x[bad]);
            const double scale = (double)cos[0] * cos[0] + (double)sin[0] * sin[0]; /* s^2, from row 0 pair 0 */
            const size_t half = rope.config.pairing == PE_PAIRING_INTERLEAVED ? 0 : nf;
            for (int64_t b = 0; b < B; b++)
                for (int64_t s = 0; s < S; s++)
                    for (int64_t h = 0; h < H; h++) {
                        const float *a = x + at(&v, b, s, h), *a0 = x0 + at(&v, b, s, h);
                        fuzz_require(memcmp(a + rot, a0 + rot, ((size_t)D - rot) * sizeof(float)) == 0,
                                     "pass-through dims of head vector (%lld, %lld, %lld) changed", (long long)b,
                                     (long long)s, (long long)h);
                        for (size_t i = 0; i < nf; i++) {
                            const size_t ia = half ? i : 2 * i, ib = half ? i + half : 2 * i + 1;
                            const double n1 = (double)a[ia] * a[ia] + (double)a[ib] * a[ib];
                            const double n0 = (double)a0[ia] * a0[ia] + (double)a0[ib] * a0[ib];
                            fuzz_require(fabs(n1 - scale * n0) <= 1e-5 * (n1 + scale * n0) + 1e-30,
                                         "pair %zu of head vector (%lld, %lld, %lld): |x'|^2 %g vs s^2 |x|^2 %g", i,
                                         (long long)b, (long long)s, (long long)h, n1, scale * n0);
                        }
                    }
        }
    }
    free(pos), free(cos), free(sin), free(x), free(x0);
    return 0;
}
