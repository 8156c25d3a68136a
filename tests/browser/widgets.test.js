// The playground and the embeddable widgets (sections 1 Why position, 2 Sinusoidal, 3 Learned, 5 ALiBi,
// 8 Precision, 9 Speed and <pe-heatmap>; the RoPE, scaling and tiny-model widgets have rope-widgets.test.js)
// in headless Chromium, against the BUILT static site (what `npm run build:web` ships) served from a sub-path.
//
// Checked: every section draws (pixels read back from its canvases, or SVG shapes); every control, used from
// the keyboard where it can be, changes what is drawn; no console errors, page errors or failed requests; the
// state in the URL survives a reload; ?simd=0 runs everything on the scalar build; the language toggle
// leaves no English string on the page; the example blog post works from the static output; the phone
// layout does not overflow. Screenshots of each section go to test-results/widgets/ (git-ignored).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot, serveStatic, launchChromium, collectErrors, buildSite, settle, drawing, nonBlank, visibleTexts, isEnglish, languageDrawn } from './lib.js';

const PREFIX = '/some/sub/path/';
const SHOTS = join(repoRoot, 'test-results/widgets');

// Section element on the playground page -> its tag
const SECTIONS = {
  '#why-w': 'pe-why-position',
  '#sin': 'pe-sinusoidal',
  '#learned-w': 'pe-learned',
  '#alibi-w': 'pe-alibi',
  '#prec': 'pe-precision',
  '#speed-w': 'pe-speed',
  '#rope-hm': 'pe-heatmap',
};
const ALL_TAGS = ['pe-why-position', 'pe-sinusoidal', 'pe-learned', 'pe-rope-rotation', 'pe-heatmap', 'pe-alibi',
  'pe-scaling', 'pe-attention', 'pe-extrapolation', 'pe-precision', 'pe-speed', 'pe-pitfalls'];

let browser, server, site;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  [site, browser] = await Promise.all([buildSite(), launchChromium()]);
  server = await serveStatic(site.dir, { prefix: PREFIX });
});
after(async () => {
  await browser?.close();
  await server?.close();
  await site?.remove();
});

async function open(path, { width = 1200, height = 900, scale = 1 } = {}) {
  const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: scale });
  const errors = collectErrors(page);
  // a widget that fails logs a warning naming itself ("pe-…: …") besides showing the error
  page.on('console', (m) => { if (m.type() === 'warning' && /^pe-[a-z-]+:/.test(m.text())) errors.push(`console warning: ${m.text()}`); });
  await page.goto(server.url + path);
  return { page, errors };
}

/** Polls the drawing until its signature differs from `before` (controls redraw synchronously or soon). */
async function changed(page, sel, before, what) {
  for (let i = 0; i < 100; i++) {
    const now = await drawing(page, sel);
    if (now.signature !== before.signature) return now;
    await page.waitForTimeout(50);
  }
  assert.fail(`${sel}: ${what} did not change the drawing`);
}

/** Uses one control the way a keyboard user would (selects through selectOption); returns a description. */
async function useControl(page, sel, key) {
  const c = page.locator(`${sel} [data-key="${key}"]`).first();
  const info = await c.evaluate((el) => ({ tag: el.localName, type: el.type, value: el.value, min: el.min, max: el.max, options: el.options?.length, index: el.selectedIndex }));
  if (info.tag === 'select') {
    await c.selectOption({ index: (info.index + 1) % info.options });
    return `select ${key}`;
  }
  if (info.type === 'range') {
    await c.focus();
    await page.keyboard.press(Number(info.value) >= Number(info.max) ? 'Home' : 'End');
    return `range ${key} (keyboard)`;
  }
  if (info.type === 'checkbox') {
    await c.focus();
    await page.keyboard.press('Space');
    return `checkbox ${key} (keyboard)`;
  }
  if (info.type === 'number') {
    const next = String(Math.min(Number(info.max || 1e9), Math.max(Number(info.min || 0), Number(info.value) === 5 ? 3 : 5)));
    await c.fill(next);
    await c.press('Enter');
    await c.press('Tab');
    return `number ${key} = ${next}`;
  }
  throw new Error(`${sel}: unknown control ${key} (${info.tag} ${info.type})`);
}

