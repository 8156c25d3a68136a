/* test_simd_bits_ops.c — every operation of simd_bits.h's native mapping against WebAssembly SIMD128's
 * definition of it, written here lane by lane from the spec, on the values where ISAs differ or edges sit:
 * sign bits, INT32/INT16 extremes, shift counts past the lane width, NaN and ±0 for the float compare.
 *
 * As test_simd_ops.c: built with the SIMD variant's flags it checks that variant's mapping (SSE4.1 on x86-64);
 * built as the scalar variant it checks the portable-C mapping. */
#if !defined(PE_NATIVE_SIMD) || !PE_NATIVE_SIMD
#undef PE_NATIVE_SIMD
#define PE_NATIVE_SIMD 1
#define PE_SIMD_PORTABLE 1
#endif
#include "../../c/src/simd_bits.h"
#include "test_util.h"

#include <string.h>

#if !PE_SIMD
#error "simd.h gave no mapping for PE_NATIVE_SIMD=1"
#endif

static const uint32_t U[] = {0,          1,          2,          0x7fff,     0x8000,     0xffff,     0x10000,
                             0x7fffffff, 0x80000000, 0x80000001, 0xffffffff, 0x3f800000, 0x7f800000, 0x7fc00000,
                             0xff800000, 0x00800000, 0x47800000, 0x38800000, 0x12345678, 0xfedcba98, 0x00018000};
#define NU ((int)(sizeof U / sizeof U[0]))

static pe_v128 v_u32(const uint32_t u[4]) {
    pe_v128 v;
    memcpy(&v, u, 16);
    return v;
}
static void u32_of(pe_v128 v, uint32_t u[4]) { memcpy(u, &v, 16); }
static void u16_of(pe_v128 v, uint16_t h[8]) { memcpy(h, &v, 16); }
static float f_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static int16_t s16(uint16_t h) { return (int16_t)(h >= 0x8000 ? (int32_t)h - 65536 : (int32_t)h); }
static uint16_t sat16(int64_t x) { return (uint16_t)(x < -32768 ? 0x8000 : x > 32767 ? 0x7fff : (x & 0xffff)); }

int main(void) {
    long bad = 0;
    for (int a0 = 0; a0 < NU; a0++)
        for (int b0 = 0; b0 < NU; b0++) {
            uint32_t a[4], b[4], r[4];
            for (int l = 0; l < 4; l++) a[l] = U[(a0 + l) % NU], b[l] = U[(b0 + 3 * l) % NU];
            const pe_v128 va = v_u32(a), vb = v_u32(b);
            uint16_t ah[8], bh[8], rh[8];
            memcpy(ah, a, 16);
            memcpy(bh, b, 16);

            u32_of(pe_u32x4_min(va, vb), r);
            for (int l = 0; l < 4; l++) bad += r[l] != (a[l] < b[l] ? a[l] : b[l]);
            u32_of(pe_u32x4_max(va, vb), r);
            for (int l = 0; l < 4; l++) bad += r[l] != (a[l] > b[l] ? a[l] : b[l]);
            u32_of(pe_f32x4_ne(va, vb), r);
            for (int l = 0; l < 4; l++) bad += r[l] != (f_of(a[l]) != f_of(b[l]) ? 0xffffffffu : 0u);
            u32_of(pe_i32x4_dot_i16x8(va, vb), r);
            for (int l = 0; l < 4; l++) {
                const int64_t d =
                    (int64_t)s16(ah[2 * l]) * s16(bh[2 * l]) + (int64_t)s16(ah[2 * l + 1]) * s16(bh[2 * l + 1]);
                bad += r[l] != (uint32_t)(d & 0xffffffff); /* wraps only for (-32768)^2 * 2 */
            }
            u16_of(pe_i16x8_eq(va, vb), rh);
            for (int l = 0; l < 8; l++) bad += rh[l] != (ah[l] == bh[l] ? 0xffff : 0);
            u16_of(pe_i16x8_add(va, vb), rh);
            for (int l = 0; l < 8; l++) bad += rh[l] != (uint16_t)(ah[l] + bh[l]);
            u16_of(pe_u16x8_max(va, vb), rh);
            for (int l = 0; l < 8; l++) bad += rh[l] != (ah[l] > bh[l] ? ah[l] : bh[l]);
            u16_of(pe_u16x8_zip_lo(va, vb), rh);
            for (int l = 0; l < 8; l++) bad += rh[l] != ((l & 1) ? bh[l >> 1] : ah[l >> 1]);
            u16_of(pe_u16x8_zip_hi(va, vb), rh);
            for (int l = 0; l < 8; l++) bad += rh[l] != ((l & 1) ? bh[4 + (l >> 1)] : ah[4 + (l >> 1)]);
            u16_of(pe_i16x8_narrow_i32x4(va, vb), rh);
            for (int l = 0; l < 4; l++) bad += rh[l] != sat16((int32_t)a[l]) || rh[l + 4] != sat16((int32_t)b[l]);
            {
                int want = 0;
                const unsigned char *c = (const unsigned char *)a;
                for (int k = 0; k < 16; k++) want |= (c[k] >> 7) << k;
                bad += pe_i8x16_bitmask(va) != want;
            }
            for (int n = 0; n < 40; n += 3) { /* counts past the lane width wrap (mod 32 / mod 16) */
                u32_of(pe_i32x4_shr(va, n), r);
                for (int l = 0; l < 4; l++) {
                    const int64_t q = (int64_t)(int32_t)a[l]; /* floor(x / 2^k) is the arithmetic shift */
                    const int64_t d = (int64_t)1 << (n & 31);
                    const int64_t fl = q >= 0 ? q / d : -((-q + d - 1) / d);
                    bad += r[l] != (uint32_t)(fl & 0xffffffff);
                }
                u16_of(pe_i16x8_shl(va, n), rh);
                for (int l = 0; l < 8; l++) bad += rh[l] != (uint16_t)(ah[l] << (n & 15));
                u16_of(pe_i16x8_shr(va, n), rh);
                for (int l = 0; l < 8; l++) {
                    const int32_t q = s16(ah[l]), d = 1 << (n & 15);
                    const int32_t fl = q >= 0 ? q / d : -((-q + d - 1) / d);
                    bad += rh[l] != (uint16_t)(fl & 0xffff);
                }
            }
        }
    {
        uint16_t h[8];
        u16_of(pe_i16x8_splat((int16_t)-2), h);
        for (int l = 0; l < 8; l++) bad += h[l] != 0xfffe;
        /* NaN != NaN, -0 == +0 */
        uint32_t r[4];
        const uint32_t x[4] = {0x7fc00000, 0x80000000, 0x7f800000, 0xffc00001}, y[4] = {0x7fc00000, 0, 0x7f800000, 0};
        u32_of(pe_f32x4_ne(v_u32(x), v_u32(y)), r);
        bad += r[0] != 0xffffffffu || r[1] != 0 || r[2] != 0 || r[3] != 0xffffffffu;
    }
    CHECK(bad == 0, "%ld lanes differ from the wasm definitions (%s)", bad, PE_SIMD_ISA);
    printf("simd_bits.h: every operation matches its wasm definition (%s)\n", PE_SIMD_ISA);
    return pe_test_report("test_simd_bits_ops");
}
