// hf-layers.js — which layers of a Hugging Face text config have which position scheme: layer types (given,
// or derived as the config classes derive them), NoPE layers, and the non-RoPE families (ALiBi, learned and
// sinusoidal tables). hf-config.js turns the plan into layer entries.

import { typeError, rangeError } from './errors.js';
import { LEARNED_FAMILIES, ENCODER_DECODER_FAMILIES } from './hf-families.js';

const given = (v) => v !== undefined && v !== null;

/** "sliding_attention" when (i + 1) % pattern != 0, else "full_attention" (Gemma 2/3, Cohere2, OLMo 3). */
const slidingEvery = (n, pattern) => Array.from({ length: n }, (_, i) => ((i + 1) % pattern ? 'sliding_attention' : 'full_attention'));

/**
 * The layer type of every layer, or undefined when the config has none (every layer alike). Explicit
 * layer_types win; otherwise the family's own default, as its config class builds it.
 */
export function layerTypesOf(where, v, family, n, noRope) {
  const lt = v.get('layer_types');
  if (given(lt)) {
    if (!Array.isArray(lt) || lt.length !== n || !lt.every((t) => typeof t === 'string')) {
      throw typeError(where, `${v.name('layer_types')} must be an array of ${n} strings (one per layer)`, lt);
    }
    return lt;
  }
  const pattern = () => {
    for (const key of ['sliding_window_pattern', '_sliding_window_pattern']) {
      const p = v.get(key);
      if (given(p)) return { p, key };
    }
    return undefined;
  };
  switch (family) {
    case 'gemma2':
      return slidingEvery(n, 2);
    case 'modernbert': {
      // ModernBERT: layer i is global when i % global_attn_every_n_layers == 0, else local (sliding window)
      const k = v.get('global_attn_every_n_layers');
      if (!Number.isInteger(k) || k < 1) throw rangeError(where, `${v.name('global_attn_every_n_layers')} must be an integer >= 1`, k);
      return Array.from({ length: n }, (_, i) => (i % k === 0 ? 'full_attention' : 'sliding_attention'));
    }
    case 'mllama': {
      // Llama 3.2 Vision: the layers in cross_attention_layers attend to the image (no rotary there)
      const cross = v.get('cross_attention_layers');
      if (!Array.isArray(cross) || !cross.every((i) => Number.isInteger(i) && i >= 0 && i < n)) {
        throw typeError(where, `${v.name('cross_attention_layers')} must be an array of layer indices in [0, ${n - 1}]`, cross);
      }
      return Array.from({ length: n }, (_, i) => (cross.includes(i) ? 'cross_attention' : 'self_attention'));
    }
    case 'gemma3':
    case 'cohere2':
    case 'olmo3':
    case 'exaone4': {
      const found = pattern();
      if (found === undefined) return undefined;
      const { p, key } = found;
      if (typeof p === 'string' && /^[LG]+$/.test(p)) {
        // EXAONE 4 spells it as letters: L = local (sliding), G = global
        return Array.from({ length: n }, (_, i) => (p[i % p.length] === 'L' ? 'sliding_attention' : 'full_attention'));
      }
      if (!Number.isInteger(p) || p < 1) throw rangeError(where, `${v.name(key)} must be an integer >= 1`, p);
      return slidingEvery(n, p);
    }
    case 'qwen3_5':
    case 'qwen3_next': {
      const k = v.get('full_attention_interval');
      if (!Number.isInteger(k) || k < 1) throw rangeError(where, `${v.name('full_attention_interval')} must be an integer >= 1`, k);
      return Array.from({ length: n }, (_, i) => ((i + 1) % k ? 'linear_attention' : 'full_attention'));
    }
    case 'llama4':
      // Llama4TextConfig: chunked attention on RoPE layers, full attention on NoPE layers
      return noRope.map((nope) => (nope ? 'full_attention' : 'chunked_attention'));
    default:
      return undefined;
  }
}

/**
 * NoPE layers (true = no positions) from no_rope_layers (1 = RoPE, 0 = NoPE; Llama 4, SmolLM3), or the
 * default every no_rope_layer_interval-th layer when the list is missing or empty; undefined for other families.
 */
