// The npm tarball as a user gets it: `npm pack`, install into a fresh project, then use it from Node and from a
// Vite-built page in headless Chromium. Also checks that the tarball holds exactly what a user needs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, serveStatic, launchChromium, collectErrors } from '../browser/lib.js';

const run = promisify(execFile);
const npm = (args, cwd) => run('npm', args, { cwd, maxBuffer: 64 << 20, env: { ...process.env, npm_config_loglevel: 'error' } });

let tmp, project, tarball, packedFiles;

before(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'posenc-pack-'));
  const { stdout } = await npm(['pack', '--json', '--pack-destination', tmp], repoRoot);
  const [info] = JSON.parse(stdout);
  tarball = join(tmp, info.filename);
  packedFiles = info.files.map((f) => f.path).sort();

  project = join(tmp, 'app');
  await mkdir(project);
  await writeFile(join(project, 'package.json'),
    JSON.stringify({ name: 'posenc-pack-check', private: true, type: 'module' }, null, 2));
  await npm(['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], project);
});

after(async () => { if (tmp) await rm(tmp, { recursive: true, force: true }); });

// Reference values: HF default RoPE, inv_freq[i] = 10000^(-2i/8), cos/sin rows of 4 per position.
const POSITIONS = [0, 1, 2, 1000];
function expected() {
  const cos = [], sin = [];
  for (const p of POSITIONS) for (let i = 0; i < 4; i++) {
    const a = p * 10000 ** (-(2 * i) / 8);
    cos.push(Math.cos(a)); sin.push(Math.sin(a));
  }
  return { cos, sin };
}
// float32 outputs of an angle formed in double: half an ulp of 1.0 in float32 is 6e-8; allow 2e-6 as the issue does.
function assertClose(actual, wanted, what) {
  assert.equal(actual.length, wanted.length, `${what} length`);
  for (let i = 0; i < wanted.length; i++) {
    assert.ok(Math.abs(actual[i] - wanted[i]) <= 2e-6, `${what}[${i}] = ${actual[i]}, expected ${wanted[i]}`);
  }
}

test('tarball holds only what a user needs', async () => {
  const src = (await readdir(join(repoRoot, 'web/src')))
    .filter((f) => (f.endsWith('.js') && !f.endsWith('.test.js')) || f === 'index.d.ts' || f === 'model.d.ts')
    .map((f) => `web/src/${f}`);
  const wasm = ['dist/posenc.simd.wasm', 'dist/posenc.wasm', 'dist/posenc-model.simd.wasm', 'dist/posenc-model.wasm'];
  const want = ['LICENSE', 'README.md', 'package.json', ...wasm, ...src].sort();
  assert.deepEqual(packedFiles, want);
  for (const f of ['web/src/index.js', 'web/src/index.d.ts', 'web/src/wasm-inline.js', 'web/src/url.js',
    'web/src/model.js', 'web/src/model.d.ts', 'web/src/wasm-inline-model-simd.js', 'web/src/wasm-inline-model-scalar.js']) {
    assert.ok(packedFiles.includes(f), `${f} is in the tarball`);
  }
});

