#!/usr/bin/env node
// run.mjs (Node only) — `npm run bench`: posenc against plain JS, onnxruntime-web, native C and the wasm
// memory-bandwidth limit, side by side in one run. Prints markdown tables and writes bench/results.json.
//
//   node bench/run.mjs                 everything (a few minutes on 2 cores)
//   node bench/run.mjs --quick         a small subset with few rounds (~30 s): a smoke test of the harness
//   options: --rounds N  --min-sample SECONDS  --only PREFIX[,PREFIX]  --no-ort  --ort-threads 1[,2]  --no-native  --out FILE
//            --strict (exit 1 on any problem: a failed contender, an output off its reference; --quick implies it)
//            --no-malloc-tuning  --clock cpu|wall (default cpu: samples in this process's CPU time, see clock.mjs)
//
// Set-up it does itself: `bash build.sh wasm` (posenc's wasm, idempotent), `npm ci --prefix bench` when
// bench/node_modules is missing (onnxruntime-web, pinned in bench/package-lock.json), `bash bench/build.sh`
// (the limit and unfused wasm, the native binary; idempotent).
//
// Every figure in the tables is a ratio of two contenders measured in the same process in interleaved rounds
// (web/widgets/lib/measure.js); native C runs in its own process but interleaved with ours, sample by sample; onnxruntime-web
// runs in child processes (its thread count is per process) that measure posenc's API alongside it.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { machine, sizes } from './machine.mjs';
import { setClock } from './clock.mjs';
import { plan, runPlan, runModules, PAIRINGS, LAYOUTS, PEAK_FLOPS } from './runner.mjs';

// glibc malloc serves every large block (above its mmap threshold) with fresh pages from the kernel and gives
// them back on free; each first touch of such a page is a page fault. On this kind of VM a fault costs ~30 µs
// per 4 KiB (~100x bare metal; the run measures it), which would bill anything that allocates fresh output
// arrays per call (onnxruntime-web's session.run outputs; API calls returning new arrays) for the machine
// instead of the code: a 128 MiB output would cost ~1 s of faults. So the benchmark, and the onnxruntime
// children that inherit its environment, run with malloc serving everything from its heap and keeping freed
// memory (no mmap, no trim): freed blocks are reused without faults, as on a machine where faults are cheap.
// --no-malloc-tuning measures as is.
const MALLOC_ENV = { MALLOC_MMAP_MAX_: '0', MALLOC_TRIM_THRESHOLD_: '68719476736', MALLOC_TOP_PAD_: '268435456' };
if (!process.argv.includes('--no-malloc-tuning') && process.env.POSENC_BENCH_MALLOC !== '1') {
  const r = spawnSync(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, ...MALLOC_ENV, POSENC_BENCH_MALLOC: '1' },
  });
  process.exit(r.status ?? 1);
}

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH);
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};

const quick = flag('quick');
// samples on this process's CPU time by default (bench/clock.mjs): a shared machine's other load does not count
const CLOCK = setClock(opt('clock', 'cpu'));
const ROUNDS = Number(opt('rounds', quick ? 3 : 11));
const MIN_SAMPLE = Number(opt('min-sample', quick ? 0.005 : 0.01));
const ONLY = opt('only', '')
  .split(',')
  .filter(Boolean);
const OUT = path.resolve(opt('out', path.join(BENCH, 'results.json')));
// every contender's output is compared once with a reference (plain JS in double, or the fused kernel);
// float32 results of O(1) values agree to ~1e-7, so 1e-4 only catches real errors
const CHECK_TOLERANCE = 1e-4;
const log = (...a) => process.stderr.write(`${a.join(' ')}\n`);

// -------------------------------------------------------------------------------------------------------------
// Set-up
// -------------------------------------------------------------------------------------------------------------
function sh(cmd, args, what) {
  try {
    execFileSync(cmd, args, { cwd: ROOT, stdio: ['ignore', 2, 2] }); // build logs to stderr: stdout is the report
    return true;
  } catch (e) {
    log(`bench: ${what} failed (${e.status ?? e.message})`);
    return false;
  }
}

