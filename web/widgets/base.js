// base.js — what every <pe-...> widget shares. Widgets compute only through the posenc API (web/src).
//
// ── Writing a widget ──────────────────────────────────────────────────────────────────────────────────────
//
//   import { PeElement, define, h } from './base.js';
//   import { registerStrings } from './lib/i18n.js';
//   import { range, select } from './lib/controls.js';
//   import { heatmap } from './lib/heatmap.js';
//
//   registerStrings({ en: { 'foo.title': 'Foo', 'foo.len': 'length' }, zh: { 'foo.title': '示例', 'foo.len': '长度' } });
//
//   class PeFoo extends PeElement {
//     // Attributes: name -> { type: 'int' | 'number' | 'string' | 'bool' | 'enum' | 'list', default,
//     //   min, max (int/number: clamped), values (enum) }. Each also becomes a key of this.state (camelCase:
//     //   'head-dim' -> headDim), so controls and the URL share it.
//     static attrs = { length: { type: 'int', default: 64, min: 1, max: 4096 }, base: { type: 'number', default: 10000 } };
//     async setup() { this.model = await this.model('copy-rope'); }   // optional, once, after the API loaded
//     render() {                      // builds the DOM into this.body from this.state (again on language switch)
//       this.body.append(h('p', {}, this.t('foo.title')),
//         range(this, { key: 'length', label: 'foo.len', min: 1, max: 512 }),   // changes call this.update()
//         this.fig = h('div'));
//     }
//     draw() {                        // recomputes and redraws the figures from this.state (may be async)
//       const table = this.pe.sinusoidal(this.state.length, 16);
//       heatmap(this.fig, table, this.state.length, 16, { xLabel: this.t('pe.dim') });
//     }
//   }
//   define('pe-foo', PeFoo);
//
// Height: from connection to its first drawing a widget holds the height lib/heights.js measured for it at its
// width (`node scripts/widget-heights.mjs` regenerates the table after a layout change), so pages do not jump.
// Life cycle: connected -> (lazy: when first scrolled near the viewport; immediately where IntersectionObserver
// is missing or the element has the `eager` attribute) -> the API loads once for the page (getPosenc) ->
// setup() once -> render() + draw(). An attribute change or a language switch re-runs render() + draw();
// a control (setState) calls update() -> draw() only, so keyboard focus stays. Do not override update():
// it wraps draw() (errors shown, data-draws counted when draw returns or its promise resolves). Disconnect: observers and listeners removed,
// animation frames cancelled, every object given to this.own() freed, then cleanup() (optional).
// Errors from setup/render/update (sync or async) are shown inside the element (role="alert") and re-thrown
// nowhere: a widget never throws an uncaught error into the page.
//
// ── What a widget gets ────────────────────────────────────────────────────────────────────────────────────
//   this.pe             the posenc API (init(); scalar when the page asks for ?simd=0 or data-simd="false")
//   this.state          control values: attribute defaults, then attributes, then the URL (playground only)
//   this.setState(o)    merges o into state, writes the URL (if enabled), calls update() (-> draw())
//   this.update()       redraw now (e.g. after your own event handler changed something)
//   static rebuildOn    state keys whose change re-runs render() too (e.g. a count that sets a slider's max)
//   static setupOn      attributes whose change re-runs setup() (e.g. which model to load)
//   this.body           the element's content box (light DOM; styles are scoped by the .pe-* classes)
//   this.t(key, vars)   a string in this element's language (its `lang` attribute, else the page's); every
//                       visible string goes through it; text meant to stay as it is in both languages (names,
//                       code, units) goes in an element with translate="no" (see i18n.js)
//   this.lang           'en' or 'zh'
//   this.model(name)    Promise of a loaded tiny model (web/src/model.js TinyModel) from the models base
//   this.modelConfig(name), this.modelFile(name)   its config.json object / its safetensors bytes
//   this.own(x)         frees x (anything with free()) on disconnect; returns x
//   this.frame(fn)      requestAnimationFrame that is cancelled on disconnect; returns the id
//   this.signal         an AbortSignal aborted on disconnect (addEventListener(..., { signal }))
//   this.busy(promise)  marks the element data-busy while promise runs (tests wait for it)
//   this.fail(err)      shows an error inside the element (used by the base; call it for handled failures)
//   this.markDrawn()    bumps data-draws (tests wait for it); update() calls it for you when it returns
//   this.relabeling, this.yieldIfLong()   in an async draw() of several figures, `if (this.relabeling) await
//                       this.yieldIfLong()` between them: the redraw after a language switch is then several
//                       short tasks instead of one long one (a draw from a control still runs in one go)
//
// Element attributes every widget understands: lang="en|zh", models-base="URL/", eager, url-state,
// state-key="prefix", simd="false".
//
// ── Page-level settings ───────────────────────────────────────────────────────────────────────────────────
//   ?simd=0 in the page URL, or data-simd="false" on <html>: the scalar build everywhere.
//   ?lang=zh or <html lang="zh">: Chinese (i18n.js). <html data-pe-url-state>: widgets keep state in the URL.
//   Models: an element's models-base attribute, else configure({ modelsBase }), else <html data-pe-models-base>,
//   else `models/` next to the posenc-widgets.js script (the built site keeps them there), else `models/`
//   next to the page.

