// <pe-pitfalls>: four RoPE mistakes, each shown live with numbers from the posenc API (rope.apply, rope.cosSin,
// rope.invFreq / invFreq64).
//
// Sections (choose with `sections`):
//   pairing  weights trained with one pairing (GPT-J interleaved, or NeoX / Llama half-split) run with the
//            other: the score against m − n is a different curve, until q and k rows are permuted (what Hugging
//            Face's Llama conversion script does to Meta's interleaved checkpoints)
//   fast     which dimensions turn fast: small i is the HIGH frequency, θᵢ = b^(−2i/d); one clock hand per
//            pair at position p
//   score    the full score Re[Σᵢ q₍ᵢ₎ k̄₍ᵢ₎ e^(i(m−n)θᵢ)] has cos AND sin terms; the cos-only form often
//            written is not the score (it is even in m − n; the real score is not)
//   drift    float32 angles at large positions: pe's cos/sin (angle formed and reduced in double) against the
//            float32 recipe (float32 inv_freq, float32 position · inv_freq, then cos/sin), emulated with
//            Math.fround
//
// Attributes (all optional):
//   sections      comma list of pairing, fast, score, drift (default all four)
//   head-dim      head dimension d (even, 4..256; default 16)
//   base          RoPE base b (default 10000)
//   checkpoint    half | interleaved: the pairing the weights were trained with (default interleaved)
//   runtime       half | interleaved: the pairing the code applies (default half)
//   permute       convert the q and k rows for the runtime pairing (default off)
//   position      position p of the clocks (default 10)
//   distance      the m − n the score section reads out (default 5)
//   max-position  largest position of the drift chart (default 1000000; up to 2147483647)
//   drift-pair    frequency pair of the drift chart (default 1; pair 0 has θ = 1, exact in float32)
//   seed          seed of the random q and k (default 1)
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key

import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select, checkbox, button } from './lib/controls.js';
import { chart, PALETTE } from './lib/chart.js';
import { texRow } from './lib/math.js';
import { svg } from './lib/dom.js';
import { gaussian } from './lib/random.js';
import { pairIndex } from './lib/pairing.js';
import { wrapAngle } from './lib/angles.js';

