// seeds.mjs — writes the committed seed corpora fuzz/corpus/<name>/ for the RoPE, attention and twins harnesses:
// the configs and shapes the C and JS tests use (Llama 3, YaRN, LongRoPE, dynamic NTK, GPT-NeoX partial
// rotary, GPT-J interleaved, GQA decode, causal prefill with ALiBi...), encoded as the byte choices each
// harness reads (fuzz/fuzz.h: fuzz_range, fuzz_bool, fuzz_int32, fuzz_double), in the order it reads them.
//   node fuzz/seeds.mjs        (rewrites fuzz/corpus/{rope_init,rope_apply,attention,simd_twins}/)
// When a harness changes the order of its reads, change its encoder here and run this again. Shapes stay
// within the harnesses' work bounds (fuzz_attention: 2^16 multiply-adds, fuzz_rope_apply: 2^15 elements).

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

class Bytes {
  constructor() {
    this.b = [];
  }
  raw(v, n) {
    let x = BigInt.asUintN(64, BigInt(v));
    for (let i = 0; i < n; i++, x >>= 8n) this.b.push(Number(x & 0xffn));
    return this;
  }
  // fuzz_range(lo, hi) reading v: as many bytes as the span needs, v - lo little-endian
  range(lo, hi, v) {
    if (v < lo || v > hi) throw new RangeError(`seed value ${v} outside [${lo}, ${hi}]`);
    const span = hi - lo;
    const n = span < 0x100 ? 1 : span < 0x10000 ? 2 : span < 0x100000000 ? 4 : 8;
    return this.raw(v - lo, n);
  }
  bool(b) {
    return this.raw(b ? 1 : 0, 1);
  }
  // fuzz_int32 taking its "ordinary" branch (selector 2) with v in [0, max]
  int32(max, v) {
    return this.raw(2, 1).range(0, max, v);
  }
  // fuzz_double taking its raw branch (selector 1): exactly v
  double(v) {
    const dv = new DataView(new ArrayBuffer(8));
    dv.setFloat64(0, v, true);
    this.raw(1, 1);
    for (let i = 0; i < 8; i++) this.b.push(dv.getUint8(i));
    return this;
  }
  optDouble(v) {
    return v === undefined ? this.bool(false) : this.bool(true).double(v);
  }
  optInt32(max, v) {
    return v === undefined ? this.bool(false) : this.bool(true).int32(max, v);
  }
  tail(seed) {
    // what the harness seeds its tensor PRNG with
    return this.raw(seed, 4);
  }
}

const TYPES = { default: 0, linear: 1, dynamic: 2, yarn: 3, longrope: 4, llama3: 5, proportional: 6 };

// ---- fuzz_rope_init: random_config, then two positions, seq_len choice, extra_scale ---------------------
function ropeInit(c, { pos4 = 131071, pos5 = 4096, fromPositions = true, extra } = {}) {
  const e = new Bytes();
  e.range(-1, 7, TYPES[c.type ?? 'default']);
  if (c.headDim % 2 === 0 && c.headDim <= 256) e.bool(true).range(1, 128, c.headDim / 2);
  else e.bool(false).int32(1026, c.headDim);
  if (c.rotaryDim === undefined) e.bool(false);
  else e.bool(true).bool(false).int32(300, c.rotaryDim);
  e.range(-1, 2, c.pairing ?? 0);
  e.optDouble(c.base).optDouble(c.factor).optInt32(1 << 20, c.maxPos).optInt32(1 << 17, c.origMax);
  e.optDouble(c.attentionFactor).optDouble(c.betaFast).optDouble(c.betaSlow).optDouble(c.mscale).optDouble(c.mscaleAllDim);
  e.bool(c.noTruncate ?? false);
  e.optDouble(c.low).optDouble(c.high);
  if (c.factors) e.bool(true).double(c.factors[0]).double(c.factors[1]).bool(false);
  else e.bool(false);
  e.range(0, 2147483647, pos4).range(0, 1 << 17, pos5).bool(fromPositions);
  if (extra === undefined) e.bool(true);
  else e.bool(false).double(extra);
  return e.b;
}

