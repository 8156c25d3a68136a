// <pe-layer-schedule>: models whose layers encode positions differently, read by pe.fromHFConfig from their
// config.json. Gemma 3 (Gemma Team 2025): five local layers (sliding window, RoPE base 10 000) to one global layer
// (all keys, base 1 000 000, linear ×8 in the 4B and larger). Llama 4 (Meta 2025): chunked-attention RoPE layers
// with every 4th layer NoPE, whose queries are scaled up with the position (attention temperature tuning).
// Shown: a strip with one cell per layer (click one for its scheme), a query position p, and per distinct scheme
// what a query at p gets: the keys it may see (window, chunk or all), the RoPE base and its slowest wavelength
// (rope.invFreq64), the query scale (layer.queryScale.at(p)); a chart of both against p.
// Attributes: preset (gemma3-4b | gemma3-270m | llama4-scout), position (default 20000), layer (default 5).
import { PeElement, define, h } from './base.js';
import { registerStrings, fmt } from './lib/i18n.js';
import { controls, range, select } from './lib/controls.js';
import { chart } from './lib/chart.js';
import { texRow } from './lib/math.js';
import { addStyle } from './lib/style.js';

// config.json as published (Gemma 3 4B: its text_config verbatim; Gemma 3 270M: the position keys of its file;
// Llama 4 Scout: the text keys of its file, nested under text_config as transformers reads them)
const PRESETS = {
  'gemma3-4b': { name: 'Gemma 3 4B', config: { model_type: 'gemma3', text_config: { hidden_size: 2560, intermediate_size: 10240, model_type: 'gemma3_text', num_hidden_layers: 34, rope_scaling: { factor: 8.0, rope_type: 'linear' }, sliding_window: 1024 } }, maxPos: 131072 },
  'gemma3-270m': { name: 'Gemma 3 270M', config: { model_type: 'gemma3_text', num_hidden_layers: 18, head_dim: 256, hidden_size: 640, num_attention_heads: 4, max_position_embeddings: 32768, rope_theta: 1000000.0, rope_local_base_freq: 10000.0, rope_scaling: null, sliding_window: 512, _sliding_window_pattern: 6 }, maxPos: 32768 },
  'llama4-scout': { name: 'Llama 4 Scout', config: { model_type: 'llama4', text_config: { model_type: 'llama4_text', num_hidden_layers: 48, head_dim: 128, hidden_size: 5120, num_attention_heads: 40, rope_theta: 500000.0, attention_chunk_size: 8192, max_position_embeddings: 10485760, rope_scaling: { factor: 8.0, high_freq_factor: 4.0, low_freq_factor: 1.0, original_max_position_embeddings: 8192, rope_type: 'llama3' } } }, maxPos: 10485760 },
};
const GEMMA_DEFAULT_WINDOW = 4096; // Gemma3TextConfig's sliding_window default
// one colour per kind of layer (no q/k blue or red: these are layers, not vectors)
const KEY_COLOR = { local: '#7fa7d9', global: '#1f4f8a', chunked: '#7fa7d9', rope: '#4a7fc1', nope: '#aab2b9' };

addStyle('pe-layers', `
.pe-widget .pe-ls-strip { display: flex; flex-wrap: wrap; gap: 2px; margin: .3rem 0 .5rem; }
.pe-widget .pe-ls-cell { font: inherit; font-size: .68rem; line-height: 1.7em; min-width: 1.9em; padding: 0 .15em; border: 0; border-radius: 3px;
  color: #fff; cursor: pointer; font-variant-numeric: tabular-nums; text-align: center; }
.pe-widget .pe-ls-cell[data-kind="nope"] { color: #1d232a; }
.pe-widget .pe-ls-cell[aria-pressed="true"] { outline: 2px solid #e08a00; outline-offset: 1px; }
.pe-widget .pe-ls-table th { min-width: 4.5em; }
.pe-widget .pe-ls-key { display: inline-flex; flex-wrap: wrap; gap: .3rem .9rem; font-size: .78rem; }
.pe-widget .pe-ls-key i { display: inline-block; width: .8em; height: .8em; border-radius: 2px; margin-right: .3em; vertical-align: -.05em; }
`);

