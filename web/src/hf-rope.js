// hf-rope.js — one layer type's RoPE of a Hugging Face text config, as pe.rope() options plus what the layer
// needs beside the rotation (M-RoPE sections, DeepSeek's softmax scale and output order, Ministral's query
// scale). hf-config.js decides which layers have RoPE; this file reads the rope keys.
//
// Spellings read (transformers' standardize_rope_params and the config classes' own conversions):
//   newer   rope_parameters: { rope_type, rope_theta, partial_rotary_factor, factor, ... }, or keyed by layer type
//           ({ full_attention: {...}, sliding_attention: {...} }: Gemma 3 v5)
//   older   rope_theta (GPT-NeoX rotary_emb_base), partial_rotary_factor (rotary_pct, StableLM rope_pct),
//           rope_scaling: { type | rope_type, ... } | null
//   legacy  type 'su' -> 'longrope' (Phi-3 also maps 'yarn' -> 'longrope'); 'mrope' -> 'default' with
//           mrope_section kept (Qwen2-VL); Gemma 3's rope_scaling (full layers) + rope_local_base_freq (sliding)
//   head_dim, else hidden_size // num_attention_heads (n_embd // n_head); DeepSeek MLA: qk_rope_head_dim
//   rotary_dim = int(head_dim * partial_rotary_factor); GPT-J / CodeGen: top-level rotary_dim
//   original_max_position_embeddings at the top level overrides the rope parameters' one (Phi-3)
// Unknown keys inside the rope parameters are TypeErrors naming the key; keys the resolved type does not read
// are reported in `ignored` (transformers logs them and goes on).
//
// YaRN: an explicit factor is used as given even when max_position_embeddings / original_max_position_embeddings
// differs (current transformers; it only warns). transformers 4.4x took the correction range from
// max_position_embeddings instead and gives other frequencies for such files.

import { typeError, rangeError, checkEnum, checkKnownKeys } from './errors.js';
import { PAIRINGS, SNAKE } from './rope-options.js';
import { INTERLEAVED_FAMILIES, ROTARY_DIM_FAMILIES, PHI3_FAMILIES } from './hf-families.js';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
const given = (v) => v !== undefined && v !== null;

// The HF keys each resolved type reads (as ROPE_INIT_FUNCTIONS does); max_position_embeddings is top-level.
const TYPE_KEYS = {
  default: [],
  linear: ['factor'],
  dynamic: ['factor'],
  yarn: ['factor', 'original_max_position_embeddings', 'attention_factor', 'beta_fast', 'beta_slow', 'mscale', 'mscale_all_dim', 'truncate'],
  longrope: ['factor', 'original_max_position_embeddings', 'attention_factor', 'short_factor', 'long_factor'],
  llama3: ['factor', 'low_freq_factor', 'high_freq_factor', 'original_max_position_embeddings'],
  proportional: ['factor'],
};
const CAMEL = Object.fromEntries(Object.entries(SNAKE).map(([camel, snake]) => [snake, camel]));
// Everything a rope parameters object may hold; anything else is an error naming the key.
const PARAM_KEYS = [
  'rope_type', 'type', 'rope_theta', 'partial_rotary_factor', ...new Set(Object.values(TYPE_KEYS).flat()),
  'mrope_section', 'mrope_interleaved', 'llama_4_scaling_beta',
];
const LEGACY_TYPES = { su: 'longrope', mrope: 'default' };

/** YaRN's mscale (DeepSeek yarn_get_mscale): 1 for factor <= 1. */
const yarnMscale = (factor, m) => (factor <= 1 ? 1 : 0.1 * m * Math.log(factor) + 1);

/**
 * The rope parameters object in force for `layerType` and where it came from, with the base and partial
 * rotary factor it carries. `v` is the text config view (hf-config.js), `family` its family.
 */
