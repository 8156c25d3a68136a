/* attention.c — fused scaled dot-product attention with RoPE, ALiBi, causal masking and GQA/MQA.
 *
 *   out = softmax(scale · Q Kᵀ + bias) · V            (Vaswani et al. 2017, section 3.2.1)
 *
 * Online softmax (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax"), blocked over keys
 * as in FlashAttention (Dao et al. 2022): for a block of queries we keep, per query row, the running maximum
 * m, the running sum l and an unnormalised accumulator acc (the output row itself). For each tile of keys:
 *
 *     s_j  = scale · q·k_j + slope · (kpos_j − qpos)     (−∞ where causal hides key j)
 *     m'   = max(m, max_j s_j)
 *     acc  = acc · e^(m − m') + Σ_j e^(s_j − m') v_j
 *     l    = l   · e^(m − m') + Σ_j e^(s_j − m')
 *
 * and finally out = acc / l. Every exponent is ≤ 0, so logits of ±1e4 (or any finite size) stay finite, and
 * no (q_len × k_len) matrix exists unless the caller asks for the weights.
 *
 * Blocking: up to PE__QB query rows (a block) share each tile of keys, so a K and a V tile are loaded into L1
 * once per block. The tile holds PE__SCAP scores in all (rows × keys), so a block of 32 prefill rows gets
 * 64-key tiles and a decode block of one row 512-key tiles (K, then V, streamed in long runs: ~20% faster
 * decode than 64-key tiles). The online-softmax step above is always PE__SEG = 64 keys, whatever the tile
 * (a 512-key tile is eight steps), so the numbers never depend on the tile size: decoding the last token
 * gives exactly the last row of the full causal pass. Inside a tile:
 *
 *   scores   rows in pairs × keys in fours (8 accumulators; each key chunk loaded once for two rows), or one
 *            row × 8 keys for decode; the four horizontal sums land in one vector (pe_f32x4_sum4), and scale,
 *            ALiBi and the causal mask are applied to that vector in registers before it is stored:
 *            s = dot · scale + slope · f32(kpos − qpos) with the relative position an i32x4 (kpos of the tile
 *            minus the row's qpos; no int64 per element), masked lanes −∞.
 *   softmax  per row and step: max as f32x4 pmax, then p = e^(s − m'), Σ p as four lane partial sums.
 *   PV       4 rows × 8 dims (each value chunk loaded once for four rows), or one row × 32 dims in sub-blocks
 *            of 16 keys for decode; acc · corr first (skipped when corr is 1, the usual case).
 * With the default key positions and a causal mask (key j visible to query i iff j ≤ qpos_i) the kernel visits
 * only the band: keys past the block's last query are never loaded, and within a tile a row (pair, or group
 * of four for PV) stops at its last visible key. Masked keys have p = 0 exactly, so skipping them changes
 * nothing but, at most, the sign of a zero.
 *
 * SIMD128 and scalar builds run the same arithmetic in the same order, so they agree bit for bit:
 *   - q·k: pe__dot's tree (pe_math.h): four lane partial sums over chunks of 4, combined as
 *     (p0 + p2) + (p1 + p3), then the tail d ≥ 4⌊D/4⌋ added in sequence; the tiled SIMD loops keep it per dot;
 *   - logit: (dot · scale) + slope · (float)(kpos − qpos), the relative position an exact int32;
 *   - e^x: pe__exp1 / pe__exp4 (pe_math.h; Cephes expf, ~1 ulp), the same operations lane-wise or in scalar;
 *   - Σ p per row and tile: four partial sums by key index mod 4, each ascending, combined as (s0 + s2) +
 *     (s1 + s3); max: exact in any order;
 *   - acc: per element acc·corr, then + p_j·v_j for j ascending.
 * The scalar twin walks one row and one key at a time; only the grouping of independent work differs.
 * The build is compiled with -ffp-contract=off, so no multiply-add is fused in either.
 *
 * Positions (see posenc.h): key j at kpos[j] (default j), query i at qpos[i] (default k_len − q_len + i).
 * RoPE rotates copies of q and k in the caller's scratch (q and k stay unmodified), with the library's own
 * pe_rope_cos_sin / pe_rope_apply, so the angles are the exact double-reduced ones of the RoPE kernels; with
 * k_rotated the keys are taken as already rotated (a KV cache of rotated keys) and only q is rotated.
 *
 * Real batches (posenc.h): positions per sequence (per_batch_positions), a key mask (HF's attention_mask) and an
 * additive bias broadcast over batch / heads / queries enter the logit after ALiBi, in the same order in both
 * builds (dot · scale·q_scale, + ALiBi, + bias, then −∞ where masked); a masked key is −∞ before the max, so a
 * padded batch in one call gives, per sequence, exactly the numbers of a batch-1 call on that sequence with the
 * same k_len. Views: q, k, v and out are addressed through strides and offsets (resolved once, extents checked
 * in 64 bits); RoPE gathers q and k into dense copies first, so the rotation never depends on the view.
 * v_head_dim sizes the PV step and out independently of the q·k head size.
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define PE__QB 32      /* query rows per block (online-softmax state on the stack) */
#define PE__SCAP 2048  /* scores per tile, rows x keys (8 KiB on the stack) */
#define PE__KB_MAX 512 /* keys per tile at most (one-row blocks: decode) */
#define PE__SEG 64     /* keys per online-softmax step: the numbers depend on it, never on the tile size */
_Static_assert(PE__SCAP >= PE__QB * PE__SEG && PE__KB_MAX % PE__SEG == 0, "a tile holds at least one step per row");
#define PE__PV_SUB 16 /* one-row PV: keys per sub-block (their V rows stay in L1 across the dim chunks) */

/* x[0..n) = e^(x - m) */
static void pe__exp_row(float *x, float m, int32_t n) {
    int32_t c = 0;
#if PE_SIMD
    const pe_v128 vm = pe_f32x4_splat(m);
    for (; c + 4 <= n; c += 4) pe_f32x4_store(x + c, pe__exp4(pe_f32x4_sub(pe_f32x4_load(x + c), vm)));
#endif
    for (; c < n; c++) x[c] = pe__exp1(x[c] - m);
}

/* ---------------------------------------------------------------------------------------------- */
/* Scores of one tile: s_c = q·k_c · scale (+ ALiBi), −∞ where masked; each returns its row's max   */
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

