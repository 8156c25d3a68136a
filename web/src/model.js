// model.js — the playground's tiny transformers (c/model/model.c) from JS: the file checks of model-file.js
// (safetensors, config.json) and a thin wrapper over the wasm forward
// (pe_model_open / pe_model_load / pe_model_forward / pe_model_rope) of the tiny-model module
// (dist/posenc-model*.wasm). Published as 'posenc/model'; the core entry imports it only when a model is loaded.
//
//   const pe = await init();
//   const m = await pe.loadModel(safetensorsBytes, configJson);   // or await pe.fetchModel('/models/copy-rope/')
//   import { ModelFileError, parseSafetensors } from 'posenc/model';
//   const models = createModelApi(instance);            // a WebAssembly.Instance of the model module, or its exports
//   const { logits, attention } = m.forward(m.encode('.abc|ab'), { attention: true });
//   m.evaluate(tokens)                                  // { loss, accuracy, count } on next-token targets
//   m.forward(tokens, { ropeScaling: { type: 'yarn', factor: 4 } })   // RoPE models: inference-time scaling
//   m.free();
//
// Shapes: logits (seqLen, vocabSize); attention (layers, heads, seqLen, seqLen), softmax rows, zero above the
// diagonal. Every error names what is wrong: ModelFileError for a malformed / truncated / mismatched file,
// TypeError for a wrong argument type, RangeError for a value out of range.

import { Heap } from './memory.js';
import { describe, checkOptions, checkKnownKeys } from './errors.js';
import { ModelFileError, parseSafetensors, checkConfig, toBytes } from './model-file.js';

export { ModelFileError, parseSafetensors, readTensor, checkConfig, POSITION_ENCODINGS } from './model-file.js';

// A wasm32 memory holds at most 2^32 bytes (and build.sh sets -sMAXIMUM_MEMORY=4GB): a block that size or
// larger cannot exist, and its size would wrap when passed to malloc as a 32-bit size_t.
const WASM_MAX_BYTES = 2 ** 32;
const MAX_SEQ_LEN = 2 ** 31 - 1; // pe_model_forward's seq_len is an int32

export const ROPE_SCALINGS = Object.freeze(['trained', 'linear', 'ntk', 'dynamic', 'yarn']); // pe_model_rope_scaling
const PE_OK = 0;

// ---- wasm memory: memory.js's Heap over the model module's exports, the one way this file touches it ----------

/**
 * A block of `bytes` bytes (a Number, exact far past 2^32) for `what`, refused with a RangeError naming the
 * 4 GiB bound before malloc sees a size it would wrap. heap.malloc throws a RangeError when memory runs out.
 */
function allocate(heap, bytes, where, what) {
  checkBytes(bytes, where, what);
  return heap.malloc(bytes, where, what);
}
function checkBytes(bytes, where, what) {
  if (!(bytes < WASM_MAX_BYTES)) {
    throw new RangeError(`${where}: ${what} need ${bytes} bytes, more than the ${WASM_MAX_BYTES} bytes (4 GiB) a wasm memory can hold`);
  }
}
const readU32 = (heap, ptr) => heap.i32[ptr >>> 2] >>> 0; // a size_t out-parameter (wasm32: 32 bits)


function exportsOf(x) {
  if (x && x.exports && x.exports.memory) return x.exports; // WebAssembly.Instance or { exports }
  if (x && x.memory) return x;
  throw new TypeError(`createModelApi: expected a WebAssembly.Instance or its exports, got ${describe(x)}`);
}

const REQUIRED = ['memory', 'malloc', 'free', 'pe_model_struct_size', 'pe_model_open', 'pe_model_load', 'pe_model_message',
  'pe_model_rope', 'pe_model_scratch_size', 'pe_model_forward', 'pe_model_forward_qk', 'pe_abi_rope_config_layout', 'pe_status_string'];

