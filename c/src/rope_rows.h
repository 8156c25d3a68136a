/* rope_rows.h — the rotation loops of rope_apply.c: pairs of head vectors by one cos/sin row, and every head of
 * q and k at one token (the formulas and the two pairings: rope_apply.c). Static inline kernels for the one file
 * that includes it; pe__apply there walks the batch, the sequence and the bhsd head groups over them. */
#ifndef PE_ROPE_ROWS_H
#define PE_ROPE_ROWS_H

#include "simd.h"
#include "rope_internal.h"

#include <stddef.h>
#include <stdint.h>

/* The kernels rotate head vectors in pairs: two heads that use the same cos/sin row (two heads of a token, q's
 * and k's, or two heads of a bhsd group at one position) go through one loop, so each cos and sin vector is
 * loaded once for both. The main loop takes 16 pairs a step (4 vectors with constant offsets off the same
 * pointers: every common rotary size, 32 .. 256, is a multiple of 32 and runs no other loop), then 4 pairs a
 * step and a scalar tail for other sizes. Per 8 floats of a head, half-split: 2 loads, 4 mul, 2 add/sub,
 * 2 stores and half of the 2 cos/sin loads = 11 wasm SIMD ops, plus ~1 of address and loop arithmetic per 64
 * floats; interleaved adds 2 shuffles to split each 8 floats into planes and 2 to zip them back.
 *
 * Interleaved rows in the SIMD build, token by token, skip the planes when they serve enough heads: the token's
 * row is expanded once into the hand kernel's form x' = x * [c0 c0 c1 c1] + swap(x) * [-s0 s0 -s1 s1] (the same
 * bits: the sign moved into the factor) and serves all of its heads, 1 shuffle per 4 floats instead of 2
 * (pe__expand_il below). Decode [1, 1, 32, 128], raw pe_rope_apply_qk, alternated with the plane form (issue
 * 14, fastest of three runs each): 1.11 -> 0.96 us; interleaved / half-split 1.36-1.42 -> 1.24-1.33, the hand
 * kernels' own 1.25-1.36 (bench/api-cost.mjs). Rotary dims 64 .. 256 with 32 heads each: 0.88-0.92x the plane
 * form's time; 4 + 4 heads: 0.97-1.00x, so fewer heads keep the planes, as do bhsd head groups (a row serves 4)
 * and calls past the cache (PE__STREAM_BYTES).
 *
 * Every element gets the same arithmetic as the scalar loops (the products, then one add or sub: PE__ROT_A and
 * PE__ROT_B, rope_internal.h), so the SIMD and scalar builds, and any grouping of heads, agree bit for bit.
 * inverse and the pairing are constants after inlining: four branch-free instantiations. */
/* scalar: pair (a, b) of one head */
#define PE__ROT_SCALAR(pa, pb, c, s)                                   \
    do {                                                               \
        const float xa_ = *(pa), xb_ = *(pb);                          \
        *(pa) = inverse ? xa_ * (c) + xb_ * (s) : xa_ * (c)-xb_ * (s); \
        *(pb) = inverse ? xb_ * (c)-xa_ * (s) : xb_ * (c) + xa_ * (s); \
    } while (0)

#if PE_SIMD
/* 4 half-split pairs at i of head x (b plane n floats after a) */
#define PE__HALF4(x, i, c, s)                                                             \
    do {                                                                                  \
        const pe_v128 va_ = pe_f32x4_load((x) + (i)), vb_ = pe_f32x4_load((x) + n + (i)); \
        pe_f32x4_store((x) + (i), PE__ROT_A(va_, vb_, c, s));                             \
        pe_f32x4_store((x) + n + (i), PE__ROT_B(va_, vb_, c, s));                         \
    } while (0)
/* 4 interleaved pairs at i of head x: 8 floats split into even and odd planes, rotated, zipped back */
#define PE__INTL4(x, i, c, s)                                                                     \
    do {                                                                                          \
        const pe_v128 lo_ = pe_f32x4_load((x) + 2 * (i)), hi_ = pe_f32x4_load((x) + 2 * (i) + 4); \
        const pe_v128 va_ = pe_f32x4_even(lo_, hi_), vb_ = pe_f32x4_odd(lo_, hi_);                \
        const pe_v128 ra_ = PE__ROT_A(va_, vb_, c, s), rb_ = PE__ROT_B(va_, vb_, c, s);           \
        pe_f32x4_store((x) + 2 * (i), pe_f32x4_zip_lo(ra_, rb_));                                 \
        pe_f32x4_store((x) + 2 * (i) + 4, pe_f32x4_zip_hi(ra_, rb_));                             \
    } while (0)
