// <pe-rope-rotation>: RoPE as rotations. Every number is computed by the posenc API (rope.apply, rope.cosSin,
// rope.invFreq64, pe.attention) and the tiny RoPE model (web/src/model.js).
//
// Sections (choose with `sections`):
//   rotation  one frequency pair of a query q and a key k on the plane, turned by m·θᵢ and n·θᵢ; drag the tips
//             (or use the sliders / arrow keys) to move the positions m and n; Play moves both together
//   relative  shift both positions by s: the score q̃·k̃ stays (numbers, and a chart against s beside moving the
//             query alone)
//   decay     the long-term decay of RoPE (Su et al. 2021, §3.4.3): the paper's upper bound
//             (1/(d/2)) Σⱼ |Sⱼ|, Sⱼ = Σ_{i<j} e^(i(m−n)θᵢ), and |Σᵢ e^(i(m−n)θᵢ)| / (d/2), against m − n
//   pairing   half-split (GPT-NeoX, Llama) against interleaved (GPT-J, RoFormer) pairs: which dimensions turn
//             together; a relative-offset attention head built for one pairing run with the other
//             (pe.attention); and the tiny RoPE model run with its pairing swapped
//
// Attributes (all optional):
//   head-dim       head dimension d of q and k (even, 2..256; default 16)
//   base           RoPE base b, θᵢ = b^(−2i/d) (default 10000)
//   pairing        half | interleaved: the pairing of the rotation and relative sections (default half)
//   pair           frequency pair i shown on the plane (default 0: the fastest)
//   m, n           query and key positions (defaults 5 and 2)
//   shift          the shift s of the relative section (default 100)
//   max-position   largest position the sliders reach (default 512)
//   sections       comma list of rotation, relative, decay, pairing (default all four)
//   autoplay       start the animation when shown (default off)
//   decay-dim      head dimension of the decay curve (default 128, as in the paper's figure)
//   decay-max      largest relative distance of the decay curve: 256 | 4096 | 65536 (default 256)
//   offset         the relative offset δ the pairing section's attention head looks back by (default 2)
//   seed           seed of the random q and k (default 1)
//   model          the tiny RoPE model of the pairing section (default copy-rope; "none" skips it)
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key

import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select, button } from './lib/controls.js';
import { chart } from './lib/chart.js';
import { heatmap } from './lib/heatmap.js';
import { tex, texRow } from './lib/math.js';
import { svg } from './lib/dom.js';
import { gaussian, rng } from './lib/random.js';
import { pairIndex, swappedPairingModel } from './lib/pairing.js';
import { wrapAngle } from './lib/angles.js';
import { copyExample, targetsOf, argmaxRows } from './lib/tasks.js';
import { ROLE } from './lib/palette.js';

