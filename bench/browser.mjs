// browser.mjs — the benchmark's ratios in a browser page (scripts/bench-web.mjs loads bench/web.html and calls
// browserBench). The same plan, workloads, contenders and bench modules as `npm run bench` (runner.mjs); what a
// page cannot have is left out and said so: native C (a process) and onnxruntime-web (not loaded here).
// Returns a results object for report.mjs (JSON-serialisable; the machine fields are filled in by the caller).

import { init } from '../web/src/index.js';
import { simdWasmBase64, scalarWasmBase64 } from '../web/src/wasm-inline.js';
import { instantiateRaw, decodeBase64 } from './raw.mjs';
import { plan, runPlan, runModules, PEAK_FLOPS } from './runner.mjs';
import { setStatistic, keepFastest } from './targets.mjs';

async function fetchModule(url) {
  const r = await fetch(url);
  if (!r.ok) return null;
  return WebAssembly.compile(await r.arrayBuffer());
}

/**
 * opts: { quick, rounds, minSample, only: [prefix], statistic: 'fastest' | 'rounds' }; log lines go to
 * console.log (forwarded by the runner). A page has only a wall clock, which a loaded machine's other work
 * lengthens in bursts; by default each cell is the ratio of the two contenders' fastest rounds ('fastest').
 */
export async function browserBench({ quick = false, rounds = 11, minSample = 0.01, only = [], statistic = 'fastest' } = {}) {
  setStatistic(statistic);
  const t0 = performance.now();
  const log = (s) => console.log(s);
  const selected = (id) => only.length === 0 || only.some((o) => id.startsWith(o));
  const pe = await init({ simd: true });
  const peScalar = await init({ simd: false });
  const simdModule = await WebAssembly.compile(decodeBase64(simdWasmBase64));
  const scalarModule = await WebAssembly.compile(decodeBase64(scalarWasmBase64));
  const raw = await instantiateRaw(simdModule);
  const rawScalar = await instantiateRaw(scalarModule);
  const limitModule = await fetchModule(new URL('./build/limit.wasm', import.meta.url));
  const unfusedModule = await fetchModule(new URL('./build/unfused.wasm', import.meta.url));
  const env = {
    pe,
    peScalar,
    raw,
    rawScalar,
    limit: limitModule ? await instantiateRaw(limitModule) : null,
    unfused: unfusedModule ? await instantiateRaw(unfusedModule) : null,
    native: null,
  };
  const contenders = {};
  const opts = { quick, rounds, minSample, selected, log, instantiateRaw, modules: { raw: simdModule, unfused: unfusedModule } };
  const workloads = await runPlan(env, plan(quick), contenders, opts);
  if (statistic === 'fastest') for (const w of workloads) if (w.results) keepFastest(w.results);
  const extra = await runModules(pe, raw, opts);
  const problems = [];
  for (const w of workloads) {
    if (w.error) problems.push(`${w.id}: ${w.error}`);
    for (const [cid, r] of Object.entries(w.results ?? {})) if (r.error) problems.push(`${w.id} ${cid}: ${r.error}`);
    for (const [cid, d] of Object.entries(w.check ?? {})) if (!(d <= 1e-4)) problems.push(`${w.id} ${cid}: output differs by ${d}`);
  }
  for (const x of extra) for (const r of x.rows) if (r.ratio == null) problems.push(`bench/${x.module}.mjs: ${r.name}: ${r.note}`);
  return {
    settings: { rounds, minSample, quick, clock: 'wall', statistic },
    contenders,
    workloads,
    extra,
    ort: [],
    ortMissing: 'not run in the browser page (onnxruntime-web is measured by `npm run bench` in Node)',
    peakFlops: PEAK_FLOPS,
    problems,
    seconds: (performance.now() - t0) / 1e3,
    userAgent: navigator.userAgent,
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
  };
}
