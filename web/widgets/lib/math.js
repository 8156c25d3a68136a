// math.js — formulas typeset with KaTeX (npm `katex`; its CSS and fonts are bundled and injected once).
//
//   tex(el, '\\theta_i = b^{-2i/d}')                  // inline, into el (replaces its content)
//   tex(el, 'PE_{(p,2i)} = \\sin(p / b^{2i/d})', { display: true })
//   texNode('x^2', { display: true })                 // a new <span class="pe-math"> holding the formula
//   texRow(['a = b', 'c = d'])                        // display formulas side by side, wrapping on a phone
// \qc{…}, \kc{…} and \relc{…} colour a term as lib/palette.js's query, key and relative-angle roles.
// A formula that does not parse is shown as its source in red (throwOnError: false), never an exception.
// Each is one tree of HTML (no MathML copy), role="img" with its TeX source as its accessible name (and, as
// written, in data-tex).

import katex from 'katex';
import katexCss from 'katex/dist/katex.min.css?inline';
import { addStyle } from './style.js';
import { MACROS } from './palette.js';

// Typeset once per formula: a language switch or a redraw re-renders widgets whose formulas did not change,
// and parsing TeX is most of a widget's render() time. The cache holds markup strings only (no nodes).
const typeset = new Map();
const CACHE_MAX = 2000;

export function tex(el, formula, { display = false } = {}) {
  addStyle('pe-katex', katexCss, { scope: true });
  const key = `${display ? 'D' : 'I'}${formula}`;
  let html = typeset.get(key);
  if (html === undefined) {
    // one tree: KaTeX's default adds a MathML copy of every formula for screen readers (visually hidden, ~28% of
    // a formula's ~170 elements, styled and laid out on every language switch all the same); the formula's
    // source is the accessible name instead (below)
    html = katex.renderToString(formula, { displayMode: display, throwOnError: false, output: 'html', strict: 'ignore', macros: { ...MACROS } });
    if (typeset.size >= CACHE_MAX) typeset.delete(typeset.keys().next().value);
    typeset.set(key, html);
  }
  el.innerHTML = html;
  el.classList.add('pe-math');
  el.setAttribute('translate', 'no');
  el.dataset.tex = formula; // the source as written (tests read it; KaTeX kept it only in the MathML copy)
  el.setAttribute('role', 'img');
  el.setAttribute('aria-label', formula.replace(/\\(?:qc|kc|relc)\b/g, '').replace(/\s+/g, ' ').trim());
  return el;
}

export function texNode(formula, options = {}) {
  const span = document.createElement(options.display ? 'div' : 'span');
  return tex(span, formula, options);
}

export function texRow(formulas) {
  const row = document.createElement('div');
  row.className = 'pe-math-row';
  for (const f of formulas) row.append(texNode(f, { display: true }));
  return row;
}