registerStrings({
  en: {
    'ls.title': 'Layers that position differently',
    'ls.intro': 'Many recent models do not give every layer the same position encoding. pe.fromHFConfig reads a config.json and returns one scheme per layer; here are two families whose schedules matter.',
    'ls.preset': 'model',
    'ls.f.local': 'local layers, key n seen by query m: ',
    'ls.f.global': 'global layers: ',
    'ls.f.rope': 'RoPE layers: ',
    'ls.f.nope': 'NoPE layers: ',
    'ls.position': 'query position p',
    'ls.strip': 'One cell per layer ({n} layers); click a layer',
    'ls.layer': 'layer {i}',
    'ls.k.local': 'RoPE, sliding window {w} (base {b})',
    'ls.k.global': 'RoPE, every key (base {b})',
    'ls.k.chunked': 'RoPE, chunked attention {w} (base {b})',
    'ls.k.nope': 'NoPE: no rotation, query scaled',
    'ls.k.rope': 'RoPE (base {b})',
    'ls.sel': 'Layer {i} ({type}): {kind}.',
    'ls.th.scheme': 'scheme',
    'ls.th.layers': 'layers',
    'ls.th.rope': 'RoPE',
    'ls.th.keys': 'keys a query at p sees',
    'ls.th.wl': 'slowest wavelength (tokens)',
    'ls.th.scale': 'query scale at p',
    'ls.none': 'none',
    'ls.short.local': 'local',
    'ls.short.global': 'global',
    'ls.short.chunked': 'chunked',
    'ls.short.rope': 'RoPE',
    'ls.short.nope': 'NoPE',
    'ls.chart.keys': 'Keys visible to a query at position p, per scheme',
    'ls.chart.scale': 'Query scale of the NoPE layers against position',
    'ls.x': 'query position p',
    'ls.y.keys': 'keys visible',
    'ls.y.scale': 'scale s(p)',
    'ls.note.gemma': 'The local layers see only the last {w} tokens, and their slowest pair needs {wl} tokens for one turn, so inside the window a local layer works with all its frequencies at short range; the one global layer in six carries long-range order, with a larger base (and, in the 4B and larger, positions interpolated ×8). A runtime that gives every layer one base, or one window, computes a different model.',
    'ls.note.llama': 'Three layers in four rotate and attend within chunks of {w} tokens; the fourth has no rotation at all and sees every key. Its queries are multiplied by s(p), which is 1 below position {f} − 1 and then grows with the logarithm of the position, so that attention in these layers does not flatten out over millions of keys.',
    'ls.link': 'Paste any config.json into the config box of the length-extension section to see its schedule.',
  },
  zh: {
    'ls.title': '位置编码因层而异',
    'ls.intro': '许多新模型并不让每一层使用同样的位置编码。pe.fromHFConfig 读取 config.json，为每一层返回一种方案；下面是两个需要注意层间安排的模型家族。',
    'ls.preset': '模型',
    'ls.f.local': '局部层，查询 m 能看到键 n：',
    'ls.f.global': '全局层：',
    'ls.f.rope': 'RoPE 层：',
    'ls.f.nope': 'NoPE 层：',
    'ls.position': '查询位置 p',
    'ls.strip': '每层一格（共 {n} 层）；点击某一层',
    'ls.layer': '第 {i} 层',
    'ls.k.local': 'RoPE，滑动窗口 {w}（底数 {b}）',
    'ls.k.global': 'RoPE，看到所有键（底数 {b}）',
    'ls.k.chunked': 'RoPE，分块注意力 {w}（底数 {b}）',
    'ls.k.nope': 'NoPE：不旋转，查询被缩放',
    'ls.k.rope': 'RoPE（底数 {b}）',
    'ls.sel': '第 {i} 层（{type}）：{kind}。',
    'ls.th.scheme': '方案',
    'ls.th.layers': '层数',
    'ls.th.rope': 'RoPE',
    'ls.th.keys': '位置 p 的查询能看到的键',
    'ls.th.wl': '最慢一对的波长（词元）',
    'ls.th.scale': '位置 p 的查询缩放',
    'ls.none': '无',
    'ls.short.local': '局部',
    'ls.short.global': '全局',
    'ls.short.chunked': '分块',
    'ls.short.rope': 'RoPE',
    'ls.short.nope': 'NoPE',
    'ls.chart.keys': '各方案下，位置 p 的查询能看到多少个键',
    'ls.chart.scale': 'NoPE 层的查询缩放随位置的变化',
    'ls.x': '查询位置 p',
    'ls.y.keys': '可见的键',
    'ls.y.scale': '缩放 s(p)',
    'ls.note.gemma': '局部层只看最近的 {w} 个词元，而它最慢的一对要 {wl} 个词元才转一圈，所以在窗口之内，局部层以全部频率处理近距离关系；每六层中那一个全局层负责远距离的顺序，底数更大（4B 及更大的模型还把位置内插 ×8）。若运行时让每一层使用同一个底数或同一个窗口，算出来的就是另一个模型。',
    'ls.note.llama': '每四层中有三层做旋转，并只在 {w} 个词元的块内做注意力；第四层完全不旋转，能看到所有键。它的查询乘以 s(p)：在位置 {f} − 1 之前为 1，此后随位置的对数增长，使这些层在数百万个键上的注意力不至于被摊平。',
    'ls.link': '把任意 config.json 粘贴到“长度外推”一节的配置框中，即可看到它的层间安排。',
  },
});

