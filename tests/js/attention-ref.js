// Naive double-precision attention references for the attention tests, written the obvious way: RoPE on q
// and k in double (helpers.refApply), logits scale · q·k + slope · (kpos − qpos), −Infinity where causal
// hides a key, softmax with the row maximum subtracted, out = Σ p v. No blocking, no online softmax.
import { refApply } from './helpers.js';

/** Index of element (b, head, s, d) of a (B, S, NH, D) 'bshd' or (B, NH, S, D) 'bhsd' tensor. */
export function at(layout, S, NH, D, b, head, s, d) {
  return layout === 'bshd' ? ((b * S + s) * NH + head) * D + d : ((b * NH + head) * S + s) * D + d;
}

/**
 * shape { batch, heads, kvHeads, qLen, kLen, headDim }; opts { layout, causal, scale, slopes, qpos, kpos,
 * rope: { invFreq (double), pairing, scale } }. Returns { out, weights } as Float64Arrays, out in q's layout,
 * weights (B, H, qLen, kLen); a row with no visible key is all zeros in both.
 */
export function refAttention(q, k, v, shape, opts = {}) {
  const { batch: B, heads: H, qLen: Sq, headDim: D } = shape;
  const KVH = shape.kvHeads ?? H;
  const Sk = shape.kLen ?? Sq;
  const layout = opts.layout ?? 'bshd';
  const scale = opts.scale ?? 1 / Math.sqrt(D);
  const qp = opts.qpos ?? Array.from({ length: Sq }, (_, i) => Sk - Sq + i);
  const kp = opts.kpos ?? Array.from({ length: Sk }, (_, j) => j);
  let qd = q;
  let kd = k;
  if (opts.rope) {
    const { invFreq, pairing, scale: a } = opts.rope;
    qd = refApply(q, { shape: [B, Sq, H, D], layout, positions: qp, invFreq, pairing, scale: a });
    kd = refApply(k, { shape: [B, Sk, KVH, D], layout, positions: kp, invFreq, pairing, scale: a });
  }
  const group = H / KVH;
  const out = new Float64Array(B * H * Sq * D);
  const weights = new Float64Array(B * H * Sq * Sk);
  const logits = new Float64Array(Sk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / group);
      const slope = opts.slopes ? opts.slopes[h] : 0;
      for (let i = 0; i < Sq; i++) {
        let m = -Infinity;
        for (let j = 0; j < Sk; j++) {
          if (opts.causal && kp[j] > qp[i]) {
            logits[j] = -Infinity;
            continue;
          }
          let dot = 0;
          for (let d = 0; d < D; d++) dot += qd[at(layout, Sq, H, D, b, h, i, d)] * kd[at(layout, Sk, KVH, D, b, g, j, d)];
          logits[j] = scale * dot + slope * (kp[j] - qp[i]);
          if (logits[j] > m) m = logits[j];
        }
        if (m === -Infinity) continue; // fully masked: zeros
        let sum = 0;
        for (let j = 0; j < Sk; j++) sum += logits[j] === -Infinity ? 0 : Math.exp(logits[j] - m);
        const wrow = ((b * H + h) * Sq + i) * Sk;
        for (let j = 0; j < Sk; j++) {
          const p = logits[j] === -Infinity ? 0 : Math.exp(logits[j] - m) / sum;
          weights[wrow + j] = p;
          if (p === 0) continue;
          for (let d = 0; d < D; d++) out[at(layout, Sq, H, D, b, h, i, d)] += p * v[at(layout, Sk, KVH, D, b, g, j, d)];
        }
      }
    }
  }
  return { out, weights };
}

/**
 * HF's left padding for a batch of B sequences of kLen keys, the last qLen of them queries: sequence b has
 * pads[b] padding keys first (mask 0, at position 1, as HF's position_ids put them), its real keys at 0, 1, ...
 * Returns { mask, kpos, qpos } (Int32Array mask of B·kLen, per-sequence positions B·kLen and B·qLen).
 */
