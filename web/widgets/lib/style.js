// style.js — the widgets' CSS, injected once into the page's <head> (light DOM widgets: every rule is scoped
// under .pe-widget or a .pe-* class, so a host page's styles and ours leave each other alone).
//
//   ensureStyles()              the base sheet (base.js calls it when a widget connects)
//   addStyle('pe-katex', css, { scope: true })   another sheet once per id; scope: every rule is rewritten to
//                               apply inside .pe-widget only (KaTeX's and uPlot's sheets, which style .katex
//                               and .u-legend anywhere on the page), and KaTeX's font families are renamed
//                               pe-KaTeX_* so a host page's own KaTeX keeps its fonts

import { roleCss } from './palette.js';

const added = new Set();

/** Splits a selector list at its top-level commas (not those inside :is(…), :not(…), […]). */
function splitSelectors(list) {
  const out = [];
  let depth = 0, start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(list.slice(start).trim());
  return out;
}

/** The sheet's rules, each style rule's selectors prefixed with `.pe-widget ` (:root / html / body become it). */
export function scopeCss(css, scope = '.pe-widget') {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css.replace(/(font-family:\s*)KaTeX_/g, '$1pe-KaTeX_'));
  const out = [];
  const walk = (rules) => {
    for (const r of rules) {
      if (r instanceof CSSStyleRule) {
        const sel = splitSelectors(r.selectorText).map((x) => (/^(:root|html|body)\b/.test(x) ? x.replace(/^(:root|html|body)/, scope) : `${scope} ${x}`)).join(', ');
        out.push(sel + r.cssText.slice(r.selectorText.length));
      } else if (r instanceof CSSMediaRule) {
        out.push(`@media ${r.conditionText} {`);
        walk(r.cssRules);
        out.push('}');
      } else {
        out.push(r.cssText);
      }
    }
  };
  walk(sheet.cssRules);
  return out.join('\n');
}

/** Adds a <style data-pe-style="id"> to <head> once per id. */
export function addStyle(id, css, { scope = false } = {}) {
  if (added.has(id) || typeof document === 'undefined') return;
  added.add(id);
  if (document.head.querySelector(`style[data-pe-style="${id}"]`)) return;
  const s = document.createElement('style');
  s.dataset.peStyle = id;
  s.textContent = scope && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype ? scopeCss(css) : css;
  document.head.append(s);
}

export function ensureStyles() {
  addStyle('pe-base', `${BASE}\n${roleCss()}`);
}

