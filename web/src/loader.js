// loader.js — instantiating the wasm modules, choosing SIMD or scalar, and assembling the `pe` API object.
//
// The two entries (index.js: wasm inlined as base64; url.js: wasm fetched by URL) differ only in how they get
// a compiled WebAssembly.Module; both call makeInit() with the module sources: the core's two builds, and the
// tiny-model module (its own wasm, c/src + c/model), which with model.js is loaded only when pe.models,
// pe.loadModel or pe.fetchModel is first used.
//
// Choosing the build: SIMD is used only if (1) the engine compiles the SIMD module (a SIMD-less engine rejects
// it at validation) and (2) a check computation through the full API (a cos/sin table and one rotation,
// compared with Math.cos / Math.sin in double) gives the right numbers: an engine with a broken SIMD
// implementation is caught here, not by the user. init({ simd: false }) forces scalar, init({ simd: true })
// forces SIMD and throws if the engine cannot run it. Results are cached per build, so every init() with the
// same outcome returns the same object.

import { Heap, createTensor } from './memory.js';
import { statusError, typeError, checkKnownKeys, knownKeys } from './errors.js';
import { readStatuses, readLimits } from './abi.js';
import { readRopeLayout } from './rope-options.js';
import { rope } from './rope.js';
import { mropePositions } from './mrope-positions.js';
import { rope2d } from './rope2d.js';
import { ropeFromHFConfig, fromHFConfig } from './hf-config.js';
import { alibiSlopes, alibiBias, alibiBiasFromMask } from './alibi.js';
import { sinusoidal, sinusoidalAdd, readSinusoidalLayout } from './sinusoidal.js';
import { learned } from './learned.js';
import { attention, readAttentionLayout } from './attention.js';

const INIT_KEYS = knownKeys('simd');

// WASI errno ENOSYS: the kernels make no system calls; if libc ever does, it is told "not supported".
const WASI_ENOSYS = 52;

/** An import object that satisfies every import of `module` with a stub. */
export function stubImports(module) {
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== 'function') {
      throw new Error(`posenc: unexpected wasm import ${imp.module}.${imp.name} of kind ${imp.kind}`);
    }
    let fn;
    if (imp.name === 'proc_exit') {
      fn = (code) => {
        throw new Error(`posenc: the wasm module called proc_exit(${code})`);
      };
    } else if (imp.module === 'wasi_snapshot_preview1') {
      fn = () => WASI_ENOSYS;
    } else {
      // env.emscripten_notify_memory_growth and the like: views are re-derived on access (memory.js).
      fn = () => 0;
    }
    (imports[imp.module] ??= {})[imp.name] = fn;
  }
  return imports;
}

/** Instantiates a compiled module with stub imports and runs its static constructors. */
export async function instantiateModule(module) {
  const instance = await WebAssembly.instantiate(module, stubImports(module));
  if (typeof instance.exports._initialize === 'function') instance.exports._initialize();
  return instance;
}

/**
 * Instantiates a compiled core module and builds the API object over it. modelSource(simd): a promise of the
 * compiled tiny-model module of that build (omitted: pe.loadModel rejects).
 */
export async function instantiate(module, simd, modelSource) {
  const ex = (await instantiateModule(module)).exports;
  const required = ['memory', 'malloc', 'free', 'pe_status_string', 'pe_abi_status_count', 'pe_abi_status_name'];
  required.push('pe_abi_limit_count', 'pe_abi_limit_name', 'pe_abi_limit_value', 'pe_abi_rope_layout');
  required.push('pe_rope_init', 'pe_rope_cos_sin', 'pe_rope_apply', 'pe_rope_apply_qk', 'pe_rope_apply_positions');
  required.push('pe_sinusoidal_table', 'pe_sinusoidal_add', 'pe_learned_lookup', 'pe_learned_add');
  required.push('pe_alibi_slopes', 'pe_alibi_bias', 'pe_alibi_bias_from_mask', 'pe_attention_scratch_size', 'pe_attention');
  for (const name of required) {
    if (!(name in ex)) throw new Error(`posenc: the wasm module does not export ${name}`);
  }
  return createApi(ex, simd, modelSource);
}

