// <pe-scaling>: RoPE length extension. Frequency and wavelength per dimension pair for position interpolation
// (PI, linear), NTK-aware, dynamic NTK, YaRN (with its ramp and attention factor), LongRoPE and Llama 3 against
// plain RoPE, and a box where a reader pastes a model's config.json and sees every layer's position scheme (pe.fromHFConfig:
// RoPE per layer type, ALiBi, learned tables, NoPE) and the chosen RoPE's frequencies. Every frequency and
// attention factor comes from the posenc API (pe.rope(...).invFreq64 / attentionScaling, pe.fromHFConfig).
//
// Attributes (all optional):
//   head-dim    head dimension d (even, 4..512; default 128)
//   base        RoPE base b (default 10000)
//   factor      extension factor s (1..128; default 8)
//   original    original (training) context L in tokens (default 4096)
//   seq-len     the sequence length dynamic NTK and LongRoPE are evaluated at (default 0: s·L)
//   view        wavelength | frequency | ratio: the y axis of the per-dimension chart (default wavelength)
//   methods     comma list of default, linear, ntk, dynamic, yarn, longrope, llama3 (default all)
//   sections    comma list of methods, yarn, config (default all three)
//   preset      the config.json shown first in the box: llama3.1-8b | qwen2.5-7b-yarn | deepseek-v3 |
//               mistral-7b | gpt-neox-20b | gpt-j-6b | empty (default llama3.1-8b)
//   config      a config.json (JSON text) to show instead of a preset
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key
//
// LongRoPE's per-dimension factors are searched per model in the paper; here they are illustrative: λᵢ rising
// smoothly (in log scale) from 1 at the fastest pair to s at the slowest, with short factors all 1.

import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select, checkbox, textarea } from './lib/controls.js';
import { chart, PALETTE } from './lib/chart.js';
import { texRow } from './lib/math.js';
import { strip, schemeTable, drawRope, schemesOf, hasLayerCount, fmtNum } from './lib/config-schedule.js';

