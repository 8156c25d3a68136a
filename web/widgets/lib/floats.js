// floats.js — rounding a double to float32, float16 and bfloat16 (round to nearest, ties to even), to show what
// a computation held in those formats loses. Plain JS arithmetic on numbers, no encoding computed here.
//
//   f32(x)   Math.fround
//   f16(x)   IEEE binary16: 10 stored significand bits, exponents −14..15, subnormals, max 65504, then ±Infinity
//   bf16(x)  bfloat16 from float32 (as torch casts): 7 stored significand bits, float32's exponent range

/** x rounded to a binary format with `mant` stored significand bits and smallest normal exponent emin. */
export function roundFormat(x, mant, emin, max) {
  if (!Number.isFinite(x) || x === 0) return x;
  const a = Math.abs(x);
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  if (e < emin) e = emin; // subnormal: fixed spacing
  const ulp = 2 ** (e - mant);
  const q = a / ulp;
  let r = Math.floor(q);
  const f = q - r;
  if (f > 0.5 || (f === 0.5 && r % 2 === 1)) r += 1;
  const y = r * ulp;
  if (y > max) return x > 0 ? Infinity : -Infinity;
  return x < 0 ? -y : y;
}

export const f32 = Math.fround;
export const f16 = (x) => roundFormat(x, 10, -14, 65504);
export const bf16 = (x) => roundFormat(Math.fround(x), 7, -126, 3.3895313892515355e38);

/** x − y reduced to (−π, π] (an angle difference), computed in double. */
export function angleDiff(x, y) {
  const TAU = 2 * Math.PI;
  let d = (x - y) % TAU;
  if (d > Math.PI) d -= TAU;
  else if (d <= -Math.PI) d += TAU;
  return d;
}