registerStrings({
  en: {
    'rr.title': 'RoPE: positions as rotations',
    'rr.intro': 'RoPE splits each query and key into pairs of numbers and turns pair i by the angle position · θᵢ. The attention score q̃·k̃ then depends only on how far apart the two positions are.',
    'rr.rot.title': 'A query and a key turning with position',
    'rr.rot.note': 'Drag the tips of q̃ and k̃ (or focus one and use the arrow keys) to move the positions. q̃ is q turned by m·θᵢ and k̃ is k turned by n·θᵢ, so the purple arc, the angle from k̃ to q̃, is the angle from k to q plus (m − n)·θᵢ: it changes when m − n changes, and only then.',
    'rr.pair': 'frequency pair i',
    'rr.m': 'query position m',
    'rr.n': 'key position n',
    'rr.headDim': 'head dim d',
    'rr.base': 'base b',
    'rr.pairing': 'pairing',
    'rr.half': 'half-split (NeoX, Llama)',
    'rr.interleaved': 'interleaved (GPT-J, RoFormer)',
    'rr.play': 'Play (move m and n together)',
    'rr.pause': 'Pause',
    'rr.plane': 'The plane of pair {i}: dimensions {a} and {b}',
    'rr.handleQ': 'query tip: position m = {v}',
    'rr.handleK': 'key tip: position n = {v}',
    'rr.theta': 'θᵢ (rad per token)',
    'rr.wavelength': 'wavelength 2π/θᵢ (tokens)',
    'rr.angleQ': 'm·θᵢ (mod 2π)',
    'rr.angleK': 'n·θᵢ (mod 2π)',
    'rr.angleRel': '(m − n)·θᵢ (mod 2π)',
    'rr.angleStart': 'angle from k to q (before turning)',
    'rr.angleArc': 'angle from k̃ to q̃ (the arc): the two above added',
    'rr.pairScore': 'this pair’s share of q̃·k̃',
    'rr.score': 'score q̃·k̃ over all {p} pairs',
    'rr.quantity': 'quantity',
    'rr.value': 'value',
    'rr.rel.title': 'Shift both positions: the score stays',
    'rr.rel.note': 'Both positions move by s, so m − n is unchanged, and so is q̃·k̃ (up to float32 rounding). Moving the query alone changes it.',
    'rr.shift': 'shift s',
    'rr.row.orig': 'at (m, n)',
    'rr.row.shifted': 'at (m + s, n + s)',
    'rr.row.diff': 'difference',
    'rr.row.qonly': 'at (m + s, n)',
    'rr.col.pos': 'positions',
    'rr.col.rel': 'm − n',
    'rr.col.score': 'q̃·k̃',
    'rr.chart.both': 'both shifted',
    'rr.chart.qonly': 'query only shifted',
    'rr.chart.x': 'shift s',
    'rr.chart.y': 'score q̃·k̃',
    'rr.decay.title': 'Long-term decay',
    'rr.decay.note': 'Su et al. (2021, §3.4.3) bound every score by max |hᵢ₊₁ − hᵢ| times Σⱼ |Sⱼ|, the partial sums Sⱼ of e^(i(m−n)θᵢ). The thick curve is that decay term: it shrinks as m − n grows, so far-apart tokens can interact less. The thin curve is a different quantity, the score itself for a query and key whose pairs are all equal; it is not bounded by the thick one. Both are relative to distance 0.',
    'rr.decay.dim': 'head dim',
    'rr.decay.max': 'largest distance',
    'rr.decay.bound': 'decay term of the bound, (1/(d/2)) Σⱼ |Sⱼ|',
    'rr.decay.sum': 'score with all pairs equal, |Σᵢ e^(i(m−n)θᵢ)| / (d/2)',
    'rr.decay.x': 'relative distance m − n',
    'rr.decay.y': 'relative to distance 0',
    'rr.decay.at': 'At m − n = {r}: decay term {b} of its value at 0; score with all pairs equal {s}.',
    'rr.pairing.title': 'Half-split or interleaved pairs',
    'rr.pairing.note': 'Both pairings compute the same kind of rotation, but on different dimension pairs. Weights trained with one pairing and run with the other rotate the wrong numbers together: the pattern still depends only on m − n, but it is a different one.',
    'rr.pairing.diagram': 'Which dimensions turn together (one colour per pair, d = {d})',
    'rr.pairing.attn': 'An attention head built for half-split pairs: each query looks {delta} tokens back (pe.attention, causal).',
    'rr.pairing.right': 'run with half-split pairing (right)',
    'rr.pairing.wrong': 'run with interleaved pairing (wrong)',
    'rr.pairing.mass': 'mean weight on key m − {delta}: {v}',
    'rr.offset': 'look-back δ',
    'rr.keyPos': 'key position',
    'rr.queryPos': 'query position',
    'rr.model.title': 'The tiny RoPE model with its pairing swapped',
    'rr.model.note': 'The copy model was trained with half-split pairs. Running it with interleaved pairs (its q and k rows permuted, which is exactly that) on the same input:',
    'rr.model.input': 'input',
    'rr.model.right': 'predicted, trained pairing',
    'rr.model.wrong': 'predicted, swapped pairing',
    'rr.model.acc': 'accuracy on the copied letters {a} · loss {l} nats',
    'rr.model.loading': 'loading the tiny model…',
    'rr.model.another': 'Another input',
  },
  zh: {
    'rr.title': 'RoPE：把位置变成旋转',
    'rr.intro': 'RoPE 把每个查询和键拆成若干对数，第 i 对按角度“位置 · θᵢ”旋转。于是注意力分数 q̃·k̃ 只取决于两个位置相隔多远。',
    'rr.rot.title': '随位置旋转的查询与键',
    'rr.rot.note': '拖动 q̃ 和 k̃ 的箭头尖端（或聚焦后用方向键）来改变位置。q̃ 是 q 转过 m·θᵢ，k̃ 是 k 转过 n·θᵢ，所以紫色弧线（从 k̃ 到 q̃ 的夹角）等于从 k 到 q 的夹角加上 (m − n)·θᵢ：只有 m − n 改变时它才改变。',
    'rr.pair': '频率对 i',
    'rr.m': '查询位置 m',
    'rr.n': '键位置 n',
    'rr.headDim': '头维度 d',
    'rr.base': '底数 b',
    'rr.pairing': '配对方式',
    'rr.half': '前后两半配对（NeoX、Llama）',
    'rr.interleaved': '相邻交错配对（GPT-J、RoFormer）',
    'rr.play': '播放（m 与 n 一起移动）',
    'rr.pause': '暂停',
    'rr.plane': '第 {i} 对所在的平面：维度 {a} 与 {b}',
    'rr.handleQ': '查询箭头：位置 m = {v}',
    'rr.handleK': '键箭头：位置 n = {v}',
    'rr.theta': 'θᵢ（每个词元的弧度）',
    'rr.wavelength': '波长 2π/θᵢ（词元数）',
    'rr.angleQ': 'm·θᵢ（模 2π）',
    'rr.angleK': 'n·θᵢ（模 2π）',
    'rr.angleRel': '(m − n)·θᵢ（模 2π）',
    'rr.angleStart': '从 k 到 q 的夹角（旋转之前）',
    'rr.angleArc': '从 k̃ 到 q̃ 的夹角（弧线）：以上两者相加',
    'rr.pairScore': '这一对在 q̃·k̃ 中的贡献',
    'rr.score': '全部 {p} 对的分数 q̃·k̃',
    'rr.quantity': '量',
    'rr.value': '数值',
    'rr.rel.title': '两个位置一起平移：分数不变',
    'rr.rel.note': '两个位置都移动 s，m − n 不变，q̃·k̃ 也不变（只差 float32 舍入）。只移动查询则分数改变。',
    'rr.shift': '平移量 s',
    'rr.row.orig': '在 (m, n)',
    'rr.row.shifted': '在 (m + s, n + s)',
    'rr.row.diff': '差',
    'rr.row.qonly': '在 (m + s, n)',
    'rr.col.pos': '位置',
    'rr.col.rel': 'm − n',
    'rr.col.score': 'q̃·k̃',
    'rr.chart.both': '两者都平移',
    'rr.chart.qonly': '只平移查询',
    'rr.chart.x': '平移量 s',
    'rr.chart.y': '分数 q̃·k̃',
    'rr.decay.title': '远程衰减',
    'rr.decay.note': 'Su 等人（2021，§3.4.3）证明每个分数都不超过 max |hᵢ₊₁ − hᵢ| 乘以 Σⱼ |Sⱼ|，其中 Sⱼ 是 e^(i(m−n)θᵢ) 的部分和。粗线就是这个衰减项：随着 m − n 增大它变小，相距越远的词元相互作用越弱。细线是另一个量：各对分量全都相同的查询与键的分数本身，它并不受粗线约束。两条曲线都相对于距离 0 时的值。',
    'rr.decay.dim': '头维度',
    'rr.decay.max': '最大距离',
    'rr.decay.bound': '上界中的衰减项 (1/(d/2)) Σⱼ |Sⱼ|',
    'rr.decay.sum': '各对分量相同时的分数 |Σᵢ e^(i(m−n)θᵢ)| / (d/2)',
    'rr.decay.x': '相对距离 m − n',
    'rr.decay.y': '相对于距离 0',
    'rr.decay.at': '在 m − n = {r} 处：衰减项为距离 0 时的 {b}；各对分量相同时的分数为 {s}。',
    'rr.pairing.title': '前后两半配对还是相邻交错配对',
    'rr.pairing.note': '两种配对做的是同一种旋转，只是作用在不同的维度对上。用一种配对训练的权重若用另一种配对运行，就会把错误的两个数放在一起旋转：注意力模式仍只取决于 m − n，但已经是另一种模式。',
    'rr.pairing.diagram': '哪些维度一起旋转（每对一种颜色，d = {d}）',
    'rr.pairing.attn': '一个为前后两半配对构造的注意力头：每个查询回看 {delta} 个词元（pe.attention，因果）。',
    'rr.pairing.right': '用前后两半配对运行（正确）',
    'rr.pairing.wrong': '用相邻交错配对运行（错误）',
    'rr.pairing.mass': '键 m − {delta} 上的平均权重：{v}',
    'rr.offset': '回看距离 δ',
    'rr.keyPos': '键位置',
    'rr.queryPos': '查询位置',
    'rr.model.title': '配对方式被换掉的 RoPE 小模型',
    'rr.model.note': '这个复制任务模型是用前后两半配对训练的。改用相邻交错配对运行它（等价于把它的 q、k 行重新排列），输入相同：',
    'rr.model.input': '输入',
    'rr.model.right': '预测（训练时的配对）',
    'rr.model.wrong': '预测（换掉的配对）',
    'rr.model.acc': '复制字母的准确率 {a} · 损失 {l} 奈特',
    'rr.model.loading': '正在加载小模型…',
    'rr.model.another': '换一个输入',
  },
});