const ROPE_CONFIGS = {
  'default-64': { headDim: 64 },
  'default-128-base-1e6': { headDim: 128, base: 1e6 },
  'llama3-128': { type: 'llama3', headDim: 128, base: 500000, factor: 8, low: 1, high: 4, origMax: 8192 },
  'yarn-128-factor-4': { type: 'yarn', headDim: 128, base: 10000, factor: 4, origMax: 4096, maxPos: 16384 },
  'yarn-deepseek-mscale': { type: 'yarn', headDim: 64, base: 10000, factor: 40, origMax: 4096, maxPos: 163840, mscale: 1, mscaleAllDim: 1, betaFast: 32, betaSlow: 1 },
  'yarn-no-truncate': { type: 'yarn', headDim: 64, factor: 32, origMax: 4096, noTruncate: true },
  'longrope-phi3': { type: 'longrope', headDim: 96, base: 10000, maxPos: 131072, origMax: 4096, factors: [1.05, 1.5] },
  'dynamic-128': { type: 'dynamic', headDim: 128, factor: 2, maxPos: 2048 },
  'linear-factor-4': { type: 'linear', headDim: 128, factor: 4 },
  'neox-partial-0.25': { headDim: 256, rotaryDim: 64, base: 10000 },
  'gptj-interleaved': { headDim: 256, rotaryDim: 64, pairing: 1 },
  'interleaved-32': { headDim: 32, pairing: 1 },
  'proportional-256': { type: 'proportional', headDim: 256, rotaryDim: 64, base: 1e6 },
  'head-dim-2': { headDim: 2 },
  'head-dim-1024': { headDim: 1024 },
  'head-dim-odd': { headDim: 65 },
  'base-small': { headDim: 8, base: 1.5 },
};
const ropeInitSeeds = {};
for (const [name, c] of Object.entries(ROPE_CONFIGS)) ropeInitSeeds[name] = ropeInit(c);
ropeInitSeeds['llama3-top-position'] = ropeInit(ROPE_CONFIGS['llama3-128'], { pos4: 2147483647 });
ropeInitSeeds['yarn-extra-scale-half'] = ropeInit(ROPE_CONFIGS['yarn-128-factor-4'], { extra: 0.5 });
ropeInitSeeds['dynamic-seq-none'] = ropeInit(ROPE_CONFIGS['dynamic-128'], { fromPositions: false });
ropeInitSeeds['linear-factor-1e-10'] = ropeInit({ type: 'linear', headDim: 2, factor: 1e-10 }); // issue 10, class 5
ropeInitSeeds['base-5e-324'] = ropeInit({ headDim: 64, base: 5e-324 });
ropeInitSeeds['yarn-mscale-1e300'] = ropeInit({ type: 'yarn', headDim: 64, factor: 4, origMax: 4096, mscale: 1e300, mscaleAllDim: 1 });

