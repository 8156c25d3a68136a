// posenc — position encodings for transformers, over a C core compiled to WebAssembly (SIMD128 and scalar).
//
//   import { init } from 'posenc';
//   const pe = await init();                        // cached; SIMD build if the engine runs it correctly
//   const rope = pe.rope({ headDim: 64, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1,
//                                                 highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } });
//   rope.apply(q, { shape: [batch, seq, heads, 64], layout: 'bshd', positions });
//   const { out } = pe.attention(q, k, v, { shape: { batch, heads, kvHeads, qLen, kLen, headDim: 64 }, rope,
//                                          causal: true });          // or alibi: true; returnWeights: true
//   pe.sinusoidal(seqLen, dModel); pe.sinusoidal.add(x, { shape: [batch, seq, dModel] });
//   pe.learned(table, { dModel, offset: 2 }).add(x, { shape, positions }); pe.alibiSlopes(nHeads);
//
// This entry carries both core wasm builds inlined (base64), so bundlers and a plain <script type="module">
// need no configuration. The tiny models (pe.loadModel / pe.fetchModel) are their own wasm module, inlined in
// their own files and imported only when a model is first loaded; ModelFileError and parseSafetensors come
// from 'posenc/model'. 'posenc/url' is the same API loading dist/*.wasm by URL with streaming compilation.
// The API's shape is declared in index.d.ts (and model.d.ts).

import { simdWasmBase64, scalarWasmBase64 } from './wasm-inline.js';
import { makeInit, compileBytes, decodeBase64 } from './loader.js';

/**
 * Loads posenc. init() picks the SIMD build when the engine validates it and a check computation gives the
 * right numbers, else the scalar build; init({ simd: false }) forces scalar, init({ simd: true }) forces SIMD
 * (and throws if the engine cannot run it). Cached: the same build returns the same object.
 */
export const init = makeInit({
  simd: () => compileBytes(decodeBase64(simdWasmBase64)),
  scalar: () => compileBytes(decodeBase64(scalarWasmBase64)),
  model: async (simd) => {
    const { wasmBase64 } = await (simd ? import('./wasm-inline-model-simd.js') : import('./wasm-inline-model-scalar.js'));
    return compileBytes(decodeBase64(wasmBase64));
  },
});

export default init;
