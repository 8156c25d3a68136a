// plainjs.mjs — the "plain JavaScript" contender: straightforward Float32Array loops, written the way JS ML
// runtimes and hand-rolled inference code write these ops (one scalar loop per op, Math.cos / Math.sin /
// Math.exp in double, a cos/sin cache built once like Hugging Face's rotary_emb.cos_cached or ONNX models'
// cos_cache input). No Node-only API: the playground can run it too.

export { invFreq, ropeTable, ropeCosSin, ropeApply } from '../web/widgets/lib/plain-rope.js';

/** Sinusoidal table (seqLen, dModel), the paper's interleaved form (sin on even, cos on odd columns). */
export function sinusoidal(out, seqLen, dModel, base = 10000) {
  const half = Math.ceil(dModel / 2);
  const div = new Float64Array(half);
  for (let i = 0; i < half; i++) div[i] = Math.pow(base, (2 * i) / dModel);
  for (let p = 0; p < seqLen; p++) {
    const row = p * dModel;
    for (let j = 0; j < dModel; j++) {
      const a = p / div[j >> 1];
      out[row + j] = (j & 1) === 0 ? Math.sin(a) : Math.cos(a);
    }
  }
  return out;
}

/** ALiBi slopes (BLOOM's schedule, any head count). */
export function alibiSlopes(nHeads) {
  let n0 = 1;
  while (n0 * 2 <= nHeads) n0 *= 2;
  const out = new Float32Array(nHeads);
  for (let h = 0; h < nHeads; h++) {
    out[h] = h < n0 ? Math.pow(2, (-8 * (h + 1)) / n0) : Math.pow(2, (-4 * (2 * (h - n0) + 1)) / n0);
  }
  return out;
}

/** ALiBi bias (H, Q, K): slope * (j - (K - Q + i)), -Infinity above the diagonal when causal. */
export function alibiBias(out, slopes, H, Q, K, causal) {
  for (let h = 0; h < H; h++) {
    const m = slopes[h];
    for (let i = 0; i < Q; i++) {
      const ip = K - Q + i;
      const row = (h * Q + i) * K;
      for (let j = 0; j < K; j++) out[row + j] = causal && j > ip ? -Infinity : m * (j - ip);
    }
  }
  return out;
}

/**
 * Attention, bhsd, batch 1, causal (query i at key position K - Q + i): a scores row, Math.exp softmax, P V.
 * slopes: ALiBi slopes or null. (RoPE callers rotate q and k first with ropeApply.)
 * scores: Float32Array(K) scratch.
 */
export function attention(out, q, k, v, H, Q, K, D, causal, slopes, scores) {
  const scale = 1 / Math.sqrt(D);
  for (let h = 0; h < H; h++) {
    const qh = h * Q * D;
    const kh = h * K * D;
    const m = slopes ? slopes[h] : 0;
    for (let i = 0; i < Q; i++) {
      const ip = K - Q + i;
      const vis = causal ? Math.min(K, ip + 1) : K;
      let mx = -Infinity;
      for (let j = 0; j < vis; j++) {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += q[qh + i * D + d] * k[kh + j * D + d];
        const s = dot * scale + m * (j - ip);
        scores[j] = s;
        if (s > mx) mx = s;
      }
      let sum = 0;
      for (let j = 0; j < vis; j++) {
        const e = Math.exp(scores[j] - mx);
        scores[j] = e;
        sum += e;
      }
      const o = qh + i * D;
      for (let d = 0; d < D; d++) out[o + d] = 0;
      for (let j = 0; j < vis; j++) {
        const p = scores[j] / sum;
        const vr = kh + j * D;
        for (let d = 0; d < D; d++) out[o + d] += p * v[vr + d];
      }
    }
  }
  return out;
}