const BASE = `
.pe-widget { display: block; box-sizing: border-box; margin: 1rem 0; padding: .9rem 1rem 1rem; border: 1px solid #d6dbe0;
  border-radius: 10px; background: #fff; color: #1d232a; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "PingFang SC",
  "Noto Sans CJK SC", "Microsoft YaHei", sans-serif; max-width: 100%; overflow-wrap: anywhere;
  /* each widget is a paint layer of its own whose layout and paint stay inside it: a redraw (a map, a chart, a
     relabel) repaints that widget from the browser's cache of the others, not the 11,000-element page */
  contain: layout style paint; }
.pe-widget *, .pe-widget *::before, .pe-widget *::after { box-sizing: border-box; }
/* a host page's element rules (p { color }, h3 { letter-spacing }, label { text-transform }, table { width: 100% })
   do not reach inside: what the widget does not set itself comes from the widget, not the page */
.pe-widget :is(p, h3, h4, label, span, div, figure, figcaption, table, thead, tbody, tr, th, td, ul, li, output, strong) {
  color: inherit; letter-spacing: normal; text-transform: none; text-shadow: none; text-align: inherit; font-family: inherit; }
.pe-widget :is(h3, h4) { font-weight: 600; line-height: 1.3; padding: 0; border: 0; background: none; }
.pe-widget label { font-weight: normal; margin: 0; padding: 0; }
.pe-widget table { width: auto; margin: 0; background: none; }
.pe-widget :is(th, td) { background: none; }
.pe-widget h3 { font-size: 1.05rem; margin: 0 0 .4rem; }
.pe-widget h4 { font-size: .95rem; margin: .9rem 0 .3rem; }
.pe-widget p { margin: .35rem 0 .6rem; }
/* A widget's own <section>s (pe-rope-rotation, pe-scaling, pe-pitfalls) had their spacing from the host page: the
   playground's \`section { margin }\` and \`section > p { max-width }\` reached inside, so they looked different on
   any other page, and scripts/widget-heights.mjs (a bare page) measured them 20–400 px shorter than the playground
   shows them. The widget now sets what the playground gave it, itself. */
.pe-widget section { display: block; margin: 2.2rem 0 0; padding: 0; border: 0; }
.pe-widget section > p { max-width: 52rem; }
.pe-widget .pe-note { color: #4f5963; font-size: .88rem; }
.pe-widget .pe-loading { color: #6b7580; font-size: .9rem; }
.pe-widget .pe-error { color: #a1261b; background: #fdecea; border: 1px solid #f3c2bc; border-radius: 6px;
  padding: .4rem .6rem; font-size: .9rem; margin: 0 0 .6rem; white-space: pre-wrap; }
.pe-widget .pe-controls { display: flex; flex-wrap: wrap; gap: .5rem 1.2rem; align-items: flex-end; margin: .3rem 0 .7rem; }
.pe-widget .pe-control { display: flex; flex-direction: column; gap: .15rem; font-size: .82rem; color: #4f5963; min-width: 8rem; }
.pe-widget .pe-control .pe-control-head { display: flex; justify-content: space-between; gap: .6rem; }
.pe-widget .pe-control output { color: #1d232a; font-variant-numeric: tabular-nums; }
.pe-widget .pe-control input[type=range] { width: 11rem; max-width: 100%; accent-color: #2f6db5; }
.pe-widget .pe-control select, .pe-widget .pe-control input[type=number], .pe-widget .pe-control input[type=text] {
  font: inherit; font-size: .92rem; padding: .2rem .35rem; border: 1px solid #b9c1c9; border-radius: 5px; background: #fff; color: #1d232a; }
.pe-widget .pe-control textarea { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; width: 100%;
  min-height: 8rem; padding: .4rem; border: 1px solid #b9c1c9; border-radius: 5px; }
.pe-widget .pe-check { flex-direction: row; align-items: center; gap: .4rem; min-width: 0; }
.pe-widget button.pe-button { font: inherit; font-size: .9rem; padding: .3rem .8rem; border: 1px solid #2f6db5; border-radius: 6px;
  background: #2f6db5; color: #fff; cursor: pointer; }
.pe-widget button.pe-button.pe-secondary { background: #fff; color: #2f6db5; }
.pe-widget button.pe-button:disabled { opacity: .5; cursor: default; }
.pe-widget :focus-visible { outline: 2px solid #e08a00; outline-offset: 2px; }
/* inside an SVG an outline is drawn in viewBox units (a 2-unit ring on a 3.5-unit plane covers it): SVG controls
   show focus with a ring of their own stroke instead */
.pe-widget svg :focus-visible { outline: none; stroke: #e08a00; stroke-width: 3px; vector-effect: non-scaling-stroke; }
.pe-widget .pe-row { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.pe-widget .pe-row > * { flex: 1 1 260px; min-width: 0; }
.pe-widget .pe-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); gap: .6rem; }
/* the ALiBi bias tiles: 4 a row (2 on a phone), so 8 heads make two even rows, captions on one line */
.pe-widget .pe-alibi-tiles { grid-template-columns: repeat(4, minmax(0, 1fr)); }
.pe-widget .pe-alibi-tiles figcaption { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.pe-widget figure { margin: 0; min-width: 0; }
.pe-widget figcaption { font-size: .82rem; color: #4f5963; margin-top: .2rem; }
.pe-widget .pe-hm { position: relative; }
.pe-widget .pe-hm-plot { display: flex; align-items: stretch; gap: .25rem; }
.pe-widget .pe-hm-ylabel { writing-mode: vertical-rl; transform: rotate(180deg); font-size: .75rem; color: #4f5963; text-align: center;
  text-orientation: sideways; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.pe-widget .pe-hm-plot { align-items: center; }
.pe-widget .pe-hm-canvas-box { flex: 1; min-width: 0; position: relative; }
.pe-widget .pe-hm canvas { display: block; width: 100%; border: 1px solid #d6dbe0; background: #fff; cursor: crosshair; }
.pe-widget .pe-hm-x { display: flex; justify-content: space-between; font-size: .72rem; color: #4f5963; line-height: 1.3; }
.pe-widget .pe-hm-xlabel { font-size: .75rem; color: #4f5963; text-align: center; line-height: 1.3; }
.pe-widget .pe-hm-xlabel[hidden] { display: none; }
.pe-widget .pe-hm-ynames { display: grid; align-self: flex-start; font-size: .8rem; color: #1d232a; text-align: right; padding-right: .15rem;
  line-height: 1; align-items: center; }
.pe-widget .pe-hm-ynames[hidden] { display: none; }
.pe-widget .pe-hm-xnames { display: grid; font-size: .8rem; color: #1d232a; text-align: center; }
.pe-widget .pe-hm-xnames > span, .pe-widget .pe-hm-ynames > span { overflow: hidden; white-space: nowrap; }
.pe-widget .pe-hm-named .pe-hm-ynames { min-width: 1.2em; }
.pe-widget .pe-hm-ynames > .pe-hm-on-y, .pe-widget .pe-hm-xnames > .pe-hm-on-x { font-weight: 700; color: #fff; border-radius: 2px; }
.pe-widget .pe-hm-foot { display: flex; flex-wrap: wrap; gap: .2rem 1rem; align-items: center; min-height: 1.3em; margin-top: .1rem; }
.pe-widget .pe-hm-readout { font-size: .75rem; color: #1d232a; font-variant-numeric: tabular-nums; }
.pe-widget .pe-hm figcaption { margin: 0 0 .2rem; }
.pe-widget .pe-legend { display: inline-flex; align-items: center; gap: .35rem; font-size: .72rem; color: #4f5963; }
.pe-widget .pe-legend .pe-bar { display: inline-block; width: 6rem; height: .6rem; border: 1px solid #d6dbe0; }
.pe-widget table.pe-table { border-collapse: collapse; font-size: .82rem; font-variant-numeric: tabular-nums; }
.pe-widget table.pe-table th, .pe-widget table.pe-table td { border: 1px solid #dde2e6; padding: .15rem .45rem; text-align: right; overflow-wrap: normal; }
.pe-widget table.pe-table th { background: #f3f5f7; font-weight: 600; }
.pe-widget table.pe-al-table td.pe-al-same { background: #fdebd0; color: #9a4b00; font-weight: 600; }
.pe-widget table.pe-al-table th.pe-al-sub { text-align: left; font-weight: 500; background: #fff; }
.pe-widget .pe-scroll { overflow-x: auto; max-width: 100%; }
/* more to scroll to: the side where it is fades out (lib/overflow.js sets data-overflow) */
.pe-widget [data-overflow="right"] { -webkit-mask-image: linear-gradient(to right, #000 calc(100% - 2.5rem), transparent);
  mask-image: linear-gradient(to right, #000 calc(100% - 2.5rem), transparent); }
.pe-widget [data-overflow="left"] { -webkit-mask-image: linear-gradient(to left, #000 calc(100% - 2.5rem), transparent);
  mask-image: linear-gradient(to left, #000 calc(100% - 2.5rem), transparent); }
.pe-widget [data-overflow="both"] { -webkit-mask-image: linear-gradient(to right, transparent, #000 2.5rem, #000 calc(100% - 2.5rem), transparent);
  mask-image: linear-gradient(to right, transparent, #000 2.5rem, #000 calc(100% - 2.5rem), transparent); }
.pe-widget .pe-big { font-size: 1.25rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.pe-widget .pe-good { color: #17703a; }
.pe-widget .pe-bad { color: #a1261b; }
.pe-widget .pe-math { overflow-x: auto; overflow-y: hidden; max-width: 100%; }
.pe-widget .pe-math-row { display: flex; flex-wrap: wrap; justify-content: center; gap: 0 2.2rem; }
.pe-widget .pe-math-row .katex-display { margin: .5em 0; }
.pe-widget table.pe-table td { white-space: nowrap; }
.pe-widget .pe-progress { width: 100%; max-width: 24rem; height: .8rem; }
.pe-widget .pe-chart { width: 100%; min-width: 0; }
.pe-widget .pe-chart .u-legend { font-size: .78rem; }
.pe-widget code, .pe-widget .pe-term { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em; }
.pe-widget .pe-clocks { display: flex; flex-wrap: wrap; gap: .4rem .9rem; }
.pe-widget .pe-clock { text-align: center; width: 104px; }
.pe-widget .pe-clock figcaption { font-size: .72rem; line-height: 1.3; }
.pe-widget .pe-verdict { margin: .6rem 0; }
.pe-widget .pe-speedbar { display: block; width: 100%; height: .7rem; margin: .1rem 0 .15rem; }
@media (max-width: 560px) {
  .pe-widget { padding: .7rem .6rem .8rem; font-size: 14px; }
  .pe-widget .pe-control input[type=range] { width: 100%; }
  .pe-widget .pe-control { min-width: 0; flex: 1 1 100%; }
  .pe-widget .pe-row > * { flex-basis: 100%; }
  .pe-widget table.pe-table { font-size: .74rem; }
  .pe-widget .pe-alibi-tiles { grid-template-columns: repeat(2, minmax(0, 1fr)); }
  .pe-widget table.pe-table th, .pe-widget table.pe-table td { padding: .12rem .3rem; }
}
`;
