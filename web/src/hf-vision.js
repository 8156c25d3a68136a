// hf-vision.js — the vision tower of a multimodal config.json (its vision_config) as what it is: a pe.rope2d
// for the towers that rotate patches by row and column, or a note that the tower's positions are something else.
// pe.fromHFConfig puts it in spec.vision; pe.ropeFromHFConfig(config, { part: 'vision' }) returns its rope.
//
//   tower (vision_config.model_type, or the wrapper's)   kind        head dim                      base     grid
//   qwen2_vl (Qwen2VLVisionConfig)                        'qwen2-vl'  embed_dim // num_heads        10000    spatial_merge_size
//   qwen2_5_vl, qwen3_vl(_moe), qwen3_5(_moe)             'qwen2-vl'  hidden_size // num_heads      10000    spatial_merge_size
//   pixtral (PixtralVisionConfig)                         'pixtral'   head_dim, else hidden_size //  rope_theta  image_size / patch_size
//                                                                     num_attention_heads
//   llama4_vision_model (Llama4VisionConfig)              'llama4'    hidden_size // num_attention_heads  rope_theta  image_size / patch_size
//   siglip_vision_model, clip_vision_model                'learned'   (a learned absolute table; no rope)
//
// The Qwen vision towers build VisionRotaryEmbedding(head_dim / 2) with its default theta 10000 (config.json
// has no key for it). Qwen3-VL's (and Qwen 3.5's) tower also adds an interpolated learned position table
// (num_position_embeddings) to the patches before the blocks; posenc does not build it, so the key is listed in
// vision.ignored. Qwen2.5-VL reorders tokens into attention windows (window_size); the rope of each token is the
// same, so apply the rope2d in merge-window order before reordering, as transformers does.
// Class defaults fill omitted keys only where the class is known (Qwen2VLVisionConfig, Qwen2_5_VLVisionConfig);
// elsewhere a missing key is a TypeError naming it.

import { typeError, rangeError } from './errors.js';
import { rope2d } from './rope2d.js';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
const given = (v) => v !== undefined && v !== null;

const QWEN = { kind: 'qwen2-vl', layers: 'depth', heads: 'num_heads', width: 'hidden_size', merge: true };
const TOWERS = Object.freeze({
  qwen2_vl: { ...QWEN, width: 'embed_dim', defaults: { depth: 32, embed_dim: 1280, num_heads: 16, patch_size: 14, spatial_merge_size: 2, temporal_patch_size: 2 } },
  qwen2_5_vl: { ...QWEN, defaults: { depth: 32, hidden_size: 3584, num_heads: 16, patch_size: 14, spatial_merge_size: 2, temporal_patch_size: 2 } },
  qwen3_vl: { ...QWEN, learned: 'num_position_embeddings' },
  qwen3_vl_moe: { ...QWEN, learned: 'num_position_embeddings' },
  qwen3_5: { ...QWEN, learned: 'num_position_embeddings' },
  qwen3_5_moe: { ...QWEN, learned: 'num_position_embeddings' },
  pixtral: { kind: 'pixtral', layers: 'num_hidden_layers', heads: 'num_attention_heads', width: 'hidden_size', headDimKey: 'head_dim', theta: true, image: true },
  llama4_vision_model: { kind: 'llama4', layers: 'num_hidden_layers', heads: 'num_attention_heads', width: 'hidden_size', theta: true, image: true },
});
const LEARNED = Object.freeze({ siglip_vision_model: 'SigLIP', clip_vision_model: 'CLIP' });
/** The vision tower a wrapper builds when its vision_config names no model_type. */
const WRAPPER_VISION = Object.freeze({
  qwen2_vl: 'qwen2_vl', qwen2_5_vl: 'qwen2_5_vl', qwen3_vl: 'qwen3_vl', qwen3_vl_moe: 'qwen3_vl_moe', qwen3_5: 'qwen3_5',
  qwen3_5_moe: 'qwen3_5_moe', llama4: 'llama4_vision_model', mistral3: 'pixtral', pixtral: 'pixtral', llava: 'clip_vision_model',
  gemma3: 'siglip_vision_model', paligemma: 'siglip_vision_model',
});
const VISION_ROPE_KINDS = new Set(['pixtral', 'qwen2-vl', 'llama4']);

/**
 * The plan for config.vision_config (a snapshot): null without one, else { modelType, kind, ... } with, for
 * rope towers, `request` (pe.rope2d options) and the keys read. Malformed keys of a known tower are errors.
 */