registerStrings({
  en: {
    'sc.title': 'Stretching RoPE to longer contexts',
    'sc.intro': 'A model trained on L tokens has only seen angles up to L·θᵢ. Each method changes the frequencies θᵢ (and some the attention scale) so that longer inputs stay within what the model knows.',
    'sc.methods.title': 'Frequencies per dimension pair',
    'sc.headDim': 'head dim d',
    'sc.base': 'base b',
    'sc.factor': 'factor s',
    'sc.original': 'original context L',
    'sc.seqLen': 'sequence length (dynamic, LongRoPE)',
    'sc.view': 'show',
    'sc.tex.dynamic': 'dynamic',
    'sc.view.wavelength': 'wavelength 2π/θᵢ (tokens)',
    'sc.view.frequency': 'frequency θᵢ (rad per token)',
    'sc.view.ratio': 'θᵢ′ / θᵢ (1 = unchanged, 1/s = fully interpolated)',
    'sc.m.default': 'plain RoPE',
    'sc.m.linear': 'PI (linear)',
    'sc.m.ntk': 'NTK-aware',
    'sc.m.dynamic': 'dynamic NTK',
    'sc.m.yarn': 'YaRN',
    'sc.m.longrope': 'LongRoPE (illustrative λᵢ)',
    'sc.m.llama3': 'Llama 3',
    'sc.pair': 'dimension pair i (fast → slow)',
    'sc.ctxL': 'original context L',
    'sc.ctxS': 'target context s·L',
    'sc.table.method': 'method',
    'sc.table.fast': 'θ₀′ / θ₀ (fastest)',
    'sc.table.slow': 'θ′ / θ (slowest)',
    'sc.table.attn': 'attention factor',
    'sc.methods.note': 'PI divides every frequency by s. NTK-aware raises the base so the fastest pair is untouched and the slowest is divided by s; dynamic NTK does that only as far as the current length needs. YaRN and Llama 3 keep the fast pairs, interpolate the slow ones and blend in between; LongRoPE rescales each pair by its own factor.',
    'sc.yarn.title': 'YaRN: the ramp and the attention factor',
    'sc.yarn.note': 'γᵢ = 1 keeps pair i as trained (it turns many times within L), γᵢ = 0 interpolates it by s (it turns less than once within L). YaRN also multiplies cos and sin, hence every attention logit, by its attention factor.',
    'sc.yarn.gamma': 'γᵢ of YaRN',
    'sc.yarn.gammaL3': 'γᵢ of Llama 3',
    'sc.yarn.y': 'share kept unscaled γᵢ',
    'sc.yarn.range': 'YaRN at s = {s}: pairs below {lo} kept, above {hi} interpolated; attention factor {a}.',
    'sc.attn.y': 'attention factor',
    'sc.attn.x': 'factor s',
    'sc.attn.yarn': 'YaRN 0.1·ln s + 1',
    'sc.attn.longrope': 'LongRoPE √(1 + ln s / ln L)',
    'sc.config.title': 'Paste a config.json',
    'sc.config.note': 'The box reads a whole Hugging Face config.json as published (text_config, rope_theta, rope_scaling or rope_parameters, layer_types, sliding windows, NoPE layers, ALiBi, learned tables) and shows the position scheme of every layer. Pairing is not in config.json: it follows the model type (GPT-J, Cohere, GLM, DeepSeek, Llama 4 are interleaved); choose one to override it.',
    'sc.config.pairingAuto': 'from the model type',
    'sc.s.title': 'Per-layer schedule',
    'sc.s.summary': '({n} layers)',
    'sc.s.layer': 'layer {a}',
    'sc.s.layers': 'layers {a}–{b}',
    'sc.s.scheme': 'scheme',
    'sc.s.kind': 'kind',
    'sc.s.layerType': 'layer type',
    'sc.s.count': 'layers',
    'sc.s.params': 'parameters',
    'sc.k.rope': 'RoPE',
    'sc.k.alibi': 'ALiBi',
    'sc.k.learned': 'learned table',
    'sc.k.sinusoidal': 'sinusoidal table',
    'sc.k.none': 'no positions (NoPE)',
    'sc.p.rope': 'base {base} · {type} · {pairing} · rotary {rot} of {hd}',
    'sc.p.factor': ' · factor {f}',
    'sc.p.alibi': '{n} heads, slopes {hi} … {lo}',
    'sc.p.alibiMax': ' · alibi_bias_max {m}',
    'sc.p.learned': 'maxLen {n} · offset {o}',
    'sc.p.sinusoidal': 'dModel {d} · base {base} · {pairing}',
    'sc.p.queryScale': 'query scaled by position',
    'sc.p.noneParams': '–',
    'sc.s.ignored': 'Position keys not read:',
    'sc.s.ignoredNone': 'Every position key in this config was read.',
    'sc.s.rope': 'RoPE shown below',
    'sc.s.ropeOption': '{id}: base {base} ({types})',
    'sc.s.noRope': 'No layer of this model uses RoPE, so there is no frequency chart.',
    'sc.s.noLayers': 'This config has no layer count (num_hidden_layers): only its RoPE is shown.',
    'sc.config.box': 'config.json',
    'sc.config.preset': 'example',
    'sc.config.pairing': 'pairing',
    'sc.half': 'half-split (NeoX, Llama)',
    'sc.interleaved': 'interleaved (GPT-J)',
    'sc.p.llama3.1-8b': 'Llama 3.1 8B',
    'sc.p.qwen2.5-7b-yarn': 'Qwen2.5 7B with YaRN ×4',
    'sc.p.deepseek-v3': 'DeepSeek-V3 (YaRN ×40, mscale)',
    'sc.p.mistral-7b': 'Mistral 7B v0.1',
    'sc.p.gpt-neox-20b': 'GPT-NeoX 20B (25% rotary)',
    'sc.p.gpt-j-6b': 'GPT-J 6B (64 of 256 rotary)',
    'sc.p.empty': '(empty)',
    'sc.p.custom': '(edited)',
    'sc.config.ok': 'RoPE of this config',
    'sc.config.okSpec': 'posenc read this config',
    'sc.config.invalidJson': 'Invalid JSON: {msg}',
    'sc.config.empty': 'Paste a config.json above.',
    'sc.config.rejected': 'posenc rejected this config — {name}: {msg}',
    'sc.f.type': 'RoPE type',
    'sc.f.headDim': 'head dim',
    'sc.f.rotary': 'rotated dims',
    'sc.f.base': 'base (rope_theta)',
    'sc.f.pairing': 'pairing',
    'sc.f.pairs': 'frequency pairs',
    'sc.f.context': 'context (original → max)',
    'sc.f.attn': 'attention factor at max length',
    'sc.f.fastest': 'fastest wavelength (tokens)',
    'sc.f.slowest': 'slowest wavelength (tokens)',
    'sc.f.resolved': 'resolved options (defaults filled in as Hugging Face does)',
    'sc.config.this': 'this config at {n} tokens',
    'sc.config.short': 'this config at {n} tokens (short factors)',
    'sc.config.plain': 'plain RoPE, same base and head dim',
  },
  zh: {
    'sc.title': '把 RoPE 拉伸到更长的上下文',
    'sc.intro': '在 L 个词元上训练的模型只见过不超过 L·θᵢ 的角度。各种方法改变频率 θᵢ（有的还改变注意力缩放），让更长的输入仍落在模型熟悉的范围内。',
    'sc.methods.title': '每个维度对的频率',
    'sc.headDim': '头维度 d',
    'sc.base': '底数 b',
    'sc.factor': '倍数 s',
    'sc.original': '原始上下文 L',
    'sc.seqLen': '序列长度（动态 NTK、LongRoPE）',
    'sc.view': '显示',
    'sc.tex.dynamic': '动态',
    'sc.view.wavelength': '波长 2π/θᵢ（词元数）',
    'sc.view.frequency': '频率 θᵢ（每个词元的弧度）',
    'sc.view.ratio': 'θᵢ′ / θᵢ（1 = 不变，1/s = 完全插值）',
    'sc.m.default': '原始 RoPE',
    'sc.m.linear': '位置插值 PI（线性）',
    'sc.m.ntk': 'NTK 感知',
    'sc.m.dynamic': '动态 NTK',
    'sc.m.yarn': 'YaRN',
    'sc.m.longrope': 'LongRoPE（示意用的 λᵢ）',
    'sc.m.llama3': 'Llama 3',
    'sc.pair': '维度对 i（快 → 慢）',
    'sc.ctxL': '原始上下文 L',
    'sc.ctxS': '目标上下文 s·L',
    'sc.table.method': '方法',
    'sc.table.fast': 'θ₀′ / θ₀（最快）',
    'sc.table.slow': 'θ′ / θ（最慢）',
    'sc.table.attn': '注意力因子',
    'sc.methods.note': 'PI 把每个频率都除以 s。NTK 感知增大底数，使最快的一对不变、最慢的一对除以 s；动态 NTK 只按当前长度所需去做。YaRN 和 Llama 3 保留快的维度对、对慢的插值、中间平滑过渡；LongRoPE 给每一对单独的缩放因子。',
    'sc.yarn.title': 'YaRN：斜坡与注意力因子',
    'sc.yarn.note': 'γᵢ = 1 表示第 i 对保持训练时的样子（它在 L 内转了很多圈），γᵢ = 0 表示按 s 插值（它在 L 内转不到一圈）。YaRN 还把 cos 和 sin——也就是每个注意力 logit——乘以它的注意力因子。',
    'sc.yarn.gamma': 'YaRN 的 γᵢ',
    'sc.yarn.gammaL3': 'Llama 3 的 γᵢ',
    'sc.yarn.y': '保持不缩放的比例 γᵢ',
    'sc.yarn.range': 'YaRN 在 s = {s} 时：低于 {lo} 的维度对保持不变，高于 {hi} 的被插值；注意力因子 {a}。',
    'sc.attn.y': '注意力因子',
    'sc.attn.x': '倍数 s',
    'sc.attn.yarn': 'YaRN 0.1·ln s + 1',
    'sc.attn.longrope': 'LongRoPE √(1 + ln s / ln L)',
    'sc.config.title': '粘贴一个 config.json',
    'sc.config.note': '此框按发布时的原样读取整个 Hugging Face config.json（text_config、rope_theta、rope_scaling 或 rope_parameters、layer_types、滑动窗口、NoPE 层、ALiBi、可学习位置表），并显示每一层的位置编码方案。配对方式不在 config.json 里：它由模型类型决定（GPT-J、Cohere、GLM、DeepSeek、Llama 4 为相邻交错配对）；也可在此手动指定。',
    'sc.config.pairingAuto': '按模型类型',
    'sc.s.title': '逐层方案',
    'sc.s.summary': '（{n} 层）',
    'sc.s.layer': '第 {a} 层',
    'sc.s.layers': '第 {a}–{b} 层',
    'sc.s.scheme': '方案',
    'sc.s.kind': '类型',
    'sc.s.layerType': '层类型',
    'sc.s.count': '层数',
    'sc.s.params': '参数',
    'sc.k.rope': 'RoPE',
    'sc.k.alibi': 'ALiBi',
    'sc.k.learned': '可学习位置表',
    'sc.k.sinusoidal': '正弦位置表',
    'sc.k.none': '无位置编码（NoPE）',
    'sc.p.rope': '底数 {base} · {type} · {pairing} · 旋转 {hd} 维中的 {rot} 维',
    'sc.p.factor': ' · 倍数 {f}',
    'sc.p.alibi': '{n} 个头，斜率 {hi} … {lo}',
    'sc.p.alibiMax': ' · alibi_bias_max {m}',
    'sc.p.learned': '最大长度 {n} · 偏移 {o}',
    'sc.p.sinusoidal': '维度 {d} · 底数 {base} · {pairing}',
    'sc.p.queryScale': '查询向量按位置缩放',
    'sc.p.noneParams': '–',
    'sc.s.ignored': '未读取的位置相关键：',
    'sc.s.ignoredNone': '此配置中所有与位置相关的键都已读取。',
    'sc.s.rope': '下方显示的 RoPE',
    'sc.s.ropeOption': '{id}：底数 {base}（{types}）',
    'sc.s.noRope': '此模型没有任何层使用 RoPE，因此没有频率图。',
    'sc.s.noLayers': '此配置没有层数（num_hidden_layers）：只显示它的 RoPE。',
    'sc.config.box': 'config.json',
    'sc.config.preset': '示例',
    'sc.config.pairing': '配对方式',
    'sc.half': '前后两半配对（NeoX、Llama）',
    'sc.interleaved': '相邻交错配对（GPT-J）',
    'sc.p.llama3.1-8b': 'Llama 3.1 8B',
    'sc.p.qwen2.5-7b-yarn': 'Qwen2.5 7B 加 YaRN ×4',
    'sc.p.deepseek-v3': 'DeepSeek-V3（YaRN ×40，mscale）',
    'sc.p.mistral-7b': 'Mistral 7B v0.1',
    'sc.p.gpt-neox-20b': 'GPT-NeoX 20B（25% 维度旋转）',
    'sc.p.gpt-j-6b': 'GPT-J 6B（256 维中旋转 64 维）',
    'sc.p.empty': '（空）',
    'sc.p.custom': '（已编辑）',
    'sc.config.ok': '此配置的 RoPE',
    'sc.config.okSpec': 'posenc 已读取此配置',
    'sc.config.invalidJson': 'JSON 无效：{msg}',
    'sc.config.empty': '请在上面粘贴一个 config.json。',
    'sc.config.rejected': 'posenc 拒绝了这个配置——{name}：{msg}',
    'sc.f.type': 'RoPE 类型',
    'sc.f.headDim': '头维度',
    'sc.f.rotary': '旋转的维度数',
    'sc.f.base': '底数（rope_theta）',
    'sc.f.pairing': '配对方式',
    'sc.f.pairs': '频率对数',
    'sc.f.context': '上下文（原始 → 最大）',
    'sc.f.attn': '最大长度处的注意力因子',
    'sc.f.fastest': '最短波长（词元数）',
    'sc.f.slowest': '最长波长（词元数）',
    'sc.f.resolved': '解析后的选项（按 Hugging Face 的方式填入默认值）',
    'sc.config.this': '此配置在 {n} 个词元时',
    'sc.config.short': '此配置在 {n} 个词元时（短因子）',
    'sc.config.plain': '原始 RoPE（相同底数与头维度）',
  },
});