registerStrings({
  en: {
    'pf.title': 'RoPE pitfalls, shown live',
    'pf.intro': 'Four mistakes that are easy to make and easy to miss: each one below is computed, not just described.',
    'pf.headDim': 'head dim d',
    'pf.base': 'base b',
    'pf.newQK': 'New random q and k',
    'pf.pairing.title': '1 · The pairing mix-up',
    'pf.pairing.text': 'GPT-J (and Meta’s original Llama code) rotates neighbouring dimensions (x₀, x₁), (x₂, x₃), …; GPT-NeoX and Hugging Face’s Llama rotate the two halves (xᵢ, x_(i+d/2)). Load weights trained one way into code written the other way and nothing crashes: the scores are just wrong. The fix is to permute the q and k projection rows once, when converting the checkpoint.',
    'pf.checkpoint': 'weights trained with',
    'pf.runtime': 'code applies',
    'pf.permute': 'permute q/k rows when converting',
    'pf.half': 'half-split (NeoX, HF Llama)',
    'pf.interleaved': 'interleaved (GPT-J, Meta Llama)',
    'pf.pairing.right': 'as trained',
    'pf.pairing.run': 'as run',
    'pf.pairing.x': 'relative position m − n',
    'pf.pairing.y': 'score q̃·k̃',
    'pf.pairing.ok': 'Same scores as training (largest difference {d}).',
    'pf.pairing.bad': 'Wrong scores: off by up to {d} (typical score size {s}).',
    'pf.pairing.layout': 'q as the code sees it (colour = the pair the weights were trained to rotate together)',
    'pf.fast.title': '2 · Which dimensions turn fast',
    'pf.fast.text': 'θᵢ = b^(−2i/d) falls with i: pair 0 turns by 1 radian per token, the last pair almost not at all. Small i is the high frequency, large i the low one — explainers often say the opposite.',
    'pf.position': 'position p',
    'pf.clock': 'pair {i}: θ = {t} rad/token, angle p·θ = {a} rad',
    'pf.fast.summary': 'Pair 0 turns {t0} rad per token (a full turn every {w0} tokens); pair {last} turns {tl} rad per token (a full turn every {wl} tokens).',
    'pf.fast.x': 'pair i',
    'pf.fast.y': 'θᵢ (rad per token)',
    'pf.fast.theta': 'θᵢ from rope.invFreq',
    'pf.score.title': '3 · The score has a sin part',
    'pf.score.text': 'Written with complex pairs q₍ᵢ₎ = x_a + i·x_b, the RoPE score is the real part below. Expanding it gives a cos term and a sin term for every pair. The cos-only form that is often written is not the score: it is symmetric in m − n, and the real score is not.',
    'pf.distance': 'relative position m − n',
    'pf.score.pe': 'q̃·k̃ from rope.apply',
    'pf.score.full': 'cos + sin terms',
    'pf.score.cos': 'cos terms only',
    'pf.score.x': 'relative position m − n',
    'pf.score.y': 'score',
    'pf.score.row': 'at m − n = {r}',
    'pf.score.mirror': 'at m − n = −{r}',
    'pf.score.quantity': 'form',
    'pf.drift.title': '4 · float32 angles drift at large positions',
    'pf.drift.text': 'The usual recipe forms the angle p·θ in float32. Near position 10⁶ a float32 angle has a spacing of about 0.06 rad, so cos and sin are computed for the wrong angle. posenc forms and reduces the angle in double before the float32 cos/sin.',
    'pf.drift.pair': 'frequency pair i',
    'pf.drift.max': 'largest position',
    'pf.drift.f32': 'float32 angle (fround emulation)',
    'pf.drift.pe': 'posenc rope.cosSin',
    'pf.drift.x': 'position p',
    'pf.drift.y': '|angle error| (rad)',
    'pf.drift.at': 'At position {p}: float32 is off by {e32} rad ({deg}°), posenc by {epe} rad.',
    'pf.drift.exact': 'Pair 0 has θ = 1, so its float32 angle p·1 is exact up to 2²⁴ = 16777216: choose another pair, or a larger position, to see the drift.',
  },
  zh: {
    'pf.title': 'RoPE 的常见陷阱（实时演示）',
    'pf.intro': '四个容易犯、又容易看漏的错误：下面每一个都是实际算出来的，而不只是描述。',
    'pf.headDim': '头维度 d',
    'pf.base': '底数 b',
    'pf.newQK': '换一组随机的 q 和 k',
    'pf.pairing.title': '1 · 配对方式混淆',
    'pf.pairing.text': 'GPT-J（以及 Meta 最初的 Llama 代码）旋转相邻维度 (x₀, x₁)、(x₂, x₃)……；GPT-NeoX 和 Hugging Face 的 Llama 旋转前后两半 (xᵢ, x_(i+d/2))。把按一种方式训练的权重放进按另一种方式写的代码里，程序不会报错，只是分数错了。修复方法是在转换权重时把 q、k 投影的行重新排列一次。',
    'pf.checkpoint': '权重训练时用',
    'pf.runtime': '代码实际用',
    'pf.permute': '转换时重排 q/k 的行',
    'pf.half': '前后两半配对（NeoX、HF Llama）',
    'pf.interleaved': '相邻交错配对（GPT-J、Meta Llama）',
    'pf.pairing.right': '训练时的分数',
    'pf.pairing.run': '实际运行的分数',
    'pf.pairing.x': '相对位置 m − n',
    'pf.pairing.y': '分数 q̃·k̃',
    'pf.pairing.ok': '与训练时的分数相同（最大差 {d}）。',
    'pf.pairing.bad': '分数错误：最多差 {d}（分数的典型大小为 {s}）。',
    'pf.pairing.layout': '代码看到的 q（颜色 = 训练时一起旋转的那一对）',
    'pf.fast.title': '2 · 哪些维度转得快',
    'pf.fast.text': 'θᵢ = b^(−2i/d) 随 i 减小：第 0 对每个词元转 1 弧度，最后一对几乎不动。i 小是高频，i 大是低频——很多讲解说反了。',
    'pf.position': '位置 p',
    'pf.clock': '第 {i} 对：θ = {t} 弧度/词元，角度 p·θ = {a} 弧度',
    'pf.fast.summary': '第 0 对每个词元转 {t0} 弧度（每 {w0} 个词元转一整圈）；第 {last} 对每个词元转 {tl} 弧度（每 {wl} 个词元转一整圈）。',
    'pf.fast.x': '维度对 i',
    'pf.fast.y': 'θᵢ（每个词元的弧度）',
    'pf.fast.theta': '来自 rope.invFreq 的 θᵢ',
    'pf.score.title': '3 · 分数里有 sin 项',
    'pf.score.text': '把每一对写成复数 q₍ᵢ₎ = x_a + i·x_b，RoPE 的分数就是下式的实部。展开后每一对都有一个 cos 项和一个 sin 项。常见的只含 cos 的写法并不是分数：它关于 m − n 对称，而真实分数并不对称。',
    'pf.distance': '相对位置 m − n',
    'pf.score.pe': '来自 rope.apply 的 q̃·k̃',
    'pf.score.full': 'cos 项 + sin 项',
    'pf.score.cos': '只有 cos 项',
    'pf.score.x': '相对位置 m − n',
    'pf.score.y': '分数',
    'pf.score.row': '在 m − n = {r}',
    'pf.score.mirror': '在 m − n = −{r}',
    'pf.score.quantity': '形式',
    'pf.drift.title': '4 · 大位置处 float32 角度的漂移',
    'pf.drift.text': '常见做法用 float32 计算角度 p·θ。在位置 10⁶ 附近，相邻 float32 数之间相差约 0.06 弧度，于是 cos 和 sin 算的是错误的角度。posenc 先用 double 计算并约化角度，再求 float32 的 cos/sin。',
    'pf.drift.pair': '频率对 i',
    'pf.drift.max': '最大位置',
    'pf.drift.f32': 'float32 角度（fround 模拟）',
    'pf.drift.pe': 'posenc rope.cosSin',
    'pf.drift.x': '位置 p',
    'pf.drift.y': '|角度误差|（弧度）',
    'pf.drift.at': '在位置 {p}：float32 偏差 {e32} 弧度（{deg}°），posenc 偏差 {epe} 弧度。',
    'pf.drift.exact': '第 0 对的 θ = 1，所以它的 float32 角度 p·1 在 2²⁴ = 16777216 以内是精确的：换一个维度对或更大的位置才能看到漂移。',
  },
});

