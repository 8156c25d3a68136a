// config.json -> M-RoPE and vision 2D RoPE, on both builds:
// - every golden M-RoPE case (tests/golden/mrope/mrope.json, HF's values) read as a config.json by
//   pe.fromHFConfig and pe.ropeFromHFConfig: the rope they return is the M-RoPE rope itself (pair axes,
//   cos/sin within 2e-6·max(1, a) and rotated q, k within 3e-5·max(1, a) of *_f64, the bounds), and
//   pe.attention with it agrees with a float64 attention over HF's own rotated q and k (2e-5: see
//   attention-mrope.test.js for the bound; |q|, |k| there are HF's normal inputs, so the logits are scaled down);
// - every golden 2D RoPE case (rope2d.json) read as the vision_config of a wrapper config:
//   ropeFromHFConfig(config, { part: 'vision' }) and spec.vision.rope give HF's cos/sin (2e-6);
// - the published config.json files of tests/golden/hf-configs with a vision_config or M-RoPE sections: the
//   sections, the vision kind, head dim (HF's embed_dim // num_heads or hidden_size // num_heads or head_dim),
//   patch and merge sizes, base, written out here from the files;
// - Llama 4 Scout's vision_config, from the published file's numbers (PROVENANCE below);
// - bad vision configs and options are TypeErrors / RangeErrors naming the key.
//
// PROVENANCE (numbers only): meta-llama/Llama-4-Scout-17B-16E(-Instruct) config.json vision_config — hidden_size
// 1408, num_attention_heads 16, image_size 336, patch_size 14, rope_theta 10000, num_hidden_layers 34,
// model_type llama4_vision_model — as quoted in full in a public write-up of the Scout config (search index
// id 41112263523) and in the aiconfigurator test of the bundled Scout/Maverick checkpoint JSON (id 68383952491).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BUILDS, loadBuild, makeRng, assertThrowsNaming } from './helpers.js';
import { at } from './attention-ref.js';

const MROPE = JSON.parse(readFileSync(new URL('../golden/mrope/mrope.json', import.meta.url), 'utf8'));
const ROPE2D = JSON.parse(readFileSync(new URL('../golden/mrope/rope2d.json', import.meta.url), 'utf8'));
const CONFIGS = new URL('../golden/hf-configs/configs/', import.meta.url);
const builds = await Promise.all(BUILDS.map(async (b) => ({ ...b, pe: await loadBuild(b.simd) })));
const flat = (a) => Int32Array.from(a.flat(Infinity));
const maxAbs = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

/** the (rows, nFreq) table against HF's (rows, width) one: width 2·nFreq repeats the half, width nFreq is per pair */
function tableError(t, want, rows, n) {
  const width = want.length / rows;
  let e = 0;
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < n; j++) {
      e = Math.max(e, Math.abs(t[r * n + j] - want[r * width + j]));
      if (width === 2 * n) e = Math.max(e, Math.abs(t[r * n + j] - want[r * width + n + j]));
    }
  }
  return e;
}

/** float64 attention (bhsd, GQA, causal by token order) over already-rotated q and k */
function refAttention(q, k, v, [B, H, S, D], KVH) {
  const out = new Float64Array(B * H * S * D);
  const scale = Math.fround(1 / Math.sqrt(D));
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const g = Math.floor(h / (H / KVH));
      for (let i = 0; i < S; i++) {
        const lg = [];
        for (let j = 0; j <= i; j++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += q[at('bhsd', S, H, D, b, h, i, d)] * k[at('bhsd', S, KVH, D, b, g, j, d)];
          lg.push(scale * dot);
        }
        const m = Math.max(...lg);
        const p = lg.map((x) => Math.exp(x - m));
        const sum = p.reduce((a, x) => a + x, 0);
        for (let j = 0; j <= i; j++) {
          for (let d = 0; d < D; d++) out[at('bhsd', S, H, D, b, h, i, d)] += (p[j] / sum) * v[at('bhsd', S, KVH, D, b, g, j, d)];
        }
      }
    }
  }
  return out;
}

