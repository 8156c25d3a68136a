// <pe-why-position>: attention without a position encoding cannot tell a sequence from its permutation.
//
// Three tokens with fixed random embeddings (“猫 吃 鱼”, cat eats fish) go through one attention head
// (pe.attention) in two orders, A = 猫 吃 鱼 and B = 鱼 吃 猫. With no encoding, each token's output is the
// same in both orders (the weights are the same matrix with rows and columns permuted): the head sees a set,
// not a sequence. Sinusoidal (added to the embeddings: pe.sinusoidal.add), RoPE (rope: pe.rope) and ALiBi
// (alibi slopes) make the outputs differ. The causal mask alone also breaks the symmetry (a decoder's first
// token sees only itself), which is why causal models without any encoding still learn some order.
//
// Attributes: encoding = none | sinusoidal | rope | alibi (default none), causal (bool, default false),
// seed (1..99, default 1: the random embeddings and projections), dim (4..64 even, default 8).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { heatmap } from './lib/heatmap.js';
import { controls, select, checkbox, range } from './lib/controls.js';
import { texNode } from './lib/math.js';

registerStrings({
  en: {
    'why.encoding': 'position encoding',
    'why.enc.none': 'none (NoPE)',
    'why.enc.sinusoidal': 'sinusoidal (added to embeddings)',
    'why.enc.rope': 'RoPE (rotates q and k)',
    'why.enc.alibi': 'ALiBi (slope 0.5)',
    'why.causal': 'causal mask',
    'why.seed': 'random weights, seed',
    'why.orderA': 'order A: 猫 吃 鱼 (cat eats fish)',
    'why.orderB': 'order B: 鱼 吃 猫 (fish eats cat)',
    'why.weights': 'attention weights (query row, key column)',
    'why.outputs': 'output vector of each token',
    'why.diff': 'largest difference between a token’s output in order A and in order B',
    'why.same': 'the same up to float rounding: the head cannot tell the two sentences apart',
    'why.differ': 'different: the encoding tells the two orders apart',
    'why.table': 'every encoding at once (same weights)',
    'why.col.enc': 'encoding',
    'why.col.diff': 'max difference',
    'why.col.verdict': 'orders told apart?',
    'why.yes': 'yes',
    'why.no': 'no',
    'why.note': 'Without an encoding, attention is permutation-equivariant: permuting the input rows permutes the output rows and nothing else. Each token’s output depends on which tokens are present, not on where they are.',
    'why.noteCausal': 'With the causal mask the first token sees only itself and the last sees everything, so even without an encoding the outputs change with the order: causal models can infer some position from the mask alone.',
    'why.formula': 'for every permutation matrix P, with no encoding and no mask',
    'why.tok.猫': '猫 cat',
    'why.tok.吃': '吃 eats',
    'why.tok.鱼': '鱼 fish',
  },
  zh: {
    'why.encoding': '位置编码',
    'why.enc.none': '无（NoPE）',
    'why.enc.sinusoidal': '正弦编码（加到词嵌入上）',
    'why.enc.rope': 'RoPE（旋转 q 和 k）',
    'why.enc.alibi': 'ALiBi（斜率 0.5）',
    'why.causal': '因果掩码',
    'why.seed': '随机权重的种子',
    'why.orderA': '顺序 A：猫 吃 鱼',
    'why.orderB': '顺序 B：鱼 吃 猫',
    'why.weights': '注意力权重（行为查询，列为键）',
    'why.outputs': '每个词元的输出向量',
    'why.diff': '同一词元在顺序 A 与顺序 B 中输出的最大差异',
    'why.same': '除浮点舍入外完全相同：这个注意力头分不清这两句话',
    'why.differ': '不同：位置编码让两种顺序得以区分',
    'why.table': '所有编码一览（相同权重）',
    'why.col.enc': '编码',
    'why.col.diff': '最大差异',
    'why.col.verdict': '能区分顺序吗？',
    'why.yes': '能',
    'why.no': '不能',
    'why.note': '没有位置编码时，注意力对输入是置换等变的：打乱输入的行，只会同样地打乱输出的行。每个词元的输出只取决于出现了哪些词元，而不取决于它们在哪里。',
    'why.noteCausal': '加上因果掩码后，第一个词元只能看到自己，最后一个能看到全部，所以即使没有位置编码，输出也会随顺序改变：因果模型仅凭掩码就能推断出一些位置信息。',
    'why.formula': '对任意置换矩阵 P 成立（无位置编码、无掩码时）',
    'why.tok.猫': '猫',
    'why.tok.吃': '吃',
    'why.tok.鱼': '鱼',
  },
});

const ENCODINGS = ['none', 'sinusoidal', 'rope', 'alibi'];
const TOKENS = ['猫', '吃', '鱼'];
const ORDER_A = [0, 1, 2];
const ORDER_B = [2, 1, 0];
const SAME = 1e-5;

/** Seeded standard-normal-ish numbers (sum of uniforms; plain data, not an encoding). */
function randoms(n, seed) {
  let s = (seed * 2654435761) >>> 0;
  const u = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (u() + u() + u() - 1.5) * 2;
  return out;
}

/** (rows, d) @ (d, d) */
function project(x, w, rows, d) {
  const y = new Float32Array(rows * d);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < d; j++) {
      let acc = 0;
      for (let i = 0; i < d; i++) acc += x[r * d + i] * w[i * d + j];
      y[r * d + j] = acc;
    }
  }
  return y;
}

class PeWhyPosition extends PeElement {
  static attrs = {
    encoding: { type: 'enum', values: ENCODINGS, default: 'none' },
    causal: { type: 'bool', default: false },
    seed: { type: 'int', default: 1, min: 1, max: 99 },
    dim: { type: 'int', default: 8, min: 4, max: 64 },
  };