export const METHODS = ['default', 'linear', 'ntk', 'dynamic', 'yarn', 'longrope', 'llama3'];
const SECTIONS = ['methods', 'yarn', 'config'];
const VIEWS = ['wavelength', 'frequency', 'ratio'];
const PAIRING_CHOICES = [['auto', 'sc.config.pairingAuto'], ['half', 'sc.half'], ['interleaved', 'sc.interleaved']];
/** Example configs (the rope-relevant fields of each model's published config.json). */
export const PRESETS = {
  'llama3.1-8b': { json: { architectures: ['LlamaForCausalLM'], model_type: 'llama', num_hidden_layers: 32, hidden_size: 4096, num_attention_heads: 32, num_key_value_heads: 8, max_position_embeddings: 131072, rope_theta: 500000.0, rope_scaling: { factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192, rope_type: 'llama3' } } },
  'qwen2.5-7b-yarn': { json: { architectures: ['Qwen2ForCausalLM'], model_type: 'qwen2', num_hidden_layers: 28, hidden_size: 3584, num_attention_heads: 28, num_key_value_heads: 4, max_position_embeddings: 32768, rope_theta: 1000000.0, rope_scaling: { factor: 4.0, original_max_position_embeddings: 32768, type: 'yarn' } } },
  'deepseek-v3': { json: { architectures: ['DeepseekV3ForCausalLM'], model_type: 'deepseek_v3', num_hidden_layers: 61, hidden_size: 7168, num_attention_heads: 128, qk_rope_head_dim: 64, max_position_embeddings: 163840, rope_theta: 10000, rope_scaling: { beta_fast: 32, beta_slow: 1, factor: 40, mscale: 1.0, mscale_all_dim: 1.0, original_max_position_embeddings: 4096, type: 'yarn' } } },
  'mistral-7b': { json: { architectures: ['MistralForCausalLM'], model_type: 'mistral', num_hidden_layers: 32, hidden_size: 4096, num_attention_heads: 32, num_key_value_heads: 8, max_position_embeddings: 32768, rope_theta: 10000.0 } },
  'gpt-neox-20b': { json: { architectures: ['GPTNeoXForCausalLM'], model_type: 'gpt_neox', num_hidden_layers: 44, hidden_size: 6144, num_attention_heads: 64, rotary_pct: 0.25, rotary_emb_base: 10000, max_position_embeddings: 2048 } },
  'gpt-j-6b': { json: { architectures: ['GPTJForCausalLM'], model_type: 'gptj', n_layer: 28, n_embd: 4096, n_head: 16, rotary_dim: 64, n_positions: 2048 } },
  empty: { json: null },
};

