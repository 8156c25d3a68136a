/* rope_apply.c — RoPE in-place rotation of head vectors by a cos/sin table (Su et al. 2021, "RoFormer").
 *
 * Pair i of a head turns by angle pos * theta_i:   x'_a = x_a cos - x_b sin,   x'_b = x_b cos + x_a sin
 *
 *   half-split   [x0 .. x(n-1) | xn .. x(2n-1) | pass-through]    a = i,  b = i + n      (n = rot_dim / 2)
 *   interleaved  [(x0,x1) (x2,x3) ... (x(2n-2),x(2n-1)) | pass]   a = 2i, b = 2i + 1
 *
 * The SIMD path loads interleaved pairs as two planes (evens, odds), so both pairings run the same
 * arithmetic as the scalar path, in the same order: the two builds agree bit for bit.
 * The tables themselves are built in rope.c; 16-bit storage is rotated by rope_apply16.c.
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"
#include "rope_internal.h"

#include <math.h>

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

/* bhsd: heads rotated together per cos/sin row. Each row is read from memory once per group instead of once
 * per head (the table is as large as one head's slice of x; per head it would add half again to the bytes
 * moved); the group's heads stream from PE__HEAD_GROUP contiguous regions, which the prefetchers follow. */
#define PE__HEAD_GROUP 4
#define PE__TOKEN_ORDER_SEQ 8 /* bhsd up to this many positions goes token by token */

/* Rotates q (and k when k.heads > 0: same batch and seq) by table rows: row (b, s) at (per_batch_rows ?
 * b * seq + s : s) * n. */
PE_INLINE void pe__apply(pe__heads q, pe__heads k, const float *cos, const float *sin, int32_t batch, int32_t seq,
                         int32_t n, int bhsd, int per_batch_rows, const int interleaved, const int inverse) {
    const int32_t total = q.heads + k.heads;
    /* the rotated bytes of q and k: past the cache, the streaming order of pe__rotate_token */
    const int stream = k.heads > 0 && (double)batch * seq * total * n * 2 * sizeof(float) > (double)PE__STREAM_BYTES;
    for (int32_t b = 0; b < batch; b++) {
        const size_t row_b = per_batch_rows ? (size_t)b * (size_t)seq : 0;
        float *qb = q.x + (size_t)b * q.g.sb, *kb = k.heads ? k.x + (size_t)b * k.g.sb : NULL;
        if (!bhsd || seq <= PE__TOKEN_ORDER_SEQ) {
            /* (b, s): one cos/sin row, loaded once, serves every head of the token. Also bhsd with a few
             * positions (a decode step): its rows are then all in cache, and pairing a token's heads costs less
             * than walking head groups */
            for (int32_t s = 0; s < seq; s++) {
                const size_t row = (row_b + (size_t)s) * (size_t)n;
                pe__rotate_token_at(qb + (size_t)s * q.g.ss, q.g.sh, q.heads, kb ? kb + (size_t)s * k.g.ss : NULL,
                                    k.g.sh, k.heads, cos + row, sin + row, n, stream, interleaved, inverse);
            }
            continue;
        }
        /* (b, group of heads of q then k): walk the sequence rotating the group's rows at s together */
        for (int32_t j0 = 0; j0 < total; j0 += PE__HEAD_GROUP) {
            const int32_t count = total - j0 < PE__HEAD_GROUP ? total - j0 : PE__HEAD_GROUP;
            float *base[PE__HEAD_GROUP + 1];
            size_t ss[PE__HEAD_GROUP + 1];
            for (int32_t t = 0; t < count; t++) {
                const int32_t j = j0 + t;
                base[t] = j < q.heads ? qb + (size_t)j * q.g.sh : kb + (size_t)(j - q.heads) * k.g.sh;
                ss[t] = j < q.heads ? q.g.ss : k.g.ss;
            }
            base[count] = NULL;
            ss[count] = 0;
            for (int32_t s = 0; s < seq; s++) {
                const size_t row = (row_b + (size_t)s) * (size_t)n;
                for (int32_t t = 0; t < count; t += 2)
                    pe__rotate_two(base[t] + (size_t)s * ss[t],
                                   t + 1 < count ? base[t + 1] + (size_t)s * ss[t + 1] : NULL, cos + row, sin + row, n,
                                   interleaved, inverse);
            }
        }
    }
}

