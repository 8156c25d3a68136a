// <pe-rope2d>: 2D RoPE of a vision encoder over a patch grid, Pixtral (Agrawal et al. 2024) against the Qwen2-VL
// vision tower (Wang et al. 2024), both through pe.rope2d. Every patch turns some of its frequency pairs by its row
// and the rest by its column. Pixtral: rows on the even frequencies f[2j], columns on the odd f[2j+1], patches in
// raster order. Qwen2-VL: the first d/4 pairs by the row, the rest by the column, both over θ^(−2j/(d/2)), and
// the patches in 2 × 2 merge-window order (the order the merger groups them in). Shown per kind: the grid, each
// patch coloured by the cos of the chosen pair's angle and numbered by its place in the sequence.
// Attributes: grid-h, grid-w (patches, default 4 × 6; even, for Qwen2-VL's merge), pair (default 16: the first column pair), head-dim
// (default 64).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select } from './lib/controls.js';
import { texRow } from './lib/math.js';
import { colour } from './lib/heatmap.js';
import { addStyle } from './lib/style.js';

const KINDS = [
  { kind: 'pixtral', name: 'Pixtral', suffix: null, opts: (d) => ({ kind: 'pixtral', headDim: d }) },
  { kind: 'qwen2-vl', name: 'Qwen2-VL', suffix: 'r2.vision', opts: (d) => ({ kind: 'qwen2-vl', headDim: d, spatialMergeSize: 2 }) },
];

addStyle('pe-rope2d', `
.pe-widget .pe-r2-grid { display: grid; gap: 2px; margin: .2rem 0; }
.pe-widget .pe-r2-cell { aspect-ratio: 1; display: grid; place-items: center; border-radius: 3px; font-size: .7rem; line-height: 1.1;
  font-variant-numeric: tabular-nums; color: #1d232a; border: 1px solid rgba(0,0,0,.08); text-align: center; }
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
    'r2.legend': 'Each patch: its place in the sequence (bold) and cos of its angle for pair j (colour, blue −1 to red +1).',
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
    'r2.legend': '每个图块：它在序列中的序号（粗体），以及第 j 对角度的 cos（颜色，蓝 −1 到红 +1）。',
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
        select(this, { key: 'headDim', label: 'r2.headDim', raw: true, options: [16, 32, 64].map((v) => [v, String(v)]) })),
      h('p', { class: 'pe-note' }, this.t('r2.legend')),
      this.grids = h('div', { class: 'pe-row' }),
      h('p', { class: 'pe-note' }, named(this.t('r2.note'))));
  }

  draw() {
    const { headDim: d } = this.state;
    // Qwen2-VL merges 2 × 2 windows: keep the grid even
    const gh = this.state.gridH + (this.state.gridH % 2), gw = this.state.gridW + (this.state.gridW % 2);
    const j = Math.min(this.state.pair, d / 2 - 1);
    const grid = { gridH: gh, gridW: gw };
    this.grids.replaceChildren(...KINDS.map((K) => {
      const r2 = this.own(this.pe.rope2d(K.opts(d)));
      const pos = r2.positions(grid);
      const { cos, sin, n } = r2.cosSin(grid);
      const P = r2.nFreq;
      this.release(r2);
      const cells = new Array(gh * gw);
      for (let t = 0; t < n; t++) {
        const r = pos[t], c = pos[n + t];
        const cv = cos[t * P + j], a = Math.atan2(sin[t * P + j], cv);
        cells[r * gw + c] = h('div', {
          class: 'pe-r2-cell', 'data-token': String(t), 'data-row': String(r), 'data-col': String(c), 'data-cos': String(cv),
          style: { background: `rgb(${colour(cv, 1).map(Math.round).join(' ')})` },
          title: this.t('r2.cell', { n: t, r, c, a: fmt(a, 3), cos: fmt(cv, 3) }),
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
