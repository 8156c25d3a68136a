// pe.rope2d (Pixtral, the Qwen2-VL vision tower, Llama 4 vision) against Hugging Face's values
// (tests/golden/mrope/rope2d.json, *_f64) on both builds, the token layouts, SIMD == scalar bit for bit,
// translation invariance of q.k, and the argument errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BUILDS, loadBuild, makeRng, randnF32, maxAbsDiff as maxAbsDiffAt, assertThrowsNaming } from './helpers.js';

const GOLDEN = JSON.parse(readFileSync(new URL('../golden/mrope/rope2d.json', import.meta.url), 'utf8'));
const builds = await Promise.all(BUILDS.map(async (b) => ({ ...b, pe: await loadBuild(b.simd) })));
const maxAbsDiff = (a, b) => maxAbsDiffAt(a, b).err;

const KIND = { pixtral: 'pixtral', qwen2_vl_vision: 'qwen2-vl', llama4_vision: 'llama4' };
function setup(pe, c) {
  const cfg = c.config;
  const kind = KIND[c.kind];
  if (kind === 'pixtral') {
    return { vis: pe.rope2d({ kind, headDim: cfg.head_dim, base: cfg.rope_theta, imageSize: cfg.image_size, patchSize: cfg.patch_size }), grid: { images: c.images_hw } };
  }
  if (kind === 'qwen2-vl') {
    return { vis: pe.rope2d({ kind, headDim: cfg.head_dim, base: cfg.theta, spatialMergeSize: cfg.spatial_merge_size }), grid: { gridThw: c.grid_thw } };
  }
  const side = cfg.patches_per_side;
  return { vis: pe.rope2d({ kind, headDim: cfg.head_dim, base: cfg.rope_theta, imageSize: cfg.image_size, patchSize: cfg.patch_size }), grid: { gridH: side, gridW: side } };
}

/** (n, D/2) table against HF's (n, width): width D repeats the half (half-split), width D/2 is one per pair */
function tableError(t, want, n, half) {
  const width = want.length / n;
  let e = 0;
  for (let r = 0; r < n; r++)
    for (let j = 0; j < half; j++) {
      e = Math.max(e, Math.abs(t[r * half + j] - want[r * width + j]));
      if (width === 2 * half) e = Math.max(e, Math.abs(t[r * half + j] - want[r * width + half + j]));
    }
  return e;
}

test('the golden set has 2 cases of each kind (public; the hidden half may be added)', () => {
  assert.ok(GOLDEN.cases.length >= 6);
  for (const k of Object.keys(KIND)) assert.ok(GOLDEN.cases.filter((c) => c.kind === k).length >= 2);
});

