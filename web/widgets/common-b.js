// common-b.js — helpers shared by the RoPE, scaling, tiny-model and pitfalls widgets (rope-rotation.js,
// scaling.js, attention.js, extrapolation.js, pitfalls.js). No element is defined here; nothing in this file
// computes an encoding: every RoPE number comes from the posenc API (web/src) in the widgets themselves.
//
//   rng(seed)                          a seeded uniform [0, 1) generator (mulberry32)
//   gaussian(n, seed)                  Float32Array of n standard normals (Box–Muller over rng)
//   pairIndex(pairing, d, i)           the two dimensions of frequency pair i: 'half' (i, i + d/2), 'interleaved' (2i, 2i + 1)
//   toHalfRows(w, rows, cols, hd)      rows of a (rows, cols) projection, each head's interleaved pairs moved to
//                                      half-split places: the permutation that makes a half-split RoPE compute
//                                      what an interleaved one would (and Hugging Face's Llama conversion `permute`)
//   copyExample(len, seed)             a copy-task sequence of len + 1 characters and its scored targets
//   lmStream(check)                    the LM check set's windows joined back into one text
//   swappedPairingModel(el, name)      the tiny RoPE model with its q/k rows permuted, i.e. run as if its RoPE
//                                      paired dimensions the other way (see toHalfRows)
//   svg(tag, attrs, ...children)       an SVG element
//   wrapAngle(x)                       x reduced to (−π, π]

import { h, getModelApi, parseSafetensors } from './base.js';

export function rng(seed) {
  let a = (seed >>> 0) || 0x9e3779b9;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function gaussian(n, seed) {
  const r = rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const u1 = Math.max(1e-12, r()), u2 = r();
    out[i] = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
  return out;
}

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

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * A copy-task sequence as c/model/tasks.c describes it: episodes '.' s1..sn '|' s1..sn with n in [1, 16]
 * distinct letters, back to back. Returns { text (len + 1 characters), scored (len flags: position i predicts
 * text[i + 1] and is scored when that is a copied letter or the '.' closing a copy) }.
 */
export function copyExample(len, seed) {
  const r = rng(seed);
  let text = '';
  const scoredNext = []; // per character: is it a scored target?
  while (text.length < len + 1) {
    const n = 1 + Math.floor(r() * 16);
    const pool = LETTERS.split('');
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(r() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    const word = pool.slice(0, n).join('');
    // '.' closes the previous copy (scored unless this is the first episode)
    scoredNext.push(text.length > 0);
    text += '.';
    for (let i = 0; i < n; i++) scoredNext.push(false);
    text += word;
    scoredNext.push(false);
    text += '|';
    for (let i = 0; i < n; i++) scoredNext.push(true);
    text += word;
  }
  text = text.slice(0, len + 1);
  const scored = new Uint8Array(len);
  for (let i = 0; i < len; i++) scored[i] = scoredNext[i + 1] ? 1 : 0;
  return { text, scored };
}

/** The LM check set (models/lm-check.json): windows that overlap by one character, joined into one text. */
export function lmStream(check) {
  const seqs = check?.sequences ?? [];
  let s = seqs.length ? seqs[0].text : '';
  for (let i = 1; i < seqs.length; i++) {
    const t = seqs[i].text;
    s += s.endsWith(t[0]) ? t.slice(1) : t;
  }
  return s;
}

/** Targets for model.evaluate: text[i + 1] where scored[i] (all positions when scored is null), else −1. */
export function targetsOf(model, text, scored) {
  const ids = model.encode(text);
  const n = ids.length - 1;
  const targets = new Int32Array(n);
  for (let i = 0; i < n; i++) targets[i] = !scored || scored[i] ? ids[i + 1] : -1;
  return { tokens: ids.subarray(0, n), targets };
}

/** Argmax next-token predictions from logits (n, V). */
export function argmaxRows(logits, n, V) {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0, mx = -Infinity;
    for (let v = 0; v < V; v++) {
      const x = logits[i * V + v];
      if (x > mx) { mx = x; best = v; }
    }
    out[i] = best;
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
      const [api, cfg, bytes] = await Promise.all([getModelApi(), el.modelConfig(name), el.modelFile(name)]);
      const parsed = parseSafetensors(bytes);
      const out = bytes.slice();
      const hd = cfg.head_dim ?? cfg.hidden_size / cfg.num_attention_heads;
      for (const [tname, t] of parsed.tensors) {
        if (!/self_attn\.(q|k)_proj\.weight$/.test(tname)) continue;
        const [rows, cols] = t.shape;
        const src = new Float32Array(bytes.slice(parsed.dataOffset + t.begin, parsed.dataOffset + t.end).buffer);
        const perm = toHalfRows(src, rows, cols, hd);
        out.set(new Uint8Array(perm.buffer), parsed.dataOffset + t.begin);
      }
      return api.loadModel(out, cfg);
    })();
    p.catch(() => swapped.delete(name));
    swapped.set(name, p);
  }
  return swapped.get(name);
}

export function svg(tag, attrs = {}, ...children) {
  return h(`svg:${tag}`, attrs, ...children);
}

export function wrapAngle(x) {
  const t = 2 * Math.PI;
  let r = x - t * Math.round(x / t);
  if (r <= -Math.PI) r += t;
  return r;
}

/** Dot product of two equal-length array slices. */
export function dot(a, ao, b, bo, n) {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[ao + i] * b[bo + i];
  return s;
}

/** n integers 0..n−1 as an Int32Array. */
export function iota(n, start = 0, step = 1) {
  return Int32Array.from({ length: n }, (_, i) => start + i * step);
}

/**
 * Several display formulas side by side that wrap onto separate lines on a narrow screen (one KaTeX block
 * each, so a phone never has to scroll one long line). `tex` is lib/math.js's tex().
 */
export function formulaRow(tex, parts) {
  const row = h('div', { class: 'pe-formulas', style: { display: 'flex', flexWrap: 'wrap', justifyContent: 'center', columnGap: '2.2em', alignItems: 'center' } });
  for (const p of parts) {
    const cell = h('div', { style: { minWidth: 0, maxWidth: '100%' } });
    tex(cell, p, { display: true });
    row.append(cell);
  }
  return row;
}