/**
 * The model API over one instantiated posenc wasm module: { loadModel, fetchModel, parseSafetensors,
 * checkConfig, ModelFileError }. Each model owns its wasm memory until model.free().
 */
export function createModelApi(instance) {
  const ex = exportsOf(instance);
  for (const name of REQUIRED) {
    if (typeof ex[name] !== 'function' && !(name === 'memory' && ex.memory)) {
      throw new Error(`posenc: the wasm module does not export ${name} (is this the tiny-model module, dist/posenc-model*.wasm?)`);
    }
  }
  const heap = new Heap(ex);
  const outPtr = heap.malloc(8); // out-parameters (a count, a size_t), for the life of the instance
  const layout = ex.pe_abi_rope_config_layout(outPtr) >>> 0;
  const ropeSize = heap.i32[(layout >>> 2) + heap.i32[outPtr >>> 2] - 1]; // last entry: sizeof(pe_rope)
  const modelSize = ex.pe_model_struct_size() >>> 0;
  const message = (m) => heap.cString(ex.pe_model_message(m) >>> 0);

  function loadModel(bytes, config) {
    const file = toBytes(bytes, 'loadModel');
    const parsed = parseSafetensors(file); // JS-side checks and messages first
    const info = checkConfig(config, parsed.metadata);
    for (const [name, t] of parsed.tensors) {
      if (t.dtype !== 'F32') throw new ModelFileError(`safetensors: tensor '${name}': dtype ${t.dtype}, only F32 is supported`);
    }
    const m = heap.malloc(modelSize);
    let filePtr = 0, weights = 0;
    try {
      filePtr = allocate(heap, file.length, 'loadModel', 'the file');
      heap.u8.set(file, filePtr);
      let st = ex.pe_model_open(m, outPtr, filePtr, file.length);
      if (st !== PE_OK) throw new ModelFileError(message(m));
      const nWeights = readU32(heap, outPtr);
      weights = allocate(heap, nWeights * 4, 'loadModel', `the ${nWeights} weights`);
      st = ex.pe_model_load(m, weights, nWeights, filePtr, file.length);
      if (st !== PE_OK) throw new ModelFileError(message(m));
    } catch (e) {
      heap.free(weights);
      heap.free(m);
      throw e;
    } finally {
      heap.free(filePtr);
    }
    return new TinyModel(ex, { heap, m, weights, ropeSize, outPtr, message, info, metadata: parsed.metadata });
  }

  /**
   * Fetches `${baseUrl}/config.json` and the weights it names (default model.safetensors) and loads them.
   * baseUrl: a directory URL such as '/models/copy-rope/'.
   */
  async function fetchModel(baseUrl, options) {
    const o = checkOptions('fetchModel', 'options', options);
    checkKnownKeys('fetchModel', 'options', o, ['fetch']);
    const f = o.fetch ?? globalThis.fetch;
    if (typeof f !== 'function') throw new TypeError(`fetchModel: options.fetch must be a function, got ${describe(f)}`);
    if (typeof baseUrl !== 'string' && !(baseUrl instanceof URL)) throw new TypeError(`fetchModel: baseUrl must be a string or URL, got ${describe(baseUrl)}`);
    const base = String(baseUrl).endsWith('/') ? String(baseUrl) : `${baseUrl}/`;
    const get = async (name) => {
      const r = await f(base + name);
      if (!r.ok) throw new ModelFileError(`${base + name}: HTTP ${r.status}`);
      return r;
    };
    const config = await (await get('config.json')).json();
    const weightsName = config?.posenc?.weights ?? 'model.safetensors';
    const bytes = new Uint8Array(await (await get(weightsName)).arrayBuffer());
    return loadModel(bytes, config);
  }

  return Object.freeze({ loadModel, fetchModel, parseSafetensors, checkConfig, ModelFileError });
}

