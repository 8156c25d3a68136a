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
 * Blocking: PE__QB query rows share each key tile of PE__KB keys (K and V tiles stay in L1 while 16 queries
 * use them), and inside a block rows go in groups of 4, so one load of a key (or value) chunk feeds four
 * rows' dot products (or accumulators).
 *
 * SIMD128 and scalar builds run the same arithmetic in the same order, so they agree bit for bit:
 *   - q·k: four lane partial sums over chunks of 4, combined as (p0 + p2) + (p1 + p3) (pe_f32x4_sum's order),
 *     then the tail d ≥ 4⌊D/4⌋ added in sequence;
 *   - e^x: one polynomial (Cephes expf, ~1 ulp) evaluated lane-wise or in scalar, same operations;
 *   - acc: per element acc·corr, then + p_j·v_j for j ascending;
 *   - max and Σ p per row: scalar, ascending, in both builds.
 * The build is compiled with -ffp-contract=off, so no multiply-add is fused in either.
 *
 * Positions (see posenc.h): key j at kpos[j] (default j), query i at qpos[i] (default k_len − q_len + i).
 * RoPE rotates copies of q and k in the caller's scratch (q and k stay unmodified), with the lead's
 * pe_rope_cos_sin / pe_rope_apply, so the angles are the exact double-reduced ones of the RoPE kernels.
 */
#include "posenc.h"
#include "simd.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define PE__QB 16 /* query rows per block (online-softmax state on the stack) */
#define PE__KB 32 /* keys per tile */
#define PE__RB 4  /* query rows per register group */


/* ---------------------------------------------------------------------------------------------- */
/* e^x for x <= 0 (or -inf), scalar and f32x4 twins                                               */
/* ---------------------------------------------------------------------------------------------- */
/* Cephes expf (Moshier): n = nearest(x·log2 e), r = x − n·ln2 (ln 2 split in two, Cody & Waite, so n·C1 is
 * exact), e^r by a degree-7 polynomial on |r| ≤ ln2/2, times 2^n built in the exponent bits. "nearest" is
 * (y + 1.5·2^23) − 1.5·2^23, which rounds to nearest-even in float arithmetic, and the integer n is read
 * from the low bits of the sum, so the scalar and vector forms are the same operations. x < −87 gives 0
 * (e^−87 ≈ 1.6e-38 is at the edge of the normal range; below it weights are 0 for our purposes), so masked
 * logits (−inf) contribute exactly 0. */
#define PE__EXP_MIN (-87.0f)
#define PE__LOG2E 1.44269504088896341f
#define PE__LN2_C1 0.693359375f
#define PE__LN2_C2 (-2.12194440e-4f)
#define PE__MAGIC 12582912.0f /* 1.5 * 2^23 */
#define PE__MAGIC_BITS 0x4B400000
#define PE__E1 1.9875691500e-4f
#define PE__E2 1.3981999507e-3f
#define PE__E3 8.3334519073e-3f
#define PE__E4 4.1665795894e-2f
#define PE__E5 1.6666665459e-1f
#define PE__E6 5.0000001201e-1f

static inline float pe__exp1(float x) {
    const int keep = x >= PE__EXP_MIN; /* false for -inf (and NaN) */
    const float xc = x < PE__EXP_MIN ? PE__EXP_MIN : x;
    const float t = xc * PE__LOG2E + PE__MAGIC;
    const float n = t - PE__MAGIC;
    const float r = (xc - n * PE__LN2_C1) - n * PE__LN2_C2;
    const float z = r * r;
    const float p = (((((PE__E1 * r + PE__E2) * r + PE__E3) * r + PE__E4) * r + PE__E5) * r + PE__E6) * z + r + 1.0f;
    int32_t tb;
    memcpy(&tb, &t, 4);
    const int32_t eb = (tb - PE__MAGIC_BITS + 127) * (1 << 23); /* n in [-126, 0]: a normal 2^n */
    float pow2n;
    memcpy(&pow2n, &eb, 4);
    return keep ? p * pow2n : 0.0f;
}

#if PE_SIMD
static inline pe_v128 pe__exp4(pe_v128 x) {
    const pe_v128 lo = pe_f32x4_splat(PE__EXP_MIN), magic = pe_f32x4_splat(PE__MAGIC);
    const pe_v128 keep = pe_f32x4_ge(x, lo);
    const pe_v128 xc = pe_v128_select(x, lo, keep); /* x where x >= lo, else lo (as the scalar's clamp) */
    const pe_v128 t = pe_f32x4_add(pe_f32x4_mul(xc, pe_f32x4_splat(PE__LOG2E)), magic);
    const pe_v128 n = pe_f32x4_sub(t, magic);
    const pe_v128 r = pe_f32x4_sub(pe_f32x4_sub(xc, pe_f32x4_mul(n, pe_f32x4_splat(PE__LN2_C1))),
                                   pe_f32x4_mul(n, pe_f32x4_splat(PE__LN2_C2)));
    const pe_v128 z = pe_f32x4_mul(r, r);
    pe_v128 p = pe_f32x4_add(pe_f32x4_mul(pe_f32x4_splat(PE__E1), r), pe_f32x4_splat(PE__E2));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E3));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E4));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E5));
    p = pe_f32x4_add(pe_f32x4_mul(p, r), pe_f32x4_splat(PE__E6));
    p = pe_f32x4_add(pe_f32x4_add(pe_f32x4_mul(p, z), r), pe_f32x4_splat(1.0f));
    const pe_v128 eb =
        pe_i32x4_shl(pe_i32x4_add(pe_i32x4_sub(t, pe_i32x4_splat(PE__MAGIC_BITS)), pe_i32x4_splat(127)), 23);
    return pe_v128_and(pe_f32x4_mul(p, eb), keep);
}
#endif

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
/* Tiles                                                                                          */
/* ---------------------------------------------------------------------------------------------- */