#if PE_SIMD
/* Four dot products (one row of the pair, keys c..c+3) -> logits: the scalar pe__logit lane by lane. */
PE_INLINE pe_v128 pe__logit4(pe_v128 dot, const pe__rowc *rc, const pe__tile *T, int32_t c) {
    pe_v128 x = pe_f32x4_mul(dot, pe_f32x4_splat(rc->scale));
    const pe_v128 qp = pe_i32x4_splat(rc->qp);
    const pe_v128 kp = T->kp ? pe_i32x4_load(T->kp + c) : qp;
    if (T->alibi) /* kp − qp is an exact int32 (pe_attention checks), converted with one rounding */
        x = pe_f32x4_add(x, pe_f32x4_mul(pe_f32x4_splat(rc->slope), pe_f32x4_from_i32x4(pe_i32x4_sub(kp, qp))));
    if (rc->bias) { /* lanes past the tile repeat its last key (they are masked): never read past the row */
        const float *b = rc->bias;
        const int32_t n1 = T->nk - 1;
        x = pe_f32x4_add(x, c + 4 <= T->nk
                                ? pe_f32x4_load(b + c)
                                : pe_f32x4_make(b[c], b[c + 1 < n1 ? c + 1 : n1], b[c + 2 < n1 ? c + 2 : n1], b[n1]));
    }
    pe_v128 mask = pe_i32x4_ge(pe_i32x4_add(pe_i32x4_splat(c), pe_i32x4_make(0, 1, 2, 3)), pe_i32x4_splat(rc->lim));
    if (T->causal_kp) mask = pe_v128_or(mask, pe_i32x4_gt(kp, qp));
    if (T->km) mask = pe_v128_or(mask, pe_i32x4_eq(pe_i32x4_load(T->km + c), pe_i32x4_splat(0)));
    return pe_v128_select(pe_f32x4_splat(-INFINITY), x, mask);
}

/* Adds the head_dim tail (d >= 4⌊D/4⌋) to four dots: lane l gets + q[d]·k_l[d] for d ascending, as
 * pe__dot (pe_math.h) does. */
PE_INLINE pe_v128 pe__dot_tail4(pe_v128 s, const float *q, const float *k0, const float *k1, const float *k2,
                                const float *k3, int32_t d, int32_t D) {
    for (; d < D; d++)
        s = pe_f32x4_add(s, pe_f32x4_mul(pe_f32x4_make(k0[d], k1[d], k2[d], k3[d]), pe_f32x4_splat(q[d])));
    return s;
}

/* One row against the tile, 8 keys per step (8 independent accumulators: decode is one row per block). The
 * last group of 4 may run past the tile: its extra lanes repeat the last key (valid memory) and are masked.
 * s is written up to the tile's end rounded up to 4 (−∞ past lim). */
static void pe__scores1(float *s, const float *q, const pe__rowc *rc, const pe__tile *T) {
    const int32_t D = T->D, D4 = D & ~3, nk = T->nk, lim = rc->lim;
    const size_t ks = T->ks;
    int32_t c = 0;
    for (; c + 8 <= lim; c += 8) {
        const float *k0 = T->k + (size_t)c * ks, *k1 = k0 + ks, *k2 = k1 + ks, *k3 = k2 + ks;
        const float *k4 = k3 + ks, *k5 = k4 + ks, *k6 = k5 + ks, *k7 = k6 + ks;
        pe_v128 a0 = pe_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        int32_t d = 0;
        for (; d < D4; d += 4) {
            const pe_v128 x = pe_f32x4_load(q + d);
            a0 = pe_f32x4_add(a0, pe_f32x4_mul(x, pe_f32x4_load(k0 + d)));
            a1 = pe_f32x4_add(a1, pe_f32x4_mul(x, pe_f32x4_load(k1 + d)));
            a2 = pe_f32x4_add(a2, pe_f32x4_mul(x, pe_f32x4_load(k2 + d)));
            a3 = pe_f32x4_add(a3, pe_f32x4_mul(x, pe_f32x4_load(k3 + d)));
            a4 = pe_f32x4_add(a4, pe_f32x4_mul(x, pe_f32x4_load(k4 + d)));
            a5 = pe_f32x4_add(a5, pe_f32x4_mul(x, pe_f32x4_load(k5 + d)));
            a6 = pe_f32x4_add(a6, pe_f32x4_mul(x, pe_f32x4_load(k6 + d)));
            a7 = pe_f32x4_add(a7, pe_f32x4_mul(x, pe_f32x4_load(k7 + d)));
        }
        pe_v128 s0 = pe_f32x4_sum4(a0, a1, a2, a3), s1 = pe_f32x4_sum4(a4, a5, a6, a7);
        if (d < D) {
            s0 = pe__dot_tail4(s0, q, k0, k1, k2, k3, d, D);
            s1 = pe__dot_tail4(s1, q, k4, k5, k6, k7, d, D);
        }
        s0 = pe__logit4(s0, rc, T, c);
        s1 = pe__logit4(s1, rc, T, c + 4);
        pe_f32x4_store(s + c, s0);
        pe_f32x4_store(s + c + 4, s1);
    }
    for (; c < lim; c += 4) {
        const float *k0 = T->k + (size_t)c * ks;
        const float *k1 = T->k + (size_t)(c + 1 < nk ? c + 1 : nk - 1) * ks;
        const float *k2 = T->k + (size_t)(c + 2 < nk ? c + 2 : nk - 1) * ks;
        const float *k3 = T->k + (size_t)(c + 3 < nk ? c + 3 : nk - 1) * ks;
        pe_v128 a0 = pe_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
        int32_t d = 0;
        for (; d < D4; d += 4) {
            const pe_v128 x = pe_f32x4_load(q + d);
            a0 = pe_f32x4_add(a0, pe_f32x4_mul(x, pe_f32x4_load(k0 + d)));
            a1 = pe_f32x4_add(a1, pe_f32x4_mul(x, pe_f32x4_load(k1 + d)));
            a2 = pe_f32x4_add(a2, pe_f32x4_mul(x, pe_f32x4_load(k2 + d)));
            a3 = pe_f32x4_add(a3, pe_f32x4_mul(x, pe_f32x4_load(k3 + d)));
        }
        pe_v128 s0 = pe_f32x4_sum4(a0, a1, a2, a3);
        if (d < D) s0 = pe__dot_tail4(s0, q, k0, k1, k2, k3, d, D);
        pe_f32x4_store(s + c, pe__logit4(s0, rc, T, c));
    }
    for (; c < nk; c += 4) pe_f32x4_store(s + c, pe_f32x4_splat(-INFINITY));
}

