/* attention_internal.h — what attention.c, attention_kernels.c, attention_views.c and attention_positions.c
 * share; not part of the public API. The tile geometry, the resolved configuration (pe__attn, built by attention_views.c), the per-row
 * and per-tile state the kernels read, and the kernels' entry points. The small per-row softmax steps are
 * static inline here because the block driver in attention.c calls them once per row and step; the score and
 * PV kernels (attention_kernels.c) are called once per tile or step, each over a whole tile of work. The
 * numerics and the SIMD/scalar bit-identity contract are described at the top of attention.c.
 */
#ifndef PE_ATTENTION_INTERNAL_H
#define PE_ATTENTION_INTERNAL_H

#include "pe_math.h"
#include "posenc.h"
#include "simd.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define PE__QB 32      /* query rows per block (online-softmax state on the stack) */
#define PE__SCAP 2048  /* scores per tile, rows x keys (8 KiB on the stack) */
#define PE__KB_MAX 512 /* keys per tile at most (one-row blocks: decode) */
#define PE__SEG 64     /* keys per online-softmax step: the numbers depend on it, never on the tile size */
_Static_assert(PE__SCAP >= PE__QB * PE__SEG && PE__KB_MAX % PE__SEG == 0, "a tile holds at least one step per row");
#define PE__PV_SUB 16 /* one-row PV: keys per sub-block (their V rows stay in L1 across the dim chunks) */

/* A view of head vectors: head (b, s, h) at offset + b*sb + s*ss + h*sh. */
typedef struct pe__view {
    size_t off, sb, ss, sh;
} pe__view;

typedef struct pe__attn {
    int32_t B, H, KVH, Sq, Sk, D, Dv, group;
    int causal;
    int k_rotated; /* rope: k is already rotated; rotate q only */
    int per_batch; /* positions are (batch, len) */
    float scale;
    const float *slopes;
    const pe_rope *rope;
    const int32_t *qpos, *kpos;
    const int32_t *kmask;
    const float *bias;
    int32_t bias_b, bias_h, bias_q; /* the bias's broadcast dims: 1 or the full size */
    const float *qscale;
    int qscale_pb;
    pe__view q, k, v, o; /* strides (elements of the storage type) */
    size_t n_q, n_k;     /* dense elements of q and of k (rope's copies) */
    int w_too_large;     /* (B, H, q_len, k_len) cannot be addressed */
    size_t n_scratch;    /* floats of scratch needed */
    /* 16-bit storage (pe_dtype): which of q, k, v, out are read or written as uint16_t patterns. With rope, q
     * (and k unless k_rotated) are float32 copies in scratch by then, so they are float32 for the kernels. */
    int bf16, q16, k16, v16, o16;
    size_t n_rope;            /* floats of scratch rope's copies and tables take (the 16-bit buffers follow) */
    int32_t qb_rows, kb_keys; /* rows of the q / out block buffers, keys of the k / v tile buffers */
    float *qbuf, *obuf;       /* 16-bit q / out: a block's rows widened (qb_rows x D, qb_rows x Dv) */
    float *kbuf, *vbuf;       /* 16-bit k / v: a tile's keys widened (kb_keys x D, kb_keys x Dv) */
} pe__attn;

/* Resolves and checks cfg into *A (sizes in 64-bit arithmetic, views, scratch size); writes nothing else. */
pe_status pe__attn_resolve(pe__attn *A, const pe_attention_config *cfg);

/* Copies the view x (B, S, H head vectors of D elements of pe_dtype dtype) into the float32 dense[] laid out as
 * layout says (16-bit elements widened exactly). */
void pe__gather(float *dense, const void *x, const pe__view *vw, int32_t B, int32_t S, int32_t H, int32_t D, int bhsd,
                int dtype);

/* n 16-bit elements (bf16: bfloat16, else float16) widened exactly into float32 dst / rounded to nearest even
 * from src (c/src/f16.h: the SIMD and scalar builds agree bit for bit). */
void pe__widen16(float *dst, const uint16_t *src, int32_t n, int bf16);
void pe__narrow16(uint16_t *dst, const float *src, int32_t n, int bf16);
/* x[0..n) = widen(narrow(x)): a float32 copy rounded to the storage type, as a 16-bit store would leave it. */
void pe__round16(float *x, size_t n, int bf16);

/* The dense view of the layout (for rope's copies). */
pe__view pe__dense_view(int bhsd, int32_t S, int32_t H, int32_t D);

/* ---------------------------------------------------------------------------------------------- */
/* Positions and RoPE set-up (attention_positions.c)                                              */
/* ---------------------------------------------------------------------------------------------- */

/* Query i's position in sequence b; the default k_len − q_len + i lies in [k_len − q_len, k_len − 1], an int32. */
static inline int32_t pe__qpos(const pe__attn *A, int32_t b, int32_t i) {
    if (!A->qpos) return (int32_t)((int64_t)A->Sk - (int64_t)A->Sq + (int64_t)i);
    return A->qpos[(A->per_batch ? (size_t)b * (size_t)A->Sq : 0u) + (size_t)i];
}

/* Checks the explicit positions (every sequence's row, as pe_positions_max) and the int32 range of ALiBi's
 * kpos − qpos; *max_q, *max_k: the largest query and key positions (defaults included). */
pe_status pe__attn_positions(const pe__attn *A, int32_t *max_q, int32_t *max_k);

