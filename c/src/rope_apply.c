/* rope_apply.c — RoPE in-place rotation of head vectors by a cos/sin table (Su et al. 2021, "RoFormer").
 *
 * Pair i of a head turns by angle pos * theta_i:   x'_a = x_a cos - x_b sin,   x'_b = x_b cos + x_a sin
 *
 *   half-split   [x0 .. x(n-1) | xn .. x(2n-1) | pass-through]    a = i,  b = i + n      (n = rot_dim / 2)
 *   interleaved  [(x0,x1) (x2,x3) ... (x(2n-2),x(2n-1)) | pass]   a = 2i, b = 2i + 1
 *
 * The SIMD path loads interleaved pairs as two planes (evens, odds), so both pairings run the same
 * arithmetic as the scalar path, in the same order: the two builds agree bit for bit.
 * The tables themselves are built in rope.c.
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"
#include "f16.h"

#include <stddef.h>
#include <stdint.h>

/* a and b hold n pair members each (a[i] pairs with b[i]); inverse turns the other way. */
PE_INLINE void pe__rotate_planes(float *a, float *b, const float *cos, const float *sin, int32_t n, const int inverse) {
    int32_t i = 0;
#if PE_SIMD
    for (; i + 4 <= n; i += 4) {
        pe_v128 va = pe_f32x4_load(a + i), vb = pe_f32x4_load(b + i);
        pe_v128 c = pe_f32x4_load(cos + i), s = pe_f32x4_load(sin + i);
        if (inverse) {
            pe_f32x4_store(a + i, pe_f32x4_add(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s)));
            pe_f32x4_store(b + i, pe_f32x4_sub(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s)));
        } else {
            pe_f32x4_store(a + i, pe_f32x4_sub(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s)));
            pe_f32x4_store(b + i, pe_f32x4_add(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s)));
        }
    }
#endif
    for (; i < n; i++) {
        float xa = a[i], xb = b[i], c = cos[i], s = sin[i];
        a[i] = inverse ? xa * c + xb * s : xa * c - xb * s;
        b[i] = inverse ? xb * c - xa * s : xb * c + xa * s;
    }
}

/* Interleaved pairs (x[2i], x[2i+1]): the SIMD loop splits 8 floats into even and odd planes, rotates them
 * as above and zips them back; the scalar loop does the same arithmetic in place. */
PE_INLINE void pe__rotate_interleaved(float *x, const float *cos, const float *sin, int32_t n, const int inverse) {
    int32_t i = 0;
#if PE_SIMD
    for (; i + 4 <= n; i += 4) {
        pe_v128 lo = pe_f32x4_load(x + 2 * i), hi = pe_f32x4_load(x + 2 * i + 4);
        pe_v128 va = pe_f32x4_even(lo, hi), vb = pe_f32x4_odd(lo, hi);
        pe_v128 c = pe_f32x4_load(cos + i), s = pe_f32x4_load(sin + i);
        pe_v128 ra, rb;
        if (inverse) {
            ra = pe_f32x4_add(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s));
            rb = pe_f32x4_sub(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s));
        } else {
            ra = pe_f32x4_sub(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s));
            rb = pe_f32x4_add(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s));
        }
        pe_f32x4_store(x + 2 * i, pe_f32x4_zip_lo(ra, rb));
        pe_f32x4_store(x + 2 * i + 4, pe_f32x4_zip_hi(ra, rb));
    }
#endif
    for (; i < n; i++) {
        float xa = x[2 * i], xb = x[2 * i + 1], c = cos[i], s = sin[i];
        x[2 * i] = inverse ? xa * c + xb * s : xa * c - xb * s;
        x[2 * i + 1] = inverse ? xb * c - xa * s : xb * c + xa * s;
    }
}

/* Rotates `count` heads that share one cos/sin row, `stride` floats apart. inverse and interleaved are
 * constants after inlining, so each of the four variants gets its own branch-free loop. */
PE_INLINE void pe__rotate_heads(float *x, int32_t count, size_t stride, const float *cos, const float *sin, int32_t n,
                                const int interleaved, const int inverse) {
    for (int32_t h = 0; h < count; h++, x += stride) {
        if (interleaved)
            pe__rotate_interleaved(x, cos, sin, n, inverse);
        else
            pe__rotate_planes(x, x + n, cos, sin, n, inverse);
    }
}

