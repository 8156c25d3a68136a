// <pe-attention>: the tiny-model lab. Pick a task and a position encoding, type or generate input, and see the
// model's next-character predictions and its attention maps for every layer and head. The models are the ones
// the project trains (web/playground/public/models/<task>-<encoding>/), run by web/src/model.js.
//
// Attributes (all optional):
//   task        copy | lm (default copy)
//   encoding    none | sinusoidal | learned | rope | alibi (default rope)
//   text        the input to start with (default: a generated copy example, or the start of the LM check text)
//   layer       layer whose attention is shown (default −1: the last)
//   head        head shown large (default −1: every head of the layer side by side)
//   scaling     RoPE models only: trained | linear | ntk | dynamic | yarn (default trained)
//   factor      the RoPE scaling factor (default 2)
//   generate    how many characters Generate appends (default 16)
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key

import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, select, text, button } from './lib/controls.js';
import { heatmap } from './lib/heatmap.js';
import { copyExample, lmStream, argmaxRows } from './lib/tasks.js';
import { generateOffThread, workerInUse } from './lib/evaluate.js';
import { ROLE } from './lib/palette.js';

registerStrings({
  en: {
    'at.title': 'Tiny-model lab',
    'at.intro': 'Small transformers trained by this project, one per position encoding, on the same data and budget. Type an input and see what each one predicts and where each head looks.',
    'at.task': 'task',
    'at.task.copy': 'copy (. abc | abc)',
    'at.task.lm': 'character language model',
    'at.encoding': 'position encoding',
    'at.enc.none': 'none',
    'at.enc.sinusoidal': 'sinusoidal',
    'at.enc.learned': 'learned',
    'at.enc.rope': 'RoPE',
    'at.enc.alibi': 'ALiBi',
    'at.layer': 'layer',
    'at.head': 'head',
    'at.allHeads': 'all heads',
    'at.scaling': 'RoPE scaling',
    'at.sc.trained': 'as trained',
    'at.sc.linear': 'linear (PI)',
    'at.sc.ntk': 'NTK-aware',
    'at.sc.dynamic': 'dynamic NTK',
    'at.sc.yarn': 'YaRN',
    'at.factor': 'factor',
    'at.input': 'input',
    'at.example': 'New example',
    'at.generate': 'Generate',
    'at.generating': 'generating off the page: {done} of {n} characters…',
    'at.loading': 'loading the {name} model…',
    'at.row.input': 'input',
    'at.row.pred': 'predicts next',
    'at.row.prob': 'probability',
    'at.summary': '{n} scored targets: accuracy {a}, loss {l} nats per target.',
    'at.noScored': 'No scored targets in this input (copy: the letters after | and the closing .).',
    'at.model': '{name}: {layers} layers, {heads} heads, d = {d}, trained on {len} tokens; {pe}',
    'at.training': 'trained length {len}',
    'at.past': 'The input is longer than the {len} tokens the model was trained on.',
    'at.headCaption': 'layer {l}, head {h}',
    'at.keyPos': 'key position (attended to)',
    'at.queryPos': 'query position',
    'at.readout': 'query {i} “{qc}” → key {j} “{kc}”: {w}',
    'at.badInput': 'This input cannot be run: {msg}',
    'at.legend': 'Green: the model’s top prediction is the next character; red: it is not; grey: not scored.',
    'at.link': 'Point at a cell of any map (or focus a map and use the arrow keys): its query token is marked blue and its key token red in every map and in the input row above.',
    'at.simd': 'computed with the {build}',
  },
  zh: {
    'at.title': '小模型实验室',
    'at.intro': '本项目自己训练的小型 Transformer，每种位置编码一个，数据和训练预算都相同。输入一段文字，看看每个模型预测什么、每个注意力头看向哪里。',
    'at.task': '任务',
    'at.task.copy': '复制（. abc | abc）',
    'at.task.lm': '字符级语言模型',
    'at.encoding': '位置编码',
    'at.enc.none': '无',
    'at.enc.sinusoidal': '正弦',
    'at.enc.learned': '可学习',
    'at.enc.rope': 'RoPE',
    'at.enc.alibi': 'ALiBi',
    'at.layer': '层',
    'at.head': '头',
    'at.allHeads': '全部头',
    'at.scaling': 'RoPE 缩放',
    'at.sc.trained': '按训练时',
    'at.sc.linear': '线性插值（PI）',
    'at.sc.ntk': 'NTK 感知',
    'at.sc.dynamic': '动态 NTK',
    'at.sc.yarn': 'YaRN',
    'at.factor': '倍数',
    'at.input': '输入',
    'at.example': '换一个例子',
    'at.generate': '生成',
    'at.generating': '正在后台生成：第 {done} 个字符，共 {n} 个…',
    'at.loading': '正在加载 {name} 模型…',
    'at.row.input': '输入',
    'at.row.pred': '预测下一个',
    'at.row.prob': '概率',
    'at.summary': '{n} 个计分目标：准确率 {a}，每个目标的损失 {l} 奈特。',
    'at.noScored': '这段输入里没有计分目标（复制任务：| 之后的字母和结尾的 .）。',
    'at.model': '{name}：{layers} 层，{heads} 个头，d = {d}，训练长度 {len} 个词元；{pe}',
    'at.training': '训练长度 {len}',
    'at.past': '输入比模型训练时的 {len} 个词元更长。',
    'at.headCaption': '第 {l} 层，第 {h} 个头',
    'at.keyPos': '键位置（被关注）',
    'at.queryPos': '查询位置',
    'at.readout': '查询 {i}“{qc}”→ 键 {j}“{kc}”：{w}',
    'at.badInput': '这段输入无法运行：{msg}',
    'at.legend': '绿色：模型的首选预测就是下一个字符；红色：不是；灰色：不计分。',
    'at.link': '把鼠标指向任意一张图的格子（或聚焦一张图后用方向键）：它的查询词元在每张图和上面的输入行里标成蓝色，键词元标成红色。',
    'at.simd': '由 {build} 计算',
  },
});