/* Resolves the strides (0 -> dense for the layout) and checks the view: every head vector it names lies in
 * [offset, offset + extent) with extent addressable, and no two of them overlap (each is rotated in place
 * once; overlapping ones would be rotated twice). Sufficient for non-overlap: with the axes of more than
 * one element sorted by stride, the smallest stride is >= head_dim and each next one spans the previous
 * axis whole (stride_k+1 >= stride_k * count_k), i.e. the axes nest. Every product is checked in uint64_t. */
static pe_status pe__apply_view(pe__apply_geom *g, const pe_rope_apply_config *cfg, int32_t head_dim) {
    const int64_t D = head_dim, B = cfg->batch, S = cfg->seq, H = cfg->heads;
    const pe_strides *st = &cfg->strides; /* signs checked by pe_rope_apply, before an empty call returns */
    /* a dense stride itself can pass 2^63 for absurd sizes: check the product before forming it */
    const int64_t f3[3] = {S, H, D};
    if (pe__count(PE__MAX_FLOATS, 3, f3) > PE__MAX_FLOATS) return PE_ERR_SHAPE;
    int64_t sb, ss, sh;
    const int64_t dense[2][3] = {{S * H * D, H * D, D}, {H * S * D, D, S * D}}; /* bshd, bhsd: (sb, ss, sh) */
    const int bhsd = cfg->layout == PE_LAYOUT_BHSD;
    sb = st->batch ? st->batch : dense[bhsd][0];
    ss = st->seq ? st->seq : dense[bhsd][1];
    sh = st->heads ? st->heads : dense[bhsd][2];

    /* furthest element + 1 = offset + sum (count - 1) * stride + D */
    const int64_t counts[3] = {B, S, H}, strides[3] = {sb, ss, sh};
    uint64_t end = (uint64_t)cfg->offset + (uint64_t)D;
    if (end > PE__MAX_FLOATS) return PE_ERR_SHAPE;
    for (int a = 0; a < 3; a++) {
        const int64_t f[2] = {counts[a] - 1, strides[a]};
        const uint64_t span = pe__count(PE__MAX_FLOATS, 2, f);
        if (span > PE__MAX_FLOATS - end) return PE_ERR_SHAPE;
        end += span;
    }

    /* non-overlap: nest the axes with more than one element by stride */
    int64_t cs[3][2];
    int m = 0;
    for (int a = 0; a < 3; a++)
        if (counts[a] > 1) cs[m][0] = strides[a], cs[m][1] = counts[a], m++;
    for (int i = 1; i < m; i++) /* insertion sort of at most 3 */
        for (int j = i; j > 0 && cs[j][0] < cs[j - 1][0]; j--) {
            const int64_t t0 = cs[j][0], t1 = cs[j][1];
            cs[j][0] = cs[j - 1][0], cs[j][1] = cs[j - 1][1];
            cs[j - 1][0] = t0, cs[j - 1][1] = t1;
        }
    int64_t need = D; /* each head vector is D elements */
    for (int i = 0; i < m; i++) {
        if (cs[i][0] < need) return PE_ERR_SHAPE;
        need = cs[i][0] * cs[i][1]; /* <= end, so no overflow */
    }
    g->sb = (size_t)sb;
    g->ss = (size_t)ss;
    g->sh = (size_t)sh;
    return PE_OK;
}

/* The float32 instantiations, each its own function: inlined together into one caller, V8's register
 * allocator spills the hot loops' vectors. */
#define PE__APPLY_F32(NAME, IL, INV)                                                                           \
    static void NAME(pe__heads q, pe__heads k, const float *cos, const float *sin, int32_t batch, int32_t seq, \
                     int32_t n, int bhsd, int rows) {                                                          \
        pe__apply(q, k, cos, sin, batch, seq, n, bhsd, rows, IL, INV);                                         \
    }