const SECTIONS = ['pairing', 'fast', 'score', 'drift'];
const PAIRINGS = [['half', 'pf.half'], ['interleaved', 'pf.interleaved']];

/**
 * Moves each head vector (rows of length d) from one pairing's layout to the other's: 'interleaved' -> 'half'
 * gathers (2i, 2i + 1) into (i, i + d/2); 'half' -> 'interleaved' is the inverse. (Data movement only.)
 */
function relayout(x, d, from, to) {
  if (from === to) return Float32Array.from(x);
  const out = new Float32Array(x.length);
  for (let r = 0; r < x.length; r += d) {
    for (let i = 0; i < d / 2; i++) {
      const [fa, fb] = pairIndex(from, d, i);
      const [ta, tb] = pairIndex(to, d, i);
      out[r + ta] = x[r + fa];
      out[r + tb] = x[r + fb];
    }
  }
  return out;
}

class PePitfalls extends PeElement {
  static attrs = {
    sections: { type: 'list', default: SECTIONS },
    'head-dim': { type: 'int', default: 16, min: 4, max: 256 },
    base: { type: 'number', default: 10000, min: 1.001 },
    checkpoint: { type: 'enum', values: ['half', 'interleaved'], default: 'interleaved' },
    runtime: { type: 'enum', values: ['half', 'interleaved'], default: 'half' },
    permute: { type: 'bool', default: false },
    position: { type: 'int', default: 10, min: 0, max: 100000 },
    distance: { type: 'int', default: 5, min: -64, max: 64 },
    'max-position': { type: 'int', default: 1000000, min: 100, max: 2147483647 },
    'drift-pair': { type: 'int', default: 1, min: 0, max: 255 },
    seed: { type: 'int', default: 1, min: 0 },
  };