/**
 * The `pe` object for one instantiated module. Each family module contributes its functions here; each gets
 * `ctx`: { exports, heap (memory.js: views, scratch slots), status (the module's codes by name: status.PE_ERR_POSITION),
 * limits (abi.js readLimits), statusError(where, status), ropeLayout, sinusoidalLayout, attentionLayout }.
 */
export function createApi(exports, simd, modelSource) {
  const heap = new Heap(exports);
  const statuses = readStatuses(exports, heap);
  const ctx = {
    exports,
    heap,
    status: statuses.code,
    limits: readLimits(exports, heap),
    statusError: (where, status) => statusError(where, statuses, status),
    ropeLayout: null,
    sinusoidalLayout: null,
    attentionLayout: null,
  };
  ctx.ropeLayout = readRopeLayout(ctx);
  ctx.sinusoidalLayout = readSinusoidalLayout(ctx);
  ctx.attentionLayout = readAttentionLayout(ctx);

  // pe.sinusoidal(seqLen, dModel, options) is the table; pe.sinusoidal.add(x, options) adds it in place.
  const sinusoidalFn = (seqLen, dModel, options) => sinusoidal(ctx, seqLen, dModel, options);
  sinusoidalFn.add = (x, options) => sinusoidalAdd(ctx, x, options);
  Object.freeze(sinusoidalFn);

  // The tiny-model API: its own wasm instance of the same build (SIMD or scalar) and model.js, both fetched on
  // first use, since most users never load a model. A failure is not cached.
  let models = null;
  const loadModels = () => {
    if (models === null) {
      models = (async () => {
        if (typeof modelSource !== 'function') throw new Error('posenc: this entry was built without the tiny-model module');
        const [{ createModelApi }, module] = await Promise.all([import('./model.js'), modelSource(simd)]);
        return createModelApi(await instantiateModule(module));
      })();
      models.catch(() => {
        models = null;
      });
    }
    return models;
  };
  const pe = {
    /** true when this is the SIMD128 build. */
    simd,
    rope: (options) => rope(ctx, options),
    ropeFromHFConfig: (config, options) => ropeFromHFConfig(ctx, config, options),
    mropePositions: (inputIds, options) => mropePositions(inputIds, options),
    rope2d: (options) => rope2d(ctx, options),
    fromHFConfig: (config, options) => fromHFConfig(ctx, config, options),
    alibiSlopes: (nHeads) => alibiSlopes(ctx, nHeads),
    alibiBias: (nHeads, qLen, kLen, options) => alibiBias(ctx, nHeads, qLen, kLen, options),
    alibiBiasFromMask: (nHeads, attentionMask, options) => alibiBiasFromMask(ctx, nHeads, attentionMask, options),
    sinusoidal: sinusoidalFn,
    learned: (table, options) => learned(ctx, table, options),
    attention: (q, k, v, options) => attention(ctx, q, k, v, options),
    tensor: (lengthOrArray, options) => createTensor(heap, lengthOrArray, options),
    /**
     * A promise of the tiny-transformer API (web/src/model.js: loadModel, fetchModel, parseSafetensors), over
     * the model module of this build; the same promise every time once it has loaded.
     */
    get models() {
      return loadModels();
    },
    loadModel: async (safetensors, config) => (await loadModels()).loadModel(safetensors, config),
    fetchModel: async (baseUrl, options) => (await loadModels()).fetchModel(baseUrl, options),
    /** Current size of the module's WebAssembly memory in bytes (for diagnostics and leak checks). */
    get memoryBytes() {
      return exports.memory.buffer.byteLength;
    },
  };
  return Object.freeze(pe);
}

/**
 * The check computation: cos/sin of a table whose width has a SIMD tail (18 frequencies), at positions up to
 * 10^6, and one rotation of a bhsd tensor with odd sizes, against double-precision Math.cos/Math.sin.
 * Returns null when right, else a description of the first mismatch.
 */
