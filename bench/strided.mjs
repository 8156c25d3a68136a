// strided.mjs — rope.apply on strided views against the same work on dense tensors (issue 11: "strided vs
// dense apply, within 1.1x"). Every contender is posenc SIMD through the public API with pe.tensor inputs
// (zero-copy), q and k rotated in one call from one table, positions fixed so the table is cached (the
// rotation is what is compared). Part of `npm run bench` (measure(), the interface in targets.mjs).
//   node bench/strided.mjs [--quick] [--rounds N]
// The same kernel rotates the same bytes in the same head order either way (q and k as two views, also inside
// one fused buffer); a per-token fused buffer interleaves the untouched v heads between the tokens' q | k
// blocks, so past the cache the memory system streams it less well (the prefetchers fetch some of v's lines).
import { compare, fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rowFrom, standalone } from './targets.mjs';

let pe;
let ROUNDS = 15;
let MIN_SAMPLE = 0.02;

/**
 * Dense and strided samplers side by side in interleaved rounds (compare(): calibrated batches, the order
 * rotating each round, so both see the same drift of a shared machine): the per-round ratio strided / dense.
 */
async function measurePair(dense, strided) {
  const { results } = await compare([
    { id: 'dense', sample: dense },
    { id: 'strided', sample: strided },
  ], { rounds: ROUNDS, minSample: MIN_SAMPLE });
  return rowFrom(results, 'strided', 'dense', {});
}

async function fused({ name, B, S, H, KV, D }) {
  const W = (H + 2 * KV) * D; // per-token q | k | v (Llama / Phi-3 fused projection output)
  const rope = pe.rope({ headDim: D });
  const positions = Int32Array.from({ length: S }, (_, s) => 4096 + s);
  const q = pe.tensor(fillRandom(new Float32Array(B * S * H * D), 1));
  const k = pe.tensor(fillRandom(new Float32Array(B * S * KV * D), 2));
  const qkv = pe.tensor(fillRandom(new Float32Array(B * S * W), 3));
  const shape = [B, S, H, D];
  const strides = { batch: S * W, seq: W, heads: D };
  const dense = loop(() => rope.apply(q, { shape, positions, k, kHeads: KV }));
  const strided = loop(() => rope.apply(qkv, { shape, positions, strides, k: qkv, kHeads: KV, kStrides: strides, kOffset: H * D }));
  const out = { name, ...(await measurePair(dense, strided)) };
  for (const t of [q, k, qkv]) t.free();
  rope.free();
  return out;
}

async function cache({ name, B, KV, C, S, D }) {
  // bhsd cache [B, KV, C, D], slots 0 .. S-1 used, against a compact [B, KV, S, D] tensor
  const rope = pe.rope({ headDim: D });
  const positions = Int32Array.from({ length: S }, (_, s) => s);
  const compact = pe.tensor(fillRandom(new Float32Array(B * KV * S * D), 4));
  const big = pe.tensor(fillRandom(new Float32Array(B * KV * C * D), 5));
  const shape = [B, KV, S, D];
  const strides = { batch: KV * C * D, seq: D, heads: C * D };
  const dense = loop(() => rope.apply(compact, { shape, layout: 'bhsd', positions }));
  const strided = loop(() => rope.apply(big, { shape, layout: 'bhsd', positions, strides }));
  const out = { name, ...(await measurePair(dense, strided)) };
  compact.free();
  big.free();
  rope.free();
  return out;
}

/** Rows: strided / dense time per workload (target: within 1.1x). */
export async function measure(pe0, { quick = false, rounds = 15, minSample = 0.02 } = {}) {
  pe = pe0;
  ROUNDS = rounds;
  MIN_SAMPLE = minSample;
  const rows = quick
    ? [await fused({ name: 'fused QKV decode [1, 1, (32 + 2*8)*128]', B: 1, S: 1, H: 32, KV: 8, D: 128 }),
      await cache({ name: 'bhsd cache 64 of 256 slots [1, 8, 256, 128]', B: 1, KV: 8, C: 256, S: 64, D: 128 })]
    : [
      await fused({ name: 'fused QKV decode [1, 1, (32 + 2*8)*128]', B: 1, S: 1, H: 32, KV: 8, D: 128 }),
      await fused({ name: 'fused QKV prefill [1, 512, (32 + 2*8)*128]', B: 1, S: 512, H: 32, KV: 8, D: 128 }),
      // past the last-level cache for both forms (48 MB of qkv; dense q + k 40 MB): the memory-bound regime
      await fused({ name: 'fused QKV prefill [1, 2048, (32 + 2*8)*128]', B: 1, S: 2048, H: 32, KV: 8, D: 128 }),
      await cache({ name: 'bhsd cache 512 of 2048 slots [1, 8, 2048, 128]', B: 1, KV: 8, C: 2048, S: 512, D: 128 }),
    ];
  return rows.map((r) => ({
    name: `strided vs dense apply, ${r.name}`,
    ratio: r.ratio,
    lo: r.lo,
    hi: r.hi,
    target: 1.1,
    better: 'lower',
    note: 'time(strided) / time(dense), q and k in one rope.apply, cached table',
  }));
}

await standalone(import.meta.url, measure);
