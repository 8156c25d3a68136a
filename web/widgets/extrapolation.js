// <pe-extrapolation>: train short, test long. Loss or accuracy of every tiny model against the input length
// (1x, 2x, 4x, 8x the training length), and of the RoPE model under inference-time scaling (linear / PI,
// NTK-aware, dynamic NTK, YaRN), computed live in the browser (web/src/model.js forward) with a progress bar,
// beside the numbers `npm run eval` computed natively on many more tokens (models/eval.json).
//
// Attributes (all optional):
//   task        copy | lm (default copy)
//   metric      accuracy | loss (default: accuracy for copy, loss for lm)
//   factors     comma list of length multiples of the training length (default 1,2,4,8)
//   samples     sequences per length (copy: generated episodes; lm: windows of the check text; default 4)
//   methods     comma list of none, sinusoidal, learned, rope, alibi, rope-linear, rope-ntk, rope-dynamic,
//               rope-yarn (default all)
//   autostart   run as soon as the element is shown (default off: a Run button)
//   show-eval   also draw the npm run eval numbers on the chart, dashed (default off; they are always in the table)
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key
//
// As in scripts/eval.mjs, the scaled RoPE variants use the factor L / trained length (dynamic NTK: factor 2,
// its base growing with the length), and equal the trained RoPE at 1x.

import { PeElement, define, h } from './base.js';
import { registerStrings } from './lib/i18n.js';
import { controls, select, range, button, checkbox, progress } from './lib/controls.js';
import { chart, PALETTE } from './lib/chart.js';
import { copyExample, lmStream, targetsOf } from './lib/tasks.js';
import { evaluateOffThread, workerInUse } from './lib/evaluate.js';

