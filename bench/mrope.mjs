#!/usr/bin/env node
// mrope.mjs — M-RoPE apply against plain RoPE apply on the same tensor (issue 13's target: within 1.15x).
//   node bench/mrope.mjs [--rounds N] [--min-sample SECONDS] [--scalar]
// Both ropes have Qwen2-VL-7B's shape (head_dim 128, theta 1e6; M-RoPE sections [16, 24, 24]). Each call gets
// new positions (one value changes per call), so every call builds its cos/sin table and rotates: the cost a
// model pays per layer group. Measured interleaved with core.mjs's compare(); the ratio is per round.
import { init } from '../web/src/index.js';
import { compare, loop, ratio, fillRandom, formatTime, formatRatio } from './core.mjs';

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? Number(argv[i + 1]) : dflt;
};
const pe = await init({ simd: !argv.includes('--scalar') });
const plain = pe.rope({ headDim: 128, base: 1e6 });
const mrope = pe.rope({ headDim: 128, base: 1e6, mrope: { section: [16, 24, 24] } });

const workloads = [
  { id: 'decode', B: 1, S: 1, H: 28 },
  { id: 'prefill', B: 1, S: 1024, H: 28 },
];
console.log(`| workload (${pe.simd ? 'SIMD' : 'scalar'}) | plain apply | M-RoPE apply | M-RoPE / plain (median, quartiles) |`);
console.log('| --- | --- | --- | --- |');
for (const w of workloads) {
  const shape = [w.B, w.S, w.H, 128];
  const x = fillRandom(new Float32Array(w.B * w.S * w.H * 128));
  const p1 = Int32Array.from({ length: w.S }, (_, i) => i + 100);
  const p3 = new Int32Array(3 * w.S);
  for (let i = 0; i < w.S; i++) {
    p3[i] = i + 100; // an image-like layout: h and w wander, t steps
    p3[w.S + i] = 100 + (i % 32);
    p3[2 * w.S + i] = 100 + ((i >> 5) % 32);
  }
  let step = 0;
  const contenders = [
    { id: 'plain', sample: loop(() => { p1[0] = 100 + (++step & 1023); plain.apply(x, { shape, positions: p1 }); }) },
    { id: 'mrope', sample: loop(() => { p3[0] = 100 + (++step & 1023); mrope.apply(x, { shape, positions: p3 }); }) },
  ];
  const { results } = await compare(contenders, { rounds: opt('rounds', 9), minSample: opt('min-sample', 0.02) });
  const r = ratio(results, 'mrope', 'plain');
  console.log(`| ${w.id} [${shape.join(', ')}] | ${formatTime(results.plain.median)} | ${formatTime(results.mrope.median)} | ${formatRatio(r)} |`);
}
