/* rope2d.c — 2D RoPE cos/sin tables of vision encoders: each patch turns half of its pairs by one coordinate
 * and the other half by the other (Pixtral, the Qwen2-VL vision tower, Llama 4's vision encoder).
 *
 * All three take their frequencies from the rope's default inverse frequencies theta_i = base^(-2i/D),
 * D = head_dim, with q = D/4 pairs per coordinate:
 *   Pixtral      pair j < q: a * theta_2j      pair q + j: b * theta_(2j+1)   (rows on the even, columns on the odd;
 *                q = ceil(D/4), so any even D works)
 *   Qwen2-VL     pair j < q: a * theta_2j      pair q + j: b * theta_2j       (VisionRotaryEmbedding(D/2): base^(-2j/(D/2)))
 *   Llama 4      the same frequencies as Qwen2-VL (its rope_freq over D/2), adjacent pairs
 * where a and b are the two position streams (see posenc.h for what each model puts there). The rows are
 * ordinary pe_rope tables (n_freq = D/2), so pe_rope_apply rotates with them unchanged.
 */
#include "posenc.h"
#include "pe_math.h"
#include "rope_internal.h"

#include <math.h>

pe_status pe_rope2d_cos_sin(float *cos, float *sin, const pe_rope *rope, int32_t kind, const int32_t *positions,
                            int32_t n_positions) {
    if (!rope) return PE_ERR_NULL;
    if (kind < 0 || kind >= PE_ROPE2D_KIND_COUNT) return PE_ERR_FIELD_VALUE;
    /* the frequencies are read off the default set over the whole head */
    if (rope->config.type != PE_ROPE_DEFAULT || rope->rot_dim != rope->config.head_dim) return PE_ERR_ROPE_TYPE;
    /* Pixtral splits the D/2 frequencies into evens and odds, which needs no particular size (an odd D/2 gives
     * the rows one pair more); the others take D/4 frequencies per coordinate */
    if (kind != PE_ROPE2D_PIXTRAL && rope->config.head_dim % 4 != 0) return PE_ERR_HEAD_DIM;
    const int32_t want_pairing = kind == PE_ROPE2D_LLAMA4 ? PE_PAIRING_INTERLEAVED : PE_PAIRING_HALF;
    if (rope->config.pairing != want_pairing) return PE_ERR_PAIRING;
    if (n_positions < 0) return PE_ERR_SHAPE;
    if (n_positions == 0) return PE_OK;
    if (!cos || !sin || !positions) return PE_ERR_NULL;

    const int32_t n = rope->n_freq, q = kind == PE_ROPE2D_PIXTRAL ? (n + 1) / 2 : n / 2; /* pairs on stream a */
    if (!pe__floats_fit3(2, n_positions, 1) || !pe__floats_fit3(n_positions, n, 1)) return PE_ERR_SHAPE;
    int32_t max_position = 0;
    pe_status st = pe_positions_max(&max_position, positions, 2 * n_positions);
    if (st != PE_OK) return st;
    const double scale_d = rope->attention_scaling;
    if (!(fabs(scale_d) <= PE_ROPE_MAX_SCALE)) return PE_ERR_SCALE;
    const float scale = (float)scale_d;

    double freq[PE_ROPE_MAX_FREQ];
    for (int32_t j = 0; j < q; j++) freq[j] = rope->inv_freq[2 * j];
    for (int32_t j = q; j < n; j++)
        freq[j] = kind == PE_ROPE2D_PIXTRAL ? rope->inv_freq[2 * (j - q) + 1] : rope->inv_freq[2 * (j - q)];
    const int32_t *a = positions, *b = positions + n_positions;
    double pair_pos[PE_ROPE_MAX_FREQ];
    for (int32_t p = 0; p < n_positions; p++) {
        for (int32_t j = 0; j < q; j++) pair_pos[j] = (double)a[p];
        for (int32_t j = q; j < n; j++) pair_pos[j] = (double)b[p];
        pe__rope_cos_sin_row_pairs(cos + (size_t)p * n, sin + (size_t)p * n, pair_pos, freq, n, scale);
    }
    return PE_OK;
}
