/* posenc.h — position encodings for transformers. The only public header.
 *
 * Usage (RoPE, Llama layout, llama3 scaling; a whole program, compiled and run as a test):
 *
 *     #include <stdio.h>
 *     #include "posenc.h"
 *
 *     enum { BATCH = 1, SEQ = 4, HEADS = 2, HEAD_DIM = 128, N_FREQ = HEAD_DIM / 2 };
 *
 *     int main(void) {
 *         pe_rope_config cfg = {0};                   // zero means "the usual default" everywhere
 *         cfg.head_dim = HEAD_DIM;
 *         cfg.base = 500000.0;
 *         cfg.type = PE_ROPE_LLAMA3;
 *         cfg.factor = 8.0; cfg.low_freq_factor = 1.0; cfg.high_freq_factor = 4.0;
 *         cfg.original_max_position_embeddings = 8192;
 *
 *         pe_rope rope;                               // caller-owned, no allocation anywhere in posenc
 *         pe_status st = pe_rope_init(&rope, &cfg);   // validates and resolves the config once
 *         if (st != PE_OK) { fprintf(stderr, "%s\n", pe_status_string(st)); return 1; }
 *
 *         static float x[BATCH * SEQ * HEADS * HEAD_DIM];    // (batch, seq, heads, head_dim): BSHD
 *         for (int i = 0; i < BATCH * SEQ * HEADS * HEAD_DIM; i++) x[i] = 1.0f;
 *         int32_t positions[SEQ] = {0, 1, 2, 3};
 *         static float cos[SEQ * N_FREQ], sin[SEQ * N_FREQ]; // rope.n_freq = rotary_dim / 2 per position
 *         st = pe_rope_cos_sin(cos, sin, &rope, positions, SEQ, PE_SEQ_LEN_FROM_POSITIONS, 1.0);
 *
 *         pe_rope_apply_config ac = {0};              // layout BSHD, shared rows, forward rotation
 *         ac.batch = BATCH; ac.seq = SEQ; ac.heads = HEADS;
 *         if (st == PE_OK) st = pe_rope_apply(&rope, x, cos, sin, &ac);
 *         if (st != PE_OK) { fprintf(stderr, "%s\n", pe_status_string(st)); return 1; }
 *         printf("x[1, 0, 0] = %.6f\n", x[HEADS * HEAD_DIM]);  // cos 1 - sin 1 = -0.301169
 *         return 0;
 *     }
 *
 * Conventions: outputs first, then inputs, dimensions, then the config. Every function that can fail
 * returns pe_status; pe_status_string() names the failure. Tensors are dense float32, row-major.
 *
 * Sizes (one policy for every kernel):
 *   - Counts — batch, seq, n_positions, q_len, k_len, pe_sinusoidal_table's seq_len — may be 0: the call is a valid no-op that
 *     returns PE_OK and writes nothing (pe_attention with k_len 0 and q_len > 0: every query row sees no
 *     key, so out is all zeros, as for any fully masked row). Arrays with no elements may be NULL.
 *     Negative counts are PE_ERR_SHAPE.
 *   - Structural sizes — head_dim, rotary_dim, d_model, heads / n_heads / kv_heads, n_rows — must be >= 1
 *     (and whatever more each documents), also when a count is 0: a call is validated before it is found
 *     empty.
 *   - Every element count and byte count is formed in 64-bit arithmetic and refused when it cannot be
 *     addressed with size_t (32 bits on wasm32), never wrapped.
 *
 * Angles: every sin/cos is of position * frequency, formed in double and reduced exactly (Cody-Waite) as
 * long as it is below PE_MAX_ANGLE. Configurations are checked so that every int32 position stays there:
 * each frequency (RoPE inverse frequency, sinusoidal 1 / base^(2i/d)) is at most PE_MAX_FREQUENCY.
 */
#ifndef POSENC_H
#define POSENC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Status                                                                                         */
/* ---------------------------------------------------------------------------------------------- */

typedef enum pe_status {
    PE_OK = 0,
    PE_ERR_NULL,             /* a required pointer is NULL */
    PE_ERR_HEAD_DIM,         /* head_dim must be even and in [2, PE_ROPE_MAX_HEAD_DIM] */
    PE_ERR_ROTARY_DIM,       /* rotary_dim must be even and in [2, head_dim] */
    PE_ERR_BASE,             /* base (rope_theta) must be finite and > 0, and keep every frequency of the
                                  encoding at most PE_MAX_FREQUENCY; yarn: also != 1 (see pe_rope_config.base) */
    PE_ERR_FACTOR,           /* a scaling factor must be finite and > 0, and keep every inverse frequency at
                                  most PE_ROPE_MAX_INV_FREQ */
    PE_ERR_ROPE_TYPE,        /* unknown rope type */
    PE_ERR_PAIRING,          /* unknown pairing */
    PE_ERR_LAYOUT,           /* unknown layout */
    PE_ERR_MISSING_FIELD,    /* a field this rope type requires is zero / NULL */
    PE_ERR_FIELD_VALUE,      /* a field has a value outside its documented range */
    PE_ERR_POSITION,         /* a position is negative */
    PE_ERR_SHAPE,            /* a dimension is out of range, the sizes do not fit together, or an element
                                  count cannot be addressed with size_t (see "Sizes" above) */
    PE_ERR_SEQ_LEN,          /* seq_len is negative (other than PE_SEQ_LEN_FROM_POSITIONS) */
    PE_ERR_HEADS,            /* kv_heads does not divide heads, or a head count is < 1 */
    PE_ERR_SCALE,            /* a scale is not finite (pe_rope_cos_sin: or exceeds PE_ROPE_MAX_SCALE) */
    PE_ERR_OUT_OF_RANGE,     /* an index (a learned-table row) is past the end */
    PE_ERR_ATTENTION_FACTOR, /* RoPE's attention factor (attention_factor, or the one yarn derives from
                                  mscale / mscale_all_dim, or longrope's) is not finite or its magnitude
                                  exceeds PE_ROPE_MAX_SCALE */
    PE_STATUS_COUNT
} pe_status;

/* A static, human-readable description of the status; never NULL. */
const char *pe_status_string(pe_status status);

/* ---------------------------------------------------------------------------------------------- */
/* Shared enums                                                                                   */
/* ---------------------------------------------------------------------------------------------- */

/* Memory order of a 4-d tensor of heads. Both are dense; the head_dim axis is always innermost. */
typedef enum pe_layout {
    PE_LAYOUT_BSHD = 0, /* [batch, seq, heads, head_dim]  (PyTorch before .transpose(1, 2)) */
    PE_LAYOUT_BHSD = 1  /* [batch, heads, seq, head_dim]  (Hugging Face q/k inside attention) */
} pe_layout;

/* Which two dimensions of a head form one rotated pair.
 *   half-split (GPT-NeoX, Llama, HF rotate_half):   [x0 .. x(r/2-1) | x(r/2) .. x(r-1)], pair i = (i, i + r/2)
 *   interleaved (GPT-J, the RoFormer paper):        [(x0,x1), (x2,x3), ...],             pair i = (2i, 2i + 1)
 * Pair i turns by position * inv_freq[i] in both. */
