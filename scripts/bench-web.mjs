// bench-web.mjs — `npm run bench:web`: the benchmark's ratios in headless Chromium (Debian's, via
// playwright-core), the same plan, contenders and targets as `npm run bench` (bench/runner.mjs in a page:
// bench/web.html + bench/browser.mjs), printed as the same markdown tables; results in
// bench/build/results-web.json. Native C and onnxruntime-web are Node-side contenders and are not run here.
//
//   node scripts/bench-web.mjs [--quick] [--rounds N] [--min-sample S] [--only PREFIX[,PREFIX]] [--statistic fastest|rounds]
//   (a page has only a wall clock: by default each ratio is of the contenders' fastest rounds, see bench/browser.mjs)
//   node scripts/bench-web.mjs --playground     what the playground costs a reader (scripts/bench-playground.mjs)
//
// Needs `bash build.sh wasm` (web/src/wasm-inline.js) and `bash bench/build.sh` (bench/build/limit.wasm,
// unfused.wasm); runs the latter itself. Times are never asserted; tests/js/bench-quick.test.js checks the Node run.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { serveStatic, launchChromium, repoRoot } from '../tests/browser/lib.js';
import { machine, sizes } from '../bench/machine.mjs';
import { report } from '../bench/report.mjs';

const argv = process.argv.slice(2);
if (argv.includes('--playground')) {
  await import('./bench-playground.mjs');
} else {
  const opt = (name, dflt) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
  };
  const quick = argv.includes('--quick');
  const opts = {
    quick,
    rounds: Number(opt('rounds', quick ? 3 : 11)),
    minSample: Number(opt('min-sample', quick ? 0.005 : 0.01)),
    only: opt('only', '').split(',').filter(Boolean),
    statistic: opt('statistic', 'fastest'),
  };
  execFileSync('bash', ['bench/build.sh'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
  const server = await serveStatic(repoRoot);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    page.on('console', (m) => process.stderr.write(`${m.text()}\n`));
    page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
    await page.goto(`${server.url}bench/web.html`);
    page.setDefaultTimeout(0);
    const r = await page.evaluate(async (o) => (await import('/bench/browser.mjs')).browserBench(o), opts);
    const m = machine();
    const results = {
      ...r,
      machine: { ...m, nativeNote: 'a page cannot start a process', engine: `headless Chromium ${browser.version()} (${r.userAgent.match(/Chrome\/[\d.]+/)?.[0] ?? '?'})` },
      command: `node scripts/bench-web.mjs ${argv.join(' ')}`.trim(),
      sizes: sizes(repoRoot),
    };
    const { markdown, targets } = report(results);
    results.targets = targets;
    mkdirSync(path.join(repoRoot, 'bench/build'), { recursive: true });
    writeFileSync(path.join(repoRoot, 'bench/build/results-web.json'), `${JSON.stringify(results, null, 1)}\n`);
    process.stdout.write(`${markdown}\nTimer: performance.now() in a page that is ${r.crossOriginIsolated ? '' : 'not '}cross-origin isolated; batches ≥ ${opts.minSample * 1e3} ms.\n`);
    if (r.problems.length) {
      process.stderr.write(`bench-web: ${r.problems.length} problem(s):\n  ${r.problems.join('\n  ')}\n`);
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
    await server.close();
  }
}