function locateParams(where, v, family, layerType, layerTypeName) {
  const rp = v.get('rope_parameters');
  if (given(rp)) {
    if (!isPlainObject(rp)) throw typeError(where, `${v.name('rope_parameters')} must be an object`, rp);
    const perLayer =
      !('rope_type' in rp) && !('type' in rp) && !('rope_theta' in rp) && Object.keys(rp).length > 0 && Object.values(rp).every(isPlainObject);
    if (perLayer) {
      const keys = Object.keys(rp);
      const bound = `${layerTypeName} must be one of ${keys.map((k) => `'${k}'`).join(', ')} (${v.name('rope_parameters')} is keyed by layer type)`;
      if (typeof layerType !== 'string') throw typeError(where, bound, layerType);
      if (!keys.includes(layerType)) throw rangeError(where, bound, layerType);
      return { params: rp[layerType], name: v.name(`rope_parameters.${layerType}`), inside: true };
    }
    return { params: rp, name: v.name('rope_parameters'), inside: true };
  }
  const rs = v.get('rope_scaling');
  if (given(rs) && !isPlainObject(rs)) throw typeError(where, `${v.name('rope_scaling')} must be an object or null`, rs);
  if (family === 'gemma3') {
    // Gemma3TextConfig: rope_scaling and rope_theta are the full-attention layers'; sliding layers use
    // rope_local_base_freq with no scaling.
    if (layerType === 'sliding_attention') {
      return { params: {}, name: v.name('rope_scaling'), theta: v.get('rope_local_base_freq'), thetaName: v.name('rope_local_base_freq') };
    }
  }
  if (family === 'modernbert') {
    // ModernBertAttention: local (sliding) layers use local_rope_theta (global_rope_theta when null), the rest
    // global_rope_theta; no scaling
    const local = layerType === 'sliding_attention' && given(v.get('local_rope_theta'));
    const key = local ? 'local_rope_theta' : 'global_rope_theta';
    return { params: rs ?? {}, name: v.name('rope_scaling'), theta: v.get(key), thetaName: v.name(key) };
  }
  return { params: rs ?? {}, name: v.name('rope_scaling'), inside: false };
}

/**
 * pe.rope() options for one layer type, the names its errors use, and the layer's extras:
 * { ropeOptions, names, mrope?, outputPairing?, scale?, queryScale?, ignored: [...] }.
 */
