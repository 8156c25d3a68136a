/* f16.h — float32 <-> float16 (IEEE binary16) and float32 <-> bfloat16 conversions, scalar and SIMD128.
 *
 * Baseline wasm SIMD has no 16-bit float instructions, so both directions are bit arithmetic on i32x4 / i16x8
 * lanes plus float adds and multiplies by powers of two. The scalar functions are a separate, plainer
 * formulation; the SIMD forms (below) agree with them bit for bit: tests/c/test_f16.c checks the scalar ones
 * against a reference on every float16/bfloat16 pattern and millions of float32 ones, tests/c/test_f16_blocks.c
 * every SIMD form against the scalar ones (all 2^32 float32 patterns with PE_F16_EXHAUSTIVE=1).
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

#include "simd_bits.h"

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

/* ---- SIMD ---------------------------------------------------------------------------------------
 * Written for what SIMD128 does in one x64 instruction under V8 (simd_bits.h): signed shifts, unsigned min/max,
 * float add/mul, the 16-bit multiply-add, interleaves. No unsigned compares and, on the common path, no masks at
 * all: clang turns `mask & constant` into v128.bitselect, which V8 emits as three instructions.
 *
 * f16 -> f32: the f16 sign/exponent/mantissa moved into float32 position ((h << 16) >>s 3, sign kept by the
 *   arithmetic shift and the three copies of it masked off) is the value times 2^-112; multiplying by 2^112 is
 *   exact for normals, subnormals and zero alike (the product is a normal float32 or zero). Only exponent 31 needs
 *   more: its exponent field comes out 143, so Inf/NaN lanes get all ones OR-ed in, and NaNs the quiet bit.
 * f32 -> f16, for |x| clamped to 2^16 (which rounds to Inf like everything from 65520 up): adding
 *   b = 2^(e+13), e = max(exponent of |x|, -14), rounds |x| to the f16 step of its binade (2^(e-10)) with the
 *   FPU's round to nearest even, and y = b + round(|x|) stays in b's binade: y's mantissa field is
 *   q = round(|x|) / 2^(e-10) (up to 2048: a carry into the next f16 exponent) and its exponent field e + 140.
 *   The f16 pattern is (e + 14) << 10 + q: one i32x4.dot_i16x8_s of y with [1, 8] (y's low half q, high half
 *   (e + 140) << 7) gives q + (e + 140) << 10, less 126 << 10 (subtracted from y first, as 126 << 23). Subnormal
 *   results (e = -14) come out the same way. The sign goes on last; for 8 lanes at once, from the saturating
 *   i32 -> i16 narrowing of the float32 bits themselves (negative stays negative). NaN is the one input this
 *   gets wrong (it comes out as Inf), so 8-lane blocks containing a NaN take a select.
 * f32 -> bf16: the integer round to nearest even on the low 16 bits; again only NaN needs a select.
 * The exact 8-lane block functions test once per block for the rare inputs (an f16 exponent of 31, a NaN) and
 * fix up the cheap form's result; a hot loop (rope.c's 16-bit apply) runs the cheap forms alone, keeps a flag
 * and redoes a whole chunk exactly when the flag is raised, so its loop body has no branch at all. Measured with
 * V8 11.3 (node 20, x64): pe_rope_apply's half-split loop is 7.0 instructions per element for float16, 4.3 for
 * bfloat16, 2.5 for float32 (`node --print-wasm-code`, inner loop bodies). */
#if PE_SIMD
#if defined(__GNUC__) || defined(__clang__)
#define PE__RARE(x) __builtin_expect(!!(x), 0)
#else
#define PE__RARE(x) (x)
#endif

/* finite f16 (sign at bit 31, exponent and mantissa at bits 27..13 of v's lanes) -> f32, exactly */
PE_INLINE pe_v128 pe__f16_scale(pe_v128 v) { return pe_f32x4_mul(v, pe_f32x4_splat(0x1p112f)); }
/* lanes whose f16 exponent was 31 (mask all ones in `top`): exponent field to all ones, NaN quieted */
PE_INLINE pe_v128 pe__f16_widen_top(pe_v128 f, pe_v128 top) {
    f = pe_v128_or(f, pe_v128_and(top, pe_i32x4_splat(0x7f800000)));
    return pe_v128_or(f, pe_v128_and(pe_f32x4_ne(f, f), pe_i32x4_splat(0x00400000)));
}

