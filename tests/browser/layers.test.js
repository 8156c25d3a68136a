// The widgets' layers run one way (DESIGN.md, Layers): read from the import statements of the source files.
//   - nothing in web/ imports from bench/ (bench/ imports what it shares with the speed widget from web/widgets/lib/);
//   - web/widgets/lib/ imports nothing above it: not base.js, not a widget;
//   - a widget imports base.js, lib/ and the public API, never another widget, and never web/src internals.
// No browser needed; it sits here beside the widgets' other tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from './lib.js';

const widgetsDir = join(repoRoot, 'web/widgets');
const libDir = join(widgetsDir, 'lib');

async function sources(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await sources(p)));
    else if (/\.(m?js)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** The relative module paths a file imports (static, re-exports and dynamic import() with a literal). */
async function importsOf(file) {
  const text = (await readFile(file, 'utf8')).replace(/^\s*\/\/.*$/gm, '');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)]
    .map((m) => m[1] ?? m[2]);
  return specs.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s.split('?')[0]));
}

const rel = (p) => relative(repoRoot, p);
// the package's public entries ("exports" in package.json: posenc, posenc/url, posenc/model)
const PUBLIC = new Set(['web/src/index.js', 'web/src/url.js', 'web/src/model.js']);

test('nothing in web/ imports from bench/', async () => {
  for (const f of await sources(join(repoRoot, 'web'))) {
    for (const target of await importsOf(f)) {
      assert.ok(!rel(target).startsWith('bench/'), `${rel(f)} imports ${rel(target)}`);
    }
  }
});

test('web/widgets/lib/ imports only lib/ modules and packages', async () => {
  const files = await sources(libDir);
  assert.ok(files.length > 5);
  for (const f of files) {
    for (const target of await importsOf(f)) {
      const r = rel(target);
      assert.ok(r.startsWith('web/widgets/lib/') || PUBLIC.has(r), `${rel(f)} imports ${r}`);
    }
  }
});

test('a widget imports base.js, lib/ and the public API, never another widget or a web/src internal', async () => {
  const widgets = (await readdir(widgetsDir)).filter((n) => n.endsWith('.js') && n !== 'index.js' && n !== 'base.js');
  assert.ok(widgets.length >= 12, `${widgets.length} widget files`);
  for (const name of widgets) {
    for (const target of await importsOf(join(widgetsDir, name))) {
      const r = rel(target);
      assert.ok(r === 'web/widgets/base.js' || r.startsWith('web/widgets/lib/') || PUBLIC.has(r), `${name} imports ${r}`);
    }
  }
  for (const target of await importsOf(join(widgetsDir, 'base.js'))) {
    const r = rel(target);
    assert.ok(r.startsWith('web/widgets/lib/') || PUBLIC.has(r), `base.js imports ${r}`);
  }
});
