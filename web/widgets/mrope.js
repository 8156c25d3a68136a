// <pe-mrope>: multimodal RoPE (M-RoPE, Qwen2-VL, Wang et al. 2024). A prompt of text tokens around one image: each
// token gets three positions (t, h, w) from pe.mropePositions (Hugging Face's get_rope_index): text tokens carry
// the same number three times, the image's merged patches share one t and take their row and column as h and w,
// and the text after the image resumes after the largest position used. Then which frequency pairs read which
// of the three positions: chunked (Qwen2-VL, Qwen2.5-VL: mrope_section [16, 24, 24], consecutive blocks) against
// interleaved (Qwen3-VL: [24, 20, 20], t h w t h w …), side by side, with the selected token's cos per pair from
// rope.cosSin with those positions.
// Attributes: rows, cols (the image's grid of merged tokens, default 3 × 4), token (the selected token's index in
// the prompt, default 5: the image's second patch), media (image | video: 2 frames, Qwen2-VL | video25: 2 frames,
// Qwen2.5-VL, whose t is time: second_per_grid_t · tokens_per_second).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select } from './lib/controls.js';
import { tex } from './lib/math.js';
import { svg } from './lib/dom.js';
import { colour } from './lib/heatmap.js';
import { addStyle } from './lib/style.js';

const AXIS = ['t', 'h', 'w'];
// not blue or red: those are q and k in every figure of the page
const AXIS_COLOR = ['#8e44ad', '#d68910', '#27864a'];
// the token ids of Qwen2-VL's config.json (image_token_id, video_token_id, vision_start_token_id); text ids are placeholders
const IDS = { image_token_id: 151655, video_token_id: 151656, vision_start_token_id: 151652 };
// the inputs: an image (Qwen2-VL), or a video of two temporal patches read by Qwen2-VL (t counts temporal patches)
// or by Qwen2.5-VL (t counts time: second_per_grid_t · tokens_per_second = 1 s · 2 per temporal patch)
const MEDIA = {
  image: { config: { model_type: 'qwen2_vl', ...IDS, vision_config: { spatial_merge_size: 2 } }, frames: 1 },
  video: { config: { model_type: 'qwen2_vl', ...IDS, vision_config: { spatial_merge_size: 2 } }, frames: 2 },
  video25: { config: { model_type: 'qwen2_5_vl', ...IDS, vision_config: { spatial_merge_size: 2, tokens_per_second: 2 } }, frames: 2, secondPerGridTs: [1] },
};
const VISION_END = 151653;
// the two text models' M-RoPE: head_dim 128, rope_theta and rope_scaling.mrope_section of their config.json
const LAYOUTS = [
  { id: 'chunked', model: 'Qwen2-VL / Qwen2.5-VL', base: 1e6, section: [16, 24, 24], interleaved: false },
  { id: 'interleaved', model: 'Qwen3-VL', base: 5e6, section: [24, 20, 20], interleaved: true },
];
const HEAD_DIM = 128;

addStyle('pe-mrope', `
.pe-widget .pe-mr-seq { display: flex; flex-wrap: wrap; gap: .35rem; align-items: center; margin: .4rem 0 .6rem; }
.pe-widget .pe-mr-tok { font: inherit; font-size: .78rem; line-height: 1.25; padding: .15rem .3rem; border: 1px solid #c9d0d6; border-radius: 5px;
  background: #f7f9fa; color: #1d232a; cursor: pointer; text-align: center; min-width: 2.6rem; font-variant-numeric: tabular-nums; }
.pe-widget .pe-mr-tok[aria-pressed="true"] { border-color: #e08a00; box-shadow: 0 0 0 2px #e08a00 inset; }
.pe-widget .pe-mr-tok .pe-mr-word { display: block; font-weight: 600; }
.pe-widget .pe-mr-tok .pe-mr-thw { display: block; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .72rem; color: #4f5963; }
.pe-widget .pe-mr-img { display: grid; gap: 2px; padding: 3px; border: 2px dashed #8fa3b5; border-radius: 6px; }
.pe-widget .pe-mr-img .pe-mr-tok { min-width: 0; padding: .1rem .15rem; background: #eef4fa; }
.pe-widget .pe-mr-strip svg { display: block; width: 100%; height: auto; }
.pe-widget .pe-mr-strip figcaption { margin: .1rem 0 .2rem; }
.pe-widget .pe-mr-key { display: inline-flex; gap: .8rem; flex-wrap: wrap; font-size: .78rem; }
.pe-widget .pe-mr-key i { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .3em; vertical-align: -.05em; }
`);