typedef enum pe_pairing {
    PE_PAIRING_HALF = 0,
    PE_PAIRING_INTERLEAVED = 1
} pe_pairing;

/* ---------------------------------------------------------------------------------------------- */
/* RoPE — Su et al. 2021, "RoFormer: Enhanced Transformer with Rotary Position Embedding"         */
/* ---------------------------------------------------------------------------------------------- */

#define PE_ROPE_MAX_HEAD_DIM 1024
#define PE_ROPE_MAX_FREQ (PE_ROPE_MAX_HEAD_DIM / 2)

/* The exactness bound of the angle reduction (2^32 rad: pi/2's first two Cody-Waite parts carry 21 bits,
 * so k * part is exact for the k = nearest(angle * 2/pi) < 2^32 of every angle below it). Past it a double
 * angle loses the quadrant, and past 2^51 the result leaves [-1, 1]. */
#define PE_MAX_ANGLE 4294967296.0
/* The largest frequency (radians per position step) any encoding accepts: 2 * INT32_MAX < PE_MAX_ANGLE, so
 * every int32 position's angle is reduced exactly. Default RoPE and sinusoidal with base >= 1 stay <= 1. */
#define PE_MAX_FREQUENCY 2.0
/* pe_rope_init refuses a config whose resolved inverse frequencies (either longrope set; dynamic at its
 * own length) are not all in [0, PE_ROPE_MAX_INV_FREQ]: PE_ERR_BASE when base alone gives one (base < 1
 * with a large exponent, e.g. 5e-324), else PE_ERR_FACTOR (a scaling factor below ~1/2, e.g. linear
 * factor 1e-10). Dynamic NTK only lowers frequencies as seq_len grows. */
#define PE_ROPE_MAX_INV_FREQ PE_MAX_FREQUENCY
/* attention_scaling (and attention_scaling * extra_scale in pe_rope_cos_sin) must be finite with magnitude
 * at most this (2^127), so scale * cos stays a finite float32: PE_ERR_FIELD_VALUE / PE_ERR_SCALE. */
#define PE_ROPE_MAX_SCALE 1.7014118346046923e38

/* The scaling families of Hugging Face transformers' ROPE_INIT_FUNCTIONS. */
typedef enum pe_rope_type {
    PE_ROPE_DEFAULT = 0,      /* theta_i = base^(-2i/r) */
    PE_ROPE_LINEAR = 1,       /* position interpolation, Chen et al. 2023: theta_i / factor */
    PE_ROPE_DYNAMIC = 2,      /* dynamic NTK (bloc97, emozilla 2023): base grows with the sequence length */
    PE_ROPE_YARN = 3,         /* Peng et al. 2023, "YaRN": ramp between interpolated and original theta */
    PE_ROPE_LONGROPE = 4,     /* Ding et al. 2024, "LongRoPE": per-frequency rescale factors, short / long */
    PE_ROPE_LLAMA3 = 5,       /* Meta's Llama 3.1 band-wise scaling */
    PE_ROPE_PROPORTIONAL = 6, /* exponent over head_dim, zero frequencies past rotary_dim/2 (rotates all of head_dim) */
    PE_ROPE_TYPE_COUNT
} pe_rope_type;

/* One config covers every scaling type, like HF's rope_parameters / ggml's rope_ext arguments.
 * Every field's zero means the usual default; "required" fields have none and must be set. */
typedef struct pe_rope_config {
    int32_t head_dim;   /* required; even, 2 .. PE_ROPE_MAX_HEAD_DIM */
    int32_t rotary_dim; /* 0 -> head_dim; even, 2 .. head_dim. HF: int(head_dim * partial_rotary_factor) */
    double base;        /* rope_theta; 0 -> 10000; finite, > 0, and theta_i = base^(-2i/r) <= PE_ROPE_MAX_INV_FREQ
                               (PE_ERR_BASE). base == 1 (every theta_i = 1) is accepted by default, linear,
                               dynamic, longrope, llama3 and proportional; yarn refuses it (PE_ERR_BASE: its
                               correction range divides by ln(base)) */
    int32_t type;       /* pe_rope_type; 0 -> default */
    int32_t pairing;    /* pe_pairing; 0 -> half-split */
    double factor;      /* linear, dynamic, llama3: required (> 0).
                               yarn, longrope: 0 -> max_position_embeddings / original_max_position_embeddings.
                               proportional: 0 -> 1 (frequencies are divided by it). */
    int32_t max_position_embeddings; /* dynamic: required. yarn, longrope: used when factor is 0. */
    int32_t
        original_max_position_embeddings; /* yarn: 0 -> max_position_embeddings. longrope: 0 -> max_position_embeddings.
                                                 llama3: required. */
    double attention_factor;              /* yarn, longrope: 0 -> derived (yarn 0.1 ln f + 1, or the mscale ratio;
                                longrope sqrt(1 + ln f / ln original_max)). Multiplies cos and sin.
                                The factor in force must be finite with magnitude <= PE_ROPE_MAX_SCALE
                                (PE_ERR_ATTENTION_FACTOR). */
    double beta_fast;                     /* yarn: 0 -> 32 (HF: `or 32`, so 0 means the default there too) */
    double beta_slow;                     /* yarn: 0 -> 1 */
    double mscale;                        /* yarn: used only when mscale and mscale_all_dim are both non-zero */
    double mscale_all_dim;                /* yarn */
    int32_t yarn_no_truncate;   /* yarn: 0 -> truncate (floor/ceil the correction range), as HF's truncate=True */
    double low_freq_factor;     /* llama3: required */
    double high_freq_factor;    /* llama3: required, > low_freq_factor */
    const double *short_factor; /* longrope: required, rotary_dim/2 values > 0 */
    const double *long_factor;  /* longrope: required, rotary_dim/2 values > 0 */
} pe_rope_config;

/* A resolved RoPE: made once by pe_rope_init, then read-only. Caller-owned (about 12 KiB). */
typedef struct pe_rope {
    pe_rope_config config; /* defaults filled in; short/long_factor pointers are not used after init */
    int32_t rot_dim;       /* dimensions rotated by apply: rotary_dim (head_dim for proportional) */
    int32_t n_freq;        /* rot_dim / 2: frequencies per position */
    double attention_scaling;
    double inv_freq[PE_ROPE_MAX_FREQ];      /* for seq_len "none": default regime (longrope: short factors) */
    double inv_freq_long[PE_ROPE_MAX_FREQ]; /* longrope only: long factors */
} pe_rope;

/* seq_len arguments: the "current sequence length" of HF's init functions. It only matters for dynamic
 * (base grows when seq_len > max_position_embeddings) and longrope (long factors when seq_len > original max). */
#define PE_SEQ_LEN_NONE 0              /* HF's seq_len=None */
#define PE_SEQ_LEN_FROM_POSITIONS (-1) /* max(positions) + 1, as one HF forward call decides */

typedef enum pe_rotation {
    PE_ROTATE_FORWARD = 0, /* x' = x cos + rotate(x) sin                       */
    PE_ROTATE_INVERSE = 1  /* x' = x cos - rotate(x) sin (undoes FORWARD when the tables were built with 1/scale) */
} pe_rotation;

