// Shared helpers for the browser and pack tests: a tiny static file server, headless Debian Chromium through
// playwright-core, and a collector for everything a page reports as an error.
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { chromium } from 'playwright-core';

export const repoRoot = resolve(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '../..');

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.safetensors': 'application/octet-stream',
};

/**
 * Serves `dir` on 127.0.0.1 at a free port, under `prefix` (default '/'; e.g. '/some/sub/path/' proves that a
 * site works from a sub-path: anything outside the prefix is a 404). cors(pathname) -> true adds
 * Access-Control-Allow-Origin: * to that file (an embedding page on another origin may then load it).
 * Returns { url, close } (url ends in prefix).
 */
export async function serveStatic(dir, { prefix = '/', cors = () => false } = {}) {
  const root = resolve(dir);
  const server = createServer(async (req, res) => {
    try {
      const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      if (!pathname.startsWith(prefix)) throw new Error('outside prefix');
      let path = normalize(join(root, pathname.slice(prefix.length - 1)));
      if (!path.startsWith(root)) throw new Error('outside root');
      if ((await stat(path)).isDirectory()) path = join(path, 'index.html');
      const body = await readFile(path);
      const headers = { 'content-type': MIME[extname(path)] ?? 'application/octet-stream' };
      if (cors(pathname)) headers['access-control-allow-origin'] = '*';
      res.writeHead(200, headers);
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${server.address().port}${prefix}`,
    close: () => new Promise((ok) => server.close(ok)),
  };
}

/** Headless Chromium from Debian's `chromium` package (no browser download). */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** Collects console errors, uncaught exceptions, failed requests and HTTP errors of a page. */
export function collectErrors(page) {
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`http ${r.status()}: ${r.url()}`); });
  return errors;
}

// ── the playground site and its widgets ──────────────────────────────────────────────────────────────────

let siteBuild = null;
/**
 * Builds web/playground with Vite (what `npm run build:web` ships) into a temporary directory, once per
 * process. Returns { dir, remove() }.
 */
export function buildSite() {
  siteBuild ??= (async () => {
    const { build } = await import('vite');
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(join(tmpdir(), 'posenc-site-'));
    await build({ root: join(repoRoot, 'web/playground'), logLevel: 'warn', build: { outDir: dir, emptyOutDir: true } });
    return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
  })();
  return siteBuild;
}

/** Scrolls a widget into view (widgets start lazily) and waits until it has drawn or failed, and is not busy. */
export async function settle(page, selector, { timeout = 30_000 } = {}) {
  const el = page.locator(selector).first();
  await el.scrollIntoViewIfNeeded();
  await page.waitForFunction((sel) => {
    const e = document.querySelector(sel);
    return e && (e.dataset.state === 'error' || (e.dataset.state === 'ready' && !e.dataset.busy));
  }, selector, { timeout });
  return page.evaluate((sel) => {
    const e = document.querySelector(sel);
    return { state: e.dataset.state, error: e.dataset.error ?? null, draws: Number(e.dataset.draws ?? 0), build: e.dataset.build };
  }, selector);
}

/**
 * Waits until every widget that has drawn has drawn again in `lang`. A language switch re-renders the widgets on
 * screen in turn and the others only when they near the viewport (data-relabel="pending"), so this scrolls to
 * each pending one, as a reader would, and then back to where the page was.
 */
export async function languageDrawn(page, lang, { timeout = 30_000 } = {}) {
  // and done drawing: after a switch a widget of several figures draws them in tasks of their own (data-busy)
  const drawn = (l) => [...document.querySelectorAll('.pe-widget[data-draws]')].every((e) => (e.dataset.lang === l || e.hasAttribute('lang')) && !e.dataset.busy);
  const scrollY = await page.evaluate(() => window.scrollY);
  const deadline = Date.now() + timeout;
  for (;;) {
    const visited = await page.evaluate(() => {
      const e = document.querySelector('.pe-widget[data-relabel="pending"]');
      if (!e) return false;
      e.scrollIntoView({ block: 'center' });
      window.__peVisit = e;
      return true;
    });
    if (!visited) break;
    await page.waitForFunction(() => window.__peVisit.dataset.relabel !== 'pending', null, { timeout: Math.max(1000, deadline - Date.now()) });
  }
  await page.waitForFunction(drawn, lang, { timeout: Math.max(1000, deadline - Date.now()) });
  await page.evaluate((y) => window.scrollTo(0, y), scrollY);
}

/**
 * What a widget shows, reduced to numbers: per canvas the count of distinct colours and a hash of its pixels,
 * per inline SVG a hash of its markup, and a hash of the element's text. `signature` combines them all, so a
 * control "changes what is drawn" when the signature changes.
 */
export function drawing(page, selector) {
  return page.evaluate((sel) => {
    const root = document.querySelector(sel);
    const hashStr = (s) => {
      let x = 0;
      for (let i = 0; i < s.length; i++) x = (Math.imul(x, 31) + s.charCodeAt(i)) | 0;
      return x;
    };
    const canvases = [...root.querySelectorAll('canvas')].filter((c) => c.width > 0 && c.height > 0).map((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const colours = new Set();
      let hash = 0;
      for (let i = 0; i < d.length; i += 4) {
        const rgba = (d[i] << 24) | (d[i + 1] << 16) | (d[i + 2] << 8) | d[i + 3];
        colours.add(rgba);
        hash = (Math.imul(hash, 31) + rgba) | 0;
      }
      return { w: c.width, h: c.height, colours: colours.size, hash };
    });
    const svgs = [...root.querySelectorAll('svg')].filter((s) => !s.parentElement.closest('svg'))
      .map((s) => ({ shapes: s.querySelectorAll('path,line,circle,rect,polyline,polygon,ellipse').length, hash: hashStr(s.outerHTML) }));
    const text = hashStr(root.innerText);
    const signature = hashStr(JSON.stringify([canvases.map((c) => c.hash), svgs.map((s) => s.hash), text]));
    return { canvases, svgs, text, signature };
  }, selector);
}

/** True when the drawing has at least one canvas with a gradient or an SVG with shapes. */
export function nonBlank(d) {
  return d.canvases.some((c) => c.colours >= 3) || d.svgs.some((s) => s.shapes >= 3);
}

/**
 * Every visible text of the page (or under `selector`): trimmed text nodes whose element is rendered, the
 * selected option of each <select>, and button labels; skipping formulas (.katex), anything marked
 * translate="no", <script>, <style>, <code>, and hidden elements.
 */
export function visibleTexts(page, selector = 'body') {
  return page.evaluate((sel) => {
    const out = [];
    const skip = (el) => el.closest('.katex, [translate="no"], script, style, code, noscript, option, template');
    const walker = document.createTreeWalker(document.querySelector(sel), NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.nodeValue.replace(/\s+/g, ' ').trim();
      const el = n.parentElement;
      if (!text || !el || skip(el)) continue;
      if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      out.push(text);
    }
    for (const s of document.querySelector(sel).querySelectorAll('select')) {
      if (skip(s) || !s.checkVisibility()) continue;
      const o = s.selectedOptions[0];
      if (o && !o.closest('[translate="no"]')) out.push(o.textContent.replace(/\s+/g, ' ').trim());
    }
    return out;
  }, selector);
}

/**
 * Names, identifiers, units and math that read the same in Chinese text. A visible text counts as English when
 * it has a word of two or more Latin letters (only letters: float32, d_model, rope.cosSin, 8B are identifiers)
 * that is not one of these.
 */
export const SAME_IN_CHINESE = /^(RoPE|YaRN|ALiBi|NoPE|LongRoPE|Llama|Gemma|NeoX|GPT|HF|Meta|Qwen|VL|DeepSeek|Mistral|SIMD|posenc|npm|JSON|config|eval|OPT|NTK|PI|rad|ln|exp|sin|cos|log|max|min|softmax|PE)$/i;

export function isEnglish(text) {
  return text.split(/[^A-Za-z0-9_.]+/).some((w) => /^[A-Za-z]{2,}$/.test(w) && !SAME_IN_CHINESE.test(w));
}
