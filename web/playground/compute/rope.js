// Turns the playground's settings into RoPE tables, computing only through the posenc API.
import { init } from '../../src/index.js';

/** Original context length the scaled presets pretend the model was trained with. */
export const ORIGINAL_CONTEXT = 128;

/** The `scaling` option of pe.rope() for each preset in the scaling menu. */
const SCALING = {
  default: undefined,
  linear: { type: 'linear', factor: 4 },
  dynamic: { type: 'dynamic', factor: 4, maxPositionEmbeddings: ORIGINAL_CONTEXT },
  yarn: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: ORIGINAL_CONTEXT },
  llama3: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4,
    originalMaxPositionEmbeddings: ORIGINAL_CONTEXT },
};

let pePromise;
/** The initialised API (cached). */
export function api() {
  pePromise ??= init();
  return pePromise;
}

/**
 * @param {{ headDim: number, base: number, scaling: keyof typeof SCALING, positions: number }} s
 * @returns {Promise<{ cos: Float32Array, sin: Float32Array, nPositions: number, nFreq: number,
 *   attentionScaling: number, simd: boolean }>}
 */
export async function ropeTables(s) {
  const pe = await api();
  const rope = pe.rope({ headDim: s.headDim, base: s.base, scaling: SCALING[s.scaling] });
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
