/* attention_positions.c — pe_attention's positions and its RoPE set-up: the checks of explicit positions (each
 * sequence's row validated as pe_positions_max does), the default query and key positions, the monotone-band test
 * the block driver uses to skip masked-off keys, and the rotation of q (and k unless k_rotated) into dense copies in
 * the caller's scratch. Nothing here runs per score or per PV step; attention.c's opening comment gives the
 * conventions (positions, RoPE on copies, one table for self-attention).
 */
#include "attention_internal.h"
#include "posenc.h"

#include <stddef.h>
#include <string.h>

/* cos/sin rows for n positions given by pos (or, when pos is NULL, first + 0 .. n-1), in chunks so that
 * default positions need no array in scratch. */
static pe_status pe__rope_tables(float *cos, float *sin, const pe_rope *rope, const int32_t *pos, int64_t first,
                                 int32_t n, int64_t seq_len) {
    if (pos) return pe_rope_cos_sin(cos, sin, rope, pos, n, seq_len, 1.0);
    int32_t buf[256];
    const size_t nf = (size_t)rope->n_freq;
    for (int32_t i0 = 0; i0 < n; i0 += 256) {
        const int32_t m = n - i0 < 256 ? n - i0 : 256;
        for (int32_t i = 0; i < m; i++) buf[i] = (int32_t)(first + i0 + i);
        pe_status st = pe_rope_cos_sin(cos + (size_t)i0 * nf, sin + (size_t)i0 * nf, rope, buf, m, seq_len, 1.0);
        if (st != PE_OK) return st;
    }
    return PE_OK;
}

/* True when q and k sit at the same positions (so they share one cos/sin table): q_len == k_len, the same
 * per-sequence form (qpb, kpb: the positions given and per_batch_positions), and the same values (a default
 * side is 0 .. len − 1, as the default query positions k_len − q_len + i are when q_len == k_len). */
static int pe__same_positions(const pe__attn *A, int qpb, int kpb) {
    if (A->Sq != A->Sk || qpb != kpb) return 0;
    if (A->qpos == A->kpos) return 1; /* both default, or one array given for both */
    const size_t n = (size_t)A->Sq * (qpb ? (size_t)A->B : 1u);
    if (A->qpos && A->kpos) return memcmp(A->qpos, A->kpos, n * sizeof(int32_t)) == 0;
    const int32_t *p = A->qpos ? A->qpos : A->kpos; /* shared (not per sequence): compare with 0 .. n − 1 */
    for (size_t i = 0; i < n; i++)
        if (p[i] != (int32_t)i) return 0;
    return 1;
}

/* The largest of n positions per sequence over nb sequences (validated as pe_positions_max does). */
static pe_status pe__positions_max(int32_t *mx, const int32_t *pos, int32_t n, int32_t nb) {
    *mx = 0;
    for (int32_t b = 0; b < nb; b++) {
        int32_t m;
        const pe_status st = pe_positions_max(&m, pos + (size_t)b * (size_t)n, n);
        if (st != PE_OK) return st;
        *mx = m > *mx ? m : *mx;
    }
    return PE_OK;
}

int pe__attn_monotone(int32_t *kmax, const int32_t *kpos, const int32_t *kmask, int32_t n) {
    int32_t last = INT32_MIN;
    for (int32_t j = 0; j < n; j++) {
        if (kmask && !kmask[j]) continue;
        if (kpos[j] < last) return 0;
        last = kpos[j];
    }
    *kmax = last;
    return 1;
}

