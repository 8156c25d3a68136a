/* unfused.c — the unfused attention pipeline that posenc's fused pe_attention is measured against (bench only).
 *
 * What a framework does op by op: materialise the position term, materialise the scores, softmax them in a
 * separate pass, then multiply by V:
 *
 *   ALiBi:  bias = pe_alibi_bias(H, Sq, Sk, causal)            (H, Sq, Sk) floats written, then read back
 *           S    = scale * Q K^T + bias                        (H, Sq, Sk) floats written
 *   RoPE:   q', k' = copies of q, k rotated by pe_rope_apply   (cos/sin from pe_rope_cos_sin)
 *           S    = scale * Q' K'^T, causal -> -inf             (H, Sq, Sk) floats written
 *   then    P    = softmax(S) row by row, in place             (read + write S)
 *           out  = P V
 *
 * It is built from the same posenc sources and flags as posenc.simd.wasm, and its own loops are the same
 * quality as the fused kernel's: SIMD128 dot products over four query rows at a time, the same Cephes-style
 * exp polynomial, four-row P·V accumulation, and masked keys skipped (only the visible causal band is
 * multiplied). So fused vs unfused measures fusion — the (Sq x Sk) round trips through memory — and nothing
 * else. Layout: bhsd (B, H, S, D), batch 1 or more, H == KV heads.
 */
#include "posenc.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <wasm_simd128.h>

#define EXP_MIN (-87.0f)
#define LOG2E 1.44269504088896341f
#define LN2_C1 0.693359375f
#define LN2_C2 (-2.12194440e-4f)
#define MAGIC 12582912.0f
#define MAGIC_BITS 0x4B400000

static inline v128_t exp4(v128_t x) {
    const v128_t lo = wasm_f32x4_splat(EXP_MIN), magic = wasm_f32x4_splat(MAGIC);
    const v128_t keep = wasm_f32x4_ge(x, lo);
    const v128_t xc = wasm_v128_bitselect(x, lo, keep);
    const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(xc, wasm_f32x4_splat(LOG2E)), magic);
    const v128_t n = wasm_f32x4_sub(t, magic);
    const v128_t r = wasm_f32x4_sub(wasm_f32x4_sub(xc, wasm_f32x4_mul(n, wasm_f32x4_splat(LN2_C1))),
                                    wasm_f32x4_mul(n, wasm_f32x4_splat(LN2_C2)));
    const v128_t z = wasm_f32x4_mul(r, r);
    v128_t p =
        wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_splat(1.9875691500e-4f), r), wasm_f32x4_splat(1.3981999507e-3f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(8.3334519073e-3f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(4.1665795894e-2f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(1.6666665459e-1f));
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(5.0000001201e-1f));
    p = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, z), r), wasm_f32x4_splat(1.0f));
    const v128_t eb =
        wasm_i32x4_shl(wasm_i32x4_add(wasm_i32x4_sub(t, wasm_i32x4_splat(MAGIC_BITS)), wasm_i32x4_splat(127)), 23);
    return wasm_v128_and(wasm_f32x4_mul(p, eb), keep);
}

static inline float hsum(v128_t v) {
    v128_t h = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(h, 0) + wasm_f32x4_extract_lane(h, 1);
}

