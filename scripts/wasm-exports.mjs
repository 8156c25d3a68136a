// Prints emcc's EXPORTED_FUNCTIONS list: _malloc,_free plus every public pe_* function declared in the header.
// A declaration is a statement that starts with a return type and names `pe_xxx(` at top level; comments are
// stripped first (the header's usage block calls functions too), typedefs and private `pe__` names are skipped.
// The core module and the tiny-model module export different parts of the header: --exclude PREFIX drops the
// functions whose name starts with PREFIX, --only PREFIX keeps only those, --also NAME[,NAME] adds functions
// by name (what the model wrapper needs from the core, e.g. pe_abi_rope_config_layout).
// usage: node scripts/wasm-exports.mjs [--exclude PREFIX | --only PREFIX] [--also NAMES] [c/include/posenc.h]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
let exclude = null, only = null, also = [];
while (args.length && args[0].startsWith('--')) {
  const flag = args.shift();
  const value = args.shift();
  if (value === undefined) {
    console.error(`wasm-exports: ${flag} needs a value`);
    process.exit(2);
  }
  if (flag === '--exclude') exclude = value;
  else if (flag === '--only') only = value;
  else if (flag === '--also') also = value.split(',').filter(Boolean);
  else {
    console.error(`wasm-exports: unknown option ${flag}`);
    process.exit(2);
  }
}
const header = args[0] ?? 'c/include/posenc.h';
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
const declared = new Set(names);
for (const n of [...names]) {
  if ((exclude !== null && n.startsWith(exclude)) || (only !== null && !n.startsWith(only))) names.delete(n);
}
for (const n of also) {
  if (!declared.has(n)) {
    console.error(`wasm-exports: --also ${n}: not declared in ${header}`);
    process.exit(1);
  }
  names.add(n);
}
if (names.size === 0) {
  console.error(`wasm-exports: no pe_* function declarations found in ${header}${only || exclude ? ' (after --only / --exclude)' : ''}`);
  process.exit(1);
}
console.log(['_malloc', '_free', ...[...names].map((n) => '_' + n)].join(','));
