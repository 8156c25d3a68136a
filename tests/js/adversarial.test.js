// Inputs an attacker or a careless caller would pass (issue 10's classes): block sizes past 2^31, objects
// posing as typed arrays, lengths that change between reads, configs whose numbers leave the finite range,
// errors of the wrong kind, and a leak. Each case must end in a clean TypeError / RangeError naming the
// argument (or in a right result), and afterwards the instance must still compute a known RoPE apply bit for
// bit, a tensor made before must be untouched, and the ALiBi slopes must be right.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, assertThrowsNaming } from './helpers.js';

/** A fixed apply, its result computed once; and a canary tensor whose contents must never change. */
function makeWitness(pe) {
  const rope = pe.rope({ headDim: 16, base: 10000 });
  const rng = makeRng(10);
  const x = randnF32(rng, 2 * 3 * 2 * 16);
  const positions = Int32Array.from([5, 70000, 3]);
  const expected = rope.apply(Float32Array.from(x), { shape: [2, 3, 2, 16], positions });
  const canaryData = randnF32(rng, 257);
  const canary = pe.tensor(canaryData);
  const slopes4 = [0.25, 0.0625, 0.015625, 0.00390625]; // 2^(-8(h+1)/4), exact in float32
  return {
    check(what) {
      const y = rope.apply(Float32Array.from(x), { shape: [2, 3, 2, 16], positions });
      assert.deepEqual(y, expected, `after ${what}: a known RoPE apply must give the same bits`);
      assert.deepEqual(canary.array, canaryData, `after ${what}: a tensor made before must be untouched`);
      assert.deepEqual(Array.from(pe.alibiSlopes(4)), slopes4, `after ${what}: alibiSlopes(4)`);
    },
  };
}

/** A Proxy over an array whose `length` reads `first` the first time and `later` after that. */
function lengthFlip(target, later) {
  let reads = 0;
  return new Proxy(target, {
    get(t, key, receiver) {
      if (key === 'length') return reads++ === 0 ? t.length : later;
      return Reflect.get(t, key, receiver);
    },
  });
}

/** An array-like whose element `index` reads `first` once, then `later`. */
function valueFlip(values, index, later) {
  let reads = 0;
  return new Proxy(values, {
    get(t, key, receiver) {
      if (key === String(index)) return reads++ === 0 ? t[index] : later;
      return Reflect.get(t, key, receiver);
    },
  });
}

