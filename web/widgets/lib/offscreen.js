// offscreen.js — keeps the widgets far from the viewport out of a page-wide restyle.
//
//   holdOffscreen()     before a change that restyles the whole page (the language switch sets <html lang>)
//
// Changing <html lang> makes the browser recompute the style of every element of the page (~11,000 on the
// playground, nine in ten of them inside widgets: KaTeX spans, SVG, tables), even where the content carries its
// own lang: ~80–110 ms of main-thread CPU in one task on the build machine. holdOffscreen() gives each widget that
// lies more than a screen away from the viewport `content-visibility: auto`, so the browser skips its subtree's
// style and layout until it nears the viewport again, and then restyles that one widget on its own (in the new
// language, just before the widget relabels itself anyway).
//
// It cannot move the page: the held widget keeps the border-box height it has now, set as its `height` (widgets
// are box-sizing: border-box; a rect height is a whole number of layout units, so it is exact), with its current
// content size as contain-intrinsic-size for the width a flex or grid host might ask of it; and it is held only
// until the browser reports it relevant (contentvisibilityautostatechange, skipped: false), when all three go,
// so it is never clipped, contained or fixed in height while anyone can see it. Content-visibility's
// containment is also why only widgets are held: each has a border and padding, so no child margin collapses
// through it and containment changes nothing around it. Where a browser has no content-visibility events,
// nothing is held.

const supported = () => typeof HTMLElement === 'function' && 'oncontentvisibilityautostatechange' in HTMLElement.prototype;

/**
 * Holds the widgets (`.pe-widget`, outermost ones) under `root` whose box lies more than `margin` px above or
 * below the viewport (default two viewport heights: Chromium counts content-visibility content as relevant from
 * about 1.5 viewports away — measured: a widget 1.33 heights below was relevant, 1.52 below skipped — and one
 * held inside that margin would be released at once). Returns how many it held.
 */
export function holdOffscreen(root = document, margin = 2 * (typeof innerHeight === 'number' ? innerHeight : 800)) {
  if (!supported()) return 0;
  const vh = innerHeight;
  // reads first (one layout, clean before the switch changes anything), then writes
  const far = [];
  for (const el of root.querySelectorAll('.pe-widget')) {
    if (el.hasAttribute('data-pe-held') || el.parentElement?.closest('.pe-widget')) continue;
    const r = el.getBoundingClientRect();
    if (r.height === 0 || (r.bottom > -margin && r.top < vh + margin)) continue;
    const cs = getComputedStyle(el);
    if (cs.display !== 'block' || cs.boxSizing !== 'border-box') continue;
    const px = (p) => parseFloat(cs[p]) || 0;
    const w = r.width - px('paddingLeft') - px('paddingRight') - px('borderLeftWidth') - px('borderRightWidth');
    const h = r.height - px('paddingTop') - px('paddingBottom') - px('borderTopWidth') - px('borderBottomWidth');
    far.push([el, r.height, Math.max(0, w), Math.max(0, h)]);
  }
  for (const [el, height, w, h] of far) {
    // a host page's own inline values of these come back on release
    const before = { height: el.style.height, containIntrinsicSize: el.style.containIntrinsicSize, contentVisibility: el.style.contentVisibility };
    el.dataset.peHeld = '';
    el.style.height = `${height}px`;
    el.style.containIntrinsicSize = `${w}px ${h}px`;
    el.style.contentVisibility = 'auto';
    const release = (e) => {
      if (e.skipped) return;
      el.removeEventListener('contentvisibilityautostatechange', release);
      Object.assign(el.style, before);
      delete el.dataset.peHeld;
    };
    el.addEventListener('contentvisibilityautostatechange', release);
  }
  return far.length;
}
