// hf-cases.js — fuzz cases for pe.ropeFromHFConfig: config.json objects with odd sizes, rope_theta, partial rotary
// factors and rope_scaling, models without RoPE, hostile objects. See rope-cases.js for the shape of a case.
import fc from 'fast-check';
import { policy, maybe, mostly, Plan } from './common.js';
import { throwingGetter } from './values.js';
import { allFinite } from './refs.js';
import { baseArb, factorArb } from './rope-cases.js';

// ---- pe.ropeFromHFConfig ----------------------------------------------------------------------------------

export const hfCaseArb = fc.record({
  hidden: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(64, 128, 256).map((v) => ({ fate: 'ok', v })) }, { weight: 1, arbitrary: fc.constantFrom(0, -64, 2 ** 31, 2 ** 32 + 64, NaN, '128').map((v) => ({ fate: 'error', v })) }, { weight: 1, arbitrary: fc.constant(100.5).map((v) => ({ fate: policy.hfStrict, v })) }),
  heads: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(1, 2, 4, 8).map((v) => ({ fate: 'ok', v })) }, { weight: 1, arbitrary: fc.constantFrom(0, 2 ** 32, null).map((v) => ({ fate: 'error', v })) }, { weight: 1, arbitrary: fc.constant(0.5).map((v) => ({ fate: policy.hfStrict, v })) }, { weight: 1, arbitrary: fc.constant({ fate: 'ok', v: 3 }) }),
  theta: baseArb,
  partial: maybe(fc.oneof(fc.constantFrom(0.5, 0.25).map((v) => ({ fate: 'ok', v })), fc.constantFrom(0, -1, NaN, 2, 1e-300).map((v) => ({ fate: 'error', v }))), 0.3),
  scaling: maybe(fc.record({ type: fc.constantFrom('linear', 'dynamic', 'yarn'), factor: factorArb }), 0.4),
  modelType: mostly(['llama', 'qwen2'], ['bloom', 'gpt2'], 0.1),
  wrap: mostly(['plain'], ['notObject', 'throwTheta', 'textConfig'], 0.1),
});

export function hfSteps(spec, env) {
  const plan = new Plan('ropeFromHFConfig');
  let c = { model_type: spec.modelType, hidden_size: spec.hidden.v, num_attention_heads: spec.heads.v, max_position_embeddings: 4096 };
  plan.part('hidden_size', spec.hidden.fate).part('num_attention_heads', spec.heads.fate);
    if (spec.hidden.fate === 'ok' && spec.heads.fate === 'ok' && Math.floor(spec.hidden.v / spec.heads.v) % 2 !== 0) plan.part('head_dim', 'error').part('headDim', 'either').part('num_attention_heads', 'either');
  if (spec.theta.v !== null) c.rope_theta = spec.theta.v;
  plan.part('rope_theta', spec.theta.fate);
  if (spec.partial !== null) {
    c.partial_rotary_factor = spec.partial.v;
    plan.part('partial_rotary_factor', spec.partial.fate === 'ok' ? 'either' : spec.partial.fate); // may leave an odd rotary dim
  }
  if (spec.scaling !== null) {
    c.rope_scaling = { rope_type: spec.scaling.type, factor: spec.scaling.factor.v, original_max_position_embeddings: 2048 };
    plan.part('factor', spec.scaling.factor.fate);
    // rope_theta and the factor bound the frequencies together: an odd one may be named as the other
    if (spec.scaling.factor.fate !== 'ok' || spec.theta.fate !== 'ok') plan.part('factor', 'either').part('rope_theta', 'either');
  }
  // ALiBi and learned-table models have no RoPE: asking for one throws
  if (spec.modelType === 'bloom' || spec.modelType === 'gpt2') plan.part('model_type', policy.hfStrict).part(spec.modelType, 'either').part('n_positions', 'either'); // GPT-2's table size may be what is missing
  if (spec.wrap === 'notObject') {
    c = [c];
    plan.part('config', 'error');
  }
  if (spec.wrap === 'throwTheta') c = throwingGetter(c, 'rope_theta');
  if (spec.wrap === 'textConfig') {
    c = { model_type: 'llava', text_config: c }; // read through text_config, or refused naming it
    plan.part('text_config', 'either').part('hidden_size', 'either').part('head_dim', 'either');
  }
  let rope = null;
  return [
    {
      plan,
      run: () => (rope = env.pe.ropeFromHFConfig(c)),
      check: (r) => {
        const hd = Math.floor(spec.hidden.v / spec.heads.v); // HF: hidden_size // num_attention_heads
        if (r.headDim !== hd) return `headDim ${r.headDim}, expected hidden_size / num_attention_heads = ${hd}`;
        const { cos, sin } = r.cosSin([0, 1, 4095, 2147483647]);
        const bad = allFinite('cos', cos) ?? allFinite('sin', sin);
        if (bad) return bad;
        const s = r.attentionScaling();
        for (let i = 0; i < cos.length; i++) if (Math.abs(cos[i]) > s * (1 + 1e-6) || Math.abs(sin[i]) > s * (1 + 1e-6)) return `cos/sin[${i}] beyond the attention factor ${s}: ${cos[i]}, ${sin[i]}`;
        return null;
      },
    },
    () => {
      rope?.free();
      return null;
    },
  ];
}
