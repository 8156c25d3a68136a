// pe.loadModel / pe.models: the tiny models on the posenc instance itself, the same numbers as a separate
// model API over its own instance, and the library functions still working beside a loaded model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, ModelFileError } from '../../web/src/index.js';
import { compileBytes, decodeBase64, stubImports } from '../../web/src/loader.js';
import { simdWasmBase64 } from '../../web/src/wasm-inline.js';
import { createModelApi } from '../../web/src/model.js';

const dir = new URL('../../web/playground/public/models/copy-rope/', import.meta.url);
const bytes = readFileSync(new URL('model.safetensors', dir));
const config = JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));

test('pe.loadModel runs on the same instance and matches a separate model API bit for bit', async () => {
  const pe = await init({ simd: true });
  assert.equal(pe.models, pe.models, 'one model API per instance');
  const m = pe.loadModel(bytes, config);
  const text = '.qwert|qwert.zxc|zxc';
  const a = m.forward(m.encode(text)).logits;

  const module = await compileBytes(decodeBase64(simdWasmBase64));
  const instance = await WebAssembly.instantiate(module, stubImports(module));
  instance.exports._initialize();
  const other = createModelApi(instance).loadModel(bytes, config);
  const b = other.forward(other.encode(text)).logits;
  assert.deepEqual(a, b);

  // the rest of the API keeps working beside the model, in the same memory
  const { cos } = pe.rope({ headDim: 8 }).cosSin([1]);
  assert.ok(Math.abs(cos[0] - Math.cos(1)) < 1e-7);
  m.free();
  other.free();
});

test('pe.loadModel rejects a malformed file with ModelFileError', async () => {
  const pe = await init({ simd: false });
  assert.throws(() => pe.loadModel(bytes.subarray(0, bytes.length - 7), config), ModelFileError);
  assert.throws(() => pe.loadModel(new Uint8Array(5), config), /file too short/);
  assert.ok(pe.alibiSlopes(4)[0] === 0.25, 'instance still works');
});
