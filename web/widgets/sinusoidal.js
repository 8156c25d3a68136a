// <pe-sinusoidal>: the Transformer's sinusoidal table (Vaswani et al. 2017, §3.5), computed by pe.sinusoidal.
//
//   the table as a heatmap (length, d_model and base controls); the clock picture (column pair i is a hand
//   turning at its own speed ω_i = base^(−2i/d) as the position moves; animated); the d_model = 4 worked
//   example; the PE·PEᵀ similarity matrix (depends only on p − q); PE(p + k) = M_k PE(p) with M_k a block
//   diagonal of 2×2 rotations built from PE(k) itself, checked numerically over every row.
//
// Attributes: length (8..1024, default 64), d-model (4..256 even, default 32), base (default 10000),
// position (clock position, default 7), shift (k of the linear map, default 3), parts (comma list of
// table,clock,example,similarity,linear; default all).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { heatmap } from './lib/heatmap.js';
import { controls, range, select, button, withValue } from './lib/controls.js';
import { texNode, texRow } from './lib/math.js';

registerStrings({
  en: {
    'sin.length': 'positions',
    'sin.dModel': 'd_model',
    'sin.base': 'base',
    'sin.table': 'The table, turned on its side: positions run left to right, one row of the picture per dimension',
    'sin.tableCap': 'PE(p) for p = 0 … {n}: each vertical strip is one position’s vector; from the top, the dimensions alternate sin, cos, sin, cos …',
    'sin.column': 'dimension',
    'sin.clock': 'The clock picture',
    'sin.clockText': 'Each pair of columns (sin, cos) is a hand on its own clock. As the position advances, pair i turns by ω_i = base^(−2i/d) radians per step: the first hands spin fast, the last barely move, so together they spell out the position like the hands of a clock.',
    'sin.pos': 'position p',
    'sin.pair': 'pair {i}',
    'sin.period': 'period {p}',
    'sin.example': 'Worked example with d_model = 4',
    'sin.exampleText': 'Four columns: sin p, cos p, sin(p / base^(1/2)), cos(p / base^(1/2)). The numbers below come from the library, the same ones any model would add.',
    'sin.p': 'p',
    'sin.similarity': 'PE · PEᵀ: how alike two positions look',
    'sin.similarityText': 'Entry (p, q) is the dot product PE(p)·PE(q) = Σ cos((p − q)ω_i). It depends only on the distance p − q (every diagonal is constant) and is largest on the diagonal.',
    'sin.simCap': 'PE(p)·PE(q) for p, q < {n}',
    'sin.linear': 'PE(p + k) is a linear function of PE(p)',
    'sin.linearText': 'For a fixed offset k, one matrix M_k maps every PE(p) to PE(p + k): a 2×2 rotation for each pair, built from sin(kω_i) and cos(kω_i), which is row k of the table itself. This is why the authors expected the model to attend by relative position easily.',
    'sin.shift': 'offset k',
    'sin.matrix': 'M_k (d × d, zero outside the 2×2 blocks)',
    'sin.check': 'largest |M_k PE(p) − PE(p + k)| over p = 0 … {n}: {err}',
    'sin.checkOk': 'equal up to float32 rounding',
    'sin.rowOf': 'row',
    'sin.colOf': 'column',
  },
  zh: {
    'sin.length': '位置数',
    'sin.dModel': '模型维度 d_model',
    'sin.base': '底数 base',
    'sin.table': '编码表（横过来画）：位置从左到右排列，图中每一行是一个维度',
    'sin.tableCap': 'p = 0 … {n} 的 PE(p)：每一竖条是一个位置的向量；维度从上到下按 sin、cos、sin、cos … 交错',
    'sin.column': '维度',
    'sin.clock': '时钟图',
    'sin.clockText': '每一对列（sin, cos）都是一面时钟上的一根指针。位置每前进一步，第 i 对转过 ω_i = base^(−2i/d) 弧度：前面的指针转得飞快，后面的几乎不动，合起来就像时钟的指针一样“写出”了位置。',
    'sin.pos': '位置 p',
    'sin.pair': '第 {i} 对',
    'sin.period': '周期 {p}',
    'sin.example': 'd_model = 4 的手算示例',
    'sin.exampleText': '四列分别是 sin p、cos p、sin(p / base^(1/2))、cos(p / base^(1/2))。下面的数字由本库算出，与任何模型实际加上的数值相同。',
    'sin.p': '位置',
    'sin.similarity': 'PE · PEᵀ：两个位置看起来有多像',
    'sin.similarityText': '第 (p, q) 项是点积 PE(p)·PE(q) = Σ cos((p − q)ω_i)。它只取决于距离 p − q（每条对角线上都是常数），并在主对角线上最大。',
    'sin.simCap': 'p, q < {n} 时的 PE(p)·PE(q)',
    'sin.linear': 'PE(p + k) 是 PE(p) 的线性函数',
    'sin.linearText': '对固定的偏移 k，同一个矩阵 M_k 把每个 PE(p) 映射到 PE(p + k)：每一对维度是一个 2×2 旋转，由 sin(kω_i) 和 cos(kω_i) 构成——恰好就是编码表的第 k 行。这正是作者认为模型能轻松按相对位置进行注意的原因。',
    'sin.shift': '偏移 k',
    'sin.matrix': 'M_k（d × d，2×2 块以外全为零）',
    'sin.check': '在 p = 0 … {n} 上 |M_k PE(p) − PE(p + k)| 的最大值：{err}',
    'sin.checkOk': '在 float32 舍入误差内相等',
    'sin.rowOf': '行',
    'sin.colOf': '列',
  },
});

