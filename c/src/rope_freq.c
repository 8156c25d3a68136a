/* rope_freq.c — RoPE inverse frequencies and attention factor for every scaling type.
 *
 * Each family follows Hugging Face transformers' ROPE_INIT_FUNCTIONS (modeling_rope_utils.py) exactly,
 * including its defaults and edge cases, but in double precision throughout: the tables built from these
 * frequencies form angles pos * inv_freq in double, and a float32 inv_freq alone would already move the angle
 * by ~8e-3 rad at position 131071.
 *
 *   default       theta_i = base^(-2i/r)                         r = rotary_dim, i < r/2   (Su et al. 2021)
 *   linear        theta_i / factor                                                         (Chen et al. 2023, PI)
 *   dynamic       base' = base * (f L / M - (f - 1))^(r / (r - 2)), L = max(seq_len, M)  (bloc97/emozilla, NTK)
 *   yarn          ramp between theta_i / f and theta_i over the correction range          (Peng et al. 2023)
 *   longrope      theta_i / ext_i, ext = long_factor iff seq_len > original max           (Ding et al. 2024)
 *   llama3        band-wise: low frequencies / f, high kept, smooth in between            (Meta, Llama 3.1)
 *   proportional  base^(-2i/head_dim) / f for i < rotary_dim/2, zero after (rotates the whole head)
 */
#include "posenc.h"
#include "rope_internal.h"

#include <math.h>
#include <string.h>

#define pe__def(v, d) ((v) ? (v) : (d))

static const double PE__PI = 3.14159265358979323846;

static int pe__positive_finite(double v) { return isfinite(v) && v > 0.0; }

/* theta_i = 1 / base^(2i / dim), written in HF's order of operations: 1 / (base ** (arange(0, dim, 2) / dim)). */
static void pe__default_inv_freq(double *inv_freq, int32_t n, double base, int32_t dim) {
    for (int32_t i = 0; i < n; i++) inv_freq[i] = 1.0 / pow(base, (double)(2 * i) / (double)dim);
}

/* YaRN's attention factor ("mscale"): 0.1 * m * ln(s) + 1, and 1 when the context is not extended. */
static double pe__yarn_mscale(double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * log(scale) + 1.0; }

/* The dimension at which a frequency turns num_rotations times over the original context (YaRN eq. 17). */
static double pe__yarn_correction_dim(double num_rotations, int32_t dim, double base, double original_max) {
    return (dim * log(original_max / (num_rotations * 2.0 * PE__PI))) / (2.0 * log(base));
}

static void pe__yarn_inv_freq(double *inv_freq, const pe_rope_config *c, int32_t dim) {
    double low = pe__yarn_correction_dim(c->beta_fast, dim, c->base, c->original_max_position_embeddings);
    double high = pe__yarn_correction_dim(c->beta_slow, dim, c->base, c->original_max_position_embeddings);
    if (!c->yarn_no_truncate) {
        low = floor(low);
        high = ceil(high);
    }
    if (low < 0.0) low = 0.0;
    if (high > dim - 1) high = dim - 1;
    if (low == high) high += 0.001; /* HF: prevent a singular ramp */

    for (int32_t i = 0; i < dim / 2; i++) {
        double pos_freq = pow(c->base, (double)(2 * i) / (double)dim);
        double extrapolation = 1.0 / pos_freq;
        double interpolation = 1.0 / (c->factor * pos_freq);
        double ramp = ((double)i - low) / (high - low);
        ramp = ramp < 0.0 ? 0.0 : ramp > 1.0 ? 1.0 : ramp;
        double keep = 1.0 - ramp; /* 1 for fast (high-frequency) dimensions: they keep their original theta */
        inv_freq[i] = interpolation * (1.0 - keep) + extrapolation * keep;
    }
}

static void pe__longrope_inv_freq(double *inv_freq, const double *ext, double base, int32_t dim) {
    for (int32_t i = 0; i < dim / 2; i++) inv_freq[i] = 1.0 / (ext[i] * pow(base, (double)(2 * i) / (double)dim));
}

