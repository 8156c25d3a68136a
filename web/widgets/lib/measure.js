// measure.js — how posenc's benchmarks measure, shared by `npm run bench` (bench/) and the playground's
// <pe-speed>. No Node-only API here (only performance.now and plain JS), so it runs in a browser too.
//
// Absolute times differ between machines and runs; ratios measured side by side in one process do not (much).
// So compare() runs every contender of a workload in interleaved rounds: in round r each contender takes one
// sample (a timed batch of `iters` calls, sized by calibration so one batch lasts at least minSample seconds,
// which keeps timer resolution and per-batch noise small), in an order that rotates with r so no contender is
// always first after another's cache damage. A ratio between two contenders is then formed round by round
// (times of the same round, taken seconds apart) and summarised by its median and quartiles across rounds.
//
// A contender is { id, sample(iters) -> seconds per call } (sample may return a Promise: native processes and
// onnxruntime sessions are asynchronous). loop(fn) and loopAsync(fn) make samplers from plain functions.

/** Seconds since an arbitrary origin. */
export const clock = () => performance.now() / 1e3;

/** A sampler that calls fn() iters times and returns seconds per call. */
export function loop(fn) {
  return (iters) => {
    const t0 = performance.now();
    for (let i = 0; i < iters; i++) fn();
    return (performance.now() - t0) / 1e3 / iters;
  };
}

/** Like loop() for a function returning a Promise (awaited one call at a time). */
export function loopAsync(fn) {
  return async (iters) => {
    const t0 = performance.now();
    for (let i = 0; i < iters; i++) await fn();
    return (performance.now() - t0) / 1e3 / iters;
  };
}

/** Sorted copy. */
const sorted = (xs) => Float64Array.from(xs).sort();

/** Linear-interpolated quantile of a sorted array, q in [0, 1]. */
export function quantile(s, q) {
  if (s.length === 0) return NaN;
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo] + (s[hi] - s[lo]) * (pos - lo);
}

/** { median, lo, hi, min, max, n } of xs; lo/hi are the quartiles. */
export function summary(xs) {
  const s = sorted(xs);
  return {
    median: quantile(s, 0.5),
    lo: quantile(s, 0.25),
    hi: quantile(s, 0.75),
    min: s[0],
    max: s[s.length - 1],
    n: s.length,
  };
}

/**
 * Finds iters such that one sample lasts at least minSample seconds (and at most maxIters calls).
 * A first call warms the code path (JIT tiers, page faults of fresh buffers) and is not used.
 */
export async function calibrate(sample, minSample, maxIters = 1e7) {
  // Warm up for about minSample (the JIT's optimising tier, page faults of fresh buffers, lazy setup in a
  // native process), growing the batch as we go.
  let iters = 1;
  let spent = 0;
  while (spent < minSample && iters < maxIters) {
    const t = (await sample(iters)) * iters;
    spent += t;
    iters = Math.min(maxIters, iters * 2);
  }
  // Then size the batch from a warm measurement, and check it once more (the first warm figure can still
  // carry a late JIT or GC pause, which would leave batches too short).
  iters = 1;
  for (let tries = 0; tries < 40; tries++) {
    const per = await sample(iters);
    const t = per * iters;
    if (t >= minSample || iters >= maxIters) {
      if (t < 3 * minSample) return iters;
      // far past the target: the estimate was stale, shrink once and re-check
      iters = Math.max(1, Math.ceil((1.3 * minSample) / per));
      const t2 = (await sample(iters)) * iters;
      if (t2 >= 0.7 * minSample) return iters;
      continue;
    }
    // aim 30% past the target so the next try usually lands; grow at most 100x per step
    const grow = t > 0 ? Math.min(100, Math.max(2, (1.3 * minSample) / t)) : 100;
    iters = Math.min(maxIters, Math.ceil(iters * grow));
  }
  return iters;
}

/**
 * Runs contenders side by side. Returns { rounds, results: { [id]: { iters, times[], ...summary(times) } } }.
 * options: rounds (default 15), minSample seconds per batch (default 0.02), onRound(r) progress callback.
 * A contender whose sample throws is recorded with { error } and skipped afterwards.
 */
export async function compare(contenders, { rounds = 15, minSample = 0.02, onRound } = {}) {
  const live = [];
  const results = {};
  for (const c of contenders) {
    try {
      const iters = await calibrate(c.sample, c.minSample ?? minSample, c.maxIters);
      results[c.id] = { iters, times: [] };
      live.push(c);
    } catch (e) {
      results[c.id] = { error: String(e && e.message ? e.message : e) };
    }
  }
  for (let r = 0; r < rounds; r++) {
    const n = live.length;
    for (let k = 0; k < n; k++) {
      const c = live[(k + r) % n];
      const res = results[c.id];
      if (res.error) continue;
      try {
        res.times.push(await c.sample(res.iters));
      } catch (e) {
        res.error = String(e && e.message ? e.message : e);
      }
    }
    if (onRound) onRound(r);
  }
  for (const c of live) {
    const res = results[c.id];
    if (!res.error) Object.assign(res, summary(res.times));
  }
  return { rounds, results };
}

/**
 * Ratio of two contenders' times, round by round: times(a) / times(b). > 1 means b is faster.
 * Returns { median, lo, hi, n } (quartiles across rounds) or null when either is missing.
 */
export function ratio(results, a, b) {
  const ra = results[a];
  const rb = results[b];
  if (!ra || !rb || ra.error || rb.error || !ra.times || !rb.times) return null;
  const n = Math.min(ra.times.length, rb.times.length);
  if (n === 0) return null;
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(ra.times[i] / rb.times[i]);
  const s = summary(xs);
  return { median: s.median, lo: s.lo, hi: s.hi, n };
}

/** Difference of two contenders' times, round by round: times(a) - times(b), in seconds. */
export function difference(results, a, b) {
  const ra = results[a];
  const rb = results[b];
  if (!ra || !rb || ra.error || rb.error || !ra.times || !rb.times) return null;
  const n = Math.min(ra.times.length, rb.times.length);
  if (n === 0) return null;
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(ra.times[i] - rb.times[i]);
  const s = summary(xs);
  return { median: s.median, lo: s.lo, hi: s.hi, n };
}

/** Deterministic pseudo-random floats in [-1, 1) (an LCG; reproducible across engines). */
export function fillRandom(x, seed = 1) {
  let s = seed >>> 0;
  for (let i = 0; i < x.length; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    x[i] = (s >>> 8) * (2 / 16777216) - 1;
  }
  return x;
}

/** Human-readable seconds: 1.23 µs, 4.56 ms. */
export function formatTime(s) {
  if (!Number.isFinite(s)) return 'n/a';
  if (s < 1e-6) return `${(s * 1e9).toFixed(0)} ns`;
  if (s < 1e-3) return `${(s * 1e6).toPrecision(3)} µs`;
  if (s < 1) return `${(s * 1e3).toPrecision(3)} ms`;
  return `${s.toPrecision(3)} s`;
}

/** "12.3× (11.9–12.8)" from a ratio summary. */
export function formatRatio(r, digits = 2) {
  if (!r) return 'n/a';
  const f = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(digits));
  return `${f(r.median)}× (${f(r.lo)}–${f(r.hi)})`;
}