export function noRopeLayersOf(where, v, family, n) {
  if (family !== 'llama4' && family !== 'smollm3') return undefined;
  const list = v.get('no_rope_layers');
  if (given(list) && !(Array.isArray(list) && list.length === 0)) {
    if (!Array.isArray(list) || list.length < n || !list.every((x) => x === 0 || x === 1 || x === true || x === false)) {
      throw typeError(where, `${v.name('no_rope_layers')} must be an array of at least ${n} values 0 or 1 (1 = the layer uses RoPE)`, list);
    }
    return list.slice(0, n).map((x) => !x);
  }
  const k = v.get('no_rope_layer_interval') ?? 4;
  if (!Number.isInteger(k) || k < 1) throw rangeError(where, `${v.name('no_rope_layer_interval')} must be an integer >= 1`, k);
  return Array.from({ length: n }, (_, i) => (i + 1) % k === 0);
}

/** Whether a layer of this family and type carries RoPE at all (the attention code skips it otherwise). */
export function layerHasRope(v, family, layerType) {
  if (layerType === 'linear_attention') return false; // linear attention (Gated DeltaNet: Qwen3-Next, Qwen 3.5) has no positions
  switch (family) {
    case 'mllama':
      return layerType !== 'cross_attention';
    case 'jamba':
      return false; // Jamba's attention layers use no positional encoding (its Mamba layers carry order)
    case 'exaone4':
      // Exaone4Attention rotates only if sliding_window is None or the layer is sliding
      return !given(v.get('sliding_window')) || layerType === undefined || layerType === 'sliding_attention';
    case 'cohere2':
      return layerType === undefined || layerType === 'sliding_attention'; // Cohere2Attention: RoPE on sliding layers only
    default:
      return true;
  }
}

function headCount(where, v, keys) {
  for (const k of keys) {
    const h = v.get(k);
    if (given(h)) {
      if (!Number.isInteger(h) || h < 1) throw rangeError(where, `${v.name(k)} must be an integer >= 1`, h);
      return h;
    }
  }
  throw typeError(where, `config needs ${keys.join(' or ')} (the head count, for the ALiBi slopes)`, undefined);
}

/**
 * MPT's slopes (build_mpt_alibi_tensor): n2 = 2^ceil(log2 n), slope_k = 2^(-k * alibi_bias_max / n2), k = 1..n2;
 * when n2 != n, the odd-indexed then the even-indexed slopes, cut to n. Computed in double, rounded once.
 */
export function mptSlopes(n, biasMax) {
  const n2 = 2 ** Math.ceil(Math.log2(n));
  let s = Array.from({ length: n2 }, (_, i) => 2 ** (-(i + 1) * (biasMax / n2)));
  if (n2 !== n) s = [...s.filter((_, i) => i % 2 === 1), ...s.filter((_, i) => i % 2 === 0)].slice(0, n);
  return Float32Array.from(s);
}

/**
 * An encoder-decoder family's table and stack depths: { kind, ..., stacks: [['encoder', n], ['decoder', m]] },
 * or undefined for other families.
 */
export function encoderDecoderScheme(where, v, family) {
  const f = ENCODER_DECODER_FAMILIES[family];
  if (f === undefined) return undefined;
  const int = (k) => {
    const n = v.get(k);
    if (!Number.isInteger(n) || n < 0 || n > 1e6) throw typeError(where, `${v.name(k)} must be an integer in [0, 1000000]`, n);
    return n;
  };
  const stacks = [['encoder', int('encoder_layers')], ['decoder', int('decoder_layers')]];
  const maxLen = v.get('max_position_embeddings');
  if (!Number.isInteger(maxLen) || maxLen < 1) throw typeError(where, `${v.name('max_position_embeddings')} must be an integer >= 1 (the table's rows)`, maxLen);
  const offset = typeof f.offset === 'string' ? (v.get('pad_token_id') ?? 1) + 1 : f.offset;
  if (f.kind === 'learned') return { kind: 'learned', maxLen, offset, stacks };
  const dModel = v.get('d_model');
  if (!Number.isInteger(dModel) || dModel < 1) throw typeError(where, `${v.name('d_model')} must be an integer >= 1`, dModel);
  return { kind: 'sinusoidal', dModel, base: 10000, pairing: f.pairing, variant: f.variant, offset, maxLen, stacks };
}

