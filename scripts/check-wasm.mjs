// Checks a built module: it compiles, exports every function emcc was asked to export (emcc 3.1.6 links
// with --export-if-defined, so a declared-but-unimplemented function would otherwise vanish silently), and
// imports nothing but env.emscripten_notify_memory_growth. Prints raw and gzip sizes.
// usage: node scripts/check-wasm.mjs <exports-list> <file.wasm>...
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const [exportList, ...files] = process.argv.slice(2);
const wanted = exportList.split(',').map((s) => s.replace(/^_/, ''));
const allowedImports = new Set(['env.emscripten_notify_memory_growth']);
let ok = true;
for (const file of files) {
  const bytes = readFileSync(file);
  const mod = new WebAssembly.Module(bytes);
  const exports = new Set(WebAssembly.Module.exports(mod).map((e) => e.name));
  const missing = wanted.filter((n) => !exports.has(n));
  const imports = WebAssembly.Module.imports(mod).map((i) => `${i.module}.${i.name}`);
  const extra = imports.filter((i) => !allowedImports.has(i));
  if (missing.length) {
    ok = false;
    console.error(`${file}: not defined by any C source (declared in posenc.h): ${missing.join(', ')}`);
  }
  if (extra.length) {
    ok = false;
    console.error(`${file}: unexpected imports (libc calls that need a host?): ${extra.join(', ')}`);
  }
  const kib = (n) => (n / 1024).toFixed(1) + ' KiB';
  console.log(`  ${file}: ${kib(bytes.length)} raw, ${kib(gzipSync(bytes, { level: 9 }).length)} gzip, ${exports.size} exports`);
}
process.exit(ok ? 0 : 1);
