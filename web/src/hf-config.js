// hf-config.js — a Hugging Face config.json object, as published, to the position scheme of every layer
// (pe.fromHFConfig) or to the RoPE of one layer type (pe.ropeFromHFConfig).
//
// Reading order: the text part (text_config of multimodal wrappers, with that text config class's defaults
// for omitted keys; Llama 4 without text_config gets Llama4TextConfig's defaults, as transformers does), the
// family (model_type) for what the config cannot say (pairing, ALiBi vs RoPE, learned tables, which layers
// rotate), then the rope keys (hf-rope.js) per distinct layer type. Every position key present that was not
// read is listed in `ignored`, so nothing is dropped unseen. hf-families.js holds the per-family data,
// hf-layers.js the per-layer rules; docs/hf-config.md is the table for readers.

import { checkOptions, checkKnownKeys, typeError, rangeError } from './errors.js';
import { resolveRopeOptions } from './rope-options.js';
import { createRope } from './rope.js';
import { alibiSlopes } from './alibi.js';
import {
  WRAPPER_TEXT_TYPE,
  CLASS_DEFAULTS,
  familyOf,
  ROPE_FAMILIES,
  REFUSED_FAMILIES,
  POSITION_KEYS,
} from './hf-families.js';
import { layerTypesOf, noRopeLayersOf, layerHasRope, nonRopeScheme, noRopeKind, encoderDecoderScheme, mptSlopes } from './hf-layers.js';
import { ropeRequest } from './hf-rope.js';
import { visionSpec, visionRope } from './hf-vision.js';

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
const given = (v) => v !== undefined && v !== null;
const OPTION_KEYS = { fromHFConfig: ['pairing'], ropeFromHFConfig: ['pairing', 'layerType', 'part'] };
const PARTS = ['text', 'vision'];
const ROPE_KEYS = ['rope_theta', 'rope_scaling', 'rope_parameters', 'partial_rotary_factor', 'rotary_pct', 'rotary_dim', 'rotary_emb_base', 'head_dim'];

/** Reads keys of one config object, filling the class defaults and recording what was read. */
function makeView(obj, defaults, prefix, read, defaulted) {
  return {
    obj,
    name: (k) => prefix + k,
    get(k) {
      read.add(k);
      if (Object.hasOwn(obj, k)) return obj[k];
      if (defaults && Object.hasOwn(defaults, k)) {
        defaulted[prefix + k] = defaults[k];
        return defaults[k];
      }
      return undefined;
    },
  };
}

/**
 * A private copy of the config's data, each value read once: a getter or Proxy cannot answer one check with
 * one value and the reader with another, and the caller's object is never written.
 */
function snapshot(where, v, depth) {
  if (v === null || typeof v !== 'object' || ArrayBuffer.isView(v)) return v;
  if (depth > 32) throw new TypeError(`${where}: config nests objects more than 32 deep (a cycle?)`);
  if (Array.isArray(v)) return Array.from(v, (x) => snapshot(where, x, depth + 1));
  const out = {};
  for (const k of Object.keys(v)) out[k] = snapshot(where, v[k], depth + 1);
  return out;
}

/** The text part of `config`, its family and a view over it. */
function textPart(where, configArg, options) {
  if (!isPlainObject(configArg)) throw typeError(where, 'config must be a config.json object (parsed JSON)', configArg);
  const config = snapshot(where, configArg, 0);
  const opts = checkOptions(where, 'options', options);
  checkKnownKeys(where, 'options', opts, OPTION_KEYS[where]);
  const modelType = config.model_type;
  if (given(modelType) && typeof modelType !== 'string') throw typeError(where, 'model_type must be a string', modelType);
  let text = config;
  let prefix = '';
  let textType = modelType;
  let skippedTop = false; // every top-level position key is unread (the text part is elsewhere)
  if (isPlainObject(config.text_config)) {
    text = config.text_config;
    prefix = 'text_config.';
    textType = text.model_type ?? WRAPPER_TEXT_TYPE[modelType] ?? modelType;
    skippedTop = true;
  } else if (modelType === 'llama4') {
    // Llama4Config without text_config builds Llama4TextConfig() from its defaults: top-level text keys
    // (a flattened copy's rope_scaling, no_rope_layers, ...) are not read by transformers, nor here.
    text = {};
    prefix = 'text_config.';
    textType = 'llama4_text';
    skippedTop = true;
  }
  const family = familyOf(textType);
  const read = new Set();
  const defaulted = {};
  const v = makeView(text, CLASS_DEFAULTS[family], prefix, read, defaulted);
  const refused = REFUSED_FAMILIES[family];
  if (refused !== undefined) {
    throw new TypeError(`${where}: model_type '${textType}' uses ${refused}, which is not a scheme posenc builds`);
  }
  return { config, opts, modelType, textType, family, v, text, prefix, skippedTop, read, defaulted };
}

