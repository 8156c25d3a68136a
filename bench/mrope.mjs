#!/usr/bin/env node
// mrope.mjs — M-RoPE apply against plain RoPE apply on the same tensor (issue 13's target: within 1.15x).
// Part of `npm run bench` (measure(), the interface in targets.mjs).
//   node bench/mrope.mjs [--quick] [--rounds N] [--min-sample SECONDS]
// Both ropes have Qwen2-VL-7B's shape (head_dim 128, theta 1e6; M-RoPE sections [16, 24, 24]). Each call gets
// new positions (one value changes per call), so every call builds its cos/sin table and rotates: the cost a
// model pays per layer group. Measured interleaved with compare(); the ratio is per round.
import { compare, fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rowFrom, standalone } from './targets.mjs';

/** Rows: time(M-RoPE apply) / time(plain apply) at decode and prefill. */
export async function measure(pe, { quick = false, rounds = 9, minSample = 0.02 } = {}) {
  const plain = pe.rope({ headDim: 128, base: 1e6 });
  const mrope = pe.rope({ headDim: 128, base: 1e6, mrope: { section: [16, 24, 24] } });
  const workloads = [
    { id: 'decode', B: 1, S: 1, H: 28 },
    { id: 'prefill', B: 1, S: quick ? 128 : 1024, H: 28 },
  ];
  const rows = [];
  for (const w of workloads) {
    const shape = [w.B, w.S, w.H, 128];
    const x = pe.tensor(fillRandom(new Float32Array(w.B * w.S * w.H * 128)));
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
    const { results } = await compare(contenders, { rounds, minSample });
    x.free();
    rows.push(rowFrom(results, 'mrope', 'plain', {
      name: `M-RoPE vs plain apply, ${w.id} bshd [${shape.join(',')}]`,
      target: 1.15,
      better: 'lower',
      note: 'time(M-RoPE) / time(plain), sections [16,24,24], a new position every call, pe.tensor',
    }));
  }
  plain.free();
  mrope.free();
  return rows;
}

await standalone(import.meta.url, measure);
