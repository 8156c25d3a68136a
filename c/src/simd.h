/* simd.h — the only place where intrinsics and compiler extensions live.
 *
 * Kernels write their vector loop under `#if PE_SIMD` and keep a scalar loop that handles the tail (and
 * everything in the scalar build), so both builds run the same arithmetic in the same order and can be
 * compared exactly. The operations are WebAssembly SIMD128's (the shipped build); each has a native mapping
 * with the same semantics lane for lane, so the SIMD loops also build and run natively (under ASan, UBSan
 * and libFuzzer) and give the wasm SIMD build's bits:
 *
 *   wasm32 with -msimd128                     PE_SIMD 1, wasm_simd128.h            PE_SIMD_ISA "wasm SIMD128"
 *   -DPE_NATIVE_SIMD=1, x86-64 with SSE4.1    PE_SIMD 1, SSE2 + SSE4.1 intrinsics  "x86-64 SSE4.1"
 *   -DPE_NATIVE_SIMD=1 elsewhere, or with
 *     -DPE_SIMD_PORTABLE=1                    PE_SIMD 1, plain C, lane by lane     "portable C"
 *   otherwise                                 PE_SIMD 0 (scalar loops only)        "none (scalar)"
 *
 * Semantics that differ between ISAs and are pinned here to wasm's (tests/c/test_simd_ops.c checks each):
 *   f32x4_max       IEEE maximum: NaN if either lane is NaN (the canonical quiet NaN 0x7fc00000, one of the
 *                   results wasm allows), max(-0, +0) = +0.
 *   f32x4_pmax      pseudo-maximum b < a ? a : b: the second operand when unordered or equal.
 *   f64x2_nearest   round half to even; f64x2_floor toward -inf; both keep the sign of zero.
 *   f64x2_to_i32    truncation, saturating to [INT32_MIN, INT32_MAX], NaN -> 0.
 *   demote, i32->f32  round to nearest even.
 *   f64x2_low_words the low 32 bits of each double's bit pattern (its integer value's low bits when the double
 *                   is an integer in [2^52, 2^53)), whatever the host's byte order.
 *   i32x4_shl, u32x4_shr  shift count taken mod 32.
 *   u16x8_narrow_i32x4    each signed i32 lane saturated to [0, 65535].
 *   v128_select     bitwise: (if_set & mask) | (if_clear & ~mask), every bit of the mask counts.
 * Lane 0 is the lowest address, on every ISA.
 */
#ifndef PE_SIMD_H
#define PE_SIMD_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define PE_INLINE static inline __attribute__((always_inline))
#else
#define PE_INLINE static inline
#endif

#if defined(__wasm_simd128__)
#define PE_SIMD 1
#define PE_SIMD_ISA "wasm SIMD128"
#include <wasm_simd128.h>

typedef v128_t pe_v128;

/* f32x4 arithmetic */
PE_INLINE pe_v128 pe_f32x4_load(const float *p) { return wasm_v128_load(p); }
PE_INLINE void pe_f32x4_store(float *p, pe_v128 v) { wasm_v128_store(p, v); }
PE_INLINE pe_v128 pe_f32x4_splat(float x) { return wasm_f32x4_splat(x); }
PE_INLINE pe_v128 pe_f32x4_make(float a, float b, float c, float d) { return wasm_f32x4_make(a, b, c, d); }
PE_INLINE pe_v128 pe_f32x4_add(pe_v128 a, pe_v128 b) { return wasm_f32x4_add(a, b); }
PE_INLINE pe_v128 pe_f32x4_sub(pe_v128 a, pe_v128 b) { return wasm_f32x4_sub(a, b); }
PE_INLINE pe_v128 pe_f32x4_mul(pe_v128 a, pe_v128 b) { return wasm_f32x4_mul(a, b); }
PE_INLINE pe_v128 pe_f32x4_div(pe_v128 a, pe_v128 b) { return wasm_f32x4_div(a, b); }
PE_INLINE pe_v128 pe_f32x4_max(pe_v128 a, pe_v128 b) { return wasm_f32x4_max(a, b); }
/* pseudo-max: b < a ? a : b per lane (wasm f32x4.pmax; one instruction on x86), so a scalar twin is the
 * same ternary. */
PE_INLINE pe_v128 pe_f32x4_pmax(pe_v128 a, pe_v128 b) { return wasm_f32x4_pmax(b, a); }
PE_INLINE pe_v128 pe_f32x4_ge(pe_v128 a, pe_v128 b) { return wasm_f32x4_ge(a, b); }

