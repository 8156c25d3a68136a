// The playground and the blog post do not jump while their widgets load (issue 15, defects 1 and 2), in
// headless Chromium against the built site:
//   - cumulative layout shift (the largest session window of 'layout-shift' entries, as the Web Vitals define
//     it) stays ≤ 0.05 from a fresh load through scrolling the whole page, at 1280 and 390 px;
//   - a link to a section (/#pitfalls) lands on that section and stays there while the widgets around it start;
//   - a widget starts only when it nears the viewport: a fresh load at the top fetches no tiny model;
//   - a language switch with every widget started takes the far widgets out of the page-wide restyle
//     (lib/offscreen.js) at exactly the height they had, releases each as it nears, and scrolling through the
//     page after it shifts nothing (≤ 0.05), at 1280 and 390 px.
// Layout shift is a property of the page, not of the machine's speed; the test waits for each widget it brings
// into view to settle before it moves on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serveStatic, launchChromium, collectErrors, buildSite, settle } from './lib.js';

const PREFIX = '/some/sub/path/';
let browser, server, site;
before(async () => {
  [site, browser] = await Promise.all([buildSite(), launchChromium()]);
  server = await serveStatic(site.dir, { prefix: PREFIX });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

const WIDTHS = [{ width: 1280, height: 900 }, { width: 390, height: 844 }];

/** Records layout shifts from the first paint on: window.__cls() gives the largest session window. */
function recordShifts() {
  const entries = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (!e.hadRecentInput) entries.push({ t: e.startTime, v: e.value, nodes: (e.sources ?? []).map((s) => s.node?.id || s.node?.localName || s.node?.nodeName || '?') });
    }
  }).observe({ type: 'layout-shift', buffered: true });
  window.__shifts = entries;
  window.__cls = (since = -Infinity) => {
    let best = 0, cur = 0, start = -Infinity, last = -Infinity;
    for (const e of entries) {
      if (e.t < since) continue;
      if (e.t - last > 1000 || e.t - start > 5000) { cur = 0; start = e.t; }
      cur += e.v;
      last = e.t;
      best = Math.max(best, cur);
    }
    return best;
  };
}

async function open(path, viewport) {
  const page = await browser.newPage({ viewport });
  const errors = collectErrors(page);
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.addInitScript(recordShifts);
  await page.goto(server.url + path);
  return { page, errors, requests };
}

/** Waits until every widget that has started is drawn (or failed) and not busy, then for two frames. */
async function quiet(page, timeout = 60_000) {
  await page.waitForFunction(() => [...document.querySelectorAll('.pe-widget')].every((e) => {
    const started = e.dataset.build !== undefined || e.dataset.state !== undefined;
    if (!started) return true;
    return e.dataset.state === 'error' || (e.dataset.state === 'ready' && !e.dataset.busy);
  }), null, { timeout, polling: 100 });
  await page.waitForFunction(() => document.fonts.status === 'loaded');
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
  await page.waitForTimeout(300);
}

/** Started = the widget began loading the API or drew (data-build is set once the API is there). */
const startedWidgets = (page) => page.$$eval('.pe-widget', (els) => els.filter((e) => e.dataset.build || e.dataset.state).map((e) => e.id || e.localName));

/** Scrolls to the bottom a screen at a time, letting the widgets that come into view settle. */
async function scrollThrough(page) {
  for (let i = 0; i < 200; i++) {
    const done = await page.evaluate(() => {
      const before = scrollY;
      scrollBy(0, Math.round(innerHeight * 0.8));
      return scrollY === before;
    });
    await quiet(page);
    if (done) break;
  }
}