/**
 * The kind of a family without RoPE, read from the keys that decide it alone (no sizes), or undefined for a
 * RoPE family: ropeFromHFConfig names the reason before any size is checked.
 */
export function noRopeKind(v, family) {
  if (ENCODER_DECODER_FAMILIES[family]) return ENCODER_DECODER_FAMILIES[family].kind;
  switch (family) {
    case 'bloom':
      return 'alibi';
    case 'falcon':
      return v.get('alibi') ? 'alibi' : undefined;
    case 'baichuan':
      return v.get('hidden_size') === 4096 ? undefined : 'alibi';
    case 'mpt': {
      const ac = v.get('attn_config');
      return ac?.alibi ? 'alibi' : ac?.rope ? undefined : 'none';
    }
    case 'distilbert':
      return v.get('sinusoidal_pos_embds') ? 'sinusoidal' : 'learned';
    default:
      return LEARNED_FAMILIES[family] ? 'learned' : undefined;
  }
}

/**
 * The scheme of a family without RoPE, or undefined for a RoPE family:
 * { kind: 'alibi', nHeads, variant: 'bloom' | 'mpt', alibiBiasMax? } | { kind: 'learned', maxLen, offset }
 * | { kind: 'sinusoidal', ... }.
 */
export function nonRopeScheme(where, v, family) {
  switch (family) {
    case 'bloom':
      return { kind: 'alibi', variant: 'bloom', nHeads: headCount(where, v, ['n_head', 'num_attention_heads']) };
    case 'falcon':
      return v.get('alibi') ? { kind: 'alibi', variant: 'bloom', nHeads: headCount(where, v, ['num_attention_heads', 'n_head']) } : undefined;
    case 'baichuan':
      // Baichuan 7B and Baichuan2-7B (hidden 4096) use RoPE; the 13B models ALiBi (their remote code differs
      // by size under one model_type; vLLM tells them apart the same way).
      return v.get('hidden_size') === 4096 ? undefined : { kind: 'alibi', variant: 'bloom', nHeads: headCount(where, v, ['num_attention_heads']) };
    case 'mpt': {
      const ac = v.get('attn_config') ?? {};
      if (typeof ac !== 'object') throw typeError(where, `${v.name('attn_config')} must be an object`, ac);
      if (ac.rope) {
        throw new TypeError(`${where}: ${v.name('attn_config.rope')} (llm-foundry's RoPE for MPT) is not read by transformers' MptModel, and posenc does not guess its parameters`);
      }
      if (!ac.alibi) return { kind: 'none', reason: 'MPT without attn_config.alibi (transformers\' MptModel has no position table)' };
      const max = ac.alibi_bias_max ?? 8;
      if (typeof max !== 'number' || !(max > 0) || !Number.isFinite(max)) {
        throw rangeError(where, `${v.name('attn_config.alibi_bias_max')} must be a finite number > 0`, max);
      }
      return { kind: 'alibi', variant: 'mpt', alibiBiasMax: max, nHeads: headCount(where, v, ['n_heads']) };
    }
    case 'distilbert':
      if (v.get('sinusoidal_pos_embds')) {
        // create_sinusoidal_embeddings: sin at even, cos at odd dims, base 10000 (the paper's table)
        return { kind: 'sinusoidal', dModel: v.get('dim') ?? 768, base: 10000, pairing: 'interleaved', variant: 'paper', offset: 0, maxLen: v.get('max_position_embeddings') };
      }
    // fall through: learned
    default: {
      const lf = LEARNED_FAMILIES[family];
      if (lf === undefined) return undefined;
      if (lf.typeKey) {
        const pet = v.get('position_embedding_type') ?? 'absolute';
        if (pet !== 'absolute') {
          throw new TypeError(`${where}: ${v.name('position_embedding_type')} '${pet}' (learned relative distances) is not a scheme posenc builds; only 'absolute' is`);
        }
      }
      const maxLen = v.get(lf.maxLen);
      if (!Number.isInteger(maxLen) || maxLen < 1) throw typeError(where, `${v.name(lf.maxLen)} must be an integer >= 1 (the table's rows)`, maxLen);
      let offset = lf.offset;
      if (typeof offset === 'string') offset = (v.get('pad_token_id') ?? 1) + 1;
      return { kind: 'learned', maxLen, offset };
    }
  }
}