registerStrings({
  en: {
    'ex.title': 'Train short, test long',
    'ex.intro': 'Every model was trained at one length. Here each one reads longer inputs than it ever saw; the RoPE model is also run with the length-extension methods, without retraining.',
    'ex.task': 'task',
    'ex.task.copy': 'copy',
    'ex.task.lm': 'character language model',
    'ex.metric': 'measure',
    'ex.metric.accuracy': 'accuracy (higher is better)',
    'ex.metric.loss': 'loss, nats per target (lower is better)',
    'ex.samples': 'sequences per length',
    'ex.run': 'Run in the browser',
    'ex.stop': 'Stop',
    'ex.showEval': 'draw npm run eval numbers (dashed)',
    'ex.progress': 'evaluating',
    'ex.status.idle': 'Press Run: {n} forward passes of the tiny models in this page.',
    'ex.status.running': '{done} of {total}: {model} at {len} tokens',
    'ex.status.done': 'Done: {total} forward passes in {s} s ({build}).',
    'ex.status.stopped': 'Stopped after {done} of {total}.',
    'ex.m.none': 'no position encoding',
    'ex.m.sinusoidal': 'sinusoidal',
    'ex.m.learned': 'learned',
    'ex.m.rope': 'RoPE',
    'ex.m.alibi': 'ALiBi',
    'ex.m.rope-linear': 'RoPE + linear (PI)',
    'ex.m.rope-ntk': 'RoPE + NTK-aware',
    'ex.m.rope-dynamic': 'RoPE + dynamic NTK',
    'ex.m.rope-yarn': 'RoPE + YaRN',
    'ex.evalSuffix': '(npm run eval)',
    'ex.x': 'input length (tokens)',
    'ex.table.method': 'method',
    'ex.table.len': '{len} ({f}×)',
    'ex.table.live': 'live',
    'ex.table.eval': 'eval',
    'ex.table.note': 'Each cell: live (this page, {samples} sequences per length) / npm run eval (native, many more tokens). “–”: not run yet; “n/a”: learned positions end at the training length.',
    'ex.noEval': 'models/eval.json is not available here, so only the live numbers are shown.',
    'ex.learnedNote': 'The learned table has no rows past the training length: the model throws a RangeError there, so it has no numbers beyond 1×.',
    'ex.trainLen': 'trained at {len} tokens',
  },
  zh: {
    'ex.title': '短训练，长测试',
    'ex.intro': '每个模型都只在一个长度上训练过。这里让它们读比见过的更长的输入；RoPE 模型还会在不重新训练的情况下套用各种长度扩展方法。',
    'ex.task': '任务',
    'ex.task.copy': '复制',
    'ex.task.lm': '字符级语言模型',
    'ex.metric': '指标',
    'ex.metric.accuracy': '准确率（越高越好）',
    'ex.metric.loss': '损失，每个目标的奈特数（越低越好）',
    'ex.samples': '每个长度的序列数',
    'ex.run': '在浏览器中运行',
    'ex.stop': '停止',
    'ex.showEval': '在图中画出 npm run eval 的数字（虚线）',
    'ex.progress': '正在评估',
    'ex.status.idle': '点击运行：在本页中运行 {n} 次小模型前向计算。',
    'ex.status.running': '第 {done} / {total} 次：{model}，长度 {len}',
    'ex.status.done': '完成：{total} 次前向计算，用时 {s} 秒（{build}）。',
    'ex.status.stopped': '在 {done} / {total} 次后停止。',
    'ex.m.none': '无位置编码',
    'ex.m.sinusoidal': '正弦',
    'ex.m.learned': '可学习',
    'ex.m.rope': 'RoPE',
    'ex.m.alibi': 'ALiBi',
    'ex.m.rope-linear': 'RoPE + 线性插值（PI）',
    'ex.m.rope-ntk': 'RoPE + NTK 感知',
    'ex.m.rope-dynamic': 'RoPE + 动态 NTK',
    'ex.m.rope-yarn': 'RoPE + YaRN',
    'ex.evalSuffix': '（npm run eval）',
    'ex.x': '输入长度（词元数）',
    'ex.table.method': '方法',
    'ex.table.len': '{len}（{f}×）',
    'ex.table.live': '实时',
    'ex.table.eval': 'eval',
    'ex.table.note': '每格：实时结果（本页，每个长度 {samples} 个序列）/ npm run eval（本地原生计算，词元多得多）。“–”：尚未运行；“n/a”：可学习位置在训练长度处就用完了。',
    'ex.noEval': '这里没有 models/eval.json，所以只显示实时结果。',
    'ex.learnedNote': '可学习的位置表在训练长度之后没有行：模型在那里抛出 RangeError，所以超过 1× 就没有数字。',
    'ex.trainLen': '训练长度 {len} 个词元',
  },
});

export const METHODS = ['none', 'sinusoidal', 'learned', 'rope', 'alibi', 'rope-linear', 'rope-ntk', 'rope-dynamic', 'rope-yarn'];

/** The model and inference-time RoPE scaling of a method at length multiple f (as scripts/eval.mjs). */
export function methodRun(method, f) {
  const [enc, variant] = method.split('-');
  if (!variant || f === 1) return { enc, ropeScaling: undefined, variant: variant ?? 'trained' };
  return { enc, variant, ropeScaling: { type: variant, factor: variant === 'dynamic' ? 2 : f } };
}

class PeExtrapolation extends PeElement {
  static attrs = {
    task: { type: 'enum', values: ['copy', 'lm'], default: 'copy' },
    metric: { type: 'enum', values: ['auto', 'accuracy', 'loss'], default: 'auto' },
    factors: { type: 'list', default: ['1', '2', '4', '8'] },
    samples: { type: 'int', default: 4, min: 1, max: 64 },
    methods: { type: 'list', default: METHODS },
    autostart: { type: 'bool', default: false },
    'show-eval': { type: 'bool', default: false },
  };

  // the measure menu shows the task's own default ('auto': accuracy for copy, loss for the LM) after a task switch
  static rebuildOn = ['task'];