/* f32x4 horizontal reductions */
PE_INLINE float pe_f32x4_sum(pe_v128 v) {
    /* ((v0 + v2) + (v1 + v3)): a fixed order, documented so scalar twins can match it. */
    pe_v128 h = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(h, 0) + wasm_f32x4_extract_lane(h, 1);
}
/* [sum(a), sum(b), sum(c), sum(d)], each exactly pe_f32x4_sum's ((v0 + v2) + (v1 + v3)): four horizontal sums
 * as one transpose-and-add (6 shuffles, 3 adds) that leaves the results in one vector. */
PE_INLINE pe_v128 pe_f32x4_sum4(pe_v128 a, pe_v128 b, pe_v128 c, pe_v128 d) {
    const pe_v128 ab = wasm_f32x4_add(wasm_i32x4_shuffle(a, b, 0, 1, 4, 5), wasm_i32x4_shuffle(a, b, 2, 3, 6, 7));
    const pe_v128 cd = wasm_f32x4_add(wasm_i32x4_shuffle(c, d, 0, 1, 4, 5), wasm_i32x4_shuffle(c, d, 2, 3, 6, 7));
    /* ab = [a0+a2, a1+a3, b0+b2, b1+b3], cd likewise */
    return wasm_f32x4_add(wasm_i32x4_shuffle(ab, cd, 0, 2, 4, 6), wasm_i32x4_shuffle(ab, cd, 1, 3, 5, 7));
}
/* max of the four lanes (pmax twice; the maximum is the same in any order) */
PE_INLINE float pe_f32x4_hmax(pe_v128 v) {
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_f32x4_extract_lane(v, 0);
}

/* [a0 b0 a1 b1] [a2 b2 a3 b3] -> [a0 a1 a2 a3], [b0 b1 b2 b3] and back: interleaved pairs as two planes. */
PE_INLINE pe_v128 pe_f32x4_even(pe_v128 lo, pe_v128 hi) { return wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6); }
PE_INLINE pe_v128 pe_f32x4_odd(pe_v128 lo, pe_v128 hi) { return wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7); }
PE_INLINE pe_v128 pe_f32x4_zip_lo(pe_v128 a, pe_v128 b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }
PE_INLINE pe_v128 pe_f32x4_zip_hi(pe_v128 a, pe_v128 b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }
/* [a0 b0 a1 b1] -> [b0 a0 b1 a1]; [x0 x1 x2 x3] -> [x0 x0 x1 x1], [x2 x2 x3 x3]: interleaved pairs kept in place */
PE_INLINE pe_v128 pe_f32x4_swap_pairs(pe_v128 v) { return wasm_i32x4_shuffle(v, v, 1, 0, 3, 2); }
PE_INLINE pe_v128 pe_f32x4_dup_lo(pe_v128 v) { return wasm_i32x4_shuffle(v, v, 0, 0, 1, 1); }
PE_INLINE pe_v128 pe_f32x4_dup_hi(pe_v128 v) { return wasm_i32x4_shuffle(v, v, 2, 2, 3, 3); }

/* bit operations (sign flips, quadrant and mask selection) */
PE_INLINE pe_v128 pe_v128_and(pe_v128 a, pe_v128 b) { return wasm_v128_and(a, b); }
PE_INLINE pe_v128 pe_v128_xor(pe_v128 a, pe_v128 b) { return wasm_v128_xor(a, b); }
PE_INLINE pe_v128 pe_v128_or(pe_v128 a, pe_v128 b) { return wasm_v128_or(a, b); }
PE_INLINE pe_v128 pe_v128_select(pe_v128 if_set, pe_v128 if_clear, pe_v128 mask) {
    return wasm_v128_bitselect(if_set, if_clear, mask);
}

/* i32x4 */
PE_INLINE pe_v128 pe_i32x4_load(const int32_t *p) { return wasm_v128_load(p); }
PE_INLINE void pe_i32x4_store(int32_t *p, pe_v128 v) { wasm_v128_store(p, v); }
PE_INLINE pe_v128 pe_i32x4_splat(int32_t x) { return wasm_i32x4_splat(x); }
PE_INLINE pe_v128 pe_i32x4_make(int32_t a, int32_t b, int32_t c, int32_t d) { return wasm_i32x4_make(a, b, c, d); }
PE_INLINE pe_v128 pe_i32x4_add(pe_v128 a, pe_v128 b) { return wasm_i32x4_add(a, b); }
PE_INLINE pe_v128 pe_i32x4_sub(pe_v128 a, pe_v128 b) { return wasm_i32x4_sub(a, b); }
PE_INLINE pe_v128 pe_i32x4_shl(pe_v128 a, int n) { return wasm_i32x4_shl(a, n); }
PE_INLINE pe_v128 pe_i32x4_eq(pe_v128 a, pe_v128 b) { return wasm_i32x4_eq(a, b); }
PE_INLINE pe_v128 pe_i32x4_gt(pe_v128 a, pe_v128 b) { return wasm_i32x4_gt(a, b); }
PE_INLINE pe_v128 pe_i32x4_ge(pe_v128 a, pe_v128 b) { return wasm_i32x4_ge(a, b); }
PE_INLINE pe_v128 pe_f32x4_from_i32x4(pe_v128 v) { return wasm_f32x4_convert_i32x4(v); }
/* 16-bit lanes, for float16 / bfloat16 storage (f16.h): 8 u16 loaded as two zero-extended u32x4 halves and
 * packed back. narrow saturates each signed i32 lane to [0, 65535] (wasm's u16x8.narrow_i32x4). */
