#!/usr/bin/env node
// micro.mjs — where the time of one small rope.apply call goes (decode: q [1,1,32,128]), and what the
// JS API costs on top of the raw kernel calls. For the API's owners, not part of `npm run bench`:
//
//   node bench/micro.mjs            (after `bash build.sh wasm`; ~20 s)
//
// Each case is timed as the minimum over many short batches, the cases interleaved, so other load on the
// machine (which only ever adds time) drops out. Steps of the API path are timed by calling the same
// helpers web/src uses (errors.js) with the same arguments, and by a lean re-implementation of apply that
// keeps every check of rope.apply but builds error messages only when throwing and allocates nothing.
// No Node-only API (the wasm comes from web/src/wasm-inline.js).

import { init } from '../web/src/index.js';
import { checkEnum, checkInt, checkOptions, typeError, rangeError } from '../web/src/errors.js';
import { simdWasmBase64 } from '../web/src/wasm-inline.js';
import { instantiateRaw, decodeBase64, rawRope, rawFloat32, rawInt32, rawApplyConfig } from './raw.mjs';
import { fillRandom } from '../web/widgets/lib/measure.js';

const pe = await init({ simd: true });
const raw = await instantiateRaw(decodeBase64(simdWasmBase64));
const ex = raw.exports;
const D = 128;
const shape = [1, 1, 32, D];
const n = 32 * D;
const positions = Int32Array.of(4095);
const rope = pe.rope({ headDim: D });
const qT = pe.tensor(fillRandom(new Float32Array(n), 1));
const ropeP = rawRope(raw, D);
const qP = rawFloat32(raw, fillRandom(new Float32Array(n), 1));
const posP = rawInt32(raw, positions);
const cosP = raw.malloc(64 * 4);
const sinP = raw.malloc(64 * 4);
const outP = raw.malloc(16);
const acP = rawApplyConfig(raw, { batch: 1, seq: 1, heads: 32 });
const acFor = new Map(); // lean apply: one pe_rope_apply_config per (shape, layout, rotation), made once
function applyConfigFor(B, S, H, lay, rotation) {
  const key = `${B},${S},${H},${lay},${rotation}`;
  let p = acFor.get(key);
  if (p === undefined) acFor.set(key, (p = rawApplyConfig(raw, { batch: B, seq: S, heads: H, layout: lay, rotation })));
  return p;
}
ex.pe_rope_cos_sin(cosP, sinP, ropeP, posP, 1, -1n, 1.0);
const LAYOUTS = ['bshd', 'bhsd'];
const mem = ex.memory;
let sink = 0;

// A lean apply with the same checks as rope.apply (options object, shape of 4 integers in range with
// headDim matching, layout enum, inverse boolean, positions Int32Array checked by the C scan, x a tensor of
// the right length), messages built only on the throwing path, no closures or result objects.
const state = { ptr: ropeP, headDim: D, nFreq: 64, lastBuffer: null, i32: null };
function leanApply(xPtr, xLength, o) {
  if (o === null || typeof o !== 'object') throw typeError('rope.apply', 'options must be an options object', o);
  const s = o.shape;
  if (s === undefined || s === null || s.length !== 4) throw typeError('rope.apply', 'options.shape must be [batch, seq, heads, headDim]', s);
  const B = s[0];
  const S = s[1];
  const H = s[2];
  const Dd = s[3];
  if (!(Number.isInteger(B) && B >= 1 && Number.isInteger(S) && S >= 1 && Number.isInteger(H) && H >= 1 && Dd === state.headDim)) {
    for (let i = 0; i < 4; i++) checkInt('rope.apply', `options.shape[${i}]`, s[i], 1, 2147483647); // throws with the name
    throw new RangeError(`rope.apply: options.shape[3] (headDim) must equal this rope's headDim ${state.headDim}, got ${Dd}`);
  }
  const lay = o.layout === undefined || o.layout === 'bshd' ? 0 : o.layout === 'bhsd' ? 1 : checkEnum('rope.apply', 'options.layout', o.layout, LAYOUTS);
  const inverse = o.inverse ?? false;
  if (typeof inverse !== 'boolean') throw typeError('rope.apply', 'options.inverse must be a boolean', inverse);
  if (xLength !== B * S * H * Dd) throw new RangeError('rope.apply: x.length must equal the product of shape');
  const p = o.positions;
  if (!(p instanceof Int32Array) || p.length !== S) throw typeError('rope.apply', 'positions (this sketch: an Int32Array of seq)', p);
  const b = mem.buffer;
  if (b !== state.lastBuffer) {
    state.lastBuffer = b;
    state.i32 = new Int32Array(b);
  }
  state.i32.set(p, posP >>> 2);
  let st = ex.pe_rope_cos_sin(cosP, sinP, state.ptr, posP, S, -1n, 1.0);
  if (st !== 0) throw rangeError('rope.apply', 'options.positions must be integers >= 0', p);
  st = ex.pe_rope_apply(state.ptr, xPtr, cosP, sinP, applyConfigFor(B, S, H, lay, inverse ? 1 : 0));
  if (st !== 0) throw new Error(`rope.apply: status ${st}`);
}

