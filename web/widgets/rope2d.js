// <pe-rope2d>: 2D RoPE of a vision encoder over a patch grid, Pixtral (Agrawal et al. 2024) against the Qwen2-VL
// vision tower (Wang et al. 2024), both through pe.rope2d. Every patch turns some of its frequency pairs by its row
// and the rest by its column. Pixtral: rows on the even frequencies f[2j], columns on the odd f[2j+1], patches in
// raster order. Qwen2-VL: the first d/4 pairs by the row, the rest by the column, both over θ^(−2j/(d/2)), and
// the patches in 2 × 2 merge-window order (the order the merger groups them in). Shown per kind: the grid, each
// patch coloured by the cos of the chosen pair's angle and numbered by its place in the sequence.
// View 'score' (click a patch): one seeded vector as q rotated at the selected patch and as k rotated at every
// patch (rope2d.apply), q̃·k̃ over all pairs: largest at the patch itself, the pattern depends only on the offsets.
// Attributes: grid-h, grid-w (patches, default 4 × 6; even, for Qwen2-VL's merge), pair (default 16: the first
// column pair), head-dim (default 64), view (cos | score), query-row, query-col (default 1, 2), seed (default 7).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select, withValue } from './lib/controls.js';
import { texRow } from './lib/math.js';
import { colour } from './lib/heatmap.js';
import { addStyle } from './lib/style.js';
import { gaussian } from './lib/random.js';

const KINDS = [
  { kind: 'pixtral', name: 'Pixtral', suffix: null, opts: (d) => ({ kind: 'pixtral', headDim: d }) },
  { kind: 'qwen2-vl', name: 'Qwen2-VL', suffix: 'r2.vision', opts: (d) => ({ kind: 'qwen2-vl', headDim: d, spatialMergeSize: 2 }) },
];

addStyle('pe-rope2d', `
.pe-widget .pe-r2-grid { display: grid; gap: 2px; margin: .2rem 0; }
.pe-widget .pe-r2-cell { font: inherit; padding: 0; cursor: pointer; aspect-ratio: 1; display: grid; place-items: center; border-radius: 3px; font-size: .7rem; line-height: 1.1;
  font-variant-numeric: tabular-nums; color: #1d232a; border: 1px solid rgba(0,0,0,.08); text-align: center; }
.pe-widget .pe-r2-cell[aria-pressed="true"] { outline: 3px solid #e08a00; outline-offset: -1px; }
.pe-widget .pe-r2-cell b { font-weight: 600; font-size: .78rem; }
`);