export function paddedBatch(B, Sk, Sq, pads) {
  const mask = new Int32Array(B * Sk);
  const kpos = new Int32Array(B * Sk);
  const qpos = new Int32Array(B * Sq);
  for (let b = 0; b < B; b++) {
    for (let j = 0; j < Sk; j++) {
      mask[b * Sk + j] = j >= pads[b] ? 1 : 0;
      kpos[b * Sk + j] = j >= pads[b] ? j - pads[b] : 1;
    }
    for (let i = 0; i < Sq; i++) qpos[b * Sq + i] = kpos[b * Sk + Sk - Sq + i];
  }
  return { mask, kpos, qpos };
}

/** Random left padding: sequence 0 unpadded, the others 0 .. kLen − 1 padding keys; int(lo, hi) draws an integer. */
export function randomPads(int, B, Sk) {
  return Array.from({ length: B }, (_, b) => (b === 0 ? 0 : int(0, Sk - 1)));
}

/**
 * Double reference for real batches, on dense inputs in o.layout (default 'bshd'): positions per sequence
 * (o.qpos B·qLen, o.kpos B·kLen; default kLen − qLen + i and j), o.mask (B·kLen, 0 = hidden), o.causal,
 * o.bias with o.biasShape [bb, bh, bq, kLen], per-query o.qscale (qLen or B·qLen), GQA, vHeadDim. The scale is
 * float32's 1/sqrt(headDim) (or o.scale) times the query's scale rounded to float32, as the C core forms it.
 * Returns out (Float64Array, q's layout with vHeadDim); a row with no visible key is zeros.
 */
export function refBatch(q, k, v, s, o = {}) {
  const { batch: B, heads: H, qLen: Sq, kLen: Sk, headDim: D } = s;
  const KVH = s.kvHeads ?? H;
  const Dv = s.vHeadDim ?? D;
  const L = o.layout ?? 'bshd';
  const scale = Math.fround(o.scale ?? Math.fround(1 / Math.sqrt(D)));
  const out = new Float64Array(B * H * Sq * Dv);
  const lg = new Float64Array(Sk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / (H / KVH));
      for (let i = 0; i < Sq; i++) {
        const qp = o.qpos ? o.qpos[b * Sq + i] : Sk - Sq + i;
        const sc = o.qscale ? Math.fround(scale * o.qscale[(o.qscale.length > Sq ? b * Sq : 0) + i]) : scale;
        let m = -Infinity;
        for (let j = 0; j < Sk; j++) {
          const kp = o.kpos ? o.kpos[b * Sk + j] : j;
          if ((o.mask && o.mask[b * Sk + j] === 0) || (o.causal && kp > qp)) {
            lg[j] = -Infinity;
            continue;
          }
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[at(L, Sq, H, D, b, h, i, d)] * k[at(L, Sk, KVH, D, b, g, j, d)];
          let x = dot * sc;
          if (o.bias) {
            const [bb, bh, bq] = o.biasShape;
            x += o.bias[(((bb > 1 ? b : 0) * bh + (bh > 1 ? h : 0)) * bq + (bq > 1 ? i : 0)) * Sk + j];
          }
          lg[j] = x;
          if (x > m) m = x;
        }
        if (m === -Infinity) continue;
        let sum = 0;
        for (let j = 0; j < Sk; j++) sum += lg[j] === -Infinity ? 0 : Math.exp(lg[j] - m);
        for (let j = 0; j < Sk; j++) {
          if (lg[j] === -Infinity) continue;
          const p = Math.exp(lg[j] - m) / sum;
          for (let e = 0; e < Dv; e++) out[at(L, Sq, H, Dv, b, h, i, e)] += p * v[at(L, Sk, KVH, Dv, b, g, j, e)];
        }
      }
    }
  }
  return out;
}