/** Illustrative LongRoPE long factors: λᵢ = s^smoothstep(i / (n − 1)). */
function longFactors(n, s) {
  return Array.from({ length: n }, (_, i) => {
    const x = n > 1 ? i / (n - 1) : 1;
    return s ** (x * x * (3 - 2 * x));
  });
}

/** pe.rope() options of a method (see the file comment). */
export function methodOptions(method, { headDim: d, base, factor: s, original: L }) {
  const o = { headDim: d, base };
  switch (method) {
    case 'linear': o.scaling = { type: 'linear', factor: s }; break;
    case 'ntk': o.base = base * s ** (d / (d - 2)); break;
    case 'dynamic': o.maxPositionEmbeddings = L; o.scaling = { type: 'dynamic', factor: s }; break;
    case 'yarn': o.maxPositionEmbeddings = Math.round(s * L); o.scaling = { type: 'yarn', factor: s, originalMaxPositionEmbeddings: L }; break;
    case 'longrope': o.maxPositionEmbeddings = Math.round(s * L); o.scaling = { type: 'longrope', factor: s, originalMaxPositionEmbeddings: L, shortFactor: new Array(d / 2).fill(1), longFactor: longFactors(d / 2, s) }; break;
    case 'llama3': o.scaling = { type: 'llama3', factor: s, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: L }; break;
    default: break;
  }
  return o;
}