class PeLayerSchedule extends PeElement {
  static attrs = {
    preset: { type: 'enum', values: Object.keys(PRESETS), default: 'gemma3-4b' },
    position: { type: 'int', default: 20000, min: 0, max: 10485759 },
    layer: { type: 'int', default: 5, min: 0, max: 255 },
  };

  static rebuildOn = ['preset'];

  /** The preset's schedule: per layer { i, scheme }, and the distinct schemes (fromHFConfig, freed at once). */
  schedule() {
    const P = PRESETS[this.state.preset];
    const cfg = P.config, text = cfg.text_config ?? cfg;
    const gemma = /^gemma3/.test(text.model_type ?? cfg.model_type);
    const window = gemma ? (text.sliding_window ?? GEMMA_DEFAULT_WINDOW) : text.attention_chunk_size;
    const spec = this.pe.fromHFConfig(cfg);
    try {
      const schemes = [];
      const byLayer = spec.layers.map((l, i) => {
        let key;
        if (l.kind === 'none') key = 'nope';
        else if (gemma) key = l.layerType === 'sliding_attention' ? 'local' : 'global';
        else key = l.layerType === 'chunked_attention' ? 'chunked' : 'rope';
        let s = schemes.find((x) => x.key === key && (l.kind !== 'rope' || x.base === l.rope.base));
        if (!s) {
          const inv = l.kind === 'rope' ? l.rope.invFreq64() : null;
          s = {
            key, id: schemes.length, color: KEY_COLOR[key], layerType: l.layerType ?? '', count: 0,
            base: l.kind === 'rope' ? l.rope.base : null, type: l.kind === 'rope' ? l.rope.type : null, factor: l.kind === 'rope' ? l.rope.config.scaling?.factor : null,
            slowest: inv ? (2 * Math.PI) / Math.min(...inv) : null,
            scale: l.queryScale ? { type: l.queryScale.type, at: l.queryScale.at.bind(l.queryScale), floorScale: l.queryScale.floorScale, attnScale: l.queryScale.attnScale } : null,
            window: key === 'local' || key === 'chunked' ? window : null,
          };
          schemes.push(s);
        }
        s.count++;
        return { i, s, layerType: l.layerType ?? '' };
      });
      return { name: P.name, gemma, window, byLayer, schemes, maxPos: P.maxPos };
    } finally {
      spec.free();
    }
  }