PE__APPLY_F32(pe__apply_half_fwd, 0, 0)
PE__APPLY_F32(pe__apply_half_inv, 0, 1)
PE__APPLY_F32(pe__apply_il_fwd, 1, 0)
PE__APPLY_F32(pe__apply_il_inv, 1, 1)
#undef PE__APPLY_F32
typedef void (*pe__apply_fn)(pe__heads, pe__heads, const float *, const float *, int32_t, int32_t, int32_t, int, int);
static const pe__apply_fn pe__apply_f32[4] = {pe__apply_half_fwd, pe__apply_half_inv, pe__apply_il_fwd,
                                              pe__apply_il_inv};

/* The checks of one config (not yet its view), in pe_rope_apply's order. */
static pe_status pe__apply_fields(const pe_rope_apply_config *cfg) {
    if (cfg->batch < 0 || cfg->seq < 0) return PE_ERR_SHAPE;
    if (cfg->heads < 1) return PE_ERR_HEADS;
    if (cfg->layout != PE_LAYOUT_BSHD && cfg->layout != PE_LAYOUT_BHSD) return PE_ERR_LAYOUT;
    if (cfg->rotation != PE_ROTATE_FORWARD && cfg->rotation != PE_ROTATE_INVERSE) return PE_ERR_FIELD_VALUE;
    if (cfg->dtype < 0 || cfg->dtype >= PE_DTYPE_COUNT) return PE_ERR_FIELD_VALUE;
    /* a call is validated before it is found empty (posenc.h, Sizes), so a bad view is refused even then */
    const pe_strides *vs = &cfg->strides;
    if (vs->batch < 0 || vs->seq < 0 || vs->heads < 0 || cfg->offset < 0) return PE_ERR_SHAPE;
    return PE_OK;
}

/* q's config and, when k is given, k's: the fields both must share agree. */
static pe_status pe__apply_configs(const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    pe_status st = pe__apply_fields(cfg);
    if (st != PE_OK || !kcfg) return st;
    st = pe__apply_fields(kcfg);
    if (st != PE_OK) return st;
    if (kcfg->batch != cfg->batch || kcfg->seq != cfg->seq || kcfg->layout != cfg->layout ||
        (kcfg->per_batch_rows != 0) != (cfg->per_batch_rows != 0) || kcfg->rotation != cfg->rotation ||
        kcfg->dtype != cfg->dtype)
        return PE_ERR_FIELD_VALUE;
    return PE_OK;
}

/* One tensor of the call: its first head vector (offset applied) and resolved strides; heads 0: absent. */
typedef struct pe__view {
    void *x;
    pe__apply_geom g;
    int32_t heads;
} pe__view;

static pe_status pe__view_of(pe__view *v, void *x, const pe_rope_apply_config *cfg, int32_t head_dim) {
    pe_status st = pe__apply_view(&v->g, cfg, head_dim);
    if (st != PE_OK) return st;
    const size_t esz = cfg->dtype == PE_DTYPE_FLOAT32 ? 4u : 2u;
    v->x = (char *)x + (size_t)cfg->offset * esz;
    v->heads = cfg->heads;
    return PE_OK;
}

/* The view moved on by s0 positions (elements of esz bytes). */
static pe__view pe__view_at(pe__view v, int32_t s0, size_t esz) {
    if (v.heads) v.x = (char *)v.x + (size_t)s0 * v.g.ss * esz;
    return v;
}

/* Runs the kernel instantiation for the call's dtype, pairing and direction over q and k (k.heads 0: q only).
 * 16-bit tensors are rotated one after the other (each step widens, rotates and narrows in registers). */
