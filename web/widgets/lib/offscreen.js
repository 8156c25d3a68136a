// offscreen.js — keeps the widgets far from the viewport out of a page-wide restyle.
//
//   holdOffscreen()     before a change that restyles the whole page (the language switch sets <html lang>)
//   releaseHeld(el)     gives a held widget its content back now (base.js: before it renders again)
//
// Changing <html lang> makes the browser recompute the style of every element of the page (~11,000 on the
// playground, nine in ten of them inside widgets: KaTeX spans, SVG, tables), even where the content carries its
// own lang: ~80–110 ms of main-thread CPU in one task on the build machine. holdOffscreen() takes the content of
// each widget that lies more than half a screen from the viewport out of the rendering (its children display:
// none, so the browser neither styles nor lays them out), until the widget nears the viewport again — where it
// relabels itself anyway, so the old-language content is never restyled at all, only thrown away.
//
// Why not `content-visibility: auto` (the first version): a skipped subtree is still styled on demand, and
// Chromium's autofill, ~100 ms after controls were added anywhere (every relabelled widget rebuilds its own),
// asks each form control of the page whether it is focusable, which styles every skipped widget, one after the
// other, in one task (~130 ms of CPU, measured with a Chromium trace). A control under display: none is simply
// not focusable.
//
// It cannot move the page: the held widget keeps the border-box height it has now, set as its `height` (widgets
// are box-sizing: border-box; a rect height is a whole number of layout units, so it is exact). Each widget has a
// border and padding, so no child margin collapses through it and hiding its children changes nothing around
// it. A widget holding keyboard focus is never held.

import { addStyle } from './style.js';

const HELD_CSS = '.pe-widget[data-pe-held] > * { display: none !important; }';
const held = new Map(); // element -> its own inline height before the hold
let io = null;

/** The border-box height a held widget is held at (px), or null when it is not held: read without a layout. */
export function heldHeight(el) {
  return held.has(el) ? parseFloat(el.style.height) : null;
}

/** Gives a held widget its content and its own height back (no-op when it is not held). */
export function releaseHeld(el) {
  if (!held.has(el)) {
    released.add(el);
    return;
  }
  el.style.height = held.get(el);
  held.delete(el);
  delete el.dataset.peHeld;
  if (el.getAttribute('style') === '') el.removeAttribute('style');
  io?.unobserve(el);
}

/**
 * Holds the widgets (`.pe-widget`, outermost ones) under `root` whose box lies more than `margin` px above or
 * below the viewport (default half a viewport height). Each is released when it comes within half a viewport of
 * it, or earlier by releaseHeld() (a widget relabelling itself a screen ahead, base.js). Returns how many it held.
 */
export function holdOffscreen(root = document, margin) {
  return planHold(root, margin)();
}

let snapshot = null; // element -> its rect, read before a switch wrote anything (planHold until its commit)

/** The element's rect: as planHold() read it while a switch is between its reads and its writes, else now. */
export function rectOf(el) {
  return snapshot?.get(el) ?? el.getBoundingClientRect();
}

/**
 * holdOffscreen() in two steps: planHold() reads every widget's box now (layout is clean before a switch), and
 * the function it returns holds the far ones (returns how many). In between, the switch's listeners change
 * the page (text, controls) and ask rectOf() where each widget was, so no one forces a layout of the page
 * the switch has half changed.
 */
// Half a viewport, as the release: a widget held there is out of sight, and one a screen or less away relabels
// (base.js) in the tasks right after the switch, releasing itself first, so its old content is never restyled.
export function planHold(root = document, margin = 0.5 * (typeof innerHeight === 'number' ? innerHeight : 800)) {
  if (typeof IntersectionObserver !== 'function' || typeof document === 'undefined') return () => 0;
  const vh = innerHeight;
  const focused = document.activeElement;
  const far = [];
  const rects = new Map();
  for (const el of root.querySelectorAll('.pe-widget')) {
    const r = el.getBoundingClientRect();
    rects.set(el, r);
    if (held.has(el) || el.parentElement?.closest('.pe-widget') || el.contains(focused)) continue;
    if (r.height === 0 || (r.bottom > -margin && r.top < vh + margin)) continue;
    const cs = getComputedStyle(el);
    if (cs.display !== 'block' || cs.boxSizing !== 'border-box') continue;
    far.push([el, r.height, Math.min(Math.abs(r.top - vh), Math.abs(r.bottom))]);
  }
  snapshot = rects;
  // pending from now: the switch's listeners (<pe-lang-toggle> waits on it for <html lang>) run before commit
  finish(); // a switch before the last one finished holding: its waiters go on
  let done;
  settled = new Promise((ok) => { done = ok; });
  finish = done;
  return () => {
    if (snapshot === rects) snapshot = null;
    addStyle('pe-held', HELD_CSS);
    // A widget waiting to relabel (data-relabel="pending", base.js) is left held: it releases itself in the task
    // that throws its old content away. Released here, in the frame a jump (a link, scrollIntoView) brings it
    // near, its old content would be restyled and laid out (~35 ms for a large widget) only to be replaced next.
    io ??= new IntersectionObserver((entries) => {
      for (const e of entries) if (e.isIntersecting && e.target.dataset.relabel !== 'pending') releaseHeld(e.target);
    }, { rootMargin: '50% 0px' });
    // Taking a widget's content out of the rendering costs the browser ~5 µs an element: held all at once,
    // the playground's ~9,500 would make one long frame; ELEMENTS_A_FRAME at a time, from the nearest out
    far.sort((a, b) => a[2] - b[2]);
    const batches = [];
    let count = Infinity;
    for (const x of far) {
      if (count >= ELEMENTS_A_FRAME) batches.push([]), (count = 0);
      batches.at(-1).push(x);
      count += x[0].getElementsByTagName('*').length;
    }
    const holdBatch = (batch) => {
      for (const [el, height] of batch) {
        if (held.has(el) || !el.isConnected || released.has(el)) continue;
        held.set(el, el.style.height); // a host page's own inline height comes back on release
        el.dataset.peHeld = '';
        el.style.height = `${height}px`;
        io.observe(el);
      }
    };
    released = new WeakSet();
    holdBatch(batches.shift() ?? []);
    if (batches.length && typeof requestAnimationFrame === 'function') {
      const next = () => {
        holdBatch(batches.shift());
        if (batches.length) requestAnimationFrame(next);
        else done();
      };
      requestAnimationFrame(next);
    } else {
      batches.forEach(holdBatch);
      done();
    }
    return far.length;
  };
}

const ELEMENTS_A_FRAME = 1500;
let released = new WeakSet(); // released (or relabelled) before its batch came: not held after all
let settled = Promise.resolve();
let finish = () => {};

/** Resolves once every widget the last hold chose is held (they are held over a few frames). */
export function holdSettled() {
  return settled;
}
