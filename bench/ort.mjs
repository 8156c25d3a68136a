// ort.mjs (Node only) — the onnxruntime-web contender, run as its own process by run.mjs:
//
//   node bench/ort.mjs --threads 1 --workloads '[{"size":"prefill","pairing":"half","layout":"bshd"}]' [--rounds N]
//
// onnxruntime-web's thread count is process-wide and fixed at its first session, so each thread count gets a
// process. In that process, for each RoPE workload, four contenders run side by side in interleaved rounds:
//   api          posenc SIMD through the public API with pe.tensor (the reference the ratios are taken to)
//   api-copy     the same call with plain Float32Arrays, copied into wasm memory and back by the API: the
//                like-for-like of session.run, which copies its feeds in and its outputs out
//   ort-contrib  com.microsoft RotaryEmbedding, q and k in one session.run (wasm backend)
//   ort-onnx     ONNX RotaryEmbedding (opset 23), likewise
// end to end: session.run with q, k (float32) and position_ids (int64) feeds, outputs copied back to JS, the
// cos/sin caches (4096 x 64, made by posenc) inside the model as initializers. Both outputs (q_rot, k_rot)
// are checked once against posenc's. Each session is warmed up (V8 tiers onnxruntime's wasm up in the
// background) before its batches are sized. Prints one JSON line: { threads, ortVersion, workloads: [{ id, results, check }] }.

import { createRequire } from 'node:module';
import { init } from '../web/src/index.js';
import { compare, fillRandom } from '../web/widgets/lib/measure.js';
import { loopAsync, setClock } from './clock.mjs';
import { ropeWorkload, ROPE_SHAPES, TABLE_POSITIONS } from './workloads.mjs';
import { rotaryModel } from './onnx.mjs';

const require = createRequire(import.meta.url);

function arg(name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

const threads = Number(arg('threads', '1'));
const workloads = JSON.parse(arg('workloads', '[]'));
const rounds = Number(arg('rounds', '9'));
const minSample = Number(arg('min-sample', '0.02'));
const warmupMs = Number(arg('warmup-ms', '1000'));
setClock(arg('clock', 'cpu'));

const ort = require('onnxruntime-web');
ort.env.wasm.numThreads = threads;
ort.env.logLevel = 'error';
const ortVersion = ort.env.versions?.web ?? 'unknown';

const pe = await init({ simd: true });
const out = { threads, ortVersion, workloads: [] };

for (const spec of workloads) {
  const { shape, pos0 } = ROPE_SHAPES[spec.size];
  const [B, S, H, D] = shape;
  const n = B * S * H * D;
  const w = ropeWorkload({ pe }, { ...spec, include: ['api', 'api-copy'] });
  // the caches: posenc's own table for positions 0 .. 4095 (so outputs can be compared exactly)
  const maxPos = Math.max(TABLE_POSITIONS, pos0 + S);
  const rope = pe.rope({ headDim: D });
  const { cos, sin } = rope.cosSin(Int32Array.from({ length: maxPos }, (_, i) => i));
  rope.free();
  const dims = spec.layout === 'bshd' ? [B, S, H * D] : [B, H, S, D];
  const q0 = fillRandom(new Float32Array(n), 11);
  const k0 = fillRandom(new Float32Array(n), 12);
  const pos = new BigInt64Array(B * S);
  for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) pos[b * S + s] = BigInt(pos0 + s);
  const feeds = {
    q: new ort.Tensor('float32', q0, dims),
    k: new ort.Tensor('float32', k0, dims),
    position_ids: new ort.Tensor('int64', pos, [B, S]),
  };
  const contenders = [...w.contenders];
  const check = {};
  // reference: posenc's apply of q0 and k0
  const refQ = q0.slice();
  const refK = k0.slice();
  const refRope = pe.rope({ headDim: D, pairing: spec.pairing });
  refRope.apply(refQ, { shape: spec.layout === 'bhsd' ? [B, H, S, D] : shape, layout: spec.layout, positions: Int32Array.from({ length: S }, (_, s) => pos0 + s), k: refK });
  refRope.free();
  for (const op of ['contrib', 'onnx']) {
    const id = `ort-${op}`;
    try {
      const model = rotaryModel({ op, shape, layout: spec.layout, pairing: spec.pairing, cos, sin, maxPos });
      const session = await ort.InferenceSession.create(model, {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
        intraOpNumThreads: threads,
      });
      const first = await session.run(feeds);
      // Warm-up: V8 compiles onnxruntime's large wasm module with its baseline compiler first and tiers hot
      // functions up in the background, which on a busy 2-core machine takes seconds; measure optimised code.
      const w0 = performance.now();
      for (let i = 0; i < 3 || performance.now() - w0 < warmupMs; i++) await session.run(feeds);
      let m = 0;
      for (const [got, want] of [[first.q_rot.data, refQ], [first.k_rot.data, refK]]) {
        if (got.length !== n) throw new Error(`output of ${got.length} values, not ${n}`);
        for (let i = 0; i < n; i++) {
          const d = Math.abs(got[i] - want[i]);
          if (!(d <= m)) m = d; // NaN sticks
        }
      }
      check[id] = m;
      contenders.push({ id, label: `onnxruntime-web ${ortVersion}, ${op === 'contrib' ? 'com.microsoft' : 'ONNX opset 23'} RotaryEmbedding, ${threads} thread(s)`, sample: loopAsync(() => session.run(feeds)) });
    } catch (e) {
      check[id] = `error: ${String(e.message ?? e).slice(0, 200)}`;
    }
  }
  // large: one onnxruntime run takes ~0.3 s here, so fewer rounds
  const res = await compare(contenders, { rounds: spec.size === 'large' ? Math.min(rounds, 5) : rounds, minSample });
  w.dispose();
  const slim = {};
  for (const [id, r] of Object.entries(res.results)) slim[id] = r.error ? { error: r.error } : { iters: r.iters, times: r.times, median: r.median, lo: r.lo, hi: r.hi };
  out.workloads.push({ id: w.id, spec, results: slim, check });
}

process.stdout.write(`${JSON.stringify(out)}\n`);
// onnxruntime's worker threads keep the process alive
process.exit(0);