class PeScaling extends PeElement {
  static attrs = {
    'head-dim': { type: 'int', default: 128, min: 4, max: 512 },
    base: { type: 'number', default: 10000, min: 1.001 },
    factor: { type: 'number', default: 8, min: 1, max: 128 },
    original: { type: 'int', default: 4096, min: 16, max: 1048576 },
    'seq-len': { type: 'int', default: 0, min: 0, max: 1 << 27 },
    view: { type: 'enum', values: VIEWS, default: 'wavelength' },
    methods: { type: 'list', default: METHODS },
    sections: { type: 'list', default: SECTIONS },
    preset: { type: 'enum', values: Object.keys(PRESETS), default: 'llama3.1-8b' },
    config: { type: 'string', default: '' },
  };

  // the sequence-length slider's range and its "s·L" default follow the factor and the trained length
  static rebuildOn = ['factor', 'original'];

  get d() {
    const d = this.state.headDim;
    return Math.max(4, d - (d % 2));
  }

  render() {
    const s = this.state;
    const show = new Set(s.sections.filter((x) => SECTIONS.includes(x)));
    if (!show.size) for (const x of SECTIONS) show.add(x);
    this.show = show;
    this.body.append(h('h3', {}, this.t('sc.title')), h('p', {}, this.t('sc.intro')));
    if (show.has('methods') || show.has('yarn')) {
      this.body.append(controls(
        select(this, { key: 'headDim', label: 'sc.headDim', raw: true, options: uniq([64, 96, 128, 256, s.headDim]).map((v) => [v, String(v)]) }),
        select(this, { key: 'base', label: 'sc.base', raw: true, options: uniq([10000, 500000, 1000000, s.base]).map((v) => [v, String(v)]) }),
        select(this, { key: 'factor', label: 'sc.factor', raw: true, options: uniq([2, 4, 8, 16, 32, 64, s.factor]).map((v) => [v, String(v)]) }),
        select(this, { key: 'original', label: 'sc.original', raw: true, options: uniq([2048, 4096, 8192, 32768, s.original]).map((v) => [v, String(v)]) }),
      ));
    }
    if (show.has('methods')) {
      const f = texRow(['\\theta_i = b^{-2i/d}', '\\text{PI: } \\theta_i\' = \\theta_i/s', '\\text{NTK: } b\' = b\\,s^{d/(d-2)}',
        `\\text{${this.t('sc.tex.dynamic')}: } b' = b\\Big(\\tfrac{s\\,\\ell}{L} - (s-1)\\Big)^{d/(d-2)}\\ (\\ell > L)`]);
      const seqMax = Math.max(2 * s.factor * s.original, 4 * s.original);
      this.body.append(h('section', { class: 'pe-sc-methods' },
        h('h4', {}, this.t('sc.methods.title')), f,
        controls(
          select(this, { key: 'view', label: 'sc.view', options: VIEWS.map((v) => [v, `sc.view.${v}`]) }),
          range(this, { key: 'seqLen', label: 'sc.seqLen', min: Math.max(1, Math.round(s.original / 2)), max: seqMax, log: true, logStep: 0.125,
            value: s.seqLen || Math.round(s.factor * s.original) }),
        ),
        h('div', { class: 'pe-controls', role: 'group' }, METHODS.map((m) => checkbox(this, {
          key: `method-${m}`, label: `sc.m.${m}`, value: s.methods.includes(m),
          onChange: (on) => this.setState({ methods: METHODS.filter((x) => (x === m ? on : s.methods.includes(x))) }),
        }))),
        this.methodsChart = h('div'),
        this.methodsTable = h('div', { class: 'pe-scroll' }),
        h('p', { class: 'pe-note' }, this.t('sc.methods.note'))));
    }
    if (show.has('yarn')) {
      const f = texRow(['\\theta_i\' = (1-\\gamma_i)\\,\\frac{\\theta_i}{s} + \\gamma_i\\,\\theta_i',
        '\\gamma_i = 1-\\operatorname{clamp}\\Big(\\frac{i-i_{\\text{low}}}{i_{\\text{high}}-i_{\\text{low}}},0,1\\Big)',
        'i(\\beta)=\\frac{d\\,\\ln\\!\\big(L/(2\\pi\\beta)\\big)}{2\\ln b},\\ \\beta \\in \\{32, 1\\}', '\\sqrt{1/t} = 0.1\\ln s + 1']);
      this.body.append(h('section', { class: 'pe-sc-yarn' },
        h('h4', {}, this.t('sc.yarn.title')), f,
        h('div', { class: 'pe-row' }, this.rampChart = h('div'), this.attnChart = h('div')),
        this.yarnText = h('p', { 'aria-live': 'polite' }),
        h('p', { class: 'pe-note' }, this.t('sc.yarn.note'))));
    }
    if (show.has('config')) {
      if (this.configText === undefined) {
        if (s.config) this.configText = s.config;
        else this.configText = presetText(s.preset);
        this.configPreset = s.config ? 'custom' : s.preset;
        this.configPairing = 'auto';
      }
      const presetOptions = [...Object.keys(PRESETS).map((k) => [k, `sc.p.${k}`]), ...(this.configPreset === 'custom' ? [['custom', 'sc.p.custom']] : [])];
      this.body.append(h('section', { class: 'pe-sc-config' },
        h('h4', {}, this.t('sc.config.title')),
        h('p', { class: 'pe-note' }, this.t('sc.config.note')),
        controls(
          select(this, { key: 'configPreset', label: 'sc.config.preset', value: this.configPreset, options: presetOptions, onChange: (v) => this.choosePreset(v) }),
          select(this, { key: 'configPairing', label: 'sc.config.pairing', value: this.configPairing, options: PAIRING_CHOICES,
            onChange: (v) => { this.configPairing = v; this.keys.config = null; this.update(); } }),
        ),
        controls(textarea(this, { key: 'configText', label: 'sc.config.box', rows: 10, value: this.configText, delay: 250,
          onChange: (v) => { this.configText = v; this.configRope = 0; this.keys.config = null; this.markCustom(); this.update(); } })),
        this.configOut = h('div', { class: 'pe-sc-config-out', 'aria-live': 'polite' })));
    }
    this.keys = {};
  }

