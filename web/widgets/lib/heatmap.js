// heatmap.js — a row-major (rows, cols) array drawn as a canvas heatmap, with axis labels, a colour legend
// and a hover readout. The canvas backing store is sized to its CSS box times devicePixelRatio and the cells
// are scaled without smoothing, so small tables stay crisp and large ones are drawn one cell per pixel or finer.
//
//   const hm = heatmap(container, values, rows, cols, {
//     scheme: 'diverging',        // 'diverging' (blue–white–red over [−range, range]), 'sequential' (white→blue over
//                                 // [0, range]) or 'grey' (white→black over [0, range])
//     range: 1,                   // default: max |value| (diverging) or max value (sequential)
//     xLabel: 'position', yLabel: 'dimension',   // already translated strings
//     xTicks: [first, last],      // shown at the ends; default 0 and width−1
//     xNames: ['猫', '吃', '鱼'], yNames: [...],   // one label per column / row (small tables), instead of ticks
//     height: 220,                // CSS px; default: cols/rows aspect clamped to [120, 360]
//     caption: '…', legend: true,
//     readout: (r, c, v) => 'text',   // hover text; default t('pe.hover')
//     transpose: false,           // draw values[r * cols + c] at x = r, y = c
//     label: 'aria label',
//     xColor: ROLE.k, yColor: ROLE.q,   // axis label and name colours (lib/palette.js roles), optional
//     onCell: (r, c, hm) => {},   // the pointer or the keyboard is on cell (r, c) of figure hm; (-1, -1) when it leaves.
//                                 // With onCell the canvas is focusable: arrows move a cell, Home/End, Escape leaves
//   });
//   hm.canvas                     // the <canvas>
//   hm.mark(r, c)                 // outlines cell (r, c) with its row (yColor) and column (xColor) drawn in,
//                                 // and highlights its row and column names; mark(-1, -1) clears
// Calling heatmap() again on the same container redraws into the same figure. −Infinity (masked) cells are grey.

import { h } from './dom.js';
import { t } from './i18n.js';

