// <pe-heatmap>: one table of any encoding as a heatmap, configured by attributes only (no controls unless
// `controls` is given). Position runs left to right; the other axis is the frequency / dimension / key.
//
//   kind      rope-cos | rope-sin | sinusoidal | alibi | alibi-causal   (default rope-cos)
//   length    positions (1..4096, default 128)
//   head-dim  RoPE head dimension (even, 2..512, default 64); d-model for sinusoidal (2..512)
//   base      rope_theta / sinusoidal base (default 10000)
//   scaling   RoPE scaling: none | linear | ntk | dynamic | yarn | llama3 | longrope-like presets (default none)
//   factor    scaling factor (default 4); original   original context for yarn/dynamic/llama3 (default length/factor)
//   heads     ALiBi head count (default 8); head   which head to show (default 0)
//   pairing   half | interleaved (sinusoidal column order; default interleaved)
//   controls  show sliders / menus for the attributes above
import { PeElement, define, h } from './base.js';
import { registerStrings } from './lib/i18n.js';
import { heatmap } from './lib/heatmap.js';
import { ROLE } from './lib/palette.js';
import { controls, range, select, withValue } from './lib/controls.js';

registerStrings({
  en: {
    'hm.kind': 'table',
    'hm.rope-cos': 'RoPE cos(p·θᵢ)',
    'hm.rope-sin': 'RoPE sin(p·θᵢ)',
    'hm.sinusoidal': 'sinusoidal PE(p)',
    'hm.alibi': 'ALiBi bias (one head)',
    'hm.alibi-causal': 'ALiBi bias, causal (one head)',
    'hm.length': 'positions',
    'hm.headDim': 'head dim / d_model',
    'hm.base': 'base',
    'hm.scaling': 'RoPE scaling',
    'hm.factor': 'factor',
    'hm.heads': 'heads',
    'hm.head': 'head',
    'hm.freq': 'frequency i',
    'hm.col': 'column',
    'hm.fastTop': 'fast frequencies at the top',
    'hm.keyPos': 'key position j',
    'hm.queryPos': 'query position i',
    'hm.caption': '{what} · {rows} × {cols}',
    'hm.attn': 'attention factor {f}',
    'sc.none': 'none',
    'sc.linear': 'linear (PI)',
    'sc.dynamic': 'dynamic NTK',
    'sc.ntk': 'NTK-aware (base × factor^(d/(d−2)))',
    'sc.yarn': 'YaRN',
    'sc.llama3': 'Llama 3',
  },
  zh: {
    'hm.kind': '表',
    'hm.rope-cos': 'RoPE 的 cos(p·θᵢ)',
    'hm.rope-sin': 'RoPE 的 sin(p·θᵢ)',
    'hm.sinusoidal': '正弦位置编码 PE(p)',
    'hm.alibi': 'ALiBi 偏置（单个头）',
    'hm.alibi-causal': 'ALiBi 偏置，因果（单个头）',
    'hm.length': '位置数',
    'hm.headDim': '头维度 / d_model',
    'hm.base': '底数 base',
    'hm.scaling': 'RoPE 缩放',
    'hm.factor': '倍数',
    'hm.heads': '头数',
    'hm.head': '第几个头',
    'hm.freq': '频率 i',
    'hm.col': '列',
    'hm.fastTop': '高频在上',
    'hm.keyPos': '键位置 j',
    'hm.queryPos': '查询位置 i',
    'hm.caption': '{what} · {rows} × {cols}',
    'hm.attn': '注意力因子 {f}',
    'sc.none': '无',
    'sc.linear': '线性插值（PI）',
    'sc.dynamic': '动态 NTK',
    'sc.ntk': 'NTK 感知（base × factor^(d/(d−2))）',
    'sc.yarn': 'YaRN',
    'sc.llama3': 'Llama 3',
  },
});

