// f16.test.js — rope.apply with 16-bit storage (options.dtype 'float16' | 'bfloat16'), on both builds.
//
// The golden RoPE apply cases (tests/golden/rope_apply_*.json) with their inputs rounded to float16 / bfloat16:
// every result within 1 ulp of the storage type of the float64 rotation of those rounded inputs (plus the float32
// arithmetic's own error, 2^-22 of the head's largest magnitude times the attention factor, which only matters
// where a result cancels far below its inputs; how many results needed it is reported). The reference is
// helpers.js's refApply with the rope's own double frequencies, itself checked against the golden float64
// outputs on the float32 inputs. Also: SIMD and scalar builds give the same bits; k rotated with x; the
// TypeErrors for an array that does not match dtype; Float16Array where the engine has it.
import test from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, configJsonOf, refApply, makeRng, randnF32, assertThrowsNaming, assertBitEqual, maxAbsDiff } from './helpers.js';

import { encode, decode, ulpAt } from './f16-ref.js';

test('reference conversions: known patterns', () => {
  assert.equal(encode('float16', 1), 0x3c00);
  assert.equal(encode('float16', 65504), 0x7bff);
  assert.equal(encode('float16', 65520), 0x7c00); // tie at the top goes to Inf
  assert.equal(encode('float16', 2 ** -24), 0x0001);
  assert.equal(encode('float16', 2 ** -25), 0x0000); // tie to even (0)
  assert.equal(encode('float16', 1 + 2 ** -11), 0x3c00); // tie to even
  assert.equal(encode('float16', 1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(encode('bfloat16', 1), 0x3f80);
  assert.equal(encode('bfloat16', -2), 0xc000);
  assert.equal(encode('bfloat16', 1 + 2 ** -8), 0x3f80);
  for (const dt of ['float16', 'bfloat16']) for (let h = 0; h < 0x7c00; h += 7) assert.equal(encode(dt, decode(dt, h)), h);
});

const halfFile = loadGolden('rope_apply_half_split.json');
const interFile = loadGolden('rope_apply_interleaved.json');
const CASES = [...halfFile.cases, ...interFile.cases];
const F32_ERR = 2 ** -22;

function ropeFor(pe, c) {
  return c.variant === undefined ? pe.ropeFromHFConfig(configJsonOf(c.config)) : pe.ropeFromHFConfig(configJsonOf(c.config), { pairing: 'interleaved' });
}

const outputs = new Map(); // `${case}.${which}.${dtype}` -> Uint16Array, per build, for SIMD == scalar

for (const build of BUILDS) {
  test(`golden rope apply cases in 16-bit storage [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const stats = { float16: { worst: 0, over: 0, n: 0 }, bfloat16: { worst: 0, over: 0, n: 0 } };
    for (const c of CASES) {
      await t.test(c.id, () => {
        const rope = ropeFor(pe, c);
        try {
          const [B, H, S, D] = c.shape; // golden tensors are [B, H, S, D]: 'bhsd'
          const positions = Int32Array.from(c.position_ids.flat());
          const seqLen = Math.max(...positions) + 1;
          const invFreq = rope.invFreq64(seqLen);
          const scale = rope.attentionScaling(seqLen);
          const pairing = rope.pairing === 'interleaved' ? 'interleaved' : 'half';
          const shape = [B, S, H, D];
          for (const which of ['q', 'k']) {
            const x32 = Float32Array.from(c.inputs[which]);
            if (c.variant !== 'deepseek_v3') {
              // the reference itself, on the float32 inputs, against the golden float64 outputs
              const ref32 = refApply(x32, { shape, layout: 'bhsd', positions, invFreq, pairing, scale });
              assert.ok(maxAbsDiff(ref32, c.expected[`${which}_embed_f64`]).err < 1e-9, 'reference matches the golden float64 rotation');
            }
            for (const dtype of ['float16', 'bfloat16']) {
              const bits = Uint16Array.from(x32, (v) => encode(dtype, v));
              const xin = Float64Array.from(bits, (h) => decode(dtype, h));
              const want = refApply(xin, { shape, layout: 'bhsd', positions, invFreq, pairing, scale });
              const out = rope.apply(bits, { shape: [B, H, S, D], layout: 'bhsd', positions, dtype }); // x.shape, [b, h, s, d]
              assert.equal(out, bits, 'rotated in place, x returned');
              let amax = 0;
              for (const v of xin) amax = Math.max(amax, Math.abs(v));
              const slack = F32_ERR * 2 * amax * Math.abs(scale);
              const st = stats[dtype];
              for (let i = 0; i < out.length; i++) {
                const got = decode(dtype, out[i]);
                const ulp = ulpAt(dtype, want[i]);
                const err = Math.abs(got - want[i]);
                st.n++;
                st.worst = Math.max(st.worst, err / ulp);
                if (err > ulp) st.over++;
                assert.ok(err <= ulp + slack, `${dtype} ${which}[${i}]: got ${got}, want ${want[i]} (${(err / ulp).toFixed(3)} ulps)`);
              }
              outputs.set(`${build.name}|${c.id}.${which}.${dtype}`, Uint16Array.from(out));
            }
          }
        } finally {
          rope.free();
        }
      });
    }
    for (const dt of ['float16', 'bfloat16']) {
      t.diagnostic(`${dt}: ${stats[dt].n} results, worst ${stats[dt].worst.toFixed(4)} ulps, ${stats[dt].over} over 1 ulp`);
    }
  });

  test(`dtype: k with x, random shapes, errors [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: 16, pairing: 'interleaved' });
    try {
      const rng = makeRng(7);
      const shape = [2, 5, 3, 16];
      const n = 2 * 5 * 3 * 16;
      const positions = Int32Array.from([0, 1, 2, 2147483646, 2147483647]);
      for (const dtype of ['float16', 'bfloat16']) {
        const x = Uint16Array.from(randnF32(rng, n), (v) => encode(dtype, v));
        const k = Uint16Array.from(randnF32(rng, n / 3), (v) => encode(dtype, v));
        const xs = Uint16Array.from(x);
        const ks = Uint16Array.from(k);
        rope.apply(x, { shape, positions, dtype, k, kHeads: 1 });
        rope.apply(xs, { shape, positions, dtype });
        rope.apply(ks, { shape: [2, 5, 1, 16], positions, dtype });
        assertBitEqual(x, xs, `${dtype} x rotated with k == alone`);
        assertBitEqual(k, ks, `${dtype} k rotated with x == alone`);
      }
      const f32 = new Float32Array(n);
      assertThrowsNaming(() => rope.apply(f32, { shape, positions, dtype: 'float16' }), TypeError, 'x', 'float16');
      assertThrowsNaming(() => rope.apply(new Uint16Array(n), { shape, positions }), TypeError, 'x');
      assertThrowsNaming(
        () => rope.apply(new Uint16Array(n), { shape, positions, dtype: 'bfloat16', k: new Float32Array(n / 3), kHeads: 1 }),
        TypeError,
        'options.k',
        'bfloat16',
      );
      assertThrowsNaming(() => rope.apply(new Uint16Array(n), { shape, positions, dtype: 7 }), TypeError, 'options.dtype');
      assert.throws(() => rope.apply(new Uint16Array(n), { shape, positions, dtype: 'half' }), /options\.dtype/);
      assertThrowsNaming(() => rope.apply(new Uint16Array(n - 1), { shape, positions, dtype: 'float16' }), RangeError, 'x.length');
      const shared = new Uint16Array(2 * n);
      assertThrowsNaming(
        () => rope.apply(shared.subarray(0, n), { shape, positions, dtype: 'float16', k: shared.subarray(n - 16, n - 16 + n / 3), kHeads: 1 }),
        RangeError,
        'overlap',
      );
      // the float32 path is unaffected by a preceding 16-bit call (the config's dtype field is rewritten)
      const a = Float32Array.from(randnF32(rng, n));
      const b = Float32Array.from(a);
      rope.apply(a, { shape, positions });
      rope.apply(new Uint16Array(n), { shape, positions, dtype: 'float16' });
      rope.apply(b, { shape, positions, dtype: 'float32' });
      assertBitEqual(a, b, 'float32 apply after a float16 one');
      if (typeof globalThis.Float16Array === 'function') {
        const h = new globalThis.Float16Array(n).fill(0.5);
        rope.apply(h, { shape, positions }); // its own dtype
        assertThrowsNaming(() => rope.apply(h, { shape, positions, dtype: 'bfloat16' }), TypeError, 'x', 'bfloat16');
      }
    } finally {
      rope.free();
    }
  });
}

