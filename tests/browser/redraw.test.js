// Redraws that never hold the page in one long task (issue 15), as behaviour, in headless Chromium against the
// built site (the times themselves are measured by scripts/bench-web.mjs --playground, never asserted):
//   - the lab's redraw after Generate draws its attention maps one per task, and the maps hold the height they
//     had until the last one is drawn; a redraw from a control (another layer) still draws them in one task;
//   - the extrapolation chart is updated in place while a run reports results: the same uPlot instance and the
//     same chart element from the first draw to the end of the run, its data changed (lib/chart.js `reuse`).
// A MutationObserver callback runs at the end of the task whose mutations it reports, so maps added in
// different callbacks were added in different tasks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { serveStatic, launchChromium, collectErrors, buildSite, settle } from './lib.js';

let browser, server, site;
const page = (body) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>redraw</title><link rel="icon" href="data:,"><style>body { max-width: 1000px; margin: 0 auto; padding: 0 8px; }</style></head>
<body>${body}<script type="module" src="./posenc-widgets.js"></script></body></html>`;

before(async () => {
  site = await buildSite();
  await writeFile(join(site.dir, 'redraw-lab.html'), page('<pe-attention id="at" eager generate="8"></pe-attention>'));
  await writeFile(join(site.dir, 'redraw-extra.html'), page('<pe-extrapolation id="ex" eager samples="1"></pe-extrapolation>'));
  server = await serveStatic(site.dir);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
});

/** Starts recording, per MutationObserver callback (one task), the attention maps added to #at and its maps' hold. */
const watchMaps = (p) => p.evaluate(() => {
  const el = document.querySelector('#at');
  const maps = el.querySelector('[data-head]').parentElement.parentElement;
  window.__batches = [];
  window.__before = maps.getBoundingClientRect().height;
  window.__mo?.disconnect();
  window.__mo = new MutationObserver((records) => {
    const added = records.flatMap((r) => [...r.addedNodes]).filter((n) => n.nodeType === 1 && n.matches('[data-head]'));
    if (!added.length) return;
    const m = el.querySelector('[data-head]')?.parentElement?.parentElement ?? maps;
    window.__batches.push({ heads: added.map((n) => Number(n.dataset.head)), minHeight: m.style.minHeight, height: m.getBoundingClientRect().height });
  });
  window.__mo.observe(el, { childList: true, subtree: true });
  return { heads: el.querySelectorAll('[data-head]').length, height: window.__before };
});

test('<pe-attention>: after Generate the maps are drawn one per task while the maps hold their height', async () => {
  const p = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = collectErrors(p);
  try {
    await p.goto(`${server.url}redraw-lab.html`);
    await settle(p, '#at', { timeout: 60_000 });
    const start = await watchMaps(p);
    assert.ok(start.heads >= 2, `the lab shows every head of a layer (${start.heads})`);
    const draws = Number(await p.getAttribute('#at', 'data-draws'));
    await p.click('#at [data-key="generate"]');
    await p.waitForFunction((n) => Number(document.querySelector('#at').dataset.draws) > n && !document.querySelector('#at').dataset.busy, draws, { timeout: 120_000 });
    assert.equal(await p.getAttribute('#at', 'data-generated-in'), 'worker');
    const { batches, before: h0, end } = await p.evaluate(() => {
      const m = document.querySelector('#at [data-head]').parentElement.parentElement;
      return { batches: window.__batches, before: window.__before, end: { minHeight: m.style.minHeight, heads: document.querySelectorAll('#at [data-head]').length } };
    });
    assert.equal(end.heads, start.heads, 'every head is drawn again');
    assert.equal(batches.length, start.heads, `one map per task: ${JSON.stringify(batches.map((b) => b.heads))}`);
    assert.deepEqual(batches.map((b) => b.heads.length), batches.map(() => 1));
    assert.deepEqual(batches.flatMap((b) => b.heads).sort(), [...Array(start.heads).keys()], 'each head once');
    // while the maps are drawn the maps keep the height they had (nothing below moves), and let go after
    for (const b of batches.slice(0, -1)) {
      // (offsetHeight, a whole number of px, against the rect's fractional height)
      assert.ok(/px$/.test(b.minHeight) && Math.abs(parseFloat(b.minHeight) - h0) < 1, `held at ${h0}px while drawing (${JSON.stringify(b)})`);
      assert.ok(b.height >= h0 - 0.5, `the maps did not shrink while drawing: ${b.height} < ${h0}`);
    }
    assert.equal(end.minHeight, '', 'the hold is gone after the last map');

    // a redraw from a control is not split: another layer's maps all come in one task
    await watchMaps(p);
    const layers = await p.$$eval('#at select[data-key="layer"] option', (os) => os.map((o) => o.value));
    assert.ok(layers.length >= 2, `the model has several layers (${layers})`);
    const cur = await p.$eval('#at select[data-key="layer"]', (s) => s.value);
    await p.selectOption('#at select[data-key="layer"]', layers.find((v) => v !== cur));
    await p.waitForFunction(() => window.__batches.length > 0);
    await settle(p, '#at');
    const again = await p.evaluate(() => window.__batches);
    assert.deepEqual(again.map((b) => b.heads.length), [start.heads], `a control's redraw draws every map in one task: ${JSON.stringify(again)}`);
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
  }
});

test('<pe-extrapolation>: a run updates its chart in place (the same uPlot instance, new data)', async () => {
  const p = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = collectErrors(p);
  try {
    await p.goto(`${server.url}redraw-extra.html`);
    await settle(p, '#ex', { timeout: 60_000 });
    const first = await p.evaluate(() => {
      const box = document.querySelector('#ex .pe-chart');
      const u = box._peChart.u;
      window.__chart = { box, u, root: u.root, setData: 0 };
      const setData = u.setData.bind(u);
      u.setData = (...a) => { window.__chart.setData++; return setData(...a); };
      return { live: u.data.slice(1).flat().filter((v) => v != null).length, series: u.series.length };
    });
    assert.equal(first.live, 0, 'before a run the chart has no live results');
    await p.click('#ex [data-key="run"]');
    await p.waitForFunction(() => /^(Done|完成)/.test(document.querySelector('#ex .pe-ex-status')?.textContent ?? ''), null, { timeout: 300_000, polling: 250 });
    await settle(p, '#ex', { timeout: 60_000 });
    const end = await p.evaluate(() => {
      const box = document.querySelector('#ex .pe-chart');
      const u = box._peChart.u, c = window.__chart;
      return {
        sameBox: box === c.box, sameU: u === c.u, sameRoot: u.root === c.root && u.root.isConnected, charts: document.querySelectorAll('#ex .uplot').length,
        setData: c.setData, live: u.data.slice(1).flat().filter((v) => v != null).length, series: u.series.length,
      };
    });
    assert.ok(end.sameBox && end.sameU && end.sameRoot, `the chart was rebuilt during the run: ${JSON.stringify(end)}`);
    assert.equal(end.charts, 1);
    assert.equal(end.series, first.series);
    assert.ok(end.setData >= 2, `updated in place as results came (${end.setData} updates)`);
    assert.ok(end.live > 0, 'and it shows the run\'s results');
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
  }
});