/* Two rows against the tile, 4 keys per step: 8 accumulators from 2 query and 4 key loads per chunk. */
static void pe__scores2(float *s0, float *s1, const float *q0, const float *q1, const pe__rowc rc[2],
                        const pe__tile *T) {
    const int32_t D = T->D, D4 = D & ~3, nk = T->nk, lim = rc[0].lim > rc[1].lim ? rc[0].lim : rc[1].lim;
    const size_t ks = T->ks;
    int32_t c = 0;
    for (; c < lim; c += 4) {
        const float *k0 = T->k + (size_t)c * ks, *k1, *k2, *k3;
        if (c + 4 <= nk) {
            k1 = k0 + ks;
            k2 = k1 + ks;
            k3 = k2 + ks;
        } else {
            k1 = T->k + (size_t)(c + 1 < nk ? c + 1 : nk - 1) * ks;
            k2 = T->k + (size_t)(c + 2 < nk ? c + 2 : nk - 1) * ks;
            k3 = T->k + (size_t)(nk - 1) * ks;
        }
        pe_v128 a0 = pe_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        int32_t d = 0;
        for (; d < D4; d += 4) {
            const pe_v128 x = pe_f32x4_load(q0 + d), y = pe_f32x4_load(q1 + d);
            pe_v128 kv = pe_f32x4_load(k0 + d);
            a0 = pe_f32x4_add(a0, pe_f32x4_mul(x, kv));
            b0 = pe_f32x4_add(b0, pe_f32x4_mul(y, kv));
            kv = pe_f32x4_load(k1 + d);
            a1 = pe_f32x4_add(a1, pe_f32x4_mul(x, kv));
            b1 = pe_f32x4_add(b1, pe_f32x4_mul(y, kv));
            kv = pe_f32x4_load(k2 + d);
            a2 = pe_f32x4_add(a2, pe_f32x4_mul(x, kv));
            b2 = pe_f32x4_add(b2, pe_f32x4_mul(y, kv));
            kv = pe_f32x4_load(k3 + d);
            a3 = pe_f32x4_add(a3, pe_f32x4_mul(x, kv));
            b3 = pe_f32x4_add(b3, pe_f32x4_mul(y, kv));
        }
        pe_v128 x0 = pe_f32x4_sum4(a0, a1, a2, a3), x1 = pe_f32x4_sum4(b0, b1, b2, b3);
        if (d < D) {
            x0 = pe__dot_tail4(x0, q0, k0, k1, k2, k3, d, D);
            x1 = pe__dot_tail4(x1, q1, k0, k1, k2, k3, d, D);
        }
        pe_f32x4_store(s0 + c, pe__logit4(x0, &rc[0], T, c));
        pe_f32x4_store(s1 + c, pe__logit4(x1, &rc[1], T, c));
    }
    for (; c < nk; c += 4) {
        pe_f32x4_store(s0 + c, pe_f32x4_splat(-INFINITY));
        pe_f32x4_store(s1 + c, pe_f32x4_splat(-INFINITY));
    }
}

#else /* scalar twin */

static void pe__scores1(float *s, const float *q, const pe__rowc *rc, const pe__tile *T) {
    const float scale = rc->scale, slope = rc->slope;
    const int32_t qp = rc->qp, lim = rc->lim;
    int32_t c = 0;
    for (; c < lim; c++) {
        float x = pe__dot(q, T->k + (size_t)c * T->ks, T->D) * scale;
        if (T->alibi) x = x + slope * (float)(T->kp[c] - qp);
        if (rc->bias) x = x + rc->bias[c];
        if ((T->causal_kp && T->kp[c] > qp) || (T->km && T->km[c] == 0)) x = -INFINITY;
        s[c] = x;
    }
    for (; c < T->nk; c++) s[c] = -INFINITY;
}
#endif