/* Validates cfg and resolves defaults and frequency tables into rope. */
pe_status pe_rope_init(pe_rope *rope, const pe_rope_config *cfg);

/* inv_freq[n_freq] (double) and the attention scaling at a sequence length (PE_SEQ_LEN_NONE for none). */
pe_status pe_rope_inv_freq(double *inv_freq, double *attention_scaling, const pe_rope *rope, int64_t seq_len);

/* cos and sin are (n_positions, rope->n_freq): cos[p][i] = scale * cos(positions[p] * inv_freq[i]), where
 * scale = rope->attention_scaling * extra_scale (pass 1 for the HF tables). seq_len chooses inv_freq as above;
 * PE_SEQ_LEN_FROM_POSITIONS uses max(positions) + 1. Angles are formed and reduced in double. */
pe_status pe_rope_cos_sin(float *cos, float *sin, const pe_rope *rope, const int32_t *positions, int32_t n_positions,
                          int64_t seq_len, double extra_scale);

/* Element strides of a tensor of head vectors (head_dim stays contiguous); 0 -> the dense stride. */
typedef struct pe_strides {
    int64_t batch, seq, heads;
} pe_strides;

/* What pe_rope_apply rotates, and how. Zero-initialise it: zero is a dense BSHD tensor, rows shared by the
 * batch, forward. strides and offset address a view, e.g. q or k inside a fused QKV projection output or a
 * KV cache with spare capacity:
 *   per-token fused [b, s, (h + 2 kv) d], k:  strides {s_len (h+2kv) d, (h+2kv) d, d}, offset h d
 *   per-head fused  [b, s, h, 3 d],      k:  strides {s_len h 3d, h 3d, 3d},         offset d
 *   bhsd cache of C positions per head:      layout BHSD, strides {kv C d, d, C d}
 * The head vectors named must not overlap (PE_ERR_SHAPE), and offset plus the furthest of them must be
 * addressable; that they lie inside the caller's array is the caller's (the JS wrapper's) check.
 * dtype says how x stores its elements (pe_dtype; strides and offset count elements of that type). */
typedef enum pe_dtype {
    PE_DTYPE_FLOAT32 = 0,  /* float (the zero default) */
    PE_DTYPE_FLOAT16 = 1,  /* IEEE binary16, as uint16_t bits */
    PE_DTYPE_BFLOAT16 = 2, /* bfloat16 (the top half of a float32), as uint16_t bits */
    PE_DTYPE_COUNT
} pe_dtype;

typedef struct pe_rope_apply_config {
    int32_t batch;          /* count, >= 0 (0: nothing to do) */
    int32_t seq;            /* count, >= 0 */
    int32_t heads;          /* >= 1 (PE_ERR_HEADS) */
    int32_t layout;         /* pe_layout; 0 -> BSHD (PE_ERR_LAYOUT if unknown): the dense strides, and the loop
                               order (bshd: per token, every head; bhsd: per head pair, every position) */
    int32_t per_batch_rows; /* 0 -> cos/sin are (seq, n_freq), shared by the batch;
                               non-zero -> (batch * seq, n_freq), one row per token (left padding, packing) */
    int32_t rotation;       /* pe_rotation; 0 -> forward (PE_ERR_FIELD_VALUE if unknown) */
    pe_strides strides;     /* elements, each >= 0; 0 -> dense for the layout (PE_ERR_SHAPE if negative) */
    int64_t offset;         /* elements from x to head (0, 0, 0); >= 0 */
    int32_t dtype;          /* pe_dtype of x; 0 -> float32 (PE_ERR_FIELD_VALUE if unknown) */
} pe_rope_apply_config;

/* Rotates x in place: head vectors (b, s, h) of head_dim elements as cfg says (by default dense
 * (batch, seq, heads, head_dim) for BSHD or (batch, heads, seq, head_dim) for BHSD). cos/sin rows come from
 * pe_rope_cos_sin (see per_batch_rows). Dimensions >= rot_dim of each head are untouched. x, cos and sin
 * may be NULL when batch * seq is 0.
 * x is float * for PE_DTYPE_FLOAT32 and uint16_t * (the 16-bit patterns) for FLOAT16 / BFLOAT16, aligned for
 * its type. 16-bit elements are widened exactly to float32, rotated by the float32 arithmetic (the float32
 * path's, operation for operation) and rounded to nearest even on store; NaN, Inf and subnormals convert as
 * x86 F16C / ARM FCVT do (c/src/f16.h). Each result is within 1 ulp of the storage type of the exact
 * rotation of the 16-bit inputs, up to the float32 arithmetic's own error (~2^-23 of the pair's magnitude),
 * which only shows when a result cancels to well below its inputs. The SIMD and scalar builds agree bit for
 * bit, except that a NaN result's payload is unspecified (IEEE 754 and wasm leave NaN propagation open). */
pe_status pe_rope_apply(const pe_rope *rope, void *x, const float *cos, const float *sin,
                        const pe_rope_apply_config *cfg);

/* q and k in one pass: the same as pe_rope_apply(rope, q, cos, sin, cfg) then pe_rope_apply(rope, k, cos, sin,
 * kcfg), bit for bit, with each cos/sin vector loaded once for a head of each. kcfg gives k's heads, strides
 * and offset; its batch, seq, layout, per_batch_rows (zero or not), rotation and dtype must equal cfg's
 * (PE_ERR_FIELD_VALUE). k NULL: q only (kcfg is not read). q and k must not overlap (the caller's check). */
pe_status pe_rope_apply_qk(const pe_rope *rope, void *q, void *k, const float *cos, const float *sin,
                           const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg);

/* The fused form for a few positions (a decode step): the same as pe_rope_cos_sin(cos, sin, rope, positions,
 * rows, seq_len, extra_scale) then pe_rope_apply_qk with those tables, bit for bit, where rows is cfg->seq, or
 * cfg->batch * cfg->seq with per_batch_rows; but each cos/sin row is computed inside the apply, a few at a time,
 * and used while it is in cache: no table pass. cos_out and sin_out (rows * n_freq each) receive the rows
 * when both are non-NULL (a table cache for later calls with the same positions); NULL: kept on the stack
 * only. The table's checks and statuses, after the configs'. Suited to short sequences: bhsd walks each head
 * group once per 4 positions. */
pe_status pe_rope_apply_positions(const pe_rope *rope, void *q, void *k, float *cos_out, float *sin_out,
                                  const int32_t *positions, int64_t seq_len, double extra_scale,
                                  const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg);

/* Scans positions once: PE_ERR_POSITION if any is negative, else *max_position = the largest (0 if n == 0). */
pe_status pe_positions_max(int32_t *max_position, const int32_t *positions, int32_t n_positions);

/* dst[i] = src[i] converted from src_dtype to dst_dtype (pe_dtype), i < n: exact widening, and narrowing
 * rounded to nearest even with NaN/Inf/subnormals as in pe_rope_apply's 16-bit store (c/src/f16.h), in both
 * builds bit for bit; float16 <-> bfloat16 goes through float32 (exact), so it is rounded once. The same
 * dtype is a plain copy (bits kept, a signalling NaN too). dst and src must not overlap unless equal.
 * PE_ERR_FIELD_VALUE for an unknown dtype, PE_ERR_SHAPE for n < 0. */