static inline pe_v128 pe__f16x4_to_f32x4(pe_v128 h) {
    const pe_v128 v = pe_v128_and(pe_i32x4_shr(pe_i32x4_shl(h, 16), 3), pe_i32x4_splat((int32_t)0x8fffffffu));
    const pe_v128 top = pe_i32x4_eq(pe_v128_and(h, pe_i32x4_splat(0x7c00)), pe_i32x4_splat(0x7c00));
    return pe__f16_widen_top(pe__f16_scale(v), top);
}

/* |f32| -> |f16| for every input but NaN (NaN gives Inf): the 15-bit magnitude in u32 lanes */
PE_INLINE pe_v128 pe__f16_magnitude(pe_v128 f) {
    const pe_v128 a = pe_v128_and(f, pe_i32x4_splat(0x7fffffff));
    const pe_v128 c = pe_u32x4_min(a, pe_i32x4_splat(0x47800000)); /* 2^16 */
    /* b = 2^(max(e, -14) + 13), written with one constant fewer (0.5 = 2^(-14 + 13) serves twice) */
    const pe_v128 half = pe_i32x4_splat(0x3f000000);
    const pe_v128 b =
        pe_u32x4_max(pe_i32x4_add(pe_v128_and(c, pe_i32x4_splat(0x7f800000)), pe_i32x4_splat(13 << 23)), half);
    const pe_v128 y = pe_f32x4_add(c, b);
    return pe_i32x4_dot_i16x8(pe_i32x4_sub(y, half), pe_i32x4_splat(0x00080001));
}
/* NaN lanes (the magnitude r is 0x7c00 there): quiet NaN with the top 9 payload bits, (a >> 13) - (224 << 10)
 * being 0x7c00 | payload for a NaN's |bits| a */
PE_INLINE pe_v128 pe__f16_magnitude_nan(pe_v128 f, pe_v128 r) {
    const pe_v128 a = pe_v128_and(f, pe_i32x4_splat(0x7fffffff));
    const pe_v128 nan_r =
        pe_i32x4_sub(pe_v128_or(pe_u32x4_shr(a, 13), pe_i32x4_splat(0x200)), pe_i32x4_splat(224 << 10));
    return pe_v128_or(r, pe_v128_and(nan_r, pe_f32x4_ne(f, f)));
}
PE_INLINE pe_v128 pe__f16_sign(pe_v128 f) { return pe_v128_and(pe_u32x4_shr(f, 16), pe_i32x4_splat(0x8000)); }
PE_INLINE pe_v128 pe__f32x4_to_f16x4_no_nan(pe_v128 f) { return pe_v128_or(pe__f16_magnitude(f), pe__f16_sign(f)); }
static inline pe_v128 pe__f32x4_to_f16x4(pe_v128 f) {
    return pe_v128_or(pe__f16_magnitude_nan(f, pe__f16_magnitude(f)), pe__f16_sign(f));
}

static inline pe_v128 pe__bf16x4_to_f32x4(pe_v128 h) { return pe_i32x4_shl(h, 16); }

PE_INLINE pe_v128 pe__f32x4_to_bf16x4_no_nan(pe_v128 f) {
    const pe_v128 odd = pe_v128_and(pe_u32x4_shr(f, 16), pe_i32x4_splat(1));
    return pe_u32x4_shr(pe_i32x4_add(pe_i32x4_add(f, pe_i32x4_splat(0x7fff)), odd), 16);
}
PE_INLINE pe_v128 pe__bf16_narrow_nan(pe_v128 f, pe_v128 r) {
    return pe_v128_select(pe_v128_or(pe_u32x4_shr(f, 16), pe_i32x4_splat(0x0040)), r, pe_f32x4_ne(f, f));
}
static inline pe_v128 pe__f32x4_to_bf16x4(pe_v128 f) { return pe__bf16_narrow_nan(f, pe__f32x4_to_bf16x4_no_nan(f)); }