/* max of s[0..n) (−∞ for n = 0); in SIMD over whole groups of 4, whose lanes past n hold −∞ */
static float pe__max_row(const float *s, int32_t n) {
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
static float pe__softmax_row(float *s, float m, int32_t lim, int32_t nk) {
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

static void pe__scale_row(float *acc, float corr, int32_t D) {
    if (corr == 1.0f) return; /* the usual case once the max settles; x · 1 = x exactly */
    int32_t d = 0;
#if PE_SIMD
    const pe_v128 vc = pe_f32x4_splat(corr);
    for (; d + 4 <= D; d += 4) pe_f32x4_store(acc + d, pe_f32x4_mul(pe_f32x4_load(acc + d), vc));
#endif
    for (; d < D; d++) acc[d] = acc[d] * corr;
}

/* One row (v_c = v + c * vs), keys c < nk. */
static void pe__pv1(float *acc, float corr, const float *p, const float *v, size_t vs, int32_t nk, int32_t D) {
    pe__scale_row(acc, corr, D);
#if PE_SIMD
    /* Sub-blocks of PE__PV_SUB keys, and within one all of head_dim in chunks of 32, 8 and 4 dims (8, 2, 1
     * accumulators in registers): the sub-block's V rows stay in L1 from one chunk to the next. Per element
     * the sequence is still acc, + p_0 v_0, + p_1 v_1, ... */
    for (int32_t c0 = 0; c0 < nk; c0 += PE__PV_SUB) {
        const int32_t c1 = nk - c0 < PE__PV_SUB ? nk : c0 + PE__PV_SUB;
        int32_t d = 0;
        for (; d + 32 <= D; d += 32) {
            float *o = acc + d;
            pe_v128 x0 = pe_f32x4_load(o), x1 = pe_f32x4_load(o + 4), x2 = pe_f32x4_load(o + 8);
            pe_v128 x3 = pe_f32x4_load(o + 12), x4 = pe_f32x4_load(o + 16), x5 = pe_f32x4_load(o + 20);
            pe_v128 x6 = pe_f32x4_load(o + 24), x7 = pe_f32x4_load(o + 28);
            const float *vr = v + (size_t)c0 * vs + d;
            for (int32_t c = c0; c < c1; c++, vr += vs) {
                const pe_v128 pc = pe_f32x4_splat(p[c]);
                x0 = pe_f32x4_add(x0, pe_f32x4_mul(pc, pe_f32x4_load(vr)));
                x1 = pe_f32x4_add(x1, pe_f32x4_mul(pc, pe_f32x4_load(vr + 4)));
                x2 = pe_f32x4_add(x2, pe_f32x4_mul(pc, pe_f32x4_load(vr + 8)));
                x3 = pe_f32x4_add(x3, pe_f32x4_mul(pc, pe_f32x4_load(vr + 12)));
                x4 = pe_f32x4_add(x4, pe_f32x4_mul(pc, pe_f32x4_load(vr + 16)));
                x5 = pe_f32x4_add(x5, pe_f32x4_mul(pc, pe_f32x4_load(vr + 20)));
                x6 = pe_f32x4_add(x6, pe_f32x4_mul(pc, pe_f32x4_load(vr + 24)));
                x7 = pe_f32x4_add(x7, pe_f32x4_mul(pc, pe_f32x4_load(vr + 28)));
            }
            pe_f32x4_store(o, x0);
            pe_f32x4_store(o + 4, x1);
            pe_f32x4_store(o + 8, x2);
            pe_f32x4_store(o + 12, x3);
            pe_f32x4_store(o + 16, x4);
            pe_f32x4_store(o + 20, x5);
            pe_f32x4_store(o + 24, x6);
            pe_f32x4_store(o + 28, x7);
        }
        for (; d + 8 <= D; d += 8) {
            pe_v128 x0 = pe_f32x4_load(acc + d), x1 = pe_f32x4_load(acc + d + 4);
            for (int32_t c = c0; c < c1; c++) {
                const float *vr = v + (size_t)c * vs + d;
                const pe_v128 pc = pe_f32x4_splat(p[c]);
                x0 = pe_f32x4_add(x0, pe_f32x4_mul(pc, pe_f32x4_load(vr)));
                x1 = pe_f32x4_add(x1, pe_f32x4_mul(pc, pe_f32x4_load(vr + 4)));
            }
            pe_f32x4_store(acc + d, x0);
            pe_f32x4_store(acc + d + 4, x1);
        }
        for (; d + 4 <= D; d += 4) {
            pe_v128 x0 = pe_f32x4_load(acc + d);
            for (int32_t c = c0; c < c1; c++)
                x0 = pe_f32x4_add(x0, pe_f32x4_mul(pe_f32x4_splat(p[c]), pe_f32x4_load(v + (size_t)c * vs + d)));
            pe_f32x4_store(acc + d, x0);
        }
        for (; d < D; d++) {
            float a = acc[d];
            for (int32_t c = c0; c < c1; c++) a += p[c] * v[(size_t)c * vs + d];
            acc[d] = a;
        }
    }
#else
    for (int32_t c = 0; c < nk; c++) {
        const float *vr = v + (size_t)c * vs;
        const float pc = p[c];
        for (int32_t e = 0; e < D; e++) acc[e] += pc * vr[e];
    }
#endif
}

/* Four rows (p rows ps apart), keys c < nk: each value chunk is loaded once for the four accumulators. */
static void pe__pv4(float *const acc[4], const float corr[4], const float *p, size_t ps, const float *v, size_t vs,
                    int32_t nk, int32_t D) {
#if PE_SIMD
    for (int r = 0; r < 4; r++) pe__scale_row(acc[r], corr[r], D);
    float *o0 = acc[0], *o1 = acc[1], *o2 = acc[2], *o3 = acc[3];
    const float *p0 = p, *p1 = p + ps, *p2 = p + 2 * ps, *p3 = p + 3 * ps;
    int32_t d = 0;
    for (; d + 8 <= D; d += 8) {
        pe_v128 x00 = pe_f32x4_load(o0 + d), x01 = pe_f32x4_load(o0 + d + 4);
        pe_v128 x10 = pe_f32x4_load(o1 + d), x11 = pe_f32x4_load(o1 + d + 4);
        pe_v128 x20 = pe_f32x4_load(o2 + d), x21 = pe_f32x4_load(o2 + d + 4);
        pe_v128 x30 = pe_f32x4_load(o3 + d), x31 = pe_f32x4_load(o3 + d + 4);
        const float *vr = v + d;
        for (int32_t c = 0; c < nk; c++, vr += vs) {
            const pe_v128 va = pe_f32x4_load(vr), vb = pe_f32x4_load(vr + 4);
            pe_v128 pc = pe_f32x4_splat(p0[c]);
            x00 = pe_f32x4_add(x00, pe_f32x4_mul(pc, va));
            x01 = pe_f32x4_add(x01, pe_f32x4_mul(pc, vb));
            pc = pe_f32x4_splat(p1[c]);
            x10 = pe_f32x4_add(x10, pe_f32x4_mul(pc, va));
            x11 = pe_f32x4_add(x11, pe_f32x4_mul(pc, vb));
            pc = pe_f32x4_splat(p2[c]);
            x20 = pe_f32x4_add(x20, pe_f32x4_mul(pc, va));
            x21 = pe_f32x4_add(x21, pe_f32x4_mul(pc, vb));
            pc = pe_f32x4_splat(p3[c]);
            x30 = pe_f32x4_add(x30, pe_f32x4_mul(pc, va));
            x31 = pe_f32x4_add(x31, pe_f32x4_mul(pc, vb));
        }
        pe_f32x4_store(o0 + d, x00);
        pe_f32x4_store(o0 + d + 4, x01);
        pe_f32x4_store(o1 + d, x10);
        pe_f32x4_store(o1 + d + 4, x11);
        pe_f32x4_store(o2 + d, x20);
        pe_f32x4_store(o2 + d + 4, x21);
        pe_f32x4_store(o3 + d, x30);
        pe_f32x4_store(o3 + d + 4, x31);
    }
    for (; d + 4 <= D; d += 4) {
        pe_v128 x0 = pe_f32x4_load(o0 + d), x1 = pe_f32x4_load(o1 + d);
        pe_v128 x2 = pe_f32x4_load(o2 + d), x3 = pe_f32x4_load(o3 + d);
        for (int32_t c = 0; c < nk; c++) {
            const pe_v128 vv = pe_f32x4_load(v + (size_t)c * vs + d);
            x0 = pe_f32x4_add(x0, pe_f32x4_mul(pe_f32x4_splat(p0[c]), vv));
            x1 = pe_f32x4_add(x1, pe_f32x4_mul(pe_f32x4_splat(p1[c]), vv));
            x2 = pe_f32x4_add(x2, pe_f32x4_mul(pe_f32x4_splat(p2[c]), vv));
            x3 = pe_f32x4_add(x3, pe_f32x4_mul(pe_f32x4_splat(p3[c]), vv));
        }
        pe_f32x4_store(o0 + d, x0);
        pe_f32x4_store(o1 + d, x1);
        pe_f32x4_store(o2 + d, x2);
        pe_f32x4_store(o3 + d, x3);
    }
    for (; d < D; d++)
        for (int r = 0; r < 4; r++) {
            const float *pr = p + (size_t)r * ps;
            float a = acc[r][d];
            for (int32_t c = 0; c < nk; c++) a += pr[c] * v[(size_t)c * vs + d];
            acc[r][d] = a;
        }
#else
    for (int r = 0; r < 4; r++) pe__pv1(acc[r], corr[r], p + (size_t)r * ps, v, vs, nk, D);
#endif
}

/* ---------------------------------------------------------------------------------------------- */
/* Configuration                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

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
    pe__view q, k, v, o; /* strides (floats) */
    size_t n_q, n_k;     /* dense elements of q and of k (rope's copies) */
    int w_too_large;     /* (B, H, q_len, k_len) cannot be addressed */
    size_t n_scratch;    /* floats of scratch needed */
} pe__attn;

/* *out = a * b, failing past limit (both operands >= 0) */
static int pe__mul(uint64_t *out, uint64_t a, uint64_t b, uint64_t limit) {
    if (a != 0 && b > limit / a) return 0;
    *out = a * b;
    return 1;
}

/* Resolves one view (0 strides -> dense for the layout, head size hd) and checks that its furthest element
 * (offset + Σ (count − 1) · stride + hd) is addressable, in 64-bit arithmetic; with no_overlap, also that no
 * two head vectors overlap: the axes of more than one element, sorted by stride, nest (the smallest stride
 * >= hd, each next one >= the previous stride times its count). */
static pe_status pe__resolve_view(pe__view *vw, const pe_strides *st, int64_t offset, int bhsd, int64_t B, int64_t S,
                                  int64_t H, int64_t hd, int no_overlap, uint64_t lim) {
    if (st->batch < 0 || st->seq < 0 || st->heads < 0 || offset < 0) return PE_ERR_SHAPE;
    uint64_t sh_d, sbd;
    if (!pe__mul(&sh_d, (uint64_t)S, (uint64_t)H, lim) || !pe__mul(&sbd, sh_d, (uint64_t)hd, lim)) return PE_ERR_SHAPE;
    const int64_t sb = st->batch ? st->batch : (int64_t)sbd;
    const int64_t ss = st->seq ? st->seq : (bhsd ? hd : H * hd);
    const int64_t sh = st->heads ? st->heads : (bhsd ? S * hd : hd);
    const int64_t counts[3] = {B, S, H}, strides[3] = {sb, ss, sh};
    if (B == 0 || S == 0) { /* nothing is read or written */
        vw->off = 0, vw->sb = vw->ss = vw->sh = 0;
        return PE_OK;
    }
    uint64_t end = (uint64_t)hd;
    if ((uint64_t)offset > lim - end) return PE_ERR_SHAPE;
    end += (uint64_t)offset;
    for (int a = 0; a < 3; a++) {
        uint64_t span;
        if (!pe__mul(&span, (uint64_t)(counts[a] - 1), (uint64_t)strides[a], lim) || span > lim - end)
            return PE_ERR_SHAPE;
        end += span;
    }
    if (no_overlap) {
        int64_t cs[3][2];
        int m = 0;
        for (int a = 0; a < 3; a++)
            if (counts[a] > 1) cs[m][0] = strides[a], cs[m][1] = counts[a], m++;
        for (int i = 1; i < m; i++)
            for (int j = i; j > 0 && cs[j][0] < cs[j - 1][0]; j--) {
                const int64_t t0 = cs[j][0], t1 = cs[j][1];
                cs[j][0] = cs[j - 1][0], cs[j][1] = cs[j - 1][1];
                cs[j - 1][0] = t0, cs[j - 1][1] = t1;
            }
        int64_t need = hd;
        for (int i = 0; i < m; i++) {
            if (cs[i][0] < need) return PE_ERR_SHAPE;
            need = cs[i][0] * cs[i][1]; /* <= end: no overflow */
        }
    }
    vw->off = (size_t)offset, vw->sb = (size_t)sb, vw->ss = (size_t)ss, vw->sh = (size_t)sh;
    return PE_OK;
}

static pe_status pe__attn_resolve(pe__attn *A, const pe_attention_config *cfg) {
    if (!cfg) return PE_ERR_NULL;
    memset(A, 0, sizeof *A);
    A->B = cfg->batch;
    A->H = cfg->heads;
    A->KVH = cfg->kv_heads == 0 ? cfg->heads : cfg->kv_heads;
    A->Sq = cfg->q_len;
    A->Sk = cfg->k_len;
    A->D = cfg->head_dim;
    A->Dv = cfg->v_head_dim == 0 ? cfg->head_dim : cfg->v_head_dim;
    if (A->H < 1 || A->KVH < 1 || A->H % A->KVH != 0) return PE_ERR_HEADS;
    A->group = A->H / A->KVH;
    if (A->B < 0 || A->Sq < 0 || A->Sk < 0 || A->D < 1 || A->Dv < 1) return PE_ERR_SHAPE;
    if (cfg->layout != PE_LAYOUT_BSHD && cfg->layout != PE_LAYOUT_BHSD) return PE_ERR_LAYOUT;
    A->causal = cfg->causal != 0;
    A->scale = cfg->scale == 0.0f ? (float)(1.0 / sqrt((double)A->D)) : cfg->scale;
    if (!isfinite(A->scale)) return PE_ERR_SCALE;
    A->slopes = cfg->alibi_slopes;
    A->rope = cfg->rope;
    A->qpos = cfg->q_positions;
    A->kpos = cfg->k_positions;
    A->per_batch = cfg->per_batch_positions != 0;
    A->k_rotated = cfg->k_rotated != 0;
    A->kmask = cfg->key_mask;
    A->bias = cfg->bias;
    A->bias_b = cfg->bias_batch == 0 ? 1 : cfg->bias_batch;
    A->bias_h = cfg->bias_heads == 0 ? 1 : cfg->bias_heads;
    A->bias_q = cfg->bias_q_len == 0 ? A->Sq : cfg->bias_q_len;
    if (A->bias && ((A->bias_b != 1 && A->bias_b != A->B) || (A->bias_h != 1 && A->bias_h != A->H) ||
                    (A->bias_q != 1 && A->bias_q != A->Sq)))
        return PE_ERR_SHAPE;
    A->qscale = cfg->q_scale;
    A->qscale_pb = cfg->q_scale_per_batch != 0;
    if (cfg->rope_seq_len < 0) return PE_ERR_SEQ_LEN;
    if (A->rope) {
        const pe_rope *r = A->rope;
        if (r->config.head_dim != A->D) return PE_ERR_SHAPE;
        if (r->n_freq < 1 || r->n_freq > PE_ROPE_MAX_FREQ || 2 * r->n_freq > A->D) return PE_ERR_FIELD_VALUE;
    }

    /* Sizes: everything must be addressable with size_t (wasm32: 4 GiB of floats at most). */
    const uint64_t lim = (uint64_t)(SIZE_MAX / sizeof(float));
    uint64_t t, nq, nk, nw, ns;
    A->w_too_large = 0;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->H, lim) || !pe__mul(&t, t, (uint64_t)A->Sq, lim) ||
        !pe__mul(&nq, t, (uint64_t)A->D, lim) || !pe__mul(&t, t, (uint64_t)A->Dv, lim))
        return PE_ERR_SHAPE;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->KVH, lim) || !pe__mul(&t, t, (uint64_t)A->Sk, lim) ||
        !pe__mul(&nk, t, (uint64_t)A->D, lim) || !pe__mul(&t, t, (uint64_t)A->Dv, lim))
        return PE_ERR_SHAPE;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->H, lim) || !pe__mul(&t, t, (uint64_t)A->Sq, lim) ||
        !pe__mul(&nw, t, (uint64_t)A->Sk, lim))
        A->w_too_large = 1; /* refused only when weights are requested */
    if (A->bias && (!pe__mul(&t, (uint64_t)A->bias_b, (uint64_t)A->bias_h, lim) ||
                    !pe__mul(&t, t, (uint64_t)A->bias_q, lim) || !pe__mul(&t, t, (uint64_t)A->Sk, lim)))
        return PE_ERR_SHAPE;
    ns = 0;
    if (A->rope && nq > 0) { /* an empty call (batch or q_len 0) needs no scratch */
        /* dense rotated q and k, then cos and sin rows: one per position, or per (batch, position) */
        const uint64_t nkr = A->k_rotated ? 0u : nk;
        const uint64_t qrows = (uint64_t)A->Sq * (A->qpos && A->per_batch ? (uint64_t)A->B : 1u);
        const uint64_t krows = A->k_rotated ? 0u : (uint64_t)A->Sk * (A->kpos && A->per_batch ? (uint64_t)A->B : 1u);
        ns = nq + nkr;
        uint64_t tab;
        if (ns > lim || !pe__mul(&tab, qrows + krows, 2u * (uint64_t)A->rope->n_freq, lim) || tab > lim - ns)
            return PE_ERR_SHAPE;
        ns += tab;
    }
    A->n_q = (size_t)nq;
    A->n_k = (size_t)nk;
    A->n_scratch = (size_t)ns;

    const int bhsd = cfg->layout == PE_LAYOUT_BHSD;
    pe_status st;
    if ((st = pe__resolve_view(&A->q, &cfg->q_strides, cfg->q_offset, bhsd, A->B, A->Sq, A->H, A->D, 0, lim)) !=
            PE_OK ||
        (st = pe__resolve_view(&A->o, &cfg->out_strides, cfg->out_offset, bhsd, A->B, A->Sq, A->H, A->Dv, 1, lim)) !=
            PE_OK ||
        (st = pe__resolve_view(&A->k, &cfg->k_strides, cfg->k_offset, bhsd, A->B, A->Sk, A->KVH, A->D, 0, lim)) !=
            PE_OK ||
        (st = pe__resolve_view(&A->v, &cfg->v_strides, cfg->v_offset, bhsd, A->B, A->Sk, A->KVH, A->Dv, 0, lim)) !=
            PE_OK)
        return st;
    return PE_OK;
}