export const TASKS = ['copy', 'lm'];
export const ENCODINGS = ['none', 'sinusoidal', 'learned', 'rope', 'alibi'];
const SCALINGS = ['trained', 'linear', 'ntk', 'dynamic', 'yarn'];

/** Which positions of a copy-task text are scored: i predicts text[i + 1], a copied letter or the closing '.'. */
export function copyScored(textIn) {
  const chars = [...textIn];
  const scored = new Uint8Array(Math.max(0, chars.length - 1));
  let mode = 'none';
  for (let j = 0; j < chars.length; j++) {
    const c = chars[j];
    if (j > 0) scored[j - 1] = mode === 'copy' && (c === '.' || (c >= 'a' && c <= 'z')) ? 1 : 0;
    if (c === '.') mode = 'src';
    else if (c === '|') mode = 'copy';
  }
  return scored;
}

class PeAttention extends PeElement {
  static attrs = {
    task: { type: 'enum', values: TASKS, default: 'copy' },
    encoding: { type: 'enum', values: ENCODINGS, default: 'rope' },
    text: { type: 'string', default: '' },
    layer: { type: 'int', default: -1, min: -1, max: 63 },
    head: { type: 'int', default: -1, min: -1, max: 63 },
    scaling: { type: 'enum', values: SCALINGS, default: 'trained' },
    factor: { type: 'number', default: 2, min: 1, max: 64 },
    generate: { type: 'int', default: 16, min: 1, max: 256 },
  };

