// <pe-learned>: a learned absolute position table (GPT-2, OPT), taken from the trained tiny model's
// safetensors file (model.embed_positions.weight, one row per position up to max_position_embeddings).
//
//   the table as a heatmap; the cosine similarity of its rows (what training put into it); a lookup through
//   pe.learned(table).lookup([p]): inside the table a row, at or past maxLen the library's RangeError, shown as
//   it is; the model's loss at its training length (computed here on the check set) and past it (the model
//   cannot run: its forward refuses, and `npm run eval` records no number).
//
// Attributes: model (default copy-learned; any <task>-learned model), probe (the position looked up, default
// = maxLen, i.e. the first one past the table), models-base.
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { heatmap } from './lib/heatmap.js';
import { chart } from './lib/chart.js';
import { controls, number } from './lib/controls.js';
import { texNode } from './lib/math.js';
import { readSafetensors } from './lib/safetensors.js';

registerStrings({
  en: {
    'learned.table': 'The trained table: {rows} positions × {cols} dimensions',
    'learned.tableCap': 'model.embed_positions.weight of the “{model}” model, trained by this project',
    'learned.sim': 'Cosine similarity of the rows',
    'learned.simText': 'Nobody told the model which positions are near each other. After training, rows of nearby positions are alike and distant ones are not (the right-hand chart: mean similarity against distance), with a checkerboard on top: here positions an even distance apart are much more alike than odd ones. Whatever order the table has, it learned from the data alone.',
    'learned.byDist': 'mean cos(row p, row p + k) against k',
    'learned.dist': 'distance k',
    'learned.meanSim': 'mean similarity',
    'learned.simCap': 'cos(row p, row q)',
    'learned.past': 'Past the end of the table',
    'learned.pastText': 'A learned table has exactly maxLen rows. Ask the library for any other position and it refuses, naming the bound:',
    'learned.probe': 'look up position',
    'learned.row': 'row {p} of the table (first 16 of {d} values): {vals}',
    'learned.refused': 'refused',
    'learned.loss': 'The model’s loss inside and past the training length',
    'learned.len': 'length',
    'learned.lossCol': 'loss (nats / token)',
    'learned.accCol': 'accuracy',
    'learned.source': 'where the number comes from',
    'learned.here': 'computed here, on the check set',
    'learned.eval': 'npm run eval',
    'learned.evalN': 'npm run eval: {k} sequences',
    'learned.config': 'config.json: {k} sequences, at training time',
    'learned.cannot': 'cannot run: {msg}',
    'learned.noEval': '(eval.json not shipped: run npm run eval)',
    'learned.why': 'Sinusoidal and rotary encodings are formulas and give some vector for any position (whether the model then copes is another matter: see the extrapolation chart). A learned table has nothing to give: training never produced row {n}.',
  },
  zh: {
    'learned.table': '训练得到的表：{rows} 个位置 × {cols} 维',
    'learned.tableCap': '本项目训练的“{model}”模型中的 model.embed_positions.weight',
    'learned.sim': '各行之间的余弦相似度',
    'learned.simText': '没有人告诉模型哪些位置彼此相邻。训练之后，相近位置的行彼此相似，相距较远的则不然（右图：平均相似度随距离的变化）；此外还叠加着棋盘状的花纹：在这里，相距偶数个位置的行比相距奇数个的更相似。这张表里的任何秩序，都只是从数据中学来的。',
    'learned.byDist': 'cos(第 p 行, 第 p + k 行) 的平均值随 k 的变化',
    'learned.dist': '距离 k',
    'learned.meanSim': '平均相似度',
    'learned.simCap': 'cos(第 p 行, 第 q 行)',
    'learned.past': '超出表的末尾',
    'learned.pastText': '可学习的位置表恰好有 maxLen 行。向本库查询任何其他位置，它都会拒绝，并指出界限：',
    'learned.probe': '查询位置',
    'learned.row': '表中第 {p} 行（{d} 个值中的前 16 个）：{vals}',
    'learned.refused': '被拒绝',
    'learned.loss': '模型在训练长度以内和以外的损失',
    'learned.len': '长度',
    'learned.lossCol': '损失（每个词元的奈特数）',
    'learned.accCol': '准确率',
    'learned.source': '数字来源',
    'learned.here': '在此页面上用检验集算出',
    'learned.eval': 'npm run eval 的结果',
    'learned.evalN': 'npm run eval 的结果：{k} 个序列',
    'learned.config': 'config.json：训练时在 {k} 个序列上测得',
    'learned.cannot': '无法运行：{msg}',
    'learned.noEval': '（未附带 eval.json：请运行 npm run eval）',
    'learned.why': '正弦编码和旋转编码都是公式，对任何位置都能给出一个向量（模型能否应付则是另一回事：见外推图）。可学习的表却无从给出：训练从未产生过第 {n} 行。',
  },
});