/* ---- 8-lane blocks: one u16x8 of 16-bit patterns <-> two f32x4 (lanes 0-3, 4-7) ----------------
 * pe__f16x8_to_f32_finite / pe__f32_to_f16x8_no_nan / pe__f32_to_bf16x8_no_nan are the cheap forms, exact for
 * inputs without an f16 exponent of 31 / without NaN. A loop that runs them keeps a flag and redoes its block
 * with the exact forms when the flag says so: pe__f16_note(flag, h) over the f16 patterns read and written (an
 * exponent of 31 on the way out is how the cheap narrowing shows a NaN: it gives Inf), pe__bf16_note(flag, f)
 * over the float32 values narrowed to bf16 (an Inf there counts too); pe__f16_noted / pe__bf16_noted test the
 * flag (both start at zero). */
PE_INLINE void pe__f16x8_to_f32_finite(pe_v128 h, pe_v128 out[2]) {
    /* the 32-bit lane (hi16 << 16) | lo16 is (sign << 31) | (exponent and mantissa << 13), built in 16-bit lanes */
    const pe_v128 hi16 = pe_v128_and(pe_i16x8_shr(h, 3), pe_i16x8_splat((int16_t)0x8fff));
    const pe_v128 lo16 = pe_i16x8_shl(h, 13);
    out[0] = pe__f16_scale(pe_u16x8_zip_lo(lo16, hi16));
    out[1] = pe__f16_scale(pe_u16x8_zip_hi(lo16, hi16));
}
PE_INLINE pe_v128 pe__f16_note(pe_v128 flag, pe_v128 h) { return pe_u16x8_max(flag, pe_i16x8_add(h, h)); }
PE_INLINE int pe__f16_noted(pe_v128 flag) { /* some h << 1 >= 0xf800: exponent 31 */
    return pe_i8x16_bitmask(pe_i16x8_eq(pe_u16x8_max(flag, pe_i16x8_splat((int16_t)0xf800)), flag));
}
/* f - f is NaN for a NaN or an Inf, 0 otherwise, and a NaN stays in the sum (float arithmetic, where a mask
 * OR-ed into the flag would become a three-instruction bitselect) */
PE_INLINE pe_v128 pe__bf16_note(pe_v128 flag, pe_v128 f) { return pe_f32x4_add(flag, pe_f32x4_sub(f, f)); }
PE_INLINE int pe__bf16_noted(pe_v128 flag) { return pe_i8x16_bitmask(pe_f32x4_ne(flag, flag)); }

PE_INLINE void pe__f16x8_to_f32(pe_v128 h, pe_v128 out[2]) {
    pe__f16x8_to_f32_finite(h, out);
    const pe_v128 top = pe_i16x8_eq(pe_v128_and(h, pe_i16x8_splat(0x7c00)), pe_i16x8_splat(0x7c00));
    if (PE__RARE(pe_i8x16_bitmask(top))) {
        out[0] = pe__f16_widen_top(out[0], pe_u16x8_zip_lo(top, top));
        out[1] = pe__f16_widen_top(out[1], pe_u16x8_zip_hi(top, top));
    }
}
/* the signs of 8 lanes at once: a negative float is a negative int, which the saturating i32 -> i16 narrowing
 * keeps negative (bit 15 set) and a non-negative one non-negative */
