// Memory: pe.tensor semantics, views re-derived after the wasm memory grows, and no leaks from tensors, ropes
// or repeated calls (the steady-state call path allocates nothing: scratch blocks are reused).
// The growth tests come first, while each instance's memory is still small.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32 } from './helpers.js';

for (const build of BUILDS) {
  test(`pe.tensor basics [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const z = pe.tensor(10);
    assert.equal(z.length, 10);
    assert.ok(z.array instanceof Float32Array);
    assert.deepEqual(Array.from(z.array), new Array(10).fill(0), 'a new tensor is zero-filled');
    const src = Float32Array.from([1, 2, 3.5]);
    const c = pe.tensor(src);
    assert.deepEqual(Array.from(c.array), [1, 2, 3.5]);
    c.array[0] = 9;
    assert.equal(src[0], 1, 'pe.tensor(Float32Array) copies');
    assert.equal(c.array[0], 9, 'writes through .array land in wasm memory');
    assert.ok(c.array === c.array, '.array is cached while the memory does not grow');
    const empty = pe.tensor(0);
    assert.equal(empty.array.length, 0);
    for (const t of [z, c, empty]) {
      assert.equal(t.freed, false);
      t.free();
      t.free(); // idempotent
      assert.equal(t.freed, true);
    }
  });

  test(`every pe.tensor starts on a 64-byte cache line, and freeing gives its whole block back [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const tensors = [];
    for (const n of [0, 1, 2, 3, 5, 8, 13, 31, 64, 100, 1000, 4097]) {
      for (const dtype of ['float32', 'float16']) {
        const t = pe.tensor(n, { dtype });
        assert.equal(t.array.byteOffset % 64, 0, `pe.tensor(${n}, ${dtype}) starts at ${t.array.byteOffset}`);
        tensors.push(t);
      }
    }
    // the same sizes allocated again after freeing reuse the memory: the blocks handed back were whole
    const grown = pe.memoryBytes;
    for (let round = 0; round < 200; round++) {
      for (const t of tensors.splice(0)) t.free();
      for (const n of [0, 1, 2, 3, 5, 8, 13, 31, 64, 100, 1000, 4097]) tensors.push(pe.tensor(n), pe.tensor(n, { dtype: 'bfloat16' }));
    }
    assert.equal(pe.memoryBytes, grown, '200 rounds of free and allocate do not grow the memory');
    for (const t of tensors) t.free();
  });

  test(`views are re-derived after the memory grows [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: 64 });
    const rng = makeRng(3);
    const shape = [1, 4, 2, 64];
    const data = randnF32(rng, 4 * 2 * 64);
    const expected = rope.apply(Float32Array.from(data), { shape });

    const t = pe.tensor(data);
    const oldView = t.array;
    const before = pe.memoryBytes;
    const big = pe.tensor(before / 4 + 1024); // more than the whole memory: must grow it
    assert.ok(pe.memoryBytes > before, 'allocating the big tensor grew the memory');
    assert.equal(oldView.length, 0, 'a view taken before the growth is detached');
    assert.deepEqual(t.array, data, 'the older tensor re-derives its view, contents intact');
    assert.equal(rope.apply(t, { shape }), t, 'apply on a tensor returns the tensor');
    assert.deepEqual(t.array, expected, 'the older tensor is usable after growth, zero-copy');
    big.free();

    // A Float32Array that views wasm memory (tensor.array) is worked on in place. When the call itself grows
    // the memory (its scratch: default positions and the cos/sin table, 12 bytes per row at headDim 2, more
    // than the 8 bytes per row of x), the caller's view is detached and apply returns a fresh view of the
    // same elements. Double the size until a call grows the memory.
    const rope2 = pe.rope({ headDim: 2 });
    let grew = false;
    for (let S = 1 << 12; !grew; S *= 2) {
      assert.ok(S <= 1 << 26, 'no apply call grew the memory');
      const xs = pe.tensor(randnF32(rng, S * 2));
      const view = xs.array;
      const copy = Float32Array.from(view);
      const grownBefore = pe.memoryBytes;
      const out = rope2.apply(view, { shape: [1, S, 1, 2] });
      if (pe.memoryBytes > grownBefore) {
        grew = true;
        assert.equal(view.length, 0, "the caller's view was detached by the growth");
        assert.notEqual(out, view);
        assert.equal(out.length, S * 2);
        assert.equal(out.buffer, xs.array.buffer, 'apply returned a live view of the same elements');
        assert.equal(out.byteOffset, xs.array.byteOffset);
        // (the copying path may grow the memory again, so compare through xs.array afterwards, not `out`)
        const viaCopy = rope2.apply(copy, { shape: [1, S, 1, 2] });
        assert.deepEqual(xs.array, viaCopy, 'the in-place result equals the copying path');
      } else {
        assert.equal(out, view);
      }
      xs.free();
    }
    // A view that stays valid (no growth) is returned as is.
    const small = pe.tensor(data);
    const sv = small.array;
    assert.equal(rope.apply(sv, { shape }), sv);
    assert.deepEqual(sv, expected);
    for (const x of [small, t]) x.free();
    rope.free();
    rope2.free();
  });

  test(`no leaks: 10k apply / cosSin / rerotate calls, 1k ropes, 10k tensors [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(4);
    const rope = pe.rope({ headDim: 64, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096 } });
    const shape = [1, 128, 2, 64];
    const x = randnF32(rng, 128 * 2 * 64); // 64 KiB per copy: a per-call leak would grow memory by >1 GiB
    const tx = pe.tensor(x);
    const positions = Int32Array.from({ length: 128 }, (_, i) => 1000 + i);
    const plain = Array.from(positions);
    const run = (k) => {
      rope.apply(x, { shape: k % 2 ? shape : [1, 2, 128, 64], positions, layout: k % 2 ? 'bshd' : 'bhsd', inverse: k % 3 === 0 });
      rope.apply(tx, { shape, positions: plain });
      rope.apply(tx.array, { shape });
      rope.cosSin(positions);
      rope.rerotate(tx, k % 5 - 2, { shape });
      rope.invFreq(k);
    };
    run(0); // warm-up: scratch blocks reach their steady size
    const start = pe.memoryBytes;
    for (let k = 1; k <= 10000; k++) run(k);
    assert.equal(pe.memoryBytes, start, `memory grew from ${start} to ${pe.memoryBytes} bytes over 10k calls`);

    for (let k = 0; k < 1000; k++) {
      const r = pe.rope({ headDim: 128, base: 500000 });
      r.cosSin([k]);
      r.free();
    }
    for (let k = 0; k < 10000; k++) pe.tensor(x).free(); // 64 KiB each
    assert.equal(pe.memoryBytes, start, `memory grew from ${start} to ${pe.memoryBytes} bytes creating ropes and tensors`);

    // The allocator hands the same block back: nothing was lost in between.
    const a = pe.tensor(1000);
    const offset = a.array.byteOffset;
    a.free();
    for (let k = 0; k < 100; k++) rope.apply(x, { shape, positions });
    const b = pe.tensor(1000);
    assert.equal(b.array.byteOffset, offset);
    b.free();
    tx.free();
    rope.free();
  });
}