pe_status pe_convert(void *dst, int32_t dst_dtype, const void *src, int32_t src_dtype, int64_t n);

/* ---------------------------------------------------------------------------------------------- */
/* Multimodal (M-RoPE) and 2D vision RoPE                                                         */
/* ---------------------------------------------------------------------------------------------- */
/* M-RoPE — Wang et al. 2024, "Qwen2-VL: Enhancing Vision-Language Model's Perception of the World at Any
 * Resolution" (section 2.1). A token has three positions, temporal t, height h and width w (text tokens:
 * t = h = w). Pair i of the rope turns by pos[axis(i)] * inv_freq[i]: the frequencies are the rope's own over
 * the whole rotary dimension (every scaling type applies, and the attention factor), not restarted per
 * section; the section only picks the axis. HF: Qwen2VLRotaryEmbedding + apply_multimodal_rotary_pos_emb
 * (chunked), Qwen3VLTextRotaryEmbedding.apply_interleaved_mrope (interleaved).
 *   chunked (Qwen2-VL, Qwen2.5-VL): pairs [0, s0) -> t, [s0, s0+s1) -> h, [s0+s1, n_freq) -> w;
 *     s0 + s1 + s2 must equal rope->n_freq (= rotary_dim / 2), as HF's torch.split requires.
 *   interleaved (Qwen3-VL): pair j -> h if j % 3 == 1 and j < 3*s1, -> w if j % 3 == 2 and j < 3*s2, else t.
 *     section[0] is not read and no sum is required (HF checks none): [2,3,3] at n_freq 8 gives t3 h3 w2.
 *     (ggml's IMROPE sends unclaimed pairs to a fourth stream instead; this follows HF.)
 * Each section entry must be in [0, n_freq] and interleaved 0 or 1, else PE_ERR_FIELD_VALUE. With all three
 * streams equal the table equals pe_rope_cos_sin's bit for bit. */
typedef struct pe_mrope_config {
    int32_t section[3];  /* mrope_section: pairs per axis (t, h, w) */
    int32_t interleaved; /* 0 -> chunked; 1 -> interleaved (config.json mrope_interleaved) */
} pe_mrope_config;

/* pair_axis[rope->n_freq]: the axis (0 t, 1 h, 2 w) each pair reads. */
pe_status pe_mrope_pair_axis(int32_t *pair_axis, const pe_rope *rope, const pe_mrope_config *mrope);

/* cos and sin are (n_positions, rope->n_freq) as for pe_rope_cos_sin; positions is (3, n_positions), the
 * streams t, h, w one after the other (HF's position_ids [3, batch, seq] flattened to [3][batch * seq], for
 * pe_rope_apply with per_batch_rows). seq_len: PE_SEQ_LEN_FROM_POSITIONS is max over all three + 1 (HF's
 * dynamic update reads max(position_ids) + 1). Every position >= 0 (PE_ERR_POSITION). */
pe_status pe_mrope_cos_sin(float *cos, float *sin, const pe_rope *rope, const pe_mrope_config *mrope,
                           const int32_t *positions, int32_t n_positions, int64_t seq_len, double extra_scale);

/* 2D RoPE of vision encoders. The rope must be default type over the whole head (PE_ERR_ROPE_TYPE otherwise),
 * head_dim a multiple of 4 except for Pixtral (PE_ERR_HEAD_DIM), and the pairing of the kind (PE_ERR_PAIRING).
 * With theta_i = base^(-2i/D) the rope's frequencies and q = D/4 (Pixtral: ceil(D/4), the even frequencies),
 * positions is (2, n_positions), streams a and b:
 *   PE_ROPE2D_PIXTRAL   half-split; pair j < q: a * theta_2j, pair q + j: b * theta_(2j+1). a = patch row,
 *                       b = patch column (each image of a sequence from (0, 0)). HF: PixtralRotaryEmbedding.
 *   PE_ROPE2D_QWEN2_VL  half-split; pair j < q: a * theta_2j, pair q + j: b * theta_2j. a = row, b = column,
 *                       tokens in merge-window order. HF: VisionRotaryEmbedding(D/2), rot_pos_emb.
 *   PE_ROPE2D_LLAMA4    interleaved pairs, frequencies as Qwen2-VL. a = column + 1, b = row + 1 (patch (0, 0)
 *                       already turns), the CLS token a = b = 0. HF: Llama4VisionRotaryEmbedding.
 * cos and sin are (n_positions, D/2), for pe_rope_apply with the same rope. Positions >= 0. */
typedef enum pe_rope2d_kind {
    PE_ROPE2D_PIXTRAL = 0,
    PE_ROPE2D_QWEN2_VL = 1,
    PE_ROPE2D_LLAMA4 = 2,
    PE_ROPE2D_KIND_COUNT
} pe_rope2d_kind;

pe_status pe_rope2d_cos_sin(float *cos, float *sin, const pe_rope *rope, int32_t kind, const int32_t *positions,
                            int32_t n_positions);

/* ---------------------------------------------------------------------------------------------- */
/* Absolute encodings, ALiBi, attention                                                           */
/* ---------------------------------------------------------------------------------------------- */

/* ---- Sinusoidal — Vaswani et al. 2017, "Attention Is All You Need", section 3.5 -------------
 *
 * Column j of position p uses frequency index i = j / 2 (integer division) and the angle
 *     a(p, i) = p / base^(2i / d_model)                       (paper, XLM, DistilBERT, Marian)
 * formed in double, with sin/cos in double and one rounding to float32. The variants place sin and cos:
 *   interleaved  [sin a0, cos a0, sin a1, cos a1, ...]       column j: sin if j even, cos if j odd (paper/XLM)
 *   half         [sin a0 .. sin a(h-1) | cos a0 .. cos a(d-h-1)], h = ceil(d/2)                   (Marian)
 *   tensor2tensor [sin b0 .. sin b(n-1) | cos b0 .. cos b(n-1) (| 0)], n = floor(d/2),
 *                b(p, i) = p * exp(-i * ln(base) / (n - 1))   (tensor2tensor, fairseq, HF FSMT; d_model >= 4)
 * Odd d_model follows each reference exactly: interleaved ends with the sin of frequency (d-1)/2 (XLM's
 * out[:, 0::2] slicing), half puts ceil(d/2) sin columns before floor(d/2) cos columns (Marian's sentinel),
 * tensor2tensor appends a zero column (FSMT). */
typedef enum pe_sinusoidal_variant {
    PE_SINUSOIDAL_INTERLEAVED = 0,   /* the paper's: sin on even, cos on odd columns (the zero default) */
    PE_SINUSOIDAL_HALF = 1,          /* Marian: sin | cos halves, same frequencies as the paper */
    PE_SINUSOIDAL_TENSOR2TENSOR = 2, /* FSMT / fairseq: sin | cos halves, frequencies exp(-i ln(base) / (d/2 - 1)) */
    PE_SINUSOIDAL_VARIANT_COUNT
} pe_sinusoidal_variant;