  get metric() {
    const m = this.state.metric;
    return m === 'auto' ? (this.state.task === 'copy' ? 'accuracy' : 'loss') : m;
  }

  get factors() {
    const f = this.state.factors.map(Number).filter((x) => Number.isInteger(x) && x >= 1 && x <= 64);
    return f.length ? [...new Set(f)].sort((a, b) => a - b) : [1, 2, 4, 8];
  }

  get methods() {
    const m = this.state.methods.filter((x) => METHODS.includes(x));
    return m.length ? m : METHODS;
  }

  render() {
    const s = this.state;
    this.body.append(h('h3', {}, this.t('ex.title')), h('p', {}, this.t('ex.intro')),
      controls(
        select(this, { key: 'task', label: 'ex.task', options: [['copy', 'ex.task.copy'], ['lm', 'ex.task.lm']], onChange: (v) => { this.stop(); this.setState({ task: v }); } }),
        select(this, { key: 'metric', label: 'ex.metric', value: this.metric, options: [['accuracy', 'ex.metric.accuracy'], ['loss', 'ex.metric.loss']] }),
        range(this, { key: 'samples', label: 'ex.samples', min: 1, max: 16 }),
        checkbox(this, { key: 'showEval', label: 'ex.showEval' }),
      ),
      controls(
        this.runBtn = button(this, { key: 'run', label: this.running ? 'ex.stop' : 'ex.run', onClick: () => (this.running ? this.stop() : this.run()) }),
        this.bar = progress(this, { label: 'ex.progress' })),
      this.status = h('p', { 'aria-live': 'polite', class: 'pe-note pe-ex-status' }),
      this.chartBox = h('div'),
      this.table = h('div', { class: 'pe-scroll' }),
      this.notes = h('div', { class: 'pe-note' }));
    if (s.autostart && !this.autostarted) {
      this.autostarted = true;
      queueMicrotask(() => this.busy(this.run()));
    }
  }

  cleanup() {
    this.stop();
  }

  /** Live results: key `${task}|${method}|${f}|${samples}` -> { loss, accuracy } or { na: true }. */
  get results() {
    this._results ??= new Map();
    return this._results;
  }

  async evalRows() {
    if (this._eval !== undefined) return this._eval;
    try {
      this._eval = await this.modelsJson('eval.json');
    } catch {
      this._eval = null;
    }
    return this._eval;
  }

