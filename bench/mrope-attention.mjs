#!/usr/bin/env node
// mrope-attention.mjs — pe.attention with an M-RoPE rope against pe.attention with the plain RoPE of the same
// head (Qwen2.5-VL-7B's text attention: head_dim 128, 28 query heads, 4 kv heads, theta 1e6; sections
// [16, 24, 24]), on the same q, k, v, causal, positions all text (the three streams equal the plain ones, so
// both do the same work). M-RoPE rotates q and k in JS-driven calls before the core (web/src/attention-mrope.js),
// plain RoPE inside the core: the ratio is what that costs. Target: within 1.15x (issue 13, as for apply).
//
//   node bench/mrope-attention.mjs [--rounds N] [--min-sample SECONDS] [--scalar] [--quick]
//
// For npm run bench: export measure(pe, opts) -> [{ name, ratio, lo, hi, target, better, note }] (bench/run.mjs's
// interface, NOTICES 20:20).
import { compare, loop, ratio, fillRandom, formatTime, formatRatio } from '../web/widgets/lib/measure.js';
import { isMainModule } from './targets.mjs';

const D = 128;
const H = 28;
const KVH = 4;
const WORKLOADS = [
  { id: 'decode against a rotated cache (kRotated)', qLen: 1, kLen: 1024, kRotated: true },
  { id: 'decode, keys rotated in the call', qLen: 1, kLen: 1024, kRotated: false },
  { id: 'prefill', qLen: 256, kLen: 256, kRotated: false },
];

function three(p) {
  const o = new Int32Array(3 * p.length);
  for (let a = 0; a < 3; a++) o.set(p, a * p.length);
  return o;
}

/** One workload measured side by side: { w, results, r } (r: time(M-RoPE) / time(plain) per round). */
async function run(pe, w, rounds, minSample) {
  const plain = pe.rope({ headDim: D, base: 1e6 });
  const mrope = pe.rope({ headDim: D, base: 1e6, mrope: { section: [16, 24, 24] } });
  const q = fillRandom(new Float32Array(w.qLen * H * D), 1);
  const k = fillRandom(new Float32Array(w.kLen * KVH * D), 2);
  const v = fillRandom(new Float32Array(w.kLen * KVH * D), 3);
  const kp = Int32Array.from({ length: w.kLen }, (_, j) => j);
  const qp = Int32Array.from({ length: w.qLen }, (_, i) => w.kLen - w.qLen + i);
  const shape = { heads: H, kvHeads: KVH, qLen: w.qLen, kLen: w.kLen, headDim: D };
  const common = { shape, causal: true, kRotated: w.kRotated };
  const mPos = { q: three(qp), k: three(kp) };
  const contenders = [
    { id: 'plain', sample: loop(() => pe.attention(q, k, v, { ...common, rope: plain })) },
    { id: 'mrope', sample: loop(() => pe.attention(q, k, v, { ...common, rope: mrope, positions: mPos })) },
  ];
  const { results } = await compare(contenders, { rounds, minSample });
  plain.free();
  mrope.free();
  return { w, results, r: ratio(results, 'mrope', 'plain') };
}

export async function measure(pe, opts = {}) {
  const rounds = opts.quick ? 3 : (opts.rounds ?? 9);
  const minSample = opts.quick ? 0.005 : (opts.minSample ?? 0.05);
  const out = [];
  for (const w of opts.quick ? WORKLOADS.slice(0, 1) : WORKLOADS) {
    const { r } = await run(pe, w, rounds, minSample);
    if (r === null) continue;
    out.push({
      name: `M-RoPE vs plain-RoPE attention, ${w.id} [q ${w.qLen}, k ${w.kLen}, ${H}/${KVH} heads, d ${D}]`,
      ratio: r.median,
      lo: r.lo,
      hi: r.hi,
      target: 1.15,
      better: 'lower',
      note: 'same q, k, v; text positions (three equal streams); causal',
    });
  }
  return out;
}

// run as a script in Node (a page imports measure() through bench/runner.mjs and has no process)
if (isMainModule(import.meta.url)) {
  const argv = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && i + 1 < argv.length ? Number(argv[i + 1]) : dflt;
  };
  const { init } = await import('../web/src/index.js');
  const pe = await init({ simd: !argv.includes('--scalar') });
  console.log(`| workload (${pe.simd ? 'SIMD' : 'scalar'}) | plain-RoPE attention | M-RoPE attention | M-RoPE / plain (median, quartiles) |`);
  console.log('| --- | --- | --- | --- |');
  for (const w of argv.includes('--quick') ? WORKLOADS.slice(0, 1) : WORKLOADS) {
    const { results, r } = await run(pe, w, opt('rounds', 9), opt('min-sample', 0.05));
    console.log(`| ${w.id} [q ${w.qLen}, k ${w.kLen}] | ${formatTime(results.plain.median)} | ${formatTime(results.mrope.median)} | ${formatRatio(r)} |`);
  }
}
