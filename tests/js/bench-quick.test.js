// `npm run bench` in its smoke-test form (node bench/run.mjs --quick --no-ort): it runs, every contender's
// output agrees with its reference (--quick exits non-zero otherwise), and its Targets table prints each target
// of issues 14, 11 and 13 with a status. No timing is asserted: met and missed are both fine here, only
// "present, with a measured ratio" is checked (onnxruntime-web is left out: "not measured", with the reason).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluateTargets } from '../../bench/report-targets.mjs';
import { replaceBlock, resultsBlock, BEGIN, END } from '../../bench/report-doc.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The targets as the issues word them (a distinctive part of each line), and the status each may have here.
const RATIO = /^(met|missed)$/;
const EXPECTED = [
  [/public API with pe\.tensor ≥ 0\.95× limit: rotation/, RATIO],
  [/public API with pe\.tensor ≥ 0\.62× the in-place limit/, RATIO],
  [/large bshd ≥ 0\.95× the in-place limit/, RATIO],
  [/large bhsd ≥ 0\.85× the in-place limit/, RATIO],
  [/interleaved within 1\.1× of half-split/, RATIO],
  [/new position every call within 1\.1× of cached/, RATIO],
  [/≥ 30× onnxruntime-web/, /^not measured$/],
  [/decode: ≥ 6× plain JS/, RATIO],
  [/prefill: ≥ 12× plain JS/, RATIO],
  [/large: ≥ 9× plain JS/, RATIO],
  [/attention GFLOP\/s vs the register-only peak/, /^reported$/],
  [/native C contender is SIMD/, /^(met|missed|not measured)$/],
  [/float16 vs float32 apply.* ≥ 1\.7×/, RATIO],
  [/strided vs dense apply.* ≤ 1\.1×/, RATIO],
  [/padded-batch attention, one call vs 8 per-sequence calls.* ≥ 3×/, RATIO],
  [/M-RoPE vs plain apply.* ≤ 1\.15×/, RATIO],
  [/M-RoPE vs plain-RoPE attention.* ≤ 1\.15×/, RATIO],
];

