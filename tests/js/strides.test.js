// rope.apply / rope.rerotate on strided views (issue 11 "Strides and offsets"): q and k rotated in place inside
// fused QKV projection outputs (per-token [b, s, (h + 2 kv) d] and per-head [b, s, h, 3 d]) and a bhsd KV cache
// with spare capacity equal, bit for bit, the dense rotation of the same vectors gathered into their own
// arrays; every element outside the views is unchanged, bit for bit. Then every bad strides / offset value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, assertThrowsNaming } from './helpers.js';

/** Element index of head vector (b, s, h) of a view { off, sb, ss, sh }. */
const at = (v, b, s, h) => v.off + b * v.sb + s * v.ss + h * v.sh;

/** The (B, S, H, D) head vectors of view v of buf, gathered dense in `layout` order. */
function gather(buf, v, B, S, H, D, layout = 'bshd') {
  const out = new Float32Array(B * S * H * D);
  for (let b = 0; b < B; b++)
    for (let s = 0; s < S; s++)
      for (let h = 0; h < H; h++) {
        const o = layout === 'bshd' ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
        out.set(buf.subarray(at(v, b, s, h), at(v, b, s, h) + D), o);
      }
  return out;
}

/** Marks every element of buf covered by view v (B, S, H head vectors of D). */
function mark(covered, v, B, S, H, D) {
  for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) for (let h = 0; h < H; h++) covered.fill(1, at(v, b, s, h), at(v, b, s, h) + D);
}

/** Elements not covered: bit for bit what they were. */
function assertUntouched(now, before, covered, what) {
  const a = new Uint32Array(now.buffer, now.byteOffset, now.length);
  const b = new Uint32Array(before.buffer, before.byteOffset, before.length);
  for (let i = 0; i < a.length; i++) if (!covered[i] && a[i] !== b[i]) assert.fail(`${what}: element ${i} outside the views changed`);
}

const bits = (a) => new Uint32Array(a.buffer, a.byteOffset, a.length);
const assertBits = (a, b, what) => assert.deepEqual(bits(a), bits(b), what);

/** The same call on a fresh rope: q and k gathered into dense arrays. */
function denseApply(pe, ropeOptions, q, k, opts) {
  const r = pe.rope(ropeOptions);
  try {
    r.apply(q, { ...opts, k, kHeads: opts.kHeads });
    return [q, k];
  } finally {
    r.free();
  }
}

const ROPES = [
  { headDim: 32 },
  { headDim: 32, pairing: 'interleaved' },
  { headDim: 40, rotaryDim: 24 }, // partial rotary (GPT-NeoX): the tail of each head is not touched
  { headDim: 16, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 32 } }, // attention factor
];

