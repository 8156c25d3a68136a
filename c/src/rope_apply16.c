/* rope_apply16.c — RoPE rotation of float16 / bfloat16 head vectors in place (Su et al. 2021, "RoFormer"):
 * pe_rope_apply's 16-bit storage path (rope_apply.c checks the call and hands the tensors over here, one at a
 * time, through pe__rope_apply16).
 *
 * Each element is widened to float32, rotated with the float32 kernels' own products and sum (PE__ROT_A /
 * PE__ROT_B, rope_internal.h) and rounded to nearest even on store (f16.h), so the result is the float32 apply
 * of the widened inputs, bit for bit, and the SIMD and scalar builds agree bit for bit.
 */
#include "posenc.h"
#include "simd.h"
#include "f16.h"
#include "rope_internal.h"

#include <stddef.h>
#include <stdint.h>

/* The head's rotated part is widened, rotated and rounded back on store in registers: 8 pairs per step for
 * half-split, 4 for interleaved, the scalar conversions for the tail. The part past rot_dim is never converted (a
 * signalling NaN there keeps its bits). bf16 / interleaved / inverse are constants after inlining: the dtype is
 * decided once per call, never per element. */
#if PE_SIMD
/* Pairs [j, end) of one head (end - j a multiple of the step, 8 pairs half-split, 4 interleaved), with the exact
 * conversions or the cheap ones (f16.h); for the cheap ones the inputs are copied to keep first and the returned
 * flag says whether the block must be put back and done exactly. */
PE_INLINE int pe__rotate16_block(uint16_t *x, const float *cos, const float *sin, int32_t n, int32_t j, int32_t end,
                                 uint16_t *keep, const int exact, const int bf16, const int interleaved,
                                 const int inverse) {
#define PE__WIDEN8(h, out) \
    (bf16 ? pe__bf16x8_to_f32(h, out) : exact ? pe__f16x8_to_f32(h, out) : pe__f16x8_to_f32_finite(h, out))
#define PE__NARROW8(lo, hi)                                                        \
    (bf16 ? (exact ? pe__f32_to_bf16x8(lo, hi) : pe__f32_to_bf16x8_no_nan(lo, hi)) \
          : (exact ? pe__f32_to_f16x8(lo, hi) : pe__f32_to_f16x8_no_nan(lo, hi)))
#define PE__NOTE_IN(h) (flag = exact || bf16 ? flag : pe__f16_note(flag, h))
#define PE__NOTE_OUT(lo, hi, p) \
    (flag = exact ? flag : bf16 ? pe__bf16_note(pe__bf16_note(flag, lo), hi) : pe__f16_note(flag, p))
    pe_v128 flag = pe_i32x4_splat(0);
    if (interleaved) {
        for (int32_t i = j; i < end; i += 4) {
            const pe_v128 h = pe_u16x8_load(x + 2 * i);
            if (!exact) pe_u16x8_store(keep + 2 * (i - j), h);
            PE__NOTE_IN(h);
            pe_v128 w[2];
            PE__WIDEN8(h, w);
            const pe_v128 va = pe_f32x4_even(w[0], w[1]), vb = pe_f32x4_odd(w[0], w[1]);
            const pe_v128 c = pe_f32x4_load(cos + i), s = pe_f32x4_load(sin + i);
            const pe_v128 ra = PE__ROT_A(va, vb, c, s), rb = PE__ROT_B(va, vb, c, s);
            const pe_v128 lo = pe_f32x4_zip_lo(ra, rb), hi = pe_f32x4_zip_hi(ra, rb);
            const pe_v128 p = PE__NARROW8(lo, hi);
            PE__NOTE_OUT(lo, hi, p);
            pe_u16x8_store(x + 2 * i, p);
        }
    } else {
        uint16_t *b = x + n;
        for (int32_t i = j; i < end; i += 8) {
            const pe_v128 ha = pe_u16x8_load(x + i), hb = pe_u16x8_load(b + i);
            if (!exact) pe_u16x8_store(keep + 2 * (i - j), ha), pe_u16x8_store(keep + 2 * (i - j) + 8, hb);
            PE__NOTE_IN(ha);
            PE__NOTE_IN(hb);
            pe_v128 a[2], bv[2];
            PE__WIDEN8(ha, a);
            PE__WIDEN8(hb, bv);
            const pe_v128 c0 = pe_f32x4_load(cos + i), c1 = pe_f32x4_load(cos + i + 4);
            const pe_v128 s0 = pe_f32x4_load(sin + i), s1 = pe_f32x4_load(sin + i + 4);
            const pe_v128 ra0 = PE__ROT_A(a[0], bv[0], c0, s0), ra1 = PE__ROT_A(a[1], bv[1], c1, s1);
            const pe_v128 rb0 = PE__ROT_B(a[0], bv[0], c0, s0), rb1 = PE__ROT_B(a[1], bv[1], c1, s1);
            const pe_v128 pa = PE__NARROW8(ra0, ra1), pb = PE__NARROW8(rb0, rb1);
            PE__NOTE_OUT(ra0, ra1, pa);
            PE__NOTE_OUT(rb0, rb1, pb);
            pe_u16x8_store(x + i, pa);
            pe_u16x8_store(b + i, pb);
        }
    }
#undef PE__WIDEN8
#undef PE__NARROW8
#undef PE__NOTE_IN
#undef PE__NOTE_OUT
    return !exact && (bf16 ? pe__bf16_noted(flag) : pe__f16_noted(flag));
}
#define PE__CHUNK 64 /* pairs: 256 bytes kept aside */
#endif