/* s[c] = q · k_c for one query row and nk keys (k_c = k + c * ks), D = head_dim. */
static void pe__dots1(float *s, const float *q, const float *k, size_t ks, int32_t nk, int32_t D) {
    const int32_t D4 = D & ~3;
    for (int32_t c = 0; c < nk; c++) {
        const float *kr = k + (size_t)c * ks;
        float acc;
        int32_t d = 0;
#if PE_SIMD
        pe_v128 a = pe_f32x4_splat(0.0f);
        for (; d < D4; d += 4) a = pe_f32x4_add(a, pe_f32x4_mul(pe_f32x4_load(q + d), pe_f32x4_load(kr + d)));
        acc = pe_f32x4_sum(a);
#else
        float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        for (; d < D4; d += 4) {
            a0 += q[d] * kr[d];
            a1 += q[d + 1] * kr[d + 1];
            a2 += q[d + 2] * kr[d + 2];
            a3 += q[d + 3] * kr[d + 3];
        }
        acc = (a0 + a2) + (a1 + a3);
#endif
        for (; d < D; d++) acc += q[d] * kr[d];
        s[c] = acc;
    }
}

/* Four query rows at once: s[r * ss + c] = q_r · k_c. Each key chunk is loaded once for the four rows. */
static void pe__dots4(float *s, size_t ss, const float *const q[PE__RB], const float *k, size_t ks, int32_t nk,
                      int32_t D) {
    const int32_t D4 = D & ~3;
    const float *q0 = q[0], *q1 = q[1], *q2 = q[2], *q3 = q[3];
    int32_t c = 0;
#if PE_SIMD
    /* Two keys at a time: 8 accumulators from 4 query and 2 key loads per chunk. Each dot is still its own
     * four lane partial sums, summed and tailed as below, so the result is the same as one key at a time. */
    for (; c + 2 <= nk; c += 2) {
        const float *ka = k + (size_t)c * ks, *kb = ka + ks;
        pe_v128 a0 = pe_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        int32_t d = 0;
        for (; d < D4; d += 4) {
            const pe_v128 x0 = pe_f32x4_load(q0 + d), x1 = pe_f32x4_load(q1 + d);
            const pe_v128 x2 = pe_f32x4_load(q2 + d), x3 = pe_f32x4_load(q3 + d);
            const pe_v128 va = pe_f32x4_load(ka + d), vb = pe_f32x4_load(kb + d);
            a0 = pe_f32x4_add(a0, pe_f32x4_mul(x0, va));
            a1 = pe_f32x4_add(a1, pe_f32x4_mul(x1, va));
            a2 = pe_f32x4_add(a2, pe_f32x4_mul(x2, va));
            a3 = pe_f32x4_add(a3, pe_f32x4_mul(x3, va));
            b0 = pe_f32x4_add(b0, pe_f32x4_mul(x0, vb));
            b1 = pe_f32x4_add(b1, pe_f32x4_mul(x1, vb));
            b2 = pe_f32x4_add(b2, pe_f32x4_mul(x2, vb));
            b3 = pe_f32x4_add(b3, pe_f32x4_mul(x3, vb));
        }
        float sa0 = pe_f32x4_sum(a0), sa1 = pe_f32x4_sum(a1), sa2 = pe_f32x4_sum(a2), sa3 = pe_f32x4_sum(a3);
        float sb0 = pe_f32x4_sum(b0), sb1 = pe_f32x4_sum(b1), sb2 = pe_f32x4_sum(b2), sb3 = pe_f32x4_sum(b3);
        for (; d < D; d++) {
            sa0 += q0[d] * ka[d]; sa1 += q1[d] * ka[d]; sa2 += q2[d] * ka[d]; sa3 += q3[d] * ka[d];
            sb0 += q0[d] * kb[d]; sb1 += q1[d] * kb[d]; sb2 += q2[d] * kb[d]; sb3 += q3[d] * kb[d];
        }
        s[c] = sa0; s[ss + c] = sa1; s[2 * ss + c] = sa2; s[3 * ss + c] = sa3;
        s[c + 1] = sb0; s[ss + c + 1] = sb1; s[2 * ss + c + 1] = sb2; s[3 * ss + c + 1] = sb3;
    }
#endif
    for (; c < nk; c++) {
        const float *kr = k + (size_t)c * ks;
        float s0, s1, s2, s3;
        int32_t d = 0;
#if PE_SIMD
        pe_v128 a0 = pe_f32x4_splat(0.0f), a1 = a0, a2 = a0, a3 = a0;
        for (; d < D4; d += 4) {
            const pe_v128 kv = pe_f32x4_load(kr + d);
            a0 = pe_f32x4_add(a0, pe_f32x4_mul(pe_f32x4_load(q0 + d), kv));
            a1 = pe_f32x4_add(a1, pe_f32x4_mul(pe_f32x4_load(q1 + d), kv));
            a2 = pe_f32x4_add(a2, pe_f32x4_mul(pe_f32x4_load(q2 + d), kv));
            a3 = pe_f32x4_add(a3, pe_f32x4_mul(pe_f32x4_load(q3 + d), kv));
        }
        s0 = pe_f32x4_sum(a0);
        s1 = pe_f32x4_sum(a1);
        s2 = pe_f32x4_sum(a2);
        s3 = pe_f32x4_sum(a3);
#else
        float p[4][4] = {{0}};
        for (; d < D4; d += 4)
            for (int l = 0; l < 4; l++) {
                const float kv = kr[d + l];
                p[0][l] += q0[d + l] * kv;
                p[1][l] += q1[d + l] * kv;
                p[2][l] += q2[d + l] * kv;
                p[3][l] += q3[d + l] * kv;
            }
        s0 = (p[0][0] + p[0][2]) + (p[0][1] + p[0][3]);
        s1 = (p[1][0] + p[1][2]) + (p[1][1] + p[1][3]);
        s2 = (p[2][0] + p[2][2]) + (p[2][1] + p[2][3]);
        s3 = (p[3][0] + p[3][2]) + (p[3][1] + p[3][3]);
#endif
        for (; d < D; d++) {
            const float kv = kr[d];
            s0 += q0[d] * kv;
            s1 += q1[d] * kv;
            s2 += q2[d] * kv;
            s3 += q3[d] * kv;
        }
        s[c] = s0;
        s[ss + c] = s1;
        s[2 * ss + c] = s2;
        s[3 * ss + c] = s3;
    }
}

