// The API's shape and behaviour, beyond numbers: init() caching and build choice, the 'posenc/url' entry, rope
// properties, argument forms (positions types, tensors, default positions, layouts, per-sequence positions),
// and the sequence-length rules of cosSin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { BUILDS, loadBuild, makeRng, randnF32 } from './helpers.js';

test('init() is cached per build and picks SIMD on an engine that runs it', async () => {
  assert.ok(WebAssembly.validate instanceof Function);
  const a = await init();
  const b = await init();
  assert.equal(a, b, 'init() is cached');
  assert.equal(a.simd, true, 'Node 20 runs the SIMD build, so init() must pick it');
  assert.equal(await init({ simd: true }), a);
  const s = await init({ simd: false });
  assert.equal(s.simd, false);
  assert.notEqual(s, a);
  assert.equal(await init({ simd: false }), s);
  assert.ok(Object.isFrozen(a));
  for (const name of ['rope', 'ropeFromHFConfig', 'tensor']) assert.equal(typeof a[name], 'function');
  assert.equal(typeof a.memoryBytes, 'number');
});

test("the 'posenc/url' entry loads dist/*.wasm and computes the same numbers", async (t) => {
  const dist = new URL('../../dist/', import.meta.url);
  if (!existsSync(new URL('posenc.simd.wasm', dist)) || !existsSync(new URL('posenc.wasm', dist))) {
    assert.fail('dist/posenc.simd.wasm and dist/posenc.wasm are missing: run `bash build.sh wasm` first');
  }
  const url = await import('../../web/src/url.js');
  for (const build of BUILDS) {
    const viaUrl = await url.init({ simd: build.simd });
    const inline = await loadBuild(build.simd);
    assert.notEqual(viaUrl, inline, 'separate instances');
    assert.equal(viaUrl.simd, build.simd);
    const opts = { headDim: 64, scaling: { type: 'yarn', factor: 8, originalMaxPositionEmbeddings: 4096 } };
    const [r1, r2] = [viaUrl.rope(opts), inline.rope(opts)];
    const x = randnF32(makeRng(1), 2 * 3 * 4 * 64);
    const positions = [0, 17, 4095, 100000];
    assert.deepEqual(
      r1.apply(Float32Array.from(x), { shape: [2, 4, 3, 64], positions }),
      r2.apply(Float32Array.from(x), { shape: [2, 4, 3, 64], positions }),
    );
    r1.free();
    r2.free();
    t.diagnostic(`posenc/url [${build.name}] matches the inline entry`);
  }
});

