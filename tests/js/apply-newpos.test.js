// rope.apply's miss path for new positions (rope-table.js stageTableKey's element loop for a short key) and
// M-RoPE's table step (mrope.js mropeApplyTable: text tokens, t = h = w, take the plain rope's fused kernel;
// mixed ones build the table from the one staged key). Each test warms the path with new positions every call,
// then shows that the checks it could have skipped still fire, naming the argument and the bound, and that the
// results equal the float64 references (refApply, refMrope) and, for text tokens, the plain rope bit for bit
// (c/src/rope.c: with every pair on one position the M-RoPE row is the plain row).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, makeRng, randnF32, refApply, defaultInvFreq, assertThrowsNaming, assertBitEqual, maxAbsDiff } from './helpers.js';
import { refMrope } from './mrope-ref.js';

const D = 16;
const WARM = 50;
const SECTION = [2, 3, 3];
const mref = (x, shape, pos3, rows, interleaved = false) =>
  refMrope(x, { shape, layout: 'bshd', pos3, rows, rd: D, base: 1e4, pairing: 'half', section: SECTION, interleaved });

for (const build of BUILDS) {
  test(`warmed new-position path: bad positions still named, results match the reference [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rope = pe.rope({ headDim: D });
    const rng = makeRng(1501);
    const shape = [1, 2, 3, D];
    const n = 2 * 3 * D;
    const q = pe.tensor(n);
    for (let i = 0; i < WARM; i++) {
      rope.apply(q, { shape, positions: [i, i + 1] });
      rope.apply(q, { shape, positions: Int32Array.of(i + 2, i + 3) });
    }
    const P = 'options.positions';
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [900, '1'] }), TypeError, 'rope.apply', `${P}[1]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [901, 1.5] }), RangeError, `${P}[1]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [-1, 3] }), RangeError, `${P}[0]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [902, 2 ** 31] }), RangeError, `${P}[1]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [903, NaN] }), RangeError, `${P}[1]`);
    assertThrowsNaming(() => rope.apply(q, { shape, positions: Int32Array.of(904, -5) }), RangeError, `${P}[1]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => rope.apply(q, { shape, positions: [905, 906, 907] }), RangeError, 'options.positions.length must be seq (2) or batch * seq (2), got 3');
    // a refused call leaves no table: the next call with the same first position is rotated afresh
    const x0 = randnF32(rng, n);
    for (const positions of [[900, 5], Int32Array.of(904, 6), [900, 5]]) {
      const t = pe.tensor(x0);
      rope.apply(t, { shape, positions });
      const ref = refApply(x0, { shape, layout: 'bshd', positions: Array.from(positions), invFreq: defaultInvFreq(10000, D), pairing: 'half' });
      assert.ok(maxAbsDiff(t.array, ref).err < 1e-4, `positions ${Array.from(positions)}`); // float32 angles near 900
      t.free();
    }
    q.free();
    rope.free();
  });

  test(`M-RoPE new positions: text tokens equal the plain rope bit for bit, mixed ones the reference; the key is all three streams [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const rng = makeRng(1502);
    for (const interleaved of [false, true]) {
      const mrope = pe.rope({ headDim: D, mrope: { section: SECTION, interleaved } });
      const plain = pe.rope({ headDim: D });
      for (const [B, S] of [[1, 1], [1, 3], [2, 2]]) {
        const shape = [B, S, 2, D];
        const n = B * S * 2 * D;
        const warm = pe.tensor(n);
        for (let i = 0; i < WARM; i++) {
          const p = Array.from({ length: S }, (_, s) => 10 + i + s);
          mrope.apply(warm, { shape, positions: [...p, ...p, ...p] });
        }
        warm.free();
        const x0 = randnF32(rng, n);
        const k0 = randnF32(rng, n / 2);
        // text, the same text again (cached), mixed with the text's t stream (must not hit), text again
        const t1 = Array.from({ length: S }, (_, s) => 500 + 3 * s);
        const calls = [[...t1, ...t1, ...t1], [...t1, ...t1, ...t1], [...t1, ...t1.map((v) => v + 1), ...t1], [...t1, ...t1, ...t1]];
        for (const [c, pos3] of calls.entries()) {
          const x = pe.tensor(x0);
          const k = pe.tensor(k0);
          mrope.apply(x, { shape, positions: pos3, k, kHeads: 1 });
          const ref = mref(x0, shape, pos3, S, interleaved);
          assert.ok(maxAbsDiff(x.array, ref).err < 1e-4, `call ${c}, [${B}, ${S}], interleaved ${interleaved}`);
          assert.ok(maxAbsDiff(k.array, mref(k0, [B, S, 1, D], pos3, S, interleaved)).err < 1e-4, `k, call ${c}`);
          if (c !== 2) {
            const xp = pe.tensor(x0);
            plain.apply(xp, { shape, positions: t1 });
            assertBitEqual(x.array, xp.array, `text tokens vs the plain rope, call ${c}`);
            xp.free();
          }
          x.free();
          k.free();
        }
        // per-sequence rows (batch * seq positions per stream), text then mixed
        if (B > 1) {
          const t2 = Array.from({ length: B * S }, (_, r) => 40 + r);
          for (const pos3 of [[...t2, ...t2, ...t2], [...t2, ...t2, ...t2.map((v) => v + 2)]]) {
            const x = pe.tensor(x0);
            mrope.apply(x, { shape, positions: Int32Array.from(pos3) });
            assert.ok(maxAbsDiff(x.array, mref(x0, shape, pos3, B * S, interleaved)).err < 1e-4, `per-sequence rows ${pos3}`);
            x.free();
          }
        }
      }
      mrope.free();
      plain.free();
    }
  });

  test(`M-RoPE warmed table step: bad three-stream positions still refused, naming the argument [${build.name}]`, async () => {
    const pe = await loadBuild(build.simd);
    const mrope = pe.rope({ headDim: D, mrope: { section: SECTION } });
    const shape = [1, 1, 2, D];
    const q = pe.tensor(2 * D);
    for (let i = 0; i < WARM; i++) {
      mrope.apply(q, { shape, positions: [i, i, i] });
      mrope.apply(q, { shape, positions: Int32Array.of(i, i + 1, i + 2) });
    }
    const P = 'options.positions';
    assertThrowsNaming(() => mrope.apply(q, { shape, positions: [1, 2] }), RangeError, 'rope.apply', `${P} must hold three streams`, 'got length 2');
    assertThrowsNaming(() => mrope.apply(q, { shape, positions: [1, 2, 3, 4, 5, 6] }), RangeError, `${P} must hold 3 streams of seq (1)`, 'got 6');
    assertThrowsNaming(() => mrope.apply(q, { shape, positions: [7, -1, 7] }), RangeError, `${P}[1]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => mrope.apply(q, { shape, positions: [7, 7, 'x'] }), TypeError, `${P}[2]`);
    // staged unchecked: the C core's scan names the first negative one, on the fused path (t = h = w) and not
    assertThrowsNaming(() => mrope.apply(q, { shape, positions: Int32Array.of(-3, -3, -3) }), RangeError, `${P}[0]`, 'an integer in [0, 2147483647]');
    assertThrowsNaming(() => mrope.apply(q, { shape, positions: Int32Array.of(8, 8, -3) }), RangeError, `${P}[2]`, 'an integer in [0, 2147483647]');
    // float16 text tokens: the plain rope's result bit for bit
    const plain = pe.rope({ headDim: D });
    const x0 = randnF32(makeRng(1503), 2 * D);
    const a = pe.tensor(x0, { dtype: 'float16' });
    const b = pe.tensor(x0, { dtype: 'float16' });
    mrope.apply(a, { shape, positions: [77, 77, 77] });
    plain.apply(b, { shape, positions: [77] });
    assertBitEqual(a.array, b.array, 'float16 text tokens');
    for (const t of [q, a, b]) t.free();
    plain.free();
    mrope.free();
  });
}
