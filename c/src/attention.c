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
 * of four for PV) stops at its last visible key. Explicit key positions that never decrease over the keys the
 * mask keeps (0..n−1 given explicitly, HF's left padding) are a band too, found per tile by bisection; when
 * every kept key is at or before every query of the block (a decode step), nothing is tested per key. Masked
 * keys have p = 0 exactly, so skipping them changes nothing but, at most, the sign of a zero.
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
 * pe_rope_cos_sin / pe_rope_apply, so the angles are the exact double-reduced ones of the RoPE kernels; when q
 * and k sit at the same positions (self-attention) they share one table and one pe_rope_apply_qk pass (bit for
 * bit the two calls); with k_rotated the keys are taken as already rotated (a KV cache of rotated keys) and
 * only q is rotated.
 *
 * Real batches (posenc.h): positions per sequence (per_batch_positions), a key mask (HF's attention_mask) and an
 * additive bias broadcast over batch / heads / queries enter the logit after ALiBi, in the same order in both
 * builds (dot · scale·q_scale, + ALiBi, + bias, then −∞ where masked); a masked key is −∞ before the max, so a
 * padded batch in one call gives, per sequence, exactly the numbers of a batch-1 call on that sequence with the
 * same k_len. Views: q, k, v and out are addressed through strides and offsets (resolved once, extents checked
 * in 64 bits); RoPE gathers q and k into dense copies first, so the rotation never depends on the view.
 * v_head_dim sizes the PV step and out independently of the q·k head size.
 *
 * 16-bit storage (dtype float16 / bfloat16): q, k, v and out hold uint16_t patterns, and nothing else changes. A
 * block's query rows and a tile's key and value rows are widened exactly (f16.h) into small float32 buffers in the
 * scratch just before the kernels read them, and a block's output rows are rounded to nearest even once the
 * block is done, so the scores, the softmax and the accumulation are the float32 path's, operation for
 * operation: the result is exactly the float32 attention of the widened inputs, rounded on store (and SIMD ==
 * scalar bit for bit, since the conversions are too). Scratch grows by a block's rows and a tile's keys, never
 * by k_len: a 16-bit KV cache is read as it is. With RoPE, q and k are rotated in float32 and rounded to the
 * storage type, which is what rope.apply on the 16-bit data stores: attending with a rope equals rotating the
 * 16-bit q and k with pe_rope_apply first and attending without (or with k_rotated), bit for bit.
 *
 * Files: this one holds the entry point and the driver (batches, kv heads, blocks of query rows, the tile loop
 * with its online-softmax steps); attention_kernels.c the score and PV tile kernels; attention_views.c the
 * configuration checks, sizes and views; attention_positions.c the position checks and the RoPE set-up;
 * attention_internal.h what they share.
 */
#include "attention_internal.h"
#include "posenc.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* The tile kernels and the block are called through these pointers, so that each stays a function of its own
 * in the wasm: the optimiser (binaryen) inlines a function that has one caller, which made pe_attention one
 * function of everything, whose hot loops V8 then compiled well or badly with unrelated code (±30 % from a
 * change in the RoPE set-up, measured). A call per tile or block costs nothing next to the tile's work. */
static void (*volatile pe__scores1_k)(float *, const float *, const pe__rowc *, const pe__tile *) = pe__scores1;
#if PE_SIMD
static void (*volatile pe__scores2_k)(float *, float *, const float *, const float *, const pe__rowc[2],
                                      const pe__tile *) = pe__scores2;
#endif
static void (*volatile pe__pv1_k)(float *, float, const float *, const float *, size_t, int32_t, int32_t) = pe__pv1;
static void (*volatile pe__pv4_k)(float *const[4], const float[4], const float *, size_t, const float *, size_t,
                                  int32_t, int32_t) = pe__pv4;

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

/* kh, vh: the block's kv head (float32, or 16-bit as A->k16 / A->v16 say: each tile is then widened into
 * A->kbuf / A->vbuf first, so the kernels below only ever see float32); kpos, kmask: its sequence's key
 * positions and key mask (or NULL); mono: kpos is given and nondecreasing over the keys the mask keeps, the
 * last of which is at kmax (pe__attn_monotone). */
static void pe__attn_block(const pe__attn *A, const pe__rows *R, int32_t nq, const void *kh, const void *vh,
                           const int32_t *kpos, const int32_t *kmask, int mono, int32_t kmax) {
    _Alignas(16) float S[PE__SCAP];
    _Alignas(16) int32_t kpt[PE__KB_MAX], kmt[PE__KB_MAX], ept[PE__KB_MAX];
    float m[PE__QB], l[PE__QB], corr[PE__KB_MAX / PE__SEG][PE__QB];
    pe__rowc rc[PE__QB];
    const int want_w = R->w[0] != NULL;
    const int32_t D = A->D, Dv = A->Dv, Sk = A->Sk, kb = pe__tile_keys(nq);
    const size_t ks = A->k.ss, vs = A->v16 ? (size_t)Dv : A->v.ss; /* vs: the stride the PV kernels read */
    /* With the default key positions, causal visibility is a band: key j is visible to query i iff
     * j <= qpos_i. Keys past the block's last query are never visited, and each row's lim stops at its own. */
    const int band = A->causal && !kpos;
    /* With explicit key positions that never decrease over the keys the mask keeps, it is a band too: give each
     * masked key the position of the last kept key before it (INT32_MIN before the first); these effective
     * positions never decrease, a key is visible iff it is kept and its effective position is <= qpos_i, so
     * row i sees (kept keys of) a prefix, found per tile by bisection, and the first tile that starts past the
     * block's last query ends the walk. Keys left out have p = 0 exactly, as with the default positions. */
    int mband = A->causal && kpos && mono;
    int32_t last = INT32_MIN; /* the effective position carried from one tile to the next */

    int32_t qp_max = R->qp[0], qp_min = R->qp[0];
    for (int32_t r = 0; r < nq; r++) {
        qp_min = R->qp[r] < qp_min ? R->qp[r] : qp_min;
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
    /* every kept key at or before every row (decoding the newest token): the causal mask hides nothing */
    const int allvis = mband && kmax <= qp_min;
    if (allvis) mband = 0;

    pe__tile T;
    T.ks = A->k16 ? (size_t)D : ks;
    T.D = D;
    T.alibi = A->slopes != NULL;
    T.causal_kp = A->causal && kpos != NULL && !mband && !allvis;
    T.kp = T.alibi || T.causal_kp ? kpt : NULL;
    T.km = kmask ? kmt : NULL;

    for (int32_t j0 = 0; j0 < jend; j0 += kb) {
        const int32_t nk = jend - j0 < kb ? jend - j0 : kb;
        const float *vt;
        if (A->k16) {
            const uint16_t *src = (const uint16_t *)kh + (size_t)j0 * ks;
            for (int32_t c = 0; c < nk; c++) pe__widen16(A->kbuf + (size_t)c * D, src + (size_t)c * ks, D, A->bf16);
            T.k = A->kbuf;
        } else {
            T.k = (const float *)kh + (size_t)j0 * ks;
        }
        if (A->v16) {
            const uint16_t *src = (const uint16_t *)vh + (size_t)j0 * A->v.ss;
            for (int32_t c = 0; c < nk; c++)
                pe__widen16(A->vbuf + (size_t)c * Dv, src + (size_t)c * A->v.ss, Dv, A->bf16);
            vt = A->vbuf;
        } else {
            vt = (const float *)vh + (size_t)j0 * vs;
        }
        T.nk = nk;
        if (mband) {
            for (int32_t c = 0; c < nk; c++) {
                if (!kmask || kmask[j0 + c]) last = kpos[j0 + c];
                ept[c] = last;
            }
            if (ept[0] > qp_max) { /* every key from j0 on is past every row of the block */
                jend = j0;
                break;
            }
        }
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
            } else if (mband) { /* the first c with ept[c] > qp */
                int32_t lo = 0, hi = nk;
                while (lo < hi) {
                    const int32_t mid = (lo + hi) >> 1;
                    if (ept[mid] <= rc[r].qp)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                lim = lo;
            }
            rc[r].lim = lim;
            rc[r].bias = R->bias[r] ? R->bias[r] + j0 : NULL;
        }

        /* scores */
        int32_t r = 0;
#if PE_SIMD
        for (; r + 2 <= nq; r += 2)
            pe__scores2_k(S + (size_t)r * kb, S + (size_t)(r + 1) * kb, R->q[r], R->q[r + 1], &rc[r], &T);
#endif
        for (; r < nq; r++) pe__scores1_k(S + (size_t)r * kb, R->q[r], &rc[r], &T);

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
                pe__pv4_k(&R->o[r], &corr[g][r], S + (size_t)r * kb + c0, (size_t)kb, vt + (size_t)c0 * vs, vs, n, Dv);
            }
        }
        for (; r < nq; r++)
            for (int32_t g = 0; g < nseg; g++) {
                const int32_t c0 = g * PE__SEG, c1 = nk - c0 < PE__SEG ? nk : c0 + PE__SEG;
                const int32_t n = rc[r].lim < c0 ? 0 : (rc[r].lim < c1 ? rc[r].lim : c1) - c0;
                pe__pv1_k(R->o[r], corr[g][r], S + (size_t)r * kb + c0, vt + (size_t)c0 * vs, vs, n, Dv);
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

pe_status pe_attention(void *out, float *weights, const void *q, const void *k, const void *v, float *scratch,
                       size_t n_scratch, const pe_attention_config *cfg) {
    // q, out: views of (B, q_len, H) head vectors; k, v: of (B, k_len, KVH); weights: (B, H, q_len, k_len).
    // Elements are float32, or 16-bit patterns (uint16_t) for cfg->dtype float16 / bfloat16.
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
    int32_t max_q, max_k;
    st = pe__attn_positions(&A, &max_q, &max_k);
    if (st != PE_OK) return st;
    const size_t esz = A.o16 ? 2u : 4u; /* bytes per element of q, k, v and out */
    if (A.Sk == 0) { /* no key at all: every row is fully masked, which gives zeros (weights are empty); +0 is
                      * all zero bits in the three types */
        for (int32_t b = 0; b < A.B; b++)
            for (int32_t i = 0; i < A.Sq; i++)
                for (int32_t h = 0; h < A.H; h++)
                    memset((char *)out + (A.o.off + b * A.o.sb + i * A.o.ss + h * A.o.sh) * esz, 0, esz * (size_t)A.Dv);
        return PE_OK;
    }

    const void *qx = q, *kx = k;
    if (A.rope) {
        st = pe__attn_rope(&A, cfg, q, k, scratch, max_q, max_k, &qx, &kx);
        if (st != PE_OK) return st;
    }

    if (A.o16) { /* the 16-bit row and tile buffers follow rope's part of the scratch (attention_views.c) */
        float *p = scratch + A.n_rope;
        const size_t qb = (size_t)A.qb_rows, kb = (size_t)A.kb_keys;
        A.qbuf = A.q16 ? p : NULL;
        p += A.q16 ? qb * (size_t)A.D : 0u;
        A.obuf = p;
        p += qb * (size_t)A.Dv;
        A.kbuf = A.k16 ? p : NULL;
        p += A.k16 ? kb * (size_t)A.D : 0u;
        A.vbuf = p;
    }
    const size_t ksz = A.k16 ? 2u : 4u, vsz = A.v16 ? 2u : 4u;
    const int32_t G = A.group;
    const int64_t n_rows = (int64_t)G * A.Sq;
    pe__rows R;
    uint16_t *o16[PE__QB];
    for (int32_t b = 0; b < A.B; b++) {
        const int32_t *kpos = A.kpos ? A.kpos + (A.per_batch ? (size_t)b * (size_t)A.Sk : 0u) : NULL;
        const int32_t *kmask = A.kmask ? A.kmask + (size_t)b * (size_t)A.Sk : NULL;
        const float *qsc = A.qscale ? A.qscale + (A.qscale_pb ? (size_t)b * (size_t)A.Sq : 0u) : NULL;
        int32_t kmax = 0;
        const int mono = A.causal && kpos && pe__attn_monotone(&kmax, kpos, kmask, A.Sk);
        for (int32_t g = 0; g < A.KVH; g++) {
            const void *kh = (const char *)kx + (A.k.off + b * A.k.sb + g * A.k.sh) * ksz;
            const void *vh = (const char *)v + (A.v.off + b * A.v.sb + g * A.v.sh) * vsz;
            for (int64_t t0 = 0; t0 < n_rows; t0 += PE__QB) {
                const int32_t nq = n_rows - t0 < PE__QB ? (int32_t)(n_rows - t0) : PE__QB;
                for (int32_t r = 0; r < nq; r++) {
                    const int32_t i = (int32_t)((t0 + r) / G), h = g * G + (int32_t)((t0 + r) % G);
                    const size_t qi = A.q.off + b * A.q.sb + h * A.q.sh + i * A.q.ss;
                    const size_t oi = A.o.off + b * A.o.sb + h * A.o.sh + i * A.o.ss;
                    if (A.q16) {
                        float *row = A.qbuf + (size_t)r * (size_t)A.D;
                        pe__widen16(row, (const uint16_t *)qx + qi, A.D, A.bf16);
                        R.q[r] = row;
                    } else {
                        R.q[r] = (const float *)qx + qi;
                    }
                    if (A.o16) {
                        o16[r] = (uint16_t *)out + oi;
                        R.o[r] = A.obuf + (size_t)r * (size_t)A.Dv;
                    } else {
                        R.o[r] = (float *)out + oi;
                    }
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
                pe__attn_block(&A, &R, nq, kh, vh, kpos, kmask, mono, kmax);
                if (A.o16)
                    for (int32_t r = 0; r < nq; r++) pe__narrow16(o16[r], R.o[r], A.Dv, A.bf16);
            }
        }
    }
    return PE_OK;
}
