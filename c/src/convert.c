/* convert.c — storage-type conversion of whole arrays: float32 <-> float16 / bfloat16 (and float16 <->
 * bfloat16 through float32, which holds both exactly). The element conversions are f16.h's, SIMD and scalar,
 * so this is the same rounding (to nearest even) and NaN/Inf/subnormal handling as every 16-bit kernel's
 * store: a table converted here equals one a kernel would have written.
 */
#include "posenc.h"
#include "f16.h"

#include <stddef.h>
#include <string.h>

/* f16.h's array helpers take an int32 count; 16-bit <-> 16-bit goes through this float32 block. */
#define PE__CONVERT_CHUNK 256

static void pe__widen(float *dst, const uint16_t *src, int32_t n, int32_t dtype) {
    if (dtype == PE_DTYPE_FLOAT16)
        pe__load_f16(dst, src, n);
    else
        pe__load_bf16(dst, src, n);
}

static void pe__narrow(uint16_t *dst, const float *src, int32_t n, int32_t dtype) {
    if (dtype == PE_DTYPE_FLOAT16)
        pe__store_f16(dst, src, n);
    else
        pe__store_bf16(dst, src, n);
}

pe_status pe_convert(void *dst, int32_t dst_dtype, const void *src, int32_t src_dtype, int64_t n) {
    // dst is (n,) of dst_dtype, src is (n,) of src_dtype; they must not overlap unless dst == src.
    if (dst_dtype < 0 || dst_dtype >= PE_DTYPE_COUNT || src_dtype < 0 || src_dtype >= PE_DTYPE_COUNT)
        return PE_ERR_FIELD_VALUE;
    if (n < 0 || (uint64_t)n > (uint64_t)(SIZE_MAX / sizeof(float))) return PE_ERR_SHAPE;
    if (n == 0) return PE_OK;
    if (!dst || !src) return PE_ERR_NULL;
    const size_t esz = src_dtype == PE_DTYPE_FLOAT32 ? 4 : 2;
    if (dst_dtype == src_dtype) { /* bits as they are: a signalling NaN is not quieted by a plain copy */
        if (dst != src) memmove(dst, src, (size_t)n * esz);
        return PE_OK;
    }
    for (int64_t i = 0; i < n; i += PE__CONVERT_CHUNK) {
        const int32_t m = (int32_t)(n - i < PE__CONVERT_CHUNK ? n - i : PE__CONVERT_CHUNK);
        if (src_dtype == PE_DTYPE_FLOAT32) {
            pe__narrow((uint16_t *)dst + i, (const float *)src + i, m, dst_dtype);
        } else if (dst_dtype == PE_DTYPE_FLOAT32) {
            pe__widen((float *)dst + i, (const uint16_t *)src + i, m, src_dtype);
        } else {
            float tmp[PE__CONVERT_CHUNK];
            pe__widen(tmp, (const uint16_t *)src + i, m, src_dtype);
            pe__narrow((uint16_t *)dst + i, tmp, m, dst_dtype);
        }
    }
    return PE_OK;
}
