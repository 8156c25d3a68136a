#!/usr/bin/env node
// apply.mjs — the RoPE apply kernels side by side, raw exports (no JS API): q and k rotated by two
// pe_rope_apply calls, by one pe_rope_apply_qk, by pe_rope_cos_sin + pe_rope_apply_qk (a table per call: new
// positions) and by the fused pe_rope_apply_positions, against the in-place limit (bench/wasm/limit.c) and,
// with --vs, the same two-call apply of another build (e.g. main's, to see what a kernel change did). For the
// kernels' owners, not part of `npm run bench`:
//
//   node bench/apply.mjs [--vs OTHER.simd.wasm] [--ms 6000] [--large] [--only decode|prefill|large]    (after bash build.sh wasm and
//                                                                          bash bench/build.sh)
//
// Each contender is timed as the minimum over many short batches, contenders interleaved, so load on a shared
// machine (which only ever adds time) drops out; ratios are of those minima.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { simdWasmBase64 } from '../web/src/wasm-inline.js';
import { instantiateRaw, decodeBase64, rawRope, rawFloat32, rawInt32, rawApplyConfig } from './raw.mjs';
import { fillRandom } from '../web/widgets/lib/measure.js';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const opt = (name, dflt) => (argv.includes(`--${name}`) ? argv[argv.indexOf(`--${name}`) + 1] : dflt);
const MS = Number(opt('ms', 6000));
const vsPath = opt('vs', null);

const mine = await instantiateRaw(decodeBase64(simdWasmBase64));
const other = vsPath ? await instantiateRaw(fs.readFileSync(vsPath)) : null;
const limit = await instantiateRaw(fs.readFileSync(path.join(BENCH, 'build/limit.wasm')));

const SHAPES = { decode: [1, 1, 32, 128], prefill: [1, 512, 32, 128] };
if (argv.includes('--large')) SHAPES.large = [4, 2048, 32, 128];
const ONLY = opt('only', null); // a shape name: decode, prefill, large

/** q and k, a table for their positions and the configs, in one module's memory. */
function setup(raw, [B, S, H, D], pairing, layout) {
  const n = B * S * H * D;
  const rope = rawRope(raw, D, pairing);
  const q = rawFloat32(raw, fillRandom(new Float32Array(n), 11));
  const k = rawFloat32(raw, fillRandom(new Float32Array(n), 12));
  const pos = rawInt32(raw, Int32Array.from({ length: S }, (_, s) => 4095 + s));
  const cos = raw.malloc(S * (D / 2) * 4);
  const sin = raw.malloc(S * (D / 2) * 4);
  const ac = rawApplyConfig(raw, { batch: B, seq: S, heads: H, layout: layout === 'bhsd' ? 1 : 0 });
  raw.exports.pe_rope_cos_sin(cos, sin, rope, pos, S, -1n, 1.0);
  return { raw, ex: raw.exports, rope, q, k, pos, cos, sin, ac, n, S };
}

function contenders(shape, pairing, layout) {
  const m = setup(mine, shape, pairing, layout);
  const { ex } = m;
  const c = {
    limit: (() => {
      const q = rawFloat32(limit, fillRandom(new Float32Array(m.n), 11));
      const k = rawFloat32(limit, fillRandom(new Float32Array(m.n), 12));
      let s = 1.0000001;
      return () => {
        limit.exports.limit_inplace(q, m.n, s);
        limit.exports.limit_inplace(k, m.n, s);
        s = 2 - s; // keeps the values bounded
      };
    })(),
    apply2: () => {
      ex.pe_rope_apply(m.rope, m.q, m.cos, m.sin, m.ac);
      ex.pe_rope_apply(m.rope, m.k, m.cos, m.sin, m.ac);
    },
    qk: () => ex.pe_rope_apply_qk(m.rope, m.q, m.k, m.cos, m.sin, m.ac, m.ac),
    'table+qk': () => {
      ex.pe_rope_cos_sin(m.cos, m.sin, m.rope, m.pos, m.S, -1n, 1.0);
      ex.pe_rope_apply_qk(m.rope, m.q, m.k, m.cos, m.sin, m.ac, m.ac);
    },
    fused: () => ex.pe_rope_apply_positions(m.rope, m.q, m.k, 0, 0, m.pos, -1n, 1.0, m.ac, m.ac),
  };
  if (other) {
    const o = setup(other, shape, pairing, layout);
    c.vs = () => {
      o.ex.pe_rope_apply(o.rope, o.q, o.cos, o.sin, o.ac);
      o.ex.pe_rope_apply(o.rope, o.k, o.cos, o.sin, o.ac);
    };
  }
  return c;
}

function measure(cases, ms) {
  const entries = Object.entries(cases);
  const best = Object.fromEntries(entries.map(([k]) => [k, Infinity]));
  const iters = {};
  for (const [k, f] of entries) {
    let it = 1;
    for (;;) {
      const a = performance.now();
      for (let i = 0; i < it; i++) f();
      if (performance.now() - a > 2 || it > 1 << 20) break;
      it *= 2;
    }
    iters[k] = it;
  }
  const t0 = performance.now();
  while (performance.now() - t0 < ms) {
    for (const [k, f] of entries) {
      const a = performance.now();
      for (let i = 0; i < iters[k]; i++) f();
      const t = (performance.now() - a) / iters[k];
      if (t < best[k]) best[k] = t;
    }
  }
  return best;
}

const fmt = (ms) => (ms < 1 ? `${(ms * 1e3).toFixed(2)} µs` : `${ms.toFixed(3)} ms`);
console.log(`| workload | qk | two applies | table + qk | fused | limit / qk | qk / two | fused / (table + qk) |${other ? ' two (--vs) / qk |' : ''}`);
console.log(`|---|---|---|---|---|---|---|---|${other ? '---|' : ''}`);
const half = {};
for (const [size, shape] of Object.entries(SHAPES)) {
  if (ONLY && size !== ONLY) continue;
  for (const layout of ['bshd', 'bhsd']) {
    for (const pairing of ['half', 'interleaved']) {
      const b = measure(contenders(shape, pairing, layout), MS / 2);
      if (pairing === 'half') half[`${size}/${layout}`] = b.qk;
      const row = [
        `${size} ${pairing} ${layout}`,
        fmt(b.qk),
        fmt(b.apply2),
        fmt(b['table+qk']),
        fmt(b.fused),
        (b.limit / b.qk).toFixed(2),
        (b.qk / b.apply2).toFixed(2),
        (b.fused / b['table+qk']).toFixed(2),
      ];
      if (other) row.push((b.vs / b.qk).toFixed(2));
      console.log(`| ${row.join(' | ')} |`);
      if (pairing === 'interleaved') console.log(`|   interleaved / half (qk): ${(b.qk / half[`${size}/${layout}`]).toFixed(2)} |`);
    }
  }
}
