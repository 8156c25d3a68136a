#!/usr/bin/env node
// api-cost.mjs — what the JS API adds to a rope.apply call at decode (issues 11 and 14), for the API's owners;
// not part of `npm run bench`. Per call, minimum over many short batches, contenders interleaved (as
// bench/apply.mjs), so a shared machine's load drops out of the ratios:
//   raw qk        pe_rope_apply_qk on the export, q and k (32 heads each), table made once
//   raw qk8       the same with k of 8 heads (GQA: what the strided workloads rotate)
//   raw fused     raw qk8's q and k as two strided views of one fused buffer
//   rotation      the hand-written SIMD128 rotation (bench/wasm/rotation.c, "limit: rotation"), 32 + 32 heads
//   api dense     rope.apply(q, { shape, positions, k }), pe.tensors, cached positions (the "api" contender)
//   api dense8    rope.apply(q, { shape, positions, k, kHeads: 8 })          (bench/strided.mjs's dense)
//   api fused     the same q and k as views of one fused [1, 1, (32 + 2*8)*128] pe.tensor (strided.mjs's)
//   api new       api dense with a new position every call (the table not cached: issue 14's miss path)
//   mrope cached  api dense on an M-RoPE rope (sections [16, 24, 24]), three streams of one position, cached
//   mrope new     the same with a new t position every call (bench/mrope.mjs's decode contender, with k)
//   mrope text    a new position every call, equal on t, h and w (generated text: the plain rope's fused path)
//   raw row       pe_rope_cos_sin of one new position (64 frequencies): the least a new position can add to a call
//   raw row/16    16 new positions in one pe_rope_cos_sin call, per position: the row alone, without the call
//   raw qk il, rotation il, api il   the same calls through an interleaved rope (rot_il_bshd for the hand kernel)
//   raw qk bhsd, raw qk il bhsd, api bhsd, api il bhsd   layout 'bhsd' (at seq 1 the same bytes as bshd)
// --js-only replaces the rotation and table kernels by a JS function returning 0, so only the wrapper's own time is left
// (the JS -> wasm call and the C prologue then drop out too). --vs DIR times another copy of web/src (e.g. an
// export of main: git archive main web/src | tar -x -C /tmp/main, plus web/src/wasm-inline.js) beside this
// one. --pollute first calls rope.apply with options of ten shapes, as a program (or `npm run bench`, whose
// workloads all share one rope.apply) does: property reads that see many shapes become megamorphic.
//
// Placement (issue 14, 2026-12-02, 2-core Zen 5 VM at load 3-6, V8 11.3): 4 KiB aliasing of q stores against k
// or cos/sin loads does not show. With k at q + 16384 + d, d in {0, 64, 128, 256, 512, 1024, 2048}, and cos/sin
// at 7 offsets mod 4096, raw qk, the fused kernel and the hand kernel each stay within noise (about ±4%; d = 0
// is not slower). Cache-line alignment does matter: raw qk and rotation here (and in bench/run.mjs) sat on
// malloc's 8-aligned blocks (rotation's q at 8 mod 64, k at 16 mod 64), while pe.tensor is 64-aligned.
// Aligning them to 64 bytes made rotation 1.14-1.17x and raw qk 1.10-1.12x faster (3 runs, side by side), so
// raw.mjs now allocates through Heap.malloc as the API does: rotation / api dense, 0.78-0.84 on 8-aligned
// contenders, is 0.70-0.72 aligned; rotation / raw qk with both aligned 0.81-0.84.
//
//   node bench/api-cost.mjs [--vs DIR] [--js-only] [--pollute] [--ms 4000]    (after bash build.sh wasm and
//                                                                                bash bench/build.sh)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { simdWasmBase64 } from '../web/src/wasm-inline.js';
import { instantiateRaw, decodeBase64, rawRope, rawFloat32, rawInt32, rawApplyConfig } from './raw.mjs';
import { fillRandom } from '../web/widgets/lib/measure.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : dflt);
const MS = Number(opt('ms', 4000));
const vs = opt('vs', null);
const jsOnly = argv.includes('--js-only');
const pollute = argv.includes('--pollute');
const [B, S, H, KV, D] = [1, 1, 32, 8, 128];