PE_INLINE void pe__rotate16(uint16_t *x, const float *cos, const float *sin, int32_t n, const int bf16,
                            const int interleaved, const int inverse) {
    int32_t i = 0;
#if PE_SIMD
    /* One test per chunk instead of one per 8 lanes: in the loop, branches and their joins cost V8 more
     * registers than the cheap conversions have to spare. A flagged chunk (rare: an Inf or NaN went in or came
     * out) is put back and done again exactly. */
    const int32_t simd_end = n - n % (interleaved ? 4 : 8);
    for (int32_t j = 0; j < simd_end; j += PE__CHUNK) {
        const int32_t end = simd_end - j > PE__CHUNK ? j + PE__CHUNK : simd_end;
        uint16_t keep[2 * PE__CHUNK];
        if (PE__RARE(pe__rotate16_block(x, cos, sin, n, j, end, keep, 0, bf16, interleaved, inverse))) {
            for (int32_t k = 0; k < 2 * (end - j); k++) /* both halves, or the interleaved pairs, as read */
                if (interleaved)
                    x[2 * j + k] = keep[k];
                else
                    x[(k & 8 ? n : 0) + j + (k >> 4) * 8 + (k & 7)] = keep[k];
            pe__rotate16_block(x, cos, sin, n, j, end, keep, 1, bf16, interleaved, inverse);
        }
    }
    i = simd_end;
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

/* One out-of-line function per (dtype, pairing, direction), called through a table (a function called from one
 * place is inlined again by the linker's optimizer): V8 allocates registers per function, and inlined into
 * pe_rope_apply beside every other loop the 16-bit loops ran out of xmm registers and reloaded their constants
 * (even the memory base) from the stack on each step. */
#if defined(__GNUC__) || defined(__clang__)
#define PE__OUT_OF_LINE __attribute__((noinline))
#else
#define PE__OUT_OF_LINE
#endif
#define PE__APPLY16_FN(B16, IL, INV)                                                                          \
    static PE__OUT_OF_LINE void pe__apply16_##B16##IL##INV(uint16_t *x, const float *cos, const float *sin,   \
                                                           int32_t batch, int32_t seq, int32_t heads,         \
                                                           pe__apply_geom g, int32_t n, int bhsd, int rows) { \
        pe__apply16(x, cos, sin, batch, seq, heads, g, n, bhsd, rows, B16, IL, INV);                          \
    }
PE__APPLY16_FN(0, 0, 0)
PE__APPLY16_FN(0, 0, 1)
PE__APPLY16_FN(0, 1, 0)
PE__APPLY16_FN(0, 1, 1)
PE__APPLY16_FN(1, 0, 0)
PE__APPLY16_FN(1, 0, 1)
PE__APPLY16_FN(1, 1, 0)
PE__APPLY16_FN(1, 1, 1)
#undef PE__APPLY16_FN

void pe__rope_apply16(uint16_t *x, const float *cos, const float *sin, int32_t batch, int32_t seq, int32_t heads,
                      pe__apply_geom g, int32_t n, int bhsd, int per_batch_rows, int bf16, int interleaved,
                      int inverse) {
    static void (*const apply16[8])(uint16_t *, const float *, const float *, int32_t, int32_t, int32_t, pe__apply_geom,
                                    int32_t, int, int) = {pe__apply16_000, pe__apply16_001, pe__apply16_010,
                                                          pe__apply16_011, pe__apply16_100, pe__apply16_101,
                                                          pe__apply16_110, pe__apply16_111};
    apply16[(bf16 != 0) * 4 + (interleaved != 0) * 2 + (inverse != 0)](x, cos, sin, batch, seq, heads, g, n, bhsd,
                                                                       per_batch_rows);
}
