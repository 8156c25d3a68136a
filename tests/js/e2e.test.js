// End to end: the four tiny decoders of tests/golden/e2e/ (README: weights, a left-padded batch of 3, a prefill
// of 20 slots and 8 decode steps against a KV cache), rebuilt here from the README, with every positional and
// attention step done by posenc: pe.ropeFromHFConfig(config) for the rotary, and ONE pe.attention call per layer
// and phase for the whole padded batch (per-sequence positions as HF derives them from the mask, the mask
// itself, causal), reading q as a strided view of the projection output (gpt_neox: inside the fused per-head
// [b, s, h, 3d] QKV buffer) and k, v from a bhsd KV cache with spare capacity (heads stride C·d) without
// compaction. The keys are cached unrotated and rotated by pe.attention at their own positions each call
// (the same numbers as rotating once: a rotation depends only on the key's own position).
// Around the attention (norms, linear layers, MLP) this file computes in double and stores float32.
// Pass rule (README section 5): per phase and output, err <= max(8 · err_hf32, 2e-6 · M) against ref64, on real
// rows only; and the derived position ids equal P.position_ids. Both builds.
//
// The float16 KV cache variant runs as a runtime with a float16 cache would: q, k, v and the attention output are
// stored float16 (options.dtype 'float16'); each new key is rotated once, at its own position, by rope.apply in
// float16 and appended to the cache, and attention reads the cache as it is (kRotated: true; q is rotated
// inside). Its bound is the README's rule with float16's unit roundoff in place of float32's:
//   err <= (2^-11 / 2^-24) · max(8 · err_hf32, 2e-6 · M) = 8192 · max(...).
// Why: err_hf32 is this model's response (every layer, every size: d, heads, headDim, vocab, 2 layers, 28
// positions) to rounding at float32's unit roundoff 2^-24 in every operation; to first order the response grows
// linearly with the unit roundoff, so rounding at 2^-11 (float16) in a subset of those operations (q, k, v and
// the attention output of each layer) moves the outputs by at most 2^13 times as much. The float32 arithmetic
// of the rest adds err_hf32-sized terms, far below that. The worst err / bound is printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { BUILDS, loadBuild, GOLDEN_DIR } from './helpers.js';

function load(name) {
  const index = JSON.parse(fs.readFileSync(new URL(`e2e/${name}.json`, GOLDEN_DIR), 'utf8'));
  const buf = fs.readFileSync(new URL(`e2e/${name}.bin`, GOLDEN_DIR));
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const C = { f32: Float32Array, f64: Float64Array, i32: Int32Array };
  const get = (k) => {
    const t = index.tensors[k];
    assert.ok(t, `tensor ${k}`);
    return new C[t.dtype](ab, t.offset, t.shape.reduce((a, b) => a * b, 1));
  };
  return { index, get, has: (k) => k in index.tensors };
}

/** y[n, out] = x[n, in] · Wᵀ (+ b), accumulated in double, stored float32. */
function linear(x, n, W, b, inD, outD) {
  const y = new Float32Array(n * outD);
  for (let r = 0; r < n; r++) {
    for (let o = 0; o < outD; o++) {
      let s = b ? b[o] : 0;
      for (let i = 0; i < inD; i++) s += x[r * inD + i] * W[o * inD + i];
      y[r * outD + o] = s;
    }
  }
  return y;
}

function norm(kind, x, n, d, w, b) {
  const y = new Float32Array(n * d);
  for (let r = 0; r < n; r++) {
    const row = x.subarray(r * d, (r + 1) * d);
    if (kind === 'rms') {
      let ss = 0;
      for (const v of row) ss += v * v;
      const inv = 1 / Math.sqrt(ss / d + 1e-5);
      for (let i = 0; i < d; i++) y[r * d + i] = w[i] * (row[i] * inv);
    } else {
      let mean = 0;
      for (const v of row) mean += v;
      mean /= d;
      let varr = 0;
      for (const v of row) varr += (v - mean) * (v - mean);
      const inv = 1 / Math.sqrt(varr / d + 1e-5);
      for (let i = 0; i < d; i++) y[r * d + i] = (row[i] - mean) * inv * w[i] + b[i];
    }
  }
  return y;
}