for (const { name, pe } of builds) {
  for (const c of GOLDEN.cases) {
    test(`${c.id}: token layout, cos/sin and rotated q, k match HF (*_f64) [${name}]`, () => {
      const { vis, grid } = setup(pe, c);
      const e = c.expected;
      const pos = vis.positions(grid);
      const n = pos.length / 2;
      const [B, H, S, D] = c.shape;
      assert.equal(n, S);
      if (c.kind === 'pixtral') {
        const side = c.config.max_patches_per_side;
        assert.deepEqual(Array.from({ length: n }, (_, i) => pos[i] * side + pos[n + i]), e.position_ids);
      } else if (c.kind === 'qwen2_vl_vision') {
        assert.deepEqual(Array.from({ length: n }, (_, i) => [pos[i], pos[n + i]]), e.rotary_pos_ids);
      }
      const { cos, sin } = vis.cosSin(grid);
      assert.ok(tableError(cos, e.cos_f64, n, D / 2) <= 2e-6, `cos err ${tableError(cos, e.cos_f64, n, D / 2)}`);
      assert.ok(tableError(sin, e.sin_f64, n, D / 2) <= 2e-6, `sin err ${tableError(sin, e.sin_f64, n, D / 2)}`);
      for (const [input, want] of [[c.inputs.q, e.q_embed_f64], [c.inputs.k, e.k_embed_f64]]) {
        const x = Float32Array.from(input);
        vis.apply(x, { shape: [B, S, H, D], layout: 'bhsd', grid });
        assert.ok(maxAbsDiff(x, want) <= 3e-5, `q/k err ${maxAbsDiff(x, want)}`);
        vis.apply(x, { shape: [B, S, H, D], layout: 'bhsd', grid, inverse: true });
        assert.ok(maxAbsDiff(x, input) <= 1e-5, `inverse err ${maxAbsDiff(x, input)}`);
      }
      vis.free();
    });
  }

  test(`q.k depends only on the 2D offset between patches (pixtral, qwen2-vl) [${name}]`, () => {
    const rng = makeRng(2201);
    for (const kind of ['pixtral', 'qwen2-vl']) {
      const vis = pe.rope2d({ kind, headDim: 32 });
      const grid = { gridH: 8, gridW: 8 };
      const pos = vis.positions(grid);
      const n = 64;
      const at = (r, c) => {
        for (let i = 0; i < n; i++) if (pos[i] === r && pos[n + i] === c) return i;
        return -1;
      };
      const q = randnF32(rng, 32);
      const k = randnF32(rng, 32);
      const x = new Float32Array(2 * n * 32);
      for (let i = 0; i < n; i++) {
        x.set(q, i * 32);
        x.set(k, (n + i) * 32);
      }
      vis.apply(x, { shape: [2, n, 1, 32], grid });
      const dot = (qi, ki) => {
        let s = 0;
        for (let d = 0; d < 32; d++) s += x[qi * 32 + d] * x[(n + ki) * 32 + d];
        return s;
      };
      // (1, 2) -> (4, 3) and (3, 5) -> (6, 6): the same offset (3, 1)
      const d0 = dot(at(1, 2), at(4, 3));
      const d1 = dot(at(3, 5), at(6, 6));
      assert.ok(Math.abs(d0 - d1) <= 1e-4 * Math.max(1, Math.abs(d0)), `${kind}: ${d0} vs ${d1}`);
      const d2 = dot(at(1, 2), at(3, 4));
      assert.ok(Math.abs(d2 - d0) > 1e-4, `${kind}: another offset changes q.k`);
      vis.free();
    }
  });

  test(`bad rope2d options and grids are TypeErrors / RangeErrors naming the argument [${name}]`, () => {
    assertThrowsNaming(() => pe.rope2d({ kind: 'vit', headDim: 16 }), RangeError, 'kind');
    assertThrowsNaming(() => pe.rope2d({ kind: 'qwen2-vl', headDim: 18 }), RangeError, 'headDim', 'multiple of 4');
    assertThrowsNaming(() => pe.rope2d({ kind: 'pixtral', headDim: 17 }), RangeError, 'headDim', 'multiple of 2');
    // Pixtral at headDim 18: rows on the 5 even frequencies, columns on the 4 odd ones (HF's freqs[::2], freqs[1::2])
    const p18 = pe.rope2d({ kind: 'pixtral', headDim: 18 });
    const t18 = p18.cosSin({ gridH: 4, gridW: 8 });
    for (let j = 0; j < 9; j++) {
      const angle = j < 5 ? 3 * 10000 ** (-(4 * j) / 18) : 7 * 10000 ** (-(4 * (j - 5) + 2) / 18);
      const at = (3 * 8 + 7) * 9 + j; // patch (3, 7)
      assert.ok(Math.abs(t18.cos[at] - Math.cos(angle)) < 2e-6 && Math.abs(t18.sin[at] - Math.sin(angle)) < 2e-6, `pixtral 18 pair ${j}`);
    }
    p18.free();
    assertThrowsNaming(() => pe.rope2d({ kind: 'pixtral', headDim: 16, spatialMergeSize: 2 }), TypeError, 'spatialMergeSize');
    assertThrowsNaming(() => pe.rope2d({ kind: 'llama4', headDim: 16 }), TypeError, 'imageSize');
    assertThrowsNaming(() => pe.rope2d({ kind: 'pixtral', headDim: 16, theta: 1 }), TypeError, 'theta');
    const px = pe.rope2d({ kind: 'pixtral', headDim: 16, imageSize: 64, patchSize: 16 });
    assertThrowsNaming(() => px.cosSin({ gridH: 5, gridW: 2 }), RangeError, 'grid.gridH', 'at most imageSize / patchSize = 4');
    assertThrowsNaming(() => px.cosSin({ gridH: 2.5, gridW: 2 }), RangeError, 'grid.gridH');
    assertThrowsNaming(() => px.cosSin({ images: [[2, 2], [2]] }), TypeError, 'grid.images[1]');
    assertThrowsNaming(() => px.apply(new Float32Array(4 * 16), { shape: [1, 3, 1, 16], grid: { gridH: 2, gridW: 2 } }), RangeError, 'seq', '4');
    const qv = pe.rope2d({ kind: 'qwen2-vl', headDim: 16 });
    assertThrowsNaming(() => qv.cosSin({ gridThw: [[1, 3, 4]] }), RangeError, 'grid.gridThw[0][1]', 'spatialMergeSize');
    const l4 = pe.rope2d({ kind: 'llama4', headDim: 16, imageSize: 56, patchSize: 14 });
    assertThrowsNaming(() => l4.cosSin({ gridH: 4, gridW: 3 }), RangeError, 'grid.gridW', '4');
    px.free();
    qv.free();
    l4.free();
    assertThrowsNaming(() => px.cosSin({ gridH: 1, gridW: 1 }), TypeError, 'freed');
  });
}

test('SIMD and scalar give the same 2D tables and rotations bit for bit (random grids)', () => {
  const rng = makeRng(2202);
  const [simd, scalar] = builds.map((b) => b.pe);
  for (let trial = 0; trial < 60; trial++) {
    const kind = rng.pick(['pixtral', 'qwen2-vl', 'llama4']);
    const headDim = kind === 'pixtral' ? 2 * rng.int(1, 80) : 4 * rng.int(1, 40);
    const side = 2 * rng.int(1, 6);
    const opts = { kind, headDim, base: rng.pick([1e4, 1e5]) };
    if (kind !== 'qwen2-vl') Object.assign(opts, { imageSize: side * 14, patchSize: 14 });
    const grid = kind === 'llama4' ? { gridH: side, gridW: side } : { gridH: 2 * rng.int(1, side / 2), gridW: 2 * rng.int(1, side / 2) };
    const outs = [simd, scalar].map((pe) => {
      const vis = pe.rope2d(opts);
      const t = vis.cosSin(grid);
      const x = randnF32(makeRng(trial), 2 * t.n * headDim);
      vis.apply(x, { shape: [1, t.n, 2, headDim], grid });
      vis.free();
      return [t.cos, t.sin, x];
    });
    for (let i = 0; i < 3; i++) assert.deepEqual(new Uint32Array(outs[0][i].buffer), new Uint32Array(outs[1][i].buffer), `trial ${trial} (${kind}) output ${i}`);
  }
});
