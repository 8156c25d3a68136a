#!/usr/bin/env node
// overhead.mjs — what the JS API costs per call on top of the raw wasm exports, for small (decode) calls.
// Not a test (node --test does not pick it up): a measurement for the API's owners.
//
//   nice -n -10 node tests/js/overhead.mjs                          # this tree's web/src, ~30 s
//   nice -n -10 node tests/js/overhead.mjs --api OTHER/index.js     # and another copy of web/src, interleaved
//   OVERHEAD_MS=60000 node tests/js/overhead.mjs                    # longer
//
// Workload: decode, q and k [1,1,32,128] bshd, pe.tensor inputs (zero-copy), headDim 128 (64 frequencies).
// Every case is timed as the minimum over many short batches, all cases interleaved round by round, so load
// from other processes (which only ever adds time) drops out; compare differences and ratios, not absolute
// times. The raw cases call the exports of a second instance of the same SIMD module directly, with every
// pointer prepared once: the floor for the same work.
//
//   hit:  the same positions every call: the API reuses its cached table, so its floor is pe_rope_apply alone
//   miss: a new position every call (a decode step): the floor is pe_rope_cos_sin (1 row) + pe_rope_apply
//   cosSin: one new position's table (64 frequencies) as new arrays, or into tensors with { out }

import { pathToFileURL } from 'node:url';
import { simdWasmBase64 } from '../../web/src/wasm-inline.js';

const args = process.argv.slice(2);
const apis = [{ label: 'api', path: new URL('../../web/src/index.js', import.meta.url).href }];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--api') apis.push({ label: `api@${args[++i]}`, path: pathToFileURL(args[i]).href });
  else throw new Error(`overhead.mjs: unknown argument ${args[i]}`);
}

const D = 128;
const H = 32;
const n = H * D;
const shape = [1, 1, H, D];
const data = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.1));
const fixed = Int32Array.of(4095);
const steps = Array.from({ length: 64 }, (_, i) => Int32Array.of(4096 + i)); // a new position per call

const cases = {};

// Raw exports: a second instance of the SIMD module, called directly.
{
  const bytes = Uint8Array.from(atob(simdWasmBase64), (c) => c.charCodeAt(0));
  const module = await WebAssembly.compile(bytes);
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) (imports[imp.module] ??= {})[imp.name] = () => 0;
  const inst = await WebAssembly.instantiate(module, imports);
  const ex = inst.exports;
  ex._initialize?.();
  // pe_rope_config for { headDim: 128 }: zero-initialised means defaults, head_dim and rotary_dim set.
  const countPtr = ex.malloc(16);
  const lay = ex.pe_abi_rope_config_layout(countPtr) >>> 2;
  const i32 = () => new Int32Array(ex.memory.buffer);
  const count = i32()[countPtr >>> 2];
  const cfgSize = i32()[lay + count - 2];
  const ropeSize = i32()[lay + count - 1];
  const cfg = ex.malloc(cfgSize);
  new Uint8Array(ex.memory.buffer, cfg, cfgSize).fill(0);
  new DataView(ex.memory.buffer).setInt32(cfg + i32()[lay + 0], D, true); // head_dim
  new DataView(ex.memory.buffer).setInt32(cfg + i32()[lay + 1], D, true); // rotary_dim
  new DataView(ex.memory.buffer).setFloat64(cfg + i32()[lay + 2], 10000, true); // base
  const rope = ex.malloc(ropeSize);
  if (ex.pe_rope_init(rope, cfg) !== 0) throw new Error('pe_rope_init failed');
  const q = ex.malloc(n * 4);
  const k = ex.malloc(n * 4);
  new Float32Array(ex.memory.buffer, q, n).set(data);
  new Float32Array(ex.memory.buffer, k, n).set(data);
  const pos = ex.malloc(4);
  i32()[pos >>> 2] = 4095;
  const cos = ex.malloc(64 * 4);
  const sin = ex.malloc(64 * 4);
  ex.pe_rope_cos_sin(cos, sin, rope, pos, 1, -1n, 1.0);
  // pe_rope_apply_config { batch 1, seq 1, heads H, bshd, shared rows, forward }, laid out as the module says
  const alay = ex.pe_abi_rope_apply_config_layout(countPtr) >>> 2;
  const acount = i32()[countPtr >>> 2];
  const ac = ex.malloc(i32()[alay + acount - 1]);
  new Uint8Array(ex.memory.buffer, ac, i32()[alay + acount - 1]).fill(0);
  for (const [field, v] of [[0, 1], [1, 1], [2, H]]) new DataView(ex.memory.buffer).setInt32(ac + i32()[alay + field], v, true);
  cases['raw: cos_sin'] = () => ex.pe_rope_cos_sin(cos, sin, rope, pos, 1, -1n, 1.0);
  cases['raw: apply q'] = () => ex.pe_rope_apply(rope, q, cos, sin, ac);
  cases['raw: cos_sin + apply q'] = () => {
    ex.pe_rope_cos_sin(cos, sin, rope, pos, 1, -1n, 1.0);
    ex.pe_rope_apply(rope, q, cos, sin, ac);
  };
  cases['raw: apply q, k'] = () => {
    ex.pe_rope_apply(rope, q, cos, sin, ac);
    ex.pe_rope_apply(rope, k, cos, sin, ac);
  };
  cases['raw: cos_sin + apply q, k'] = () => {
    ex.pe_rope_cos_sin(cos, sin, rope, pos, 1, -1n, 1.0);
    ex.pe_rope_apply(rope, q, cos, sin, ac);
    ex.pe_rope_apply(rope, k, cos, sin, ac);
  };
}

