// <pe-lang-toggle>: a button that switches every widget on the page between English and Chinese.
// Where the page keeps state in the URL (<html data-pe-url-state>), the choice is written as ?lang=zh.
// It also sets <html lang> so fonts and screen readers follow.
import { define, h } from './base.js';
import { getLang, setLang, onLangChange, normLang, t } from './lib/i18n.js';
import { urlStateEnabled, writeParam } from './lib/state.js';
import { ensureStyles } from './lib/style.js';
import { holdSettled } from './lib/offscreen.js';

class PeLangToggle extends HTMLElement {
  #off = null;
  connectedCallback() {
    ensureStyles();
    this.classList.add('pe-lang-toggle');
    this.#paint();
    this.#off ??= onLangChange(() => this.#paint());
  }
  disconnectedCallback() {
    this.#off?.();
    this.#off = null;
  }
  #paint() {
    const lang = getLang();
    // <html lang> in a task of its own, a frame after the far widgets setLang held are all out of the rendering
    // (lib/offscreen.js, a few frames): it restyles the rest of the page (widget contents carry their own lang)
    const root = document.documentElement, want = lang === 'zh' ? 'zh-CN' : 'en';
    // (a hidden tab runs no animation frames: set it at once there, nothing is painted anyway)
    const setRoot = () => { if (getLang() === lang) root.lang = want; };
    if (normLang(root.lang) !== lang) {
      if (document.hidden) setRoot();
      else holdSettled().then(() => requestAnimationFrame(() => setTimeout(setRoot, 0)));
    }
    // the same button, relabelled (focus stays on it; focusing a new one would lay out the page mid-switch)
    let b = this.querySelector(':scope > button.pe-lang-button');
    if (!b) {
      b = h('button', { type: 'button', class: 'pe-lang-button' });
      b.addEventListener('click', () => {
        const next = getLang() === 'zh' ? 'en' : 'zh';
        setLang(next);
        if (urlStateEnabled(this)) writeParam('lang', next === 'en' ? null : next);
      });
      this.replaceChildren(b);
    }
    b.setAttribute('aria-label', t('pe.lang.label'));
    b.dataset.lang = lang;
    b.textContent = t('pe.lang.toggle');
  }
}
define('pe-lang-toggle', PeLangToggle);
