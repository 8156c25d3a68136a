/* test_simd_ops.c — every pe_v128 operation of simd.h's native mapping against WebAssembly SIMD128's
 * definition of it, written here lane by lane from the spec (not from simd.h), on the values where ISAs
 * differ: NaN, ±0, ±inf, halves (rounding ties), the int32 saturation edges, shift counts past 31.
 *
 * Built with the SIMD variant's flags it checks the mapping that variant uses (SSE4.1 on x86-64); built as
 * the scalar variant (no PE_NATIVE_SIMD) it checks the portable-C mapping, so both mappings are tested. */
#if !defined(PE_NATIVE_SIMD) || !PE_NATIVE_SIMD
#undef PE_NATIVE_SIMD
#define PE_NATIVE_SIMD 1
#define PE_SIMD_PORTABLE 1
#endif
#include "../../c/src/simd.h"
#include "test_util.h"

#include <float.h>
#include <string.h>

#if !PE_SIMD
#error "simd.h gave no mapping for PE_NATIVE_SIMD=1"
#endif

static uint32_t fbits(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
static uint64_t dbits(double x) {
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}
static float bitsf(uint32_t u) {
    float x;
    memcpy(&x, &u, 4);
    return x;
}

typedef union {
    pe_v128 v;
    float f[4];
    int32_t i[4];
    uint32_t u[4];
    double d[2];
} lanes;
static lanes L(pe_v128 v) {
    lanes l;
    memcpy(&l, &v, 16);
    return l;
}
static pe_v128 V4f(const float *f) { return pe_f32x4_load(f); }
static pe_v128 V4i(const int32_t *i) { return pe_i32x4_load(i); }
static pe_v128 V2d(const double *d) { return pe_f64x2_load(d); }

/* same bits, or both NaN where wasm leaves the NaN's bits open (arithmetic, conversions) */
static int same_f(float got, float want) { return fbits(got) == fbits(want) || (got != got && want != want); }
static int same_d(double got, double want) { return dbits(got) == dbits(want) || (got != got && want != want); }

static const float F[] = {0.0f,      -0.0f,    1.0f,      -1.0f,          0.5f,        -0.5f,  1.5f,
                          2.5f,      -2.5f,    3.0e38f,   -3.0e38f,       FLT_MAX,     1e-45f, -1e-40f,
                          0x1p-126f, INFINITY, -INFINITY, 0x1.fffffep22f, 16777217.0f, 7.25f};
#define NF ((int)(sizeof F / sizeof F[0]))
static float fval(int k) { return k < NF ? F[k] : (k == NF ? bitsf(0x7fc00000u) : bitsf(0xffa00001u)); } /* + NaNs */
#define NFV (NF + 2)

static const double D[] = {0.0,           -0.0,          0.5,          -0.5,         1.5,
                           -1.5,          2.5,           -2.5,         3.5,          0x1p52 + 1,
                           -0x1p52 - 1,   0x1p53,        1e300,        -1e300,       INFINITY,
                           -INFINITY,     2147483647.0,  2147483647.5, 2147483648.0, -2147483648.0,
                           -2147483648.5, -2147483649.0, 1e-310,       123456.789,   -0.0000001};
#define ND ((int)(sizeof D / sizeof D[0]))
static double dval(int k) { return k < ND ? D[k] : (double)NAN; }
#define NDV (ND + 1)

static const int32_t I[] = {0, 1, -1, 2, 3, 4, 5, 127, INT32_MAX, INT32_MIN, INT32_MIN + 1, 0x3f800000, 123456789};
#define NI ((int)(sizeof I / sizeof I[0]))

/* ---- wasm's definitions, scalar ---- */
static float ref_max(float a, float b) {
    if (a != a || b != b) return bitsf(0x7fc00000u);
    if (a == 0.0f && b == 0.0f) return (fbits(a) & fbits(b)) ? a : bitsf(0); /* -0 only if both are -0 */
    return a > b ? a : b;
}
static float ref_pmax(float a, float b) { return a < b ? b : a; } /* wasm f32x4.pmax(a, b) */
static int32_t ref_trunc_sat(double x) {
    if (x != x) return 0;
    if (x >= 2147483648.0) return INT32_MAX;
    if (x < -2147483648.0) return INT32_MIN;
    return (int32_t)x;
}
static double ref_nearest(double x) { /* ties to even, sign of zero kept */
    if (!(fabs(x) < 0x1p52)) return x;
    double f = floor(x), d = x - f, r;
    if (d < 0.5)
        r = f;
    else if (d > 0.5)
        r = f + 1.0;
    else
        r = fmod(f, 2.0) == 0.0 ? f : f + 1.0;
    return r == 0.0 ? copysign(0.0, x) : r;
}

static void test_f32_binary(void) {
    int bad_arith = 0, bad_max = 0, bad_pmax = 0, bad_ge = 0;
    for (int a = 0; a < NFV; a++)
        for (int b0 = 0; b0 < NFV; b0 += 4) {
            float x[4], y[4];
            for (int l = 0; l < 4; l++) {
                x[l] = fval(a);
                y[l] = fval((b0 + l) % NFV);
            }
            lanes add = L(pe_f32x4_add(V4f(x), V4f(y))), sub = L(pe_f32x4_sub(V4f(x), V4f(y)));
            lanes mul = L(pe_f32x4_mul(V4f(x), V4f(y))), dv = L(pe_f32x4_div(V4f(x), V4f(y)));
            lanes mx = L(pe_f32x4_max(V4f(x), V4f(y))), pm = L(pe_f32x4_pmax(V4f(x), V4f(y)));
            lanes ge = L(pe_f32x4_ge(V4f(x), V4f(y)));
            for (int l = 0; l < 4; l++) {
                bad_arith += !same_f(add.f[l], x[l] + y[l]) + !same_f(sub.f[l], x[l] - y[l]) +
                             !same_f(mul.f[l], x[l] * y[l]) + !same_f(dv.f[l], x[l] / y[l]);
                bad_max += fbits(mx.f[l]) != fbits(ref_max(x[l], y[l]));
                /* pe_f32x4_pmax(a, b) is documented as b < a ? a : b, i.e. wasm pmax(b, a): bits exactly */
                bad_pmax += fbits(pm.f[l]) != fbits(ref_pmax(y[l], x[l]));
                bad_ge += ge.i[l] != (x[l] >= y[l] ? -1 : 0);
            }
        }
    CHECK(bad_arith == 0, "%d add/sub/mul/div lanes differ from IEEE float", bad_arith);
    CHECK(bad_max == 0, "%d f32x4_max lanes differ from wasm f32x4.max (NaN, -0 < +0)", bad_max);
    CHECK(bad_pmax == 0, "%d f32x4_pmax lanes differ from b < a ? a : b", bad_pmax);
    CHECK(bad_ge == 0, "%d f32x4_ge lanes wrong", bad_ge);
    /* the two cases that separate IEEE max from x86's maxps */
    lanes z = L(pe_f32x4_max(pe_f32x4_make(-0.0f, 0.0f, NAN, 1.0f), pe_f32x4_make(0.0f, -0.0f, 1.0f, NAN)));
    CHECK(fbits(z.f[0]) == 0 && fbits(z.f[1]) == 0, "max(-0, +0) = +0 both ways: %08x %08x", fbits(z.f[0]),
          fbits(z.f[1]));
    CHECK(z.f[2] != z.f[2] && z.f[3] != z.f[3], "max with NaN either side is NaN: %g %g", z.f[2], z.f[3]);
}

static void test_f32_reductions_and_shuffles(void) {
    pe_rng rng = {0x5eed5eedULL};
    int bad_sum = 0, bad_sum4 = 0, bad_hmax = 0, bad_shuf = 0;
    for (int it = 0; it < 2000; it++) {
        float a[4], b[4], c[4], d[4];
        for (int l = 0; l < 4; l++) {
            /* mostly random, with specials mixed in so the order of operations shows */
            a[l] = (it & 7) ? pe_rng_float(&rng) * 1e4f : fval(pe_rng_int(&rng, 0, NFV - 1));
            b[l] = (it & 3) ? pe_rng_float(&rng) : fval(pe_rng_int(&rng, 0, NFV - 1));
            c[l] = pe_rng_float(&rng) * 1e-3f;
            d[l] = (it & 5) ? pe_rng_float(&rng) * 1e7f : fval(pe_rng_int(&rng, 0, NFV - 1));
        }
        const float *rows[4] = {a, b, c, d};
        lanes s4 = L(pe_f32x4_sum4(V4f(a), V4f(b), V4f(c), V4f(d)));
        for (int r = 0; r < 4; r++) {
            const float *v = rows[r];
            const float want = (v[0] + v[2]) + (v[1] + v[3]);
            bad_sum += !same_f(pe_f32x4_sum(V4f(v)), want);
            bad_sum4 += !same_f(s4.f[r], want);
            /* wasm: m = pmax(v, [v2 v3 v0 v1]); m = pmax(m, [m1 m0 m3 m2]); lane 0 */
            const float m0 = ref_pmax(v[0], v[2]), m1 = ref_pmax(v[1], v[3]);
            bad_hmax += fbits(pe_f32x4_hmax(V4f(v))) != fbits(ref_pmax(m0, m1));
        }
        lanes ev = L(pe_f32x4_even(V4f(a), V4f(b))), od = L(pe_f32x4_odd(V4f(a), V4f(b)));
        lanes zl = L(pe_f32x4_zip_lo(V4f(a), V4f(b))), zh = L(pe_f32x4_zip_hi(V4f(a), V4f(b)));
        const float want_ev[4] = {a[0], a[2], b[0], b[2]}, want_od[4] = {a[1], a[3], b[1], b[3]};
        const float want_zl[4] = {a[0], b[0], a[1], b[1]}, want_zh[4] = {a[2], b[2], a[3], b[3]};
        for (int l = 0; l < 4; l++)
            bad_shuf += (fbits(ev.f[l]) != fbits(want_ev[l])) + (fbits(od.f[l]) != fbits(want_od[l])) +
                        (fbits(zl.f[l]) != fbits(want_zl[l])) + (fbits(zh.f[l]) != fbits(want_zh[l]));
    }
    CHECK(bad_sum == 0, "%d f32x4_sum results differ from (v0 + v2) + (v1 + v3)", bad_sum);
    CHECK(bad_sum4 == 0, "%d f32x4_sum4 lanes differ from (v0 + v2) + (v1 + v3)", bad_sum4);
    CHECK(bad_hmax == 0, "%d f32x4_hmax results differ from wasm's two pmax steps", bad_hmax);
    CHECK(bad_shuf == 0, "%d even/odd/zip lanes wrong", bad_shuf);
    lanes mk = L(pe_f32x4_make(1.0f, 2.0f, 3.0f, 4.0f));
    CHECK(mk.f[0] == 1.0f && mk.f[3] == 4.0f, "make: lane 0 first (%g %g)", mk.f[0], mk.f[3]);
    float st[6] = {9, 9, 9, 9, 9, 9};
    pe_f32x4_store(st + 1, pe_f32x4_splat(-2.0f));
    CHECK(st[0] == 9 && st[1] == -2 && st[4] == -2 && st[5] == 9, "store writes exactly 4 floats");
}

static void test_bits_and_i32(void) {
    int bad = 0;
    for (int a = 0; a < NI; a++)
        for (int b = 0; b < NI; b++) {
            int32_t x[4] = {I[a], I[b], I[(a + b) % NI], I[(a * 7 + 3) % NI]};
            int32_t y[4] = {I[b], I[a], I[(a * 3 + b) % NI], I[(b * 5 + 1) % NI]};
            int32_t m[4] = {-1, 0, 0x0f0f0f0f, (int32_t)0x80000000u};
            lanes an = L(pe_v128_and(V4i(x), V4i(y))), xo = L(pe_v128_xor(V4i(x), V4i(y)));
            lanes oR = L(pe_v128_or(V4i(x), V4i(y))), se = L(pe_v128_select(V4i(x), V4i(y), V4i(m)));
            lanes ad = L(pe_i32x4_add(V4i(x), V4i(y))), sb = L(pe_i32x4_sub(V4i(x), V4i(y)));
            lanes eq = L(pe_i32x4_eq(V4i(x), V4i(y))), gt = L(pe_i32x4_gt(V4i(x), V4i(y)));
            lanes ge = L(pe_i32x4_ge(V4i(x), V4i(y))), cv = L(pe_f32x4_from_i32x4(V4i(x)));
            for (int l = 0; l < 4; l++) {
                const uint32_t ux = (uint32_t)x[l], uy = (uint32_t)y[l], um = (uint32_t)m[l];
                bad += an.u[l] != (ux & uy);
                bad += xo.u[l] != (ux ^ uy);
                bad += oR.u[l] != (ux | uy);
                bad += se.u[l] != ((ux & um) | (uy & ~um)); /* bitwise, not by the top bit */
                bad += ad.u[l] != ux + uy;
                bad += sb.u[l] != ux - uy;
                bad += eq.i[l] != (x[l] == y[l] ? -1 : 0);
                bad += gt.i[l] != (x[l] > y[l] ? -1 : 0);
                bad += ge.i[l] != (x[l] >= y[l] ? -1 : 0);
                bad += fbits(cv.f[l]) != fbits((float)x[l]);
            }
            static const int counts[] = {0, 1, 23, 30, 31, 32, 33, 62};
            for (int c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++) {
                lanes sh = L(pe_i32x4_shl(V4i(x), counts[c]));
                for (int l = 0; l < 4; l++) bad += sh.u[l] != (uint32_t)x[l] << (counts[c] & 31); /* count mod 32 */
            }
        }
    CHECK(bad == 0, "%d i32x4 / bitwise lanes wrong", bad);
    lanes mk = L(pe_i32x4_make(1, 2, 3, 4)), sp = L(pe_i32x4_splat(-7));
    CHECK(mk.i[0] == 1 && mk.i[1] == 2 && mk.i[2] == 3 && mk.i[3] == 4, "i32x4_make lane order");
    CHECK(sp.i[0] == -7 && sp.i[3] == -7, "i32x4_splat");
}

static void test_f64(void) {
    int bad_arith = 0, bad_round = 0, bad_conv = 0, bad_eq = 0;
    for (int a = 0; a < NDV; a++)
        for (int b = 0; b < NDV; b++) {
            const double x[2] = {dval(a), dval(b)}, y[2] = {dval(b), dval((a + b) % NDV)};
            lanes ad = L(pe_f64x2_add(V2d(x), V2d(y))), sb = L(pe_f64x2_sub(V2d(x), V2d(y)));
            lanes mu = L(pe_f64x2_mul(V2d(x), V2d(y))), dv = L(pe_f64x2_div(V2d(x), V2d(y)));
            lanes ng = L(pe_f64x2_neg(V2d(x))), eq = L(pe_f64x2_eq(V2d(x), V2d(y)));
            lanes fl = L(pe_f64x2_floor(V2d(x))), nr = L(pe_f64x2_nearest(V2d(x)));
            lanes dm = L(pe_f64x2_demote_pair(V2d(x), V2d(y))), ti = L(pe_f64x2_to_i32_pair(V2d(x), V2d(y)));
            for (int l = 0; l < 2; l++) {
                bad_arith += !same_d(ad.d[l], x[l] + y[l]) + !same_d(sb.d[l], x[l] - y[l]) +
                             !same_d(mu.d[l], x[l] * y[l]) + !same_d(dv.d[l], x[l] / y[l]);
                bad_arith += dbits(ng.d[l]) != (dbits(x[l]) ^ 0x8000000000000000ULL); /* a sign flip, NaN too */
                bad_eq += eq.i[2 * l] != (x[l] == y[l] ? -1 : 0) || eq.i[2 * l + 1] != eq.i[2 * l];
                bad_round += !same_d(fl.d[l], floor(x[l])) + !same_d(nr.d[l], ref_nearest(x[l]));
                bad_conv += !same_f(dm.f[l], (float)x[l]) + !same_f(dm.f[2 + l], (float)y[l]);
                bad_conv += (ti.i[l] != ref_trunc_sat(x[l])) + (ti.i[2 + l] != ref_trunc_sat(y[l]));
            }
        }
    CHECK(bad_arith == 0, "%d f64x2 add/sub/mul/div/neg lanes wrong", bad_arith);
    CHECK(bad_eq == 0, "%d f64x2_eq lanes wrong", bad_eq);
    CHECK(bad_round == 0, "%d f64x2 floor/nearest lanes differ (ties to even, sign of zero)", bad_round);
    CHECK(bad_conv == 0, "%d demote / saturating truncation lanes differ from wasm", bad_conv);
    lanes t = L(pe_f64x2_to_i32_pair(pe_f64x2_make(NAN, 3e9), pe_f64x2_make(-3e9, -2.9)));
    CHECK(t.i[0] == 0 && t.i[1] == INT32_MAX && t.i[2] == INT32_MIN && t.i[3] == -2,
          "trunc_sat(NaN, 3e9, -3e9, -2.9) = 0, INT32_MAX, INT32_MIN, -2, got %d %d %d %d", t.i[0], t.i[1], t.i[2],
          t.i[3]);
    lanes n = L(pe_f64x2_nearest(pe_f64x2_make(2.5, -0.5)));
    CHECK(n.d[0] == 2.0 && dbits(n.d[1]) == dbits(-0.0), "nearest(2.5, -0.5) = 2, -0: %g %g", n.d[0], n.d[1]);
    lanes s = L(pe_f64x2_splat(0.25));
    CHECK(s.d[0] == 0.25 && s.d[1] == 0.25, "f64x2_splat");
    /* low_words: the low half of each double's bits, lanes in order; on k + 1.5 * 2^52 that is k mod 2^32 */
    int bad_words = 0;
    for (int a = 0; a < NDV; a++) {
        const double x[2] = {dval(a), dval((a + 3) % NDV)}, y[2] = {dval((a + 5) % NDV), 0x1.8p52 - 3.0};
        lanes w = L(pe_f64x2_low_words(V2d(x), V2d(y)));
        for (int l = 0; l < 2; l++)
            bad_words += (w.u[l] != (uint32_t)dbits(x[l])) + (w.u[2 + l] != (uint32_t)dbits(y[l]));
    }
    CHECK(bad_words == 0, "%d f64x2_low_words lanes wrong", bad_words);
    lanes k = L(pe_f64x2_low_words(pe_f64x2_make(0x1.8p52 + 6.0, 0x1.8p52 - 1.0), pe_f64x2_splat(0x1.8p52 + 0x1p32)));
    CHECK(k.u[0] == 6 && k.u[1] == UINT32_MAX && k.u[2] == 0 && k.u[3] == 0,
          "low_words(M + 6, M - 1, M + 2^32) = 6, -1, 0");
    int32_t stored[4];
    pe_i32x4_store(stored, pe_i32x4_make(5, -6, 7, INT32_MIN));
    CHECK(stored[0] == 5 && stored[1] == -6 && stored[2] == 7 && stored[3] == INT32_MIN, "i32x4_store lane order");
}

int main(void) {
    printf("simd.h mapping under test: %s\n", PE_SIMD_ISA);
    test_f32_binary();
    test_f32_reductions_and_shuffles();
    test_bits_and_i32();
    test_f64();
    return pe_test_report("test_simd_ops");
}