for (const build of BUILDS) {
  test(`rope objects: properties and argument forms [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(21);

    await t.test('properties', () => {
      const r = pe.rope({ headDim: 96, rotaryDim: 32, base: 500000, pairing: 'interleaved' });
      assert.equal(r.headDim, 96);
      assert.equal(r.rotaryDim, 32);
      assert.equal(r.nFreq, 16);
      assert.equal(r.pairing, 'interleaved');
      assert.equal(r.type, 'default');
      assert.equal(r.base, 500000);
      assert.equal(r.config.rotaryDim, 32);
      assert.equal(r.freed, false);
      const d = pe.rope({ headDim: 64 });
      assert.equal(d.rotaryDim, 64, 'rotaryDim defaults to headDim');
      assert.equal(d.base, 10000, 'base defaults to 10000');
      assert.equal(d.pairing, 'half', "pairing defaults to 'half'");
      r.free();
      d.free();
    });

    await t.test('invFreq / invFreq64 / attentionScaling', () => {
      const r = pe.rope({ headDim: 16, base: 10000 });
      const f = r.invFreq();
      const f64 = r.invFreq64();
      assert.ok(f instanceof Float32Array && f64 instanceof Float64Array);
      assert.equal(f.length, 8);
      for (let i = 0; i < 8; i++) assert.equal(f[i], Math.fround(f64[i]));
      assert.equal(f64[0], 1);
      assert.equal(r.attentionScaling(), 1);
      r.free();
      // proportional: headDim / 2 frequencies, zero past rotaryDim / 2
      const p = pe.rope({ headDim: 16, rotaryDim: 8, scaling: { type: 'proportional' } });
      assert.equal(p.nFreq, 8);
      assert.deepEqual(Array.from(p.invFreq64().subarray(4)), [0, 0, 0, 0]);
      assert.equal(p.invFreq64()[1], 1 / Math.pow(10000, 2 / 16), 'exponent over headDim');
      p.free();
    });

    await t.test('cosSin: shapes, empty positions, attention factor applied', () => {
      const r = pe.rope({ headDim: 32, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096 } });
      const a = r.attentionScaling();
      assert.ok(a > 1);
      const { cos, sin } = r.cosSin([0, 1, 2]);
      assert.equal(cos.length, 3 * 16);
      assert.equal(sin.length, 3 * 16);
      assert.equal(cos[0], Math.fround(a), 'cos(0) = attention factor');
      assert.equal(sin[0], 0);
      const empty = r.cosSin([]);
      assert.equal(empty.cos.length, 0);
      r.free();
    });

    await t.test('cosSin seqLen: defaults to max(positions) + 1; dynamic and longrope depend on it', () => {
      const r = pe.rope({ headDim: 64, maxPositionEmbeddings: 2048, scaling: { type: 'dynamic', factor: 2 } });
      const grown = r.cosSin([0, 5, 4096]); // L = 4097 > 2048: base grows
      assert.deepEqual(grown, r.cosSin([0, 5, 4096], 4097));
      assert.notDeepEqual(grown, r.cosSin([0, 5, 4096], 2048));
      assert.deepEqual(r.cosSin([0, 5, 2047]), r.cosSin([0, 5, 2047], 0), 'no growth up to max_position_embeddings');
      assert.notDeepEqual(Array.from(r.invFreq64(4097)), Array.from(r.invFreq64()));
      r.free();
    });

    await t.test('positions: Int32Array, Array, other typed arrays give the same result', () => {
      const r = pe.rope({ headDim: 8 });
      const list = [0, 3, 70000, 16777216];
      const want = r.cosSin(Int32Array.from(list));
      for (const form of [list, Float64Array.from(list), Uint32Array.from(list), { length: 4, 0: 0, 1: 3, 2: 70000, 3: 16777216 }]) {
        assert.deepEqual(r.cosSin(form), want);
      }
      r.free();
    });

    for (const pairing of ['half', 'interleaved']) {
      await t.test(`apply (${pairing}): layouts, default and per-sequence positions, tensors`, () => {
        const r = pe.rope({ headDim: 24, rotaryDim: 20, pairing });
        const [B, S, H, D] = [3, 5, 7, 24];
        const x = randnF32(rng, B * S * H * D); // bshd
        // default positions are 0..S-1
        const y = Float32Array.from(x);
        assert.equal(r.apply(y, { shape: [B, S, H, D] }), y, 'in place, returns x');
        assert.deepEqual(r.apply(Float32Array.from(x), { shape: [B, S, H, D], positions: [0, 1, 2, 3, 4], layout: 'bshd' }), y);
        // bhsd: the same tensor transposed gives the same result, transposed
        const toBhsd = (a) => {
          const out = new Float32Array(a.length);
          for (let b = 0; b < B; b++)
            for (let s = 0; s < S; s++)
              for (let h = 0; h < H; h++)
                for (let d = 0; d < D; d++) out[((b * H + h) * S + s) * D + d] = a[((b * S + s) * H + h) * D + d];
          return out;
        };
        // (a bhsd shape array is the tensor's own order, [b, h, s, d]; the named form reads the same)
        assert.deepEqual(r.apply(toBhsd(x), { shape: [B, H, S, D], layout: 'bhsd' }), toBhsd(y));
        assert.deepEqual(r.apply(toBhsd(x), { shape: { batch: B, seq: S, heads: H, headDim: D }, layout: 'bhsd' }), toBhsd(y));
        // per-sequence positions with identical rows == shared positions
        const shared = [4, 9, 100, 1000, 65536];
        const want = r.apply(Float32Array.from(x), { shape: [B, S, H, D], positions: shared });
        const perSeq = Int32Array.from([...shared, ...shared, ...shared]);
        assert.deepEqual(r.apply(Float32Array.from(x), { shape: [B, S, H, D], positions: perSeq }), want);
        // per-sequence positions really are per sequence: batch b gets row b
        const rows = [shared, [0, 1, 2, 3, 4], [7, 7, 7, 7, 7]];
        const mixed = r.apply(Float32Array.from(x), { shape: [B, S, H, D], positions: rows.flat() });
        for (let b = 0; b < B; b++) {
          const one = r.apply(x.slice(b * S * H * D, (b + 1) * S * H * D), { shape: [1, S, H, D], positions: rows[b] });
          assert.deepEqual(mixed.subarray(b * S * H * D, (b + 1) * S * H * D), one);
        }
        // a pe.tensor gives the same as a Float32Array, zero-copy
        const t = pe.tensor(x);
        assert.equal(r.apply(t, { shape: [B, S, H, D], positions: shared }), t);
        assert.deepEqual(t.array, want);
        t.free();
        r.free();
      });
    }

    await t.test('rerotate: without shape, delta 0 is the identity, tensors', () => {
      const r = pe.rope({ headDim: 16 });
      const x = randnF32(rng, 4 * 16);
      const a = r.rerotate(Float32Array.from(x), 5);
      const b = r.rerotate(Float32Array.from(x), 5, { shape: [1, 2, 2, 16], layout: 'bhsd' });
      assert.deepEqual(a, b, 'every head vector turns by the same angle whatever the layout');
      const same = Float32Array.from(x);
      assert.equal(r.rerotate(same, 0), same);
      assert.deepEqual(same, x);
      const t = pe.tensor(x);
      assert.equal(r.rerotate(t, 5), t);
      assert.deepEqual(t.array, a);
      t.free();
      r.free();
    });
  });
}
