// The set-up the playground's page tests share: the built site (Vite, once per process), served on 127.0.0.1, and
// headless Chromium, started in before() and stopped in after() of the test file that calls usePlayground().
//
//   const site = usePlayground({ shots: 'test-results/guide' });
//   const { page, errors, close } = await site.open('index.html?lang=zh', { width: 390 });
//   try { ... assert.deepEqual(errors, []); } finally { await close(); }
import { before, after } from 'node:test';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot, serveStatic, launchChromium, collectErrors, buildSite } from './lib.js';

/**
 * Registers the file's before() / after() hooks and returns { open, shot, url }:
 *   open(path, { width = 1280, height = 900, permissions = [], ready = true }) -> { page, errors, close }: a page
 *     in a context of its own (permissions such as 'clipboard-read'), its errors collected (lib.js
 *     collectErrors), at `path` of the site; with ready, once the page says data-page="ready" (main.js);
 *     close() closes the context;
 *   shot(name) -> the path of a screenshot `name` in the `shots` folder (created in before());
 *   url -> the site's base URL (after before() ran).
 */
export function usePlayground({ shots = null } = {}) {
  let browser, server;
  const dir = shots ? join(repoRoot, shots) : null;
  before(async () => {
    if (dir) await mkdir(dir, { recursive: true });
    let site;
    [site, browser] = await Promise.all([buildSite(), launchChromium()]);
    server = await serveStatic(site.dir);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  return {
    get url() {
      return server.url;
    },
    shot(name) {
      if (!dir) throw new Error('usePlayground: no shots folder given');
      return join(dir, name);
    },
    async open(path, { width = 1280, height = 900, permissions = [], ready = true } = {}) {
      const context = await browser.newContext({ viewport: { width, height }, permissions });
      const page = await context.newPage();
      const errors = collectErrors(page);
      await page.goto(server.url + path);
      if (ready) await page.waitForFunction(() => document.documentElement.dataset.page === 'ready');
      return { page, errors, close: () => context.close() };
    },
  };
}
