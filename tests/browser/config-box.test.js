// The config box of <pe-scaling> (issue 12, "Proof": the playground's config box accepts a whole config.json and
// shows the per-layer schedule), in headless Chromium against the built static site. Published config.json files
// from tests/golden/hf-configs/configs/ are pasted into the box as they are; what the schedule shows (kind, layer
// type and RoPE base of every layer, ALiBi slopes, learned table size) is compared with what transformers
// derives from the same file (tests/golden/hf-configs/expected.json), and the keys posenc did not read with
// pe.fromHFConfig run in node on the same file. Screenshots: test-results/config-box-*.png (1280 and 390 px).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot, serveStatic, launchChromium, collectErrors, buildSite, settle } from './lib.js';
import init from '../../web/src/index.js';

const SUB = '/cfg/';
const shots = join(repoRoot, 'test-results');
const golden = join(repoRoot, 'tests/golden/hf-configs');
let browser, server, site, pe, expected;

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>posenc config box</title><link rel="icon" href="data:,">
<style>body { max-width: 1240px; margin: 0 auto; padding: 0 8px; font-family: system-ui, sans-serif; }</style></head>
<body>
<pe-scaling id="sc" sections="config" preset="empty"></pe-scaling>
<script type="module" src="./posenc-widgets.js"></script>
</body></html>
`;

before(async () => {
  site = await buildSite();
  await writeFile(join(site.dir, 'config-box.html'), PAGE);
  server = await serveStatic(site.dir, { prefix: SUB });
  browser = await launchChromium();
  await mkdir(shots, { recursive: true });
  pe = await init();
  expected = JSON.parse(await readFile(join(golden, 'expected.json'), 'utf8')).configs;
});

after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(width) {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const errors = collectErrors(page);
  await page.goto(`${server.url}config-box.html`);
  const st = await settle(page, '#sc');
  assert.equal(st.state, 'ready', st.error);
  return { page, errors };
}

/** Types a config into the box and waits for the box to show its result. */
async function paste(page, text) {
  await page.fill('#sc textarea[data-key="configText"]', text);
  await page.waitForTimeout(400); // the box commits 250 ms after the last keystroke
  await page.waitForFunction(() => !document.querySelector('#sc').dataset.busy);
  return page.getAttribute('#sc .pe-sc-config-out', 'data-result');
}

/** What the box shows: per layer { kind, layerType, base } from the strip cells and the scheme table. */
function shown(page) {
  return page.evaluate(() => {
    const out = document.querySelector('#sc .pe-sc-config-out');
    const rows = Object.fromEntries([...out.querySelectorAll('table.pe-sc-schemes tr[data-scheme]')].map((r) => [r.dataset.scheme, { ...r.dataset }]));
    const layers = [];
    for (const c of out.querySelectorAll('.pe-sc-strip .pe-sc-cell')) {
      const row = rows[c.dataset.scheme];
      for (let i = 0; i < Number(c.dataset.count); i++) {
        layers.push({ start: Number(c.dataset.start) + i, kind: c.dataset.kind, layerType: c.dataset.layerType || null, base: row.base === undefined ? null : Number(row.base) });
      }
    }
    return {
      layers, rows,
      cells: out.querySelectorAll('.pe-sc-strip .pe-sc-cell').length,
      numLayers: Number(out.querySelector('.pe-sc-summary')?.dataset.layers),
      ignored: out.querySelector('.pe-sc-ignored')?.dataset.ignored.split(',').filter(Boolean),
      ropeBase: out.querySelector('.pe-sc-rope [data-field="base"]')?.textContent.trim() ?? null,
    };
  });
}

/** transformers' per-layer schedule of a golden config (expected.json), expanded to one entry per layer. */
function reference(file) {
  const e = expected.find((x) => x.file === `configs/${file}`);
  assert.ok(e, `${file} in expected.json`);
  const layers = [];
  for (const run of e.layers) {
    for (let i = 0; i < run.count; i++) {
      layers.push({ start: run.start + i, kind: run.kind, layerType: run.layer_type ?? null, base: run.kind === 'rope' ? e.ropes[run.rope].base : null });
    }
  }
  return { e, layers };
}

const countBy = (layers, f) => layers.reduce((m, l) => ({ ...m, [f(l)]: (m[f(l)] ?? 0) + 1 }), {});

/** Pastes a golden config and checks the schedule against transformers' and the ignored keys against node. */
async function checkFile(page, file) {
  const text = await readFile(join(golden, 'configs', file), 'utf8');
  assert.equal(await paste(page, text), 'ok', file);
  const got = await shown(page);
  const { e, layers } = reference(file);
  assert.equal(got.numLayers, e.num_layers, `${file}: layer count`);
  assert.deepEqual(countBy(got.layers, (l) => l.kind), countBy(layers, (l) => l.kind), `${file}: layers per kind`);
  assert.deepEqual(countBy(got.layers, (l) => l.layerType), countBy(layers, (l) => l.layerType), `${file}: layers per layer type`);
  assert.deepEqual(got.layers, layers, `${file}: every layer's kind, layer type and RoPE base`);
  const spec = pe.fromHFConfig(JSON.parse(text));
  try {
    assert.deepEqual(got.ignored, [...spec.ignored], `${file}: ignored keys as pe.fromHFConfig lists them`);
  } finally {
    spec.free();
  }
  return { got, e };
}