export function checkComputation(pe) {
  const r = pe.rope({ headDim: 36, base: 10000 });
  try {
    const positions = [0, 1, 7, 1000, 65537, 1000000];
    const inv = r.invFreq64();
    const { cos, sin } = r.cosSin(positions);
    for (let p = 0; p < positions.length; p++) {
      for (let i = 0; i < inv.length; i++) {
        const a = positions[p] * inv[i];
        const k = p * inv.length + i;
        if (!(Math.abs(cos[k] - Math.cos(a)) <= 1e-5 && Math.abs(sin[k] - Math.sin(a)) <= 1e-5)) {
          return `cos/sin at position ${positions[p]}, frequency ${i}: got ${cos[k]}, ${sin[k]}, expected ${Math.cos(a)}, ${Math.sin(a)}`;
        }
      }
    }
    // x: (1 batch, 1 head, 3 positions, 36) bhsd, half-split pairs (i, i + 18)
    const x = new Float32Array(3 * 36);
    for (let i = 0; i < x.length; i++) x[i] = Math.fround(Math.sin(i * 0.37) + 0.25);
    const y = r.apply(Float32Array.from(x), { shape: [1, 1, 3, 36], layout: 'bhsd', positions: [3, 500, 77777] });
    const pos = [3, 500, 77777];
    for (let s = 0; s < 3; s++) {
      for (let i = 0; i < 18; i++) {
        const a = pos[s] * inv[i];
        const xa = x[s * 36 + i];
        const xb = x[s * 36 + i + 18];
        const ea = xa * Math.cos(a) - xb * Math.sin(a);
        const eb = xb * Math.cos(a) + xa * Math.sin(a);
        if (!(Math.abs(y[s * 36 + i] - ea) <= 1e-5 && Math.abs(y[s * 36 + i + 18] - eb) <= 1e-5)) {
          return `apply at position ${pos[s]}, pair ${i}: got ${y[s * 36 + i]}, ${y[s * 36 + i + 18]}, expected ${ea}, ${eb}`;
        }
      }
    }
    return null;
  } finally {
    r.free();
  }
}

/**
 * makeInit({ simd: () => Promise<WebAssembly.Module>, scalar: () => Promise<WebAssembly.Module>,
 *            model: (simd: boolean) => Promise<WebAssembly.Module> }) -> init.
 * A source rejects (CompileError) when the engine cannot compile that module. `model` is called only when a
 * tiny model is first loaded.
 */
export function makeInit(sources) {
  const builds = { simd: null, scalar: null }; // Promise<pe> per build; a failure is not cached

  function load(kind) {
    if (builds[kind] === null) {
      builds[kind] = (async () => {
        const module = await sources[kind]();
        const pe = await instantiate(module, kind === 'simd', sources.model);
        const wrong = checkComputation(pe);
        if (wrong !== null) throw new Error(`posenc: the ${kind} build computes wrong numbers on this engine (${wrong})`);
        return pe;
      })();
      builds[kind].catch(() => {
        builds[kind] = null;
      });
    }
    return builds[kind];
  }

  return async function init(options) {
    if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
      throw typeError('init', 'options must be an object such as { simd: false }', options);
    }
    if (options !== undefined && options !== null) checkKnownKeys('init', 'options', options, INIT_KEYS);
    const simd = options?.simd;
    if (simd !== undefined && simd !== null && typeof simd !== 'boolean') {
      throw typeError('init', 'options.simd must be a boolean (true: SIMD build, false: scalar build) or undefined (pick)', simd);
    }
    if (simd === false) return load('scalar');
    if (simd === true) {
      try {
        return await load('simd');
      } catch (e) {
        throw new Error(`init: the SIMD build cannot run on this engine: ${e.message}`, { cause: e });
      }
    }
    try {
      return await load('simd');
    } catch {
      return load('scalar');
    }
  };
}

/** Compiles bytes, rejecting with a CompileError when the engine does not support the module's features. */
export async function compileBytes(bytes) {
  if (!WebAssembly.validate(bytes)) {
    throw new WebAssembly.CompileError('WebAssembly.validate rejected the module (the engine lacks a feature it uses)');
  }
  return WebAssembly.compile(bytes);
}

/** base64 -> bytes, with atob (browsers, Node >= 16). */
export function decodeBase64(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}