PE_INLINE pe_v128 pe__f16x8_signs(pe_v128 lo, pe_v128 hi) {
    return pe_v128_and(pe_i16x8_narrow_i32x4(lo, hi), pe_i16x8_splat((int16_t)0x8000));
}
PE_INLINE pe_v128 pe__f32_to_f16x8_no_nan(pe_v128 lo, pe_v128 hi) {
    return pe_v128_or(pe_u16x8_narrow_i32x4(pe__f16_magnitude(lo), pe__f16_magnitude(hi)), pe__f16x8_signs(lo, hi));
}
PE_INLINE pe_v128 pe__f32_to_bf16x8_no_nan(pe_v128 lo, pe_v128 hi) {
    return pe_u16x8_narrow_i32x4(pe__f32x4_to_bf16x4_no_nan(lo), pe__f32x4_to_bf16x4_no_nan(hi));
}
PE_INLINE pe_v128 pe__f32_to_f16x8(pe_v128 lo, pe_v128 hi) {
    pe_v128 a = pe__f16_magnitude(lo), b = pe__f16_magnitude(hi);
    if (PE__RARE(pe_i8x16_bitmask(pe_v128_or(pe_f32x4_ne(lo, lo), pe_f32x4_ne(hi, hi))))) {
        a = pe__f16_magnitude_nan(lo, a);
        b = pe__f16_magnitude_nan(hi, b);
    }
    return pe_v128_or(pe_u16x8_narrow_i32x4(a, b), pe__f16x8_signs(lo, hi));
}
PE_INLINE void pe__bf16x8_to_f32(pe_v128 h, pe_v128 out[2]) {
    const pe_v128 zero = pe_i32x4_splat(0);
    out[0] = pe_u16x8_zip_lo(zero, h);
    out[1] = pe_u16x8_zip_hi(zero, h);
}
PE_INLINE pe_v128 pe__f32_to_bf16x8(pe_v128 lo, pe_v128 hi) {
    pe_v128 a = pe__f32x4_to_bf16x4_no_nan(lo), b = pe__f32x4_to_bf16x4_no_nan(hi);
    if (PE__RARE(pe_i8x16_bitmask(pe_v128_or(pe_f32x4_ne(lo, lo), pe_f32x4_ne(hi, hi))))) {
        a = pe__bf16_narrow_nan(lo, a);
        b = pe__bf16_narrow_nan(hi, b);
    }
    return pe_u16x8_narrow_i32x4(a, b);
}
#endif

/* ---- arrays: n values between 16-bit storage and float32 ------------------------------------- */
#define PE__DEFINE_F16_ARRAYS(name, widen_scalar, narrow_scalar, widen8, narrow8) \
    PE_INLINE void pe__load_##name(float *dst, const uint16_t *src, int32_t n) {  \
        int32_t i = 0;                                                            \
        PE__F16_WIDEN_LOOP(widen8)                                                \
        for (; i < n; i++) dst[i] = widen_scalar(src[i]);                         \
    }                                                                             \
    PE_INLINE void pe__store_##name(uint16_t *dst, const float *src, int32_t n) { \
        int32_t i = 0;                                                            \
        PE__F16_NARROW_LOOP(narrow8)                                              \
        for (; i < n; i++) dst[i] = narrow_scalar(src[i]);                        \
    }

#if PE_SIMD
#define PE__F16_WIDEN_LOOP(widen8)         \
    for (; i + 8 <= n; i += 8) {           \
        pe_v128 f[2];                      \
        widen8(pe_u16x8_load(src + i), f); \
        pe_f32x4_store(dst + i, f[0]);     \
        pe_f32x4_store(dst + i + 4, f[1]); \
    }
#define PE__F16_NARROW_LOOP(narrow8) \
    for (; i + 8 <= n; i += 8) pe_u16x8_store(dst + i, narrow8(pe_f32x4_load(src + i), pe_f32x4_load(src + i + 4)));
#else
#define PE__F16_WIDEN_LOOP(widen8)
#define PE__F16_NARROW_LOOP(narrow8)
#endif

PE__DEFINE_F16_ARRAYS(f16, pe__f16_to_f32, pe__f32_to_f16, pe__f16x8_to_f32, pe__f32_to_f16x8)
PE__DEFINE_F16_ARRAYS(bf16, pe__bf16_to_f32, pe__f32_to_bf16, pe__bf16x8_to_f32, pe__f32_to_bf16x8)

#undef PE__DEFINE_F16_ARRAYS
#undef PE__F16_WIDEN_LOOP
#undef PE__F16_NARROW_LOOP

#endif /* PE_F16_H */