/** One loaded model. Not thread-safe; keep using it from the thread that made it. */
export class TinyModel {
  #ex;
  #p; // pointers and helpers
  // Blocks kept between calls; they only grow. A block is recorded only once malloc has returned it, so a
  // refused or failed size leaves { 0, 0 } and the next call allocates afresh.
  #scratch = { ptr: 0, bytes: 0 };
  #buf = { ptr: 0, bytes: 0 };
  #rope = 0;
  #freed = false;

  constructor(ex, p) {
    this.#ex = ex;
    this.#p = p;
    const i = p.info;
    this.vocabSize = i.vocabSize;
    this.hiddenSize = i.hiddenSize;
    this.numLayers = i.numLayers;
    this.numHeads = i.numHeads;
    this.maxPositionEmbeddings = i.maxPositionEmbeddings;
    this.positionEncoding = i.positionEncoding;
    this.vocab = i.vocab;
    this.task = i.task;
    this.config = i.config;
    this.metadata = p.metadata;
    Object.freeze(this.metadata);
  }

  #alive(where) {
    if (this.#freed) throw new Error(`${where}: the model was freed`);
  }

  /** Text to token ids through the vocabulary string (one character per token). */
  encode(text) {
    if (typeof text !== 'string') throw new TypeError(`encode: text must be a string, got ${describe(text)}`);
    if (!this.vocab) throw new Error('encode: this model has no vocabulary (config.json lacks posenc.vocab)');
    const chars = [...text];
    const out = new Int32Array(chars.length);
    for (let i = 0; i < chars.length; i++) {
      const id = this.vocab.indexOf(chars[i]);
      if (id < 0) throw new RangeError(`encode: character ${JSON.stringify(chars[i])} at index ${i} is not in the vocabulary ${JSON.stringify(this.vocab)}`);
      out[i] = id;
    }
    return out;
  }

  /** Token ids to text. */
  decode(tokens) {
    if (!this.vocab) throw new Error('decode: this model has no vocabulary (config.json lacks posenc.vocab)');
    let s = '';
    for (const t of tokens) {
      if (!Number.isInteger(t) || t < 0 || t >= this.vocabSize) throw new RangeError(`decode: token ids must be integers in [0, ${this.vocabSize - 1}], got ${describe(t)}`);
      s += this.vocab[t];
    }
    return s;
  }