for (const vp of WIDTHS) {
  for (const path of ['index.html', 'blog.html']) {
    test(`${path} at ${vp.width} px: layout shift ≤ 0.05 from a fresh load through scrolling to the end, each widget reserving its height`, async () => {
      const { page, errors } = await open(path, vp);
      try {
        await quiet(page);
        const atLoad = await page.evaluate(() => window.__cls());
        // what each widget not yet started holds (lib/heights.js), against what it draws once scrolled to
        const reserved = await page.$$eval('.pe-widget', (els) => els.filter((e) => !e.dataset.build && !e.dataset.state).map((e) => [e.id || e.localName, parseFloat(e.style.minHeight) || 0]));
        await scrollThrough(page);
        const cls = await page.evaluate(() => window.__cls());
        const shifts = await page.evaluate(() => window.__shifts.filter((s) => s.v > 0.005));
        console.log(`# ${path} ${vp.width}px: CLS at load ${atLoad.toFixed(3)}, after scrolling ${cls.toFixed(3)}`);
        assert.ok(cls <= 0.05, `${path} at ${vp.width} px: layout shift ${cls.toFixed(3)} (${JSON.stringify(shifts)})`);
        const drawn = Object.fromEntries(await page.$$eval('.pe-widget', (els) => els.map((e) => [e.id || e.localName, e.getBoundingClientRect().height])));
        const off = reserved.filter(([id, r]) => r > 0 && Math.abs(drawn[id] - r) > Math.max(40, 0.08 * drawn[id]));
        console.log(`# ${path} ${vp.width}px: ${reserved.filter(([, r]) => r > 0).length} of ${reserved.length} widgets reserved a height; off by more than 8 %: ${JSON.stringify(off.map(([id, r]) => [id, r, Math.round(drawn[id])]))}`);
        assert.deepEqual(off, [], 'reserved [id, px] against the drawn height: lib/heights.js misses these widgets as the page uses them');
        assert.deepEqual(errors, []);
      } finally {
        await page.close();
      }
    });
  }

  test(`index.html#pitfalls at ${vp.width} px lands on the Pitfalls section and stays there`, async () => {
    const { page, errors } = await open('index.html#pitfalls', vp);
    try {
      await page.waitForFunction(() => document.querySelector('#pitfalls-w')?.dataset.state === 'ready', null, { timeout: 60_000 });
      await quiet(page);
      const top = await page.$eval('#pitfalls', (s) => s.getBoundingClientRect().top);
      const margin = await page.$eval('#pitfalls', (s) => parseFloat(getComputedStyle(s).scrollMarginTop) || 0);
      const cls = await page.evaluate(() => window.__cls());
      console.log(`# #pitfalls ${vp.width}px: section top at ${top.toFixed(0)} px, CLS ${cls.toFixed(3)}`);
      assert.ok(Math.abs(top - margin) <= 4, `the Pitfalls heading is at ${top.toFixed(0)} px from the top (want ${margin})`);
      const shifts = await page.evaluate(() => window.__shifts.filter((x) => x.v > 0.005));
      assert.ok(cls <= 0.05, `layout shift ${cls.toFixed(3)} (${JSON.stringify(shifts)})`);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });
}

test('the nav link "Pitfalls" on a fresh load lands on the section and it stays there', async () => {
  const { page, errors } = await open('index.html', { width: 1280, height: 900 });
  try {
    await quiet(page);
    await page.click('nav a[href="#pitfalls"]');
    await page.waitForFunction(() => document.querySelector('#pitfalls-w')?.dataset.state === 'ready', null, { timeout: 60_000 });
    await quiet(page);
    await page.waitForTimeout(500);
    await quiet(page);
    const top = await page.$eval('#pitfalls', (s) => s.getBoundingClientRect().top);
    const margin = await page.$eval('#pitfalls', (s) => parseFloat(getComputedStyle(s).scrollMarginTop) || 0);
    assert.ok(Math.abs(top - margin) <= 4, `the Pitfalls heading is at ${top.toFixed(0)} px from the top (want ${margin}, its scroll margin under the sticky contents)`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('a fresh load at the top starts only the widgets near the viewport and fetches no tiny model', async () => {
  const { page, errors, requests } = await open('index.html', { width: 1280, height: 900 });
  try {
    await quiet(page);
    await page.waitForTimeout(1000);
    const started = await startedWidgets(page);
    const models = requests.filter((u) => u.includes('/models/'));
    console.log(`# started at load: ${started.join(', ')}; model requests: ${models.length}`);
    assert.deepEqual(models, [], 'no model file is fetched before its section nears the viewport');
    for (const far of ['learned-w', 'rope-w', 'alibi-w', 'scaling-w', 'attn-w', 'extra-w', 'prec', 'speed-w', 'pitfalls-w']) {
      assert.ok(!started.includes(far), `#${far} started at load (started: ${started.join(', ')})`);
    }
    // and it starts once scrolled near
    await page.locator('#lab').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('#attn-w')?.dataset.state === 'ready', null, { timeout: 60_000 });
    assert.ok(requests.some((u) => u.includes('/models/')), 'the lab fetches its models once scrolled to');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

for (const vp of WIDTHS) {
  test(`index.html at ${vp.width} px: a language switch holds the far widgets at their height and nothing shifts after it`, async () => {
    const { page, errors } = await open('index.html', vp);
    try {
      await quiet(page);
      const ids = await page.$$eval('main .pe-widget', (els) => els.map((e) => `#${e.id}`));
      for (const sel of ids) await settle(page, sel, { timeout: 120_000 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await quiet(page);
      // the heights before the switch, and what the switch holds (a few thousand elements a frame, nearest first;
      // all of them before <html lang> changes); far widgets do not relabel meanwhile, so their heights stand
      const heights = await page.evaluate(() => {
        const heights = Object.fromEntries([...document.querySelectorAll('main .pe-widget')].map((e) => [e.id, e.getBoundingClientRect().height]));
        window.posencWidgets.setLang('zh');
        return heights;
      });
      await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
      const sw = await page.evaluate((heights) => ({
        heights,
        held: [...document.querySelectorAll('[data-pe-held]')].map((e) => ({ id: e.id, h: e.getBoundingClientRect().height, farTop: e.getBoundingClientRect().top > innerHeight })),
      }), heights);
      assert.ok(sw.held.length >= 8, `the far widgets are held: ${sw.held.map((x) => x.id)}`);
      for (const x of sw.held) {
        assert.ok(x.farTop, `#${x.id} is held only off screen`);
        assert.equal(x.h, sw.heights[x.id], `#${x.id} is held at exactly its height`);
      }
      // their content is out of the rendering (not styled, not laid out)
      const skipped = await page.$$eval('[data-pe-held]', (es) => es.filter((e) => ![...e.children].some((c) => c.checkVisibility())).length);
      assert.equal(skipped, sw.held.length, 'every held widget is skipped');
      await quiet(page);
      const t0 = await page.evaluate(() => performance.now());
      await scrollThrough(page);
      const st = await page.evaluate((t) => ({
        cls: window.__cls(t),
        shifts: window.__shifts.filter((s) => s.t >= t && s.v > 0.005),
        held: [...document.querySelectorAll('[data-pe-held]')].map((e) => e.id),
        en: [...document.querySelectorAll('main .pe-widget')].filter((e) => e.dataset.lang !== 'zh').map((e) => e.id),
      }), t0);
      console.log(`# language switch at ${vp.width}px: ${sw.held.length} widgets held; CLS scrolling after it ${st.cls.toFixed(3)}`);
      assert.deepEqual(st.held, [], 'every held widget is released once it nears the viewport');
      assert.deepEqual(st.en, [], 'and relabelled');
      assert.ok(st.cls <= 0.05, `layout shift after the switch ${st.cls.toFixed(3)} (${JSON.stringify(st.shifts)})`);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  });
}
