#!/usr/bin/env node
// attention-batch.mjs — one pe.attention call for a left-padded batch against one call per sequence, at a
// decode step (issue 11: batch 8, target: the one call >= 3x faster). Part of `npm run bench` through measure()
// (the interface in targets.mjs; samples on bench/clock.mjs's clock).
//   node bench/attention-batch.mjs [--quick] [--rounds N] [--min-sample S]
//
// Shape: the Llama-3.1-style decoder of tests/golden/e2e (8 query / 2 key-value heads, head_dim 16), RoPE with
// the cache's keys already rotated (kRotated), causal. Sequence b holds kLen − 7 + b real keys (the new token's
// included), left-padded to kLen in the batched call (mask 0 on the padding, per-sequence positions) and
// unpadded in its own call. Everything lives in pe.tensor (no copies), outputs go to options.out, so what is
// compared is the per-call cost of the wrapper plus the kernel's work, the same work in both contenders.
//
// What bounds the ratio: 8 · (w + k1) / (w_b + 8 · k1), with w (w_b) the fixed cost of a per-sequence (the
// batched) call and k1 one sequence's kernel time. It is large only while w dominates k1: at kLen 32 here
// k1 is already about the size of w, and at kLen 256 k1 is several times w, so the ratio tends to 1 as the
// cache grows (the padded call does the same kernel work as the eight calls). A third contender, the batch
// doubled (16 sequences, one call), measures k1 = (t16 − t8) / 8 in the same run (from each contender's fastest
// round), and the note gives w, w_b, k1
// and the k1 that 3x would need, (8w − 3w_b) / 16 (from 8(w + k1) = 3(w_b + 8 k1)). The kernel's time per sequence
// is bounded below by its arithmetic: at kLen 32 one sequence is 16 kflop (2 kv heads x 4 query rows x 32 keys x
// 4 x 16) plus 256 exponentials, 0.47 us at the 35 GFLOP/s register-only peak before any exponential.
import { compare, fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rowFrom, standalone } from './targets.mjs';

function workload(pe, K, batch = 8) {
  const H = 8;
  const KV = 2;
  const D = 16;
  const lens = Array.from({ length: batch }, (_, b) => K - 7 + (b % 8));
  const rope = pe.rope({ headDim: D, base: 500000 });
  const tensors = [];
  const T = (x) => {
    const t = pe.tensor(x);
    tensors.push(t);
    return t;
  };
  // batched, bshd: q [batch, 1, H, D], k and v [batch, K, KV, D]; each row's real keys at its end
  const q = T(fillRandom(new Float32Array(batch * H * D), 41));
  const k = T(fillRandom(new Float32Array(batch * K * KV * D), 42));
  const v = T(fillRandom(new Float32Array(batch * K * KV * D), 43));
  const out = T(batch * H * D);
  const mask = new Uint8Array(batch * K);
  const kPos = new Int32Array(batch * K);
  const qPos = new Int32Array(batch);
  for (let b = 0; b < batch; b++) {
    const pad = K - lens[b];
    for (let j = 0; j < K; j++) {
      mask[b * K + j] = j >= pad ? 1 : 0;
      kPos[b * K + j] = j >= pad ? j - pad : 1; // HF: padding at position 1
    }
    qPos[b] = lens[b] - 1;
  }
  const shape = { batch, heads: H, kvHeads: KV, qLen: 1, kLen: K, headDim: D };
  const batched = () => pe.attention(q, k, v, { shape, causal: true, rope, kRotated: true, positions: { q: qPos, k: kPos }, mask, out });
  const row = K * KV * D;
  const seqs = lens.map((L, b) => ({
    shape: { batch: 1, heads: H, kvHeads: KV, qLen: 1, kLen: L, headDim: D },
    q: T(q.array.slice(b * H * D, (b + 1) * H * D)),
    k: T(k.array.slice(b * row + (K - L) * KV * D, (b + 1) * row)),
    v: T(v.array.slice(b * row + (K - L) * KV * D, (b + 1) * row)),
    out: T(H * D),
  }));
  const perSequence = () => {
    for (const s of seqs) pe.attention(s.q, s.k, s.v, { shape: s.shape, causal: true, rope, kRotated: true, out: s.out });
  };
  batched();
  perSequence();
  let diff = 0;
  const o = out.array;
  for (let b = 0; b < batch; b++) {
    const ob = seqs[b].out.array;
    for (let i = 0; i < H * D; i++) diff = Math.max(diff, Math.abs(o[b * H * D + i] - ob[i]));
  }
  const free = () => {
    for (const t of tensors) t.free();
    rope.free();
  };
  return { batched, perSequence, diff, free, batch, D };
}

/** The bench interface (bench/run.mjs): rows { name, ratio, lo, hi, target, better, note }. */
export async function measure(pe, { quick = false, rounds = 9, minSample = 0.02 } = {}) {
  const rows = [];
  for (const K of quick ? [32] : [32, 256]) {
    const w = workload(pe, K);
    // the same padded batch twice over (16 sequences) in one call: t(16) − t(8) is 8 sequences' kernel time,
    // which splits each contender into the wrapper's fixed cost per call and the kernel's time per sequence
    const w16 = workload(pe, K, 16);
    try {
      const { results } = await compare([
        { id: 'batched', sample: loop(w.batched) },
        { id: 'per-sequence', sample: loop(w.perSequence) },
        { id: 'batched-16', sample: loop(w16.batched) },
      ], { rounds, minSample });
      const us = (id) => (results[id].median * 1e6).toFixed(1);
      // the split from each contender's fastest round: a shared machine's load only ever adds time, and a
      // difference of medians taken under load can come out negative
      const t = (id) => results[id].min * 1e6;
      const k1 = (t('batched-16') - t('batched')) / w.batch; // kernel time per sequence (µs)
      const wb = t('batched') - w.batch * k1; // the batched call's fixed cost
      const w1 = t('per-sequence') / w.batch - k1; // one per-sequence call's fixed cost
      const split = `fastest rounds: k1 ${k1.toFixed(2)} us per sequence, fixed cost per call ${w1.toFixed(2)} us (per-sequence) / ${wb.toFixed(2)} us (batched), so the ratio 8(w+k1)/(w_b+8k1) is ${((8 * (w1 + k1)) / (wb + 8 * k1)).toFixed(2)}; 3x needs k1 <= (8w - 3w_b)/16 = ${((8 * w1 - 3 * wb) / 16).toFixed(2)} us`;
      rows.push(rowFrom(results, 'per-sequence', 'batched', {
        name: `padded-batch attention, one call vs ${w.batch} per-sequence calls, decode batch ${w.batch}, kLen ${K} (8/2 heads x ${w.D})`,
        target: 3,
        better: 'higher',
        note: `1 call ${us('batched')} us, ${w.batch} calls ${us('per-sequence')} us, 16 sequences in 1 call ${us('batched-16')} us: ${split}; outputs agree to ${w.diff.toExponential(1)}`,
      }));
    } finally {
      w.free();
      w16.free();
    }
  }
  return rows;
}

await standalone(import.meta.url, measure);