  render() {
    const s = this.state;
    this.body.append(h('h3', {}, this.t('at.title')), h('p', {}, this.t('at.intro')));
    const layers = this.info?.numLayers ?? 2, heads = this.info?.numHeads ?? 4;
    const items = [
      select(this, { key: 'task', label: 'at.task', options: TASKS.map((x) => [x, `at.task.${x}`]), onChange: (v) => this.switchModel({ task: v, text: '' }) }),
      select(this, { key: 'encoding', label: 'at.encoding', options: ENCODINGS.map((x) => [x, `at.enc.${x}`]), onChange: (v) => this.switchModel({ encoding: v }) }),
      select(this, { key: 'layer', label: 'at.layer', raw: true, options: [...Array(layers).keys()].map((l) => [l, String(l)]), value: this.layerIndex(layers) }),
      select(this, { key: 'head', label: 'at.head', options: [[-1, 'at.allHeads'], ...[...Array(heads).keys()].map((x) => [x, String(x)])], raw: false }),
    ];
    if (s.encoding === 'rope') {
      items.push(select(this, { key: 'scaling', label: 'at.scaling', options: SCALINGS.map((x) => [x, `at.sc.${x}`]) }),
        select(this, { key: 'factor', label: 'at.factor', raw: true, options: [...new Set([1.5, 2, 4, 8, s.factor])].sort((a, b) => a - b).map((x) => [x, String(x)]) }));
    }
    this.body.append(controls(...items));
    this.body.append(controls(
      text(this, { key: 'text', label: 'at.input', wide: true, live: true, value: this.currentText ?? s.text }),
      button(this, { key: 'example', label: 'at.example', secondary: true, onClick: () => this.newExample() }),
      button(this, { key: 'generate', label: 'at.generate', onClick: () => this.generate() })));
    this.modelLine = h('p', { class: 'pe-note' });
    this.msg = h('div', { 'aria-live': 'polite' });
    this.preds = h('div', { class: 'pe-scroll' });
    this.summary = h('p', { 'aria-live': 'polite' });
    this.maps = h('div');
    this.body.append(this.modelLine, this.msg, this.preds, this.summary, h('p', { class: 'pe-note' }, this.t('at.legend')),
      h('p', { class: 'pe-note' }, this.t('at.link')), this.maps);
  }

  layerIndex(layers) {
    const l = this.state.layer;
    return l < 0 || l >= layers ? layers - 1 : l;
  }

  get modelName() {
    return `${this.state.task}-${this.state.encoding}`;
  }

  switchModel(values) {
    if ('task' in values && values.task !== this.state.task) this.currentText = undefined;
    this.setState(values, { redraw: false });
    // controls differ between models (heads, layers, RoPE scaling): rebuild them
    this.body.replaceChildren();
    this.render();
    this.update();
  }

  setState(values, opts) {
    if ('text' in values) this.currentText = values.text;
    super.setState(values, opts);
  }

  async loadModel() {
    const name = this.modelName;
    if (this.loaded?.name === name) return this.loaded.model;
    this.maps.replaceChildren();
    this.preds.replaceChildren();
    this.summary.textContent = '';
    this.msg.replaceChildren(h('p', { class: 'pe-loading' }, this.t('at.loading', { name })));
    const model = await this.model(name);
    let check;
    try {
      check = await this.modelsJson(`${this.state.task}-check.json`);
    } catch {
      check = null;
    }
    this.loaded = { name, model, check };
    const needRender = !this.info || this.info.numLayers !== model.numLayers || this.info.numHeads !== model.numHeads;
    this.info = { numLayers: model.numLayers, numHeads: model.numHeads };
    if (needRender) {
      // the layer and head menus follow the model
      const focus = document.activeElement?.dataset?.key;
      this.body.replaceChildren();
      this.render();
      if (focus) this.body.querySelector(`[data-key="${focus}"]`)?.focus();
    }
    return model;
  }

  defaultText(model, check) {
    if (this.state.task === 'copy') return copyExample(48, 7).text.slice(0, 48);
    const stream = lmStream(check);
    return stream ? stream.slice(0, 96) : 'the quick cat looked at the old ship. ';
  }

  async newExample() {
    const model = await this.loadModel();
    this.exampleSeed = (this.exampleSeed ?? 7) + 1;
    let t;
    if (this.state.task === 'copy') t = copyExample(48, this.exampleSeed).text.slice(0, 48);
    else {
      const stream = lmStream(this.loaded.check);
      const start = ((this.exampleSeed - 7) * 97) % Math.max(1, stream.length - 96);
      t = stream.slice(start, start + 96) || this.defaultText(model, null);
    }
    this.setText(t);
  }