typedef struct pe_sinusoidal_config {
    double base;             /* 0 -> 10000; finite and > 0, with every frequency <= PE_MAX_FREQUENCY (PE_ERR_BASE:
                                only a base below 1 can fail). base == 1 is accepted (every frequency 1) */
    int32_t offset;          /* pe_sinusoidal_table: position of row 0 (0 -> 0); >= 0 (PE_ERR_POSITION).
                                pe_sinusoidal_add with positions == NULL: position of sequence index 0. */
    int32_t variant;         /* pe_sinusoidal_variant; 0 -> interleaved (PE_ERR_PAIRING if unknown) */
    int32_t use_padding_idx; /* 0 -> no padding row. Non-zero: position padding_idx encodes to all zeros (FSMT) */
    int32_t padding_idx;     /* used only when use_padding_idx is non-zero */
    int32_t dtype;           /* pe_dtype of out / x; 0 -> float32 (PE_ERR_FIELD_VALUE if unknown). 16-bit: out /
                                x is uint16_t bits; the float32 values (and for add, x widened exactly plus them
                                in float32) are rounded to nearest even on store, as pe_rope_apply's 16-bit
                                store. Each result is within 1 ulp of the storage type of the exact sum, up to
                                float32's own error (~2^-24 of the addends), visible only where a sum cancels. */
} pe_sinusoidal_config;

/* out is (seq_len, d_model), row r = position cfg->offset + r. cfg may be NULL (all defaults).
 * seq_len 0 writes nothing. PE_ERR_SHAPE if seq_len < 0, d_model < 1 (tensor2tensor: < 4) or the last
 * position overflows int32. */
pe_status pe_sinusoidal_table(void *out, int32_t seq_len, int32_t d_model, const pe_sinusoidal_config *cfg);

/* x is (batch, seq, d_model), dense; x[b, s, :] += PE(position of (b, s)), in place.
 * positions: NULL -> cfg->offset + s for every batch row; else (seq,) shared by the batch, or (batch, seq)
 * when per_batch_positions is non-zero. Positions must be >= 0 (PE_ERR_POSITION, checked before writing). */
pe_status pe_sinusoidal_add(void *x, const int32_t *positions, int32_t batch, int32_t seq, int32_t d_model,
                            int32_t per_batch_positions, const pe_sinusoidal_config *cfg);

/* ---- Learned absolute positions (GPT-2, OPT) ------------------------------------------------
 *
 * table is (n_rows, d_model). Position p reads row p + row_offset. OPT keeps row_offset = 2 (its embedding
 * has num_embeddings + 2 rows and padded tokens get position -1, so they read row 1). A row outside
 * [0, n_rows) returns PE_ERR_OUT_OF_RANGE; every position is checked before anything is written, so nothing
 * out of bounds is ever read and the output is untouched on error. In terms of a maximum length
 * max_len = n_rows - row_offset: valid positions are -row_offset .. max_len - 1. */

/* out is (n_positions, d_model): out[p, :] = table[positions[p] + row_offset, :]. */
pe_status pe_learned_lookup(float *out, const float *table, const int32_t *positions, int32_t n_positions,
                            int32_t d_model, int32_t n_rows, int32_t row_offset);

/* The shapes of pe_learned_add; zero-initialise it (the sizes have no default and must be set). */
typedef struct pe_learned_add_config {
    int32_t batch;               /* count, >= 0 (0: nothing to do) */
    int32_t seq;                 /* count, >= 0 */
    int32_t d_model;             /* >= 1: columns of x and of the table */
    int32_t n_rows;              /* >= 1: rows of the table */
    int32_t row_offset;          /* 0 -> 0 (GPT-2); position p reads row p + row_offset (OPT: 2) */
    int32_t per_batch_positions; /* 0 -> positions are (seq,), shared by the batch; non-zero -> (batch, seq) */
    int32_t dtype;               /* pe_dtype of x; 0 -> float32 (PE_ERR_FIELD_VALUE if unknown) */
    int32_t table_dtype;         /* pe_dtype of the table; 0 -> float32 (PE_ERR_FIELD_VALUE if unknown) */
} pe_learned_add_config;

/* x is (batch, seq, d_model), dense; x[b, s, :] += table[position(b, s) + row_offset, :], in place.
 * positions: NULL -> s; else as cfg->per_batch_positions says. table is (n_rows, d_model).
 * x and table are float * or uint16_t * (16-bit patterns) as cfg->dtype / table_dtype say, in any combination:
 * 16-bit values are widened exactly, added in float32, and a 16-bit x is rounded to nearest even on store
 * (c/src/f16.h), so each result is within 1 ulp of the storage type of the exact sum up to float32's own
 * error (~2^-24 of the addends), which shows only where a sum cancels. A float32 x of -0.0 plus a 16-bit table
 * row gives the row widened exactly (the lookup of a 16-bit table). */
pe_status pe_learned_add(void *x, const void *table, const int32_t *positions, const pe_learned_add_config *cfg);

/* ---- ALiBi — Press, Smith & Lewis 2022, "Train Short, Test Long: Attention with Linear Biases" ----
 *
 * Head h adds slope[h] * (key position - query position) to its attention logits; no position embedding.
 * Slopes (BLOOM's build_alibi_tensor): for n heads a power of two, slope[h] = 2^(-8 (h+1) / n). Otherwise
 * take n0 = the largest power of two below n, its n0 slopes, then the first n - n0 of the odd-indexed
 * slopes of the 2 n0 set: 2^(-4 (2k+1) / n0), k = 0 .. n - n0 - 1 (the paper's interleaving).
 * Computed in double and rounded once, so each slope is within half an ulp of the exact value. BLOOM's
 * float32 path rounds the base first and raises it to powers up to n0, so its slopes drift from the exact
 * ones by up to ~9 ulps at n = 64 (measured against the golden f64 values). */

/* slopes is (n_heads,). PE_ERR_HEADS if n_heads < 1. */
pe_status pe_alibi_slopes(float *slopes, int32_t n_heads);

/* bias is (n_heads, q_len, k_len): bias[h, i, j] = slope[h] * (j - (k_len - q_len + i)), i.e. query i sits at
 * key position k_len - q_len + i (decoding against a cache of k_len - q_len keys). causal != 0 writes
 * -INFINITY where j > k_len - q_len + i (with q_len > k_len the first rows are then fully masked).
 * slopes: (n_heads,), or NULL for pe_alibi_slopes(n_heads). Non-causal uses the same signed distance
 * (softmax-equivalent to BLOOM's slope * j per key), not a symmetric |j - i|. */
pe_status pe_alibi_bias(float *bias, const float *slopes, int32_t n_heads, int32_t q_len, int32_t k_len,
                        int32_t causal);

/* BLOOM's padded-batch form. attention_mask is (batch, seq) of 0/1; bias is (batch * n_heads, 1, seq), row
 * b * n_heads + h: bias[b, h, j] = slope[h] * ((cumsum(mask[b]) - 1) * mask[b])[j], a per-key position that
 * skips padding (padded keys get 0; the mask itself is applied elsewhere). slopes NULL -> standard. */