PE_INLINE pe_v128 pe_u32x4_shr(pe_v128 a, int n) { return wasm_u32x4_shr(a, n); } /* logical, count mod 32 */
PE_INLINE pe_v128 pe_u16x8_load(const uint16_t *p) { return wasm_v128_load(p); }
PE_INLINE void pe_u16x8_store(uint16_t *p, pe_v128 v) { wasm_v128_store(p, v); }
PE_INLINE pe_v128 pe_u32x4_extend_low_u16x8(pe_v128 v) { return wasm_u32x4_extend_low_u16x8(v); }
PE_INLINE pe_v128 pe_u32x4_extend_high_u16x8(pe_v128 v) { return wasm_u32x4_extend_high_u16x8(v); }
PE_INLINE pe_v128 pe_u16x8_narrow_i32x4(pe_v128 lo, pe_v128 hi) { return wasm_u16x8_narrow_i32x4(lo, hi); }

/* f64x2 */
PE_INLINE pe_v128 pe_f64x2_make(double a, double b) { return wasm_f64x2_make(a, b); }
PE_INLINE pe_v128 pe_f64x2_load(const double *p) { return wasm_v128_load(p); }
PE_INLINE pe_v128 pe_f64x2_splat(double x) { return wasm_f64x2_splat(x); }
PE_INLINE pe_v128 pe_f64x2_add(pe_v128 a, pe_v128 b) { return wasm_f64x2_add(a, b); }
PE_INLINE pe_v128 pe_f64x2_sub(pe_v128 a, pe_v128 b) { return wasm_f64x2_sub(a, b); }
PE_INLINE pe_v128 pe_f64x2_mul(pe_v128 a, pe_v128 b) { return wasm_f64x2_mul(a, b); }
PE_INLINE pe_v128 pe_f64x2_div(pe_v128 a, pe_v128 b) { return wasm_f64x2_div(a, b); }
PE_INLINE pe_v128 pe_f64x2_neg(pe_v128 a) { return wasm_f64x2_neg(a); }
PE_INLINE pe_v128 pe_f64x2_floor(pe_v128 a) { return wasm_f64x2_floor(a); }
PE_INLINE pe_v128 pe_f64x2_eq(pe_v128 a, pe_v128 b) { return wasm_f64x2_eq(a, b); }
PE_INLINE pe_v128 pe_f64x2_nearest(pe_v128 a) { return wasm_f64x2_nearest(a); }
/* two f64x2 -> one f32x4 [a0 a1 b0 b1], each lane rounded once */
PE_INLINE pe_v128 pe_f64x2_demote_pair(pe_v128 a, pe_v128 b) {
    return wasm_i32x4_shuffle(wasm_f32x4_demote_f64x2_zero(a), wasm_f32x4_demote_f64x2_zero(b), 0, 1, 4, 5);
}
/* the low 32 bits of each f64 lane of a and b -> one i32x4 [a0 a1 b0 b1]: a bit move, no conversion */
PE_INLINE pe_v128 pe_f64x2_low_words(pe_v128 a, pe_v128 b) { return wasm_i32x4_shuffle(a, b, 0, 2, 4, 6); }
/* two f64x2 holding small integers -> one i32x4 [a0 a1 b0 b1] */
PE_INLINE pe_v128 pe_f64x2_to_i32_pair(pe_v128 a, pe_v128 b) {
    return wasm_i32x4_shuffle(wasm_i32x4_trunc_sat_f64x2_zero(a), wasm_i32x4_trunc_sat_f64x2_zero(b), 0, 1, 4, 5);
}

#elif defined(PE_NATIVE_SIMD) && PE_NATIVE_SIMD && defined(__SSE4_1__) && \
    !(defined(PE_SIMD_PORTABLE) && PE_SIMD_PORTABLE)
#define PE_SIMD 1
#define PE_SIMD_ISA "x86-64 SSE4.1"
#include <smmintrin.h>

/* One type for every lane shape, as wasm's v128_t; the casts between views cost nothing. */
typedef __m128 pe_v128;
#define PE__I(v) _mm_castps_si128(v)
#define PE__D(v) _mm_castps_pd(v)
#define PE__FI(v) _mm_castsi128_ps(v)
#define PE__FD(v) _mm_castpd_ps(v)

