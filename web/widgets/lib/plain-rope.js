// plain-rope.js — RoPE written the plain-JavaScript way, the contender posenc is measured against in
// `npm run bench` (bench/plainjs.mjs re-exports it) and in the playground's <pe-speed>: straightforward
// Float32Array loops over a cos/sin cache built once with Math.cos / Math.sin in double (like Hugging Face's
// rotary_emb.cos_cached or ONNX models' cos_cache input). No Node-only API.
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
 * table rows; pairing 'half' (rotate_half) or 'interleaved' (GPT-J). Rows are visited in memory order for
 * either layout (bshd: token outer, heads inner), as a hand-written loop would: walking a bshd tensor head by
 * head strides H·D floats per row and was 1.3–1.7× slower at prefill and large sizes, which flattered posenc.
 */
export function ropeApply(x, table, positions, B, S, H, D, layout, pairing) {
  const bshd = layout === 'bshd';
  const [outer, inner] = bshd ? [S, H] : [H, S];
  for (let b = 0; b < B; b++) {
    for (let o = 0; o < outer; o++) {
      for (let j = 0; j < inner; j++) {
        const s = bshd ? o : j;
        rotateRow(x, ((b * outer + o) * inner + j) * D, table, positions[s] * table.n, pairing === 'half');
      }
    }
  }
  return x;
}

function rotateRow(x, off, table, row, half) {
  const { cos, sin, n } = table;
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