export function ropeRequest(where, v, family, { layerType, pairing: pairingOption, layerTypeName = 'options.layerType' } = {}) {
  const ignored = [];
  if (family === 'chatglm') return chatglmRequest(where, v, pairingOption);
  if (family === 'gptj' || family === 'codegen') return gptjRequest(where, v, family, pairingOption);

  const loc = locateParams(where, v, family, layerType, layerTypeName);
  const params = loc.params;
  if (!isPlainObject(params)) throw typeError(where, `${loc.name} must be an object`, params);
  checkKnownKeys(where, loc.name, params, PARAM_KEYS);
  const pn = (k) => `${loc.name}.${k}`;

  // base and partial rotary factor: inside the parameters (v5) or at the top level
  let theta;
  let thetaName;
  if (loc.theta !== undefined) {
    theta = loc.theta;
    thetaName = loc.thetaName;
  } else if (given(params.rope_theta)) {
    theta = params.rope_theta;
    thetaName = pn('rope_theta');
  } else if (given(v.get('rope_theta'))) {
    theta = v.get('rope_theta');
    thetaName = v.name('rope_theta');
  } else if (given(v.get('rotary_emb_base'))) {
    theta = v.get('rotary_emb_base');
    thetaName = v.name('rotary_emb_base');
  }
  let prf;
  let prfName;
  for (const [src, key, name] of [
    [params, 'partial_rotary_factor', pn('partial_rotary_factor')],
    [null, 'partial_rotary_factor'],
    [null, 'rotary_pct'],
    [null, 'rope_pct'],
  ]) {
    const val = src ? src[key] : v.get(key);
    if (given(val)) {
      prf = val;
      prfName = name ?? v.name(key);
      break;
    }
  }

  // rope type, with the legacy names transformers maps
  const typeKey = given(params.rope_type) ? 'rope_type' : given(params.type) ? 'type' : 'rope_type';
  let type = params.rope_type ?? params.type ?? 'default';
  if (typeof type === 'string' && Object.hasOwn(LEGACY_TYPES, type)) type = LEGACY_TYPES[type];
  else if (type === 'yarn' && PHI3_FAMILIES.has(family)) type = 'longrope';
  let mrope;
  if (given(params.mrope_section)) {
    const s = params.mrope_section;
    const bound = `${pn('mrope_section')} must be an array of 3 non-negative integers (pairs on t, h, w)`;
    if (!Array.isArray(s)) throw typeError(where, bound, s);
    if (s.length !== 3) throw new RangeError(`${where}: ${bound}, got length ${s.length}`);
    s.forEach((x, i) => {
      if (typeof x !== 'number') throw typeError(where, `${pn('mrope_section')}[${i}] must be a non-negative integer`, x);
      if (!Number.isInteger(x) || x < 0) throw rangeError(where, `${pn('mrope_section')}[${i}] must be a non-negative integer`, x);
    });
    const il = params.mrope_interleaved ?? false;
    if (typeof il !== 'boolean') throw typeError(where, `${pn('mrope_interleaved')} must be a boolean`, il);
    mrope = Object.freeze({ section: Object.freeze([...s]), interleaved: il });
  } else if (given(params.mrope_interleaved)) {
    ignored.push(pn('mrope_interleaved'));
  }

  // head_dim (DeepSeek MLA: the rope part of each head)
  let headDim;
  let headDimName;
  const mla = family === 'deepseek_v2' || family === 'deepseek_v3';
  if (mla || (!given(v.get('head_dim')) && given(v.get('qk_rope_head_dim')))) {
    headDim = v.get('qk_rope_head_dim');
    headDimName = v.name('qk_rope_head_dim');
  } else if (given(v.get('head_dim'))) {
    headDim = v.get('head_dim');
    headDimName = v.name('head_dim');
  } else {
    headDim = headDimFromHidden(where, v);
    headDimName = headDim.name;
    headDim = headDim.value;
  }

  // rotary_dim
  let rotaryDim;
  let rotaryName;
  const readsRotaryDim = family === undefined || ROTARY_DIM_FAMILIES.has(family);
  if (readsRotaryDim && given(v.get('rotary_dim'))) {
    rotaryDim = v.get('rotary_dim');
    rotaryName = v.name('rotary_dim');
  } else if (prf !== undefined) {
    const bound = `${prfName} must be a number in (0, 1]`;
    if (typeof prf !== 'number') throw typeError(where, bound, prf);
    if (!(prf > 0 && prf <= 1)) throw rangeError(where, bound, prf);
    rotaryDim = Math.trunc(headDim * prf); // Python's int(head_dim * partial_rotary_factor)
    rotaryName = `int(${headDimName} * ${prfName}) = int(${headDim} * ${prf})`;
  }

  // the fields the type reads; known fields it does not read are reported
  const scaling = { type };
  const reads = TYPE_KEYS[type];
  for (const [k, val] of Object.entries(params)) {
    if (['rope_type', 'type', 'rope_theta', 'partial_rotary_factor', 'mrope_section', 'mrope_interleaved', 'llama_4_scaling_beta'].includes(k)) continue;
    if (reads === undefined || reads.includes(k)) scaling[CAMEL[k]] = val;
    else ignored.push(pn(k));
  }
  // read only where the type uses it, so an unused copy (Phi-4: default type) is reported in `ignored`
  const readsOrig = reads !== undefined && reads.includes('original_max_position_embeddings');
  const topOrig = readsOrig ? v.get('original_max_position_embeddings') : undefined;
  const hasTopOrig = given(topOrig);
  if (hasTopOrig) scaling.originalMaxPositionEmbeddings = topOrig;

  // pairing: the model code's, unless the caller says otherwise
  let pairing = INTERLEAVED_FAMILIES.has(family) ? 'interleaved' : 'half';
  let outputPairing;
  if (family === 'deepseek_v3' && v.get('rope_interleave')) {
    pairing = 'interleaved';
    outputPairing = 'half';
  }
  if (pairingOption !== undefined) {
    pairing = checkEnum(where, 'options.pairing', pairingOption, PAIRINGS);
    outputPairing = undefined;
  }

  const maxKey = given(v.get('max_position_embeddings')) ? 'max_position_embeddings' : 'n_positions';
  const ropeOptions = { headDim, rotaryDim, base: theta, pairing, maxPositionEmbeddings: v.get(maxKey) ?? undefined, scaling };
  if (mrope) {
    // the rope is the M-RoPE rope itself (pe.rope's mrope option), its sections checked here against the
    // rotary dim by their config.json names: HF's torch.split of cos needs chunked sections to tile the pairs
    ropeOptions.mrope = mrope;
    const rd = rotaryDim ?? headDim;
    if (Number.isInteger(rd) && rd > 0) {
      const half = Math.floor(rd / 2);
      const dimName = rotaryName ?? headDimName;
      const sum = mrope.section[0] + mrope.section[1] + mrope.section[2];
      if (!mrope.interleaved && sum !== half) {
        throw new RangeError(
          `${where}: ${pn('mrope_section')} must add up to ${dimName} / 2 = ${half} (chunked M-RoPE: HF splits cos into these sections), got [${mrope.section.join(', ')}] (sum ${sum})`,
        );
      }
      const over = mrope.section.findIndex((x) => x > half);
      if (over !== -1) throw rangeError(where, `${pn('mrope_section')}[${over}] must be at most ${dimName} / 2 = ${half}`, mrope.section[over]);
    }
  }
  const names = hfNames(where, {
    headDim: headDimName,
    rotaryDim: rotaryName ?? v.name('rotary_dim'),
    base: thetaName ?? v.name('rope_theta'),
    maxPositionEmbeddings: v.name(maxKey),
    scaling: loc.name,
    type: pn(typeKey),
    originalMaxPositionEmbeddings: hasTopOrig ? v.name('original_max_position_embeddings') : undefined,
    params: loc.name,
  });

  const out = { ropeOptions, names, ignored };
  if (mrope) out.mrope = mrope;
  if (outputPairing) out.outputPairing = outputPairing;
  if (mla) out.scale = mlaScale(where, v, family, type, params);
  if (given(params.llama_4_scaling_beta)) out.queryScale = llama4Scaling(where, params, pn, v);
  return out;
}

