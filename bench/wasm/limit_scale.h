/* limit_scale.h — the unrolled in-place `x *= s` body that limit.c's limit_inplace and limit_strided.c's view
 * walks share (bench only): 4 vectors per iteration, one read and one write of each byte, a scalar tail. */
#ifndef LIMIT_SCALE_H
#define LIMIT_SCALE_H

#include <stdint.h>
#include <wasm_simd128.h>

static inline void limit_scale(float *x, int32_t n, v128_t vs, float s) {
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        v128_t a = wasm_v128_load(x + i), b = wasm_v128_load(x + i + 4);
        v128_t c = wasm_v128_load(x + i + 8), d = wasm_v128_load(x + i + 12);
        wasm_v128_store(x + i, wasm_f32x4_mul(a, vs));
        wasm_v128_store(x + i + 4, wasm_f32x4_mul(b, vs));
        wasm_v128_store(x + i + 8, wasm_f32x4_mul(c, vs));
        wasm_v128_store(x + i + 12, wasm_f32x4_mul(d, vs));
    }
    for (; i < n; i++) x[i] *= s;
}

#endif