test('config box: Gemma 3 27B (text_config, sliding 1e4 / full 1e6, grouped strip), MPT-30B (ALiBi), OPT-1.3B and GPT-2 (learned)', async () => {
  const { page, errors } = await open(1280);
  try {
    // Gemma 3: two RoPEs by layer type; 62 layers are grouped into runs of identical layers
    const gemma = await checkFile(page, 'google__gemma-3-27b-it.json');
    assert.equal(gemma.got.cells, gemma.e.layers.length, 'one strip cell per run of identical layers');
    const bases = Object.values(gemma.e.ropes).map((r) => r.base);
    assert.equal(new Set(bases).size, 2);
    const options = await page.$$eval('#sc select[data-key="configRope"] option', (os) => os.length);
    assert.equal(options, 2, 'a picker for the two distinct RoPEs');
    const firstType = gemma.e.layers[0].rope;
    assert.equal(Number(gemma.got.ropeBase), gemma.e.ropes[firstType].base, 'the chart starts with the first layer\'s RoPE');
    await page.selectOption('#sc select[data-key="configRope"]', '1');
    const other = Object.keys(gemma.e.ropes).find((k) => k !== firstType);
    assert.equal(Number((await shown(page)).ropeBase), gemma.e.ropes[other].base, 'picking the other RoPE shows its base');
    await page.locator('#sc .pe-sc-config').screenshot({ path: join(shots, 'config-box-gemma3-1280.png') });

    // MPT: ALiBi with MPT's own slopes from alibi_bias_max
    const mpt = await checkFile(page, 'mosaicml__mpt-30b.json');
    const alibi = Object.values(mpt.got.rows).find((r) => r.kind === 'alibi');
    const ref = mpt.e.attention.alibi;
    assert.equal(Number(alibi.heads), ref.num_heads);
    assert.ok(Math.abs(Number(alibi.slopeMax) / Math.max(...ref.slopes_f64) - 1) < 1e-6, `largest slope ${alibi.slopeMax}`);
    assert.ok(Math.abs(Number(alibi.slopeMin) / Math.min(...ref.slopes_f64) - 1) < 1e-6, `smallest slope ${alibi.slopeMin}`);
    assert.equal(await page.locator('#sc .pe-sc-rope [data-field]').count(), 0, 'no RoPE chart for an ALiBi model');
    await page.locator('#sc .pe-sc-config').screenshot({ path: join(shots, 'config-box-mpt-1280.png') });

    // OPT and GPT-2: a learned table (OPT's row offset 2)
    for (const file of ['facebook__opt-1.3b.json', 'openai-community__gpt2.json']) {
      const { got, e } = await checkFile(page, file);
      const learned = Object.values(got.rows).find((r) => r.kind === 'learned');
      assert.equal(Number(learned.maxLen), e.embedding.max_len, `${file}: maxLen`);
      assert.equal(Number(learned.offset), e.embedding.offset, `${file}: offset`);
    }

    // a config posenc refuses shows the library's message
    assert.equal(await paste(page, JSON.stringify({ model_type: 't5', num_layers: 6, d_model: 512 })), 'error');
    assert.match(await page.textContent('#sc .pe-sc-config-out [role="alert"]'), /^posenc rejected this config — TypeError: fromHFConfig: /);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('config box at 390 px and in Chinese: the schedule fits the screen, new strings are translated', async () => {
  const { page, errors } = await open(390);
  try {
    await checkFile(page, 'google__gemma-3-27b-it.json');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `page wider than the screen by ${overflow} px`);
    const strip = await page.evaluate(() => {
      const r = document.querySelector('#sc .pe-sc-strip').getBoundingClientRect();
      return r.right <= window.innerWidth;
    });
    assert.ok(strip, 'the strip wraps within the screen');
    await page.locator('#sc .pe-sc-config').screenshot({ path: join(shots, 'config-box-gemma3-390.png') });

    const en = await page.$$eval('#sc table.pe-sc-schemes th', (ths) => ths.map((t) => t.textContent));
    await page.evaluate(() => document.querySelector('#sc').setAttribute('lang', 'zh'));
    await page.waitForFunction(() => document.querySelector('#sc table.pe-sc-schemes th')?.textContent !== 'scheme');
    await settle(page, '#sc');
    const zh = await page.$$eval('#sc table.pe-sc-schemes th', (ths) => ths.map((t) => t.textContent));
    assert.equal(zh.length, en.length);
    for (const t of zh) assert.match(t, /[\u4e00-\u9fff]/, `heading "${t}" in Chinese`);
    assert.match(await page.textContent('#sc .pe-sc-summary'), /层/);
    assert.deepEqual((await shown(page)).layers, reference('google__gemma-3-27b-it.json').layers, 'the same schedule in Chinese');
    await page.locator('#sc .pe-sc-config').screenshot({ path: join(shots, 'config-box-gemma3-390-zh.png') });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('config box: NoPE layers (Llama 4 Scout, EXAONE 4), Gemma 2 (one RoPE on both layer types), the old spec freed when replaced', async () => {
  const { page, errors } = await open(1280);
  try {
    for (const file of ['meta-llama__Llama-4-Scout-17B-16E.flattened.json', 'LGAI-EXAONE__EXAONE-4.0-32B.json']) {
      const { got } = await checkFile(page, file);
      assert.ok(got.layers.some((l) => l.kind === 'none'), `${file}: NoPE layers shown`);
    }
    await page.locator('#sc .pe-sc-config').screenshot({ path: join(shots, 'config-box-exaone-1280.png') });
    const gemma2 = await checkFile(page, 'google__gemma-2-9b-it.json');
    assert.equal(new Set(Object.values(gemma2.e.ropes).map((r) => r.base)).size, 1);
    assert.equal(await page.locator('#sc select[data-key="configRope"]').count(), 0, 'one RoPE: no picker');

    // the Ropes of the spec on show are live; pasting another config frees them (use after free is a TypeError)
    await page.evaluate(() => { window.oldRope = document.querySelector('#sc').configSpec.layers[0].rope; });
    assert.equal(await page.evaluate(() => window.oldRope.invFreq64().length), gemma2.e.ropes[gemma2.e.layers[0].rope].n_inv_freq);
    await checkFile(page, 'mosaicml__mpt-30b.json');
    assert.equal(await page.evaluate(() => { try { window.oldRope.invFreq64(); return 'live'; } catch (e) { return e.name; } }), 'TypeError');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
