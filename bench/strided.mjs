// strided.mjs — rope.apply on strided views against the same work on dense tensors (issue 11: "strided vs
// dense apply, within 1.1x"). Every contender is posenc SIMD through the public API with pe.tensor inputs
// (zero-copy), q and k rotated in one call from one table, positions fixed so the table is cached (the
// rotation is what is compared). Part of `npm run bench` (measure(), the interface in targets.mjs).
//   node bench/strided.mjs [--quick] [--rounds N]
// The same kernel rotates the same bytes in the same head order either way (q and k as two views, also inside
// one fused buffer); a per-token fused buffer interleaves the untouched v heads between the tokens' q | k
// blocks, so past L2 the memory system streams it less well: the in-place pass below, in posenc's order, pays
// about what posenc pays on the views (prefill 512: 1.5-1.7x against posenc's 1.4-1.7x, in the same rounds, a
// loaded 2-core EPYC VM), and about what one contiguous pass over the whole buffer, v included, costs.
// The ceiling that says so: in the same rounds, limit.wasm's in-place `x *= s` pass (bench/wasm/limit_strided.c)
// walks exactly the same q and k regions in posenc's order, and their dense copies; its own strided / dense
// ratio is what the memory system charges for the views alone, with the least possible work per byte.
// Placement: pe.tensor's blocks come from malloc, 8-byte aligned, so a view may start 8 bytes past a 16-byte
// boundary, where one v128 load in four splits a cache line (a bhsd cache so placed ran ~1.12x slower than
// the same cache 64-byte aligned, side by side). Every view here (posenc's and the pass's) starts on a
// 64-byte boundary (`offset` / `kOffset` into a block 64 bytes larger), so the rows compare strides, not
// where malloc put each block; the cache row also times its strided view 8 bytes off, as malloc may place it.
import { compare, fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { instantiateRaw } from './raw.mjs';
import { rowFrom, standalone } from './targets.mjs';

let pe;
let ROUNDS = 15;
let MIN_SAMPLE = 0.02;
const TARGET = 1.1;
const MiB = (floats) => (floats * 4 < 2 ** 20 ? `${(floats * 4) / 1024} KiB` : `${((floats * 4) / 2 ** 20).toFixed(1)} MiB`);

/**
 * bench/build/limit.wasm with the strided passes (bash bench/build.sh), or null: the rows are then measured
 * without a ceiling. opts.limit: a raw handle a runner already has.
 */
async function loadLimit(opts) {
  const has = (L) => typeof L?.exports?.limit_inplace_rows === 'function' && typeof L.exports.limit_inplace_heads === 'function' && typeof L.exports.limit_inplace_pairs === 'function';
  if (has(opts.limit)) return opts.limit;
  const url = new URL('./build/limit.wasm', import.meta.url);
  try {
    let bytes;
    if (globalThis.process?.versions?.node) {
      const { readFile } = await import('node:fs/promises');
      bytes = await readFile(url);
    } else {
      const r = await fetch(url);
      if (!r.ok) return null;
      bytes = new Uint8Array(await r.arrayBuffer());
    }
    const L = await instantiateRaw(bytes);
    return has(L) ? L : null;
  } catch {
    return null;
  }
}

const PAD = 16; // floats: 64 bytes of room to move a view to a 64-byte boundary (or `skew` bytes past one)

/** A random float32 block in limit.wasm's memory, its first float `skew` bytes past a 64-byte boundary. */
function block(L, n, seed, frees, skew = 0) {
  const p = L.malloc(n * 4 + 2 * PAD * 4);
  frees.push(() => L.free(p));
  const a = p + ((((skew - p) % 64) + 64) % 64);
  L.f32(a, n).set(fillRandom(new Float32Array(n), seed));
  return a;
}

/** A pe.tensor of n floats (+ PAD) and the element offset at which a view starts `skew` bytes past a 64-byte boundary. */
function placed(n, seed) {
  const t = pe.tensor(fillRandom(new Float32Array(n + 2 * PAD), seed));
  return { t, at: (skew = 0) => ((((skew - t.array.byteOffset) % 64) + 64) % 64) / 4, mod: t.array.byteOffset % 64 };
}

/**
 * Every contender side by side in interleaved rounds (compare(): calibrated batches, the order rotating each
 * round, so all see the same drift of a shared machine); rowFrom: per-round ratios.
 */
async function measureAll(samplers) {
  const { results } = await compare(Object.entries(samplers).map(([id, sample]) => ({ id, sample })), { rounds: ROUNDS, minSample: MIN_SAMPLE });
  const pair = (a, b) => (results[a] && results[b] ? rowFrom(results, a, b, {}) : null);
  return { results, pair };
}

const fmtR = (r) => (r && r.ratio != null ? `${r.ratio.toFixed(2)}×${r.lo != null && r.lo !== r.hi ? ` (${r.lo.toFixed(2)}–${r.hi.toFixed(2)})` : ''}` : 'n/a');

/** The ceiling sentence from the in-place pass's own strided / dense ratio. */
function ceilingText(pass) {
  if (!pass || pass.ratio == null) return 'no ceiling: bench/build/limit.wasm lacks the strided passes (bash bench/build.sh)';
  const n = pass.ratio.toFixed(2);
  return pass.ratio > TARGET
    ? `ceiling: the in-place pass over the same views is ${n}× its dense run, so out of reach here`
    : `ceiling: the in-place pass over the same views is ${n}× its dense run, so ${TARGET}× is reachable here`;
}

async function fused({ name, B, S, H, KV, D }, L) {
  const W = (H + 2 * KV) * D; // per-token q | k | v (Llama / Phi-3 fused projection output)
  const rope = pe.rope({ headDim: D });
  const positions = Int32Array.from({ length: S }, (_, s) => 4096 + s);
  const nq = B * S * H * D;
  const nk = B * S * KV * D;
  const nf = B * S * W;
  const [pq, pk, pf] = [placed(nq, 1), placed(nk, 2), placed(nf, 3)];
  const [q, k, qkv] = [pq.t, pk.t, pf.t];
  const [oq, ok, of] = [pq.at(), pk.at(), pf.at()];
  const shape = [B, S, H, D];
  const strides = { batch: S * W, seq: W, heads: D };
  const samplers = {
    dense: loop(() => rope.apply(q, { shape, positions, offset: oq, k, kHeads: KV, kOffset: ok })),
    strided: loop(() => rope.apply(qkv, { shape, positions, strides, offset: of, k: qkv, kHeads: KV, kStrides: strides, kOffset: of + H * D })),
  };
  const frees = [];
  if (L) {
    // posenc's bshd order (rope_rows.h, pe__rotate_token): token by token; in cache the token's q heads then
    // its k heads, past PE__STREAM_BYTES (4 MiB of q + k, counted read and write) q head h beside k head h
    const ex = L.exports;
    const qP = block(L, nq, 1, frees);
    const kP = block(L, nk, 2, frees);
    const fP = block(L, nf, 3, frees);
    const stream = (nq + nk) * 4 * 2 > 4 * 2 ** 20;
    const pass = stream
      ? (qp, qs, kp, ks) => () => ex.limit_inplace_pairs(qp, H, qs, kp, KV, ks, D, B * S, 1)
      : (qp, qs, kp, ks) => () => ex.limit_inplace_rows(qp, H * D, qs, kp, KV * D, ks, B * S, 1);
    samplers['pass-dense'] = loop(pass(qP, H * D, kP, KV * D));
    samplers['pass-strided'] = loop(pass(fP, W, fP + H * D * 4, W));
    if (stream) {
      // the in-cache order beside it: a fused token's q | k is then one contiguous 20 KiB run
      samplers['rows-dense'] = loop(() => ex.limit_inplace_rows(qP, H * D, H * D, kP, KV * D, KV * D, B * S, 1));
      samplers['rows-strided'] = loop(() => ex.limit_inplace_rows(fP, H * D, W, fP + H * D * 4, KV * D, W, B * S, 1));
    }
    // every byte of the fused buffer, v included: what the views would cost if all of v's lines came in too
    samplers['pass-whole'] = loop(() => ex.limit_inplace(fP, nf, 1));
  }
  const { pair } = await measureAll(samplers);
  const out = {
    name,
    row: pair('strided', 'dense'),
    pass: pair('pass-strided', 'pass-dense'),
    extra: `the in-place pass over the whole fused buffer (v too) ${fmtR(pair('pass-whole', 'pass-dense'))} of its dense q + k run${pair('rows-strided', 'rows-dense') ? `; in the token's q heads then k heads order (q | k one run) ${fmtR(pair('rows-strided', 'rows-dense'))}` : ''}`,
    bytes: `bytes: fused buffer ${MiB(nf)}, q + k ${MiB(nq + nk)} (${(nf / (nq + nk)).toFixed(2)}× the bytes rotated)`,
  };
  for (const f of frees) f();
  for (const t of [q, k, qkv]) t.free();
  rope.free();
  return out;
}

async function cache({ name, B, KV, C, S, D }, L) {
  // bhsd cache [B, KV, C, D], slots 0 .. S-1 used, against a compact [B, KV, S, D] tensor
  const rope = pe.rope({ headDim: D });
  const positions = Int32Array.from({ length: S }, (_, s) => s);
  const nc = B * KV * S * D;
  const nb = B * KV * C * D;
  const [pc, pb] = [placed(nc, 4), placed(nb, 5)];
  const [compact, big] = [pc.t, pb.t];
  const [oc, ob, ob8] = [pc.at(), pb.at(), pb.at(8)];
  const shape = [B, KV, S, D];
  const strides = { batch: KV * C * D, seq: D, heads: C * D };
  const dense = { batch: KV * S * D, seq: D, heads: S * D };
  const samplers = {
    dense: loop(() => rope.apply(compact, { shape, layout: 'bhsd', positions, strides: dense, offset: oc })),
    strided: loop(() => rope.apply(big, { shape, layout: 'bhsd', positions, strides, offset: ob })),
    'strided-skew8': loop(() => rope.apply(big, { shape, layout: 'bhsd', positions, strides, offset: ob8 })),
  };
  const frees = [];
  if (L) {
    // posenc's bhsd order past a few positions: groups of 4 heads (PE__HEAD_GROUP), their rows at each position
    // in turn; group 1 (one stream per head) beside it
    const ex = L.exports;
    const cP = block(L, nc, 4, frees);
    const bP = block(L, nb, 5, frees);
    samplers['pass-dense'] = loop(() => ex.limit_inplace_heads(cP, B * KV, S * D, S, D, 4, 1));
    samplers['pass-strided'] = loop(() => ex.limit_inplace_heads(bP, B * KV, C * D, S, D, 4, 1));
    samplers['pass1-dense'] = loop(() => ex.limit_inplace_heads(cP, B * KV, S * D, S, D, 1, 1));
    samplers['pass1-strided'] = loop(() => ex.limit_inplace_heads(bP, B * KV, C * D, S, D, 1, 1));
  }
  const { pair } = await measureAll(samplers);
  const out = {
    name,
    row: pair('strided', 'dense'),
    pass: pair('pass-strided', 'pass-dense'),
    extra: `head by head ${fmtR(pair('pass1-strided', 'pass1-dense'))}; posenc's strided view 8 bytes past a 64-byte boundary (pe.tensor gave ${pb.mod} mod 64) ${fmtR(pair('strided-skew8', 'dense'))} of dense`,
    bytes: `bytes: cache ${MiB(nb)} (heads ${MiB(C * D)} apart), rotated ${MiB(nc)}`,
  };
  for (const f of frees) f();
  compact.free();
  big.free();
  rope.free();
  return out;
}

/** Rows: strided / dense time per workload (target: within 1.1x). */
export async function measure(pe0, opts = {}) {
  const { quick = false, rounds = 15, minSample = 0.02 } = opts;
  pe = pe0;
  const L = await loadLimit(opts);
  ROUNDS = rounds;
  MIN_SAMPLE = minSample;
  const rows = quick
    ? [await fused({ name: 'fused QKV decode [1, 1, (32 + 2*8)*128]', B: 1, S: 1, H: 32, KV: 8, D: 128 }, L),
      await cache({ name: 'bhsd cache 64 of 256 slots [1, 8, 256, 128]', B: 1, KV: 8, C: 256, S: 64, D: 128 }, L)]
    : [
      await fused({ name: 'fused QKV decode [1, 1, (32 + 2*8)*128]', B: 1, S: 1, H: 32, KV: 8, D: 128 }, L),
      await fused({ name: 'fused QKV prefill [1, 512, (32 + 2*8)*128]', B: 1, S: 512, H: 32, KV: 8, D: 128 }, L),
      // past the last-level cache for both forms (48 MB of qkv; dense q + k 40 MB): the memory-bound regime
      await fused({ name: 'fused QKV prefill [1, 2048, (32 + 2*8)*128]', B: 1, S: 2048, H: 32, KV: 8, D: 128 }, L),
      await cache({ name: 'bhsd cache 512 of 2048 slots [1, 8, 2048, 128]', B: 1, KV: 8, C: 2048, S: 512, D: 128 }, L),
    ];
  return rows.map((r) => ({
    name: `strided vs dense apply, ${r.name}`,
    ratio: r.row?.ratio ?? null,
    lo: r.row?.lo ?? null,
    hi: r.row?.hi ?? null,
    target: TARGET,
    better: 'lower',
    // the pass's own ratio rides with the row (results.json), and in the note beside posenc's
    ceiling: r.pass ?? undefined,
    note: `time(strided) / time(dense), q and k in one rope.apply, cached table; ${ceilingText(r.pass)}: the in-place \`x *= s\` pass over the same views / over the dense tensors ${fmtR(r.pass)}, ${r.extra}; ${r.bytes}`,
  }));
}

await standalone(import.meta.url, measure);
