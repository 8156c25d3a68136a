/* rope_apply.c — RoPE in-place rotation of head vectors by a cos/sin table (Su et al. 2021, "RoFormer").
 *
 * Pair i of a head turns by angle pos * theta_i:   x'_a = x_a cos - x_b sin,   x'_b = x_b cos + x_a sin
 *
 *   half-split   [x0 .. x(n-1) | xn .. x(2n-1) | pass-through]    a = i,  b = i + n      (n = rot_dim / 2)
 *   interleaved  [(x0,x1) (x2,x3) ... (x(2n-2),x(2n-1)) | pass]   a = 2i, b = 2i + 1
 *
 * The SIMD path loads interleaved pairs as two planes (evens, odds), or for a token's many heads keeps them in
 * place by a row expanded once, so both pairings run the same arithmetic as the scalar path, in the same order:
 * the two builds agree bit for bit. The loops over one row are in rope_rows.h; this file walks the batch, the
 * sequence and the head groups over them and checks every call. The tables themselves are built in rope.c;
 * 16-bit storage is rotated by rope_apply16.c.
 */
#include "posenc.h"
#include "pe_math.h"
#include "simd.h"
#include "rope_internal.h"
#include "rope_rows.h"

#include <math.h>

#include <stddef.h>
#include <stdint.h>

/* bhsd: heads rotated together per cos/sin row. Each row is read from memory once per group instead of once
 * per head (the table is as large as one head's slice of x; per head it would add half again to the bytes
 * moved); the group's heads stream from PE__HEAD_GROUP contiguous regions, which the prefetchers follow. */
#define PE__HEAD_GROUP 4
#define PE__TOKEN_ORDER_SEQ 8 /* bhsd up to this many positions goes token by token */

/* Rotates q (and k when k.heads > 0: same batch and seq) by table rows: row (b, s) at (per_batch_rows ?
 * b * seq + s : s) * n. */
PE_INLINE void pe__apply(pe__heads q, pe__heads k, const float *cos, const float *sin, int32_t batch, int32_t seq,
                         int32_t n, int bhsd, int per_batch_rows, const int interleaved, const int inverse) {
    const int32_t total = q.heads + k.heads;
    /* the rotated bytes of q and k: past the cache, the streaming order of pe__rotate_token */
    const int stream = k.heads > 0 && (double)batch * seq * total * n * 2 * sizeof(float) > (double)PE__STREAM_BYTES;
    for (int32_t b = 0; b < batch; b++) {
        const size_t row_b = per_batch_rows ? (size_t)b * (size_t)seq : 0;
        float *qb = q.x + (size_t)b * q.g.sb, *kb = k.heads ? k.x + (size_t)b * k.g.sb : NULL;
        if (!bhsd || seq <= PE__TOKEN_ORDER_SEQ) {
            /* (b, s): one cos/sin row, loaded once, serves every head of the token. Also bhsd with a few
             * positions (a decode step): its rows are then all in cache, and pairing a token's heads costs less
             * than walking head groups */
            for (int32_t s = 0; s < seq; s++) {
                const size_t row = (row_b + (size_t)s) * (size_t)n;
                pe__rotate_token_at(qb + (size_t)s * q.g.ss, q.g.sh, q.heads, kb ? kb + (size_t)s * k.g.ss : NULL,
                                    k.g.sh, k.heads, cos + row, sin + row, n, stream, interleaved, inverse);
            }
            continue;
        }
        /* (b, group of heads of q then k): walk the sequence rotating the group's rows at s together */
        for (int32_t j0 = 0; j0 < total; j0 += PE__HEAD_GROUP) {
            const int32_t count = total - j0 < PE__HEAD_GROUP ? total - j0 : PE__HEAD_GROUP;
            float *base[PE__HEAD_GROUP + 1];
            size_t ss[PE__HEAD_GROUP + 1];
            for (int32_t t = 0; t < count; t++) {
                const int32_t j = j0 + t;
                base[t] = j < q.heads ? qb + (size_t)j * q.g.sh : kb + (size_t)(j - q.heads) * k.g.sh;
                ss[t] = j < q.heads ? q.g.ss : k.g.ss;
            }
            base[count] = NULL;
            ss[count] = 0;
            for (int32_t s = 0; s < seq; s++) {
                const size_t row = (row_b + (size_t)s) * (size_t)n;
                for (int32_t t = 0; t < count; t += 2)
                    pe__rotate_two(base[t] + (size_t)s * ss[t],
                                   t + 1 < count ? base[t + 1] + (size_t)s * ss[t + 1] : NULL, cos + row, sin + row, n,
                                   interleaved, inverse);
            }
        }
    }
}

