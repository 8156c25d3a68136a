/* rotation.c — "limit: rotation": the fastest RoPE rotation we can write by hand in SIMD128, without posenc's
 * API or kernels (bench only). In cache a rotation is bound by instructions, not bytes (4 multiplies per 8
 * floats against 1 for the in-place `x *= s` pass of limit.c), so this is the realistic ceiling there.
 *
 * What it does that a generic kernel may not:
 *   - head_dim fixed at 128 (the bench's shape): the head row is fully unrolled with constant offsets, so the
 *     engine emits no address arithmetic or loop control inside a row;
 *   - q and k are rotated in the same loop: each cos/sin vector is loaded once for both (q and k have the
 *     same heads here, as in the bench);
 *   - bhsd: RB_GROUP heads of q and of k at the same position share one read of the cos/sin row.
 * Input: posenc's table layout, cos and sin [S][64], made once for the positions (cached positions).
 * Interleaved pairs (x[2i], x[2i+1]) expand each 4-frequency vector to two [c0 c0 c1 c1] vectors with
 * shuffles, shared by q and k; the sign of the sine goes on the even lanes (one xor, also shared).
 * restrict: q, k and the tables never overlap in the bench, so loads can be scheduled ahead of stores.
 */
#include <stdint.h>
#include <wasm_simd128.h>

#define D 128
#define NF 64

#define LD(p) wasm_v128_load(p)
#define ST(p, v) wasm_v128_store((p), (v))
#define MUL wasm_f32x4_mul
#define ADD wasm_f32x4_add
#define SUB wasm_f32x4_sub

static inline __attribute__((always_inline)) void half_row(float *restrict q, float *restrict k,
                                                           const float *restrict c, const float *restrict s) {
#pragma clang loop unroll(full)
    for (int i = 0; i < NF; i += 4) {
        v128_t vc = LD(c + i), vs = LD(s + i);
        v128_t q1 = LD(q + i), q2 = LD(q + NF + i), k1 = LD(k + i), k2 = LD(k + NF + i);
        ST(q + i, SUB(MUL(q1, vc), MUL(q2, vs)));
        ST(q + NF + i, ADD(MUL(q2, vc), MUL(q1, vs)));
        ST(k + i, SUB(MUL(k1, vc), MUL(k2, vs)));
        ST(k + NF + i, ADD(MUL(k2, vc), MUL(k1, vs)));
    }
}

#define SWAP(x) wasm_i32x4_shuffle((x), (x), 1, 0, 3, 2)

static inline __attribute__((always_inline)) void il_row(float *restrict q, float *restrict k, const float *restrict c,
                                                         const float *restrict s) {
    const v128_t neg_even = wasm_i32x4_make((int32_t)0x80000000, 0, (int32_t)0x80000000, 0);
#pragma clang loop unroll(full)
    for (int i = 0; i < NF; i += 4) {
        v128_t vc = LD(c + i), vs = LD(s + i);
        v128_t c0 = wasm_i32x4_shuffle(vc, vc, 0, 0, 1, 1), c1 = wasm_i32x4_shuffle(vc, vc, 2, 2, 3, 3);
        v128_t s0 = wasm_v128_xor(wasm_i32x4_shuffle(vs, vs, 0, 0, 1, 1), neg_even);
        v128_t s1 = wasm_v128_xor(wasm_i32x4_shuffle(vs, vs, 2, 2, 3, 3), neg_even);
        v128_t q0 = LD(q + 2 * i), q1 = LD(q + 2 * i + 4), k0 = LD(k + 2 * i), k1 = LD(k + 2 * i + 4);
        ST(q + 2 * i, ADD(MUL(q0, c0), MUL(SWAP(q0), s0)));
        ST(q + 2 * i + 4, ADD(MUL(q1, c1), MUL(SWAP(q1), s1)));
        ST(k + 2 * i, ADD(MUL(k0, c0), MUL(SWAP(k0), s0)));
        ST(k + 2 * i + 4, ADD(MUL(k1, c1), MUL(SWAP(k1), s1)));
    }
}

/* One head row of q and of k at one position; il: interleaved pairs (a constant after inlining). */
static inline __attribute__((always_inline)) void row(int il, float *restrict q, float *restrict k,
                                                      const float *restrict c, const float *restrict s) {
    if (il)
        il_row(q, k, c, s);
    else
        half_row(q, k, c, s);
}

/* bshd [B][S][H][128]: one cos/sin row per token, reused by its H heads of q and k. */
static inline __attribute__((always_inline)) void bshd(int il, float *q, float *k, const float *cos, const float *sin,
                                                       int32_t B, int32_t S, int32_t H) {
    for (int32_t b = 0; b < B; b++)
        for (int32_t t = 0; t < S; t++) {
            const float *c = cos + (int64_t)t * NF, *s = sin + (int64_t)t * NF;
            int64_t base = ((int64_t)b * S + t) * H * D;
            for (int32_t h = 0; h < H; h++) row(il, q + base + (int64_t)h * D, k + base + (int64_t)h * D, c, s);
        }
}

/* bhsd [B][H][S][128]: RB_GROUP heads of q and k walk the sequence together, sharing each table row read. */
#define RB_GROUP 2
static inline __attribute__((always_inline)) void bhsd(int il, float *q, float *k, const float *cos, const float *sin,
                                                       int32_t B, int32_t S, int32_t H) {
    const int64_t hs = (int64_t)S * D;
    for (int32_t b = 0; b < B; b++) {
        int32_t h = 0;
        for (; h + RB_GROUP <= H; h += RB_GROUP) {
            float *qh = q + ((int64_t)b * H + h) * hs, *kh = k + ((int64_t)b * H + h) * hs;
            for (int32_t t = 0; t < S; t++) {
                const float *c = cos + (int64_t)t * NF, *s = sin + (int64_t)t * NF;
                for (int g = 0; g < RB_GROUP; g++)
                    row(il, qh + g * hs + (int64_t)t * D, kh + g * hs + (int64_t)t * D, c, s);
            }
        }
        for (; h < H; h++) {
            float *qh = q + ((int64_t)b * H + h) * hs, *kh = k + ((int64_t)b * H + h) * hs;
            for (int32_t t = 0; t < S; t++)
                row(il, qh + (int64_t)t * D, kh + (int64_t)t * D, cos + (int64_t)t * NF, sin + (int64_t)t * NF);
        }
    }
}

#define EXPORT(name) __attribute__((export_name(#name))) void name
EXPORT(rot_half_bshd)(float *q, float *k, const float *cos, const float *sin, int32_t B, int32_t S, int32_t H) {
    bshd(0, q, k, cos, sin, B, S, H);
}
EXPORT(rot_il_bshd)(float *q, float *k, const float *cos, const float *sin, int32_t B, int32_t S, int32_t H) {
    bshd(1, q, k, cos, sin, B, S, H);
}
EXPORT(rot_half_bhsd)(float *q, float *k, const float *cos, const float *sin, int32_t B, int32_t S, int32_t H) {
    bhsd(0, q, k, cos, sin, B, S, H);
}
EXPORT(rot_il_bhsd)(float *q, float *k, const float *cos, const float *sin, int32_t B, int32_t S, int32_t H) {
    bhsd(1, q, k, cos, sin, B, S, H);
}
