// evaluate.js — model.evaluate() and greedy generation in a Web Worker (lib/eval-worker.js), so a long run
// (the LM extrapolation sweep, the lab's Generate) leaves the page responsive; on the main thread where a
// worker cannot start (a page that embeds the widgets from another origin may not start one from their URL)
// or fails.
//
//   const r = await evaluateOffThread(el, name, model, tokens, { targets, ropeScaling })
//   const t = await generateOffThread(el, name, model, text, { steps, maxLen, ropeScaling, onStep(done, text) })
//   // el: the widget (its modelConfig / modelFile and simd choice); model: the same model loaded on the page
import { generateText } from './generate.js';

let worker = null;
let broken = false;
let nextId = 0;
const pending = new Map();
const sent = new Set();

function startWorker() {
  if (worker || broken) return worker;
  try {
    worker = new Worker(new URL('./eval-worker.js', import.meta.url), { type: 'module' });
  } catch {
    broken = true;
    return null;
  }
  worker.onmessage = (e) => {
    const p = pending.get(e.data.id);
    if (!p) return;
    if (e.data.progress) {
      p.onProgress?.(e.data.progress);
      return;
    }
    pending.delete(e.data.id);
    if (e.data.error) p.reject(Object.assign(new Error(e.data.error.message), { name: e.data.error.name }));
    else p.resolve(e.data.result);
  };
  worker.onerror = (e) => {
    e.preventDefault?.();
    broken = true;
    worker?.terminate();
    worker = null;
    for (const p of pending.values()) p.fallback();
    pending.clear();
  };
  return worker;
}

async function offThread(el, name, onPage, message, onProgress) {
  const w = typeof Worker === 'function' ? startWorker() : null;
  if (!w) return onPage();
  const key = `${el.pe?.simd}|${name}`;
  const first = !sent.has(key);
  const [config, bytes] = first ? await Promise.all([el.modelConfig(name), el.modelFile(name)]) : [undefined, undefined];
  sent.add(key);
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject, onProgress, fallback: () => { try { resolve(onPage()); } catch (err) { reject(err); } } });
    w.postMessage({ id, simd: el.pe?.simd, name: key, config, bytes: bytes?.slice(), ...message });
  });
}

export function evaluateOffThread(el, name, model, tokens, options) {
  return offThread(el, name, () => model.evaluate(tokens, options),
    { op: 'evaluate', tokens, targets: options.targets, ropeScaling: options.ropeScaling });
}

/** Greedy generation off the page; resolves to the new text. onStep(done, text) after each character. */
export async function generateOffThread(el, name, model, text, { steps, maxLen, ropeScaling, onStep } = {}) {
  const r = await offThread(el, name, () => ({ text: generateText(model, text, { steps, maxLen, ropeScaling, onStep }) }),
    { op: 'generate', text, steps, maxLen, ropeScaling }, (p) => onStep?.(p.done, p.text));
  return r.text;
}

/** True once a run has used the worker (tests read it). */
export const workerInUse = () => !!worker && !broken;