registerStrings({
  en: {
    'mr.title': 'Three positions per token: time, height, width',
    'mr.intro': 'A vision-language model reads an image as a grid of patch tokens inside the text. M-RoPE gives every token three positions. Text tokens carry the same number three times, so for text it is plain RoPE; the image’s patches share one time t and take their row and column as h and w.',
    'mr.rows': 'rows (merged patches)',
    'mr.cols': 'columns (merged patches)',
    'mr.seq': 'The prompt’s tokens and their positions (t, h, w), from pe.mropePositions; click a token to select it',
    'mr.image': 'image: {r} × {c} merged patches (grid_thw = [1, {h}, {w}] before the 2 × 2 merge)',
    'mr.after': 'After the image or video, text resumes at {p} = 1 + the largest position it used, not at the token count {n}: rope_deltas is {d}.',
    'mr.tok.vs': 'vision start token',
    'mr.tok.ve': 'vision end token',
    'mr.tok.patch': 'image patch, row {r}, column {c}',
    'mr.tok.frame': 'video patch, frame {f}, row {r}, column {c}',
    'mr.media': 'input',
    'mr.media.image': 'an image (Qwen2-VL)',
    'mr.media.video': 'a 2-frame video, Qwen2-VL (t counts frames)',
    'mr.media.video25': 'a 2-frame video, Qwen2.5-VL (t counts time)',
    'mr.video': 'video: {t} temporal patches of {r} × {c} merged patches (video_grid_thw = [{t}, {h}, {w}])',
    'mr.w.0': 'Describe',
    'mr.w.1': 'this',
    'mr.w.2': 'image',
    'mr.w.3': 'It',
    'mr.w.4': 'shows',
    'mr.w.5': 'a cat',
    'mr.pairs': 'Which frequency pairs read which position',
    'mr.pairsIntro': 'Each of the 64 frequency pairs of a 128-dimensional head turns by one of the three positions. Chunked layouts give t the fastest pairs and w only the slowest; Qwen3-VL interleaves them, so each axis has fast and slow pairs. The lower row of each strip is the selected token’s cos of each pair’s angle.',
    'mr.layout': ': {kind}, mrope_section [{s}], rope_theta {b}',
    'mr.chunked': 'chunked',
    'mr.interleaved': 'interleaved',
    'mr.axisT': 't (time)',
    'mr.axisH': 'h (height: row)',
    'mr.axisW': 'w (width: column)',
    'mr.table.layout': 'layout',
    'mr.table.axis': 'axis',
    'mr.table.pairs': 'pairs',
    'mr.table.wl': 'wavelengths (tokens)',
    'mr.selected': 'Selected: {tok} at (t, h, w) = ({t}, {h}, {w}).',
    'mr.pairTitle': 'pair {j}: reads {a} = {p}, angle {p} · θ_{j}, cos {c}',
    'mr.note': 'With all three positions equal (text), every pair reads the same number and M-RoPE is plain RoPE bit for bit. In Qwen3-VL’s interleaved layout the rule is: pair j reads h if j mod 3 = 1 and j < 3·s_h, w if j mod 3 = 2 and j < 3·s_w, otherwise t, so [24, 20, 20] leaves pairs 60–63 on t.',
  },
  zh: {
    'mr.title': '每个词元三个位置：时间、高度、宽度',
    'mr.intro': '视觉语言模型把图像读成夹在文本中间的一格格图块词元。M-RoPE 给每个词元三个位置。文本词元的三个位置是同一个数，所以对文本来说就是普通的 RoPE；图像的各个图块共用一个时间 t，并以所在的行和列作为 h 和 w。在视频中 t 随帧前进：Qwen2-VL 按帧计数，Qwen2.5-VL 按时间计数（每秒 tokens_per_second 个位置）。',
    'mr.rows': '行数（合并后的图块）',
    'mr.cols': '列数（合并后的图块）',
    'mr.seq': '提示词中的词元及其位置 (t, h, w)，由 pe.mropePositions 算出；点击词元可选中它',
    'mr.image': '图像：{r} × {c} 个合并后的图块（2 × 2 合并前 grid_thw = [1, {h}, {w}]）',
    'mr.after': '图像或视频之后，文本从 {p} 继续，即它用到的最大位置加 1，而不是词元个数 {n}：rope_deltas 为 {d}。',
    'mr.tok.vs': '视觉起始词元',
    'mr.tok.ve': '视觉结束词元',
    'mr.tok.patch': '图块，第 {r} 行，第 {c} 列',
    'mr.tok.frame': '视频图块，第 {f} 帧，第 {r} 行，第 {c} 列',
    'mr.media': '输入',
    'mr.media.image': '一张图像（Qwen2-VL）',
    'mr.media.video': '两帧视频，Qwen2-VL（t 数帧）',
    'mr.media.video25': '两帧视频，Qwen2.5-VL（t 数时间）',
    'mr.video': '视频：{t} 个时间块，每块 {r} × {c} 个合并后的图块（video_grid_thw = [{t}, {h}, {w}]）',
    'mr.w.0': '描述',
    'mr.w.1': '这张',
    'mr.w.2': '图片',
    'mr.w.3': '图中',
    'mr.w.4': '是',
    'mr.w.5': '一只猫',
    'mr.pairs': '哪些频率对读取哪个位置',
    'mr.pairsIntro': '128 维注意力头共有 64 个频率对，每一对按三个位置之一旋转。分块布局把最快的几对给 t，w 只分到最慢的几对；Qwen3-VL 把三者交错排列，于是每个轴都有快有慢。每条色带的下一行是选中词元每一对角度的 cos。',
    'mr.layout': '：{kind}，mrope_section [{s}]，rope_theta {b}',
    'mr.chunked': '分块',
    'mr.interleaved': '交错',
    'mr.axisT': 't（时间）',
    'mr.axisH': 'h（高度：行）',
    'mr.axisW': 'w（宽度：列）',
    'mr.table.layout': '布局',
    'mr.table.axis': '轴',
    'mr.table.pairs': '频率对',
    'mr.table.wl': '波长（词元）',
    'mr.selected': '选中：{tok}，位置 (t, h, w) = ({t}, {h}, {w})。',
    'mr.pairTitle': '第 {j} 对：读取 {a} = {p}，角度 {p} · θ_{j}，cos 为 {c}',
    'mr.note': '三个位置相等时（文本），每一对读到的都是同一个数，M-RoPE 与普通 RoPE 逐位相同。Qwen3-VL 的交错布局规则是：j 除以 3 余 1 且 j < 3·s_h 时第 j 对读 h，余 2 且 j < 3·s_w 时读 w，否则读 t；所以 [24, 20, 20] 让第 60–63 对留在 t 上。',
  },
});

