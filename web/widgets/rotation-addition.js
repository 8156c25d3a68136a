// <pe-rotation-addition>: why rotation beats addition. With the position added to the embedding (Vaswani et al.
// 2017), the score of a query at m and a key at n expands into four terms,
//   (x + p_m)ᵀ W_qᵀ W_k (x' + p_n) = xᵀWx' (content) + xᵀW p_n + p_mᵀW x' (cross terms) + p_mᵀW p_n (position),
// and the cross terms move with the absolute positions even when n − m stays put. RoPE (Su et al. 2021) rotates
// q = W_q x and k = W_k x' instead, so q̃·k̃ = qᵀR((n−m)θ)k depends on n − m only (the page's convention:
// R(φ) = [[cos, −sin], [sin, cos]], q̃ = R(mθ)q, k̃ = R(nθ)k).
//
// Shown: the formulas, a chart of every term against the query position m with n − m fixed (slide m, n − m, or
// set W_q = W_k = I, where the position·position term becomes relative too but the cross terms do not), and a
// table of the terms at the chosen m. The position table comes from pe.sinusoidal, the rotation from
// pe.rope().apply; q, k, x, x', W_q, W_k are seeded Gaussians (lib/random.js).
// Attributes: dim (default 16), m (default 20), delta (n − m, default −4: the key 4 tokens back), identity (W = I, default off),
// seed (default 1), max-position (the chart's range, default 256).
import { ROLE } from './lib/palette.js';
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, checkbox, select, withValue } from './lib/controls.js';
import { chart } from './lib/chart.js';
import { tex } from './lib/math.js';
import { gaussian } from './lib/random.js';
import { addStyle } from './lib/style.js';

addStyle('pe-ra', `
.pe-widget .pe-ra-swatch { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .35em; vertical-align: -.05em; }
.pe-widget .pe-ra-table th[scope=row] { font-weight: 500; white-space: nowrap; }
.pe-widget .pe-ra-formulas h4 { margin: .5rem 0 0; font-size: .92rem; }
`);

// one colour per term, the same in the formula, the chart and the table; q and k themselves (and what they are made
// of: x, p_m, W_q against x', p_n, W_k) keep the colours every figure gives them (ROLE.q / ROLE.k of play-lab's
// lib/palette.js), which no term uses
const Q = ROLE.q, K = ROLE.k;
const C = { cc: '#7f8c8d', cp: '#d68910', pc: '#8e44ad', pp: '#16a2b8', add: '#34495e', rope: '#27864a' };
const TERMS = ['cc', 'cp', 'pc', 'pp', 'add', 'rope'];

registerStrings({
  en: {
    'ra.title': 'Adding positions against rotating them',
    'ra.intro': 'Give a query token the content x at position m and a key token the content x′ at position n. Added positions enter the score through four terms; a rotation enters it through n − m alone.',
    'ra.add': 'Added to the embedding (sinusoidal or learned)',
    'ra.rot': 'Rotated (RoPE)',
    'ra.m': 'query position m',
    'ra.delta': 'distance n − m',
    'ra.dim': 'dimension d',
    'ra.identity': 'W_q = W_k = I (no projections)',
    'ra.chart': 'Each term of the score against the query position m, with n − m held fixed',
    'ra.xlabel': 'query position m (key at m + (n − m))',
    'ra.ylabel': 'contribution to the score',
    'ra.t.cc': 'content · content',
    'ra.t.cp': 'content · position (x W p_n)',
    'ra.t.pc': 'position · content (p_m W x′)',
    'ra.t.pp': 'position · position',
    'ra.t.add': 'score with added positions (the sum)',
    'ra.t.rope': 'RoPE score q̃·k̃',
    'ra.term': 'term',
    'ra.at': 'at m = {m}, n = {n}',
    'ra.range': 'range over the chart',
    'ra.verdict': 'With n − m = {d} held fixed, the added-position score moves over a range of {add} as m runs over {count} positions; the RoPE score moves by {rope} (float32 rounding).',
    'ra.note': 'The cross terms compare one token’s content with the other token’s absolute position, so they change whenever the pair slides along the sequence. Without projections (W = I) the sinusoidal position·position term is Σᵢ cos((n − m)ωᵢ), relative after all, yet the cross terms stay; with learned W_q, W_k even that term is absolute. RoPE has no cross terms: each pair of q is turned by mθᵢ and of k by nθᵢ, and only the difference survives the dot product.',
    'ra.sign': 'Sign convention: R(φ) turns counter-clockwise, q̃ = R(mθ)q and k̃ = R(nθ)k, so q̃ᵀk̃ = qᵀR(mθ)ᵀR(nθ)k = qᵀR((n − m)θ)k.',
  },
  zh: {
    'ra.title': '把位置加上去，还是把向量转起来',
    'ra.intro': '设查询词元的内容为 x、位置为 m，键词元的内容为 x′、位置为 n。位置若是加上去的，会通过四项进入注意力分数；若是旋转，则只通过 n − m 进入。',
    'ra.add': '加到词嵌入上（正弦或可学习）',
    'ra.rot': '旋转（RoPE）',
    'ra.m': '查询位置 m',
    'ra.delta': '距离 n − m',
    'ra.dim': '维度 d',
    'ra.identity': 'W_q = W_k = I（不做投影）',
    'ra.chart': '保持 n − m 不变时，分数的每一项随查询位置 m 的变化',
    'ra.xlabel': '查询位置 m（键位于 m + (n − m)）',
    'ra.ylabel': '对分数的贡献',
    'ra.t.cc': '内容 · 内容',
    'ra.t.cp': '内容 · 位置（x W p_n）',
    'ra.t.pc': '位置 · 内容（p_m W x′）',
    'ra.t.pp': '位置 · 位置',
    'ra.t.add': '加法位置编码的分数（四项之和）',
    'ra.t.rope': 'RoPE 分数 q̃·k̃',
    'ra.term': '项',
    'ra.at': '在 m = {m}、n = {n} 处',
    'ra.range': '图中的变化幅度',
    'ra.verdict': '保持 n − m = {d} 不变、让 m 走过 {count} 个位置：加法位置编码的分数变化幅度为 {add}，RoPE 分数只变化 {rope}（float32 舍入）。',
    'ra.note': '交叉项拿一个词元的内容去比较另一个词元的绝对位置，所以只要这对词元在序列中整体平移，它们就会变。不做投影时（W = I），正弦编码的“位置 · 位置”项等于 Σᵢ cos((n − m)ωᵢ)，倒也是相对的，但交叉项依然存在；有了可学习的 W_q、W_k，连这一项也变成绝对的。RoPE 没有交叉项：q 的每一对维度转过 mθᵢ，k 的转过 nθᵢ，点积之后只剩下两者之差。',
    'ra.sign': '符号约定：R(φ) 按逆时针旋转，q̃ = R(mθ)q，k̃ = R(nθ)k，于是 q̃ᵀk̃ = qᵀR(mθ)ᵀR(nθ)k = qᵀR((n − m)θ)k。',
  },
});

