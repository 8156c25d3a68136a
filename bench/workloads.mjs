// workloads.mjs — what posenc's benchmark measures, and every contender for it. No Node-only API: the
// environment (posenc instances, the bench's wasm, an optional native sampler) is passed in, so the
// playground can build the same workloads in a browser.
//
// env = {
//   pe, peScalar        posenc API objects: init({ simd: true }) and init({ simd: false })
//   raw, rawScalar      the same two wasm modules instantiated again, exports called directly (raw.mjs)
//   limit               bench/build/limit.wasm instantiated (limit.c: limit_inplace, limit_copy, limit_fill,
//                       limit_read, limit_peak; rotation.c: rot_{half,il}_{bshd,bhsd})
//   unfused             bench/wasm/unfused.c (+ posenc sources) instantiated, or null
//   native              null, or (command string) => sampler(iters) -> seconds per iteration (native.mjs)
// }
//
// A workload is { id, group, label, params, contenders: [{ id, label, sample }], check() -> { [id]: maxAbsDiff },
// flops?, extraBytes?, dispose() }. Contender ids are shared across workloads so run.mjs can form ratios:
//   (RoPE: rope-workload.mjs lists its own)
//   api        posenc SIMD through the public API, zero-copy pe.tensor inputs
//   raw        posenc SIMD exports called directly, the same work as `api`
//   scalar     posenc scalar build, public API with pe.tensor (raw exports where the API has no such call)
//   js         plain JavaScript (plainjs.mjs)
//   limit      the in-place SIMD pass over the same bytes (write-only fill for generators)
//   memcpy     memcpy of the same bytes
//   native     the same C, gcc -O3 -march=native, separate process, the same work as `api`/`raw`
//   peak       (attention) register-only SIMD128 multiply-add loop: this engine's peak GFLOP/s, no memory
//   unfused    (attention) materialised bias / separate RoPE pass, materialised scores, separate softmax

import { fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rawRope, rawFloat32, rawInt32, rawApplyConfig } from './raw.mjs';
import * as plain from './plainjs.mjs';
import { maxAbsDiff } from './rope-workload.mjs';

const SEQ_FROM_POSITIONS = -1n; // PE_SEQ_LEN_FROM_POSITIONS (an i64 argument: BigInt at the JS boundary)

// limit_peak(PEAK_ITERS): 12 chains x 4 lanes x (multiply + add) per iteration
export const PEAK_ITERS = 1 << 16;
export const PEAK_FLOPS = PEAK_ITERS * 12 * 4 * 2;

export { ropeWorkload, ROPE_SHAPES, TABLE_POSITIONS } from './rope-workload.mjs';

// ---------------------------------------------------------------------------------------------------------------
// cos/sin tables
// ---------------------------------------------------------------------------------------------------------------

/**
 * cos/sin table for `count` positions from pos0 at head_dim 128 (64 frequencies). With count 1 (one new decode
 * position) the decode apply of q and k [1,1,32,128] runs in the same rounds ('decode-apply', raw exports, and
 * 'decode-api', the public API) so the table's cost can be compared with the rotation it feeds.
 */
