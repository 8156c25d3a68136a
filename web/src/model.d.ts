// posenc/model — types of web/src/model.js as the 'posenc/model' entry exports it: the safetensors reader and
// the error tiny-model loading raises. Loading itself goes through the posenc instance (pe.loadModel,
// pe.fetchModel, pe.models in index.d.ts), which imports this module on first use.
import type { SafetensorsInfo, PositionEncoding } from './index.js';

export type { SafetensorsInfo, TinyModel, TinyModelConfig, ModelApi, PositionEncoding, RopeScalingOption } from './index.js';

/** A safetensors or config.json file that cannot be used; the message says where and why. */
export declare class ModelFileError extends Error {}

/**
 * Parses a safetensors file's header and checks it against the data (header length within the file, JSON
 * object, known dtypes, integer shapes, data_offsets in bounds and sized for their shape, no overlaps or holes);
 * throws ModelFileError naming what is wrong.
 */
export declare function parseSafetensors(bytes: Uint8Array | ArrayBuffer | ArrayBufferView): SafetensorsInfo;

/** A tensor's values as a new Float32Array (F32 tensors only); throws ModelFileError otherwise. */
export declare function readTensor(bytes: Uint8Array | ArrayBuffer | ArrayBufferView, parsed: SafetensorsInfo, name: string): Float32Array;

/** The position encodings a tiny model can use, and the inference-time RoPE scalings (RopeScalingOption.type). */
export declare const POSITION_ENCODINGS: readonly PositionEncoding[];
export declare const ROPE_SCALINGS: readonly ('trained' | 'linear' | 'ntk' | 'dynamic' | 'yarn')[];