const TABLE = 'model.embed_positions.weight';

class PeLearned extends PeElement {
  static attrs = {
    model: { type: 'string', default: 'copy-learned' },
    probe: { type: 'int', default: null, max: 1 << 20 }, // null: the first position past the table
  };

  static setupOn = ['model'];

  async setup() {
    const name = this.state.model;
    const [cfg, bytes] = await Promise.all([this.modelConfig(name), this.modelFile(name)]);
    const file = readSafetensors(bytes);
    const t = file.parsed.tensors.get(TABLE);
    if (!t) throw new Error(`${name}: no ${TABLE} in the safetensors file (is it a learned-position model?)`);
    this.maxLen = t.shape[0];
    this.dModel = t.shape[1];
    this.tableData = file.f32(TABLE);
    this.cfg = cfg;
    this.learnedPe = this.own(this.pe.learned(this.tableData, { dModel: this.dModel, maxLen: this.maxLen }));
    this.tiny = await this.model(name);
    const task = cfg.posenc?.task ?? name.split('-')[0];
    this.check = await this.modelsJson(`${task}-check.json`).catch(() => null);
    this.evalRows = await this.modelsJson('eval.json').then((e) => e, () => null);
  }

  render() {
    const n = this.maxLen;
    this.body.append(
      h('h4', {}, this.t('learned.table', { rows: n, cols: this.dModel })),
      this.tableFig = h('div'),
      h('h4', {}, this.t('learned.sim')),
      h('p', { class: 'pe-note' }, this.t('learned.simText')),
      h('div', { class: 'pe-row' }, this.simFig = h('div', { style: { maxWidth: '380px' } }),
        h('div', {}, h('figcaption', {}, this.t('learned.byDist')), this.distChart = h('div'))),
      h('h4', {}, this.t('learned.past')),
      texNode(`x_p \\mathrel{+}= W_{\\mathrm{pos}}[p],\\qquad W_{\\mathrm{pos}} \\in \\mathbb{R}^{${n} \\times ${this.dModel}},\\qquad p \\in \\{0, \\dots, ${n - 1}\\}`, { display: true }),
      h('p', {}, this.t('learned.pastText')),
      // no lower bound here: a negative position goes to the library, which refuses it as it refuses one past the table
      controls(number(this, { key: 'probe', label: 'learned.probe', max: 100000, integer: true, value: this.probePos })),
      this.probeBox = h('div', { 'aria-live': 'polite' }),
      h('h4', {}, this.t('learned.loss')),
      this.lossBox = h('div', { class: 'pe-scroll' }),
      h('p', { class: 'pe-note' }, this.t('learned.why', { n })),
    );
  }

  get probePos() {
    return this.state.probe ?? this.maxLen;
  }

  async draw() {
    const n = this.maxLen;
    const d = this.dModel;
    const T = this.tableData;
    heatmap(this.tableFig, T, n, d, {
      transpose: true, height: 200, xLabel: this.t('pe.position'), yLabel: this.t('pe.dim'),
      caption: this.t('learned.tableCap', { model: this.state.model }), lang: this.lang,
    });
    // after a language switch: the similarity map, the chart and the probe in tasks of their own
    if (this.relabeling) await this.yieldIfLong();
    // the similarities depend on the table only (setup() loads it once): kept, so a language switch only redraws
    if (this.simOf !== T) {
      const norms = new Float64Array(n);
      for (let p = 0; p < n; p++) {
        let s = 0;
        for (let j = 0; j < d; j++) s += T[p * d + j] ** 2;
        norms[p] = Math.sqrt(s) || 1;
      }
      const sim = new Float32Array(n * n);
      for (let p = 0; p < n; p++) {
        for (let q = 0; q < n; q++) {
          let s = 0;
          for (let j = 0; j < d; j++) s += T[p * d + j] * T[q * d + j];
          sim[p * n + q] = s / (norms[p] * norms[q]);
        }
      }
      this.sim = sim;
      this.simOf = T;
    }
    const sim = this.sim;
    heatmap(this.simFig, sim, n, n, { range: 1, height: 300, xLabel: 'q', yLabel: 'p', caption: this.t('learned.simCap'), lang: this.lang });
    if (this.relabeling) await this.yieldIfLong();
    const ks = Array.from({ length: n - 1 }, (_, k) => k + 1);
    const mean = ks.map((k) => {
      let acc = 0;
      for (let p = 0; p + k < n; p++) acc += sim[p * n + p + k];
      return acc / (n - k);
    });
    chart(this.distChart, {
      x: ks, series: [{ label: this.t('learned.meanSim'), values: mean, points: true, width: 1.5 }],
      xLabel: this.t('learned.dist'), yLabel: this.t('learned.meanSim'), height: 280, yRange: [-1, 1], label: this.t('learned.byDist'),
    });
    if (this.relabeling) await this.yieldIfLong();
    this.drawProbe();
    this.drawLoss();
  }