  choosePreset(name) {
    if (name === 'custom') return;
    this.configPreset = name;
    this.configText = presetText(name);
    this.configPairing = 'auto';
    this.configRope = 0;
    const area = this.body.querySelector('textarea[data-key="configText"]');
    if (area) area.value = this.configText;
    const pairSel = this.body.querySelector('select[data-key="configPairing"]');
    if (pairSel) pairSel.value = '0';
    this.keys.config = null;
    this.update();
  }

  markCustom() {
    if (this.configPreset === 'custom') return;
    this.configPreset = 'custom';
    const sel = this.body.querySelector('select[data-key="configPreset"]');
    if (sel && !sel.querySelector('option[data-custom]')) {
      const opt = h('option', { value: String(sel.options.length), 'data-custom': '' }, this.t('sc.p.custom'));
      sel.append(opt);
      opt.selected = true;
    }
  }

  async draw() {
    const s = this.state;
    const changed = (name, key) => {
      if (this.keys[name] === key) return false;
      this.keys[name] = key;
      return true;
    };
    const common = [this.d, s.base, s.factor, s.original].join();
    if (this.show.has('methods') && changed('methods', `${common}|${s.view}|${s.methods}|${s.seqLen}`)) this.drawMethods();
    // after a language switch each section redraws in a task of its own
    if (this.show.has('yarn') && changed('yarn', common)) {
      if (this.relabeling) await this.yieldIfLong();
      this.drawYarn();
    }
    if (this.show.has('config') && changed('config', `${this.configPairing}|${this.configText}`)) {
      if (this.relabeling) await this.yieldIfLong();
      this.drawConfig();
    }
  }

