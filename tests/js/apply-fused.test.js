// rope.apply's kernel paths (issue 14): q and k rotated in one kernel call, and the fused decode path (a short
// sequence with positions whose table is not cached: cos/sin computed inside the apply). Each must give, bit for
// bit, the rotation written out from its formula in float32 from rope.cosSin's rows — the products rounded to
// float32, then their difference or sum rounded (double holds the exact products and their correctly rounded
// sum: p' = 53 >= 2 * 24 + 2, so one rounding to float32 after double arithmetic is float32 arithmetic) — and
// the 16-bit paths the same bits as the table path rotating the same token inside a longer (tabled) call.
// The table cache stays right across fused calls.
import { test } from 'node:test';
import { BUILDS, loadBuild, makeRng, randnF32, shapeFor, assertBitEqual } from './helpers.js';

const f = Math.fround;

/** x rotated in float32 arithmetic by table rows cos/sin (n per row), row of (b, s) = positions index. */
function refFloat32(x, [B, S, H, D], layout, pairing, cos, sin, n, perBatch, inverse) {
  const out = Float32Array.from(x);
  for (let b = 0; b < B; b++)
    for (let s = 0; s < S; s++)
      for (let h = 0; h < H; h++) {
        const base = layout === 'bshd' ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
        const row = (perBatch ? b * S + s : s) * n;
        for (let i = 0; i < n; i++) {
          const ia = base + (pairing === 'half' ? i : 2 * i);
          const ib = base + (pairing === 'half' ? i + n : 2 * i + 1);
          const xa = out[ia];
          const xb = out[ib];
          const c = cos[row + i];
          const sn = sin[row + i];
          out[ia] = inverse ? f(f(xa * c) + f(xb * sn)) : f(f(xa * c) - f(xb * sn));
          out[ib] = inverse ? f(f(xb * c) - f(xa * sn)) : f(f(xb * c) + f(xa * sn));
        }
      }
  return out;
}

const HEAD_DIMS = [32, 64, 96, 128, 256, 6, 22, 40];

