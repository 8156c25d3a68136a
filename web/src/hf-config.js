// hf-config.js — pe.ropeFromHFConfig(config): a Hugging Face config.json object, as it is, to pe.rope().
//
// Both spellings that transformers reads:
//   newer   { rope_parameters: { rope_type, rope_theta, partial_rotary_factor, factor, ... } }
//           (also keyed by layer type, { full_attention: {...}, sliding_attention: {...} }: pass options.layerType)
//   older   { rope_theta, partial_rotary_factor, rope_scaling: { type | rope_type, factor, ... } | null }
// plus the top-level keys that shape the rotation:
//   head_dim, or hidden_size // num_attention_heads (GPT-2 style n_embd / n_head also accepted; DeepSeek's
//     qk_rope_head_dim when there is no head_dim)
//   rotary_dim = int(head_dim * partial_rotary_factor); GPT-NeoX's rotary_pct and GPT-J's top-level rotary_dim too
//   max_position_embeddings (or n_positions)
//   original_max_position_embeddings at the top level (Phi-3): overrides the one inside the rope parameters;
//     for longrope and yarn, a missing factor is then max_position_embeddings / original_max_position_embeddings.
// Pairing is not in config.json (it is in the model code): options.pairing, default 'half' (Llama, NeoX, Phi,
// Qwen...); pass 'interleaved' for GPT-J / CodeGen style checkpoints.
//
// Errors name the config.json key, e.g. "ropeFromHFConfig: rope_scaling.factor must be a finite number > 0".

import { checkOptions, typeError, rangeError, checkEnum } from './errors.js';
import { resolveRopeOptions, PAIRINGS, SNAKE } from './rope-options.js';
import { createRope } from './rope.js';

const WHERE = 'ropeFromHFConfig';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);