/* S[i][j] = scale * q_i . k_j (+ bias[i][j]), j < jend(i); -inf for masked j. D % 4 == 0. */
static void scores(float *S, const float *q, const float *k, const float *bias, int32_t Sq, int32_t Sk, int32_t D,
                   int causal, float scale) {
    const int32_t off = Sk - Sq; /* query i sits at key position off + i */
    int32_t i = 0;
    for (; i + 4 <= Sq; i += 4) {
        const float *q0 = q + (size_t)i * D, *q1 = q0 + D, *q2 = q1 + D, *q3 = q2 + D;
        int32_t jend = causal ? off + i + 4 : Sk;
        if (jend > Sk) jend = Sk;
        for (int32_t j = 0; j < jend; j++) {
            const float *kr = k + (size_t)j * D;
            v128_t a0 = wasm_f32x4_splat(0), a1 = a0, a2 = a0, a3 = a0;
            for (int32_t d = 0; d < D; d += 4) {
                v128_t kv = wasm_v128_load(kr + d);
                a0 = wasm_f32x4_add(a0, wasm_f32x4_mul(wasm_v128_load(q0 + d), kv));
                a1 = wasm_f32x4_add(a1, wasm_f32x4_mul(wasm_v128_load(q1 + d), kv));
                a2 = wasm_f32x4_add(a2, wasm_f32x4_mul(wasm_v128_load(q2 + d), kv));
                a3 = wasm_f32x4_add(a3, wasm_f32x4_mul(wasm_v128_load(q3 + d), kv));
            }
            S[(size_t)i * Sk + j] = hsum(a0) * scale;
            S[(size_t)(i + 1) * Sk + j] = hsum(a1) * scale;
            S[(size_t)(i + 2) * Sk + j] = hsum(a2) * scale;
            S[(size_t)(i + 3) * Sk + j] = hsum(a3) * scale;
        }
    }
    for (; i < Sq; i++) {
        int32_t jend = causal ? off + i + 1 : Sk;
        if (jend > Sk) jend = Sk;
        for (int32_t j = 0; j < jend; j++) {
            v128_t a = wasm_f32x4_splat(0);
            for (int32_t d = 0; d < D; d += 4)
                a = wasm_f32x4_add(
                    a, wasm_f32x4_mul(wasm_v128_load(q + (size_t)i * D + d), wasm_v128_load(k + (size_t)j * D + d)));
            S[(size_t)i * Sk + j] = hsum(a) * scale;
        }
    }
    /* bias and mask: a separate elementwise pass, as an op-by-op graph runs it */
    for (i = 0; i < Sq; i++) {
        float *s = S + (size_t)i * Sk;
        const float *b = bias ? bias + (size_t)i * Sk : NULL;
        int32_t vis = causal ? off + i + 1 : Sk;
        if (vis > Sk) vis = Sk;
        int32_t j = 0;
        if (b)
            for (; j + 4 <= vis; j += 4)
                wasm_v128_store(s + j, wasm_f32x4_add(wasm_v128_load(s + j), wasm_v128_load(b + j)));
        for (; j < vis; j++) s[j] = b ? s[j] + b[j] : s[j];
        for (j = vis; j < Sk; j++) s[j] = -INFINITY;
    }
}

/* Row softmax in place over the visible band; masked tail set to 0. */
static void softmax_rows(float *S, int32_t Sq, int32_t Sk, int causal) {
    const int32_t off = Sk - Sq;
    for (int32_t i = 0; i < Sq; i++) {
        float *s = S + (size_t)i * Sk;
        int32_t vis = causal ? off + i + 1 : Sk;
        if (vis > Sk) vis = Sk;
        float m = -INFINITY;
        for (int32_t j = 0; j < vis; j++) m = s[j] > m ? s[j] : m;
        v128_t vm = wasm_f32x4_splat(m), vsum = wasm_f32x4_splat(0);
        int32_t j = 0;
        for (; j + 4 <= vis; j += 4) {
            v128_t e = exp4(wasm_f32x4_sub(wasm_v128_load(s + j), vm));
            wasm_v128_store(s + j, e);
            vsum = wasm_f32x4_add(vsum, e);
        }
        float sum = hsum(vsum);
        for (; j < vis; j++) {
            v128_t e = exp4(wasm_f32x4_splat(s[j] - m));
            s[j] = wasm_f32x4_extract_lane(e, 0);
            sum += s[j];
        }
        v128_t inv = wasm_f32x4_splat(1.0f / sum);
        for (j = 0; j + 4 <= vis; j += 4) wasm_v128_store(s + j, wasm_f32x4_mul(wasm_v128_load(s + j), inv));
        for (; j < vis; j++) s[j] *= 1.0f / sum;
        for (j = vis; j < Sk; j++) s[j] = 0.0f;
    }
}