  get d() {
    const d = this.state.headDim;
    return Math.max(4, d - (d % 2));
  }

  render() {
    const s = this.state;
    const show = new Set(s.sections.filter((x) => SECTIONS.includes(x)));
    if (!show.size) for (const x of SECTIONS) show.add(x);
    this.show = show;
    this.keys = {};
    this.body.append(h('h3', {}, this.t('pf.title')), h('p', {}, this.t('pf.intro')),
      controls(
        select(this, { key: 'headDim', label: 'pf.headDim', raw: true, options: uniq([4, 8, 16, 32, 64, 128, s.headDim]).map((v) => [v, String(v)]) }),
        select(this, { key: 'base', label: 'pf.base', raw: true, options: uniq([100, 10000, 500000, s.base]).map((v) => [v, String(v)]) }),
        button(this, { key: 'seed', label: 'pf.newQK', secondary: true, onClick: () => this.setState({ seed: s.seed + 1 }) })));
    if (show.has('pairing')) {
      this.body.append(h('section', { class: 'pe-pf-pairing' },
        h('h4', {}, this.t('pf.pairing.title')), h('p', {}, this.t('pf.pairing.text')),
        controls(
          select(this, { key: 'checkpoint', label: 'pf.checkpoint', options: PAIRINGS }),
          select(this, { key: 'runtime', label: 'pf.runtime', options: PAIRINGS }),
          checkbox(this, { key: 'permute', label: 'pf.permute' })),
        this.layoutBox = h('figure'),
        this.pairVerdict = h('p', { class: 'pe-big', 'aria-live': 'polite' }),
        this.pairChart = h('div')));
    }
    if (show.has('fast')) {
      const f = texRow(['\\theta_i = b^{-2i/d},\\quad i = 0,1,\\dots,\\tfrac d2-1', '\\theta_0 = 1 \\;>\\; \\theta_1 \\;>\\; \\dots \\;>\\; \\theta_{d/2-1} = b^{-(d-2)/d}']);
      this.body.append(h('section', { class: 'pe-pf-fast' },
        h('h4', {}, this.t('pf.fast.title')), h('p', {}, this.t('pf.fast.text')), f,
        controls(range(this, { key: 'position', label: 'pf.position', min: 0, max: 200 })),
        this.clocks = h('div', { class: 'pe-pf-clocks', style: { display: 'flex', flexWrap: 'wrap', gap: '6px' } }),
        this.fastText = h('p', { 'aria-live': 'polite' }),
        this.fastChart = h('div')));
    }
    if (show.has('score')) {
      const Q = (x) => `\\qc{q_${x}}`, K = (x) => `\\kc{k_${x}}`, rel = '\\relc{(m-n)\\theta_i}';
      const f = texRow([`\\qc{\\tilde q_m}\\cdot\\kc{\\tilde k_n} = \\operatorname{Re}\\Big[\\sum_i ${Q('{(i)}')}\\,\\overline{${K('{(i)}')}}\\,e^{\\mathrm i${rel}}\\Big]`,
        `= \\sum_i \\big(${Q('a')} ${K('a')} + ${Q('b')} ${K('b')}\\big)\\cos\\!\\big(${rel}\\big) + \\big(${Q('a')} ${K('b')} - ${Q('b')} ${K('a')}\\big)\\sin\\!\\big(${rel}\\big)`,
        `\\ne \\sum_i \\big(${Q('a')} ${K('a')} + ${Q('b')} ${K('b')}\\big)\\cos\\!\\big(${rel}\\big)`]);
      this.body.append(h('section', { class: 'pe-pf-score' },
        h('h4', {}, this.t('pf.score.title')), h('p', {}, this.t('pf.score.text')), f,
        controls(range(this, { key: 'distance', label: 'pf.distance', min: -64, max: 64 })),
        this.scoreTable = h('div', { class: 'pe-scroll', 'aria-live': 'polite' }),
        this.scoreChart = h('div')));
    }
    if (show.has('drift')) {
      this.body.append(h('section', { class: 'pe-pf-drift' },
        h('h4', {}, this.t('pf.drift.title')), h('p', {}, this.t('pf.drift.text')),
        controls(
          range(this, { key: 'driftPair', label: 'pf.drift.pair', min: 0, max: this.d / 2 - 1 }),
          select(this, { key: 'maxPosition', label: 'pf.drift.max', raw: true, options: uniq([10000, 1000000, 100000000, 2147483647, s.maxPosition]).map((v) => [v, String(v)]) })),
        this.driftChart = h('div'),
        this.driftText = h('p', { 'aria-live': 'polite' })));
    }
  }

