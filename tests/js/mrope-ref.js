// A naive double-precision M-RoPE for the tests, written from the section rules in tests/golden/mrope/README.md
// (not from posenc's code): which stream each pair reads, and the rotation by pos[axis(j)] · base^(−2j/rd).
import { at } from './attention-ref.js';

/** Which stream (0 t, 1 h, 2 w) pair j of nPairs reads: chunked blocks, or Qwen3-VL's stride-3 slices. */
export function pairAxis(nPairs, section, interleaved) {
  const [s0, s1, s2] = section;
  return Array.from({ length: nPairs }, (_, j) => {
    if (!interleaved) return j < s0 ? 0 : j < s0 + s1 ? 1 : 2;
    if (j % 3 === 1 && j < 3 * s1) return 1;
    if (j % 3 === 2 && j < 3 * s2) return 2;
    return 0;
  });
}

/**
 * x (B, S, H, D) in `layout`, rotated in double: pair j of token row r (r = s shared, b·S + s per sequence,
 * `rows` telling which) turns by pos3[axis(j) · rows + r] · base^(−2j/rd); pairs (j, j + rd/2) for 'half',
 * (2j, 2j + 1) for 'interleaved'; dims past rd untouched. Returns a Float64Array.
 */
export function refMrope(x, { shape: [B, S, H, D], layout, pos3, rows, rd, base, pairing, section, interleaved }) {
  const n = rd / 2;
  const axis = pairAxis(n, section, interleaved);
  const out = Float64Array.from(x);
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const r = rows === S ? s : b * S + s;
      for (let h = 0; h < H; h++) {
        const o = at(layout, S, H, D, b, h, s, 0);
        for (let j = 0; j < n; j++) {
          const ang = pos3[axis[j] * rows + r] * base ** ((-2 * j) / rd);
          const [i0, i1] = pairing === 'half' ? [j, j + n] : [2 * j, 2 * j + 1];
          const a = x[o + i0];
          const c = x[o + i1];
          out[o + i0] = a * Math.cos(ang) - c * Math.sin(ang);
          out[o + i1] = c * Math.cos(ang) + a * Math.sin(ang);
        }
      }
    }
  }
  return out;
}