const cases = {
  'rope.apply(tensor, { shape, layout, positions })': () => rope.apply(qT, { shape, layout: 'bshd', positions }),
  'rope.apply(tensor, { shape, layout })  (default positions)': () => rope.apply(qT, { shape, layout: 'bshd' }),
  'lean apply, same checks (sketch)': () => leanApply(qP, n, { shape, layout: 'bshd', positions }),
  'raw: pe_rope_cos_sin(1 position) + pe_rope_apply': () => {
    ex.pe_rope_cos_sin(cosP, sinP, ropeP, posP, 1, -1n, 1.0);
    ex.pe_rope_apply(ropeP, qP, cosP, sinP, acP);
  },
  'raw: pe_rope_apply only': () => ex.pe_rope_apply(ropeP, qP, cosP, sinP, acP),
  'raw: pe_rope_cos_sin(1 position) only': () => ex.pe_rope_cos_sin(cosP, sinP, ropeP, posP, 1, -1n, 1.0),
  'raw: pe_positions_max(1)': () => ex.pe_positions_max(outP, posP, 1),
  'step: checkEnum(layout) as in errors.js': () => {
    sink += checkEnum('rope.apply', 'options.layout', 'bshd', LAYOUTS).length;
  },
  'step: 4x checkInt with template-literal names (checkShape)': () => {
    const axis = ['batch', 'seq', 'heads', 'headDim'];
    for (let i = 0; i < 4; i++) sink += checkInt('rope.apply', `options.shape[${i}] (${axis[i]})`, shape[i], 1, 2147483647);
  },
  'step: checkOptions': () => {
    sink += checkOptions('rope.apply', 'options', state) === state ? 1 : 0;
  },
  'step: WebAssembly.Memory.buffer getter': () => {
    sink += mem.buffer === state.lastBuffer ? 1 : 0;
  },
  'step: Int32Array.set of 1 position into wasm memory': () => state.i32.set(positions, posP >>> 2),
  'step: an i64 (BigInt) argument to a wasm call': () => ex.pe_rope_cos_sin(0, 0, ropeP, 0, 0, -1n, 1.0),
};

const best = Object.fromEntries(Object.keys(cases).map((k) => [k, Infinity]));
const entries = Object.entries(cases);
const iters = 2000;
const t0 = performance.now();
for (let round = 0; performance.now() - t0 < Number(process.env.MICRO_MS ?? 15000); round++) {
  for (const [k, f] of entries) {
    const a = performance.now();
    for (let i = 0; i < iters; i++) f();
    const t = (performance.now() - a) / iters;
    if (t < best[k]) best[k] = t;
  }
}
const ns = (k) => best[k] * 1e6;
const rows = entries.map(([k]) => `| ${k} | ${ns(k).toFixed(0)} |`);
const api = ns(entries[0][0]);
const rawBoth = ns('raw: pe_rope_cos_sin(1 position) + pe_rope_apply');
console.log('| one call, q [1,1,32,128] | ns (min over batches) |');
console.log('|---|---|');
console.log(rows.join('\n'));
console.log();
console.log(`API overhead per call: ${(api - rawBoth).toFixed(0)} ns (q and k: ${(2 * (api - rawBoth)).toFixed(0)} ns); lean sketch: ${(ns('lean apply, same checks (sketch)') - rawBoth).toFixed(0)} ns per call.`);
if (sink === 0.5) console.log('');