function setup() {
  const haveDist = fs.existsSync(path.join(ROOT, 'dist/posenc.simd.wasm')) && fs.existsSync(path.join(ROOT, 'web/src/wasm-inline.js'));
  // build.sh is idempotent: it only rebuilds when sources changed, so the wasm measured is the current C.
  if (!sh('bash', ['build.sh', 'wasm'], 'bash build.sh wasm') && !haveDist) {
    throw new Error('bench: no posenc wasm (dist/, web/src/wasm-inline.js) and build.sh wasm failed');
  }
  if (!flag('no-ort')) ortSetup = ensureOrt();
  sh('bash', ['bench/build.sh'], 'bash bench/build.sh');
}

// bench/node_modules (onnxruntime-web only) is installed like scripts/setup.sh installs the root's: `npm ci` when
// it is missing or was installed from another bench/package-lock.json (a stamp holds the lock's hash).
// Returns null when onnxruntime-web is ready, else why not (the ORT target's "not measured" note).
let ortSetup = '--no-ort';
function ensureOrt() {
  const lock = fs.readFileSync(path.join(BENCH, 'package-lock.json'));
  const hash = createHash('sha256').update(lock).digest('hex');
  const stamp = path.join(BENCH, 'node_modules/.posenc-lock.sha256');
  const have = fs.existsSync(path.join(BENCH, 'node_modules/onnxruntime-web/package.json'));
  const current = have && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8').trim() === hash;
  if (!current) {
    log(`bench: npm ci --prefix bench (bench/node_modules ${have ? 'out of date with bench/package-lock.json' : 'missing'})`);
    if (sh('npm', ['ci', '--prefix', 'bench', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], 'npm ci --prefix bench')) {
      fs.writeFileSync(stamp, `${hash}\n`);
    } else if (!have) {
      return 'onnxruntime-web is not installed: npm ci --prefix bench failed (no registry?)';
    }
  }
  // what ort.mjs loads; a broken install says so here instead of as a child process without output
  const r = spawnSync(process.execPath, ['-e', "const o = require('onnxruntime-web'); process.stdout.write(o.env.versions.web)"], { cwd: BENCH, encoding: 'utf8' });
  if (r.status !== 0) return `onnxruntime-web does not load in Node ${process.version}: ${(r.stderr || '').trim().split('\n').pop()}`;
  log(`bench: onnxruntime-web ${r.stdout} (bench/node_modules)`);
  return null;
}

const selected = (id) => ONLY.length === 0 || ONLY.some((o) => id.startsWith(o));

// onnxruntime-web runs: [threads, [rope workload specs]]; 1 thread on every RoPE workload (the target's
// terms), more threads only when asked (--ort-threads 1,2)
const ORT_THREADS = opt('ort-threads', '1').split(',').map(Number).filter((t) => t >= 1);
function ortPlan() {
  if (flag('no-ort')) return [];
  if (quick) return [[1, [{ size: 'decode', pairing: 'half', layout: 'bshd' }]]];
  // every workload of the main tables, large included (one onnxruntime run of [4,2048,32,128] q and k is
  // ~0.3 s on a quiet machine, so the four large ones add about a minute)
  const every = ['decode', 'prefill', 'large'].flatMap((size) => PAIRINGS.flatMap((pairing) => LAYOUTS.map((layout) => ({ size, pairing, layout }))));
  const one = ['decode', 'prefill', 'large'].map((size) => ({ size, pairing: 'half', layout: 'bshd' }));
  return ORT_THREADS.map((t) => [t, t === 1 ? every : one]);
}