pe_status pe_alibi_bias_from_mask(float *bias, const float *slopes, const int32_t *attention_mask, int32_t batch,
                                  int32_t n_heads, int32_t seq);

/* ---- Fused attention: out = softmax(scale * Q K^T + bias) V --------------------------------------
 *
 * Online softmax (Milakov & Gimelshein 2018) blocked over keys as in FlashAttention (Dao et al. 2022): no
 * (q_len, k_len) matrix is formed unless weights are requested. Per head and query, with running max m and
 * sum l: for each block of keys, m' = max(m, max s), acc = acc e^(m - m') + sum e^(s - m') v, l likewise;
 * out = acc / l. Finite for logits of any finite size (e.g. +-1e4): every exponent is <= 0.
 *
 * Positions: query i sits at position q_positions[i], key j at k_positions[j]; by default key j at j and
 * query i at k_len - q_len + i (decode against a cache). They drive the causal mask (key j visible to query
 * i iff kpos[j] <= qpos[i]), ALiBi (bias slope[h] * (kpos[j] - qpos[i]), the same convention as
 * pe_alibi_bias) and RoPE (q rotated at qpos, k at kpos). With ALiBi, kpos[j] - qpos[i] must fit in an
 * int32: the only way it cannot, explicit k_positions against default query positions below 0 (q_len >
 * k_len), is PE_ERR_POSITION.
 * A fully masked query row (only possible with causal and explicit positions, or q_len > k_len) gives an
 * all-zero output row and an all-zero weights row. Inputs are assumed finite, with scale * q.k finite.
 * The SIMD128 and scalar builds give bit-identical results (same operations in the same order).
 * Grouped-query / multi-query attention (Ainslie et al. 2023; Shazeer 2019): query head h reads kv head
 * h / (heads / kv_heads). */
typedef struct pe_attention_config {
    int32_t batch;              /* count, >= 0 (0: nothing to do) */
    int32_t heads;              /* required, >= 1 (query heads) */
    int32_t kv_heads;           /* 0 -> heads; must divide heads (PE_ERR_HEADS). 1 = multi-query */
    int32_t q_len;              /* count, >= 0 (0: nothing to do) */
    int32_t k_len;              /* count, >= 0 (0 with q_len > 0: no key to see, out is all zeros) */
    int32_t head_dim;           /* required, >= 1 (any size; with rope it must equal rope->config.head_dim) */
    int32_t layout;             /* pe_layout of q, k, v and out; 0 -> BSHD. q/out: (B, q_len, heads, D) or
                           (B, heads, q_len, D); k/v: the same with k_len and kv_heads */
    int32_t causal;             /* 0 -> no mask; non-zero: key j visible to query i iff kpos[j] <= qpos[i] */
    float scale;                /* 0 -> 1 / sqrt(head_dim); must be finite (PE_ERR_SCALE) */
    const float *alibi_slopes;  /* NULL -> no ALiBi; else (heads,) finite slopes (PE_ERR_FIELD_VALUE) */
    const pe_rope *rope;        /* NULL -> no RoPE; else q and k are rotated (copies in scratch) */
    const int32_t *q_positions; /* NULL -> k_len - q_len + i; else (q_len,), >= 0, shared by the batch */
    const int32_t *k_positions; /* NULL -> j; else (k_len,), >= 0, shared by the batch */
    int32_t rope_seq_len;       /* rope only: the seq_len of pe_rope_cos_sin (dynamic, longrope).
                                     0 -> max(all q and k positions) + 1, as one HF forward call decides */
    int32_t k_rotated;          /* rope only: 0 -> k is rotated at k_positions (a copy in scratch), as
                                     always; non-zero -> k is already rotated (a KV cache that stores rotated
                                     keys, as HF's and llama.cpp's do) and is used in place: only q is rotated,
                                     at q_positions, so decoding does not re-rotate the whole cache per call.
                                     The keys must have been rotated with the same frequencies (for dynamic
                                     and longrope: the same rope_seq_len). k_positions still drive the mask
                                     and ALiBi. Ignored without rope */
    /* Real batches (all zero: the behaviour above). */
    int32_t per_batch_positions; /* 0 -> q_positions / k_positions are (q_len,) / (k_len,), shared by the
                                     batch; non-zero -> (batch, q_len) / (batch, k_len), one row per sequence
                                     (left padding, packing); with rope, each row is rotated at its own */
    const int32_t *key_mask;     /* NULL -> every key; else (batch, k_len), non-zero = attend (HF's
                                     attention_mask); combined with causal. A row left with no key is zeros */
    const float *bias;           /* NULL -> none; else added to the logits, shape (bias_batch, bias_heads,
                                     bias_q_len, k_len) broadcast over the dims of size 1 (T5's bucketed bias,
                                     BLOOM's padded ALiBi). -inf entries mask; NaN is the caller's */
    int32_t bias_batch;          /* 0 or 1 -> shared by the batch; else batch (PE_ERR_SHAPE otherwise) */
    int32_t bias_heads;          /* 0 or 1 -> shared by the heads; else heads */
    int32_t bias_q_len;          /* 0 -> q_len; 1 -> shared by the queries (BLOOM's (b*h, 1, k_len)) */
    int32_t v_head_dim;          /* 0 -> head_dim; head size of v and out (DeepSeek MLA: q/k 192, v 128) */
    const float *q_scale;        /* NULL -> none; else a finite factor per query on top of scale (Llama 4's
                                     attention temperature, Mistral's llama_4_scaling_beta): (q_len,), or
                                     (batch, q_len) with q_scale_per_batch. Logit = q.k * (scale * q_scale[i]) */
    int32_t q_scale_per_batch;
    /* Views (elements, each >= 0; 0 -> the dense stride of the layout, with v_head_dim for v and out; head
     * vectors stay contiguous): head (b, s, h) of q is q + q_offset + b*q_strides.batch + s*q_strides.seq +
     * h*q_strides.heads, and so on; e.g. a fused per-token QKV [b, s, (h + 2 kv) d] or a bhsd KV cache of C
     * positions per head (layout BHSD, strides {kv C d, d, C d}). Every extent is computed in 64 bits and must
     * be addressable (PE_ERR_SHAPE); out's heads must not overlap each other (PE_ERR_SHAPE); that each view
     * lies inside the caller's array is the caller's (the JS wrapper's) check. */
    pe_strides q_strides, k_strides, v_strides, out_strides;
    int64_t q_offset, k_offset, v_offset, out_offset;
    int32_t dtype; /* pe_dtype of q, k, v and out (strides and offsets count its elements); 0 -> float32
                      (PE_ERR_FIELD_VALUE if unknown). 16-bit elements are widened exactly, the softmax and the
                      accumulation run in float32 exactly as for float32 data, and out is rounded to nearest even
                      on store; with rope, the rotated q and k are rounded to the type first (as pe_rope_apply
                      would store them). Positions, mask, bias, slopes, scales and weights stay as above */
} pe_attention_config;

