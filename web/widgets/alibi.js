// <pe-alibi>: Attention with Linear Biases (Press, Smith & Lewis 2022), computed by pe.alibiSlopes,
// pe.alibiBias and pe.attention.
//
//   the slopes for any head count (a power of two: the geometric sequence 2^(−8h/n); otherwise the paper's
//   interleaving, as BLOOM builds it); each head's bias matrix m_h·(j − i); one head's attention weights on
//   random queries and keys without and with the bias, and the mean distance attended over.
//
// Attributes: heads (1..64, default 8), length (4..128, default 24), head (which head's attention, default 0),
// causal (bool, default true), seed (random q/k, default 3).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { heatmap } from './lib/heatmap.js';
import { chart } from './lib/chart.js';
import { controls, range, number, checkbox } from './lib/controls.js';
import { texRow } from './lib/math.js';
import { ROLE } from './lib/palette.js';

registerStrings({
  en: {
    'alibi.heads': 'number of heads n',
    'alibi.length': 'sequence length',
    'alibi.head': 'head shown',
    'alibi.causal': 'causal mask',
    'alibi.seed': 'random q, k: seed',
    'alibi.slopes': 'Slopes for {n} heads',
    'alibi.slopes1': 'The slope for 1 head',
    'alibi.slopesText': 'Heads are numbered from 0, as everywhere on this page. For a power of two n, head h gets m_h = 2^(−8(h+1)/n). For other n the paper takes the slopes of the largest power of two below n, then fills in with every other slope of twice that many heads.',
    'alibi.slope': 'slope m_h',
    'alibi.headIdx': 'head h',
    'alibi.slopeSeries': 'slope',
    'alibi.biases': 'The bias each head adds to its attention scores',
    'alibi.biasesText': 'Bias m_h · (j − i) for query i and key j: zero on the diagonal, more negative the further back the key. Steep heads look locally, shallow heads far away.',
    'alibi.headCap': 'head {h} · m = {m}',
    'alibi.attn': 'One head’s attention without and with ALiBi',
    'alibi.attnText': 'The same random queries and keys, attention weights softmax(q·k/√d + bias). With the causal mask the bias pulls each query’s attention towards nearby keys; the number under each map is the average distance |i − j| attended over.',
    'alibi.without': 'without ALiBi',
    'alibi.with': 'with ALiBi (head {h}, m = {m})',
    'alibi.meanDist': 'mean attended distance: {d}',
    'alibi.nonCausal': 'Without the causal mask the bias m·(j − i) is positive for keys after the query, so attention leans towards the end of the sequence instead of staying near: ALiBi as the paper and BLOOM define it is meant for causal models (bidirectional variants use a symmetric −m·|j − i|).',
  },
  zh: {
    'alibi.heads': '注意力头数 n',
    'alibi.length': '序列长度',
    'alibi.head': '显示第几个头',
    'alibi.causal': '因果掩码',
    'alibi.seed': '随机 q、k 的种子',
    'alibi.slopes': '{n} 个头的斜率',
    'alibi.slopes1': '1 个头的斜率',
    'alibi.slopesText': '与本页其他地方一样，头从 0 开始编号。当 n 是 2 的幂时，头 h 的斜率为 m_h = 2^(−8(h+1)/n)。对其他 n，论文先取不超过 n 的最大 2 的幂对应的斜率，再从两倍头数的斜率序列中隔一个取一个补足。',
    'alibi.slope': '斜率 m_h',
    'alibi.headIdx': '头 h',
    'alibi.slopeSeries': '斜率',
    'alibi.biases': '每个头加到注意力分数上的偏置',
    'alibi.biasesText': '查询 i、键 j 的偏置为 m_h · (j − i)：对角线上为零，键越靠前越负。斜率大的头只看附近，斜率小的头看得更远。',
    'alibi.headCap': '第 {h} 个头 · m = {m}',
    'alibi.attn': '同一个头在有无 ALiBi 时的注意力',
    'alibi.attnText': '相同的随机查询和键，注意力权重为 softmax(q·k/√d + 偏置)。在因果掩码下，偏置把每个查询的注意力拉向附近的键；每张图下方的数字是所关注位置的平均距离 |i − j|。',
    'alibi.without': '不加 ALiBi',
    'alibi.with': '加 ALiBi（第 {h} 个头，m = {m}）',
    'alibi.meanDist': '平均关注距离：{d}',
    'alibi.nonCausal': '去掉因果掩码后，偏置 m·(j − i) 对查询之后的键为正，于是注意力偏向序列末尾而不是附近：论文和 BLOOM 定义的 ALiBi 是为因果模型设计的（双向的变体使用对称的 −m·|j − i|）。',
  },
});

