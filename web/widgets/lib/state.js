// state.js — a widget's state in the page URL, so a view can be shared.
//
// Each widget keeps its control values under a prefix in the query string: `?sin.len=128&sin.base=500&lang=zh`.
// The prefix is the element's `state-key` attribute, else its id, else its tag without "pe-". Only values
// that differ from the widget's defaults are written. history.replaceState only: no navigation, no reload.
//
// Used only where asked: the playground marks <html data-pe-url-state>, or an element carries `url-state`.
// An embedded widget in a blog post never touches the URL.
//
//   readState('sin')                         -> { len: '128', base: '500' } (strings)
//   writeState('sin', { len: 128, base: 10000 }, { len: 64, base: 10000 })    -> ?sin.len=128
//   writeParam('lang', 'zh')  /  writeParam('lang', null)  (removes it)

/** Whether widgets on this page (or this element) keep their state in the URL. */
export function urlStateEnabled(el) {
  if (el && el.hasAttribute && el.hasAttribute('url-state')) return el.getAttribute('url-state') !== 'false';
  return typeof document !== 'undefined' && document.documentElement.hasAttribute('data-pe-url-state');
}

/** The URL prefix of an element's state. */
export function stateKey(el) {
  return el.getAttribute('state-key') || el.id || el.localName.replace(/^pe-/, '');
}

/** { key: string } of every `prefix.key` parameter in the current URL. */
export function readState(prefix) {
  const out = {};
  if (typeof location === 'undefined') return out;
  const p = new URLSearchParams(location.search);
  const head = `${prefix}.`;
  for (const [k, v] of p) if (k.startsWith(head)) out[k.slice(head.length)] = v;
  return out;
}

let pending = null;
let timer = 0;

function flush() {
  timer = 0;
  if (!pending) return;
  const url = new URL(location.href);
  for (const [k, v] of pending) {
    if (v === null) url.searchParams.delete(k);
    else url.searchParams.set(k, v);
  }
  pending = null;
  const next = url.pathname + (url.searchParams.size ? `?${url.searchParams}` : '') + url.hash;
  if (next !== location.pathname + location.search + location.hash) history.replaceState(history.state, '', next);
}

/** Sets (or with null removes) one query parameter; writes are batched into one replaceState per frame. */
export function writeParam(name, value) {
  pending ??= new Map();
  pending.set(name, value === null || value === undefined ? null : String(value));
  if (!timer) timer = setTimeout(flush, 50);
}

/** Writes `prefix.key` for every key of state that differs from defaults; removes the ones that equal it. */
export function writeState(prefix, state, defaults = {}) {
  for (const [k, v] of Object.entries(state)) {
    const same = defaults[k] !== undefined && String(defaults[k]) === String(v);
    writeParam(`${prefix}.${k}`, same || v === undefined || v === null ? null : v);
  }
}

/** Writes pending changes now (tests, before reading location). */
export function flushState() {
  if (timer) clearTimeout(timer);
  flush();
}
