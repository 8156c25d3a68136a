// The config box of <pe-scaling> (web/widgets/scaling.js): a whole config.json read by pe.fromHFConfig, shown
// as a per-layer schedule (a strip with one cell per layer, runs of identical layers grouped in deep models, and
// one table row per distinct scheme) and the chosen RoPE's fields and wavelengths. The strings live in scaling.js's table ('sc.s.*', 'sc.k.*',
// 'sc.p.*', 'sc.f.*'); `el` is the <pe-scaling> element (el.t, el.pe).

import { h } from './dom.js';
import { fmt } from './i18n.js';
import { chart, PALETTE } from './chart.js';

/** Schedule colours by kind (distinct RoPEs take the blues in turn). */
const KIND_COLORS = { alibi: '#d68910', learned: '#27864a', sinusoidal: '#8e44ad', none: '#aab2b9' };
const ROPE_COLORS = ['#2f6db5', '#16a2b8', '#1f4f8a', '#6c9bd6', '#0b6b78'];
/** Above this many layers the strip groups runs of identical layers into one cell. */
const STRIP_GROUP_ABOVE = 48;
/** The config keys that give the layer count (a config without any shows its RoPE alone). */
const LAYER_COUNT_KEYS = ['num_hidden_layers', 'n_layer', 'num_layers', 'n_layers', 'encoder_layers', 'decoder_layers'];

/** The strip: one cell per layer (runs of identical layers grouped when the model is deep), coloured by scheme. */
export function strip(el, perLayer) {
  const runs = [];
  perLayer.forEach((x, i) => {
    const last = runs[runs.length - 1];
    if (perLayer.length > STRIP_GROUP_ABOVE && last && last.x === x) last.count++;
    else runs.push({ x, start: i, count: 1 });
  });
  const cells = runs.map(({ x, start, count }) => {
    const layer = x.layer;
    const where = count === 1 ? el.t('sc.s.layer', { a: start }) : el.t('sc.s.layers', { a: start, b: start + count - 1 });
    return h('span', {
      class: 'pe-sc-cell', 'data-kind': layer.kind, 'data-scheme': x.id, 'data-start': String(start), 'data-count': String(count),
      'data-layer-type': layer.layerType ?? '', title: `${where}: ${x.id} ${el.t(`sc.k.${layer.kind}`)}${layer.layerType ? ` (${layer.layerType})` : ''}`,
      style: { background: x.color, color: layer.kind === 'none' ? '#222' : '#fff', flex: `${count} 0 auto`, minWidth: count === 1 ? '1.35em' : '2.6em',
        textAlign: 'center', fontSize: '.72rem', lineHeight: '1.6em', borderRadius: '3px', fontVariantNumeric: 'tabular-nums' },
    }, count === 1 ? x.id : `${x.id}×${count}`);
  });
  return h('div', { class: 'pe-sc-strip', role: 'img', 'aria-label': el.t('sc.s.title'), style: { display: 'flex', flexWrap: 'wrap', gap: '2px', margin: '.3rem 0 .6rem' } }, cells);
}

/** One row per distinct scheme: kind, layer types, how many layers, parameters. */
export function schemeTable(el, schemes) {
  const row = (x) => {
    const l = x.layer;
    const attrs = { 'data-kind': l.kind, 'data-scheme': x.id, 'data-layers': String(x.count), 'data-layer-type': l.layerType ?? '' };
    if (l.kind === 'rope') attrs['data-base'] = String(l.rope.base);
    if (l.kind === 'alibi') Object.assign(attrs, { 'data-heads': String(l.slopes.length), 'data-slope-max': String(Math.max(...l.slopes)), 'data-slope-min': String(Math.min(...l.slopes)) });
    if (l.kind === 'learned') Object.assign(attrs, { 'data-max-len': String(l.maxLen), 'data-offset': String(l.offset) });
    return h('tr', attrs,
      h('td', { style: { textAlign: 'left' } }, h('span', { style: { display: 'inline-block', width: '.9em', height: '.9em', background: x.color, borderRadius: '2px', marginRight: '.3em', verticalAlign: '-.1em' } }), x.id),
      h('td', { style: { textAlign: 'left' } }, el.t(`sc.k.${l.kind}`)),
      h('td', { style: { textAlign: 'left' } }, l.layerType ? h('code', {}, l.layerType) : '–'),
      h('td', {}, String(x.count)),
      h('td', { style: { textAlign: 'left', whiteSpace: 'normal' } }, params(el, l)));
  };
  return h('table', { class: 'pe-table pe-sc-schemes' },
    h('tr', {}, ['sc.s.scheme', 'sc.s.kind', 'sc.s.layerType', 'sc.s.count', 'sc.s.params'].map((k) => h('th', {}, el.t(k)))),
    schemes.map(row));
}

