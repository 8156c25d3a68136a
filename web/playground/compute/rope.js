// Turns the playground's settings into RoPE tables, computing only through the posenc API.
import { init } from '../../src/index.js';

/** Original context length the scaled presets pretend the model was trained with. */
export const ORIGINAL_CONTEXT = 128;

/** Extra pe.rope() options for each preset in the scaling menu. */
const PRESETS = {
  default: {},
  linear: { scaling: { type: 'linear', factor: 4 } },
  dynamic: { maxPositionEmbeddings: ORIGINAL_CONTEXT, scaling: { type: 'dynamic', factor: 4 } },
  yarn: { scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: ORIGINAL_CONTEXT } },
  llama3: { scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4,
    originalMaxPositionEmbeddings: ORIGINAL_CONTEXT } },
};

let pePromise;
/** The initialised API (cached). */
export function api() {
  pePromise ??= init();
  return pePromise;
}

/**
 * @param {{ headDim: number, base: number, scaling: keyof typeof PRESETS, positions: number }} s
 * @returns {Promise<{ cos: Float32Array, sin: Float32Array, nPositions: number, nFreq: number,
 *   attentionScaling: number, simd: boolean }>}
 */
export async function ropeTables(s) {
  const pe = await api();
  const rope = pe.rope({ headDim: s.headDim, base: s.base, ...PRESETS[s.scaling] });
  const positions = Int32Array.from({ length: s.positions }, (_, p) => p);
  const { cos, sin } = rope.cosSin(positions);
  return {
    cos, sin,
    nPositions: s.positions,
    nFreq: cos.length / s.positions,
    attentionScaling: rope.attentionScaling(s.positions),
    simd: pe.simd,
  };
}