/* *n_floats = the scratch pe_attention needs for cfg: 0 without RoPE or when batch or q_len is 0; with RoPE, rotated
 * dense copies of q and k plus their cos/sin tables: (B*heads*q_len + B*kv_heads*k_len) * head_dim +
 * 2 * (q_rows + k_rows) * n_freq, rows = B * len with per_batch_positions and the positions given, else len;
 * with k_rotated, q's only: B*heads*q_len * head_dim + 2 * q_rows * n_freq.
 * A 16-bit dtype adds, for rows = min(32, (heads / kv_heads) * q_len) and keys = min(512, k_len):
 * rows * v_head_dim + keys * v_head_dim, + rows * head_dim without RoPE, + keys * head_dim without RoPE or with
 * k_rotated (one block's q and out rows and one tile's k and v rows in float32).
 * Validates the dimensions as pe_attention does. */
pe_status pe_attention_scratch_size(size_t *n_floats, const pe_attention_config *cfg);

/* out is (batch, q_len, heads, v_head_dim) or (batch, heads, q_len, v_head_dim) per cfg->layout, q and k likewise
 * with head_dim (k/v with k_len, kv_heads), v with v_head_dim; or the views the strides give. weights: NULL, or (batch, heads, q_len, k_len) softmax probabilities in that
 * order whatever the layout. q, k, v are not modified; out must not overlap them (it is the accumulator).
 * q, k, v, out are float * for PE_DTYPE_FLOAT32 and uint16_t * (the 16-bit patterns) otherwise, aligned for the type.
 * scratch: n_scratch floats, at least pe_attention_scratch_size (may be NULL when that is 0). */
pe_status pe_attention(void *out, float *weights, const void *q, const void *k, const void *v, float *scratch,
                       size_t n_scratch, const pe_attention_config *cfg);

/* ---------------------------------------------------------------------------------------------- */
/* Tiny model — the playground's decoder-only transformers (c/model/model.c)                      */
/* ---------------------------------------------------------------------------------------------- */

/* A pre-norm decoder-only transformer (GPT-2 / Llama shape, Radford et al. 2019; Touvron et al. 2023):
 *
 *     x = embedding_multiplier * E[token]  (+ sinusoidal or learned PE of the position)
 *     per layer:  x += W_o attention(RMSNorm(x))                  causal; RoPE or ALiBi inside when chosen
 *                 x += W_down gelu_tanh(W_up RMSNorm(x))
 *     logits = RMSNorm(x) E^T                                     tied output embedding
 *
 * Every position encoding runs through the library's own kernels: pe_sinusoidal_add, pe_learned_add,
 * pe_rope_cos_sin + pe_rope_apply (q and k), pe_alibi_slopes + pe_attention (which also does the softmax and
 * hands back the attention weights). Linear layers are y = x W^T with W stored (out, in) as in PyTorch's
 * nn.Linear, without biases; the MLP activation is GELU, tanh approximation (gelu_pytorch_tanh).
 * Weights come from a safetensors file (F32) whose __metadata__ holds the architecture (see pe_model_open);
 * the playground ships them with a Hugging Face style config.json. Nothing here allocates: the caller owns
 * the pe_model, the weights and the scratch. Sequences start at position 0 (batch 1). */

#define PE_MODEL_MAX_LAYERS 8
#define PE_MODEL_MAX_HEADS 16
#define PE_MODEL_MAX_DIM 1024 /* hidden_size and intermediate_size */
#define PE_MODEL_MAX_VOCAB 65536
#define PE_MODEL_MAX_POSITIONS (1 << 24) /* max_position_embeddings */
#define PE_MODEL_MESSAGE_SIZE 192
/* Every weight (and embedding_multiplier) within +-PE_MODEL_MAX_WEIGHT: with the limits above no activation can
 * then leave float's range (RMSNorm bounds each normalised entry by sqrt(hidden) |w|, so q, k, MLP inputs and
 * logits stay below 1024^1.5 * 1e4^2 ~ 3e12, attention scores below ~4e26, the residual stream below ~1e21);
 * pe_model_load refuses a file with a larger (finite) weight, whose logits would overflow. */
#define PE_MODEL_MAX_WEIGHT 10000

typedef enum pe_model_position {
    PE_MODEL_POS_NONE = 0,       /* NoPE: position only through the causal mask (Kazemnejad et al. 2023) */
    PE_MODEL_POS_SINUSOIDAL = 1, /* added to the embeddings: pe_sinusoidal_add, interleaved, base 10000 */
    PE_MODEL_POS_LEARNED = 2,    /* added to the embeddings: pe_learned_add, max_position_embeddings rows */
    PE_MODEL_POS_ROPE = 3,       /* q and k rotated: half-split pairs, base rope_theta, rotary_dim = head_dim */
    PE_MODEL_POS_ALIBI = 4,      /* pe_alibi_slopes(num_attention_heads) bias in pe_attention */
    PE_MODEL_POS_COUNT
} pe_model_position;

typedef struct pe_model_config {
    int32_t vocab_size;              /* 2 .. PE_MODEL_MAX_VOCAB */
    int32_t hidden_size;             /* d_model, 1 .. PE_MODEL_MAX_DIM, a multiple of num_attention_heads */
    int32_t num_hidden_layers;       /* 1 .. PE_MODEL_MAX_LAYERS */
    int32_t num_attention_heads;     /* 1 .. PE_MODEL_MAX_HEADS; head_dim = hidden_size / heads (even for RoPE) */
    int32_t intermediate_size;       /* MLP width, 1 .. PE_MODEL_MAX_DIM */
    int32_t max_position_embeddings; /* the training length; learned: the table's rows (longer sequences fail) */
    int32_t position_encoding;       /* pe_model_position */
    double rope_theta;               /* RoPE base; 0 -> 10000 */
    double rms_norm_eps;             /* 0 -> 1e-5 */
    double embedding_multiplier;     /* 0 -> sqrt(hidden_size) */
} pe_model_config;

/* Pointers into the caller's weights, PyTorch shapes. */
typedef struct pe_model_layer {
    const float *input_norm;        /* (hidden) */
    const float *wq, *wk, *wv, *wo; /* (hidden, hidden) each */
    const float *post_norm;         /* (hidden) */
    const float *w_up;              /* (intermediate, hidden) */
    const float *w_down;            /* (hidden, intermediate) */
} pe_model_layer;

typedef struct pe_model {
    pe_model_config config;       /* defaults resolved */
    size_t n_weights;             /* floats of weights pe_model_load needs */
    const float *embed_tokens;    /* (vocab, hidden); also the output projection */
    const float *embed_positions; /* (max_position_embeddings, hidden), learned only, else NULL */
    const float *final_norm;      /* (hidden) */
    pe_model_layer layers[PE_MODEL_MAX_LAYERS];
    float alibi_slopes[PE_MODEL_MAX_HEADS];
    pe_rope rope;                        /* the trained RoPE (RoPE models) */
    char message[PE_MODEL_MESSAGE_SIZE]; /* why the last open/load/forward failed, "" after success */
} pe_model;

