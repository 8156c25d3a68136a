// overflow.js — what is wider than a phone screen: a formula shrinks to fit (down to 70 % of its size), and
// whatever still scrolls sideways (a wide table, a long formula) fades out at the edge where more of it is,
// so a reader sees there is more (data-overflow="right" | "left" | "both"; the fade is in style.js).
//
//   fitOverflow(root)   re-measures every .pe-math and .pe-scroll under root (base.js calls it after a draw)

const MIN_SCALE = 0.7;

function fitFormula(el) {
  el.style.fontSize = '';
  const cw = el.clientWidth, sw = el.scrollWidth;
  if (cw > 0 && sw > cw + 1) el.style.fontSize = `${Math.max(MIN_SCALE, Math.floor((cw / sw) * 100) / 100)}em`;
}

function cue(el) {
  const update = () => {
    if (el.scrollWidth <= el.clientWidth + 1) {
      delete el.dataset.overflow;
      return;
    }
    const atStart = el.scrollLeft <= 1;
    const atEnd = el.scrollLeft + el.clientWidth >= el.scrollWidth - 1;
    el.dataset.overflow = atStart ? 'right' : atEnd ? 'left' : 'both';
  };
  if (!el._peOverflow) {
    el._peOverflow = update;
    el.addEventListener('scroll', update, { passive: true });
  }
  update();
}

export function fitOverflow(root) {
  if (!root) return;
  for (const el of root.querySelectorAll('.pe-math')) fitFormula(el);
  for (const el of root.querySelectorAll('.pe-scroll, .pe-math')) cue(el);
}