function numLayersOf(where, v, required) {
  for (const k of ['num_hidden_layers', 'n_layer', 'num_layers', 'n_layers']) {
    const n = v.get(k);
    if (given(n)) {
      if (!Number.isInteger(n) || n < 1 || n > 1e6) throw rangeError(where, `${v.name(k)} must be an integer in [1, 1000000]`, n);
      return n;
    }
  }
  if (required) throw typeError(where, 'config needs num_hidden_layers (or n_layer, num_layers, n_layers)', undefined);
  return undefined;
}

/**
 * The per-layer plan without wasm objects: { numLayers, layers: [{ kind, layerType?, ... }], scheme? }.
 * RoPE layers carry `ropeType` (the layer type whose rope parameters apply, '' for "the one RoPE").
 */
function plan(where, t, requireLayers) {
  const { v, family, modelType } = t;
  const encDec = encoderDecoderScheme(where, v, family);
  if (encDec !== undefined) {
    const layers = encDec.stacks.flatMap(([stack, n]) => Array.from({ length: n }, () => ({ kind: encDec.kind, stack })));
    return { numLayers: layers.length, scheme: encDec, layers };
  }
  const numLayers = numLayersOf(where, v, requireLayers);
  const scheme = nonRopeScheme(where, v, family);
  if (scheme !== undefined) return { numLayers, scheme, layers: numLayers ? Array.from({ length: numLayers }, () => ({ kind: scheme.kind })) : [] };
  if (given(modelType) && !ROPE_FAMILIES.has(family) && !ROPE_KEYS.some((k) => given(t.text[k]))) {
    throw new TypeError(
      `${where}: model_type '${t.textType}' is not a family posenc knows, and the config has no RoPE keys (${ROPE_KEYS.join(', ')}); its position scheme cannot be read from config.json (build it with pe.rope, pe.alibiSlopes, pe.learned or pe.sinusoidal)`,
    );
  }
  if (numLayers === undefined) return { numLayers, layers: undefined };
  const noRope = noRopeLayersOf(where, v, family, numLayers);
  const types = layerTypesOf(where, v, family, numLayers, noRope);
  const temp = family === 'llama4' && v.get('attn_temperature_tuning') ? llama4Temperature(where, v) : undefined;
  const layers = [];
  for (let i = 0; i < numLayers; i++) {
    const layerType = types?.[i];
    const entry = layerType === undefined ? {} : { layerType };
    if (noRope?.[i] || !layerHasRope(v, family, layerType)) {
      entry.kind = 'none';
      if (noRope?.[i] && temp) entry.queryScale = temp;
    } else {
      entry.kind = 'rope';
      entry.ropeType = layerType ?? '';
    }
    layers.push(entry);
  }
  // a layer type is worth reporting only where layers differ
  if (types && types.every((x) => x === types[0])) for (const e of layers) delete e.layerType;
  return { numLayers, layers, layerTypes: types };
}

/** Llama 4 NoPE layers: q *= log(floor((position + 1) / floor_scale) + 1) * attn_scale + 1. */
function llama4Temperature(where, v) {
  const floorScale = v.get('floor_scale');
  const attnScale = v.get('attn_scale');
  if (typeof floorScale !== 'number' || !(floorScale > 0)) throw rangeError(where, `${v.name('floor_scale')} must be a number > 0`, floorScale);
  if (typeof attnScale !== 'number' || !Number.isFinite(attnScale)) throw typeError(where, `${v.name('attn_scale')} must be a finite number`, attnScale);
  return Object.freeze({
    type: 'llama4_temperature',
    floorScale,
    attnScale,
    at: (position) => Math.log(Math.floor((position + 1) / floorScale) + 1) * attnScale + 1,
  });
}

/** Position keys present but not read: the `ignored` list. */
function ignoredKeys(t, extra) {
  const out = [];
  const present = (o, k) => Object.hasOwn(o, k) && given(o[k]);
  for (const k of POSITION_KEYS) if (present(t.text, k) && !t.read.has(k)) out.push(t.prefix + k);
  if (t.skippedTop) for (const k of POSITION_KEYS) if (present(t.config, k)) out.push(k);
  for (const k of extra) if (!out.includes(k)) out.push(k);
  return out;
}