  setText(t) {
    const input = this.body.querySelector('input[data-key="text"]');
    if (input) input.value = t;
    this.setState({ text: t });
  }

  // Generate runs in the eval worker (lib/evaluate.js): each step is a forward pass over the whole text, and
  // 16 of them held the page for ~2 s. The input shows each new character as it arrives; the maps are redrawn
  // once, at the end, one map per task (draw after splitMaps), so no task of the page runs long (issue 15).
  async generate() {
    if (this.generating) return;
    const model = await this.loadModel();
    const start = this.currentText || this.defaultText(model, this.loaded.check);
    const maxLen = model.positionEncoding === 'learned' ? model.maxPositionEmbeddings : 512;
    const steps = Math.max(0, Math.min(this.state.generate, maxLen - [...start].length));
    const buttonEl = this.body.querySelector('[data-key="generate"]');
    const input = this.body.querySelector('input[data-key="text"]');
    const status = h('p', { class: 'pe-note', 'data-role': 'generate-progress' }, this.t('at.generating', { done: 0, n: steps }));
    this.msg.replaceChildren(status);
    this.generating = true;
    if (buttonEl) buttonEl.disabled = true;
    this.dataset.generating = '0';
    try {
      const t = await this.busy(generateOffThread(this, this.modelName, model, start, {
        steps, maxLen, ropeScaling: this.ropeScaling(model),
        onStep: (done, partial) => {
          status.textContent = this.t('at.generating', { done, n: steps });
          if (input?.isConnected) input.value = partial;
          this.dataset.generating = String(done);
        },
      }));
      this.dataset.generatedIn = workerInUse() ? 'worker' : 'page';
      this.dataset.generatedAt = String(performance.now()); // the bench tells the generation from the redraw after it
      this.splitMaps = true; // the redraw after it: one map per task (issue 15)
      this.setText(t);
    } finally {
      this.generating = false;
      delete this.dataset.generating;
      const b = this.body?.querySelector('[data-key="generate"]');
      if (b) b.disabled = false;
    }
  }

  ropeScaling(model) {
    const s = this.state;
    if (model.positionEncoding !== 'rope' || s.scaling === 'trained') return undefined;
    return { type: s.scaling, factor: s.factor };
  }