/* f32x4 arithmetic (SSE rounds to nearest even, as wasm; MXCSR is left at its default) */
PE_INLINE pe_v128 pe_f32x4_load(const float *p) { return _mm_loadu_ps(p); }
PE_INLINE void pe_f32x4_store(float *p, pe_v128 v) { _mm_storeu_ps(p, v); }
PE_INLINE pe_v128 pe_f32x4_splat(float x) { return _mm_set1_ps(x); }
PE_INLINE pe_v128 pe_f32x4_make(float a, float b, float c, float d) { return _mm_setr_ps(a, b, c, d); }
PE_INLINE pe_v128 pe_f32x4_add(pe_v128 a, pe_v128 b) { return _mm_add_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_sub(pe_v128 a, pe_v128 b) { return _mm_sub_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_mul(pe_v128 a, pe_v128 b) { return _mm_mul_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_div(pe_v128 a, pe_v128 b) { return _mm_div_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_max(pe_v128 a, pe_v128 b) {
    /* maxps returns its second operand when unordered or equal, so max(a, b) and max(b, a) agree except on
     * NaN and on zeros of opposite sign; AND of the two gives +0 for {-0, +0}, then NaN lanes are replaced. */
    const __m128 both = _mm_and_ps(_mm_max_ps(a, b), _mm_max_ps(b, a));
    const __m128 nan = _mm_cmpunord_ps(a, b);
    return _mm_or_ps(_mm_andnot_ps(nan, both), _mm_and_ps(nan, PE__FI(_mm_set1_epi32(0x7fc00000))));
}
/* b < a ? a : b is exactly maxps(a, b) (a > b ? a : b, second operand when unordered or equal) */
PE_INLINE pe_v128 pe_f32x4_pmax(pe_v128 a, pe_v128 b) { return _mm_max_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_ge(pe_v128 a, pe_v128 b) { return _mm_cmpge_ps(a, b); }

/* f32x4 horizontal reductions, in the wasm mapping's order */
PE_INLINE float pe_f32x4_sum(pe_v128 v) {
    const __m128 h = _mm_add_ps(v, _mm_movehl_ps(v, v)); /* [v0+v2, v1+v3, ...] */
    return _mm_cvtss_f32(h) + _mm_cvtss_f32(_mm_shuffle_ps(h, h, _MM_SHUFFLE(1, 1, 1, 1)));
}
PE_INLINE pe_v128 pe_f32x4_sum4(pe_v128 a, pe_v128 b, pe_v128 c, pe_v128 d) {
    const __m128 ab = _mm_add_ps(_mm_movelh_ps(a, b), _mm_movehl_ps(b, a)); /* [a0+a2, a1+a3, b0+b2, b1+b3] */
    const __m128 cd = _mm_add_ps(_mm_movelh_ps(c, d), _mm_movehl_ps(d, c));
    return _mm_add_ps(_mm_shuffle_ps(ab, cd, _MM_SHUFFLE(2, 0, 2, 0)), _mm_shuffle_ps(ab, cd, _MM_SHUFFLE(3, 1, 3, 1)));
}
PE_INLINE float pe_f32x4_hmax(pe_v128 v) {
    /* wasm's pmax(v, s) is s < v ? ... : maxps(s, v); the operand order matters only for NaN and ±0 */
    v = _mm_max_ps(_mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)), v);
    v = _mm_max_ps(_mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)), v);
    return _mm_cvtss_f32(v);
}

PE_INLINE pe_v128 pe_f32x4_even(pe_v128 lo, pe_v128 hi) { return _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0)); }
PE_INLINE pe_v128 pe_f32x4_odd(pe_v128 lo, pe_v128 hi) { return _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1)); }
PE_INLINE pe_v128 pe_f32x4_zip_lo(pe_v128 a, pe_v128 b) { return _mm_unpacklo_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_zip_hi(pe_v128 a, pe_v128 b) { return _mm_unpackhi_ps(a, b); }
PE_INLINE pe_v128 pe_f32x4_swap_pairs(pe_v128 v) { return _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)); }
PE_INLINE pe_v128 pe_f32x4_dup_lo(pe_v128 v) { return _mm_unpacklo_ps(v, v); }
PE_INLINE pe_v128 pe_f32x4_dup_hi(pe_v128 v) { return _mm_unpackhi_ps(v, v); }

/* bit operations */
PE_INLINE pe_v128 pe_v128_and(pe_v128 a, pe_v128 b) { return _mm_and_ps(a, b); }
PE_INLINE pe_v128 pe_v128_xor(pe_v128 a, pe_v128 b) { return _mm_xor_ps(a, b); }
PE_INLINE pe_v128 pe_v128_or(pe_v128 a, pe_v128 b) { return _mm_or_ps(a, b); }
/* not blendvps: that reads only each lane's top bit */
PE_INLINE pe_v128 pe_v128_select(pe_v128 if_set, pe_v128 if_clear, pe_v128 mask) {
    return _mm_or_ps(_mm_and_ps(mask, if_set), _mm_andnot_ps(mask, if_clear));
}

