// pairing.js — which dimensions RoPE pairs, and a tiny model run as if paired the other way.
//
//   pairIndex(pairing, d, i)        the two dimensions of frequency pair i: 'half' (i, i + d/2), 'interleaved' (2i, 2i + 1)
//   toHalfRows(w, rows, cols, hd)   rows of a (rows, cols) projection, each head's interleaved pairs moved to
//                                   half-split places: the permutation that makes a half-split RoPE compute
//                                   what an interleaved one would (and Hugging Face's Llama conversion `permute`)
//   swappedPairingModel(el, name)   the tiny RoPE model with its q/k rows permuted, i.e. run as if its RoPE
//                                   paired dimensions the other way (see toHalfRows); loaded through el.pe

import { readSafetensors } from './safetensors.js';

export function pairIndex(pairing, d, i) {
  return pairing === 'interleaved' ? [2 * i, 2 * i + 1] : [i, i + d / 2];
}

/**
 * Returns a copy of a row-major (rows, cols) weight whose rows, head by head (hd rows each), are reordered so
 * that row i of a head holds old row 2i and row i + hd/2 old row 2i + 1. With q = W x, the new q is P q where
 * P gathers the interleaved pairs (2i, 2i + 1) into the half-split places (i, i + hd/2). Since a common
 * permutation of q and k leaves q·k unchanged, rope_half(P q) · rope_half(P k) = rope_interleaved(q) ·
 * rope_interleaved(k): a half-split model with these rows attends exactly as an interleaved one with the old.
 */
export function toHalfRows(w, rows, cols, hd) {
  const out = new Float32Array(w.length);
  const half = hd / 2;
  for (let h0 = 0; h0 < rows; h0 += hd) {
    for (let i = 0; i < half; i++) {
      out.set(w.subarray((h0 + 2 * i) * cols, (h0 + 2 * i + 1) * cols), (h0 + i) * cols);
      out.set(w.subarray((h0 + 2 * i + 1) * cols, (h0 + 2 * i + 2) * cols), (h0 + i + half) * cols);
    }
  }
  return out;
}

const swapped = new Map();
/**
 * The shipped RoPE model `name` loaded a second time with every layer's q_proj and k_proj rows permuted by
 * toHalfRows: it computes what the trained weights give when the RoPE pairs dimensions (2i, 2i + 1) instead
 * of the (i, i + d/2) it was trained with. Cached for the page; do not free it.
 */
export function swappedPairingModel(el, name) {
  if (!swapped.has(name)) {
    const p = (async () => {
      const [cfg, bytes] = await Promise.all([el.modelConfig(name), el.modelFile(name)]);
      const file = readSafetensors(bytes);
      const { parsed } = file;
      const out = bytes.slice();
      const hd = cfg.head_dim ?? cfg.hidden_size / cfg.num_attention_heads;
      for (const [tname, t] of parsed.tensors) {
        if (!/self_attn\.(q|k)_proj\.weight$/.test(tname)) continue;
        const [rows, cols] = t.shape;
        const src = file.f32(tname);
        const perm = toHalfRows(src, rows, cols, hd);
        out.set(new Uint8Array(perm.buffer), parsed.dataOffset + t.begin);
      }
      return el.pe.loadModel(out, cfg);
    })();
    p.catch(() => swapped.delete(name));
    swapped.set(name, p);
  }
  return swapped.get(name);
}