  async draw() {
    const s = this.state;
    const split = this.splitMaps;
    this.splitMaps = false;
    const token = (this.drawToken = {});
    if (!split) this.maps.style.minHeight = ''; // a split redraw this one replaced may have left it set
    let model;
    try {
      model = await this.loadModel();
    } catch (e) {
      this.msg.replaceChildren(h('p', { class: 'pe-error', role: 'alert' }, this.t('pe.modelMissing', { name: this.modelName, msg: e.message })));
      this.dataset.result = 'missing-model';
      return;
    }
    if (!this.body) return;
    const txt = this.currentText || s.text || this.defaultText(model, this.loaded.check);
    if (!this.currentText) {
      this.currentText = txt;
      const input = this.body.querySelector('input[data-key="text"]');
      if (input && !input.value) input.value = txt;
    }
    const trainLen = model.maxPositionEmbeddings;
    this.modelLine.textContent = this.t('at.model', {
      name: this.modelName, layers: model.numLayers, heads: model.numHeads, d: model.hiddenSize, len: trainLen,
      pe: this.t(`at.enc.${model.positionEncoding}`) + (this.ropeScaling(model) ? ` · ${this.t(`at.sc.${s.scaling}`)} ×${s.factor}` : ''),
    }) + ` · ${this.t('at.simd', { build: this.t(this.pe.simd ? 'pe.build.simd' : 'pe.build.scalar') })}`;
    let ids, out;
    try {
      ids = model.encode(txt);
      out = model.forward(ids, { attention: true, ropeScaling: this.ropeScaling(model) });
    } catch (e) {
      if (!(e instanceof RangeError || e instanceof TypeError)) throw e;
      this.msg.replaceChildren(h('p', { class: 'pe-error', role: 'alert' }, this.t('at.badInput', { msg: e.message })));
      this.preds.replaceChildren();
      this.maps.replaceChildren();
      this.summary.textContent = '';
      this.dataset.result = 'bad-input';
      return;
    }
    this.dataset.result = 'ok';
    this.msg.replaceChildren(ids.length > trainLen ? h('p', { class: 'pe-note' }, this.t('at.past', { len: trainLen })) : '');
    const n = ids.length, V = model.vocabSize;
    const chars = [...txt];
    const pred = argmaxRows(out.logits, n, V);
    const scored = s.task === 'copy' ? copyScored(txt) : new Uint8Array(Math.max(0, n - 1)).fill(1);
    // probabilities of the prediction, loss of the actual next character
    let lossSum = 0, correct = 0, count = 0;
    const prob = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const row = out.logits.subarray(i * V, (i + 1) * V);
      let mx = -Infinity;
      for (const v of row) mx = Math.max(mx, v);
      let se = 0;
      for (const v of row) se += Math.exp(v - mx);
      prob[i] = Math.exp(row[pred[i]] - mx) / se;
      if (i < n - 1 && scored[i]) {
        count++;
        lossSum += mx + Math.log(se) - row[ids[i + 1]];
        if (pred[i] === ids[i + 1]) correct++;
      }
    }
    const cell = (c) => (c === ' ' ? '␣' : c === '\n' ? '↵' : c);
    const td = (content, cls, extra = {}) => h('td', { class: cls, ...extra }, content);
    this.preds.replaceChildren(h('table', { class: 'pe-table pe-at-preds', style: { fontFamily: 'ui-monospace, monospace', whiteSpace: 'nowrap', overflowWrap: 'normal' } },
      h('tr', { 'data-row': 'input' }, h('th', {}, this.t('at.row.input')), chars.map((c, i) => td(cell(c), null, { 'data-pos': i }))),
      h('tr', {}, h('th', {}, this.t('at.row.pred')), Array.from(pred, (p, i) => {
        const next = i < n - 1 ? ids[i + 1] : -1;
        const cls = i < n - 1 && scored[i] ? (p === next ? 'pe-good' : 'pe-bad') : null;
        return td(cell(model.vocab[p]), cls, { style: cls ? { fontWeight: 600 } : { color: '#8a949e' } });
      })),
      h('tr', {}, h('th', {}, this.t('at.row.prob')), Array.from(prob, (p) => td(String(Math.round(100 * p)), null, { style: { fontSize: '.7rem', color: '#6b7580' } })))));
    this.summary.textContent = count
      ? this.t('at.summary', { n: count, a: `${(100 * correct / count).toFixed(1)}%`, l: fmt(lossSum / count, 3) })
      : this.t('at.noScored');
    this.summary.dataset.accuracy = count ? String(correct / count) : '';
    // attention maps: (layers, heads, n, n), zero above the diagonal (drawn grey)
    const L = model.numLayers, H = model.numHeads;
    const layer = this.layerIndex(L);
    const heads = s.head >= 0 && s.head < H ? [s.head] : [...Array(H).keys()];
    const grid = h('div', { class: heads.length > 1 ? 'pe-grid' : '' });
    // two maps a row on a laptop, one on a phone: big enough to read each input character on its axes
    if (heads.length > 1) grid.style.gridTemplateColumns = 'repeat(auto-fill, minmax(min(100%, 400px), 1fr))';
    // after Generate, one map per task (each ~10-30 ms): the maps hold their old height meanwhile (no layout shift)
    if (split) this.maps.style.minHeight = `${this.maps.offsetHeight}px`;
    this.maps.replaceChildren(grid);
    this.mapData = [];
    this.linkView = { chars: chars.map(cell) };
    for (const hd of heads) {
      if (split) {
        await new Promise((ok) => setTimeout(ok, 0));
        if (this.drawToken !== token || !this.body) return;
      } else if (this.relabeling && hd !== heads[0]) {
        // after a language switch: each map lays out on its own (a forced layout of ~420 objects), so a new task
        // once this one has run long, as the other widgets' figures do (base.js yieldIfLong)
        await this.yieldIfLong();
        if (this.drawToken !== token || !this.body) return;
      }
      const off = ((layer * H) + hd) * n * n;
      const w = new Float32Array(n * n);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) w[i * n + j] = j > i ? -Infinity : out.attention[off + i * n + j];
      const box = h('div', { 'data-head': hd });
      grid.append(box);
      this.mapData.push({ box, w, n });
      heatmap(box, w, n, n, {
        scheme: 'grey', range: 1, xLabel: this.t('at.keyPos'), yLabel: this.t('at.queryPos'),
        xColor: ROLE.k, yColor: ROLE.q, onCell: (r, c, from) => this.link(r, c, from),
        height: Math.min(480, Math.max(240, 10 * n)), lang: this.lang, xNames: chars.map(cell), yNames: chars.map(cell),
        caption: this.t('at.headCaption', { l: layer, h: hd }), label: this.t('at.headCaption', { l: layer, h: hd }),
        readout: (r, c, v) => this.t('at.readout', { i: r, qc: cell(chars[r] ?? ''), j: c, kc: cell(chars[c] ?? ''), w: v === -Infinity ? '–' : fmt(v, 3) }),
      });
    }
    this.maps.style.minHeight = '';
  }
}