static void pe__llama3_inv_freq(double *inv_freq, const pe_rope_config *c, int32_t dim) {
    double orig = c->original_max_position_embeddings;
    double low_freq_wavelen = orig / c->low_freq_factor;
    double high_freq_wavelen = orig / c->high_freq_factor;
    pe__default_inv_freq(inv_freq, dim / 2, c->base, dim);
    for (int32_t i = 0; i < dim / 2; i++) {
        double theta = inv_freq[i];
        double wavelen = 2.0 * PE__PI / theta;
        if (wavelen > low_freq_wavelen) {
            inv_freq[i] = theta / c->factor;
        } else if (!(wavelen < high_freq_wavelen)) { /* medium band, boundaries included */
            double s = (orig / wavelen - c->low_freq_factor) / (c->high_freq_factor - c->low_freq_factor);
            inv_freq[i] = (1.0 - s) * theta / c->factor + s * theta;
        }
    }
}

static void pe__dynamic_inv_freq(double *inv_freq, const pe_rope_config *c, int32_t dim, int64_t seq_len) {
    double m = c->max_position_embeddings;
    double l = seq_len > c->max_position_embeddings ? (double)seq_len : m;
    double base = c->base;
    if (dim > 2) base *= pow(c->factor * l / m - (c->factor - 1.0), (double)dim / (double)(dim - 2));
    pe__default_inv_freq(inv_freq, dim / 2, base, dim);
}

/* Every angle pos * inv_freq of every int32 position must stay below PE_MAX_ANGLE, where the reduction in
 * rope.c is exact (pe_math.h): 0 <= inv_freq <= PE_ROPE_MAX_INV_FREQ. Written so that NaN fails. */
int pe__rope_freqs_in_range(const double *inv_freq, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (!(inv_freq[i] >= 0.0 && inv_freq[i] <= PE_ROPE_MAX_INV_FREQ)) return 0;
    return 1;
}

/* Which field to blame for a table out of range: base when base alone (the unscaled theta_i over the
 * same exponent) already leaves the range, else the scaling factors. */
static pe_status pe__rope_range_status(const pe_rope_config *c) {
    double theta[PE_ROPE_MAX_FREQ];
    const int32_t dim = c->rotary_dim, exp_dim = c->type == PE_ROPE_PROPORTIONAL ? c->head_dim : dim;
    pe__default_inv_freq(theta, dim / 2, c->base, exp_dim);
    return pe__rope_freqs_in_range(theta, dim / 2) ? PE_ERR_FACTOR : PE_ERR_BASE;
}