const PARTS = ['table', 'clock', 'example', 'similarity', 'linear'];

class PeSinusoidal extends PeElement {
  static attrs = {
    length: { type: 'int', default: 64, min: 8, max: 1024 },
    'd-model': { type: 'int', default: 32, min: 4, max: 256 },
    base: { type: 'number', default: 10000, min: 2, max: 1e8 },
    position: { type: 'int', default: 7, min: 0, max: 100000 },
    shift: { type: 'int', default: 3, min: 0, max: 256 },
    parts: { type: 'list', default: PARTS },
  };

  get d() {
    const d = this.state.dModel;
    return Math.max(4, d - (d % 2));
  }

  has(part) {
    return this.state.parts.includes(part);
  }

  render() {
    const dOpts = withValue([4, 8, 16, 32, 64, 128, 256], this.d).map((v) => [v, String(v)]);
    this.body.append(
      texRow(['PE_{(p,\\,2i)} = \\sin\\!\\left(\\frac{p}{\\mathrm{base}^{2i/d}}\\right)', 'PE_{(p,\\,2i+1)} = \\cos\\!\\left(\\frac{p}{\\mathrm{base}^{2i/d}}\\right)', '\\omega_i = \\mathrm{base}^{-2i/d}']),
      controls(
        range(this, { key: 'length', label: 'sin.length', min: 8, max: 512, step: 8 }),
        select(this, { key: 'dModel', label: 'sin.dModel', options: dOpts, raw: true }),
        select(this, { key: 'base', label: 'sin.base', raw: true, options: withValue([10, 100, 1000, 10000, 100000, 500000, 1000000], this.state.base).map((v) => [v, String(v)]) }),
      ),
    );
    if (this.has('table')) {
      this.body.append(h('h4', {}, this.t('sin.table')), this.tableFig = h('div'));
    }
    if (this.has('clock')) {
      this.playBtn = button(this, { label: this.playing ? 'pe.pause' : 'pe.play', key: 'play', secondary: true, onClick: () => this.togglePlay() });
      this.body.append(h('h4', {}, this.t('sin.clock')), h('p', { class: 'pe-note' }, this.t('sin.clockText')),
        controls(range(this, { key: 'position', label: 'sin.pos', min: 0, max: 1000, onChange: (v) => this.setPosition(v) }), this.playBtn),
        this.clockBox = h('div', { class: 'pe-clocks' }));
    }
    if (this.has('example')) {
      this.body.append(h('h4', {}, this.t('sin.example')), h('p', { class: 'pe-note' }, this.t('sin.exampleText')),
        this.exampleBox = h('div', { class: 'pe-scroll' }));
    }
    if (this.has('similarity')) {
      this.body.append(h('h4', {}, this.t('sin.similarity')), h('p', { class: 'pe-note' }, this.t('sin.similarityText')),
        this.simFig = h('div', { style: { maxWidth: '420px' } }));
    }
    if (this.has('linear')) {
      this.body.append(h('h4', {}, this.t('sin.linear')), h('p', { class: 'pe-note' }, this.t('sin.linearText')),
        texNode('\\begin{pmatrix} PE_{(p+k,\\,2i)} \\\\ PE_{(p+k,\\,2i+1)} \\end{pmatrix} = \\begin{pmatrix} \\cos k\\omega_i & \\sin k\\omega_i \\\\ -\\sin k\\omega_i & \\cos k\\omega_i \\end{pmatrix} \\begin{pmatrix} PE_{(p,\\,2i)} \\\\ PE_{(p,\\,2i+1)} \\end{pmatrix}', { display: true }),
        controls(range(this, { key: 'shift', label: 'sin.shift', min: 0, max: 64, onChange: (v) => { this.setState({ shift: v }, { redraw: false }); this.drawLinear(); this.markDrawn(); } })),
        h('div', { class: 'pe-row' }, this.linFig = h('div', { style: { maxWidth: '360px' } }), this.linCheck = h('div')));
    }
  }

