// rope.apply's k option (one table for q and k), the per-rope table cache (reuse, and invalidation when the
// positions, their values, seqLen or the direction change), and the `out` options of rope.cosSin,
// pe.alibiBias and pe.sinusoidal. Every result is compared bit for bit with what an uncached computation gives:
// a fresh rope (no table yet) doing the same call, or the same function without `out`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, assertThrowsNaming } from './helpers.js';

/** x rotated by a brand-new rope of the same options (its first call: no cached table). */
function fresh(pe, ropeOptions, x, options) {
  const r = pe.rope(ropeOptions);
  try {
    return r.apply(Float32Array.from(x), options);
  } finally {
    r.free();
  }
}

const DYNAMIC = { headDim: 32, maxPositionEmbeddings: 64, scaling: { type: 'dynamic', factor: 2 } };
const YARN = { headDim: 32, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 64 } };

for (const build of BUILDS) {
  test(`apply(q, { k }) equals two separate applies, bit for bit [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(21);
    const cases = [];
    for (const pairing of ['half', 'interleaved']) {
      for (const layout of ['bshd', 'bhsd']) {
        cases.push({ rope: { headDim: 32, pairing }, B: 2, S: 5, H: 4, kH: 4, layout });
        cases.push({ rope: { headDim: 32, pairing }, B: 2, S: 5, H: 8, kH: 2, layout }); // GQA
        cases.push({ rope: { headDim: 32, pairing }, B: 1, S: 3, H: 6, kH: 1, layout }); // MQA
      }
    }
    cases.push({ rope: { headDim: 48, rotaryDim: 16 }, B: 2, S: 4, H: 3, kH: 5, layout: 'bshd' }); // partial rotary, kHeads > heads
    cases.push({ rope: YARN, B: 1, S: 4, H: 4, kH: 2, layout: 'bhsd', inverse: true });
    cases.push({ rope: DYNAMIC, B: 2, S: 3, H: 2, kH: 2, layout: 'bshd', seqLen: 200 });
    for (const c of cases) {
      const D = c.rope.headDim;
      const name = `${JSON.stringify(c.rope)} [${c.B},${c.S},${c.H},${D}] kHeads ${c.kH} ${c.layout}${c.inverse ? ' inverse' : ''}`;
      await t.test(name, () => {
        const q = randnF32(rng, c.B * c.S * c.H * D);
        const k = randnF32(rng, c.B * c.S * c.kH * D);
        const forms = [
          null, // default positions
          Int32Array.from({ length: c.S }, () => rng.int(0, 5000)), // shared by the batch
          Array.from({ length: c.B * c.S }, () => rng.int(0, 100000)), // one row per sequence
        ];
        for (const positions of forms) {
          // shapes in the tensor's own memory order
          const dims = (h) => (c.layout === 'bhsd' ? [c.B, h, c.S, D] : [c.B, c.S, h, D]);
          const opts = { shape: dims(c.H), layout: c.layout, positions, inverse: c.inverse, seqLen: c.seqLen };
          const wantQ = fresh(pe, c.rope, q, opts);
          const wantK = fresh(pe, c.rope, k, { ...opts, shape: dims(c.kH) });
          const r = pe.rope(c.rope);
          const qa = Float32Array.from(q);
          const ka = Float32Array.from(k);
          const kHeads = c.kH === c.H && positions === null ? undefined : c.kH; // default kHeads = heads
          assert.equal(r.apply(qa, { ...opts, k: ka, kHeads }), qa, 'returns x');
          assert.deepEqual(qa, wantQ, 'q');
          assert.deepEqual(ka, wantK, 'k');
          // tensors (zero-copy) and mixed forms give the same numbers
          const qt = pe.tensor(q);
          const kt = pe.tensor(k);
          assert.equal(r.apply(qt, { ...opts, k: kt, kHeads: c.kH }), qt);
          assert.deepEqual(qt.array, wantQ);
          assert.deepEqual(kt.array, wantK);
          const qb = Float32Array.from(q);
          const kt2 = pe.tensor(k);
          r.apply(qb, { ...opts, k: kt2, kHeads: c.kH });
          assert.deepEqual(qb, wantQ);
          assert.deepEqual(kt2.array, wantK);
          for (const x of [qt, kt, kt2]) x.free();
          r.free();
        }
      });
    }
  });

  test(`apply(q, { k }): bad k is refused before anything changes [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const r = pe.rope({ headDim: 16 });
    const shape = [2, 3, 4, 16];
    const N = 2 * 3 * 4 * 16;
    const q = Float32Array.from({ length: N }, (_, i) => i / N);
    const q0 = Float32Array.from(q);
    const k = Float32Array.from({ length: N }, (_, i) => -i / N);
    const k0 = Float32Array.from(k);
    assertThrowsNaming(() => r.apply(q, { shape, kHeads: 2 }), TypeError, 'options.kHeads', 'options.k');
    assertThrowsNaming(() => r.apply(q, { shape, k, kHeads: 0 }), RangeError, 'options.kHeads', 'got 0');
    assertThrowsNaming(() => r.apply(q, { shape, k, kHeads: 1.5 }), RangeError, 'options.kHeads', 'got 1.5');
    assertThrowsNaming(() => r.apply(q, { shape, k, kHeads: '2' }), TypeError, 'options.kHeads');
    assertThrowsNaming(() => r.apply(q, { shape, k, kHeads: 2 }), RangeError, 'options.k.length', `${N / 2}`, `got ${N}`);
    assertThrowsNaming(() => r.apply(q, { shape, k: k.subarray(1) }), RangeError, 'options.k.length', `${N}`, `got ${N - 1}`);
    assertThrowsNaming(() => r.apply(q, { shape, k: new Float64Array(N) }), TypeError, 'options.k', 'Float32Array', 'Float64Array');
    assertThrowsNaming(() => r.apply(q, { shape, k: Array.from(k) }), TypeError, 'options.k', 'Float32Array');
    assertThrowsNaming(() => r.apply(q, { shape, k: q }), RangeError, 'options.k', 'overlap');
    const big = new Float32Array(N + 16);
    assertThrowsNaming(() => r.apply(big.subarray(0, N), { shape, k: big.subarray(16) }), RangeError, 'options.k', 'overlap');
    const t = pe.tensor(N);
    assertThrowsNaming(() => r.apply(t, { shape, k: t }), RangeError, 'options.k', 'overlap');
    const t2 = pe.tensor(N);
    t2.free();
    assertThrowsNaming(() => r.apply(q, { shape, k: t2 }), TypeError, 'options.k', 'freed');
    assert.deepEqual(q, q0, 'x unchanged by the failed calls');
    assert.deepEqual(k, k0, 'k unchanged by the failed calls');
    // adjacent, not overlapping: fine
    const both = new Float32Array(2 * N);
    both.set(q0, 0);
    both.set(k0, N);
    r.apply(both.subarray(0, N), { shape, k: both.subarray(N) });
    assert.deepEqual(both.subarray(0, N), fresh(pe, { headDim: 16 }, q0, { shape }));
    assert.deepEqual(both.subarray(N), fresh(pe, { headDim: 16 }, k0, { shape }));
    t.free();
    r.free();
  });

  test(`the table cache: reused for equal keys, rebuilt when positions, their values, seqLen or inverse change [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(22);
    const D = 32;

    await t.test('a positions array mutated in place between calls is noticed', () => {
      const r = pe.rope({ headDim: D });
      const shape = [1, 4, 2, D];
      const x = randnF32(rng, 4 * 2 * D);
      for (const positions of [Int32Array.of(0, 1, 2, 3), [0, 1, 2, 3]]) {
        const first = r.apply(Float32Array.from(x), { shape, positions });
        assert.deepEqual(first, fresh(pe, { headDim: D }, x, { shape, positions }));
        positions[2] = 77; // same object, one value changed
        const second = r.apply(Float32Array.from(x), { shape, positions });
        assert.deepEqual(second, fresh(pe, { headDim: D }, x, { shape, positions }));
        assert.notDeepEqual(second, first);
        positions[2] = 2; // and back
        assert.deepEqual(r.apply(Float32Array.from(x), { shape, positions }), first);
      }
      r.free();
    });

    await t.test('equal values in another array reuse the table with the same result; other values, lengths, default positions do not', () => {
      const r = pe.rope({ headDim: D });
      const x = randnF32(rng, 2 * 6 * 3 * D);
      const calls = [
        { shape: [2, 6, 3, D], positions: Int32Array.of(5, 6, 7, 8, 9, 10) },
        { shape: [2, 6, 3, D], positions: [5, 6, 7, 8, 9, 10] },
        { shape: [2, 6, 3, D], positions: Int32Array.of(5, 6, 7, 8, 9, 11) },
        { shape: [2, 6, 3, D] }, // default 0..5
        { shape: [2, 6, 3, D], positions: [0, 1, 2, 3, 4, 5] }, // the same values, explicit
        { shape: [1, 12, 3, D] }, // default 0..11
        { shape: [2, 6, 3, D], positions: Array.from({ length: 12 }, (_, i) => 100 - i) }, // per sequence
        { shape: [1, 12, 3, D], positions: Array.from({ length: 12 }, (_, i) => 100 - i) }, // same values, shared
        { shape: [2, 3, 6, D], layout: 'bhsd', positions: [5, 6, 7, 8, 9, 10] }, // [b, h, s, d]
        { shape: [2, 6, 3, D], positions: [5, 6, 7, 8, 9, 10], inverse: true },
        { shape: [2, 6, 3, D], positions: [5, 6, 7, 8, 9, 10] },
      ];
      for (const opts of calls) {
        assert.deepEqual(r.apply(Float32Array.from(x), opts), fresh(pe, { headDim: D }, x, opts), JSON.stringify(opts));
      }
      r.free();
    });

    await t.test('seqLen is part of the key (dynamic: the base grows past maxPositionEmbeddings)', () => {
      const r = pe.rope(DYNAMIC);
      const shape = [1, 3, 2, D];
      const x = randnF32(rng, 3 * 2 * D);
      const positions = Int32Array.of(10, 20, 30);
      const results = [];
      for (const seqLen of [undefined, 64, 200, 200, 1000, undefined]) {
        const opts = { shape, positions, seqLen };
        const y = r.apply(Float32Array.from(x), opts);
        assert.deepEqual(y, fresh(pe, DYNAMIC, x, opts), `seqLen ${seqLen}`);
        results.push(y);
      }
      assert.deepEqual(results[0], results[1], 'seqLen 64 = max_position_embeddings: no growth, as the default');
      assert.notDeepEqual(results[1], results[2]);
      assert.notDeepEqual(results[2], results[4]);
      // seqLen from the positions: mutating the largest position past the threshold changes the frequencies
      const p = Int32Array.of(1, 2, 3);
      const small = r.apply(Float32Array.from(x), { shape, positions: p });
      p[2] = 500;
      const grown = r.apply(Float32Array.from(x), { shape, positions: p });
      assert.deepEqual(grown, fresh(pe, DYNAMIC, x, { shape, positions: p }));
      p[2] = 3;
      assert.deepEqual(r.apply(Float32Array.from(x), { shape, positions: p }), small);
      r.free();
    });

    await t.test('inverse is part of the key (yarn: the attention factor differs); apply then inverse gives x back', () => {
      const r = pe.rope(YARN);
      const shape = [2, 3, 2, D];
      const x = randnF32(rng, 2 * 3 * 2 * D);
      const positions = [7, 8, 9];
      const y = r.apply(Float32Array.from(x), { shape, positions });
      assert.deepEqual(y, fresh(pe, YARN, x, { shape, positions }));
      const back = r.apply(Float32Array.from(y), { shape, positions, inverse: true });
      assert.deepEqual(back, fresh(pe, YARN, y, { shape, positions, inverse: true }));
      for (let i = 0; i < x.length; i++) assert.ok(Math.abs(back[i] - x[i]) < 1e-5, `inverse at ${i}`);
      assert.deepEqual(r.apply(Float32Array.from(x), { shape, positions }), y, 'forward again');
      r.free();
    });

    await t.test('a bad value after a cached table is still refused, naming the element; the rope keeps working', () => {
      const r = pe.rope({ headDim: D });
      const shape = [1, 3, 1, D];
      const x = randnF32(rng, 3 * D);
      const good = r.apply(Float32Array.from(x), { shape, positions: [1, 2, 3] });
      assertThrowsNaming(() => r.apply(Float32Array.from(x), { shape, positions: [1, 2, -3] }), RangeError, 'options.positions[2]', 'got -3');
      assertThrowsNaming(() => r.apply(Float32Array.from(x), { shape, positions: [1, 2.5, 3] }), RangeError, 'options.positions[1]', 'got 2.5');
      assertThrowsNaming(() => r.apply(Float32Array.from(x), { shape, positions: [1, '2', 3] }), TypeError, 'options.positions[1]');
      assertThrowsNaming(() => r.apply(Float32Array.from(x), { shape, positions: Int32Array.of(1, -2, 3) }), RangeError, 'options.positions[1]', 'got -2');
      assert.deepEqual(r.apply(Float32Array.from(x), { shape, positions: [1, 2, 3] }), good);
      assert.deepEqual(r.apply(Float32Array.from(x), { shape, positions: Int32Array.of(1, 2, 3) }), good);
      r.free();
    });

    await t.test('random call sequences against fresh ropes', () => {
      const opts = { headDim: D, maxPositionEmbeddings: 256, scaling: { type: 'dynamic', factor: 3 } };
      const r = pe.rope(opts);
      const arrays = [Int32Array.of(0, 1, 2, 3), [9, 8, 7, 6], Int32Array.of(300, 1, 2, 3)];
      for (let call = 0; call < 150; call++) {
        const which = rng.int(0, 3);
        let positions = which === 3 ? null : arrays[which];
        if (positions && rng.uniform() < 0.3) positions[rng.int(0, 3)] = rng.int(0, 400); // mutate in place
        if (positions && rng.uniform() < 0.2) positions = Array.from(positions); // same values, another object
        const B = rng.pick([1, 2]);
        const S = positions && B === 2 && rng.uniform() < 0.5 ? 2 : 4; // length 4 = batch * seq for [2, 2]
        const heads = rng.pick([1, 3]);
        const layout = rng.pick(['bshd', 'bhsd']);
        const o = {
          shape: layout === 'bhsd' ? [B, heads, S, D] : [B, S, heads, D], // memory order
          layout,
          positions,
          inverse: rng.uniform() < 0.2,
          seqLen: rng.uniform() < 0.2 ? rng.pick([1, 256, 1000]) : undefined,
        };
        const x = randnF32(rng, B * S * heads * D);
        assert.deepEqual(r.apply(Float32Array.from(x), o), fresh(pe, opts, x, o), `call ${call}: ${JSON.stringify(o)}`);
      }
      r.free();
    });

    await t.test('positions that view wasm memory, with a call that grows the memory', () => {
      // positions in wasm memory: an Int32Array over a tensor's bytes. Double the size until the call itself grows
      // the memory (its table block), detaching the positions view while it is being used.
      let grew = false;
      for (let n = 1 << 10; !grew; n *= 2) {
        assert.ok(n <= 1 << 24, 'no apply call grew the memory');
        const r = pe.rope({ headDim: 2 });
        const store = pe.tensor(n);
        const values = Array.from({ length: n }, (_, i) => n - i);
        const view = new Int32Array(store.array.buffer, store.array.byteOffset, n);
        view.set(values);
        const before = pe.memoryBytes;
        const y = r.apply(new Float32Array(2 * n).fill(1), { shape: [1, n, 1, 2], positions: view });
        grew = pe.memoryBytes > before;
        if (grew) assert.equal(view.length, 0, 'the view was detached during the call');
        assert.deepEqual(y, fresh(pe, { headDim: 2 }, new Float32Array(2 * n).fill(1), { shape: [1, n, 1, 2], positions: values }));
        store.free();
        r.free();
      }
    });
  });

  test(`out options: rope.cosSin, pe.alibiBias, pe.sinusoidal write into the given array or tensor [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);

    await t.test('rope.cosSin(positions, { seqLen, out })', () => {
      const r = pe.rope(DYNAMIC);
      const positions = [0, 5, 300];
      const n = positions.length * r.nFreq;
      const want = r.cosSin(positions);
      assert.deepEqual(r.cosSin(positions, { seqLen: 100 }), r.cosSin(positions, 100), 'options form = seqLen argument');
      assert.deepEqual(r.cosSin(positions, {}), want);
      assert.deepEqual(r.cosSin(positions, { out: null }), want);
      const cos = new Float32Array(n);
      const sin = new Float32Array(n);
      const got = r.cosSin(positions, { out: { cos, sin } });
      assert.equal(got.cos, cos);
      assert.equal(got.sin, sin);
      assert.deepEqual({ cos, sin }, want);
      const tc = pe.tensor(n);
      const ts = pe.tensor(n);
      const gotT = r.cosSin(Int32Array.from(positions), { out: { cos: tc, sin: ts } });
      assert.equal(gotT.cos, tc);
      assert.equal(gotT.sin, ts);
      assert.deepEqual({ cos: tc.array, sin: ts.array }, want);
      const viaView = r.cosSin(positions, { out: { cos: tc.array, sin: sin } });
      assert.deepEqual(viaView.cos, want.cos);
      // steady state: repeated calls into tensors do not grow the memory
      const bytes = pe.memoryBytes;
      for (let i = 0; i < 1000; i++) r.cosSin(positions, { out: { cos: tc, sin: ts } });
      assert.equal(pe.memoryBytes, bytes);
      assertThrowsNaming(() => r.cosSin(positions, { out: { cos: new Float32Array(n + 1), sin } }), RangeError, 'options.out.cos', `${n}`, `got ${n + 1}`);
      assertThrowsNaming(() => r.cosSin(positions, { out: { cos, sin: pe.tensor(n - 1) } }), RangeError, 'options.out.sin', `${n}`);
      assertThrowsNaming(() => r.cosSin(positions, { out: { cos } }), TypeError, 'options.out.sin', 'Float32Array');
      assertThrowsNaming(() => r.cosSin(positions, { out: cos }), TypeError, 'options.out', '{ cos, sin }');
      assertThrowsNaming(() => r.cosSin(positions, { out: { cos, sin: cos } }), RangeError, 'options.out.cos', 'overlap');
      assertThrowsNaming(() => r.cosSin(positions, { out: { cos: tc, sin: tc } }), RangeError, 'overlap');
      assertThrowsNaming(() => r.cosSin([0, -1], { out: { cos: new Float32Array(2 * r.nFreq), sin: new Float32Array(2 * r.nFreq) } }), RangeError, 'positions[1]', 'got -1');
      assertThrowsNaming(() => r.cosSin(positions, { seqLen: -1 }), RangeError, 'seqLen');
      assertThrowsNaming(() => r.cosSin(positions, [3]), TypeError, 'seqLen');
      tc.free();
      ts.free();
      r.free();
    });

    await t.test('pe.alibiBias(nHeads, qLen, kLen, { causal, slopes, out })', () => {
      for (const causal of [false, true]) {
        for (const slopes of [undefined, [0.5, -0.25, 1, 2, 0.125]]) {
          const [H, qL, kL] = [5, 3, 7];
          const n = H * qL * kL;
          const want = pe.alibiBias(H, qL, kL, { causal, slopes });
          const out = new Float32Array(n).fill(42);
          assert.equal(pe.alibiBias(H, qL, kL, { causal, slopes, out }), out);
          assert.deepEqual(out, want);
          const t2 = pe.tensor(n);
          assert.equal(pe.alibiBias(H, qL, kL, { causal, slopes, out: t2 }), t2);
          assert.deepEqual(t2.array, want);
          const v = t2.array;
          v.fill(0);
          assert.deepEqual(pe.alibiBias(H, qL, kL, { causal, slopes, out: v }), want);
          t2.free();
        }
      }
      const t3 = pe.tensor(8 * 64 * 64);
      const bytes = pe.memoryBytes;
      for (let i = 0; i < 200; i++) pe.alibiBias(8, 64, 64, { causal: true, out: t3 });
      assert.equal(pe.memoryBytes, bytes, 'tensor out: no growth');
      t3.free();
      assertThrowsNaming(() => pe.alibiBias(2, 3, 4, { out: new Float32Array(23) }), RangeError, 'options.out.length', 'nHeads * qLen * kLen', '24', 'got 23');
      assertThrowsNaming(() => pe.alibiBias(2, 3, 4, { out: new Float64Array(24) }), TypeError, 'options.out', 'Float32Array');
      assertThrowsNaming(() => pe.alibiBias(2, 3, 4, { out: 24 }), TypeError, 'options.out');
    });

    await t.test('pe.sinusoidal(seqLen, dModel, { ..., out })', () => {
      for (const o of [{}, { pairing: 'half', offset: 7 }, { variant: 'tensor2tensor', base: 500 }]) {
        const want = pe.sinusoidal(9, 10, o);
        const out = new Float32Array(90).fill(3);
        assert.equal(pe.sinusoidal(9, 10, { ...o, out }), out);
        assert.deepEqual(out, want);
        const t2 = pe.tensor(90);
        assert.equal(pe.sinusoidal(9, 10, { ...o, out: t2 }), t2);
        assert.deepEqual(t2.array, want);
        t2.free();
      }
      assertThrowsNaming(() => pe.sinusoidal(9, 10, { out: new Float32Array(91) }), RangeError, 'options.out.length', 'seqLen * dModel', '90', 'got 91');
      assertThrowsNaming(() => pe.sinusoidal(9, 10, { out: [] }), TypeError, 'options.out', 'Float32Array');
    });
  });

  test(`rope.apply steady state: no memory growth for cache hits, misses, q+k [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const r = pe.rope({ headDim: 64 });
    const shape = [1, 1, 8, 64];
    const q = pe.tensor(8 * 64);
    const k = pe.tensor(2 * 64);
    const p = Int32Array.of(0);
    const run = (i) => {
      p[0] = i;
      r.apply(q, { shape, positions: p, k, kHeads: 2 }); // miss: a new position
      r.apply(q, { shape, positions: p }); // hit
      r.apply(q, { shape: [1, 8, 1, 64], layout: 'bhsd' }); // default positions (the same tensor as [b, h, s, d])
    };
    run(0);
    const bytes = pe.memoryBytes;
    for (let i = 1; i <= 20000; i++) run(i);
    assert.equal(pe.memoryBytes, bytes);
    q.free();
    k.free();
    r.free();
  });
}

for (const build of BUILDS) {
  test(`attention with kRotated: keys rotated once by rope.apply give, bit for bit, what attention rotating them gives [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(23);
    const cases = [
      { rope: { headDim: 32 }, B: 1, H: 4, kvH: 4, qLen: 1, kLen: 37, layout: 'bshd' }, // decode
      { rope: { headDim: 32, pairing: 'interleaved' }, B: 2, H: 4, kvH: 2, qLen: 5, kLen: 5, layout: 'bhsd', causal: true },
      { rope: YARN, B: 1, H: 2, kvH: 1, qLen: 3, kLen: 20, layout: 'bshd', alibi: true, positions: { q: [40, 41, 42], k: Array.from({ length: 20 }, (_, j) => 3 * j) } },
      { rope: DYNAMIC, B: 1, H: 2, kvH: 2, qLen: 2, kLen: 9, layout: 'bhsd', seqLen: 300 },
    ];
    for (const c of cases) {
      await t.test(`${JSON.stringify(c.rope)} ${c.layout} heads ${c.H}/${c.kvH} q ${c.qLen} k ${c.kLen}`, () => {
        const D = c.rope.headDim;
        const r = pe.rope(c.rope);
        const q = randnF32(rng, c.B * c.H * c.qLen * D);
        const k = randnF32(rng, c.B * c.kvH * c.kLen * D);
        const v = randnF32(rng, c.B * c.kvH * c.kLen * D);
        const shape = { batch: c.B, heads: c.H, kvHeads: c.kvH, qLen: c.qLen, kLen: c.kLen, headDim: D };
        const common = { shape, layout: c.layout, rope: r, causal: c.causal, alibi: c.alibi, positions: c.positions };
        // seqLen: the same for the keys' rotation and the queries' (dynamic, longrope), as pe.attention decides it
        const allPositions = c.positions ? [...c.positions.q, ...c.positions.k] : [c.kLen - 1];
        const seqLen = c.seqLen ?? Math.max(...allPositions) + 1;
        const want = pe.attention(q, k, v, { ...common, seqLen: c.seqLen }).out;
        // rotate the keys once, as a decoder fills its cache: k is [batch, kLen, kvHeads, D] in bshd
        const kShape = c.layout === 'bshd' ? [c.B, c.kLen, c.kvH, D] : null;
        const kRot = Float32Array.from(k);
        const kPos = c.positions ? c.positions.k : undefined;
        if (kShape) {
          r.apply(kRot, { shape: kShape, layout: 'bshd', positions: kPos, seqLen });
        } else {
          r.apply(kRot, { shape: [c.B, c.kvH, c.kLen, D], layout: 'bhsd', positions: kPos, seqLen });
        }
        const got = pe.attention(q, kRot, v, { ...common, seqLen: c.seqLen, kRotated: true }).out;
        assert.deepEqual(got, want, 'bit for bit');
        // without a rope, kRotated changes nothing
        const noRope = { ...common, rope: null };
        assert.deepEqual(pe.attention(q, k, v, { ...noRope, kRotated: true }).out, pe.attention(q, k, v, noRope).out);
        assertThrowsNaming(() => pe.attention(q, kRot, v, { ...common, kRotated: 1 }), TypeError, 'options.kRotated', 'boolean');
        r.free();
      });
    }
  });
}