/* acc = acc * corr + sum_c p[c] v_c for one row (v_c = v + c * vs). */
static void pe__pv1(float *acc, float corr, const float *p, const float *v, size_t vs, int32_t nk, int32_t D) {
    int32_t d = 0;
#if PE_SIMD
    const pe_v128 vc = pe_f32x4_splat(corr);
    for (; d + 8 <= D; d += 8) {
        pe_v128 x0 = pe_f32x4_mul(pe_f32x4_load(acc + d), vc), x1 = pe_f32x4_mul(pe_f32x4_load(acc + d + 4), vc);
        for (int32_t c = 0; c < nk; c++) {
            const float *vr = v + (size_t)c * vs + d;
            const pe_v128 pc = pe_f32x4_splat(p[c]);
            x0 = pe_f32x4_add(x0, pe_f32x4_mul(pc, pe_f32x4_load(vr)));
            x1 = pe_f32x4_add(x1, pe_f32x4_mul(pc, pe_f32x4_load(vr + 4)));
        }
        pe_f32x4_store(acc + d, x0);
        pe_f32x4_store(acc + d + 4, x1);
    }
    for (; d + 4 <= D; d += 4) {
        pe_v128 x0 = pe_f32x4_mul(pe_f32x4_load(acc + d), vc);
        for (int32_t c = 0; c < nk; c++)
            x0 = pe_f32x4_add(x0, pe_f32x4_mul(pe_f32x4_splat(p[c]), pe_f32x4_load(v + (size_t)c * vs + d)));
        pe_f32x4_store(acc + d, x0);
    }
#endif
    /* Scalar: the same per-element sequence (acc * corr, then + p_c v_c for c ascending), walked row by row
     * over v so memory is read contiguously. */
    if (d < D) {
        for (int32_t e = d; e < D; e++) acc[e] *= corr;
        for (int32_t c = 0; c < nk; c++) {
            const float *vr = v + (size_t)c * vs;
            const float pc = p[c];
            for (int32_t e = d; e < D; e++) acc[e] += pc * vr[e];
        }
    }
}