test('installed package runs in Node (inline wasm, SIMD and forced scalar)', async () => {
  const script = `
    import { init } from 'posenc';
    const pe = await init();
    const scalar = await init({ simd: false });
    const pos = ${JSON.stringify(POSITIONS)};
    const a = pe.rope({ headDim: 8 }).cosSin(pos);
    const b = scalar.rope({ headDim: 8 }).cosSin(pos);
    // the tiny models: their own module, through the instance; ModelFileError from the 'posenc/model' entry
    const { ModelFileError } = await import('posenc/model');
    const { readFileSync } = await import('node:fs');
    const dir = ${JSON.stringify(join(repoRoot, 'web/playground/public/models/copy-rope/'))};
    const config = JSON.parse(readFileSync(dir + 'config.json', 'utf8'));
    const m = await pe.loadModel(readFileSync(dir + 'model.safetensors'), config);
    const logits = m.forward('.ab|ab').logits;
    const rejected = await pe.loadModel(new Uint8Array(5), config).then(() => 'accepted', (e) => e instanceof ModelFileError);
    console.log(JSON.stringify({ simd: pe.simd, scalarSimd: scalar.simd,
      cos: [...a.cos], sin: [...a.sin], scalarCos: [...b.cos], scalarSin: [...b.sin],
      modelLogits: logits.length, modelFinite: logits.every(Number.isFinite), rejected }));
  `;
  await writeFile(join(project, 'check.mjs'), script);
  const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: project });
  const r = JSON.parse(stdout);
  assert.equal(typeof r.simd, 'boolean');
  assert.equal(r.scalarSimd, false);
  const want = expected();
  assertClose(r.cos, want.cos, 'cos');
  assertClose(r.sin, want.sin, 'sin');
  assertClose(r.scalarCos, want.cos, 'scalar cos');
  assertClose(r.scalarSin, want.sin, 'scalar sin');
  assert.equal(r.modelLogits, 6 * 28, 'copy-rope logits: 6 tokens x vocab 28');
  assert.equal(r.modelFinite, true);
  assert.equal(r.rejected, true, 'a 5-byte file is a ModelFileError of posenc/model');
});

test('installed package works in a Vite-built page in headless Chromium (inline and URL entries)', async () => {
  const site = join(project, 'site');
  await mkdir(site);
  await writeFile(join(site, 'index.html'), `<!doctype html><html><head><meta charset="utf-8">
    <link rel="icon" href="data:,"><title>posenc pack check</title></head>
    <body><pre id="out">pending</pre><script type="module" src="./main.js"></script></body></html>`);
  await writeFile(join(site, 'main.js'), `
    import { init } from 'posenc';
    import { init as initUrl } from 'posenc/url';
    const out = document.getElementById('out');
    async function compute(initFn) {
      const pe = await initFn();
      const { cos, sin } = pe.rope({ headDim: 8 }).cosSin(${JSON.stringify(POSITIONS)});
      return { simd: pe.simd, cos: [...cos], sin: [...sin] };
    }
    Promise.all([compute(init), compute(initUrl)]).then(
      ([inline, url]) => { out.textContent = JSON.stringify({ inline, url }); },
      (err) => { out.textContent = 'error: ' + err; console.error(err); });
  `);
  // The repo's own Vite, run against the temporary project; nothing is downloaded.
  const vite = join(repoRoot, 'node_modules/vite/bin/vite.js');
  await run(process.execPath, [vite, 'build', '--logLevel', 'warn', '--outDir', 'dist', '--emptyOutDir'], { cwd: site });
  const built = await readdir(join(site, 'dist/assets'));
  assert.ok(built.some((f) => f.endsWith('.wasm')), `posenc/url's wasm is emitted as an asset (${built})`);
  // The page only computes RoPE: the tiny-model code (model.js, its inlined wasm) stays out of the entry chunk,
  // in chunks loaded only by pe.loadModel.
  const entry = built.filter((f) => f.startsWith('index') && f.endsWith('.js'));
  assert.equal(entry.length, 1, `one entry chunk (${built})`);
  const entryText = await readFile(join(site, 'dist/assets', entry[0]), 'utf8');
  assert.ok(!entryText.includes('pe_model_forward'), 'model.js is not in the entry chunk');
  const chunks = await Promise.all(built.filter((f) => f.endsWith('.js') && f !== entry[0]).map((f) => readFile(join(site, 'dist/assets', f), 'utf8')));
  assert.ok(chunks.some((t) => t.includes('pe_model_forward')), 'model.js is a lazily loaded chunk');

  const server = await serveStatic(join(site, 'dist'));
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors = collectErrors(page);
    await page.goto(server.url);
    await page.waitForFunction(() => document.getElementById('out').textContent !== 'pending', null, { timeout: 20_000 });
    const text = await page.textContent('#out');
    assert.ok(!text.startsWith('error'), text);
    const { inline, url } = JSON.parse(text);
    const want = expected();
    for (const [name, r] of Object.entries({ inline, url })) {
      assert.equal(r.simd, true, `${name}: Chromium runs the SIMD build`);
      assertClose(r.cos, want.cos, `${name} cos`);
      assertClose(r.sin, want.sin, `${name} sin`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await server.close();
  }
});
