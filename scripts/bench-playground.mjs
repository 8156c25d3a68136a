// bench-playground.mjs — what the playground costs a reader, measured in headless Chromium against the built site
// (`node scripts/bench-web.mjs --playground`, after `bash build.sh wasm`). Printed, never asserted (times depend on the machine):
//   - initial transfer: every response of a cold load at the top of the page (1280 × 900), gzip-compressed here
//     as a static host would serve it, until the page is quiet;
//   - long tasks (> 50 ms) and the worst one: during that load, during a language switch with every widget
//     started (and while scrolling through the page after it), during the lab's Generate, and during the LM
//     extrapolation run (<pe-extrapolation> task = LM, Run).
// Layout shift is asserted in tests/browser/layout.test.js instead (it does not depend on the machine's speed).
import { gzipSync } from 'node:zlib';
import { serveStatic, launchChromium, buildSite, settle, languageDrawn } from '../tests/browser/lib.js';

const site = await buildSite();
const server = await serveStatic(site.dir);
const browser = await launchChromium();

function watchLongTasks() {
  window.__long = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push({ t: e.startTime, d: e.duration }); }).observe({ type: 'longtask', buffered: true });
}
const longSince = (page, t0) => page.evaluate((t) => window.__long.filter((e) => e.t >= t), t0);
const now = (page) => page.evaluate(() => performance.now());
const summary = (xs) => `${xs.length} long tasks, worst ${xs.length ? Math.max(...xs.map((x) => x.d)).toFixed(0) : 0} ms`;

try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const bodies = [];
  page.on('response', async (r) => {
    try {
      const b = await r.body();
      bodies.push({ url: r.url(), raw: b.length, gzip: gzipSync(b, { level: 6 }).length });
    } catch { /* a redirect or an aborted request has no body */ }
  });
  await page.addInitScript(watchLongTasks);
  await page.goto(server.url + 'index.html');
  await settle(page, '#why-w');
  await page.waitForTimeout(2000);
  const loadTasks = await longSince(page, 0);
  const raw = bodies.reduce((a, b) => a + b.raw, 0), gz = bodies.reduce((a, b) => a + b.gzip, 0);
  console.log(`initial transfer: ${bodies.length} responses, ${(raw / 1024).toFixed(0)} KiB raw, ${(gz / 1024).toFixed(0)} KiB gzip`);
  for (const b of bodies.sort((a, b) => b.gzip - a.gzip).slice(0, 6)) console.log(`  ${(b.gzip / 1024).toFixed(1).padStart(7)} KiB gzip  ${new URL(b.url).pathname}`);
  console.log(`load: ${summary(loadTasks)}`);

  const ids = await page.$$eval('main [id]', (els) => els.filter((e) => e.localName.startsWith('pe-')).map((e) => `#${e.id}`));
  for (const sel of ids) await settle(page, sel, { timeout: 120_000 });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(500);
  // the switch re-renders the widgets on screen (one per task); the others when a reader scrolls to them
  let t0 = await now(page);
  await page.click('pe-lang-toggle button');
  await page.waitForFunction(() => [...document.querySelectorAll('.pe-widget[data-draws]')].every((e) => e.dataset.lang === 'zh' || e.dataset.relabel === 'pending'), null, { timeout: 60_000 });
  await page.waitForTimeout(500);
  console.log(`language switch (widgets on screen): ${summary(await longSince(page, t0))}`);
  t0 = await now(page);
  await languageDrawn(page, 'zh', { timeout: 120_000 });
  await page.waitForTimeout(500);
  console.log(`scrolling through the page after it (every other widget relabels as it nears): ${summary(await longSince(page, t0))}`);

  // the lab's Generate (16 characters, each a forward pass over the whole text): runs in the eval worker
  await settle(page, '#attn-w');
  await page.waitForTimeout(500);
  t0 = await now(page);
  await page.click('#attn-w [data-key="generate"]');
  await page.waitForFunction(() => document.querySelector('#attn-w').dataset.generatedIn, null, { timeout: 120_000 });
  await settle(page, '#attn-w');
  await page.waitForTimeout(300);
  const t1 = Number(await page.getAttribute('#attn-w', 'data-generated-at'));
  const gen = await longSince(page, t0);
  // the task that receives the last character also redraws the maps (one forward pass with attention)
  const redraw = (x) => x.t <= t1 && t1 <= x.t + x.d;
  console.log(`lab Generate (${((t1 - t0) / 1000).toFixed(1)} s, in the ${await page.getAttribute('#attn-w', 'data-generated-in')}): ${summary(gen.filter((x) => x.t < t1 && !redraw(x)))}; the redraw at the end: ${summary(gen.filter((x) => redraw(x) || x.t > t1))}`);

  await page.selectOption('#extra-w select[data-key="task"]', '1');
  await settle(page, '#extra-w');
  t0 = await now(page);
  const start = Date.now();
  await page.click('#extra-w [data-key="run"]');
  await page.waitForFunction(() => /^(Done|完成)/.test(document.querySelector('#extra-w .pe-ex-status')?.textContent ?? ''), null, { timeout: 300_000, polling: 250 });
  console.log(`LM extrapolation run (${((Date.now() - start) / 1000).toFixed(1)} s): ${summary(await longSince(page, t0))}`);
  await page.close();
} finally {
  await browser.close();
  await server.close();
  await site.remove();
}