// ---- fuzz_rope_apply: make_rope, shape, layout, rotation, rows, positions, seq_len, extra_scale, view ---
function ropeApply(r, s) {
  const e = new Bytes();
  if (r.headDim <= 40) e.bool(true).range(1, 20, r.headDim / 2);
  else e.bool(false).range(1, 160, r.headDim / 2);
  if (r.rotaryDim === undefined) e.bool(false);
  else e.bool(true).range(1, r.headDim / 2, r.rotaryDim / 2);
  e.range(0, 1, r.pairing ?? 0);
  const kind = { default: 0, linear: 1, dynamic: 2, proportional: 3 }[r.type ?? 'default'];
  e.range(0, 3, kind);
  if (kind === 1) e.range(1, 64, r.factor);
  else if (kind === 2) e.range(1, 16, r.factor);
  else if (kind === 0) r.base === undefined ? e.bool(false) : e.bool(true).range(2, 5000000, r.base);
  e.range(-1, 4, s.batch).range(-1, 40, s.seq).range(-1, 9, s.heads);
  e.range(-1, 2, s.layout ?? 0).range(-1, 2, s.rotation ?? 0).bool(s.perBatch ?? false);
  e.range(0, 3, s.wild ? 0 : 1);
  if (s.seqLen === undefined) e.bool(true);
  else e.bool(false).range(0, 1 << 16, s.seqLen);
  if (s.extra === undefined) e.bool(true);
  else e.bool(false).double(s.extra);
  // the view: 0 dense, 1 gaps after each head / row / batch and an offset, 2 explicit strides
  const v = s.view ?? { kind: 0 };
  e.range(0, 3, v.kind);
  const D = r.headDim, H = Math.max(s.heads, 1), S = Math.max(s.seq, 1);
  if (v.kind === 1) e.range(0, 5, v.gaps[0]).range(0, 9, v.gaps[1]).range(0, 17, v.gaps[2]).range(0, 33, v.offset);
  if (v.kind === 2) e.range(-1, 4 * D * H * S, v.strides[0]).range(-1, 3 * D * H, v.strides[1]).range(-1, 3 * D, v.strides[2]).range(-1, 9, v.offset);
  return e.tail(s.seed ?? 1).b;
}
const ropeApplySeeds = {
  'llama-bshd-decode': ropeApply({ headDim: 128, base: 500000 }, { batch: 1, seq: 1, heads: 8 }),
  'llama-bshd-prefill': ropeApply({ headDim: 64 }, { batch: 2, seq: 17, heads: 4 }),
  'bhsd-half': ropeApply({ headDim: 64 }, { batch: 1, seq: 9, heads: 3, layout: 1 }),
  'bhsd-interleaved': ropeApply({ headDim: 32, pairing: 1 }, { batch: 2, seq: 5, heads: 2, layout: 1 }),
  'interleaved-odd-pairs': ropeApply({ headDim: 14, pairing: 1 }, { batch: 1, seq: 3, heads: 5 }),
  'neox-partial': ropeApply({ headDim: 256, rotaryDim: 64 }, { batch: 1, seq: 4, heads: 2 }),
  'gptj-partial-interleaved': ropeApply({ headDim: 256, rotaryDim: 64, pairing: 1 }, { batch: 1, seq: 3, heads: 2 }),
  'per-batch-rows': ropeApply({ headDim: 64 }, { batch: 3, seq: 6, heads: 2, perBatch: true }),
  'inverse-rotation': ropeApply({ headDim: 64 }, { batch: 1, seq: 8, heads: 2, rotation: 1 }),
  'wild-positions': ropeApply({ headDim: 32 }, { batch: 1, seq: 7, heads: 1, wild: true }),
  'linear-factor-8': ropeApply({ headDim: 64, type: 'linear', factor: 8 }, { batch: 1, seq: 12, heads: 2 }),
  'dynamic-seq-len': ropeApply({ headDim: 64, type: 'dynamic', factor: 4 }, { batch: 1, seq: 10, heads: 1, seqLen: 9000 }),
  'proportional': ropeApply({ headDim: 64, rotaryDim: 16, type: 'proportional' }, { batch: 1, seq: 5, heads: 2 }),
  'head-dim-2': ropeApply({ headDim: 2 }, { batch: 2, seq: 40, heads: 9 }),
  'head-dim-6-tail': ropeApply({ headDim: 6 }, { batch: 1, seq: 11, heads: 3 }),
  'extra-scale': ropeApply({ headDim: 64 }, { batch: 1, seq: 4, heads: 2, extra: 0.75 }),
  'batch-0': ropeApply({ headDim: 64 }, { batch: 0, seq: 4, heads: 2 }),
  'seq-0': ropeApply({ headDim: 64 }, { batch: 2, seq: 0, heads: 2 }),
  'heads-0': ropeApply({ headDim: 64 }, { batch: 1, seq: 3, heads: 0 }),
  'negative-batch': ropeApply({ headDim: 64 }, { batch: -1, seq: 3, heads: 1 }),
  'bad-layout': ropeApply({ headDim: 64 }, { batch: 1, seq: 3, heads: 1, layout: 2 }),
  'bad-rotation': ropeApply({ headDim: 64 }, { batch: 1, seq: 3, heads: 1, rotation: -1 }),
  // views (pe_rope_apply_config.strides / offset), as the header's examples
  'fused-qkv-per-head-gaps': ropeApply({ headDim: 16 }, { batch: 2, seq: 5, heads: 3, view: { kind: 1, gaps: [5, 0, 0], offset: 16 } }),
  'bshd-row-and-batch-gaps': ropeApply({ headDim: 8, pairing: 1 }, { batch: 3, seq: 4, heads: 2, view: { kind: 1, gaps: [0, 9, 17], offset: 3 } }),
  'bhsd-cache-spare-capacity': ropeApply({ headDim: 32 }, { batch: 1, seq: 6, heads: 2, layout: 1, view: { kind: 1, gaps: [0, 9, 0], offset: 0 } }),
  'explicit-strides': ropeApply({ headDim: 8 }, { batch: 2, seq: 3, heads: 2, view: { kind: 2, strides: [96, 32, 8], offset: 5 } }),
  'overlapping-strides': ropeApply({ headDim: 8 }, { batch: 1, seq: 3, heads: 2, view: { kind: 2, strides: [0, 8, 4], offset: 0 } }),
  'negative-stride': ropeApply({ headDim: 8 }, { batch: 1, seq: 3, heads: 2, view: { kind: 2, strides: [0, -1, 8], offset: 0 } }),
};