registerStrings({
  en: {
    'r2.title': '2D RoPE inside the vision encoder',
    'r2.intro': 'The vision tower rotates its own queries and keys by where each patch sits: some frequency pairs by the patch’s row, the others by its column, so attention between two patches depends on their vertical and horizontal offsets. Pixtral and Qwen2-VL split the pairs differently and read the patches in a different order.',
    'r2.gridH': 'patch rows',
    'r2.gridW': 'patch columns',
    'r2.pair': 'frequency pair j',
    'r2.headDim': 'head dim d',
    'r2.caption': ': pair {j} turns with the {axis}, θ = {theta} rad per patch',
    'r2.vision': ' vision',
    'r2.row': 'row',
    'r2.col': 'column',
    'r2.cell': 'token {n}: row {r}, column {c}, angle {a} rad, cos {cos}',
    'r2.legend': 'Each patch: its place in the sequence (bold) and cos of its angle for pair j (colour, blue −1 to red +1). Click a patch to compare it with every other.',
    'r2.legend.score': 'Colour: q̃·k̃ over all pairs for one vector used as q, rotated at the selected patch (row {r}, column {c}), and as k, rotated at each patch. White is the smallest score on the grid, dark blue the largest: the patch itself. Click another patch and the pattern moves with it, because the score depends only on the row and column offsets.',
    'r2.view': 'show',
    'r2.view.cos': 'cos of pair j at each patch',
    'r2.view.score': 'q̃·k̃ with the selected patch',
    'r2.cellScore': 'token {n}: row {r}, column {c}, q̃·k̃ {s}',
    'r2.note': 'Pixtral numbers the patches row by row; Qwen2-VL lists them 2 × 2 window by 2 × 2 window, because its merger then joins each run of four neighbours into one token for the language model. Both give the same angle to every patch in a row (for a row pair) or in a column (for a column pair); the column frequencies differ: Pixtral’s are the odd ones, f[2j + 1], between its row frequencies.',
  },
  zh: {
    'r2.title': '视觉编码器里的二维 RoPE',
    'r2.intro': '视觉编码器按每个图块所在的位置旋转自己的查询和键：一部分频率对按图块所在的行旋转，其余的按列旋转，于是两个图块之间的注意力取决于它们在竖直和水平方向上的偏移。Pixtral 和 Qwen2-VL 分配频率对的方式不同，读取图块的顺序也不同。',
    'r2.gridH': '图块行数',
    'r2.gridW': '图块列数',
    'r2.pair': '频率对 j',
    'r2.headDim': '头维度 d',
    'r2.caption': '：第 {j} 对按{axis}旋转，θ = 每个图块 {theta} 弧度',
    'r2.vision': ' 视觉编码器',
    'r2.row': '行',
    'r2.col': '列',
    'r2.cell': '第 {n} 个词元：第 {r} 行，第 {c} 列，角度 {a} 弧度，cos 为 {cos}',
    'r2.legend': '每个图块：它在序列中的序号（粗体），以及第 j 对角度的 cos（颜色，蓝 −1 到红 +1）。点击一个图块，把它与其他所有图块比较。',
    'r2.legend.score': '颜色：同一个向量分别作为 q（在选中的图块，第 {r} 行，第 {c} 列旋转）和 k（在每个图块旋转）时，所有频率对上的 q̃·k̃。白色为网格上最小的分数，深蓝为最大，即该图块自身。点击另一个图块，图案随之平移，因为分数只取决于行与列的偏移。',
    'r2.view': '显示',
    'r2.view.cos': '每个图块上第 j 对的 cos',
    'r2.view.score': '与选中图块的 q̃·k̃',
    'r2.cellScore': '第 {n} 个词元：第 {r} 行，第 {c} 列，q̃·k̃ 为 {s}',
    'r2.note': 'Pixtral 逐行给图块编号；Qwen2-VL 则按一个个 2 × 2 窗口排列，因为随后它的合并层要把每连续四个相邻图块合成语言模型的一个词元。两者都让同一行（对行频率对而言）或同一列（对列频率对而言）的图块得到相同的角度；列频率不同：Pixtral 用的是奇数编号的频率 f[2j + 1]，夹在它的行频率之间。',
  },
});

/** Text with the model name Pixtral marked translate="no" (it reads the same in both languages). */
const named = (text) => text.split(/(Pixtral)/).map((part, i) => (i % 2 ? h('span', { translate: 'no' }, part) : part));

class PeRope2d extends PeElement {
  static attrs = {
    'grid-h': { type: 'int', default: 4, min: 2, max: 8 },
    'grid-w': { type: 'int', default: 6, min: 2, max: 8 },
    pair: { type: 'int', default: 16, min: 0, max: 255 },
    'head-dim': { type: 'int', default: 64, min: 16, max: 256 },
    view: { type: 'enum', values: ['cos', 'score'], default: 'cos' },
    'query-row': { type: 'int', default: 1, min: 0, max: 7 },
    'query-col': { type: 'int', default: 2, min: 0, max: 7 },
    seed: { type: 'int', default: 7, min: 0 },
  };

  static rebuildOn = ['headDim'];

  render() {
    const d = this.state.headDim;
    this.body.append(h('h3', {}, this.t('r2.title')), h('p', {}, named(this.t('r2.intro'))),
      texRow(['\\text{Pixtral: } \\phi_j = \\begin{cases} r\\,f_{2j} & j < d/4 \\\\ c\\,f_{2(j-d/4)+1} & j \\ge d/4 \\end{cases},\\ f_i = \\theta^{-2i/d}',
        '\\text{Qwen2-VL: } \\phi_j = \\begin{cases} r\\,g_{j} & j < d/4 \\\\ c\\,g_{j-d/4} & j \\ge d/4 \\end{cases},\\ g_j = \\theta^{-2j/(d/2)}']),
      controls(
        range(this, { key: 'gridH', label: 'r2.gridH', min: 2, max: 8, step: 2 }),
        range(this, { key: 'gridW', label: 'r2.gridW', min: 2, max: 8, step: 2 }),
        range(this, { key: 'pair', label: 'r2.pair', min: 0, max: d / 2 - 1 }),
        select(this, { key: 'headDim', label: 'r2.headDim', raw: true, options: withValue([16, 32, 64], this.state.headDim).map((v) => [v, String(v)]) }),
        select(this, { key: 'view', label: 'r2.view', options: [['cos', 'r2.view.cos'], ['score', 'r2.view.score']] })),
      this.legend = h('p', { class: 'pe-note' }),
      this.grids = h('div', { class: 'pe-row' }),
      h('p', { class: 'pe-note' }, named(this.t('r2.note'))));
  }

