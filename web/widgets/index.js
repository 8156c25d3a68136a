// The widgets entry: importing it registers every <pe-...> custom element. The site build turns it into
// posenc-widgets.js (one file, wasm inlined; models fetched lazily by URL), so a page needs only
//   <script type="module" src=".../posenc-widgets.js"></script>
// and then the tags anywhere. Every widget file in this folder registers its own element when imported
// (define() in base.js); they are all picked up here, whatever their names.
import { configure, getPosenc, getModel, getModelConfig, modelsBase } from './base.js';
import { getLang, setLang, registerStrings, t } from './lib/i18n.js';

// Every widget module (eager: bundled into this file). A new widget file only needs to exist here.
import.meta.glob(['./*.js', '!./index.js', '!./base.js'], { eager: true });

// Defining the elements just gave every widget on the page its reserved height (base.js), in this one task:
// a page opened at #section is scrolled back onto that section before the browser paints again, so the
// reader lands where the link points and nothing on screen moves.
if (typeof document !== 'undefined' && document.readyState !== 'complete' && location.hash.length > 1) {
  let target = null;
  try {
    target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  } catch { /* a malformed fragment names nothing */ }
  target?.scrollIntoView({ block: 'start' });
}

export { configure, getPosenc, getModel, getModelConfig, modelsBase, getLang, setLang, registerStrings, t };

/** For pages that load the bundle with a plain script tag and want to talk to it without importing it. */
const api = Object.freeze({ configure, getPosenc, getModel, getModelConfig, modelsBase, getLang, setLang, registerStrings, t });
if (typeof window !== 'undefined') {
  window.posencWidgets ??= api;
  document.dispatchEvent(new CustomEvent('pe-widgets-ready', { detail: api }));
}
