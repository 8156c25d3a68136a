// eval-worker.js — a Web Worker that runs tiny-model work off the page's main thread (lib/evaluate.js starts
// it). It loads posenc itself (the same build the page asked for) and each model once, from the bytes and
// config.json the page already fetched.
//   in:  { id, op: 'evaluate' | 'generate', simd, name, config, bytes? (first time per model), ...op's fields }
//        evaluate: tokens, targets, ropeScaling          generate: text, steps, maxLen, ropeScaling
//   out: { id, progress: { done, text } } after each generated character (generate only), then
//        { id, result } (evaluate: { lossSum, correct, count, … }; generate: { text }) or { id, error: { name, message } }
import { init } from '../../src/index.js';
import { generateText } from './generate.js';

let pePromise = null;
const models = new Map();

self.onmessage = async (e) => {
  const { id, op = 'evaluate', simd, name, config, bytes } = e.data;
  try {
    pePromise ??= simd === undefined ? init() : init({ simd });
    const pe = await pePromise;
    if (!models.has(name)) {
      if (!bytes) throw new Error(`eval worker: no weights for ${name}`);
      models.set(name, await pe.loadModel(bytes, config));
    }
    const model = models.get(name);
    let result;
    if (op === 'generate') {
      const { text, steps, maxLen, ropeScaling } = e.data;
      result = { text: generateText(model, text, { steps, maxLen, ropeScaling, onStep: (done, t) => self.postMessage({ id, progress: { done, text: t } }) }) };
    } else {
      const { tokens, targets, ropeScaling } = e.data;
      result = model.evaluate(tokens, { targets, ropeScaling });
    }
    self.postMessage({ id, result });
  } catch (err) {
    self.postMessage({ id, error: { name: err?.name ?? 'Error', message: err?.message ?? String(err) } });
  }
};