PeAttention.prototype.link = linkCell;

/**
 * Hovering or focusing cell (query i, key j) of one map marks the same cell in every map (with that map's own
 * weight in its readout) and the query and key characters in the input row; (-1, -1) clears.
 */
function linkCell(i, j, from) {
  // a map the pointer leaves clears only what it marked itself (not the cell another map has keyboard focus on)
  if (i < 0 && from && this.linkFrom && from !== this.linkFrom) return;
  const on = i >= 0 && j >= 0 && j <= i;
  this.linkFrom = on ? from : null;
  for (const { box, w, n } of this.mapData ?? []) {
    const st = box._peHeatmap;
    if (!st) continue;
    st.mark(on ? i : -1, on ? j : -1);
    if (on && i < n) {
      const chars = this.linkView.chars;
      st.readout.textContent = this.t('at.readout', { i, qc: chars[i] ?? '', j, kc: chars[j] ?? '', w: fmt(w[i * n + j], 3) });
    } else if (!on) st.readout.textContent = '\u00a0';
  }
  const row = this.preds?.querySelector('tr[data-row="input"]');
  if (row) {
    for (const c of row.querySelectorAll('.pe-role-q-bg, .pe-role-k-bg')) c.classList.remove('pe-role-q-bg', 'pe-role-k-bg');
    if (on) {
      const kc = row.querySelector(`td[data-pos="${j}"]`), qc = row.querySelector(`td[data-pos="${i}"]`);
      kc?.classList.add('pe-role-k-bg');
      qc?.classList.add('pe-role-q-bg');
      // the row scrolls sideways on a long input: bring the query (and the key, when both fit) into view
      const box = this.preds, b = box.getBoundingClientRect();
      if (qc && kc && box.scrollWidth > box.clientWidth) {
        const q = qc.getBoundingClientRect(), k = kc.getBoundingClientRect();
        const lo = Math.min(q.left, k.left), hi = Math.max(q.right, k.right);
        if (q.left < b.left || q.right > b.right || k.left < b.left || k.right > b.right) {
          box.scrollLeft += hi - lo <= b.width - 8 ? (lo + hi) / 2 - (b.left + b.right) / 2 : q.left - b.left - b.width / 2;
        }
      }
    }
  }
  if (on) {
    this.dataset.linkQuery = String(i);
    this.dataset.linkKey = String(j);
  } else {
    delete this.dataset.linkQuery;
    delete this.dataset.linkKey;
  }
}

define('pe-attention', PeAttention);