import { init } from '../src/index.js';
import { t as translate, getLang, normLang, onLangChange } from './lib/i18n.js';
import { urlStateEnabled, stateKey, readState, writeState } from './lib/state.js';
import { ensureStyles } from './lib/style.js';
import { h } from './lib/dom.js';
import { reservedHeight, heightKey, NARROW_QUERY } from './lib/heights.js';
import { fitOverflow } from './lib/overflow.js';
import { releaseHeld, heldHeight, rectOf } from './lib/offscreen.js';

export { h };

// ── page-level configuration ──────────────────────────────────────────────────────────────────────────────

const config = { modelsBase: null, simd: undefined };

/** configure({ modelsBase: 'https://…/models/', simd: false }): page-wide defaults (before widgets start). */
export function configure(options = {}) {
  if ('modelsBase' in options) config.modelsBase = options.modelsBase == null ? null : String(options.modelsBase);
  if ('simd' in options) config.simd = options.simd;
}

const FALSE = new Set(['0', 'false', 'off', 'no', 'scalar']);
const TRUE = new Set(['1', 'true', 'on', 'yes', 'simd']);

/** The page's SIMD choice: false (scalar), true (SIMD) or undefined (let init() pick). */
export function simdPreference(el) {
  const read = (v) => (v == null ? undefined : FALSE.has(String(v).toLowerCase()) ? false : TRUE.has(String(v).toLowerCase()) ? true : undefined);
  const fromEl = el && read(el.getAttribute('simd'));
  if (fromEl !== undefined) return fromEl;
  if (typeof location !== 'undefined') {
    const q = read(new URLSearchParams(location.search).get('simd'));
    if (q !== undefined) return q;
  }
  if (typeof document !== 'undefined') {
    const d = read(document.documentElement.dataset.simd) ?? read(document.body?.dataset.simd);
    if (d !== undefined) return d;
  }
  return config.simd;
}

/** The posenc API, loaded once per build for the whole page. simd: see simdPreference(). */
export function getPosenc(simd = simdPreference()) {
  return simd === undefined ? init() : init({ simd });
}