  /**
   * The token ids as a new Int32Array: the length is read once and each element once (a Proxy or getter that
   * changes between reads cannot make the copy disagree with what was checked).
   */
  #tokens(tokens, where) {
    if (typeof tokens === 'string') return this.encode(tokens);
    if (!Array.isArray(tokens) && !ArrayBuffer.isView(tokens)) {
      throw new TypeError(`${where}: tokens must be an Int32Array, an array of token ids or a string, got ${describe(tokens)}`);
    }
    const n = tokens.length;
    if (!Number.isSafeInteger(n) || n < 1 || n > MAX_SEQ_LEN) {
      throw new RangeError(`${where}: tokens must hold at least 1 token and at most ${MAX_SEQ_LEN}, got ${describe(n)}`);
    }
    if (this.positionEncoding === 'learned' && n > this.maxPositionEmbeddings) {
      throw new RangeError(`${where}: a learned-position model reads at most max_position_embeddings = ${this.maxPositionEmbeddings} tokens, got ${n}`);
    }
    const out = new Int32Array(n);
    const V = this.vocabSize;
    for (let i = 0; i < n; i++) {
      const v = tokens[i];
      if (typeof v !== 'number') throw new TypeError(`${where}: token ids must be numbers, got ${describe(v)} at index ${i}`);
      if (!(Number.isInteger(v) && v >= 0 && v < V)) {
        throw new RangeError(`${where}: token ids must be integers in [0, ${V - 1}], got ${describe(v)} at index ${i}`);
      }
      out[i] = v;
    }
    return out;
  }

  #ropeFor(scaling, where) {
    if (scaling == null) return 0;
    if (this.positionEncoding !== 'rope') throw new RangeError(`${where}: ropeScaling applies to RoPE models; this one uses ${this.positionEncoding}`);
    if (typeof scaling !== 'object') throw new TypeError(`${where}: ropeScaling must be { type, factor }, got ${describe(scaling)}`);
    scaling = checkOptions(where, 'ropeScaling', scaling);
    checkKnownKeys(where, 'ropeScaling', scaling, ['type', 'factor']);
    const type = ROPE_SCALINGS.indexOf(scaling.type);
    if (type < 0) throw new RangeError(`${where}: ropeScaling.type must be one of ${ROPE_SCALINGS.join(', ')}, got ${describe(scaling.type)}`);
    const factor = scaling.factor ?? 1;
    if (typeof factor !== 'number' || !(factor > 0) || !Number.isFinite(factor)) {
      throw new RangeError(`${where}: ropeScaling.factor must be a finite number > 0, got ${describe(scaling.factor)}`);
    }
    const ex = this.#ex;
    if (!this.#rope) this.#rope = this.#p.heap.malloc(this.#p.ropeSize);
    const st = ex.pe_model_rope(this.#rope, this.#p.m, type, factor);
    if (st !== PE_OK) {
      // e.g. a linear factor below ~1/2 pushes a frequency past PE_ROPE_MAX_INV_FREQ (posenc.h)
      throw new RangeError(`${where}: ropeScaling ${scaling.type} x ${factor} is refused: ${this.#p.heap.cString(ex.pe_status_string(st) >>> 0)}`);
    }
    return this.#rope;
  }

  /**
   * Runs the model on tokens at positions 0 .. n-1. options.attention: also return the attention weights;
   * options.ropeScaling: { type: 'linear' | 'ntk' | 'dynamic' | 'yarn' | 'trained', factor } (RoPE models).
   * options.qk: also return each layer's query and key projections before RoPE turns them (pe_model_forward_qk),
   * q and k: Float32Array(layers * n * heads * headDim), row-major in that order.
   * Returns { logits: Float32Array(n * vocabSize), attention?: Float32Array(layers * heads * n * n), q?, k?, seqLen, vocabSize }.
   */
  forward(tokens, options) {
    this.#alive('forward');
    options = checkOptions('forward', 'options', options);
    checkKnownKeys('forward', 'options', options, ['attention', 'qk', 'ropeScaling']);
    const toks = this.#tokens(tokens, 'forward');
    const n = toks.length;
    const ex = this.#ex;
    const { heap, m, outPtr } = this.#p;
    const wantAttention = !!options.attention;
    const V = this.vocabSize;
    // Every size is known and checked before anything is allocated. Byte counts are Numbers (exact to 2^53),
    // so n * n * layers * heads cannot wrap; the C side refuses a scratch size that does not fit its size_t.
    const attnFloats = wantAttention ? this.numLayers * this.numHeads * n * n : 0;
    const wantQk = !!options.qk;
    const qkFloats = wantQk ? this.numLayers * n * this.hiddenSize : 0;
    const bufBytes = 4 * (n + n * V + attnFloats + 2 * qkFloats); // one block: tokens | logits | attention | q | k
    const extra = [wantAttention && 'attention weights', wantQk && 'queries and keys'].filter(Boolean);
    const what = `${n} tokens' ids, logits${extra.length ? ` and ${extra.join(' and ')}` : ''}`;
    checkBytes(bufBytes, 'forward', what);
    if (ex.pe_model_scratch_size(outPtr, m, n) !== PE_OK) throw new RangeError(`forward: ${this.#p.message(m)}`);
    const scratchBytes = 4 * readU32(heap, outPtr);
    const rope = this.#ropeFor(options.ropeScaling, 'forward');
    this.#reserve(this.#scratch, scratchBytes, `the scratch for ${n} tokens`);
    this.#reserve(this.#buf, bufBytes, what);
    const tokPtr = this.#buf.ptr, logitsPtr = tokPtr + 4 * n, attnPtr = wantAttention ? logitsPtr + 4 * n * V : 0;
    heap.i32.set(toks, tokPtr >>> 2);
    const qPtr = wantQk ? logitsPtr + 4 * (n * V + attnFloats) : 0, kPtr = wantQk ? qPtr + 4 * qkFloats : 0;
    const st = wantQk
      ? ex.pe_model_forward_qk(m, logitsPtr, attnPtr, qPtr, kPtr, tokPtr, n, rope, this.#scratch.ptr, scratchBytes / 4)
      : ex.pe_model_forward(m, logitsPtr, attnPtr, tokPtr, n, rope, this.#scratch.ptr, scratchBytes / 4);
    if (st !== PE_OK) throw new RangeError(`forward: ${this.#p.message(m) || `status ${st}`}`);
    const f32 = heap.f32;
    const out = { logits: f32.slice(logitsPtr >>> 2, (logitsPtr >>> 2) + n * V), seqLen: n, vocabSize: V };
    if (wantAttention) out.attention = f32.slice(attnPtr >>> 2, (attnPtr >>> 2) + attnFloats);
    if (wantQk) {
      out.q = f32.slice(qPtr >>> 2, (qPtr >>> 2) + qkFloats);
      out.k = f32.slice(kPtr >>> 2, (kPtr >>> 2) + qkFloats);
    }
    return out;
  }

  /** Grows a kept block to at least `bytes`; on failure the block is left empty, never with a stale size. */
  #reserve(block, bytes, what) {
    if (block.bytes >= bytes) return;
    const heap = this.#p.heap;
    heap.free(block.ptr);
    block.ptr = 0;
    block.bytes = 0;
    block.ptr = allocate(heap, bytes, 'forward', what);
    block.bytes = bytes;
  }

  /**
   * Mean cross-entropy (nats) and argmax accuracy of next-token predictions. targets: (n,) with -1 for
   * unscored positions; default: tokens[i + 1] for i < n - 1. Returns { loss, accuracy, count, lossSum, correct }.
   */
  evaluate(tokens, options) {
    options = checkOptions('evaluate', 'options', options);
    checkKnownKeys('evaluate', 'options', options, ['targets', 'ropeScaling']);
    const toks = this.#tokens(tokens, 'evaluate');
    const n = toks.length;
    let targets = options.targets;
    if (targets == null) {
      targets = new Int32Array(n).fill(-1);
      for (let i = 0; i + 1 < n; i++) targets[i] = toks[i + 1];
    } else if (targets.length !== n) {
      throw new RangeError(`evaluate: targets must have the tokens' length ${n}, got ${targets.length}`);
    }
    const { logits } = this.forward(toks, { ropeScaling: options.ropeScaling });
    const V = this.vocabSize;
    let lossSum = 0, correct = 0, count = 0;
    for (let i = 0; i < n; i++) {
      const y = targets[i];
      if (y < 0) continue;
      if (!(y < V) || !Number.isInteger(y)) throw new RangeError(`evaluate: targets must be -1 or integers in [0, ${V - 1}], got ${describe(y)} at index ${i}`);
      let mx = -Infinity, am = 0;
      for (let v = 0; v < V; v++) {
        const l = logits[i * V + v];
        if (l > mx) { mx = l; am = v; }
      }
      let se = 0;
      for (let v = 0; v < V; v++) se += Math.exp(logits[i * V + v] - mx);
      lossSum += mx + Math.log(se) - logits[i * V + y];
      correct += am === y ? 1 : 0;
      count++;
    }
    return { loss: count ? lossSum / count : NaN, accuracy: count ? correct / count : NaN, count, lossSum, correct };
  }

  /** Releases the model's wasm memory; the object is unusable afterwards. Safe to call twice. */
  free() {
    if (this.#freed) return;
    const heap = this.#p.heap;
    for (const p of [this.#scratch.ptr, this.#buf.ptr, this.#rope, this.#p.weights, this.#p.m]) heap.free(p);
    this.#freed = true;
  }
}
