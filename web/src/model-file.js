// model-file.js — the tiny models' files read from JS: a safetensors reader that rejects malformed files with a
// clear message (where and why), and the config.json checks against the file's metadata. Published through
// 'posenc/model' (model.js re-exports it); needs no wasm.

import { describe } from './errors.js';

const DTYPE_BYTES = {
  F64: 8, F32: 4, F16: 2, BF16: 2, F8_E4M3: 1, F8_E5M2: 1,
  I64: 8, I32: 4, I16: 2, I8: 1, U64: 8, U32: 4, U16: 2, U8: 1, BOOL: 1,
};
const MAX_HEADER_BYTES = 100 * 1024 * 1024; // the safetensors spec's own limit

export const POSITION_ENCODINGS = Object.freeze(['none', 'sinusoidal', 'learned', 'rope', 'alibi']);

/** A safetensors or config.json file that cannot be used; the message says where and why. */
export class ModelFileError extends Error {
  constructor(message) {
    super(`posenc model: ${message}`);
    this.name = 'ModelFileError';
  }
}

const arrayBufferByteLength = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'byteLength').get;
function isArrayBuffer(v) {
  try {
    arrayBufferByteLength.call(v); // the engine's own check: throws for anything but a real ArrayBuffer
    return true;
  } catch {
    return false;
  }
}

/**
 * The file's bytes as a fresh Uint8Array made here: its length is the engine's, whatever own properties the
 * argument carries (a `length` that lies cannot size a copy into wasm memory), and a look-alike (an object
 * with Uint8Array's prototype) is refused instead of trusted.
 */
export function toBytes(bytes, where) {
  if (ArrayBuffer.isView(bytes)) return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isArrayBuffer(bytes)) return new Uint8Array(bytes);
  throw new TypeError(`${where}: the file must be a Uint8Array, ArrayBuffer or typed array, got ${describe(bytes)}`);
}

/**
 * Parses a safetensors file's header and checks it against the data: header length within the file, valid
 * JSON object, every tensor entry with a known dtype, integer shape and data_offsets inside the data section,
 * sized for its shape, no overlaps and no holes. Returns { metadata, tensors, dataOffset, headerLength }, where
 * tensors maps a name to { dtype, shape, begin, end } (offsets relative to dataOffset).
 */
