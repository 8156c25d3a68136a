// pe.ropeFromHFConfig: config.json objects as they are, in both spellings, and the top-level keys that shape
// the rotation. The numbers themselves are checked against transformers in golden.test.js; here we check that
// every way of writing a config resolves to the same rope.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, configJsonOf, olderSpellingOf } from './helpers.js';

/** invFreq64 at a few sequence lengths, attention scaling, dims: what must agree between spellings. */
function fingerprint(rope) {
  return {
    type: rope.type,
    headDim: rope.headDim,
    rotaryDim: rope.rotaryDim,
    nFreq: rope.nFreq,
    pairing: rope.pairing,
    attention: rope.attentionScaling(),
    inv: [undefined, 4096, 5000, 200000].map((s) => Array.from(rope.invFreq64(s))),
  };
}

function deepFreeze(o) {
  if (o && typeof o === 'object') {
    Object.values(o).forEach(deepFreeze);
    Object.freeze(o);
  }
  return o;
}

for (const build of BUILDS) {
  test(`ropeFromHFConfig [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    const fp = (config, options) => {
      const r = pe.ropeFromHFConfig(config, options);
      try {
        return fingerprint(r);
      } finally {
        r.free();
      }
    };

    await t.test('every golden config: newer rope_parameters == older rope_theta + rope_scaling spelling', () => {
      const seen = new Set();
      for (const c of loadGolden('rope_inv_freq.json').cases) {
        const key = JSON.stringify(c.config);
        if (seen.has(key)) continue;
        seen.add(key);
        const newer = deepFreeze(configJsonOf(c.config)); // frozen: the input must not be modified
        const older = deepFreeze(olderSpellingOf(configJsonOf(c.config)));
        assert.ok(older.rope_parameters === undefined && 'rope_theta' in older);
        assert.deepEqual(fp(older), fp(newer), c.id);
      }
      assert.ok(seen.size >= 20);
    });

    await t.test('head_dim, or hidden_size // num_attention_heads', () => {
      const base = { hidden_size: 512, num_attention_heads: 4, rope_theta: 10000, max_position_embeddings: 2048 };
      assert.deepEqual(fp(base), fp({ ...base, head_dim: 128 }));
      assert.equal(fp(base).headDim, 128);
      assert.equal(fp({ ...base, head_dim: null }).headDim, 128, 'head_dim: null falls back too');
      assert.equal(fp({ ...base, head_dim: 64 }).headDim, 64, 'an explicit head_dim wins (Gemma-style)');
      assert.equal(fp({ n_embd: 256, n_head: 4 }).headDim, 64, 'GPT-2 style names');
      assert.equal(fp({ hidden_size: 200, num_attention_heads: 3 }).headDim, 66, 'floor division, as transformers');
      assert.equal(fp({ hidden_size: 7168, num_attention_heads: 128, qk_rope_head_dim: 64 }).headDim, 64, "DeepSeek's qk_rope_head_dim");
    });

    await t.test('rotary_dim = int(head_dim * partial_rotary_factor), inside or at the top level', () => {
      const inside = { head_dim: 80, rope_parameters: { rope_type: 'default', rope_theta: 10000, partial_rotary_factor: 0.4 } };
      assert.equal(fp(inside).rotaryDim, 32);
      const top = { head_dim: 80, rope_theta: 10000, partial_rotary_factor: 0.4 };
      assert.deepEqual(fp(top), fp(inside));
      // Python's int() truncates: 96 * 0.3 = 28.799999999999997 -> 28
      assert.equal(fp({ head_dim: 96, partial_rotary_factor: 0.3 }).rotaryDim, 28);
      // GPT-NeoX's rotary_pct and rotary_emb_base
      assert.deepEqual(fp({ hidden_size: 512, num_attention_heads: 4, rotary_pct: 0.25, rotary_emb_base: 10000 }), fp({ head_dim: 128, partial_rotary_factor: 0.25, rope_theta: 10000 }));
    });

    await t.test("GPT-J's top-level rotary_dim; pairing is the caller's choice (default half)", () => {
      const gptj = { n_embd: 4096, n_head: 16, rotary_dim: 64, n_positions: 2048 };
      const half = fp(gptj);
      assert.equal(half.rotaryDim, 64);
      assert.equal(half.headDim, 256);
      assert.equal(half.pairing, 'half');
      const inter = fp(gptj, { pairing: 'interleaved' });
      assert.equal(inter.pairing, 'interleaved');
      assert.deepEqual(inter.inv, half.inv);
    });

    await t.test("Phi-3: top-level original_max_position_embeddings overrides the rope parameters' one", () => {
      const short = Array.from({ length: 16 }, (_, i) => 1 + i / 16);
      const long = Array.from({ length: 16 }, (_, i) => 1 + i);
      const cfg = {
        head_dim: 32,
        max_position_embeddings: 131072,
        original_max_position_embeddings: 4096,
        rope_theta: 10000,
        rope_scaling: { type: 'longrope', short_factor: short, long_factor: long, original_max_position_embeddings: 999 },
      };
      const r = pe.ropeFromHFConfig(cfg);
      try {
        assert.equal(r.config.scaling.originalMaxPositionEmbeddings, 4096);
        assert.equal(r.config.scaling.factor, 32, 'factor = max_position_embeddings / original');
        assert.equal(r.attentionScaling(), Math.sqrt(1 + Math.log(32) / Math.log(4096)));
        // the long factors switch on strictly past the original max
        assert.deepEqual(r.invFreq64(4096), r.invFreq64());
        assert.notDeepEqual(r.invFreq64(4097), r.invFreq64(4096));
      } finally {
        r.free();
      }
      // an explicit factor is kept
      const r2 = pe.ropeFromHFConfig({ ...cfg, rope_scaling: { ...cfg.rope_scaling, factor: 16 } });
      try {
        assert.equal(r2.config.scaling.factor, 16);
      } finally {
        r2.free();
      }
    });

    await t.test('yarn factor: null means max_position_embeddings / original_max_position_embeddings', () => {
      const cfg = { head_dim: 64, max_position_embeddings: 32768, rope_parameters: { rope_type: 'yarn', rope_theta: 10000, factor: null, original_max_position_embeddings: 8192 } };
      const r = pe.ropeFromHFConfig(cfg);
      try {
        assert.equal(r.config.scaling.factor, 4);
      } finally {
        r.free();
      }
      assert.deepEqual(fp(cfg), fp({ ...cfg, rope_parameters: { ...cfg.rope_parameters, factor: 4 } }));
    });

    await t.test('rope_scaling: null, no rope keys at all, and the old "type" key', () => {
      assert.deepEqual(fp({ head_dim: 64, rope_theta: 10000, rope_scaling: null }), fp({ head_dim: 64 }));
      assert.equal(fp({ head_dim: 64 }).type, 'default');
      assert.deepEqual(
        fp({ head_dim: 64, rope_theta: 10000, rope_scaling: { type: 'linear', factor: 2 } }),
        fp({ head_dim: 64, rope_theta: 10000, rope_scaling: { rope_type: 'linear', factor: 2 } }),
      );
    });

    await t.test('rope_parameters keyed by layer type (options.layerType)', () => {
      const cfg = {
        head_dim: 64,
        rope_parameters: {
          full_attention: { rope_type: 'linear', rope_theta: 1000000, factor: 8 },
          sliding_attention: { rope_type: 'default', rope_theta: 10000 },
        },
      };
      assert.deepEqual(fp(cfg, { layerType: 'full_attention' }), fp({ head_dim: 64, rope_parameters: cfg.rope_parameters.full_attention }));
      assert.deepEqual(fp(cfg, { layerType: 'sliding_attention' }), fp({ head_dim: 64 }));
    });

    await t.test('pe.rope accepts the same keys in camelCase and HF snake_case', () => {
      const viaRope = (scaling) => {
        const r = pe.rope({ headDim: 128, base: 500000, maxPositionEmbeddings: 131072, scaling });
        try {
          return fingerprint(r);
        } finally {
          r.free();
        }
      };
      const camel = viaRope({ type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
      const snake = viaRope({ rope_type: 'llama3', factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 });
      assert.deepEqual(snake, camel);
      const hf = fp({ head_dim: 128, max_position_embeddings: 131072, rope_parameters: { rope_type: 'llama3', rope_theta: 500000, factor: 8, low_freq_factor: 1, high_freq_factor: 4, original_max_position_embeddings: 8192 } });
      assert.deepEqual(hf, camel);
      const yarnCamel = viaRope({ type: 'yarn', factor: 32, originalMaxPositionEmbeddings: 4096, betaFast: 16, betaSlow: 2, mscale: 1, mscaleAllDim: 0.8, truncate: false });
      const yarnSnake = viaRope({ type: 'yarn', factor: 32, original_max_position_embeddings: 4096, beta_fast: 16, beta_slow: 2, mscale: 1, mscale_all_dim: 0.8, truncate: false });
      assert.deepEqual(yarnSnake, yarnCamel);
    });
  });
}
