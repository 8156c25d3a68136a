// posenc/url — the same API as 'posenc', loading dist/posenc.simd.wasm / dist/posenc.wasm (and, for the tiny
// models, dist/posenc-model.simd.wasm / dist/posenc-model.wasm, only when one is loaded) by URL instead of
// from inlined base64: WebAssembly.compileStreaming where the engine and the server allow it (application/wasm),
// else fetch + arrayBuffer, else (Node, whose fetch does not read file: URLs) node:fs.
//
//   import { init } from 'posenc/url';
//   const pe = await init();
//
// The URLs are relative to this file, so they resolve inside the installed package; bundlers that understand
// `new URL('...', import.meta.url)` copy the .wasm files as assets.

import { makeInit, compileBytes } from './loader.js';

const SIMD_URL = new URL('../../dist/posenc.simd.wasm', import.meta.url);
const SCALAR_URL = new URL('../../dist/posenc.wasm', import.meta.url);
const MODEL_SIMD_URL = new URL('../../dist/posenc-model.simd.wasm', import.meta.url);
const MODEL_SCALAR_URL = new URL('../../dist/posenc-model.wasm', import.meta.url);

async function readBytes(url) {
  if (url.protocol === 'file:' && typeof process !== 'undefined' && process.versions?.node) {
    const { readFile } = await import('node:fs/promises');
    return new Uint8Array(await readFile(url));
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`posenc: fetching ${url} failed: ${response.status} ${response.statusText}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function compileUrl(url) {
  if (url.protocol !== 'file:' && typeof WebAssembly.compileStreaming === 'function') {
    let response;
    try {
      response = await fetch(url);
    } catch {
      response = null;
    }
    if (response && response.ok) {
      const fallback = response.clone();
      try {
        return await WebAssembly.compileStreaming(response);
      } catch (e) {
        // Wrong MIME type (servers that do not send application/wasm) -> compile from bytes below.
        // A CompileError means the engine rejects the module: report it as it is.
        if (e instanceof WebAssembly.CompileError) throw e;
        return compileBytes(new Uint8Array(await fallback.arrayBuffer()));
      }
    }
  }
  return compileBytes(await readBytes(url));
}

/** See index.js: same behaviour, modules loaded by URL. */
export const init = makeInit({
  simd: () => compileUrl(SIMD_URL),
  scalar: () => compileUrl(SCALAR_URL),
  model: (simd) => compileUrl(simd ? MODEL_SIMD_URL : MODEL_SCALAR_URL),
});

export default init;
