/* limit_strided.c — the in-place memory limit over strided views, in WebAssembly (bench only; in limit.wasm).
 *
 * limit.c's `x *= s` pass walks one contiguous block. These two walk views the way posenc's apply kernel does
 * (c/src/rope_apply.c), with the same unrolled SIMD128 body, so bench/strided.mjs can time the least possible
 * work on exactly the strided q and k regions and on their dense copies: if this pass is itself slower on the
 * views than on the dense tensors, the memory system (not the kernel) bounds the strided/dense ratio.
 *
 *   limit_inplace_rows   token-major bshd (fused QKV): per row r, q[r*qs .. +ql] then k[r*ks .. +kl]
 *   limit_inplace_pairs  the same rows in posenc's streaming order past the cache (pe__rotate_token, stream):
 *                        per token, q head h then k head h for h < min(qh, kh), then the remaining heads
 *   limit_inplace_heads  bhsd: heads in groups of `group`, the group's rows at each position in turn
 *                        (posenc rotates PE__HEAD_GROUP = 4 heads together; group 1 is one stream per head)
 */
#include <stdint.h>
#include <wasm_simd128.h>

#include "limit_scale.h"

__attribute__((export_name("limit_inplace_rows"))) void
limit_inplace_rows(float *q, int32_t ql, int32_t qs, float *k, int32_t kl, int32_t ks, int32_t rows, float s) {
    v128_t vs = wasm_f32x4_splat(s);
    for (int32_t r = 0; r < rows; r++) {
        limit_scale(q + (uint32_t)r * (uint32_t)qs, ql, vs, s);
        if (kl > 0) limit_scale(k + (uint32_t)r * (uint32_t)ks, kl, vs, s);
    }
}

__attribute__((export_name("limit_inplace_heads"))) void
limit_inplace_heads(float *x, int32_t heads, int32_t hs, int32_t seq, int32_t d, int32_t group, float s) {
    v128_t vs = wasm_f32x4_splat(s);
    for (int32_t j0 = 0; j0 < heads; j0 += group) {
        const int32_t count = heads - j0 < group ? heads - j0 : group;
        for (int32_t p = 0; p < seq; p++)
            for (int32_t t = 0; t < count; t++)
                limit_scale(x + (uint32_t)(j0 + t) * (uint32_t)hs + (uint32_t)p * d, d, vs, s);
    }
}

__attribute__((export_name("limit_inplace_pairs"))) void limit_inplace_pairs(float *q, int32_t qh, int32_t qs, float *k,
                                                                             int32_t kh, int32_t ks, int32_t d,
                                                                             int32_t rows, float s) {
    v128_t vs = wasm_f32x4_splat(s);
    const int32_t both = qh < kh ? qh : kh;
    for (int32_t r = 0; r < rows; r++) {
        float *qr = q + (uint32_t)r * (uint32_t)qs, *kr = k + (uint32_t)r * (uint32_t)ks;
        for (int32_t h = 0; h < both; h++) {
            limit_scale(qr + (uint32_t)h * d, d, vs, s);
            limit_scale(kr + (uint32_t)h * d, d, vs, s);
        }
        for (int32_t h = both; h < qh; h++) limit_scale(qr + (uint32_t)h * d, d, vs, s);
        for (int32_t h = both; h < kh; h++) limit_scale(kr + (uint32_t)h * d, d, vs, s);
    }
}
