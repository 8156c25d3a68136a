/* simd_bits.h — the integer and 16-bit-lane operations of SIMD128 that the 16-bit float conversions (f16.h)
 * use, in simd.h's three mappings and under simd.h's rules: the wasm semantics lane for lane, pinned where
 * ISAs differ, each checked by tests/c/test_simd_bits_ops.c against the wasm spec written out there.
 *
 * Chosen for what V8 emits on x64 (one instruction each, SSE4.1/AVX): unsigned 32-bit min/max (pminud/pmaxud),
 * arithmetic shifts, the i16 -> i32 multiply-add (pmaddwd), 16-bit interleaves (punpck{l,h}wd), i16 compare and
 * the byte sign mask (pmovmskb). Unsigned 32-bit compares are absent on purpose: x64 has none, V8 expands each
 * to four instructions.
 *
 *   i32x4_shr           arithmetic, count mod 32          u32x4_min / max   unsigned lanes
 *   f32x4_ne            -1 where a != b (NaN != anything)  i32x4_dot_i16x8   lane i: a[2i]b[2i] + a[2i+1]b[2i+1],
 *   i16x8_shl / shr     count mod 16 (shr arithmetic)                        signed 16-bit products, wrapping sum
 *   i16x8_eq / add      -1 / 0; wrapping add           u16x8_zip_lo/hi   [a0 b0 a1 b1 a2 b2 a3 b3] (lo: lanes
 *   u16x8_max           unsigned 16-bit lanes                                 0-3 of each, hi: lanes 4-7)
 *   i16x8_narrow_i32x4  [a0..a3 b0..b3], each signed i32 saturated to [-32768, 32767]
 *   i8x16_bitmask       bit i = top bit of byte i */
#ifndef PE_SIMD_BITS_H
#define PE_SIMD_BITS_H

#include "simd.h"

#include <string.h>

#if PE_SIMD && defined(__wasm_simd128__)

PE_INLINE pe_v128 pe_i32x4_shr(pe_v128 a, int n) { return wasm_i32x4_shr(a, n); }
PE_INLINE pe_v128 pe_u32x4_min(pe_v128 a, pe_v128 b) { return wasm_u32x4_min(a, b); }
PE_INLINE pe_v128 pe_u32x4_max(pe_v128 a, pe_v128 b) { return wasm_u32x4_max(a, b); }
PE_INLINE pe_v128 pe_f32x4_ne(pe_v128 a, pe_v128 b) { return wasm_f32x4_ne(a, b); }
PE_INLINE pe_v128 pe_i32x4_dot_i16x8(pe_v128 a, pe_v128 b) { return wasm_i32x4_dot_i16x8(a, b); }
PE_INLINE pe_v128 pe_i16x8_splat(int16_t x) { return wasm_i16x8_splat(x); }
PE_INLINE pe_v128 pe_i16x8_shl(pe_v128 a, int n) { return wasm_i16x8_shl(a, n); }
PE_INLINE pe_v128 pe_i16x8_shr(pe_v128 a, int n) { return wasm_i16x8_shr(a, n); }
PE_INLINE pe_v128 pe_i16x8_eq(pe_v128 a, pe_v128 b) { return wasm_i16x8_eq(a, b); }
PE_INLINE pe_v128 pe_i16x8_add(pe_v128 a, pe_v128 b) { return wasm_i16x8_add(a, b); }
PE_INLINE pe_v128 pe_u16x8_max(pe_v128 a, pe_v128 b) { return wasm_u16x8_max(a, b); }
PE_INLINE pe_v128 pe_u16x8_zip_lo(pe_v128 a, pe_v128 b) { return wasm_i16x8_shuffle(a, b, 0, 8, 1, 9, 2, 10, 3, 11); }
PE_INLINE pe_v128 pe_u16x8_zip_hi(pe_v128 a, pe_v128 b) { return wasm_i16x8_shuffle(a, b, 4, 12, 5, 13, 6, 14, 7, 15); }
PE_INLINE pe_v128 pe_i16x8_narrow_i32x4(pe_v128 a, pe_v128 b) { return wasm_i16x8_narrow_i32x4(a, b); }
PE_INLINE int pe_i8x16_bitmask(pe_v128 a) { return (int)wasm_i8x16_bitmask(a); }