const SECTIONS = ['rotation', 'relative', 'decay', 'pairing'];
const BASES = [100, 500, 10000, 500000, 1000000];
const SCALE = 8; // softmax sharpness of the pairing section's constructed head

class PeRopeRotation extends PeElement {
  static attrs = {
    'head-dim': { type: 'int', default: 16, min: 2, max: 256 },
    base: { type: 'number', default: 10000, min: 1.001 },
    pairing: { type: 'enum', values: ['half', 'interleaved'], default: 'half' },
    pair: { type: 'int', default: 0, min: 0, max: 127 },
    m: { type: 'int', default: 5, min: 0, max: 1000000 },
    n: { type: 'int', default: 2, min: 0, max: 1000000 },
    shift: { type: 'int', default: 100, min: 0, max: 1000000 },
    'max-position': { type: 'int', default: 512, min: 8, max: 1000000 },
    sections: { type: 'list', default: SECTIONS },
    autoplay: { type: 'bool', default: false },
    'decay-dim': { type: 'int', default: 128, min: 4, max: 512 },
    'decay-max': { type: 'int', default: 256, min: 16, max: 65536 },
    offset: { type: 'int', default: 2, min: 0, max: 16 },
    seed: { type: 'int', default: 1, min: 0 },
    model: { type: 'string', default: 'copy-rope' },
  };

  get headDim() {
    const d = this.state.headDim;
    return Math.max(2, d - (d % 2));
  }