/* out[i] = sum_j P[i][j] v_j over the visible band, four rows at a time. D % 8 == 0. */
static void pv(float *out, const float *P, const float *v, int32_t Sq, int32_t Sk, int32_t D, int causal) {
    const int32_t off = Sk - Sq;
    int32_t i = 0;
    for (; i + 4 <= Sq; i += 4) {
        int32_t jend = causal ? off + i + 4 : Sk;
        if (jend > Sk) jend = Sk;
        const float *p0 = P + (size_t)i * Sk, *p1 = p0 + Sk, *p2 = p1 + Sk, *p3 = p2 + Sk;
        for (int32_t d = 0; d < D; d += 8) {
            v128_t x00 = wasm_f32x4_splat(0), x01 = x00, x10 = x00, x11 = x00, x20 = x00, x21 = x00, x30 = x00,
                   x31 = x00;
            for (int32_t j = 0; j < jend; j++) {
                const float *vr = v + (size_t)j * D + d;
                v128_t va = wasm_v128_load(vr), vb = wasm_v128_load(vr + 4);
                v128_t pc = wasm_f32x4_splat(p0[j]);
                x00 = wasm_f32x4_add(x00, wasm_f32x4_mul(pc, va));
                x01 = wasm_f32x4_add(x01, wasm_f32x4_mul(pc, vb));
                pc = wasm_f32x4_splat(p1[j]);
                x10 = wasm_f32x4_add(x10, wasm_f32x4_mul(pc, va));
                x11 = wasm_f32x4_add(x11, wasm_f32x4_mul(pc, vb));
                pc = wasm_f32x4_splat(p2[j]);
                x20 = wasm_f32x4_add(x20, wasm_f32x4_mul(pc, va));
                x21 = wasm_f32x4_add(x21, wasm_f32x4_mul(pc, vb));
                pc = wasm_f32x4_splat(p3[j]);
                x30 = wasm_f32x4_add(x30, wasm_f32x4_mul(pc, va));
                x31 = wasm_f32x4_add(x31, wasm_f32x4_mul(pc, vb));
            }
            float *o = out + (size_t)i * D + d;
            wasm_v128_store(o, x00);
            wasm_v128_store(o + 4, x01);
            wasm_v128_store(o + D, x10);
            wasm_v128_store(o + D + 4, x11);
            wasm_v128_store(o + 2 * D, x20);
            wasm_v128_store(o + 2 * D + 4, x21);
            wasm_v128_store(o + 3 * D, x30);
            wasm_v128_store(o + 3 * D + 4, x31);
        }
    }
    for (; i < Sq; i++) {
        int32_t jend = causal ? off + i + 1 : Sk;
        if (jend > Sk) jend = Sk;
        const float *p = P + (size_t)i * Sk;
        for (int32_t d = 0; d < D; d += 8) {
            v128_t x0 = wasm_f32x4_splat(0), x1 = x0;
            for (int32_t j = 0; j < jend; j++) {
                const float *vr = v + (size_t)j * D + d;
                v128_t pc = wasm_f32x4_splat(p[j]);
                x0 = wasm_f32x4_add(x0, wasm_f32x4_mul(pc, wasm_v128_load(vr)));
                x1 = wasm_f32x4_add(x1, wasm_f32x4_mul(pc, wasm_v128_load(vr + 4)));
            }
            wasm_v128_store(out + (size_t)i * D + d, x0);
            wasm_v128_store(out + (size_t)i * D + d + 4, x1);
        }
    }
}

/* Floats of scratch bench_unfused needs: scores (B*H*Sq*Sk) + bias (H*Sq*Sk) for ALiBi, or scores + rotated
 * q and k + cos/sin tables (Sq + Sk rows) for RoPE. */