/* Validates the fields each type reads and fills in defaults, HF's way. */
static pe_status pe__rope_resolve(pe_rope_config *c) {
    if (c->head_dim < 2 || c->head_dim > PE_ROPE_MAX_HEAD_DIM || c->head_dim % 2) return PE_ERR_HEAD_DIM;
    c->rotary_dim = pe__def(c->rotary_dim, c->head_dim);
    if (c->rotary_dim < 2 || c->rotary_dim > c->head_dim || c->rotary_dim % 2) return PE_ERR_ROTARY_DIM;
    c->base = pe__def(c->base, 10000.0);
    if (!pe__positive_finite(c->base)) return PE_ERR_BASE;
    if ((unsigned)c->type >= (unsigned)PE_ROPE_TYPE_COUNT) return PE_ERR_ROPE_TYPE;
    if (c->pairing != PE_PAIRING_HALF && c->pairing != PE_PAIRING_INTERLEAVED) return PE_ERR_PAIRING;
    if (c->factor != 0.0 && !pe__positive_finite(c->factor)) return PE_ERR_FACTOR;
    if (c->attention_factor != 0.0 && !pe__positive_finite(c->attention_factor)) return PE_ERR_FACTOR;
    if (c->max_position_embeddings < 0 || c->original_max_position_embeddings < 0) return PE_ERR_FIELD_VALUE;

    switch ((pe_rope_type)c->type) {
    case PE_ROPE_DEFAULT: break;
    case PE_ROPE_LINEAR:
        if (c->factor == 0.0) return PE_ERR_MISSING_FIELD;
        break;
    case PE_ROPE_DYNAMIC:
        if (c->factor == 0.0 || c->max_position_embeddings == 0) return PE_ERR_MISSING_FIELD;
        break;
    case PE_ROPE_YARN:
        c->original_max_position_embeddings = pe__def(c->original_max_position_embeddings, c->max_position_embeddings);
        if (c->original_max_position_embeddings == 0) return PE_ERR_MISSING_FIELD;
        if (c->factor == 0.0) {
            if (c->max_position_embeddings == 0) return PE_ERR_MISSING_FIELD;
            c->factor = (double)c->max_position_embeddings / c->original_max_position_embeddings;
        }
        if (c->base == 1.0) return PE_ERR_BASE; /* the correction range divides by ln(base) */
        c->beta_fast = pe__def(c->beta_fast, 32.0);
        c->beta_slow = pe__def(c->beta_slow, 1.0);
        if (!pe__positive_finite(c->beta_fast) || !pe__positive_finite(c->beta_slow)) return PE_ERR_FIELD_VALUE;
        if (!isfinite(c->mscale) || !isfinite(c->mscale_all_dim)) return PE_ERR_FIELD_VALUE;
        if (c->attention_factor == 0.0) {
            c->attention_factor =
                (c->mscale != 0.0 && c->mscale_all_dim != 0.0)
                    ? pe__yarn_mscale(c->factor, c->mscale) / pe__yarn_mscale(c->factor, c->mscale_all_dim)
                    : pe__yarn_mscale(c->factor, 1.0);
        }
        break;
    case PE_ROPE_LONGROPE:
        if (!c->short_factor || !c->long_factor) return PE_ERR_MISSING_FIELD;
        c->original_max_position_embeddings = pe__def(c->original_max_position_embeddings, c->max_position_embeddings);
        if (c->original_max_position_embeddings == 0) return PE_ERR_MISSING_FIELD;
        if (c->factor == 0.0)
            c->factor = c->max_position_embeddings
                            ? (double)c->max_position_embeddings / c->original_max_position_embeddings
                            : 1.0;
        if (c->attention_factor == 0.0) {
            c->attention_factor =
                c->factor <= 1.0 ? 1.0 : sqrt(1.0 + log(c->factor) / log((double)c->original_max_position_embeddings));
        }
        for (int32_t i = 0; i < c->rotary_dim / 2; i++)
            if (!pe__positive_finite(c->short_factor[i]) || !pe__positive_finite(c->long_factor[i]))
                return PE_ERR_FACTOR;
        break;
    case PE_ROPE_LLAMA3:
        if (c->factor == 0.0 || c->low_freq_factor == 0.0 || c->high_freq_factor == 0.0 ||
            c->original_max_position_embeddings == 0)
            return PE_ERR_MISSING_FIELD;
        if (!pe__positive_finite(c->low_freq_factor) || !pe__positive_finite(c->high_freq_factor) ||
            !(c->high_freq_factor > c->low_freq_factor))
            return PE_ERR_FIELD_VALUE;
        break;
    case PE_ROPE_PROPORTIONAL: c->factor = pe__def(c->factor, 1.0); break;
    default: return PE_ERR_ROPE_TYPE;
    }
    c->attention_factor = pe__def(c->attention_factor, 1.0);
    return PE_OK;
}

