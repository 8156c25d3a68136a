/* test_f16_rope.c — pe_rope_apply with float16 / bfloat16 storage (pe_rope_apply_config.dtype).
 *
 * On random shapes (head dims, partial rotary, both pairings, both layouts, shared and per-token rows,
 * forward and inverse, offsets, positions up to 2^31 - 1, default / linear / yarn tables):
 *   - exact: the 16-bit result is the float32 apply of the widened inputs, rounded to nearest even (the
 *     arithmetic is the float32 path's), and every dimension past rot_dim keeps its bits;
 *   - accuracy: each result against the float64 rotation (double cos/sin of the double angle, times the
 *     attention factor) of the same 16-bit inputs, in ulps of the storage type at the exact result. The bound
 *     asserted is 1 ulp plus the float32 arithmetic's own error, 2^-22 of the pair's magnitude (it matters only
 *     when a result cancels to far below its inputs); the worst ulps and how many results needed the second
 *     term are printed.
 * Also: unknown dtype is PE_ERR_FIELD_VALUE; NaN and Inf inputs give NaN / Inf like float32 arithmetic. */
#include "posenc.h"
#include "test_util.h"
#include "../../c/src/f16.h"

#include <stdlib.h>

static float widen(int bf16, uint16_t h) { return bf16 ? pe__bf16_to_f32(h) : pe__f16_to_f32(h); }
static uint16_t narrow(int bf16, float f) { return bf16 ? pe__f32_to_bf16(f) : pe__f32_to_f16(f); }

/* spacing of the storage format at |r| */
static double storage_ulp(int bf16, double r) {
    const int mant = bf16 ? 7 : 10, min_exp = bf16 ? -126 : -14;
    int e;
    frexp(fabs(r), &e);
    e -= 1;
    if (r == 0 || e < min_exp) e = min_exp;
    return ldexp(1.0, e - mant);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) exit(2);
    return p;
}

typedef struct {
    long results, over_1ulp, failures, exact_mismatch, passthrough_changed;
    double worst_ulps[2];
} stats;

static void run_case(pe_rng *rng, stats *st) {
    pe_rope_config c = {0};
    c.head_dim = 2 * pe_rng_int(rng, 1, pe_rng_int(rng, 0, 3) ? 40 : 256);
    if (pe_rng_int(rng, 0, 2) == 0) c.rotary_dim = 2 * pe_rng_int(rng, 1, c.head_dim / 2);
    c.base = pe_rng_int(rng, 0, 1) ? 10000.0 : 5e5;
    c.pairing = pe_rng_int(rng, 0, 1);
    switch (pe_rng_int(rng, 0, 2)) {
    case 0: c.type = PE_ROPE_DEFAULT; break;
    case 1:
        c.type = PE_ROPE_LINEAR;
        c.factor = 1 + pe_rng_int(rng, 0, 7);
        break;
    default:
        c.type = PE_ROPE_YARN; /* attention factor != 1 */
        c.factor = 8;
        c.original_max_position_embeddings = 4096;
    }
    pe_rope rope;
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    const int bf16 = pe_rng_int(rng, 0, 1);
    const int32_t D = c.head_dim, n = rope.n_freq, rot = rope.rot_dim;
    const int32_t B = pe_rng_int(rng, 1, 3), S = pe_rng_int(rng, 1, 9), H = pe_rng_int(rng, 1, 5);
    const int bhsd = pe_rng_int(rng, 0, 1), per_batch = pe_rng_int(rng, 0, 1), inverse = pe_rng_int(rng, 0, 1);
    const int64_t offset = pe_rng_int(rng, 0, 1) ? pe_rng_int(rng, 1, 37) : 0;
    const int32_t rows = per_batch ? B * S : S;
    int32_t *pos = xmalloc(sizeof(int32_t) * (size_t)rows);
    for (int32_t r = 0; r < rows; r++) pos[r] = random_position(rng);
    float *cs = xmalloc(sizeof(float) * (size_t)rows * n), *sn = xmalloc(sizeof(float) * (size_t)rows * n);
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, rows, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
    double inv[PE_ROPE_MAX_FREQ], att;
    CHECK_STATUS(pe_rope_inv_freq(inv, &att, &rope, PE_SEQ_LEN_NONE), PE_OK);

    const size_t total = (size_t)B * S * H * D, len = total + (size_t)offset;
    uint16_t *x = xmalloc(2 * len), *x0 = xmalloc(2 * len);
    float *xf = xmalloc(4 * len);
    /* magnitudes from tiny (subnormal results) to large (near the f16 range's top / 2) */
    const double amp = ldexp(1.0, pe_rng_int(rng, bf16 ? -130 : -20, 14));
    for (size_t i = 0; i < len; i++) {
        x0[i] = narrow(bf16, (float)(pe_rng_float(rng) * amp));
        xf[i] = widen(bf16, x0[i]);
    }
    memcpy(x, x0, 2 * len);
    pe_rope_apply_config ac = {.batch = B,
                               .seq = S,
                               .heads = H,
                               .layout = bhsd ? PE_LAYOUT_BHSD : PE_LAYOUT_BSHD,
                               .per_batch_rows = per_batch,
                               .rotation = inverse ? PE_ROTATE_INVERSE : PE_ROTATE_FORWARD,
                               .offset = offset,
                               .dtype = bf16 ? PE_DTYPE_BFLOAT16 : PE_DTYPE_FLOAT16};
    CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &ac), PE_OK);
    ac.dtype = PE_DTYPE_FLOAT32;
    CHECK_STATUS(pe_rope_apply(&rope, xf, cs, sn, &ac), PE_OK);

    for (size_t i = 0; i < (size_t)offset; i++) st->passthrough_changed += x[i] != x0[i];
    for (int32_t b = 0; b < B; b++)
        for (int32_t s = 0; s < S; s++)
            for (int32_t h = 0; h < H; h++) {
                const size_t head =
                    (size_t)offset + (bhsd ? (((size_t)b * H + h) * S + s) : (((size_t)b * S + s) * H + h)) * D;
                const int32_t p = pos[per_batch ? b * S + s : s];
                for (int32_t d = 0; d < D; d++) {
                    const size_t k = head + d;
                    if (x[k] != narrow(bf16, xf[k]) && st->exact_mismatch++ < 5)
                        fprintf(stderr, "exact: 0x%04x vs narrow(f32 apply) 0x%04x\n", x[k], narrow(bf16, xf[k]));
                    if (d >= rot) st->passthrough_changed += x[k] != x0[k];
                }
                for (int32_t i = 0; i < n; i++) {
                    const size_t ia = head + (c.pairing ? 2 * (size_t)i : (size_t)i);
                    const size_t ib = head + (c.pairing ? 2 * (size_t)i + 1 : (size_t)(i + n));
                    const double xa = widen(bf16, x0[ia]), xb = widen(bf16, x0[ib]);
                    const double a = (double)p * inv[i], co = cos(a) * att, si = sin(a) * att;
                    const double ra = inverse ? xa * co + xb * si : xa * co - xb * si;
                    const double rb = inverse ? xb * co - xa * si : xb * co + xa * si;
                    const double f32_err = ldexp(fabs(att) * (fabs(xa) + fabs(xb)), -22);
                    const double want[2] = {ra, rb};
                    const size_t at[2] = {ia, ib};
                    for (int j = 0; j < 2; j++) {
                        const double got = widen(bf16, x[at[j]]), ulp = storage_ulp(bf16, want[j]);
                        const double err = fabs(got - want[j]), ulps = err / ulp;
                        st->results++;
                        if (ulps > st->worst_ulps[bf16]) st->worst_ulps[bf16] = ulps;
                        if (ulps > 1) st->over_1ulp++;
                        if (err > ulp + f32_err && st->failures++ < 5)
                            fprintf(stderr, "%s: pos %d got %a want %a (%.3f ulps, inputs %a %a)\n",
                                    bf16 ? "bf16" : "f16", p, got, want[j], ulps, xa, xb);
                    }
                }
            }
    free(pos);
    free(cs);
    free(sn);
    free(x);
    free(x0);
    free(xf);
}

