// <pe-precision>: how far the RoPE angle p·θ_i drifts when it is formed in float32, float16 or bfloat16,
// against position, next to posenc (pe.rope().cosSin: angles formed and range-reduced in double, one rounding
// of cos and sin to float32).
//
// The reference is p·θ_i in double from rope.invFreq64(). A format F computes what a naive implementation
// does: F(F(p) · F(θ_i)) (positions and inverse frequencies cast to F, their product rounded to F, as
// torch.outer(t, inv_freq) in that dtype). posenc's angle is read back from its float32 cos and sin as
// atan2(sin, cos), so its error includes the rounding of cos and sin themselves.
//
// Attributes: head-dim (default 128), base (default 500000, Llama 3), freq (index i, default 1),
// max-position (default 1000000).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { chart } from './lib/chart.js';
import { controls, range, select, withValue } from './lib/controls.js';
import { texRow } from './lib/math.js';
import { f32, f16, bf16, angleDiff } from './lib/floats.js';

registerStrings({
  en: {
    'prec.headDim': 'head dim',
    'prec.base': 'base (rope_theta)',
    'prec.freq': 'frequency index i',
    'prec.maxPos': 'up to position',
    'prec.chart': 'Angle error |angle − p·θᵢ| against position (θᵢ = {th})',
    'prec.err': 'angle error (rad)',
    'prec.f32': 'float32 (e.g. HF float32 path)',
    'prec.f16': 'float16',
    'prec.bf16': 'bfloat16',
    'prec.ours': 'posenc (double angle, float32 cos/sin)',
    'prec.table': 'Angle error at selected positions (radians; “overflow”: the position is not representable)',
    'prec.pos': 'position',
    'prec.overflow': 'overflow',
    'prec.text': 'float32 has a 24-bit significand: near p = 10⁶ adjacent float32 numbers are 0.0625 apart, so rounding the angle p·θᵢ to float32 moves it by up to 0.031 rad there, and θᵢ rounded to float32 adds p times its own rounding error: at p = {p} the table shows {e} rad for this pair. float16 cannot even store positions past 2048 exactly (and overflows at 65504); bfloat16 keeps only 8 significant bits, so position 257 already becomes 256. posenc forms p·θ_i in double, reduces it there, and rounds only the final cos and sin to float32.',
    'prec.gaps': 'Gaps in a line are exact zeros (or overflow); the axes are logarithmic.',
  },
  zh: {
    'prec.headDim': '头维度',
    'prec.base': '底数（rope_theta）',
    'prec.freq': '频率序号 i',
    'prec.maxPos': '最大位置',
    'prec.chart': '角度误差 |角度 − p·θᵢ| 随位置的变化（θᵢ = {th}）',
    'prec.err': '角度误差（弧度）',
    'prec.f32': 'float32（如 HF 的 float32 计算路径）',
    'prec.f16': 'float16（半精度）',
    'prec.bf16': 'bfloat16（脑浮点）',
    'prec.ours': 'posenc（双精度角度，float32 的 cos/sin）',
    'prec.table': '若干位置上的角度误差（弧度；“溢出”表示该位置无法表示）',
    'prec.pos': '位置',
    'prec.overflow': '溢出',
    'prec.text': 'float32 的有效数字只有 24 位：在 p = 10⁶ 附近，相邻两个 float32 数相差 0.0625，因此把角度 p·θᵢ 舍入为 float32 会让它偏差最多 0.031 弧度，而 θᵢ 本身舍入为 float32 又带来 p 倍的误差：表中 p = {p} 时这一对的误差为 {e} 弧度。float16 连 2048 以上的位置都无法精确存储（在 65504 处溢出）；bfloat16 只保留 8 位有效数字，位置 257 就已变成 256。posenc 用双精度计算 p·θ_i 并在双精度下做周期约化，只把最终的 cos 和 sin 舍入为 float32。',
    'prec.gaps': '折线中的空缺表示误差恰好为零（或溢出）；两条坐标轴都是对数刻度。',
  },
});

const FORMATS = [
  ['f32', f32, '#2f6db5'],
  ['f16', f16, '#d68910'],
  ['bf16', bf16, '#8e44ad'],
];

class PePrecision extends PeElement {
  static attrs = {
    'head-dim': { type: 'int', default: 128, min: 2, max: 512 },
    base: { type: 'number', default: 500000, min: 2 },
    freq: { type: 'int', default: 1, min: 0, max: 255 },
    'max-position': { type: 'int', default: 1000000, min: 100, max: 100000000 },
  };

