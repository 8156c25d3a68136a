// <pe-speed>: the RoPE benchmark, run in the page. Three contenders rotate the same (1, seq, heads, headDim)
// float32 tensor in place: posenc's SIMD128 build (init({ simd: true }), data in wasm memory: pe.tensor), its
// scalar build (init({ simd: false })), and a plain JavaScript loop over a precomputed cos/sin cache (the way
// hand-written JS inference code does it: lib/plain-rope.js). Measured by lib/measure.js, the same code as
// `npm run bench`: calibrated batches, interleaved rounds, ratios formed round by round (median, quartiles).
//
// Attributes: seq (default 512), heads (default 8), head-dim (default 128), rounds (default 9),
// min-sample (seconds per batch, default 0.03), autorun (start on first view).
// With ?simd=0 on the page the SIMD contender is left out (the page asked for the scalar build only).
import { PeElement, define, h, getPosenc, simdPreference } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, select, button, progress } from './lib/controls.js';
import { compare, loop, ratio, fillRandom, formatTime } from './lib/measure.js';
import { ropeTable, ropeApply } from './lib/plain-rope.js';

registerStrings({
  en: {
    'speed.seq': 'sequence length',
    'speed.heads': 'heads',
    'speed.headDim': 'head dim',
    'speed.run': 'Run the benchmark',
    'speed.running': 'Running…',
    'speed.idle': 'Press the button: it takes a few seconds and uses one core.',
    'speed.calibrating': 'calibrating batch sizes…',
    'speed.round': 'round {r} of {n}',
    'speed.done': 'done: {n} rounds',
    'speed.workload': 'RoPE apply, in place, on a (1, {s}, {h}, {d}) float32 tensor ({mb} MB), half-split pairs',
    'speed.who': 'contender',
    'speed.time': 'time per call (median)',
    'speed.rate': 'throughput',
    'speed.vsJs': 'speed-up over plain JS',
    'speed.simd': 'posenc, SIMD128 build',
    'speed.scalar': 'posenc, scalar build',
    'speed.js': 'plain JavaScript loop',
    'speed.skipped': 'left out: {why}',
    'speed.simdOff': 'the page asked for the scalar build (?simd=0)',
    'speed.simdNo': 'this browser cannot run WebAssembly SIMD',
    'speed.perSec': '{x} G elements/s',
    'speed.note': 'Times are this machine’s, now; the ratios (measured side by side, round by round) travel better. The bar shows the median; the numbers in brackets are the quartiles across rounds.',
  },
  zh: {
    'speed.seq': '序列长度',
    'speed.heads': '头数',
    'speed.headDim': '头维度',
    'speed.run': '运行基准测试',
    'speed.running': '运行中…',
    'speed.idle': '按下按钮开始：需要几秒钟，占用一个 CPU 核心。',
    'speed.calibrating': '正在校准每批的调用次数…',
    'speed.round': '第 {r} 轮，共 {n} 轮',
    'speed.done': '完成：共 {n} 轮',
    'speed.workload': '对形状为 (1, {s}, {h}, {d}) 的 float32 张量（{mb} MB）原地应用 RoPE，前后半分配对',
    'speed.who': '参赛者',
    'speed.time': '每次调用耗时（中位数）',
    'speed.rate': '吞吐量',
    'speed.vsJs': '相对纯 JS 的加速比',
    'speed.simd': 'posenc，SIMD128 版本',
    'speed.scalar': 'posenc，标量版本',
    'speed.js': '纯 JavaScript 循环',
    'speed.skipped': '未参加：{why}',
    'speed.simdOff': '页面要求只用标量版本（?simd=0）',
    'speed.simdNo': '此浏览器无法运行 WebAssembly SIMD',
    'speed.perSec': '每秒 {x} G 个元素',
    'speed.note': '耗时取决于本机此刻的状况；并排、逐轮测得的比值更具可比性。条形表示中位数，括号中是各轮的四分位数。',
  },
});

const IDS = ['simd', 'scalar', 'js'];
const COLOURS = { simd: '#27864a', scalar: '#2f6db5', js: '#9aa5b1' };

class PeSpeed extends PeElement {
  static attrs = {
    seq: { type: 'int', default: 512, min: 1, max: 8192 },
    heads: { type: 'int', default: 8, min: 1, max: 64 },
    'head-dim': { type: 'int', default: 128, min: 2, max: 512 },
    rounds: { type: 'int', default: 9, min: 1, max: 100 },
    'min-sample': { type: 'number', default: 0.03, min: 0.001, max: 1 },
    autorun: { type: 'bool', default: false },
  };

  #running = false;

  setup() {
    this.result = null;
    this.phase = 'idle';
  }

  render() {
    const opt = (vs) => vs.map((v) => [v, String(v)]);
    this.runBtn = button(this, { label: 'speed.run', key: 'run', onClick: () => this.run() });
    this.runBtn.disabled = this.#running;
    this.bar = progress(this, { label: 'speed.run' });
    this.body.append(
      controls(
        select(this, { key: 'seq', label: 'speed.seq', raw: true, options: opt([128, 512, 2048].includes(this.state.seq) ? [128, 512, 2048] : [128, 512, 2048, this.state.seq]) }),
        select(this, { key: 'heads', label: 'speed.heads', raw: true, options: opt([8, 32].includes(this.state.heads) ? [8, 32] : [8, 32, this.state.heads]) }),
        select(this, { key: 'headDim', label: 'speed.headDim', raw: true, options: opt([64, 128].includes(this.state.headDim) ? [64, 128] : [64, 128, this.state.headDim]) }),
        this.runBtn,
      ),
      h('div', { class: 'pe-row', style: { alignItems: 'center' } }, this.bar, this.statusLine = h('span', { class: 'pe-note', 'aria-live': 'polite' })),
      this.workload = h('p', { class: 'pe-note' }),
      this.resultBox = h('div', { class: 'pe-scroll' }),
      h('p', { class: 'pe-note' }, this.t('speed.note')),
    );
    if (this.state.autorun && !this.autoran) {
      this.autoran = true;
      queueMicrotask(() => this.run());
    }
  }

