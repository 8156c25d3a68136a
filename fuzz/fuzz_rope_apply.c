/* fuzz_rope_apply.c — pe_rope_cos_sin and pe_rope_apply on random shapes, positions, layouts, pairings,
 * partial rotary dims, per-token rows and rotations (including invalid ones and zero counts), with every
 * buffer — positions, cos, sin, x — allocated to exactly the size its shape gives, so AddressSanitizer
 * reports any element read or written past it.
 *
 * Strict invariants when both calls are accepted:
 *   - x stays finite (its inputs are bounded, |x| <= 4, so a non-finite value is the kernel's);
 *   - dimensions >= rot_dim of every head are untouched, bit for bit;
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
    default: if (fuzz_bool(in)) c.base = (double)fuzz_range(in, 2, 5000000); break;
    }
    return pe_rope_init(&rope, &c) == PE_OK;
}

static int32_t apply(float *x, const float *cos, const float *sin, int32_t B, int32_t S, int32_t H, int32_t layout,
                     int32_t per_batch, int32_t rotation) {
    const pe_rope_apply_config ac = {
        .batch = B, .seq = S, .heads = H, .layout = layout, .per_batch_rows = per_batch, .rotation = rotation};
    return pe_rope_apply(&rope, x, cos, sin, &ac);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size};
    if (!make_rope(&in)) return 0;
    const int32_t B = (int32_t)fuzz_range(&in, -1, 4), S = (int32_t)fuzz_range(&in, -1, 40);
    const int32_t H = (int32_t)fuzz_range(&in, -1, 9);
    const int32_t layout = (int32_t)fuzz_range(&in, -1, 2), rotation = (int32_t)fuzz_range(&in, -1, 2);
    const int32_t per_batch = fuzz_bool(&in);
    const int wild_positions = fuzz_range(&in, 0, 3) == 0;
    const int64_t seq_len = fuzz_bool(&in) ? PE_SEQ_LEN_FROM_POSITIONS : fuzz_range(&in, 0, 1 << 16);
    const double extra = fuzz_bool(&in) ? 1.0 : fuzz_double(&in, 0.25, 2.0);
    if (B < 0 || S < 0 || H < 0) { /* negative counts: refused, nothing touched */
        float x = 1.0f, c = 1.0f, s = 0.0f;
        fuzz_require(apply(&x, &c, &s, B, S, H, layout, per_batch, rotation) != PE_OK, "negative count accepted");
        return 0;
    }
    const size_t D = (size_t)rope.config.head_dim, nf = (size_t)rope.n_freq, rot = (size_t)rope.rot_dim;
    const size_t n_rows = per_batch ? (size_t)B * S : (size_t)S;
    const size_t nx = (size_t)B * S * H * D;
    if (nx > (1 << 15)) return 0; /* keeps a run well under a millisecond; the shapes' corners are all smaller */

    fuzz_rng rng = fuzz_rng_from(&in);
    int32_t *pos = fuzz_alloc(n_rows, sizeof *pos);
    for (size_t i = 0; i < n_rows; i++)
        pos[i] = wild_positions ? (int32_t)(uint32_t)fuzz_rng_next(&rng) : (int32_t)(fuzz_rng_next(&rng) % 70000);
    float *cos = fuzz_alloc(n_rows * nf, sizeof(float)), *sin = fuzz_alloc(n_rows * nf, sizeof(float));
    float *x = fuzz_alloc(nx, sizeof(float)), *x0 = fuzz_alloc(nx, sizeof(float));
    fuzz_fill(x, nx, &rng, 4.0f);
    if (nx) memcpy(x0, x, nx * sizeof(float));

    if (pe_rope_cos_sin(cos, sin, &rope, pos, (int32_t)n_rows, seq_len, extra) == PE_OK) {
        fuzz_require(fuzz_first_nonfinite(cos, n_rows * nf) < 0 && fuzz_first_nonfinite(sin, n_rows * nf) < 0,
                     "accepted table has a non-finite value (extra_scale %g, attention scaling %g, type %d, "
                     "seq_len %lld)", extra, rope.attention_scaling, rope.config.type, (long long)seq_len);
        const pe_status st = apply(x, cos, sin, B, S, H, layout, per_batch, rotation);
        if (st != PE_OK) {
            fuzz_require(nx == 0 || memcmp(x, x0, nx * sizeof(float)) == 0, "refused apply (%s) modified x",
                         pe_status_string(st));
        } else if (nx) {
            const long bad = fuzz_first_nonfinite(x, nx);
            fuzz_require(bad < 0, "x[%ld] = %g after apply", bad, bad < 0 ? 0.0 : x[bad]);
            const double scale = (double)cos[0] * cos[0] + (double)sin[0] * sin[0]; /* s^2, from row 0 pair 0 */
            const size_t half = rope.config.pairing == PE_PAIRING_INTERLEAVED ? 0 : nf;
            for (size_t h = 0; h < nx / D; h++) { /* every head vector, whatever the layout */
                const float *a = x + h * D, *a0 = x0 + h * D;
                fuzz_require(memcmp(a + rot, a0 + rot, (D - rot) * sizeof(float)) == 0,
                             "pass-through dims of head vector %zu changed", h);
                for (size_t i = 0; i < nf; i++) {
                    const size_t ia = half ? i : 2 * i, ib = half ? i + half : 2 * i + 1;
                    const double n1 = (double)a[ia] * a[ia] + (double)a[ib] * a[ib];
                    const double n0 = (double)a0[ia] * a0[ia] + (double)a0[ib] * a0[ib];
                    fuzz_require(fabs(n1 - scale * n0) <= 1e-5 * (n1 + scale * n0) + 1e-30,
                                 "pair %zu of head vector %zu: |x'|^2 %g vs s^2 |x|^2 %g", i, h, n1, scale * n0);
                }
            }
        }
    }
    free(pos), free(cos), free(sin), free(x), free(x0);
    return 0;
}