  static rebuildOn = ['headDim'];

  render() {
    const hd = this.state.headDim;
    this.body.append(
      texRow(['\\theta_i = \\mathrm{base}^{-2i/d}', '\\varepsilon_F(p) = \\bigl|\\,F\\bigl(F(p)\\cdot F(\\theta_i)\\bigr) - p\\,\\theta_i\\,\\bigr| \\bmod 2\\pi']),
      controls(
        select(this, { key: 'headDim', label: 'prec.headDim', raw: true, options: withValue([64, 128, 256], hd).map((v) => [v, String(v)]) }),
        select(this, { key: 'base', label: 'prec.base', raw: true, options: withValue([10000, 500000, 1000000], this.state.base).map((v) => [v, String(v)]) }),
        range(this, { key: 'freq', label: 'prec.freq', min: 0, max: hd / 2 - 1 }),
        select(this, { key: 'maxPosition', label: 'prec.maxPos', raw: true, options: withValue([10000, 100000, 1000000, 10000000], this.state.maxPosition).map((v) => [v, v.toLocaleString('en-US')]) }),
      ),
      this.chartTitle = h('h4'),
      this.chartBox = h('div'),
      h('p', { class: 'pe-note' }, this.t('prec.gaps')),
      h('h4', {}, this.t('prec.table')),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      this.textNote = h('p', { class: 'pe-note' }),
    );
  }

  draw() {
    const { headDim, base, maxPosition } = this.state;
    const rope = this.pe.rope({ headDim, base });
    try {
      const nf = rope.nFreq;
      const i = Math.min(this.state.freq, nf - 1);
      const theta = rope.invFreq64()[i];
      // positions: log-spaced integers 1 .. maxPosition, plus the table's
      const marks = [100, 1000, 10000, 100000, 1000000, 10000000].filter((p) => p <= maxPosition);
      const set = new Set(marks);
      const N = 240;
      for (let k = 0; k <= N; k++) set.add(Math.max(1, Math.round(maxPosition ** (k / N))));
      const positions = Int32Array.from([...set].sort((a, b) => a - b));
      const { cos, sin } = rope.cosSin(positions);
      const errs = { ours: new Float64Array(positions.length) };
      for (const [id, F] of FORMATS) {
        const e = new Float64Array(positions.length);
        const thF = F(theta);
        positions.forEach((p, k) => {
          const a = F(F(p) * thF);
          e[k] = Number.isFinite(a) ? Math.abs(angleDiff(a, p * theta)) : NaN;
        });
        errs[id] = e;
      }
      positions.forEach((p, k) => {
        errs.ours[k] = Math.abs(angleDiff(Math.atan2(sin[k * nf + i], cos[k * nf + i]), p * theta));
      });
      this.chartTitle.textContent = this.t('prec.chart', { th: fmt(theta, 4) });
      chart(this.chartBox, {
        x: positions,
        series: [
          ...FORMATS.map(([id, , color]) => ({ label: this.t(`prec.${id}`), values: errs[id], color })),
          { label: this.t('prec.ours'), values: errs.ours, color: '#27864a', width: 2.5 },
        ],
        xLabel: this.t('pe.position'), yLabel: this.t('prec.err'), logX: true, logY: true, height: 300, ySize: 64,
        label: this.chartTitle.textContent,
      });
      const cell = (v) => (Number.isNaN(v) ? this.t('prec.overflow') : fmt(v, 3));
      const idx = marks.map((p) => positions.indexOf(p));
      this.tableBox.replaceChildren(h('table', { class: 'pe-table' },
        h('thead', {}, h('tr', {}, h('th', {}, this.t('prec.pos')), ...['float32', 'float16', 'bfloat16', 'posenc'].map((name) => h('th', {}, name)))),
        h('tbody', {}, idx.map((k) => h('tr', {}, h('td', {}, positions[k].toLocaleString('en-US')),
          ...[...FORMATS.map(([id]) => id), 'ours'].map((id) => h('td', { class: id === 'ours' ? 'pe-good' : '' }, cell(errs[id][k]))))))));
      const last = idx[idx.length - 1];
      this.dataset.errors = JSON.stringify({ position: positions[last], f32: errs.f32[last], ours: errs.ours[last] });
      this.textNote.textContent = this.t('prec.text', { p: positions[last].toLocaleString('en-US'), e: fmt(errs.f32[last], 3) });
    } finally {
      rope.free();
    }
  }
}

define('pe-precision', PePrecision);