function visionPlan(where, config) {
  const vc = config.vision_config;
  if (!given(vc)) return null;
  if (!isPlainObject(vc)) throw typeError(where, 'vision_config must be an object', vc);
  const modelType = vc.model_type ?? WRAPPER_VISION[config.model_type];
  if (given(modelType) && typeof modelType !== 'string') throw typeError(where, 'vision_config.model_type must be a string', modelType);
  if (modelType !== undefined && Object.hasOwn(LEARNED, modelType)) return { modelType, kind: 'learned' };
  const tower = modelType === undefined ? undefined : TOWERS[modelType];
  if (tower === undefined) return { modelType, kind: 'unknown' };
  const defaults = {};
  const read = (k) => {
    if (given(vc[k])) return vc[k];
    if (tower.defaults && Object.hasOwn(tower.defaults, k)) {
      defaults[`vision_config.${k}`] = tower.defaults[k];
      return tower.defaults[k];
    }
    return undefined;
  };
  const int = (k, required = true) => {
    const v = read(k);
    if (v === undefined) {
      if (!required) return undefined;
      throw typeError(where, `vision_config.${k} must be an integer >= 1 (the ${modelType} vision tower needs it)`, v);
    }
    if (typeof v !== 'number') throw typeError(where, `vision_config.${k} must be an integer >= 1`, v);
    if (!Number.isInteger(v) || v < 1) throw rangeError(where, `vision_config.${k} must be an integer >= 1`, v);
    return v;
  };
  const heads = int(tower.heads);
  let headDim;
  let headDimName;
  const explicit = tower.headDimKey ? int(tower.headDimKey, false) : undefined;
  if (explicit !== undefined) {
    headDim = explicit;
    headDimName = `vision_config.${tower.headDimKey}`;
  } else {
    headDim = Math.floor(int(tower.width) / heads);
    headDimName = `vision_config.${tower.width} // vision_config.${tower.heads}`;
  }
  const step = tower.kind === 'pixtral' ? 2 : 4;
  if (headDim % step !== 0 || headDim < step) {
    throw new RangeError(`${where}: ${headDimName} (the vision head dim) must be a multiple of ${step} for its 2D RoPE ('${tower.kind}'), got ${headDim}`);
  }
  const request = { kind: tower.kind, headDim };
  const out = { modelType, kind: tower.kind, numLayers: int(tower.layers, false), heads, headDim, patchSize: int('patch_size'), ignored: [], defaults };
  if (tower.merge) {
    out.spatialMergeSize = request.spatialMergeSize = int('spatial_merge_size');
    const tp = int('temporal_patch_size', false);
    if (tp !== undefined) out.temporalPatchSize = tp;
    request.base = 10000;
  }
  if (tower.image) {
    out.imageSize = request.imageSize = int('image_size');
    request.patchSize = out.patchSize;
  }
  if (tower.theta) request.base = visionTheta(where, vc);
  out.base = request.base;
  if (tower.learned && given(vc[tower.learned])) out.ignored.push(`vision_config.${tower.learned}`);
  if (out.numLayers === undefined) delete out.numLayers;
  return { ...out, request };
}

/** Pixtral / Llama 4 vision base: rope_theta, v5's rope_parameters.rope_theta (default type only), else 10000. */
function visionTheta(where, vc) {
  const rp = vc.rope_parameters;
  let theta = vc.rope_theta;
  let name = 'vision_config.rope_theta';
  if (!given(theta) && given(rp)) {
    if (!isPlainObject(rp)) throw typeError(where, 'vision_config.rope_parameters must be an object', rp);
    const type = rp.rope_type ?? rp.type ?? 'default';
    if (type !== 'default') throw rangeError(where, "vision_config.rope_parameters.rope_type must be 'default' (a vision tower's 2D RoPE has no scaling)", type);
    theta = rp.rope_theta;
    name = 'vision_config.rope_parameters.rope_theta';
  }
  if (!given(theta)) return 10000;
  if (typeof theta !== 'number') throw typeError(where, `${name} must be a finite number > 0`, theta);
  if (!(theta > 0) || !Number.isFinite(theta)) throw rangeError(where, `${name} must be a finite number > 0`, theta);
  return theta;
}

/**
 * spec.vision for pe.fromHFConfig: undefined without vision_config; { modelType, kind: 'learned' | 'unknown' }
 * for towers without a 2D RoPE (or not known); else a frozen { kind, modelType, rope, headDim, heads, ... }.
 */
export function visionSpec(ctx, where, config) {
  const p = visionPlan(where, config);
  if (p === null) return undefined;
  if (!VISION_ROPE_KINDS.has(p.kind)) return Object.freeze({ ...p });
  const { request, ...rest } = p;
  return Object.freeze({ ...rest, ignored: Object.freeze(rest.ignored), defaults: Object.freeze(rest.defaults), rope: rope2d(ctx, request) });
}

/** pe.ropeFromHFConfig(config, { part: 'vision' }): the vision tower's pe.rope2d, or a TypeError saying why none. */
export function visionRope(ctx, where, config) {
  const p = visionPlan(where, config);
  if (p === null) throw new TypeError(`${where}: options.part 'vision' needs a vision_config; this config has none`);
  if (p.kind === 'learned') {
    throw new TypeError(`${where}: the vision tower (vision_config.model_type '${p.modelType}') uses ${LEARNED[p.modelType]}'s learned absolute position table, not a 2D RoPE`);
  }
  if (p.kind === 'unknown') {
    throw new TypeError(
      `${where}: the vision tower${p.modelType ? ` '${p.modelType}'` : ''} is not one posenc knows (2D RoPE towers: ${Object.keys(TOWERS).join(', ')}); build it with pe.rope2d`,
    );
  }
  return rope2d(ctx, p.request);
}