static void pe__run(const pe__view *q, const pe__view *k, const float *cos, const float *sin, int32_t batch,
                    int32_t seq, int32_t n, int bhsd, int rows, int dtype, int interleaved, int inverse) {
    if (dtype != PE_DTYPE_FLOAT32) {
        const int bf16 = dtype == PE_DTYPE_BFLOAT16;
        for (int t = 0; t < 2; t++) {
            const pe__view *v = t ? k : q;
            if (!v->heads) continue;
            pe__rope_apply16((uint16_t *)v->x, cos, sin, batch, seq, v->heads, v->g, n, bhsd, rows, bf16, interleaved,
                             inverse);
        }
        return;
    }
    const pe__heads qh = {(float *)q->x, q->g, q->heads};
    const pe__heads kh = {(float *)k->x, k->g, k->heads};
    /* four instantiations so the pairing and the direction are never decided inside the loops */
    pe__apply_f32[interleaved * 2 + inverse](qh, kh, cos, sin, batch, seq, n, bhsd, rows);
}

/* The shared front of the entry points: configs, the empty call, the views. *empty is set when there is
 * nothing to rotate (batch * seq == 0), which is not an error. */
static pe_status pe__apply_begin(pe__view *qv, pe__view *kv, int *empty, const pe_rope *rope, void *q, void *k,
                                 const void *table, const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    *empty = 0;
    if (!rope || !cfg || (k && !kcfg)) return PE_ERR_NULL;
    pe_status st = pe__apply_configs(cfg, k ? kcfg : NULL);
    if (st != PE_OK) return st;
    if ((int64_t)cfg->batch * cfg->seq == 0) {
        *empty = 1;
        return PE_OK;
    }
    if (!q || !table) return PE_ERR_NULL;
    /* every index below is a size_t product of these: the views and the tables must be addressable */
    st = pe__view_of(qv, q, cfg, rope->config.head_dim);
    if (st != PE_OK) return st;
    kv->x = NULL;
    kv->heads = 0;
    kv->g = qv->g;
    if (k) {
        st = pe__view_of(kv, k, kcfg, rope->config.head_dim);
        if (st != PE_OK) return st;
    }
    if (!pe__floats_fit3(cfg->per_batch_rows ? cfg->batch : 1, cfg->seq, rope->n_freq)) return PE_ERR_SHAPE;
    return PE_OK;
}

/* Where decode's gap to the hand kernel goes (issue 14 bisection, [1, 1, 32, 128] half-split bshd, cached table,
 * every buffer 64-aligned, one module with both, min over interleaved batches, two runs each, load ~2 on 2 cores):
 * hand kernel 0.77-0.83 us; pe__rotate_token alone (dims as constants) 0.88-0.90; + pe__apply's frame (b/s loops,
 * runtime stream flag and n, the generic row beside the 64 one) 0.93-0.95; + pe__apply_begin's checks 0.98-1.00
 * (the checks alone, call included: 0.053 us). Not the cost: restrict (the hand kernel without it, k's loads after
 * q's stores: same speed), the leaf as a call per head pair, the head order (q pairs then k pairs, as here, is as
 * fast in the hand kernel), the call through pe__apply_f32, pe__count's 64-bit divisions (replaced: no change).
 * The row loop's 4 steps written out bring pe__rotate_token alone to the hand kernel (0.80 us), but not the call:
 * inside pe__apply (pragma unroll) it stays at 0.98-1.04, and as an out-of-line token function per pairing
 * (runtime head counts, noinline, dispatched from pe__rotate_token_at) it ran 1.06-1.08x slower than this code.
 * The remaining ~15 % is spread over frame and checks, none alone worth a specialised path (scratch harness:
 * /tmp/bisect, not kept). */
pe_status pe_rope_apply_qk(const pe_rope *rope, void *q, void *k, const float *cos, const float *sin,
                           const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    pe__view qv, kv;
    int empty;
    pe_status st = pe__apply_begin(&qv, &kv, &empty, rope, q, k, cos && sin ? cos : NULL, cfg, kcfg);
    if (st != PE_OK || empty) return st;
    pe__run(&qv, &kv, cos, sin, cfg->batch, cfg->seq, rope->n_freq, cfg->layout == PE_LAYOUT_BHSD,
            cfg->per_batch_rows != 0, cfg->dtype, rope->config.pairing == PE_PAIRING_INTERLEAVED,
            cfg->rotation == PE_ROTATE_INVERSE);
    return PE_OK;
}