  /** Attention of one order under one encoding: { out (3, d), weights (3, 3) }. */
  run(order, encoding) {
    const pe = this.pe;
    const d = this.state.dim - (this.state.dim % 2);
    const L = order.length;
    const seed = this.state.seed;
    const emb = randoms(TOKENS.length * d, seed);
    const wq = randoms(d * d, seed + 101).map((v) => v / Math.sqrt(d));
    const wk = randoms(d * d, seed + 202).map((v) => v / Math.sqrt(d));
    const wv = randoms(d * d, seed + 303).map((v) => v / Math.sqrt(d));
    const x = new Float32Array(L * d);
    order.forEach((tok, i) => x.set(emb.subarray(tok * d, (tok + 1) * d), i * d));
    if (encoding === 'sinusoidal') pe.sinusoidal.add(x, { shape: [1, L, d] });
    const q = project(x, wq, L, d).map((v) => v * 2);
    const k = project(x, wk, L, d);
    const v = project(x, wv, L, d);
    const opts = { shape: { heads: 1, qLen: L, headDim: d }, causal: this.state.causal, returnWeights: true };
    let rope = null;
    if (encoding === 'rope') opts.rope = rope = pe.rope({ headDim: d, base: 10000 });
    if (encoding === 'alibi') opts.alibi = [0.5];
    try {
      const { out, weights } = pe.attention(q, k, v, opts);
      return { out, weights, d };
    } finally {
      rope?.free();
    }
  }

  /** Max over tokens of |out_A(token) − out_B(token)|. */
  difference(a, b) {
    const d = a.d;
    let m = 0;
    for (let tok = 0; tok < TOKENS.length; tok++) {
      const ra = ORDER_A.indexOf(tok);
      const rb = ORDER_B.indexOf(tok);
      for (let j = 0; j < d; j++) m = Math.max(m, Math.abs(a.out[ra * d + j] - b.out[rb * d + j]));
    }
    return m;
  }

  render() {
    this.body.append(
      controls(
        select(this, { key: 'encoding', label: 'why.encoding', options: ENCODINGS.map((e) => [e, `why.enc.${e}`]) }),
        checkbox(this, { key: 'causal', label: 'why.causal' }),
        range(this, { key: 'seed', label: 'why.seed', min: 1, max: 20 }),
      ),
      h('div', { class: 'pe-row' },
        this.colA = h('div', {}, h('h4', {}, this.t('why.orderA')), this.wA = h('div'), this.oA = h('div')),
        this.colB = h('div', {}, h('h4', {}, this.t('why.orderB')), this.wB = h('div'), this.oB = h('div'))),
      this.verdict = h('div', { class: 'pe-verdict', 'aria-live': 'polite' }),
      h('h4', {}, this.t('why.table')),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      this.note = h('p', { class: 'pe-note' }),
      h('div', { class: 'pe-row', style: { alignItems: 'center' } },
        texNode('\\mathrm{Attn}(PX) = P\\,\\mathrm{Attn}(X)', { display: true }),
        h('p', { class: 'pe-note' }, this.t('why.formula'))),
    );
  }

  draw() {
    const enc = this.state.encoding;
    const a = this.run(ORDER_A, enc);
    const b = this.run(ORDER_B, enc);
    const names = (order) => order.map((tok) => this.t(`why.tok.${TOKENS[tok]}`));
    const common = { scheme: 'sequential', range: 1, height: 150, lang: this.lang, legend: false };
    heatmap(this.wA, a.weights, 3, 3, { ...common, xNames: names(ORDER_A), yNames: names(ORDER_A), caption: this.t('why.weights') });
    heatmap(this.wB, b.weights, 3, 3, { ...common, xNames: names(ORDER_B), yNames: names(ORDER_B), caption: this.t('why.weights') });
    let r = 0;
    for (const v of [...a.out, ...b.out]) r = Math.max(r, Math.abs(v));
    const outOpts = { range: r, height: 110, lang: this.lang, legend: false, caption: this.t('why.outputs') };
    heatmap(this.oA, a.out, 3, a.d, { ...outOpts, yNames: names(ORDER_A), xTicks: [0, a.d - 1] });
    heatmap(this.oB, b.out, 3, b.d, { ...outOpts, yNames: names(ORDER_B), xTicks: [0, b.d - 1] });
    const diff = this.difference(a, b);
    const same = diff < SAME;
    this.dataset.difference = String(diff);
    this.verdict.replaceChildren(
      h('div', { class: 'pe-note' }, this.t('why.diff')),
      h('div', { class: `pe-big ${same ? 'pe-bad' : 'pe-good'}` }, fmt(diff, 3)),
      h('div', {}, this.t(same ? 'why.same' : 'why.differ')));

    const rows = ENCODINGS.map((e) => {
      const d2 = e === enc ? diff : this.difference(this.run(ORDER_A, e), this.run(ORDER_B, e));
      return h('tr', {}, h('td', { style: { textAlign: 'left' } }, this.t(`why.enc.${e}`)), h('td', {}, fmt(d2, 3)),
        h('td', { class: d2 < SAME ? 'pe-bad' : 'pe-good' }, this.t(d2 < SAME ? 'why.no' : 'why.yes')));
    });
    this.tableBox.replaceChildren(h('table', { class: 'pe-table' },
      h('thead', {}, h('tr', {}, h('th', {}, this.t('why.col.enc')), h('th', {}, this.t('why.col.diff')), h('th', {}, this.t('why.col.verdict')))),
      h('tbody', {}, rows)));
    this.note.textContent = this.t(this.state.causal ? 'why.noteCausal' : 'why.note');
  }
}

define('pe-why-position', PeWhyPosition);
