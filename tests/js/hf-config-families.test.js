// pe.fromHFConfig / pe.ropeFromHFConfig: the family rules the published files in tests/golden/hf-configs do not
// cover, on small configs written in the published forms (BLOOM, Falcon, MPT, Baichuan, Cohere/Cohere2,
// SmolLM3, Llama 4 with text_config, the Gemma 3 12B text_config, Phi-3.5-vision "su", Qwen2-VL "mrope",
// ChatGLM rope_ratio, GPT-NeoX, DeepSeek, learned and sinusoidal tables), and the errors. Expected values are
// written out from the formulas in the model code, not read back from posenc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild } from './helpers.js';

/** HF's default inverse frequencies: base^(-2i/rotaryDim), i < rotaryDim/2. */
const defaultInv = (base, rotaryDim) => Array.from({ length: rotaryDim / 2 }, (_, i) => base ** (-(2 * i) / rotaryDim));
/** The ALiBi paper's slopes (BLOOM build_alibi_tensor, Baichuan _get_interleave), written out independently. */
function paperSlopes(n) {
  const pow2 = (m) => Array.from({ length: m }, (_, k) => 2 ** ((-8 * (k + 1)) / m));
  const p = 2 ** Math.floor(Math.log2(n));
  if (p === n) return pow2(n);
  return [...pow2(p), ...pow2(2 * p).filter((_, k) => k % 2 === 0).slice(0, n - p)];
}
const close = (got, want, tol, what) => {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let i = 0; i < want.length; i++) {
    assert.ok(Math.abs(got[i] - want[i]) <= tol * Math.abs(want[i]), `${what}[${i}]: got ${got[i]}, want ${want[i]}`);
  }
};
const kinds = (spec) => spec.layers.map((l) => l.kind).join(',');