__attribute__((export_name("bench_unfused_scratch"))) double
bench_unfused_scratch(int32_t B, int32_t H, int32_t Sq, int32_t Sk, int32_t D, int32_t alibi, int32_t rope) {
    double n = (double)B * H * Sq * Sk;
    if (alibi) n += (double)H * Sq * Sk;
    if (rope) n += (double)B * H * (Sq + Sk) * D + 2.0 * (Sq + Sk) * (D / 2);
    return n;
}

/* out = softmax(scale QK^T + position term) V, op by op. q/k/v/out bhsd; rope: a pe_rope or NULL.
 * Returns a pe_status. */
__attribute__((export_name("bench_unfused"))) int32_t
bench_unfused(float *out, const float *q, const float *k, const float *v, float *scratch, int32_t B, int32_t H,
              int32_t Sq, int32_t Sk, int32_t D, int32_t causal, int32_t alibi, const pe_rope *rope) {
    const float scale = (float)(1.0 / sqrt((double)D));
    const size_t nS = (size_t)Sq * Sk, nq = (size_t)B * H * Sq * D, nk = (size_t)B * H * Sk * D;
    float *S = scratch, *bias = NULL, *qr = NULL, *kr = NULL;
    float *rest = scratch + (size_t)B * H * nS;
    pe_status st;
    if (alibi) {
        bias = rest;
        st = pe_alibi_bias(bias, NULL, H, Sq, Sk, causal);
        if (st != PE_OK) return st;
    }
    if (rope) {
        int32_t nf = rope->n_freq;
        qr = rest;
        kr = qr + nq;
        float *cq = kr + nk, *sq = cq + (size_t)Sq * nf, *ck = sq + (size_t)Sq * nf, *sk = ck + (size_t)Sk * nf;
        int32_t pos[256];
        for (int32_t i0 = 0; i0 < Sk; i0 += 256) { /* key positions 0..Sk-1, query positions Sk-Sq.. */
            int32_t m = Sk - i0 < 256 ? Sk - i0 : 256;
            for (int32_t i = 0; i < m; i++) pos[i] = i0 + i;
            st = pe_rope_cos_sin(ck + (size_t)i0 * nf, sk + (size_t)i0 * nf, rope, pos, m, Sk, 1.0);
            if (st != PE_OK) return st;
        }
        memcpy(cq, ck + (size_t)(Sk - Sq) * nf, sizeof(float) * (size_t)Sq * nf);
        memcpy(sq, sk + (size_t)(Sk - Sq) * nf, sizeof(float) * (size_t)Sq * nf);
        memcpy(qr, q, sizeof(float) * nq);
        memcpy(kr, k, sizeof(float) * nk);
        const pe_rope_apply_config qc = {.batch = B, .seq = Sq, .heads = H, .layout = PE_LAYOUT_BHSD};
        const pe_rope_apply_config kc = {.batch = B, .seq = Sk, .heads = H, .layout = PE_LAYOUT_BHSD};
        st = pe_rope_apply(rope, qr, cq, sq, &qc);
        if (st != PE_OK) return st;
        st = pe_rope_apply(rope, kr, ck, sk, &kc);
        if (st != PE_OK) return st;
        q = qr;
        k = kr;
    }
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++) {
            size_t qo = ((size_t)b * H + h) * Sq * D, ko = ((size_t)b * H + h) * Sk * D;
            float *Sh = S + ((size_t)b * H + h) * nS;
            scores(Sh, q + qo, k + ko, bias ? bias + (size_t)h * nS : NULL, Sq, Sk, D, causal, scale);
        }
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++) softmax_rows(S + ((size_t)b * H + h) * nS, Sq, Sk, causal);
    for (int32_t b = 0; b < B; b++)
        for (int32_t h = 0; h < H; h++) {
            size_t qo = ((size_t)b * H + h) * Sq * D, ko = ((size_t)b * H + h) * Sk * D;
            pv(out + qo, S + ((size_t)b * H + h) * nS, v + ko, Sq, Sk, D, causal);
        }
    return PE_OK;
}