#define PE__HEAD_GROUP 2 /* bhsd: heads rotated together per cos/sin row (see pe__apply) */

/* Where x's head vectors are: head (b, s, h) starts at x + b*sb + s*ss + h*sh (elements), head_dim contiguous. */
typedef struct pe__apply_geom {
    size_t sb, ss, sh;
} pe__apply_geom;

PE_INLINE void pe__apply(float *x, const float *cos, const float *sin, int32_t batch, int32_t seq, int32_t heads,
                         pe__apply_geom g, int32_t n, int bhsd, int per_batch_rows, const int interleaved,
                         const int inverse) {
    for (int32_t b = 0; b < batch; b++) {
        const float *cos_b = cos + (per_batch_rows ? (size_t)b * seq * n : 0);
        const float *sin_b = sin + (per_batch_rows ? (size_t)b * seq * n : 0);
        float *xb = x + (size_t)b * g.sb;
        if (!bhsd) {
            /* (b, s): one cos/sin row, loaded once, serves every head of the token */
            for (int32_t s = 0; s < seq; s++)
                pe__rotate_heads(xb + (size_t)s * g.ss, heads, g.sh, cos_b + (size_t)s * n, sin_b + (size_t)s * n, n,
                                 interleaved, inverse);
        } else {
            /* (b, group of PE__HEAD_GROUP heads): walk the sequence rotating the group's rows at s together, so
             * each cos/sin row is read once per group instead of once per head (the table is as large as a
             * head's slice of x; per head it would double the memory traffic). The group's rows stream from
             * PE__HEAD_GROUP contiguous regions, which the hardware prefetchers follow. */
            for (int32_t h0 = 0; h0 < heads; h0 += PE__HEAD_GROUP) {
                int32_t count = heads - h0 < PE__HEAD_GROUP ? heads - h0 : PE__HEAD_GROUP;
                float *xh = xb + (size_t)h0 * g.sh;
                for (int32_t s = 0; s < seq; s++)
                    pe__rotate_heads(xh + (size_t)s * g.ss, count, g.sh, cos_b + (size_t)s * n, sin_b + (size_t)s * n,
                                     n, interleaved, inverse);
            }
        }
    }
}

/* 16-bit storage: the head's rotated part is widened to float32, rotated with the float32 path's arithmetic
 * (the same products and sum per element as pe__rotate_planes / pe__rotate_interleaved, so the result is exactly
 * the float32 apply of the widened inputs) and rounded back on store, in registers: 8 pairs per step for
 * half-split, 4 for interleaved, the scalar conversions for the tail. The part past rot_dim is never converted (a
 * signalling NaN there keeps its bits). bf16 / interleaved / inverse are constants after inlining: the dtype is
 * decided once per call, never per element. */
#define PE__ROT_A(va, vb, c, s)                                       \
    (inverse ? pe_f32x4_add(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s)) \
             : pe_f32x4_sub(pe_f32x4_mul(va, c), pe_f32x4_mul(vb, s)))
#define PE__ROT_B(va, vb, c, s)                                       \
    (inverse ? pe_f32x4_sub(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s)) \
             : pe_f32x4_add(pe_f32x4_mul(vb, c), pe_f32x4_mul(va, s)))
