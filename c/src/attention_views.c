/* attention_views.c — pe_attention's configuration: the checks of pe_attention_config (heads, shapes,
 * layout, scale, bias broadcast, rope), every size in 64-bit arithmetic (q, k, out, weights, bias, scratch),
 * the q/k/v/out views (strides, offsets, furthest element, no overlapping out heads), and the gather of a view
 * into a dense copy for RoPE, and the 16-bit conversions of rows. Kept apart from the kernels: nothing here runs
 * per element of a score or PV step.
 */
#include "attention_internal.h"
#include "f16.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* *out = a * b, failing past limit (both operands >= 0) */
static int pe__mul(uint64_t *out, uint64_t a, uint64_t b, uint64_t limit) {
    if (a != 0 && b > limit / a) return 0;
    *out = a * b;
    return 1;
}

/* Resolves one view (0 strides -> dense for the layout, head size hd) and checks that its furthest element
 * (offset + Σ (count − 1) · stride + hd) is addressable, in 64-bit arithmetic; with no_overlap, also that no
 * two head vectors overlap: the axes of more than one element, sorted by stride, nest (the smallest stride
 * >= hd, each next one >= the previous stride times its count). */
static pe_status pe__resolve_view(pe__view *vw, const pe_strides *st, int64_t offset, int bhsd, int64_t B, int64_t S,
                                  int64_t H, int64_t hd, int no_overlap, uint64_t lim) {
    if (st->batch < 0 || st->seq < 0 || st->heads < 0 || offset < 0) return PE_ERR_SHAPE;
    uint64_t sh_d, sbd;
    if (!pe__mul(&sh_d, (uint64_t)S, (uint64_t)H, lim) || !pe__mul(&sbd, sh_d, (uint64_t)hd, lim)) return PE_ERR_SHAPE;
    const int64_t sb = st->batch ? st->batch : (int64_t)sbd;
    const int64_t ss = st->seq ? st->seq : (bhsd ? hd : H * hd);
    const int64_t sh = st->heads ? st->heads : (bhsd ? S * hd : hd);
    const int64_t counts[3] = {B, S, H}, strides[3] = {sb, ss, sh};
    if (B == 0 || S == 0) { /* nothing is read or written */
        vw->off = 0, vw->sb = vw->ss = vw->sh = 0;
        return PE_OK;
    }
    uint64_t end = (uint64_t)hd;
    if ((uint64_t)offset > lim - end) return PE_ERR_SHAPE;
    end += (uint64_t)offset;
    for (int a = 0; a < 3; a++) {
        uint64_t span;
        if (!pe__mul(&span, (uint64_t)(counts[a] - 1), (uint64_t)strides[a], lim) || span > lim - end)
            return PE_ERR_SHAPE;
        end += span;
    }
    if (no_overlap) {
        int64_t cs[3][2];
        int m = 0;
        for (int a = 0; a < 3; a++)
            if (counts[a] > 1) cs[m][0] = strides[a], cs[m][1] = counts[a], m++;
        for (int i = 1; i < m; i++)
            for (int j = i; j > 0 && cs[j][0] < cs[j - 1][0]; j--) {
                const int64_t t0 = cs[j][0], t1 = cs[j][1];
                cs[j][0] = cs[j - 1][0], cs[j][1] = cs[j - 1][1];
                cs[j - 1][0] = t0, cs[j - 1][1] = t1;
            }
        int64_t need = hd;
        for (int i = 0; i < m; i++) {
            if (cs[i][0] < need) return PE_ERR_SHAPE;
            need = cs[i][0] * cs[i][1]; /* <= end: no overflow */
        }
    }
    vw->off = (size_t)offset, vw->sb = (size_t)sb, vw->ss = (size_t)ss, vw->sh = (size_t)sh;
    return PE_OK;
}

