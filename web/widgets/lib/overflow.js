// overflow.js — what is wider than a phone screen: a formula shrinks to fit (down to 70 % of its size), and
// whatever still scrolls sideways (a wide table, a long formula) fades out at the edge where more of it is,
// so a reader sees there is more (data-overflow="right" | "left" | "both"; the fade is in style.js).
//
//   fitOverflow(root)   re-measures every .pe-math and .pe-scroll under root (base.js calls it after a draw)
//
// All writes of a pass come before all its reads (reset sizes, measure, set sizes, measure, set cues): a
// widget with twenty formulas costs two layouts of the page, not forty.

const MIN_SCALE = 0.7;

function cueOf(el) {
  if (el.scrollWidth <= el.clientWidth + 1) return null;
  const atStart = el.scrollLeft <= 1;
  const atEnd = el.scrollLeft + el.clientWidth >= el.scrollWidth - 1;
  return atStart ? 'right' : atEnd ? 'left' : 'both';
}

function setCue(el, cue) {
  if (cue === null) delete el.dataset.overflow;
  else if (el.dataset.overflow !== cue) el.dataset.overflow = cue;
}

function watch(el) {
  if (el._peOverflow) return;
  el._peOverflow = () => setCue(el, cueOf(el));
  el.addEventListener('scroll', el._peOverflow, { passive: true });
}

export function fitOverflow(root) {
  if (!root) return;
  const formulas = [...root.querySelectorAll('.pe-math')];
  for (const el of formulas) el.style.fontSize = '';
  const sizes = formulas.map((el) => [el.clientWidth, el.scrollWidth]);
  formulas.forEach((el, i) => {
    const [cw, sw] = sizes[i];
    if (cw > 0 && sw > cw + 1) el.style.fontSize = `${Math.max(MIN_SCALE, Math.floor((cw / sw) * 100) / 100)}em`;
  });
  const boxes = [...root.querySelectorAll('.pe-scroll, .pe-math')];
  const cues = boxes.map(cueOf);
  boxes.forEach((el, i) => {
    watch(el);
    setCue(el, cues[i]);
  });
}
