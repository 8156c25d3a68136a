// Prints emcc's EXPORTED_FUNCTIONS list: _malloc,_free plus every public pe_* function declared in the header.
// A declaration is a statement that starts with a return type and names `pe_xxx(` at top level; comments are
// stripped first (the header's usage block calls functions too), typedefs and private `pe__` names are skipped.
// usage: node scripts/wasm-exports.mjs [c/include/posenc.h]
import { readFileSync } from 'node:fs';

const header = process.argv[2] ?? 'c/include/posenc.h';
const src = readFileSync(header, 'utf8')
  .replace(/\/\*[\s\S]*?\*\//g, ' ')   // block comments
  .replace(/\/\/[^\n]*/g, ' ')         // line comments
  .replace(/^\s*#[^\n]*(\\\n[^\n]*)*/gm, ' '); // preprocessor lines (macros are not functions)

const names = new Set();
for (const stmt of src.split(/[;{}]/)) {
  const s = stmt.replace(/\s+/g, ' ').trim();
  if (s.startsWith('typedef') || s.startsWith('extern "C"')) continue;
  // return type words and '*'s, then the name, then '('
  const m = /^(?:[A-Za-z_]\w*[\s*]+)+\**\s*(pe_[A-Za-z0-9]\w*)\s*\(/.exec(s);
  if (m && !m[1].startsWith('pe__')) names.add(m[1]);
}
if (names.size === 0) {
  console.error(`wasm-exports: no pe_* function declarations found in ${header}`);
  process.exit(1);
}
console.log(['_malloc', '_free', ...[...names].map((n) => '_' + n)].join(','));