pe_status pe__attn_resolve(pe__attn *A, const pe_attention_config *cfg) {
    if (!cfg) return PE_ERR_NULL;
    memset(A, 0, sizeof *A);
    A->B = cfg->batch;
    A->H = cfg->heads;
    A->KVH = cfg->kv_heads == 0 ? cfg->heads : cfg->kv_heads;
    A->Sq = cfg->q_len;
    A->Sk = cfg->k_len;
    A->D = cfg->head_dim;
    A->Dv = cfg->v_head_dim == 0 ? cfg->head_dim : cfg->v_head_dim;
    if (A->H < 1 || A->KVH < 1 || A->H % A->KVH != 0) return PE_ERR_HEADS;
    A->group = A->H / A->KVH;
    if (A->B < 0 || A->Sq < 0 || A->Sk < 0 || A->D < 1 || A->Dv < 1) return PE_ERR_SHAPE;
    if (cfg->layout != PE_LAYOUT_BSHD && cfg->layout != PE_LAYOUT_BHSD) return PE_ERR_LAYOUT;
    A->causal = cfg->causal != 0;
    A->scale = cfg->scale == 0.0f ? (float)(1.0 / sqrt((double)A->D)) : cfg->scale;
    if (!isfinite(A->scale)) return PE_ERR_SCALE;
    A->slopes = cfg->alibi_slopes;
    A->rope = cfg->rope;
    A->qpos = cfg->q_positions;
    A->kpos = cfg->k_positions;
    A->per_batch = cfg->per_batch_positions != 0;
    A->k_rotated = cfg->k_rotated != 0;
    A->kmask = cfg->key_mask;
    A->bias = cfg->bias;
    A->bias_b = cfg->bias_batch == 0 ? 1 : cfg->bias_batch;
    A->bias_h = cfg->bias_heads == 0 ? 1 : cfg->bias_heads;
    A->bias_q = cfg->bias_q_len == 0 ? A->Sq : cfg->bias_q_len;
    if (A->bias && ((A->bias_b != 1 && A->bias_b != A->B) || (A->bias_h != 1 && A->bias_h != A->H) ||
                    (A->bias_q != 1 && A->bias_q != A->Sq)))
        return PE_ERR_SHAPE;
    A->qscale = cfg->q_scale;
    A->qscale_pb = cfg->q_scale_per_batch != 0;
    if (cfg->rope_seq_len < 0) return PE_ERR_SEQ_LEN;
    if (cfg->dtype < 0 || cfg->dtype >= PE_DTYPE_COUNT) return PE_ERR_FIELD_VALUE;
    const int half = cfg->dtype != PE_DTYPE_FLOAT32;
    A->bf16 = cfg->dtype == PE_DTYPE_BFLOAT16;
    A->q16 = half && !A->rope; /* with rope, q and k are rotated into float32 copies (rounded to the type) */
    A->k16 = half && (!A->rope || A->k_rotated);
    A->v16 = A->o16 = half;
    if (A->rope) {
        const pe_rope *r = A->rope;
        if (r->config.head_dim != A->D) return PE_ERR_SHAPE;
        if (r->n_freq < 1 || r->n_freq > PE_ROPE_MAX_FREQ || 2 * r->n_freq > A->D) return PE_ERR_FIELD_VALUE;
    }

    /* Sizes: everything must be addressable with size_t (wasm32: 4 GiB of floats at most). */
    const uint64_t lim = (uint64_t)(SIZE_MAX / sizeof(float));
    uint64_t t, nq, nk, nw, ns;
    A->w_too_large = 0;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->H, lim) || !pe__mul(&t, t, (uint64_t)A->Sq, lim) ||
        !pe__mul(&nq, t, (uint64_t)A->D, lim) || !pe__mul(&t, t, (uint64_t)A->Dv, lim))
        return PE_ERR_SHAPE;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->KVH, lim) || !pe__mul(&t, t, (uint64_t)A->Sk, lim) ||
        !pe__mul(&nk, t, (uint64_t)A->D, lim) || !pe__mul(&t, t, (uint64_t)A->Dv, lim))
        return PE_ERR_SHAPE;
    if (!pe__mul(&t, (uint64_t)A->B, (uint64_t)A->H, lim) || !pe__mul(&t, t, (uint64_t)A->Sq, lim) ||
        !pe__mul(&nw, t, (uint64_t)A->Sk, lim))
        A->w_too_large = 1; /* refused only when weights are requested */
    if (A->bias && (!pe__mul(&t, (uint64_t)A->bias_b, (uint64_t)A->bias_h, lim) ||
                    !pe__mul(&t, t, (uint64_t)A->bias_q, lim) || !pe__mul(&t, t, (uint64_t)A->Sk, lim)))
        return PE_ERR_SHAPE;
    ns = 0;
    if (A->rope && nq > 0) { /* an empty call (batch or q_len 0) needs no scratch */
        /* dense rotated q and k, then cos and sin rows: one per position, or per (batch, position) */
        const uint64_t nkr = A->k_rotated ? 0u : nk;
        const uint64_t qrows = (uint64_t)A->Sq * (A->qpos && A->per_batch ? (uint64_t)A->B : 1u);
        const uint64_t krows = A->k_rotated ? 0u : (uint64_t)A->Sk * (A->kpos && A->per_batch ? (uint64_t)A->B : 1u);
        ns = nq + nkr;
        uint64_t tab;
        if (ns > lim || !pe__mul(&tab, qrows + krows, 2u * (uint64_t)A->rope->n_freq, lim) || tab > lim - ns)
            return PE_ERR_SHAPE;
        ns += tab;
    }
    A->n_rope = (size_t)ns;
    if (half && nq > 0) {
        /* 16-bit storage: a block's q rows and out rows, a tile's k and v rows, widened to float32 */
        const uint64_t rows = (uint64_t)A->group * (uint64_t)A->Sq;
        A->qb_rows = rows < PE__QB ? (int32_t)rows : PE__QB;
        A->kb_keys = A->Sk < PE__KB_MAX ? A->Sk : PE__KB_MAX;
        const uint64_t qb = (uint64_t)A->qb_rows, kb = (uint64_t)A->kb_keys;
        const uint64_t D = (uint64_t)A->D, Dv = (uint64_t)A->Dv;
        uint64_t parts[4] = {A->q16 ? qb : 0u, qb, A->k16 ? kb : 0u, kb}, dims[4] = {D, Dv, D, Dv};
        for (int i = 0; i < 4; i++) {
            if (!pe__mul(&t, parts[i], dims[i], lim) || t > lim - ns) return PE_ERR_SHAPE;
            ns += t;
        }
    }
    A->n_q = (size_t)nq;
    A->n_k = (size_t)nk;
    A->n_scratch = (size_t)ns;

    const int bhsd = cfg->layout == PE_LAYOUT_BHSD;
    pe_status st;
    if ((st = pe__resolve_view(&A->q, &cfg->q_strides, cfg->q_offset, bhsd, A->B, A->Sq, A->H, A->D, 0, lim)) !=
            PE_OK ||
        (st = pe__resolve_view(&A->o, &cfg->out_strides, cfg->out_offset, bhsd, A->B, A->Sq, A->H, A->Dv, 1, lim)) !=
            PE_OK ||
        (st = pe__resolve_view(&A->k, &cfg->k_strides, cfg->k_offset, bhsd, A->B, A->Sk, A->KVH, A->D, 0, lim)) !=
            PE_OK ||
        (st = pe__resolve_view(&A->v, &cfg->v_strides, cfg->v_offset, bhsd, A->B, A->Sk, A->KVH, A->Dv, 0, lim)) !=
            PE_OK)
        return st;
    return PE_OK;
}