for (const { label, path } of apis) {
  const { init } = await import(path);
  const pe = await init({ simd: true });
  const rope = pe.rope({ headDim: D });
  const qT = pe.tensor(data);
  const kT = pe.tensor(data);
  let step = 0;
  const next = () => steps[step++ & 63];
  cases[`${label}: apply(q) hit`] = () => rope.apply(qT, { shape, layout: 'bshd', positions: fixed });
  cases[`${label}: apply(q) default positions`] = () => rope.apply(qT, { shape, layout: 'bshd' });
  cases[`${label}: apply(q) miss`] = () => rope.apply(qT, { shape, layout: 'bshd', positions: next() });
  cases[`${label}: apply(q); apply(k) hit`] = () => {
    rope.apply(qT, { shape, layout: 'bshd', positions: fixed });
    rope.apply(kT, { shape, layout: 'bshd', positions: fixed });
  };
  cases[`${label}: apply(q); apply(k) new position`] = () => {
    const p = next();
    rope.apply(qT, { shape, layout: 'bshd', positions: p });
    rope.apply(kT, { shape, layout: 'bshd', positions: p });
  };
  // Does this copy of the API take options.k? (One that does not ignores it and leaves k as it was.)
  const kBefore = kT.array.slice();
  rope.apply(qT, { shape, positions: fixed, k: kT });
  const hasK = !kBefore.every((v, i) => v === kT.array[i]);
  cases[`${label}: cosSin(1 position)`] = () => rope.cosSin(next());
  const out = { cos: pe.tensor(64), sin: pe.tensor(64) };
  let hasOut = false;
  try {
    hasOut = rope.cosSin(fixed, { out }).cos === out.cos;
  } catch {
    // a copy of the API without the out option
  }
  if (hasOut) {
    cases[`${label}: cosSin(1 position, { out: tensors })`] = () => rope.cosSin(next(), { out });
  }
  if (hasK) {
    cases[`${label}: apply(q, { k }) hit`] = () => rope.apply(qT, { shape, layout: 'bshd', positions: fixed, k: kT });
    cases[`${label}: apply(q, { k }) new position`] = () => rope.apply(qT, { shape, layout: 'bshd', positions: next(), k: kT });
  }
}

const entries = Object.entries(cases);
const best = new Map(entries.map(([name]) => [name, Infinity]));
const iters = 1000;
const budget = Number(process.env.OVERHEAD_MS ?? 30000);
for (const [, f] of entries) for (let i = 0; i < 20 * iters; i++) f(); // warm-up: JIT tiers
const t0 = performance.now();
let rounds = 0;
while (performance.now() - t0 < budget) {
  rounds++;
  for (let j = 0; j < entries.length; j++) {
    const [name, f] = entries[(j + rounds) % entries.length]; // rotating order
    const a = performance.now();
    for (let i = 0; i < iters; i++) f();
    const t = ((performance.now() - a) / iters) * 1e6;
    if (t < best.get(name)) best.set(name, t);
  }
}
const ns = (name) => best.get(name);
console.log(`| case: decode [1,1,32,128] bshd, pe.tensor | ns per call (min over ${rounds} rounds of ${iters}) |`);
console.log('|---|---|');
for (const [name] of entries) console.log(`| ${name} | ${ns(name).toFixed(0)} |`);
console.log();
console.log('| API over raw, ns | apply(q) hit | apply(q) miss | apply(q); apply(k) hit | apply(q); apply(k) new position | apply(q, { k }) hit | apply(q, { k }) new position | cosSin | cosSin { out } |');
console.log('|---|---|---|---|---|---|---|---|---|');
for (const { label } of apis) {
  const d = (c, r) => (best.has(`${label}: ${c}`) ? (ns(`${label}: ${c}`) - ns(r)).toFixed(0) : 'n/a');
  console.log(
    `| ${label} | ${d('apply(q) hit', 'raw: apply q')} | ${d('apply(q) miss', 'raw: cos_sin + apply q')} | ` +
      `${d('apply(q); apply(k) hit', 'raw: apply q, k')} | ${d('apply(q); apply(k) new position', 'raw: cos_sin + apply q, k')} | ` +
      `${d('apply(q, { k }) hit', 'raw: apply q, k')} | ${d('apply(q, { k }) new position', 'raw: cos_sin + apply q, k')} | ` +
      `${d('cosSin(1 position)', 'raw: cos_sin')} | ${d('cosSin(1 position, { out: tensors })', 'raw: cos_sin')} |`,
  );
}