export function cosSinWorkload(env, { count, pos0 }) {
  const D = 128;
  const nf = D / 2;
  const positions = Int32Array.from({ length: count }, (_, i) => pos0 + i);
  const contenders = [];
  const disposers = [];
  const rope = env.pe.rope({ headDim: D });
  disposers.push(() => rope.free());
  contenders.push({ id: 'api', label: 'posenc SIMD, API rope.cosSin', sample: loop(() => rope.cosSin(positions)) });
  const rawTable = (r, id, label) => {
    const ex = r.exports;
    const ropePtr = rawRope(r, D);
    const posP = rawInt32(r, positions);
    const cosP = r.malloc(count * nf * 4);
    const sinP = r.malloc(count * nf * 4);
    disposers.push(() => [ropePtr, posP, cosP, sinP].forEach((p) => r.free(p)));
    contenders.push({
      id,
      label,
      sample: loop(() => ex.pe_rope_cos_sin(cosP, sinP, ropePtr, posP, count, SEQ_FROM_POSITIONS, 1.0)),
    });
    return { ropePtr, cosP, sinP };
  };
  const simd = rawTable(env.raw, 'raw', 'posenc SIMD, raw pe_rope_cos_sin');
  if (env.rawScalar) rawTable(env.rawScalar, 'scalar', 'posenc scalar, raw pe_rope_cos_sin');
  const inv = plain.invFreq(D);
  const cosJ = new Float32Array(count * nf);
  const sinJ = new Float32Array(count * nf);
  contenders.push({ id: 'js', label: 'plain JS Math.cos/Math.sin (double)', sample: loop(() => plain.ropeCosSin(cosJ, sinJ, positions, inv)) });
  if (env.native) contenders.push({ id: 'native', label: 'native C', sample: env.native(`cossin ${count} ${pos0} ${D}`) });

  if (count === 1) {
    // the decode rotation the one-position table feeds: q and k [1,1,32,128], half-split, bshd
    const r = env.raw;
    const ex = r.exports;
    const nx = 32 * D;
    const qP = rawFloat32(r, fillRandom(new Float32Array(nx), 21));
    const kP = rawFloat32(r, fillRandom(new Float32Array(nx), 22));
    const acP = rawApplyConfig(r, { batch: 1, seq: 1, heads: 32 });
    disposers.push(() => [qP, kP, acP].forEach((p) => r.free(p)));
    ex.pe_rope_cos_sin(simd.cosP, simd.sinP, simd.ropePtr, rawInt32(r, positions), 1, SEQ_FROM_POSITIONS, 1.0);
    contenders.push({
      id: 'decode-apply',
      label: 'decode rotation of q and k [1,1,32,128] (raw pe_rope_apply x2)',
      sample: loop(() => {
        ex.pe_rope_apply(simd.ropePtr, qP, simd.cosP, simd.sinP, acP);
        ex.pe_rope_apply(simd.ropePtr, kP, simd.cosP, simd.sinP, acP);
      }),
    });
  }

  // accuracy: the SIMD table against Math.cos/Math.sin in double (our angles are formed in double)
  return {
    id: count === 1 ? 'cossin/step' : `cossin/${count}x${nf}`,
    group: 'cossin',
    label: count === 1 ? `cos/sin, one new decode position (${pos0}), ${nf} frequencies` : `cos/sin table ${count} x ${nf}`,
    params: { count, pos0, nf },
    contenders,
    check() {
      const { cos, sin } = rope.cosSin(positions);
      const c = new Float64Array(count * nf);
      const s = new Float64Array(count * nf);
      for (let p = 0; p < count; p++) for (let i = 0; i < nf; i++) {
        c[p * nf + i] = Math.cos(positions[p] * inv[i]);
        s[p * nf + i] = Math.sin(positions[p] * inv[i]);
      }
      return { api: Math.max(maxAbsDiff(cos, c), maxAbsDiff(sin, s)) };
    },
    dispose() {
      for (const d of disposers.reverse()) d();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Sinusoidal table and ALiBi
// ---------------------------------------------------------------------------------------------------------------

export function sinusoidalWorkload(env, { seqLen = 2048, dModel = 512 } = {}) {
  const n = seqLen * dModel;
  const contenders = [];
  const disposers = [];
  if (typeof env.pe.sinusoidal === 'function') {
    contenders.push({ id: 'api', label: 'posenc SIMD, API pe.sinusoidal', sample: loop(() => env.pe.sinusoidal(seqLen, dModel)) });
  }
  const rawTable = (r, id, label) => {
    const p = r.malloc(n * 4);
    disposers.push(() => r.free(p));
    contenders.push({ id, label, sample: loop(() => r.exports.pe_sinusoidal_table(p, seqLen, dModel, 0)) });
    return p;
  };
  const outP = rawTable(env.raw, 'raw', 'posenc SIMD, raw pe_sinusoidal_table');
  if (env.rawScalar) rawTable(env.rawScalar, 'scalar', 'posenc scalar, raw pe_sinusoidal_table');
  const outJ = new Float32Array(n);
  contenders.push({ id: 'js', label: 'plain JS Math.sin/Math.cos', sample: loop(() => plain.sinusoidal(outJ, seqLen, dModel)) });
  if (env.limit) {
    const p = env.limit.malloc(n * 4);
    disposers.push(() => env.limit.free(p));
    contenders.push({ id: 'limit', label: 'limit: SIMD fill (write only)', sample: loop(() => env.limit.exports.limit_fill(p, n, 0.5)) });
  }
  if (env.native) contenders.push({ id: 'native', label: 'native C', sample: env.native(`sinus ${seqLen} ${dModel}`) });
  return {
    id: `sinusoidal/${seqLen}x${dModel}`,
    group: 'table',
    label: `sinusoidal table ${seqLen} x ${dModel}`,
    params: { seqLen, dModel, bytes: n * 4 },
    contenders,
    check() {
      env.raw.exports.pe_sinusoidal_table(outP, seqLen, dModel, 0);
      return { raw: maxAbsDiff(env.raw.f32(outP, n), plain.sinusoidal(new Float32Array(n), seqLen, dModel)) };
    },
    dispose() {
      for (const d of disposers.reverse()) d();
    },
  };
}

export function alibiWorkload(env, { heads = 32, qLen = 512, kLen = 512, causal = true } = {}) {
  const n = heads * qLen * kLen;
  const contenders = [];
  const disposers = [];
  if (typeof env.pe.alibiBias === 'function' && typeof env.pe.alibiSlopes === 'function') {
    contenders.push({
      id: 'api',
      label: 'posenc SIMD, API pe.alibiSlopes + pe.alibiBias',
      sample: loop(() => {
        env.pe.alibiSlopes(heads);
        env.pe.alibiBias(heads, qLen, kLen, { causal });
      }),
    });
  }
  const rawBias = (r, id, label) => {
    const s = r.malloc(heads * 4);
    const p = r.malloc(n * 4);
    disposers.push(() => (r.free(p), r.free(s)));
    contenders.push({
      id,
      label,
      sample: loop(() => {
        r.exports.pe_alibi_slopes(s, heads);
        r.exports.pe_alibi_bias(p, s, heads, qLen, kLen, causal ? 1 : 0);
      }),
    });
    return { s, p };
  };
  const simd = rawBias(env.raw, 'raw', 'posenc SIMD, raw pe_alibi_slopes + pe_alibi_bias');
  if (env.rawScalar) rawBias(env.rawScalar, 'scalar', 'posenc scalar, raw');
  const outJ = new Float32Array(n);
  contenders.push({
    id: 'js',
    label: 'plain JS loops',
    sample: loop(() => plain.alibiBias(outJ, plain.alibiSlopes(heads), heads, qLen, kLen, causal)),
  });
  if (env.limit) {
    const p = env.limit.malloc(n * 4);
    disposers.push(() => env.limit.free(p));
    contenders.push({ id: 'limit', label: 'limit: SIMD fill (write only)', sample: loop(() => env.limit.exports.limit_fill(p, n, 0.5)) });
  }
  if (env.native) contenders.push({ id: 'native', label: 'native C', sample: env.native(`alibi ${heads} ${qLen} ${kLen} ${causal ? 1 : 0}`) });
  return {
    id: `alibi/${heads}x${qLen}x${kLen}`,
    group: 'table',
    label: `ALiBi slopes + bias ${heads} x ${qLen} x ${kLen}${causal ? ' causal' : ''}`,
    params: { heads, qLen, kLen, causal, bytes: n * 4 },
    contenders,
    check() {
      env.raw.exports.pe_alibi_slopes(simd.s, heads);
      env.raw.exports.pe_alibi_bias(simd.p, simd.s, heads, qLen, kLen, causal ? 1 : 0);
      const ref = plain.alibiBias(new Float32Array(n), plain.alibiSlopes(heads), heads, qLen, kLen, causal);
      const got = env.raw.f32(simd.p, n);
      let m = 0;
      for (let i = 0; i < n; i++) if (got[i] !== ref[i]) m = Math.max(m, Number.isFinite(ref[i]) ? Math.abs(got[i] - ref[i]) : Infinity);
      return { raw: m };
    },
    dispose() {
      for (const d of disposers.reverse()) d();
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Attention
// ---------------------------------------------------------------------------------------------------------------

// pe_attention_config's first fields, in declaration order (their offsets come from the module).
const ATTN_FIELDS = ['batch', 'heads', 'kv_heads', 'q_len', 'k_len', 'head_dim', 'layout', 'causal', 'scale',
  'alibi_slopes', 'rope', 'q_positions', 'k_positions', 'rope_seq_len', 'k_rotated'];

/** pe_attention_config's layout, from the module (c/src/abi.c), never hard-coded. */
function attentionLayout(r) {
  const ex = r.exports;
  const countPtr = r.malloc(4);
  const p = ex.pe_abi_attention_config_layout(countPtr) >>> 0;
  const count = r.i32(countPtr, 1)[0];
  const t = r.i32(p, count);
  // later fields (per-batch positions, mask, bias, strides, ...) stay zero: their defaults (zero-initialised)
  if (count < ATTN_FIELDS.length + 1) throw new Error(`pe_attention_config has ${count - 1} fields, bench needs its first ${ATTN_FIELDS.length}`);
  const layout = { size: t[count - 1] };
  ATTN_FIELDS.forEach((f, i) => { layout[f] = t[i]; });
  r.free(countPtr);
  return layout;
}

/** Everything pe_attention needs in raw's memory; returns { run(), out, extraBytes, free() }. */
export function rawAttention(r, { B, H, Sq, Sk, D, causal, alibi, rope }, q0, k0, v0) {
  const ex = r.exports;
  const ptrs = [];
  const keep = (p) => (ptrs.push(p), p);
  const qP = keep(rawFloat32(r, q0));
  const kP = keep(rawFloat32(r, k0));
  const vP = keep(rawFloat32(r, v0));
  const oP = keep(r.malloc(q0.length * 4));
  const slopes = keep(r.malloc(H * 4));
  ex.pe_alibi_slopes(slopes, H);
  const ropePtr = rope ? keep(rawRope(r, D)) : 0;
  const ATTN_CFG = attentionLayout(r);
  const cfg = keep(r.malloc(ATTN_CFG.size));
  const dv = new DataView(r.memory.buffer);
  new Uint8Array(r.memory.buffer, cfg, ATTN_CFG.size).fill(0);
  dv.setInt32(cfg + ATTN_CFG.batch, B, true);
  dv.setInt32(cfg + ATTN_CFG.heads, H, true);
  dv.setInt32(cfg + ATTN_CFG.q_len, Sq, true);
  dv.setInt32(cfg + ATTN_CFG.k_len, Sk, true);
  dv.setInt32(cfg + ATTN_CFG.head_dim, D, true);
  dv.setInt32(cfg + ATTN_CFG.layout, 1, true); // bhsd
  dv.setInt32(cfg + ATTN_CFG.causal, causal ? 1 : 0, true);
  dv.setUint32(cfg + ATTN_CFG.alibi_slopes, alibi ? slopes : 0, true);
  dv.setUint32(cfg + ATTN_CFG.rope, ropePtr, true);
  const nsP = keep(r.malloc(8));
  let st = ex.pe_attention_scratch_size(nsP, cfg);
  if (st !== 0) throw new Error(`pe_attention_scratch_size: status ${st}`);
  const nScratch = r.i32(nsP, 1)[0] >>> 0;
  const scratch = nScratch ? keep(r.malloc(nScratch * 4)) : 0;
  const run = () => ex.pe_attention(oP, 0, qP, kP, vP, scratch, nScratch, cfg);
  st = run();
  if (st !== 0) throw new Error(`pe_attention: status ${st}`);
  return {
    run,
    out: () => r.f32(oP, q0.length).slice(),
    extraBytes: nScratch * 4,
    free: () => ptrs.forEach((p) => r.free(p)),
  };
}

/** The unfused pipeline (bench/wasm/unfused.c) in its own module's memory. */
export function rawUnfused(u, { B, H, Sq, Sk, D, causal, alibi, rope }, q0, k0, v0) {
  const ex = u.exports;
  const ptrs = [];
  const keep = (p) => (ptrs.push(p), p);
  const qP = keep(rawFloat32(u, q0));
  const kP = keep(rawFloat32(u, k0));
  const vP = keep(rawFloat32(u, v0));
  const oP = keep(u.malloc(q0.length * 4));
  const ropePtr = rope ? keep(rawRope(u, D)) : 0;
  const nScratch = ex.bench_unfused_scratch(B, H, Sq, Sk, D, alibi ? 1 : 0, rope ? 1 : 0);
  const scratch = keep(u.malloc(nScratch * 4));
  const run = () => ex.bench_unfused(oP, qP, kP, vP, scratch, B, H, Sq, Sk, D, causal ? 1 : 0, alibi ? 1 : 0, ropePtr);
  const st = run();
  if (st !== 0) throw new Error(`bench_unfused: status ${st}`);
  return { run, out: () => u.f32(oP, q0.length).slice(), extraBytes: nScratch * 4, free: () => ptrs.forEach((p) => u.free(p)) };
}

/**
 * Attention, bhsd, causal, with ALiBi or RoPE (posenc's standard slopes / base 10000, half-split).
 * prefill: [1,8,512,64] against itself; decode: one query against a 4096-key cache.
 */
export function attentionWorkload(env, { kind, pos }) {
  const B = 1;
  const H = 8;
  const D = 64;
  const Sq = kind === 'decode' ? 1 : 512;
  const Sk = kind === 'decode' ? 4096 : 512;
  const alibi = pos === 'alibi';
  const rope = pos === 'rope';
  const causal = true;
  const p = { B, H, Sq, Sk, D, causal, alibi, rope };
  const q0 = fillRandom(new Float32Array(B * H * Sq * D), 31);
  const k0 = fillRandom(new Float32Array(B * H * Sk * D), 32);
  const v0 = fillRandom(new Float32Array(B * H * Sk * D), 33);
  const contenders = [];
  const disposers = [];
  const outs = {};
  const extra = {};
  // visible (query, key) pairs per head, times 2 flops per multiply-add, for QK^T and PV
  let pairs = 0;
  for (let i = 0; i < Sq; i++) pairs += Math.min(Sk, Sk - Sq + i + 1);
  const flops = 4 * D * pairs * H * B;

  if (typeof env.pe.attention === 'function') {
    const peAttn = env.pe;
    const ropeObj = rope ? peAttn.rope({ headDim: D }) : undefined;
    const qT = peAttn.tensor(q0);
    const kT = peAttn.tensor(k0);
    const vT = peAttn.tensor(v0);
    const oT = peAttn.tensor(q0.length);
    disposers.push(() => (qT.free(), kT.free(), vT.free(), oT.free(), ropeObj && ropeObj.free()));
    const shapeOpt = { batch: B, heads: H, qLen: Sq, kLen: Sk, headDim: D };
    contenders.push({
      id: 'api',
      label: 'posenc SIMD, API pe.attention, pe.tensor in and out',
      sample: loop(() => peAttn.attention(qT, kT, vT, { shape: shapeOpt, layout: 'bhsd', causal, alibi, rope: ropeObj ?? null, out: oT })),
    });
  }
  const fused = rawAttention(env.raw, p, q0, k0, v0);
  disposers.push(fused.free);
  outs.raw = fused.out();
  extra.raw = fused.extraBytes;
  contenders.push({ id: 'raw', label: 'posenc SIMD, fused pe_attention', sample: loop(fused.run) });
  if (env.rawScalar) {
    const fs = rawAttention(env.rawScalar, p, q0, k0, v0);
    disposers.push(fs.free);
    outs.scalar = fs.out();
    contenders.push({ id: 'scalar', label: 'posenc scalar, fused pe_attention', sample: loop(fs.run) });
  }
  if (env.unfused) {
    const uf = rawUnfused(env.unfused, p, q0, k0, v0);
    disposers.push(uf.free);
    outs.unfused = uf.out();
    extra.unfused = uf.extraBytes;
    contenders.push({
      id: 'unfused',
      label: alibi ? 'unfused SIMD: materialised bias, scores, softmax pass' : 'unfused SIMD: separate RoPE pass, scores, softmax pass',
      sample: loop(uf.run),
    });
  }
  // plain JS: RoPE on copies with the cached table, then the attention loops
  {
    const slopes = alibi ? plain.alibiSlopes(H) : null;
    const table = rope ? plain.ropeTable(Sk, D) : null;
    const kpos = Int32Array.from({ length: Sk }, (_, j) => j);
    const qpos = Int32Array.from({ length: Sq }, (_, i) => Sk - Sq + i);
    const out = new Float32Array(q0.length);
    const scores = new Float32Array(Sk);
    const run = () => {
      let q = q0;
      let k = k0;
      if (rope) {
        q = plain.ropeApply(q0.slice(), table, qpos, B, Sq, H, D, 'bhsd', 'half');
        k = plain.ropeApply(k0.slice(), table, kpos, B, Sk, H, D, 'bhsd', 'half');
      }
      return plain.attention(out, q, k, v0, H, Sq, Sk, D, causal, slopes, scores);
    };
    outs.js = run().slice();
    contenders.push({ id: 'js', label: 'plain JS loops', sample: loop(run) });
  }
  if (env.limit && kind === 'decode') {
    // decode reads every key and value once: a read-only pass over K and V is its memory floor
    const L = env.limit;
    const kP = rawFloat32(L, k0);
    const vP = rawFloat32(L, v0);
    disposers.push(() => (L.free(kP), L.free(vP)));
    contenders.push({
      id: 'limit',
      label: 'limit: SIMD read of K and V (read only)',
      sample: loop(() => L.exports.limit_read(kP, k0.length) + L.exports.limit_read(vP, v0.length)),
    });
  }
  if (env.limit && typeof env.limit.exports.limit_peak === 'function') {
    // the register-only peak: its time per call is for PEAK_FLOPS flops (GFLOP/s in report.mjs), not this work
    contenders.push({ id: 'peak', label: 'limit: register-only SIMD128 multiply-add peak', sample: loop(() => env.limit.exports.limit_peak(PEAK_ITERS, 0.999, 0.001)) });
  }
  if (env.native) {
    contenders.push({
      id: 'native',
      label: 'native C pe_attention',
      sample: env.native(`attn ${B} ${H} ${Sq} ${Sk} ${D} ${causal ? 1 : 0} ${alibi ? 1 : 0} ${rope ? 1 : 0}`),
    });
  }
  return {
    id: `attention/${kind}/${pos}`,
    group: 'attention',
    label: kind === 'decode' ? `attention decode: 1 query vs ${Sk} keys, ${H} heads x ${D}, ${pos}` : `attention [${B},${H},${Sq},${D}] causal, ${pos}`,
    params: { ...p, kind, pos, flops },
    flops,
    extraBytes: extra,
    contenders,
    check() {
      const res = {};
      for (const [id, o] of Object.entries(outs)) if (id !== 'raw') res[id] = maxAbsDiff(o, outs.raw);
      return res;
    },
    dispose() {
      for (const d of disposers.reverse()) d();
    },
  };
}

/**
 * Peak wasm memory of one attention call on a fresh instance of each module (compiled modules are reused):
 * the instance's memory size after placing q, k, v, out and running once. Returns { [id]: bytes }.
 */
export async function attentionMemory(instantiate, modules, { kind, pos }) {
  const Sq = kind === 'decode' ? 1 : 512;
  const Sk = kind === 'decode' ? 4096 : 512;
  const p = { B: 1, H: 8, Sq, Sk, D: 64, causal: true, alibi: pos === 'alibi', rope: pos === 'rope' };
  const q0 = fillRandom(new Float32Array(8 * Sq * 64), 31);
  const k0 = fillRandom(new Float32Array(8 * Sk * 64), 32);
  const out = {};
  if (modules.raw) {
    const r = await instantiate(modules.raw);
    const base = r.bytes;
    rawAttention(r, p, q0, k0, k0);
    out.raw = { bytes: r.bytes, baseBytes: base };
  }
  if (modules.unfused) {
    const u = await instantiate(modules.unfused);
    const base = u.bytes;
    rawUnfused(u, p, q0, k0, k0);
    out.unfused = { bytes: u.bytes, baseBytes: base };
  }
  return out;
}