const bytes = decodeBase64(simdWasmBase64);
const module = await WebAssembly.compile(bytes);
/** The API of the web/src at `dir` over a fresh instance (kernels stubbed with --js-only). */
async function api(dir) {
  const L = await import(pathToFileURL(path.join(dir, 'loader.js')).href);
  const ex = (await L.instantiateModule(module)).exports;
  return L.createApi(jsOnly ? { ...ex, pe_rope_apply_qk: () => 0, pe_rope_apply: () => 0, pe_rope_apply_positions: () => 0, pe_rope_cos_sin: () => 0, pe_mrope_cos_sin: () => 0 } : ex, true);
}
const builds = { this: await api(path.join(BENCH, '../web/src')) };
if (vs) builds.vs = await api(path.resolve(vs));

const c = {};
const positions = Int32Array.from({ length: S }, (_, s) => 4095 + s);
if (!jsOnly) {
  const raw = await instantiateRaw(bytes);
  const ex = raw.exports;
  const rope = rawRope(raw, D);
  const q = rawFloat32(raw, fillRandom(new Float32Array(B * S * H * D), 1));
  const k = rawFloat32(raw, fillRandom(new Float32Array(B * S * H * D), 2));
  const k8 = rawFloat32(raw, fillRandom(new Float32Array(B * S * KV * D), 2));
  const cos = raw.malloc(S * (D / 2) * 4);
  const sin = raw.malloc(S * (D / 2) * 4);
  ex.pe_rope_cos_sin(cos, sin, rope, rawInt32(raw, positions), S, -1n, 1.0);
  const ac = rawApplyConfig(raw, { batch: B, seq: S, heads: H });
  const ac8 = rawApplyConfig(raw, { batch: B, seq: S, heads: KV });
  c['raw qk'] = () => ex.pe_rope_apply_qk(rope, q, k, cos, sin, ac, ac);
  c['raw qk8'] = () => ex.pe_rope_apply_qk(rope, q, k8, cos, sin, ac, ac8);
  // the same q and k8 as two views of one fused buffer (the strides the API resolves at decode: batch and seq
  // axes of one element are 0)
  const W = (H + 2 * KV) * D;
  const qkv = rawFloat32(raw, fillRandom(new Float32Array(B * S * W), 3));
  const sv = { batch: B > 1 ? S * W : 0, seq: S > 1 ? W : 0, heads: D };
  const acq = rawApplyConfig(raw, { batch: B, seq: S, heads: H, strides: sv });
  const ack = rawApplyConfig(raw, { batch: B, seq: S, heads: KV, strides: sv });
  c['raw fused'] = () => ex.pe_rope_apply_qk(rope, qkv, qkv + H * D * 4, cos, sin, acq, ack);
  // interleaved and bhsd: the same q, k and table (the frequencies do not depend on the pairing)
  const ropeIl = rawRope(raw, D, 'interleaved');
  const acB = rawApplyConfig(raw, { batch: B, seq: S, heads: H, layout: 1 });
  c['raw qk il'] = () => ex.pe_rope_apply_qk(ropeIl, q, k, cos, sin, ac, ac);
  c['raw qk bhsd'] = () => ex.pe_rope_apply_qk(rope, q, k, cos, sin, acB, acB);
  c['raw qk il bhsd'] = () => ex.pe_rope_apply_qk(ropeIl, q, k, cos, sin, acB, acB);
  // a new position's row alone: one per call, and 16 per call (per position)
  const rowCos = raw.malloc(16 * (D / 2) * 4);
  const rowSin = raw.malloc(16 * (D / 2) * 4);
  const rowPos = raw.malloc(16 * 4);
  let rowStep = 0;
  let rowView = new Int32Array(0);
  const rowPositions = () => (rowView.length ? rowView : (rowView = new Int32Array(raw.memory.buffer, rowPos, 16))); // no further malloc on raw: the view stays valid
  c['raw row'] = () => {
    rowPositions()[0] = 4095 + (++rowStep & 1023);
    return ex.pe_rope_cos_sin(rowCos, rowSin, rope, rowPos, 1, -1n, 1.0);
  };
  c['raw row/16'] = () => {
    const v = rowPositions();
    const p0 = 4095 + ((rowStep += 16) & 1023);
    for (let i = 0; i < 16; i++) v[i] = p0 + i;
    return ex.pe_rope_cos_sin(rowCos, rowSin, rope, rowPos, 16, -1n, 1.0);
  };
  const limitFile = path.join(BENCH, 'build/limit.wasm');
  if (fs.existsSync(limitFile)) {
    const L = await instantiateRaw(fs.readFileSync(limitFile));
    const lq = rawFloat32(L, fillRandom(new Float32Array(B * S * H * D), 1));
    const lk = rawFloat32(L, fillRandom(new Float32Array(B * S * H * D), 2));
    const t = builds.this.rope({ headDim: D }).cosSin(positions);
    const lc = rawFloat32(L, t.cos);
    const ls = rawFloat32(L, t.sin);
    c.rotation = () => L.exports.rot_half_bshd(lq, lk, lc, ls, B, S, H);
    c['rotation il'] = () => L.exports.rot_il_bshd(lq, lk, lc, ls, B, S, H);
  }
}
for (const [name, pe] of Object.entries(builds)) {
  const rope = pe.rope({ headDim: D });
  const q = pe.tensor(fillRandom(new Float32Array(B * S * H * D), 1));
  const k = pe.tensor(fillRandom(new Float32Array(B * S * H * D), 2));
  const k8 = pe.tensor(fillRandom(new Float32Array(B * S * KV * D), 2));
  const W = (H + 2 * KV) * D;
  const qkv = pe.tensor(fillRandom(new Float32Array(B * S * W), 3));
  const shape = [B, S, H, D];
  const strides = { batch: S * W, seq: W, heads: D };
  c[`${name}: api dense`] = () => rope.apply(q, { shape, positions, k });
  c[`${name}: api dense8`] = () => rope.apply(q, { shape, positions, k: k8, kHeads: KV });
  c[`${name}: api fused`] = () => rope.apply(qkv, { shape, positions, strides, k: qkv, kHeads: KV, kStrides: strides, kOffset: H * D });
  const pNew = Int32Array.from(positions);
  let step = 0;
  const ropeIl = pe.rope({ headDim: D, pairing: 'interleaved' });
  const shapeB = [B, H, S, D];
  c[`${name}: api il`] = () => ropeIl.apply(q, { shape, positions, k });
  c[`${name}: api bhsd`] = () => rope.apply(q, { shape: shapeB, layout: 'bhsd', positions, k });
  c[`${name}: api il bhsd`] = () => ropeIl.apply(q, { shape: shapeB, layout: 'bhsd', positions, k });
  c[`${name}: api new`] = () => {
    pNew[0] = 4095 + (++step & 1023);
    return rope.apply(q, { shape, positions: pNew, k });
  };
  const mrope = pe.rope({ headDim: D, mrope: { section: [16, 24, 24] } });
  const p3 = Int32Array.from([4095, 4095, 4095]);
  const p3New = Int32Array.from(p3);
  c[`${name}: mrope cached`] = () => mrope.apply(q, { shape, positions: p3, k });
  c[`${name}: mrope new`] = () => {
    p3New[0] = 4095 + (++step & 1023);
    return mrope.apply(q, { shape, positions: p3New, k });
  };
  const p3Text = Int32Array.from(p3);
  c[`${name}: mrope text`] = () => {
    p3Text[0] = p3Text[1] = p3Text[2] = 4095 + (++step & 1023);
    return mrope.apply(q, { shape, positions: p3Text, k });
  };
  if (pollute) {
    const x = pe.tensor(B * S * H * D);
    const other = [
      { shape: [B, H, S, D], layout: 'bhsd', positions },
      { shape, positions, inverse: false },
      { shape, positions, seqLen: 5000 },
      { shape: { batch: B, seq: S, heads: H }, positions },
      { positions, shape, dtype: 'float32' },
      { shape, positions, layout: 'bshd' },
      { layout: 'bshd', shape, positions },
      { shape, positions, strides: { seq: H * D }, offset: 0 },
      { shape },
      { shape, k: k8, kHeads: KV, positions },
    ];
    for (let i = 0; i < 2000; i++) for (const o of other) rope.apply(x, { ...o, k: o.k === undefined ? undefined : k8 });
  }
}