  draw() {
    const d = this.state.headDim - (this.state.headDim % 4); // rows and columns take half the pairs each
    // Qwen2-VL merges 2 × 2 windows: keep the grid even
    const gh = this.state.gridH + (this.state.gridH % 2), gw = this.state.gridW + (this.state.gridW % 2);
    const j = Math.min(this.state.pair, d / 2 - 1);
    const grid = { gridH: gh, gridW: gw };
    const score = this.state.view === 'score';
    const qr = Math.min(this.state.queryRow, gh - 1), qc = Math.min(this.state.queryCol, gw - 1);
    this.legend.textContent = this.t(score ? 'r2.legend.score' : 'r2.legend', { r: qr, c: qc });
    // one content vector as both query and key: the score is largest where the offsets are zero
    const q = gaussian(d, this.state.seed), k = q;
    this.grids.replaceChildren(...KINDS.map((K) => {
      const r2 = this.own(this.pe.rope2d(K.opts(d)));
      const pos = r2.positions(grid);
      const { cos, sin, n } = r2.cosSin(grid);
      const P = r2.nFreq;
      // the score view: one q and one k at every patch, rotated by the library; q̃ at the selected patch · k̃ at each
      let scores = null;
      if (score) {
        const qs = new Float32Array(n * d), ks = new Float32Array(n * d);
        for (let t = 0; t < n; t++) {
          qs.set(q, t * d);
          ks.set(k, t * d);
        }
        r2.apply(qs, { shape: [1, n, 1, d], grid });
        r2.apply(ks, { shape: [1, n, 1, d], grid });
        let t0 = 0;
        while (pos[t0] !== qr || pos[n + t0] !== qc) t0++;
        scores = Array.from({ length: n }, (_, t) => {
          let acc = 0;
          for (let i = 0; i < d; i++) acc += qs[t0 * d + i] * ks[t * d + i];
          return acc;
        });
      }
      this.release(r2);
      // scores: white (smallest) to dark blue (largest) over this grid's range; cos: blue −1 to red +1
      const lo = scores ? Math.min(...scores) : -1, hi = scores ? Math.max(...scores) : 1;
      const fill = (v) => (scores ? colour(v - lo, hi - lo, 'sequential') : colour(v, 1));
      const cells = new Array(gh * gw);
      for (let t = 0; t < n; t++) {
        const r = pos[t], c = pos[n + t];
        const cv = cos[t * P + j], a = Math.atan2(sin[t * P + j], cv);
        const v = scores ? scores[t] : cv;
        cells[r * gw + c] = h('button', {
          type: 'button', class: 'pe-r2-cell', 'data-token': String(t), 'data-row': String(r), 'data-col': String(c), 'data-cos': String(cv),
          'data-score': scores ? String(scores[t]) : null, 'aria-pressed': String(r === qr && c === qc),
          style: { background: `rgb(${fill(v).map(Math.round).join(' ')})`, color: scores && v - lo > 0.6 * (hi - lo) ? '#fff' : '#1d232a' },
          title: scores ? this.t('r2.cellScore', { n: t, r, c, s: fmt(v, 3) }) : this.t('r2.cell', { n: t, r, c, a: fmt(a, 3), cos: fmt(cv, 3) }),
          onclick: () => this.setState({ queryRow: r, queryCol: c, view: 'score' }),
        }, h('b', {}, String(t)));
      }
      const rowPair = j < d / 4;
      // θ of this pair, read back from the library's angle at the patch one step along its axis
      const step = [...cells.keys()].find((i) => cells[i] && (rowPair ? cells[i].dataset.row === '1' && cells[i].dataset.col === '0' : cells[i].dataset.row === '0' && cells[i].dataset.col === '1'));
      const st = Number(cells[step].dataset.token);
      const theta = Math.atan2(sin[st * P + j], cos[st * P + j]);
      return h('figure', { 'data-kind': K.kind, 'data-axis': rowPair ? 'row' : 'col' },
        h('figcaption', {}, h('span', { translate: 'no' }, K.name), K.suffix ? this.t(K.suffix) : '', this.t('r2.caption', { j, axis: this.t(rowPair ? 'r2.row' : 'r2.col'), theta: fmt(theta, 3) })),
        h('div', { class: 'pe-r2-grid', style: { gridTemplateColumns: `repeat(${gw}, minmax(0, 1fr))`, maxWidth: `${gw * 3}rem` } }, cells));
    }));
  }
}

define('pe-rope2d', PeRope2d);