  table(length, offset = 0) {
    return this.pe.sinusoidal(length, this.d, { base: this.state.base, offset });
  }

  async draw() {
    const s = this.state;
    const d = this.d;
    const L = s.length;
    if (this.tableFig) {
      heatmap(this.tableFig, this.table(L), L, d, {
        transpose: true, range: 1, height: Math.min(300, Math.max(140, d * 5)), xLabel: this.t('pe.position'),
        yLabel: this.t('sin.column'), caption: this.t('sin.tableCap', { n: L - 1 }), lang: this.lang,
      });
    }
    if (this.clockBox) this.drawClock();
    if (this.exampleBox) this.drawExample();
    // after a language switch: the similarity map and the linear map in tasks of their own
    if (this.relabeling) await this.yieldIfLong();
    if (this.simFig) {
      const n = Math.min(L, 256);
      const t = this.table(n);
      const sim = new Float32Array(n * n);
      for (let p = 0; p < n; p++) {
        for (let q = 0; q < n; q++) {
          let acc = 0;
          for (let j = 0; j < d; j++) acc += t[p * d + j] * t[q * d + j];
          sim[p * n + q] = acc;
        }
      }
      heatmap(this.simFig, sim, n, n, { range: d / 2, height: 300, xLabel: 'q', yLabel: 'p', caption: this.t('sin.simCap', { n }), lang: this.lang });
    }
    if (this.relabeling) await this.yieldIfLong();
    if (this.linFig) this.drawLinear();
  }

  drawClock() {
    const d = this.d;
    const pos = this.state.position;
    const row = this.table(1, pos);
    const nPairs = d / 2;
    const count = Math.min(8, nPairs);
    const pairs = [...new Set(Array.from({ length: count }, (_, j) => Math.round((j * (nPairs - 1)) / Math.max(1, count - 1))))];
    const NS = 'svg:';
    const items = pairs.map((i) => {
      const sn = row[2 * i];
      const cs = row[2 * i + 1];
      const period = 2 * Math.PI * this.state.base ** ((2 * i) / d);
      const svg = h(`${NS}svg`, { viewBox: '-50 -50 100 100', width: 92, height: 92, role: 'img', 'aria-label': `${this.t('sin.pair', { i })}: sin ${fmt(sn, 3)}, cos ${fmt(cs, 3)}` },
        h(`${NS}circle`, { cx: 0, cy: 0, r: 44, fill: '#f3f6fa', stroke: '#9aa5b1', 'stroke-width': 1.5 }),
        ...[0, 1, 2, 3].map((q) => h(`${NS}line`, { x1: 0, y1: -44, x2: 0, y2: -38, stroke: '#9aa5b1', transform: `rotate(${q * 90})` })),
        // the hand at angle p·ω_i from 3 o'clock, counter-clockwise: (cos, sin) with y up, as RoPE's planes turn
        h(`${NS}line`, { x1: 0, y1: 0, x2: 40 * cs, y2: -40 * sn, stroke: '#c0392b', 'stroke-width': 3.5, 'stroke-linecap': 'round' }),
        h(`${NS}circle`, { cx: 0, cy: 0, r: 3.5, fill: '#1d232a' }));
      return h('figure', { class: 'pe-clock' }, svg,
        h('figcaption', {}, this.t('sin.pair', { i }), h('br'), `ω = ${fmt(this.state.base ** ((-2 * i) / d), 3)}`, h('br'),
          this.t('sin.period', { p: fmt(period, 3) })));
    });
    this.clockBox.replaceChildren(...items);
  }