static void check_special_values(void) {
    pe_rope rope;
    pe_rope_config c = {.head_dim = 8};
    CHECK_STATUS(pe_rope_init(&rope, &c), PE_OK);
    int32_t pos[1] = {3};
    float cs[4], sn[4];
    CHECK_STATUS(pe_rope_cos_sin(cs, sn, &rope, pos, 1, PE_SEQ_LEN_FROM_POSITIONS, 1.0), PE_OK);
    for (int bf16 = 0; bf16 < 2; bf16++) {
        /* pair 0: (NaN, 1), pair 1: (Inf, 0), pairs 2, 3: (1, 1) */
        const uint16_t nan = bf16 ? 0x7fc0 : 0x7e00, inf = bf16 ? 0x7f80 : 0x7c00, one = bf16 ? 0x3f80 : 0x3c00;
        uint16_t x[8] = {nan, inf, one, one, one, 0, one, one};
        pe_rope_apply_config ac = {
            .batch = 1, .seq = 1, .heads = 1, .dtype = bf16 ? PE_DTYPE_BFLOAT16 : PE_DTYPE_FLOAT16};
        CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &ac), PE_OK);
        const float a0 = widen(bf16, x[0]), b0 = widen(bf16, x[4]), a1 = widen(bf16, x[1]);
        CHECK(isnan(a0) && isnan(b0), "NaN in a pair makes both results NaN (%s)", bf16 ? "bf16" : "f16");
        /* Inf * cos(3 theta_1) - 0 * sin(...): cos(3 * 10000^-0.25) = cos(0.3) > 0 -> +Inf; Inf * sin + 0 -> +Inf */
        CHECK(isinf(a1) && a1 > 0 && isinf(widen(bf16, x[5])), "Inf stays Inf (%s)", bf16 ? "bf16" : "f16");
        ac.dtype = 3;
        CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &ac), PE_ERR_FIELD_VALUE);
        ac.dtype = -1;
        CHECK_STATUS(pe_rope_apply(&rope, x, cs, sn, &ac), PE_ERR_FIELD_VALUE);
    }
}

int main(void) {
    pe_rng rng = {0x243f6a8885a308d3ULL};
    stats st = {0};
    const int cases = 1500;
    for (int k = 0; k < cases; k++) run_case(&rng, &st);
    CHECK(st.exact_mismatch == 0, "%ld results differ from the rounded float32 apply", st.exact_mismatch);
    CHECK(st.passthrough_changed == 0, "%ld elements outside the rotated part changed", st.passthrough_changed);
    CHECK(st.failures == 0, "%ld of %ld results beyond 1 ulp + the float32 error", st.failures, st.results);
    printf("test_f16_rope: %d cases, %ld results; worst %.4f ulps (float16), %.4f ulps (bfloat16); %ld over 1 ulp "
           "(all within the float32 arithmetic's error)\n",
           cases, st.results, st.worst_ulps[0], st.worst_ulps[1], st.over_1ulp);
    check_special_values();
    return pe_test_report("test_f16_rope");
}
