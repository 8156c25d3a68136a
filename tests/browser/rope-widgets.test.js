// <pe-rope-rotation>, <pe-scaling>, <pe-attention>, <pe-extrapolation> and <pe-pitfalls> in headless Chromium,
// against the built static site (Vite, what `npm run build:web` ships) served from a sub-path. A test page that
// embeds the elements the way any outside page does (one <script type="module" src="./posenc-widgets.js">) is
// written next to the built site's own pages.
//
// Each element: draws something (canvas pixels / SVG shapes), every control changes what is drawn, no console
// errors or failed requests, SIMD disabled (?simd=0) gives the same numbers, the language toggle switches every
// string, a phone-width viewport does not overflow. Screenshots go to test-results/rope-widgets-*.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot, serveStatic, launchChromium, collectErrors, buildSite, settle, drawing, nonBlank, visibleTexts, languageDrawn } from './lib.js';

const SUB = '/some/sub/path/';
const shots = join(repoRoot, 'test-results');
let browser, server, site;

const ELEMENTS = {
  rr: '<pe-rope-rotation id="rr"></pe-rope-rotation>',
  sc: '<pe-scaling id="sc"></pe-scaling>',
  at: '<pe-attention id="at"></pe-attention>',
  ex: '<pe-extrapolation id="ex" samples="1" factors="1,2,4"></pe-extrapolation>',
  pf: '<pe-pitfalls id="pf"></pe-pitfalls>',
};
const page = (body) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>posenc RoPE widgets</title><link rel="icon" href="data:,">
<style>body { max-width: 960px; margin: 0 auto; padding: 0 8px; font-family: system-ui, sans-serif; }</style></head>
<body>
<pe-lang-toggle></pe-lang-toggle>
${body}
<script type="module" src="./posenc-widgets.js"></script>
</body></html>
`;

before(async () => {
  site = await buildSite();
  // one page with all five (language, SIMD, phone) and one page per element
  await writeFile(join(site.dir, 'rope-widgets.html'), page(Object.values(ELEMENTS).join('\n')));
  for (const [id, el] of Object.entries(ELEMENTS)) await writeFile(join(site.dir, `rope-widgets-${id}.html`), page(el));
  server = await serveStatic(site.dir, { prefix: SUB });
  browser = await launchChromium();
  await mkdir(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** Opens the page with every element (only = undefined) or with one ('rr', 'sc', 'at', 'ex', 'pf'). */
async function open(query = '', viewport = { width: 1100, height: 900 }, only) {
  const p = await browser.newPage({ viewport });
  const errors = collectErrors(p);
  await p.goto(`${server.url}rope-widgets${only ? `-${only}` : ''}.html${query}`);
  return { page: p, errors };
}

const sig = async (page, sel) => (await drawing(page, sel)).signature;

/** Runs `act`, waits for the widget to redraw, and asserts that what it shows changed. */
async function changes(page, sel, what, act) {
  const before = await sig(page, sel);
  const draws = Number(await page.getAttribute(sel, 'data-draws'));
  await act();
  await page.waitForFunction(([s, n]) => {
    const e = document.querySelector(s);
    return Number(e.dataset.draws) > n && !e.dataset.busy;
  }, [sel, draws], { timeout: 30_000 }).catch(() => {});
  await page.waitForTimeout(50);
  const after = await sig(page, sel);
  assert.notEqual(after, before, `${sel}: ${what} should change what is drawn`);
}

/** Presses a key on the control bound to a state key. */
async function key(page, sel, dataKey, k) {
  await page.focus(`${sel} [data-key="${dataKey}"]`);
  await page.keyboard.press(k);
}

async function choose(page, sel, dataKey, index) {
  await page.selectOption(`${sel} select[data-key="${dataKey}"]`, String(index));
}

async function shot(page, sel, name) {
  await page.locator(sel).screenshot({ path: join(shots, `rope-widgets-${name}.png`) });
}

test('<pe-rope-rotation>: rotation, shift invariance, decay, pairing (pe.attention and the tiny model)', async () => {
  const { page, errors } = await open('', undefined, 'rr');
  const sel = '#rr';
  try {
    const st = await settle(page, sel);
    assert.equal(st.state, 'ready', st.error);
    const d = await drawing(page, sel);
    assert.ok(nonBlank(d), 'draws');
    assert.ok(d.svgs.length >= 2 && d.canvases.length >= 4, `plane + diagram SVGs, 2 charts + 2 heatmaps (${d.svgs.length} svg, ${d.canvases.length} canvas)`);
    // the tiny model part finishes asynchronously
    await page.waitForFunction(() => document.querySelectorAll('#rr [data-accuracy]').length === 2, null, { timeout: 30_000 });
    const [right, wrong] = await page.$$eval('#rr [data-accuracy]', (els) => els.map((e) => Number(e.dataset.accuracy)));
    assert.ok(right > 0.9, `trained pairing accuracy ${right}`);
    assert.ok(wrong < right - 0.2, `swapped pairing accuracy ${wrong} should be clearly worse than ${right}`);
    // constructed head: right pairing puts its weight on key m − δ, the wrong one does not
    const [mr, mw] = await page.$$eval('#rr .pe-rr-pairing [data-mass]', (els) => els.map((e) => Number(e.dataset.mass)));
    assert.ok(mr > 0.9 && mw < 0.3, `mass on m − δ: right ${mr}, wrong ${mw}`);
    // shift invariance: the shifted score equals the original to float32 rounding
    const cells = await page.$$eval('#rr .pe-rr-relative table.pe-table tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
    const score = (s) => Number(s.replace('−', '-'));
    assert.ok(Math.abs(score(cells[1][3]) - score(cells[2][3])) < 1e-4, `shifted score ${cells[2][3]} vs ${cells[1][3]}`);
    await shot(page, sel, 'rope-rotation');

    await changes(page, sel, 'pair slider (keyboard)', () => key(page, sel, 'pair', 'ArrowRight'));
    await changes(page, sel, 'query position slider', () => key(page, sel, 'm', 'ArrowRight'));
    await changes(page, sel, 'key position slider', () => key(page, sel, 'n', 'ArrowRight'));
    await changes(page, sel, 'shift slider', () => key(page, sel, 'shift', 'ArrowRight'));
    await changes(page, sel, 'head dim', () => choose(page, sel, 'headDim', 4));
    await changes(page, sel, 'base', () => choose(page, sel, 'base', 0));
    await changes(page, sel, 'pairing', () => choose(page, sel, 'pairing', 1));
    await changes(page, sel, 'decay head dim', () => choose(page, sel, 'decayDim', 0));
    await changes(page, sel, 'decay distance', () => choose(page, sel, 'decayMax', 2));
    await changes(page, sel, 'look-back', () => key(page, sel, 'offset', 'ArrowRight'));
    // the handle on the plane: arrow keys, then a drag around the centre
    await changes(page, sel, 'arrow key on the query handle', async () => {
      await page.focus(`${sel} [data-handle="m"]`);
      await page.keyboard.press('ArrowUp');
    });
    const mBefore = await page.$eval(`${sel} input[data-key="m"]`, (i) => Number(i.value));
    await changes(page, sel, 'dragging the query tip', async () => {
      const plane = await page.locator(`${sel} .pe-rr-rotation svg`).first().boundingBox();
      const hb = await page.locator(`${sel} [data-handle="m"]`).boundingBox();
      const cx = plane.x + plane.width / 2, cy = plane.y + plane.height / 2;
      const hx = hb.x + hb.width / 2, hy = hb.y + hb.height / 2;
      const r = Math.hypot(hx - cx, hy - cy), a0 = Math.atan2(hy - cy, hx - cx);
      await page.mouse.move(hx, hy);
      await page.mouse.down();
      for (let k = 1; k <= 12; k++) await page.mouse.move(cx + r * Math.cos(a0 - k * 0.15), cy + r * Math.sin(a0 - k * 0.15));
      await page.mouse.up();
    });
    const mAfter = await page.$eval(`${sel} input[data-key="m"]`, (i) => Number(i.value));
    assert.notEqual(mAfter, mBefore, 'dragging moves the query position slider too');
    await changes(page, sel, 'Play', async () => {
      await page.click(`${sel} [data-key="play"]`);
      await page.waitForTimeout(900);
      await page.click(`${sel} [data-key="play"]`);
    });
    await changes(page, sel, 'another tiny-model input', async () => {
      await page.click(`${sel} [data-key="another"]`);
      await page.waitForFunction(() => !document.querySelector('#rr').dataset.busy);
    });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('<pe-scaling>: every method, the YaRN ramp, and the config.json box (valid, bad JSON, unsupported type)', async () => {
  const { page, errors } = await open('', undefined, 'sc');
  const sel = '#sc';
  try {
    const st = await settle(page, sel);
    assert.equal(st.state, 'ready', st.error);
    assert.ok(nonBlank(await drawing(page, sel)));
    // Llama 3.1 by default: the box resolves it
    const out = `${sel} .pe-sc-config-out`;
    assert.equal(await page.getAttribute(out, 'data-result'), 'ok');
    assert.equal((await page.textContent(`${out} [data-field="type"]`)).trim(), 'llama3');
    assert.equal((await page.textContent(`${out} [data-field="context"]`)).trim(), '8192 → 131072');
    assert.equal((await page.textContent(`${out} [data-field="headDim"]`)).trim(), '128');
    // the method table: PI divides every frequency by s; YaRN's attention factor is 0.1 ln 8 + 1
    const rows = await page.$$eval(`${sel} .pe-sc-methods table.pe-table tr`, (trs) => trs.map((r) => [...r.cells].map((c) => c.textContent)));
    const row = (label) => rows.find((r) => r[0].startsWith(label));
    assert.equal(row('PI')[1], '0.125');
    assert.equal(row('YaRN')[3], (0.1 * Math.log(8) + 1).toPrecision(4));
    await shot(page, sel, 'scaling');

    await changes(page, sel, 'factor', () => choose(page, sel, 'factor', 1));
    await changes(page, sel, 'original context', () => choose(page, sel, 'original', 0));
    await changes(page, sel, 'head dim', () => choose(page, sel, 'headDim', 0));
    await changes(page, sel, 'base', () => choose(page, sel, 'base', 1));
    await changes(page, sel, 'view: ratio', () => choose(page, sel, 'view', 2));
    await changes(page, sel, 'view: frequency', () => choose(page, sel, 'view', 1));
    await changes(page, sel, 'sequence length', () => key(page, sel, 'seqLen', 'ArrowLeft'));
    await changes(page, sel, 'a method checkbox', () => page.click(`${sel} [data-key="method-yarn"]`));
    await changes(page, sel, 'a preset', () => choose(page, sel, 'configPreset', 2));
    await changes(page, sel, 'pairing', () => choose(page, sel, 'configPairing', 1));

    const type = async (text) => {
      await page.fill(`${sel} textarea[data-key="configText"]`, text);
      await page.waitForTimeout(400); // the box commits 250 ms after the last keystroke
      await page.waitForFunction(() => !document.querySelector('#sc').dataset.busy);
    };
    await type('{"hidden_size": 4096, "num_attention_heads": 32,');
    assert.equal(await page.getAttribute(out, 'data-result'), 'error');
    const bad = await page.textContent(`${out} [role="alert"]`);
    assert.match(bad, /^Invalid JSON: /);
    assert.match(bad, /JSON/);
    await shot(page, `${sel} .pe-sc-config`, 'scaling-bad-json');

    // ('mrope' is now read as the legacy alias it is in Hugging Face configs, so an unknown name stands in)
    await type(JSON.stringify({ hidden_size: 4096, num_attention_heads: 32, rope_scaling: { rope_type: 'ntk-by-parts', factor: 2 } }));
    assert.equal(await page.getAttribute(out, 'data-result'), 'error');
    const unsupported = await page.textContent(`${out} [role="alert"]`);
    assert.match(unsupported, /RangeError: ropeFromHFConfig: rope_scaling\.rope_type must be one of .*got "ntk-by-parts"/);

    await type(JSON.stringify({ hidden_size: 4096, num_attention_heads: 32, rope_scaling: { type: 'yarn', factor: 4 } }));
    assert.match(await page.textContent(`${out} [role="alert"]`), /TypeError: .*original_max_position_embeddings/);

    await type(JSON.stringify({ head_dim: 64, rope_theta: 1e6, max_position_embeddings: 32768, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 8192 } }));
    assert.equal(await page.getAttribute(out, 'data-result'), 'ok');
    assert.equal((await page.textContent(`${out} [data-field="attn"]`)).trim(), String(Number((0.1 * Math.log(4) + 1).toPrecision(6))));
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('<pe-attention>: predictions and attention maps per layer and head, every encoding, typed and generated input', async () => {
  const { page, errors } = await open('', undefined, 'at');
  const sel = '#at';
  try {
    const st = await settle(page, sel);
    assert.equal(st.state, 'ready', st.error);
    let d = await drawing(page, sel);
    assert.ok(nonBlank(d));
    assert.equal(d.canvases.length, 4, 'one heatmap per head of the last layer');
    assert.ok(Number(await page.getAttribute(`${sel} [data-accuracy]`, 'data-accuracy')) > 0.9, 'the RoPE copy model copies');
    await shot(page, sel, 'attention');

    await changes(page, sel, 'layer', () => choose(page, sel, 'layer', 0));
    await changes(page, sel, 'one head', () => choose(page, sel, 'head', 2));
    d = await drawing(page, sel);
    assert.equal(d.canvases.length, 1);
    await changes(page, sel, 'typed input', async () => {
      await page.fill(`${sel} input[data-key="text"]`, '.hello|hel');
    });
    await changes(page, sel, 'Generate', () => page.click(`${sel} [data-key="generate"]`));
    assert.match(await page.inputValue(`${sel} input[data-key="text"]`), /^\.hello\|hel/);
    // Generate ran in the worker (the page stays free) and appended the 16 characters the element asks for
    assert.equal(await page.getAttribute(sel, 'data-generated-in'), 'worker');
    assert.equal([...await page.inputValue(`${sel} input[data-key="text"]`)].length, '.hello|hel'.length + 16);
    await changes(page, sel, 'RoPE scaling', () => choose(page, sel, 'scaling', 4));
    await changes(page, sel, 'New example', () => page.click(`${sel} [data-key="example"]`));
    for (const [i, enc] of [[0, 'none'], [1, 'sinusoidal'], [2, 'learned'], [4, 'alibi']]) {
      await changes(page, sel, `encoding ${enc}`, () => choose(page, sel, 'encoding', i));
      assert.equal(await page.getAttribute(sel, 'data-result'), 'ok', enc);
    }
    // a character the vocabulary lacks: a clear message, not a broken widget
    await page.fill(`${sel} input[data-key="text"]`, '.ab|AB');
    await page.waitForFunction(() => document.querySelector('#at').dataset.result === 'bad-input');
    assert.match(await page.textContent(`${sel} [role="alert"]`), /RangeError|character "A"|not in the vocabulary/);
    // the language model
    await changes(page, sel, 'task lm', () => choose(page, sel, 'task', 1));
    assert.equal(await page.getAttribute(sel, 'data-result'), 'ok');
    await shot(page, sel, 'attention-lm');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('<pe-extrapolation>: live loss/accuracy against length with a progress bar, beside npm run eval', async () => {
  const { page, errors } = await open('', undefined, 'ex');
  const sel = '#ex';
  try {
    const st = await settle(page, sel);
    assert.equal(st.state, 'ready', st.error);
    const before = await sig(page, sel);
    await page.click(`${sel} [data-key="run"]`);
    await page.waitForFunction(() => document.querySelector('#ex').dataset.run === 'running');
    await page.waitForFunction(() => document.querySelector('#ex').dataset.run === 'done', null, { timeout: 120_000 });
    assert.equal(await page.getAttribute(sel, 'data-evaluated-in'), 'worker', 'the forward passes ran in a Web Worker');
    assert.ok(page.workers().length >= 1, 'a worker was started');
    await page.waitForFunction(() => !document.querySelector('#ex').dataset.busy);
    assert.equal(await page.$eval(`${sel} progress`, (p) => p.value), 1);
    assert.notEqual(await sig(page, sel), before, 'the run draws the results');
    assert.ok(nonBlank(await drawing(page, sel)));
    const live = await page.$$eval(`${sel} tr[data-method] td[data-live]`, (tds) => tds.map((t) => t.dataset.live));
    assert.equal(live.length, 9 * 3);
    assert.ok(live.every((v) => v !== '–'), `every cell computed: ${live}`);
    assert.equal(live.filter((v) => v === 'n/a').length, 2, 'learned has no numbers past its training length');
    const evalCells = await page.$$eval(`${sel} tr[data-method] td[data-eval]`, (tds) => tds.map((t) => t.dataset.eval));
    assert.ok(evalCells.filter((v) => /%$/.test(v)).length >= 20, `npm run eval numbers shown: ${evalCells}`);
    // RoPE at its training length: the live accuracy is close to the native one
    const rope1 = await page.$eval(`${sel} tr[data-method="rope"] td[data-live]`, (t) => [t.dataset.live, t.dataset.eval]);
    assert.ok(Math.abs(parseFloat(rope1[0]) - parseFloat(rope1[1])) < 15, `rope 1x live ${rope1[0]} vs eval ${rope1[1]}`);
    await shot(page, sel, 'extrapolation');
    await changes(page, sel, 'measure', () => choose(page, sel, 'metric', 1));
    await changes(page, sel, 'eval lines on the chart', () => page.click(`${sel} [data-key="showEval"]`));
    await changes(page, sel, 'sequences per length', () => key(page, sel, 'samples', 'ArrowRight'));
    await changes(page, sel, 'task', () => choose(page, sel, 'task', 1));
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('<pe-pitfalls>: pairing mix-up and its fix, fast dimensions, cos+sin score, float32 drift', async () => {
  const { page, errors } = await open('', undefined, 'pf');
  const sel = '#pf';
  try {
    const st = await settle(page, sel);
    assert.equal(st.state, 'ready', st.error);
    assert.ok(nonBlank(await drawing(page, sel)));
    const verdict = `${sel} .pe-pf-pairing [data-ok]`;
    assert.equal(await page.getAttribute(verdict, 'data-ok'), 'false', 'interleaved weights under half-split code are wrong');
    await shot(page, sel, 'pitfalls');
    await changes(page, sel, 'permute', () => page.click(`${sel} [data-key="permute"]`));
    assert.equal(await page.getAttribute(verdict, 'data-ok'), 'true', 'the permutation fixes it');
    await changes(page, sel, 'runtime pairing', () => choose(page, sel, 'runtime', 1));
    assert.equal(await page.getAttribute(verdict, 'data-ok'), 'true', 'matching pairings need no permutation');
    await changes(page, sel, 'checkpoint pairing', () => choose(page, sel, 'checkpoint', 0));
    assert.equal(await page.getAttribute(verdict, 'data-ok'), 'true');
    // the score: rope.apply equals the cos + sin form, not the cos-only one
    const vals = await page.$$eval(`${sel} .pe-pf-score td[data-v]`, (tds) => tds.map((t) => Number(t.dataset.v)));
    assert.ok(Math.abs(vals[0] - vals[2]) < 1e-4 && Math.abs(vals[1] - vals[3]) < 1e-4, `pe vs full form ${vals}`);
    assert.ok(Math.abs(vals[0] - vals[4]) > 1e-2, `cos-only differs ${vals}`);
    // drift at 10^6: float32 ~1e-2 rad, posenc ~1e-7
    const e32 = Number(await page.getAttribute(`${sel} .pe-pf-drift [data-e32]`, 'data-e32'));
    const epe = Number(await page.getAttribute(`${sel} .pe-pf-drift [data-epe]`, 'data-epe'));
    assert.ok(e32 > 1e-3 && epe < 1e-6, `drift float32 ${e32}, posenc ${epe}`);
    await changes(page, sel, 'position of the clocks', () => key(page, sel, 'position', 'ArrowRight'));
    await changes(page, sel, 'distance', () => key(page, sel, 'distance', 'ArrowRight'));
    await changes(page, sel, 'drift pair', () => key(page, sel, 'driftPair', 'ArrowRight'));
    await changes(page, sel, 'largest position', () => choose(page, sel, 'maxPosition', 3));
    await changes(page, sel, 'head dim', () => choose(page, sel, 'headDim', 3));
    await changes(page, sel, 'base', () => choose(page, sel, 'base', 0));
    await changes(page, sel, 'new q and k', () => page.click(`${sel} [data-key="seed"]`));
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('SIMD disabled (?simd=0): the scalar build draws the same numbers', async () => {
  const read = async (query) => {
    const { page, errors } = await open(query);
    try {
      const out = {};
      for (const sel of ['#rr', '#sc', '#at', '#pf']) {
        const st = await settle(page, sel);
        assert.equal(st.state, 'ready', `${sel}: ${st.error}`);
        out[sel] = st.build;
        assert.ok(nonBlank(await drawing(page, sel)), `${sel} draws`);
      }
      await page.waitForFunction(() => document.querySelectorAll('#rr [data-accuracy]').length === 2, null, { timeout: 30_000 });
      out.score = await page.getAttribute('#rr [data-score]', 'data-score');
      out.acc = await page.$$eval('#rr [data-accuracy], #at [data-accuracy]', (els) => els.map((e) => e.dataset.accuracy));
      out.config = await page.textContent('#sc .pe-sc-config-out table');
      out.drift = await page.getAttribute('#pf [data-epe]', 'data-epe');
      assert.deepEqual(errors, []);
      return out;
    } finally {
      await page.close();
    }
  };
  const simd = await read('');
  const scalar = await read('?simd=0');
  assert.equal(simd['#rr'], 'simd');
  for (const sel of ['#rr', '#sc', '#at', '#pf']) assert.equal(scalar[sel], 'scalar', sel);
  for (const k of ['score', 'acc', 'config', 'drift']) assert.deepEqual(scalar[k], simd[k], k);
});

test('the language toggle switches every string of the five elements', async () => {
  const { page, errors } = await open();
  const sels = ['#rr', '#sc', '#at', '#ex', '#pf'];
  try {
    for (const sel of sels) assert.equal((await settle(page, sel)).state, 'ready');
    await page.waitForFunction(() => document.querySelectorAll('#rr [data-accuracy]').length === 2, null, { timeout: 30_000 });
    const en = {};
    for (const sel of sels) en[sel] = await visibleTexts(page, sel);
    await page.click('pe-lang-toggle button');
    await languageDrawn(page, 'zh');
    for (const sel of sels) await settle(page, sel);
    await page.waitForFunction(() => document.querySelectorAll('#rr [data-accuracy]').length === 2, null, { timeout: 30_000 });
    // Names, symbols and identifiers that stay as they are in Chinese text.
    const keep = /^(RoPE|YaRN|ALiBi|LongRoPE|Llama|NeoX|GPT|GPT-J|GPT-NeoX|HF|Hugging|Face|Meta|Qwen\d?|DeepSeek|Mistral|SIMD128|posenc|float32|npm|eval|json|config|rope|apply|cosSin|invFreq|attention|mscale|NTK|PI|copy|sinusoidal|learned|none|alibi|lm|llama3|yarn|default|linear|dynamic|longrope|nats|rad|Invalid|JSON)$/i;
    for (const sel of sels) {
      const zh = await visibleTexts(page, sel);
      assert.ok(zh.some((t) => /[\u4e00-\u9fff]/.test(t)), `${sel} shows Chinese`);
      const left = zh.filter((t) => en[sel].includes(t) && (t.match(/[A-Za-z]{3,}/g) ?? []).some((w) => !keep.test(w)));
      assert.deepEqual(left, [], `${sel}: English strings left after switching`);
    }
    await shot(page, '#sc', 'scaling-zh');
    await shot(page, '#rr', 'rope-rotation-zh');
    await page.click('pe-lang-toggle button');
    await languageDrawn(page, 'en');
    for (const sel of sels) await settle(page, sel);
    const back = await visibleTexts(page, '#pf');
    assert.ok(!back.some((t) => /[\u4e00-\u9fff]/.test(t)), 'back to English');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a phone-width viewport: no element wider than the screen', async () => {
  const { page, errors } = await open('', { width: 375, height: 800 });
  try {
    for (const sel of ['#rr', '#sc', '#at', '#ex', '#pf']) {
      const st = await settle(page, sel);
      assert.equal(st.state, 'ready', `${sel}: ${st.error}`);
      const box = await page.$eval(sel, (e) => ({ w: e.getBoundingClientRect().width, sw: e.scrollWidth, cw: e.clientWidth }));
      assert.ok(box.w <= 375 && box.sw <= box.cw + 1, `${sel} fits: ${JSON.stringify(box)}`);
    }
    const docW = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(docW <= 376, `page scroll width ${docW}`);
    await shot(page, '#rr', 'rope-rotation-phone');
    await shot(page, '#pf', 'pitfalls-phone');
    await shot(page, '#at', 'attention-phone');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