// warm every contender (so a batch's calibration is not its first, compiling, calls), calibrate, interleave
const entries = Object.entries(c);
for (const [, f] of entries) for (let i = 0; i < 3000; i++) f();
// batches of >= 2 ms (the larger of two calibrations: a pause during one cannot leave a contender timed one
// call at a time)
const iters = {};
for (const [id, f] of entries) {
  iters[id] = 0;
  for (let pass = 0; pass < 2; pass++) {
    let it = 16;
    for (;;) {
      const t0 = performance.now();
      for (let i = 0; i < it; i++) f();
      if (performance.now() - t0 > 2) break;
      it *= 2;
    }
    iters[id] = Math.max(iters[id], it);
  }
}
const best = Object.fromEntries(entries.map(([id]) => [id, Infinity]));
const t0 = performance.now();
while (performance.now() - t0 < MS) {
  for (const [id, f] of entries) {
    const a = performance.now();
    for (let i = 0; i < iters[id]; i++) f();
    best[id] = Math.min(best[id], (performance.now() - a) / iters[id]);
  }
}
const us = (id) => best[id] * 1e3;
console.log(`decode [${B}, ${S}, ${H}, ${D}], k ${H} or ${KV} heads${jsOnly ? ', kernels stubbed (JS only)' : ''}${pollute ? ', options of ten shapes seen first' : ''}`);
console.log('| contender | µs per call |');
console.log('|---|---|');
for (const [id] of entries) console.log(`| ${id} | ${us(id).toFixed(3)} |`);
for (const name of Object.keys(builds)) {
  const r = (a, b) => (best[`${name}: ${a}`] / (b in best ? best[b] : best[`${name}: ${b}`])).toFixed(2);
  const parts = [`fused / dense8 ${r('api fused', 'api dense8')}`, `new / dense ${r('api new', 'api dense')}`, `mrope new / api new ${r('mrope new', 'api new')}`, `mrope text / api new ${r('mrope text', 'api new')}`];
  if (!jsOnly) {
    parts.push(`api new − api dense ${(us(`${name}: api new`) - us(`${name}: api dense`)).toFixed(3)} µs`, `raw fused / raw qk8 ${(best['raw fused'] / best['raw qk8']).toFixed(2)}`, `api dense − raw qk ${(us(`${name}: api dense`) - us('raw qk')).toFixed(3)} µs`, `api fused − raw fused ${(us(`${name}: api fused`) - us('raw fused')).toFixed(3)} µs`);
    if (best.rotation) parts.push(`rotation / api dense ${(best.rotation / best[`${name}: api dense`]).toFixed(2)}`, `rotation / raw qk ${(best.rotation / best['raw qk']).toFixed(2)}`);
  }
  console.log(`${name}: ${parts.join('; ')}`);
}
// Issue 14's two decode ratios and what bounds them: interleaved / half-split (raw kernel, hand kernel, API; bshd
// and bhsd), and the new-position budget (1.1x of a cached call) beside the cost of the row alone.
if (!jsOnly) {
  const ratio = (a, b) => (best[a] / best[b]).toFixed(2);
  const hand = best['rotation il'] ? `, hand kernel ${ratio('rotation il', 'rotation')}` : '';
  console.log(`il / half: raw qk ${ratio('raw qk il', 'raw qk')} (bhsd ${ratio('raw qk il bhsd', 'raw qk bhsd')})${hand}; bhsd / bshd at seq 1: raw ${ratio('raw qk bhsd', 'raw qk')}`);
  for (const name of Object.keys(builds)) {
    const dense = us(`${name}: api dense`);
    console.log(
      `${name}: il / half api ${ratio(`${name}: api il`, `${name}: api dense`)} (bhsd ${ratio(`${name}: api il bhsd`, `${name}: api bhsd`)}); ` +
        `new position: api new − api dense ${(us(`${name}: api new`) - dense).toFixed(3)} µs, 1.1x allows ${(0.1 * dense).toFixed(3)} µs; ` +
        `one new row: pe_rope_cos_sin call ${us('raw row').toFixed(3)} µs, the row alone ${(us('raw row/16') / 16).toFixed(3)} µs`,
    );
  }
}