  /** invFreq64 and attention factor of a method at a sequence length (through the API). */
  method(m, seqLen) {
    const s = this.state;
    const rope = this.pe.rope(methodOptions(m, { headDim: this.d, base: s.base, factor: s.factor, original: s.original }));
    try {
      return { inv: rope.invFreq64(seqLen), attn: rope.attentionScaling(seqLen) };
    } finally {
      rope.free();
    }
  }

  drawMethods() {
    const s = this.state;
    const L = s.original;
    const len = s.seqLen || Math.round(s.factor * L);
    const plain = this.method('default', len).inv;
    const n = plain.length;
    const xs = Array.from({ length: n }, (_, i) => i);
    const series = [];
    const rows = [];
    METHODS.forEach((m, k) => {
      if (!s.methods.includes(m)) return;
      const { inv, attn } = this.method(m, len);
      const values = Array.from(inv, (v, i) => (s.view === 'wavelength' ? (2 * Math.PI) / v : s.view === 'frequency' ? v : v / plain[i]));
      series.push({ label: this.t(`sc.m.${m}`), values, color: PALETTE[k], width: m === 'default' ? 3 : 1.6, dash: m === 'default' ? [6, 4] : undefined });
      rows.push([this.t(`sc.m.${m}`), fmt(inv[0] / plain[0], 4), fmt(inv[n - 1] / plain[n - 1], 4), fmt(attn, 4)]);
    });
    if (s.view === 'wavelength') {
      series.push({ label: this.t('sc.ctxL'), values: xs.map(() => L), color: '#7f8c8d', width: 1, dash: [2, 3] });
      series.push({ label: this.t('sc.ctxS'), values: xs.map(() => s.factor * L), color: '#34495e', width: 1, dash: [2, 3] });
    }
    chart(this.methodsChart, {
      x: xs, series, logY: true, xLabel: this.t('sc.pair'), yLabel: this.t(`sc.view.${s.view}`), height: 300,
      label: this.t('sc.methods.title'), ySize: 64,
      yFormat: (v) => (v == null ? '' : fmt(v, 2)),
    });
    this.methodsTable.replaceChildren(h('table', { class: 'pe-table' },
      h('tr', {}, ['sc.table.method', 'sc.table.fast', 'sc.table.slow', 'sc.table.attn'].map((k) => h('th', {}, this.t(k)))),
      rows.map((r) => h('tr', {}, h('td', { style: { textAlign: 'left' } }, r[0]), r.slice(1).map((c) => h('td', {}, c))))));
  }

  drawYarn() {
    const s = this.state;
    const L = s.original;
    const len = Math.round(s.factor * L);
    const plain = this.method('default', len).inv;
    const n = plain.length;
    const xs = Array.from({ length: n }, (_, i) => i);
    const gamma = (inv) => Array.from(inv, (v, i) => (s.factor === 1 ? 1 : (v / plain[i] - 1 / s.factor) / (1 - 1 / s.factor)));
    const yarn = this.method('yarn', len);
    const gY = gamma(yarn.inv), gL = gamma(this.method('llama3', len).inv);
    chart(this.rampChart, {
      x: xs, series: [{ label: this.t('sc.yarn.gamma'), values: gY, color: PALETTE[4], width: 2.5 }, { label: this.t('sc.yarn.gammaL3'), values: gL, color: PALETTE[6], width: 1.5, dash: [5, 3] }],
      xLabel: this.t('sc.pair'), yLabel: this.t('sc.yarn.y'), yRange: [-0.05, 1.05], height: 240, label: this.t('sc.yarn.title'),
    });
    // attention factor against s: one rope per factor, through attentionScaling
    const factors = [1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128];
    const attn = { yarn: [], longrope: [] };
    for (const f of factors) {
      for (const m of ['yarn', 'longrope']) {
        const rope = this.pe.rope(methodOptions(m, { headDim: this.d, base: s.base, factor: f, original: L }));
        try {
          attn[m].push(rope.attentionScaling(Math.round(f * L)));
        } finally {
          rope.free();
        }
      }
    }
    chart(this.attnChart, {
      x: factors, logX: true, xRange: [1, 140],
      series: [{ label: this.t('sc.attn.yarn'), values: attn.yarn, color: PALETTE[4], width: 2.5 }, { label: this.t('sc.attn.longrope'), values: attn.longrope, color: PALETTE[5], width: 1.5 }],
      xLabel: this.t('sc.attn.x'), yLabel: this.t('sc.attn.y'), height: 240, label: this.t('sc.attn.y'),
    });
    const lo = gY.findIndex((g) => g < 1 - 1e-6);
    let hi = -1;
    for (let i = n - 1; i >= 0; i--) if (gY[i] > 1e-6) { hi = i + 1; break; }
    this.yarnText.textContent = this.t('sc.yarn.range', { s: s.factor, lo: lo < 0 ? n : lo, hi: hi < 0 ? 0 : Math.min(hi, n), a: fmt(yarn.attn, 5) });
  }

