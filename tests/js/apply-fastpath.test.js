// rope.apply's fast paths (rope-apply.js, rope-strided.js, rope-view.js, rope-apply-config.js): a pe.tensor is
// located by one record lookup, the options are read in one for-in pass, a strided view whose counts and
// strides passed the overlap check last time skips the sort, and the config blocks remember what they hold
// (strides included) instead of being cleared after every strided call. Each test first warms the fast path
// with valid calls, then shows that the check it could have skipped still fires, naming the argument and the
// bound, and that a call after a different kind of call reads no stale config (results against refApply, the
// float64 reference, or bit for bit against the same call on a fresh rope).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, refApply, defaultInvFreq, assertThrowsNaming, assertBitEqual, maxAbsDiff } from './helpers.js';

const D = 16;
const WARM = 50; // enough calls for the same shapes to reach the steady state (cached table, config written)

for (const build of BUILDS) {
  test(`warmed pe.tensor fast path: freed, foreign, wrong-length and wrong-dtype tensors still refused [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const other = await loadBuild(!build.simd);
    const rope = pe.rope({ headDim: D });
    const rng = makeRng(1401);
    const shape = [1, 2, 3, D];
    const n = 2 * 3 * D;
    const q = pe.tensor(randnF32(rng, n));
    const k = pe.tensor(randnF32(rng, n));
    for (let i = 0; i < WARM; i++) rope.apply(q, { shape, positions: [7, 8], k });
    const freed = pe.tensor(n);
    freed.free();
    assertThrowsNaming(() => rope.apply(freed, { shape, positions: [7, 8] }), TypeError, 'rope.apply', 'x', 'freed');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [7, 8], k: freed }), TypeError, 'rope.apply', 'options.k', 'freed');
    const foreign = other.tensor(n);
    assertThrowsNaming(() => rope.apply(foreign, { shape, positions: [7, 8] }), TypeError, 'rope.apply', 'x', 'another posenc instance');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [7, 8], k: foreign }), TypeError, 'options.k', 'another posenc instance');
    const short = pe.tensor(n - D);
    assertThrowsNaming(() => rope.apply(short, { shape, positions: [7, 8] }), RangeError, 'rope.apply', 'x.length must equal the product of shape (96), got 80');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [7, 8], k: short }), RangeError, 'options.k.length must equal', '(96), got 80');
    const half = pe.tensor(n, { dtype: 'float16' });
    assertThrowsNaming(() => rope.apply(half, { shape, positions: [7, 8], dtype: 'float32' }), TypeError, 'rope.apply', 'x is a float16 tensor', "options.dtype is 'float32'");
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [7, 8], k: half }), TypeError, 'options.k is a float16 tensor', 'float32');
    // overlapping tensors: k is x
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [7, 8], k: q }), RangeError, 'options.k must not overlap x');
    // the same fast path still rotates correctly after all those refusals
    const x0 = randnF32(rng, n);
    const t = pe.tensor(x0);
    rope.apply(t, { shape, positions: [7, 8] });
    const ref = refApply(x0, { shape: [1, 2, 3, D], layout: 'bshd', positions: [7, 8], invFreq: defaultInvFreq(10000, D), pairing: 'half' });
    assert.ok(maxAbsDiff(t.array, ref).err < 1e-5, 'rotation after the refusals'); // float32 rounding of O(1) values
    for (const a of [q, k, short, half, t]) a.free();
    foreign.free();
    rope.free();
  });

  test(`warmed one-pass option reading: unknown keys and bad values still named, getters read once [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: D });
    const q = pe.tensor(randnF32(makeRng(1402), 2 * D));
    const shape = [1, 1, 2, D];
    // options of many shapes first (the case that made named loads megamorphic)
    for (let i = 0; i < WARM; i++) {
      rope.apply(q, { shape, positions: [3] });
      rope.apply(q, { positions: [3], shape, layout: 'bshd' });
      rope.apply(q, { shape, positions: [3], inverse: false, seqLen: 10 });
      rope.apply(q, { shape: { batch: 1, seq: 1, heads: 2 }, positions: [3], dtype: 'float32' });
      rope.apply(q, { shape, positions: [3], strides: { heads: D }, offset: 0 });
    }
    assertThrowsNaming(() => rope.apply(q, { shape, position: [3] }), TypeError, 'options.position is not an option', 'did you mean positions?');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [3], kheads: 2 }), TypeError, 'options.kheads', 'did you mean kHeads?');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [3], strides: { head: D } }), TypeError, 'options.strides.head', 'did you mean heads?');
    assertThrowsNaming(() => rope.apply(q, { shape, layout: 'bsdh' }), RangeError, 'options.layout', "'bshd', 'bhsd'");
    assertThrowsNaming(() => rope.apply(q, { shape, inverse: 1 }), TypeError, 'options.inverse must be a boolean');
    assertThrowsNaming(() => rope.apply(q, { shape, seqLen: -1 }), RangeError, 'seqLen', '[0, ');
    assertThrowsNaming(() => rope.apply(q, { shape, kHeads: 2 }), TypeError, 'options.kHeads', 'give options.k with it');
    assertThrowsNaming(() => rope.apply(q, { shape, kOffset: 2 }), TypeError, 'options.kOffset', 'give options.k with it');
    assertThrowsNaming(() => rope.apply(q, { shape: [1, 1, 2, 8] }), RangeError, 'options.shape[3] (headDim)', `headDim ${D}`);
    assertThrowsNaming(() => rope.apply(q, { shape, strides: { heads: D - 1 } }), RangeError, 'options.strides.heads (15)', 'overlap', 'at least headDim (16)');
    // an inherited enumerable option is an option (as named reads took it), and is read once
    let reads = 0;
    const proto = {
      get positions() {
        reads++;
        return [3];
      },
    };
    const viaProto = Object.assign(Object.create(proto), { shape });
    const a = pe.tensor(q.array.slice());
    const b = pe.tensor(q.array.slice());
    rope.apply(a, viaProto);
    rope.apply(b, { shape, positions: [3] });
    assert.equal(reads, 1, 'the positions getter ran once');
    assertBitEqual(a.array, b.array, 'an inherited positions option');
    for (const t of [q, a, b]) t.free();
    rope.free();
  });

  test(`warmed strided view: a changed stride or count that overlaps, or reaches past the end, is still refused [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: D });
    const H = 2;
    const KV = 1;
    const S = 3;
    const W = (H + 2 * KV) * D; // per-token fused q | k | v
    const qkv = pe.tensor(randnF32(makeRng(1403), S * W));
    const strides = { batch: S * W, seq: W, heads: D };
    const call = (o) => rope.apply(qkv, { shape: [1, S, H, D], positions: [4, 5, 6], strides, k: qkv, kHeads: KV, kStrides: strides, kOffset: H * D, ...o });
    for (let i = 0; i < WARM; i++) call({});
    // the counts and strides that passed are cached; each of these differs in one place and must be re-proven
    assertThrowsNaming(() => call({ strides: { batch: S * W, seq: W, heads: D / 2 } }), RangeError, 'options.strides.heads (8)', 'overlap', 'at least headDim (16)');
    assertThrowsNaming(() => call({ strides: { batch: S * W, seq: D, heads: D } }), RangeError, 'options.strides', 'overlap');
    assertThrowsNaming(() => call({ kStrides: { batch: S * W, seq: D / 2, heads: D } }), RangeError, 'options.kStrides.seq (8)', 'overlap');
    assertThrowsNaming(() => call({ kOffset: D }), RangeError, 'options.k must not overlap x');
    assertThrowsNaming(() => call({ shape: [1, S + 1, H, D], positions: [4, 5, 6, 7] }), RangeError, "x's view reaches past its end", `x.length (${S * W})`);
    assertThrowsNaming(() => call({ kOffset: (S - 1) * W + W - D + 1 }), RangeError, "options.k's view reaches past its end");
    // the same call still works after the refusals (nothing cached from them)
    call({});
    // one strides object for q and k: each of its values is read once per call, and both views use it
    let reads = 0;
    const counted = {
      get batch() {
        reads++;
        return S * W;
      },
      get seq() {
        reads++;
        return W;
      },
      get heads() {
        reads++;
        return D;
      },
    };
    const before = qkv.array.slice();
    call({ strides: counted, kStrides: counted });
    assert.equal(reads, 3, 'each stride read once for both views');
    const viaPlain = pe.tensor(before);
    rope.apply(viaPlain, { shape: [1, S, H, D], positions: [4, 5, 6], strides, k: viaPlain, kHeads: KV, kStrides: { ...strides }, kOffset: H * D });
    assertBitEqual(qkv.array, viaPlain.array, 'one strides object for both views against two equal ones');
    viaPlain.free();
    // same counts, one stride changed to a value that does not overlap: accepted and right
    const x0 = randnF32(makeRng(1404), 3 * S * H * D);
    const big = pe.tensor(x0);
    const dense = pe.tensor(x0.subarray(0, S * H * D));
    rope.apply(dense, { shape: [1, S, H, D], positions: [4, 5, 6] });
    rope.apply(big, { shape: [1, S, H, D], positions: [4, 5, 6], strides: { seq: H * D } }); // = dense
    assertBitEqual(big.array.subarray(0, S * H * D), dense.array, 'a dense-stride view after the cached fused one');
    for (const t of [qkv, big, dense]) t.free();
    rope.free();
  });

  test(`config blocks carry no stale strides: dense, strided, q-only and rerotate calls in any order equal fresh-rope calls [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: D });
    const rng = makeRng(1405);
    const B = 2;
    const S = 3;
    const H = 2;
    const n = B * S * H * D;
    const x0 = randnF32(rng, n);
    const k0 = randnF32(rng, n);
    const positions = [9, 10, 11];
    const shape = [B, S, H, D];
    // a padded bshd buffer: every token row holds H + 1 head slots (the last unused)
    const padded = (src) => {
      const out = new Float32Array(B * S * (H + 1) * D);
      for (let t = 0; t < B * S; t++) out.set(src.subarray(t * H * D, (t + 1) * H * D), t * (H + 1) * D);
      return out;
    };
    const unpad = (buf) => {
      const out = new Float32Array(n);
      for (let t = 0; t < B * S; t++) out.set(buf.subarray(t * (H + 1) * D, t * (H + 1) * D + H * D), t * H * D);
      return out;
    };
    const stridesP = { batch: S * (H + 1) * D, seq: (H + 1) * D, heads: D };
    const calls = {
      dense: (r) => {
        const q = pe.tensor(x0);
        const k = pe.tensor(k0);
        r.apply(q, { shape, positions, k });
        const out = [q.array.slice(), k.array.slice()];
        q.free();
        k.free();
        return out;
      },
      denseQ: (r) => {
        const q = pe.tensor(x0);
        r.apply(q, { shape, positions });
        const out = [q.array.slice()];
        q.free();
        return out;
      },
      strided: (r) => {
        const q = pe.tensor(padded(x0));
        const k = pe.tensor(padded(k0));
        r.apply(q, { shape, positions, strides: stridesP, k, kStrides: stridesP });
        const out = [unpad(q.array), unpad(k.array)];
        q.free();
        k.free();
        return out;
      },
      stridedQ: (r) => {
        const q = pe.tensor(padded(x0));
        r.apply(q, { shape, positions, strides: stridesP });
        const out = [unpad(q.array)];
        q.free();
        return out;
      },
      rerotate: (r) => [r.rerotate(Float32Array.from(x0), 5, { shape })],
      rerotateStrided: (r) => [unpad(r.rerotate(padded(x0), -3, { shape, strides: stridesP }))],
    };
    const fresh = {};
    for (const [name, f] of Object.entries(calls)) {
      const r = pe.rope({ headDim: D });
      fresh[name] = f(r);
      r.free();
    }
    // every ordered pair of kinds of call on one rope, each repeated (the second run is the cached one)
    const names = Object.keys(calls);
    for (const a of names) {
      for (const b of names) {
        for (const name of [a, a, b, b]) {
          const got = calls[name](rope);
          got.forEach((g, i) => assertBitEqual(g, fresh[name][i], `${name} after ${a}`));
        }
      }
    }
    // and the strided result is the rotation (not only the same as itself)
    const ref = refApply(x0, { shape, layout: 'bshd', positions, invFreq: defaultInvFreq(10000, D), pairing: 'half' });
    assert.ok(maxAbsDiff(fresh.strided[0], ref).err < 1e-5, 'strided q against the float64 reference'); // float32 rounding of O(1) values
    rope.free();
  });
}
