// A naive double-precision attention reference for the attention tests, written the obvious way: RoPE on q
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
