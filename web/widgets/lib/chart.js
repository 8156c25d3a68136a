// chart.js — line charts through uPlot (npm `uplot`, its CSS injected once).
//
//   chart(container, {
//     x: Float64Array | number[],                      // shared x values, increasing
//     series: [{ label: 'float32', values: [...], color: '#c33', width: 2, dash: [4, 3], points: false }],
//     xLabel: 'position', yLabel: 'error (rad)',       // translated strings
//     logX: false, logY: false,                        // log10 axes (values must be > 0; others are dropped)
//     height: 260, yRange: [lo, hi] (optional), xRange: [lo, hi] (optional), xSplits: [0, 1, 2] (x ticks, optional),
//     title: '…' (optional, above the plot), label: 'aria label',
//     reuse: false,                                    // true: when only series values changed, update in place
//   })  -> the uPlot instance (container._peChart). Calling again on the same container replaces the chart.
// The width follows the container (ResizeObserver). Legend cells are real DOM text (series labels).

import uPlot from 'uplot';
import uplotCss from 'uplot/dist/uPlot.min.css?inline';
import { addStyle } from './style.js';

export const PALETTE = ['#2f6db5', '#c0392b', '#27864a', '#8e44ad', '#d68910', '#16a2b8', '#7f8c8d', '#e84393', '#34495e'];

/** Tick label on a log axis: 1e-5, 0.001, 0.1, 10, 1e4 (powers of ten only; others blank). */
function logTick(v) {
  if (v == null || !(v > 0)) return '';
  const e = Math.round(Math.log10(v));
  if (Math.abs(Math.log10(v) - e) > 1e-6) return '';
  return e >= -3 && e <= 3 ? String(Number(v.toPrecision(1))) : `1e${e}`.replace('-', '−');
}

let measureCtx = null;
/** Width in px of the widest tick label (11px system-ui, the axis font), so the y label beside them is never cut. */
function tickWidth(values) {
  if (!values?.length) return 0;
  measureCtx ??= document.createElement('canvas').getContext('2d');
  measureCtx.font = '11px system-ui, sans-serif';
  return Math.ceil(Math.max(...values.map((v) => measureCtx.measureText(String(v ?? '')).width)));
}

export function chart(container, o) {
  addStyle('pe-uplot', uplotCss, { scope: true });
  const old = container._peChart;
  // o.reuse: a redraw that changes only the series' values (the same labels, options, x) updates the chart in
  // place (uPlot setData): no DOM rebuilt, no layout of an empty container, so a figure redrawn during a run
  // stays cheap. Opt-in: options given as functions (yFormat) are not compared.
  const key = o.reuse ? JSON.stringify({ ...o, series: o.series.map((s) => ({ ...s, values: undefined })) }) : null;
  if (old && key !== null && old.key === key) {
    const keepV = (v) => (o.logY ? v > 0 && Number.isFinite(v) : Number.isFinite(v));
    old.u.setData([Array.from(o.x), ...o.series.map((s) => Array.from(s.values, (v) => (keepV(v) ? v : null)))]);
    if (o.label) container.setAttribute('aria-label', o.label);
    return old.u;
  }
  if (old) {
    old.u.destroy();
    old.ro?.disconnect();
  }
  container.classList.add('pe-chart');
  container.replaceChildren();
  container.setAttribute('role', 'figure');
  if (o.label) container.setAttribute('aria-label', o.label);
  const keep = (v) => (o.logY ? v > 0 && Number.isFinite(v) : Number.isFinite(v));
  const data = [Array.from(o.x), ...o.series.map((s) => Array.from(s.values, (v) => (keep(v) ? v : null)))];
  const width = Math.max(200, container.clientWidth || 600);
  const axis = { stroke: '#4f5963', grid: { stroke: '#eceff2' }, ticks: { stroke: '#d6dbe0' }, font: '11px system-ui, sans-serif', labelFont: '12px system-ui, sans-serif' };
  const opts = {
    width,
    height: o.height ?? 260,
    title: o.title,
    scales: {
      x: { time: false, distr: o.logX ? 3 : 1, ...(o.xRange ? { range: o.xRange } : {}) },
      y: { distr: o.logY ? 3 : 1, ...(o.yRange ? { range: o.yRange } : {}) },
    },
    axes: [
      { ...axis, label: o.xLabel ?? '', size: 36, labelSize: 18, ...(o.logX ? { values: (u, vals) => vals.map(logTick) } : {}),
        ...(o.xSplits ? { splits: () => o.xSplits } : {}) },
      { ...axis, label: o.yLabel ?? '', size: (u, values) => Math.max(o.ySize ?? 58, tickWidth(values) + 30), labelSize: 18,
        values: o.yFormat ? (u, vals) => vals.map(o.yFormat) : o.logY ? (u, vals) => vals.map(logTick) : undefined },
    ],
    series: [
      { label: o.xLabel ?? 'x', value: (u, v) => (v == null ? '–' : String(Number(v.toPrecision(6)))) },
      ...o.series.map((s, i) => ({
        label: s.label,
        stroke: s.color ?? PALETTE[i % PALETTE.length],
        width: s.width ?? 2,
        dash: s.dash,
        points: { show: s.points ?? false },
        spanGaps: s.spanGaps ?? false,
        value: (u, v) => (v == null ? '–' : Number(v.toPrecision(4)).toString()),
      })),
    ],
    // a dashed series has a dashed legend marker, so the legend says what a dashed line is
    legend: { show: o.legend !== false, markers: { dash: (u, i) => (u.series[i].dash?.length ? 'dashed' : 'solid') } },
    cursor: { drag: { x: false, y: false } },
  };
  const u = new uPlot(opts, data, container);
  let ro = null;
  if (typeof ResizeObserver === 'function') {
    let lastW = width;
    ro = new ResizeObserver(() => {
      // 0: not rendered (a widget held during a language switch, lib/offscreen.js): nothing to redraw for
      if (!container.clientWidth) return;
      const w = Math.max(200, container.clientWidth);
      if (Math.abs(w - lastW) > 2) {
        lastW = w;
        u.setSize({ width: w, height: opts.height });
      }
    });
    ro.observe(container);
  }
  container._peChart = { u, ro, key };
  return u;
}