/* True when the key positions never decrease over the keys the mask keeps (kmask NULL: every key); *kmax is
 * then the last kept key's position (INT32_MIN when the mask keeps none). */
int pe__attn_monotone(int32_t *kmax, const int32_t *kpos, const int32_t *kmask, int32_t n);

/* RoPE on dense copies in scratch: q rotated (and k, unless k_rotated) at their positions, with one frequency set
 * chosen from cfg->rope_seq_len or max position + 1; *qx, *kx then point at the copies (k stays the caller's
 * with k_rotated) and A's q and k views become the dense ones. */
pe_status pe__attn_rope(pe__attn *A, const pe_attention_config *cfg, const void *q, const void *k, float *scratch,
                        int32_t max_q, int32_t max_k, const void **qx, const void **kx);

/* ---------------------------------------------------------------------------------------------- */
/* Scores of one tile: s_c = q·k_c · scale (+ ALiBi), −∞ where masked                             */
/* ---------------------------------------------------------------------------------------------- */

/* What one row needs to turn its dot products into logits. */
typedef struct pe__rowc {
    float scale, slope;
    int32_t qp;        /* the query's position */
    int32_t lim;       /* keys c >= lim of this tile are masked: the causal band's end, or the tile size */
    const float *bias; /* the row's additive bias from the tile's first key, or NULL */
} pe__rowc;

/* One tile of keys. */
typedef struct pe__tile {
    const float *k; /* key c of the tile is k + c * ks */
    size_t ks;
    int32_t nk, D;
    const int32_t *kp; /* key positions of the tile, padded to a multiple of 4; NULL when not needed */
    int alibi;         /* add slope · (kp − qp) */
    int causal_kp;     /* mask kp > qp (explicit key positions; with the default ones lim is the mask) */
    const int32_t *km; /* key mask of the tile (0 = masked), padded with 0 to a multiple of 4; or NULL */
} pe__tile;

/* One row against the tile; s is written up to the tile's end rounded up to 4 (−∞ past the row's lim). */
void pe__scores1(float *s, const float *q, const pe__rowc *rc, const pe__tile *T);
#if PE_SIMD
/* Two rows against the tile (SIMD only: the scalar twin walks one row at a time). */
void pe__scores2(float *s0, float *s1, const float *q0, const float *q1, const pe__rowc rc[2], const pe__tile *T);
#endif

/* ---------------------------------------------------------------------------------------------- */
/* Online softmax, per row and step                                                               */
/* ---------------------------------------------------------------------------------------------- */

/* x[0..n) = e^(x - m) */
static inline void pe__exp_row(float *x, float m, int32_t n) {
    int32_t c = 0;
#if PE_SIMD
    const pe_v128 vm = pe_f32x4_splat(m);
    for (; c + 4 <= n; c += 4) pe_f32x4_store(x + c, pe__exp4(pe_f32x4_sub(pe_f32x4_load(x + c), vm)));
#endif
    for (; c < n; c++) x[c] = pe__exp1(x[c] - m);
}

/* max of s[0..n) (−∞ for n = 0); in SIMD over whole groups of 4, whose lanes past n hold −∞ */
static inline float pe__max_row(const float *s, int32_t n) {
    int32_t c = 0;
#if PE_SIMD
    pe_v128 vm = pe_f32x4_splat(-INFINITY);
    for (; c < n; c += 4) vm = pe_f32x4_pmax(vm, pe_f32x4_load(s + c));
    return pe_f32x4_hmax(vm);
#else
    float mx = -INFINITY;
    for (; c < n; c++) mx = mx < s[c] ? s[c] : mx;
    return mx;
#endif
}

/* Softmax numerators of one row in place, p_c = e^(s_c − m) for c < lim (0 from lim to the tile's end);
 * returns Σ p as four partial sums by c mod 4, combined as (s0 + s2) + (s1 + s3). */
static inline float pe__softmax_row(float *s, float m, int32_t lim, int32_t nk) {
    int32_t c = 0;
#if PE_SIMD
    const pe_v128 vm = pe_f32x4_splat(m);
    pe_v128 vsum = pe_f32x4_splat(0.0f);
    for (; c < lim; c += 4) { /* lanes past lim hold −∞: p = 0, which leaves the sums as they are */
        const pe_v128 p = pe__exp4(pe_f32x4_sub(pe_f32x4_load(s + c), vm));
        pe_f32x4_store(s + c, p);
        vsum = pe_f32x4_add(vsum, p);
    }
    for (; c < nk; c += 4) pe_f32x4_store(s + c, pe_f32x4_splat(0.0f));
    return pe_f32x4_sum(vsum);
#else
    float p4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (; c < lim; c++) {
        const float p = pe__exp1(s[c] - m);
        s[c] = p;
        p4[c & 3] += p;
    }
    for (; c < nk; c++) s[c] = 0.0f;
    return (p4[0] + p4[2]) + (p4[1] + p4[3]);
#endif
}

/* ---------------------------------------------------------------------------------------------- */
/* PV: acc = acc · corr + Σ_c p_c v_c                                                               */
/* ---------------------------------------------------------------------------------------------- */

/* One row (v_c = v + c * vs), keys c < nk. */
void pe__pv1(float *acc, float corr, const float *p, const float *v, size_t vs, int32_t nk, int32_t D);

/* Four rows (p rows ps apart), keys c < nk. */
void pe__pv4(float *const acc[4], const float corr[4], const float *p, size_t ps, const float *v, size_t vs, int32_t nk,
             int32_t D);

#endif