/** Maps a config.json object to pe.rope() options plus the names to use in error messages. */
export function ropeOptionsFromHFConfig(config, options) {
  if (!isPlainObject(config)) {
    throw typeError(WHERE, 'config must be a config.json object (parsed JSON)', config);
  }
  const opts = checkOptions(WHERE, 'options', options);

  // Where the rope parameters live.
  let params;
  let paramsName;
  let theta;
  let thetaName;
  let prf;
  let prfName;
  if (config.rope_parameters !== undefined && config.rope_parameters !== null) {
    params = config.rope_parameters;
    paramsName = 'rope_parameters';
    if (!isPlainObject(params)) throw typeError(WHERE, 'rope_parameters must be an object', params);
    const perLayer =
      !('rope_type' in params) &&
      !('type' in params) &&
      !('rope_theta' in params) &&
      Object.keys(params).length > 0 &&
      Object.values(params).every(isPlainObject);
    if (perLayer) {
      const keys = Object.keys(params);
      const lt = opts.layerType;
      const bound = `options.layerType must be one of ${keys.map((k) => `'${k}'`).join(', ')} (rope_parameters is keyed by layer type)`;
      if (typeof lt !== 'string') throw typeError(WHERE, bound, lt);
      if (!keys.includes(lt)) throw rangeError(WHERE, bound, lt);
      params = params[lt];
      paramsName = `rope_parameters.${lt}`;
    }
    theta = params.rope_theta ?? config.rope_theta;
    thetaName = params.rope_theta != null ? `${paramsName}.rope_theta` : 'rope_theta';
    prf = params.partial_rotary_factor ?? config.partial_rotary_factor;
    prfName = params.partial_rotary_factor != null ? `${paramsName}.partial_rotary_factor` : 'partial_rotary_factor';
  } else {
    const rs = config.rope_scaling;
    if (rs !== undefined && rs !== null && !isPlainObject(rs)) {
      throw typeError(WHERE, 'rope_scaling must be an object or null', rs);
    }
    params = rs ?? {};
    paramsName = 'rope_scaling';
    theta = config.rope_theta ?? config.rotary_emb_base;
    thetaName = config.rope_theta != null ? 'rope_theta' : 'rotary_emb_base';
    prf = config.partial_rotary_factor ?? config.rotary_pct;
    prfName = config.partial_rotary_factor != null ? 'partial_rotary_factor' : 'rotary_pct';
  }

  // head_dim
  let headDim = config.head_dim;
  let headDimName = 'head_dim';
  if ((headDim === undefined || headDim === null) && config.qk_rope_head_dim != null) {
    // DeepSeek-V2/V3 (MLA): the rotary part of each head; transformers' config sets head_dim to it.
    headDim = config.qk_rope_head_dim;
    headDimName = 'qk_rope_head_dim';
  }
  if (headDim === undefined || headDim === null) {
    const hidden = config.hidden_size ?? config.n_embd;
    const heads = config.num_attention_heads ?? config.n_head;
    const hiddenName = config.hidden_size == null && config.n_embd != null ? 'n_embd' : 'hidden_size';
    const headsName = config.num_attention_heads == null && config.n_head != null ? 'n_head' : 'num_attention_heads';
    headDimName = `${hiddenName} // ${headsName}`;
    if (typeof hidden !== 'number' || typeof heads !== 'number') {
      throw new TypeError(
        `${WHERE}: config needs head_dim, or hidden_size and num_attention_heads, got head_dim ${headDim}, ${hiddenName} ${hidden}, ${headsName} ${heads}`,
      );
    }
    headDim = Math.floor(hidden / heads); // transformers: config.hidden_size // config.num_attention_heads
  }

  // rotary_dim
  let rotaryDim;
  let rotaryName;
  if (config.rotary_dim !== undefined && config.rotary_dim !== null) {
    rotaryDim = config.rotary_dim; // GPT-J / CodeGen
    rotaryName = 'rotary_dim';
  } else if (prf !== undefined && prf !== null) {
    const bound = `${prfName} must be a number in (0, 1]`;
    if (typeof prf !== 'number') throw typeError(WHERE, bound, prf);
    if (!(prf > 0 && prf <= 1)) throw rangeError(WHERE, bound, prf);
    rotaryDim = Math.trunc(headDim * prf); // Python's int(head_dim * partial_rotary_factor)
    rotaryName = `int(${headDimName} * ${prfName}) = int(${headDim} * ${prf})`;
  }

  // Phi-3: a top-level original_max_position_embeddings overrides the one in the rope parameters.
  const topOrig = config.original_max_position_embeddings;
  const hasTopOrig = topOrig !== undefined && topOrig !== null;

  const scaling = {};
  for (const [k, v] of Object.entries(params)) {
    if (k !== 'rope_theta' && k !== 'partial_rotary_factor') scaling[k] = v;
  }
  const typeKey = params.rope_type != null ? 'rope_type' : params.type != null ? 'type' : 'rope_type';
  scaling.rope_type = params.rope_type ?? params.type ?? 'default';
  delete scaling.type;
  if (hasTopOrig) scaling.original_max_position_embeddings = topOrig;

  const pairing = checkEnum(WHERE, 'options.pairing', opts.pairing ?? 'half', PAIRINGS);

  const ropeOptions = {
    headDim,
    rotaryDim,
    base: theta,
    pairing,
    maxPositionEmbeddings: config.max_position_embeddings ?? config.n_positions,
    scaling,
  };
  const maxName = config.max_position_embeddings != null ? 'max_position_embeddings' : 'n_positions';

  const names = {
    where: WHERE,
    name(key) {
      switch (key) {
        case 'headDim':
          return headDimName;
        case 'rotaryDim':
          return rotaryName ?? 'rotary_dim';
        case 'base':
          return thetaName;
        case 'pairing':
          return 'options.pairing';
        case 'maxPositionEmbeddings':
          return maxName;
        case 'scaling':
          return paramsName;
        case 'type':
          return `${paramsName}.${typeKey}`;
        case 'originalMaxPositionEmbeddings':
          if (hasTopOrig) return 'original_max_position_embeddings';
        // fall through
        default:
          return key in SNAKE ? `${paramsName}.${SNAKE[key]}` : key;
      }
    },
  };
  return { ropeOptions, names };
}

/** pe.ropeFromHFConfig(config, options?) */
export function ropeFromHFConfig(ctx, config, options) {
  const { ropeOptions, names } = ropeOptionsFromHFConfig(config, options);
  return createRope(ctx, resolveRopeOptions(ropeOptions, names, ctx.limits), names);
}
