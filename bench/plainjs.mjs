// plainjs.mjs — the "plain JavaScript" contender: straightforward Float32Array loops, written the way JS ML
// runtimes and hand-rolled inference code write these ops (one scalar loop per op, Math.cos / Math.sin /
// Math.exp in double, a cos/sin cache built once like Hugging Face's rotary_emb.cos_cached or ONNX models'
// cos_cache input). No Node-only API: the playground can run it too.

/** Inverse frequencies base^(-2i/d), i < d/2, in double. */
export function invFreq(headDim, base = 10000) {
  const n = headDim / 2;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = 1 / Math.pow(base, (2 * i) / headDim);
  return out;
}

/** cos/sin cache: (maxPos, headDim/2) float32, angle p * inv_freq[i] in double. */
export function ropeTable(maxPos, headDim, base = 10000) {
  const inv = invFreq(headDim, base);
  const n = inv.length;
  const cos = new Float32Array(maxPos * n);
  const sin = new Float32Array(maxPos * n);
  for (let p = 0; p < maxPos; p++) {
    for (let i = 0; i < n; i++) {
      const a = p * inv[i];
      cos[p * n + i] = Math.cos(a);
      sin[p * n + i] = Math.sin(a);
    }
  }
  return { cos, sin, n };
}

/** cos/sin rows for the given positions into cos/sin (positions.length * n). */
export function ropeCosSin(cos, sin, positions, inv) {
  const n = inv.length;
  for (let p = 0; p < positions.length; p++) {
    const pos = positions[p];
    const row = p * n;
    for (let i = 0; i < n; i++) {
      const a = pos * inv[i];
      cos[row + i] = Math.cos(a);
      sin[row + i] = Math.sin(a);
    }
  }
}

/**
 * Rotates x in place. x is (B, S, H, D) for 'bshd' or (B, H, S, D) for 'bhsd'; positions (S,) index the cached
 * table rows; pairing 'half' (rotate_half) or 'interleaved' (GPT-J).
 */
export function ropeApply(x, table, positions, B, S, H, D, layout, pairing) {
  const { cos, sin, n } = table;
  const half = pairing === 'half';
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let s = 0; s < S; s++) {
        const off = layout === 'bshd' ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
        const row = positions[s] * n;
        if (half) {
          for (let i = 0; i < n; i++) {
            const x1 = x[off + i];
            const x2 = x[off + i + n];
            const c = cos[row + i];
            const sn = sin[row + i];
            x[off + i] = x1 * c - x2 * sn;
            x[off + i + n] = x2 * c + x1 * sn;
          }
        } else {
          for (let i = 0; i < n; i++) {
            const x1 = x[off + 2 * i];
            const x2 = x[off + 2 * i + 1];
            const c = cos[row + i];
            const sn = sin[row + i];
            x[off + 2 * i] = x1 * c - x2 * sn;
            x[off + 2 * i + 1] = x2 * c + x1 * sn;
          }
        }
      }
    }
  }
  return x;
}

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