/* i32x4 */
PE_INLINE pe_v128 pe_i32x4_load(const int32_t *p) { return PE__FI(_mm_loadu_si128((const __m128i *)(const void *)p)); }
PE_INLINE void pe_i32x4_store(int32_t *p, pe_v128 v) { _mm_storeu_si128((__m128i *)(void *)p, PE__I(v)); }
PE_INLINE pe_v128 pe_i32x4_splat(int32_t x) { return PE__FI(_mm_set1_epi32(x)); }
PE_INLINE pe_v128 pe_i32x4_make(int32_t a, int32_t b, int32_t c, int32_t d) {
    return PE__FI(_mm_setr_epi32(a, b, c, d));
}
PE_INLINE pe_v128 pe_i32x4_add(pe_v128 a, pe_v128 b) { return PE__FI(_mm_add_epi32(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i32x4_sub(pe_v128 a, pe_v128 b) { return PE__FI(_mm_sub_epi32(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i32x4_shl(pe_v128 a, int n) {
    return PE__FI(_mm_sll_epi32(PE__I(a), _mm_cvtsi32_si128(n & 31))); /* x86 zeroes counts >= 32; wasm wraps */
}
PE_INLINE pe_v128 pe_i32x4_eq(pe_v128 a, pe_v128 b) { return PE__FI(_mm_cmpeq_epi32(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i32x4_gt(pe_v128 a, pe_v128 b) { return PE__FI(_mm_cmpgt_epi32(PE__I(a), PE__I(b))); }
PE_INLINE pe_v128 pe_i32x4_ge(pe_v128 a, pe_v128 b) {
    return PE__FI(_mm_cmpeq_epi32(_mm_max_epi32(PE__I(a), PE__I(b)), PE__I(a)));
}
PE_INLINE pe_v128 pe_f32x4_from_i32x4(pe_v128 v) { return _mm_cvtepi32_ps(PE__I(v)); }
PE_INLINE pe_v128 pe_u32x4_shr(pe_v128 a, int n) {
    return PE__FI(_mm_srl_epi32(PE__I(a), _mm_cvtsi32_si128(n & 31))); /* count mod 32, as wasm */
}
PE_INLINE pe_v128 pe_u16x8_load(const uint16_t *p) { return PE__FI(_mm_loadu_si128((const __m128i *)(const void *)p)); }
PE_INLINE void pe_u16x8_store(uint16_t *p, pe_v128 v) { _mm_storeu_si128((__m128i *)(void *)p, PE__I(v)); }
PE_INLINE pe_v128 pe_u32x4_extend_low_u16x8(pe_v128 v) { return PE__FI(_mm_cvtepu16_epi32(PE__I(v))); }
PE_INLINE pe_v128 pe_u32x4_extend_high_u16x8(pe_v128 v) {
    return PE__FI(_mm_unpackhi_epi16(PE__I(v), _mm_setzero_si128()));
}
/* packusdw: signed i32 -> u16 with saturation, exactly wasm's u16x8.narrow_i32x4 */
PE_INLINE pe_v128 pe_u16x8_narrow_i32x4(pe_v128 lo, pe_v128 hi) {
    return PE__FI(_mm_packus_epi32(PE__I(lo), PE__I(hi)));
}

/* f64x2 */
PE_INLINE pe_v128 pe_f64x2_make(double a, double b) { return PE__FD(_mm_setr_pd(a, b)); }
PE_INLINE pe_v128 pe_f64x2_load(const double *p) { return PE__FD(_mm_loadu_pd(p)); }
PE_INLINE pe_v128 pe_f64x2_splat(double x) { return PE__FD(_mm_set1_pd(x)); }
PE_INLINE pe_v128 pe_f64x2_add(pe_v128 a, pe_v128 b) { return PE__FD(_mm_add_pd(PE__D(a), PE__D(b))); }
PE_INLINE pe_v128 pe_f64x2_sub(pe_v128 a, pe_v128 b) { return PE__FD(_mm_sub_pd(PE__D(a), PE__D(b))); }
PE_INLINE pe_v128 pe_f64x2_mul(pe_v128 a, pe_v128 b) { return PE__FD(_mm_mul_pd(PE__D(a), PE__D(b))); }
PE_INLINE pe_v128 pe_f64x2_div(pe_v128 a, pe_v128 b) { return PE__FD(_mm_div_pd(PE__D(a), PE__D(b))); }
PE_INLINE pe_v128 pe_f64x2_neg(pe_v128 a) { return PE__FD(_mm_xor_pd(PE__D(a), _mm_set1_pd(-0.0))); }
PE_INLINE pe_v128 pe_f64x2_floor(pe_v128 a) {
    return PE__FD(_mm_round_pd(PE__D(a), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC));
}
PE_INLINE pe_v128 pe_f64x2_eq(pe_v128 a, pe_v128 b) { return PE__FD(_mm_cmpeq_pd(PE__D(a), PE__D(b))); }
PE_INLINE pe_v128 pe_f64x2_nearest(pe_v128 a) {
    return PE__FD(_mm_round_pd(PE__D(a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
PE_INLINE pe_v128 pe_f64x2_demote_pair(pe_v128 a, pe_v128 b) {
    return _mm_movelh_ps(_mm_cvtpd_ps(PE__D(a)), _mm_cvtpd_ps(PE__D(b)));
}
/* cvttpd2dq gives INT32_MIN for NaN and for anything out of range; wasm saturates and maps NaN to 0, so NaN
 * lanes are zeroed and the top clamped first (the bottom is already INT32_MIN). */
PE_INLINE __m128i pe__f64x2_trunc_sat(__m128d a) {
    const __m128d clean = _mm_and_pd(a, _mm_cmpord_pd(a, a));
    return _mm_cvttpd_epi32(_mm_min_pd(clean, _mm_set1_pd(2147483647.0)));
}
PE_INLINE pe_v128 pe_f64x2_to_i32_pair(pe_v128 a, pe_v128 b) {
    return PE__FI(_mm_unpacklo_epi64(pe__f64x2_trunc_sat(PE__D(a)), pe__f64x2_trunc_sat(PE__D(b))));
}
PE_INLINE pe_v128 pe_f64x2_low_words(pe_v128 a, pe_v128 b) { return _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)); }

#elif defined(PE_NATIVE_SIMD) && PE_NATIVE_SIMD
#define PE_SIMD 1
#define PE_SIMD_ISA "portable C"
#include <math.h>
#include <string.h>

/* wasm SIMD128 in plain C, lane by lane: for machines without a mapping above, and as the readable
 * statement of what each operation does. */
typedef union pe_v128 {
    float f[4];
    int32_t i[4];
    uint32_t u[4];
    double d[2];
} pe_v128;

#define PE__LANES4(expr)              \
    pe_v128 r;                        \
    for (int l = 0; l < 4; l++) expr; \
    return r
#define PE__LANES2(expr)              \
    pe_v128 r;                        \
    for (int l = 0; l < 2; l++) expr; \
    return r

PE_INLINE pe_v128 pe_f32x4_load(const float *p) {
    pe_v128 r;
    memcpy(r.f, p, 16);
    return r;
}
PE_INLINE void pe_f32x4_store(float *p, pe_v128 v) { memcpy(p, v.f, 16); }
PE_INLINE pe_v128 pe_f32x4_splat(float x) { PE__LANES4(r.f[l] = x); }
PE_INLINE pe_v128 pe_f32x4_make(float a, float b, float c, float d) {
    pe_v128 r = {.f = {a, b, c, d}};
    return r;
}
PE_INLINE pe_v128 pe_f32x4_add(pe_v128 a, pe_v128 b) { PE__LANES4(r.f[l] = a.f[l] + b.f[l]); }
PE_INLINE pe_v128 pe_f32x4_sub(pe_v128 a, pe_v128 b) { PE__LANES4(r.f[l] = a.f[l] - b.f[l]); }
PE_INLINE pe_v128 pe_f32x4_mul(pe_v128 a, pe_v128 b) { PE__LANES4(r.f[l] = a.f[l] * b.f[l]); }
PE_INLINE pe_v128 pe_f32x4_div(pe_v128 a, pe_v128 b) { PE__LANES4(r.f[l] = a.f[l] / b.f[l]); }
PE_INLINE float pe__maxf(float a, float b) {
    if (a != a || b != b) {
        const uint32_t qnan = 0x7fc00000u;
        float n;
        memcpy(&n, &qnan, 4);
        return n;
    }
    if (a == 0.0f && b == 0.0f) return signbit(a) ? b : a;
    return a > b ? a : b;
}
PE_INLINE pe_v128 pe_f32x4_max(pe_v128 a, pe_v128 b) { PE__LANES4(r.f[l] = pe__maxf(a.f[l], b.f[l])); }
PE_INLINE pe_v128 pe_f32x4_pmax(pe_v128 a, pe_v128 b) { PE__LANES4(r.f[l] = b.f[l] < a.f[l] ? a.f[l] : b.f[l]); }
PE_INLINE pe_v128 pe_f32x4_ge(pe_v128 a, pe_v128 b) { PE__LANES4(r.i[l] = a.f[l] >= b.f[l] ? -1 : 0); }

PE_INLINE float pe_f32x4_sum(pe_v128 v) { return (v.f[0] + v.f[2]) + (v.f[1] + v.f[3]); }
PE_INLINE pe_v128 pe_f32x4_sum4(pe_v128 a, pe_v128 b, pe_v128 c, pe_v128 d) {
    return pe_f32x4_make(pe_f32x4_sum(a), pe_f32x4_sum(b), pe_f32x4_sum(c), pe_f32x4_sum(d));
}
PE_INLINE float pe_f32x4_hmax(pe_v128 v) {
    /* wasm's pmax(v, s) per lane is v < s ? s : v */
    const float m0 = v.f[0] < v.f[2] ? v.f[2] : v.f[0], m1 = v.f[1] < v.f[3] ? v.f[3] : v.f[1];
    return m0 < m1 ? m1 : m0;
}

PE_INLINE pe_v128 pe_f32x4_even(pe_v128 lo, pe_v128 hi) { return pe_f32x4_make(lo.f[0], lo.f[2], hi.f[0], hi.f[2]); }
PE_INLINE pe_v128 pe_f32x4_odd(pe_v128 lo, pe_v128 hi) { return pe_f32x4_make(lo.f[1], lo.f[3], hi.f[1], hi.f[3]); }
PE_INLINE pe_v128 pe_f32x4_zip_lo(pe_v128 a, pe_v128 b) { return pe_f32x4_make(a.f[0], b.f[0], a.f[1], b.f[1]); }
PE_INLINE pe_v128 pe_f32x4_zip_hi(pe_v128 a, pe_v128 b) { return pe_f32x4_make(a.f[2], b.f[2], a.f[3], b.f[3]); }

PE_INLINE pe_v128 pe_v128_and(pe_v128 a, pe_v128 b) { PE__LANES4(r.u[l] = a.u[l] & b.u[l]); }
PE_INLINE pe_v128 pe_v128_xor(pe_v128 a, pe_v128 b) { PE__LANES4(r.u[l] = a.u[l] ^ b.u[l]); }
PE_INLINE pe_v128 pe_v128_or(pe_v128 a, pe_v128 b) { PE__LANES4(r.u[l] = a.u[l] | b.u[l]); }
PE_INLINE pe_v128 pe_v128_select(pe_v128 if_set, pe_v128 if_clear, pe_v128 mask) {
    PE__LANES4(r.u[l] = (if_set.u[l] & mask.u[l]) | (if_clear.u[l] & ~mask.u[l]));
}

PE_INLINE pe_v128 pe_i32x4_load(const int32_t *p) {
    pe_v128 r;
    memcpy(r.i, p, 16);
    return r;
}
PE_INLINE void pe_i32x4_store(int32_t *p, pe_v128 v) { memcpy(p, v.i, 16); }
PE_INLINE pe_v128 pe_i32x4_splat(int32_t x) { PE__LANES4(r.i[l] = x); }
PE_INLINE pe_v128 pe_i32x4_make(int32_t a, int32_t b, int32_t c, int32_t d) {
    pe_v128 r = {.i = {a, b, c, d}};
    return r;
}
/* wrapping, as wasm: in uint32 so C has no overflow to complain about */
PE_INLINE pe_v128 pe_i32x4_add(pe_v128 a, pe_v128 b) { PE__LANES4(r.u[l] = a.u[l] + b.u[l]); }
PE_INLINE pe_v128 pe_i32x4_sub(pe_v128 a, pe_v128 b) { PE__LANES4(r.u[l] = a.u[l] - b.u[l]); }
PE_INLINE pe_v128 pe_i32x4_shl(pe_v128 a, int n) { PE__LANES4(r.u[l] = a.u[l] << (n & 31)); }
PE_INLINE pe_v128 pe_i32x4_eq(pe_v128 a, pe_v128 b) { PE__LANES4(r.i[l] = a.i[l] == b.i[l] ? -1 : 0); }
PE_INLINE pe_v128 pe_i32x4_gt(pe_v128 a, pe_v128 b) { PE__LANES4(r.i[l] = a.i[l] > b.i[l] ? -1 : 0); }
PE_INLINE pe_v128 pe_i32x4_ge(pe_v128 a, pe_v128 b) { PE__LANES4(r.i[l] = a.i[l] >= b.i[l] ? -1 : 0); }
PE_INLINE pe_v128 pe_f32x4_from_i32x4(pe_v128 v) { PE__LANES4(r.f[l] = (float)v.i[l]); }
PE_INLINE pe_v128 pe_u32x4_shr(pe_v128 a, int n) { PE__LANES4(r.u[l] = a.u[l] >> (n & 31)); }
PE_INLINE pe_v128 pe_u16x8_load(const uint16_t *p) {
    pe_v128 r;
    memcpy(r.u, p, 16);
    return r;
}
PE_INLINE void pe_u16x8_store(uint16_t *p, pe_v128 v) { memcpy(p, v.u, 16); }
/* lane l of the u16x8 view is at byte 2l, whatever the host's endianness: memcpy through uint16_t */
PE_INLINE uint16_t pe__u16_lane(pe_v128 v, int l) {
    uint16_t h;
    memcpy(&h, (const unsigned char *)v.u + 2 * l, 2);
    return h;
}
PE_INLINE pe_v128 pe_u32x4_extend_low_u16x8(pe_v128 v) { PE__LANES4(r.u[l] = pe__u16_lane(v, l)); }
PE_INLINE pe_v128 pe_u32x4_extend_high_u16x8(pe_v128 v) { PE__LANES4(r.u[l] = pe__u16_lane(v, l + 4)); }
PE_INLINE uint16_t pe__sat_u16(int32_t x) { return (uint16_t)(x < 0 ? 0 : x > 65535 ? 65535 : x); }
PE_INLINE pe_v128 pe_u16x8_narrow_i32x4(pe_v128 lo, pe_v128 hi) {
    uint16_t h[8];
    for (int l = 0; l < 4; l++) h[l] = pe__sat_u16(lo.i[l]), h[l + 4] = pe__sat_u16(hi.i[l]);
    pe_v128 r;
    memcpy(r.u, h, 16);
    return r;
}

PE_INLINE pe_v128 pe_f64x2_make(double a, double b) {
    pe_v128 r = {.d = {a, b}};
    return r;
}
PE_INLINE pe_v128 pe_f64x2_load(const double *p) {
    pe_v128 r;
    memcpy(r.d, p, 16);
    return r;
}
PE_INLINE pe_v128 pe_f64x2_splat(double x) { PE__LANES2(r.d[l] = x); }
PE_INLINE pe_v128 pe_f64x2_add(pe_v128 a, pe_v128 b) { PE__LANES2(r.d[l] = a.d[l] + b.d[l]); }
PE_INLINE pe_v128 pe_f64x2_sub(pe_v128 a, pe_v128 b) { PE__LANES2(r.d[l] = a.d[l] - b.d[l]); }
PE_INLINE pe_v128 pe_f64x2_mul(pe_v128 a, pe_v128 b) { PE__LANES2(r.d[l] = a.d[l] * b.d[l]); }
PE_INLINE pe_v128 pe_f64x2_div(pe_v128 a, pe_v128 b) { PE__LANES2(r.d[l] = a.d[l] / b.d[l]); }
PE_INLINE pe_v128 pe_f64x2_neg(pe_v128 a) { PE__LANES2(r.d[l] = -a.d[l]); } /* a sign flip, NaN included */
PE_INLINE pe_v128 pe_f64x2_floor(pe_v128 a) { PE__LANES2(r.d[l] = floor(a.d[l])); }
PE_INLINE pe_v128 pe_f64x2_eq(pe_v128 a, pe_v128 b) {
    PE__LANES2((r.i[2 * l] = r.i[2 * l + 1] = a.d[l] == b.d[l] ? -1 : 0));
}
/* under the default rounding mode (which posenc never changes), nearbyint rounds half to even */
PE_INLINE pe_v128 pe_f64x2_nearest(pe_v128 a) { PE__LANES2(r.d[l] = nearbyint(a.d[l])); }
PE_INLINE pe_v128 pe_f64x2_demote_pair(pe_v128 a, pe_v128 b) {
    return pe_f32x4_make((float)a.d[0], (float)a.d[1], (float)b.d[0], (float)b.d[1]);
}
PE_INLINE int32_t pe__trunc_sat(double x) {
    if (x != x) return 0;
    if (x <= -2147483648.0) return INT32_MIN;
    if (x >= 2147483647.0) return INT32_MAX;
    return (int32_t)x;
}
PE_INLINE pe_v128 pe_f64x2_to_i32_pair(pe_v128 a, pe_v128 b) {
    return pe_i32x4_make(pe__trunc_sat(a.d[0]), pe__trunc_sat(a.d[1]), pe__trunc_sat(b.d[0]), pe__trunc_sat(b.d[1]));
}
PE_INLINE uint32_t pe__low_word(double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    return (uint32_t)bits;
}
PE_INLINE pe_v128 pe_f64x2_low_words(pe_v128 a, pe_v128 b) {
    pe_v128 r;
    r.u[0] = pe__low_word(a.d[0]), r.u[1] = pe__low_word(a.d[1]), r.u[2] = pe__low_word(b.d[0]);
    r.u[3] = pe__low_word(b.d[1]);
    return r;
}
#undef PE__LANES4
#undef PE__LANES2

#else
#define PE_SIMD 0
#define PE_SIMD_ISA "none (scalar)"
#endif

#endif /* PE_SIMD_H */