pe_status pe__attn_positions(const pe__attn *A, int32_t *max_q, int32_t *max_k) {
    const int32_t nbq = A->per_batch ? A->B : 1;
    pe_status st;
    *max_q = *max_k = 0;
    if (A->qpos) {
        st = pe__positions_max(max_q, A->qpos, A->Sq, nbq);
        if (st != PE_OK) return st;
    } else {
        if (A->rope && A->Sq > A->Sk) return PE_ERR_POSITION; /* default query positions would be negative */
        *max_q = A->Sk - 1;
    }
    if (A->kpos) {
        st = pe__positions_max(max_k, A->kpos, A->Sk, nbq);
        if (st != PE_OK) return st;
    } else {
        *max_k = A->Sk - 1;
    }
    /* ALiBi's relative position kpos − qpos is formed as an int32. Positions are >= 0, so it can only overflow
     * with explicit key positions against default query positions below 0 (q_len > k_len). */
    if (A->slopes && A->kpos && !A->qpos && (int64_t)*max_k - ((int64_t)A->Sk - A->Sq) > INT32_MAX)
        return PE_ERR_POSITION;
    return PE_OK;
}

pe_status pe__attn_rope(pe__attn *A, const pe_attention_config *cfg, const void *q, const void *k, float *scratch,
                        int32_t max_q, int32_t max_k, const void **qx, const void **kx) {
    const int bhsd = cfg->layout == PE_LAYOUT_BHSD;
    pe_status st;
    /* RoPE on dense copies: q and k are inputs and stay unmodified. One frequency set for q and k (dynamic
     * and longrope pick theirs from seq_len), by default max position + 1, as one HF forward call decides.
     * With k_rotated the caller's keys are used as they are (already rotated, e.g. a KV cache). */
    const int64_t seq_len =
        cfg->rope_seq_len > 0 ? (int64_t)cfg->rope_seq_len : (int64_t)(max_q > max_k ? max_q : max_k) + 1;
    const size_t nf = (size_t)A->rope->n_freq;
    const int qpb = A->qpos && A->per_batch, kpb = A->kpos && A->per_batch;
    const int32_t qrows = qpb ? A->B * A->Sq : A->Sq; /* fits: B * Sq * D was checked */
    float *qr = scratch;
    float *cq = qr + A->n_q, *sq = cq + (size_t)qrows * nf;
    st = pe__rope_tables(cq, sq, A->rope, A->qpos, (int64_t)A->Sk - A->Sq, qrows, seq_len);
    if (st != PE_OK) return st;
    pe__gather(qr, q, &A->q, A->B, A->Sq, A->H, A->D, bhsd, cfg->dtype);
    const pe_rope_apply_config qc = {
        .batch = A->B, .seq = A->Sq, .heads = A->H, .layout = cfg->layout, .per_batch_rows = qpb};
    if (!A->k_rotated) {
        const int32_t krows = kpb ? A->B * A->Sk : A->Sk;
        float *kr = sq + (size_t)qrows * nf;
        float *ck = kr + A->n_k, *sk = ck + (size_t)krows * nf;
        pe__gather(kr, k, &A->k, A->B, A->Sk, A->KVH, A->D, bhsd, cfg->dtype);
        const pe_rope_apply_config kc = {
            .batch = A->B, .seq = A->Sk, .heads = A->KVH, .layout = cfg->layout, .per_batch_rows = kpb};
        if (pe__same_positions(A, qpb, kpb)) {
            /* Self-attention (q and k at the same positions): one table, and q and k rotated in one pass
             * that loads each cos/sin vector once for both, bit for bit the two pe_rope_apply calls. */
            st = pe_rope_apply_qk(A->rope, qr, kr, cq, sq, &qc, &kc);
        } else {
            st = pe__rope_tables(ck, sk, A->rope, A->kpos, 0, krows, seq_len);
            if (st == PE_OK) st = pe_rope_apply(A->rope, kr, ck, sk, &kc);
            if (st == PE_OK) st = pe_rope_apply(A->rope, qr, cq, sq, &qc);
        }
        if (st != PE_OK) return st;
        if (A->o16) pe__round16(kr, A->n_k, A->bf16);
        *kx = kr;
        A->k = pe__dense_view(bhsd, A->Sk, A->KVH, A->D);
    } else {
        st = pe_rope_apply(A->rope, qr, cq, sq, &qc);
        if (st != PE_OK) return st;
    }
    if (A->o16) pe__round16(qr, A->n_q, A->bf16);
    *qx = qr;
    A->q = pe__dense_view(bhsd, A->Sq, A->H, A->D);
    return PE_OK;
}
