// f16-ref.js — plain reference conversions for the 16-bit storage tests: double arithmetic, no bit tricks beyond
// the field layout of the formats (IEEE binary16: 1 sign, 5 exponent, 10 fraction bits; bfloat16: the top 16
// bits of a float32, 8 exponent and 7 fraction bits). Independent of c/src/f16.h: checked in f16.test.js
// against known patterns and as a round trip over every finite pattern.

const FMT = {
  float16: { mant: 10, minExp: -14, maxFinite: 65504 },
  bfloat16: { mant: 7, minExp: -126, maxFinite: (2 - 2 ** -7) * 2 ** 127 },
};
function exponentOf(a) {
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--; // guard Math.log2 rounding
  if (2 ** (e + 1) <= a) e++;
  return e;
}
/** a finite double -> 16-bit pattern, round to nearest even */
export function encode(dtype, x) {
  const f = FMT[dtype];
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (a === 0) return sign;
  const e = Math.max(exponentOf(a), f.minExp);
  const ulp = 2 ** (e - f.mant);
  let q = a / ulp;
  const fl = Math.floor(q);
  const r = q - fl;
  q = r > 0.5 || (r === 0.5 && fl % 2 === 1) ? fl + 1 : fl;
  const v = q * ulp;
  const infBits = dtype === 'float16' ? 0x7c00 : 0x7f80;
  if (v > f.maxFinite) return sign | infBits;
  if (v < 2 ** f.minExp) return sign | q;
  const ev = exponentOf(v);
  const field = ev - f.minExp + 1;
  const mant = v / 2 ** ev * 2 ** f.mant - 2 ** f.mant;
  return sign | (field << f.mant) | mant;
}
export function decode(dtype, h) {
  const f = FMT[dtype];
  const expBits = 15 - f.mant;
  const e = (h >> f.mant) & ((1 << expBits) - 1);
  const m = h & ((1 << f.mant) - 1);
  const sign = h & 0x8000 ? -1 : 1;
  if (e === (1 << expBits) - 1) return m ? NaN : sign * Infinity;
  return sign * (e === 0 ? m * 2 ** (f.minExp - f.mant) : (2 ** f.mant + m) * 2 ** (e - 1 + f.minExp - f.mant));
}
export function ulpAt(dtype, r) {
  const f = FMT[dtype];
  const a = Math.abs(r);
  const e = a === 0 ? f.minExp : Math.max(exponentOf(a), f.minExp);
  return 2 ** (e - f.mant);
}