function headDimFromHidden(where, v) {
  const hiddenKey = given(v.get('hidden_size')) ? 'hidden_size' : given(v.get('n_embd')) ? 'n_embd' : 'hidden_size';
  const headsKey = given(v.get('num_attention_heads')) ? 'num_attention_heads' : given(v.get('n_head')) ? 'n_head' : 'num_attention_heads';
  const hidden = v.get(hiddenKey);
  const heads = v.get(headsKey);
  if (typeof hidden !== 'number' || typeof heads !== 'number') {
    throw new TypeError(
      `${where}: config needs head_dim, or hidden_size and num_attention_heads, got head_dim ${v.get('head_dim')}, ${v.name(hiddenKey)} ${hidden}, ${v.name(headsKey)} ${heads}`,
    );
  }
  if (!Number.isInteger(heads) || heads < 1) throw rangeError(where, `${v.name(headsKey)} must be an integer >= 1`, heads);
  if (!Number.isInteger(hidden) || hidden < 1) throw rangeError(where, `${v.name(hiddenKey)} must be an integer >= 1`, hidden);
  return { value: Math.floor(hidden / heads), name: `${v.name(hiddenKey)} // ${v.name(headsKey)}` };
}

/** Names in messages: the config.json key each pe.rope() option came from. */
function hfNames(where, n) {
  return {
    where,
    name(key) {
      if (key === 'pairing') return 'options.pairing';
      if (key === 'originalMaxPositionEmbeddings' && n.originalMaxPositionEmbeddings) return n.originalMaxPositionEmbeddings;
      if (key in n && n[key] !== undefined && key !== 'params') return n[key];
      return key in SNAKE ? `${n.params}.${SNAKE[key]}` : key;
    },
  };
}