function params(el, l) {
  switch (l.kind) {
    case 'rope': {
      const r = l.rope;
      const f = r.config.scaling?.factor;
      return el.t('sc.p.rope', { base: fmtNum(r.base), type: r.type, pairing: el.t(`sc.${r.pairing}`), rot: r.rotaryDim, hd: r.headDim }) + (f != null ? el.t('sc.p.factor', { f: fmtNum(f) }) : '');
    }
    case 'alibi': {
      const s = Array.from(l.slopes);
      return el.t('sc.p.alibi', { n: s.length, hi: fmt(Math.max(...s), 4), lo: fmt(Math.min(...s), 4) }) + (l.alibiBiasMax != null ? el.t('sc.p.alibiMax', { m: l.alibiBiasMax }) : '');
    }
    case 'learned': return el.t('sc.p.learned', { n: l.maxLen, o: l.offset });
    case 'sinusoidal': return el.t('sc.p.sinusoidal', { d: l.dModel, base: fmtNum(l.base), pairing: el.t(`sc.${l.pairing}`) });
    default: return l.queryScale ? el.t('sc.p.queryScale') : el.t('sc.p.noneParams');
  }
}

/** The chosen RoPE: its fields and its wavelengths per pair against plain RoPE (the spec owns the rope). */
export function drawRope(el, box, rope) {
  const cfg = rope.config;
  const maxLen = cfg.maxPositionEmbeddings ?? null;
  const orig = cfg.scaling?.originalMaxPositionEmbeddings ?? cfg.originalMaxPositionEmbeddings ?? maxLen; // rope.config nests it under scaling
  const at = maxLen ?? undefined;
  const inv = rope.invFreq64(at);
  const plain = el.pe.rope({ headDim: rope.headDim, rotaryDim: rope.rotaryDim, base: rope.base });
  let plainInv;
  try {
    plainInv = plain.invFreq64();
  } finally {
    plain.free();
  }
  const n = inv.length;
  const wl = (v) => (2 * Math.PI) / v;
  const rows = [
    ['sc.f.type', rope.type],
    ['sc.f.headDim', String(rope.headDim)],
    ['sc.f.rotary', `${rope.rotaryDim} / ${rope.headDim}`],
    ['sc.f.base', String(rope.base)],
    ['sc.f.pairing', el.t(`sc.${rope.pairing}`)],
    ['sc.f.pairs', String(rope.nFreq)],
    ['sc.f.context', orig && maxLen && orig !== maxLen ? `${orig} → ${maxLen}` : String(maxLen ?? '–')],
    ['sc.f.attn', fmt(rope.attentionScaling(at), 6)],
    ['sc.f.fastest', fmt(wl(inv[0]), 5)],
    ['sc.f.slowest', fmt(wl(inv[n - 1]), 5)],
  ];
  const series = [{ label: el.t('sc.config.this', { n: maxLen ?? '–' }), values: Array.from(inv, wl), color: PALETTE[1], width: 2.5 }];
  if (rope.type === 'longrope' && orig) {
    series.push({ label: el.t('sc.config.short', { n: orig }), values: Array.from(rope.invFreq64(orig), wl), color: PALETTE[5], width: 1.5 });
  }
  if (plainInv.length === n) series.push({ label: el.t('sc.config.plain'), values: Array.from(plainInv, wl), color: PALETTE[0], width: 1.5, dash: [6, 4] });
  const chartBox = h('div');
  box.replaceChildren(
    h('p', { class: 'pe-good' }, h('strong', {}, el.t('sc.config.ok'))),
    h('div', { class: 'pe-row' },
      h('div', { class: 'pe-scroll' }, h('table', { class: 'pe-table' },
        rows.map(([k, v]) => h('tr', {}, h('th', { style: { textAlign: 'left' } }, el.t(k)), h('td', { 'data-field': k.slice(5) }, v))))),
      chartBox),
    h('details', {}, h('summary', {}, el.t('sc.f.resolved')), h('pre', { class: 'pe-scroll', style: { fontSize: '12px' } }, JSON.stringify(cfg, null, 1))));
  chart(chartBox, { x: Array.from({ length: n }, (_, i) => i), series, logY: true, xLabel: el.t('sc.pair'), yLabel: el.t('sc.view.wavelength'), height: 240,
    label: el.t('sc.config.ok'), ySize: 64, yFormat: (v) => (v == null ? '' : fmt(v, 2)) });
}