for (const { name, simd } of BUILDS) {
  test(`${name}: q and k in one call, fused (new positions) and tabled (cached), equal the float32 formula`, async () => {
    const pe = await loadBuild(simd);
    const rng = makeRng(0xf05ed);
    for (let it = 0; it < 60; it++) {
      const D = HEAD_DIMS[it % HEAD_DIMS.length];
      const pairing = it % 2 ? 'interleaved' : 'half';
      const layout = (it >> 1) % 2 ? 'bhsd' : 'bshd';
      const B = 1 + (it % 3);
      const S = it % 5 === 4 ? 7 : 1 + (it % 4); // 1 .. 4: fused; 7: the table
      const H = 1 + ((it * 7) % 5);
      const KH = it % 3 === 0 ? H : 1 + ((it * 3) % 4);
      const perBatch = it % 4 === 1;
      const inverse = it % 6 === 5;
      const rope = pe.rope({ headDim: D, pairing });
      const n = D / 2;
      const positions = Int32Array.from({ length: perBatch ? B * S : S }, () => rng.int(0, 200000));
      const q0 = randnF32(rng, B * S * H * D);
      const k0 = randnF32(rng, B * S * KH * D);
      // rope.cosSin's rows are the table's; inverse tables are scaled by 1 / a^2 (a = 1 here)
      const { cos, sin } = rope.cosSin(positions);
      const wantQ = refFloat32(q0, [B, S, H, D], layout, pairing, cos, sin, n, perBatch, inverse);
      const wantK = refFloat32(k0, [B, S, KH, D], layout, pairing, cos, sin, n, perBatch, inverse);
      const what = `D ${D} ${pairing} ${layout} B ${B} S ${S} H ${H} kHeads ${KH} perBatch ${perBatch} inverse ${inverse}`;
      for (let round = 0; round < 2; round++) {
        // round 0: new positions (fused for S <= 4); round 1: the same again (cached table, or fused again)
        const q = q0.slice();
        const k = k0.slice();
        rope.apply(q, { shape: shapeFor(layout, [B, S, H, D]), layout, positions, k, kHeads: KH, inverse });
        assertBitEqual(q, wantQ, `${what} q round ${round}`);
        assertBitEqual(k, wantK, `${what} k round ${round}`);
      }
      // q alone, as a pe.tensor
      const t = pe.tensor(q0);
      rope.apply(t, { shape: shapeFor(layout, [B, S, H, D]), layout, positions, inverse });
      assertBitEqual(t.array, wantQ, `${what} q alone, pe.tensor`);
      t.free();
      rope.free();
    }
  });

  test(`${name}: a fused call leaves the cached table right (tabled, fused, tabled again)`, async () => {
    const pe = await loadBuild(simd);
    const rng = makeRng(0xcace);
    const D = 64;
    const rope = pe.rope({ headDim: D });
    const long = Int32Array.from({ length: 9 }, (_, i) => 100 + i);
    const x0 = randnF32(rng, 9 * 4 * D);
    const { cos, sin } = rope.cosSin(long);
    const want = refFloat32(x0, [1, 9, 4, D], 'bshd', 'half', cos, sin, D / 2, false, false);
    for (const p of [long, Int32Array.of(5), long, Int32Array.of(6, 7), long]) {
      const x = p === long ? x0.slice() : randnF32(rng, p.length * 4 * D);
      rope.apply(x, { shape: [1, p.length, 4, D], positions: p });
      if (p === long) assertBitEqual(x, want, 'the tabled call after fused ones');
    }
    rope.free();
  });

  test(`${name}: 16-bit q and k through the fused path give the tabled path's bits`, async () => {
    const pe = await loadBuild(simd);
    const rng = makeRng(0x16b);
    for (const dtype of ['float16', 'bfloat16']) {
      for (const pairing of ['half', 'interleaved']) {
        for (const layout of ['bshd', 'bhsd']) {
          const D = 128;
          const H = 3;
          const rope = pe.rope({ headDim: D, pairing });
          const bits = (a) => Uint16Array.from(a, (v) => halfBits(v, dtype));
          // 5 tokens (S > 4: the table), and token 0 of them alone at the same position (fused); k alike
          const q5 = bits(randnF32(rng, 5 * H * D));
          const k5 = bits(randnF32(rng, 5 * D));
          const tok = (x, heads) => {
            const out = new Uint16Array(heads * D);
            for (let h = 0; h < heads; h++) out.set(x.subarray(layout === 'bshd' ? h * D : h * 5 * D, (layout === 'bshd' ? h * D : h * 5 * D) + D), h * D);
            return out;
          };
          const q1 = tok(q5, H);
          const k1 = tok(k5, 1);
          rope.apply(q5, { shape: shapeFor(layout, [1, 5, H, D]), layout, positions: Int32Array.of(4242, 1, 2, 3, 9), k: k5, kHeads: 1, dtype });
          rope.apply(q1, { shape: shapeFor(layout, [1, 1, H, D]), layout, positions: Int32Array.of(4242), k: k1, kHeads: 1, dtype });
          assertBitEqual(q1, tok(q5, H), `${dtype} ${pairing} ${layout} q`);
          assertBitEqual(k1, tok(k5, 1), `${dtype} ${pairing} ${layout} k`);
          rope.free();
        }
      }
    }
  });
}

/** float32 -> float16 or bfloat16 bits, round to nearest even (finite inputs of moderate size). */
function halfBits(v, dtype) {
  const b = new Float32Array([v]);
  const u = new Uint32Array(b.buffer)[0];
  if (dtype === 'bfloat16') return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
  const sign = (u >>> 16) & 0x8000;
  const e = ((u >>> 23) & 0xff) - 127 + 15;
  const m = u & 0x7fffff;
  if (e <= 0) return sign; // tiny: zero (inputs here are well inside the normal range)
  let h = (e << 10) | (m >>> 13);
  const rest = m & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++;
  return sign | h;
}
