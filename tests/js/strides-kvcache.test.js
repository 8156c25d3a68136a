// A decode loop over a bhsd KV cache with spare capacity, for the two RoPE types whose frequencies depend on
// the sequence length (dynamic NTK, LongRoPE), across the short -> long switch. Hugging Face rotates each
// step's keys with that step's frequencies and caches them rotated; the step's seqLen is max(position_ids) + 1
// over the whole batch (dynamic_rope_update). The documented way with posenc: write the step's raw keys into
// the cache, rotate them in place there with rope.apply({ strides, offset, positions, seqLen }), and attend
// with kRotated (q rotated by pe.attention at the same seqLen). Compared with a naive float64 reference that
// keeps every cached key at its own step's rotation; and, so that the test can fail, the other way (rotating
// the whole cache at the last step's seqLen) is shown to differ after the switch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32 } from './helpers.js';

const D = 16;
const ORIG = 32; // original_max_position_embeddings / max_position_embeddings: the switch is at seqLen 33
const CASES = [
  {
    name: 'longrope',
    rope: {
      headDim: D,
      maxPositionEmbeddings: 4 * ORIG,
      scaling: {
        type: 'longrope',
        originalMaxPositionEmbeddings: ORIG,
        shortFactor: [1, 1.1, 1.3, 1.6, 2, 2.5, 3, 3.5],
        longFactor: [1, 1.5, 2.5, 4, 6, 9, 13, 18],
      },
    },
  },
  { name: 'dynamic', rope: { headDim: D, maxPositionEmbeddings: ORIG, scaling: { type: 'dynamic', factor: 4 } } },
];

const B = 2;
const H = 4; // query heads
const KV = 2; // key/value heads
const C = 48; // cache capacity per head
const PREFILL = 27;
const STEPS = 9; // decode positions 27 .. 35 (sequence 1 is 3 ahead: 30 .. 38), across the switch
const SHIFT = [0, 3]; // sequence b sits at positions SHIFT[b] + slot

/** Rotates head vector v (length D, half-split pairs) in float64 at position p. */
function rotate64(v, p, invFreq, scale) {
  const n = invFreq.length;
  const out = new Float64Array(D);
  for (let i = 0; i < n; i++) {
    const a = p * invFreq[i];
    const c = Math.cos(a) * scale;
    const s = Math.sin(a) * scale;
    out[i] = v[i] * c - v[i + n] * s;
    out[i + n] = v[i + n] * c + v[i] * s;
  }
  return out;
}