  async draw() {
    const s = this.state;
    const ev = await this.evalRows();
    if (!this.body) return;
    const trainLen = await this.resolveTrainLen();
    if (!this.body) return;
    const factors = this.factors, methods = this.methods, metric = this.metric;
    const lens = factors.map((f) => f * trainLen);
    // the scaled RoPE variants are the trained RoPE at 1x (not run twice)
    const live = (m, f) => this.results.get(`${s.task}|${m.includes('-') && f === 1 ? 'rope' : m}|${f}|${s.samples}`);
    const evalOf = (m, f) => {
      if (!ev?.rows) return undefined;
      const { enc, variant } = methodRun(m, f);
      const v = f === 1 ? 'trained' : variant;
      return ev.rows.find((r) => r.model === `${s.task}-${enc}` && r.variant === v && r.mode === 'nonoverlapping' && r.factor === f);
    };
    const val = (r) => (r && !r.na && r[metric] != null ? r[metric] : null);
    const series = [];
    methods.forEach((m) => {
      const color = PALETTE[METHODS.indexOf(m) % PALETTE.length];
      // one meaning for a dashed line: npm run eval's numbers (the scaled RoPE variants are thinner, solid)
      series.push({ label: this.t(`ex.m.${m}`), values: factors.map((f) => val(live(m, f))), color, width: m.includes('-') ? 1.6 : 2.4, points: true });
      if (s.showEval) series.push({ label: `${this.t(`ex.m.${m}`)} ${this.t('ex.evalSuffix')}`, values: factors.map((f) => val(evalOf(m, f))), color, width: 1, dash: [2, 3], points: false });
    });
    chart(this.chartBox, {
      x: lens, series, xRange: [0, lens[lens.length - 1] * 1.05], xLabel: this.t('ex.x'), yLabel: this.t(`ex.metric.${metric}`), height: 300,
      yRange: metric === 'accuracy' ? [0, 1] : undefined, label: this.t('ex.title'), reuse: true,
    });
    // during a run, the table in a task of its own (issue 15: no main-thread task over 50 ms)
    if (this.running) {
      await new Promise((ok) => setTimeout(ok, 0));
      if (!this.body) return;
    }
    const fmtv = (r) => {
      if (r === undefined) return '–';
      if (r.na || r[metric] == null) return 'n/a';
      return metric === 'accuracy' ? `${(100 * r[metric]).toFixed(1)}%` : r[metric].toFixed(3);
    };
    this.table.replaceChildren(h('table', { class: 'pe-table' },
      h('tr', {}, h('th', {}, this.t('ex.table.method')), factors.map((f) => h('th', {}, this.t('ex.table.len', { len: f * trainLen, f })))),
      methods.map((m) => h('tr', { 'data-method': m }, h('td', { style: { textAlign: 'left' } }, this.t(`ex.m.${m}`)),
        factors.map((f) => {
          const e = evalOf(m, f);
          return h('td', { 'data-live': fmtv(live(m, f)), 'data-eval': ev ? fmtv(e) : '' }, `${fmtv(live(m, f))}${ev ? ` / ${fmtv(e)}` : ''}`);
        })))));
    this.notes.replaceChildren(
      h('p', {}, this.t('ex.table.note', { samples: s.samples })),
      ev ? '' : h('p', {}, this.t('ex.noEval')),
      methods.includes('learned') ? h('p', {}, this.t('ex.learnedNote')) : '',
      ...[...(this.missing ?? new Map())].map(([name, msg]) => h('p', { class: 'pe-bad' }, this.t('pe.modelMissing', { name, msg }))));
    this.status.textContent = this.statusFn ? this.statusFn() : this.t('ex.status.idle', { n: this.plan().length });
  }

  /** The training length of the task's models: eval.json, else the first model config that loads. */
  async resolveTrainLen() {
    const task = this.state.task;
    if (this.trainLenFor?.task === task) return this.trainLenFor.len;
    const ev = await this.evalRows();
    let len = ev?.train_len?.[task];
    for (const m of this.methods) {
      if (len) break;
      try {
        len = (await this.modelConfig(`${task}-${methodRun(m, 1).enc}`)).max_position_embeddings;
      } catch {
        len = undefined;
      }
    }
    len ??= task === 'copy' ? 64 : 128;
    this.trainLenFor = { task, len };
    this.trainLen = len;
    return len;
  }

  /** The forward passes to run: { method, f, len, sample } in order of method then length. */
  plan() {
    const s = this.state;
    const out = [];
    for (const m of this.methods) {
      for (const f of this.factors) {
        const len = f * (this.trainLen ?? (s.task === 'copy' ? 64 : 128));
        if (m.includes('-') && f === 1) continue; // equal to the trained RoPE
        for (let k = 0; k < s.samples; k++) out.push({ method: m, f, len, sample: k });
      }
    }
    return out;
  }

  /** Inputs for a length: copy: generated sequences; lm: consecutive windows of the check text (wrapping). */
  async inputs(len, count) {
    const s = this.state;
    if (s.task === 'copy') return Array.from({ length: count }, (_, k) => copyExample(len, 50000 + 977 * k + len));
    this._stream ??= lmStream(await this.modelsJson('lm-check.json'));
    const st = this._stream;
    const out = [];
    for (let k = 0; k < count; k++) {
      let start = (k * (len + 1)) % Math.max(1, st.length);
      let t = st.slice(start, start + len + 1);
      while (t.length < len + 1) t += st.slice(0, len + 1 - t.length); // wrap around the check text
      out.push({ text: t, scored: null });
    }
    return out;
  }