/* Resolves the strides (0 -> dense for the layout) and checks the view: every head vector it names lies in
 * [offset, offset + extent) with extent addressable, and no two of them overlap (each is rotated in place
 * once; overlapping ones would be rotated twice). Sufficient for non-overlap: with the axes of more than
 * one element sorted by stride, the smallest stride is >= head_dim and each next one spans the previous
 * axis whole (stride_k+1 >= stride_k * count_k), i.e. the axes nest. Every product is checked in uint64_t. */
static pe_status pe__apply_view(pe__apply_geom *g, const pe_rope_apply_config *cfg, int32_t head_dim) {
    const int64_t D = head_dim, B = cfg->batch, S = cfg->seq, H = cfg->heads;
    const pe_strides *st = &cfg->strides; /* signs checked by pe_rope_apply, before an empty call returns */
    /* a dense stride itself can pass 2^63 for absurd sizes: check the product before forming it */
    const int64_t f3[3] = {S, H, D};
    if (pe__count(PE__MAX_FLOATS, 3, f3) > PE__MAX_FLOATS) return PE_ERR_SHAPE;
    int64_t sb, ss, sh;
    const int64_t dense[2][3] = {{S * H * D, H * D, D}, {H * S * D, D, S * D}}; /* bshd, bhsd: (sb, ss, sh) */
    const int bhsd = cfg->layout == PE_LAYOUT_BHSD;
    sb = st->batch ? st->batch : dense[bhsd][0];
    ss = st->seq ? st->seq : dense[bhsd][1];
    sh = st->heads ? st->heads : dense[bhsd][2];

    /* furthest element + 1 = offset + sum (count - 1) * stride + D */
    const int64_t counts[3] = {B, S, H}, strides[3] = {sb, ss, sh};
    uint64_t end = (uint64_t)cfg->offset + (uint64_t)D;
    if (end > PE__MAX_FLOATS) return PE_ERR_SHAPE;
    for (int a = 0; a < 3; a++) {
        const int64_t f[2] = {counts[a] - 1, strides[a]};
        const uint64_t span = pe__count(PE__MAX_FLOATS, 2, f);
        if (span > PE__MAX_FLOATS - end) return PE_ERR_SHAPE;
        end += span;
    }

    /* non-overlap: nest the axes with more than one element by stride */
    int64_t cs[3][2];
    int m = 0;
    for (int a = 0; a < 3; a++)
        if (counts[a] > 1) cs[m][0] = strides[a], cs[m][1] = counts[a], m++;
    for (int i = 1; i < m; i++) /* insertion sort of at most 3 */
        for (int j = i; j > 0 && cs[j][0] < cs[j - 1][0]; j--) {
            const int64_t t0 = cs[j][0], t1 = cs[j][1];
            cs[j][0] = cs[j - 1][0], cs[j][1] = cs[j - 1][1];
            cs[j - 1][0] = t0, cs[j - 1][1] = t1;
        }
    int64_t need = D; /* each head vector is D elements */
    for (int i = 0; i < m; i++) {
        if (cs[i][0] < need) return PE_ERR_SHAPE;
        need = cs[i][0] * cs[i][1]; /* <= end, so no overflow */
    }
    g->sb = (size_t)sb;
    g->ss = (size_t)ss;
    g->sh = (size_t)sh;
    return PE_OK;
}

/* The float32 instantiations, each its own function: inlined together into one caller, V8's register
 * allocator spills the hot loops' vectors. */
