// The playground on the Vite dev server (what `npm start` serves): the page loads, the widgets script is
// served from source, a section draws and reacts to a control, and nothing logs an error. The built site is
// tested in widgets.test.js (sections, blog post, language, ?simd=0, phone) and rope-widgets.test.js.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createServer } from 'vite';
import { repoRoot, launchChromium, collectErrors, settle, drawing, nonBlank } from './lib.js';

let browser;
before(async () => { browser = await launchChromium(); });
after(async () => { await browser?.close(); });

test('playground on the Vite dev server (npm start) draws and reacts without errors', async () => {
  const server = await createServer({
    root: join(repoRoot, 'web/playground'), logLevel: 'warn', server: { host: '127.0.0.1', port: 0, strictPort: false },
  });
  await server.listen();
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors = collectErrors(page);
  try {
    await page.goto(`${server.resolvedUrls.local[0]}index.html`);
    await page.waitForFunction(() => document.documentElement.dataset.page === 'ready', null, { timeout: 60_000 });
    for (const sel of ['#sin', '#rope-hm']) {
      const s = await settle(page, sel, { timeout: 60_000 });
      assert.equal(s.state, 'ready', `${sel}: ${s.error}`);
      assert.ok(nonBlank(await drawing(page, sel)), `${sel} draws`);
    }
    const before = await drawing(page, '#rope-hm');
    await page.locator('#rope-hm [data-key="scaling"]').selectOption({ index: 1 });
    await page.waitForFunction(() => Number(document.querySelector('#rope-hm').dataset.draws) >= 2);
    assert.notEqual((await drawing(page, '#rope-hm')).signature, before.signature, 'linear scaling changes the cos table');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
    await server.close();
  }
});
