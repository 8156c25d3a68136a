// tasks.js — the tiny models' tasks as the widgets feed them (c/model/tasks.c makes the training data).
//
//   copyExample(len, seed)   a copy-task sequence of len + 1 characters and its scored targets
//   lmStream(check)          the LM check set's windows joined back into one text
//   targetsOf(model, text, scored)   { tokens, targets } for model.evaluate
//   argmaxRows(logits, n, V) argmax next-token predictions

import { rng } from './random.js';

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/**
 * A copy-task sequence as c/model/tasks.c describes it: episodes '.' s1..sn '|' s1..sn with n in [1, 16]
 * distinct letters, back to back. Returns { text (len + 1 characters), scored (len flags: position i predicts
 * text[i + 1] and is scored when that is a copied letter or the '.' closing a copy) }.
 */
export function copyExample(len, seed) {
  const r = rng(seed);
  let text = '';
  const scoredNext = []; // per character: is it a scored target?
  while (text.length < len + 1) {
    const n = 1 + Math.floor(r() * 16);
    const pool = LETTERS.split('');
    for (let i = 0; i < n; i++) {
      const j = i + Math.floor(r() * (pool.length - i));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    const word = pool.slice(0, n).join('');
    // '.' closes the previous copy (scored unless this is the first episode)
    scoredNext.push(text.length > 0);
    text += '.';
    for (let i = 0; i < n; i++) scoredNext.push(false);
    text += word;
    scoredNext.push(false);
    text += '|';
    for (let i = 0; i < n; i++) scoredNext.push(true);
    text += word;
  }
  text = text.slice(0, len + 1);
  const scored = new Uint8Array(len);
  for (let i = 0; i < len; i++) scored[i] = scoredNext[i + 1] ? 1 : 0;
  return { text, scored };
}

/** The LM check set (models/lm-check.json): windows that overlap by one character, joined into one text. */
export function lmStream(check) {
  const seqs = check?.sequences ?? [];
  let s = seqs.length ? seqs[0].text : '';
  for (let i = 1; i < seqs.length; i++) {
    const t = seqs[i].text;
    s += s.endsWith(t[0]) ? t.slice(1) : t;
  }
  return s;
}

/** Targets for model.evaluate: text[i + 1] where scored[i] (all positions when scored is null), else −1. */
export function targetsOf(model, text, scored) {
  const ids = model.encode(text);
  const n = ids.length - 1;
  const targets = new Int32Array(n);
  for (let i = 0; i < n; i++) targets[i] = !scored || scored[i] ? ids[i + 1] : -1;
  return { tokens: ids.subarray(0, n), targets };
}

/** Argmax next-token predictions from logits (n, V). */
export function argmaxRows(logits, n, V) {
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0, mx = -Infinity;
    for (let v = 0; v < V; v++) {
      const x = logits[i * V + v];
      if (x > mx) { mx = x; best = v; }
    }
    out[i] = best;
  }
  return out;
}
