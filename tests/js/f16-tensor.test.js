// f16-tensor.test.js — pe.tensor(n | array, { dtype: 'float16' | 'bfloat16' }) and a tensor's dtype flowing into
// the calls it is passed to (issue 11), on both builds.
//
// Conversions are checked against f16-ref.js (plain double arithmetic, round to nearest even) and, for
// NaN / Inf / overflow, against the patterns IEEE 754 and the hardware conversions give (x86 F16C, ARM FCVT).
// A 16-bit tensor is rotated in place and must give the bits a staged Uint16Array gives (the same kernel on
// the same bits); a tensor whose dtype does not match the call is a TypeError naming it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, assertThrowsNaming, assertBitEqual } from './helpers.js';
import { encode } from './f16-ref.js';

const DT = ['float16', 'bfloat16'];

for (const build of BUILDS) {
  test(`pe.tensor with a 16-bit dtype: zeros, copies, conversions [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    for (const dtype of DT) {
      const z = pe.tensor(5, { dtype });
      assert.equal(z.dtype, dtype);
      assert.equal(z.length, 5);
      assert.ok(z.array instanceof Uint16Array, '.array of a 16-bit tensor is a Uint16Array of raw bits');
      assert.deepEqual(Array.from(z.array), [0, 0, 0, 0, 0], 'zero-filled');
      const bits = Uint16Array.from([0x3c00, 0x8001, 0x7e01, 0xffff, 0x1234]);
      const c = pe.tensor(bits, { dtype });
      assertBitEqual(c.array, bits, `${dtype} tensor from a Uint16Array keeps every bit (NaN payloads too)`);
      c.array[0] = 7;
      assert.equal(bits[0], 0x3c00, 'the source is copied');
      // from a Float32Array: rounded to nearest even, as f16-ref.js rounds the same float32 values
      const rng = makeRng(5);
      const src = Float32Array.from(randnF32(rng, 1000), (v, i) => v * 2 ** ((i % 40) - (dtype === 'float16' ? 26 : 20)));
      const t = pe.tensor(src, { dtype });
      assert.equal(t.dtype, dtype);
      const want = Uint16Array.from(src, (v) => encode(dtype, v));
      assertBitEqual(t.array, want, `${dtype} from float32, including subnormal results`);
      // specials: ±Inf, overflow to Inf (float16's ties at 65520 go up), NaN stays NaN (quiet), ±0
      const special = pe.tensor(Float32Array.of(Infinity, -Infinity, 65520, -1e6, NaN, -0, 65519.99), { dtype }).array;
      const inf = dtype === 'float16' ? 0x7c00 : 0x7f80;
      assert.equal(special[0], inf);
      assert.equal(special[1], 0x8000 | inf);
      assert.equal(special[2], dtype === 'float16' ? inf : encode(dtype, 65520));
      assert.equal(special[3], dtype === 'float16' ? 0x8000 | inf : encode(dtype, -1e6));
      assert.ok((special[4] & 0x7fff) > inf && (special[4] & (dtype === 'float16' ? 0x0200 : 0x0040)) !== 0, 'NaN -> a quiet NaN');
      assert.equal(special[5], 0x8000);
      assert.equal(special[6], encode(dtype, Math.fround(65519.99)));
      for (const x of [z, c, t]) x.free();
    }
    if (typeof globalThis.Float16Array === 'function') {
      const h = pe.tensor(globalThis.Float16Array.of(1, -2));
      assert.equal(h.dtype, 'float16');
      assert.deepEqual(Array.from(h.array), [0x3c00, 0xc000]);
      h.free();
    }
  });

  test(`pe.tensor dtype errors [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    assertThrowsNaming(() => pe.tensor(new Uint16Array(4)), TypeError, 'Uint16Array', 'options.dtype', 'float16');
    assertThrowsNaming(() => pe.tensor(new Uint16Array(4), { dtype: 'float32' }), TypeError, 'options.dtype');
    assertThrowsNaming(() => pe.tensor(4, { dtype: 'half' }), RangeError, 'options.dtype', "'bfloat16'");
    assertThrowsNaming(() => pe.tensor(new Float64Array(4), { dtype: 'float16' }), TypeError, 'argument', 'Uint16Array');
    assertThrowsNaming(() => pe.tensor(new Int16Array(4), { dtype: 'bfloat16' }), TypeError, 'argument');
    assertThrowsNaming(() => pe.tensor(2 ** 30, { dtype: 'float16' }), RangeError, 'length');
    assertThrowsNaming(() => pe.tensor(4, { dtype: 'float16', dtpye: 1 }), TypeError, 'options.dtpye', 'dtype');
  });

  test(`16-bit tensors in rope.apply: in place, the dtype is the default, mismatches are named [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: 8 });
    const rng = makeRng(9);
    try {
      const shape = [2, 3, 2, 8];
      const n = 2 * 3 * 2 * 8;
      const positions = [5, 70000, 2147483647];
      for (const dtype of DT) {
        const bits = Uint16Array.from(randnF32(rng, n), (v) => encode(dtype, v));
        const kbits = Uint16Array.from(randnF32(rng, n / 2), (v) => encode(dtype, v));
        const want = rope.apply(Uint16Array.from(bits), { shape, positions, dtype });
        const wantK = rope.apply(Uint16Array.from(kbits), { shape: [2, 3, 1, 8], positions, dtype });
        const t = pe.tensor(bits, { dtype });
        const kt = pe.tensor(kbits, { dtype });
        assert.equal(rope.apply(t, { shape, positions, k: kt, kHeads: 1 }), t, 'the tensor is returned (its dtype, no option)');
        assertBitEqual(t.array, want, `${dtype} tensor == staged Uint16Array`);
        assertBitEqual(kt.array, wantK, `${dtype} k tensor == staged Uint16Array`);
        // explicit matching dtype, and a tensor x with an array k
        const t2 = pe.tensor(bits, { dtype });
        const k2 = Uint16Array.from(kbits);
        rope.apply(t2, { shape, positions, dtype, k: k2, kHeads: 1 });
        assertBitEqual(t2.array, want, `${dtype} tensor with explicit dtype`);
        assertBitEqual(k2, wantK, `${dtype} array k with a tensor x`);
        // strided: the tensor is rotated where it lies (a per-head fused [b, s, h, 2d] buffer, q first)
        const fused = new Uint16Array(2 * n);
        for (let r = 0; r < n / 8; r++) fused.set(bits.subarray(r * 8, r * 8 + 8), r * 16);
        const ft = pe.tensor(fused, { dtype });
        rope.apply(ft, { shape, positions, strides: { batch: 3 * 2 * 16, seq: 2 * 16, heads: 16 } });
        const fa = ft.array;
        for (let r = 0; r < n / 8; r++) {
          assertBitEqual(fa.subarray(r * 16, r * 16 + 8), want.subarray(r * 8, r * 8 + 8), `strided row ${r}`);
          assertBitEqual(fa.subarray(r * 16 + 8, r * 16 + 16), new Uint16Array(8), `untouched half of row ${r}`);
        }
        // mismatches: another 16-bit dtype, float32, a 16-bit tensor where float32 data go
        const other = dtype === 'float16' ? 'bfloat16' : 'float16';
        assertThrowsNaming(() => rope.apply(t, { shape, positions, dtype: other }), TypeError, 'x', dtype, other);
        assertThrowsNaming(() => rope.apply(t, { shape, positions, dtype: 'float32' }), TypeError, 'x', 'float32');
        assertThrowsNaming(() => rope.apply(Uint16Array.from(bits), { shape, positions, dtype, k: pe.tensor(n / 2, { dtype: other }), kHeads: 1 }), TypeError, 'options.k', other);
        assertThrowsNaming(() => rope.apply(t, { shape, positions, k: new Float32Array(n / 2), kHeads: 1 }), TypeError, 'options.k', dtype);
        assertThrowsNaming(() => rope.apply(t, { shape: [2, 3, 1, 8], positions }), RangeError, 'x.length', String(n / 2));
        assertThrowsNaming(() => pe.alibiBias(1, 2, 2, { out: pe.tensor(4, { dtype }) }), TypeError, 'options.out', dtype, 'float32');
        assertThrowsNaming(() => rope.cosSin([0], { out: { cos: pe.tensor(4, { dtype }), sin: pe.tensor(4) } }), TypeError, 'options.out.sin', dtype);
        for (const x of [t, kt, t2, ft]) x.free();
      }
      // a float32 tensor with a 16-bit dtype
      assertThrowsNaming(() => rope.apply(pe.tensor(n), { shape, positions, dtype: 'float16' }), TypeError, 'x', 'float32', 'float16');
    } finally {
      rope.free();
    }
  });

  test(`a 16-bit tensor's view is re-derived after the memory grows [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const t = pe.tensor(Uint16Array.of(1, 2, 3), { dtype: 'bfloat16' });
    const old = t.array;
    const before = pe.memoryBytes;
    const big = pe.tensor(before / 2 + 4096, { dtype: 'float16' });
    assert.ok(pe.memoryBytes > before, 'the big tensor grew the memory');
    assert.equal(old.length, 0, 'the old view is detached');
    assert.deepEqual(Array.from(t.array), [1, 2, 3]);
    assert.ok(t.array instanceof Uint16Array);
    big.free();
    t.free();
  });
}