/** y = M x for a d×d row-major M (double accumulation). */
function matVec(M, x, xo, d) {
  const y = new Float64Array(d);
  for (let r = 0; r < d; r++) {
    let s = 0;
    for (let c = 0; c < d; c++) s += M[r * d + c] * x[xo + c];
    y[r] = s;
  }
  return y;
}
const dotv = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);

class PeRotationAddition extends PeElement {
  static attrs = {
    dim: { type: 'int', default: 16, min: 4, max: 128 },
    m: { type: 'int', default: 20, min: 0, max: 4096 },
    delta: { type: 'int', default: -4, min: -32, max: 32 },
    identity: { type: 'bool', default: false },
    seed: { type: 'int', default: 1, min: 0 },
    'max-position': { type: 'int', default: 256, min: 16, max: 4096 },
  };

  render() {
    const q = (x) => `\\textcolor{${Q}}{${x}}`, k = (x) => `\\textcolor{${K}}{${x}}`;
    const term = (id, body) => `\\underbrace{${body}}_{\\textcolor{${C[id]}}{\\blacksquare}}`;
    // on several lines, so the expansion fits a phone without a sideways scroll
    const addTex = `\\begin{aligned}&(${q('x')}+${q('p_m')})^{\\top}${q('W_q')}^{\\top}${k('W_k')}\\,(${k("x'")}+${k('p_n')}) \\\\ &\\;= ${term('cc', `${q('x')}^{\\top}W${k("x'")}`)} + ${term('cp', `${q('x')}^{\\top}W${k('p_n')}`)} \\\\ &\\;\\;+ ${term('pc', `${q('p_m')}^{\\top}W${k("x'")}`)} + ${term('pp', `${q('p_m')}^{\\top}W${k('p_n')}`)}, \\quad W = ${q('W_q')}^{\\top}${k('W_k')}\\end{aligned}`;
    const rotTex = `\\begin{aligned}${term('rope', `${q('\\tilde q_m')}^{\\top}${k('\\tilde k_n')}`)} &= \\big(R(m\\theta)\\,${q('q')}\\big)^{\\top}R(n\\theta)\\,${k('k')} \\\\ &= ${q('q')}^{\\top}R\\big((n-m)\\theta\\big)\\,${k('k')}, \\qquad ${q('q')} = ${q('W_q x')},\\ ${k('k')} = ${k("W_k x'")}\\end{aligned}`;
    const max = this.state.maxPosition;
    this.body.append(
      h('h3', {}, this.t('ra.title')), h('p', {}, this.t('ra.intro')),
      h('div', { class: 'pe-ra-formulas' },
        h('h4', {}, this.t('ra.add')), tex(h('div', { class: 'pe-ra-add' }), addTex, { display: true }),
        h('h4', {}, this.t('ra.rot')), tex(h('div', { class: 'pe-ra-rot' }), rotTex, { display: true }),
        h('p', { class: 'pe-note' }, this.t('ra.sign'))),
      controls(
        range(this, { key: 'm', label: 'ra.m', min: 0, max }),
        range(this, { key: 'delta', label: 'ra.delta', min: -32, max: 32 }),
        select(this, { key: 'dim', label: 'ra.dim', raw: true, options: withValue([8, 16, 32, 64], this.state.dim).map((v) => [v, String(v)]) }),
        checkbox(this, { key: 'identity', label: 'ra.identity' })),
      h('h4', {}, this.t('ra.chart')),
      this.chartBox = h('div', { class: 'pe-ra-chart' }),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      this.verdict = h('p', { class: 'pe-verdict', 'aria-live': 'polite' }),
      h('p', { class: 'pe-note' }, this.t('ra.note')));
  }