/** The request for a layer type's rope, checked, and the key that tells identical ropes apart. */
function checkedRequest(ctx, where, t, ropeType, pairing) {
  const layerTypeName = where === 'fromHFConfig' ? `the layer type '${ropeType}' (${t.v.name('layer_types')})` : 'options.layerType';
  const req = ropeRequest(where, t.v, t.family, { layerType: ropeType === '' ? undefined : ropeType, pairing, layerTypeName });
  req.resolved = resolveRopeOptions(req.ropeOptions, req.names, ctx.limits);
  const arrays = (k, x) => (ArrayBuffer.isView(x) ? Array.from(x) : x);
  req.key = JSON.stringify([req.resolved, req.mrope, req.outputPairing, req.scale, req.queryScale && [req.queryScale.type, req.queryScale.beta]], arrays);
  return req;
}

function ropeLayerExtras(req) {
  const e = {};
  if (req.scale !== undefined) e.scale = req.scale;
  if (req.queryScale) e.queryScale = req.queryScale;
  if (req.outputPairing) e.outputPairing = req.outputPairing;
  if (req.mrope) e.mrope = req.mrope;
  return e;
}

/** pe.fromHFConfig(config, options?) */
export function fromHFConfig(ctx, config, options) {
  const where = 'fromHFConfig';
  const t = textPart(where, config, options);
  const p = plan(where, t, true);
  const extraIgnored = [];
  let layers;
  const ropes = [];
  if (p.scheme) {
    const s = p.scheme;
    let entry;
    if (s.kind === 'alibi') {
      const slopes = s.variant === 'mpt' ? mptSlopes(s.nHeads, s.alibiBiasMax) : alibiSlopes(ctx, s.nHeads);
      entry = { kind: 'alibi', slopes };
      if (s.variant === 'mpt') entry.alibiBiasMax = s.alibiBiasMax;
    } else if (s.kind === 'learned') {
      entry = { kind: 'learned', maxLen: s.maxLen, offset: s.offset };
    } else if (s.kind === 'sinusoidal') {
      const { kind, stacks: _s, ...rest } = s;
      entry = { kind, ...rest };
    } else {
      entry = { kind: 'none' };
    }
    // encoder-decoder models: one frozen entry per stack, each layer entry names its stack
    const perStack = new Map();
    const entryFor = (stack) => {
      if (!perStack.has(stack)) perStack.set(stack, Object.freeze(stack === undefined ? entry : { ...entry, stack }));
      return perStack.get(stack);
    };
    layers = p.layers.map((l) => entryFor(l.stack));
  } else {
    // one rope per distinct request: identical layers share one object
    const byType = new Map();
    const byKey = new Map();
    try {
      for (const l of p.layers) {
        if (l.kind !== 'rope' || byType.has(l.ropeType)) continue;
        const req = checkedRequest(ctx, where, t, l.ropeType, t.opts.pairing);
        extraIgnored.push(...req.ignored);
        if (!byKey.has(req.key)) {
          const rope = createRope(ctx, req.resolved, req.names);
          ropes.push(rope);
          byKey.set(req.key, { rope, extras: ropeLayerExtras(req) });
        }
        byType.set(l.ropeType, byKey.get(req.key));
      }
    } catch (e) {
      for (const r of ropes) r.free();
      throw e;
    }
    layers = p.layers.map((l) => {
      if (l.kind !== 'rope') return Object.freeze(l);
      const { ropeType: _t, ...rest } = l;
      const { rope, extras } = byType.get(l.ropeType);
      return Object.freeze({ ...rest, rope, ...extras });
    });
  }
  // the vision tower (hf-vision.js): its pe.rope2d where it has one
  let vision;
  try {
    vision = visionSpec(ctx, where, t.config);
  } catch (e) {
    for (const r of ropes) r.free();
    throw e;
  }
  const spec = {
    modelType: t.modelType,
    numLayers: p.numLayers,
    ignored: ignoredKeys(t, extraIgnored),
    defaults: Object.freeze({ ...t.defaulted }),
    layers: Object.freeze(layers),
    free() {
      for (const r of ropes) r.free();
      vision?.rope?.free();
    },
  };
  if (t.textType !== t.modelType) spec.textModelType = t.textType;
  if (vision !== undefined) spec.vision = vision;
  return Object.freeze(spec);
}