  draw() {
    const { seq: S, heads: H, headDim: D } = this.state;
    this.workload.textContent = this.t('speed.workload', { s: S, h: H, d: D, mb: ((S * H * D * 4) / 1e6).toFixed(2) });
    this.bar.value = this.progress ?? 0;
    this.statusLine.textContent = this.phase === 'idle' ? this.t('speed.idle')
      : this.phase === 'calibrating' ? this.t('speed.calibrating')
        : this.phase === 'round' ? this.t('speed.round', { r: this.round, n: this.state.rounds })
          : this.t('speed.done', { n: this.state.rounds });
    this.runBtn.textContent = this.t(this.#running ? 'speed.running' : 'speed.run');
    this.drawResult();
  }

  drawResult() {
    const r = this.result;
    if (!r) {
      this.resultBox.replaceChildren();
      return;
    }
    const n = r.elements;
    const best = Math.max(...IDS.map((id) => (r.results[id]?.median ? 1 / r.results[id].median : 0)));
    const rows = IDS.map((id) => {
      const res = r.results[id];
      const name = this.t(`speed.${id}`);
      if (!res || res.error || !res.median) {
        const why = r.skipped[id] ? this.t(r.skipped[id]) : res?.error ?? '';
        return h('tr', {}, h('td', { style: { textAlign: 'left' } }, name), h('td', { colspan: 3, style: { textAlign: 'left' } }, this.t('speed.skipped', { why })));
      }
      const rt = id === 'js' ? null : ratio(r.results, 'js', id);
      const width = Math.max(2, Math.round((100 * (1 / res.median)) / best));
      return h('tr', {},
        h('td', { style: { textAlign: 'left' } }, name),
        h('td', { translate: 'no' }, formatTime(res.median)),
        h('td', {}, this.t('speed.perSec', { x: (n / res.median / 1e9).toFixed(2) })),
        h('td', { style: { textAlign: 'left', minWidth: '12rem' } },
          h('svg:svg', { class: 'pe-speedbar', viewBox: '0 0 100 10', preserveAspectRatio: 'none', 'aria-hidden': 'true' },
            h('svg:rect', { x: 0, y: 0, width, height: 10, rx: 1.5, fill: COLOURS[id] }),
            h('svg:rect', { x: width, y: 0, width: 100 - width, height: 10, fill: '#eef1f4' }),
            h('svg:line', { x1: 0, y1: 0, x2: 0, y2: 10, stroke: '#4f5963', 'stroke-width': 0.6 })),
          id === 'js' ? '1×' : rt ? `${fmt(rt.median, 3)}× (${fmt(rt.lo, 3)}–${fmt(rt.hi, 3)})` : '–'));
    });
    this.resultBox.replaceChildren(h('table', { class: 'pe-table pe-speed-table' },
      h('thead', {}, h('tr', {}, ...['speed.who', 'speed.time', 'speed.rate', 'speed.vsJs'].map((k) => h('th', {}, this.t(k))))),
      h('tbody', {}, rows)));
  }

  async run() {
    if (this.#running) return;
    this.#running = true;
    this.runBtn.disabled = true;
    this.dataset.running = 'true';
    const { seq: S, heads: H, headDim: D, rounds, minSample } = this.state;
    const n = S * H * D;
    const shape = [1, S, H, D];
    const positions = Int32Array.from({ length: S }, (_, i) => i);
    const src = fillRandom(new Float32Array(n), 7);
    const skipped = {};
    const freeLater = [];
    const yieldThen = (fn) => {
      const sample = loop(fn);
      // let the page paint between batches; the timing starts after the pause
      return async (iters) => {
        await new Promise((ok) => setTimeout(ok, 0));
        return sample(iters);
      };
    };
    try {
      this.phase = 'calibrating';
      this.progress = 0;
      this.update();
      const contenders = [];
      const wasm = async (id, simd) => {
        const pe = await getPosenc(simd);
        const rope = pe.rope({ headDim: D });
        const x = pe.tensor(src);
        freeLater.push(rope, x);
        contenders.push({ id, sample: yieldThen(() => rope.apply(x, { shape, positions })) });
      };
      if (simdPreference(this) === false) skipped.simd = 'speed.simdOff';
      else {
        try {
          await wasm('simd', true);
        } catch {
          skipped.simd = 'speed.simdNo';
        }
      }
      await wasm('scalar', false);
      const table = ropeTable(S, D);
      const xj = Float32Array.from(src);
      contenders.push({ id: 'js', sample: yieldThen(() => ropeApply(xj, table, positions, 1, S, H, D, 'bshd', 'half')) });
      const out = await compare(contenders, {
        rounds,
        minSample,
        onRound: (r) => {
          this.phase = 'round';
          this.round = r + 1;
          this.progress = (r + 1) / rounds;
          this.update();
        },
      });
      this.result = { ...out, skipped, elements: n };
      this.phase = 'done';
      this.dataset.result = JSON.stringify(Object.fromEntries(IDS.map((id) => [id, out.results[id]?.median ?? null])));
    } finally {
      for (const f of freeLater) f.free();
      this.#running = false;
      delete this.dataset.running;
      if (this.runBtn?.isConnected) this.runBtn.disabled = false;
      this.update();
    }
  }
}

define('pe-speed', PeSpeed);