/** ChatGLM2/3 and GLM-4 remote code: RotaryEmbedding(kv_channels // 2), base 10000 * rope_ratio, (2i, 2i+1) pairs. */
function chatglmRequest(where, v, pairingOption) {
  if (v.get('position_encoding_2d')) {
    throw new TypeError(`${where}: ${v.name('position_encoding_2d')} (ChatGLM-6B's 2D block positions) is not a scheme posenc builds`);
  }
  const kv = v.get('kv_channels');
  const hd = given(kv) ? { value: kv, name: v.name('kv_channels') } : headDimFromHidden(where, v);
  const ratio = v.get('rope_ratio') ?? 1;
  if (typeof ratio !== 'number' || !(ratio > 0) || !Number.isFinite(ratio)) {
    throw rangeError(where, `${v.name('rope_ratio')} must be a finite number > 0`, ratio);
  }
  const ignored = ['rope_theta', 'rope_scaling', 'rope_parameters'].filter((k) => given(v.obj[k])).map((k) => v.name(k));
  const pairing = pairingOption === undefined ? 'interleaved' : checkEnum(where, 'options.pairing', pairingOption, PAIRINGS);
  const ropeOptions = { headDim: hd.value, rotaryDim: hd.value / 2, base: 10000 * ratio, pairing, maxPositionEmbeddings: v.get('seq_length') ?? undefined };
  const names = hfNames(where, { headDim: hd.name, rotaryDim: `${hd.name} / 2`, base: `10000 * ${v.name('rope_ratio')}`, maxPositionEmbeddings: v.name('seq_length'), params: v.name('rope_ratio') });
  return { ropeOptions, names, ignored };
}

/** GPT-J / CodeGen: create_sinusoidal_positions(n_positions, rotary_dim): base 10000, no scaling, rotate_every_two. */
function gptjRequest(where, v, family, pairingOption) {
  const hd = headDimFromHidden(where, v);
  const rd = v.get('rotary_dim');
  const ignored = ['rope_theta', 'rope_scaling', 'rope_parameters', 'partial_rotary_factor'].filter((k) => given(v.obj[k])).map((k) => v.name(k));
  const pairing = pairingOption === undefined ? 'interleaved' : checkEnum(where, 'options.pairing', pairingOption, PAIRINGS);
  const ropeOptions = { headDim: hd.value, rotaryDim: given(rd) ? rd : undefined, base: 10000, pairing, maxPositionEmbeddings: v.get('n_positions') ?? undefined };
  const names = hfNames(where, { headDim: hd.name, rotaryDim: v.name('rotary_dim'), base: `${family}'s fixed base`, maxPositionEmbeddings: v.name('n_positions'), params: family });
  return { ropeOptions, names, ignored };
}

/**
 * DeepSeek MLA softmax scale: qk_head_dim^-0.5, times yarn_get_mscale(factor, mscale_all_dim)^2 for V3 when the
 * rope is scaled and mscale_all_dim is non-zero. transformers' DeepseekV2Attention has no mscale term (DeepSeek's
 * remote code and vLLM do); posenc follows transformers.
 */
function mlaScale(where, v, family, type, params) {
  const nope = v.get('qk_nope_head_dim');
  const rope = v.get('qk_rope_head_dim');
  if (!Number.isInteger(nope) || !Number.isInteger(rope)) {
    throw typeError(where, `${v.name('qk_nope_head_dim')} and ${v.name('qk_rope_head_dim')} must be integers`, Number.isInteger(nope) ? rope : nope);
  }
  let scale = (nope + rope) ** -0.5;
  if (family === 'deepseek_v3' && type !== 'default') {
    const m = params.mscale_all_dim ?? 0;
    const factor = params.factor;
    if (m && typeof factor === 'number') {
      const ms = yarnMscale(factor, m);
      scale = scale * ms * ms;
    }
  }
  return scale;
}

/** Ministral 3 / Devstral: q *= 1 + beta * log(1 + floor(position / original_max_position_embeddings)). */
function llama4Scaling(where, params, pn, v) {
  const beta = params.llama_4_scaling_beta;
  if (typeof beta !== 'number' || !Number.isFinite(beta)) throw typeError(where, `${pn('llama_4_scaling_beta')} must be a finite number`, beta);
  const orig = params.original_max_position_embeddings ?? v.get('original_max_position_embeddings');
  if (!Number.isInteger(orig) || orig < 1) {
    throw typeError(where, `${pn('original_max_position_embeddings')} must be an integer >= 1 (llama_4_scaling_beta needs it)`, orig);
  }
  return Object.freeze({
    type: 'llama_4',
    beta,
    originalMaxPositionEmbeddings: orig,
    at: (position) => 1 + beta * Math.log(1 + Math.floor(position / orig)),
  });
}