// ---- float16 storage (IEEE binary16), written from the format: round to nearest, ties to even ----
function toF16(x) {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  if (Number.isNaN(x)) return 0x7e00;
  if (a >= 65520) return sign | 0x7c00; // from max + half an ulp on: Inf
  let e = a < 2 ** -14 ? -14 : Math.floor(Math.log2(a));
  if (e > -14 && 2 ** e > a) e--; // guard Math.log2 rounding
  if (2 ** (e + 1) <= a) e++;
  const ulp = 2 ** (e - 10);
  const fl = Math.floor(a / ulp);
  const r = a / ulp - fl;
  const m = r > 0.5 || (r === 0.5 && fl % 2 === 1) ? fl + 1 : fl; // significand in ulps, up to 2048 (a carry)
  if (a < 2 ** -14) return sign | m; // subnormal (m = 1024 is the smallest normal: the same bits)
  return sign | ((e + 15) * 1024 + (m - 1024)); // a carry to 2048 moves to the next exponent by itself
}
function fromF16(h) {
  const e = (h >> 10) & 31;
  const m = h & 1023;
  const v = e === 0 ? m * 2 ** -24 : e === 31 ? (m ? NaN : Infinity) : (1024 + m) * 2 ** (e - 25);
  return h & 0x8000 ? -v : v;
}
const toF16Array = (x) => Uint16Array.from(x, toF16);
const fromF16Array = (h) => Float32Array.from(h, fromF16);