/* Inference-time RoPE scaling for a RoPE model trained at max_position_embeddings = L (pe_model_rope). */
typedef enum pe_model_rope_scaling {
    PE_MODEL_ROPE_TRAINED = 0, /* as trained */
    PE_MODEL_ROPE_LINEAR = 1,  /* position interpolation (Chen et al. 2023): inv_freq / factor */
    PE_MODEL_ROPE_NTK = 2,     /* NTK-aware, static (bloc97 2023): base * factor^(d / (d - 2)), d = head_dim */
    PE_MODEL_ROPE_DYNAMIC = 3, /* dynamic NTK: PE_ROPE_DYNAMIC with max_position_embeddings = L; at sequence
                                  length s > L the base becomes base * (factor s / L - (factor - 1))^(d/(d-2)) */
    PE_MODEL_ROPE_YARN = 4,    /* YaRN (Peng et al. 2023): PE_ROPE_YARN, original_max_position_embeddings = L */
    PE_MODEL_ROPE_SCALING_COUNT
} pe_model_rope_scaling;

/* sizeof(pe_model), for callers (the wasm wrapper) that allocate it themselves. */
size_t pe_model_struct_size(void);

/* Reads a safetensors file's header (8-byte little-endian header length N, N bytes of JSON, then the data)
 * into m: the architecture from __metadata__ (string values, keys as in config.json: vocab_size, hidden_size,
 * num_hidden_layers, num_attention_heads, intermediate_size, max_position_embeddings, position_encoding =
 * none|sinusoidal|learned|rope|alibi, rope_theta, rms_norm_eps, embedding_multiplier), and checks that the
 * file holds exactly the model's tensors, F32, with the right shapes and in-bounds, non-overlapping data
 * covering the whole data section. *n_weights = floats to give pe_model_load. On failure m->message says what
 * is wrong (e.g. "tensor 'model.norm.weight': dtype F16, only F32 is supported"); status PE_ERR_FIELD_VALUE
 * (malformed or truncated file, wrong dtype), PE_ERR_MISSING_FIELD (missing tensor or metadata key),
 * PE_ERR_SHAPE (a shape that does not fit the architecture) or PE_ERR_NULL. */
pe_status pe_model_open(pe_model *m, size_t *n_weights, const uint8_t *file, size_t file_size);

/* After pe_model_open on the same bytes: copies the tensors into weights (n_floats >= m->n_weights; the
 * caller keeps them alive as long as m) and points m at them. The file may be freed afterwards. A weight that
 * is not finite or beyond +-PE_MODEL_MAX_WEIGHT is PE_ERR_FIELD_VALUE, naming the tensor and the element. */
pe_status pe_model_load(pe_model *m, float *weights, size_t n_floats, const uint8_t *file, size_t file_size);

/* A NUL-terminated description of why the last call on m failed ("" if it did not). */
const char *pe_model_message(const pe_model *m);

/* Builds *rope for the RoPE model m with an inference-time scaling (pe_model_rope_scaling) and factor (> 0;
 * ignored for PE_MODEL_ROPE_TRAINED), to pass to pe_model_forward. PE_ERR_FIELD_VALUE if m is not a RoPE
 * model or scaling is unknown. */
pe_status pe_model_rope(pe_rope *rope, const pe_model *m, int32_t scaling, double factor);

/* *n_floats = the scratch pe_model_forward needs for seq_len tokens. Counted in 64 bits: PE_ERR_SHAPE (and
 * m->message says so) when seq_len < 1 or the scratch's bytes do not fit size_t (32 bits on wasm32). m is
 * changed only in its message. */
pe_status pe_model_scratch_size(size_t *n_floats, pe_model *m, int32_t seq_len);

/* logits is (seq_len, vocab_size): logits[i] predicts token i + 1 from tokens[0..i] at positions 0..i.
 * attention: NULL, or (num_hidden_layers, num_attention_heads, seq_len, seq_len) softmax weights (zero above
 * the diagonal). rope: NULL -> the trained RoPE; else one from pe_model_rope (RoPE models only). Tokens must
 * be in [0, vocab_size) (PE_ERR_OUT_OF_RANGE); a learned-position model rejects seq_len >
 * max_position_embeddings with PE_ERR_OUT_OF_RANGE. PE_ERR_SHAPE when the scratch, the logits or the attention
 * weights take more bytes than size_t holds (32 bits on wasm32). On failure nothing in m changes but its
 * message, so the model stays usable. */
pe_status pe_model_forward(pe_model *m, float *logits, float *attention, const int32_t *tokens, int32_t seq_len,
                           const pe_rope *rope, float *scratch, size_t n_scratch);

/* pe_model_forward, and each layer's query and key projections as the layer makes them, before RoPE turns
 * them: q_out, k_out are (num_hidden_layers, seq_len, num_attention_heads, head_dim), either may be NULL.
 * (RoPE keeps each frequency pair's norm, so per-pair norms read the same before and after the rotation;
 * Barbero et al. 2024 study which pairs a model uses through them.) The logits and attention are bit for bit
 * those of pe_model_forward. PE_ERR_SHAPE when q_out / k_out take more bytes than size_t holds. */
pe_status pe_model_forward_qk(pe_model *m, float *logits, float *attention, float *q_out, float *k_out,
                              const int32_t *tokens, int32_t seq_len, const pe_rope *rope, float *scratch,
                              size_t n_scratch);

/* ---------------------------------------------------------------------------------------------- */
/* ABI helper for the WebAssembly wrapper                                                         */
/* ---------------------------------------------------------------------------------------------- */

/* Byte offsets of pe_rope_config's fields, in declaration order, followed by sizeof(pe_rope_config) and
 * sizeof(pe_rope). The JS wrapper reads this once instead of hard-coding the struct layout. */
const int32_t *pe_abi_rope_config_layout(int32_t *count);

/* The same for pe_attention_config, pe_sinusoidal_config, pe_rope_apply_config and pe_learned_add_config
 * (each followed by its sizeof). */
const int32_t *pe_abi_attention_config_layout(int32_t *count);
const int32_t *pe_abi_sinusoidal_config_layout(int32_t *count);
const int32_t *pe_abi_rope_apply_config_layout(int32_t *count);
const int32_t *pe_abi_learned_add_config_layout(int32_t *count);
/* pe_mrope_config: offsets of section and interleaved, then its sizeof. */
const int32_t *pe_abi_mrope_config_layout(int32_t *count);
/* pe_rope: offsets of config (the resolved config), rot_dim, n_freq, attention_scaling, then sizeof(pe_rope). */
const int32_t *pe_abi_rope_layout(int32_t *count);

/* pe_status values by name ("PE_ERR_POSITION"; NULL past PE_STATUS_COUNT), and the header's limits and enum
 * values the wrapper needs ("PE_ROPE_MAX_HEAD_DIM" ...) as index -> name, value (as double, exact for the
 * integer ones) for index < pe_abi_limit_count(). */
int32_t pe_abi_status_count(void);
const char *pe_abi_status_name(int32_t status);
int32_t pe_abi_limit_count(void);
const char *pe_abi_limit_name(int32_t index);
double pe_abi_limit_value(int32_t index);

#ifdef __cplusplus
}
#endif
#endif /* POSENC_H */
