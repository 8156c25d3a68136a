// <pe-train-curves>: how each tiny model learned — training loss against step, from the trainer's own log
// (c/model/train.c writes train-log.json beside each model.safetensors: the loss of every step, before that
// step's update). One line per position encoding, same task, data, seed and budget, so the curves differ only
// by the encoding. Colours per encoding as in the extrapolation chart.
//
// Attributes (all optional):
//   task     copy | lm (default copy)
//   smooth   trailing mean over this many steps: 1 (the raw log), 20 or 100 (default 20)
//   log-y    loss on a log axis (default on)
//   plus the common ones: lang, eager, models-base, simd, url-state, state-key
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, select, checkbox } from './lib/controls.js';
import { chart, PALETTE } from './lib/chart.js';

registerStrings({
  en: {
    'tc.title': 'Training curves: how each tiny model learned',
    'tc.intro': 'The training loss at every step, from the log the trainer wrote beside each model. Same task, data, seed and budget for every encoding, so the curves differ only by how the model is told where each token is.',
    'tc.task': 'task',
    'tc.t.copy': 'copy (. abc | abc)',
    'tc.t.lm': 'character language model',
    'tc.smooth': 'smoothing',
    'tc.raw': 'none (every step as logged)',
    'tc.mean': 'mean of the last {n} steps',
    'tc.logY': 'log scale',
    'tc.x': 'training step',
    'tc.y': 'training loss (nats per target)',
    'tc.enc.none': 'none (NoPE)',
    'tc.enc.sinusoidal': 'sinusoidal',
    'tc.enc.learned': 'learned',
    'tc.enc.rope': 'RoPE',
    'tc.enc.alibi': 'ALiBi',
    'tc.col.model': 'model',
    'tc.col.first': 'loss at step 1',
    'tc.col.last': 'loss at step {n}',
    'tc.col.tail': 'mean of the last {n} steps',
    'tc.col.check': 'check set after training',
    'tc.missing': 'No training log is shipped for {name}.',
    'tc.note': '{steps} steps of {batch} sequences of {len} tokens; AdamW, learning rate warmed up over {warmup} steps, then a cosine decay. Each step’s loss is measured on that step’s batch before the update, so it is an estimate of the loss on data the model has not yet trained on.',
    'tc.loading': 'loading the training logs…',
  },
  zh: {
    'tc.title': '训练曲线：每个小模型是怎么学会的',
    'tc.intro': '每一步的训练损失，来自训练程序在每个模型旁边写下的日志。每种编码用的任务、数据、随机种子和训练预算都相同，所以曲线之间的差别只来自模型得知每个词元位置的方式。',
    'tc.task': '任务',
    'tc.t.copy': '复制（. abc | abc）',
    'tc.t.lm': '字符级语言模型',
    'tc.smooth': '平滑',
    'tc.raw': '不平滑（日志里的每一步）',
    'tc.mean': '最近 {n} 步的平均',
    'tc.logY': '对数坐标',
    'tc.x': '训练步数',
    'tc.y': '训练损失（每个目标的奈特数）',
    'tc.enc.none': '无（NoPE）',
    'tc.enc.sinusoidal': '正弦',
    'tc.enc.learned': '可学习',
    'tc.enc.rope': 'RoPE',
    'tc.enc.alibi': 'ALiBi',
    'tc.col.model': '模型',
    'tc.col.first': '第 1 步的损失',
    'tc.col.last': '第 {n} 步的损失',
    'tc.col.tail': '最后 {n} 步的平均',
    'tc.col.check': '训练后在检查集上',
    'tc.missing': '{name} 没有附带训练日志。',
    'tc.note': '共 {steps} 步，每步 {batch} 条长 {len} 个词元的序列；AdamW 优化器，学习率先在 {warmup} 步内预热，再按余弦衰减。每一步的损失是在这一步的批次上、更新参数之前测得的，所以它估计的是模型在还没训练过的数据上的损失。',
    'tc.loading': '正在加载训练日志…',
  },
});

const TASKS = ['copy', 'lm'];
export const ENCODINGS = ['none', 'sinusoidal', 'learned', 'rope', 'alibi'];
const SMOOTH = [1, 20, 100];
const TAIL = 100; // c/model/train.c: final_train_loss is the mean over the last min(100, steps) steps

/** Log-axis tick labels at 1, 2 and 5 times a power of ten (a loss that spans less than a decade still has ticks). */
function logTick125(v) {
  if (!(v > 0)) return '';
  const e = Math.floor(Math.log10(v) + 1e-9), m = v / 10 ** e;
  if (![1, 2, 5].some((k) => Math.abs(m - k) < 1e-6 * k)) return '';
  return e >= -3 && e <= 3 ? String(Number(v.toPrecision(1))) : `${Math.round(m)}e${e}`.replace('-', '−');
}

/** Trailing mean over the last w values (fewer at the start): out[i] = mean(x[max(0, i-w+1) .. i]). */
export function trailingMean(x, w) {
  if (w <= 1) return Float64Array.from(x);
  const out = new Float64Array(x.length);
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    sum += x[i];
    if (i >= w) sum -= x[i - w];
    out[i] = sum / Math.min(i + 1, w);
  }
  return out;
}