function randoms(n, seed) {
  let s = (seed * 2654435761) >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let acc = 0;
    for (let k = 0; k < 3; k++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      acc += s / 4294967296;
    }
    out[i] = (acc - 1.5) * 2;
  }
  return out;
}

class PeAlibi extends PeElement {
  static attrs = {
    heads: { type: 'int', default: 8, min: 1, max: 64 },
    length: { type: 'int', default: 24, min: 4, max: 128 },
    head: { type: 'int', default: 0, min: 0, max: 63 },
    causal: { type: 'bool', default: true },
    seed: { type: 'int', default: 3, min: 1, max: 99 },
  };

  static rebuildOn = ['heads'];

  render() {
    this.body.append(
      texRow(['\\mathrm{score}_{h}(\\qc{i},\\kc{j}) = \\frac{\\qc{q_i}\\cdot \\kc{k_j}}{\\sqrt{d}} + m_h\\,(\\kc{j}-\\qc{i})', 'm_h = 2^{-8(h+1)/n}\\quad(h = 0, \\dots, n-1;\\ n = 2^k)']),
      controls(
        number(this, { key: 'heads', label: 'alibi.heads', min: 1, max: 64, step: 1, integer: true }),
        range(this, { key: 'length', label: 'alibi.length', min: 4, max: 64 }),
        range(this, { key: 'head', label: 'alibi.head', min: 0, max: this.state.heads - 1, format: (v) => String(Math.min(v, this.state.heads - 1)) }),
        checkbox(this, { key: 'causal', label: 'alibi.causal' }),
        range(this, { key: 'seed', label: 'alibi.seed', min: 1, max: 20 }),
      ),
      this.slopesHead = h('h4'),
      h('p', { class: 'pe-note' }, this.t('alibi.slopesText')),
      h('div', { class: 'pe-row' }, this.slopeChart = h('div'), this.slopeTable = h('div', { class: 'pe-scroll', style: { flex: '0 1 300px' } })),
      h('h4', {}, this.t('alibi.biases')),
      h('p', { class: 'pe-note' }, this.t('alibi.biasesText')),
      this.biasGrid = h('div', { class: 'pe-grid pe-alibi-tiles' }),
      h('h4', {}, this.t('alibi.attn')),
      h('p', { class: 'pe-note' }, this.t('alibi.attnText')),
      h('div', { class: 'pe-row' }, h('div', {}, this.noFig = h('div'), this.noNote = h('p', { class: 'pe-note' })),
        h('div', {}, this.yesFig = h('div'), this.yesNote = h('p', { class: 'pe-note' }))),
      this.causalNote = h('p', { class: 'pe-note pe-bad' }),
    );
  }