for (const build of BUILDS) {
  test(`KV cache decode across the short -> long switch: keys rotated in the cache at their step's seqLen, kRotated attention, equal a float64 reference [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    for (const c of CASES) {
      await t.test(c.name, () => {
        const rope = pe.rope(c.rope);
        const rng = makeRng(c.name.length * 977);
        const kCache = new Float32Array(B * KV * C * D); // [B, KV, C, D]
        const vCache = new Float32Array(B * KV * C * D);
        const cacheStrides = { batch: KV * C * D, seq: D, heads: C * D };
        const ref = Array.from({ length: B }, () => Array.from({ length: KV }, () => [])); // rotated keys, float64
        const refV = Array.from({ length: B }, () => Array.from({ length: KV }, () => []));
        let worst = 0;
        let lastQ = null;
        let switched = false;
        for (let step = 0, t0 = 0; step <= STEPS; step++) {
          const n = step === 0 ? PREFILL : 1;
          // HF: seq_len = max(position_ids) + 1 over the batch, for this step's tokens
          const stepSeqLen = Math.max(...SHIFT) + t0 + n;
          if (stepSeqLen > ORIG) switched = true;
          const kNew = randnF32(rng, B * KV * n * D); // [B, KV, n, D]
          const vNew = randnF32(rng, B * KV * n * D);
          const q = randnF32(rng, B * H * n * D); // [B, H, n, D]
          // raw keys and values into slots t0 .. t0 + n - 1
          for (let b = 0; b < B; b++)
            for (let h = 0; h < KV; h++)
              for (let s = 0; s < n; s++) {
                const src = ((b * KV + h) * n + s) * D;
                const dst = ((b * KV + h) * C + t0 + s) * D;
                kCache.set(kNew.subarray(src, src + D), dst);
                vCache.set(vNew.subarray(src, src + D), dst);
              }
          // the documented way: rotate the new keys where they lie, at this step's seqLen
          const positions = Int32Array.from({ length: B * n }, (_, i) => SHIFT[Math.floor(i / n)] + t0 + (i % n));
          rope.apply(kCache, { shape: [B, KV, n, D], layout: 'bhsd', positions, seqLen: stepSeqLen, strides: cacheStrides, offset: t0 * D });
          // reference: the same keys rotated in float64 at the same step's frequencies, kept as they are
          const inv = rope.invFreq64(stepSeqLen);
          const a = rope.attentionScaling(stepSeqLen);
          for (let b = 0; b < B; b++)
            for (let h = 0; h < KV; h++)
              for (let s = 0; s < n; s++) {
                const src = ((b * KV + h) * n + s) * D;
                ref[b][h].push(rotate64(kNew.subarray(src, src + D), SHIFT[b] + t0 + s, inv, a));
                refV[b][h].push(vNew.subarray(src, src + D));
              }
          const kLen = t0 + n;
          for (let b = 0; b < B; b++) {
            // this sequence's cache, compacted for pe.attention (slots 0 .. kLen - 1)
            const kb = new Float32Array(KV * kLen * D);
            const vb = new Float32Array(KV * kLen * D);
            for (let h = 0; h < KV; h++) {
              const base = (b * KV + h) * C * D;
              kb.set(kCache.subarray(base, base + kLen * D), h * kLen * D);
              vb.set(vCache.subarray(base, base + kLen * D), h * kLen * D);
            }
            const qb = q.subarray(b * H * n * D, (b + 1) * H * n * D);
            const kPos = Int32Array.from({ length: kLen }, (_, j) => SHIFT[b] + j);
            const qPos = kPos.subarray(t0);
            const shape = { batch: 1, heads: H, kvHeads: KV, qLen: n, kLen, headDim: D };
            const common = { shape, layout: 'bhsd', causal: true, rope, positions: { q: qPos, k: kPos }, seqLen: stepSeqLen };
            const { out } = pe.attention(qb, kb, vb, { ...common, kRotated: true });
            // float64 reference attention over the cached (own-step) keys
            const scale = 1 / Math.sqrt(D);
            for (let h = 0; h < H; h++) {
              const g = Math.floor(h / (H / KV));
              for (let i = 0; i < n; i++) {
                const qr = rotate64(qb.subarray((h * n + i) * D, (h * n + i + 1) * D), qPos[i], inv, a);
                const sc = [];
                for (let j = 0; j <= t0 + i; j++) {
                  let d = 0;
                  for (let e = 0; e < D; e++) d += qr[e] * ref[b][g][j][e];
                  sc.push(d * scale);
                }
                const m = Math.max(...sc);
                const w = sc.map((x) => Math.exp(x - m));
                const z = w.reduce((p, x) => p + x, 0);
                for (let e = 0; e < D; e++) {
                  let o = 0;
                  for (let j = 0; j < w.length; j++) o += (w[j] / z) * refV[b][g][j][e];
                  worst = Math.max(worst, Math.abs(out[(h * n + i) * D + e] - o));
                }
              }
            }
            if (step === STEPS) lastQ = { qb, kb: Float32Array.from(kb), vb, common, b, out };
          }
          t0 += n;
        }
        assert.ok(switched, 'the loop crossed the switch');
        // float32 storage and arithmetic against float64, outputs of size ~1: measured 5.8e-7 (longrope) and
        // 3.7e-7 (dynamic) in both builds; a key at the wrong step's rotation moves them by 5e-2 or more
        assert.ok(worst <= 5e-6, `worst |out - float64 reference| ${worst}`);
        // The other way differs: rotating the raw cache at the last step's seqLen (attention rotating every
        // key itself) is not what HF computes once the cache holds keys from before the switch.
        const { qb, common, b, out } = lastQ;
        const kLen = common.shape.kLen;
        const raw = new Float32Array(KV * kLen * D);
        // undo each cached key's own rotation to get the raw keys back (inverse at its own step's seqLen)
        for (let h = 0; h < KV; h++) {
          for (let j = 0; j < kLen; j++) {
            const stepSeqLen = j < PREFILL ? Math.max(...SHIFT) + PREFILL : Math.max(...SHIFT) + j + 1;
            const v = Float32Array.from(kCache.subarray(((b * KV + h) * C + j) * D, ((b * KV + h) * C + j + 1) * D));
            rope.apply(v, { shape: [1, 1, 1, D], positions: [SHIFT[b] + j], seqLen: stepSeqLen, inverse: true });
            raw.set(v, (h * kLen + j) * D);
          }
        }
        const wrong = pe.attention(qb, raw, lastQ.vb, { ...common, kRotated: false }).out;
        let diff = 0;
        for (let i = 0; i < out.length; i++) diff = Math.max(diff, Math.abs(wrong[i] - out[i]));
        assert.ok(diff > 1e-3, `rotating the whole cache at the last seqLen should differ after the switch (max diff ${diff})`);
        rope.free();
      });
    }
  });
}