// ---- fuzz_attention ----------------------------------------------------------------------------------------
function attention(a) {
  const e = new Bytes();
  e.range(-1, 3, a.batch).range(-1, 4, a.kvHeads);
  if (a.groups !== undefined) e.bool(true).range(1, 4, a.groups);
  else e.bool(false).range(-1, 9, a.heads);
  const shortQ = a.qLen <= 4;
  e.bool(shortQ).range(-1, shortQ ? 4 : 80, a.qLen);
  const longK = a.kLen > 130;
  e.range(0, 7, longK ? 0 : 1).range(-1, longK ? 1100 : 130, a.kLen);
  const shortD = a.headDim <= 16;
  e.bool(shortD).range(-1, shortD ? 16 : 136, a.headDim);
  e.range(-1, 2, a.layout ?? 0).range(0, 2, a.causal ? 1 : 0);
  e.optDouble(a.scale);
  e.bool(!!a.alibi).bool(!!a.rope).bool(!!a.positions);
  if (a.positions) e.range(0, 3, a.wild ? 0 : 1);
  e.bool(!!a.weights);
  if (a.rope) {
    e.range(0, 7, 1); // the rope's head_dim is the attention's
    if (a.rope.rotaryDim === undefined) e.bool(false);
    else e.bool(true).range(1, a.headDim / 2, a.rope.rotaryDim / 2);
    e.bool(!!a.rope.interleaved).bool(!!a.rope.dynamic).bool(!!a.rope.kRotated);
    a.rope.seqLen === undefined ? e.bool(false) : e.bool(true).int32(1 << 12, a.rope.seqLen);
  }
  return e.tail(a.seed ?? 7).b;
}
const attentionSeeds = {
  'mha-decode': attention({ batch: 1, kvHeads: 4, groups: 1, qLen: 1, kLen: 100, headDim: 64 }),
  'gqa-decode-long': attention({ batch: 1, kvHeads: 1, groups: 2, qLen: 1, kLen: 1100, headDim: 16, causal: true }),
  'mqa-decode': attention({ batch: 2, kvHeads: 1, groups: 4, qLen: 1, kLen: 130, headDim: 32 }),
  'prefill-causal': attention({ batch: 1, kvHeads: 1, groups: 2, qLen: 32, kLen: 64, headDim: 8, causal: true }),
  'prefill-bhsd': attention({ batch: 1, kvHeads: 2, groups: 1, qLen: 33, kLen: 65, headDim: 12, layout: 1, causal: true }),
  'alibi-causal': attention({ batch: 1, kvHeads: 2, groups: 2, qLen: 17, kLen: 40, headDim: 16, causal: true, alibi: true }),
  'alibi-positions': attention({ batch: 1, kvHeads: 2, groups: 1, qLen: 5, kLen: 90, headDim: 8, alibi: true, positions: true }),
  'rope-half': attention({ batch: 1, kvHeads: 2, groups: 2, qLen: 9, kLen: 24, headDim: 64, causal: true, rope: {} }),
  'rope-interleaved-partial': attention({ batch: 1, kvHeads: 1, groups: 3, qLen: 4, kLen: 50, headDim: 32, rope: { interleaved: true, rotaryDim: 16 } }),
  'rope-k-rotated': attention({ batch: 1, kvHeads: 2, groups: 1, qLen: 1, kLen: 120, headDim: 16, causal: true, rope: { kRotated: true } }),
  'rope-dynamic-seq-len': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 3, kLen: 100, headDim: 16, rope: { dynamic: true, seqLen: 4000 } }),
  'rope-alibi-positions': attention({ batch: 2, kvHeads: 2, groups: 2, qLen: 6, kLen: 70, headDim: 8, causal: true, alibi: true, rope: {}, positions: true }),
  'weights': attention({ batch: 1, kvHeads: 2, groups: 1, qLen: 7, kLen: 70, headDim: 12, causal: true, weights: true }),
  'weights-alibi': attention({ batch: 2, kvHeads: 1, groups: 2, qLen: 3, kLen: 9, headDim: 5, alibi: true, weights: true }),
  'head-dim-1': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 3, kLen: 5, headDim: 1 }),
  'head-dim-odd-tail': attention({ batch: 1, kvHeads: 3, groups: 1, qLen: 5, kLen: 67, headDim: 37 }),
  'head-dim-136': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 2, kLen: 33, headDim: 136 }),
  'q-longer-than-k': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 20, kLen: 6, headDim: 8, causal: true }),
  'explicit-scale': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 4, kLen: 20, headDim: 16, scale: 0.125 }),
  'wild-positions': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 4, kLen: 12, headDim: 8, causal: true, alibi: true, positions: true, wild: true }),
  'heads-not-divisible': attention({ batch: 1, kvHeads: 3, heads: 4, qLen: 2, kLen: 8, headDim: 8 }),
  'batch-0': attention({ batch: 0, kvHeads: 1, groups: 1, qLen: 2, kLen: 8, headDim: 8 }),
  'k-len-0': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 2, kLen: 0, headDim: 8 }),
  'q-len-0': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 0, kLen: 8, headDim: 8 }),
  'bad-layout': attention({ batch: 1, kvHeads: 1, groups: 1, qLen: 2, kLen: 8, headDim: 8, layout: 2 }),
};