// -------------------------------------------------------------------------------------------------------------
// Running
// -------------------------------------------------------------------------------------------------------------
async function runOrt(threads, specs, rounds, minSample) {
  const wanted = specs.filter((s) => selected(`rope/${s.size}/${s.pairing}/${s.layout}`));
  if (wanted.length === 0) return null;
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [path.join(BENCH, 'ort.mjs'), '--threads', String(threads), '--rounds', String(rounds), '--min-sample', String(minSample), '--warmup-ms', quick ? '200' : '600', '--clock', CLOCK, '--workloads', JSON.stringify(wanted)],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').pop();
      try {
        resolve(JSON.parse(line));
      } catch {
        log(`bench: onnxruntime-web (${threads} thread(s)) gave no result (exit ${code})`);
        resolve({ threads, error: `exit ${code}`, workloads: [] });
      }
    });
  });
}

async function main() {
  const t0 = Date.now();
  setup();
  const load0 = os.loadavg();

  const { instantiateRaw, decodeBase64 } = await import('./raw.mjs');
  const { init } = await import(pathToFileURL(path.join(ROOT, 'web/src/index.js')).href);
  const inline = await import(pathToFileURL(path.join(ROOT, 'web/src/wasm-inline.js')).href);

  const pe = await init({ simd: true });
  const peScalar = await init({ simd: false });
  const simdModule = await WebAssembly.compile(decodeBase64(inline.simdWasmBase64));
  const scalarModule = await WebAssembly.compile(decodeBase64(inline.scalarWasmBase64));
  const raw = await instantiateRaw(simdModule);
  const rawScalar = await instantiateRaw(scalarModule);
  const readOpt = (rel) => (fs.existsSync(path.join(BENCH, rel)) ? fs.readFileSync(path.join(BENCH, rel)) : null);
  const limitBytes = readOpt('build/limit.wasm');
  const unfusedBytes = readOpt('build/unfused.wasm');
  const limit = limitBytes ? await instantiateRaw(limitBytes) : null;
  const unfusedModule = unfusedBytes ? await WebAssembly.compile(unfusedBytes) : null;
  const unfused = unfusedModule ? await instantiateRaw(unfusedModule) : null;
  let native = null;
  if (!flag('no-native') && fs.existsSync(path.join(BENCH, 'build/bench_native'))) {
    const { startNative } = await import('./native.mjs');
    native = await startNative(path.join(BENCH, 'build/bench_native'));
    const nativeClock = await native.clock(CLOCK);
    if (nativeClock !== CLOCK) throw new Error(`bench_native timed on ${nativeClock}, not ${CLOCK}`);
    log(`bench: native: ${native.isa} via simd.h (gcc -O3 -march=native)`);
  }
  const env = { pe, peScalar, raw, rawScalar, limit, unfused, native: native ? native.sampler : null };
  const pageFault = native ? await native.pageFault().catch(() => null) : null;

  const results = {
    machine: machine(),
    command: `node bench/run.mjs ${argv.join(' ')}`.trim(),
    settings: { rounds: ROUNDS, minSample: MIN_SAMPLE, quick, clock: CLOCK },
    contenders: {},
    workloads: [],
    ort: [],
    memory: {},
    sizes: sizes(ROOT),
  };

  const runOpts = { quick, rounds: ROUNDS, minSample: MIN_SAMPLE, selected, log, instantiateRaw, modules: { raw: simdModule, unfused: unfusedModule } };
  results.workloads = await runPlan(env, plan(quick), results.contenders, runOpts);
  if (native) native.close();

  if (ortSetup) results.ortMissing = ortSetup;
  // what each thread count was asked to run: the ORT target covers these workloads
  results.ortPlanned = {};
  for (const [threads, specs] of ortSetup ? [] : ortPlan()) {
    results.ortPlanned[threads] = specs.map((x) => `rope/${x.size}/${x.pairing}/${x.layout}`).filter(selected);
    const ts = Date.now();
    const r = await runOrt(threads, specs, quick ? 3 : 5, MIN_SAMPLE);
    if (r) {
      results.ort.push(r);
      log(`bench: onnxruntime-web, ${threads} thread(s): ${r.workloads.length} workloads, ${((Date.now() - ts) / 1e3).toFixed(1)} s`);
    }
  }

  // the modules with their own targets (f16, strided, padded-batch attention, M-RoPE)
  results.extra = await runModules(pe, raw, runOpts);

  // Problems: a contender that failed, an output that disagrees with its reference, an onnxruntime run that
  // gave nothing. --quick and --strict exit non-zero on any (the harness's smoke test).
  const problems = [];
  for (const w of results.workloads) {
    if (w.error) problems.push(`${w.id}: ${w.error}`);
    for (const [cid, r] of Object.entries(w.results ?? {})) if (r.error) problems.push(`${w.id} ${cid}: ${r.error}`);
    for (const [cid, d] of Object.entries(w.check ?? {})) if (!(d <= CHECK_TOLERANCE)) problems.push(`${w.id} ${cid}: output differs by ${d}`);
  }
  for (const x of results.extra) for (const r of x.rows) if (r.ratio == null) problems.push(`bench/${x.module}.mjs: ${r.name}: ${r.note}`);
  for (const o of results.ort) {
    if (o.error) problems.push(`onnxruntime-web ${o.threads} thread(s): ${o.error}`);
    for (const w of o.workloads ?? []) {
      for (const [cid, d] of Object.entries(w.check ?? {})) if (!(d <= CHECK_TOLERANCE)) problems.push(`${w.id} ${cid}: ${d}`);
      for (const [cid, r] of Object.entries(w.results ?? {})) if (r.error) problems.push(`${w.id} ${cid}: ${r.error}`);
    }
  }
  results.problems = problems;
  results.peakFlops = PEAK_FLOPS;
  results.machine.loadAverage = { start: load0, end: os.loadavg() };
  results.machine.pageFaultSeconds = pageFault;
  if (native) results.machine.nativeIsa = native.isa;
  results.machine.mallocTuning = process.env.POSENC_BENCH_MALLOC === '1' ? MALLOC_ENV : null;
  results.seconds = (Date.now() - t0) / 1e3;
  // V8's code for the rotation loops (evidence for the limit: rotation notes); skipped when it fails
  if (!quick) {
    try {
      const { rotationLoops, exportIndices } = await import('./v8-code.mjs');
      const loops = (file, names) => {
        const { exports, imported } = exportIndices(fs.readFileSync(file));
        const idx = names.map((n) => exports[n] + imported);
        const got = rotationLoops(file, idx);
        return Object.fromEntries(names.map((n, i) => [n, got[`wasm-function[${idx[i]}]`] ?? null]));
      };
      // posenc's float32 apply kernels are static functions called through a table: found by name in the
      // same C built with a name section (bench/build.sh); without it, the exported entry point
      const named = path.join(BENCH, 'build/posenc-names.simd.wasm');
      if (fs.existsSync(named)) results.code = rotationLoops(named, ['pe__apply_half_fwd', 'pe__apply_il_fwd']);
      else results.code = { ...loops(path.join(ROOT, 'dist/posenc.simd.wasm'), ['pe_rope_apply']) };
      if (limitBytes) Object.assign(results.code, loops(path.join(BENCH, 'build/limit.wasm'), ['rot_half_bshd', 'rot_half_bhsd', 'rot_il_bshd', 'rot_il_bhsd']));
    } catch (e) {
      log(`bench: v8-code: ${e.message}`);
    }
  }
  const { report } = await import('./report.mjs');
  const { markdown, targets } = report(results);
  results.targets = targets;
  fs.writeFileSync(OUT, `${JSON.stringify(results, null, 1)}\n`);
  process.stdout.write(markdown);
  log(`bench: wrote ${path.relative(ROOT, OUT)} in ${results.seconds.toFixed(0)} s`);
  if (!quick && !ONLY.length) log(`bench: node bench/report-doc.mjs ${path.relative(ROOT, OUT)} --write puts these tables into docs/performance.md`);
  if (problems.length) {
    log(`bench: ${problems.length} problem(s):\n  ${problems.join('\n  ')}`);
    if (quick || flag('strict')) process.exitCode = 1;
  }
}

main().catch((e) => {
  log(e.stack ?? String(e));
  process.exit(1);
});