/** Whether a config (or its text_config) names a layer count; fromHFConfig needs one. */
export function hasLayerCount(json) {
  const has = (o) => o && typeof o === 'object' && LAYER_COUNT_KEYS.some((k) => o[k] != null);
  return has(json) || has(json?.text_config);
}

/** What makes two layers the same scheme: every field, with a Rope by identity (identical layers share one). */
function layerKey(layer, ropeIds) {
  return JSON.stringify(Object.entries(layer).map(([k, v]) => {
    if (k === 'rope') {
      if (!ropeIds.has(v)) ropeIds.set(v, { index: ropeIds.size, first: -1 });
      return [k, ropeIds.get(v).index];
    }
    return [k, ArrayBuffer.isView(v) ? Array.from(v) : v];
  }));
}

/**
 * The distinct schemes of a spec's layers, in order of first use, with an id (A, B, …), the number of layers,
 * their layer types, and a colour: by kind, distinct RoPEs (Rope identity) in turn.
 * Returns the schemes and schemeOf(layer index).
 */
export function schemesOf(layers) {
  const map = new Map();
  const ropeIds = new Map();
  const perLayer = [];
  for (const layer of layers) {
    const key = layerKey(layer, ropeIds);
    let x = map.get(key);
    if (!x) {
      const k = map.size;
      x = { layer, id: k < 26 ? String.fromCharCode(65 + k) : `#${k + 1}`, count: 0, layerTypes: new Set() };
      if (layer.kind === 'rope') {
        const r = ropeIds.get(layer.rope);
        if (r.first < 0) r.first = map.size;
        x.ropeIndex = map.size;
        x.ropeFirst = r.first;
        x.color = ROPE_COLORS[r.index % ROPE_COLORS.length];
      } else {
        x.color = KIND_COLORS[layer.kind] ?? '#7f8c8d';
      }
      map.set(key, x);
    }
    perLayer.push(x);
    x.count++;
    if (layer.layerType) x.layerTypes.add(layer.layerType);
  }
  // a Rope shared by several layer objects (Gemma 2: one RoPE on sliding and full layers): list all their types
  const schemes = [...map.values()];
  for (const x of schemes) {
    if (x.layer.kind !== 'rope' || x.ropeIndex === x.ropeFirst) continue;
    const first = schemes.find((y) => y.ropeIndex === x.ropeFirst);
    for (const t of x.layerTypes) first.layerTypes.add(t);
  }
  return { schemes, perLayer };
}

/** A number as written in a config (1000000 → 1e6 only when long). */
export function fmtNum(v) {
  const s = String(v);
  return s.length > 7 && Number.isFinite(v) ? v.toExponential().replace('e+', 'e') : s;
}