for (const build of BUILDS) {
  test(`fromHFConfig families [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const withSpec = (config, fn, options) => {
      const spec = pe.fromHFConfig(config, options);
      try {
        return fn(spec);
      } finally {
        spec.free();
      }
    };
    const withRope = (config, options, fn) => {
      const r = pe.ropeFromHFConfig(config, options);
      try {
        return fn(r);
      } finally {
        r.free();
      }
    };

    await t.test('BLOOM: always ALiBi (112 heads: the paper slopes), never a RoPE', () => {
      const bloom = { model_type: 'bloom', hidden_size: 14336, n_head: 112, n_layer: 70, pretraining_tp: 4, slow_but_exact: false, vocab_size: 250880 };
      withSpec(bloom, (spec) => {
        assert.equal(spec.numLayers, 70);
        assert.ok(spec.layers.every((l) => l.kind === 'alibi' && l.slopes === spec.layers[0].slopes));
        close(spec.layers[0].slopes, paperSlopes(112), 2 ** -23, 'bloom slopes');
        assert.deepEqual(Array.from(spec.layers[0].slopes), Array.from(pe.alibiSlopes(112)));
      });
      assert.throws(() => pe.ropeFromHFConfig(bloom), { name: 'TypeError', message: /\(model_type 'bloom'\) uses ALiBi; use pe\.fromHFConfig or pe\.alibiSlopes/ });
    });

    await t.test("Falcon: alibi true is ALiBi, alibi false is RoPE (also the RefinedWebModel spelling)", () => {
      const falcon = { model_type: 'falcon', alibi: true, hidden_size: 1024, num_attention_heads: 16, num_hidden_layers: 4, new_decoder_architecture: false };
      withSpec(falcon, (spec) => {
        assert.equal(kinds(spec), 'alibi,alibi,alibi,alibi');
        close(spec.layers[0].slopes, paperSlopes(16), 2 ** -23, 'falcon slopes');
      });
      assert.throws(() => pe.ropeFromHFConfig(falcon), /uses ALiBi/);
      const falcon7b = { model_type: 'RefinedWebModel', alibi: false, hidden_size: 4544, n_head: 71, n_layer: 32, rope_theta: 10000 };
      withSpec(falcon7b, (spec) => {
        assert.equal(spec.numLayers, 32);
        const r = spec.layers[0].rope;
        assert.equal(r.headDim, 64);
        assert.equal(r.pairing, 'half');
        close(r.invFreq64(), defaultInv(10000, 64), 1e-12, 'falcon invFreq');
      });
    });

    await t.test('MPT: attn_config.alibi with alibi_bias_max (48 heads: reordered MPT slopes); without alibi no positions', () => {
      const mpt = { model_type: 'mpt', d_model: 3072, n_heads: 48, n_layers: 2, max_seq_len: 4096, learned_pos_emb: true, attn_config: { alibi: true, alibi_bias_max: 16 } };
      // build_mpt_alibi_tensor: n2 = 64, slope_k = 2^(-k * 16 / 64), odd indices then even, first 48
      const all = Array.from({ length: 64 }, (_, i) => 2 ** (-(i + 1) * 0.25));
      const want = [...all.filter((_, i) => i % 2 === 1), ...all.filter((_, i) => i % 2 === 0)].slice(0, 48);
      withSpec(mpt, (spec) => {
        assert.equal(kinds(spec), 'alibi,alibi');
        close(spec.layers[0].slopes, want, 2 ** -23, 'mpt slopes');
        assert.equal(spec.layers[0].alibiBiasMax, 16);
        assert.ok(spec.ignored.includes('learned_pos_emb'), 'learned_pos_emb is not read (transformers MptModel)');
      });
      const noAlibi = { ...mpt, attn_config: { alibi: false } };
      withSpec(noAlibi, (spec) => assert.equal(kinds(spec), 'none,none'));
      assert.throws(() => pe.ropeFromHFConfig(noAlibi), { name: 'TypeError', message: /no position encoding/ });
      assert.throws(() => pe.fromHFConfig({ ...mpt, attn_config: { alibi: false, rope: true, rope_theta: 10000 } }), { name: 'TypeError', message: /attn_config\.rope/ });
    });

    await t.test('Baichuan: 13B (hidden 5120) is ALiBi over 40 heads; 7B (hidden 4096) is RoPE', () => {
      const b13 = { model_type: 'baichuan', architectures: ['BaichuanForCausalLM'], hidden_size: 5120, num_attention_heads: 40, num_hidden_layers: 40, model_max_length: 4096 };
      withSpec(b13, (spec) => {
        assert.ok(spec.layers.every((l) => l.kind === 'alibi'));
        close(spec.layers[0].slopes, paperSlopes(40), 2 ** -23, 'baichuan-13b slopes');
      });
      assert.throws(() => pe.ropeFromHFConfig(b13), /uses ALiBi/);
      const b7 = { model_type: 'baichuan', hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 32, max_position_embeddings: 4096 };
      withRope(b7, undefined, (r) => close(r.invFreq64(), defaultInv(10000, 128), 1e-12, 'baichuan-7b'));
    });

    await t.test('Cohere: interleaved pairs; Cohere2: RoPE on sliding layers only (sliding_window_pattern 4)', () => {
      const cohere = { model_type: 'cohere', hidden_size: 8192, num_attention_heads: 64, num_hidden_layers: 2, rope_theta: 8000000, max_position_embeddings: 8192 };
      withRope(cohere, undefined, (r) => {
        assert.equal(r.pairing, 'interleaved');
        close(r.invFreq64(), defaultInv(8e6, 128), 1e-12, 'cohere');
      });
      withRope(cohere, { pairing: 'half' }, (r) => assert.equal(r.pairing, 'half', 'options.pairing overrides the family'));
      const cohere2 = { model_type: 'cohere2', hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 8, rope_theta: 50000, sliding_window: 4096, sliding_window_pattern: 4 };
      withSpec(cohere2, (spec) => {
        assert.equal(kinds(spec), 'rope,rope,rope,none,rope,rope,rope,none');
        assert.deepEqual(spec.layers.map((l) => l.layerType), ['sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention']);
        const r = spec.layers[0].rope;
        assert.ok(spec.layers.every((l) => l.kind === 'none' || l.rope === r), 'one rope shared by the sliding layers');
        assert.equal(r.pairing, 'interleaved');
        close(r.invFreq64(), defaultInv(50000, 128), 1e-12, 'cohere2');
      });
      assert.throws(() => pe.ropeFromHFConfig(cohere2, { layerType: 'full_attention' }), { name: 'TypeError', message: /'full_attention' layers .* have no RoPE/ });
      withRope(cohere2, { layerType: 'sliding_attention' }, (r) => assert.equal(r.base, 50000));
      withRope(cohere2, undefined, (r) => assert.equal(r.base, 50000));
    });

    await t.test('SmolLM3: no_rope_layers (1 = RoPE), or every 4th layer NoPE by default; no query scale', () => {
      const smol = { model_type: 'smollm3', hidden_size: 2048, num_attention_heads: 16, num_hidden_layers: 8, rope_theta: 5000000, no_rope_layers: [1, 1, 0, 1, 1, 1, 1, 0] };
      withSpec(smol, (spec) => {
        assert.equal(kinds(spec), 'rope,rope,none,rope,rope,rope,rope,none');
        assert.ok(spec.layers.every((l) => l.queryScale === undefined));
        close(spec.layers[0].rope.invFreq64(), defaultInv(5e6, 128), 1e-12, 'smollm3');
      });
      const { no_rope_layers: _n, ...byInterval } = smol;
      withSpec(byInterval, (spec) => assert.equal(kinds(spec), 'rope,rope,rope,none,rope,rope,rope,none'));
      withSpec({ ...byInterval, no_rope_layer_interval: 2 }, (spec) => assert.equal(kinds(spec), 'rope,none,rope,none,rope,none,rope,none'));
      assert.throws(() => pe.fromHFConfig({ ...smol, no_rope_layers: [1, 1] }), { name: 'TypeError', message: /no_rope_layers must be an array of at least 8/ });
    });

    await t.test('Llama 4 with text_config: llama3 scaling applied, NoPE layers with the attention temperature', () => {
      const text = {
        model_type: 'llama4_text', hidden_size: 5120, num_attention_heads: 40, head_dim: 128, num_hidden_layers: 8,
        rope_theta: 500000, rope_scaling: { rope_type: 'llama3', factor: 16, low_freq_factor: 1, high_freq_factor: 1.5, original_max_position_embeddings: 8192 },
        attn_temperature_tuning: true, floor_scale: 8192, attn_scale: 0.1, no_rope_layers: [],
      };
      withSpec({ model_type: 'llama4', text_config: text }, (spec) => {
        assert.equal(spec.textModelType, 'llama4_text');
        assert.equal(kinds(spec), 'rope,rope,rope,none,rope,rope,rope,none');
        assert.equal(spec.layers[0].layerType, 'chunked_attention');
        assert.equal(spec.layers[3].layerType, 'full_attention');
        const r = spec.layers[0].rope;
        assert.equal(r.type, 'llama3');
        assert.equal(r.pairing, 'interleaved');
        const q = spec.layers[3].queryScale;
        assert.equal(q.type, 'llama4_temperature');
        assert.equal(q.at(0), 1);
        assert.equal(q.at(8190), 1);
        assert.equal(q.at(8191), Math.log(2) * 0.1 + 1);
        assert.equal(q.at(3 * 8192 - 1), Math.log(4) * 0.1 + 1);
        assert.equal(spec.layers[0].queryScale, undefined, 'RoPE layers have no temperature');
      });
      withSpec({ model_type: 'llama4', text_config: { ...text, attn_temperature_tuning: false } }, (spec) => assert.equal(spec.layers[3].queryScale, undefined));
    });

    await t.test('Gemma 3 12B text_config: class defaults (head_dim 256, theta 1e6 / 1e4, pattern 6), layerType in both forms', () => {
      const g12 = {
        architectures: ['Gemma3ForConditionalGeneration'], model_type: 'gemma3', boi_token_index: 255999,
        text_config: { hidden_size: 3840, intermediate_size: 15360, model_type: 'gemma3_text', num_attention_heads: 16, num_hidden_layers: 48, num_key_value_heads: 8, rope_scaling: { factor: 8.0, rope_type: 'linear' }, sliding_window: 1024 },
        vision_config: { hidden_size: 1152, model_type: 'siglip_vision_model', patch_size: 14 },
      };
      const full = defaultInv(1e6, 256).map((x) => x / 8);
      const sliding = defaultInv(1e4, 256);
      withSpec(g12, (spec) => {
        assert.equal(spec.numLayers, 48);
        assert.equal(spec.defaults['text_config.head_dim'], 256);
        spec.layers.forEach((l, i) => assert.equal(l.layerType, (i + 1) % 6 ? 'sliding_attention' : 'full_attention', `layer ${i}`));
        const s = spec.layers[0].rope;
        const f = spec.layers[5].rope;
        assert.notEqual(s, f);
        assert.ok(spec.layers.every((l) => l.rope === (l.layerType === 'full_attention' ? f : s)));
        assert.equal(f.headDim, 256);
        assert.equal(f.type, 'linear');
        close(f.invFreq64(), full, 1e-12, 'gemma3 full');
        assert.equal(s.type, 'default');
        close(s.invFreq64(), sliding, 1e-12, 'gemma3 sliding');
      });
      withRope(g12, { layerType: 'sliding_attention' }, (r) => close(r.invFreq64(), sliding, 1e-12, 'ropeFromHFConfig sliding'));
      withRope(g12, { layerType: 'full_attention' }, (r) => close(r.invFreq64(), full, 1e-12, 'ropeFromHFConfig full'));
      assert.throws(() => pe.ropeFromHFConfig(g12), { name: 'TypeError', message: /different RoPEs by layer type; pass options\.layerType/ });
      assert.throws(() => pe.ropeFromHFConfig(g12, { layerType: 'global' }), { name: 'RangeError', message: /options\.layerType must be one of 'sliding_attention', 'full_attention'/ });
      // the v5 form: rope_parameters keyed by layer type
      const v5 = { model_type: 'gemma3_text', num_hidden_layers: 12, rope_parameters: { full_attention: { rope_type: 'linear', factor: 8, rope_theta: 1e6 }, sliding_attention: { rope_type: 'default', rope_theta: 1e4 } } };
      withSpec(v5, (spec) => {
        close(spec.layers[5].rope.invFreq64(), full, 1e-12, 'v5 full');
        close(spec.layers[0].rope.invFreq64(), sliding, 1e-12, 'v5 sliding');
      });
    });

    await t.test('Gemma 2: alternating layer types, one RoPE object for every layer', () => {
      withSpec({ model_type: 'gemma2', head_dim: 256, num_hidden_layers: 6, rope_theta: 10000 }, (spec) => {
        assert.deepEqual(spec.layers.map((l) => l.layerType), ['sliding_attention', 'full_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'full_attention']);
        assert.ok(spec.layers.every((l) => l.rope === spec.layers[0].rope));
      });
    });

    await t.test('Phi-3.5-vision: "su" is longrope (phi3 also maps "yarn"); attention factor sqrt(1 + ln 32 / ln 4096)', () => {
      const short = Array.from({ length: 48 }, (_, i) => 1 + i / 48);
      const long = Array.from({ length: 48 }, (_, i) => 1 + i / 4);
      const phi = {
        model_type: 'phi3_v', hidden_size: 3072, num_attention_heads: 32, num_hidden_layers: 32, rope_theta: 10000,
        max_position_embeddings: 131072, original_max_position_embeddings: 4096, rope_scaling: { type: 'su', short_factor: short, long_factor: long },
        embd_layer: { embedding_cls: 'image', hd_transform_order: 'sub_glb' },
      };
      const want = defaultInv(10000, 96);
      withRope(phi, undefined, (r) => {
        assert.equal(r.type, 'longrope');
        assert.equal(r.attentionScaling(), Math.sqrt(1 + Math.log(32) / Math.log(4096)));
        close(r.invFreq64(), want.map((x, i) => x / short[i]), 1e-12, 'short factors');
        close(r.invFreq64(4097), want.map((x, i) => x / long[i]), 1e-12, 'long factors past 4096');
      });
      withRope({ ...phi, model_type: 'phi3', rope_scaling: { ...phi.rope_scaling, type: 'yarn' } }, undefined, (r) => assert.equal(r.type, 'longrope'));
    });

    await t.test('Qwen2-VL legacy "type": "mrope": a default-type M-RoPE rope with the section', () => {
      const q = { model_type: 'qwen2_vl', hidden_size: 3584, num_attention_heads: 28, num_hidden_layers: 2, rope_theta: 1000000, max_position_embeddings: 32768, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] } };
      withSpec(q, (spec) => {
        const l = spec.layers[0];
        assert.equal(l.rope.type, 'default');
        assert.deepEqual({ section: [...l.mrope.section], interleaved: l.mrope.interleaved }, { section: [16, 24, 24], interleaved: false });
        assert.deepEqual(l.rope.mrope.section, [16, 24, 24], 'the layer rope is the M-RoPE rope');
        assert.equal(l.rope.mrope.interleaved, false);
        close(l.rope.invFreq64(), defaultInv(1e6, 128), 1e-12, 'qwen2-vl');
      });
      assert.throws(() => pe.fromHFConfig({ ...q, rope_scaling: { type: 'mrope', mrope_section: [16, 24] } }), { name: 'RangeError', message: /rope_scaling\.mrope_section must be an array of 3 .*got length 2/ });
      assert.throws(() => pe.fromHFConfig({ ...q, rope_scaling: { type: 'mrope', mrope_section: [16, 24, 23] } }), { name: 'RangeError', message: /rope_scaling\.mrope_section must add up to hidden_size \/\/ num_attention_heads \/ 2 = 64 .*sum 63/ });
      assert.throws(() => pe.fromHFConfig({ ...q, rope_scaling: { type: 'mrope', mrope_section: [16, 24.5, 24] } }), { name: 'RangeError', message: /rope_scaling\.mrope_section\[1\]/ });
      assert.throws(() => pe.fromHFConfig({ ...q, rope_scaling: { type: 'mrope', mrope_section: '16,24,24' } }), { name: 'TypeError', message: /rope_scaling\.mrope_section/ });
      assert.throws(() => pe.ropeFromHFConfig({ ...q, rope_scaling: { mrope_section: [24, 70, 20], mrope_interleaved: true } }), { name: 'RangeError', message: /rope_scaling\.mrope_section\[1\] must be at most .* = 64/ });
    });

    await t.test('ChatGLM: kv_channels / 2 rotated in (2i, 2i+1) pairs, base 10000 * rope_ratio; 2D positions refused', () => {
      const glm4 = { model_type: 'chatglm', hidden_size: 4096, num_attention_heads: 32, kv_channels: 128, num_layers: 40, seq_length: 131072, rope_ratio: 500, original_rope: true };
      withSpec(glm4, (spec) => {
        assert.equal(spec.numLayers, 40);
        const r = spec.layers[0].rope;
        assert.equal(r.headDim, 128);
        assert.equal(r.rotaryDim, 64);
        assert.equal(r.pairing, 'interleaved');
        close(r.invFreq64(), defaultInv(5e6, 64), 1e-12, 'chatglm rope_ratio 500');
      });
      assert.throws(() => pe.fromHFConfig({ ...glm4, position_encoding_2d: true }), { name: 'TypeError', message: /position_encoding_2d/ });
    });

    await t.test("GPT-NeoX rotary_pct + rotary_emb_base; GPT-J rotary_dim and interleaved pairs; Phi reads partial_rotary_factor, not rotary_dim", () => {
      withRope({ model_type: 'gpt_neox', hidden_size: 512, num_attention_heads: 8, num_hidden_layers: 2, rotary_pct: 0.25, rotary_emb_base: 10000 }, undefined, (r) => {
        assert.equal(r.rotaryDim, 16);
        assert.equal(r.pairing, 'half');
      });
      withRope({ model_type: 'stablelm_epoch', hidden_size: 2560, num_attention_heads: 32, num_hidden_layers: 2, rope_pct: 0.25, rope_theta: 10000 }, undefined, (r) => {
        assert.equal(r.rotaryDim, 20, 'StableLM epoch: int(80 * 0.25)');
        close(r.invFreq64(), defaultInv(10000, 20), 1e-12, 'stablelm rope_pct');
      });
      const gptj = { model_type: 'gptj', n_embd: 4096, n_head: 16, n_layer: 2, rotary_dim: 64, n_positions: 2048, rope_theta: 5 };
      withSpec(gptj, (spec) => {
        const r = spec.layers[0].rope;
        assert.equal(r.pairing, 'interleaved');
        assert.equal(r.base, 10000, "GPT-J's base is fixed");
        assert.ok(spec.ignored.includes('rope_theta'));
      });
      withRope(gptj, { pairing: 'half' }, (r) => assert.equal(r.pairing, 'half'));
      withSpec({ model_type: 'phi', hidden_size: 2560, num_attention_heads: 32, num_hidden_layers: 2, partial_rotary_factor: 0.4, rotary_dim: 64 }, (spec) => {
        assert.equal(spec.layers[0].rope.rotaryDim, 32);
        assert.deepEqual(spec.ignored, ['rotary_dim']);
      });
    });

    await t.test('DeepSeek: qk_rope_head_dim, softmax scale (V3 with mscale^2, V2 without), rope_interleave', () => {
      const v3 = {
        model_type: 'deepseek_v3', hidden_size: 7168, num_attention_heads: 128, num_hidden_layers: 3, qk_nope_head_dim: 128, qk_rope_head_dim: 64, max_position_embeddings: 163840, rope_theta: 10000,
        rope_scaling: { type: 'yarn', factor: 40, original_max_position_embeddings: 4096, beta_fast: 32, beta_slow: 1, mscale: 1.0, mscale_all_dim: 0.5 },
      };
      const m = 0.1 * 0.5 * Math.log(40) + 1;
      withSpec(v3, (spec) => {
        const l = spec.layers[0];
        assert.equal(l.rope.headDim, 64);
        assert.equal(l.rope.pairing, 'interleaved');
        assert.equal(l.outputPairing, 'half');
        assert.ok(Math.abs(l.scale - 192 ** -0.5 * m * m) <= 1e-15);
      });
      withSpec({ ...v3, rope_interleave: false }, (spec) => {
        assert.equal(spec.layers[0].rope.pairing, 'half');
        assert.equal(spec.layers[0].outputPairing, undefined);
      });
      withSpec({ ...v3, model_type: 'deepseek_v2' }, (spec) => {
        assert.equal(spec.layers[0].rope.pairing, 'interleaved');
        assert.equal(spec.layers[0].outputPairing, undefined);
        assert.equal(spec.layers[0].scale, 192 ** -0.5);
      });
    });

    await t.test('Learned tables: GPTBigCode, RoBERTa (offset pad_token_id + 1), BERT relative positions refused; DistilBERT sinusoidal', () => {
      const bigcode = { model_type: 'gpt_bigcode', n_embd: 6144, n_head: 48, n_layer: 3, n_positions: 8192, multi_query: true };
      withSpec(bigcode, (spec) => assert.deepEqual(spec.layers.map((l) => [l.kind, l.maxLen, l.offset]), [['learned', 8192, 0], ['learned', 8192, 0], ['learned', 8192, 0]]));
      assert.throws(() => pe.ropeFromHFConfig(bigcode), { name: 'TypeError', message: /learned absolute position table; use pe\.fromHFConfig or pe\.learned/ });
      // the reason comes before any size: GPT2Config's default n_positions (1024) fills an omitted one
      assert.throws(() => pe.ropeFromHFConfig({ model_type: 'gpt2', hidden_size: 128, num_attention_heads: 2 }), { name: 'TypeError', message: /\(model_type 'gpt2'\) uses a learned absolute position table/ });
      assert.equal(pe.fromHFConfig({ model_type: 'gpt2' }).layers[0].maxLen, 1024);
      withSpec({ model_type: 'roberta', max_position_embeddings: 514, num_hidden_layers: 1, pad_token_id: 1, position_embedding_type: 'absolute' }, (spec) => {
        assert.equal(spec.layers[0].offset, 2);
        assert.equal(spec.layers[0].maxLen, 514);
      });
      assert.throws(() => pe.fromHFConfig({ model_type: 'bert', max_position_embeddings: 512, num_hidden_layers: 1, position_embedding_type: 'relative_key' }), { name: 'TypeError', message: /position_embedding_type 'relative_key'/ });
      withSpec({ model_type: 'distilbert', dim: 768, n_layers: 6, max_position_embeddings: 512, sinusoidal_pos_embds: true }, (spec) => {
        assert.deepEqual({ ...spec.layers[0] }, { kind: 'sinusoidal', dModel: 768, base: 10000, pairing: 'interleaved', variant: 'paper', offset: 0, maxLen: 512 });
      });
      withSpec({ model_type: 'distilbert', dim: 768, n_layers: 6, max_position_embeddings: 512, sinusoidal_pos_embds: false }, (spec) => assert.equal(spec.layers[0].kind, 'learned'));
    });

    await t.test('GLM: interleaved with the class default partial_rotary_factor 0.5; GLM-4.5 (glm4_moe) half-split', () => {
      withRope({ model_type: 'glm4', hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 2, rope_theta: 10000 }, undefined, (r) => {
        assert.equal(r.headDim, 128);
        assert.equal(r.rotaryDim, 64);
        assert.equal(r.pairing, 'interleaved');
        close(r.invFreq64(), defaultInv(1e4, 64), 1e-12, 'glm4');
      });
      const air = { model_type: 'glm4_moe', head_dim: 128, hidden_size: 4096, num_attention_heads: 96, num_hidden_layers: 46, partial_rotary_factor: 0.5, rope_theta: 1000000, max_position_embeddings: 131072 };
      withRope(air, undefined, (r) => {
        assert.equal(r.rotaryDim, 64);
        assert.equal(r.pairing, 'half');
      });
    });

    await t.test('encoder-decoder: BART learned (offset 2), Marian sinusoidal halves, M2M100 fairseq table from pad_token_id + 1', () => {
      const bart = { model_type: 'bart', d_model: 768, encoder_layers: 2, decoder_layers: 3, max_position_embeddings: 1024, scale_embedding: false };
      pe.fromHFConfig(bart).layers.forEach((l, i) => assert.deepEqual({ ...l }, { kind: 'learned', maxLen: 1024, offset: 2, stack: i < 2 ? 'encoder' : 'decoder' }));
      assert.throws(() => pe.ropeFromHFConfig(bart), /learned absolute position table/);
      const marian = { model_type: 'marian', d_model: 8, encoder_layers: 1, decoder_layers: 1, max_position_embeddings: 512, pad_token_id: 58100 };
      const spec = pe.fromHFConfig(marian);
      const l = spec.layers[1];
      assert.deepEqual({ ...l }, { kind: 'sinusoidal', dModel: 8, base: 10000, pairing: 'half', variant: 'paper', offset: 0, maxLen: 512, stack: 'decoder' });
      // MarianSinusoidalPositionalEmbedding: sin(p / 10000^(2i/d)) in the first half, cos in the second
      const table = pe.sinusoidal(3, l.dModel, { base: l.base, pairing: l.pairing, variant: l.variant, offset: l.offset });
      for (let p = 0; p < 3; p++) {
        for (let i = 0; i < 4; i++) {
          const a = p / 10000 ** ((2 * i) / 8);
          assert.ok(Math.abs(table[p * 8 + i] - Math.sin(a)) < 1e-6 && Math.abs(table[p * 8 + 4 + i] - Math.cos(a)) < 1e-6, `marian p ${p} i ${i}`);
        }
      }
      const m2m = { model_type: 'm2m100', d_model: 1024, encoder_layers: 1, decoder_layers: 1, max_position_embeddings: 1024, pad_token_id: 1 };
      const m = pe.fromHFConfig(m2m).layers[0];
      assert.equal(m.variant, 'tensor2tensor');
      assert.equal(m.offset, 2);
      assert.equal(m.stack, 'encoder');
    });

    await t.test('ModernBERT: global layers every 3rd (global_rope_theta), local layers local_rope_theta', () => {
      const mb = { model_type: 'modernbert', hidden_size: 768, num_attention_heads: 12, num_hidden_layers: 6, global_rope_theta: 160000, local_rope_theta: 10000, global_attn_every_n_layers: 3, local_attention: 128 };
      withSpec(mb, (spec) => {
        assert.deepEqual(spec.layers.map((l) => l.layerType), ['full_attention', 'sliding_attention', 'sliding_attention', 'full_attention', 'sliding_attention', 'sliding_attention']);
        close(spec.layers[0].rope.invFreq64(), defaultInv(160000, 64), 1e-12, 'modernbert global');
        close(spec.layers[1].rope.invFreq64(), defaultInv(10000, 64), 1e-12, 'modernbert local');
        assert.equal(spec.layers[4].rope, spec.layers[1].rope);
      });
      withSpec({ ...mb, local_rope_theta: null }, (spec) => assert.equal(spec.layers[1].rope, spec.layers[0].rope, 'local_rope_theta null: the global theta everywhere'));
    });

    await t.test('Llama 3.2 Vision (mllama): cross-attention layers have no rotary; Jamba: no positions at all', () => {
      const mllama = {
        model_type: 'mllama',
        text_config: { model_type: 'mllama_text_model', hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 10, cross_attention_layers: [3, 8], rope_theta: 500000, rope_scaling: { rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 } },
      };
      withSpec(mllama, (spec) => {
        assert.equal(kinds(spec), 'rope,rope,rope,none,rope,rope,rope,rope,none,rope');
        assert.equal(spec.layers[3].layerType, 'cross_attention');
        assert.equal(spec.layers[0].rope.type, 'llama3');
      });
      const jamba = { model_type: 'jamba', hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 4, attn_layer_period: 8 };
      withSpec(jamba, (spec) => assert.equal(kinds(spec), 'none,none,none,none'));
      assert.throws(() => pe.ropeFromHFConfig(jamba), { name: 'TypeError', message: /has no RoPE layers/ });
    });

    await t.test('EXAONE 4: full layers are NoPE only when sliding_window is set', () => {
      const ex = { model_type: 'exaone4', head_dim: 128, num_hidden_layers: 4, rope_theta: 1e6, sliding_window: 4096, sliding_window_pattern: 'LLLG' };
      withSpec(ex, (spec) => assert.equal(kinds(spec), 'rope,rope,rope,none'));
      withSpec({ ...ex, sliding_window: null }, (spec) => assert.equal(kinds(spec), 'rope,rope,rope,rope'));
    });

    await t.test('YaRN: an explicit factor is used even where max / original differs (current transformers)', () => {
      const cfg = (max) => ({ model_type: 'qwen2', head_dim: 64, num_hidden_layers: 1, max_position_embeddings: max, rope_theta: 10000, rope_scaling: { rope_type: 'yarn', factor: 4, original_max_position_embeddings: 4096 } });
      withRope(cfg(65536), undefined, (a) =>
        withRope(cfg(16384), undefined, (b) => {
          assert.equal(a.config.scaling.factor, 4);
          assert.deepEqual(a.invFreq64(), b.invFreq64(), 'max_position_embeddings does not move the correction range');
          assert.equal(a.attentionScaling(), 0.1 * Math.log(4) + 1);
        }),
      );
    });

    await t.test('ignored: position keys present and not read', () => {
      withSpec({ model_type: 'llama', head_dim: 64, num_hidden_layers: 1, rope_theta: 1e4, rope_scaling: { rope_type: 'linear', factor: 2, original_max_position_embeddings: 4096 } }, (spec) =>
        assert.deepEqual(spec.ignored, ['rope_scaling.original_max_position_embeddings']),
      );
      withSpec({ model_type: 'phi3', head_dim: 128, num_hidden_layers: 1, rope_theta: 250000, rope_scaling: null, max_position_embeddings: 16384, original_max_position_embeddings: 16384 }, (spec) =>
        assert.deepEqual(spec.ignored, ['original_max_position_embeddings'], 'Phi-4: the default type reads no original length'),
      );
      withSpec({ model_type: 'llama', head_dim: 64, num_hidden_layers: 1, rope_theta: 1e4, rope_parameters: { rope_type: 'default', rope_theta: 5e5 }, rope_scaling: { rope_type: 'linear', factor: 2 } }, (spec) => {
        assert.equal(spec.layers[0].rope.base, 5e5, 'rope_parameters wins');
        assert.deepEqual(spec.ignored.sort(), ['rope_scaling', 'rope_theta']);
      });
      // a wrapper's top-level copies of the text keys are not what the model reads
      withSpec({ model_type: 'mistral3', rope_theta: 1, text_config: { model_type: 'mistral', head_dim: 128, num_hidden_layers: 1, rope_theta: 1e6 } }, (spec) => {
        assert.equal(spec.layers[0].rope.base, 1e6);
        assert.deepEqual(spec.ignored, ['rope_theta']);
      });
    });

    await t.test('the spec: frozen, free() releases every rope', () => {
      const spec = pe.fromHFConfig({ model_type: 'llama', head_dim: 64, num_hidden_layers: 2 });
      assert.ok(Object.isFrozen(spec) && Object.isFrozen(spec.layers) && Object.isFrozen(spec.layers[0]));
      const r = spec.layers[0].rope;
      assert.equal(r.freed, false);
      spec.free();
      assert.equal(r.freed, true);
    });
  });

  test(`fromHFConfig / ropeFromHFConfig errors [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const llama = { model_type: 'llama', head_dim: 64, num_hidden_layers: 2, rope_theta: 10000 };

    await t.test('config and options', () => {
      assert.throws(() => pe.fromHFConfig(null), { name: 'TypeError', message: /^fromHFConfig: config must be a config\.json object/ });
      assert.throws(() => pe.fromHFConfig('{}'), { name: 'TypeError' });
      assert.throws(() => pe.fromHFConfig(llama, { layerType: 'full_attention' }), { name: 'TypeError', message: /fromHFConfig: options\.layerType is not an option; did you mean pairing\?/ });
      assert.throws(() => pe.ropeFromHFConfig(llama, { layertype: 'x' }), { name: 'TypeError', message: /options\.layertype is not an option; did you mean layerType\?/ });
      assert.throws(() => pe.fromHFConfig(llama, { pairing: 'even' }), { name: 'RangeError', message: /options\.pairing must be one of 'half', 'interleaved'/ });
      assert.throws(() => pe.fromHFConfig({ head_dim: 64 }), { name: 'TypeError', message: /num_hidden_layers/ });
      assert.equal(pe.fromHFConfig({ model_type: 'llama', head_dim: 64 }).numLayers, 32, "LlamaConfig's default");
    });

    await t.test('sizes, and a config whose getters change their answer', () => {
      assert.throws(() => pe.ropeFromHFConfig({ hidden_size: 4096, num_attention_heads: 0.5 }), { name: 'RangeError', message: /num_attention_heads must be an integer >= 1, got 0\.5/ });
      assert.throws(() => pe.ropeFromHFConfig({ hidden_size: 4096.5, num_attention_heads: 32 }), { name: 'RangeError', message: /hidden_size must be an integer >= 1/ });
      // each key is read once: a getter answering 64 first and 7 afterwards cannot pass one check and reach another
      let reads = 0;
      const tricky = { model_type: 'llama', num_hidden_layers: 2, get head_dim() { reads++; return reads === 1 ? 64 : 7; } };
      const spec = pe.fromHFConfig(tricky);
      assert.equal(reads, 1);
      assert.equal(spec.layers[0].rope.headDim, 64);
      spec.free();
    });

    await t.test('rope types and fields', () => {
      assert.throws(() => pe.fromHFConfig({ ...llama, rope_scaling: { rope_type: 'ntk', factor: 2 } }), { name: 'RangeError', message: /rope_scaling\.rope_type must be one of 'default', 'linear'/ });
      assert.throws(() => pe.fromHFConfig({ ...llama, rope_scaling: { type: 'linear', factr: 2 } }), { name: 'TypeError', message: /rope_scaling\.factr is not an option; did you mean factor\?/ });
      assert.throws(() => pe.fromHFConfig({ ...llama, rope_parameters: { rope_type: 'linear', rope_theta: 1e4, factor: 2, short_mscale: 1 } }), { name: 'TypeError', message: /rope_parameters\.short_mscale/ });
      assert.throws(() => pe.fromHFConfig({ ...llama, rope_scaling: { rope_type: 'linear' } }), { name: 'TypeError', message: /rope_scaling\.factor must be a finite number > 0 \(required for 'linear'\)/ });
      assert.throws(() => pe.fromHFConfig({ ...llama, rope_scaling: 'linear' }), { name: 'TypeError', message: /rope_scaling must be an object or null/ });
      assert.throws(() => pe.fromHFConfig({ model_type: 'gemma3', text_config: { model_type: 'gemma3_text', num_hidden_layers: 6, rope_scaling: { rope_type: 'linear', factor: -8 } } }), {
        name: 'RangeError',
        message: /text_config\.rope_scaling\.factor must be a finite number > 0/,
      });
    });

    await t.test('families posenc does not build are refused with the reason', () => {
      assert.throws(() => pe.fromHFConfig({ model_type: 't5', num_layers: 6, relative_attention_num_buckets: 32 }), { name: 'TypeError', message: /'t5' uses relative position buckets/ });
      assert.throws(() => pe.ropeFromHFConfig({ model_type: 'mamba', num_hidden_layers: 2 }), { name: 'TypeError', message: /no attention/ });
      assert.throws(() => pe.fromHFConfig({ model_type: 'mystery', num_hidden_layers: 2, hidden_size: 64 }), { name: 'TypeError', message: /'mystery' is not a family posenc knows, and the config has no RoPE keys/ });
      // an unknown family with RoPE keys is read as generic RoPE
      const spec = pe.fromHFConfig({ model_type: 'mystery', num_hidden_layers: 1, head_dim: 32, rope_theta: 1e4 });
      assert.equal(spec.layers[0].rope.headDim, 32);
      spec.free();
    });

    await t.test('layer types', () => {
      assert.throws(() => pe.fromHFConfig({ ...llama, layer_types: ['full_attention'] }), { name: 'TypeError', message: /layer_types must be an array of 2 strings/ });
      assert.throws(() => pe.ropeFromHFConfig(llama, { layerType: 'sliding_attention' }), { name: 'RangeError', message: /options\.layerType applies only to configs with layer types/ });
      const exaone = { model_type: 'exaone4', head_dim: 128, num_hidden_layers: 4, sliding_window: 4096, layer_types: ['sliding_attention', 'sliding_attention', 'sliding_attention', 'full_attention'] };
      assert.throws(() => pe.ropeFromHFConfig(exaone, { layerType: 'full_attention' }), { name: 'TypeError', message: /'full_attention' layers .* have no RoPE/ });
      assert.throws(() => pe.ropeFromHFConfig(exaone, { layerType: 7 }), { name: 'TypeError', message: /options\.layerType must be one of 'sliding_attention', 'full_attention'/ });
      const r = pe.ropeFromHFConfig(exaone);
      assert.equal(r.headDim, 128);
      r.free();
    });

    await t.test('rope_parameters keyed by layer type must cover every layer type', () => {
      const cfg = { model_type: 'gemma3_text', num_hidden_layers: 6, rope_parameters: { full_attention: { rope_type: 'default', rope_theta: 1e6 }, local: { rope_type: 'default', rope_theta: 1e4 } } };
      assert.throws(() => pe.fromHFConfig(cfg), { name: 'RangeError', message: /the layer type 'sliding_attention' \(layer_types\) must be one of 'full_attention', 'local'/ });
    });

    await t.test('linear attention layers carry no positions (Qwen3-Next)', () => {
      const spec = pe.fromHFConfig({ model_type: 'qwen3_next', head_dim: 256, num_hidden_layers: 8, partial_rotary_factor: 0.25, rope_theta: 1e7, full_attention_interval: 4 });
      assert.equal(spec.layers.map((l) => l.kind).join(','), 'none,none,none,rope,none,none,none,rope');
      assert.equal(spec.layers[3].rope.rotaryDim, 64);
      spec.free();
    });

    await t.test('a failed fromHFConfig leaves no rope behind', () => {
      const before = pe.memoryBytes;
      for (let i = 0; i < 2000; i++) { // 2000 leaked head_dim-256 ropes would grow memory by ~16 MiB
        // layers 0-4 (sliding) build their rope before layer 5's (full) is refused
        assert.throws(() => pe.fromHFConfig({ model_type: 'gemma3_text', num_hidden_layers: 6, rope_scaling: { rope_type: 'linear', factor: -8 } }), RangeError);
      }
      assert.equal(pe.memoryBytes, before);
    });
  });
}