/* Four rows at once: each value chunk is loaded once for the four accumulators. */
static void pe__pv4(float *const acc[PE__RB], const float corr[PE__RB], const float *p, size_t ps, const float *v,
                    size_t vs, int32_t nk, int32_t D) {
#if PE_SIMD
    int32_t d = 0;
    float *o0 = acc[0], *o1 = acc[1], *o2 = acc[2], *o3 = acc[3];
    const float *p0 = p, *p1 = p + ps, *p2 = p + 2 * ps, *p3 = p + 3 * ps;
    const pe_v128 c0 = pe_f32x4_splat(corr[0]), c1 = pe_f32x4_splat(corr[1]);
    const pe_v128 c2 = pe_f32x4_splat(corr[2]), c3 = pe_f32x4_splat(corr[3]);
    for (; d + 8 <= D; d += 8) {
        pe_v128 x00 = pe_f32x4_mul(pe_f32x4_load(o0 + d), c0), x01 = pe_f32x4_mul(pe_f32x4_load(o0 + d + 4), c0);
        pe_v128 x10 = pe_f32x4_mul(pe_f32x4_load(o1 + d), c1), x11 = pe_f32x4_mul(pe_f32x4_load(o1 + d + 4), c1);
        pe_v128 x20 = pe_f32x4_mul(pe_f32x4_load(o2 + d), c2), x21 = pe_f32x4_mul(pe_f32x4_load(o2 + d + 4), c2);
        pe_v128 x30 = pe_f32x4_mul(pe_f32x4_load(o3 + d), c3), x31 = pe_f32x4_mul(pe_f32x4_load(o3 + d + 4), c3);
        for (int32_t c = 0; c < nk; c++) {
            const float *vr = v + (size_t)c * vs + d;
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
    if (d < D) /* remaining 4-chunk and tail, row by row (same per-element sequence) */
        for (int r = 0; r < PE__RB; r++) pe__pv1(acc[r] + d, corr[r], p + (size_t)r * ps, v + d, vs, nk, D - d);
#else
    for (int r = 0; r < PE__RB; r++) pe__pv1(acc[r], corr[r], p + (size_t)r * ps, v, vs, nk, D);
#endif
}

/* ---------------------------------------------------------------------------------------------- */
/* Configuration                                                                                  */
/* ---------------------------------------------------------------------------------------------- */

typedef struct pe__attn {
    int32_t B, H, KVH, Sq, Sk, D, group;
    int causal;
    float scale;
    const float *slopes;
    const pe_rope *rope;
    const int32_t *qpos, *kpos;
    int64_t rope_seq_len;             /* resolved in pe_attention (needs the positions) */
    size_t qb, qh, qs;                /* strides of q and out (floats): batch, head, sequence */
    size_t kb, kh, ks;                /* strides of k and v */
    size_t n_q, n_k;                  /* elements of q (= out) and of k (= v) */
    size_t n_w;                       /* elements of weights */
    size_t n_scratch;                 /* floats of scratch needed */
} pe__attn;

/* *out = a * b, failing past limit (both operands >= 0) */
static int pe__mul(uint64_t *out, uint64_t a, uint64_t b, uint64_t limit) {
    if (a != 0 && b > limit / a) return 0;
    *out = a * b;
    return 1;
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
    if (A->H < 1 || A->KVH < 1 || A->H % A->KVH != 0) return PE_ERR_HEADS;
    A->group = A->H / A->KVH;
    if (A->B < 1 || A->Sq < 1 || A->Sk < 1 || A->D < 1) return PE_ERR_SHAPE;
    if (cfg->layout != PE_LAYOUT_BSHD && cfg->layout != PE_LAYOUT_BHSD) return PE_ERR_LAYOUT;
    A->causal = cfg->causal != 0;
    A->scale = cfg->scale == 0.0f ? (float)(1.0 / sqrt((double)A->D)) : cfg->scale;
    if (!isfinite(A->scale)) return PE_ERR_SCALE;
    A->slopes = cfg->alibi_slopes;
    A->rope = cfg->rope;
    A->qpos = cfg->q_positions;
    A->kpos = cfg->k_positions;
    if (cfg->rope_seq_len < 0) return PE_ERR_SEQ_LEN;
    if (A->rope) {
        const pe_rope *r = A->rope;
        if (r->config.head_dim != A->D) return PE_ERR_SHAPE;
        if (r->n_freq < 1 || r->n_freq > PE_ROPE_MAX_FREQ || 2 * r->n_freq > A->D) return PE_ERR_FIELD_VALUE;
    }

    /* Sizes: everything must be addressable with size_t (wasm32: 4 GiB of floats at most). */
    const uint64_t lim = (uint64_t)(SIZE_MAX / sizeof(float));
    uint64_t t, nq, nk, nw, ns;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->H, lim) || !pe__mul(&t, t, (uint64_t)A->Sq, lim) ||
        !pe__mul(&nq, t, (uint64_t)A->D, lim))
        return PE_ERR_SHAPE;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->KVH, lim) || !pe__mul(&t, t, (uint64_t)A->Sk, lim) ||
        !pe__mul(&nk, t, (uint64_t)A->D, lim))
        return PE_ERR_SHAPE;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->H, lim) || !pe__mul(&t, t, (uint64_t)A->Sq, lim) ||
        !pe__mul(&nw, t, (uint64_t)A->Sk, lim))
        nw = 0; /* checked only when weights are requested */
    ns = 0;
    if (A->rope) {
        /* rotated q and k, then cos and sin for q_len + k_len positions */
        ns = nq + nk;
        uint64_t tab = ((uint64_t)A->Sq + (uint64_t)A->Sk) * 2u * (uint64_t)A->rope->n_freq;
        if (ns > lim || tab > lim - ns) return PE_ERR_SHAPE;
        ns += tab;
    }
    A->n_q = (size_t)nq;
    A->n_k = (size_t)nk;
    A->n_w = (size_t)nw;
    A->n_scratch = (size_t)ns;

    const size_t D = (size_t)A->D;
    if (cfg->layout == PE_LAYOUT_BHSD) {
        A->qs = D; A->qh = (size_t)A->Sq * D; A->qb = (size_t)A->H * A->qh;
        A->ks = D; A->kh = (size_t)A->Sk * D; A->kb = (size_t)A->KVH * A->kh;
    } else {
        A->qh = D; A->qs = (size_t)A->H * D; A->qb = (size_t)A->Sq * A->qs;
        A->kh = D; A->ks = (size_t)A->KVH * D; A->kb = (size_t)A->Sk * A->ks;
    }
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