  render() {
    const s = this.state;
    this.keys = {};
    this.stopPlay();
    const show = new Set(s.sections.filter((x) => SECTIONS.includes(x)));
    if (!show.size) for (const x of SECTIONS) show.add(x);
    this.show = show;
    this.body.append(h('h3', {}, this.t('rr.title')), h('p', {}, this.t('rr.intro')));
    const maxPos = s.maxPosition;
    if (show.has('rotation') || show.has('relative')) {
      this.body.append(controls(
        select(this, { key: 'headDim', label: 'rr.headDim', raw: true, options: [2, 4, 8, 16, 32, 64, 128].map((v) => [v, String(v)]) }),
        select(this, { key: 'base', label: 'rr.base', raw: true, options: uniq([...BASES, s.base]).map((v) => [v, String(v)]) }),
        select(this, { key: 'pairing', label: 'rr.pairing', options: [['half', 'rr.half'], ['interleaved', 'rr.interleaved']] }),
      ));
    }
    if (show.has('rotation')) {
      const formula = texRow(['\\qc{\\tilde q_m} = R(\\qc{m}\\theta_i)\\,\\qc{q},\\quad \\kc{\\tilde k_n} = R(\\kc{n}\\theta_i)\\,\\kc{k}', '\\theta_i = b^{-2i/d}',
        'R(\\phi)=\\begin{pmatrix}\\cos\\phi & -\\sin\\phi\\\\ \\sin\\phi & \\cos\\phi\\end{pmatrix}']);
      this.playBtn = button(this, { key: 'play', label: 'rr.play', onClick: () => this.togglePlay() });
      this.body.append(h('section', { class: 'pe-rr-rotation' },
        h('h4', {}, this.t('rr.rot.title')), formula,
        controls(
          range(this, { key: 'pair', label: 'rr.pair', min: 0, max: this.headDim / 2 - 1 }),
          range(this, { key: 'm', label: 'rr.m', min: 0, max: maxPos }),
          range(this, { key: 'n', label: 'rr.n', min: 0, max: maxPos }),
          this.playBtn,
        ),
        h('div', { class: 'pe-row' },
          this.planeBox = h('figure', { style: { maxWidth: '420px' } }),
          this.rotTable = h('div', { class: 'pe-scroll', 'aria-live': 'polite' })),
        h('p', { class: 'pe-note' }, this.t('rr.rot.note'))));
    }
    if (show.has('relative')) {
      const formula = h('div');
      // (R(mθ)q)ᵀ R(nθ)k = qᵀ R(−mθ) R(nθ) k = qᵀ R((n − m)θ) k (RoFormer, eq. 16), R(φ) turning counter-clockwise
      tex(formula, '\\qc{\\tilde q_{m+s}}\\cdot\\kc{\\tilde k_{n+s}} = \\qc{q}^{\\top} R\\big(\\relc{(n-m)\\theta}\\big)\\,\\kc{k} = \\qc{\\tilde q_m}\\cdot\\kc{\\tilde k_n}', { display: true });
      this.body.append(h('section', { class: 'pe-rr-relative' },
        h('h4', {}, this.t('rr.rel.title')), formula,
        controls(range(this, { key: 'shift', label: 'rr.shift', min: 0, max: Math.max(1000, maxPos * 8) })),
        this.relTable = h('div', { class: 'pe-scroll', 'aria-live': 'polite' }),
        this.relChart = h('div'),
        h('p', { class: 'pe-note' }, this.t('rr.rel.note'))));
    }
    if (show.has('decay')) {
      const formula = texRow(['\\Big|\\sum_{i=0}^{d/2-1} h_i\\,e^{\\mathrm i(m-n)\\theta_i}\\Big| \\le \\Big(\\max_i |h_{i+1}-h_i|\\Big)\\sum_{j=1}^{d/2} |S_j|',
        'h_i = \\qc{q_{[i]}}\\,\\overline{\\kc{k_{[i]}}},\\quad S_j=\\sum_{i=0}^{j-1} e^{\\mathrm i(m-n)\\theta_i}']);
      this.body.append(h('section', { class: 'pe-rr-decay' },
        h('h4', {}, this.t('rr.decay.title')), formula,
        controls(
          select(this, { key: 'decayDim', label: 'rr.decay.dim', raw: true, options: uniq([32, 64, 128, 256, s.decayDim]).map((v) => [v, String(v)]) }),
          select(this, { key: 'base', label: 'rr.base', raw: true, options: uniq([...BASES, s.base]).map((v) => [v, String(v)]) }),
          select(this, { key: 'decayMax', label: 'rr.decay.max', raw: true, options: uniq([256, 4096, 65536, s.decayMax]).map((v) => [v, String(v)]) }),
        ),
        this.decayChart = h('div'),
        this.decayText = h('p', { class: 'pe-note', 'aria-live': 'polite' }),
        h('p', { class: 'pe-note' }, this.t('rr.decay.note'))));
    }
    if (show.has('pairing')) {
      this.body.append(h('section', { class: 'pe-rr-pairing' },
        h('h4', {}, this.t('rr.pairing.title')),
        h('p', {}, this.t('rr.pairing.note')),
        this.pairDiagram = h('figure'),
        controls(range(this, { key: 'offset', label: 'rr.offset', min: 0, max: 8 })),
        this.pairAttnNote = h('p', {}),
        h('div', { class: 'pe-row' }, this.attnRight = h('div'), this.attnWrong = h('div')),
        this.modelBox = h('div', { class: 'pe-rr-model' })));
    }
    if (s.autoplay && show.has('rotation') && !matchMedia?.('(prefers-reduced-motion: reduce)').matches) this.togglePlay();
  }

  cleanup() {
    this.stopPlay();
  }

  /** Keeps a slider in step when something other than it (drag, animation) changed its state entry. */
  sync(key, v) {
    const input = this.body?.querySelector(`input[data-key="${key}"]`);
    if (!input || Number(input.value) === v) return;
    input.value = String(v);
    input.setAttribute('aria-valuetext', String(v));
    const out = input.closest('label')?.querySelector('output');
    if (out) out.textContent = String(v);
  }

  togglePlay() {
    if (this.playing) {
      this.stopPlay();
      return;
    }
    this.playing = true;
    this.playBtn.textContent = this.t('rr.pause');
    let last = 0;
    const step = (ts) => {
      if (!this.playing) return;
      if (ts - last > 350) {
        last = ts;
        const max = this.state.maxPosition;
        let { m, n } = this.state;
        if (Math.max(m, n) + 1 > max) { const d = Math.min(m, n); m -= d; n -= d; } else { m++; n++; }
        this.setState({ m, n });
      }
      this.playFrame = this.frame(step);
    };
    this.playFrame = this.frame(step);
  }

  stopPlay() {
    this.playing = false;
    if (this.playFrame) this.cancelFrame(this.playFrame);
    this.playFrame = 0;
    if (this.playBtn) this.playBtn.textContent = this.t('rr.play');
  }

