/* limit.c — the memory-bandwidth limit for in-place kernels, in WebAssembly (bench only).
 *
 * RoPE, sinusoidal add and ALiBi bias are memory-bound: their floor is one read and one write of the tensor.
 * These three loops touch the same bytes with the least possible work, compiled with the same emcc flags as
 * posenc's SIMD build, so "posenc / limit" says how close a kernel gets to what wasm can do on this machine:
 *
 *   limit_inplace  x[i] = x[i] * s, SIMD128, 4 vectors per iteration (read + write each byte once)
 *   limit_copy     memcpy (wasm memory.copy with bulk memory: the engine's native memmove)
 *   limit_fill     memset-like store of a float (write only; the floor for table and bias generators)
 *   limit_read     a sum over the floats (read only; the floor for decode attention, which reads K and V once)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "limit_scale.h"
#include <wasm_simd128.h>

__attribute__((export_name("limit_inplace"))) void limit_inplace(float *x, int32_t n, float s) {
    limit_scale(x, n, wasm_f32x4_splat(s), s);
}

__attribute__((export_name("limit_copy"))) void limit_copy(float *dst, const float *src, int32_t n) {
    memcpy(dst, src, (size_t)n * sizeof(float));
}

__attribute__((export_name("limit_fill"))) void limit_fill(float *x, int32_t n, float v) {
    v128_t vv = wasm_f32x4_splat(v);
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        wasm_v128_store(x + i, vv);
        wasm_v128_store(x + i + 4, vv);
        wasm_v128_store(x + i + 8, vv);
        wasm_v128_store(x + i + 12, vv);
    }
    for (; i < n; i++) x[i] = v;
}

__attribute__((export_name("limit_read"))) float limit_read(const float *x, int32_t n) {
    v128_t a = wasm_f32x4_splat(0), b = a, c = a, d = a;
    int32_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a = wasm_f32x4_add(a, wasm_v128_load(x + i));
        b = wasm_f32x4_add(b, wasm_v128_load(x + i + 4));
        c = wasm_f32x4_add(c, wasm_v128_load(x + i + 8));
        d = wasm_f32x4_add(d, wasm_v128_load(x + i + 12));
    }
    v128_t s = wasm_f32x4_add(wasm_f32x4_add(a, b), wasm_f32x4_add(c, d));
    float r = wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 2) +
              wasm_f32x4_extract_lane(s, 3);
    for (; i < n; i++) r += x[i];
    return r;
}

/* limit_peak: the register-only arithmetic peak of SIMD128 on this engine — `iters` rounds of 12 independent
 * f32x4 chains a = a * m + c (a multiply and an add each: no FMA in baseline SIMD128), no memory traffic.
 * 12 chains cover the multiply + add latency on two multiply and two add pipes with room to spare, and with
 * the 2 constants stay within x86-64's 16 vector registers. Flops: iters * 12 chains * 4 lanes * 2.
 * m < 1 keeps the chains at a fixed point (no overflow, no subnormals); the sum returned keeps them live. */
#define PEAK_CHAINS 12
__attribute__((export_name("limit_peak"))) float limit_peak(int32_t iters, float m, float c) {
    v128_t vm = wasm_f32x4_splat(m), vc = wasm_f32x4_splat(c);
    v128_t a[PEAK_CHAINS];
    for (int j = 0; j < PEAK_CHAINS; j++) a[j] = wasm_f32x4_splat((float)j);
    for (int32_t i = 0; i < iters; i++) {
#pragma clang loop unroll(full)
        for (int j = 0; j < PEAK_CHAINS; j++) a[j] = wasm_f32x4_add(wasm_f32x4_mul(a[j], vm), vc);
    }
    v128_t s = a[0];
    for (int j = 1; j < PEAK_CHAINS; j++) s = wasm_f32x4_add(s, a[j]);
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 3);
}