PE_INLINE void pe__rotate16(uint16_t *x, const float *cos, const float *sin, int32_t n, const int bf16,
                            const int interleaved, const int inverse) {
    int32_t i = 0;
#if PE_SIMD
#define PE__WIDEN4(v) (bf16 ? pe__bf16x4_to_f32x4(v) : pe__f16x4_to_f32x4(v))
#define PE__NARROW4(v) (bf16 ? pe__f32x4_to_bf16x4(v) : pe__f32x4_to_f16x4(v))
    if (interleaved) {
        for (; i + 4 <= n; i += 4) {
            const pe_v128 h = pe_u16x8_load(x + 2 * i);
            const pe_v128 lo = PE__WIDEN4(pe_u32x4_extend_low_u16x8(h)), hi = PE__WIDEN4(pe_u32x4_extend_high_u16x8(h));
            const pe_v128 va = pe_f32x4_even(lo, hi), vb = pe_f32x4_odd(lo, hi);
            const pe_v128 c = pe_f32x4_load(cos + i), s = pe_f32x4_load(sin + i);
            const pe_v128 ra = PE__ROT_A(va, vb, c, s), rb = PE__ROT_B(va, vb, c, s);
            pe_u16x8_store(x + 2 * i, pe_u16x8_narrow_i32x4(PE__NARROW4(pe_f32x4_zip_lo(ra, rb)),
                                                            PE__NARROW4(pe_f32x4_zip_hi(ra, rb))));
        }
    } else {
        uint16_t *b = x + n;
        for (; i + 8 <= n; i += 8) {
            const pe_v128 ha = pe_u16x8_load(x + i), hb = pe_u16x8_load(b + i);
            const pe_v128 a0 = PE__WIDEN4(pe_u32x4_extend_low_u16x8(ha)),
                          a1 = PE__WIDEN4(pe_u32x4_extend_high_u16x8(ha));
            const pe_v128 b0 = PE__WIDEN4(pe_u32x4_extend_low_u16x8(hb)),
                          b1 = PE__WIDEN4(pe_u32x4_extend_high_u16x8(hb));
            const pe_v128 c0 = pe_f32x4_load(cos + i), c1 = pe_f32x4_load(cos + i + 4);
            const pe_v128 s0 = pe_f32x4_load(sin + i), s1 = pe_f32x4_load(sin + i + 4);
            pe_u16x8_store(x + i, pe_u16x8_narrow_i32x4(PE__NARROW4(PE__ROT_A(a0, b0, c0, s0)),
                                                        PE__NARROW4(PE__ROT_A(a1, b1, c1, s1))));
            pe_u16x8_store(b + i, pe_u16x8_narrow_i32x4(PE__NARROW4(PE__ROT_B(a0, b0, c0, s0)),
                                                        PE__NARROW4(PE__ROT_B(a1, b1, c1, s1))));
        }
    }
#undef PE__WIDEN4
#undef PE__NARROW4
#endif
    const size_t step = interleaved ? 2 : 1, other = interleaved ? 1 : (size_t)n;
    for (; i < n; i++) {
        uint16_t *pa = x + step * (size_t)i, *pb = pa + other;
        const float xa = bf16 ? pe__bf16_to_f32(*pa) : pe__f16_to_f32(*pa);
        const float xb = bf16 ? pe__bf16_to_f32(*pb) : pe__f16_to_f32(*pb);
        const float c = cos[i], s = sin[i];
        const float ra = inverse ? xa * c + xb * s : xa * c - xb * s;
        const float rb = inverse ? xb * c - xa * s : xb * c + xa * s;
        *pa = bf16 ? pe__f32_to_bf16(ra) : pe__f32_to_f16(ra);
        *pb = bf16 ? pe__f32_to_bf16(rb) : pe__f32_to_f16(rb);
    }
}
#undef PE__ROT_A
#undef PE__ROT_B