  async draw() {
    const s = this.state;
    const d = this.headDim;
    if (s.pair > d / 2 - 1) s.pair = d / 2 - 1;
    this.sync('m', s.m);
    this.sync('n', s.n);
    const changed = (name, key) => {
      if (this.keys[name] === key) return false;
      this.keys[name] = key;
      return true;
    };
    const common = [d, s.base, s.pairing, s.seed].join();
    // after a language switch every section redraws: one task each (yieldIfLong), not one long task
    if (this.show.has('rotation') && changed('rot', `${common}|${s.pair}|${s.m}|${s.n}`)) this.drawRotation();
    if (this.show.has('relative') && changed('rel', `${common}|${s.m}|${s.n}|${s.shift}`)) {
      if (this.relabeling) await this.yieldIfLong();
      this.drawRelative();
    }
    if (this.show.has('decay') && changed('decay', `${s.decayDim}|${s.base}|${s.decayMax}`)) {
      if (this.relabeling) await this.yieldIfLong();
      this.drawDecay();
    }
    if (this.show.has('pairing') && changed('pairing', `${d}|${s.base}|${s.offset}|${s.seed}`)) {
      if (this.relabeling) await this.yieldIfLong();
      this.drawPairing();
      if (s.model && s.model !== 'none' && changed('model', `${s.model}|${s.seed}`)) {
        if (this.relabeling) await this.yieldIfLong();
        return this.drawModel(s.seed);
      }
    }
    return undefined;
  }

  vectors(d) {
    const s = this.state;
    return { q: gaussian(d, s.seed * 2 + 1), k: gaussian(d, s.seed * 2 + 2) };
  }

  /** q rotated to positions mq (array) and k to positions nk: (len, d) each, through rope.apply. */
  rotated(rope, v, positions) {
    const d = rope.headDim;
    const x = new Float32Array(positions.length * d);
    for (let p = 0; p < positions.length; p++) x.set(v, p * d);
    return rope.apply(x, { shape: [1, positions.length, 1, d], positions });
  }

  drawRotation() {
    const s = this.state;
    const d = this.headDim;
    const rope = this.pe.rope({ headDim: d, base: s.base, pairing: s.pairing });
    try {
      const { q, k } = this.vectors(d);
      const qt = this.rotated(rope, q, [s.m]);
      const kt = this.rotated(rope, k, [s.n]);
      const theta = rope.invFreq64()[s.pair];
      const [a, b] = pairIndex(s.pairing, d, s.pair);
      let score = 0;
      for (let i = 0; i < d; i++) score += qt[i] * kt[i];
      const pairScore = qt[a] * kt[a] + qt[b] * kt[b];
      this.theta = theta;
      this.drawPlane({ q0: [q[a], q[b]], k0: [k[a], k[b]], q1: [qt[a], qt[b]], k1: [kt[a], kt[b]], a, b });
      const rad = (x) => `${fmt(x, 4)} rad`;
      const start = wrapAngle(Math.atan2(q[b], q[a]) - Math.atan2(k[b], k[a]));
      const rows = [
        ['rr.theta', fmt(theta, 5)],
        ['rr.wavelength', fmt((2 * Math.PI) / theta, 5)],
        ['rr.angleQ', rad(mod2pi(s.m * theta))],
        ['rr.angleK', rad(mod2pi(s.n * theta))],
        ['rr.angleStart', rad(start)],
        ['rr.angleRel', rad(mod2pi((s.m - s.n) * theta))],
        ['rr.angleArc', rad(wrapAngle(start + (s.m - s.n) * theta))],
        ['rr.pairScore', fmt(pairScore, 6)],
      ];
      this.rotTable.replaceChildren(h('table', { class: 'pe-table' },
        h('tr', {}, h('th', {}, this.t('rr.quantity')), h('th', {}, this.t('rr.value'))),
        rows.map(([key, v]) => h('tr', { 'data-row': key.slice(3) }, h('td', { style: { textAlign: 'left' } }, this.t(key)), h('td', {}, v))),
        h('tr', {}, h('td', { style: { textAlign: 'left' } }, h('strong', {}, this.t('rr.score', { p: d / 2 }))),
          h('td', { class: 'pe-big', 'data-score': String(score) }, fmt(score, 6)))));
    } finally {
      rope.free();
    }
  }

