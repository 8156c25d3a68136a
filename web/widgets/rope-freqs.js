// <pe-rope-freqs>: which RoPE frequencies the tiny RoPE model uses (Barbero et al. 2024, "Round and Round We
// Go! What makes Rotary Positional Encodings useful?"). The model runs on a sample input through the model
// API (TinyModel.forward with qk: each layer's queries and keys before the rotation, which keeps each pair's
// norm), and for every frequency pair i — dimensions i and i + d/2, the model's half-split pairing — the norm
// ‖q_[i]‖ = sqrt(q_i² + q_(i+d/2)²) is averaged over the positions; the same for k. The product of the two
// bounds what pair i can add to a score q̃·k̃, so its share says where a head's scores can come from.
//
// Attributes (all optional):
//   model    copy-rope | lm-rope (default copy-rope)
//   layer    layer shown in the chart and the table (default 0)
//   head     head shown, -1 for the mean over heads (default -1)
//   seed     which sample input (default 1)
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, select, button } from './lib/controls.js';
import { chart } from './lib/chart.js';
import { heatmap } from './lib/heatmap.js';
import { texRow } from './lib/math.js';
import { copyExample, lmStream } from './lib/tasks.js';
import { ROLE } from './lib/palette.js';

registerStrings({
  en: {
    'rf.title': 'Which frequencies does the tiny RoPE model use?',
    'rf.intro': 'Barbero et al. (2024) looked inside trained RoPE models at how much of each query and key sits in each frequency pair. Here is the same measurement for this project’s tiny RoPE model, computed in your browser: the model reads a sample input and hands back its queries and keys, and each pair’s norm is averaged over the positions.',
    'rf.model': 'model',
    'rf.m.copy-rope': 'copy task (copy-rope)',
    'rf.m.lm-rope': 'language model (lm-rope)',
    'rf.layer': 'layer',
    'rf.head': 'head',
    'rf.allHeads': 'mean of all heads',
    'rf.sample': 'Another sample',
    'rf.input': 'Sample input ({n} tokens): {text}',
    'rf.x': 'frequency pair i (0 turns fastest)',
    'rf.y': 'mean norm of the pair',
    'rf.q': 'query ‖q₍ᵢ₎‖',
    'rf.k': 'key ‖k₍ᵢ₎‖',
    'rf.col.pair': 'pair i',
    'rf.col.theta': 'θᵢ (rad per token)',
    'rf.col.wave': 'wavelength 2π/θᵢ (tokens)',
    'rf.col.turns': 'turns over the input',
    'rf.col.q': 'mean ‖q₍ᵢ₎‖',
    'rf.col.k': 'mean ‖k₍ᵢ₎‖',
    'rf.col.share': 'share of Σ ‖q₍ᵢ₎‖‖k₍ᵢ₎‖',
    'rf.map': 'Share of each pair in Σᵢ ‖q₍ᵢ₎‖‖k₍ᵢ₎‖, every layer and head (rows: layer · head)',
    'rf.mapX': 'frequency pair i',
    'rf.mapY': 'layer · head',
    'rf.readout': 'layer {l}, head {h}, pair {i}: share {v}',
    'rf.summary': 'Layer {l} ({who}): the largest share, {s}, is in pair {i} (wavelength {w} tokens). Over these {n} tokens the fastest pair turns {fast} times and the slowest {slow} of a turn, so what the slowest pairs carry hardly depends on position.',
    'rf.whoAll': 'all heads',
    'rf.whoHead': 'head {h}',
    'rf.note': 'Barbero et al. found that Gemma 7B keeps most of its query and key norm in the lowest frequencies, using them as channels that carry meaning rather than position, and builds sharp positional heads from the highest ones. This model has only 8 pairs per head and learned one small task: read the pattern as what this model learned, not as a rule.',
    'rf.loading': 'loading the {name} model…',
  },
  zh: {
    'rf.title': '小 RoPE 模型用了哪些频率？',
    'rf.intro': 'Barbero 等人（2024）在训练好的 RoPE 模型里测量了查询和键在每个频率对上各占多少。这里对本项目的小 RoPE 模型做同样的测量，全部在你的浏览器里计算：模型读入一段示例输入，交出它的查询和键，再把每一对维度的范数在所有位置上取平均。',
    'rf.model': '模型',
    'rf.m.copy-rope': '复制任务（copy-rope）',
    'rf.m.lm-rope': '语言模型（lm-rope）',
    'rf.layer': '层',
    'rf.head': '头',
    'rf.allHeads': '所有头的平均',
    'rf.sample': '换一段示例',
    'rf.input': '示例输入（{n} 个词元）：{text}',
    'rf.x': '频率对 i（0 转得最快）',
    'rf.y': '这一对的平均范数',
    'rf.q': '查询 ‖q₍ᵢ₎‖',
    'rf.k': '键 ‖k₍ᵢ₎‖',
    'rf.col.pair': '频率对 i',
    'rf.col.theta': 'θᵢ（每个词元的弧度）',
    'rf.col.wave': '波长 2π/θᵢ（词元）',
    'rf.col.turns': '在整段输入上转的圈数',
    'rf.col.q': '平均 ‖q₍ᵢ₎‖',
    'rf.col.k': '平均 ‖k₍ᵢ₎‖',
    'rf.col.share': '在 Σ ‖q₍ᵢ₎‖‖k₍ᵢ₎‖ 中的占比',
    'rf.map': '每一对在 Σᵢ ‖q₍ᵢ₎‖‖k₍ᵢ₎‖ 中的占比，所有层和头（行：层 · 头）',
    'rf.mapX': '频率对 i',
    'rf.mapY': '层 · 头',
    'rf.readout': '第 {l} 层，第 {h} 个头，第 {i} 对：占比 {v}',
    'rf.summary': '第 {l} 层（{who}）：占比最大的是第 {i} 对，为 {s}（波长 {w} 个词元）。在这 {n} 个词元上，最快的一对转了 {fast} 圈，最慢的只转了 {slow} 圈，所以最慢的几对携带的内容几乎与位置无关。',
    'rf.whoAll': '所有头',
    'rf.whoHead': '第 {h} 个头',
    'rf.note': 'Barbero 等人发现，Gemma 7B 把查询和键的大部分范数放在最低的频率上，把它们当作传递语义而不是位置的通道，并用最高的频率构造精确的位置注意力头。这个模型每个头只有 8 对维度，而且只学了一个小任务：这里的规律是这个模型学到的，不是普遍规律。',
    'rf.loading': '正在加载 {name} 模型…',
  },
});

