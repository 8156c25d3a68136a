// clock.mjs — the samplers every bench contender uses: loop(fn) / loopAsync(fn) as in
// web/widgets/lib/measure.js, on a clock chosen once per run. No Node-only API at import time.
//
// 'cpu' (the default where the engine has it: Node's process.cpuUsage, user + system time of this process)
// counts only the time this process ran, so other processes' load on a shared machine does not lengthen a
// sample; the work itself (page faults, GC helper threads) still counts. 'wall' is performance.now(), what a
// page has (browsers expose no CPU clock). The native contender is told the same (bench_native `clock`).

const cpuUsage = globalThis.process?.cpuUsage;
export const hasCpuClock = typeof cpuUsage === 'function';
let which = hasCpuClock ? 'cpu' : 'wall';

/** 'cpu' | 'wall'; 'cpu' falls back to 'wall' without a CPU clock. Returns the clock in use. */
export function setClock(name) {
  which = name === 'cpu' && hasCpuClock ? 'cpu' : 'wall';
  return which;
}
export const clockName = () => which;

/** Seconds on the chosen clock. */
export function now() {
  if (which === 'cpu') {
    const u = cpuUsage.call(globalThis.process);
    return (u.user + u.system) / 1e6;
  }
  return performance.now() / 1e3;
}

/** A sampler that calls fn() iters times and returns seconds per call. */
export function loop(fn) {
  return (iters) => {
    const t0 = now();
    for (let i = 0; i < iters; i++) fn();
    return (now() - t0) / iters;
  };
}

/** Like loop() for a function returning a Promise (awaited one call at a time). */
export function loopAsync(fn) {
  return async (iters) => {
    const t0 = now();
    for (let i = 0; i < iters; i++) await fn();
    return (now() - t0) / iters;
  };
}
