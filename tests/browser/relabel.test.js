// What a deferred relabel does with a widget the language switch held (lib/offscreen.js), and that a widget's own
// sections look the same on any page — structural properties, no timing asserted (the times are measured by
// scripts/bench-relabel.mjs and `node scripts/bench-web.mjs --playground`, docs/performance.md):
//   - a held widget that a jump (scrollIntoView, a #link) brings near the viewport stays held until the task that
//     relabels it, and that task drops its old content while it is still held (display: none): the old content is
//     never shown, so never restyled or laid out again, in either order of the two observers;
//   - a widget's inner <section>s take nothing from the host page's `section` rules: pe-scaling has the same
//     height in the playground as on a bare page at the same width (what scripts/widget-heights.mjs measures for
//     lib/heights.js).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serveStatic, launchChromium, collectErrors, buildSite, settle } from './lib.js';

let browser, server, site;

const page = (body, style = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>relabel</title><link rel="icon" href="data:,"><style>body { margin: 0; } ${style}</style></head>
<body>${body}<script type="module" src="./posenc-widgets.js"></script></body></html>`;

before(async () => {
  site = await buildSite();
  // one widget on screen, two far below (started at load: eager), so the switch holds those two
  await writeFile(join(site.dir, 'relabel-held.html'), page(`<pe-lang-toggle></pe-lang-toggle><pe-aliasing id="near" eager></pe-aliasing>
    <div style="height: 6000px"></div><pe-scaling id="far" eager></pe-scaling><pe-pitfalls id="far2" eager></pe-pitfalls><div style="height: 3000px"></div>`));
  // the playground's widget column is 1080 px wide at a 1280 px viewport (style.css: body max-width 1080px)
  await writeFile(join(site.dir, 'relabel-bare.html'), page('<div style="width: 1080px"><pe-scaling id="scaling-w" eager></pe-scaling></div>'));
  server = await serveStatic(site.dir);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/**
 * Records, per widget, each batch of mutations (one batch per task, or per callback within one): whether it
 * removed data-pe-held, and how many element children it removed from the widget's .pe-body.
 */
function watchHeld(ids) {
  window.__batches = Object.fromEntries(ids.map((id) => [id, []]));
  for (const id of ids) {
    const el = document.getElementById(id);
    const body = el.querySelector(':scope > .pe-body');
    const old = new Set(body.children);
    new MutationObserver((records) => {
      const released = records.some((r) => r.target === el && r.attributeName === 'data-pe-held' && !el.hasAttribute('data-pe-held'));
      const mine = records.filter((r) => r.target === body && r.type === 'childList');
      const dropped = mine.reduce((n, r) => n + [...r.removedNodes].filter((x) => old.has(x)).length, 0);
      // what the page has of the new content once this batch is done, in elements
      const inPage = [...body.children].reduce((n, c) => n + 1 + c.getElementsByTagName('*').length, 0);
      if (released || mine.length) window.__batches[id].push({ released, dropped, inPage });
    }).observe(el, { attributes: true, attributeFilter: ['data-pe-held'], childList: true, subtree: true });
  }
}

test('a deferred relabel drops a held widget\'s old content in the task that releases it, never after', async () => {
  const p = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = collectErrors(p);
  try {
    await p.goto(`${server.url}relabel-held.html`);
    for (const s of ['#near', '#far', '#far2']) await settle(p, s, { timeout: 120_000 });
    await p.evaluate(() => window.scrollTo(0, 0));
    await p.waitForTimeout(300);
    const old = await p.$$eval('#far > .pe-body, #far2 > .pe-body', (bs) => bs.map((b) => b.children.length));
    await p.click('pe-lang-toggle button');
    await p.waitForFunction(() => document.getElementById('near').dataset.lang === 'zh' && ['far', 'far2'].every((id) => document.getElementById(id).hasAttribute('data-pe-held')), null, { timeout: 30_000 });
    assert.deepEqual(await p.$$eval('#far, #far2', (es) => es.map((e) => `${e.dataset.relabel}:${e.dataset.lang}`)), ['pending:en', 'pending:en'], 'the far widgets wait, held');
    await p.evaluate(watchHeld, ['far', 'far2']);
    // a jump: the widget comes within both observers' margins (the hold's half screen, the relabel's screen) at once
    for (const id of ['far', 'far2']) {
      await p.evaluate((id) => document.getElementById(id).scrollIntoView({ block: 'center' }), id);
      await p.waitForFunction((id) => { const e = document.getElementById(id); return e.dataset.lang === 'zh' && !e.dataset.busy; }, id, { timeout: 60_000 });
    }
    const batches = await p.evaluate(() => window.__batches);
    for (const [i, id] of ['far', 'far2'].entries()) {
      const b = batches[id];
      const first = b.findIndex((x) => x.released);
      assert.ok(first >= 0, `#${id} was released: ${JSON.stringify(b)}`);
      assert.deepEqual(b.slice(0, first), [], `#${id}: nothing changed before its release`);
      assert.equal(b[first].dropped, old[i], `#${id}: its ${old[i]} old children went in the batch that released it (${JSON.stringify(b)})`);
      // and its new content came into the page in parts (base.js appendInParts), each in a task of its own: the
      // first part with the release, then more, the page's share of the widget growing each time
      const grows = b.slice(first).map((x) => x.inPage).filter((n, j, a) => j === 0 || n > a[j - 1]);
      assert.ok(grows.length >= 2, `#${id}: new content in ${grows.length} parts (${JSON.stringify(b)})`);
      assert.ok(grows[0] <= 400, `#${id}: the first part is ${grows[0]} elements (${JSON.stringify(b)})`);
      assert.equal(await p.$eval(`#${id}`, (e) => e.hasAttribute('data-pe-held') || e.style.height !== ''), false, `#${id} is no longer held`);
    }
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
  }
});

test('pe-scaling is as tall in the playground as on a bare page at the same width (no host section rule reaches in)', async () => {
  const heights = [];
  for (const path of ['index.html', 'relabel-bare.html']) {
    const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors = collectErrors(p);
    try {
      await p.goto(server.url + path);
      await settle(p, '#scaling-w', { timeout: 120_000 });
      await p.evaluate(() => document.fonts.ready);
      heights.push(await p.$eval('#scaling-w', (e) => {
        const s = e.querySelector('section');
        return { width: e.getBoundingClientRect().width, height: e.getBoundingClientRect().height, sectionMargin: getComputedStyle(s).marginTop };
      }));
      assert.deepEqual(errors, []);
    } finally {
      await p.close();
    }
  }
  const [play, bare] = heights;
  assert.equal(play.width, bare.width, 'the same width');
  assert.equal(play.sectionMargin, bare.sectionMargin, 'its sections have the spacing the widget gives them');
  assert.ok(Math.abs(play.height - bare.height) < 1, `heights: playground ${play.height}, bare page ${bare.height}`);
});
