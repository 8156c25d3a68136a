// attention.js — pe.attention(q, k, v, options): fused scaled dot-product attention over c/src/attention.c,
//
//   out = softmax(scale · Q Kᵀ + bias) · V                 (Vaswani et al. 2017, 3.2.1)
//
// with the online softmax blocked over keys (Milakov & Gimelshein 2018; FlashAttention, Dao et al. 2022), so
// no (qLen × kLen) matrix exists unless `returnWeights` asks for one; RoPE (a pe.rope object: q and k are
// rotated on copies in the C core's scratch; with `kRotated`, k is a cache of keys already rotated, e.g. by
// rope.apply, and only q is rotated; an M-RoPE rope rotates by positions { q, k } of three streams in
// attention-mrope.js before the core, which then masks by token order) and ALiBi (slopes, no bias tensor) folded in; causal masking;
// grouped-query / multi-query attention (kvHeads dividing heads); qLen != kLen for decoding against a cache.
//
// Memory per call: copies of q, k, v and out when they are plain Float32Arrays (none for pe.tensor inputs),
// the C core's scratch (pe_attention_scratch_size: 0 without RoPE, rotated q and k plus cos/sin tables with
// it, q's only with kRotated), and the (batch, heads, qLen, kLen) weights only when requested. All of it lives in scratch slots that
// are reused from call to call, so the steady state allocates nothing and nothing grows with qLen · kLen.
//
// Positions: by default key j sits at position j and query i at kLen - qLen + i (the last qLen positions:
// decoding with a cache). They drive the causal mask (key j visible to query i iff kpos[j] <= qpos[i]),
// ALiBi (slope · (kpos[j] - qpos[i])) and RoPE. A fully masked query row (possible with causal and explicit
// positions, or qLen > kLen) gives an all-zero output row and an all-zero weights row.
//
// Real batches, in one call: positions { q, k } shared or per sequence (batch·qLen / batch·kLen), `mask`
// (batch·kLen, non-zero = attend) with `causal`, an additive `bias` of `biasShape` [1|batch, 1|heads, 1|qLen,
// kLen], `shape.vHeadDim` for v and out, `queryScale` (an array of qLen or batch·qLen factors, or the Llama 4
// temperature / llama_4_scaling_beta rule that pe.fromHFConfig puts in layer.queryScale, evaluated at the cache
// positions kLen − qLen + i as HF does), and views: `strides: { q, k, v, out }` ({ batch, seq, heads } elements)
// and `offsets`, each array checked to reach its view's furthest element before anything runs. One array given
// as q, k and v (a fused QKV buffer) is copied into wasm memory once.
//
// Storage: options.dtype 'float16' | 'bfloat16' (default: the type q carries) for q, k, v and out, as raw bits
// (Uint16Array), a Float16Array or a 16-bit pe.tensor (attention-data.js); the C core widens each block's rows and
// each tile's keys exactly, runs the float32 softmax and accumulation, and rounds out on store. Strides and
// offsets count elements of that type; everything else (positions, mask, bias, scales, weights) is unchanged.
//
// Files: this one checks the call as a whole, stages the data and runs the core; attention-inputs.js reads each
// option (shape, positions, views, mask, bias, queryScale); attention-data.js the storage type;
// attention-mrope.js the M-RoPE rotation.

import { checkInt, checkEnum, checkOptions, checkKnownKeys, knownKeys, typeError, rangeError, INT32_MAX } from './errors.js';
import { SLOT, MAX_TENSOR_LENGTH, stageFloat32, overlaps, copyOut, int32sLength, int32RangeErrorAt } from './memory.js';
import { attentionDtype, stageData, returnData, copyOutData, DTYPES } from './attention-data.js';
import {
  readShape,
  readPositions,
  readView,
  locateView,
  stagePositions,
  stageMask,
  stageQueryScale,
  readBias,
} from './attention-inputs.js';
import { ropeHandle, LAYOUTS } from './rope.js';
import { writeSlopes } from './alibi.js';
import { readLayout, limit } from './abi.js';
import { readMropeAttention, rotateMrope } from './attention-mrope.js';

const CONFIG_FIELDS = ['batch', 'heads', 'kv_heads', 'q_len', 'k_len', 'head_dim', 'layout', 'causal', 'scale',
  'alibi_slopes', 'rope', 'q_positions', 'k_positions', 'rope_seq_len', 'k_rotated', 'per_batch_positions',
  'key_mask', 'bias', 'bias_batch', 'bias_heads', 'bias_q_len', 'v_head_dim', 'q_scale', 'q_scale_per_batch',
  'q_strides', 'k_strides', 'v_strides', 'out_strides', 'q_offset', 'k_offset', 'v_offset', 'out_offset', 'dtype'];

