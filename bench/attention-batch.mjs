#!/usr/bin/env node
// attention-batch.mjs — one pe.attention call for a left-padded batch against one call per sequence, at a
// decode step (issue 11's target: batch 8, the one call >= 3x faster). Part of `npm run bench` (measure(),
// the interface in targets.mjs). First version by the bench helper; the attn helper owns it.
//   node bench/attention-batch.mjs [--quick] [--rounds N]
// Shape: the Llama-3.1-style decoder of shared/golden/e2e (8 query / 2 key-value heads, head_dim 16), RoPE
// with the cache's keys already rotated (kRotated), causal; sequence i holds kLen_i = 25 + i real keys (the
// new token's included), left-padded to 32 in the batched call (mask 0 on the padding, per-sequence
// positions), unpadded in the per-sequence calls. Everything in pe.tensor, outputs into options.out.
import { compare, fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rowFrom, standalone } from './targets.mjs';

export async function measure(pe, { rounds = 9, minSample = 0.02 } = {}) {
  const batch = 8;
  const H = 8;
  const KV = 2;
  const D = 16;
  const K = 32;
  const lens = Array.from({ length: batch }, (_, i) => 25 + i);
  const rope = pe.rope({ headDim: D, base: 500000 });
  const free = [];
  const T = (x) => {
    const t = pe.tensor(x);
    free.push(t);
    return t;
  };
  // batched, bshd: q [batch, 1, H, D], k and v [batch, K, KV, D]; real keys at the end of each row
  const q = T(fillRandom(new Float32Array(batch * H * D), 41));
  const k = T(fillRandom(new Float32Array(batch * K * KV * D), 42));
  const v = T(fillRandom(new Float32Array(batch * K * KV * D), 43));
  const out = T(batch * H * D);
  const mask = new Uint8Array(batch * K);
  const kPos = new Int32Array(batch * K);
  const qPos = new Int32Array(batch);
  for (let b = 0; b < batch; b++) {
    const pad = K - lens[b];
    for (let j = pad; j < K; j++) {
      mask[b * K + j] = 1;
      kPos[b * K + j] = j - pad;
    }
    qPos[b] = lens[b] - 1;
  }
  const shape = { batch, heads: H, kvHeads: KV, qLen: 1, kLen: K, headDim: D };
  const batched = () => pe.attention(q, k, v, { shape, causal: true, rope, kRotated: true, positions: { q: qPos, k: kPos }, mask, out });
  // per sequence: the same data without the padding, each in its own tensors
  const seqs = lens.map((L, b) => {
    const pad = K - L;
    const row = K * KV * D;
    return {
      shape: { batch: 1, heads: H, kvHeads: KV, qLen: 1, kLen: L, headDim: D },
      q: T(q.array.slice(b * H * D, (b + 1) * H * D)),
      k: T(k.array.slice(b * row + pad * KV * D, (b + 1) * row)),
      v: T(v.array.slice(b * row + pad * KV * D, (b + 1) * row)),
      out: T(H * D),
    };
  });
  const perSequence = () => {
    for (const s of seqs) pe.attention(s.q, s.k, s.v, { shape: s.shape, causal: true, rope, kRotated: true, out: s.out });
  };
  batched();
  perSequence();
  let diff = 0;
  for (let b = 0; b < batch; b++) {
    const o = seqs[b].out.array;
    for (let i = 0; i < H * D; i++) diff = Math.max(diff, Math.abs(out.array[b * H * D + i] - o[i]));
  }
  const { results } = await compare([
    { id: 'batched', sample: loop(batched) },
    { id: 'per-sequence', sample: loop(perSequence) },
  ], { rounds, minSample });
  for (const t of free) t.free();
  rope.free();
  return [rowFrom(results, 'per-sequence', 'batched', {
    name: `padded-batch attention, one call vs ${batch} per-sequence calls, decode batch ${batch} (8/2 heads x ${D}, kLen 25-32)`,
    target: 3,
    better: 'higher',
    note: `time(${batch} calls) / time(1 call); outputs agree to ${diff.toExponential(1)}`,
  })];
}

await standalone(import.meta.url, measure);