const MODELS = ['copy-rope', 'lm-rope'];

/**
 * Mean pair norms of one projection: x is (layers, n, heads, hd) -> Float64Array(layers * heads * hd/2),
 * [l][h][i] = mean over t of sqrt(x[l,t,h,i]² + x[l,t,h,i+hd/2]²) (half-split pairs).
 */
export function pairNorms(x, layers, n, heads, hd) {
  const half = hd / 2;
  const out = new Float64Array(layers * heads * half);
  for (let l = 0; l < layers; l++) {
    for (let t = 0; t < n; t++) {
      for (let hh = 0; hh < heads; hh++) {
        const base = ((l * n + t) * heads + hh) * hd;
        for (let i = 0; i < half; i++) out[(l * heads + hh) * half + i] += Math.hypot(x[base + i], x[base + i + half]) / n;
      }
    }
  }
  return out;
}

class PeRopeFreqs extends PeElement {
  static attrs = {
    model: { type: 'enum', values: MODELS, default: 'copy-rope' },
    layer: { type: 'int', default: 0, min: 0, max: 7 },
    head: { type: 'int', default: -1, min: -1, max: 15 },
    seed: { type: 'int', default: 1, min: 1, max: 1e6 },
  };

  render() {
    const L = this.loaded?.model.numLayers ?? 2, H = this.loaded?.model.numHeads ?? 4;
    this.body.append(h('h3', {}, this.t('rf.title')), h('p', {}, this.t('rf.intro')),
      texRow(['\\overline{\\|\\qc{q_{[i]}}\\|} = \\tfrac1n\\textstyle\\sum_t \\|\\qc{q}_{t,[i]}\\|,\\quad \\overline{\\|\\kc{k_{[i]}}\\|} = \\tfrac1n\\textstyle\\sum_t \\|\\kc{k}_{t,[i]}\\|',
        '\\|\\qc{q}_{t,[i]}\\|^2 = \\qc{q}_{t,i}^2 + \\qc{q}_{t,i+d/2}^2',
        '\\big|\\qc{\\tilde q_{[i]}}\\cdot\\kc{\\tilde k_{[i]}}\\big| \\le \\|\\qc{q_{[i]}}\\|\\,\\|\\kc{k_{[i]}}\\|,\\quad \\theta_i = b^{-2i/d}']),
      controls(
        select(this, { key: 'model', label: 'rf.model', options: MODELS.map((m) => [m, `rf.m.${m}`]) }),
        select(this, { key: 'layer', label: 'rf.layer', raw: true, options: [...Array(L).keys()].map((l) => [l, String(l)]) }),
        select(this, { key: 'head', label: 'rf.head', options: [[-1, 'rf.allHeads'], ...[...Array(H).keys()].map((x) => [x, String(x)])] }),
        button(this, { key: 'sample', label: 'rf.sample', secondary: true, onClick: () => this.setState({ seed: this.state.seed + 1 }) })),
      this.inputLine = h('p', { class: 'pe-note', style: { overflowWrap: 'anywhere' } }),
      this.chartBox = h('div'),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      this.summary = h('p', { 'aria-live': 'polite' }),
      this.mapBox = h('div', { style: { maxWidth: '560px' } }),
      h('p', { class: 'pe-note' }, this.t('rf.note')));
  }

