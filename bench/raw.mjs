// raw.mjs — posenc's wasm exports called directly, without the JS API: the "raw kernel call" contender, and the
// loader for the bench's own wasm (limit.wasm, unfused.wasm). No Node-only API: callers pass the bytes.
import { Heap } from '../web/src/memory.js';

/** Stub imports for a standalone emcc module (WASI calls answer ENOSYS; env hooks do nothing). */
function stubImports(module) {
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.kind !== 'function') throw new Error(`bench: unexpected import ${imp.module}.${imp.name} (${imp.kind})`);
    const fn = imp.module === 'wasi_snapshot_preview1' ? () => 52 : () => 0;
    (imports[imp.module] ??= {})[imp.name] = fn;
  }
  return imports;
}

/** base64 -> bytes (atob: browsers and Node >= 16). */
export function decodeBase64(b64) {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * Instantiates wasm bytes (or a compiled Module) and returns a small raw handle:
 * { exports, memory, malloc(bytes), free(ptr), f32(ptr, n), i32(ptr, n), bytes() }; malloc'd blocks start on a
 * 64-byte line.
 * Views are made on demand (the memory may grow between calls).
 */
export async function instantiateRaw(bytesOrModule) {
  const module = bytesOrModule instanceof WebAssembly.Module ? bytesOrModule : await WebAssembly.compile(bytesOrModule);
  const instance = await WebAssembly.instantiate(module, stubImports(module));
  const ex = instance.exports;
  if (typeof ex._initialize === 'function') ex._initialize();
  // Blocks as the JS API places them (Heap.malloc: each on a 64-byte line). malloc alone gives 8-byte starts, and
  // a kernel on a tensor 8 bytes into a line runs 8-30 % slower at decode: every contender gets the same start.
  const heap = new Heap(ex);
  const raw = {
    module,
    exports: ex,
    memory: ex.memory,
    malloc: (bytes) => heap.malloc(bytes, 'bench'),
    free: (ptr) => heap.free(ptr),
    f32(ptr, n) {
      return new Float32Array(ex.memory.buffer, ptr, n);
    },
    i32(ptr, n) {
      return new Int32Array(ex.memory.buffer, ptr, n);
    },
    get bytes() {
      return ex.memory.buffer.byteLength;
    },
  };
  return raw;
}

/**
 * A pe_rope in raw's memory (default scaling, base 10000): returns its pointer. Uses the module's own ABI
 * helper (pe_abi_rope_config_layout) for the struct layout, as the JS API does.
 */
export function rawRope(raw, headDim, pairing = 'half') {
  const ex = raw.exports;
  const countPtr = raw.malloc(8);
  const layoutPtr = ex.pe_abi_rope_config_layout(countPtr) >>> 0;
  const count = raw.i32(countPtr, 1)[0];
  const offs = Array.from(raw.i32(layoutPtr, count));
  raw.free(countPtr);
  const configSize = offs[count - 2];
  const ropeSize = offs[count - 1];
  const cfg = raw.malloc(configSize);
  new Uint8Array(raw.memory.buffer, cfg, configSize).fill(0);
  const dv = new DataView(raw.memory.buffer);
  dv.setInt32(cfg + offs[0], headDim, true); // head_dim
  dv.setInt32(cfg + offs[4], pairing === 'interleaved' ? 1 : 0, true); // pairing
  const rope = raw.malloc(ropeSize);
  const st = ex.pe_rope_init(rope, cfg);
  raw.free(cfg);
  if (st !== 0) throw new Error(`bench: pe_rope_init failed with status ${st}`);
  return rope;
}

/**
 * A pe_rope_apply_config in raw's memory ({ batch, seq, heads, layout, perBatchRows, rotation }; omitted fields
 * 0), laid out as pe_abi_rope_apply_config_layout reports: returns its pointer. Made once, outside timed loops.
 */
export function rawApplyConfig(raw, { batch, seq, heads, layout = 0, perBatchRows = 0, rotation = 0, strides = null }) {
  const ex = raw.exports;
  const countPtr = raw.malloc(8);
  const layoutPtr = ex.pe_abi_rope_apply_config_layout(countPtr) >>> 0;
  const count = raw.i32(countPtr, 1)[0];
  const offs = Array.from(raw.i32(layoutPtr, count));
  raw.free(countPtr);
  const size = offs[count - 1];
  const cfg = raw.malloc(size);
  new Uint8Array(raw.memory.buffer, cfg, size).fill(0);
  const dv = new DataView(raw.memory.buffer);
  [batch, seq, heads, layout, perBatchRows, rotation].forEach((v, i) => dv.setInt32(cfg + offs[i], v, true)); // strides, offset: 0 (dense)
  // strides { batch, seq, heads } in elements (int64 fields 6..8), for the strided contenders
  if (strides) [strides.batch, strides.seq, strides.heads].forEach((v, i) => dv.setBigInt64(cfg + offs[6 + i], BigInt(v), true));
  return cfg;
}

/** Copies a Float32Array into a fresh malloc'd block; returns the pointer. */
export function rawFloat32(raw, src) {
  const p = raw.malloc(src.length * 4);
  raw.f32(p, src.length).set(src);
  return p;
}

/** Copies an Int32Array into a fresh malloc'd block; returns the pointer. */
export function rawInt32(raw, src) {
  const p = raw.malloc(src.length * 4);
  raw.i32(p, src.length).set(src);
  return p;
}