for (const build of BUILDS) {
  test(`fused per-token QKV [b, s, (h + 2 kv) d]: q and k rotated in place equal dense apply, v untouched [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(110);
    for (const ro of ROPES) {
      for (const [B, S, H, KV] of [
        [1, 1, 1, 1],
        [2, 5, 4, 2], // GQA (Llama fused)
        [3, 4, 6, 6], // MHA (Phi-3 qkv_proj)
        [2, 3, 8, 1], // MQA
      ]) {
        await t.test(`${JSON.stringify(ro)} B${B} S${S} H${H} KV${KV}`, () => {
          const D = ro.headDim;
          const W = (H + 2 * KV) * D; // one token's q | k | v
          const qv = { off: 0, sb: S * W, ss: W, sh: D };
          const kv = { off: H * D, sb: S * W, ss: W, sh: D };
          const orig = randnF32(rng, B * S * W);
          const covered = new Uint8Array(orig.length);
          mark(covered, qv, B, S, H, D);
          mark(covered, kv, B, S, KV, D);
          for (const positions of [null, Int32Array.from({ length: S }, () => rng.int(0, 70000)), Array.from({ length: B * S }, () => rng.int(0, 5000))]) {
            for (const inverse of [false, true]) {
              const opts = { shape: [B, S, H, D], positions, inverse, kHeads: KV };
              const [wq, wk] = denseApply(pe, ro, gather(orig, qv, B, S, H, D), gather(orig, kv, B, S, KV, D), opts);
              const strided = {
                ...opts,
                strides: { batch: qv.sb, seq: qv.ss, heads: qv.sh },
                offset: 0,
                kStrides: { batch: kv.sb, seq: kv.ss, heads: kv.sh },
                kOffset: kv.off,
              };
              const r = pe.rope(ro);
              // one Float32Array as both x and k (copied once), a pe.tensor (zero-copy), two views of one buffer
              const arr = Float32Array.from(orig);
              assert.equal(r.apply(arr, { ...strided, k: arr }), arr, 'returns x');
              assertBits(gather(arr, qv, B, S, H, D), wq, 'q (array)');
              assertBits(gather(arr, kv, B, S, KV, D), wk, 'k (array)');
              assertUntouched(arr, orig, covered, 'array');
              const ten = pe.tensor(orig);
              assert.equal(r.apply(ten, { ...strided, k: ten }), ten);
              const got = Float32Array.from(ten.array);
              ten.free();
              assertBits(gather(got, qv, B, S, H, D), wq, 'q (tensor)');
              assertBits(gather(got, kv, B, S, KV, D), wk, 'k (tensor)');
              assertUntouched(got, orig, covered, 'tensor');
              const two = Float32Array.from(orig);
              r.apply(two.subarray(0), { ...strided, k: two.subarray(H * D), kOffset: 0 });
              assertBits(two, arr, 'x and k as two views of one buffer');
              // a dense call on the same rope afterwards is not affected by the strided one
              const dq = gather(orig, qv, B, S, H, D);
              r.apply(dq, { shape: [B, S, H, D], positions, inverse });
              assertBits(dq, wq, 'dense after strided');
              r.free();
            }
          }
        });
      }
    }
  });

  test(`fused per-head QKV [b, s, h, 3 d] (GPT-NeoX, BLOOM): q at 0, k at d, heads stride 3 d equal dense apply [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(111);
    for (const ro of ROPES) {
      for (const [B, S, H] of [
        [1, 3, 1],
        [2, 4, 5],
        [1, 7, 8],
      ]) {
        await t.test(`${JSON.stringify(ro)} B${B} S${S} H${H}`, () => {
          const D = ro.headDim;
          const qv = { off: 0, sb: S * H * 3 * D, ss: H * 3 * D, sh: 3 * D };
          const kv = { ...qv, off: D };
          const orig = randnF32(rng, B * S * H * 3 * D);
          const covered = new Uint8Array(orig.length);
          mark(covered, qv, B, S, H, D);
          mark(covered, kv, B, S, H, D);
          const positions = Array.from({ length: S }, (_, i) => 100 + 3 * i);
          const [wq, wk] = denseApply(pe, ro, gather(orig, qv, B, S, H, D), gather(orig, kv, B, S, H, D), { shape: [B, S, H, D], positions });
          const r = pe.rope(ro);
          const strides = { batch: qv.sb, seq: qv.ss, heads: qv.sh };
          for (const form of ['array', 'tensor']) {
            const buf = form === 'array' ? Float32Array.from(orig) : pe.tensor(orig);
            r.apply(buf, { shape: { batch: B, seq: S, heads: H, headDim: D }, positions, strides, k: buf, kStrides: strides, kOffset: D });
            const got = form === 'array' ? buf : Float32Array.from(buf.array);
            assertBits(gather(got, qv, B, S, H, D), wq, `q (${form})`);
            assertBits(gather(got, kv, B, S, H, D), wk, `k (${form})`);
            assertUntouched(got, orig, covered, `v (${form})`);
            if (form === 'tensor') buf.free();
          }
          r.free();
        });
      }
    }
  });

  test(`bhsd KV cache with spare capacity: rotated where it lies equals compacted apply, spare slots untouched [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(112);
    for (const ro of ROPES) {
      for (const [B, KV, C, t0, n] of [
        [1, 1, 8, 0, 8], // full
        [2, 3, 16, 0, 5], // prefill of 5 into capacity 16
        [2, 2, 16, 5, 1], // one decode step at slot 5
        [3, 4, 12, 7, 3],
      ]) {
        await t.test(`${JSON.stringify(ro)} B${B} KV${KV} C${C} slots ${t0}..${t0 + n - 1}`, () => {
          const D = ro.headDim;
          // cache [B, KV, C, D]; the new keys sit at slots t0 .. t0 + n - 1 of every head
          const view = { off: t0 * D, sb: KV * C * D, ss: D, sh: C * D };
          const orig = randnF32(rng, B * KV * C * D);
          const covered = new Uint8Array(orig.length);
          mark(covered, view, B, n, KV, D);
          const positions = Int32Array.from({ length: n }, (_, i) => t0 + i + 40);
          const dense = gather(orig, view, B, n, KV, D, 'bhsd');
          const fresh = pe.rope(ro);
          fresh.apply(dense, { shape: [B, KV, n, D], layout: 'bhsd', positions });
          fresh.free();
          const r = pe.rope(ro);
          for (const form of ['array', 'tensor']) {
            const buf = form === 'array' ? Float32Array.from(orig) : pe.tensor(orig);
            r.apply(buf, { shape: [B, KV, n, D], layout: 'bhsd', positions, strides: { batch: view.sb, seq: view.ss, heads: view.sh }, offset: view.off });
            const got = form === 'array' ? buf : Float32Array.from(buf.array);
            assertBits(gather(got, view, B, n, KV, D, 'bhsd'), dense, `cache keys (${form})`);
            assertUntouched(got, orig, covered, `spare capacity (${form})`);
            if (form === 'tensor') buf.free();
          }
          r.free();
        });
      }
    }
  });

  test(`rerotate on a strided view equals rerotate of the compacted vectors, the rest untouched [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(113);
    for (const ro of ROPES) {
      // B < S and B > S: the kernel is handed the shorter axis as its seq (one table row each)
      for (const [B, KV, C, S] of [
        [1, 2, 12, 9],
        [4, 2, 6, 2],
        [2, 1, 4, 1],
      ]) {
        for (const delta of [7, -3, 0]) {
          await t.test(`${JSON.stringify(ro)} B${B} KV${KV} C${C} S${S} delta ${delta}`, () => {
            const D = ro.headDim;
            const view = { off: D, sb: KV * C * D, ss: D, sh: C * D }; // slots 1 .. S of a bhsd cache
            const orig = randnF32(rng, B * KV * C * D + 3); // and a tail past the cache
            const covered = new Uint8Array(orig.length);
            mark(covered, view, B, S, KV, D);
            const r = pe.rope(ro);
            const want = r.rerotate(gather(orig, view, B, S, KV, D, 'bhsd'), delta);
            for (const form of ['array', 'tensor']) {
              const buf = form === 'array' ? Float32Array.from(orig) : pe.tensor(orig);
              const out = r.rerotate(buf, delta, { shape: [B, KV, S, D], layout: 'bhsd', strides: { batch: view.sb, seq: view.ss, heads: view.sh }, offset: view.off });
              assert.equal(out, buf);
              const got = form === 'array' ? buf : Float32Array.from(buf.array);
              assertBits(gather(got, view, B, S, KV, D, 'bhsd'), want, `rotated (${form})`);
              assertUntouched(got, orig, covered, `outside (${form})`);
              if (form === 'tensor') buf.free();
            }
            r.free();
          });
        }
      }
    }
  });

  test(`shape: an array in the tensor's own memory order, or named; both layouts [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(114);
    const r = pe.rope({ headDim: 16 });
    const [B, S, H, D] = [2, 5, 3, 16]; // S != H: a misread shape would rotate by the wrong positions
    const x = randnF32(rng, B * S * H * D);
    const named = { batch: B, seq: S, heads: H, headDim: D };
    const bshd = r.apply(Float32Array.from(x), { shape: [B, S, H, D] });
    assertBits(r.apply(Float32Array.from(x), { shape: named }), bshd, 'bshd: named == [b, s, h, d]');
    assertBits(r.apply(Float32Array.from(x), { shape: { batch: B, seq: S, heads: H } }), bshd, 'headDim may be left out');
    const bhsd = r.apply(Float32Array.from(x), { shape: [B, H, S, D], layout: 'bhsd' });
    assertBits(r.apply(Float32Array.from(x), { shape: named, layout: 'bhsd' }), bhsd, 'bhsd: named == [b, h, s, d]');
    // the bhsd array is [b, h, s, d]: position s of head h is row (b, h, s); check one row against cosSin
    const { cos, sin } = r.cosSin([3]);
    const row = ((1 * H + 2) * S + 3) * D; // b 1, h 2, s 3
    for (let i = 0; i < 8; i++) {
      const want = Math.fround(Math.fround(x[row + i] * cos[i]) - Math.fround(x[row + i + 8] * sin[i]));
      assert.equal(bhsd[row + i], want, `bhsd [b, h, s, d]: row (1, 2, 3) element ${i} is rotated at position 3`);
    }
    // and it differs from reading the same array as [b, s, h, d]
    assert.notDeepEqual(bhsd, r.apply(Float32Array.from(x), { shape: { batch: B, seq: H, heads: S }, layout: 'bhsd' }));
    // rerotate reads the same forms
    const rr = r.rerotate(Float32Array.from(x), 4, { shape: [B, H, S, D], layout: 'bhsd' });
    assertBits(r.rerotate(Float32Array.from(x), 4, { shape: named, layout: 'bhsd' }), rr);
    r.free();
  });

  test(`bad strides, offsets and shapes are refused, naming the argument and the bound, before anything changes [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const r = pe.rope({ headDim: 8 });
    const [B, S, H, KV, D] = [2, 3, 2, 1, 8];
    const W = (H + 2 * KV) * D;
    const qkv = Float32Array.from({ length: B * S * W }, (_, i) => Math.sin(i));
    const before = Float32Array.from(qkv);
    const shape = [B, S, H, D];
    const strides = { batch: S * W, seq: W, heads: D };
    const kOpts = { k: qkv, kHeads: KV, kStrides: strides };
    const E = [
      // values
      [{ strides: { ...strides, seq: -W } }, RangeError, 'options.strides.seq', '[0, '],
      [{ strides: { ...strides, heads: 8.5 } }, RangeError, 'options.strides.heads', 'got 8.5'],
      [{ strides: { ...strides, batch: '96' } }, TypeError, 'options.strides.batch'],
      [{ strides: { ...strides, batch: 2n ** 40n } }, TypeError, 'options.strides.batch'],
      [{ strides: { ...strides, head: D } }, TypeError, 'options.strides.head', 'did you mean heads'],
      [{ strides: [S * W, W, D] }, TypeError, 'options.strides', '{ batch, seq, heads }'],
      [{ strides: 32 }, TypeError, 'options.strides'],
      [{ strides, offset: -1 }, RangeError, 'options.offset', 'got -1'],
      [{ strides, offset: 0.5 }, RangeError, 'options.offset', 'got 0.5'],
      [{ strides, offset: NaN }, RangeError, 'options.offset'],
      // reaching past the array (64-bit-safe: products past 2^53 are refused, not wrapped)
      [{ strides, offset: qkv.length }, RangeError, 'x', 'must be at most x.length (192)'],
      [{ strides, offset: 2 ** 53 - 1 }, RangeError, 'x', 'x.length (192)'],
      [{ strides, offset: 2 * W - D + 1 }, RangeError, "x's view reaches past its end", 'got'],
      [{ strides: { ...strides, batch: 2 ** 52 } }, RangeError, 'options.strides.batch', 'x.length (192)'],
      [{ strides: { ...strides, seq: Number.MAX_SAFE_INTEGER } }, RangeError, 'options.strides.seq', 'x.length (192)'],
      // overlapping head vectors within x
      [{ strides: { ...strides, heads: D - 1 } }, RangeError, 'options.strides.heads (7)', 'overlap', 'headDim (8)'],
      [{ strides: { ...strides, heads: 0 } }, RangeError, 'options.strides.heads (0)', 'overlap'],
      [{ strides: { ...strides, seq: D } }, RangeError, 'options.strides', 'overlap', 'must be at least'],
      [{ strides: { batch: W, seq: W, heads: D } }, RangeError, 'options.strides', 'overlap'],
      // q and k overlapping
      [{ strides, ...kOpts, kOffset: 0 }, RangeError, 'options.k', 'overlap'],
      [{ strides, ...kOpts, kOffset: D }, RangeError, 'options.k', 'overlap'],
      [{ strides, ...kOpts, kOffset: H * D - 1 }, RangeError, 'options.k', 'overlap'],
      [{ strides, ...kOpts, kOffset: H * D, kStrides: { ...strides, seq: W / 2 } }, RangeError, 'options.k', 'overlap'], // k of token 1 is q of token 1
      [{ strides, ...kOpts, kOffset: B * S * W }, RangeError, 'options.kOffset', 'options.k.length (192)'],
      [{ strides, ...kOpts, kOffset: -2 }, RangeError, 'options.kOffset'],
      [{ strides, ...kOpts, kOffset: H * D, kStrides: { ...strides, heads: -1 } }, RangeError, 'options.kStrides.heads'],
      [{ strides, kStrides: strides }, TypeError, 'options.kStrides', 'options.k'],
      [{ strides, kOffset: 16 }, TypeError, 'options.kOffset', 'options.k'],
      [{ strides, k: new Float64Array(4), kOffset: 0 }, TypeError, 'options.k', 'Float32Array'],
    ];
    for (const [extra, cls, ...needles] of E) {
      assertThrowsNaming(() => r.apply(qkv, { shape, ...extra }), cls, ...needles);
      assert.deepEqual(qkv, before, `unchanged after ${JSON.stringify(extra, (k, v) => (typeof v === 'bigint' || ArrayBuffer.isView(v) ? String(v) : v))}`);
    }
    // a tensor view is checked against the tensor's length too
    const t = pe.tensor(qkv);
    assertThrowsNaming(() => r.apply(t, { shape, strides, offset: S * W }), RangeError, 'x.length (192)');
    assert.deepEqual(t.array, before);
    t.free();
    // shapes
    const S_ = [
      [{ batch: B, seq: S }, TypeError, 'options.shape.heads', 'got undefined'],
      [{ batch: B, seq: S, heads: H, headDim: 16 }, RangeError, 'options.shape.headDim', '8', 'got 16'],
      [{ batch: B, seq: S, heads: H, head: 8 }, TypeError, 'options.shape.head', 'did you mean heads'],
      [{ batch: B, seq: 0, heads: H }, RangeError, 'options.shape.seq', 'got 0'],
      [[B, S, H], RangeError, 'options.shape', 'got length 3'],
      [[B, H, S, D, 1], RangeError, 'options.shape', 'got length 5'],
      ['2,3,2,8', TypeError, 'options.shape'],
    ];
    for (const [sh, cls, ...needles] of S_) assertThrowsNaming(() => r.apply(qkv.subarray(0, B * S * H * D), { shape: sh }), cls, ...needles);
    assertThrowsNaming(() => r.apply(qkv.subarray(0, B * S * H * D), { shape: [B, H, S, 16], layout: 'bhsd' }), RangeError, 'options.shape[3] (headDim)');
    assertThrowsNaming(() => r.apply(qkv.subarray(0, B * S * H * D), { shape: [B, 0, S, D], layout: 'bhsd' }), RangeError, 'options.shape[1] (heads)');
    // rerotate
    assertThrowsNaming(() => r.rerotate(qkv, 3, { strides }), TypeError, 'options.shape', 'options.strides');
    assertThrowsNaming(() => r.rerotate(qkv, 3, { shape, strides, offset: -1 }), RangeError, 'options.offset');
    assertThrowsNaming(() => r.rerotate(qkv, 3, { shape, strides: { ...strides, heads: 4 } }), RangeError, 'options.strides.heads', 'overlap');
    assertThrowsNaming(() => r.rerotate(qkv, 3, { shape, strides, offset: W * S }), RangeError, 'x.length');
    assertThrowsNaming(() => r.rerotate(qkv, 3, { shape, kOffset: 3 }), TypeError, 'options.kOffset');
    assert.deepEqual(qkv, before, 'unchanged by the failed rerotates');
    // and the rope still works
    const k = new Float32Array(qkv.length);
    k.set(qkv);
    r.apply(k, { shape, strides, k, kHeads: KV, kStrides: strides, kOffset: H * D });
    assert.notDeepEqual(k, before);
    r.free();
  });
}

