// `npm run bench:web` in its smoke-test form (node scripts/bench-web.mjs --quick): the benchmark's plan runs in a
// headless Chromium page (bench/web.html + bench/browser.mjs, every bench module the plan imports loaded by the
// page, so none may lean on Node's globals), every contender's output agrees with its reference (the script
// exits non-zero on a problem), and the Targets table prints issue 14's, 11's and 13's lines, each with a status.
// No timing is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('node scripts/bench-web.mjs --quick runs the plan in Chromium and prints every target with a status', { timeout: 300_000 }, () => {
  const r = spawnSync(process.execPath, ['scripts/bench-web.mjs', '--quick'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `bench-web --quick exited ${r.status}:\n${r.stderr.slice(-4000)}`);
  assert.doesNotMatch(r.stderr, /page error|ReferenceError|TypeError/, 'the page threw');
  const table = r.stdout.slice(r.stdout.indexOf('### Targets'));
  assert.ok(table.startsWith('### Targets'), 'no Targets table in the output');
  const rows = table.split('\n').filter((l) => /^\| \d+ \|/.test(l)).map((l) => l.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim()));
  for (const issue of ['14', '11', '13']) assert.ok(rows.some((c) => c[0] === issue), `no target line of issue ${issue}`);
  for (const c of rows) {
    assert.match(c[3], /^(met|missed|reported|not measured)$/, `${c[1]}: status "${c[3]}"`);
    if (c[3] === 'met' || c[3] === 'missed') assert.match(c[2], /\d\.\d\d×/, `${c[1]}: no measured ratio in "${c[2]}"`);
  }
  // what a page cannot run says why, not a ratio
  assert.match(rows.find((c) => /onnxruntime-web/.test(c[1]))[2], /not run in the browser page/);
  assert.match(rows.find((c) => /native C contender/.test(c[1]))[2], /a page cannot start a process/);
});