pe_status pe_attention_scratch_size(size_t *n_floats, const pe_attention_config *cfg) {
    if (!n_floats) return PE_ERR_NULL;
    pe__attn A;
    pe_status st = pe__attn_resolve(&A, cfg);
    if (st != PE_OK) return st;
    *n_floats = A.n_scratch;
    return PE_OK;
}

/* Query i's position in sequence b; the default k_len − q_len + i lies in [k_len − q_len, k_len − 1], an int32. */
static inline int32_t pe__qpos(const pe__attn *A, int32_t b, int32_t i) {
    if (!A->qpos) return (int32_t)((int64_t)A->Sk - (int64_t)A->Sq + (int64_t)i);
    return A->qpos[(A->per_batch ? (size_t)b * (size_t)A->Sq : 0u) + (size_t)i];
}

/* cos/sin rows for n positions given by pos (or, when pos is NULL, first + 0 .. n-1), in chunks so that
 * default positions need no array in scratch. */
static pe_status pe__rope_tables(float *cos, float *sin, const pe_rope *rope, const int32_t *pos, int64_t first,
                                 int32_t n, int64_t seq_len) {
    if (pos) return pe_rope_cos_sin(cos, sin, rope, pos, n, seq_len, 1.0);
    int32_t buf[256];
    const size_t nf = (size_t)rope->n_freq;
    for (int32_t i0 = 0; i0 < n; i0 += 256) {
        const int32_t m = n - i0 < 256 ? n - i0 : 256;
        for (int32_t i = 0; i < m; i++) buf[i] = (int32_t)(first + i0 + i);
        pe_status st = pe_rope_cos_sin(cos + (size_t)i0 * nf, sin + (size_t)i0 * nf, rope, buf, m, seq_len, 1.0);
        if (st != PE_OK) return st;
    }
    return PE_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* One block of up to PE__QB query rows of one (batch, kv head)                                   */
/* ---------------------------------------------------------------------------------------------- */
/* The rows of a block: query row t of kv head g's group is query i = t / group of head
 * h = g * group + t % group, so with GQA/MQA the query heads that share a kv head share every K and V
 * tile load (for decoding, q_len = 1, that divides the K/V traffic by the group size). */
typedef struct pe__rows {
    const float *q[PE__QB];
    float *o[PE__QB];
    float *w[PE__QB];          /* weights row (k_len floats), or NULL */
    const float *bias[PE__QB]; /* bias row (k_len floats), or NULL */
    float slope[PE__QB], scale[PE__QB];
    int32_t qp[PE__QB];
} pe__rows;

/* Keys per tile for a block of nq rows: PE__SCAP scores in all, a multiple of PE__SEG, at most PE__KB_MAX. */
static inline int32_t pe__tile_keys(int32_t nq) {
    const int32_t kb = (PE__SCAP / nq) / PE__SEG * PE__SEG;
    return kb < PE__SEG ? PE__SEG : (kb < PE__KB_MAX ? kb : PE__KB_MAX);
}

/* kh, vh: the block's kv head; kpos, kmask: its sequence's key positions and key mask (or NULL). */
static void pe__attn_block(const pe__attn *A, const pe__rows *R, int32_t nq, const float *kh, const float *vh,
                           const int32_t *kpos, const int32_t *kmask) {
    _Alignas(16) float S[PE__SCAP];
    _Alignas(16) int32_t kpt[PE__KB_MAX], kmt[PE__KB_MAX];
    float m[PE__QB], l[PE__QB], corr[PE__KB_MAX / PE__SEG][PE__QB];
    pe__rowc rc[PE__QB];
    const int want_w = R->w[0] != NULL;
    const int32_t Dv = A->Dv, Sk = A->Sk, kb = pe__tile_keys(nq);
    const size_t ks = A->k.ss, vs = A->v.ss;
    /* With the default key positions, causal visibility is a band: key j is visible to query i iff
     * j <= qpos_i. Keys past the block's last query are never visited, and each row's lim stops at its own. */
    const int band = A->causal && !kpos;

    int32_t qp_max = R->qp[0];
    for (int32_t r = 0; r < nq; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
        memset(R->o[r], 0, sizeof(float) * (size_t)Dv);
        qp_max = R->qp[r] > qp_max ? R->qp[r] : qp_max;
        rc[r].scale = R->scale[r];
        rc[r].slope = R->slope[r];
        rc[r].qp = R->qp[r];
    }
    int32_t jend = Sk;
    if (band) jend = qp_max < 0 ? 0 : (qp_max < Sk ? qp_max + 1 : Sk);

    pe__tile T;
    T.ks = ks;
    T.D = A->D;
    T.alibi = A->slopes != NULL;
    T.causal_kp = A->causal && kpos != NULL;
    T.kp = T.alibi || T.causal_kp ? kpt : NULL;
    T.km = kmask ? kmt : NULL;

    for (int32_t j0 = 0; j0 < jend; j0 += kb) {
        const int32_t nk = jend - j0 < kb ? jend - j0 : kb;
        const float *vt = vh + (size_t)j0 * vs;
        T.k = kh + (size_t)j0 * ks;
        T.nk = nk;
        if (kmask) {
            int32_t c = 0;
            for (; c < nk; c++) kmt[c] = kmask[j0 + c];
            for (; c < ((nk + 3) & ~3); c++) kmt[c] = 0; /* padding lanes: masked */
        }
        if (T.kp) {
            int32_t c = 0;
            if (kpos)
                for (; c < nk; c++) kpt[c] = kpos[j0 + c];
            else
                for (; c < nk; c++) kpt[c] = j0 + c;
            for (; c < ((nk + 3) & ~3); c++) kpt[c] = kpt[nk - 1]; /* padding lanes (masked) */
        }
        for (int32_t r = 0; r < nq; r++) {
            int32_t lim = nk;
            if (band) {
                const int64_t e = (int64_t)rc[r].qp - j0 + 1; /* keys j0 .. qp are visible */
                lim = e <= 0 ? 0 : (e < nk ? (int32_t)e : nk);
            }
            rc[r].lim = lim;
            rc[r].bias = R->bias[r] ? R->bias[r] + j0 : NULL;
        }

        /* scores */
        int32_t r = 0;
#if PE_SIMD
        for (; r + 2 <= nq; r += 2)
            pe__scores2(S + (size_t)r * kb, S + (size_t)(r + 1) * kb, R->q[r], R->q[r + 1], &rc[r], &T);
#endif
        for (; r < nq; r++) pe__scores1(S + (size_t)r * kb, R->q[r], &rc[r], &T);

        /* online softmax update, one step per PE__SEG keys (a tile is 1..8 steps; decode's 512-key tiles give
         * the same numbers as prefill's 64-key ones) */
        const int32_t nseg = (nk + PE__SEG - 1) / PE__SEG;
        for (r = 0; r < nq; r++) {
            float *s = S + (size_t)r * kb;
            if (want_w) memcpy(R->w[r] + j0, s, sizeof(float) * (size_t)nk);
            for (int32_t g = 0; g < nseg; g++) {
                const int32_t c0 = g * PE__SEG, c1 = nk - c0 < PE__SEG ? nk : c0 + PE__SEG;
                const int32_t lim = rc[r].lim < c0 ? 0 : (rc[r].lim < c1 ? rc[r].lim : c1) - c0; /* in the step */
                const float mx = pe__max_row(s + c0, lim);
                const float mnew = m[r] < mx ? mx : m[r];
                if (mnew == -INFINITY) { /* nothing visible yet: p = 0, state unchanged */
                    memset(s + c0, 0, sizeof(float) * (size_t)(c1 - c0));
                    corr[g][r] = 1.0f;
                    continue;
                }
                corr[g][r] = pe__exp1(m[r] - mnew); /* e^(−inf) = 0 on the first visible step */
                const float sum = pe__softmax_row(s + c0, mnew, lim, c1 - c0);
                l[r] = l[r] * corr[g][r] + sum;
                m[r] = mnew;
            }
        }

        /* acc = acc · corr + P V step by step, each row group only up to its last visible key */
        for (r = 0; r + 4 <= nq; r += 4) {
            int32_t lim = rc[r].lim;
            for (int32_t t = 1; t < 4; t++) lim = rc[r + t].lim > lim ? rc[r + t].lim : lim;
            for (int32_t g = 0; g < nseg; g++) {
                const int32_t c0 = g * PE__SEG, c1 = nk - c0 < PE__SEG ? nk : c0 + PE__SEG;
                const int32_t n = lim < c0 ? 0 : (lim < c1 ? lim : c1) - c0;
                pe__pv4(&R->o[r], &corr[g][r], S + (size_t)r * kb + c0, (size_t)kb, vt + (size_t)c0 * vs, vs, n, Dv);
            }
        }
        for (; r < nq; r++)
            for (int32_t g = 0; g < nseg; g++) {
                const int32_t c0 = g * PE__SEG, c1 = nk - c0 < PE__SEG ? nk : c0 + PE__SEG;
                const int32_t n = rc[r].lim < c0 ? 0 : (rc[r].lim < c1 ? rc[r].lim : c1) - c0;
                pe__pv1(R->o[r], corr[g][r], S + (size_t)r * kb + c0, vt + (size_t)c0 * vs, vs, n, Dv);
            }
    }

    /* out = acc / l; a row that saw no key (l == 0) stays all zeros */
    for (int32_t r = 0; r < nq; r++) {
        if (l[r] == 0.0f) continue;
        float *o = R->o[r];
        int32_t d = 0;
#if PE_SIMD
        const pe_v128 vl = pe_f32x4_splat(l[r]);
        for (; d + 4 <= Dv; d += 4) pe_f32x4_store(o + d, pe_f32x4_div(pe_f32x4_load(o + d), vl));
#endif
        for (; d < Dv; d++) o[d] = o[d] / l[r];
    }

    /* weights = e^(s − m) / l from the stored scores and the final m, l; zeros where never visited */
    if (want_w) {
        for (int32_t r = 0; r < nq; r++) {
            float *w = R->w[r];
            if (l[r] == 0.0f) {
                memset(w, 0, sizeof(float) * (size_t)Sk);
                continue;
            }
            pe__exp_row(w, m[r], jend);
            int32_t c = 0;
#if PE_SIMD
            const pe_v128 vl = pe_f32x4_splat(l[r]);
            for (; c + 4 <= jend; c += 4) pe_f32x4_store(w + c, pe_f32x4_div(pe_f32x4_load(w + c), vl));
#endif
            for (; c < jend; c++) w[c] = w[c] / l[r];
            for (c = jend; c < Sk; c++) w[c] = 0.0f;
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Entry point                                                                                    */
/* ---------------------------------------------------------------------------------------------- */

/* The largest of n positions per sequence over nb sequences (validated as pe_positions_max does). */
static pe_status pe__positions_max(int32_t *mx, const int32_t *pos, int32_t n, int32_t nb) {
    *mx = 0;
    for (int32_t b = 0; b < nb; b++) {
        int32_t m;
        const pe_status st = pe_positions_max(&m, pos + (size_t)b * (size_t)n, n);
        if (st != PE_OK) return st;
        *mx = m > *mx ? m : *mx;
    }
    return PE_OK;
}

/* Copies the view x (B, S, H head vectors of D floats) into dense[] laid out as layout says. */
static void pe__gather(float *dense, const float *x, const pe__view *vw, int32_t B, int32_t S, int32_t H, int32_t D,
                       int bhsd) {
    for (int32_t b = 0; b < B; b++)
        for (int32_t s = 0; s < S; s++)
            for (int32_t h = 0; h < H; h++) {
                const size_t di = bhsd ? (((size_t)b * H + h) * S + s) * D : (((size_t)b * S + s) * H + h) * D;
                memcpy(dense + di, x + vw->off + b * vw->sb + s * vw->ss + h * vw->sh, sizeof(float) * (size_t)D);
            }
}

/* The dense view of the layout (for rope's copies). */
static pe__view pe__dense_view(int bhsd, int32_t S, int32_t H, int32_t D) {
    pe__view vw = {0, (size_t)S * H * D, bhsd ? (size_t)D : (size_t)H * D, bhsd ? (size_t)S * D : (size_t)D};
    return vw;
}

pe_status pe_attention(float *out, float *weights, const float *q, const float *k, const float *v, float *scratch,
                       size_t n_scratch, const pe_attention_config *cfg) {
    // q, out: views of (B, q_len, H) head vectors; k, v: of (B, k_len, KVH); weights: (B, H, q_len, k_len).
    if (!cfg) return PE_ERR_NULL;
    pe__attn A;
    pe_status st = pe__attn_resolve(&A, cfg);
    if (st != PE_OK) return st;
    if (A.n_q == 0) return PE_OK; /* batch or q_len 0: nothing to compute (posenc.h, "Sizes") */
    if (!out || !q || (A.n_k > 0 && (!k || !v))) return PE_ERR_NULL;
    if (weights && A.w_too_large) return PE_ERR_SHAPE; /* (B, H, q_len, k_len) does not fit in memory */
    if (A.n_scratch > 0 && (!scratch || n_scratch < A.n_scratch)) return scratch ? PE_ERR_SHAPE : PE_ERR_NULL;

    /* Everything is checked before anything is written. */
    if (A.slopes)
        for (int32_t h = 0; h < A.H; h++)
            if (!isfinite(A.slopes[h])) return PE_ERR_FIELD_VALUE;
    if (A.qscale) {
        const size_t n = (size_t)A.Sq * (A.qscale_pb ? (size_t)A.B : 1u);
        for (size_t i = 0; i < n; i++)
            if (!isfinite(A.qscale[i]) || !isfinite(A.scale * A.qscale[i])) return PE_ERR_SCALE;
    }
    const int32_t nbq = A.per_batch ? A.B : 1;
    int32_t max_q = 0, max_k = 0;
    if (A.qpos) {
        st = pe__positions_max(&max_q, A.qpos, A.Sq, nbq);
        if (st != PE_OK) return st;
    } else {
        if (A.rope && A.Sq > A.Sk) return PE_ERR_POSITION; /* default query positions would be negative */
        max_q = A.Sk - 1;
    }
    if (A.kpos) {
        st = pe__positions_max(&max_k, A.kpos, A.Sk, nbq);
        if (st != PE_OK) return st;
    } else {
        max_k = A.Sk - 1;
    }
    /* ALiBi's relative position kpos − qpos is formed as an int32. Positions are >= 0, so it can only overflow
     * with explicit key positions against default query positions below 0 (q_len > k_len). */
    if (A.slopes && A.kpos && !A.qpos && (int64_t)max_k - ((int64_t)A.Sk - A.Sq) > INT32_MAX) return PE_ERR_POSITION;
    const int bhsd = cfg->layout == PE_LAYOUT_BHSD;
    if (A.Sk == 0) { /* no key at all: every row is fully masked, which gives zeros (weights are empty) */
        for (int32_t b = 0; b < A.B; b++)
            for (int32_t i = 0; i < A.Sq; i++)
                for (int32_t h = 0; h < A.H; h++)
                    memset(out + A.o.off + b * A.o.sb + i * A.o.ss + h * A.o.sh, 0, sizeof(float) * (size_t)A.Dv);
        return PE_OK;
    }

    const float *qx = q, *kx = k;
    if (A.rope) {
        /* RoPE on dense copies: q and k are inputs and stay unmodified. One frequency set for q and k (dynamic
         * and longrope pick theirs from seq_len), by default max position + 1, as one HF forward call decides.
         * With k_rotated the caller's keys are used as they are (already rotated, e.g. a KV cache). */
        const int64_t seq_len =
            cfg->rope_seq_len > 0 ? (int64_t)cfg->rope_seq_len : (int64_t)(max_q > max_k ? max_q : max_k) + 1;
        const size_t nf = (size_t)A.rope->n_freq;
        const int qpb = A.qpos && A.per_batch, kpb = A.kpos && A.per_batch;
        const int32_t qrows = qpb ? A.B * A.Sq : A.Sq; /* fits: B * Sq * D was checked */
        float *qr = scratch;
        float *cq = qr + A.n_q, *sq = cq + (size_t)qrows * nf;
        st = pe__rope_tables(cq, sq, A.rope, A.qpos, (int64_t)A.Sk - A.Sq, qrows, seq_len);
        if (st != PE_OK) return st;
        if (!A.k_rotated) {
            const int32_t krows = kpb ? A.B * A.Sk : A.Sk;
            float *kr = sq + (size_t)qrows * nf;
            float *ck = kr + A.n_k, *sk = ck + (size_t)krows * nf;
            st = pe__rope_tables(ck, sk, A.rope, A.kpos, 0, krows, seq_len);
            if (st != PE_OK) return st;
            pe__gather(kr, k, &A.k, A.B, A.Sk, A.KVH, A.D, bhsd);
            const pe_rope_apply_config kc = {
                .batch = A.B, .seq = A.Sk, .heads = A.KVH, .layout = cfg->layout, .per_batch_rows = kpb};
            st = pe_rope_apply(A.rope, kr, ck, sk, &kc);
            if (st != PE_OK) return st;
            kx = kr;
            A.k = pe__dense_view(bhsd, A.Sk, A.KVH, A.D);
        }
        pe__gather(qr, q, &A.q, A.B, A.Sq, A.H, A.D, bhsd);
        const pe_rope_apply_config qc = {
            .batch = A.B, .seq = A.Sq, .heads = A.H, .layout = cfg->layout, .per_batch_rows = qpb};
        st = pe_rope_apply(A.rope, qr, cq, sq, &qc);
        if (st != PE_OK) return st;
        qx = qr;
        A.q = pe__dense_view(bhsd, A.Sq, A.H, A.D);
    }

    const int32_t G = A.group;
    const int64_t n_rows = (int64_t)G * A.Sq;
    pe__rows R;
    for (int32_t b = 0; b < A.B; b++) {
        const int32_t *kpos = A.kpos ? A.kpos + (A.per_batch ? (size_t)b * (size_t)A.Sk : 0u) : NULL;
        const int32_t *kmask = A.kmask ? A.kmask + (size_t)b * (size_t)A.Sk : NULL;
        const float *qsc = A.qscale ? A.qscale + (A.qscale_pb ? (size_t)b * (size_t)A.Sq : 0u) : NULL;
        for (int32_t g = 0; g < A.KVH; g++) {
            const float *kh = kx + A.k.off + b * A.k.sb + g * A.k.sh;
            const float *vh = v + A.v.off + b * A.v.sb + g * A.v.sh;
            for (int64_t t0 = 0; t0 < n_rows; t0 += PE__QB) {
                const int32_t nq = n_rows - t0 < PE__QB ? (int32_t)(n_rows - t0) : PE__QB;
                for (int32_t r = 0; r < nq; r++) {
                    const int32_t i = (int32_t)((t0 + r) / G), h = g * G + (int32_t)((t0 + r) % G);
                    R.q[r] = qx + A.q.off + b * A.q.sb + h * A.q.sh + i * A.q.ss;
                    R.o[r] = out + A.o.off + b * A.o.sb + h * A.o.sh + i * A.o.ss;
                    R.w[r] = weights ? weights + (((size_t)b * (size_t)A.H + (size_t)h) * (size_t)A.Sq + (size_t)i) *
                                                     (size_t)A.Sk
                                     : NULL;
                    R.bias[r] = A.bias ? A.bias + ((((size_t)(A.bias_b > 1 ? b : 0) * (size_t)A.bias_h +
                                                     (size_t)(A.bias_h > 1 ? h : 0)) *
                                                        (size_t)A.bias_q +
                                                    (size_t)(A.bias_q > 1 ? i : 0)) *
                                                   (size_t)A.Sk)
                                       : NULL;
                    R.slope[r] = A.slopes ? A.slopes[h] : 0.0f;
                    R.scale[r] = qsc ? A.scale * qsc[i] : A.scale;
                    R.qp[r] = pe__qpos(&A, b, i);
                }
                pe__attn_block(&A, &R, nq, kh, vh, kpos, kmask);
            }
        }
    }
    return PE_OK;
}