  drawProbe() {
    const p = this.probePos;
    try {
      const row = this.learnedPe.lookup([p]);
      const vals = Array.from(row.subarray(0, 16), (v) => v.toFixed(3).replace('-', '−')).join(', ');
      this.probeBox.replaceChildren(h('p', { class: 'pe-good' }, this.t('learned.row', { p, d: this.dModel, vals })));
      this.dataset.probe = 'row';
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      this.probeBox.replaceChildren(h('p', {}, h('strong', { class: 'pe-bad' }, `${this.t('learned.refused')}: `),
        h('code', { translate: 'no' }, `${e.name}: ${e.message}`)));
      this.dataset.probe = 'refused';
    }
  }

  drawLoss() {
    const n = this.maxLen;
    const rows = [];
    // in distribution, here: the check set at the training length
    if (this.check?.sequences?.length) {
      // the model's numbers do not change with the language: computed once per loaded model (setup())
      if (this.lossOf !== this.tiny) {
        let lossSum = 0, count = 0, correct = 0;
        for (const sq of this.check.sequences.slice(0, 8)) {
          const toks = this.tiny.encode(sq.text.slice(0, n));
          const targets = new Int32Array(toks.length).fill(-1);
          for (let i = 0; i + 1 < toks.length; i++) if (!sq.scored || sq.scored[i] === '1') targets[i] = toks[i + 1];
          const r = this.tiny.evaluate(toks, { targets });
          lossSum += r.lossSum;
          count += r.count;
          correct += r.correct;
        }
        // one past the end, here: the forward refuses
        const longer = this.check.sequences.map((s) => s.text).join('').slice(0, n + 1);
        let msg;
        try {
          this.tiny.forward(this.tiny.encode(longer));
          msg = '?';
        } catch (e) {
          msg = e.message;
        }
        this.loss = { lossSum, count, correct, msg };
        this.lossOf = this.tiny;
      }
      const { lossSum, count, correct, msg } = this.loss;
      rows.push([n, fmt(lossSum / count, 4), `${(100 * correct / count).toFixed(1)}%`, this.t('learned.here')]);
      rows.push([n + 1, '—', '—', h('span', {}, this.t('learned.cannot', { msg: '' }), h('code', { translate: 'no' }, msg))]);
    }
    // npm run train's own evaluation, recorded in config.json (the same numbers as eval.json's 1x row)
    const atLen = this.cfg?.posenc?.evaluation?.at_training_length;
    if (atLen && atLen.loss != null && !this.evalRows) {
      rows.push([atLen.seq_len ?? n, fmt(atLen.loss, 4), atLen.accuracy != null ? `${(100 * atLen.accuracy).toFixed(1)}%` : '—',
        this.t('learned.config', { k: atLen.sequences ?? '?' })]);
    }
    // npm run eval's numbers
    const evRows = this.evalRows?.rows?.filter((r) => r.model === this.state.model && (r.variant ?? 'trained') === 'trained' && (r.mode ?? 'full') !== 'sliding') ?? [];
    const seen = new Set();
    for (const r of evRows) {
      const len = r.length ?? r.len ?? r.seq_len ?? (r.factor && n * r.factor);
      if (seen.has(len)) continue;
      seen.add(len);
      rows.push([len, r.loss != null ? fmt(r.loss, 4) : '—', r.accuracy != null ? `${(100 * r.accuracy).toFixed(1)}%` : '—',
        r.loss != null ? this.t('learned.evalN', { k: r.sequences ?? '?' })
          : h('span', {}, `${this.t('learned.eval')}: ${this.t('learned.cannot', { msg: '' })}`, h('code', { translate: 'no' }, r.why ?? ''))]);
    }
    rows.sort((a, b) => Number(a[0]) - Number(b[0])); // stable: by length, then source
    const table = h('table', { class: 'pe-table' },
      h('thead', {}, h('tr', {}, ...['learned.len', 'learned.lossCol', 'learned.accCol', 'learned.source'].map((k) => h('th', {}, this.t(k))))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { style: i === 3 ? { textAlign: 'left', whiteSpace: 'normal' } : undefined }, c))))));
    this.lossBox.replaceChildren(table);
    if (!this.evalRows) this.lossBox.append(h('p', { class: 'pe-note' }, this.t('learned.noEval')));
  }
}

define('pe-learned', PeLearned);