/* Loops follow the layout's memory order. */
PE_INLINE void pe__apply16(uint16_t *x, const float *cos, const float *sin, int32_t batch, int32_t seq, int32_t heads,
                           pe__apply_geom g, int32_t n, int bhsd, int per_batch_rows, const int bf16,
                           const int interleaved, const int inverse) {
    const int32_t outer = bhsd ? heads : seq, inner = bhsd ? seq : heads;
    const size_t so = bhsd ? g.sh : g.ss, si = bhsd ? g.ss : g.sh;
    for (int32_t b = 0; b < batch; b++) {
        const size_t row_b = per_batch_rows ? (size_t)b * seq : 0;
        for (int32_t o = 0; o < outer; o++) {
            uint16_t *xo = x + (size_t)b * g.sb + (size_t)o * so;
            for (int32_t i = 0; i < inner; i++) {
                const size_t row = (row_b + (size_t)(bhsd ? i : o)) * (size_t)n;
                pe__rotate16(xo + (size_t)i * si, cos + row, sin + row, n, bf16, interleaved, inverse);
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

pe_status pe_rope_apply(const pe_rope *rope, void *x, const float *cos, const float *sin,
                        const pe_rope_apply_config *cfg) {
    // x holds (batch, seq, heads) head vectors of head_dim floats; head (b, s, h) at x + offset + b*strides.batch
    // + s*strides.seq + h*strides.heads (dense BSHD or BHSD by default); cos/sin are (rows, n_freq).
    if (!rope || !cfg) return PE_ERR_NULL;
    const int32_t batch = cfg->batch, seq = cfg->seq, heads = cfg->heads;
    if (batch < 0 || seq < 0) return PE_ERR_SHAPE;
    if (heads < 1) return PE_ERR_HEADS;
    if (cfg->layout != PE_LAYOUT_BSHD && cfg->layout != PE_LAYOUT_BHSD) return PE_ERR_LAYOUT;
    if (cfg->rotation != PE_ROTATE_FORWARD && cfg->rotation != PE_ROTATE_INVERSE) return PE_ERR_FIELD_VALUE;
    if (cfg->dtype < 0 || cfg->dtype >= PE_DTYPE_COUNT) return PE_ERR_FIELD_VALUE;
    /* a call is validated before it is found empty (posenc.h, Sizes), so a bad view is refused even then */
    const pe_strides *vs = &cfg->strides;
    if (vs->batch < 0 || vs->seq < 0 || vs->heads < 0 || cfg->offset < 0) return PE_ERR_SHAPE;
    if ((int64_t)batch * seq == 0) return PE_OK;
    if (!x || !cos || !sin) return PE_ERR_NULL;
    /* every index below is a size_t product of these: the view and the tables must be addressable */
    pe__apply_geom g;
    pe_status st = pe__apply_view(&g, cfg, rope->config.head_dim);
    if (st != PE_OK) return st;
    if (!pe__floats_fit3(cfg->per_batch_rows ? batch : 1, seq, rope->n_freq)) return PE_ERR_SHAPE;

    int32_t n = rope->n_freq;
    int bhsd = cfg->layout == PE_LAYOUT_BHSD, rows = cfg->per_batch_rows != 0;
    int interleaved = rope->config.pairing == PE_PAIRING_INTERLEAVED, inverse = cfg->rotation == PE_ROTATE_INVERSE;
    if (cfg->dtype != PE_DTYPE_FLOAT32) {
        uint16_t *xh = (uint16_t *)x + (size_t)cfg->offset;
        const int bf16 = cfg->dtype == PE_DTYPE_BFLOAT16;
#define PE__APPLY16(B16, IL, INV) pe__apply16(xh, cos, sin, batch, seq, heads, g, n, bhsd, rows, B16, IL, INV)
        switch (bf16 * 4 + interleaved * 2 + inverse) {
        case 0: PE__APPLY16(0, 0, 0); break;
        case 1: PE__APPLY16(0, 0, 1); break;
        case 2: PE__APPLY16(0, 1, 0); break;
        case 3: PE__APPLY16(0, 1, 1); break;
        case 4: PE__APPLY16(1, 0, 0); break;
        case 5: PE__APPLY16(1, 0, 1); break;
        case 6: PE__APPLY16(1, 1, 0); break;
        default: PE__APPLY16(1, 1, 1); break;
        }
#undef PE__APPLY16
        return PE_OK;
    }
    float *xv = (float *)x + (size_t)cfg->offset;
    /* four instantiations so the pairing and the direction are never decided inside the loops */
    if (interleaved && inverse)
        pe__apply(xv, cos, sin, batch, seq, heads, g, n, bhsd, rows, 1, 1);
    else if (interleaved)
        pe__apply(xv, cos, sin, batch, seq, heads, g, n, bhsd, rows, 1, 0);
    else if (inverse)
        pe__apply(xv, cos, sin, batch, seq, heads, g, n, bhsd, rows, 0, 1);
    else
        pe__apply(xv, cos, sin, batch, seq, heads, g, n, bhsd, rows, 0, 0);
    return PE_OK;
}
