// controls.js — labelled, keyboard-usable controls bound to a widget's state.
//
// Every control takes the widget (a PeElement) and { key, label, … }: `key` names the state entry it reads and
// writes (this.state[key]); `label` is an i18n key (translated with the widget's language; the visible label
// is also the control's accessible name). On change a control calls el.setState({ [key]: value }), which
// writes the URL where enabled and redraws (draw()); pass onChange(value) to do something else instead.
// Each control element carries data-key="<key>" (focus survives a language switch; tests find it by it).
//
//   controls(range(el, { key: 'length', label: 'sin.length', min: 8, max: 512, step: 8 }),
//            select(el, { key: 'base', label: 'sin.base', options: [[100, '100'], [10000, '10000']] }),
//            checkbox(el, { key: 'causal', label: 'alibi.causal' }),
//            button(el, { label: 'speed.run', onClick: () => … }))
//
// Labels: `label` is a key; `labelText` a literal (e.g. a symbol such as "θ"). Option labels are keys
// translated with el.t() unless `raw: true` (numbers, names).

import { h } from './dom.js';

let uid = 0;
const nextId = (p) => `${p}-${++uid}`;

/** A flex row holding controls. */
export function controls(...items) {
  return h('div', { class: 'pe-controls' }, ...items);
}

function labelOf(el, o) {
  return o.labelText ?? el.t(o.label);
}

function commit(el, o, value) {
  if (o.onChange) o.onChange(value);
  else el.setState({ [o.key]: value });
}

/**
 * A slider with its value shown: { key, label, min, max, step = 1, format(v) -> string, log: false }.
 * log: true makes the slider move over log2(value) (for base or length ranges spanning decades).
 */
export function range(el, o) {
  const id = nextId('pe-range');
  const fmtv = o.format ?? ((v) => String(v));
  const value = o.value ?? el.state[o.key];
  const toSlider = (v) => (o.log ? Math.log2(v) : v);
  const fromSlider = (s) => {
    let v = o.log ? 2 ** Number(s) : Number(s);
    if (o.round !== false && Number.isInteger(o.step ?? 1)) v = Math.round(v);
    return v;
  };
  const out = h('output', { for: id }, fmtv(value));
  const input = h('input', {
    type: 'range', id, 'data-key': o.key,
    min: toSlider(o.min), max: toSlider(o.max), step: o.log ? (o.logStep ?? 0.25) : (o.step ?? 1),
    value: toSlider(value),
  });
  input.addEventListener('input', () => {
    const v = fromSlider(input.value);
    out.textContent = fmtv(v);
    input.setAttribute('aria-valuetext', fmtv(v));
    commit(el, o, v);
  });
  input.setAttribute('aria-valuetext', fmtv(value));
  return h('label', { class: 'pe-control', for: id },
    h('span', { class: 'pe-control-head' }, h('span', {}, labelOf(el, o)), out), input);
}

/** A <select>: { key, label, options: [[value, labelKey], …], raw: false }. Values keep their type. */
export function select(el, o) {
  const id = nextId('pe-select');
  const value = o.value ?? el.state[o.key];
  const sel = h('select', { id, 'data-key': o.key });
  o.options.forEach(([v, lab], i) => {
    const opt = h('option', { value: String(i) }, o.raw ? String(lab ?? v) : el.t(lab ?? String(v)));
    if (String(v) === String(value)) opt.selected = true;
    sel.append(opt);
  });
  sel.addEventListener('change', () => commit(el, o, o.options[Number(sel.value)][0]));
  return h('label', { class: 'pe-control', for: id }, h('span', {}, labelOf(el, o)), sel);
}

/** A checkbox: { key, label }. */
export function checkbox(el, o) {
  const id = nextId('pe-check');
  const input = h('input', { type: 'checkbox', id, 'data-key': o.key });
  input.checked = !!(o.value ?? el.state[o.key]);
  input.addEventListener('change', () => commit(el, o, input.checked));
  return h('label', { class: 'pe-control pe-check', for: id }, input, h('span', {}, labelOf(el, o)));
}

/** A number box: { key, label, min, max, step }; out-of-range or empty input is clamped on change. */
export function number(el, o) {
  const id = nextId('pe-number');
  const value = o.value ?? el.state[o.key];
  const input = h('input', { type: 'number', id, 'data-key': o.key, min: o.min, max: o.max, step: o.step ?? 'any', value, inputmode: 'decimal' });
  input.style.width = o.width ?? '7rem';
  input.addEventListener('change', () => {
    let v = Number(input.value);
    if (input.value.trim() === '' || !Number.isFinite(v)) v = Number(o.value ?? el.state[o.key]);
    if (o.min !== undefined) v = Math.max(o.min, v);
    if (o.max !== undefined) v = Math.min(o.max, v);
    if (o.integer) v = Math.round(v);
    input.value = String(v);
    commit(el, o, v);
  });
  return h('label', { class: 'pe-control', for: id }, h('span', {}, labelOf(el, o)), input);
}

/** A one-line text box: { key, label, placeholder }; commits on change (Enter or leaving the box). */
export function text(el, o) {
  const id = nextId('pe-text');
  const input = h('input', { type: 'text', id, 'data-key': o.key, value: o.value ?? el.state[o.key] ?? '', spellcheck: 'false' });
  if (o.placeholder) input.placeholder = el.t(o.placeholder);
  input.addEventListener(o.live ? 'input' : 'change', () => commit(el, o, input.value));
  return h('label', { class: 'pe-control', for: id, style: o.wide ? { flex: '1 1 100%' } : undefined }, h('span', {}, labelOf(el, o)), input);
}

/** A multi-line text box: { key, label, rows, placeholder }; commits on input (debounced by `delay` ms). */
export function textarea(el, o) {
  const id = nextId('pe-textarea');
  const area = h('textarea', { id, 'data-key': o.key, rows: o.rows ?? 8, spellcheck: 'false' });
  area.value = o.value ?? el.state[o.key] ?? '';
  if (o.placeholder) area.placeholder = el.t(o.placeholder);
  let timer = 0;
  area.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => commit(el, o, area.value), o.delay ?? 150);
  });
  return h('label', { class: 'pe-control', for: id, style: { flex: '1 1 100%' } }, h('span', {}, labelOf(el, o)), area);
}

/** A button: { label, onClick, key?, secondary? }. */
export function button(el, o) {
  const b = h('button', { type: 'button', class: `pe-button${o.secondary ? ' pe-secondary' : ''}`, 'data-key': o.key ?? o.label },
    labelOf(el, o));
  b.addEventListener('click', (e) => {
    try {
      const r = o.onClick(e);
      if (r && typeof r.then === 'function') el.busy(r);
    } catch (err) {
      el.fail(err);
    }
  });
  return b;
}

/** A <progress> with an accessible label: { label }; set .value (0..1) on the returned element. */
export function progress(el, o = {}) {
  return h('progress', { class: 'pe-progress', max: 1, value: 0, 'aria-label': labelOf(el, { label: o.label ?? 'pe.loading', ...o }) });
}

/** A menu's values plus the current one in sorted place (an attribute or URL may hold any number). */
export function withValue(values, v) {
  return values.includes(v) ? values : [...values, v].sort((a, b) => a - b);
}