function run(pe, name, f16 = false) {
  const { index, get, has } = load(name);
  const { hidden: d, heads: H, kvHeads: KV, headDim: D, vocab: V, norm: normKind, kind } = index;
  const B = 3;
  const P = 20;
  const steps = index.decodeSteps;
  const Cap = P + steps; // cache capacity per head
  const rope = pe.ropeFromHFConfig(index.config);
  const tokens = get('tokens');
  const mask0 = get('mask');
  const decodeTokens = get('decode_tokens');
  // caches: [layer] -> k, v of [B, KV, Cap, D] (bhsd with spare capacity); mask and positions of every slot
  const Cache = f16 ? Uint16Array : Float32Array;
  const caches = [0, 1].map(() => ({ k: new Cache(B * KV * Cap * D), v: new Cache(B * KV * Cap * D) }));
  const maskAll = new Int32Array(B * Cap);
  const posAll = new Int32Array(B * Cap);
  const counts = new Int32Array(B); // real tokens seen per sequence
  const fails = [];
  let worst = 0;
  let slot0 = 0;
  for (const phase of index.phases) {
    const T = phase === 'prefill' ? P : 1;
    const step = phase === 'prefill' ? 0 : Number(phase.slice(6));
    const tok = new Int32Array(B * T);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        const s = slot0 + t;
        const m = phase === 'prefill' ? mask0[b * P + t] : 1;
        tok[b * T + t] = phase === 'prefill' ? tokens[b * P + t] : decodeTokens[b * steps + step - 1];
        maskAll[b * Cap + s] = m;
        // HF: cumsum(mask) - 1, 1 where mask == 0
        posAll[b * Cap + s] = m ? counts[b] : 1;
        if (m) counts[b]++;
      }
    }
    const kLen = slot0 + T;
    const qpos = new Int32Array(B * T);
    const kpos = new Int32Array(B * kLen);
    const mask = new Int32Array(B * kLen);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) qpos[b * T + t] = posAll[b * Cap + slot0 + t];
      kpos.set(posAll.subarray(b * Cap, b * Cap + kLen), b * kLen);
      mask.set(maskAll.subarray(b * Cap, b * Cap + kLen), b * kLen);
    }
    assert.deepEqual(Array.from(qpos), Array.from(get(`${phase}.position_ids`)), `${name} ${phase}: position ids`);

    const n = B * T;
    let x = new Float32Array(n * d);
    for (let r = 0; r < n; r++) x.set(get('w.embed').subarray(tok[r] * d, (tok[r] + 1) * d), r * d);
    for (let L = 0; L < 2; L++) {
      const w = (k) => get(`w.L${L}.${k}`);
      const wb = (k) => (has(`w.L${L}.${k}`) ? get(`w.L${L}.${k}`) : null);
      const h = norm(normKind, x, n, d, w('norm1.weight'), wb('norm1.bias'));
      let qbuf;
      let qStrides;
      let kAt; // (b, t, g) -> offset of the new key head vector in its buffer
      let kBuf;
      let vBuf;
      let vAt;
      if (kind === 'gpt_neox') {
        // fused per head: [b, t, h, 3D] = [q_h | k_h | v_h]
        const qkv = linear(h, n, w('attn.query_key_value.weight'), wb('attn.query_key_value.bias'), d, 3 * d);
        qbuf = qkv;
        qStrides = { batch: T * H * 3 * D, seq: H * 3 * D, heads: 3 * D };
        kBuf = qkv;
        vBuf = qkv;
        kAt = (b, t, g) => ((b * T + t) * H + g) * 3 * D + D;
        vAt = (b, t, g) => ((b * T + t) * H + g) * 3 * D + 2 * D;
      } else {
        qbuf = linear(h, n, w('attn.q_proj.weight'), wb('attn.q_proj.bias'), d, H * D);
        kBuf = linear(h, n, w('attn.k_proj.weight'), wb('attn.k_proj.bias'), d, KV * D);
        vBuf = linear(h, n, w('attn.v_proj.weight'), wb('attn.v_proj.bias'), d, KV * D);
        qStrides = undefined;
        kAt = (b, t, g) => ((b * T + t) * KV + g) * D;
        vAt = kAt;
      }
      const cache = caches[L];
      let newK = kBuf;
      let newV = vBuf;
      let kAtNew = kAt;
      if (f16) {
        // the new keys and values in float16, [b, t, g, D]; keys rotated once, here, at their own positions
        newK = new Uint16Array(n * KV * D);
        newV = new Uint16Array(n * KV * D);
        for (let b = 0; b < B; b++) {
          for (let t = 0; t < T; t++) {
            for (let g = 0; g < KV; g++) {
              const r = ((b * T + t) * KV + g) * D;
              newK.set(toF16Array(kBuf.subarray(kAt(b, t, g), kAt(b, t, g) + D)), r);
              newV.set(toF16Array(vBuf.subarray(vAt(b, t, g), vAt(b, t, g) + D)), r);
            }
          }
        }
        rope.apply(newK, { shape: [B, T, KV, D], positions: qpos, dtype: 'float16' });
        kAtNew = (b, t, g) => ((b * T + t) * KV + g) * D;
      }
      const vAtNew = f16 ? kAtNew : vAt;
      for (let b = 0; b < B; b++) {
        for (let g = 0; g < KV; g++) {
          for (let t = 0; t < T; t++) {
            const c = ((b * KV + g) * Cap + slot0 + t) * D;
            cache.k.set(newK.subarray(kAtNew(b, t, g), kAtNew(b, t, g) + D), c);
            cache.v.set(newV.subarray(vAtNew(b, t, g), vAtNew(b, t, g) + D), c);
          }
        }
      }
      // one call for the whole padded batch: q a view ([b, t, h, d] or inside the fused QKV), k and v the
      // bhsd cache read in place (heads stride Cap·D, seq stride D)
      const cst = { batch: KV * Cap * D, seq: D, heads: Cap * D };
      // q, out are bshd-ordered [b, t, h, D] while the cache is bhsd: describe q/out by strides in the 'bhsd' call
      const qst = qStrides ?? { batch: T * H * D, seq: H * D, heads: D };
      const res = pe.attention(f16 ? toF16Array(qbuf) : qbuf, cache.k, cache.v, {
        shape: { batch: B, heads: H, kvHeads: KV, qLen: T, kLen, headDim: D },
        layout: 'bhsd',
        causal: true,
        rope,
        kRotated: f16, // the float16 cache holds rotated keys; the float32 one is rotated in the call
        positions: { q: qpos, k: kpos },
        mask,
        strides: { q: qst, k: cst, v: cst, out: { batch: T * H * D, seq: H * D, heads: D } },
        out: new Cache(n * H * D),
        dtype: f16 ? 'float16' : 'float32',
      });
      const out = f16 ? fromF16Array(res.out) : res.out;
      const oName = kind === 'gpt_neox' ? 'attn.dense' : kind === 'gptj' ? 'attn.out_proj' : 'attn.o_proj';
      const a = linear(out, n, w(`${oName}.weight`), wb(`${oName}.bias`), H * D, d);
      for (let i = 0; i < x.length; i++) x[i] = x[i] + a[i];
      const h2 = norm(normKind, x, n, d, w('norm2.weight'), wb('norm2.bias'));
      const u = linear(h2, n, w('mlp.w1'), null, d, 2 * d);
      for (let i = 0; i < u.length; i++) u[i] = u[i] / (1 + Math.exp(-u[i]));
      const m2 = linear(u, n, w('mlp.w2'), null, 2 * d, d);
      for (let i = 0; i < x.length; i++) x[i] = x[i] + m2[i];
    }
    const hid = norm(normKind, x, n, d, get('w.normf.weight'), has('w.normf.bias') ? get('w.normf.bias') : null);
    const logits = linear(hid, n, get('w.lm_head'), null, d, V);
    for (const [what, mine, width] of [['logits', logits, V], ['hidden', hid, d]]) {
      const ref = get(`${phase}.${what}.ref64`);
      const hf = get(`${phase}.${what}.hf32`);
      let err = 0;
      let errHF = 0;
      let M = 0;
      for (let b = 0; b < B; b++) {
        for (let t = 0; t < T; t++) {
          if (phase === 'prefill' && mask0[b * P + t] === 0) continue; // pad rows mean nothing
          for (let c = 0; c < width; c++) {
            const i = (b * T + t) * width + c;
            err = Math.max(err, Math.abs(mine[i] - ref[i]));
            errHF = Math.max(errHF, Math.abs(hf[i] - ref[i]));
            M = Math.max(M, Math.abs(ref[i]));
          }
        }
      }
      const bound = (f16 ? 2 ** 13 : 1) * Math.max(8 * errHF, 2e-6 * M);
      worst = Math.max(worst, err / bound);
      if (!(err <= bound)) fails.push(`${phase} ${what}: err ${err.toExponential(3)} > bound ${bound.toExponential(3)} (hf32 ${errHF.toExponential(3)})`);
    }
    slot0 += T;
  }
  return { fails, worst };
}