/** The prompt: 3 words, vision start, frames·rows·cols image or video tokens, vision end, 3 words. */
function prompt(rows, cols, frames) {
  const toks = [0, 1, 2].map((i) => ({ kind: 'word', i, id: 1000 + i }));
  toks.push({ kind: 'vs', id: IDS.vision_start_token_id });
  const id = frames > 1 ? IDS.video_token_id : IDS.image_token_id;
  for (let f = 0; f < frames; f++) for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) toks.push({ kind: 'patch', f, r, c, id });
  toks.push({ kind: 've', id: VISION_END });
  for (const i of [3, 4, 5]) toks.push({ kind: 'word', i, id: 1000 + i });
  return toks;
}

class PeMrope extends PeElement {
  static attrs = {
    rows: { type: 'int', default: 3, min: 1, max: 4 },
    cols: { type: 'int', default: 4, min: 1, max: 6 },
    token: { type: 'int', default: 5, min: 0, max: 60 },
    media: { type: 'enum', values: Object.keys(MEDIA), default: 'image' },
  };

  render() {
    this.body.append(h('h3', {}, this.t('mr.title')), h('p', {}, this.t('mr.intro')),
      tex(h('div'), '\\qc{\\tilde q_{(t,h,w)}[j]} = R\\big(p_{a(j)}\\,\\theta_j\\big)\\,\\qc{q[j]},\\quad a(j) \\in \\{t, h, w\\},\\quad \\theta_j = b^{-2j/d}', { display: true }),
      controls(range(this, { key: 'rows', label: 'mr.rows', min: 1, max: 4 }), range(this, { key: 'cols', label: 'mr.cols', min: 1, max: 6 }),
        select(this, { key: 'media', label: 'mr.media', options: Object.keys(MEDIA).map((k) => [k, `mr.media.${k}`]) })),
      h('h4', {}, this.t('mr.seq')),
      this.seqBox = h('div', { class: 'pe-mr-seq' }),
      this.afterLine = h('p', { class: 'pe-note' }),
      h('h4', {}, this.t('mr.pairs')), h('p', {}, this.t('mr.pairsIntro')),
      this.selLine = h('p', { 'aria-live': 'polite' }),
      h('div', { class: 'pe-mr-key' }, AXIS.map((a, i) => h('span', {}, h('i', { style: { background: AXIS_COLOR[i] } }), this.t(`mr.axis${a.toUpperCase()}`)))),
      this.strips = h('div', { class: 'pe-row' }),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      h('p', { class: 'pe-note' }, this.t('mr.note')));
  }

