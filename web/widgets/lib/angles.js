// angles.js — small numeric helpers of the RoPE figures.
//
//   wrapAngle(x)            x reduced to (−π, π]
//   dot(a, ao, b, bo, n)    dot product of two array slices
//   iota(n, start, step)    Int32Array of n positions start, start + step, …

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