test('16-bit apply: SIMD and scalar builds give the same bits', async () => {
  // golden cases (filled by the tests above) and random shapes with large positions
  let compared = 0;
  for (const [key, simdOut] of outputs) {
    if (!key.startsWith('simd|')) continue;
    assertBitEqual(simdOut, outputs.get(`scalar|${key.slice(5)}`), key);
    compared++;
  }
  assert.equal(compared, CASES.length * 4);
  const [simd, scalar] = [await loadBuild(true), await loadBuild(false)];
  const rng = makeRng(11);
  for (let k = 0; k < 40; k++) {
    const D = 2 * (1 + Math.floor(rng.uniform() * 70));
    const rotaryDim = rng.uniform() < 0.3 ? 2 * (1 + Math.floor(rng.uniform() * (D / 2))) : undefined;
    const opts = { headDim: D, ...(rotaryDim !== undefined && rotaryDim !== D ? { rotaryDim } : {}), pairing: rng.uniform() < 0.5 ? 'half' : 'interleaved' };
    const B = 1 + Math.floor(rng.uniform() * 3);
    const S = 1 + Math.floor(rng.uniform() * 6);
    const H = 1 + Math.floor(rng.uniform() * 4);
    const positions = Int32Array.from({ length: S }, () => Math.floor(rng.uniform() * 2147483647));
    const dtype = rng.uniform() < 0.5 ? 'float16' : 'bfloat16';
    const layout = rng.uniform() < 0.5 ? 'bshd' : 'bhsd';
    const inverse = rng.uniform() < 0.5;
    const x = Uint16Array.from(randnF32(rng, B * S * H * D), (v) => encode(dtype, v * 100));
    const outs = [simd, scalar].map((pe) => {
      const rope = pe.rope(opts);
      try {
        return rope.apply(Uint16Array.from(x), { shape: { batch: B, seq: S, heads: H, headDim: D }, layout, positions, dtype, inverse });
      } finally {
        rope.free();
      }
    });
    assertBitEqual(outs[0], outs[1], `random case ${k} (${dtype}, ${layout}, D ${D})`);
  }
});