  kindText(s) {
    return this.t(`ls.k.${s.key}`, { w: s.window, b: s.base == null ? '' : fmt(s.base, 3) });
  }

  render() {
    const sch = this.sched = this.schedule();
    // the rules with this config's numbers: window w (sliding_window), chunk C (attention_chunk_size), F and β
    // (floor_scale, attn_scale of the NoPE layers' query scale), the bases b (rope_local_base_freq, rope_theta)
    const base = (key) => {
      const b = sch.schemes.find((x) => x.key === key)?.base ?? 0;
      const e = Math.log10(b);
      return Number.isInteger(e) ? `10^{${e}}` : String(b); // TeX, not '1e+6'
    };
    const qs = sch.schemes.find((x) => x.scale)?.scale;
    const formulas = sch.gemma
      ? [`\\text{${this.t('ls.f.local')}} m - w < n \\le m,\\ w = ${sch.window},\\ b = ${base('local')}`, `\\text{${this.t('ls.f.global')}} n \\le m,\\ b = ${base('global')}`]
      : [`\\text{${this.t('ls.f.rope')}} \\lfloor n/C \\rfloor = \\lfloor m/C \\rfloor,\\ n \\le m,\\ C = ${sch.window}`,
        `\\text{${this.t('ls.f.nope')}} q \\leftarrow s(m)\\,q`, `s(m) = 1 + \\beta \\ln\\!\\Big(\\Big\\lfloor \\frac{m+1}{F} \\Big\\rfloor + 1\\Big),\\ F = ${qs?.floorScale},\\ \\beta = ${qs?.attnScale}`];
    this.body.append(h('h3', {}, this.t('ls.title')), h('p', {}, this.t('ls.intro')),
      controls(
        this.presetControl = select(this, { key: 'preset', label: 'ls.preset', raw: true, options: Object.entries(PRESETS).map(([k, v]) => [k, v.name]) }),
        range(this, { key: 'position', label: 'ls.position', min: 1, max: sch.maxPos - 1, log: true, logStep: 0.125, value: Math.min(this.state.position, sch.maxPos - 1) })),
      texRow(formulas),
      h('h4', {}, this.t('ls.strip', { n: sch.byLayer.length })),
      this.stripBox = h('div', { class: 'pe-ls-strip', role: 'group', 'aria-label': this.t('ls.strip', { n: sch.byLayer.length }) }),
      h('div', { class: 'pe-ls-key' }, sch.schemes.map((s) => h('span', {}, h('i', { style: { background: s.color } }), this.kindText(s)))),
      this.selLine = h('p', { 'aria-live': 'polite' }),
      this.tableBox = h('div', { class: 'pe-scroll' }),
      h('div', { class: 'pe-row' },
        h('figure', {}, h('figcaption', {}, this.t('ls.chart.keys')), this.keysChart = h('div')),
        this.scaleFig = h('figure', {}, h('figcaption', {}, this.t('ls.chart.scale')), this.scaleChart = h('div'))),
      this.noteLine = h('p', { class: 'pe-note' }),
      h('p', { class: 'pe-note' }, this.t('ls.link')));
    this.presetControl.querySelector('select').setAttribute('translate', 'no'); // model names
  }

  visible(s, p) {
    if (s.key === 'local') return Math.min(p + 1, s.window);
    if (s.key === 'chunked') return p - s.window * Math.floor(p / s.window) + 1;
    return p + 1;
  }