#define PE__APPLY_F32(NAME, IL, INV)                                                                           \
    static void NAME(pe__heads q, pe__heads k, const float *cos, const float *sin, int32_t batch, int32_t seq, \
                     int32_t n, int bhsd, int rows) {                                                          \
        pe__apply(q, k, cos, sin, batch, seq, n, bhsd, rows, IL, INV);                                         \
    }
PE__APPLY_F32(pe__apply_half_fwd, 0, 0)
PE__APPLY_F32(pe__apply_half_inv, 0, 1)
PE__APPLY_F32(pe__apply_il_fwd, 1, 0)
PE__APPLY_F32(pe__apply_il_inv, 1, 1)
#undef PE__APPLY_F32
typedef void (*pe__apply_fn)(pe__heads, pe__heads, const float *, const float *, int32_t, int32_t, int32_t, int, int);
static const pe__apply_fn pe__apply_f32[4] = {pe__apply_half_fwd, pe__apply_half_inv, pe__apply_il_fwd,
                                              pe__apply_il_inv};

/* The checks of one config (not yet its view), in pe_rope_apply's order. */
static pe_status pe__apply_fields(const pe_rope_apply_config *cfg) {
    if (cfg->batch < 0 || cfg->seq < 0) return PE_ERR_SHAPE;
    if (cfg->heads < 1) return PE_ERR_HEADS;
    if (cfg->layout != PE_LAYOUT_BSHD && cfg->layout != PE_LAYOUT_BHSD) return PE_ERR_LAYOUT;
    if (cfg->rotation != PE_ROTATE_FORWARD && cfg->rotation != PE_ROTATE_INVERSE) return PE_ERR_FIELD_VALUE;
    if (cfg->dtype < 0 || cfg->dtype >= PE_DTYPE_COUNT) return PE_ERR_FIELD_VALUE;
    /* a call is validated before it is found empty (posenc.h, Sizes), so a bad view is refused even then */
    const pe_strides *vs = &cfg->strides;
    if (vs->batch < 0 || vs->seq < 0 || vs->heads < 0 || cfg->offset < 0) return PE_ERR_SHAPE;
    return PE_OK;
}

/* q's config and, when k is given, k's: the fields both must share agree. */
static pe_status pe__apply_configs(const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    pe_status st = pe__apply_fields(cfg);
    if (st != PE_OK || !kcfg) return st;
    st = pe__apply_fields(kcfg);
    if (st != PE_OK) return st;
    if (kcfg->batch != cfg->batch || kcfg->seq != cfg->seq || kcfg->layout != cfg->layout ||
        (kcfg->per_batch_rows != 0) != (cfg->per_batch_rows != 0) || kcfg->rotation != cfg->rotation ||
        kcfg->dtype != cfg->dtype)
        return PE_ERR_FIELD_VALUE;
    return PE_OK;
}

/* One tensor of the call: its first head vector (offset applied) and resolved strides; heads 0: absent. */
typedef struct pe__view {
    void *x;
    pe__apply_geom g;
    int32_t heads;
} pe__view;

static pe_status pe__view_of(pe__view *v, void *x, const pe_rope_apply_config *cfg, int32_t head_dim) {
    pe_status st = pe__apply_view(&v->g, cfg, head_dim);
    if (st != PE_OK) return st;
    const size_t esz = cfg->dtype == PE_DTYPE_FLOAT32 ? 4u : 2u;
    v->x = (char *)x + (size_t)cfg->offset * esz;
    v->heads = cfg->heads;
    return PE_OK;
}

/* The view moved on by s0 positions (elements of esz bytes). */
static pe__view pe__view_at(pe__view v, int32_t s0, size_t esz) {
    if (v.heads) v.x = (char *)v.x + (size_t)s0 * v.g.ss * esz;
    return v;
}

/* Runs the kernel instantiation for the call's dtype, pairing and direction over q and k (k.heads 0: q only).
 * 16-bit tensors are rotated one after the other (each step widens, rotates and narrows in registers). */