  drawExample() {
    const base = this.state.base;
    const t = this.pe.sinusoidal(4, 4, { base });
    const r = fmt(Math.sqrt(base), 4);
    const heads = ['sin p', 'cos p', `sin(p/${r})`, `cos(p/${r})`];
    const rows = [0, 1, 2, 3].map((p) => h('tr', {}, h('th', {}, String(p)),
      ...[0, 1, 2, 3].map((j) => h('td', {}, t[p * 4 + j].toFixed(6).replace('-', '−')))));
    this.exampleBox.replaceChildren(h('table', { class: 'pe-table' },
      h('thead', {}, h('tr', {}, h('th', {}, this.t('sin.p')), ...heads.map((x, j) => h('th', { translate: 'no' }, `PE${j} = ${x}`)))),
      h('tbody', {}, rows)));
  }

  drawLinear() {
    const d = this.d;
    const k = this.state.shift;
    const L = this.state.length;
    // M_k from row k of the table: [sin(a+b); cos(a+b)] = [[cos b, sin b], [−sin b, cos b]] [sin a; cos a]
    const rowK = this.table(1, k);
    const M = new Float32Array(d * d);
    for (let i = 0; i < d / 2; i++) {
      const sb = rowK[2 * i];
      const cb = rowK[2 * i + 1];
      M[2 * i * d + 2 * i] = cb;
      M[2 * i * d + 2 * i + 1] = sb;
      M[(2 * i + 1) * d + 2 * i] = -sb;
      M[(2 * i + 1) * d + 2 * i + 1] = cb;
    }
    const t = this.table(L + k);
    let err = 0;
    for (let p = 0; p < L; p++) {
      for (let r = 0; r < d; r++) {
        let acc = 0;
        for (let c = 0; c < d; c++) acc += M[r * d + c] * t[p * d + c];
        err = Math.max(err, Math.abs(acc - t[(p + k) * d + r]));
      }
    }
    const show = Math.min(d, 32);
    const Ms = new Float32Array(show * show);
    for (let r = 0; r < show; r++) for (let c = 0; c < show; c++) Ms[r * show + c] = M[r * d + c];
    heatmap(this.linFig, Ms, show, show, { range: 1, height: 240, xLabel: this.t('sin.colOf'), yLabel: this.t('sin.rowOf'), caption: this.t('sin.matrix') + (show < d ? ` (${show} × ${show} / ${d} × ${d})` : ''), lang: this.lang });
    this.dataset.linearError = String(err);
    this.linCheck.replaceChildren(
      h('p', {}, this.t('sin.check', { n: L - 1, err: fmt(err, 3) })),
      h('p', { class: err < 1e-4 ? 'pe-good pe-big' : 'pe-bad pe-big' }, err < 1e-4 ? this.t('sin.checkOk') : fmt(err, 3)));
  }

  setPosition(v) {
    this.setState({ position: v }, { redraw: false });
    const input = this.body.querySelector('input[data-key="position"]');
    if (input && Number(input.value) !== v) {
      input.value = String(v);
      input.dispatchEvent(new Event('sync'));
      input.closest('label').querySelector('output').textContent = String(v);
    }
    this.drawClock();
    this.markDrawn();
  }

  togglePlay() {
    this.playing = !this.playing;
    if (this.playBtn) this.playBtn.textContent = this.t(this.playing ? 'pe.pause' : 'pe.play');
    if (!this.playing) return;
    let last = 0;
    const step = (ts) => {
      if (!this.playing || !this.isConnected) return;
      if (ts - last > 120) {
        last = ts;
        this.setPosition((this.state.position + 1) % 1001);
      }
      this.frame(step);
    };
    this.frame(step);
  }

  cleanup() {
    this.playing = false;
  }
}

define('pe-sinusoidal', PeSinusoidal);