test('node bench/run.mjs --quick runs, checks its outputs and prints every target with a status', { timeout: 600_000 }, () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'posenc-bench-'));
  try {
    const out = path.join(dir, 'results.json');
    const r = spawnSync(process.execPath, ['bench/run.mjs', '--quick', '--no-ort', '--out', out], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, `bench --quick exited ${r.status}:\n${r.stderr.slice(-4000)}`);
    const table = r.stdout.slice(r.stdout.indexOf('### Targets'));
    assert.ok(table.startsWith('### Targets'), 'no Targets table in the output');
    const rows = table.split('\n').filter((l) => /^\| \d+ \|/.test(l)).map((l) => l.split(' | ').map((c) => c.replace(/^\| |\s*\|$/g, '').trim()));
    for (const [name, status] of EXPECTED) {
      const hits = rows.filter((c) => name.test(c[1]));
      assert.ok(hits.length >= 1, `no target line matching ${name}`);
      for (const c of hits) {
        assert.match(c[3], status, `${c[1]}: status "${c[3]}"`);
        if (status === RATIO) assert.match(c[2], /\d\.\d\d×/, `${c[1]}: no measured ratio in "${c[2]}"`);
      }
    }
    const onnx = rows.find((c) => /onnxruntime-web/.test(c[1]));
    assert.match(onnx[2], /--no-ort/, 'the onnxruntime line says why it is not measured');
    // results.json holds the same targets and the native ISA the tables name (when gcc built the native binary)
    const json = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(json.targets.length, rows.length);
    assert.deepEqual(json.problems, []);
    if (json.machine.nativeIsa) assert.ok(r.stdout.includes(json.machine.nativeIsa));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// A results object made by hand: per-round times chosen so every ratio is known exactly (time / time of api).
function syntheticResults({ ortWorkloads }) {
  const times = (t) => ({ times: [t, t, t], median: t, lo: t, hi: t });
  const workload = (size, pairing, layout) => ({
    id: `rope/${size}/${pairing}/${layout}`,
    group: 'rope',
    label: `RoPE ${size} [1,512,32,128] ${pairing} ${layout}`,
    params: { size, shape: [1, 512, 32, 128], pairing, layout, pos0: 0, bytes: 2 * 512 * 32 * 128 * 4 },
    // plain JS 8x posenc; the hand kernel 0.9 and the in-place pass 0.8 of posenc's time: plain JS is 8/0.9 =
    // 8.9x the hand kernel and 10x the in-place pass, both under prefill's 12x; the hand kernel is at
    // 0.8/0.9 = 0.89 of the in-place pass
    results: { api: times(1), 'raw-apply': times(0.95), js: times(8), rotation: times(0.9), limit: times(0.8), native: times(1.1), 'native-apply': times(1.05), 'api-other': times(1.05) },
  });
  const workloads = [workload('prefill', 'half', 'bshd'), workload('prefill', 'half', 'bhsd')];
  const ort = (id) => ({ id, results: { api: { times: [1, 1, 1] }, 'api-copy': { times: [2, 2, 2] }, 'ort-contrib': { times: [40, 40, 40] }, 'ort-onnx': { times: [20, 20, 20] } } });
  return {
    machine: { cpu: 'test', cores: 2, memoryGiB: 1, os: 'test', node: 'v20', v8: '11', nativeIsa: 'x86-64 SSE4.1' },
    command: 'synthetic',
    settings: { rounds: 3, minSample: 0.01, quick: false, clock: 'cpu' },
    workloads,
    ort: [{ threads: 1, workloads: ortWorkloads.map(ort) }],
    ortPlanned: { 1: workloads.map((w) => w.id) },
    extra: [],
  };
}

test('bench targets: a miss carries its ceiling, a partly measured target is not "met"', () => {
  const rows = evaluateTargets(syntheticResults({ ortWorkloads: ['rope/prefill/half/bshd'] }));
  const row = (re) => rows.find((r) => re.test(r.target));
  const js = row(/prefill: ≥ 12× plain JS/);
  assert.equal(js.status, 'missed');
  // 8 / 0.9 = 8.89 and 8 / 0.8 = 10.00, both under 12
  assert.match(js.measured, /prefill half\/bshd 8\.00× \[ceiling: plain JS \/ limit: rotation 8\.89×, plain JS \/ in-place limit 10\.00×, so out of reach here\]/);
  const inPlace = row(/≥ 0\.62× the in-place limit/);
  assert.equal(inPlace.status, 'met'); // 0.8 / 1
  const ortRow = row(/≥ 30× onnxruntime-web/);
  // the worse op: 20 / 1; one of the two planned workloads has no value
  assert.equal(ortRow.status, 'missed');
  assert.match(ortRow.measured, /prefill half\/bshd 20\.00× \[posenc at 0\.80× of the in-place limit; at that limit it would be 25\.0×, so out of reach here\]; no value for prefill half\/bhsd/);
  assert.match(row(/Float32Array copies/).measured, /prefill half\/bshd 10\.00×/); // 20 / 2
  const native = row(/native C contender is SIMD/);
  assert.equal(native.status, 'met');
  assert.match(native.measured, /x86-64 SSE4\.1; native apply \/ wasm apply: prefill half\/bshd 1\.11×/); // 1.05 / 0.95

  // every value meeting its bound, but a planned workload without one: not measured, never met
  const met = syntheticResults({ ortWorkloads: ['rope/prefill/half/bshd'] });
  for (const o of met.ort[0].workloads) o.results['ort-onnx'].times = [50, 50, 50];
  const partial = evaluateTargets(met).find((r) => /≥ 30× onnxruntime-web/.test(r.target));
  assert.equal(partial.status, 'not measured');
  assert.match(partial.note, /1 of 2 workloads without a value/);
});

test('bench/report-doc.mjs replaces only the generated block of docs/performance.md', () => {
  const results = syntheticResults({ ortWorkloads: ['rope/prefill/half/bshd', 'rope/prefill/half/bhsd'] });
  const block = resultsBlock(results);
  assert.ok(block.includes('### Targets') && !block.includes('## posenc benchmark'));
  const doc = `# Doc\n\nbefore\n\n${BEGIN}\n\nold tables\n\n${END}\n\nafter\n`;
  const next = replaceBlock(doc, block);
  assert.ok(next.startsWith(`# Doc\n\nbefore\n\n${BEGIN}\n\nMachine: test,`));
  assert.ok(next.endsWith(`${block}\n\n${END}\n\nafter\n`));
  assert.ok(!next.includes('old tables'));
  assert.equal(replaceBlock(next, block), next, 'idempotent');
  assert.throws(() => replaceBlock('# no markers\n', block), /needs one/);
  // the real document has the markers once each
  const real = readFileSync(path.join(ROOT, 'docs/performance.md'), 'utf8');
  assert.doesNotThrow(() => replaceBlock(real, block));
});