  label(tok) {
    if (tok.kind === 'word') return this.t(`mr.w.${tok.i}`);
    if (tok.kind === 'vs') return '⟨vision⟩';
    if (tok.kind === 've') return '⟨/vision⟩';
    return '';
  }

  draw() {
    const { rows, cols } = this.state;
    const M = MEDIA[this.state.media];
    const T = M.frames;
    const toks = prompt(rows, cols, T);
    const n = toks.length;
    const grid = [[T, 2 * rows, 2 * cols]];
    const { positions, deltas } = this.pe.mropePositions(toks.map((x) => x.id), T > 1
      ? { config: M.config, videoGridThw: grid, secondPerGridTs: M.secondPerGridTs ?? null }
      : { config: M.config, imageGridThw: grid });
    const pos = (i) => [positions[i], positions[n + i], positions[2 * n + i]];
    const sel = Math.min(this.state.token, n - 1);
    const button = (tok, i) => {
      const [t, hh, w] = pos(i);
      const title = tok.kind === 'patch' ? this.t(T > 1 ? 'mr.tok.frame' : 'mr.tok.patch', { f: tok.f, r: tok.r, c: tok.c }) : tok.kind === 'word' ? this.label(tok) : this.t(`mr.tok.${tok.kind}`);
      return h('button', {
        type: 'button', class: 'pe-mr-tok', 'data-i': String(i), 'data-thw': `${t},${hh},${w}`, 'aria-pressed': String(i === sel), title,
        onclick: () => this.setState({ token: i }),
      }, tok.kind === 'patch' ? null : h('span', { class: 'pe-mr-word', translate: tok.kind === 'word' ? null : 'no' }, this.label(tok)),
      h('span', { class: 'pe-mr-thw', translate: 'no' }, `${t},${hh},${w}`));
    };
    const what = this.t(T > 1 ? 'mr.video' : 'mr.image', { r: rows, c: cols, t: T, h: 2 * rows, w: 2 * cols });
    const blocks = Array.from({ length: T }, () => h('div', { class: 'pe-mr-img', role: 'group', 'aria-label': what, title: what, style: { gridTemplateColumns: `repeat(${cols}, 3.2rem)` } }));
    const items = [];
    toks.forEach((tok, i) => {
      if (tok.kind === 'patch') {
        if (!blocks[tok.f].childElementCount) items.push(blocks[tok.f]);
        blocks[tok.f].append(button(tok, i));
      } else items.push(button(tok, i));
    });
    this.seqBox.replaceChildren(...items);
    const firstAfter = toks.findIndex((x) => x.kind === 'word' && x.i === 3);
    this.afterLine.textContent = this.t('mr.after', { p: positions[firstAfter], n: firstAfter, d: deltas[0] });

    const [t, hh, w] = pos(sel);
    const selTok = toks[sel];
    const name = selTok.kind === 'patch' ? this.t(T > 1 ? 'mr.tok.frame' : 'mr.tok.patch', { f: selTok.f, r: selTok.r, c: selTok.c }) : selTok.kind === 'word' ? `“${this.label(selTok)}”` : this.t(`mr.tok.${selTok.kind}`);
    this.selLine.textContent = this.t('mr.selected', { tok: name, t, h: hh, w });
    this.dataset.selected = `${t},${hh},${w}`;

    const tableRows = [];
    this.strips.replaceChildren(...LAYOUTS.map((L) => {
      const rope = this.own(this.pe.rope({ headDim: HEAD_DIM, base: L.base, mrope: { section: L.section, interleaved: L.interleaved } }));
      const axis = Array.from(rope.mrope.pairAxis);
      const inv = rope.invFreq64();
      const { cos } = rope.cosSin(Int32Array.of(t, hh, w));
      this.release(rope);
      const P = axis.length, cw = 10, gap = 1;
      const cells = [];
      for (let j = 0; j < P; j++) {
        const x = j * cw;
        const c = cos[j];
        const title = this.t('mr.pairTitle', { j, a: AXIS[axis[j]], p: [t, hh, w][axis[j]], c: fmt(c, 3) });
        cells.push(svg('rect', { x, y: 0, width: cw - gap, height: 14, fill: AXIS_COLOR[axis[j]], 'data-pair': String(j), 'data-axis': AXIS[axis[j]] }, svg('title', {}, title)),
          svg('rect', { x, y: 16, width: cw - gap, height: 14, fill: `rgb(${colour(c, 1).map(Math.round).join(' ')})`, 'data-cos': String(c), 'data-pair': String(j) }, svg('title', {}, title)));
      }
      for (const j of [0, 16, 32, 48, 63]) cells.push(svg('text', { x: j * cw + cw / 2, y: 42, 'font-size': 9, 'text-anchor': 'middle', fill: '#4f5963' }, String(j)));
      const spans = AXIS.map((_, a) => {
        const js = axis.map((x, j) => (x === a ? j : -1)).filter((j) => j >= 0);
        const wl = js.map((j) => (2 * Math.PI) / inv[j]);
        return { a, count: js.length, lo: Math.min(...wl), hi: Math.max(...wl) };
      });
      for (const s of spans) {
        tableRows.push(h('tr', { 'data-layout': L.id, 'data-axis': AXIS[s.a], 'data-pairs': String(s.count) },
          h('td', { style: { textAlign: 'left' } }, this.t(`mr.${L.id}`)),
          h('td', { style: { textAlign: 'left' } }, h('i', { class: 'pe-ra-dot', style: { display: 'inline-block', width: '.7em', height: '.7em', background: AXIS_COLOR[s.a], marginRight: '.3em', borderRadius: '2px' } }), AXIS[s.a]),
          h('td', {}, String(s.count)), h('td', {}, `${fmt(s.lo, 3)} … ${fmt(s.hi, 3)}`)));
      }
      return h('figure', { class: 'pe-mr-strip', 'data-layout': L.id },
        h('figcaption', {}, h('span', { translate: 'no' }, L.model), this.t('mr.layout', { kind: this.t(`mr.${L.id}`), s: L.section.join(', '), b: fmt(L.base, 2) })),
        svg('svg', { viewBox: `0 0 ${P * cw} 46`, role: 'img', 'aria-label': L.model + this.t('mr.layout', { kind: this.t(`mr.${L.id}`), s: L.section.join(', '), b: fmt(L.base, 2) }) }, cells));
    }));
    this.tableBox.replaceChildren(h('table', { class: 'pe-table pe-mr-table' },
      h('tr', {}, ['mr.table.layout', 'mr.table.axis', 'mr.table.pairs', 'mr.table.wl'].map((k) => h('th', {}, this.t(k)))), tableRows));
  }
}

define('pe-mrope', PeMrope);
