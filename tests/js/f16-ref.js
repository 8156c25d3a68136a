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


/**
 * Asserts that every 16-bit result `got` (bits) is within 1 ulp of the storage type of `want[i]` (double), plus
 * `slack(i)` (the float32 arithmetic's own error bound, where the caller has one; 0 otherwise). Counts into
 * `stats` ({ n, worst, over }): over = results past 1 ulp that the slack allowed. NaN / ±Inf want the same.
 */
export function assertWithinUlp(stats, dtype, got, want, slack, label) {
  for (let i = 0; i < got.length; i++) {
    const g = decode(dtype, got[i]);
    const w = want[i];
    stats.n++;
    if (!Number.isFinite(w) || !Number.isFinite(g)) {
      if (Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w))) continue;
      // a finite value just past the format's largest rounds to Inf: within 1 ulp of it is what that means
      if (Number.isFinite(w) && Math.abs(w) - ulpAt(dtype, w) <= maxFinite(dtype) && g === Math.sign(w) * Infinity) continue;
      throw new Error(`${label}[${i}]: got ${g}, want ${w}`);
    }
    const ulp = ulpAt(dtype, w);
    const err = Math.abs(g - w);
    stats.worst = Math.max(stats.worst, err / ulp);
    if (err > ulp) {
      const s = slack === null ? 0 : slack(i);
      if (err > ulp + s) throw new Error(`${label}[${i}] (${dtype}): got ${g}, want ${w}: ${(err / ulp).toFixed(3)} ulps (slack ${s})`);
      stats.over++;
    }
  }
}

/** The largest finite value of the storage type. */
export function maxFinite(dtype) {
  return FMT[dtype].maxFinite;
}

/** The 16-bit arrays are equal bit for bit, except that any two NaNs count as equal (their payload is open). */
export function assertHalfEqual(dtype, a, b, what) {
  if (a.length !== b.length) throw new Error(`${what}: length ${a.length} vs ${b.length}`);
  const inf = dtype === 'float16' ? 0x7c00 : 0x7f80;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    const nanA = (a[i] & 0x7fff) > inf;
    const nanB = (b[i] & 0x7fff) > inf;
    if (nanA && nanB) continue;
    throw new Error(`${what}: element ${i} differs: 0x${a[i].toString(16)} vs 0x${b[i].toString(16)}`);
  }
}

export function newStats() {
  return { n: 0, worst: 0, over: 0 };
}
