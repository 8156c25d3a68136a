/* fuzz_rope_init.c — pe_rope_init on random configs of every scaling type, then what an accepted config
 * computes: pe_rope_inv_freq at several sequence lengths and pe_rope_cos_sin at the positions where angles
 * are largest (up to INT32_MAX).
 *
 * Strict invariants for an accepted config (the hardening promise: refuse it at init, or give finite, right
 * numbers for every position the API accepts):
 *   - inverse frequencies finite and >= 0, attention scaling finite;
 *   - every cos/sin finite and |cos|, |sin| <= |scale| (up to float rounding), cos^2 + sin^2 = scale^2
 *     (a quadrant lost to an unreduced angle still passes that, a value outside [-1, 1] does not). */
#include "fuzz.h"

static pe_rope rope; /* 12 KiB: not on the fuzzer's stack */
static double factors[2][PE_ROPE_MAX_FREQ];

static pe_rope_config random_config(fuzz_input *in) {
    pe_rope_config c = {0};
    c.type = (int32_t)fuzz_range(in, -1, PE_ROPE_TYPE_COUNT);
    c.head_dim = fuzz_bool(in) ? 2 * (int32_t)fuzz_range(in, 1, 128) : fuzz_int32(in, PE_ROPE_MAX_HEAD_DIM + 2);
    if (fuzz_bool(in)) c.rotary_dim = fuzz_bool(in) ? 2 * (int32_t)fuzz_range(in, 1, 64) : fuzz_int32(in, 300);
    c.pairing = (int32_t)fuzz_range(in, -1, 2);
    if (fuzz_bool(in)) c.base = fuzz_double(in, 1.0, 2e6);
    if (fuzz_bool(in)) c.factor = fuzz_double(in, 0.0, 64.0);
    if (fuzz_bool(in)) c.max_position_embeddings = fuzz_int32(in, 1 << 20);
    if (fuzz_bool(in)) c.original_max_position_embeddings = fuzz_int32(in, 1 << 17);
    if (fuzz_bool(in)) c.attention_factor = fuzz_double(in, 0.0, 4.0);
    if (fuzz_bool(in)) c.beta_fast = fuzz_double(in, 0.0, 64.0);
    if (fuzz_bool(in)) c.beta_slow = fuzz_double(in, 0.0, 4.0);
    if (fuzz_bool(in)) c.mscale = fuzz_double(in, 0.0, 2.0);
    if (fuzz_bool(in)) c.mscale_all_dim = fuzz_double(in, 0.0, 2.0);
    c.yarn_no_truncate = fuzz_bool(in);
    if (fuzz_bool(in)) c.low_freq_factor = fuzz_double(in, 0.0, 4.0);
    if (fuzz_bool(in)) c.high_freq_factor = fuzz_double(in, 0.0, 8.0);
    if (fuzz_bool(in)) {
        /* longrope's factor arrays: as many as the config will read (PE_ROPE_MAX_FREQ), mostly one value */
        const double s = fuzz_double(in, 0.5, 8.0), l = fuzz_double(in, 0.5, 64.0);
        for (int i = 0; i < PE_ROPE_MAX_FREQ; i++) {
            factors[0][i] = s * (1.0 + 0.01 * i);
            factors[1][i] = l * (1.0 + 0.1 * i);
        }
        if (fuzz_bool(in)) factors[fuzz_range(in, 0, 1)][fuzz_range(in, 0, 63)] = fuzz_double(in, 0.0, 1.0);
        c.short_factor = factors[0];
        c.long_factor = factors[1];
    }
    return c;
}

static void check_table(const float *cos, const float *sin, int32_t n_pos, int32_t n_freq, double scale,
                        const int32_t *pos) {
    const double s = fabs(scale);
    for (int32_t p = 0; p < n_pos; p++)
        for (int32_t i = 0; i < n_freq; i++) {
            const double c = cos[(size_t)p * n_freq + i], sn = sin[(size_t)p * n_freq + i];
            fuzz_require(isfinite(c) && isfinite(sn),
                         "cos/sin not finite: position %d freq %d: cos %g sin %g "
                         "(scale %g, type %d, inv_freq %g)",
                         pos[p], i, c, sn, scale, rope.config.type, rope.inv_freq[i]);
            /* float32 rounding of the polynomial and of scale: a few ulp */
            const double tol = s * 4e-7 + 1e-37;
            fuzz_require(fabs(c) <= s + tol && fabs(sn) <= s + tol,
                         "|cos| or |sin| above the scale: position %d "
                         "freq %d: cos %g sin %g scale %g (inv_freq %g)",
                         pos[p], i, c, sn, scale, rope.inv_freq[i]);
            fuzz_require(fabs(c * c + sn * sn - s * s) <= s * s * 2e-6 + 1e-37,
                         "cos^2 + sin^2 != scale^2: position %d "
                         "freq %d: cos %g sin %g scale %g",
                         pos[p], i, c, sn, scale);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_input in = {data, size};
    pe_rope_config cfg = random_config(&in);
    if (pe_rope_init(&rope, &cfg) != PE_OK) return 0;

    fuzz_require(rope.n_freq >= 1 && rope.n_freq <= PE_ROPE_MAX_FREQ && rope.rot_dim == 2 * rope.n_freq,
                 "accepted rope has n_freq %d, rot_dim %d", rope.n_freq, rope.rot_dim);
    static const int64_t lens[] = {PE_SEQ_LEN_NONE, 1, 4096, 4097, 131072, (int64_t)INT32_MAX + 1};
    double inv[PE_ROPE_MAX_FREQ];
    for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
        double scaling = NAN;
        if (pe_rope_inv_freq(inv, &scaling, &rope, lens[l]) != PE_OK) continue;
        fuzz_require(isfinite(scaling), "attention scaling %g at seq_len %lld", scaling, (long long)lens[l]);
        for (int32_t i = 0; i < rope.n_freq; i++)
            fuzz_require(isfinite(inv[i]) && inv[i] >= 0.0, "inv_freq[%d] = %g at seq_len %lld (type %d)", i, inv[i],
                         (long long)lens[l], rope.config.type);
    }

    /* the largest angles: the top int32 positions, plus a few the input picks */
    int32_t pos[6] = {0, 1, INT32_MAX, INT32_MAX - 1, 0, 0};
    pos[4] = (int32_t)fuzz_range(&in, 0, INT32_MAX);
    pos[5] = (int32_t)fuzz_range(&in, 0, 1 << 17);
    const int32_t n_pos = 6, nf = rope.n_freq;
    const int64_t seq_len = fuzz_bool(&in) ? PE_SEQ_LEN_FROM_POSITIONS : PE_SEQ_LEN_NONE;
    const double extra = fuzz_bool(&in) ? 1.0 : fuzz_double(&in, 0.0, 2.0);
    float *cos = fuzz_alloc((size_t)n_pos * nf, sizeof(float)), *sin = fuzz_alloc((size_t)n_pos * nf, sizeof(float));
    if (pe_rope_cos_sin(cos, sin, &rope, pos, n_pos, seq_len, extra) == PE_OK) {
        double scaling = NAN;
        const int64_t at = seq_len == PE_SEQ_LEN_FROM_POSITIONS ? (int64_t)INT32_MAX + 1 : PE_SEQ_LEN_NONE;
        if (pe_rope_inv_freq(inv, &scaling, &rope, at) == PE_OK)
            check_table(cos, sin, n_pos, nf, (double)(float)(scaling * extra), pos);
    }
    free(cos);
    free(sin);
    return 0;
}