  cleanup() {
    this.configSpec = null; // freed with everything this.own() holds
  }

  /** Frees the spec the box showed (its Ropes) before a new one replaces it. */
  dropSpec() {
    if (this.configSpec) this.release(this.configSpec);
    this.configSpec = null;
  }

  drawConfig() {
    const out = this.configOut;
    this.dropSpec();
    const text = (this.configText ?? '').trim();
    const say = (msg, cls = 'pe-error') => out.replaceChildren(h('p', { class: cls, role: cls === 'pe-error' ? 'alert' : null }, msg));
    out.dataset.result = 'error';
    if (!text) {
      out.dataset.result = 'empty';
      say(this.t('sc.config.empty'), 'pe-note');
      return;
    }
    let json;
    try {
      json = JSON.parse(text);
    } catch (e) {
      say(this.t('sc.config.invalidJson', { msg: e.message }));
      return;
    }
    const options = this.configPairing === 'auto' ? undefined : { pairing: this.configPairing };
    const refused = (e) => {
      if (!(e instanceof TypeError || e instanceof RangeError)) throw e;
      say(this.t('sc.config.rejected', { name: e.name, msg: e.message }));
    };
    if (!hasLayerCount(json)) {
      // a snippet with only the rope keys: its RoPE alone, as before (no schedule without a layer count)
      let rope;
      try {
        rope = this.pe.ropeFromHFConfig(json, options);
      } catch (e) {
        refused(e);
        return;
      }
      this.configSpec = this.own(rope);
      const ropeBox = h('div', { class: 'pe-sc-rope' });
      out.replaceChildren(h('p', { class: 'pe-good' }, h('strong', {}, this.t('sc.config.ok'))), h('p', { class: 'pe-note' }, this.t('sc.s.noLayers')), ropeBox);
      drawRope(this, ropeBox, rope);
      out.dataset.result = 'ok';
      return;
    }
    let spec;
    try {
      spec = this.pe.fromHFConfig(json, options);
    } catch (e) {
      refused(e);
      return;
    }
    this.configSpec = this.own(spec);
    const { schemes, perLayer } = schemesOf(spec.layers);
    const ropes = schemes.filter((x) => x.layer.kind === 'rope' && x.ropeIndex === x.ropeFirst);
    const pick = Math.min(Math.max(0, this.configRope ?? 0), Math.max(0, ropes.length - 1));
    const ropeBox = h('div', { class: 'pe-sc-rope' });
    const parts = [
      h('p', { class: 'pe-good pe-sc-summary', 'data-layers': String(spec.numLayers) }, h('strong', {}, this.t('sc.config.okSpec')), ' ',
        h('code', {}, spec.textModelType && spec.textModelType !== spec.modelType ? `${spec.modelType} → ${spec.textModelType}` : (spec.modelType ?? '?')), ' ',
        this.t('sc.s.summary', { n: spec.numLayers })),
      h('h5', {}, this.t('sc.s.title')),
      strip(this, perLayer),
      h('div', { class: 'pe-scroll' }, schemeTable(this, schemes)),
      h('p', { class: 'pe-note pe-sc-ignored', 'data-ignored': spec.ignored.join(',') },
        spec.ignored.length ? [this.t('sc.s.ignored'), ' ', spec.ignored.map((k, i) => [i ? ', ' : '', h('code', {}, k)])] : this.t('sc.s.ignoredNone')),
    ];
    if (ropes.length > 1) {
      const sel = h('select', { 'data-key': 'configRope' });
      ropes.forEach((x, i) => {
        const r = x.layer.rope;
        const opt = h('option', { value: String(i) }, this.t('sc.s.ropeOption', { id: x.id, base: fmtNum(r.base), types: [...x.layerTypes].join(', ') || '–' }));
        if (i === pick) opt.selected = true;
        sel.append(opt);
      });
      sel.addEventListener('change', () => {
        this.configRope = Number(sel.value);
        drawRope(this, ropeBox, ropes[this.configRope].layer.rope);
      });
      parts.push(h('div', { class: 'pe-controls' }, h('label', { class: 'pe-control' }, h('span', {}, this.t('sc.s.rope')), sel)));
    }
    parts.push(ropeBox);
    out.replaceChildren(...parts);
    if (ropes.length) drawRope(this, ropeBox, ropes[pick].layer.rope);
    else ropeBox.replaceChildren(h('p', { class: 'pe-note' }, this.t('sc.s.noRope')));
    out.dataset.result = 'ok';
  }
}

function presetText(name) {
  const j = PRESETS[name]?.json;
  return j ? JSON.stringify(j, null, 2) : '';
}

function uniq(a) {
  return [...new Set(a)].sort((x, y) => x - y);
}

define('pe-scaling', PeScaling);