  async draw() {
    const pe = this.pe;
    const { heads: H, length: L, causal, seed } = this.state;
    const head = Math.min(this.state.head, H - 1);
    const slopes = pe.alibiSlopes(H);
    this.slopesHead.textContent = H === 1 ? this.t('alibi.slopes1') : this.t('alibi.slopes', { n: H });
    const xs = Array.from({ length: H }, (_, i) => i);
    chart(this.slopeChart, {
      x: xs, series: [{ label: this.t('alibi.slopeSeries'), values: slopes, points: true, width: 1.5 }],
      xLabel: this.t('alibi.headIdx'), yLabel: this.t('alibi.slope'), logY: true, height: 220,
      xRange: [-0.5, H - 0.5], label: this.slopesHead.textContent,
    });
    this.slopeTable.replaceChildren(h('table', { class: 'pe-table' },
      h('thead', {}, h('tr', {}, h('th', {}, this.t('alibi.headIdx')), h('th', {}, this.t('alibi.slope')))),
      h('tbody', {}, Array.from(slopes.subarray(0, 16), (m, i) => h('tr', {}, h('td', {}, String(i)), h('td', {}, `${fmt(m, 5)} = 2^${fmt(Math.log2(m), 4)}`))),
        H > 16 ? h('tr', {}, h('td', {}, '…'), h('td', {}, '…')) : null)));

    // per-head bias matrices: up to 8 heads, spread over the range (after a language switch, in tasks of
    // their own: the tiles, then the attention maps)
    if (this.relabeling) await this.yieldIfLong();
    const bias = pe.alibiBias(H, L, L, { causal });
    const shown = [...new Set(Array.from({ length: Math.min(8, H) }, (_, j) => Math.round((j * (H - 1)) / Math.max(1, Math.min(8, H) - 1))))];
    let lo = 0;
    for (const hh of shown) lo = Math.min(lo, slopes[hh] * -(L - 1));
    const cells = shown.map((hh) => {
      const box = h('div');
      heatmap(box, bias.subarray(hh * L * L, (hh + 1) * L * L), L, L, {
        range: -lo, height: 150, legend: false, xLabel: 'j', xColor: ROLE.k, yColor: ROLE.q, caption: this.t('alibi.headCap', { h: hh, m: fmt(slopes[hh], 3) }), lang: this.lang,
      });
      return box;
    });
    this.biasGrid.replaceChildren(...cells);

    if (this.relabeling) await this.yieldIfLong();
    // attention without and with the bias, one head shown
    const d = 16;
    const q = randoms(L * H * d, seed).map((v) => v * 1.5);
    const k = randoms(L * H * d, seed + 77);
    const v = randoms(L * H * d, seed + 99);
    const shape = { heads: H, qLen: L, headDim: d };
    const no = pe.attention(q, k, v, { shape, causal, returnWeights: true }).weights;
    const yes = pe.attention(q, k, v, { shape, causal, alibi: true, returnWeights: true }).weights;
    const pick = (w) => w.subarray(head * L * L, (head + 1) * L * L);
    const meanDist = (w) => {
      let s = 0;
      for (let i = 0; i < L; i++) for (let j = 0; j < L; j++) s += w[i * L + j] * Math.abs(i - j);
      return s / L;
    };
    const wNo = pick(no);
    const wYes = pick(yes);
    const common = { scheme: 'sequential', range: 1, height: 220, xLabel: this.t('pe.key'), yLabel: this.t('pe.query'), lang: this.lang, xColor: ROLE.k, yColor: ROLE.q };
    heatmap(this.noFig, wNo, L, L, { ...common, caption: this.t('alibi.without') });
    heatmap(this.yesFig, wYes, L, L, { ...common, caption: this.t('alibi.with', { h: head, m: fmt(slopes[head], 3) }) });
    const dNo = meanDist(wNo);
    const dYes = meanDist(wYes);
    this.dataset.meanDistance = `${dNo},${dYes}`;
    this.noNote.textContent = this.t('alibi.meanDist', { d: dNo.toFixed(2) });
    this.yesNote.textContent = this.t('alibi.meanDist', { d: dYes.toFixed(2) });
    this.causalNote.textContent = causal ? '' : this.t('alibi.nonCausal');
    this.causalNote.hidden = causal;
  }
}

define('pe-alibi', PeAlibi);