#define PE__ROT4(x, i, c, s)       \
    do {                           \
        if (interleaved)           \
            PE__INTL4(x, i, c, s); \
        else                       \
            PE__HALF4(x, i, c, s); \
    } while (0)
#endif

/* Heads x0 and x1 (x1 may be NULL: one head) by one cos/sin row of n pairs. */
PE_INLINE void pe__rotate_two(float *x0, float *x1, const float *cos, const float *sin, int32_t n,
                              const int interleaved, const int inverse) {
    int32_t i = 0;
#if PE_SIMD
    if (x1) {
        for (; i + 16 <= n; i += 16) {
            const float *cp = cos + i, *sp = sin + i;
            float *p0 = x0 + (interleaved ? 2 * i : i), *p1 = x1 + (interleaved ? 2 * i : i);
            pe_v128 c = pe_f32x4_load(cp), s = pe_f32x4_load(sp);
            PE__ROT4(p0, 0, c, s);
            PE__ROT4(p1, 0, c, s);
            c = pe_f32x4_load(cp + 4), s = pe_f32x4_load(sp + 4);
            PE__ROT4(p0, 4, c, s);
            PE__ROT4(p1, 4, c, s);
            c = pe_f32x4_load(cp + 8), s = pe_f32x4_load(sp + 8);
            PE__ROT4(p0, 8, c, s);
            PE__ROT4(p1, 8, c, s);
            c = pe_f32x4_load(cp + 12), s = pe_f32x4_load(sp + 12);
            PE__ROT4(p0, 12, c, s);
            PE__ROT4(p1, 12, c, s);
        }
        for (; i + 4 <= n; i += 4) {
            const pe_v128 c = pe_f32x4_load(cos + i), s = pe_f32x4_load(sin + i);
            PE__ROT4(x0, i, c, s);
            PE__ROT4(x1, i, c, s);
        }
    } else {
        for (; i + 16 <= n; i += 16) {
            const float *cp = cos + i, *sp = sin + i;
            float *p0 = x0 + (interleaved ? 2 * i : i);
            const pe_v128 c0 = pe_f32x4_load(cp), s0 = pe_f32x4_load(sp), c1 = pe_f32x4_load(cp + 4);
            const pe_v128 s1 = pe_f32x4_load(sp + 4), c2 = pe_f32x4_load(cp + 8), s2 = pe_f32x4_load(sp + 8);
            const pe_v128 c3 = pe_f32x4_load(cp + 12), s3 = pe_f32x4_load(sp + 12);
            PE__ROT4(p0, 0, c0, s0);
            PE__ROT4(p0, 4, c1, s1);
            PE__ROT4(p0, 8, c2, s2);
            PE__ROT4(p0, 12, c3, s3);
        }
        for (; i + 4 <= n; i += 4) {
            const pe_v128 c = pe_f32x4_load(cos + i), s = pe_f32x4_load(sin + i);
            PE__ROT4(x0, i, c, s);
        }
    }
#endif
    const size_t step = interleaved ? 2 : 1, other = interleaved ? 1 : (size_t)n;
    for (; i < n; i++) {
        const float c = cos[i], s = sin[i];
        float *a0 = x0 + step * (size_t)i;
        PE__ROT_SCALAR(a0, a0 + other, c, s);
        if (x1) {
            float *a1 = x1 + step * (size_t)i;
            PE__ROT_SCALAR(a1, a1 + other, c, s);
        }
    }
}

#if PE_SIMD
/* Interleaved pairs rotated in place, without splitting them into planes:
 *   x' = x * [c0 c0 c1 c1] + swap(x) * [-s0 s0 -s1 s1]      (inverse: the sign on the odd lanes)
 * the same products and the same one add per element as PE__ROT_SCALAR (a + (-b) is a - b in IEEE arithmetic,
 * and a sign flip is exact), so the same bits. ex: a row of n pairs in that form, n / 2 vectors of each, c and
 * s alternating. */
PE_INLINE void pe__expand_il(float *ex, const float *cos, const float *sin, int32_t n, const int inverse) {
    const pe_v128 sign =
        inverse ? pe_i32x4_make(0, INT32_MIN, 0, INT32_MIN) : pe_i32x4_make(INT32_MIN, 0, INT32_MIN, 0);
    for (int32_t m = 0; m < n / 4; m++) {
        const pe_v128 c = pe_f32x4_load(cos + 4 * m), s = pe_f32x4_load(sin + 4 * m);
        pe_f32x4_store(ex + 16 * m, pe_f32x4_dup_lo(c));
        pe_f32x4_store(ex + 16 * m + 4, pe_v128_xor(pe_f32x4_dup_lo(s), sign));
        pe_f32x4_store(ex + 16 * m + 8, pe_f32x4_dup_hi(c));
        pe_f32x4_store(ex + 16 * m + 12, pe_v128_xor(pe_f32x4_dup_hi(s), sign));
    }
}
#define PE__IL_EX(x, j, c, s)                                                                                       \
    do {                                                                                                            \
        const pe_v128 v_ = pe_f32x4_load((x) + 4 * (j));                                                            \
        pe_f32x4_store((x) + 4 * (j), pe_f32x4_add(pe_f32x4_mul(v_, c), pe_f32x4_mul(pe_f32x4_swap_pairs(v_), s))); \
    } while (0)