let scriptBase = null;
function widgetsScriptUrl() {
  if (scriptBase !== null) return scriptBase;
  scriptBase = '';
  if (typeof document === 'undefined') return scriptBase;
  for (const s of document.querySelectorAll('script[src]')) {
    if (/(^|\/)posenc-widgets(\.[\w-]+)?\.js(\?|#|$)/.test(s.getAttribute('src'))) {
      scriptBase = s.src;
      break;
    }
  }
  return scriptBase;
}

/** The directory URL models are loaded from (for an element, honouring its models-base attribute). */
export function modelsBase(el) {
  const attr = el?.getAttribute?.('models-base');
  const pageBase = typeof document !== 'undefined' ? document.baseURI : 'http://localhost/';
  const dir = (u) => (u.endsWith('/') ? u : `${u}/`);
  if (attr) return dir(new URL(attr, pageBase).href);
  if (config.modelsBase) return dir(new URL(config.modelsBase, pageBase).href);
  const html = typeof document !== 'undefined' ? document.documentElement.dataset.peModelsBase : null;
  if (html) return dir(new URL(html, pageBase).href);
  const script = widgetsScriptUrl();
  if (script) return new URL('models/', script).href;
  return new URL('models/', pageBase).href;
}

// ── models ────────────────────────────────────────────────────────────────────────────────────────────────

const fileCache = new Map();
function fetchCached(url, kind) {
  const key = `${kind} ${url}`;
  if (!fileCache.has(key)) {
    const p = (async () => {
      let r;
      try {
        r = await fetch(url);
      } catch (e) {
        // fetch says only "Failed to fetch": offline, or (most often on an embedding page) another origin
        // that does not send Access-Control-Allow-Origin
        throw Object.assign(new Error(`${url} could not be loaded: the server did not answer, or it is on another origin and does not send Access-Control-Allow-Origin (${e?.message ?? e})`),
          { i18n: { key: 'pe.blocked', vars: { url } } });
      }
      if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
      return kind === 'json' ? r.json() : new Uint8Array(await r.arrayBuffer());
    })();
    p.catch(() => fileCache.delete(key));
    fileCache.set(key, p);
  }
  return fileCache.get(key);
}

const modelDir = (name, base) => new URL(name.endsWith('/') ? name : `${name}/`, base ?? modelsBase()).href;

/** config.json of a shipped model ('copy-rope', 'lm-learned', …) as an object (cached). */
export function getModelConfig(name, base) {
  return fetchCached(`${modelDir(name, base)}config.json`, 'json');
}

/** The safetensors bytes of a shipped model (cached). */
export async function getModelFile(name, base) {
  const cfg = await getModelConfig(name, base);
  return fetchCached(`${modelDir(name, base)}${cfg?.posenc?.weights ?? 'model.safetensors'}`, 'bytes');
}

/** A JSON file next to the models (index.json, copy-check.json, …), cached. */
export function getModelsJson(file, base) {
  return fetchCached(new URL(file, base ?? modelsBase()).href, 'json');
}

const modelCache = new Map();
/** A loaded tiny model (TinyModel of web/src/model.js), shared by every widget of the page. Do not free it. */
export function getModel(name, base) {
  const dir = modelDir(name, base);
  if (!modelCache.has(dir)) {
    const p = (async () => {
      const [pe, cfg, bytes] = await Promise.all([getPosenc(), getModelConfig(name, base), getModelFile(name, base)]);
      return pe.loadModel(bytes, cfg);
    })();
    p.catch(() => modelCache.delete(dir));
    modelCache.set(dir, p);
  }
  return modelCache.get(dir);
}

const camel = (s) => s.replace(/-([a-z])/g, (_, c) => c.toUpperCase());

/** Parses one attribute value by its spec (see PeElement.attrs); invalid values give the default. */
export function parseAttr(value, spec) {
  const d = spec.default;
  if (value === null || value === undefined) return d;
  switch (spec.type) {
    case 'int':
    case 'number': {
      const x = Number(value);
      if (value.trim() === '' || !Number.isFinite(x)) return d;
      let v = spec.type === 'int' ? Math.round(x) : x;
      if (spec.min !== undefined) v = Math.max(spec.min, v);
      if (spec.max !== undefined) v = Math.min(spec.max, v);
      return v;
    }
    case 'bool':
      return !FALSE.has(String(value).toLowerCase());
    case 'enum':
      return spec.values.includes(value) ? value : d;
    case 'list':
      return String(value).split(',').map((s) => s.trim()).filter(Boolean);
    default:
      return String(value);
  }
}

const COMMON_ATTRS = ['lang', 'models-base', 'simd'];

// A language switch re-renders the page's widgets one per task, so the switch never holds the page in one long
// task: the widgets on screen go first (in page order, from the task after the switch); the others wait until
// they come near the viewport (data-relabel="pending" until then), so a reader scrolling there finds them in
// the new language and a page of twelve widgets does not spend seconds relabelling what nobody sees.
// Each rendered widget carries data-lang="<its language>" (tests wait for it).
const relabelQueue = [];
let relabelTimer = 0; // a timer id, 0 (none), or -1 while a job's promise runs (its parts in frames of their own)
function runRelabel() {
  relabelTimer = 0;
  const r = relabelQueue.shift()?.();
  const next = () => {
    relabelTimer = 0;
    if (relabelQueue.length) relabelTimer = setTimeout(runRelabel, 0);
  };
  if (r && typeof r.then === 'function') {
    relabelTimer = -1; // no other widget's job until this one's parts are in
    r.finally(next);
  } else next();
}

// A deferred relabel's new content goes into the page a few hundred elements at a time, one part a frame
// (a Chromium trace: the frame after a large widget's render() styled and laid out its ~1,100 new elements in
// one go, 35–45 ms of the 60–90 ms long tasks left after a switch). The widget holds its height meanwhile and
// is off screen (a screen ahead of the reader), so the parts arriving change nothing a reader sees.
const ELEMENTS_A_PART = 400;
const afterFrame = (fn) => (typeof requestAnimationFrame === 'function' ? requestAnimationFrame(() => setTimeout(fn, 0)) : setTimeout(fn, 0));
/**
 * Takes all but the first part of body's new children out again; resolves once they are back, a part a frame,
 * and a frame has laid out the last one.
 */
function appendInParts(body) {
  const parts = [];
  let count = Infinity;
  for (const child of body.children) {
    const n = 1 + child.getElementsByTagName('*').length;
    if (count + n > ELEMENTS_A_PART && count > 0) parts.push([]), (count = 0);
    parts.at(-1).push(child);
    count += n;
  }
  // one part: still a frame before the draw, so the draw's first figure does not lay out the whole new content
  if (parts.length < 2) return new Promise((done) => afterFrame(done));
  for (const part of parts.slice(1)) for (const c of part) c.remove();
  return new Promise((done) => {
    let i = 1;
    // stopped by a render since (a control, another switch: the first part is gone) or a removal
    const current = () => body.isConnected && parts[0][0].parentNode === body;
    const step = () => {
      if (current()) body.append(...parts[i]);
      if (++i < parts.length && current()) afterFrame(step);
      else afterFrame(done); // the last part gets its frame before the draw
    };
    afterFrame(step);
  });
}
function queueRelabel(job) {
  relabelQueue.push(job);
  relabelTimer ||= setTimeout(runRelabel, 0);
}
const onScreen = (el) => {
  const r = rectOf(el); // during a switch: where it was before the switch's listeners changed the page
  return r.bottom > 0 && r.top < (window.innerHeight || 800) && r.width + r.height > 0;
};

// ── the base class ────────────────────────────────────────────────────────────────────────────────────────

export class PeElement extends HTMLElement {
  /** Attribute specs (override in subclasses). */
  static attrs = {};

  static get observedAttributes() {
    return [...Object.keys(this.attrs), ...COMMON_ATTRS];
  }

  #io = null;
  #started = false;
  #starting = null;
  #abort = null;
  #owned = new Set();
  #frames = new Set();
  #renderQueued = false;
  #offLang = null;
  #generation = 0;
  #errorMsg = null;
  #reserved = false;
  #fontsSeen = false;
  #relabelIo = null;
  #relabelDraw = false;
  #sliceStart = 0;

  constructor() {
    super();
    this.pe = null;
    this.body = null;
    /** Control values (see the class comment). */
    this.state = {};
    this.defaults = {};
    for (const [name, spec] of Object.entries(this.constructor.attrs)) this.defaults[camel(name)] = spec.default;
  }

  /** 'en' or 'zh': the element's `lang` attribute, else the page's language. */
  get lang() {
    return normLang(this.getAttribute('lang')) ?? getLang();
  }

  set lang(v) {
    if (v) this.setAttribute('lang', v);
    else this.removeAttribute('lang');
  }

  /** A string in this element's language. */
  t(key, vars) {
    return translate(key, vars, this.lang);
  }

  /** Aborted on disconnect. */
  get signal() {
    return this.#abort?.signal;
  }

  /** The parsed value of a declared attribute (default when absent or invalid). */
  attr(name) {
    const spec = this.constructor.attrs[name];
    if (!spec) throw new Error(`${this.localName}: undeclared attribute ${name}`);
    return parseAttr(this.getAttribute(name), spec);
  }

  #readAttrsIntoState() {
    for (const name of Object.keys(this.constructor.attrs)) this.state[camel(name)] = this.attr(name);
  }

  #readUrlState() {
    if (!urlStateEnabled(this)) return;
    const saved = readState(stateKey(this));
    for (const [name, spec] of Object.entries(this.constructor.attrs)) {
      const k = camel(name);
      if (k in saved) this.state[k] = parseAttr(saved[k], spec);
    }
  }

  connectedCallback() {
    if (!this.#abort) this.#abort = new AbortController();
    ensureStyles();
    this.classList.add('pe-widget');
    if (!this.body) {
      this.body = document.createElement('div');
      this.body.className = 'pe-body';
      this.#status(this.t('pe.loading'), 'pe-loading');
    }
    if (!this.body.isConnected) this.append(this.body);
    if (!this.#started) this.#reserve();
    this.#offLang ??= onLangChange(() => {
      if (this.hasAttribute('lang')) return;
      if (this.#started) this.#relabel();
      else if (this.body?.querySelector('.pe-loading')) this.#status(this.t('pe.loading'), 'pe-loading');
      const box = this.querySelector(':scope > .pe-error');
      if (box && this.#errorMsg !== null) box.textContent = this.t('pe.error', { msg: this.#errorMsg });
    });
    if (this.#started || this.#starting) return;
    const lazy = !this.hasAttribute('eager') && typeof IntersectionObserver === 'function';
    if (!lazy) {
      this.#start();
      return;
    }
    this.#io = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) {
        this.#io?.disconnect();
        this.#io = null;
        this.#start();
      }
    }, { rootMargin: '300px 0px' });
    this.#io.observe(this);
  }

  disconnectedCallback() {
    // Moving an element (disconnect + connect in one task) keeps it alive; a real removal tears down.
    queueMicrotask(() => {
      if (this.isConnected) return;
      this.#io?.disconnect();
      this.#io = null;
      this.#relabelIo?.disconnect();
      this.#relabelIo = null;
      this.#offLang?.();
      this.#offLang = null;
      this.#abort?.abort();
      this.#abort = null;
      for (const id of this.#frames) cancelAnimationFrame(id);
      this.#frames.clear();
      for (const x of this.#owned) {
        try { x.free(); } catch { /* already freed */ }
      }
      this.#owned.clear();
      try {
        this.cleanup?.();
      } catch (e) {
        console.warn(e);
      }
      this.#started = false;
      this.#starting = null;
      this.#generation++;
      this.body?.replaceChildren();
      this.body = null;
    });
  }

  // A language switch for this widget: at once (next free task) when on screen, else when it nears the viewport.
  #relabel() {
    // render() and draw() go in two tasks (the draw straight after, before any other widget's), each about
    // half a widget's cost; the element keeps its height in between so nothing below it moves
    let deferred = false; // relabelled when it nears the viewport (not on screen at the switch)
    const job = () => {
      delete this.dataset.relabel;
      if (!(this.#started && this.body && this.dataset.lang !== this.lang)) {
        releaseHeld(this); // nothing to relabel (switched back meanwhile): lib/offscreen.js left it to us
        return;
      }
      const held = !this.style.minHeight;
      // a widget still held by the switch has its height written down: no layout of its old content to read it
      if (held) this.style.minHeight = `${heldHeight(this) ?? this.getBoundingClientRect().height}px`;
      return this.#renderNow({
        inParts: deferred,
        drawLater: (draw) => relabelQueue.unshift(() => {
          let p;
          try {
            if (this.body) {
              this.#relabelDraw = true;
              p = draw();
            }
          } finally {
            // an async draw (one that yields between its parts, yieldIfLong) keeps the height until it is done
            Promise.resolve(p).finally(() => {
              this.#relabelDraw = false;
              if (held) requestAnimationFrame(() => { if (!this.#reserved) this.style.minHeight = ''; });
            });
          }
        }),
      });
    };
    this.#relabelIo?.disconnect();
    this.#relabelIo = null;
    if (onScreen(this) || typeof IntersectionObserver !== 'function') {
      queueRelabel(job);
      return;
    }
    this.dataset.relabel = 'pending';
    this.#relabelIo = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      this.#relabelIo?.disconnect();
      this.#relabelIo = null;
      deferred = true;
      queueRelabel(job);
      // a screen ahead: a reader who scrolls a screen at a time meets it already relabelled, not re-laid out in view
    }, { rootMargin: '100% 0px' });
    this.#relabelIo.observe(this);
  }

  /** Attributes whose change re-runs setup() (which model to load, …); models-base and simd always do. */
  static setupOn = [];

  attributeChangedCallback(name, oldValue, newValue) {
    if (oldValue === newValue) return;
    if (name in this.constructor.attrs) {
      const spec = this.constructor.attrs[name];
      this.state[camel(name)] = parseAttr(newValue, spec);
    }
    if (!this.#started) return;
    if (name === 'models-base' || name === 'simd' || this.constructor.setupOn.includes(name)) {
      // start again (new API build or new data), reading the state from the attributes and the URL again
      this.#started = false;
      this.#starting = null;
      this.#generation++;
      for (const x of this.#owned) {
        try { x.free(); } catch { /* already freed */ }
      }
      this.#owned.clear();
      this.#status(this.t('pe.loading'), 'pe-loading');
      this.#start();
      return;
    }
    this.#queueRender();
  }

  async #start() {
    if (this.#starting) return this.#starting;
    const gen = this.#generation;
    this.#starting = (async () => {
      this.#readAttrsIntoState();
      this.#readUrlState();
      try {
        this.pe = await getPosenc(simdPreference(this));
        if (gen !== this.#generation) return;
        this.dataset.build = this.pe.simd ? 'simd' : 'scalar';
        if (this.setup) await this.setup();
        if (gen !== this.#generation) return;
        this.#started = true;
        this.#renderNow();
      } catch (e) {
        if (gen === this.#generation) this.fail(e);
      }
    })();
    return this.#starting;
  }

  /** Resolves once the widget has started (API loaded, setup done, first render). */
  get ready() {
    return this.#starting ?? Promise.resolve();
  }

  #queueRender() {
    if (this.#renderQueued) return;
    this.#renderQueued = true;
    queueMicrotask(() => {
      this.#renderQueued = false;
      if (this.#started && this.body) this.#renderNow();
    });
  }

  #renderNow({ drawLater = null, inParts = false } = {}) {
    const focusKey = this.contains(document.activeElement) ? document.activeElement?.dataset?.key : null;
    // Held by a language switch (lib/offscreen.js): its old content is thrown away while still display: none, and
    // only then the widget released. Released first, the removal made Chromium restyle the old content it was
    // about to drop (20–45 ms for a large widget, in a Chromium trace).
    this.body.replaceChildren();
    releaseHeld(this);
    this.dataset.lang = this.lang;
    // the content says its own language: a page switching <html lang> then re-lays out its own prose only, and
    // each widget's text is re-shaped in the task that re-renders it (a widget still waiting is still English)
    this.body.lang = this.lang === 'zh' ? 'zh-CN' : 'en';
    this.removeAttribute('data-error');
    try {
      this.render();
    } catch (e) {
      this.fail(e);
      return;
    }
    if (focusKey) this.body.querySelector(`[data-key="${CSS.escape(focusKey)}"]`)?.focus();
    if (drawLater) drawLater(() => this.update());
    else this.update();
    return inParts && !focusKey ? appendInParts(this.body) : null;
  }

  /** Build the DOM into this.body (override). */
  render() {}

  /**
   * Recompute and redraw from this.state (override as draw(); this wrapper catches and counts). Returns the
   * draw's promise when draw() is async (it never rejects: a failure is shown in the element), else undefined.
   */
  update() {
    if (!this.#started || !this.body) return undefined;
    this.#clearError();
    this.#sliceStart = performance.now();
    try {
      const r = this.draw();
      if (r && typeof r.then === 'function') {
        const done = r.then(() => this.markDrawn(), (e) => this.fail(e));
        this.busy(done);
        return done;
      }
      this.markDrawn();
    } catch (e) {
      this.fail(e);
    }
    return undefined;
  }

  /** True while the draw after a language switch runs (base.js #relabel). */
  get relabeling() {
    return this.#relabelDraw;
  }

  /**
   * In an async draw(), between two parts: during the redraw after a language switch, once this task has run
   * `budget` ms, lets the browser run (a new task), so a widget of several figures never holds the page in one
   * long task while the reader scrolls. Otherwise returns at once; call it as
   * `if (this.relabeling) await this.yieldIfLong()`, so a draw from a control still runs in one go.
   */
  async yieldIfLong(budget = 30) {
    if (!this.#relabelDraw || performance.now() - this.#sliceStart < budget) return;
    await new Promise((ok) => setTimeout(ok, 0));
    this.#sliceStart = performance.now();
  }

  /** Recompute and redraw (override). May return a Promise. */
  draw() {}

  /**
   * Keys whose change alters the controls themselves (a slider's range, which controls exist): setState on one
   * of them re-runs render() + draw() instead of draw() alone (keyboard focus is kept by data-key).
   */
  static rebuildOn = [];

  /** Merges values into this.state, writes the URL where enabled, and redraws. */
  setState(values, { redraw = true } = {}) {
    const rebuild = redraw && this.constructor.rebuildOn.some((k) => k in values && values[k] !== this.state[k]);
    Object.assign(this.state, values);
    if (urlStateEnabled(this)) {
      const known = {};
      for (const k of Object.keys(values)) if (k in this.defaults) known[k] = this.state[k];
      writeState(stateKey(this), known, this.defaults);
    }
    if (rebuild && this.#started) this.#renderNow();
    else if (redraw) this.update();
  }

  // Until its first drawing, a widget holds the height it will have (lib/heights.js, measured at this width):
  // the page does not grow under the reader as widgets start, and a #fragment link lands where it points.
  // A min-height the page set itself is left alone.
  #reserve() {
    if (this.#reserved || this.style.minHeight) return;
    const narrow = typeof matchMedia === 'function' && matchMedia(NARROW_QUERY).matches;
    const px = reservedHeight(heightKey(this), this.getBoundingClientRect().width, narrow);
    if (px > 0) {
      this.style.minHeight = `${px}px`;
      this.#reserved = true;
    }
  }

  #unreserve() {
    if (!this.#reserved) return;
    this.#reserved = false;
    this.style.minHeight = '';
    if (this.getAttribute('style') === '') this.removeAttribute('style');
  }

  markDrawn() {
    this.#unreserve();
    fitOverflow(this.body);
    if (!this.#fontsSeen && document.fonts?.status !== 'loaded') {
      this.#fontsSeen = true;
      document.fonts?.ready.then(() => fitOverflow(this.body)); // KaTeX's fonts change every formula's width
    }
    this.dataset.draws = String(Number(this.dataset.draws ?? 0) + 1);
    this.dataset.state = 'ready';
  }

  busy(promise) {
    this.dataset.busy = String(Number(this.dataset.busy ?? 0) + 1);
    const done = () => {
      const n = Number(this.dataset.busy ?? 1) - 1;
      if (n > 0) this.dataset.busy = String(n);
      else delete this.dataset.busy;
    };
    Promise.resolve(promise).then(done, (e) => { done(); this.fail(e); });
    return promise;
  }

  own(x) {
    if (x && typeof x.free === 'function') this.#owned.add(x);
    return x;
  }

  /** Frees an owned object now. */
  release(x) {
    if (x && this.#owned.delete(x)) x.free();
  }

  frame(fn) {
    const id = requestAnimationFrame((ts) => {
      this.#frames.delete(id);
      try {
        fn(ts);
      } catch (e) {
        this.fail(e);
      }
    });
    this.#frames.add(id);
    return id;
  }

  cancelFrame(id) {
    cancelAnimationFrame(id);
    this.#frames.delete(id);
  }

  model(name) {
    return getModel(name, modelsBase(this));
  }

  modelConfig(name) {
    return getModelConfig(name, modelsBase(this));
  }

  modelFile(name) {
    return getModelFile(name, modelsBase(this));
  }

  modelsJson(file) {
    return getModelsJson(file, modelsBase(this));
  }

  #status(text, cls) {
    if (!this.body) return;
    this.body.replaceChildren(h('p', { class: cls }, text));
  }

  #clearError() {
    this.#errorMsg = null;
    this.querySelector(':scope > .pe-error')?.remove();
    this.removeAttribute('data-error');
  }

  /** Shows an error inside the element (never throws). */
  fail(err) {
    this.#unreserve();
    const msg = err?.i18n ? this.t(err.i18n.key, err.i18n.vars)
      : err && err.message ? `${err.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err.message}` : String(err);
    this.dataset.state = 'error';
    this.setAttribute('data-error', msg);
    let box = this.querySelector(':scope > .pe-error');
    if (!box) {
      box = h('p', { class: 'pe-error', role: 'alert' });
      this.prepend(box);
    }
    this.#errorMsg = msg;
    box.textContent = this.t('pe.error', { msg });
    this.body?.querySelector('.pe-loading')?.remove();
    console.warn(`${this.localName}:`, err);
  }
}

/** customElements.define that tolerates a second definition (two bundles on one page). */
export function define(tag, cls) {
  if (!customElements.get(tag)) customElements.define(tag, cls);
}
