/* simd.h — the only place where intrinsics and compiler extensions live.
 *
 * PE_SIMD is 1 when compiling for WebAssembly with -msimd128, else 0. Kernels write their vector loop under
 * `#if PE_SIMD` and keep a scalar loop that handles the tail (and everything in the scalar build), so both
 * builds run the same arithmetic in the same order and can be compared exactly.
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
#include <wasm_simd128.h>

typedef v128_t pe_v128;

/* f32x4 */
PE_INLINE pe_v128 pe_f32x4_load(const float *p) { return wasm_v128_load(p); }
PE_INLINE void pe_f32x4_store(float *p, pe_v128 v) { wasm_v128_store(p, v); }
PE_INLINE pe_v128 pe_f32x4_splat(float x) { return wasm_f32x4_splat(x); }
PE_INLINE pe_v128 pe_f32x4_add(pe_v128 a, pe_v128 b) { return wasm_f32x4_add(a, b); }
PE_INLINE pe_v128 pe_f32x4_sub(pe_v128 a, pe_v128 b) { return wasm_f32x4_sub(a, b); }
PE_INLINE pe_v128 pe_f32x4_mul(pe_v128 a, pe_v128 b) { return wasm_f32x4_mul(a, b); }
PE_INLINE pe_v128 pe_f32x4_max(pe_v128 a, pe_v128 b) { return wasm_f32x4_max(a, b); }
PE_INLINE pe_v128 pe_f32x4_div(pe_v128 a, pe_v128 b) { return wasm_f32x4_div(a, b); }
PE_INLINE pe_v128 pe_f32x4_ge(pe_v128 a, pe_v128 b) { return wasm_f32x4_ge(a, b); }
PE_INLINE pe_v128 pe_f32x4_from_i32x4(pe_v128 v) { return wasm_f32x4_convert_i32x4(v); }
PE_INLINE float pe_f32x4_sum(pe_v128 v) {
    /* ((v0 + v2) + (v1 + v3)): a fixed order, documented so scalar twins can match it. */
    pe_v128 h = wasm_f32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(h, 0) + wasm_f32x4_extract_lane(h, 1);
}

/* [a0 b0 a1 b1] [a2 b2 a3 b3] -> [a0 a1 a2 a3], [b0 b1 b2 b3] and back: interleaved pairs as two planes. */
PE_INLINE pe_v128 pe_f32x4_even(pe_v128 lo, pe_v128 hi) { return wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6); }
PE_INLINE pe_v128 pe_f32x4_odd(pe_v128 lo, pe_v128 hi) { return wasm_i32x4_shuffle(lo, hi, 1, 3, 5, 7); }
PE_INLINE pe_v128 pe_f32x4_zip_lo(pe_v128 a, pe_v128 b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }
PE_INLINE pe_v128 pe_f32x4_zip_hi(pe_v128 a, pe_v128 b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }

/* bit operations (for sign and quadrant selection) */
PE_INLINE pe_v128 pe_v128_and(pe_v128 a, pe_v128 b) { return wasm_v128_and(a, b); }
PE_INLINE pe_v128 pe_v128_xor(pe_v128 a, pe_v128 b) { return wasm_v128_xor(a, b); }
PE_INLINE pe_v128 pe_v128_or(pe_v128 a, pe_v128 b) { return wasm_v128_or(a, b); }
PE_INLINE pe_v128 pe_v128_select(pe_v128 if_set, pe_v128 if_clear, pe_v128 mask) {
    return wasm_v128_bitselect(if_set, if_clear, mask);
}
PE_INLINE pe_v128 pe_i32x4_splat(int32_t x) { return wasm_i32x4_splat(x); }
PE_INLINE pe_v128 pe_i32x4_make(int32_t a, int32_t b, int32_t c, int32_t d) { return wasm_i32x4_make(a, b, c, d); }
PE_INLINE pe_v128 pe_i32x4_add(pe_v128 a, pe_v128 b) { return wasm_i32x4_add(a, b); }
PE_INLINE pe_v128 pe_i32x4_sub(pe_v128 a, pe_v128 b) { return wasm_i32x4_sub(a, b); }
PE_INLINE pe_v128 pe_i32x4_shl(pe_v128 a, int n) { return wasm_i32x4_shl(a, n); }
PE_INLINE pe_v128 pe_i32x4_eq(pe_v128 a, pe_v128 b) { return wasm_i32x4_eq(a, b); }

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
/* two f64x2 holding small integers -> one i32x4 [a0 a1 b0 b1] */
PE_INLINE pe_v128 pe_f64x2_to_i32_pair(pe_v128 a, pe_v128 b) {
    return wasm_i32x4_shuffle(wasm_i32x4_trunc_sat_f64x2_zero(a), wasm_i32x4_trunc_sat_f64x2_zero(b), 0, 1, 4, 5);
}

/* ---- appended for attention.c (keep above names stable) ---------------------------------------- */
/* pseudo-max: b < a ? a : b per lane (wasm f32x4.pmax; one instruction on x86), so a scalar twin is the
 * same ternary. */
PE_INLINE pe_v128 pe_f32x4_pmax(pe_v128 a, pe_v128 b) { return wasm_f32x4_pmax(b, a); }
PE_INLINE pe_v128 pe_f32x4_make(float a, float b, float c, float d) { return wasm_f32x4_make(a, b, c, d); }
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
PE_INLINE pe_v128 pe_i32x4_load(const int32_t *p) { return wasm_v128_load(p); }
PE_INLINE pe_v128 pe_i32x4_gt(pe_v128 a, pe_v128 b) { return wasm_i32x4_gt(a, b); }
PE_INLINE pe_v128 pe_i32x4_ge(pe_v128 a, pe_v128 b) { return wasm_i32x4_ge(a, b); }

#else
#define PE_SIMD 0
#endif

#endif /* PE_SIMD_H */
