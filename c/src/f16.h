/* f16.h — float32 <-> float16 (IEEE binary16) and float32 <-> bfloat16 conversions, scalar and SIMD128.
 *
 * Baseline wasm SIMD has no 16-bit float instructions, so both directions are integer bit arithmetic on
 * i32x4 lanes plus one float add where a subnormal has to be rounded (the FPU's round to nearest even does
 * it exactly). The scalar functions run the same operations on one value: the SIMD and scalar builds agree
 * bit for bit (tests/c/test_f16.c checks every float16/bfloat16 pattern and millions of float32 ones).
 *
 * Semantics, as the hardware conversions (x86 F16C vcvtph2ps / vcvtps2ph with round to nearest even, ARM
 * FCVT with FPCR.DN = 0, FZ = 0):
 *   narrowing (f32 -> 16-bit)  round to nearest, ties to even; overflow -> ±Inf; subnormal results kept (no
 *                              flush to zero); NaN -> quiet NaN of the same sign whose payload is the top
 *                              bits of the float32 payload (the quiet bit is set, the rest truncated).
 *   f16 -> f32                 exact; NaN keeps sign and payload and is quieted (F16C, FCVT).
 *   bf16 -> f32                exact: a 16-bit shift (what every ISA does: there is no instruction), so a
 *                              signalling NaN stays signalling until arithmetic or narrowing quiets it.
 * Round trip 16-bit -> f32 -> 16-bit is the identity except that a signalling NaN comes back quiet
 * (f16: bit 9 set, bf16: bit 6 set), sign and the rest of the payload kept.
 * bfloat16 keeps subnormals, like ARM BFCVT and PyTorch's rounding; AVX512-BF16's vcvtneps2bf16 would flush
 * them (not followed: it loses values the format can hold).
 */
#ifndef PE_F16_H
#define PE_F16_H

#include "simd.h"

#include <stdint.h>
#include <string.h>

static inline uint32_t pe__f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float pe__bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Constants, in float32 bit patterns. 112 = 127 - 15 is the exponent bias difference. */
#define PE__F16_REBIAS (112u << 23)     /* f16 exponent field e -> f32 field e + 112 */
#define PE__F16_MIN_NORMAL (113u << 23) /* |x| below 2^-14: the f16 result is subnormal or zero */
#define PE__F16_OVERFLOW 0x477ff000u    /* 65520 = max f16 + half an ulp: from here on, ties go to Inf */
#define PE__HALF_BITS 0x3f000000u       /* 0.5f: its ulp (2^-24) is the f16 subnormal step */

/* ---- scalar ---------------------------------------------------------------------------------- */

static inline float pe__f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu, t = em << 13;
    uint32_t r;
    if (em < 0x0400u) /* zero or subnormal: (2^-14)(1 + m/1024) - 2^-14 = m * 2^-24, exact */
        r = pe__f32_bits(pe__bits_f32(t + PE__F16_MIN_NORMAL) - pe__bits_f32(PE__F16_MIN_NORMAL));
    else if (em < 0x7c00u) /* normal: rebias the exponent */
        r = t + PE__F16_REBIAS;
    else /* Inf / NaN: exponent all ones, NaN quieted */
        r = (t + 2 * PE__F16_REBIAS) | (em > 0x7c00u ? 0x00400000u : 0u);
    return pe__bits_f32(r | sign);
}

static inline uint16_t pe__f32_to_f16(float f) {
    const uint32_t u = pe__f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    uint32_t r;
    if (a > 0x7f800000u) /* NaN: quiet, top 9 payload bits */
        r = 0x7e00u | ((a >> 13) & 0x3ffu);
    else if (a >= PE__F16_OVERFLOW)
        r = 0x7c00u;
    else if (a >= PE__F16_MIN_NORMAL) /* normal: rebias, then round the 13 dropped bits to nearest even */
        r = (a - PE__F16_REBIAS + 0x0fffu + ((a >> 13) & 1u)) >> 13;
    else /* subnormal: adding 0.5 puts the f16 step at the float32 ulp, and the add rounds to even */
        r = pe__f32_bits(pe__bits_f32(a) + 0.5f) - PE__HALF_BITS;
    return (uint16_t)(r | sign);
}

static inline float pe__bf16_to_f32(uint16_t h) { return pe__bits_f32((uint32_t)h << 16); }

static inline uint16_t pe__f32_to_bf16(float f) {
    const uint32_t u = pe__f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u); /* NaN: quiet, truncated */
    /* round the low 16 bits to nearest even; a carry into the exponent is the right answer (up to Inf) */
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* ---- SIMD: four lanes, u32 holding the 16-bit pattern <-> f32 -------------------------------- */
#if PE_SIMD
static inline pe_v128 pe__f16x4_to_f32x4(pe_v128 h) {
    const pe_v128 sign = pe_i32x4_shl(pe_v128_and(h, pe_i32x4_splat(0x8000)), 16);
    const pe_v128 em = pe_v128_and(h, pe_i32x4_splat(0x7fff));
    const pe_v128 t = pe_i32x4_shl(em, 13);
    const pe_v128 min_normal = pe_i32x4_splat((int32_t)PE__F16_MIN_NORMAL),
                  rebias = pe_i32x4_splat((int32_t)PE__F16_REBIAS);
    const pe_v128 sub = pe_f32x4_sub(pe_i32x4_add(t, min_normal), min_normal);
    const pe_v128 infnan = pe_i32x4_gt(em, pe_i32x4_splat(0x7bff));
    const pe_v128 nan = pe_i32x4_gt(em, pe_i32x4_splat(0x7c00));
    pe_v128 r = pe_i32x4_add(pe_i32x4_add(t, rebias), pe_v128_and(infnan, rebias));
    r = pe_v128_or(r, pe_v128_and(nan, pe_i32x4_splat(0x00400000)));
    r = pe_v128_select(sub, r, pe_i32x4_gt(pe_i32x4_splat(0x0400), em));
    return pe_v128_or(r, sign);
}