  /** Every term for query positions 0..max at key positions m + delta (through pe.sinusoidal and rope.apply). */
  compute() {
    const { dim, delta, identity, seed, maxPosition: max } = this.state;
    const d = dim - (dim % 2); // RoPE pairs dimensions
    const x = gaussian(d, seed), x2 = gaussian(d, seed + 1);
    const eye = Float32Array.from({ length: d * d }, (_, i) => (i % (d + 1) === 0 ? 1 : 0));
    const scaleW = (w) => w.map((v) => v / Math.sqrt(d));
    const Wq = identity ? eye : scaleW(gaussian(d * d, seed + 2)), Wk = identity ? eye : scaleW(gaussian(d * d, seed + 3));
    // query positions from the first whose key position m + delta is ≥ 0
    const lo = Math.max(0, -delta);
    const ms = Array.from({ length: max + 1 }, (_, i) => lo + i);
    const ns = ms.map((m) => m + delta);
    const table = this.pe.sinusoidal(Math.max(ms[ms.length - 1], ns[ns.length - 1]) + 1, d); // row p = position p
    const q = matVec(Wq, x, 0, d), k = matVec(Wk, x2, 0, d);
    const cc = dotv(q, k);
    const terms = { cc: [], cp: [], pc: [], pp: [], add: [], rope: [] };
    for (let i = 0; i < ms.length; i++) {
      const pq = matVec(Wq, table, ms[i] * d, d), pk = matVec(Wk, table, ns[i] * d, d);
      const cp = dotv(q, pk), pc = dotv(pq, k), pp = dotv(pq, pk);
      terms.cc.push(cc);
      terms.cp.push(cp);
      terms.pc.push(pc);
      terms.pp.push(pp);
      terms.add.push(cc + cp + pc + pp);
    }
    // RoPE: every query position at once, (1, S, 1, d) tensors rotated in place by the library
    const rope = this.own(this.pe.rope({ headDim: d }));
    const S = ms.length;
    const qs = new Float32Array(S * d), ks = new Float32Array(S * d);
    for (let i = 0; i < S; i++) {
      qs.set(q, i * d);
      ks.set(k, i * d);
    }
    rope.apply(qs, { shape: [1, S, 1, d], positions: Int32Array.from(ms) });
    rope.apply(ks, { shape: [1, S, 1, d], positions: Int32Array.from(ns) });
    this.release(rope);
    for (let i = 0; i < S; i++) {
      let s = 0;
      for (let j = 0; j < d; j++) s += qs[i * d + j] * ks[i * d + j];
      terms.rope.push(s);
    }
    return { ms, ns, terms };
  }

  draw() {
    const { m, delta } = this.state;
    const { ms, ns, terms } = this.compute();
    const i = Math.min(Math.max(0, m - ms[0]), ms.length - 1);
    const span = (a) => Math.max(...a) - Math.min(...a);
    chart(this.chartBox, {
      x: ms,
      series: TERMS.map((k) => ({ label: this.t(`ra.t.${k}`), values: terms[k], color: C[k], width: k === 'add' || k === 'rope' ? 2.5 : 1.5, dash: k === 'add' ? [6, 3] : undefined })),
      xLabel: this.t('ra.xlabel'), yLabel: this.t('ra.ylabel'), height: 280, label: this.t('ra.chart'),
    });
    const swatch = (k) => h('span', { class: 'pe-ra-swatch', style: { background: C[k] } });
    this.tableBox.replaceChildren(h('table', { class: 'pe-table pe-ra-table' },
      h('tr', {}, h('th', {}, this.t('ra.term')), h('th', {}, this.t('ra.at', { m: ms[i], n: ns[i] })), h('th', {}, this.t('ra.range'))),
      TERMS.map((k) => h('tr', { 'data-term': k, 'data-value': String(terms[k][i]), 'data-span': String(span(terms[k])) },
        h('th', { scope: 'row', style: { textAlign: 'left' } }, swatch(k), this.t(`ra.t.${k}`)),
        h('td', {}, fmt(terms[k][i], 4)), h('td', {}, fmt(span(terms[k]), 3))))));
    this.verdict.textContent = this.t('ra.verdict', { d: delta, count: ms.length, add: fmt(span(terms.add), 3), rope: fmt(span(terms.rope), 2) });
    this.dataset.m = String(ms[i]);
    this.dataset.n = String(ns[i]);
  }
}

define('pe-rotation-addition', PeRotationAddition);