pe_status pe_attention_scratch_size(size_t *n_floats, const pe_attention_config *cfg) {
    if (!n_floats) return PE_ERR_NULL;
    pe__attn A;
    pe_status st = pe__attn_resolve(&A, cfg);
    if (st != PE_OK) return st;
    *n_floats = A.n_scratch;
    return PE_OK;
}

/* Copies the view x (B, S, H head vectors of D elements of pe_dtype dtype) into the float32 dense[] laid out as
 * layout says (16-bit elements widened exactly). */
void pe__gather(float *dense, const void *x, const pe__view *vw, int32_t B, int32_t S, int32_t H, int32_t D, int bhsd,
                int dtype) {
    for (int32_t b = 0; b < B; b++)
        for (int32_t s = 0; s < S; s++)
            for (int32_t h = 0; h < H; h++) {
                const size_t di = bhsd ? (((size_t)b * H + h) * S + s) * D : (((size_t)b * S + s) * H + h) * D;
                const size_t si = vw->off + b * vw->sb + s * vw->ss + h * vw->sh;
                if (dtype == PE_DTYPE_FLOAT32)
                    memcpy(dense + di, (const float *)x + si, sizeof(float) * (size_t)D);
                else
                    pe__widen16(dense + di, (const uint16_t *)x + si, D, dtype == PE_DTYPE_BFLOAT16);
            }
}

void pe__widen16(float *dst, const uint16_t *src, int32_t n, int bf16) {
    if (bf16)
        pe__load_bf16(dst, src, n);
    else
        pe__load_f16(dst, src, n);
}

void pe__narrow16(uint16_t *dst, const float *src, int32_t n, int bf16) {
    if (bf16)
        pe__store_bf16(dst, src, n);
    else
        pe__store_f16(dst, src, n);
}

void pe__round16(float *x, size_t n, int bf16) {
    uint16_t h[256];
    for (size_t i = 0; i < n; i += 256) {
        const int32_t m = n - i < 256 ? (int32_t)(n - i) : 256;
        pe__narrow16(h, x + i, m, bf16);
        pe__widen16(x + i, h, m, bf16);
    }
}

/* The dense view of the layout (for rope's copies). */
pe__view pe__dense_view(int bhsd, int32_t S, int32_t H, int32_t D) {
    pe__view vw = {0, (size_t)S * H * D, bhsd ? (size_t)D : (size_t)H * D, bhsd ? (size_t)S * D : (size_t)D};
    return vw;
}