static void pe__run(const pe__view *q, const pe__view *k, const float *cos, const float *sin, int32_t batch,
                    int32_t seq, int32_t n, int bhsd, int rows, int dtype, int interleaved, int inverse) {
    if (dtype != PE_DTYPE_FLOAT32) {
        const int bf16 = dtype == PE_DTYPE_BFLOAT16;
        for (int t = 0; t < 2; t++) {
            const pe__view *v = t ? k : q;
            if (!v->heads) continue;
            pe__rope_apply16((uint16_t *)v->x, cos, sin, batch, seq, v->heads, v->g, n, bhsd, rows, bf16, interleaved,
                             inverse);
        }
        return;
    }
    const pe__heads qh = {(float *)q->x, q->g, q->heads};
    const pe__heads kh = {(float *)k->x, k->g, k->heads};
    /* four instantiations so the pairing and the direction are never decided inside the loops */
    pe__apply_f32[interleaved * 2 + inverse](qh, kh, cos, sin, batch, seq, n, bhsd, rows);
}

/* The shared front of the entry points: configs, the empty call, the views. *empty is set when there is
 * nothing to rotate (batch * seq == 0), which is not an error. */
static pe_status pe__apply_begin(pe__view *qv, pe__view *kv, int *empty, const pe_rope *rope, void *q, void *k,
                                 const void *table, const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    *empty = 0;
    if (!rope || !cfg || (k && !kcfg)) return PE_ERR_NULL;
    pe_status st = pe__apply_configs(cfg, k ? kcfg : NULL);
    if (st != PE_OK) return st;
    if ((int64_t)cfg->batch * cfg->seq == 0) {
        *empty = 1;
        return PE_OK;
    }
    if (!q || !table) return PE_ERR_NULL;
    /* every index below is a size_t product of these: the views and the tables must be addressable */
    st = pe__view_of(qv, q, cfg, rope->config.head_dim);
    if (st != PE_OK) return st;
    kv->x = NULL;
    kv->heads = 0;
    kv->g = qv->g;
    if (k) {
        st = pe__view_of(kv, k, kcfg, rope->config.head_dim);
        if (st != PE_OK) return st;
    }
    if (!pe__floats_fit3(cfg->per_batch_rows ? cfg->batch : 1, cfg->seq, rope->n_freq)) return PE_ERR_SHAPE;
    return PE_OK;
}

/* Where decode's gap to the hand kernel goes (issue 14 bisection, [1, 1, 32, 128] half-split bshd, cached table,
 * every buffer 64-aligned, one module with both, min over interleaved batches, two runs each, load ~2 on 2 cores):
 * hand kernel 0.77-0.83 us; pe__rotate_token alone (dims as constants) 0.88-0.90; + pe__apply's frame (b/s loops,
 * runtime stream flag and n, the generic row beside the 64 one) 0.93-0.95; + pe__apply_begin's checks 0.98-1.00
 * (the checks alone, call included: 0.053 us). Not the cost: restrict (the hand kernel without it, k's loads after
 * q's stores: same speed), the leaf as a call per head pair, the head order (q pairs then k pairs, as here, is as
 * fast in the hand kernel), the call through pe__apply_f32, pe__count's 64-bit divisions (replaced: no change).
 * The row loop's 4 steps written out bring pe__rotate_token alone to the hand kernel (0.80 us), but not the call:
 * inside pe__apply (pragma unroll) it stays at 0.98-1.04, and as an out-of-line token function per pairing
 * (runtime head counts, noinline, dispatched from pe__rotate_token_at) it ran 1.06-1.08x slower than this code.
 * The remaining ~15 % is spread over frame and checks, none alone worth a specialised path (scratch harness:
 * /tmp/bisect, not kept). */
pe_status pe_rope_apply_qk(const pe_rope *rope, void *q, void *k, const float *cos, const float *sin,
                           const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    pe__view qv, kv;
    int empty;
    pe_status st = pe__apply_begin(&qv, &kv, &empty, rope, q, k, cos && sin ? cos : NULL, cfg, kcfg);
    if (st != PE_OK || empty) return st;
    pe__run(&qv, &kv, cos, sin, cfg->batch, cfg->seq, rope->n_freq, cfg->layout == PE_LAYOUT_BHSD,
            cfg->per_batch_rows != 0, cfg->dtype, rope->config.pairing == PE_PAIRING_INTERLEAVED,
            cfg->rotation == PE_ROTATE_INVERSE);
    return PE_OK;
}

