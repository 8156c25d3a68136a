// i18n.js — the widgets' English and Chinese strings.
//
//   import { registerStrings, t, getLang, setLang, onLangChange } from './i18n.js';
//   registerStrings({ en: { 'sin.title': 'Sinusoidal', 'sin.len': 'length {n}' },
//                     zh: { 'sin.title': '正弦编码',   'sin.len': '长度 {n}' } });
//   t('sin.len', { n: 64 })            // in the global language; t(key, vars, 'zh') in a given one
//
// Each widget file registers its own keys (prefix them with the widget's short name so files never collide).
// Every visible string goes through t(): the browser test switches the language and checks that no English
// string is left on the page. A missing Chinese string falls back to English, a missing key to the key itself.
// Text that is the same in both languages on purpose (a model name such as "Llama 3.1 8B", a code identifier,
// a formula, a unit) goes in an element with translate="no" (the HTML attribute; KaTeX output has it): the
// test skips those, and only those (plus a few bare names: RoPE, ALiBi, YaRN, NoPE, float32 …).
//
// The global language: `?lang=zh` in the page URL, else <html lang="zh…">, else English. setLang() changes it
// and fires a 'pe-lang-change' event on document (detail: { lang }); every widget without its own `lang`
// attribute re-renders. Languages: 'en', 'zh'.

import { planHold } from './offscreen.js';

export const LANGS = Object.freeze(['en', 'zh']);

const tables = { en: Object.create(null), zh: Object.create(null) };

/** Adds strings: { en: { key: text }, zh: { key: text } }. Later registrations of a key win. */
export function registerStrings(strings) {
  for (const lang of LANGS) Object.assign(tables[lang], strings[lang] ?? {});
}

/** Normalises 'zh-CN', 'ZH', 'en-US' … to 'zh' or 'en'; anything else gives null. */
export function normLang(x) {
  if (typeof x !== 'string') return null;
  const l = x.trim().toLowerCase();
  if (l.startsWith('zh')) return 'zh';
  if (l.startsWith('en')) return 'en';
  return null;
}

function initialLang() {
  if (typeof location !== 'undefined') {
    const q = normLang(new URLSearchParams(location.search).get('lang'));
    if (q) return q;
  }
  if (typeof document !== 'undefined') return normLang(document.documentElement.lang) ?? 'en';
  return 'en';
}

let current = initialLang();

/** The global language ('en' or 'zh'). */
export function getLang() {
  return current;
}

/** Sets the global language and re-renders every widget that follows it. */
export function setLang(lang) {
  const l = normLang(lang);
  if (!l) throw new RangeError(`setLang: lang must be one of ${LANGS.join(', ')}, got ${JSON.stringify(lang)}`);
  if (l === current) return;
  current = l;
  if (typeof document === 'undefined') return;
  // before anything relabels: the widgets far from the viewport sit out the page-wide restyle that follows
  // (read where they are first, while layout is clean; hold them once the listeners have made their changes)
  const hold = planHold();
  try {
    document.dispatchEvent(new CustomEvent('pe-lang-change', { detail: { lang: l } }));
  } finally {
    hold();
  }
}

/** Calls fn(lang) on every global language switch; returns a function that stops it. */
export function onLangChange(fn) {
  const h = (e) => fn(e.detail.lang);
  document.addEventListener('pe-lang-change', h);
  return () => document.removeEventListener('pe-lang-change', h);
}

/** Whether a key has a string in the given language (no fallback). */
export function hasString(key, lang = current) {
  return key in tables[normLang(lang) ?? 'en'];
}

/**
 * The string for key in lang (default: the global language), with {name} placeholders replaced from vars.
 * Numbers in vars are shown as they are; format them before (fmt() below) when you want fewer digits.
 */
export function t(key, vars, lang = current) {
  const l = normLang(lang) ?? 'en';
  let s = tables[l][key] ?? tables.en[key] ?? key;
  if (vars) s = s.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  return s;
}

/** A number with `digits` significant digits, in the language's style (both use ASCII digits). */
export function fmt(x, digits = 4) {
  if (typeof x !== 'number') return String(x);
  if (!Number.isFinite(x)) return Number.isNaN(x) ? 'NaN' : x > 0 ? '∞' : '−∞';
  if (x === 0) return '0';
  const a = Math.abs(x);
  let s;
  if (a >= 1e6 || a < 1e-3) s = x.toExponential(Math.max(0, digits - 1)).replace(/\.?0+e/, 'e');
  else s = String(Number(x.toPrecision(digits)));
  return s.replace('-', '−');
}

// Strings shared by every widget (base.js, controls).
registerStrings({
  en: {
    'pe.loading': 'loading…',
    'pe.error': 'This widget could not run: {msg}',
    'pe.blocked': '{url} could not be loaded. If this page embeds the widgets from another site, that site must send the header Access-Control-Allow-Origin for its scripts and models; otherwise check the connection.',
    'pe.modelMissing': 'The tiny model “{name}” is not available here ({msg}).',
    'pe.build.simd': 'SIMD128 build',
    'pe.build.scalar': 'scalar build',
    'pe.on': 'on',
    'pe.off': 'off',
    'pe.play': 'Play',
    'pe.pause': 'Pause',
    'pe.position': 'position',
    'pe.dim': 'dimension',
    'pe.head': 'head',
    'pe.query': 'query',
    'pe.key': 'key',
    'pe.value': 'value',
    'pe.lang.toggle': '中文',
    'pe.lang.label': 'Language: switch to Chinese',
    'pe.hover': 'row {r}, column {c}: {v}',
  },
  zh: {
    'pe.loading': '加载中…',
    'pe.error': '此组件无法运行：{msg}',
    'pe.blocked': '无法加载 {url}。如果本页从另一个网站嵌入这些组件，那个网站必须为其脚本和模型发送 Access-Control-Allow-Origin 响应头；否则请检查网络连接。',
    'pe.modelMissing': '这里没有小模型“{name}”（{msg}）。',
    'pe.build.simd': 'SIMD128 版本',
    'pe.build.scalar': '标量版本',
    'pe.on': '开',
    'pe.off': '关',
    'pe.play': '播放',
    'pe.pause': '暂停',
    'pe.position': '位置',
    'pe.dim': '维度',
    'pe.head': '头',
    'pe.query': '查询',
    'pe.key': '键',
    'pe.value': '值',
    'pe.lang.toggle': 'English',
    'pe.lang.label': '语言：切换到英文',
    'pe.hover': '第 {r} 行，第 {c} 列：{v}',
  },
});
