// eval-worker.js — a Web Worker that runs tiny-model evaluations off the page's main thread (lib/evaluate.js
// starts it). It loads posenc itself (the same build the page asked for) and each model once, from the bytes
// and config.json the page already fetched.
//   in:  { id, simd, name, config, bytes? (first time per model), tokens, targets, ropeScaling }
//   out: { id, result: { lossSum, correct, count, … } } or { id, error: { name, message } }
import { init } from '../../src/index.js';

let pePromise = null;
const models = new Map();

self.onmessage = async (e) => {
  const { id, simd, name, config, bytes, tokens, targets, ropeScaling } = e.data;
  try {
    pePromise ??= simd === undefined ? init() : init({ simd });
    const pe = await pePromise;
    if (!models.has(name)) {
      if (!bytes) throw new Error(`eval worker: no weights for ${name}`);
      models.set(name, await pe.loadModel(bytes, config));
    }
    const result = models.get(name).evaluate(tokens, { targets, ropeScaling });
    self.postMessage({ id, result });
  } catch (err) {
    self.postMessage({ id, error: { name: err?.name ?? 'Error', message: err?.message ?? String(err) } });
  }
};
