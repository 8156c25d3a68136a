// Widgets embedded in a page on another origin (issue 15, Embedding), in headless Chromium against the built
// site: the widgets' server sends Access-Control-Allow-Origin and the host page loads posenc-widgets.js from
// it with one script tag. Checked:
//   - the host's own styles (h3, p, label, table { width: 100% } …) do not restyle the widgets: each widget's
//     headings, text, labels and tables compute the same as on a page with no styles of its own;
//   - the widgets' sheets (KaTeX's and uPlot's) do not restyle the host's own .katex and .u-legend elements;
//   - where the models are blocked (no Access-Control-Allow-Origin on them) the widget says so in words.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveStatic, launchChromium, collectErrors, buildSite, settle } from './lib.js';

let browser, site, widgets, widgetsNoModels, host, hostDir;
const WIDGETS = '<pe-sinusoidal id="sin" eager></pe-sinusoidal>\n<pe-learned id="learned" eager></pe-learned>';
const HOST_CSS = `
  body { font: 20px/1.2 Georgia, serif; color: #400; }
  h3, h4 { color: #c00; letter-spacing: 3px; text-transform: uppercase; font-family: Impact, sans-serif; }
  p { color: #00c; text-align: justify; letter-spacing: 1px; }
  label { text-transform: uppercase; font-weight: 700; }
  table { width: 100%; background: #ff0; }
  td, th { background: #0ff; }
  span { letter-spacing: 2px; }
  .katex { font-size: 30px; color: #080; }
  .u-legend { font-size: 25px; color: #808; }`;
const page = (widgetsUrl, { css = '', body = '' } = {}) => `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,"><style>${css}</style></head>
<body>${body}${widgetsUrl ? `${WIDGETS}<script type="module" src="${widgetsUrl}posenc-widgets.js"></script>` : ''}
<p>host text <span class="katex" id="host-katex">x = 1</span></p><table class="u-legend" id="host-legend"><tr><td>host legend</td></tr></table>
</body></html>`;

before(async () => {
  [site, browser] = await Promise.all([buildSite(), launchChromium()]);
  widgets = await serveStatic(site.dir, { cors: () => true });
  // the same files, but the models are not shared with other origins
  widgetsNoModels = await serveStatic(site.dir, { cors: (p) => !p.includes('/models/') });
  hostDir = await mkdtemp(join(tmpdir(), 'posenc-host-'));
  await writeFile(join(hostDir, 'plain.html'), page(null, { css: HOST_CSS }));
  await writeFile(join(hostDir, 'styled.html'), page(widgets.url, { css: HOST_CSS }));
  await writeFile(join(hostDir, 'blocked.html'), page(widgetsNoModels.url));
  host = await serveStatic(hostDir);
  await writeFile(join(site.dir, 'neutral.html'), page('./'));
});
after(async () => {
  await browser?.close();
  await Promise.all([widgets?.close(), widgetsNoModels?.close(), host?.close()]);
  if (hostDir) await rm(hostDir, { recursive: true, force: true });
});

const PROPS = ['color', 'font-family', 'font-size', 'font-weight', 'letter-spacing', 'text-transform', 'text-align', 'width', 'background-color'];

/** Computed styles of the widgets' own headings, text, labels, table cells and formulas. */
function widgetStyles(p) {
  return p.evaluate((props) => {
    const pick = (el) => (el ? Object.fromEntries(props.map((k) => [k, k === 'width' && el.localName !== 'table' ? '' : getComputedStyle(el).getPropertyValue(k)])) : null);
    const out = {};
    for (const id of ['sin', 'learned']) {
      const w = document.getElementById(id);
      out[id] = {
        h4: pick(w.querySelector('h4')), p: pick(w.querySelector('p.pe-note')), label: pick(w.querySelector('label.pe-control')),
        table: pick(w.querySelector('table.pe-table')), td: pick(w.querySelector('table.pe-table td')), math: pick(w.querySelector('.katex')),
        legend: pick(w.querySelector('.u-legend')), tableWidth: w.querySelector('table.pe-table')?.getBoundingClientRect().width,
      };
    }
    return out;
  }, PROPS);
}

const hostStyles = (p) => p.evaluate((props) => Object.fromEntries(['host-katex', 'host-legend'].map((id) => {
  const el = document.getElementById(id);
  return [id, Object.fromEntries(props.map((k) => [k, getComputedStyle(el).getPropertyValue(k)]))];
})), PROPS);

async function load(url) {
  const p = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = collectErrors(p);
  await p.goto(url);
  return { p, errors };
}

test('widgets from another origin look the same on a styled host page, and leave its own styles alone', async () => {
  const neutral = await load(`${widgets.url}neutral.html`);
  const styled = await load(`${host.url}styled.html`);
  const plain = await load(`${host.url}plain.html`);
  try {
    for (const { p } of [neutral, styled]) {
      for (const sel of ['#sin', '#learned']) assert.equal((await settle(p, sel, { timeout: 60_000 })).state, 'ready', sel);
      await p.evaluate(() => document.fonts.ready);
    }
    const want = await widgetStyles(neutral.p);
    const got = await widgetStyles(styled.p);
    for (const id of Object.keys(want)) {
      for (const part of Object.keys(want[id])) {
        if (part === 'tableWidth') continue;
        assert.deepEqual(got[id][part], want[id][part], `<${id}> ${part}: the host page's styles leak in`);
      }
      assert.ok(Math.abs(got[id].tableWidth - want[id].tableWidth) < 1, `<${id}> table width ${got[id].tableWidth} vs ${want[id].tableWidth}`);
    }
    // the host's own .katex and .u-legend compute as on the same page without widgets
    assert.deepEqual(await hostStyles(styled.p), await hostStyles(plain.p), 'the widgets\' KaTeX / uPlot CSS restyles the host');
    assert.deepEqual(styled.errors, []);
    assert.deepEqual(neutral.errors, []);
  } finally {
    await Promise.all([neutral.p.close(), styled.p.close(), plain.p.close()]);
  }
});

test('a widget whose models another origin does not share says so in words', async () => {
  const { p } = await load(`${host.url}blocked.html`);
  try {
    assert.equal((await settle(p, '#sin', { timeout: 60_000 })).state, 'ready', 'a widget without models works');
    const s = await settle(p, '#learned', { timeout: 60_000 });
    assert.equal(s.state, 'error');
    const shown = await p.$eval('#learned .pe-error', (e) => e.textContent);
    assert.match(shown, /Access-Control-Allow-Origin/);
    assert.ok(!/Failed to fetch/.test(shown), shown);
  } finally {
    await p.close();
  }
});