static inline int64_t pe__qpos(const pe__attn *A, int32_t i) {
    return A->qpos ? (int64_t)A->qpos[i] : (int64_t)A->Sk - (int64_t)A->Sq + (int64_t)i;
}
static inline int64_t pe__kpos(const pe__attn *A, int32_t j) { return A->kpos ? (int64_t)A->kpos[j] : (int64_t)j; }

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
/* One block of up to PE__QB query rows of one (batch, head)                                      */
/* ---------------------------------------------------------------------------------------------- */
/* The rows of a block: query row t of kv head g's group is query i = t / group of head
 * h = g * group + t % group, so with GQA/MQA the query heads that share a kv head share every K and V
 * tile load (for decoding, q_len = 1, that divides the K/V traffic by the group size). */
typedef struct pe__rows {
    const float *q[PE__QB];
    float *o[PE__QB];
    float *w[PE__QB];      /* weights row (k_len floats), or NULL */
    float slope[PE__QB];
    int64_t qp[PE__QB];
} pe__rows;

static void pe__attn_block(const pe__attn *A, const pe__rows *R, int32_t nq, const float *kh, const float *vh,
                           int use_alibi) {
    float S[PE__QB][PE__KB];
    float m[PE__QB], l[PE__QB], corr[PE__QB];
    const int64_t *qp = R->qp;
    const float *const *qrow = R->q;
    float *const *orow = R->o;
    const int want_w = R->w[0] != NULL;
    const int32_t D = A->D, Sk = A->Sk;

    int64_t qp_max = qp[0];
    for (int32_t r = 0; r < nq; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
        memset(orow[r], 0, sizeof(float) * (size_t)D);
        qp_max = qp[r] > qp_max ? qp[r] : qp_max;
    }

    /* With default positions the causal mask is a band: keys past the block's last query are never
     * visible, so they are not visited at all. (A row whose own band ends earlier sees -inf there: p = 0,
     * correction 1, so its numbers are the same as if it had stopped.) */
    int32_t jend = Sk;
    if (A->causal && !A->qpos && !A->kpos) {
        const int64_t last = qp_max + 1;
        jend = last <= 0 ? 0 : (last < (int64_t)Sk ? (int32_t)last : Sk);
    }

    for (int32_t j0 = 0; j0 < jend; j0 += PE__KB) {
        const int32_t nk = jend - j0 < PE__KB ? jend - j0 : PE__KB;
        const float *kt = kh + (size_t)j0 * A->ks;
        const float *vt = vh + (size_t)j0 * A->ks;

        /* scores */
        int32_t r = 0;
        for (; r + PE__RB <= nq; r += PE__RB) pe__dots4(&S[r][0], PE__KB, &qrow[r], kt, A->ks, nk, D);
        for (; r < nq; r++) pe__dots1(&S[r][0], qrow[r], kt, A->ks, nk, D);

        for (r = 0; r < nq; r++) {
            float *s = S[r];
            for (int32_t c = 0; c < nk; c++) {
                const int64_t kp = pe__kpos(A, j0 + c);
                float x = s[c] * A->scale;
                if (use_alibi) x = x + R->slope[r] * (float)(kp - qp[r]); /* Press et al.: m · (j − i) */
                if (A->causal && kp > qp[r]) x = -INFINITY;
                s[c] = x;
            }
            if (want_w) memcpy(R->w[r] + j0, s, sizeof(float) * (size_t)nk);

            /* online softmax update */
            float mx = -INFINITY;
            for (int32_t c = 0; c < nk; c++) mx = s[c] > mx ? s[c] : mx;
            const float mnew = mx > m[r] ? mx : m[r];
            if (mnew == -INFINITY) { /* nothing visible yet: p = 0, state unchanged */
                for (int32_t c = 0; c < nk; c++) s[c] = 0.0f;
                corr[r] = 1.0f;
                continue;
            }
            corr[r] = pe__exp1(m[r] - mnew); /* e^(−inf) = 0 on the first visible tile */
            pe__exp_row(s, mnew, nk);
            float sum = 0.0f;
            for (int32_t c = 0; c < nk; c++) sum += s[c];
            l[r] = l[r] * corr[r] + sum;
            m[r] = mnew;
        }

        r = 0;
        for (; r + PE__RB <= nq; r += PE__RB) pe__pv4(&orow[r], &corr[r], &S[r][0], PE__KB, vt, A->ks, nk, D);
        for (; r < nq; r++) pe__pv1(orow[r], corr[r], S[r], vt, A->ks, nk, D);
    }

    /* out = acc / l; a row that saw no key (l == 0) stays all zeros */
    for (int32_t r = 0; r < nq; r++) {
        if (l[r] == 0.0f) continue;
        float *o = orow[r];
        int32_t d = 0;
#if PE_SIMD
        const pe_v128 vl = pe_f32x4_splat(l[r]);
        for (; d + 4 <= D; d += 4) pe_f32x4_store(o + d, pe_f32x4_div(pe_f32x4_load(o + d), vl));
#endif
        for (; d < D; d++) o[d] = o[d] / l[r];
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
pe_status pe_attention(float *out, float *weights, const float *q, const float *k, const float *v,
                       float *scratch, size_t n_scratch, const pe_attention_config *cfg) {
    // q, out: (B, q_len, H, D) or (B, H, q_len, D); k, v: (B, k_len, KVH, D) or (B, KVH, k_len, D);
    // weights: (B, H, q_len, k_len).
    if (!out || !q || !k || !v || !cfg) return PE_ERR_NULL;
    pe__attn A;
    pe_status st = pe__attn_resolve(&A, cfg);
    if (st != PE_OK) return st;
    if (weights && A.n_w == 0) return PE_ERR_SHAPE; /* (B, H, q_len, k_len) does not fit in memory */
    if (A.n_scratch > 0 && (!scratch || n_scratch < A.n_scratch)) return scratch ? PE_ERR_SHAPE : PE_ERR_NULL;

    /* Everything is checked before anything is written. */
    if (A.slopes)
        for (int32_t h = 0; h < A.H; h++)
            if (!isfinite(A.slopes[h])) return PE_ERR_FIELD_VALUE;
    int32_t max_q = 0, max_k = 0;
    if (A.qpos) {
        st = pe_positions_max(&max_q, A.qpos, A.Sq);
        if (st != PE_OK) return st;
    } else {
        if (A.rope && A.Sq > A.Sk) return PE_ERR_POSITION; /* default query positions would be negative */
        max_q = A.Sk - 1;
    }
    if (A.kpos) {
        st = pe_positions_max(&max_k, A.kpos, A.Sk);
        if (st != PE_OK) return st;
    } else {
        max_k = A.Sk - 1;
    }

    const float *qx = q, *kx = k;
    if (A.rope) {
        /* RoPE on copies: q and k are inputs and stay unmodified. One frequency set for q and k (dynamic and
         * longrope pick theirs from seq_len), by default max position + 1, as one HF forward call decides. */
        const int64_t seq_len = cfg->rope_seq_len > 0 ? (int64_t)cfg->rope_seq_len
                                                      : (int64_t)(max_q > max_k ? max_q : max_k) + 1;
        const size_t nf = (size_t)A.rope->n_freq;
        float *qr = scratch, *kr = scratch + A.n_q;
        float *cq = kr + A.n_k, *sq = cq + (size_t)A.Sq * nf;
        float *ck = sq + (size_t)A.Sq * nf, *sk = ck + (size_t)A.Sk * nf;
        st = pe__rope_tables(cq, sq, A.rope, A.qpos, (int64_t)A.Sk - A.Sq, A.Sq, seq_len);
        if (st != PE_OK) return st;
        st = pe__rope_tables(ck, sk, A.rope, A.kpos, 0, A.Sk, seq_len);
        if (st != PE_OK) return st;
        memcpy(qr, q, sizeof(float) * A.n_q);
        memcpy(kr, k, sizeof(float) * A.n_k);
        st = pe_rope_apply(A.rope, qr, cq, sq, A.B, A.Sq, A.H, cfg->layout, 0, PE_ROTATE_FORWARD);
        if (st != PE_OK) return st;
        st = pe_rope_apply(A.rope, kr, ck, sk, A.B, A.Sk, A.KVH, cfg->layout, 0, PE_ROTATE_FORWARD);
        if (st != PE_OK) return st;
        qx = qr;
        kx = kr;
    }

    const int32_t G = A.group;
    const int64_t n_rows = (int64_t)G * A.Sq;
    pe__rows R;
    for (int32_t b = 0; b < A.B; b++)
        for (int32_t g = 0; g < A.KVH; g++) {
            const float *kh = kx + (size_t)b * A.kb + (size_t)g * A.kh;
            const float *vh = v + (size_t)b * A.kb + (size_t)g * A.kh;
            for (int64_t t0 = 0; t0 < n_rows; t0 += PE__QB) {
                const int32_t nq = n_rows - t0 < PE__QB ? (int32_t)(n_rows - t0) : PE__QB;
                for (int32_t r = 0; r < nq; r++) {
                    const int32_t i = (int32_t)((t0 + r) / G), h = g * G + (int32_t)((t0 + r) % G);
                    const size_t qo = (size_t)b * A.qb + (size_t)h * A.qh + (size_t)i * A.qs;
                    R.q[r] = qx + qo;
                    R.o[r] = out + qo;
                    R.w[r] = weights ? weights + (((size_t)b * (size_t)A.H + (size_t)h) * (size_t)A.Sq + (size_t)i) *
                                                     (size_t)A.Sk
                                     : NULL;
                    R.slope[r] = A.slopes ? A.slopes[h] : 0.0f;
                    R.qp[r] = pe__qpos(&A, i);
                }
                pe__attn_block(&A, &R, nq, kh, vh, A.slopes != NULL);
            }
        }
    return PE_OK;
}