test('float16 reference conversion: known patterns', () => {
  const cases = [[1, 0x3c00], [-2, 0xc000], [65504, 0x7bff], [65520, 0x7c00], [2 ** -24, 0x0001], [2 ** -25, 0], [1 + 2 ** -11, 0x3c00],
    [1 + 3 * 2 ** -11, 0x3c02], [2 ** -14, 0x0400], [2 ** -14 - 2 ** -25, 0x0400], [0.1, 0x2e66], [2047.5, 0x6800]];
  for (const [x, h] of cases) assert.equal(toF16(x), h, `toF16(${x})`);
  for (let h = 0; h < 0x7c00; h += 13) assert.equal(toF16(fromF16(h)), h);
});

for (const build of BUILDS) {
  for (const name of ['llama3', 'qwen2', 'gpt_neox', 'gptj']) {
    test(`e2e ${name}: padded batch, prefill + 8 decode steps, one attention call per layer, matches HF float64 [${build.name}]`, async () => {
      const pe = await loadBuild(build.simd);
      const { fails, worst } = run(pe, name);
      assert.deepEqual(fails, [], `${name}: ${fails.join('; ')}`);
      console.log(`# e2e ${name} [${build.name}]: worst err / bound ${worst.toFixed(3)}`);
    });
    test(`e2e ${name}: float16 KV cache (q, k, v, out float16; keys rotated once by rope.apply), matches HF float64 within float16's bound [${build.name}]`, async () => {
      const pe = await loadBuild(build.simd);
      const { fails, worst } = run(pe, name, true);
      assert.deepEqual(fails, [], `${name} float16: ${fails.join('; ')}`);
      console.log(`# e2e ${name} float16 cache [${build.name}]: worst err / bound ${worst.toFixed(4)}`);
    });
  }
}
