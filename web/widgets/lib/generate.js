// generate.js — greedy generation with a tiny model: append the most likely next character, `steps` times or
// until the text holds maxLen characters. Used by lib/eval-worker.js (off the page) and by <pe-attention>
// where no worker can start. onStep(done, text) after each character.
import { argmaxRows } from './tasks.js';

export function generateText(model, text, { steps, maxLen, ropeScaling, onStep } = {}) {
  let t = text;
  const V = model.vocabSize;
  for (let k = 0; k < steps && [...t].length < maxLen; k++) {
    const ids = model.encode(t);
    const { logits } = model.forward(ids, { ropeScaling });
    t += model.vocab[argmaxRows(logits.subarray((ids.length - 1) * V), 1, V)[0]];
    onStep?.(k + 1, t);
  }
  return t;
}
