// targets.mjs — the shared shape of a benchmark target and the glue for bench modules (f16.mjs, strided.mjs,
// mrope.mjs, attention-batch.mjs). No Node-only API at import time: a page can use it.
//
// The interface every such module follows (posted in NOTICES.md):
//   export async function measure(pe, opts) -> Promise<Array<Row>>
//     pe    init({ simd: true }) from web/src/index.js
//     opts  { quick, rounds, minSample, raw }: raw is bench/raw.mjs instantiateRaw() of the same SIMD wasm
//   Row = { name, ratio, lo?, hi?, target, better: 'higher' | 'lower', note? }
//     ratio: the median of per-round ratios, oriented as the target reads; met iff ratio >= target ('higher')
//     or ratio <= target ('lower'). ratio null/NaN: not measured (note says why).

import { ratio as roundRatio } from '../web/widgets/lib/measure.js';

/** 'met' | 'missed' | 'not measured' for a row. */
export function status(row) {
  if (row.ratio == null || !Number.isFinite(row.ratio)) return 'not measured';
  return (row.better === 'lower' ? row.ratio <= row.target : row.ratio >= row.target) ? 'met' : 'missed';
}

/** '≥ 1.7×' / '≤ 1.1×'. */
export const bound = (row) => `${row.better === 'lower' ? '≤' : '≥'} ${row.target}×`;

/** "1.23× (1.20–1.25)" from a row. */
export function measured(row) {
  if (row.ratio == null || !Number.isFinite(row.ratio)) return 'not measured';
  const q = row.lo != null && row.hi != null && row.lo !== row.hi ? ` (${row.lo.toFixed(2)}–${row.hi.toFixed(2)})` : '';
  return `${row.ratio.toFixed(2)}×${q}`;
}

// 'rounds': the median (and quartiles) of per-round ratios, the default; 'fastest': the ratio of each
// contender's fastest round (a wall clock under bursty load: other load only ever adds time; the browser run)
let statistic = 'rounds';
export function setStatistic(name) {
  statistic = name === 'fastest' ? 'fastest' : 'rounds';
}

/** A row from compare() results: times(a) / times(b) per round, its median and quartiles. */
export function rowFrom(results, a, b, fields) {
  const r = statistic === 'fastest' ? fastestRatio(results, a, b) : roundRatio(results, a, b);
  return { ratio: r ? r.median : null, lo: r ? r.lo : null, hi: r ? r.hi : null, ...fields };
}

/** One line of text per row: "met   1.83× (1.80–1.85)  ≥ 1.7×  name — note". */
export function formatRows(rows) {
  return rows.map((r) => `${status(r).padEnd(12)} ${measured(r).padEnd(22)} ${bound(r).padEnd(8)} ${r.name}${r.note ? ` — ${r.note}` : ''}`).join('\n');
}

/**
 * For `node bench/<x>.mjs [--quick] [--rounds N] [--min-sample S]`: when moduleUrl is the script Node was
 * started with, runs measure() on the SIMD build and prints its rows. Does nothing in a browser or on import.
 */
/** True when the module at moduleUrl is the script Node was started with (a page, without process: never). */
export function isMainModule(moduleUrl) {
  const argv = globalThis.process?.argv;
  return Boolean(argv?.[1]) && new URL(`file://${argv[1]}`).href === moduleUrl;
}

export async function standalone(moduleUrl, measure) {
  if (!isMainModule(moduleUrl)) return;
  const argv = globalThis.process.argv;
  const opt = (name, dflt) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && i + 1 < argv.length ? Number(argv[i + 1]) : dflt;
  };
  const quick = argv.includes('--quick');
  const { init } = await import('../web/src/index.js');
  const { simdWasmBase64 } = await import('../web/src/wasm-inline.js');
  const { instantiateRaw, decodeBase64 } = await import('./raw.mjs');
  const pe = await init({ simd: true });
  const raw = await instantiateRaw(decodeBase64(simdWasmBase64));
  const rows = await measure(pe, { quick, rounds: opt('rounds', quick ? 3 : 9), minSample: opt('min-sample', quick ? 0.005 : 0.02), raw });
  console.log(formatRows(rows));
}

/** min(times(a)) / min(times(b)), shaped like measure.js's ratio() (no spread). */
export function fastestRatio(results, a, b) {
  const ta = results[a]?.times;
  const tb = results[b]?.times;
  if (!ta?.length || !tb?.length || results[a].error || results[b].error) return null;
  const v = Math.min(...ta) / Math.min(...tb);
  return { median: v, lo: v, hi: v, n: 1 };
}

/** Rewrites compare() results so measure.js's ratio() gives fastestRatio: each contender's times -> [its fastest]. */
export function keepFastest(results) {
  for (const r of Object.values(results)) {
    if (!r.times?.length) continue;
    r.roundTimes = r.times;
    r.times = [Math.min(...r.times)];
    r.median = r.lo = r.hi = r.times[0];
  }
  return results;
}
