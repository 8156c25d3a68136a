// pe.loadModel / pe.models: the tiny models through the posenc instance, on their own wasm module of the same
// build (loaded on first use), the same numbers as a model API over a separate instance of that module, and
// the library functions still working beside a loaded model. The core module carries no model code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { init as initUrl } from '../../web/src/url.js';
import { compileBytes, decodeBase64, stubImports } from '../../web/src/loader.js';
import { simdWasmBase64, scalarWasmBase64 } from '../../web/src/wasm-inline.js';
import { wasmBase64 as modelSimdBase64 } from '../../web/src/wasm-inline-model-simd.js';
import { wasmBase64 as modelScalarBase64 } from '../../web/src/wasm-inline-model-scalar.js';
import { createModelApi, ModelFileError } from '../../web/src/model.js';

const dir = new URL('../../web/playground/public/models/copy-rope/', import.meta.url);
const bytes = readFileSync(new URL('model.safetensors', dir));
const config = JSON.parse(readFileSync(new URL('config.json', dir), 'utf8'));

const exportNames = (b64) => WebAssembly.Module.exports(new WebAssembly.Module(decodeBase64(b64))).map((e) => e.name);

test('the core modules export no pe_model_* and the model modules export all of them', () => {
  const modelApi = ['pe_model_struct_size', 'pe_model_open', 'pe_model_load', 'pe_model_message', 'pe_model_rope',
    'pe_model_scratch_size', 'pe_model_forward'];
  for (const [name, core, model] of [['simd', simdWasmBase64, modelSimdBase64], ['scalar', scalarWasmBase64, modelScalarBase64]]) {
    const c = exportNames(core);
    assert.deepEqual(c.filter((n) => n.startsWith('pe_model')), [], `${name} core`);
    assert.ok(c.includes('pe_rope_apply') && c.includes('pe_attention'), `${name} core keeps the kernels`);
    const m = exportNames(model);
    for (const f of modelApi) assert.ok(m.includes(f), `${name} model module exports ${f}`);
  }
});

test('pe.loadModel runs on the model module of the same build and matches a separate model API bit for bit', async () => {
  const pe = await init({ simd: true });
  assert.equal(pe.models, pe.models, 'one model API per instance');
  const m = await pe.loadModel(bytes, config);
  const text = '.qwert|qwert.zxc|zxc';
  const a = m.forward(m.encode(text)).logits;

  const module = await compileBytes(decodeBase64(modelSimdBase64));
  const instance = await WebAssembly.instantiate(module, stubImports(module));
  instance.exports._initialize();
  const other = createModelApi(instance).loadModel(bytes, config);
  const b = other.forward(other.encode(text)).logits;
  assert.deepEqual(a, b);
  assert.equal((await pe.models).loadModel(bytes, config).forward(text).logits.length, a.length);

  // the rest of the API keeps working beside the model
  const { cos } = pe.rope({ headDim: 8 }).cosSin([1]);
  assert.ok(Math.abs(cos[0] - Math.cos(1)) < 1e-7);
  m.free();
  other.free();
});

test('pe.loadModel on the scalar build and through posenc/url gives the scalar module\'s logits', async () => {
  const text = '.abc|abc.';
  const module = await compileBytes(decodeBase64(modelScalarBase64));
  const instance = await WebAssembly.instantiate(module, stubImports(module));
  instance.exports._initialize();
  const want = createModelApi(instance).loadModel(bytes, config).forward(text).logits;
  for (const pe of [await init({ simd: false }), await initUrl({ simd: false })]) {
    const m = await pe.loadModel(bytes, config);
    assert.deepEqual(m.forward(text).logits, want);
    m.free();
  }
});

test('pe.loadModel rejects a malformed file with ModelFileError', async () => {
  const pe = await init({ simd: false });
  await assert.rejects(pe.loadModel(bytes.subarray(0, bytes.length - 7), config), ModelFileError);
  await assert.rejects(pe.loadModel(new Uint8Array(5), config), /file too short/);
  assert.ok(pe.alibiSlopes(4)[0] === 0.25, 'instance still works');
});

test('pe.fetchModel fetches config.json and the weights it names', async () => {
  const pe = await init();
  const seen = [];
  const fetch = async (url) => {
    seen.push(url);
    const body = url.endsWith('config.json') ? JSON.stringify(config) : bytes;
    return new Response(body, { status: 200 });
  };
  const m = await pe.fetchModel('https://example.test/models/copy-rope', { fetch });
  assert.deepEqual(seen, ['https://example.test/models/copy-rope/config.json', 'https://example.test/models/copy-rope/model.safetensors']);
  assert.equal(m.decode(m.encode('.ab|ab.')), '.ab|ab.');
  m.free();
});
