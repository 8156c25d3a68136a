// <pe-aliasing>: 16-bit position ids. A runtime that keeps position_ids (or the positions it multiplies by
// inv_freq) in float16 or bfloat16 cannot tell neighbouring tokens apart once the positions outgrow the
// format's significand: float16 stores 11 significant bits, so above 2048 positions round to even numbers,
// above 4096 to multiples of 4, above 8192 to multiples of 8; bfloat16 stores 8, so above 256 already.
// Tokens that share a rounded id get the same rotation: the model sees them at one position. posenc takes
// positions as int32 and forms p·θ in double, so each token keeps its own angle.
//
// Shown: a run of consecutive positions from `start`, each with its float16 and bfloat16 value (a repeated
// value is marked), the number of distinct positions the run keeps, and the fastest pair's cos at each from
// pe.rope().cosSin (exact positions against the rounded ones).
// Attributes: start (default 4096), count (default 8), head-dim (default 64), base (default 10000).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select } from './lib/controls.js';
import { f16, bf16 } from './lib/floats.js';

registerStrings({
  en: {
    'al.title': '16-bit position ids: neighbours that become one position',
    'al.intro': 'Some runtimes keep the position ids, or the positions multiplied by the frequencies, in the model’s 16-bit dtype. float16 has 11 significant bits: above 2048 every position rounds to an even number, above 4096 to a multiple of 4. bfloat16 has 8, so the trouble starts above 256. Tokens whose ids round to the same value get the same rotation.',
    'al.start': 'first position',
    'al.count': 'tokens in the run',
    'al.pos': 'position',
    'al.spacing': 'spacing of representable positions here: float16 {a}, bfloat16 {b}',
    'al.distinct': '{n} consecutive tokens keep {f16} distinct positions in float16, {bf16} in bfloat16, {ours} in posenc (int32 positions, angles in double).',
    'al.cos': 'cos of the fastest pair (θ₀ = 1 rad per position)',
    'al.exact': 'posenc (exact)',
    'al.same': 'same value as the token before',
    'al.fix': 'The fix is to keep positions as integers (int32 or int64) and form the angle in float32 or better, as posenc does in double: the 16-bit dtype is for the activations, not for counting.',
  },
  zh: {
    'al.title': '16 位位置编号：相邻的词元变成同一个位置',
    'al.intro': '有些运行时把位置编号（或位置与频率的乘积）存成模型的 16 位数据类型。float16 只有 11 位有效数字：超过 2048 后每个位置都舍入为偶数，超过 4096 后舍入为 4 的倍数。bfloat16 只有 8 位，超过 256 就出问题。编号舍入到同一个值的词元得到完全相同的旋转。',
    'al.start': '起始位置',
    'al.count': '连续词元个数',
    'al.pos': '位置',
    'al.spacing': '此处可表示位置的间隔：float16 为 {a}，bfloat16 为 {b}',
    'al.distinct': '{n} 个连续词元在 float16 中只剩 {f16} 个不同位置，在 bfloat16 中剩 {bf16} 个，在 posenc 中为 {ours} 个（int32 位置，双精度角度）。',
    'al.cos': '最快一对维度的 cos（θ₀ = 每个位置 1 弧度）',
    'al.exact': 'posenc（精确）',
    'al.same': '与前一个词元的值相同',
    'al.fix': '解决办法是把位置保存为整数（int32 或 int64），并用 float32 或更高精度计算角度（posenc 用双精度）：16 位类型用于激活值，而不是用来计数。',
  },
});

const spacing = (x, bits) => (x < 1 ? 0 : 2 ** Math.max(0, Math.floor(Math.log2(x)) - (bits - 1)));

class PeAliasing extends PeElement {
  static attrs = {
    start: { type: 'int', default: 4096, min: 0, max: 60000 },
    count: { type: 'int', default: 8, min: 2, max: 16 },
    'head-dim': { type: 'int', default: 64, min: 2, max: 256 },
    base: { type: 'number', default: 10000, min: 2 },
  };

  render() {
    this.body.append(h('h3', {}, this.t('al.title')), h('p', {}, this.t('al.intro')),
      controls(
        range(this, { key: 'start', label: 'al.start', min: 0, max: 60000, step: 1, log: false }),
        select(this, { key: 'count', label: 'al.count', raw: true, options: [4, 8, 12, 16].map((n) => [n, String(n)]) })),
      this.spacingLine = h('p', { class: 'pe-note' }),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      this.summary = h('p', { 'aria-live': 'polite' }),
      h('p', { class: 'pe-note' }, this.t('al.fix')));
  }

  draw() {
    const { start, count, headDim, base } = this.state;
    const ps = Array.from({ length: count }, (_, i) => start + i);
    const half = ps.map(f16), brain = ps.map(bf16);
    const rope = this.own(this.pe.rope({ headDim, base }));
    const nFreq = headDim / 2;
    // the fastest pair's cos at the exact and at the rounded positions, through the library
    const cosAt = (positions) => {
      const { cos } = rope.cosSin(Int32Array.from(positions.map((p) => Math.min(p, 2 ** 31 - 1))));
      return positions.map((_, i) => cos[i * nFreq]);
    };
    const exact = cosAt(ps), c16 = cosAt(half), cb16 = cosAt(brain);
    this.release(rope);
    this.spacingLine.textContent = this.t('al.spacing', { a: String(spacing(start, 11)), b: String(spacing(start, 8)) });
    const same = (arr, i) => i > 0 && arr[i] === arr[i - 1];
    const cell = (arr, i, text) => h('td', same(arr, i) ? { class: 'pe-al-same', title: this.t('al.same') } : {}, text);
    const row = (label, cells) => h('tr', {}, h('th', { scope: 'row' }, label), ...cells);
    this.tableBox.replaceChildren(h('table', { class: 'pe-table pe-al-table' },
      h('thead', {}, row(this.t('al.pos'), ps.map((p) => h('th', { scope: 'col' }, String(p))))),
      h('tbody', {},
        row('float16', half.map((v, i) => cell(half, i, String(v)))),
        row('bfloat16', brain.map((v, i) => cell(brain, i, String(v)))),
        row(this.t('al.exact'), ps.map((p) => h('td', {}, String(p)))),
        h('tr', {}, h('th', { colspan: String(count + 1), class: 'pe-al-sub' }, this.t('al.cos'))),
        row('float16', c16.map((v, i) => cell(half, i, fmt(v, 3)))),
        row('bfloat16', cb16.map((v, i) => cell(brain, i, fmt(v, 3)))),
        row(this.t('al.exact'), exact.map((v) => h('td', {}, fmt(v, 3)))))));
    const distinct = (arr) => new Set(arr).size;
    const counts = { n: count, f16: distinct(half), bf16: distinct(brain), ours: distinct(ps) };
    this.summary.textContent = this.t('al.distinct', counts);
    this.dataset.distinct = `${counts.f16},${counts.bf16},${counts.ours}`;
  }
}

define('pe-aliasing', PeAliasing);
