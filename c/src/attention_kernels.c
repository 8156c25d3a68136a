/* attention_kernels.c — the tile kernels of pe_attention: scores (q·k, scale, ALiBi, bias, masks) and PV
 * (acc · corr + Σ p v), each as a SIMD128 kernel and its scalar twin. Split from the driver (attention.c) so
 * each file stays readable; attention.c's opening comment gives the blocking, the online-softmax step and
 * the order of operations both builds keep, which is what makes them agree bit for bit.
 */
#include "attention_internal.h"

#include <math.h>
#include <stddef.h>

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
void pe__scores1(float *s, const float *q, const pe__rowc *rc, const pe__tile *T) {
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
void pe__scores2(float *s0, float *s1, const float *q0, const float *q1, const pe__rowc rc[2], const pe__tile *T) {
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

void pe__scores1(float *s, const float *q, const pe__rowc *rc, const pe__tile *T) {
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
void pe__pv1(float *acc, float corr, const float *p, const float *v, size_t vs, int32_t nk, int32_t D) {
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
void pe__pv4(float *const acc[4], const float corr[4], const float *p, size_t ps, const float *v, size_t vs, int32_t nk,
             int32_t D) {
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