static inline pe_v128 pe__f32x4_to_f16x4(pe_v128 f) {
    const pe_v128 sign = pe_v128_and(pe_u32x4_shr(f, 16), pe_i32x4_splat(0x8000));
    const pe_v128 a = pe_v128_and(f, pe_i32x4_splat(0x7fffffff));
    const pe_v128 nan_r = pe_v128_or(pe_i32x4_splat(0x7e00), pe_v128_and(pe_u32x4_shr(a, 13), pe_i32x4_splat(0x3ff)));
    const pe_v128 odd = pe_v128_and(pe_u32x4_shr(a, 13), pe_i32x4_splat(1));
    const pe_v128 norm_r =
        pe_u32x4_shr(pe_i32x4_add(pe_i32x4_add(a, pe_i32x4_splat((int32_t)(0x0fffu - PE__F16_REBIAS))), odd), 13);
    const pe_v128 half = pe_i32x4_splat((int32_t)PE__HALF_BITS);
    const pe_v128 sub_r = pe_i32x4_sub(pe_f32x4_add(a, half), half);
    /* the cases from the bottom up, each later one overriding: subnormal, normal, overflow, NaN */
    pe_v128 r = pe_v128_select(norm_r, sub_r, pe_i32x4_gt(a, pe_i32x4_splat((int32_t)PE__F16_MIN_NORMAL - 1)));
    r = pe_v128_select(pe_i32x4_splat(0x7c00), r, pe_i32x4_gt(a, pe_i32x4_splat((int32_t)PE__F16_OVERFLOW - 1)));
    r = pe_v128_select(nan_r, r, pe_i32x4_gt(a, pe_i32x4_splat(0x7f800000)));
    return pe_v128_or(r, sign);
}

static inline pe_v128 pe__bf16x4_to_f32x4(pe_v128 h) { return pe_i32x4_shl(h, 16); }

static inline pe_v128 pe__f32x4_to_bf16x4(pe_v128 f) {
    const pe_v128 odd = pe_v128_and(pe_u32x4_shr(f, 16), pe_i32x4_splat(1));
    const pe_v128 rne = pe_u32x4_shr(pe_i32x4_add(pe_i32x4_add(f, pe_i32x4_splat(0x7fff)), odd), 16);
    const pe_v128 nan_r = pe_v128_or(pe_u32x4_shr(f, 16), pe_i32x4_splat(0x0040));
    const pe_v128 nan = pe_i32x4_gt(pe_v128_and(f, pe_i32x4_splat(0x7fffffff)), pe_i32x4_splat(0x7f800000));
    return pe_v128_select(nan_r, rne, nan);
}
#endif

/* ---- arrays: n values between 16-bit storage and float32 ------------------------------------- */
#define PE__DEFINE_F16_ARRAYS(name, widen_scalar, narrow_scalar, widen4, narrow4) \
    PE_INLINE void pe__load_##name(float *dst, const uint16_t *src, int32_t n) {  \
        int32_t i = 0;                                                            \
        PE__F16_WIDEN_LOOP(widen4)                                                \
        for (; i < n; i++) dst[i] = widen_scalar(src[i]);                         \
    }                                                                             \
    PE_INLINE void pe__store_##name(uint16_t *dst, const float *src, int32_t n) { \
        int32_t i = 0;                                                            \
        PE__F16_NARROW_LOOP(narrow4)                                              \
        for (; i < n; i++) dst[i] = narrow_scalar(src[i]);                        \
    }

#if PE_SIMD
#define PE__F16_WIDEN_LOOP(widen4)                                          \
    for (; i + 8 <= n; i += 8) {                                            \
        const pe_v128 h = pe_u16x8_load(src + i);                           \
        pe_f32x4_store(dst + i, widen4(pe_u32x4_extend_low_u16x8(h)));      \
        pe_f32x4_store(dst + i + 4, widen4(pe_u32x4_extend_high_u16x8(h))); \
    }
#define PE__F16_NARROW_LOOP(narrow4) \
    for (; i + 8 <= n; i += 8)       \
        pe_u16x8_store(dst + i,      \
                       pe_u16x8_narrow_i32x4(narrow4(pe_f32x4_load(src + i)), narrow4(pe_f32x4_load(src + i + 4))));
#else
#define PE__F16_WIDEN_LOOP(widen4)
#define PE__F16_NARROW_LOOP(narrow4)
#endif

PE__DEFINE_F16_ARRAYS(f16, pe__f16_to_f32, pe__f32_to_f16, pe__f16x4_to_f32x4, pe__f32x4_to_f16x4)
PE__DEFINE_F16_ARRAYS(bf16, pe__bf16_to_f32, pe__f32_to_bf16, pe__bf16x4_to_f32x4, pe__f32x4_to_bf16x4)

#undef PE__DEFINE_F16_ARRAYS
#undef PE__F16_WIDEN_LOOP
#undef PE__F16_NARROW_LOOP

#endif /* PE_F16_H */