/* Heads x0 and x1 (x1 may be NULL) by an expanded row of n pairs (a multiple of 8). The pointers advance, so
 * every access is a constant offset off one of them (an index j * 16 + 16 would come out as an `or`, which wasm
 * cannot fold into the load). */
PE_INLINE void pe__rotate_two_il(float *x0, float *x1, const float *ex, int32_t n) {
    if (x1) {
        for (int32_t j = 0; j < n / 8; j++, x0 += 16, x1 += 16, ex += 32) {
            pe_v128 c = pe_f32x4_load(ex), s = pe_f32x4_load(ex + 4);
            PE__IL_EX(x0, 0, c, s);
            PE__IL_EX(x1, 0, c, s);
            c = pe_f32x4_load(ex + 8), s = pe_f32x4_load(ex + 12);
            PE__IL_EX(x0, 1, c, s);
            PE__IL_EX(x1, 1, c, s);
            c = pe_f32x4_load(ex + 16), s = pe_f32x4_load(ex + 20);
            PE__IL_EX(x0, 2, c, s);
            PE__IL_EX(x1, 2, c, s);
            c = pe_f32x4_load(ex + 24), s = pe_f32x4_load(ex + 28);
            PE__IL_EX(x0, 3, c, s);
            PE__IL_EX(x1, 3, c, s);
        }
    } else {
        for (int32_t j = 0; j < n / 4; j++, x0 += 8, ex += 16) {
            PE__IL_EX(x0, 0, pe_f32x4_load(ex), pe_f32x4_load(ex + 4));
            PE__IL_EX(x0, 1, pe_f32x4_load(ex + 8), pe_f32x4_load(ex + 12));
        }
    }
}
#endif

/* One pair of heads: by the expanded row ex when given (SIMD, interleaved), else by cos/sin. */
PE_INLINE void pe__rotate_pair(float *x0, float *x1, const float *cos, const float *sin, const float *ex, int32_t n,
                               const int interleaved, const int inverse) {
#if PE_SIMD
    if (ex) {
        pe__rotate_two_il(x0, x1, ex, n);
        return;
    }
#else
    (void)ex;
#endif
    pe__rotate_two(x0, x1, cos, sin, n, interleaved, inverse);
}

typedef struct pe__heads {
    float *x;
    pe__apply_geom g;
    int32_t heads;
} pe__heads;

/* Every head of q and k at one token (bshd) that uses one cos/sin row, two at a time. Two orders, the same
 * arithmetic for every head (so the same bits):
 *   in cache: q's heads in pairs, q's last (if odd) with k's first, then k's in pairs;
 *   streaming (stream: the call's q and k are past PE__STREAM_BYTES): q's head j with k's head j, then the heads
 *   one tensor has beyond the other (GQA's extra q heads) in pairs.
 * Past the cache the first order ran at 0.68x of an in-place `x *= s` pass over the same bytes and the second at
 * 1.17x (interleaved: 0.48x -> 1.17x), the same loop and instructions ([2, 2048, 32, 128], one module, side by
 * side): q and k then each advance as one forward stream, where the first order alternates two heads of one
 * tensor 512 bytes apart and switches tensor every token block. In cache the first order is the faster one
 * (decode [1, 1, 32, 128]: ~0.76x against ~0.65x of the in-place pass; not traced, likely k's loads checked against
 * q's stores at the same offset of another 4 KiB page). */