  stop() {
    if (this.running) {
      this.running = false;
      this.stopped = true;
    }
  }

  async run() {
    if (this.running) return;
    const s = this.state;
    await this.resolveTrainLen();
    const runId = (this.runId ?? 0) + 1;
    this.runId = runId;
    this.running = true;
    this.stopped = false;
    this.dataset.run = 'running';
    if (this.runBtn) this.runBtn.textContent = this.t('ex.stop');
    const task = s.task, samples = s.samples;
    const plan = this.plan();
    const total = plan.length;
    const t0 = performance.now();
    const acc = new Map(); // key -> { lossSum, correct, count }
    this.missing = new Map();
    let done = 0;
    const work = (async () => {
      for (const step of plan) {
        if (!this.running || this.runId !== runId || !this.isConnected) break;
        const { enc, ropeScaling } = methodRun(step.method, step.f);
        const name = `${task}-${enc}`;
        const at = done + 1;
        this.statusFn = () => this.t('ex.status.running', { done: at, total, model: this.t(`ex.m.${step.method}`), len: step.len });
        if (this.status) this.status.textContent = this.statusFn();
        const key = `${task}|${step.method}|${step.f}|${samples}`;
        let model;
        try {
          model = await this.model(name);
        } catch (e) {
          this.missing.set(name, e.message);
          acc.set(key, { na: true });
          this.results.set(key, { na: true });
          done++;
          this.bar.value = done / total;
          continue;
        }
        const inputs = this._inputs?.key === `${task}|${step.len}|${samples}` ? this._inputs.list : await this.inputs(step.len, samples);
        this._inputs = { key: `${task}|${step.len}|${samples}`, list: inputs };
        const ex = inputs[step.sample];
        let r = acc.get(key) ?? { lossSum: 0, correct: 0, count: 0 };
        if (enc === 'learned' && step.len > model.maxPositionEmbeddings) {
          r = { na: true };
        } else {
          const { tokens, targets } = targetsOf(model, ex.text, ex.scored);
          const e = await evaluateOffThread(this, name, model, tokens, { targets, ropeScaling });
          if (!this.running || this.runId !== runId) break;
          r.lossSum += e.lossSum;
          r.correct += e.correct;
          r.count += e.count;
        }
        acc.set(key, r);
        this.results.set(key, r.na ? r : { loss: r.lossSum / r.count, accuracy: r.correct / r.count });
        done++;
        this.bar.value = done / total;
        // redraw the figure every few steps and at the end of each (method, length)
        // in a task of its own, not the one that received the worker's answer (issue 15)
        if (step.sample === samples - 1) {
          await new Promise((ok) => setTimeout(ok, 0));
          await this.update();
        }
        await new Promise((ok) => setTimeout(ok, 0)); // let the page paint the progress
      }
    })();
    try {
      await this.busy(work);
    } finally {
      const stopped = this.runId === runId && this.stopped;
      if (this.runId === runId) this.running = false;
      if (this.runBtn) this.runBtn.textContent = this.t('ex.run');
      const secs = ((performance.now() - t0) / 1000).toFixed(1);
      this.statusFn = () => (stopped ? this.t('ex.status.stopped', { done, total })
        : this.t('ex.status.done', { total: done, s: secs, build: this.t(this.pe.simd ? 'pe.build.simd' : 'pe.build.scalar') }));
      this.dataset.run = stopped ? 'stopped' : 'done';
      this.dataset.evaluatedIn = workerInUse() ? 'worker' : 'page';
      if (this.status) this.status.textContent = this.statusFn();
      this.update();
    }
  }
}

define('pe-extrapolation', PeExtrapolation);