  async load() {
    const name = this.state.model;
    if (this.loaded?.name === name) return this.loaded;
    this.inputLine.textContent = this.t('rf.loading', { name });
    const model = await this.model(name);
    let check = null;
    if (model.task === 'lm') check = await this.modelsJson('lm-check.json').catch(() => null);
    const hd = model.hiddenSize / model.numHeads;
    const rope = this.own(this.pe.rope({ headDim: hd, base: model.config.rope_theta ?? 10000 }));
    const invFreq = Float64Array.from(rope.invFreq());
    this.release(rope);
    const layersChanged = this.loaded && (this.loaded.model.numLayers !== model.numLayers || this.loaded.model.numHeads !== model.numHeads);
    this.loaded = { name, model, check, invFreq };
    if (layersChanged) {
      this.body.replaceChildren();
      this.render();
    }
    return this.loaded;
  }

  sampleText(model, check) {
    const T = model.maxPositionEmbeddings;
    if (model.task === 'copy') return copyExample(T - 1, this.state.seed).text;
    const stream = lmStream(check) || 'the quick cat looked at the old ship. '.repeat(4);
    const start = ((this.state.seed - 1) * 131) % Math.max(1, stream.length - T);
    return stream.slice(start, start + T);
  }

  async draw() {
    const { model, check, invFreq } = await this.load();
    if (!this.body) return;
    const s = this.state;
    const L = model.numLayers, H = model.numHeads, hd = model.hiddenSize / H, P = hd / 2;
    const text = this.sampleText(model, check);
    const ids = model.encode(text);
    const n = ids.length;
    const out = model.forward(ids, { qk: true });
    const qn = pairNorms(out.q, L, n, H, hd), kn = pairNorms(out.k, L, n, H, hd);
    const layer = Math.min(s.layer, L - 1);
    const head = s.head >= 0 && s.head < H ? s.head : -1;
    const pick = (arr, i) => {
      if (head >= 0) return arr[(layer * H + head) * P + i];
      let sum = 0;
      for (let hh = 0; hh < H; hh++) sum += arr[(layer * H + hh) * P + i];
      return sum / H;
    };
    const q = Array.from({ length: P }, (_, i) => pick(qn, i)), k = Array.from({ length: P }, (_, i) => pick(kn, i));
    const prod = q.map((v, i) => v * k[i]);
    const total = prod.reduce((a, b) => a + b, 0) || 1;
    const share = prod.map((v) => v / total);
    const shown = (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : c);
    this.inputLine.replaceChildren(this.t('rf.input', { n, text: '' }), h('code', { translate: 'no' }, [...text].map(shown).join('')));
    this.dataset.sample = text;
    this.dataset.model = model.task === 'copy' ? 'copy-rope' : 'lm-rope';
    const xs = Array.from({ length: P }, (_, i) => i);
    chart(this.chartBox, {
      x: xs, xSplits: xs, height: 230, xLabel: this.t('rf.x'), yLabel: this.t('rf.y'), label: this.t('rf.title'),
      series: [{ label: this.t('rf.q'), values: q, color: ROLE.q, width: 2.5, points: true },
        { label: this.t('rf.k'), values: k, color: ROLE.k, width: 2.5, points: true }],
    });
    const wave = (i) => (2 * Math.PI) / invFreq[i];
    const row = (i) => h('tr', { 'data-pair': i, 'data-q': String(q[i]), 'data-k': String(k[i]), 'data-share': String(share[i]) },
      h('td', {}, String(i)), h('td', {}, fmt(invFreq[i], 3)), h('td', {}, fmt(wave(i), 3)), h('td', {}, fmt((n * invFreq[i]) / (2 * Math.PI), 3)),
      h('td', { class: 'pe-role-q' }, fmt(q[i], 3)), h('td', { class: 'pe-role-k' }, fmt(k[i], 3)), h('td', {}, `${(100 * share[i]).toFixed(1)}%`));
    this.tableBox.replaceChildren(h('table', { class: 'pe-table' },
      h('thead', {}, h('tr', {}, ['pair', 'theta', 'wave', 'turns'].map((c) => h('th', {}, this.t(`rf.col.${c}`))),
        h('th', { class: 'pe-role-q' }, this.t('rf.col.q')), h('th', { class: 'pe-role-k' }, this.t('rf.col.k')), h('th', {}, this.t('rf.col.share')))),
      h('tbody', {}, xs.map(row))));
    const best = share.indexOf(Math.max(...share));
    this.summary.textContent = this.t('rf.summary', {
      l: layer, who: head >= 0 ? this.t('rf.whoHead', { h: head }) : this.t('rf.whoAll'), s: `${(100 * share[best]).toFixed(1)}%`, i: best,
      w: fmt(wave(best), 3), n, fast: fmt((n * invFreq[0]) / (2 * Math.PI), 2), slow: fmt((n * invFreq[P - 1]) / (2 * Math.PI), 2),
    });
    // every layer and head: each row's shares
    const rows = L * H, grid = new Float32Array(rows * P), names = [];
    for (let r = 0; r < rows; r++) {
      let tot = 0;
      for (let i = 0; i < P; i++) tot += qn[r * P + i] * kn[r * P + i];
      for (let i = 0; i < P; i++) grid[r * P + i] = (qn[r * P + i] * kn[r * P + i]) / (tot || 1);
      names.push(`${Math.floor(r / H)}·${r % H}`);
    }
    heatmap(this.mapBox, grid, rows, P, {
      scheme: 'sequential', xLabel: this.t('rf.mapX'), yLabel: this.t('rf.mapY'), yNames: names, xNames: xs.map(String),
      height: 22 * rows, caption: this.t('rf.map'), label: this.t('rf.map'), lang: this.lang,
      readout: (r, c, v) => this.t('rf.readout', { l: Math.floor(r / H), h: r % H, i: c, v: `${(100 * v).toFixed(1)}%` }),
    });
  }
}

define('pe-rope-freqs', PeRopeFreqs);