const KIND_REASON = {
  alibi: 'uses ALiBi; use pe.fromHFConfig or pe.alibiSlopes',
  learned: 'uses a learned absolute position table; use pe.fromHFConfig or pe.learned',
  sinusoidal: 'uses a fixed sinusoidal table; use pe.fromHFConfig or pe.sinusoidal',
  none: 'has no RoPE layers; use pe.fromHFConfig',
};

/** pe.ropeFromHFConfig(config, options?): the RoPE of one layer type (the one RoPE of most models). */
export function ropeFromHFConfig(ctx, config, options) {
  const where = 'ropeFromHFConfig';
  const t = textPart(where, config, options);
  const part = t.opts.part ?? 'text';
  if (!PARTS.includes(part)) throw (typeof part === 'string' ? rangeError : typeError)(where, "options.part must be 'text' or 'vision'", part);
  if (part === 'vision') {
    if (t.opts.layerType !== undefined) throw new TypeError(`${where}: options.layerType is for the text layers; omit it with options.part 'vision'`);
    if (t.opts.pairing !== undefined) throw new TypeError(`${where}: options.pairing is for the text layers; a vision tower's pairing is its kind's`);
    return visionRope(ctx, where, t.config);
  }
  const desc = `this model${t.textType ? ` (${t.prefix}model_type '${t.textType}')` : ''}`;
  const kind = noRopeKind(t.v, t.family);
  if (kind === 'none') {
    throw new TypeError(`${where}: ${desc} has no position encoding (MPT without attn_config.alibi: transformers' MptModel has no position table); use pe.fromHFConfig`);
  }
  if (kind !== undefined) throw new TypeError(`${where}: ${desc} ${KIND_REASON[kind]}`);
  const p = plan(where, t, false);
  let ropeType = '';
  const lt = t.opts.layerType;
  if (p.layers !== undefined) {
    const ropeLayers = p.layers.filter((l) => l.kind === 'rope');
    if (ropeLayers.length === 0) throw new TypeError(`${where}: ${desc} ${KIND_REASON.none}`);
    const types = p.layerTypes ? [...new Set(p.layerTypes)] : undefined;
    if (lt !== undefined) {
      const bound = `options.layerType must be one of ${(types ?? []).map((k) => `'${k}'`).join(', ')} (this config's layer types)`;
      if (types === undefined) {
        if (!isKeyedByLayer(t)) {
          throw rangeError(where, 'options.layerType applies only to configs with layer types; this config has one kind of layer, so omit it', lt);
        }
        ropeType = lt;
      } else {
        if (typeof lt !== 'string') throw typeError(where, bound, lt);
        if (!types.includes(lt)) throw rangeError(where, bound, lt);
        const ofType = p.layers.filter((_, i) => p.layerTypes[i] === lt);
        const withRope = ofType.find((l) => l.kind === 'rope');
        if (withRope === undefined) {
          throw new TypeError(`${where}: the '${lt}' layers of ${desc} have no RoPE (${ofType.length} layers without positions); use pe.fromHFConfig for the per-layer schedule`);
        }
        ropeType = withRope.ropeType;
      }
    } else {
      const ropeTypes = [...new Set(ropeLayers.map((l) => l.ropeType))];
      const distinct = new Set(ropeTypes.map((rt) => checkedRequest(ctx, where, t, rt, t.opts.pairing).key));
      if (distinct.size > 1) {
        throw new TypeError(
          `${where}: ${desc} uses different RoPEs by layer type; pass options.layerType (one of ${ropeTypes.map((k) => `'${k}'`).join(', ')}) or use pe.fromHFConfig`,
        );
      }
      ropeType = ropeLayers[0].ropeType;
    }
  } else if (lt !== undefined) {
    if (!isKeyedByLayer(t) && t.family !== 'gemma3') {
      throw rangeError(where, 'options.layerType applies only to configs with layer types; this config has one kind of layer, so omit it', lt);
    }
    ropeType = lt;
  }
  const req = checkedRequest(ctx, where, t, ropeType, t.opts.pairing);
  return createRope(ctx, req.resolved, req.names);
}

/** rope_parameters keyed by layer type (v5 Gemma 3 form). */
function isKeyedByLayer(t) {
  const rp = t.text.rope_parameters;
  return isPlainObject(rp) && !('rope_type' in rp) && !('type' in rp) && !('rope_theta' in rp) && Object.keys(rp).length > 0 && Object.values(rp).every(isPlainObject);
}
