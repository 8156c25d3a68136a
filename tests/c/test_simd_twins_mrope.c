/* test_simd_twins_mrope.c — the SIMD and scalar builds give the same M-RoPE and 2D RoPE tables bit for bit
 * (linked like test_simd_twins.c: simd_<name> is the SIMD build's function). Random configs, sections
 * (both layouts), positions up to INT32_MAX and row counts that meet the 4-wide loop's tail. */
#include "posenc.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define SIMD_TWIN(name) extern __typeof__(name) simd_##name
SIMD_TWIN(pe_rope_init);
SIMD_TWIN(pe_mrope_cos_sin);
SIMD_TWIN(pe_rope2d_cos_sin);

enum {
    MAX_ROWS = 37
};
static float c_a[MAX_ROWS * PE_ROPE_MAX_FREQ], s_a[MAX_ROWS * PE_ROPE_MAX_FREQ];
static float c_b[MAX_ROWS * PE_ROPE_MAX_FREQ], s_b[MAX_ROWS * PE_ROPE_MAX_FREQ];

int main(void) {
    pe_rng rng = {0x7a115u};
    for (int trial = 0; trial < 400; trial++) {
        pe_rope_config cfg = {0};
        cfg.head_dim = 2 * pe_rng_int(&rng, 1, pe_rng_int(&rng, 0, 3) ? 70 : 512);
        int two_d = pe_rng_int(&rng, 0, 2) == 0;
        int32_t kind = pe_rng_int(&rng, 0, PE_ROPE2D_KIND_COUNT - 1);
        /* Pixtral takes any even head_dim, the others multiples of 4 */
        if (two_d && kind != PE_ROPE2D_PIXTRAL)
            cfg.head_dim = 4 * ((cfg.head_dim + 3) / 4) > PE_ROPE_MAX_HEAD_DIM ? 1024 : 4 * ((cfg.head_dim + 3) / 4);
        if (two_d) {
            cfg.pairing = kind == PE_ROPE2D_LLAMA4;
        } else {
            if (pe_rng_int(&rng, 0, 2) == 0) cfg.rotary_dim = 2 * pe_rng_int(&rng, 1, cfg.head_dim / 2);
            cfg.base = pe_rng_int(&rng, 0, 1) ? 1e6 : 5e6;
            int t = pe_rng_int(&rng, 0, 2);
            if (t == 1) cfg.type = PE_ROPE_YARN, cfg.factor = 4, cfg.original_max_position_embeddings = 32768;
            if (t == 2) cfg.type = PE_ROPE_DYNAMIC, cfg.factor = 2, cfg.max_position_embeddings = 4096;
        }
        pe_rope ra, rb;
        CHECK_STATUS(pe_rope_init(&ra, &cfg), PE_OK);
        CHECK_STATUS(simd_pe_rope_init(&rb, &cfg), PE_OK);
        int32_t n = ra.n_freq, rows = pe_rng_int(&rng, 1, MAX_ROWS);
        int32_t pos[3 * MAX_ROWS];
        for (int32_t i = 0; i < 3 * rows; i++) pos[i] = random_position(&rng);
        pe_status sa, sb;
        if (two_d) {
            sa = pe_rope2d_cos_sin(c_a, s_a, &ra, kind, pos, rows);
            sb = simd_pe_rope2d_cos_sin(c_b, s_b, &rb, kind, pos, rows);
        } else {
            int32_t s0 = pe_rng_int(&rng, 0, n), s1 = pe_rng_int(&rng, 0, n - s0);
            pe_mrope_config m = {{s0, s1, n - s0 - s1}, pe_rng_int(&rng, 0, 1)};
            sa = pe_mrope_cos_sin(c_a, s_a, &ra, &m, pos, rows, PE_SEQ_LEN_FROM_POSITIONS, 1.0);
            sb = simd_pe_mrope_cos_sin(c_b, s_b, &rb, &m, pos, rows, PE_SEQ_LEN_FROM_POSITIONS, 1.0);
        }
        CHECK(sa == PE_OK && sb == PE_OK, "trial %d: status %d / %d", trial, (int)sa, (int)sb);
        size_t bytes = (size_t)rows * n * sizeof(float);
        CHECK(memcmp(c_a, c_b, bytes) == 0 && memcmp(s_a, s_b, bytes) == 0, "trial %d (%s, head_dim %d): tables differ",
              trial, two_d ? "2d" : "mrope", cfg.head_dim);
    }
    return pe_test_report("test_simd_twins_mrope");
}