// ---- fuzz_simd_twins: mode 0 RoPE, 1 attention, 2 sinusoidal + ALiBi --------------------------------------
const TWIN_TYPES = { default: 0, linear: 1, dynamic: 2, yarn: 3, llama3: 4 };
function twinRope(e, headDim, r = {}) {
  if (r.rotaryDim === undefined) e.bool(false);
  else e.bool(true).range(1, headDim / 2, r.rotaryDim / 2);
  e.bool(!!r.interleaved);
  const t = TWIN_TYPES[r.type ?? 'default'];
  e.range(0, 4, t);
  if (t === 1) e.range(1, 64, r.factor);
  if (t === 3) e.range(2, 40, r.factor);
  return r.base === undefined ? e.bool(false) : e.bool(true).range(2, 5000000, r.base);
}
function twinsRope(r, s) {
  const e = new Bytes().range(0, 2, 0);
  const small = r.headDim <= 24;
  e.bool(small).range(1, small ? 12 : 160, r.headDim / 2);
  twinRope(e, r.headDim, r);
  e.range(0, 3, s.batch).range(0, 24, s.seq).range(1, 6, s.heads).bool(!!s.perBatch).bool(!!s.bhsd).bool(!!s.inverse);
  e.bool(!!s.top).bool(!!s.fromPositions);
  if (s.gaps) e.bool(true).range(0, 5, s.gaps[0]).range(0, 9, s.gaps[1]).range(0, 17, s.gaps[2]).range(0, 33, s.offset);
  else e.bool(false);
  return e.tail(s.seed ?? 3).b;
}
function twinsAttention(a) {
  const e = new Bytes().range(0, 2, 1);
  e.range(1, 2, a.batch).range(1, 3, a.kvHeads).range(1, 3, a.groups);
  const longK = a.kLen > 140;
  e.range(0, 5, longK ? 0 : 1).range(0, longK ? 1100 : 140, a.kLen);
  const shortQ = a.qLen <= 2;
  e.bool(shortQ).range(0, shortQ ? 2 : 80, a.qLen);
  e.bool(!!a.rope);
  if (a.rope) e.range(1, 40, a.headDim / 2);
  else e.range(1, 80, a.headDim);
  e.bool(!!a.bhsd).bool(!!a.causal);
  a.scale64 === undefined ? e.bool(false) : e.bool(true).range(1, 100, a.scale64);
  e.bool(!!a.alibi).bool(!!a.positions).bool(!!a.weights);
  if (a.rope) twinRope(e, a.headDim, a.rope).bool(!!a.rope.kRotated);
  return e.tail(a.seed ?? 5).b;
}
function twinsTables(t) {
  const e = new Bytes().range(0, 2, 2);
  e.range(0, 16, t.seq).range(1, 200, t.dModel).range(0, 2, t.variant ?? 0);
  if (t.offset > 5000) e.bool(true).range(0, 2147483647 - 16, t.offset);
  else e.bool(false).range(0, 5000, t.offset ?? 0);
  t.base === undefined ? e.bool(false) : e.bool(true).range(2, 1000000, t.base);
  e.range(1, 40, t.heads).range(0, 24, t.qLen).range(0, 90, t.kLen).bool(!!t.causal);
  return e.b;
}
const twinsSeeds = {
  'rope-llama3-decode': twinsRope({ headDim: 128, type: 'llama3', base: 500000 }, { batch: 1, seq: 1, heads: 4 }),
  'rope-half-prefill': twinsRope({ headDim: 64 }, { batch: 2, seq: 17, heads: 3 }),
  'rope-interleaved-bhsd': twinsRope({ headDim: 38, interleaved: true }, { batch: 1, seq: 9, heads: 2, bhsd: true }),
  'rope-partial-tail': twinsRope({ headDim: 22, rotaryDim: 14 }, { batch: 1, seq: 5, heads: 5, perBatch: true }),
  'rope-yarn-top-positions': twinsRope({ headDim: 64, type: 'yarn', factor: 16 }, { batch: 1, seq: 6, heads: 1, top: true }),
  'rope-fused-view': twinsRope({ headDim: 40 }, { batch: 2, seq: 5, heads: 3, gaps: [3, 9, 1], offset: 17 }),
  'rope-bhsd-cache-view': twinsRope({ headDim: 24, interleaved: true }, { batch: 1, seq: 7, heads: 2, bhsd: true, gaps: [0, 9, 0], offset: 0 }),
  'rope-dynamic-inverse': twinsRope({ headDim: 32, type: 'dynamic' }, { batch: 1, seq: 7, heads: 2, inverse: true, fromPositions: true }),
  'attn-decode-long': twinsAttention({ batch: 1, kvHeads: 1, groups: 2, qLen: 1, kLen: 1100, headDim: 24, causal: true }),
  'attn-prefill-causal': twinsAttention({ batch: 1, kvHeads: 2, groups: 1, qLen: 37, kLen: 70, headDim: 12, causal: true }),
  'attn-alibi-weights': twinsAttention({ batch: 2, kvHeads: 1, groups: 3, qLen: 9, kLen: 66, headDim: 7, alibi: true, weights: true }),
  'attn-rope-positions': twinsAttention({ batch: 1, kvHeads: 2, groups: 2, qLen: 5, kLen: 90, headDim: 16, causal: true, positions: true, rope: {} }),
  'attn-rope-k-rotated-bhsd': twinsAttention({ batch: 1, kvHeads: 1, groups: 1, qLen: 2, kLen: 130, headDim: 34, bhsd: true, rope: { interleaved: true, kRotated: true } }),
  'attn-head-dim-33': twinsAttention({ batch: 1, kvHeads: 3, groups: 1, qLen: 6, kLen: 67, headDim: 33, scale64: 9 }),
  'tables-interleaved': twinsTables({ seq: 12, dModel: 130, heads: 8, qLen: 10, kLen: 70, causal: true }),
  'tables-half-offset': twinsTables({ seq: 5, dModel: 33, variant: 1, offset: 2147480000, heads: 12, qLen: 1, kLen: 89 }),
  'tables-t2t': twinsTables({ seq: 16, dModel: 200, variant: 2, base: 500, heads: 5, qLen: 24, kLen: 24 }),
};

for (const [name, seeds] of [['rope_init', ropeInitSeeds], ['rope_apply', ropeApplySeeds], ['attention', attentionSeeds], ['simd_twins', twinsSeeds]]) {
  const dir = path.join(HERE, 'corpus', name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const [file, bytes] of Object.entries(seeds)) fs.writeFileSync(path.join(dir, file), Uint8Array.from(bytes));
  console.log(`fuzz/corpus/${name}/: ${Object.keys(seeds).length} seeds`);
}