export function parseSafetensors(bytes) {
  const u8 = toBytes(bytes, 'parseSafetensors');
  if (u8.length < 8) throw new ModelFileError(`safetensors: file too short (${u8.length} bytes) for the 8-byte header length`);
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const n = dv.getBigUint64(0, true);
  if (n > BigInt(u8.length - 8)) {
    throw new ModelFileError(`safetensors: header length ${n} runs past the end of the file (${u8.length} bytes): truncated or not a safetensors file`);
  }
  const headerLength = Number(n);
  if (headerLength < 2 || headerLength > MAX_HEADER_BYTES) throw new ModelFileError(`safetensors: implausible header length ${headerLength}`);
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(u8.subarray(8, 8 + headerLength));
  } catch {
    throw new ModelFileError('safetensors: the header is not valid UTF-8');
  }
  let header;
  try {
    header = JSON.parse(text);
  } catch (e) {
    throw new ModelFileError(`safetensors: malformed JSON header: ${e.message}`);
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) {
    throw new ModelFileError('safetensors: malformed JSON header: it must be an object');
  }
  const dataOffset = 8 + headerLength;
  const dataSize = u8.length - dataOffset;
  const metadata = {};
  const tensors = new Map();
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') {
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new ModelFileError('safetensors: __metadata__ must be an object');
      for (const [k, v] of Object.entries(entry)) {
        if (typeof v !== 'string') throw new ModelFileError(`safetensors: __metadata__ value of '${k}' must be a string, got ${describe(v)}`);
        metadata[k] = v;
      }
      continue;
    }
    const where = `safetensors: tensor '${name}'`;
    if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) throw new ModelFileError(`${where}: entry must be an object`);
    for (const k of Object.keys(entry)) {
      if (k !== 'dtype' && k !== 'shape' && k !== 'data_offsets') throw new ModelFileError(`${where}: unknown key '${k}'`);
    }
    const { dtype, shape, data_offsets: off } = entry;
    if (typeof dtype !== 'string') throw new ModelFileError(`${where} lacks dtype`);
    if (!(dtype in DTYPE_BYTES)) throw new ModelFileError(`${where}: unknown dtype ${describe(dtype)}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new ModelFileError(`${where}: shape must be an array of non-negative integers, got ${JSON.stringify(shape)}`);
    }
    if (!Array.isArray(off) || off.length !== 2 || !off.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new ModelFileError(`${where}: data_offsets must be [begin, end], got ${JSON.stringify(off)}`);
    }
    const [begin, end] = off;
    if (begin > end || end > dataSize) {
      throw new ModelFileError(`${where}: data_offsets [${begin}, ${end}] outside the data section of ${dataSize} bytes (truncated file?)`);
    }
    const numel = shape.reduce((a, b) => a * b, 1);
    if (end - begin !== numel * DTYPE_BYTES[dtype]) {
      throw new ModelFileError(`${where}: data_offsets span ${end - begin} bytes, its shape [${shape}] of ${dtype} needs ${numel * DTYPE_BYTES[dtype]}`);
    }
    tensors.set(name, { dtype, shape: [...shape], begin, end });
  }
  // no overlaps, no holes: sorted by begin, each starts where the previous ended, the last ends at dataSize
  const spans = [...tensors.entries()].sort((a, b) => a[1].begin - b[1].begin || a[1].end - b[1].end);
  let at = 0;
  for (const [name, t] of spans) {
    if (t.begin < at) throw new ModelFileError(`safetensors: tensor '${name}' overlaps the one before it`);
    if (t.begin > at) throw new ModelFileError(`safetensors: the data section has a hole before tensor '${name}' (bytes ${at}..${t.begin})`);
    at = t.end;
  }
  if (at !== dataSize) throw new ModelFileError(`safetensors: the tensors cover ${at} of the ${dataSize} data bytes (holes or trailing bytes)`);
  return { metadata, tensors, dataOffset, headerLength };
}

/** A tensor's values as a new Float32Array (F32 tensors only). */
export function readTensor(bytes, parsed, name) {
  const u8 = toBytes(bytes, 'readTensor');
  const t = parsed.tensors.get(name);
  if (!t) throw new ModelFileError(`safetensors: missing tensor '${name}'`);
  if (t.dtype !== 'F32') throw new ModelFileError(`safetensors: tensor '${name}': dtype ${t.dtype}, only F32 is supported`);
  const out = new Float32Array((t.end - t.begin) / 4);
  new Uint8Array(out.buffer).set(u8.subarray(parsed.dataOffset + t.begin, parsed.dataOffset + t.end));
  return out;
}

// The fields config.json and the safetensors __metadata__ must agree on.
const INT_FIELDS = ['vocab_size', 'hidden_size', 'num_hidden_layers', 'num_attention_heads', 'intermediate_size', 'max_position_embeddings'];

/**
 * Checks a config.json object (as parsed) against the safetensors metadata and returns the resolved model
 * description: { vocabSize, hiddenSize, numLayers, numHeads, intermediateSize, maxPositionEmbeddings,
 * positionEncoding, ropeTheta, vocab, task, config }.
 */
export function checkConfig(config, metadata) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new TypeError(`loadModel: config must be the parsed config.json object, got ${describe(config)}`);
  }
  for (const k of [...INT_FIELDS, 'position_encoding', 'rope_theta']) {
    if (!(k in config)) throw new ModelFileError(`config.json lacks '${k}'`);
  }
  for (const k of INT_FIELDS) {
    if (!Number.isSafeInteger(config[k]) || config[k] < 1) throw new ModelFileError(`config.json: ${k} must be a positive integer, got ${describe(config[k])}`);
    if (metadata && k in metadata && Number(metadata[k]) !== config[k]) {
      throw new ModelFileError(`config.json says ${k} = ${config[k]} but the safetensors file says ${metadata[k]}`);
    }
  }
  if (!POSITION_ENCODINGS.includes(config.position_encoding)) {
    throw new ModelFileError(`config.json: position_encoding must be one of ${POSITION_ENCODINGS.join(', ')}, got ${describe(config.position_encoding)}`);
  }
  if (metadata && 'position_encoding' in metadata && metadata.position_encoding !== config.position_encoding) {
    throw new ModelFileError(`config.json says position_encoding = ${config.position_encoding} but the safetensors file says ${metadata.position_encoding}`);
  }
  if (metadata && 'rope_theta' in metadata && Number(metadata.rope_theta) !== config.rope_theta) {
    throw new ModelFileError(`config.json says rope_theta = ${config.rope_theta} but the safetensors file says ${metadata.rope_theta}`);
  }
  const vocab = config.posenc?.vocab;
  if (vocab !== undefined && (typeof vocab !== 'string' || [...vocab].length !== config.vocab_size)) {
    throw new ModelFileError(`config.json: posenc.vocab must be a string of vocab_size = ${config.vocab_size} characters`);
  }
  return {
    vocabSize: config.vocab_size,
    hiddenSize: config.hidden_size,
    numLayers: config.num_hidden_layers,
    numHeads: config.num_attention_heads,
    intermediateSize: config.intermediate_size,
    maxPositionEmbeddings: config.max_position_embeddings,
    positionEncoding: config.position_encoding,
    ropeTheta: config.rope_theta,
    vocab: vocab ?? null,
    task: config.posenc?.task ?? null,
    config,
  };
}