for (const build of BUILDS) {
  test(`strided views in 16-bit storage and with M-RoPE positions equal the dense calls bit for bit [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(115);
    const [B, S, H, KV, D] = [2, 3, 4, 2, 16];
    const W = (H + 2 * KV) * D;
    const qv = { off: 0, sb: S * W, ss: W, sh: D };
    const kv = { off: H * D, sb: S * W, ss: W, sh: D };
    const strides = { batch: S * W, seq: W, heads: D };
    const covered = new Uint8Array(B * S * W);
    mark(covered, qv, B, S, H, D);
    mark(covered, kv, B, S, KV, D);
    // 16-bit: raw bits in a Uint16Array (gathered with the same index arithmetic)
    const gather16 = (buf, v, h) => {
      const out = new Uint16Array(B * S * h * D);
      for (let b = 0; b < B; b++) for (let s = 0; s < S; s++) for (let j = 0; j < h; j++) out.set(buf.subarray(at(v, b, s, j), at(v, b, s, j) + D), ((b * S + s) * h + j) * D);
      return out;
    };
    const positions = [5, 900, 65536];
    for (const dtype of ['float16', 'bfloat16']) {
      const f32 = randnF32(rng, B * S * W);
      const orig = new Uint16Array(new Uint32Array(f32.buffer).map((u) => (dtype === 'bfloat16' ? u >>> 16 : 0x3c00 ^ (u & 0x83ff))));
      const r = pe.rope({ headDim: D });
      const q = gather16(orig, qv, H);
      const k = gather16(orig, kv, KV);
      r.apply(q, { shape: [B, S, H, D], positions, dtype, k, kHeads: KV });
      const buf = Uint16Array.from(orig);
      r.apply(buf, { shape: [B, S, H, D], positions, dtype, strides, k: buf, kHeads: KV, kStrides: strides, kOffset: H * D });
      assert.deepEqual(gather16(buf, qv, H), q, `${dtype} q`);
      assert.deepEqual(gather16(buf, kv, KV), k, `${dtype} k`);
      for (let i = 0; i < buf.length; i++) if (!covered[i] && buf[i] !== orig[i]) assert.fail(`${dtype}: element ${i} outside the views changed`);
      assertThrowsNaming(() => r.apply(buf, { shape: [B, S, H, D], dtype, strides, k: Float32Array.from(f32), kHeads: KV, kOffset: 0 }), TypeError, 'options.k');
      r.free();
    }
    // M-RoPE: three position streams, the same view
    const m = pe.rope({ headDim: D, base: 1e6, mrope: { section: [2, 3, 3] } });
    const orig = randnF32(rng, B * S * W);
    const pos3 = Int32Array.from({ length: 3 * S }, (_, i) => (i * 7) % 11);
    const q = gather(orig, qv, B, S, H, D);
    const k = gather(orig, kv, B, S, KV, D);
    m.apply(q, { shape: [B, S, H, D], positions: pos3, k, kHeads: KV });
    const buf = Float32Array.from(orig);
    m.apply(buf, { shape: [B, S, H, D], positions: pos3, strides, k: buf, kHeads: KV, kStrides: strides, kOffset: H * D });
    assertBits(gather(buf, qv, B, S, H, D), q, 'mrope q');
    assertBits(gather(buf, kv, B, S, KV, D), k, 'mrope k');
    assertUntouched(buf, orig, covered, 'mrope');
    m.free();
  });
}
