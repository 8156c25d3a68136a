// refs.js — small double-precision references for the fuzzer's cheap checks (ALiBi slopes and bias,
// sinusoidal tables, RoPE cos/sin), written from the papers' formulas, and a comparison that names the first
// element out of tolerance.

/** BLOOM / Press et al. slopes in double: 2^(-8(h+1)/n0) for the largest power of two n0 <= n, then the odd
 *  powers of the 2·n0 schedule, 2^(-4(2j+1)/n0), for the remaining n - n0 heads. */
export function refAlibiSlopes(n) {
  let n0 = 1;
  while (n0 * 2 <= n) n0 *= 2;
  const out = new Float64Array(n);
  for (let h = 0; h < n0; h++) out[h] = 2 ** ((-8 * (h + 1)) / n0);
  for (let j = 0; j < n - n0; j++) out[n0 + j] = 2 ** ((-4 * (2 * j + 1)) / n0);
  return out;
}

/** (nHeads, qLen, kLen): slope[h] · (j − (kLen − qLen + i)), −Infinity above the causal diagonal. */
export function refAlibiBias(slopes, qLen, kLen, causal) {
  const H = slopes.length;
  const out = new Float64Array(H * qLen * kLen);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < qLen; i++) {
      const qp = kLen - qLen + i;
      for (let j = 0; j < kLen; j++) out[(h * qLen + i) * kLen + j] = causal && j > qp ? -Infinity : slopes[h] * (j - qp);
    }
  }
  return out;
}

/** BLOOM's build_alibi_tensor: row b·H + h = slope[h] · ((cumsum(mask[b]) − 1) · mask[b]). */
export function refAlibiFromMask(slopes, rows) {
  const H = slopes.length;
  const S = rows.length ? rows[0].length : 0;
  const out = new Float64Array(rows.length * H * S);
  rows.forEach((row, b) => {
    let c = 0;
    for (let j = 0; j < S; j++) {
      const m = row[j] ? 1 : 0;
      c += m;
      for (let h = 0; h < H; h++) out[(b * H + h) * S + j] = slopes[h] * ((c - 1) * m);
    }
  });
  return out;
}

/**
 * The paper's sinusoidal table (Vaswani et al. 3.5) in double: angle (offset + r) / base^(2i/dModel) for
 * column pair i. 'interleaved': sin at 2i, cos at 2i+1 (an odd dModel ends with a sin column); 'half':
 * ceil(d/2) sin columns, then floor(d/2) cos columns. Also returns each element's angle (for tolerances).
 */
export function refSinusoidal(positions, dModel, base, pairing) {
  const n = positions.length;
  const out = new Float64Array(n * dModel);
  const angle = new Float64Array(n * dModel);
  const half = Math.ceil(dModel / 2);
  for (let r = 0; r < n; r++) {
    const p = positions[r];
    for (let c = 0; c < dModel; c++) {
      let i;
      let isSin;
      if (pairing === 'interleaved') {
        i = c >> 1;
        isSin = (c & 1) === 0;
      } else {
        isSin = c < half;
        i = isSin ? c : c - half;
      }
      const a = p / base ** ((2 * i) / dModel);
      angle[r * dModel + c] = a;
      out[r * dModel + c] = isSin ? Math.sin(a) : Math.cos(a);
    }
  }
  return { out, angle };
}

/** cos/sin tables (n, nFreq) of positions · invFreq (double), times the attention factor. */
export function refCosSin(positions, invFreq, scale) {
  const n = positions.length;
  const F = invFreq.length;
  const cos = new Float64Array(n * F);
  const sin = new Float64Array(n * F);
  const angle = new Float64Array(n * F);
  for (let p = 0; p < n; p++) {
    for (let i = 0; i < F; i++) {
      const a = positions[p] * invFreq[i];
      angle[p * F + i] = a;
      cos[p * F + i] = Math.cos(a) * scale;
      sin[p * F + i] = Math.sin(a) * scale;
    }
  }
  return { cos, sin, angle };
}

/**
 * The angle size beyond which no reference value is meaningful: an angle held in double has an absolute
 * error of |a| · 2^-53, so past 2^40 the phase is known only to ~1e-4 rad, and only |v| <= scale is checked.
 */
export const ANGLE_CHECKED = 2 ** 40;

/**
 * null if |got[i] − ref[i]| <= tol(i) for every i (with matching non-finite values), else a description of
 * the first element out of tolerance.
 */
export function compare(what, got, ref, tol) {
  if (got.length !== ref.length) return `${what}: length ${got.length}, expected ${ref.length}`;
  for (let i = 0; i < ref.length; i++) {
    const g = got[i];
    const r = ref[i];
    if (!Number.isFinite(r)) {
      if (Object.is(g, r) || (Number.isNaN(g) && Number.isNaN(r))) continue;
      return `${what}[${i}] = ${g}, expected ${r}`;
    }
    const t = tol(i);
    if (!(Math.abs(g - r) <= t)) return `${what}[${i}] = ${g}, expected ${r} (tolerance ${t.toExponential(2)})`;
  }
  return null;
}

/** null if every value is finite, else where the first non-finite one is. */
export function allFinite(what, a) {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) return `${what}[${i}] = ${a[i]} (not finite)`;
  return null;
}
