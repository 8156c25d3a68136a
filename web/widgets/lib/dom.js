// dom.js — building elements.
//
//   h('div', { class: 'x', onclick: fn }, child, 'text')   an HTML element (h('svg:circle', …) an SVG one)
//   svg('circle', { r: 4 })                                  an SVG element

/**
 * h('div', { class: 'x', onclick: fn, 'aria-label': '…', style: { width: '3px' } }, child, 'text', [more])
 * Attributes: on* are listeners; class/className; style object or string; boolean true -> empty attribute;
 * false/null/undefined -> omitted; dataset via data-*. Children: nodes, strings, numbers, arrays, null.
 */
export function h(tag, attrs = {}, ...children) {
  const el = tag.includes(':') ? document.createElementNS('http://www.w3.org/2000/svg', tag.split(':')[1]) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class' || k === 'className') el.setAttribute('class', v);
    else if (k === 'style' && typeof v === 'object') Object.assign(el.style, v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function svg(tag, attrs = {}, ...children) {
  return h(`svg:${tag}`, attrs, ...children);
}