const OPTION_KEYS = knownKeys('shape', 'layout', 'causal', 'rope', 'positions', 'mask', 'bias', 'biasShape', 'alibi', 'scale',
  'queryScale', 'kRotated', 'seqLen', 'dtype', 'returnWeights', 'out', 'strides', 'offsets');
const TENSORS = ['q', 'k', 'v', 'out'];
const TENSOR_KEYS = knownKeys(...TENSORS);
const VIEW_OPTIONS = ['strides', 'offsets'];
// the limits' names of the layouts, made once (not per call)
const LAYOUT_LIMITS = { bshd: 'PE_LAYOUT_BSHD', bhsd: 'PE_LAYOUT_BHSD' };
const STRIDE_FIELDS = TENSORS.map((t) => `${t}_strides`);
const OFFSET_FIELDS = TENSORS.map((t) => `${t}_offset`);

/** Reads pe_attention_config's layout from the module once per instance. */
export function readAttentionLayout(ctx) {
  return readLayout(ctx, 'pe_abi_attention_config_layout', CONFIG_FIELDS);
}

function writeConfig(ctx, c) {
  const { heap } = ctx;
  const { offsets: CFG, size } = ctx.attentionLayout;
  const cfg = heap.scratch(SLOT.CONFIG, size);
  heap.u8.fill(0, cfg, cfg + size);
  const dv = heap.dataView;
  const i32 = (name, v) => dv.setInt32(cfg + CFG[name], v ?? 0, true);
  const ptr = (name, v) => dv.setUint32(cfg + CFG[name], v ?? 0, true);
  i32('batch', c.batch);
  i32('heads', c.heads);
  i32('kv_heads', c.kvHeads);
  i32('q_len', c.qLen);
  i32('k_len', c.kLen);
  i32('head_dim', c.headDim);
  i32('layout', c.layout);
  i32('causal', c.causal ? 1 : 0);
  dv.setFloat32(cfg + CFG.scale, c.scale ?? 0, true);
  ptr('alibi_slopes', c.slopes);
  ptr('rope', c.rope);
  ptr('q_positions', c.qPos);
  ptr('k_positions', c.kPos);
  i32('rope_seq_len', c.seqLen);
  i32('k_rotated', c.kRotated ? 1 : 0);
  i32('per_batch_positions', c.perBatch ? 1 : 0);
  ptr('key_mask', c.mask);
  ptr('bias', c.bias);
  i32('bias_batch', c.biasShape?.[0]);
  i32('bias_heads', c.biasShape?.[1]);
  i32('bias_q_len', c.biasShape?.[2]);
  i32('v_head_dim', c.vHeadDim);
  ptr('q_scale', c.qScale);
  i32('q_scale_per_batch', c.qScalePerBatch ? 1 : 0);
  i32('dtype', c.dtype);
  // int64 strides and offsets: values in [0, 2^30) (checked), so the low word holds them and the high word,
  // zeroed by the fill above, stays 0 (BigInt conversions would cost more than the rest of the call)
  for (let t = 0; t < 4; t++) {
    const v = c.views[TENSORS[t]];
    if (!v.given) continue;
    const at = cfg + CFG[STRIDE_FIELDS[t]];
    dv.setUint32(at, v.strides[0], true);
    dv.setUint32(at + 8, v.strides[1], true);
    dv.setUint32(at + 16, v.strides[2], true);
    dv.setUint32(cfg + CFG[OFFSET_FIELDS[t]], v.offset, true);
  }
  return cfg;
}

function outOverlap(where, name) {
  return new RangeError(`${where}: options.out must not overlap ${name} (it is the accumulator)`);
}

// The C core refuses an out view whose head vectors overlap (the JS checks left nothing else for PE_ERR_SHAPE).
function outViewError(where) {
  return new RangeError(`${where}: options.strides.out must not make two output head vectors overlap (each is written once)`);
}

function checkSize(where, n, what) {
  if (n > MAX_TENSOR_LENGTH) throw new RangeError(`${where}: ${what} must be at most ${MAX_TENSOR_LENGTH}, got ${n}`);
}