pe_status pe_rope_apply(const pe_rope *rope, void *x, const float *cos, const float *sin,
                        const pe_rope_apply_config *cfg) {
    // x holds (batch, seq, heads) head vectors of head_dim floats; head (b, s, h) at x + offset + b*strides.batch
    // + s*strides.seq + h*strides.heads (dense BSHD or BHSD by default); cos/sin are (rows, n_freq).
    return pe_rope_apply_qk(rope, x, NULL, cos, sin, cfg, NULL);
}

/* The fused path computes its rows PE__FUSED_ROWS at a time on the stack and rotates every head that uses
 * them before the next: no table is written to memory and read back. */
#define PE__FUSED_ROWS 4

pe_status pe_rope_apply_positions(const pe_rope *rope, void *q, void *k, float *cos_out, float *sin_out,
                                  const int32_t *positions, int64_t seq_len, double extra_scale,
                                  const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    pe__view qv, kv;
    int empty;
    pe_status st = pe__apply_begin(&qv, &kv, &empty, rope, q, k, positions, cfg, kcfg);
    if (st != PE_OK || empty) return st;
    /* the checks and the choices of pe_rope_cos_sin, and its row function: the rows are the table's bit for bit */
    const int32_t batch = cfg->batch, seq = cfg->seq, per_batch = cfg->per_batch_rows != 0;
    const int32_t n_positions = per_batch ? batch * seq : seq; /* fits: checked by pe__apply_begin */
    double scratch[PE_ROPE_MAX_FREQ];
    pe__rope_rows rr;
    st = pe__rope_rows_begin(&rr, rope, positions, n_positions, seq_len, extra_scale, scratch);
    if (st != PE_OK) return st;

    const int32_t n = rope->n_freq;
    const int bhsd = cfg->layout == PE_LAYOUT_BHSD, interleaved = rope->config.pairing == PE_PAIRING_INTERLEAVED;
    const int inverse = cfg->rotation == PE_ROTATE_INVERSE;
    const size_t esz = cfg->dtype == PE_DTYPE_FLOAT32 ? 4u : 2u;
    float cos_buf[PE__FUSED_ROWS * PE_ROPE_MAX_FREQ], sin_buf[PE__FUSED_ROWS * PE_ROPE_MAX_FREQ];
    const int keep = cos_out && sin_out; /* the rows go to the caller's table, else to the stack */
    /* shared rows serve the whole batch at once; per-sequence rows one sequence at a time */
    const int32_t n_groups = per_batch ? batch : 1, group_batch = per_batch ? 1 : batch;
    for (int32_t b = 0; b < n_groups; b++) {
        pe__view qb = qv, kb = kv;
        if (per_batch) {
            qb.x = (char *)qv.x + (size_t)b * qv.g.sb * esz;
            if (kv.heads) kb.x = (char *)kv.x + (size_t)b * kv.g.sb * esz;
        }
        for (int32_t s0 = 0; s0 < seq; s0 += PE__FUSED_ROWS) {
            const int32_t r = seq - s0 < PE__FUSED_ROWS ? seq - s0 : PE__FUSED_ROWS;
            const size_t p0 = (size_t)b * (per_batch ? (size_t)seq : 0u) + (size_t)s0; /* first row's index */
            float *cos = keep ? cos_out + p0 * (size_t)n : cos_buf, *sin = keep ? sin_out + p0 * (size_t)n : sin_buf;
            for (int32_t t = 0; t < r; t++)
                pe__rope_cos_sin_row(cos + (size_t)t * n, sin + (size_t)t * n, (double)positions[p0 + (size_t)t],
                                     rr.inv_freq, n, rr.scale);
            const pe__view qs = pe__view_at(qb, s0, esz), ks = pe__view_at(kb, s0, esz);
            pe__run(&qs, &ks, cos, sin, group_batch, r, n, bhsd, 0, cfg->dtype, interleaved, inverse);
        }
    }
    return PE_OK;
}