test('playground: each of these sections draws, every control changes the drawing, no errors', async () => {
  const { page, errors } = await open('index.html');
  const initial = {};
  try {
    for (const [sel, tag] of Object.entries(SECTIONS)) {
      const s = await settle(page, sel);
      assert.equal(s.state, 'ready', `${sel} (${tag}): ${s.error}`);
      assert.equal(await page.evaluate((sel) => document.querySelector(sel).localName, sel), tag);
      if (tag === 'pe-speed') {
        await page.click(`${sel} [data-key="run"]`);
        await page.waitForFunction((sel) => document.querySelector(sel).dataset.result && !document.querySelector(sel).dataset.busy, sel, { timeout: 60_000 });
        const r = JSON.parse(await page.getAttribute(sel, 'data-result'));
        for (const id of ['simd', 'scalar', 'js']) assert.ok(r[id] > 0, `speed: ${id} measured (${JSON.stringify(r)})`);
      }
      const d = await drawing(page, sel);
      assert.ok(nonBlank(d), `${sel} (${tag}) draws something: ${JSON.stringify(d.canvases)} ${JSON.stringify(d.svgs)}`);
      initial[sel] = await page.evaluate((sel) => ({ ...document.querySelector(sel).dataset }), sel);
      await page.locator(sel).screenshot({ path: join(SHOTS, `${tag}.png`) });

      const keys = await page.$$eval(`${sel} .pe-controls [data-key]`, (els) => els.map((e) => e.dataset.key).filter((k) => k !== 'run' && k !== 'play'));
      assert.ok(keys.length > 0 || tag === 'pe-learned', `${sel} has controls`);
      for (const key of keys) {
        if (!(await page.locator(`${sel} [data-key="${key}"]`).count())) continue; // removed by an earlier change
        const before = await drawing(page, sel);
        const what = await useControl(page, sel, key);
        await changed(page, sel, before, what);
        assert.equal(await page.getAttribute(sel, 'data-state'), 'ready', `${sel} after ${what}: ${await page.getAttribute(sel, 'data-error')}`);
      }
    }
    // the numbers each default view is about
    assert.ok(Number(initial['#why-w'].difference) < 1e-5, 'NoPE: permuted outputs equal');
    assert.ok(Number(initial['#sin'].linearError) < 1e-4, 'M_k PE(p) = PE(p + k)');
    const [dNo, dYes] = initial['#alibi-w'].meanDistance.split(',').map(Number);
    assert.ok(dYes < dNo, `ALiBi pulls attention closer (${dYes} < ${dNo})`);
    const prec = JSON.parse(initial['#prec'].errors);
    assert.ok(prec.position === 1e6 && prec.ours < 1e-6 && prec.f32 > 1e-2, `precision at ${prec.position}: ours ${prec.ours}, float32 ${prec.f32}`);
    for (const [enc, differ] of [[0, false], [1, true], [2, true], [3, true]]) {
      await page.locator('#why-w [data-key="encoding"]').selectOption({ index: enc });
      await page.locator('#why-w [data-key="causal"]').setChecked(false);
      const diff = Number(await page.getAttribute('#why-w', 'data-difference'));
      assert.equal(diff > 1e-2, differ, `permutation, encoding ${enc}: difference ${diff}`);
    }
    // the sinusoidal clock plays
    const clock = await drawing(page, '#sin');
    await page.click('#sin [data-key="play"]');
    await changed(page, '#sin', clock, 'play');
    await page.click('#sin [data-key="play"]');
    // the learned table refuses positions past maxLen
    assert.equal(await page.getAttribute('#learned-w', 'data-probe'), 'row');
    await page.locator('#learned-w [data-key="probe"]').fill('100000');
    await page.locator('#learned-w [data-key="probe"]').press('Enter');
    await page.waitForFunction(() => document.querySelector('#learned-w').dataset.probe === 'refused');
    assert.match(await page.textContent('#learned-w'), /RangeError: .*maxLen/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('playground: the state is kept in the URL and restored on reload', async () => {
  const { page, errors } = await open('index.html');
  try {
    await settle(page, '#sin');
    await page.locator('#sin [data-key="dModel"]').selectOption('64');
    await page.waitForFunction(() => location.search.includes('sin.dModel=64'));
    await settle(page, '#alibi-w');
    await page.locator('#alibi-w [data-key="heads"]').fill('6');
    await page.locator('#alibi-w [data-key="heads"]').press('Enter');
    await page.waitForFunction(() => location.search.includes('alibi-w.heads=6'));
    const url = page.url();
    assert.ok(url.startsWith(server.url), url);
    await page.goto(url);
    await settle(page, '#sin');
    assert.equal(await page.$eval('#sin [data-key="dModel"]', (s) => s.selectedOptions[0].textContent), '64');
    await settle(page, '#alibi-w');
    assert.equal(await page.inputValue('#alibi-w [data-key="heads"]'), '6');
    assert.match(await page.textContent('#alibi-w'), /Slopes for 6 heads/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('playground with ?simd=0: every section runs on the scalar build', async () => {
  const { page, errors } = await open('index.html?simd=0');
  try {
    for (const [sel, tag] of Object.entries(SECTIONS)) {
      const s = await settle(page, sel);
      assert.equal(s.state, 'ready', `${sel}: ${s.error}`);
      assert.equal(s.build, 'scalar', `${tag} runs the scalar build`);
      if (tag !== 'pe-speed') assert.ok(nonBlank(await drawing(page, sel)), `${tag} draws`);
    }
    await page.evaluate(() => { const e = document.querySelector('#speed-w'); e.setAttribute('rounds', '2'); e.setAttribute('min-sample', '0.005'); });
    await page.click('#speed-w [data-key="run"]');
    await page.waitForFunction(() => document.querySelector('#speed-w').dataset.result && !document.querySelector('#speed-w').dataset.busy, null, { timeout: 60_000 });
    const r = JSON.parse(await page.getAttribute('#speed-w', 'data-result'));
    assert.equal(r.simd, null, 'no SIMD contender when the page asks for scalar');
    assert.ok(r.scalar > 0 && r.js > 0);
    assert.match(await page.textContent('#speed-w'), /\?simd=0/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('playground: the language toggle switches every visible string', async () => {
  const { page, errors } = await open('index.html');
  try {
    await page.waitForFunction(() => document.documentElement.dataset.page === 'ready');
    // start every widget on the page (they start when scrolled into view)
    const ids = await page.$$eval('main [id]', (els) => els.filter((e) => e.localName.startsWith('pe-')).map((e) => `#${e.id}`));
    for (const sel of ids) {
      if (!(await page.evaluate((s) => !!customElements.get(document.querySelector(s).localName), sel))) continue;
      await settle(page, sel, { timeout: 60_000 });
    }
    const en = await visibleTexts(page);
    assert.ok(en.includes('Why position') && en.some((s) => s.startsWith('The clock picture')), 'English page');
    await page.click('pe-lang-toggle button');
    await page.waitForFunction(() => document.documentElement.lang.startsWith('zh'));
    await languageDrawn(page, 'zh');
    const zh = await visibleTexts(page);
    assert.ok(zh.includes('为什么需要位置'), 'Chinese headings');
    // English strings: texts with an English word (isEnglish: names, identifiers and units do not count)
    const english = new Set(en.filter(isEnglish));
    const left = [...new Set(zh.filter((s) => english.has(s)))];
    assert.deepEqual(left, [], `English strings left after switching to Chinese: ${JSON.stringify(left.slice(0, 40))}`);
    await page.waitForFunction(() => location.search.includes('lang=zh'));
    await page.screenshot({ path: join(SHOTS, 'playground-zh-top.png') });
    for (const [sel, tag] of Object.entries(SECTIONS)) await page.locator(sel).screenshot({ path: join(SHOTS, `${tag}-zh.png`) });
    // a shared link opens in Chinese
    const zhUrl = page.url();
    const other = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const otherErrors = collectErrors(other);
    try {
      await other.goto(zhUrl);
      await other.waitForFunction(() => document.documentElement.dataset.page === 'ready');
      await settle(other, '#sin');
      const texts = await visibleTexts(other);
      assert.ok(texts.includes('为什么需要位置') && texts.some((t) => t.startsWith('时钟图')), 'the ?lang=zh link opens in Chinese');
      assert.deepEqual(otherErrors, []);
    } finally {
      await other.close();
    }
    // and back
    await page.click('pe-lang-toggle button');
    await page.waitForFunction(() => document.documentElement.lang === 'en');
    await languageDrawn(page, 'en');
    const back = await visibleTexts(page);
    assert.ok(back.includes('Why position'));
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('the example blog post embeds every widget with one script tag and works from the static output', async () => {
  const { page, errors } = await open('blog.html');
  try {
    const scripts = await page.$$eval('script', (s) => s.map((x) => x.getAttribute('src')));
    assert.deepEqual(scripts, ['./posenc-widgets.js'], 'only the widgets script');
    const tags = await page.$$eval('article *', (els) => [...new Set(els.map((e) => e.localName).filter((n) => n.startsWith('pe-')))]);
    for (const tag of ALL_TAGS) assert.ok(tags.includes(tag), `blog post uses <${tag}>`);
    for (const tag of ALL_TAGS) {
      assert.ok(await page.evaluate((t) => !!customElements.get(t), tag), `<${tag}> is defined by posenc-widgets.js`);
      const s = await settle(page, tag, { timeout: 60_000 });
      assert.equal(s.state, 'ready', `${tag} in the blog post: ${s.error}`);
      if (tag !== 'pe-speed') assert.ok(nonBlank(await drawing(page, tag)), `${tag} draws in the blog post`);
    }
    await page.screenshot({ path: join(SHOTS, 'blog.png'), fullPage: true });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('phone layout: nothing wider than the screen, every section draws', async () => {
  const { page, errors } = await open('index.html', { width: 390, height: 844, scale: 2 });
  try {
    for (const [sel, tag] of Object.entries(SECTIONS)) {
      const s = await settle(page, sel);
      assert.equal(s.state, 'ready', `${sel}: ${s.error}`);
      if (tag !== 'pe-speed') {
        const d = await drawing(page, sel);
        assert.ok(nonBlank(d), `${tag} draws on a phone`);
        // devicePixelRatio 2: canvases are backed at twice their CSS size
        const ratio = await page.$eval(`${sel} canvas`, (c) => c.width / c.clientWidth);
        assert.ok(Math.abs(ratio - 2) < 0.05, `${tag}: canvas backing store follows devicePixelRatio (${ratio})`);
      }
      const box = await page.locator(sel).boundingBox();
      assert.ok(box.x >= 0 && box.x + box.width <= 390 + 0.5, `${tag} fits the screen (${box.x} + ${box.width})`);
      await page.locator(sel).screenshot({ path: join(SHOTS, `${tag}-phone.png`) });
    }
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page scrolls sideways by ${overflow}px`);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'playground-phone-top.png') });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
