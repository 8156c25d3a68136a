// clock.mjs — the samplers every bench contender uses: loop(fn) / loopAsync(fn) as in
// web/widgets/lib/measure.js, on a clock chosen once per run. No Node-only API at import time.
//
// 'cpu' (the default where the engine has it) times a sample as min(process CPU time, wall time). Both bound
// the measuring thread's own time from above: process CPU time (Node's process.cpuUsage, user + system) leaves
// out the time other processes of a shared machine held the core, but adds what this process's other threads
// did meanwhile (V8 tiering up wasm or collecting garbage on the other core); wall time has the opposite
// faults. The smaller is the tighter bound, exact whenever either disturbance is absent. 'wall' is
// performance.now() alone, what a page has (browsers expose no CPU clock). The native contender, a
// single-threaded process, is told to use its CPU time (bench_native `clock cpu`).

const cpuUsage = globalThis.process?.cpuUsage;
export const hasCpuClock = typeof cpuUsage === 'function';
let which = hasCpuClock ? 'cpu' : 'wall';

/** 'cpu' | 'wall'; 'cpu' falls back to 'wall' without a CPU clock. Returns the clock in use. */
export function setClock(name) {
  which = name === 'cpu' && hasCpuClock ? 'cpu' : 'wall';
  return which;
}
export const clockName = () => which;

const cpuSeconds = () => {
  const u = cpuUsage.call(globalThis.process);
  return (u.user + u.system) / 1e6;
};

/** A stopwatch on the chosen clock: start() returns stop() -> elapsed seconds. */
export function start() {
  const w0 = performance.now();
  if (which !== 'cpu') return () => (performance.now() - w0) / 1e3;
  const c0 = cpuSeconds();
  return () => {
    const wall = (performance.now() - w0) / 1e3;
    return Math.min(wall, cpuSeconds() - c0);
  };
}

/** A sampler that calls fn() iters times and returns seconds per call. */
export function loop(fn) {
  return (iters) => {
    const stop = start();
    for (let i = 0; i < iters; i++) fn();
    return stop() / iters;
  };
}

/** Like loop() for a function returning a Promise (awaited one call at a time). */
export function loopAsync(fn) {
  return async (iters) => {
    const stop = start();
    for (let i = 0; i < iters; i++) await fn();
    return stop() / iters;
  };
}