for (const build of BUILDS) {
  test(`class 1: block sizes past 2^31 are refused, and no slot keeps a size it does not have [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    const bias8 = pe.alibiBias(8, 64, 64);
    const cases = [
      ['alibiSlopes(2^29 + 1)', () => pe.alibiSlopes(2 ** 29 + 1), 'alibiSlopes', 'slopes', '2147483647'],
      ['alibiBias(1, 1, 2^29 + 1)', () => pe.alibiBias(1, 1, 2 ** 29 + 1), 'alibiBias', 'bias', '2147483647'],
      ['sinusoidal(1, 2^29 + 1)', () => pe.sinusoidal(1, 2 ** 29 + 1), 'sinusoidal', 'table', '2147483647'],
      [
        'rope({ headDim: 1024 }).cosSin(Int32Array(2^20 + 1))',
        () => {
          const r = pe.rope({ headDim: 1024 });
          try {
            r.cosSin(new Int32Array(2 ** 20 + 1));
          } finally {
            r.free();
          }
        },
        'rope.cosSin',
        'cos table',
        '2147483647',
      ],
      [
        'attention returnWeights at 16385 x 32768',
        () =>
          pe.attention(new Float32Array(16385), new Float32Array(32768), new Float32Array(32768), {
            shape: { heads: 1, qLen: 16385, kLen: 32768, headDim: 1 },
            returnWeights: true,
          }),
        'attention',
        'weights',
        '2147483647',
      ],
      [
        'learned.lookup past 2^31 bytes',
        () => {
          const L = pe.learned(new Float32Array(2 ** 20), { dModel: 2 ** 20 });
          try {
            L.lookup(new Int32Array(2 ** 9 + 1));
          } finally {
            L.free();
          }
        },
        'learned.lookup',
        'rows',
        '2147483647',
      ],
      [
        'alibiBiasFromMask past 2^31 bytes',
        () => pe.alibiBiasFromMask(2 ** 28 + 1, [[1, 1]]),
        'alibiBiasFromMask',
        'bias',
        '2147483647',
      ],
    ];
    for (const [name, fn, ...needles] of cases) {
      await t.test(name, () => {
        assertThrowsNaming(fn, RangeError, ...needles);
        w.check(name);
        assert.deepEqual(pe.alibiBias(8, 64, 64), bias8, `after ${name}: alibiBias(8, 64, 64)`);
      });
    }
    await t.test('a failed block leaves its slot empty: the next call of that slot allocates what it needs', () => {
      assertThrowsNaming(() => pe.alibiSlopes(2 ** 29 + 1), RangeError, 'alibiSlopes');
      const other = pe.tensor(Float32Array.from({ length: 4096 }, (_, i) => i));
      const bias = pe.alibiBias(8, 64, 64); // the RESULT slot the failed call used
      assert.deepEqual(bias, bias8);
      assert.deepEqual(other.array, Float32Array.from({ length: 4096 }, (_, i) => i), 'an unrelated tensor is not overwritten');
      other.free();
      w.check('a failed block');
    });
  });

  test(`class 2: objects posing as typed arrays are refused with a TypeError naming the argument [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    const rope = pe.rope({ headDim: 8 });
    const victim = pe.tensor(64);
    const wasmBuffer = victim.array.buffer;
    /** A look-alike claiming to be `Ctor` data of n elements at byte 0 (or `at`) of wasm memory. */
    const fake = (Ctor, n, at = 0) =>
      Object.create(Ctor.prototype, {
        length: { value: n },
        buffer: { value: wasmBuffer },
        byteOffset: { value: at },
        byteLength: { value: n * Ctor.BYTES_PER_ELEMENT },
      });
    const proxy = (a) => new Proxy(a, {});
    const n = 8;
    const cases = [
      ['rope.apply x: prototype look-alike', () => rope.apply(fake(Float32Array, n), { shape: [1, 1, 1, 8] }), 'rope.apply', 'x'],
      ['rope.apply x: Proxy of a Float32Array', () => rope.apply(proxy(new Float32Array(n)), { shape: [1, 1, 1, 8] }), 'rope.apply', 'x'],
      ['rope.apply options.k: look-alike', () => rope.apply(new Float32Array(n), { shape: [1, 1, 1, 8], k: fake(Float32Array, n) }), 'options.k'],
      ['rope.apply positions: Int32Array look-alike', () => rope.apply(new Float32Array(n), { shape: [1, 1, 1, 8], positions: fake(Int32Array, 1) }), 'options.positions'],
      ['rope.cosSin positions: Proxy of an Int32Array', () => rope.cosSin(proxy(new Int32Array(2))), 'rope.cosSin', 'positions'],
      ['rope.cosSin out.cos: look-alike', () => rope.cosSin([1], { out: { cos: fake(Float32Array, 4), sin: new Float32Array(4) } }), 'options.out.cos'],
      ['pe.tensor: look-alike', () => pe.tensor(fake(Float32Array, 16)), 'tensor'],
      ['pe.tensor: Proxy of a Float32Array', () => pe.tensor(proxy(new Float32Array(16))), 'tensor'],
      ['sinusoidal.add x: look-alike', () => pe.sinusoidal.add(fake(Float32Array, 8), { shape: [1, 1, 8] }), 'sinusoidal.add', 'x'],
      ['sinusoidal out: Proxy', () => pe.sinusoidal(1, 8, { out: proxy(new Float32Array(8)) }), 'options.out'],
      ['learned table: look-alike', () => pe.learned(fake(Float32Array, 16), { dModel: 4 }), 'learned', 'table'],
      ['alibiBias slopes: Float32Array look-alike', () => pe.alibiBias(2, 2, 2, { slopes: fake(Float32Array, 2) }), 'options.slopes'],
      ['alibiBias out: look-alike', () => pe.alibiBias(1, 2, 2, { out: fake(Float32Array, 4) }), 'options.out'],
      ['alibiBiasFromMask mask: Int32Array look-alike', () => pe.alibiBiasFromMask(2, fake(Int32Array, 4)), 'attentionMask'],
      [
        'attention q: look-alike',
        () => pe.attention(fake(Float32Array, 8), new Float32Array(8), new Float32Array(8), { shape: { heads: 1, qLen: 1, headDim: 8 } }),
        'attention',
        'q',
      ],
      [
        'attention positions: Int32Array look-alike',
        () =>
          pe.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), {
            shape: { heads: 1, qLen: 1, headDim: 8 },
            positions: fake(Int32Array, 1),
          }),
        'options.positions',
      ],
      [
        'attention alibi: Proxy of a Float32Array',
        () =>
          pe.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), {
            shape: { heads: 1, qLen: 1, headDim: 8 },
            alibi: proxy(new Float32Array(1)),
          }),
        'options.alibi',
      ],
    ];
    for (const [name, fn, ...needles] of cases) {
      await t.test(name, () => {
        victim.array.fill(7);
        const e = assertThrowsNaming(fn, TypeError, ...needles);
        assert.match(e.message, /not a typed array|must be/);
        assert.deepEqual(Array.from(victim.array), new Array(64).fill(7), `${name}: nothing was written through the look-alike`);
        w.check(name);
      });
    }
  });

  test(`class 3: each length is read once [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    const rope = pe.rope({ headDim: 8 });
    const BIG = 2 ** 26;
    await t.test('rope.cosSin positions', () => {
      const got = rope.cosSin(lengthFlip([0, 1, 2], BIG));
      assert.deepEqual(got, rope.cosSin([0, 1, 2]));
      w.check('rope.cosSin');
    });
    await t.test('rope.apply positions', () => {
      const x = randnF32(makeRng(2), 3 * 8);
      const got = rope.apply(Float32Array.from(x), { shape: [1, 3, 1, 8], positions: lengthFlip([4, 5, 6], BIG) });
      assert.deepEqual(got, rope.apply(Float32Array.from(x), { shape: [1, 3, 1, 8], positions: [4, 5, 6] }));
      w.check('rope.apply');
    });
    await t.test('alibiBias slopes', () => {
      const got = pe.alibiBias(2, 3, 3, { slopes: lengthFlip([0.5, 0.25], BIG) });
      assert.deepEqual(got, pe.alibiBias(2, 3, 3, { slopes: [0.5, 0.25] }));
      w.check('alibiBias');
    });
    await t.test('alibiBiasFromMask flat mask', () => {
      const got = pe.alibiBiasFromMask(2, lengthFlip([1, 1, 0, 1], BIG));
      assert.deepEqual(got, pe.alibiBiasFromMask(2, [1, 1, 0, 1]));
      w.check('alibiBiasFromMask');
    });
    await t.test('learned.lookup and learned.add positions', () => {
      const L = pe.learned(Float32Array.from({ length: 4 * 3 }, (_, i) => i), { dModel: 3 });
      assert.deepEqual(L.lookup(lengthFlip([3, 0], BIG)), L.lookup([3, 0]));
      const x = new Float32Array(6);
      assert.deepEqual(L.add(x, { shape: [1, 2, 3], positions: lengthFlip([2, 1], BIG) }), Float32Array.from([6, 7, 8, 3, 4, 5]));
      L.free();
      w.check('learned');
    });
    await t.test('sinusoidal.add positions', () => {
      const got = pe.sinusoidal.add(new Float32Array(8), { shape: [1, 2, 4], positions: lengthFlip([9, 3], BIG) });
      assert.deepEqual(got, pe.sinusoidal.add(new Float32Array(8), { shape: [1, 2, 4], positions: [9, 3] }));
      w.check('sinusoidal.add');
    });
    await t.test('attention positions (one array and { q, k })', () => {
      const rng = makeRng(4);
      const q = randnF32(rng, 2 * 4);
      const k = randnF32(rng, 3 * 4);
      const v = randnF32(rng, 3 * 4);
      const shape = { heads: 1, qLen: 2, kLen: 3, headDim: 4 };
      const ref = pe.attention(q, k, v, { shape, causal: true, positions: [0, 5, 6] }).out;
      assert.deepEqual(pe.attention(q, k, v, { shape, causal: true, positions: lengthFlip([0, 5, 6], BIG) }).out, ref);
      const refQK = pe.attention(q, k, v, { shape, causal: true, positions: { q: [5, 6], k: [0, 5, 6] } }).out;
      assert.deepEqual(refQK, ref);
      const got = pe.attention(q, k, v, { shape, causal: true, positions: { q: lengthFlip([5, 6], BIG), k: lengthFlip([0, 5, 6], BIG) } }).out;
      assert.deepEqual(got, ref);
      w.check('attention');
    });
    await t.test('attention alibi slopes', () => {
      const rng = makeRng(5);
      const q = randnF32(rng, 2 * 4);
      const shape = { heads: 2, qLen: 1, kLen: 1, headDim: 4 };
      const ref = pe.attention(q, q, q, { shape, alibi: [0.5, 0.25] }).out;
      assert.deepEqual(pe.attention(q, q, q, { shape, alibi: lengthFlip([0.5, 0.25], BIG) }).out, ref);
      w.check('attention alibi');
    });
    await t.test('an Int32Array that shrinks while its options are read is named', () => {
      const buf = new ArrayBuffer(16, { maxByteLength: 64 });
      const positions = new Int32Array(buf); // length-tracking
      positions.set([1, 2, 3, 4]);
      const options = {
        shape: [1, 4, 1, 8],
        positions,
        get layout() {
          buf.resize(8); // two positions left
          return 'bshd';
        },
      };
      // shape and positions are read before layout here, so the length read first is 4; the copy must notice.
      let e = null;
      try {
        rope.apply(new Float32Array(32), options);
      } catch (err) {
        e = err;
      }
      if (e !== null) {
        assert.ok(e instanceof RangeError || e instanceof TypeError, `a clean error, got ${e}`);
        assert.match(e.message, /positions/);
      }
      w.check('a shrinking Int32Array');
    });
  });

  test(`class 5: configs whose angles or factors leave the finite range are refused, naming the field and the bound [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    const yarn = { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096 };
    const cases = [
      // 2147483647 * (1 / 1e-10) reached 2^56, where cos/sin left [-1, 1] (cos ~ 4.8e18)
      ['linear factor 1e-10', () => pe.rope({ headDim: 2, scaling: { type: 'linear', factor: 1e-10 } }), 'scaling.factor', 'PE_ROPE_MAX_INV_FREQ', 'got 1e-10'],
      ['linear factor 1e-309 (an infinite frequency, NaN angles)', () => pe.rope({ headDim: 2, scaling: { type: 'linear', factor: 1e-309 } }), 'scaling.factor', 'got 1e-309'],
      ['base 5e-324 (infinite frequencies)', () => pe.rope({ headDim: 64, base: 5e-324 }), 'base', 'PE_MAX_FREQUENCY', 'got 5e-324'],
      ['llama3 over a base below 1', () => pe.rope({ headDim: 64, base: 0.001, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } }), 'base', 'got 0.001'],
      ['longrope short factors 1e-300', () => pe.rope({ headDim: 64, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, shortFactor: new Array(32).fill(1e-300), longFactor: new Array(32).fill(1) } }), 'scaling.shortFactor', 'scaling.longFactor'],
      ['yarn mscale 1e300 (an infinite attention factor)', () => pe.rope({ headDim: 64, scaling: { ...yarn, mscale: 1e300, mscaleAllDim: 1 } }), 'attention factor', 'scaling.mscale', 'PE_ROPE_MAX_SCALE'],
      ['yarn attentionFactor 1e39', () => pe.rope({ headDim: 64, scaling: { ...yarn, attentionFactor: 1e39 } }), 'attention factor', 'scaling.attentionFactor', 'got 1e+39'],
      ['sinusoidal base 5e-324 (six non-finite values)', () => pe.sinusoidal(2, 8, { base: 5e-324 }), 'sinusoidal', 'options.base', 'PE_MAX_FREQUENCY', 'got 5e-324'],
      ['sinusoidal.add base 5e-324', () => pe.sinusoidal.add(new Float32Array(8), { shape: [1, 1, 8], base: 5e-324 }), 'sinusoidal.add', 'options.base'],
    ];
    for (const [name, fn, ...needles] of cases) {
      await t.test(name, () => {
        assertThrowsNaming(fn, RangeError, ...needles);
        w.check(name);
      });
    }
    await t.test('configs at the bounds are accepted and give finite, right numbers', () => {
      // inverse frequency 2 exactly (the bound): the largest angle is 2 * (2^31 - 1), reduced exactly in double
      const r = pe.rope({ headDim: 2, scaling: { type: 'linear', factor: 0.5 } });
      const p = 2147483647;
      const { cos, sin } = r.cosSin([p, 1]);
      assert.ok(Math.abs(cos[0] - Math.cos(2 * p)) <= 1e-7 && Math.abs(sin[0] - Math.sin(2 * p)) <= 1e-7, `cos/sin at ${p}: ${cos[0]}, ${sin[0]}`);
      assert.ok(Math.abs(cos[1] - Math.cos(2)) <= 1e-7, `cos(2): ${cos[1]}`);
      r.free();
      // sinusoidal base 0.5: frequencies 2^(i/4) for i < 4, all <= 2
      const table = pe.sinusoidal(2, 8, { base: 0.5 });
      for (let i = 0; i < 4; i++) {
        const f = 2 ** (i / 4);
        assert.ok(Math.abs(table[8 + 2 * i] - Math.sin(f)) <= 1e-7, `sin of frequency ${i}`);
        assert.ok(Math.abs(table[8 + 2 * i + 1] - Math.cos(f)) <= 1e-7, `cos of frequency ${i}`);
      }
      assert.ok(table.every(Number.isFinite));
      w.check('configs at the bounds');
    });
  });

  test(`class 6: errors of the right kind, naming the argument [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    await t.test('use after free: TypeError naming the freed object', () => {
      const tensor = pe.tensor(4);
      tensor.free();
      assertThrowsNaming(() => tensor.array, TypeError, 'tensor', 'freed');
      const r = pe.rope({ headDim: 8 });
      r.free();
      for (const call of [() => r.invFreq(), () => r.attentionScaling(), () => r.cosSin([1]), () => r.apply(new Float32Array(8), { shape: [1, 1, 1, 8] }), () => r.rerotate(new Float32Array(8), 1)]) {
        assertThrowsNaming(call, TypeError, 'rope', 'freed');
      }
      const L = pe.learned(new Float32Array(8), { dModel: 4 });
      L.free();
      assertThrowsNaming(() => L.lookup([0]), TypeError, 'learned', 'freed');
      assertThrowsNaming(() => L.add(new Float32Array(4), { shape: [1, 1, 4] }), TypeError, 'learned', 'freed');
      const x = pe.tensor(8);
      const r2 = pe.rope({ headDim: 8 });
      x.free();
      assertThrowsNaming(() => r2.apply(x, { shape: [1, 1, 1, 8] }), TypeError, 'x', 'freed');
      r2.free();
      assertThrowsNaming(
        () => pe.attention(new Float32Array(8), new Float32Array(8), new Float32Array(8), { shape: { heads: 1, qLen: 1, headDim: 8 }, rope: r2 }),
        TypeError,
        'options.rope',
        'freed',
      );
      w.check('use after free');
    });
    await t.test('a slope that changes between reads: read once, so the first value is used', () => {
      const rng = makeRng(6);
      const q = randnF32(rng, 2 * 4);
      const shape = { heads: 2, qLen: 1, kLen: 1, headDim: 4 };
      const ref = pe.attention(q, q, q, { shape, alibi: [0.5, 0.25] }).out;
      assert.deepEqual(pe.attention(q, q, q, { shape, alibi: valueFlip([0.5, 0.25], 1, Infinity) }).out, ref);
      assert.deepEqual(pe.alibiBias(2, 2, 2, { slopes: valueFlip([0.5, 0.25], 0, NaN) }), pe.alibiBias(2, 2, 2, { slopes: [0.5, 0.25] }));
      w.check('a changing slope');
    });
    await t.test('an option that changes between reads: each option is read once', () => {
      /** options whose `key` reads `first` once, then `later` */
      const flipping = (base, key, first, later) => {
        let reads = 0;
        return Object.defineProperty({ ...base }, key, { enumerable: true, get: () => (reads++ === 0 ? first : later) });
      };
      const rng = makeRng(8);
      const q = randnF32(rng, 2 * 4);
      const shape = { heads: 2, qLen: 1, kLen: 1, headDim: 4 };
      assert.deepEqual(pe.attention(q, q, q, flipping({ shape }, 'scale', 0.5, Infinity)).out, pe.attention(q, q, q, { shape, scale: 0.5 }).out);
      assert.deepEqual(pe.sinusoidal(3, 8, flipping({}, 'base', 100, -1)), pe.sinusoidal(3, 8, { base: 100 }));
      assert.deepEqual(pe.alibiBias(2, 3, 3, flipping({}, 'causal', true, 'yes')), pe.alibiBias(2, 3, 3, { causal: true }));
      const r = pe.rope(flipping({ headDim: 8 }, 'base', 500, 0));
      assert.equal(r.base, 500);
      const s = pe.rope({ headDim: 8, scaling: flipping({ type: 'linear' }, 'factor', 2, 1e-300) });
      assert.equal(s.config.scaling.factor, 2);
      r.free();
      s.free();
      w.check('a changing option');
    });
    await t.test('a position that changes between reads: read once', () => {
      const rope = pe.rope({ headDim: 8 });
      assert.deepEqual(rope.cosSin(valueFlip([3, 4], 1, -5)), rope.cosSin([3, 4]));
      const x = randnF32(makeRng(7), 16);
      assert.deepEqual(
        rope.apply(Float32Array.from(x), { shape: [1, 2, 1, 8], positions: valueFlip([3, 4], 0, -1) }),
        rope.apply(Float32Array.from(x), { shape: [1, 2, 1, 8], positions: [3, 4] }),
      );
      rope.free();
      w.check('a changing position');
    });
    await t.test('BigInt, detached and look-alike arrays get posenc TypeErrors', () => {
      const rope = pe.rope({ headDim: 8 });
      assertThrowsNaming(() => rope.cosSin(new BigInt64Array(2)), TypeError, 'rope.cosSin', 'positions');
      assertThrowsNaming(() => pe.alibiBias(2, 1, 1, { slopes: new BigInt64Array(2) }), TypeError, 'options.slopes');
      const buf = new ArrayBuffer(32);
      const detached = new Float32Array(buf);
      structuredClone(buf, { transfer: [buf] });
      assert.equal(detached.length, 0);
      assertThrowsNaming(() => pe.tensor(detached), TypeError, 'tensor', 'detached');
      assertThrowsNaming(() => rope.apply(detached, { shape: [1, 1, 1, 8] }), TypeError, 'rope.apply', 'x', 'detached');
      const ibuf = new ArrayBuffer(16);
      const detachedPositions = new Int32Array(ibuf);
      structuredClone(ibuf, { transfer: [ibuf] });
      assertThrowsNaming(() => rope.cosSin(detachedPositions), TypeError, 'rope.cosSin', 'positions', 'detached');
      const L = pe.learned(new Float32Array(8), { dModel: 4 });
      assertThrowsNaming(() => L.lookup(detachedPositions), TypeError, 'learned.lookup', 'positions', 'detached');
      L.free();
      assertThrowsNaming(() => pe.alibiBias(2, 1, 1, { slopes: detached }), TypeError, 'options.slopes', 'detached');
      assertThrowsNaming(() => rope.cosSin([1], { out: { cos: detached, sin: new Float32Array(4) } }), TypeError, 'options.out.cos', 'detached');
      assertThrowsNaming(() => pe.tensor(Object.create(Float32Array.prototype)), TypeError, 'tensor', 'not a typed array');
      assertThrowsNaming(() => pe.tensor(new Float64Array(2)), TypeError, 'tensor', 'Float32Array');
      rope.free();
      w.check('BigInt, detached and look-alike arrays');
    });
    await t.test('messages render look-alikes and throwing Proxies without running their getters', () => {
      const hostile = new Proxy({}, {
        get() {
          throw new Error('a getter ran');
        },
        getPrototypeOf() {
          throw new Error('getPrototypeOf ran');
        },
      });
      assertThrowsNaming(() => pe.tensor(hostile), TypeError, 'tensor');
      assertThrowsNaming(() => pe.rope({ headDim: 8 }).cosSin(hostile), TypeError, 'positions');
      w.check('a hostile Proxy');
    });
  });

  test(`class 7: a failed pe.tensor frees what it took [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    const buf = new ArrayBuffer(1 << 16);
    const detached = new Float32Array(buf);
    structuredClone(buf, { transfer: [buf] });
    for (let i = 0; i < 2000; i++) {
      try {
        pe.tensor(detached);
      } catch {
        // expected
      }
    }
    const before = pe.memoryBytes;
    for (let i = 0; i < 200000; i++) {
      try {
        pe.tensor(detached);
      } catch (e) {
        if (!(e instanceof TypeError)) throw e;
      }
    }
    assert.equal(pe.memoryBytes, before, '200000 failed pe.tensor calls must not grow the memory');
    w.check('failed pe.tensor calls');
  });

  test(`rope.config round-trips into pe.rope [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const configs = [
      { headDim: 64 },
      { headDim: 64, base: 500000, scaling: { type: 'linear', factor: 4 } },
      { headDim: 64, maxPositionEmbeddings: 2048, scaling: { type: 'dynamic', factor: 2 } },
      { headDim: 64, maxPositionEmbeddings: 131072, scaling: { type: 'yarn', originalMaxPositionEmbeddings: 4096 } },
      { headDim: 64, rotaryDim: 48, maxPositionEmbeddings: 131072, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 4096, shortFactor: new Array(24).fill(1.5), longFactor: new Array(24).fill(3) } },
      { headDim: 64, base: 500000, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } },
      { headDim: 64, rotaryDim: 16, scaling: { type: 'proportional', factor: 2 } },
      { headDim: 32, pairing: 'interleaved', base: 1 },
    ];
    for (const options of configs) {
      const a = pe.rope(options);
      const c = a.config;
      const b = pe.rope(c);
      assert.deepEqual(b.config, c, `${JSON.stringify(options)}: config of the rebuilt rope`);
      for (const seqLen of [undefined, 100, 300000]) {
        assert.deepEqual(b.invFreq64(seqLen), a.invFreq64(seqLen), `${JSON.stringify(options)}: invFreq64(${seqLen})`);
        assert.equal(b.attentionScaling(seqLen), a.attentionScaling(seqLen));
      }
      // another head size from the same config: the same scaling, resolved for it
      const d = pe.rope({ ...c, headDim: c.rotaryDim === undefined ? 24 : Math.max(24, c.rotaryDim) });
      assert.equal(d.type, a.type, `${JSON.stringify(options)}: { ...config, headDim: 24 } keeps the scaling type`);
      assert.deepEqual(d.config.scaling.type, c.scaling.type);
      for (const r of [a, b, d]) r.free();
    }
    // the defaults the C core filled in are what the config shows
    const yarn = pe.rope({ headDim: 64, maxPositionEmbeddings: 131072, scaling: { type: 'yarn', originalMaxPositionEmbeddings: 4096 } });
    assert.equal(yarn.config.scaling.factor, 32);
    assert.equal(yarn.config.scaling.betaFast, 32);
    assert.equal(yarn.config.scaling.betaSlow, 1);
    assert.equal(yarn.config.scaling.truncate, true);
    assert.equal(yarn.config.base, 10000);
    assert.ok(Math.abs(yarn.config.scaling.attentionFactor - (0.1 * Math.log(32) + 1)) < 1e-15);
    yarn.free();
    // a flat spread of the old shape is an error, not a default RoPE
    assertThrowsNaming(() => pe.rope({ headDim: 24, type: 'linear', factor: 4 }), TypeError, 'options.type', 'not an option');
    assertThrowsNaming(() => pe.rope({ headDim: 24, scaling: { type: 'linear', factr: 4 } }), TypeError, 'scaling.factr', 'did you mean factor');
  });
}

for (const build of BUILDS) {
  test(`strict options: an unknown key is a TypeError naming it and the nearest known key [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: 2 });
    const x = () => new Float32Array(2);
    const cases = [
      [() => rope.apply(x(), { shape: [1, 1, 1, 2], position: [5] }), 'rope.apply', 'options.position', 'did you mean positions'],
      [() => rope.apply(x(), { shape: [1, 1, 1, 2], kheads: 1 }), 'rope.apply', 'options.kheads', 'did you mean kHeads'],
      [() => rope.cosSin([1], { seqlen: 4 }), 'rope.cosSin', 'options.seqlen', 'did you mean seqLen'],
      [() => rope.cosSin([1], { out: { cos: new Float32Array(1), sine: new Float32Array(1) } }), 'rope.cosSin', 'options.out.sine', 'did you mean sin'],
      [() => rope.rerotate(x(), 1, { layuot: 'bshd' }), 'rope.rerotate', 'options.layuot', 'did you mean layout'],
      [() => pe.rope({ headDim: 8, theta: 10000 }), 'rope', 'options.theta'],
      [() => pe.alibiBias(2, 2, 2, { casual: true }), 'alibiBias', 'options.casual', 'did you mean causal'],
      [() => pe.alibiBiasFromMask(2, [[1, 1]], { slope: [1, 2] }), 'alibiBiasFromMask', 'options.slope', 'did you mean slopes'],
      [() => pe.sinusoidal(2, 4, { offest: 3 }), 'sinusoidal', 'options.offest', 'did you mean offset'],
      [() => pe.sinusoidal.add(new Float32Array(8), { shape: [1, 2, 4], offest: 3 }), 'sinusoidal.add', 'options.offest'],
      [() => pe.learned(new Float32Array(8), { dModel: 4, maxlen: 2 }), 'learned', 'options.maxlen', 'did you mean maxLen'],
      [() => pe.learned(new Float32Array(8), { dModel: 4 }).add(new Float32Array(4), { shape: [1, 1, 4], position: [0] }), 'learned.add', 'options.position'],
      // mask is an option now (issue 11); a misspelled one is named
      [() => pe.attention(x(), x(), x(), { shape: { heads: 1, qLen: 1, headDim: 2 }, maks: [1] }), 'attention', 'options.maks', 'did you mean mask'],
      [() => pe.attention(x(), x(), x(), { shape: { heads: 1, qLen: 1, headDim: 2, kvheads: 1 } }), 'attention', 'options.shape.kvheads', 'did you mean kvHeads'],
      [() => pe.attention(x(), x(), x(), { shape: { heads: 1, qLen: 1, headDim: 2 }, positions: { q: [0], keys: [0] } }), 'attention', 'options.positions.keys'],
      [() => pe.tensor(4, { dtpye: 'float32' }), 'tensor', 'options.dtpye', 'did you mean dtype'],
    ];
    for (const [fn, ...needles] of cases) assertThrowsNaming(fn, TypeError, ...needles);
    const { init } = await import('../../web/src/index.js');
    await assert.rejects(() => init({ smid: false }), (e) => e instanceof TypeError && /init: options\.smid .*did you mean simd/.test(e.message));
    assert.equal(pe.tensor(2, { dtype: 'float32' }).length, 2);
    assert.equal(pe.tensor(2, { dtype: 'float16' }).dtype, 'float16'); // 16-bit tensors (issue 11)
    assertThrowsNaming(() => pe.tensor(2, { dtype: 'float8' }), RangeError, 'options.dtype', "'bfloat16'");
    rope.free();
  });
}

for (const build of BUILDS) {
  test(`a resizable buffer shrunk by an option getter during the call is named, never overrun [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const w = makeWitness(pe);
    const rope = pe.rope({ headDim: 8 });
    const buf = new ArrayBuffer(64, { maxByteLength: 64 });
    const x = new Float32Array(buf); // length-tracking: 16 floats, then 2
    // an option's getter runs when the options are read, before x is looked at: x's length check names it
    const options = {
      shape: [1, 2, 1, 8],
      get positions() {
        buf.resize(8);
        return [1, 2];
      },
    };
    assertThrowsNaming(() => rope.apply(x, options), RangeError, 'rope.apply', 'x.length must equal the product of shape (16), got 2');
    // a positions element getter runs after x was located (while the positions are staged): the staging
    // step's re-check names the change
    buf.resize(64);
    const positions = new Proxy([1, 2], {
      get(t, key, receiver) {
        if (key === '1') buf.resize(8);
        return Reflect.get(t, key, receiver);
      },
    });
    assertThrowsNaming(() => rope.apply(x, { shape: [1, 2, 1, 8], positions }), RangeError, 'rope.apply', 'changed length');
    rope.free();
    w.check('a shrinking x');
  });
}