  drawPlane({ q0, k0, q1, k1, a, b }) {
    const s = this.state;
    const R = Math.max(Math.hypot(...q0), Math.hypot(...k0), 1e-9) / 0.95;
    const P = (v) => [v[0] / R, -v[1] / R]; // SVG y grows downwards
    const [qx, qy] = P(q1), [kx, ky] = P(k1), [q0x, q0y] = P(q0), [k0x, k0y] = P(k0);
    const angQ = Math.atan2(-qy, qx), angK = Math.atan2(-ky, kx);
    const rel = wrapAngle(angQ - angK);
    const r = 0.32;
    const arc = `M ${r * Math.cos(angK)} ${-r * Math.sin(angK)} A ${r} ${r} 0 0 ${rel > 0 ? 0 : 1} ${r * Math.cos(angQ)} ${-r * Math.sin(angQ)}`;
    const arrow = (x, y, col, w) => svg('line', { x1: 0, y1: 0, x2: x, y2: y, stroke: col, 'stroke-width': w, 'stroke-linecap': 'round' });
    const label = (x, y, txt, col) => {
      const len = Math.hypot(x, y) || 1;
      const lx = x + (0.16 * x) / len, ly = y + (0.16 * y) / len + 0.04;
      return svg('text', { x: lx, y: ly, fill: col, 'font-size': 0.115, 'text-anchor': lx > 0.25 ? 'start' : lx < -0.25 ? 'end' : 'middle' }, txt);
    };
    const handle = (x, y, col, key) => {
      const v = s[key];
      const c = svg('circle', { cx: x, cy: y, r: 0.075, fill: col, stroke: '#fff', 'stroke-width': 0.02, tabindex: 0, role: 'slider',
        'aria-valuemin': 0, 'aria-valuemax': s.maxPosition, 'aria-valuenow': v,
        'aria-label': this.t(key === 'm' ? 'rr.handleQ' : 'rr.handleK', { v }), 'data-handle': key, style: 'cursor: grab' });
      c.addEventListener('keydown', (e) => {
        const dv = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10 }[e.key];
        if (!dv) return;
        e.preventDefault();
        this.setState({ [key]: clamp(s[key] + dv, 0, s.maxPosition) });
        this.planeBox.querySelector(`[data-handle="${key}"]`)?.focus();
      });
      c.addEventListener('pointerdown', (e) => this.startDrag(e, key));
      return c;
    };
    const QC = ROLE.q, KC = ROLE.k;
    const plane = svg('svg', { viewBox: '-1.75 -1.3 3.5 2.6', width: '100%', role: 'img', 'aria-label': this.t('rr.plane', { i: s.pair, a, b }),
      style: 'max-width: 420px; display: block; touch-action: none; user-select: none' },
    svg('circle', { cx: 0, cy: 0, r: 1, fill: 'none', stroke: '#d6dbe0', 'stroke-width': 0.012 }),
    svg('line', { x1: -1.25, y1: 0, x2: 1.25, y2: 0, stroke: '#e3e7ea', 'stroke-width': 0.01 }),
    svg('line', { x1: 0, y1: -1.2, x2: 0, y2: 1.2, stroke: '#e3e7ea', 'stroke-width': 0.01 }),
    svg('text', { x: 1.3, y: 0.1, 'font-size': 0.09, fill: '#6b7580', 'text-anchor': 'start' }, `x${sub(a)}`),
    svg('text', { x: 0.05, y: -1.18, 'font-size': 0.09, fill: '#6b7580' }, `x${sub(b)}`),
    svg('path', { d: arc, fill: 'none', stroke: ROLE.rel, 'stroke-width': 0.02 }),
    svg('line', { x1: 0, y1: 0, x2: q0x, y2: q0y, stroke: QC, 'stroke-width': 0.015, 'stroke-dasharray': '0.04 0.03', opacity: 0.55 }),
    svg('line', { x1: 0, y1: 0, x2: k0x, y2: k0y, stroke: KC, 'stroke-width': 0.015, 'stroke-dasharray': '0.04 0.03', opacity: 0.55 }),
    label(q0x, q0y, 'q', QC), label(k0x, k0y, 'k', KC),
    arrow(kx, ky, KC, 0.035), arrow(qx, qy, QC, 0.035),
    label(qx, qy, `q̃ (m=${s.m})`, QC), label(kx, ky, `k̃ (n=${s.n})`, KC),
    handle(kx, ky, KC, 'n'), handle(qx, qy, QC, 'm'));
    this.svgEl = plane;
    this.planeBox.replaceChildren(plane, h('figcaption', {}, this.t('rr.plane', { i: s.pair, a, b })));
  }

  startDrag(e, key) {
    const el = e.currentTarget;
    const plane = this.svgEl;
    if (!plane) return;
    e.preventDefault();
    const start = this.state[key];
    const theta = this.theta;
    const angleAt = (ev) => {
      const m = plane.getScreenCTM();
      if (!m) return 0;
      const pt = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m.inverse());
      return Math.atan2(-pt.y, pt.x);
    };
    let last = angleAt(e);
    let acc = 0;
    const move = (ev) => {
      const a = angleAt(ev);
      acc += wrapAngle(a - last);
      last = a;
      const v = clamp(Math.round(start + acc / theta), 0, this.state.maxPosition);
      if (v !== this.state[key]) this.setState({ [key]: v });
    };
    const up = () => {
      window.removeEventListener('pointermove', move);
      window.removeEventListener('pointerup', up);
      window.removeEventListener('pointercancel', up);
      this.planeBox.querySelector(`[data-handle="${key}"]`)?.focus();
    };
    window.addEventListener('pointermove', move, { signal: this.signal });
    window.addEventListener('pointerup', up, { signal: this.signal });
    window.addEventListener('pointercancel', up, { signal: this.signal });
    el.focus?.();
  }

  drawRelative() {
    const s = this.state;
    const d = this.headDim;
    const rope = this.pe.rope({ headDim: d, base: s.base, pairing: s.pairing });
    try {
      const { q, k } = this.vectors(d);
      const dots = (mPos, nPos) => {
        const a = this.rotated(rope, q, mPos), b = this.rotated(rope, k, nPos);
        const out = new Float64Array(mPos.length);
        for (let p = 0; p < mPos.length; p++) {
          let acc = 0;
          for (let i = 0; i < d; i++) acc += a[p * d + i] * b[p * d + i];
          out[p] = acc;
        }
        return out;
      };
      const [orig, shifted] = dots([s.m, s.m + s.shift], [s.n, s.n + s.shift]);
      const [qonly] = dots([s.m + s.shift], [s.n]);
      const rows = [
        ['rr.row.orig', `(${s.m}, ${s.n})`, s.m - s.n, fmt(orig, 7)],
        ['rr.row.shifted', `(${s.m + s.shift}, ${s.n + s.shift})`, s.m - s.n, fmt(shifted, 7)],
        ['rr.row.diff', '', '', fmt(shifted - orig, 3)],
        ['rr.row.qonly', `(${s.m + s.shift}, ${s.n})`, s.m + s.shift - s.n, fmt(qonly, 7)],
      ];
      this.relTable.replaceChildren(h('table', { class: 'pe-table' },
        h('tr', {}, h('th', {}, ''), h('th', {}, this.t('rr.col.pos')), h('th', {}, this.t('rr.col.rel')), h('th', {}, this.t('rr.col.score'))),
        rows.map(([key, ...cells]) => h('tr', {}, h('td', { style: { textAlign: 'left' } }, this.t(key)), cells.map((c) => h('td', {}, String(c)))))));
      // the chart: 257 shifts from 0 to max(shift, 64)
      const N = 257;
      const span = Math.max(64, s.shift);
      const xs = Array.from({ length: N }, (_, i) => Math.round((i * span) / (N - 1)));
      const both = dots(xs.map((x) => s.m + x), xs.map((x) => s.n + x));
      const qo = dots(xs.map((x) => s.m + x), xs.map(() => s.n));
      const data = [xs, Array.from(both), Array.from(qo)];
      const u = this.relChart._peChart?.u;
      if (u) u.setData(data);
      else {
        chart(this.relChart, {
          x: xs,
          // both moved: only the relative angle matters (its colour); the query alone moved: the query's colour
          series: [{ label: this.t('rr.chart.both'), values: both, width: 2.5, color: ROLE.rel }, { label: this.t('rr.chart.qonly'), values: qo, width: 1.5, color: ROLE.q }],
          xLabel: this.t('rr.chart.x'), yLabel: this.t('rr.chart.y'), height: 220, label: this.t('rr.rel.title'),
        });
      }
    } finally {
      rope.free();
    }
  }

  drawDecay() {
    const s = this.state;
    const d = s.decayDim - (s.decayDim % 2);
    const R = s.decayMax;
    const rope = this.pe.rope({ headDim: d, base: s.base });
    try {
      // distances: every integer up to 512, then ~1500 log-spaced ones
      const set = new Set();
      for (let r = 0; r <= Math.min(R, 512); r++) set.add(r);
      if (R > 512) for (let i = 0; i <= 1500; i++) set.add(Math.round(512 * (R / 512) ** (i / 1500)));
      const dist = Int32Array.from([...set].sort((x, y) => x - y));
      const { cos, sin } = rope.cosSin(dist);
      const nf = rope.nFreq;
      const bound = new Float64Array(dist.length), sum = new Float64Array(dist.length);
      for (let p = 0; p < dist.length; p++) {
        let re = 0, im = 0, acc = 0;
        for (let i = 0; i < nf; i++) {
          re += cos[p * nf + i];
          im += sin[p * nf + i];
          acc += Math.hypot(re, im); // |S_{i+1}|
        }
        bound[p] = acc / nf;
        sum[p] = Math.hypot(re, im) / nf;
      }
      const b0 = bound[0];
      for (let p = 0; p < dist.length; p++) bound[p] /= b0;
      const logX = R > 512;
      chart(this.decayChart, {
        x: logX ? Array.from(dist, (r) => Math.max(r, 0.5)) : dist,
        series: [{ label: this.t('rr.decay.bound'), values: bound, width: 2.5 }, { label: this.t('rr.decay.sum'), values: sum, width: 1 }],
        xLabel: this.t('rr.decay.x'), yLabel: this.t('rr.decay.y'), logX, height: 240, label: this.t('rr.decay.title'),
      });
      const last = dist.length - 1;
      this.decayText.textContent = this.t('rr.decay.at', { r: dist[last], b: fmt(bound[last], 3), s: fmt(sum[last], 3) });
      Object.assign(this.decayText.dataset, { term: String(bound[last]), score: String(sum[last]) });
    } finally {
      rope.free();
    }
  }

  drawPairing() {
    const s = this.state;
    // on a phone 8 dimensions (the pattern is the same), so the numbers in the boxes stay readable (≥ 12 px)
    const d = Math.min(this.headDim, (this.pairDiagram.clientWidth || 560) < 480 ? 8 : 16);
    // diagram: two rows of d boxes, each pair one colour, arcs joining the pair
    const W = 1 + d, cell = 1;
    const rowsSvg = [];
    ['half', 'interleaved'].forEach((pairing, row) => {
      const y0 = row * 2.6 + 0.9;
      rowsSvg.push(svg('text', { x: 0, y: y0 - 0.25, 'font-size': 0.42, fill: '#1d232a' }, this.t(`rr.${pairing}`)));
      for (let i = 0; i < d / 2; i++) {
        const [a, b] = pairIndex(pairing, d, i);
        const col = `hsl(${Math.round((360 * i) / (d / 2))} 65% 55%)`;
        for (const x of [a, b]) {
          rowsSvg.push(svg('rect', { x: 0.5 + x * cell, y: y0, width: cell * 0.9, height: 0.8, fill: col, rx: 0.1 }));
          rowsSvg.push(svg('text', { x: 0.95 + x * cell, y: y0 + 0.55, 'font-size': 0.36, 'text-anchor': 'middle', fill: '#fff' }, String(i)));
        }
        const xa = 0.95 + a, xb = 0.95 + b, ym = y0 + 0.8;
        rowsSvg.push(svg('path', { d: `M ${xa} ${ym} Q ${(xa + xb) / 2} ${ym + 0.4 + 0.08 * (b - a)} ${xb} ${ym}`, fill: 'none', stroke: col, 'stroke-width': 0.06 }));
      }
    });
    this.pairDiagram.replaceChildren(
      svg('svg', { viewBox: `0 0 ${W + 0.5} 5.6`, width: '100%', role: 'img', 'aria-label': this.t('rr.pairing.diagram', { d }), style: 'max-width: 560px; display: block' }, ...rowsSvg),
      h('figcaption', {}, this.t('rr.pairing.diagram', { d })));

    // a head built for half-split pairs: k_n = u for every n, q_m = R(−δθ) u, so q̃_m·k̃_n peaks at n = m − δ
    const D = this.headDim;
    const S = 24;
    const delta = s.offset;
    const r = rng(s.seed * 7 - 4); // seed 1: phases whose wrong-pairing pattern peaks elsewhere
    const u = new Float32Array(D);
    for (let i = 0; i < D / 2; i++) {
      const ph = 2 * Math.PI * r();
      u[i] = Math.cos(ph);
      u[i + D / 2] = Math.sin(ph);
    }
    const half = this.pe.rope({ headDim: D, base: s.base, pairing: 'half' });
    const inter = this.pe.rope({ headDim: D, base: s.base, pairing: 'interleaved' });
    try {
      const qv = half.apply(Float32Array.from(u), { shape: [1, 1, 1, D], positions: [delta], inverse: true });
      const q = new Float32Array(S * D), k = new Float32Array(S * D);
      for (let p = 0; p < S; p++) {
        q.set(qv, p * D);
        k.set(u, p * D);
      }
      this.pairAttnNote.textContent = this.t('rr.pairing.attn', { delta });
      for (const [rope, box, key] of [[half, this.attnRight, 'rr.pairing.right'], [inter, this.attnWrong, 'rr.pairing.wrong']]) {
        const { weights } = this.pe.attention(q, k, k, { shape: { heads: 1, qLen: S, headDim: D }, causal: true, rope, returnWeights: true, scale: SCALE });
        let mass = 0;
        for (let i = delta; i < S; i++) mass += weights[i * S + i - delta];
        mass /= S - delta;
        const shown = Float32Array.from(weights, (w, j) => ((j % S) > Math.floor(j / S) ? -Infinity : w));
        heatmap(box, shown, S, S, {
          scheme: 'sequential', range: 1, xLabel: this.t('rr.keyPos'), yLabel: this.t('rr.queryPos'), height: 220, lang: this.lang, xColor: ROLE.k, yColor: ROLE.q,
          caption: `${this.t(key)} · ${this.t('rr.pairing.mass', { delta, v: fmt(mass, 3) })}`, label: this.t(key),
        });
        box.dataset.mass = String(mass);
      }
    } finally {
      half.free();
      inter.free();
    }
  }

  async drawModel(seed) {
    const name = this.state.model;
    const box = this.modelBox;
    box.replaceChildren(h('h4', {}, this.t('rr.model.title')), h('p', { class: 'pe-loading' }, this.t('rr.model.loading')));
    let right, wrong;
    try {
      [right, wrong] = await Promise.all([this.model(name), swappedPairingModel(this, name)]);
    } catch (e) {
      box.replaceChildren(h('h4', {}, this.t('rr.model.title')), h('p', { class: 'pe-note' }, this.t('pe.modelMissing', { name, msg: e.message })));
      return;
    }
    if (!box.isConnected) return;
    const len = right.maxPositionEmbeddings;
    const ex = copyExample(len, 1000 + seed);
    const { tokens, targets } = targetsOf(right, ex.text, ex.scored);
    const rows = [];
    for (const [m, key] of [[right, 'rr.model.right'], [wrong, 'rr.model.wrong']]) {
      const { logits } = m.forward(tokens);
      const pred = argmaxRows(logits, tokens.length, m.vocabSize);
      const ev = m.evaluate(tokens, { targets });
      rows.push({ key, pred, ev });
    }
    const chars = [...ex.text];
    const cellRow = (label, cells) => h('tr', {}, h('th', { style: { textAlign: 'left', whiteSpace: 'nowrap' } }, label), ...cells);
    const inputCells = chars.slice(0, tokens.length).map((c) => h('td', {}, c));
    const table = h('table', { class: 'pe-table pe-rr-chars', style: { fontFamily: 'ui-monospace, monospace', whiteSpace: 'nowrap', overflowWrap: 'normal' } },
      cellRow(this.t('rr.model.input'), inputCells),
      rows.map(({ key, pred }) => cellRow(this.t(key), Array.from(pred, (p, i) => {
        if (targets[i] < 0) return h('td', { style: { color: '#b9c1c9' } }, '·');
        const ok = p === targets[i];
        return h('td', { class: ok ? 'pe-good' : 'pe-bad', style: { fontWeight: ok ? 'normal' : 'bold' } }, right.vocab[p]);
      }))));
    box.replaceChildren(h('h4', {}, this.t('rr.model.title')), h('p', {}, this.t('rr.model.note')),
      h('div', { class: 'pe-scroll' }, table),
      ...rows.map(({ key, ev }) => h('p', { 'data-accuracy': String(ev.accuracy) },
        h('strong', {}, `${this.t(key)}: `), this.t('rr.model.acc', { a: `${(100 * ev.accuracy).toFixed(1)}%`, l: fmt(ev.loss, 3) }))),
      controls(button(this, { key: 'another', label: 'rr.model.another', secondary: true, onClick: () => { this.modelSeed = (this.modelSeed ?? seed) + 1; return this.drawModel(this.modelSeed); } })));
  }
}

function clamp(x, lo, hi) {
  return Math.max(lo, Math.min(hi, x));
}

function mod2pi(x) {
  const t = 2 * Math.PI;
  return x - t * Math.floor(x / t);
}

function uniq(a) {
  return [...new Set(a)].sort((x, y) => x - y);
}

const SUBS = '₀₁₂₃₄₅₆₇₈₉';
function sub(n) {
  return String(n).split('').map((c) => SUBS[Number(c)]).join('');
}

define('pe-rope-rotation', PeRopeRotation);
