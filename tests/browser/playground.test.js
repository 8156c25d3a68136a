// The playground in headless Chromium: built by Vite (what `npm run build:web` ships) and served by the Vite
// dev server (what `npm start` serves). The heatmaps must be drawn, react to the controls, and log no errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, createServer } from 'vite';
import { repoRoot, serveStatic, launchChromium, collectErrors } from './lib.js';

const playground = join(repoRoot, 'web/playground');
let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

/** Summary of a canvas: size, number of distinct colours, and a cheap hash of its pixels. */
function canvasStats(page, id) {
  return page.evaluate((id) => {
    const c = document.getElementById(id);
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    let hash = 0;
    for (let i = 0; i < d.length; i += 4) {
      const rgb = (d[i] << 16) | (d[i + 1] << 8) | d[i + 2];
      colours.add(rgb);
      hash = (Math.imul(hash, 31) + rgb) | 0;
    }
    return { width: c.width, height: c.height, colours: colours.size, hash };
  }, id);
}

async function waitForDraws(page, n) {
  await page.waitForFunction((n) => document.documentElement.dataset.state === 'error'
    || Number(document.documentElement.dataset.draws ?? 0) >= n, n, { timeout: 20_000 });
  const state = await page.evaluate(() => document.documentElement.dataset.state);
  const status = await page.textContent('#status');
  assert.equal(state, 'ready', `playground state (status line: ${status})`);
}

async function checkPlayground(url, screenshot) {
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors = collectErrors(page);
  try {
    await page.goto(url);
    await waitForDraws(page, 1);

    // Default settings: headDim 64 -> 32 frequencies, 256 positions.
    const cos = await canvasStats(page, 'cos');
    const sin = await canvasStats(page, 'sin');
    assert.deepEqual([cos.width, cos.height], [256, 32]);
    assert.deepEqual([sin.width, sin.height], [256, 32]);
    assert.ok(cos.colours > 50, `cos heatmap has ${cos.colours} colours, expected a gradient`);
    assert.ok(sin.colours > 50, `sin heatmap has ${sin.colours} colours, expected a gradient`);
    assert.notEqual(cos.hash, sin.hash);
    // Position 0: cos = 1 (deep red), sin = 0 (white) in every frequency row.
    const col0 = await page.evaluate(() => ['cos', 'sin'].map((id) => {
      const c = document.getElementById(id);
      return Array.from(c.getContext('2d').getImageData(0, 0, 1, 1).data.slice(0, 3));
    }));
    assert.deepEqual(col0, [[178, 24, 43], [247, 247, 247]]);
    assert.match(await page.textContent('#status'), /SIMD128 build/);

    // headDim changes the number of frequency rows.
    await page.selectOption('select[name=headDim]', '128');
    await waitForDraws(page, 2);
    assert.equal((await canvasStats(page, 'cos')).height, 64);

    // Scaling changes the picture at the same size.
    const before = await canvasStats(page, 'cos');
    await page.selectOption('select[name=scaling]', 'linear');
    await waitForDraws(page, 3);
    const linear = await canvasStats(page, 'cos');
    assert.deepEqual([linear.width, linear.height], [before.width, before.height]);
    assert.notEqual(linear.hash, before.hash, 'linear scaling should change the cos heatmap');

    // Every preset resolves and draws (dynamic, YaRN and Llama 3 need their extra options).
    let draws = 3;
    for (const preset of ['dynamic', 'yarn', 'llama3', 'default']) {
      await page.selectOption('select[name=scaling]', preset);
      await waitForDraws(page, ++draws);
    }
    await page.selectOption('select[name=positions]', '4096');
    await waitForDraws(page, ++draws);
    assert.equal((await canvasStats(page, 'cos')).width, 4096);
    await page.selectOption('select[name=positions]', '256');
    await page.selectOption('select[name=scaling]', 'yarn');
    await waitForDraws(page, draws + 2);
    assert.match(await page.textContent('#status'), /attention scaling 1\.1386/); // 0.1 ln 4 + 1

    if (screenshot) {
      await mkdir(join(repoRoot, 'test-results'), { recursive: true });
      await page.screenshot({ path: join(repoRoot, 'test-results', screenshot), fullPage: true });
    }
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
}

test('built playground (vite build) draws RoPE heatmaps and reacts to controls', async () => {
  const outDir = await mkdtemp(join(tmpdir(), 'posenc-playground-'));
  try {
    await build({ root: playground, logLevel: 'warn', build: { outDir, emptyOutDir: true } });
    const server = await serveStatic(outDir);
    try {
      await checkPlayground(server.url, 'playground.png');
    } finally {
      await server.close();
    }
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
});

test('playground on the Vite dev server (npm start) draws without errors', async () => {
  const server = await createServer({
    root: playground, logLevel: 'warn', server: { host: '127.0.0.1', port: 0, strictPort: false },
  });
  await server.listen();
  try {
    const url = server.resolvedUrls.local[0];
    await checkPlayground(url, 'playground-dev.png');
  } finally {
    await server.close();
  }
});