const KINDS = ['rope-cos', 'rope-sin', 'sinusoidal', 'alibi', 'alibi-causal'];
const SCALINGS = ['none', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3'];

/** pe.rope() options for a scaling preset (shared with other widgets). */
export function ropeOptions({ headDim, base, scaling, factor, original }) {
  const o = { headDim, base };
  switch (scaling) {
    case 'linear': o.scaling = { type: 'linear', factor }; break;
    case 'ntk': o.base = base * factor ** (headDim / (headDim - 2)); break;
    case 'dynamic': o.maxPositionEmbeddings = original; o.scaling = { type: 'dynamic', factor }; break;
    case 'yarn': o.scaling = { type: 'yarn', factor, originalMaxPositionEmbeddings: original }; break;
    case 'llama3': o.scaling = { type: 'llama3', factor, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: original }; break;
    default: break;
  }
  return o;
}

class PeHeatmap extends PeElement {
  static attrs = {
    kind: { type: 'enum', values: KINDS, default: 'rope-cos' },
    length: { type: 'int', default: 128, min: 1, max: 4096 },
    'head-dim': { type: 'int', default: 64, min: 2, max: 512 },
    base: { type: 'number', default: 10000, min: 1.0001 },
    scaling: { type: 'enum', values: SCALINGS, default: 'none' },
    factor: { type: 'number', default: 4, min: 1, max: 64 },
    original: { type: 'int', default: 0, min: 0 },
    heads: { type: 'int', default: 8, min: 1, max: 64 },
    head: { type: 'int', default: 0, min: 0, max: 63 },
    pairing: { type: 'enum', values: ['interleaved', 'half'], default: 'interleaved' },
    controls: { type: 'bool', default: false },
    height: { type: 'int', default: 0, min: 0, max: 1200 },
  };

  render() {
    const s = this.state;
    if (this.hasAttribute('controls') && s.controls !== false) {
      const items = [
        select(this, { key: 'kind', label: 'hm.kind', options: KINDS.map((k) => [k, `hm.${k}`]) }),
        range(this, { key: 'length', label: 'hm.length', min: 8, max: 1024, log: true, logStep: 0.5 }),
      ];
      if (s.kind.startsWith('alibi')) {
        items.push(range(this, { key: 'heads', label: 'hm.heads', min: 1, max: 32 }),
          range(this, { key: 'head', label: 'hm.head', min: 0, max: s.heads - 1 }));
      } else {
        items.push(select(this, { key: 'headDim', label: 'hm.headDim', raw: true, options: [8, 16, 32, 64, 128, 256].map((v) => [v, String(v)]) }),
          select(this, { key: 'base', label: 'hm.base', raw: true, options: withValue([100, 1000, 10000, 100000, 500000, 1000000], s.base).map((v) => [v, String(v)]) }));
      }
      if (s.kind.startsWith('rope')) {
        items.push(select(this, { key: 'scaling', label: 'hm.scaling', options: SCALINGS.map((k) => [k, `sc.${k}`]) }));
        if (s.scaling !== 'none') items.push(range(this, { key: 'factor', label: 'hm.factor', min: 2, max: 32, step: 1 }));
      }
      this.body.append(controls(...items));
    }
    this.fig = h('div');
    this.body.append(this.fig);
  }

  // Changing the table kind changes which controls make sense: rebuild them.
  static rebuildOn = ['kind', 'heads', 'scaling'];

  draw() {
    const s = this.state;
    const pe = this.pe;
    const L = s.length;
    const hOpt = s.height || undefined;
    if (s.kind.startsWith('rope')) {
      const hd = s.headDim - (s.headDim % 2);
      const rope = pe.rope(ropeOptions({ headDim: hd, base: s.base, scaling: s.scaling, factor: s.factor, original: s.original || Math.max(1, Math.round(L / s.factor)) }));
      try {
        const pos = Int32Array.from({ length: L }, (_, i) => i);
        const { cos, sin } = rope.cosSin(pos);
        const nf = rope.nFreq;
        const f = rope.attentionScaling(L);
        const what = `${this.t(`hm.${s.kind}`)} · ${this.t('hm.fastTop')}` + (Math.abs(f - 1) > 1e-9 ? ` · ${this.t('hm.attn', { f: f.toFixed(4) })}` : '');
        heatmap(this.fig, s.kind === 'rope-cos' ? cos : sin, L, nf, {
          transpose: true, range: Math.max(1, f), xLabel: this.t('pe.position'), yLabel: this.t('hm.freq'),
          caption: this.t('hm.caption', { what, rows: nf, cols: L }), height: hOpt, lang: this.lang,
        });
      } finally {
        rope.free();
      }
    } else if (s.kind === 'sinusoidal') {
      const d = s.headDim;
      const table = pe.sinusoidal(L, d, { base: s.base, pairing: s.pairing });
      heatmap(this.fig, table, L, d, {
        transpose: true, range: 1, xLabel: this.t('pe.position'), yLabel: this.t('hm.col'),
        caption: this.t('hm.caption', { what: this.t('hm.sinusoidal'), rows: d, cols: L }), height: hOpt, lang: this.lang,
      });
    } else {
      const H = s.heads;
      const head = Math.min(s.head, H - 1);
      const n = Math.min(L, 256);
      const bias = pe.alibiBias(H, n, n, { causal: s.kind === 'alibi-causal' });
      heatmap(this.fig, bias.subarray(head * n * n, (head + 1) * n * n), n, n, {
        xLabel: this.t('hm.keyPos'), yLabel: this.t('hm.queryPos'), height: hOpt, lang: this.lang, xColor: ROLE.k, yColor: ROLE.q,
        caption: this.t('hm.caption', { what: `${this.t(`hm.${s.kind}`)} · ${this.t('pe.head')} ${head} · m = ${pe.alibiSlopes(H)[head].toPrecision(4)}`, rows: n, cols: n }),
      });
    }
  }
}

define('pe-heatmap', PeHeatmap);