  draw() {
    const s = this.state;
    const changed = (name, key) => {
      if (this.keys[name] === key) return false;
      this.keys[name] = key;
      return true;
    };
    const common = `${this.d}|${s.base}|${s.seed}`;
    const parts = [];
    if (this.show.has('pairing') && changed('pairing', `${common}|${s.checkpoint}|${s.runtime}|${s.permute}`)) parts.push(() => this.drawPairing());
    if (this.show.has('fast') && changed('fast', `${this.d}|${s.base}|${s.position}`)) parts.push(() => this.drawFast());
    if (this.show.has('score') && changed('score', `${common}|${s.distance}`)) parts.push(() => this.drawScore());
    if (this.show.has('drift') && changed('drift', `${this.d}|${s.base}|${s.driftPair}|${s.maxPosition}`)) parts.push(() => this.drawDrift());
    if (!this.relabeling) {
      for (const f of parts) f();
      return undefined;
    }
    // after a language switch all four sections redraw (a chart and a forced layout each): a new task between
    // them once this one has run long (yieldIfLong), not one task of all four; a control redraws in one go
    return (async () => {
      for (const [i, f] of parts.entries()) {
        if (i) await this.yieldIfLong();
        if (!this.body) return;
        f();
      }
    })();
  }

  /** Scores q̃·k̃ for q at positions K + r and k at K, r = −R..R (through rope.apply). */
  scores(rope, q, k, R) {
    const d = rope.headDim;
    const n = 2 * R + 1;
    const qs = new Float32Array(n * d), ks = new Float32Array(n * d);
    for (let j = 0; j < n; j++) {
      qs.set(q, j * d);
      ks.set(k, j * d);
    }
    rope.apply(qs, { shape: [1, n, 1, d], positions: Int32Array.from({ length: n }, (_, j) => j) });
    rope.apply(ks, { shape: [1, n, 1, d], positions: new Int32Array(n).fill(R) });
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      let acc = 0;
      for (let i = 0; i < d; i++) acc += qs[j * d + i] * ks[j * d + i];
      out[j] = acc;
    }
    return out;
  }

  drawPairing() {
    const s = this.state;
    const d = this.d;
    const q = gaussian(d, s.seed * 2 + 1), k = gaussian(d, s.seed * 2 + 2);
    const R = 48;
    const trained = this.pe.rope({ headDim: d, base: s.base, pairing: s.checkpoint });
    const run = this.pe.rope({ headDim: d, base: s.base, pairing: s.runtime });
    try {
      const truth = this.scores(trained, q, k, R);
      const qr = s.permute ? relayout(q, d, s.checkpoint, s.runtime) : q;
      const kr = s.permute ? relayout(k, d, s.checkpoint, s.runtime) : k;
      const got = this.scores(run, qr, kr, R);
      let maxDiff = 0, size = 0;
      for (let j = 0; j < truth.length; j++) {
        maxDiff = Math.max(maxDiff, Math.abs(truth[j] - got[j]));
        size += Math.abs(truth[j]) / truth.length;
      }
      const ok = maxDiff <= 1e-4 * Math.max(1, size);
      this.pairVerdict.className = `pe-big ${ok ? 'pe-good' : 'pe-bad'}`;
      this.pairVerdict.dataset.ok = String(ok);
      this.pairVerdict.textContent = `${ok ? '✓' : '✗'} ${this.t(ok ? 'pf.pairing.ok' : 'pf.pairing.bad', { d: fmt(maxDiff, 3), s: fmt(size, 3) })}`;
      // layout of q in the code: which trained pair each slot holds
      const slotPair = new Int32Array(d);
      for (let i = 0; i < d / 2; i++) {
        const [a, b] = pairIndex(s.checkpoint, d, i);
        slotPair[a] = i;
        slotPair[b] = i;
      }
      const shownPair = s.permute ? relayout(Float32Array.from(slotPair), d, s.checkpoint, s.runtime) : Float32Array.from(slotPair);
      const cells = [];
      const W = Math.min(d, 32);
      for (let x = 0; x < W; x++) {
        const i = shownPair[x];
        cells.push(svg('rect', { x: x + 0.05, y: 0, width: 0.9, height: 0.9, rx: 0.12, fill: `hsl(${Math.round((360 * i) / (d / 2))} 65% 55%)` }),
          svg('text', { x: x + 0.5, y: 0.62, 'font-size': 0.42, 'text-anchor': 'middle', fill: '#fff' }, String(i)));
      }
      // brackets: the pairs the runtime rotates together
      for (let i = 0; i < d / 2; i++) {
        const [a, b] = pairIndex(s.runtime, d, i);
        if (b >= W) continue;
        const same = shownPair[a] === shownPair[b];
        cells.push(svg('path', { d: `M ${a + 0.5} 0.95 Q ${(a + b) / 2 + 0.5} ${1.3 + 0.06 * (b - a)} ${b + 0.5} 0.95`, fill: 'none', stroke: same ? '#17703a' : '#a1261b', 'stroke-width': 0.05 }));
      }
      this.layoutBox.replaceChildren(svg('svg', { viewBox: `0 -0.1 ${W} 2.4`, width: '100%', role: 'img', 'aria-label': this.t('pf.pairing.layout'), style: 'max-width: 560px; display: block' }, ...cells),
        h('figcaption', {}, this.t('pf.pairing.layout')));
      const xs = Array.from({ length: 2 * R + 1 }, (_, j) => j - R);
      chart(this.pairChart, {
        x: xs, series: [{ label: this.t('pf.pairing.right'), values: truth, color: PALETTE[0], width: 3 }, { label: this.t('pf.pairing.run'), values: got, color: ok ? PALETTE[2] : PALETTE[1], width: 1.5, dash: ok ? [5, 4] : undefined }],
        xLabel: this.t('pf.pairing.x'), yLabel: this.t('pf.pairing.y'), height: 220, label: this.t('pf.pairing.title'),
      });
    } finally {
      trained.free();
      run.free();
    }
  }

  drawFast() {
    const s = this.state;
    const d = this.d;
    const rope = this.pe.rope({ headDim: d, base: s.base });
    try {
      const inv = rope.invFreq();
      const { cos, sin } = rope.cosSin([s.position]);
      const n = inv.length;
      const shown = Math.min(n, 16);
      const clocks = [];
      for (let j = 0; j < shown; j++) {
        const i = shown === n ? j : Math.round((j * (n - 1)) / (shown - 1));
        const c = cos[i], sn = sin[i];
        const ang = Math.atan2(sn, c);
        const label = this.t('pf.clock', { i, t: fmt(inv[i], 3), a: fmt(s.position * inv[i], 4) });
        clocks.push(h('figure', { style: { width: '68px', textAlign: 'center' }, title: label },
          svg('svg', { viewBox: '-1.2 -1.2 2.4 2.4', width: 60, height: 60, role: 'img', 'aria-label': label },
            svg('circle', { cx: 0, cy: 0, r: 1, fill: '#f7f9fa', stroke: '#b9c1c9', 'stroke-width': 0.06 }),
            svg('line', { x1: 0, y1: 0, x2: 0.95, y2: 0, stroke: '#d6dbe0', 'stroke-width': 0.05 }),
            svg('line', { x1: 0, y1: 0, x2: 0.9 * Math.cos(ang), y2: -0.9 * Math.sin(ang), stroke: PALETTE[0], 'stroke-width': 0.14, 'stroke-linecap': 'round' }),
            svg('circle', { cx: 0, cy: 0, r: 0.1, fill: PALETTE[0] })),
          h('figcaption', { style: { fontSize: '.72rem', marginTop: 0 } }, `i = ${i}`)));
      }
      this.clocks.replaceChildren(...clocks);
      const wl = (t) => fmt((2 * Math.PI) / t, 4);
      this.fastText.textContent = this.t('pf.fast.summary', { t0: fmt(inv[0], 4), w0: wl(inv[0]), last: n - 1, tl: fmt(inv[n - 1], 4), wl: wl(inv[n - 1]) });
      if (this.keys.fastChart !== `${d}|${s.base}|${this.lang}`) {
        this.keys.fastChart = `${d}|${s.base}|${this.lang}`;
        chart(this.fastChart, {
          x: Array.from({ length: n }, (_, i) => i), series: [{ label: this.t('pf.fast.theta'), values: inv, color: PALETTE[0], width: 2, points: n <= 32 }],
          xLabel: this.t('pf.fast.x'), yLabel: this.t('pf.fast.y'), logY: true, height: 200, label: this.t('pf.fast.title'), yFormat: (v) => (v == null ? '' : fmt(v, 2)),
        });
      }
    } finally {
      rope.free();
    }
  }

  drawScore() {
    const s = this.state;
    const d = this.d;
    const q = gaussian(d, s.seed * 2 + 11), k = gaussian(d, s.seed * 2 + 12);
    const R = 64;
    const rope = this.pe.rope({ headDim: d, base: s.base, pairing: 'half' });
    try {
      const viaPe = this.scores(rope, q, k, R);
      const { cos, sin } = rope.cosSin(Int32Array.from({ length: R + 1 }, (_, r) => r));
      const nf = rope.nFreq;
      const full = new Float64Array(2 * R + 1), cosOnly = new Float64Array(2 * R + 1);
      for (let j = 0; j <= 2 * R; j++) {
        const r = j - R, ar = Math.abs(r), sg = r < 0 ? -1 : 1;
        let f = 0, c = 0;
        for (let i = 0; i < nf; i++) {
          const [a, b] = pairIndex('half', d, i);
          const A = q[a] * k[a] + q[b] * k[b];
          const C = q[a] * k[b] - q[b] * k[a];
          const cs = cos[ar * nf + i], sn = sg * sin[ar * nf + i];
          f += A * cs + C * sn;
          c += A * cs;
        }
        full[j] = f;
        cosOnly[j] = c;
      }
      const r = s.distance;
      const at = (arr, x) => arr[x + R];
      const rows = [
        ['pf.score.pe', at(viaPe, r), at(viaPe, -r)],
        ['pf.score.full', at(full, r), at(full, -r)],
        ['pf.score.cos', at(cosOnly, r), at(cosOnly, -r)],
      ];
      this.scoreTable.replaceChildren(h('table', { class: 'pe-table' },
        h('tr', {}, h('th', {}, this.t('pf.score.quantity')), h('th', {}, this.t('pf.score.row', { r })), h('th', {}, this.t('pf.score.mirror', { r }))),
        rows.map(([key, a, b], idx) => h('tr', { class: idx === 2 ? 'pe-bad' : null }, h('td', { style: { textAlign: 'left' } }, this.t(key)),
          h('td', { 'data-v': String(a) }, fmt(a, 6)), h('td', { 'data-v': String(b) }, fmt(b, 6))))));
      if (this.keys.scoreChart !== `${d}|${s.base}|${s.seed}|${this.lang}`) {
        this.keys.scoreChart = `${d}|${s.base}|${s.seed}|${this.lang}`;
        chart(this.scoreChart, {
          x: Array.from({ length: 2 * R + 1 }, (_, j) => j - R),
          series: [{ label: this.t('pf.score.pe'), values: viaPe, color: PALETTE[0], width: 3.5 },
            { label: this.t('pf.score.full'), values: full, color: PALETTE[2], width: 1.5, dash: [5, 4] },
            { label: this.t('pf.score.cos'), values: cosOnly, color: PALETTE[1], width: 1.5 }],
          xLabel: this.t('pf.score.x'), yLabel: this.t('pf.score.y'), height: 240, label: this.t('pf.score.title'),
        });
      }
    } finally {
      rope.free();
    }
  }

  drawDrift() {
    const s = this.state;
    const d = this.d;
    const i = Math.min(s.driftPair, d / 2 - 1);
    const rope = this.pe.rope({ headDim: d, base: s.base });
    try {
      const inv32 = rope.invFreq()[i];
      const inv64 = rope.invFreq64()[i];
      const N = 400;
      const P = s.maxPosition;
      const set = new Set();
      for (let j = 0; j <= N; j++) set.add(Math.max(1, Math.round(P ** (j / N))));
      const pos = Int32Array.from([...set].sort((a, b) => a - b));
      const { cos, sin } = rope.cosSin(pos);
      const nf = rope.nFreq;
      const floor = 1e-9;
      const e32 = new Float64Array(pos.length), epe = new Float64Array(pos.length);
      for (let j = 0; j < pos.length; j++) {
        const p = pos[j];
        const exact = wrapAngle(p * inv64);
        const a32 = Math.fround(Math.fround(p) * inv32);
        const c32 = Math.fround(Math.cos(a32)), s32 = Math.fround(Math.sin(a32));
        e32[j] = Math.max(floor, Math.abs(wrapAngle(Math.atan2(s32, c32) - exact)));
        epe[j] = Math.max(floor, Math.abs(wrapAngle(Math.atan2(sin[j * nf + i], cos[j * nf + i]) - exact)));
      }
      chart(this.driftChart, {
        x: pos, logX: true, logY: true,
        series: [{ label: this.t('pf.drift.f32'), values: e32, color: PALETTE[1], width: 1.5 }, { label: this.t('pf.drift.pe'), values: epe, color: PALETTE[0], width: 2 }],
        xLabel: this.t('pf.drift.x'), yLabel: this.t('pf.drift.y'), height: 240, label: this.t('pf.drift.title'), ySize: 64, yFormat: (v) => (v == null ? '' : fmt(v, 1)),
      });
      const last = pos.length - 1;
      this.driftText.textContent = this.t('pf.drift.at', { p: pos[last], e32: fmt(e32[last], 3), deg: fmt((e32[last] * 180) / Math.PI, 3), epe: fmt(epe[last], 3) })
        + (inv64 === 1 && P <= 2 ** 24 ? ` ${this.t('pf.drift.exact')}` : '');
      this.driftText.dataset.e32 = String(e32[last]);
      this.driftText.dataset.epe = String(epe[last]);
    } finally {
      rope.free();
    }
  }
}

function uniq(a) {
  return [...new Set(a)].sort((x, y) => x - y);
}

define('pe-pitfalls', PePitfalls);