const NEG = [33, 102, 172];
const MID = [247, 247, 247];
const POS = [178, 24, 43];
const SEQ = [[255, 255, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
const MASK = [205, 208, 212];
// white -> near black: attention maps whose query and key are marked in the palette's blue and red (the lab)
const GREY = [[255, 255, 255], [214, 216, 219], [150, 154, 160], [84, 89, 96], [24, 27, 31]];

/** RGB of v in a scheme. */
export function colour(v, range, scheme = 'diverging') {
  if (v === -Infinity || Number.isNaN(v)) return MASK;
  if (scheme === 'sequential' || scheme === 'grey') {
    const stops = scheme === 'grey' ? GREY : SEQ;
    const x = Math.max(0, Math.min(1, range > 0 ? v / range : 0)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(x));
    const f = x - i;
    return [0, 1, 2].map((k) => stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f);
  }
  const x = Math.max(-1, Math.min(1, range > 0 ? v / range : 0));
  const end = x < 0 ? NEG : POS;
  const a = Math.abs(x);
  return [0, 1, 2].map((k) => MID[k] + (end[k] - MID[k]) * a);
}

/** CSS gradient of a scheme (legend bars). */
export function gradientCss(scheme = 'diverging') {
  if (scheme === 'sequential' || scheme === 'grey') return `linear-gradient(to right, ${(scheme === 'grey' ? GREY : SEQ).map((c) => `rgb(${c.join(' ')})`).join(', ')})`;
  return `linear-gradient(to right, rgb(${NEG.join(' ')}), rgb(${MID.join(' ')}), rgb(${POS.join(' ')}))`;
}

const fmtNum = (v) => {
  if (v === -Infinity) return '−∞';
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return (a !== 0 && (a < 1e-3 || a >= 1e5) ? v.toExponential(3) : String(Number(v.toPrecision(4)))).replace('-', '−');
};

/** Draws the heatmap; see the file comment. Returns { figure, canvas }. */
export function heatmap(container, values, rows, cols, opts = {}) {
  const width = opts.transpose ? rows : cols;
  const height = opts.transpose ? cols : rows;
  const at = opts.transpose ? (x, y) => values[x * cols + y] : (x, y) => values[y * cols + x];
  const scheme = opts.scheme ?? 'diverging';
  let range = opts.range;
  if (!(range > 0)) {
    range = 0;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (Number.isFinite(v)) range = Math.max(range, scheme === 'diverging' ? Math.abs(v) : v);
    }
    if (!(range > 0)) range = 1;
  }

  let st = container._peHeatmap;
  if (!st || !st.figure.isConnected || st.figure.parentNode !== container) {
    const canvas = h('canvas', { role: 'img' });
    const readout = h('div', { class: 'pe-hm-readout', 'aria-live': 'polite' }, '\u00a0');
    const ylab = h('span', { class: 'pe-hm-ylabel' });
    const yNames = h('div', { class: 'pe-hm-ynames' });
    const xTicks = h('div', { class: 'pe-hm-x' });
    const xlab = h('div', { class: 'pe-hm-xlabel' });
    const legend = h('div', { class: 'pe-legend' });
    const caption = h('figcaption');
    // the x ticks and names sit under the canvas in its own column, so they line up with its cells
    const figure = h('figure', { class: 'pe-hm' }, caption,
      h('div', { class: 'pe-hm-plot' }, ylab, yNames, h('div', { class: 'pe-hm-canvas-box' }, canvas, xTicks, xlab)),
      h('div', { class: 'pe-hm-foot' }, legend, readout));
    container.replaceChildren(figure);
    st = container._peHeatmap = { figure, canvas, readout, ylab, yNames, xTicks, xlab, legend, caption, ro: null };
    canvas.addEventListener('mousemove', (e) => st.hover?.(e));
    canvas.addEventListener('mouseleave', () => {
      st.readout.textContent = '\u00a0';
      if (document.activeElement !== canvas) st.leave?.();
    });
    canvas.addEventListener('keydown', (e) => st.key?.(e));
    canvas.addEventListener('focus', () => st.focusCell?.());
    canvas.addEventListener('blur', () => st.leave?.());
    if (typeof ResizeObserver === 'function') {
      let lastW = 0;
      st.ro = new ResizeObserver(() => {
        const w = canvas.clientWidth;
        if (w && Math.abs(w - lastW) > 1) {
          lastW = w;
          st.paint?.();
        }
      });
      st.ro.observe(canvas);
    }
  }
  const { canvas, readout } = st;
  canvas.setAttribute('aria-label', opts.label ?? opts.caption ?? 'heatmap');
  if (opts.onCell) canvas.tabIndex = 0;
  else canvas.removeAttribute('tabindex');
  st.ylab.style.color = opts.yColor ?? '';
  st.xlab.style.color = opts.xColor ?? '';
  st.yNames.style.color = opts.yColor ?? '';
  st.xTicks.style.color = opts.xNames ? opts.xColor ?? '' : '';
  st.ylab.textContent = opts.yLabel ?? '';
  st.ylab.hidden = !opts.yLabel;
  if (opts.xNames) {
    st.xTicks.className = 'pe-hm-x pe-hm-xnames';
    st.xTicks.style.gridTemplateColumns = `repeat(${opts.xNames.length}, minmax(0, 1fr))`;
    st.xTicks.replaceChildren(...opts.xNames.map((n) => h('span', {}, String(n))));
  } else {
    const xt = opts.xTicks ?? [0, width - 1];
    st.xTicks.className = 'pe-hm-x';
    st.xTicks.style.gridTemplateColumns = '';
    st.xTicks.replaceChildren(h('span', {}, String(xt[0])), h('span', {}, String(xt[xt.length - 1])));
  }
  st.xlab.textContent = opts.xLabel ?? '';
  st.xlab.hidden = !opts.xLabel;
  st.yNames.style.gridTemplateRows = opts.yNames ? `repeat(${opts.yNames.length}, minmax(0, 1fr))` : '';
  st.yNames.replaceChildren(...(opts.yNames ?? []).map((n) => h('span', {}, String(n))));
  st.yNames.hidden = !opts.yNames;
  st.figure.classList.toggle('pe-hm-named', !!(opts.xNames || opts.yNames));
  st.caption.textContent = opts.caption ?? '';
  st.caption.hidden = !opts.caption;
  if (opts.legend !== false) {
    const lo = scheme === 'diverging' ? -range : 0;
    st.legend.replaceChildren(h('span', {}, fmtNum(lo)), h('span', { class: 'pe-bar', style: { background: gradientCss(scheme) } }),
      h('span', {}, fmtNum(range)));
    st.legend.hidden = false;
  } else st.legend.hidden = true;

  // cell image, one pixel per cell
  const cells = document.createElement('canvas');
  cells.width = width;
  cells.height = height;
  const cctx = cells.getContext('2d');
  const img = cctx.createImageData(width, height);
  const px = img.data;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const c = colour(at(x, y), range, scheme);
      const o = (y * width + x) * 4;
      px[o] = c[0];
      px[o + 1] = c[1];
      px[o + 2] = c[2];
      px[o + 3] = 255;
    }
  }
  cctx.putImageData(img, 0, 0);

  const cssHeight = opts.height ?? Math.max(160, Math.min(360, Math.round(((canvas.clientWidth || 320) * height) / width)));
  canvas.style.height = `${cssHeight}px`;
  st.yNames.style.height = `${cssHeight}px`;
  st.ylab.style.maxHeight = `${cssHeight}px`;
  st.paint = () => {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round((canvas.clientWidth || 320) * dpr));
    const hgt = Math.max(1, Math.round(cssHeight * dpr));
    if (canvas.width !== w) canvas.width = w;
    if (canvas.height !== hgt) canvas.height = hgt;
    const ctx = canvas.getContext('2d');
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, w, hgt);
    ctx.drawImage(cells, 0, 0, width, height, 0, 0, w, hgt);
    fitNames(st, (canvas.clientWidth || 320) / width, cssHeight / height);
    const m = st.marked;
    if (m && m.y >= 0 && m.x >= 0 && m.y < height && m.x < width) {
      // the cell's row up to it (the query, yColor) and its column down to it (the key, xColor), then the cell
      const cw = w / width, ch = hgt / height, lw = Math.max(1, Math.round(1.5 * dpr));
      ctx.globalAlpha = 0.9;
      ctx.fillStyle = opts.yColor ?? '#1d232a';
      ctx.fillRect(0, (m.y + 0.5) * ch - lw / 2, m.x * cw, lw);
      ctx.fillStyle = opts.xColor ?? '#1d232a';
      ctx.fillRect((m.x + 0.5) * cw - lw / 2, 0, lw, m.y * ch);
      ctx.globalAlpha = 1;
      ctx.lineWidth = lw;
      ctx.strokeStyle = '#1d232a';
      ctx.strokeRect(m.x * cw + lw / 2, m.y * ch + lw / 2, Math.max(lw, cw - lw), Math.max(lw, ch - lw));
    }
  };
  const names = (box, i, cls, colour) => {
    for (const c of box.querySelectorAll(`.${cls}`)) {
      c.classList.remove(cls);
      c.style.background = '';
    }
    const el = i >= 0 ? box.children[i] : null;
    if (el) {
      el.classList.add(cls);
      el.style.background = colour ?? '#1d232a';
    }
  };
  // mark in the figure's own coordinates: r is the row of values (y unless transposed)
  st.mark = (r, c) => {
    const [y, x] = opts.transpose ? [c, r] : [r, c];
    st.marked = r >= 0 && c >= 0 ? { x, y } : null;
    names(st.yNames, st.marked ? y : -1, 'pe-hm-on-y', opts.yColor);
    names(st.xTicks, st.marked && opts.xNames ? x : -1, 'pe-hm-on-x', opts.xColor);
    st.figure.dataset.mark = st.marked ? `${r},${c}` : '';
    st.paint();
  };
  st.paint();
  const show = (x, y) => {
    const v = at(x, y);
    readout.textContent = opts.readout ? opts.readout(y, x, v) : t('pe.hover', { r: y, c: x, v: fmtNum(v) }, opts.lang);
    const [r, c] = opts.transpose ? [x, y] : [y, x];
    st.cursor = { x, y };
    if (opts.onCell) opts.onCell(r, c, st);
  };
  st.hover = (e) => {
    const r = canvas.getBoundingClientRect();
    const x = Math.min(width - 1, Math.max(0, Math.floor(((e.clientX - r.left) / r.width) * width)));
    const y = Math.min(height - 1, Math.max(0, Math.floor(((e.clientY - r.top) / r.height) * height)));
    if (st.cursor?.x === x && st.cursor?.y === y && opts.onCell) return;
    show(x, y);
  };
  st.leave = () => {
    st.cursor = null;
    if (opts.onCell) opts.onCell(-1, -1, st);
  };
  st.focusCell = () => {
    if (!opts.onCell) return;
    const c = st.cursor ?? { x: 0, y: height - 1 };
    show(c.x, c.y);
  };
  st.key = (e) => {
    if (!opts.onCell) return;
    if (e.key === 'Escape') {
      st.leave();
      readout.textContent = '\u00a0';
      return;
    }
    const c = st.cursor ?? { x: 0, y: height - 1 };
    const step = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] }[e.key];
    let { x, y } = c;
    if (step) [x, y] = [x + step[0], y + step[1]];
    else if (e.key === 'Home') x = 0;
    else if (e.key === 'End') x = width - 1;
    else return;
    e.preventDefault();
    show(Math.min(width - 1, Math.max(0, x)), Math.min(height - 1, Math.max(0, y)));
  };
  return st;
}

/**
 * Names as large as their cells allow (at most the body size, at least 7 px): where cells are smaller than
 * that, every k-th name is shown, so names never overlap.
 */
function fitNames(st, cellW, cellH) {
  const fit = (box, cell) => {
    if (box.hidden || !box.children.length) return;
    const font = Math.max(7, Math.min(12.8, cell * 0.9));
    const every = Math.max(1, Math.ceil(font / Math.max(cell, 1e-3) - 0.05));
    box.style.fontSize = `${font}px`;
    [...box.children].forEach((c, i) => { c.style.visibility = i % every === 0 || c.matches('.pe-hm-on-x, .pe-hm-on-y') ? '' : 'hidden'; });
  };
  if (st.xTicks.classList.contains('pe-hm-xnames')) fit(st.xTicks, cellW);
  fit(st.yNames, cellH);
}