pe_status pe_rope_init(pe_rope *rope, const pe_rope_config *cfg) {
    if (!rope || !cfg) return PE_ERR_NULL;
    pe_rope_config c = *cfg;
    pe_status st = pe__rope_resolve(&c);
    if (st != PE_OK) return st;

    memset(rope, 0, sizeof *rope);
    rope->config = c;
    rope->rot_dim = c.type == PE_ROPE_PROPORTIONAL ? c.head_dim : c.rotary_dim;
    rope->n_freq = rope->rot_dim / 2;
    rope->attention_scaling = c.type == PE_ROPE_YARN || c.type == PE_ROPE_LONGROPE ? c.attention_factor : 1.0;

    int32_t dim = c.rotary_dim;
    switch ((pe_rope_type)c.type) {
    case PE_ROPE_DEFAULT: pe__default_inv_freq(rope->inv_freq, dim / 2, c.base, dim); break;
    case PE_ROPE_LINEAR:
        pe__default_inv_freq(rope->inv_freq, dim / 2, c.base, dim);
        for (int32_t i = 0; i < dim / 2; i++) rope->inv_freq[i] /= c.factor;
        break;
    case PE_ROPE_DYNAMIC: pe__dynamic_inv_freq(rope->inv_freq, &c, dim, PE_SEQ_LEN_NONE); break;
    case PE_ROPE_YARN: pe__yarn_inv_freq(rope->inv_freq, &c, dim); break;
    case PE_ROPE_LONGROPE:
        pe__longrope_inv_freq(rope->inv_freq, c.short_factor, c.base, dim);
        pe__longrope_inv_freq(rope->inv_freq_long, c.long_factor, c.base, dim);
        break;
    case PE_ROPE_LLAMA3: pe__llama3_inv_freq(rope->inv_freq, &c, dim); break;
    case PE_ROPE_PROPORTIONAL:
        /* exponent over head_dim, not the rotated width; the tail stays zero (rotation by angle 0) */
        pe__default_inv_freq(rope->inv_freq, dim / 2, c.base, c.head_dim);
        for (int32_t i = 0; i < dim / 2; i++) rope->inv_freq[i] /= c.factor;
        break;
    default: return PE_ERR_ROPE_TYPE;
    }
    /* Refused here rather than producing garbage later: angles past PE_MAX_ANGLE lose their quadrant (and past
     * 2^51 cos/sin leave [-1, 1]), a non-finite frequency gives NaN, a non-finite or huge attention factor
     * non-finite tables. Dynamic NTK only lowers the frequencies as seq_len grows (its base only grows),
     * so the table at init bounds every later one; pe_rope_cos_sin checks recomputed tables anyway. */
    if (!pe__rope_freqs_in_range(rope->inv_freq, dim / 2) ||
        (c.type == PE_ROPE_LONGROPE && !pe__rope_freqs_in_range(rope->inv_freq_long, dim / 2)))
        return pe__rope_range_status(&c);
    if (!(fabs(rope->attention_scaling) <= PE_ROPE_MAX_SCALE)) return PE_ERR_ATTENTION_FACTOR;
    rope->config.short_factor = NULL; /* resolved into the tables; the caller's arrays may go away */
    rope->config.long_factor = NULL;
    return PE_OK;
}

const double *pe__rope_inv_freq_at(const pe_rope *rope, int64_t seq_len, double *scratch) {
    const pe_rope_config *c = &rope->config;
    if (c->type == PE_ROPE_DYNAMIC && seq_len > c->max_position_embeddings) {
        pe__dynamic_inv_freq(scratch, c, c->rotary_dim, seq_len);
        /* a recomputed set is checked like the ones pe_rope_init checked */
        return pe__rope_freqs_in_range(scratch, rope->n_freq) ? scratch : NULL;
    }
    if (c->type == PE_ROPE_LONGROPE && seq_len > c->original_max_position_embeddings) return rope->inv_freq_long;
    return rope->inv_freq;
}

pe_status pe_rope_inv_freq(double *inv_freq, double *attention_scaling, const pe_rope *rope, int64_t seq_len) {
    if (!rope) return PE_ERR_NULL;
    if (seq_len < 0) return PE_ERR_SEQ_LEN;
    if (attention_scaling) *attention_scaling = rope->attention_scaling;
    if (!inv_freq) return PE_OK;
    const double *src = pe__rope_inv_freq_at(rope, seq_len, inv_freq);
    if (!src) return PE_ERR_FACTOR;
    if (src != inv_freq) memcpy(inv_freq, src, (size_t)rope->n_freq * sizeof *inv_freq);
    return PE_OK;
}