#define PE__STREAM_BYTES (4u << 20)
PE_INLINE void pe__rotate_token(float *q, size_t qsh, int32_t qh, float *k, size_t ksh, int32_t kh, const float *cos,
                                const float *sin, const float *ex, int32_t n, int stream, const int interleaved,
                                const int inverse) {
    int32_t h = 0;
    if (stream) {
        const int32_t both = qh < kh ? qh : kh;
        for (; h < both; h++)
            pe__rotate_pair(q + (size_t)h * qsh, k + (size_t)h * ksh, cos, sin, ex, n, interleaved, inverse);
        float *r = qh > kh ? q : k;
        const size_t rsh = qh > kh ? qsh : ksh;
        const int32_t rh = qh > kh ? qh : kh;
        for (; h + 2 <= rh; h += 2)
            pe__rotate_pair(r + (size_t)h * rsh, r + (size_t)(h + 1) * rsh, cos, sin, ex, n, interleaved, inverse);
        if (h < rh) pe__rotate_pair(r + (size_t)h * rsh, NULL, cos, sin, ex, n, interleaved, inverse);
        return;
    }
    for (; h + 2 <= qh; h += 2)
        pe__rotate_pair(q + (size_t)h * qsh, q + (size_t)(h + 1) * qsh, cos, sin, ex, n, interleaved, inverse);
    int32_t j = 0;
    if (h < qh) {
        pe__rotate_pair(q + (size_t)h * qsh, kh > 0 ? k : NULL, cos, sin, ex, n, interleaved, inverse);
        j = kh > 0 ? 1 : 0;
    }
    for (; j + 2 <= kh; j += 2)
        pe__rotate_pair(k + (size_t)j * ksh, k + (size_t)(j + 1) * ksh, cos, sin, ex, n, interleaved, inverse);
    if (j < kh) pe__rotate_pair(k + (size_t)j * ksh, NULL, cos, sin, ex, n, interleaved, inverse);
}

#if PE_SIMD
/* Interleaved, n a multiple of 8 up to PE__IL_MAX_N: the token's row expanded once for all of its heads when
 * there are PE__IL_MIN_HEADS or more of q and k together (the expansion costs 12 wasm ops per 4 pairs and each
 * head saves 2 shuffles there; measured, 4 + 4 heads break even), and in cache: past it (stream), where the
 * bytes bound the time, large [4, 2048, 32, 128] bshd ran 5-10 % slower this way than with the planes (raw,
 * three alternated runs each). A function of its own for LLVM, one per direction (binaryen then inlines it into
 * its one caller): compiled inside pe__apply's instantiation, the larger function came out of V8 with spills in
 * its other loops (16.6 -> 17.5-18.9 instructions per 8 floats) and prefill [1, 512, 32, 128] interleaved bshd
 * ran slower (raw, median of five alternated runs: 0.67 against 0.57 ms). */
#define PE__IL_MAX_N 128
#define PE__IL_MIN_HEADS 8
#define PE__TOKEN_IL(NAME, INV)                                                                                    \
    __attribute__((noinline)) static void NAME(float *q, size_t qsh, int32_t qh, float *k, size_t ksh, int32_t kh, \
                                               const float *cos, const float *sin, int32_t n, int stream) {        \
        float ex[4 * PE__IL_MAX_N];                                                                                \
        pe__expand_il(ex, cos, sin, n, INV);                                                                       \
        pe__rotate_token(q, qsh, qh, k, ksh, kh, cos, sin, ex, n, stream, 1, INV);                                 \
    }
PE__TOKEN_IL(pe__rotate_token_il_fwd, 0)
PE__TOKEN_IL(pe__rotate_token_il_inv, 1)
#undef PE__TOKEN_IL
#endif

/* 64 pairs (head_dim 128, the most common size) as a constant in the SIMD build: the 16-pair loop runs 4 times
 * with no tail tests (decode, raw pe_rope_apply_qk: 5-12 % faster than the generic loops, measured side by side;
 * +44 KiB of wasm, so the scalar build, whose loops are not the bound, keeps one copy). Same operations in
 * the same order as the generic loops: the results are theirs bit for bit. Unrolling those 4 steps as well (issue
 * 14: the row straight, every offset a constant, as the hand kernel has it) took V8's best leaf loop from 12.1 to
 * 11.7 instructions per 8 floats for +49 KiB of wasm and changed nothing measurable at decode (raw
 * pe_rope_apply_qk, 1.166 against 1.153 us, side by side): the loop control is not what keeps this kernel ~15 %
 * behind the hand kernel. Neither is the order: q's head h beside k's head h, as the hand kernel pairs them, ran
 * 1.12-1.19x slower here (the streaming order below, forced in cache). */
PE_INLINE void pe__rotate_token_at(float *q, size_t qsh, int32_t qh, float *k, size_t ksh, int32_t kh, const float *cos,
                                   const float *sin, int32_t n, int stream, const int interleaved, const int inverse) {
#if PE_SIMD
    if (interleaved && !stream && n % 8 == 0 && n <= PE__IL_MAX_N && qh + kh >= PE__IL_MIN_HEADS) {
        (inverse ? pe__rotate_token_il_inv : pe__rotate_token_il_fwd)(q, qsh, qh, k, ksh, kh, cos, sin, n, stream);
        return;
    }
    if (n == 64) {
        pe__rotate_token(q, qsh, qh, k, ksh, kh, cos, sin, NULL, 64, stream, interleaved, inverse);
        return;
    }
#endif
    pe__rotate_token(q, qsh, qh, k, ksh, kh, cos, sin, NULL, n, stream, interleaved, inverse);
}

#endif