  draw() {
    const sch = this.sched;
    const p = Math.min(this.state.position, sch.maxPos - 1);
    const sel = Math.min(this.state.layer, sch.byLayer.length - 1);
    this.stripBox.replaceChildren(...sch.byLayer.map(({ i, s, layerType }) => h('button', {
      type: 'button', class: 'pe-ls-cell', 'data-layer': String(i), 'data-kind': s.key, 'data-base': s.base == null ? '' : String(s.base), 'data-layer-type': layerType,
      'aria-pressed': String(i === sel), title: `${this.t('ls.layer', { i })}: ${this.kindText(s)}`, style: { background: s.color },
      onclick: () => this.setState({ layer: i }),
    }, String(i))));
    const L = sch.byLayer[sel];
    this.selLine.textContent = this.t('ls.sel', { i: sel, type: L.layerType || '–', kind: this.kindText(L.s) });
    const anyScale = sch.schemes.some((s) => s.scale);
    const heads = ['ls.th.scheme', 'ls.th.layers', 'ls.th.rope', 'ls.th.keys', 'ls.th.wl', ...(anyScale ? ['ls.th.scale'] : [])];
    this.tableBox.replaceChildren(h('table', { class: 'pe-table pe-ls-table' },
      h('tr', {}, heads.map((k) => h('th', {}, this.t(k)))),
      sch.schemes.map((s) => {
        const scale = s.scale ? s.scale.at(p) : 1;
        return h('tr', { 'data-scheme': s.key, 'data-layers': String(s.count), 'data-keys': String(this.visible(s, p)), 'data-scale': String(scale) },
          h('td', { style: { textAlign: 'left' }, title: this.kindText(s) }, h('i', { style: { display: 'inline-block', width: '.8em', height: '.8em', borderRadius: '2px', background: s.color, marginRight: '.3em' } }), this.t(`ls.short.${s.key}`)),
          h('td', {}, String(s.count)),
          h('td', { style: { textAlign: 'left' } }, s.base == null ? this.t('ls.none') : h('span', { translate: 'no' }, `${s.type}, b = ${fmt(s.base, 3)}${s.factor ? `, ×${fmt(s.factor, 3)}` : ''}`)),
          h('td', {}, fmt(this.visible(s, p), 6)),
          h('td', {}, s.slowest == null ? '–' : fmt(s.slowest, 3)),
          anyScale ? h('td', {}, fmt(scale, 5)) : null);
      })));
    // the charts: positions 1 … max on a log axis
    const xs = [];
    for (let x = 1; x < sch.maxPos; x = Math.ceil(x * 1.08)) xs.push(x);
    chart(this.keysChart, {
      x: xs, logX: true, logY: true, height: 220, xLabel: this.t('ls.x'), yLabel: this.t('ls.y.keys'), label: this.t('ls.chart.keys'), xRange: [1, sch.maxPos],
      series: sch.schemes.map((s) => ({ label: this.kindText(s), values: xs.map((x) => this.visible(s, x)), color: s.color, width: 2 })),
    });
    const scaled = sch.schemes.filter((s) => s.scale);
    this.scaleFig.hidden = !scaled.length;
    if (scaled.length) {
      chart(this.scaleChart, {
        x: xs, logX: true, height: 220, xLabel: this.t('ls.x'), yLabel: this.t('ls.y.scale'), label: this.t('ls.chart.scale'), xRange: [1, sch.maxPos],
        series: scaled.map((s) => ({ label: this.kindText(s), values: xs.map((x) => s.scale.at(x)), color: '#c0392b', width: 2 })),
      });
    }
    const local = sch.schemes.find((s) => s.key === 'local');
    const nope = sch.schemes.find((s) => s.scale);
    this.noteLine.textContent = sch.gemma
      ? this.t('ls.note.gemma', { w: sch.window, wl: fmt(local?.slowest ?? 0, 3) })
      : this.t('ls.note.llama', { w: sch.window, f: nope?.scale.floorScale ?? '' });
    this.dataset.position = String(p);
  }
}

define('pe-layer-schedule', PeLayerSchedule);
