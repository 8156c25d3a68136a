// palette.js — the colours that tie formula terms to figures (the Distill / Jay Alammar habit): a query is the
// same blue and a key the same red in every formula, plot, heatmap axis and token strip of every widget, and
// the relative angle (m − n)θ the same purple.
//
//   import { ROLE, qk } from './palette.js';
//   svg('line', { stroke: ROLE.q })                        // a figure's query
//   texRow([`${qk.q('\\tilde q_m')} \\cdot ${qk.k('\\tilde k_n')}`])   // the same query in a formula
//   tex(el, '\\qc{\\tilde q_m}\\cdot\\kc{\\tilde k_n}')      // or the KaTeX macros (lib/math.js passes MACROS)
//   h('span', { class: 'pe-role-q' }, 'q')                 // or the CSS classes (lib/style.js)
//
// Imports nothing: any widget, and lib/math.js and lib/style.js, take the colours from here.

/** Role -> colour. q: queries and query positions; k: keys and key positions; rel: the relative angle. */
export const ROLE = Object.freeze({
  q: '#2f6db5',
  k: '#c0392b',
  rel: '#8e44ad',
});

/** Light tints of the same roles, for highlighted backgrounds (token strip, table cells). */
export const ROLE_TINT = Object.freeze({
  q: '#dbe7f6',
  k: '#f6dcd9',
  rel: '#ece0f3',
});

/** KaTeX macros: \qc{…}, \kc{…}, \relc{…} colour their argument by role. (In a macro body # followed by a digit
 * is a parameter, so the colour's own # is written ##.) */
export const MACROS = Object.freeze({
  '\\qc': `\\textcolor{#${ROLE.q}}{#1}`,
  '\\kc': `\\textcolor{#${ROLE.k}}{#1}`,
  '\\relc': `\\textcolor{#${ROLE.rel}}{#1}`,
});

/** TeX wrappers, for formulas built as strings: qk.q('q_m') -> '\\textcolor{#2f6db5}{q_m}'. */
export const qk = Object.freeze({
  q: (x) => `\\textcolor{${ROLE.q}}{${x}}`,
  k: (x) => `\\textcolor{${ROLE.k}}{${x}}`,
  rel: (x) => `\\textcolor{${ROLE.rel}}{${x}}`,
});

/** CSS for the role classes (.pe-role-q …, and .pe-role-q-bg … for tinted backgrounds), scoped by the caller. */
export function roleCss(scope = '.pe-widget') {
  const one = Object.keys(ROLE).map((r) => `${scope} .pe-role-${r} { color: ${ROLE[r]}; }\n${scope} .pe-role-${r}-bg { background: ${ROLE_TINT[r]}; box-shadow: inset 0 0 0 2px ${ROLE[r]}; }`);
  // a token that is both the query and the key (the diagonal): half of each
  one.push(`${scope} .pe-role-q-bg.pe-role-k-bg { background: linear-gradient(90deg, ${ROLE_TINT.q} 50%, ${ROLE_TINT.k} 50%); box-shadow: inset 2px 0 0 ${ROLE.q}, inset -2px 0 0 ${ROLE.k}, inset 0 2px 0 ${ROLE.rel}, inset 0 -2px 0 ${ROLE.rel}; }`);
  return one.join('\n');
}