#elif PE_SIMD && defined(PE_NATIVE_SIMD) && PE_NATIVE_SIMD && defined(__SSE4_1__) && \
    !(defined(PE_SIMD_PORTABLE) && PE_SIMD_PORTABLE)

PE_INLINE pe_v128 pe_i32x4_shr(pe_v128 a, int n) { return PE__FI(_mm_sra_epi32(PE__I(a), _mm_cvtsi32_si128(n & 31))); }
PE_INLINE pe_v128 pe_u32x4_min(pe_v128 a, pe_v128 b) { return PE__FI(_mm_min_epu32(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_u32x4_max(pe_v128 a, pe_v128 b) { return PE__FI(_mm_max_epu32(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_f32x4_ne(pe_v128 a, pe_v128 b) { return _mm_cmpneq_ps(a, b); }
PE_INLINE pe_v128 pe_i32x4_dot_i16x8(pe_v128 a, pe_v128 b) { return PE__FI(_mm_madd_epi16(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i16x8_splat(int16_t x) { return PE__FI(_mm_set1_epi16(x)); }
PE_INLINE pe_v128 pe_i16x8_shl(pe_v128 a, int n) { return PE__FI(_mm_sll_epi16(PE__I(a), _mm_cvtsi32_si128(n & 15))); }
PE_INLINE pe_v128 pe_i16x8_shr(pe_v128 a, int n) { return PE__FI(_mm_sra_epi16(PE__I(a), _mm_cvtsi32_si128(n & 15))); }
PE_INLINE pe_v128 pe_i16x8_eq(pe_v128 a, pe_v128 b) { return PE__FI(_mm_cmpeq_epi16(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i16x8_add(pe_v128 a, pe_v128 b) { return PE__FI(_mm_add_epi16(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_u16x8_max(pe_v128 a, pe_v128 b) { return PE__FI(_mm_max_epu16(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_u16x8_zip_lo(pe_v128 a, pe_v128 b) { return PE__FI(_mm_unpacklo_epi16(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_u16x8_zip_hi(pe_v128 a, pe_v128 b) { return PE__FI(_mm_unpackhi_epi16(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i16x8_narrow_i32x4(pe_v128 a, pe_v128 b) { return PE__FI(_mm_packs_epi32(PE__I(a), PE__I(b))); }
PE_INLINE int pe_i8x16_bitmask(pe_v128 a) { return _mm_movemask_epi8(PE__I(a)); }

#elif PE_SIMD

/* portable C: 16-bit lanes read and written through memcpy (lane l at byte 2l on any host) */
PE_INLINE void pe__u16_lanes(pe_v128 v, uint16_t h[8]) { memcpy(h, &v, 16); }
PE_INLINE pe_v128 pe__from_u16_lanes(const uint16_t h[8]) {
    pe_v128 r;
    memcpy(&r, h, 16);
    return r;
}
#define PE__LANES16(expr)                    \
    uint16_t x[8], y[8], o[8];               \
    pe__u16_lanes(a, x);                     \
    pe__u16_lanes(b, y);                     \
    for (int l = 0; l < 8; l++) o[l] = expr; \
    (void)y;                                 \
    return pe__from_u16_lanes(o)

PE_INLINE pe_v128 pe_i32x4_shr(pe_v128 a, int n) {
    pe_v128 r;
    /* floor division by 2^n is the arithmetic shift, written without relying on >> of a negative int */
    for (int l = 0; l < 4; l++) {
        const uint32_t u = a.u[l] >> (n & 31);
        r.u[l] = (a.i[l] < 0 && (n & 31)) ? u | ~(0xffffffffu >> (n & 31)) : u;
    }
    return r;
}
PE_INLINE pe_v128 pe_u32x4_min(pe_v128 a, pe_v128 b) {
    pe_v128 r;
    for (int l = 0; l < 4; l++) r.u[l] = a.u[l] < b.u[l] ? a.u[l] : b.u[l];
    return r;
}
PE_INLINE pe_v128 pe_u32x4_max(pe_v128 a, pe_v128 b) {
    pe_v128 r;
    for (int l = 0; l < 4; l++) r.u[l] = a.u[l] > b.u[l] ? a.u[l] : b.u[l];
    return r;
}
PE_INLINE pe_v128 pe_f32x4_ne(pe_v128 a, pe_v128 b) {
    pe_v128 r;
    for (int l = 0; l < 4; l++) r.i[l] = a.f[l] != b.f[l] ? -1 : 0;
    return r;
}
PE_INLINE pe_v128 pe_i32x4_dot_i16x8(pe_v128 a, pe_v128 b) {
    uint16_t x[8], y[8];
    pe__u16_lanes(a, x);
    pe__u16_lanes(b, y);
    pe_v128 r;
    for (int l = 0; l < 4; l++)
        r.u[l] = (uint32_t)((int32_t)(int16_t)x[2 * l] * (int16_t)y[2 * l]) +
                 (uint32_t)((int32_t)(int16_t)x[2 * l + 1] * (int16_t)y[2 * l + 1]);
    return r;
}
PE_INLINE pe_v128 pe_i16x8_splat(int16_t v) {
    uint16_t o[8];
    for (int l = 0; l < 8; l++) o[l] = (uint16_t)v;
    return pe__from_u16_lanes(o);
}
PE_INLINE pe_v128 pe_i16x8_shl(pe_v128 a, int n) {
    const pe_v128 b = a;
    PE__LANES16((uint16_t)(x[l] << (n & 15)));
}
PE_INLINE pe_v128 pe_i16x8_shr(pe_v128 a, int n) {
    const pe_v128 b = a;
    PE__LANES16((uint16_t)((x[l] >> (n & 15)) | ((x[l] & 0x8000u) ? (uint16_t) ~(0xffffu >> (n & 15)) : 0u)));
}
PE_INLINE pe_v128 pe_i16x8_eq(pe_v128 a, pe_v128 b) { PE__LANES16(x[l] == y[l] ? 0xffffu : 0u); }
PE_INLINE pe_v128 pe_i16x8_add(pe_v128 a, pe_v128 b) { PE__LANES16((uint16_t)(x[l] + y[l])); }
PE_INLINE pe_v128 pe_u16x8_max(pe_v128 a, pe_v128 b) { PE__LANES16(x[l] > y[l] ? x[l] : y[l]); }
PE_INLINE pe_v128 pe_u16x8_zip_lo(pe_v128 a, pe_v128 b) { PE__LANES16((l & 1) ? y[l >> 1] : x[l >> 1]); }
PE_INLINE pe_v128 pe_u16x8_zip_hi(pe_v128 a, pe_v128 b) { PE__LANES16((l & 1) ? y[4 + (l >> 1)] : x[4 + (l >> 1)]); }
PE_INLINE pe_v128 pe_i16x8_narrow_i32x4(pe_v128 a, pe_v128 b) {
    uint16_t o[8];
    for (int l = 0; l < 4; l++) {
        const int32_t x = a.i[l], y = b.i[l];
        o[l] = (uint16_t)(x < -32768 ? -32768 : x > 32767 ? 32767 : x);
        o[l + 4] = (uint16_t)(y < -32768 ? -32768 : y > 32767 ? 32767 : y);
    }
    return pe__from_u16_lanes(o);
}
PE_INLINE int pe_i8x16_bitmask(pe_v128 a) {
    unsigned char c[16];
    memcpy(c, &a, 16);
    int m = 0;
    for (int l = 0; l < 16; l++) m |= (c[l] >> 7) << l;
    return m;
}
#undef PE__LANES16

#endif
#endif /* PE_SIMD_BITS_H */