class PeTrainCurves extends PeElement {
  static attrs = {
    task: { type: 'enum', values: TASKS, default: 'copy' },
    smooth: { type: 'int', default: 20, min: 1, max: 1000 },
    'log-y': { type: 'bool', default: true },
  };

  render() {
    this.body.append(h('h3', {}, this.t('tc.title')), h('p', {}, this.t('tc.intro')),
      controls(
        select(this, { key: 'task', label: 'tc.task', options: TASKS.map((x) => [x, `tc.t.${x}`]) }),
        select(this, { key: 'smooth', label: 'tc.smooth', raw: true, options: [...new Set([...SMOOTH, this.state.smooth])].sort((a, b) => a - b).map((n) => [n, n === 1 ? this.t('tc.raw') : this.t('tc.mean', { n })]) }),
        checkbox(this, { key: 'logY', label: 'tc.logY' })),
      this.msg = h('div', { 'aria-live': 'polite' }),
      this.chartBox = h('div'),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      this.note = h('p', { class: 'pe-note' }));
  }

  /** The logs of one task: { enc: log | null } (null where a model has none), cached per task. */
  async logs(task) {
    this.cache ??= new Map();
    if (!this.cache.has(task)) {
      // index.json names the logs that are shipped (scripts/train.mjs), so a missing one is not a failed request
      const index = this.modelsJson('index.json');
      const load = async (enc) => {
        const name = `${task}-${enc}`;
        const entry = (await index).models?.find((m) => m.name === name);
        if (!entry?.train_log) return [enc, null];
        const [log, cfg] = await Promise.all([this.modelsJson(entry.train_log), this.modelConfig(name).catch(() => null)]);
        return [enc, log && Array.isArray(log.loss) ? { ...log, check: cfg?.posenc?.evaluation?.in_distribution?.loss } : null];
      };
      const p = Promise.all(ENCODINGS.map(load)).then((pairs) => Object.fromEntries(pairs));
      p.catch(() => this.cache.delete(task));
      this.cache.set(task, p);
    }
    return this.cache.get(task);
  }

  async draw() {
    const s = this.state;
    if (!this.cache?.has(s.task)) this.msg.replaceChildren(h('p', { class: 'pe-loading' }, this.t('tc.loading')));
    const logs = await this.logs(s.task);
    if (!this.body) return;
    const have = ENCODINGS.filter((e) => logs[e]);
    const missing = ENCODINGS.filter((e) => !logs[e]);
    this.msg.replaceChildren(missing.length ? h('p', { class: 'pe-note', 'data-missing': missing.join(',') }, this.t('tc.missing', { name: missing.map((e) => `${s.task}-${e}`).join(', ') })) : '');
    if (!have.length) {
      this.chartBox.replaceChildren();
      this.tableBox.replaceChildren();
      this.note.textContent = '';
      return;
    }
    const steps = Math.max(...have.map((e) => logs[e].loss.length));
    const x = Array.from({ length: steps }, (_, i) => i + 1);
    const series = [], rows = [];
    for (const e of have) {
      const log = logs[e];
      const y = trailingMean(log.loss, s.smooth);
      const color = PALETTE[ENCODINGS.indexOf(e) % PALETTE.length];
      series.push({ label: this.t(`tc.enc.${e}`), values: y, color, width: e === 'rope' ? 2.4 : 1.6 });
      // the mean of the last 100 steps is what config.json records as final_train_loss
      const tailN = Math.min(TAIL, log.loss.length);
      let tail = 0;
      for (let i = log.loss.length - tailN; i < log.loss.length; i++) tail += log.loss[i];
      tail /= tailN;
      const first = log.loss[0], last = log.loss[log.loss.length - 1];
      rows.push(h('tr', { 'data-enc': e, 'data-first': String(first), 'data-last': String(last), 'data-tail': String(tail), 'data-plotted-first': String(y[0]), 'data-plotted-last': String(y[y.length - 1]) },
        h('td', { style: { textAlign: 'left' } }, h('span', { style: { display: 'inline-block', width: '.8em', height: '.8em', background: color, borderRadius: '2px', marginRight: '.35em' } }), this.t(`tc.enc.${e}`)),
        h('td', {}, fmt(first, 4)), h('td', {}, fmt(last, 4)), h('td', {}, fmt(tail, 4)), h('td', {}, log.check == null ? '–' : fmt(log.check, 4))));
    }
    chart(this.chartBox, {
      x, series, height: 300, xLabel: this.t('tc.x'), yLabel: this.t('tc.y'), logY: s.logY, label: this.t('tc.title'),
      yFormat: s.logY ? logTick125 : undefined,
    });
    this.chartBox.dataset.task = s.task;
    this.tableBox.replaceChildren(h('table', { class: 'pe-table' },
      h('thead', {}, h('tr', {}, h('th', {}, this.t('tc.col.model')), h('th', {}, this.t('tc.col.first')), h('th', {}, this.t('tc.col.last', { n: steps })),
        h('th', {}, this.t('tc.col.tail', { n: Math.min(TAIL, steps) })), h('th', {}, this.t('tc.col.check')))),
      h('tbody', {}, rows)));
    const any = logs[have[0]];
    this.note.textContent = this.t('tc.note', { steps: any.steps, batch: any.batch_size, len: any.seq_len, warmup: any.warmup_steps });
  }
}

define('pe-train-curves', PeTrainCurves);
