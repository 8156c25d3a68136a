#!/usr/bin/env node
// npm run fuzz:js [-- --seed N] [--runs N] [--build simd|scalar|both] [--hang-ms N] [--strict]
//
// The JS API fuzzer (tests/js/fuzz/) for longer than the fixed-seed smoke in npm test: a random seed unless
// --seed is given (printed first, so any run can be replayed), --runs cases per build (default 20000).
// Every distinct violation is printed with the case that found it; a damaged instance is replaced by a fresh
// one so one finding does not hide the next. Each build runs in a worker thread watched from here: a case that
// runs past --hang-ms (default 10000) is a hang, reported with the case, and the run continues in a new worker
// from the next seed. Exit status 1 when anything was found. (--strict is accepted for older scripts: strict
// options and ropeFromHFConfig's refusals are demanded by default now, tests/js/fuzz/common.js policy.)
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';

if (isMainThread) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i === -1 ? dflt : args[i + 1];
  };
  const seed = Number(opt('seed', Math.floor(Math.random() * 2 ** 31)));
  const runs = Number(opt('runs', 20000));
  const hangMs = Number(opt('hang-ms', 10000));
  const which = opt('build', 'both');
  const strict = args.includes('--strict');
  if (!Number.isInteger(seed) || !Number.isInteger(runs) || runs < 1) {
    console.error('usage: node scripts/fuzz-js.mjs [--seed N] [--runs N] [--build simd|scalar|both] [--hang-ms N]');
    process.exit(2);
  }
  const builds = which === 'both' ? [true, false] : [which === 'simd'];
  console.log(`fuzz:js seed ${seed}, ${runs} runs per build (replay: node scripts/fuzz-js.mjs --seed ${seed} --runs ${runs})`);
  let total = 0;
  for (const simd of builds) total += await runBuild(simd, seed, runs, hangMs, strict);
  console.log(`fuzz:js done: ${total} finding(s) (seed ${seed})`);
  process.exit(total ? 1 : 0);
}

/** Runs one build in workers until `runs` cases are done; returns the number of findings. */
async function runBuild(simd, seed, runs, hangMs, strict) {
  const name = simd ? 'simd' : 'scalar';
  const t0 = performance.now();
  let done = 0;
  let findings = 0;
  let hangs = 0;
  let s = seed;
  const seen = new Set(); // one report per kind of finding (workers restarted after a hang start afresh)
  const perEntry = {};
  const stats = { calls: 0, checked: 0, returned: 0, refused: 0 };
  while (done < runs) {
    const r = await oneWorker(simd, s, runs - done, hangMs, strict, (f) => {
      if (seen.has(f.key)) return;
      seen.add(f.key);
      findings++;
      console.log(`[${name}] finding ${findings}: ${f.where}: ${f.violation}\n    case ${f.case}`);
    });
    done += r.executed;
    for (const [entry, n] of Object.entries(r.perEntry ?? {})) perEntry[entry] = (perEntry[entry] ?? 0) + n;
    for (const [k, n] of Object.entries(r.stats ?? {})) stats[k] += n;
    if (r.hang) {
      hangs++;
      findings++;
      console.log(`[${name}] finding ${findings}: HANG (no answer in ${hangMs} ms) on case ${r.executed} of seed ${s}:\n    case ${r.hang}`);
      done += 1;
      s += 1; // carry on from another seed in a fresh worker
    } else if (r.error) {
      findings++;
      console.log(`[${name}] finding ${findings}: the fuzzer itself failed: ${r.error}`);
      break;
    }
  }
  const secs = (performance.now() - t0) / 1000;
  console.log(`[${name}] ${done} cases in ${secs.toFixed(1)} s (${Math.round(done / secs)}/s), ${findings} finding(s), ${hangs} hang(s)`);
  console.log(`[${name}] ${stats.calls} API calls: ${stats.checked} results checked against the references, ${stats.returned} other returns, ${stats.refused} clean refusals`);
  console.log(`[${name}] cases per entry point: ${Object.entries(perEntry).map(([e, n]) => `${e} ${n}`).join(', ')}`);
  return findings;
}

function oneWorker(simd, seed, runs, hangMs, strict, onFinding) {
  return new Promise((resolve) => {
    const w = new Worker(fileURLToPath(import.meta.url), { workerData: { simd, seed, runs, strict } });
    let last = { at: performance.now(), text: null, n: 0 };
    let settled = false;
    const finish = (v) => {
      if (settled) return;
      settled = true;
      clearInterval(timer);
      resolve(v);
    };
    const timer = setInterval(() => {
      if (performance.now() - last.at > hangMs) {
        w.terminate();
        finish({ executed: last.n, hang: last.text });
      }
    }, 250);
    w.on('message', (m) => {
      if (m.type === 'case') last = { at: performance.now(), text: m.text, n: m.n };
      else if (m.type === 'finding') onFinding(m.finding);
      else if (m.type === 'done') finish({ executed: m.executed, perEntry: m.perEntry, stats: m.stats });
    });
    w.on('error', (e) => finish({ executed: last.n, error: e?.stack ?? String(e) }));
    w.on('exit', () => finish({ executed: last.n, error: 'worker exited early' }));
  });
}

if (!isMainThread) {
  const { fuzz, showCase } = await import('../tests/js/fuzz/run.js');
  const { simd, seed, runs, strict } = workerData;
  if (strict) {
    const { policy } = await import('../tests/js/fuzz/common.js');
    Object.assign(policy, { unknownKey: 'error', hfStrict: 'error' });
  }
  let n = 0;
  const r = await fuzz({
    simd,
    seed,
    runs,
    mode: 'collect',
    trace: (c) => parentPort.postMessage({ type: 'case', n: n++, text: showCase(c) }),
    onFinding: (finding) => parentPort.postMessage({ type: 'finding', finding }),
  });
  parentPort.postMessage({ type: 'done', executed: r.runs, perEntry: r.perEntry, stats: r.stats });
}