/** pe.attention(q, k, v, options) -> { out, weights? } */
export function attention(ctx, q, k, v, options) {
  const where = 'attention';
  const { heap, exports: ex } = ctx;
  if (options === undefined || options === null) {
    throw typeError(where, 'options must be an object with options.shape { batch, heads, kvHeads, qLen, kLen, headDim }', options);
  }
  const o = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', o, OPTION_KEYS);
  for (const key of VIEW_OPTIONS) {
    const x = o[key];
    if (x === undefined || x === null) continue;
    if (typeof x !== 'object' || Array.isArray(x)) throw typeError(where, `options.${key} must be an object { q, k, v, out }`, x);
    checkKnownKeys(where, `options.${key}`, x, TENSOR_KEYS);
  }
  const out = o.out ?? null;
  // the storage type of q, k, v and out: options.dtype, or the type q carries; every one must be of it
  const dtype = attentionDtype(heap, where, o.dtype, q, k, v, out);
  const esz = dtype === 0 ? 4 : 2;
  const s = readShape(where, o.shape);
  const layoutName = checkEnum(where, 'options.layout', o.layout ?? 'bshd', LAYOUTS);
  const layout = limit(ctx.limits, LAYOUT_LIMITS[layoutName]);
  const bhsd = layoutName === 'bhsd';
  const causal = o.causal ?? false;
  if (typeof causal !== 'boolean') throw typeError(where, 'options.causal must be a boolean', causal);
  const returnWeights = o.returnWeights ?? false;
  if (typeof returnWeights !== 'boolean') throw typeError(where, 'options.returnWeights must be a boolean', returnWeights);
  const kRotated = o.kRotated ?? false;
  if (typeof kRotated !== 'boolean') throw typeError(where, 'options.kRotated must be a boolean', kRotated);

  // scale: the C core reads a float32 and treats 0 as "1/sqrt(headDim)", so 0 and values that round to 0 or
  // overflow in float32 are refused rather than silently replaced.
  let scale;
  if (o.scale !== undefined && o.scale !== null) {
    const sb = 'options.scale must be a finite number other than 0, within float32 range (omit it for 1/sqrt(headDim))';
    if (typeof o.scale !== 'number') throw typeError(where, sb, o.scale);
    const f = Math.fround(o.scale);
    if (!Number.isFinite(f) || f === 0) throw rangeError(where, sb, o.scale);
    scale = o.scale;
  }

  const nQ = s.batch * s.heads * s.qLen * s.headDim;
  const nK = s.batch * s.kvHeads * s.kLen * s.headDim;
  const nV = s.batch * s.kvHeads * s.kLen * s.vHeadDim;
  const nO = s.batch * s.heads * s.qLen * s.vHeadDim;
  checkSize(where, nQ, 'batch * heads * qLen * headDim (the size of q)');
  checkSize(where, nK, 'batch * kvHeads * kLen * headDim (the size of k)');
  checkSize(where, nV, 'batch * kvHeads * kLen * vHeadDim (the size of v)');
  checkSize(where, nO, 'batch * heads * qLen * vHeadDim (the size of out)');
  const nW = s.batch * s.heads * s.qLen * s.kLen;
  if (returnWeights && nW > MAX_TENSOR_LENGTH) {
    throw new RangeError(`${where}: batch * heads * qLen * kLen (the size of the weights) must be at most ${MAX_TENSOR_LENGTH} with returnWeights, got ${nW}`);
  }

  let rope = null;
  let mrope = null; // an M-RoPE rope: attention-mrope.js rotates q and k by three streams, the core gets no rope
  if (o.rope !== undefined && o.rope !== null) {
    rope = ropeHandle(ctx, o.rope, where, 'options.rope', true);
    if (rope.headDim !== s.headDim) {
      throw new RangeError(`${where}: options.shape.headDim must equal options.rope's headDim ${rope.headDim}, got ${s.headDim}`);
    }
    if (rope.mrope !== null) {
      // attention-mrope.js rotates float32 staged copies; 16-bit data (options.dtype, or the type q carries) would be misread
      if (dtype !== 0) throw new RangeError(`${where}: options.rope is an M-RoPE rope, which takes float32 q and k only (16-bit storage is not built for it); q, k, v are ${DTYPES[dtype]} data`);
      mrope = readMropeAttention(rope.mrope, where, o, s, kRotated);
      rope = null;
    }
  }
  const alibi = o.alibi ?? false; // true, false, or slopes (checked, each length and element read once, by writeSlopes)
  if (typeof alibi !== 'boolean' && (alibi === null || typeof alibi !== 'object')) {
    throw typeError(where, `options.alibi must be true (standard slopes), false, or a Float32Array of ${s.heads} slopes (one per query head)`, alibi);
  }
  const pos = readPositions(where, mrope === null ? o.positions : null, s.qLen, s.kLen, s.batch);
  const perBatch = s.batch > 1 && ((pos.q !== null && pos.qn !== s.qLen) || (pos.k !== null && !pos.tail && pos.kn !== s.kLen));
  if (rope !== null && pos.q === null && !pos.tail && s.qLen > s.kLen) {
    throw new RangeError(
      `${where}: with options.rope and default positions qLen (${s.qLen}) must be <= kLen (${s.kLen}) (query i sits at kLen - qLen + i, which must be >= 0); give options.positions.q`,
    );
  }
  let seqLen = 0;
  if (o.seqLen !== undefined && o.seqLen !== null) seqLen = checkInt(where, 'options.seqLen', o.seqLen, 1, INT32_MAX);
  let maskN = 0;
  if (o.mask !== undefined && o.mask !== null) {
    maskN = int32sLength(where, 'options.mask', o.mask, 'an integer (non-zero = attend)');
    if (maskN !== s.batch * s.kLen) throw new RangeError(`${where}: options.mask.length must equal batch * kLen (${s.batch * s.kLen}) (HF's attention_mask), got ${maskN}`);
  }

  // Views, then every float input located before any allocation (an allocation may detach a caller's view of wasm memory).
  const views = {
    q: readView(where, o, 'q', bhsd, s.batch, s.qLen, s.heads, s.headDim),
    k: readView(where, o, 'k', bhsd, s.batch, s.kLen, s.kvHeads, s.headDim),
    v: readView(where, o, 'v', bhsd, s.batch, s.kLen, s.kvHeads, s.vHeadDim),
    out: readView(where, o, 'out', bhsd, s.batch, s.qLen, s.heads, s.vHeadDim),
  };
  if (out === null && views.out.given) throw new TypeError(`${where}: options.strides.out / options.offsets.out need options.out (the array they address)`);
  const lq = locateView(heap, q, views.q, dtype, where, 'q');
  const lk = locateView(heap, k, views.k, dtype, where, 'k');
  const lv = locateView(heap, v, views.v, dtype, where, 'v');
  const lo = out === null ? { loc: -1, n: nO } : locateView(heap, out, views.out, dtype, where, 'options.out');
  const bias = readBias(heap, where, o, s);
  if (out !== null) {
    if (q === out || k === out || v === out) throw outOverlap(where, q === out ? 'q' : k === out ? 'k' : 'v');
    if (lo.loc !== -1) {
      if (lq.loc !== -1 && overlaps(lo.loc, lo.n * esz, lq.loc, lq.n * esz)) throw outOverlap(where, 'q');
      if (lk.loc !== -1 && overlaps(lo.loc, lo.n * esz, lk.loc, lk.n * esz)) throw outOverlap(where, 'k');
      if (lv.loc !== -1 && overlaps(lo.loc, lo.n * esz, lv.loc, lv.n * esz)) throw outOverlap(where, 'v');
    }
  }

  // Small inputs next (they are checked while written), then the big copies.
  let slopes = 0;
  if (alibi === true) {
    slopes = heap.scratch(SLOT.SLOPES, s.heads * 4);
    const st = ex.pe_alibi_slopes(slopes, s.heads);
    if (st !== 0) throw ctx.statusError(where, st);
  } else if (alibi !== false) {
    slopes = writeSlopes(ctx, where, 'options.alibi', alibi, s.heads);
  }
  // Positions are staged once; in the one-array form the query positions are the tail of the staged keys.
  const kPos = pos.k === null ? 0 : stagePositions(heap, SLOT.KPOS, where, pos.kName, pos.k, pos.kn, s.kLen, s.batch, perBatch);
  const qPos = pos.tail
    ? kPos + (s.kLen - s.qLen) * 4
    : pos.q === null
      ? 0
      : stagePositions(heap, SLOT.POS, where, pos.qName, pos.q, pos.qn, s.qLen, s.batch, perBatch);
  const mask = maskN === 0 ? 0 : stageMask(heap, where, o.mask, maskN);
  const qScale = stageQueryScale(ctx, where, o.queryScale, s);

  // Big copies; one array given as several of q, k, v (a fused QKV buffer) is copied once.
  let qPtr = stageData(heap, q, lq.loc, lq.n, dtype, SLOT.Q, where);
  let kPtr = k === q ? qPtr : stageData(heap, k, lk.loc, lk.n, dtype, SLOT.K, where);
  const vPtr = v === q ? qPtr : v === k ? kPtr : stageData(heap, v, lv.loc, lv.n, dtype, SLOT.V, where);
  const biasPtr = bias === null ? 0 : stageFloat32(heap, o.bias, bias.loc, bias.n, SLOT.BIAS, where);
  // a staged out with a view is copied in too, so the elements outside the view come back unchanged
  const outPtr = out === null ? heap.scratch(SLOT.RESULT, nO * esz, where, 'the output') : stageData(heap, out, lo.loc, lo.n, dtype, SLOT.RESULT, where, views.out.given);
  const weights = returnWeights ? heap.scratch(SLOT.WEIGHTS, nW * 4, where, 'the weights (batch * heads * qLen * kLen floats)') : 0;
  if (mrope !== null) ({ qPtr, kPtr } = rotateMrope(ctx, mrope, { qPtr, kPtr, vPtr, lq, lk, views, s, layout, seqLen }, where));

  // (no `{ ...s, more }` here: in V8 11 an object spread followed by more properties makes fresh hidden classes
  // on every call, which cost ~50 µs a call and fed the GC; this literal has one shape)
  const cfg = writeConfig(ctx, {
    batch: s.batch, heads: s.heads, kvHeads: s.kvHeads, qLen: s.qLen, kLen: s.kLen, headDim: s.headDim, vHeadDim: s.vHeadDim,
    layout, causal, scale, slopes, rope: rope === null ? 0 : rope.ptr, qPos, kPos, seqLen, kRotated, perBatch, mask,
    bias: biasPtr, biasShape: bias === null ? null : bias.shape, qScale: qScale.ptr, qScalePerBatch: qScale.perBatch, views, dtype,
  });
  const sizePtr = heap.scratch(SLOT.OUT, 16);
  let status = ex.pe_attention_scratch_size(sizePtr, cfg);
  if (status === ctx.status.PE_ERR_SHAPE && views.out.given) throw outViewError(where);
  if (status !== 0) throw ctx.statusError(where, status);
  const nScratch = heap.dataView.getUint32(sizePtr, true);
  const qRows = pos.q !== null && perBatch ? s.batch * s.qLen : s.qLen;
  const kRows = pos.k !== null && perBatch ? s.batch * s.kLen : s.kLen;
  let expected = rope === null ? 0 : kRotated ? nQ + 2 * qRows * rope.nFreq : nQ + nK + 2 * (qRows + kRows) * rope.nFreq;
  if (dtype !== 0) { // posenc.h, pe_attention_scratch_size: a block's q / out rows and a tile's k / v rows in float32
    const rows = Math.min(32, (s.heads / s.kvHeads) * s.qLen);
    const keys = Math.min(512, s.kLen);
    expected += (rows + keys) * s.vHeadDim + (rope === null ? rows * s.headDim : 0) + (rope === null || kRotated ? keys * s.headDim : 0);
  }
  if (nScratch !== expected) {
    throw new Error(
      `posenc: the wasm module's pe_attention_config does not match this wrapper (scratch ${nScratch} floats, expected ${expected}); rebuild the wasm and the JS together`,
    );
  }
  const scratch = nScratch > 0 ? heap.scratch(SLOT.WORK, nScratch * 4, where, 'the attention scratch') : 0;

  status = ex.pe_attention(outPtr, weights, qPtr, kPtr, vPtr, scratch, nScratch, cfg);
  if (status !== 0) {
    if (status === ctx.status.PE_ERR_POSITION) {
      const e =
        (kPos !== 0 && int32RangeErrorAt(heap, kPos, perBatch ? s.batch * s.kLen : s.kLen, where, pos.kName, 0, INT32_MAX)) ||
        (qPos !== 0 && !pos.tail && int32RangeErrorAt(heap, qPos, perBatch ? s.batch * s.qLen : s.qLen, where, pos.qName, 0, INT32_MAX));
      if (e) throw e;
    }
    throw ctx.statusError(where, status);
  }
  const result = { out: out === null ? copyOutData(heap, outPtr, nO, dtype) : returnData(heap, out, lo.loc, outPtr, lo.n, dtype) };
  if (returnWeights) result.weights = copyOut(heap, weights, nW);
  return result;
}