pe_status pe_rope_apply(const pe_rope *rope, void *x, const float *cos, const float *sin,
                        const pe_rope_apply_config *cfg) {
    // x holds (batch, seq, heads) head vectors of head_dim floats; head (b, s, h) at x + offset + b*strides.batch
    // + s*strides.seq + h*strides.heads (dense BSHD or BHSD by default); cos/sin are (rows, n_freq).
    return pe_rope_apply_qk(rope, x, NULL, cos, sin, cfg, NULL);
}

/* The fused path computes its rows PE__FUSED_ROWS at a time on the stack and rotates every head that uses
 * them before the next: no table is written to memory and read back. */
#define PE__FUSED_ROWS 4

pe_status pe_rope_apply_positions(const pe_rope *rope, void *q, void *k, float *cos_out, float *sin_out,
                                  const int32_t *positions, int64_t seq_len, double extra_scale,
                                  const pe_rope_apply_config *cfg, const pe_rope_apply_config *kcfg) {
    pe__view qv, kv;
    int empty;
    pe_status st = pe__apply_begin(&qv, &kv, &empty, rope, q, k, positions, cfg, kcfg);
    if (st != PE_OK || empty) return st;
    /* the checks and the choices of pe_rope_cos_sin, and its row function: the rows are the table's bit for bit */
    const int32_t batch = cfg->batch, seq = cfg->seq, per_batch = cfg->per_batch_rows != 0;
    const int32_t n_positions = per_batch ? batch * seq : seq; /* fits: checked by pe__apply_begin */
    double scratch[PE_ROPE_MAX_FREQ];
    pe__rope_rows rr;
    st = pe__rope_rows_begin(&rr, rope, positions, n_positions, seq_len, extra_scale, scratch);
    if (st != PE_OK) return st;

    const int32_t n = rope->n_freq;
    const int bhsd = cfg->layout == PE_LAYOUT_BHSD, interleaved = rope->config.pairing == PE_PAIRING_INTERLEAVED;
    const int inverse = cfg->rotation == PE_ROTATE_INVERSE;
    const size_t esz = cfg->dtype == PE_DTYPE_FLOAT32 ? 4u : 2u;
    float cos_buf[PE__FUSED_ROWS * PE_ROPE_MAX_FREQ], sin_buf[PE__FUSED_ROWS * PE_ROPE_MAX_FREQ];
    const int keep = cos_out && sin_out; /* the rows go to the caller's table, else to the stack */
    /* shared rows serve the whole batch at once; per-sequence rows one sequence at a time */
    const int32_t n_groups = per_batch ? batch : 1, group_batch = per_batch ? 1 : batch;
    for (int32_t b = 0; b < n_groups; b++) {
        pe__view qb = qv, kb = kv;
        if (per_batch) {
            qb.x = (char *)qv.x + (size_t)b * qv.g.sb * esz;
            if (kv.heads) kb.x = (char *)kv.x + (size_t)b * kv.g.sb * esz;
        }
        for (int32_t s0 = 0; s0 < seq; s0 += PE__FUSED_ROWS) {
            const int32_t r = seq - s0 < PE__FUSED_ROWS ? seq - s0 : PE__FUSED_ROWS;
            const size_t p0 = (size_t)b * (per_batch ? (size_t)seq : 0u) + (size_t)s0; /* first row's index */
            float *cos = keep ? cos_out + p0 * (size_t)n : cos_buf, *sin = keep ? sin_out + p0 * (size_t)n : sin_buf;
            for (int32_t t = 0; t < r; t++)
                pe__rope_cos_sin_row(cos + (size_t)t * n, sin + (size_t)t * n, (double)positions[p0 + (size_t)t],
                                     rr.inv_freq, n, rr.scale);
            const pe__view qs = pe__view_at(qb, s0, esz), ks = pe__view_at(kb, s0, esz);
            pe__run(&qs, &ks, cos, sin, group_batch, r, n, bhsd, 0, cfg->dtype, interleaved, inverse);
        }
    }
    return PE_OK;
}