for (const { name, pe } of builds) {
  test(`golden M-RoPE cases as config.json: fromHFConfig / ropeFromHFConfig give the M-RoPE rope, attention agrees [${name}]`, () => {
    const rng = makeRng(1306);
    for (const c of MROPE.cases) {
      const { resolved_rope_parameters: _r, ...config } = c.config;
      const json = { ...config, model_type: c.model_family, num_hidden_layers: 2 };
      const spec = pe.fromHFConfig(json);
      const layer = spec.layers[0];
      assert.equal(spec.layers[1].rope, layer.rope, `${c.id}: one rope for identical layers`);
      assert.deepEqual(layer.mrope, { section: c.mrope_section, interleaved: c.layout === 'interleaved' }, c.id);
      const single = pe.ropeFromHFConfig(json);
      for (const rope of [layer.rope, single]) {
        const e = c.expected;
        const a = e.attention_scaling;
        assert.deepEqual(Array.from(rope.mrope.pairAxis), e.pair_axis, `${c.id}: pair axes`);
        const pos = flat(c.position_ids);
        const rows = pos.length / 3;
        const { cos, sin } = rope.cosSin(pos);
        assert.ok(tableError(cos, e.cos_f64, rows, rope.nFreq) <= 2e-6 * Math.max(1, a), `${c.id}: cos`);
        assert.ok(tableError(sin, e.sin_f64, rows, rope.nFreq) <= 2e-6 * Math.max(1, a), `${c.id}: sin`);
        const [B, H, S, D] = c.shape;
        const KVH = c.shape_k[1];
        const q = Float32Array.from(c.inputs.q);
        const k = Float32Array.from(c.inputs.k);
        rope.apply(q, { shape: [B, H, S, D], layout: 'bhsd', positions: pos, k, kHeads: KVH });
        assert.ok(maxAbs(q, e.q_embed_f64) <= 3e-5 * Math.max(1, a), `${c.id}: q`);
        assert.ok(maxAbs(k, e.k_embed_f64) <= 3e-5 * Math.max(1, a), `${c.id}: k`);
        // attention with the config's rope and HF's position_ids, against attention over HF's rotated q, k
        const v = Float32Array.from({ length: B * KVH * S * D }, () => rng.uniform() * 2 - 1);
        const got = pe.attention(Float32Array.from(c.inputs.q), Float32Array.from(c.inputs.k), v, {
          shape: { batch: B, heads: H, kvHeads: KVH, qLen: S, headDim: D }, layout: 'bhsd', causal: true, rope, positions: { q: pos, k: pos },
        }).out;
        const want = refAttention(e.q_embed_f64, e.k_embed_f64, v, [B, H, S, D], KVH);
        assert.ok(maxAbs(got, want) <= 2e-5 * Math.max(1, a * a), `${c.id}: attention ${maxAbs(got, want)}`);
      }
      single.free();
      spec.free();
    }
  });

  test(`golden 2D RoPE cases as a vision_config: ropeFromHFConfig(part 'vision') and spec.vision.rope match HF [${name}]`, () => {
    for (const c of ROPE2D.cases) {
      const g = c.config;
      let json;
      let grid;
      const alt = []; // the same tower in another family's spelling
      if (c.kind === 'pixtral') {
        json = { model_type: 'llava', vision_config: { model_type: 'pixtral', image_size: g.image_size, patch_size: g.patch_size, hidden_size: g.hidden_size, num_attention_heads: g.num_attention_heads, head_dim: g.head_dim, rope_theta: g.rope_theta } };
        grid = { images: c.images_hw };
      } else if (c.kind === 'qwen2_vl_vision') {
        // Qwen2-VL names the width embed_dim; Qwen2.5-VL / Qwen3-VL hidden_size (the theta is the class's 10000)
        json = { model_type: 'qwen2_vl', vision_config: { embed_dim: g.embed_dim, num_heads: g.num_heads, spatial_merge_size: g.spatial_merge_size, patch_size: 14 } };
        for (const t of ['qwen2_5_vl', 'qwen3_vl']) {
          alt.push({ model_type: t, vision_config: { model_type: t, hidden_size: g.embed_dim, num_heads: g.num_heads, spatial_merge_size: g.spatial_merge_size, patch_size: 16 } });
        }
        assert.equal(g.theta, 10000);
        grid = { gridThw: c.grid_thw };
      } else {
        json = { model_type: 'llama4', vision_config: { model_type: 'llama4_vision_model', image_size: g.image_size, patch_size: g.patch_size, hidden_size: g.hidden_size, num_attention_heads: g.num_attention_heads, rope_theta: g.rope_theta } };
        grid = { gridH: g.patches_per_side, gridW: g.patches_per_side };
      }
      const [, , S, D] = c.shape;
      for (const config of [json, ...alt]) {
        const spec = pe.fromHFConfig({ ...config, text_config: { model_type: 'qwen2', num_hidden_layers: 1, head_dim: 8 } });
        const single = pe.ropeFromHFConfig(config, { part: 'vision' });
        for (const r of [single, spec.vision.rope]) {
          const what = `${c.id} (${config.model_type})`;
          assert.equal(r.headDim, D, `${what}: head dim`);
          const { cos, sin, n } = r.cosSin(grid);
          assert.equal(n, S);
          assert.ok(tableError(cos, c.expected.cos_f64, n, D / 2) <= 2e-6, `${what}: cos`);
          assert.ok(tableError(sin, c.expected.sin_f64, n, D / 2) <= 2e-6, `${what}: sin`);
        }
        single.free();
        spec.free();
      }
    }
  });

  test(`published configs: M-RoPE sections on the text rope, the vision tower's kind and dims [${name}]`, () => {
    const read = (f) => JSON.parse(readFileSync(new URL(`${f}.json`, CONFIGS), 'utf8'));
    // [file, section, interleaved, text rotary dim, vision: kind, headDim (formula), heads, patch, merge | imageSize, base]
    const want = [
      ['Qwen__Qwen2.5-VL-7B-Instruct', [16, 24, 24], false, 128, { kind: 'qwen2-vl', modelType: 'qwen2_5_vl', headDim: 1280 / 16, heads: 16, patchSize: 14, spatialMergeSize: 2, base: 10000, numLayers: 32 }],
      ['allenai__olmOCR-2-7B-1025-FP8', [16, 24, 24], false, 128, { kind: 'qwen2-vl', modelType: 'qwen2_5_vl', headDim: 1280 / 16, heads: 16, patchSize: 14, spatialMergeSize: 2, base: 10000, numLayers: 32 }],
      ['Qwen__Qwen3-VL-8B-Instruct', [24, 20, 20], true, 128, { kind: 'qwen2-vl', modelType: 'qwen3_vl', headDim: 1152 / 16, heads: 16, patchSize: 16, spatialMergeSize: 2, base: 10000, numLayers: 27 }],
      ['Qwen__Qwen3.5-9B', [11, 11, 10], true, 64, { kind: 'qwen2-vl', modelType: 'qwen3_5', headDim: 1152 / 16, heads: 16, patchSize: 16, spatialMergeSize: 2, base: 10000, numLayers: 27 }],
      ['lightonai__LightOnOCR-1B-1025', null, false, 128, { kind: 'pixtral', modelType: 'pixtral', headDim: 64, heads: 16, patchSize: 14, imageSize: 1540, base: 10000, numLayers: 24 }],
      ['mistralai__Devstral-Small-2-24B-Instruct', null, false, 128, { kind: 'pixtral', modelType: 'pixtral', headDim: 64, heads: 16, patchSize: 14, imageSize: 1540, base: 10000, numLayers: 24 }],
    ];
    for (const [file, section, interleaved, rd, vision] of want) {
      const config = read(file);
      const spec = pe.fromHFConfig(config);
      const layer = spec.layers.find((l) => l.kind === 'rope');
      if (section === null) {
        assert.equal(layer.rope.mrope, null, `${file}: no M-RoPE`);
      } else {
        assert.deepEqual(layer.rope.mrope.section, section, `${file}: sections`);
        assert.equal(layer.rope.mrope.interleaved, interleaved, `${file}: interleaved`);
        assert.equal(layer.rope.rotaryDim, rd, `${file}: rotary dim`);
        const r = pe.ropeFromHFConfig(config);
        assert.deepEqual(r.mrope.section, section, `${file}: ropeFromHFConfig sections`);
        r.free();
      }
      const { rope: vis, ...v } = spec.vision;
      for (const [key, value] of Object.entries(vision)) assert.equal(v[key], value, `${file}: vision.${key}`);
      assert.equal(vis.kind, vision.kind);
      assert.equal(vis.headDim, vision.headDim);
      spec.free();
      assert.throws(() => vis.cosSin({ gridH: 2, gridW: 2 }), /freed/, `${file}: spec.free() frees the vision rope`);
    }
    // Qwen3-VL's learned, interpolated patch position table is not built: listed, not dropped
    assert.deepEqual([...pe.fromHFConfig(read('Qwen__Qwen3-VL-8B-Instruct')).vision.ignored], ['vision_config.num_position_embeddings']);
    // SigLIP (Gemma 3) learns its positions; text-only files have no spec.vision
    const gemma = pe.fromHFConfig(read('google__gemma-3-4b-it'));
    assert.deepEqual({ ...gemma.vision }, { modelType: 'siglip_vision_model', kind: 'learned' });
    gemma.free();
    assertThrowsNaming(() => pe.ropeFromHFConfig(read('google__gemma-3-4b-it'), { part: 'vision' }), TypeError, 'siglip_vision_model', 'learned');
    const qwen3 = pe.fromHFConfig(read('Qwen__Qwen3-8B'));
    assert.equal(qwen3.vision, undefined);
    qwen3.free();
    assertThrowsNaming(() => pe.ropeFromHFConfig(read('Qwen__Qwen3-8B'), { part: 'vision' }), TypeError, 'vision_config');
  });

  test(`Llama 4 Scout's vision_config (published numbers) and Qwen2-VL's class defaults [${name}]`, () => {
    const scout = {
      model_type: 'llama4',
      text_config: { model_type: 'llama4_text', num_hidden_layers: 48, head_dim: 128, rope_theta: 500000 },
      vision_config: { model_type: 'llama4_vision_model', hidden_size: 1408, num_attention_heads: 16, image_size: 336, patch_size: 14, rope_theta: 10000, num_hidden_layers: 34 },
    };
    const spec = pe.fromHFConfig(scout);
    const { rope: vis, ...v } = spec.vision;
    assert.deepEqual(
      { kind: v.kind, headDim: v.headDim, imageSize: v.imageSize, patchSize: v.patchSize, base: v.base, numLayers: v.numLayers },
      { kind: 'llama4', headDim: 1408 / 16, imageSize: 336, patchSize: 14, base: 10000, numLayers: 34 },
    );
    // 336 / 14 = 24 patches a side, then CLS; patch (0, 0) already turns by x + 1 = 1 on the first pair
    const { cos, n } = vis.cosSin({ gridH: 24, gridW: 24 });
    assert.equal(n, 24 * 24 + 1);
    assert.ok(Math.abs(cos[0] - Math.cos(1)) < 1e-6);
    assert.ok(Math.abs(cos[(n - 1) * 44] - 1) < 1e-7, 'CLS: angle 0');
    spec.free();
    // Qwen2VLVisionConfig's defaults fill an empty vision_config: embed_dim 1280 // num_heads 16 = 80
    const q2 = pe.fromHFConfig({ model_type: 'qwen2_vl', num_hidden_layers: 1, hidden_size: 3584, num_attention_heads: 28, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] }, vision_config: {} });
    assert.equal(q2.vision.headDim, 80);
    assert.equal(q2.vision.defaults['vision_config.embed_dim'], 1280);
    q2.free();
  });

  test(`bad vision configs and options are TypeErrors / RangeErrors naming the key [${name}]`, () => {
    const px = (vc) => ({ model_type: 'llava', vision_config: { model_type: 'pixtral', hidden_size: 1024, num_attention_heads: 16, image_size: 1024, patch_size: 16, ...vc } });
    const part = { part: 'vision' };
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({ num_attention_heads: undefined }), part), TypeError, 'vision_config.num_attention_heads');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({ patch_size: 0 }), part), RangeError, 'vision_config.patch_size');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({ image_size: '1024' }), part), TypeError, 'vision_config.image_size');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({ head_dim: 63 }), part), RangeError, 'vision_config.head_dim', 'multiple of 2');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({ rope_theta: -1 }), part), RangeError, 'vision_config.rope_theta');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({ rope_parameters: { rope_type: 'yarn', rope_theta: 1e4 } }), part), RangeError, 'vision_config.rope_parameters.rope_type');
    const qv = { model_type: 'qwen2_5_vl', vision_config: { hidden_size: 1274, num_heads: 14 } }; // 1274 // 14 = 91
    assertThrowsNaming(() => pe.ropeFromHFConfig(qv, part), RangeError, 'vision_config.hidden_size // vision_config.num_heads', 'multiple of 4', '91');
    assertThrowsNaming(() => pe.ropeFromHFConfig({ model_type: 'internvl', vision_config: { model_type: 'intern_vit_6b' } }, part), TypeError, 'intern_vit_6b', 'pe.rope2d');
    assertThrowsNaming(() => pe.ropeFromHFConfig({ model_type: 'qwen2_vl', vision_config: 5 }, part), TypeError, 'vision_config');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({}), { part: 'audio' }), RangeError, 'options.part');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({}), { part: 'vision', layerType: 'full_attention' }), TypeError, 'options.layerType');
    assertThrowsNaming(() => pe.ropeFromHFConfig(px({}), { parts: 'vision' }), TypeError, 'options.parts', 'part');
    // a bad vision_config fails fromHFConfig too (and frees what it built)
    assertThrowsNaming(() => pe.fromHFConfig({ ...px({ patch_size: 0 }), text_config: { model_type: 'mistral', num_hidden_layers: 1, hidden_size: 64, num_attention_heads: 4 } }), RangeError, 'vision_config.patch_size');
  });
}
