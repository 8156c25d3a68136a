// hf-families.js — what a Hugging Face model type means for positions, as data: which text config a wrapper
// holds, that text config class's defaults for keys a published config.json omits (save_pretrained drops keys
// equal to the class default, so Gemma 3's text_config has no head_dim: the class default 256 applies, not
// hidden_size / heads), how the model code pairs rotated dims, and which families have no RoPE at all.
//
// Sources: transformers' configuration_*.py / modeling_*.py for each type; the remote code each model ships for
// chatglm, internlm, baichuan, phi3_v, RefinedWeb. docs/hf-config.md is the table for readers.

/** Wrapper model_type -> the model_type of its text_config when text_config carries none. */
export const WRAPPER_TEXT_TYPE = Object.freeze({
  gemma3: 'gemma3_text',
  llama4: 'llama4_text',
  qwen2_vl: 'qwen2_vl_text',
  qwen2_5_vl: 'qwen2_5_vl_text',
  qwen3_vl: 'qwen3_vl_text',
  qwen3_vl_moe: 'qwen3_vl_moe_text',
  qwen3_5: 'qwen3_5_text',
  qwen3_5_moe: 'qwen3_5_moe_text',
  mistral3: 'mistral', // Mistral3Config's default text_config
  mllama: 'mllama_text_model',
  llava: 'llama',
  paligemma: 'gemma',
});

/**
 * The family whose rules apply to a (text) model_type: '_text' variants and remote-code spellings of the same
 * architecture share one entry. Kimi K2 publishes model_type 'kimi_k2' with DeepseekV3 code (auto_map).
 */
export function familyOf(modelType) {
  if (typeof modelType !== 'string') return undefined;
  const t = modelType.endsWith('_text') ? modelType.slice(0, -5) : modelType;
  return FAMILY_ALIASES[t] ?? t;
}

const FAMILY_ALIASES = {
  kimi_k2: 'deepseek_v3',
  mllama_text_model: 'mllama',
  RefinedWeb: 'falcon',
  RefinedWebModel: 'falcon',
  qwen3_vl_moe: 'qwen3_vl',
  qwen3_5_moe: 'qwen3_5',
  'xlm-roberta': 'roberta',
  camembert: 'roberta',
};

/**
 * Text config class defaults for the keys that shape positions (only where the class default differs from
 * "absent means derived", and only the classes whose published files omit them).
 */
export const CLASS_DEFAULTS = Object.freeze({
  gemma3: { head_dim: 256, num_attention_heads: 8, hidden_size: 2304, num_hidden_layers: 26, rope_theta: 1e6, rope_local_base_freq: 1e4, sliding_window_pattern: 6, max_position_embeddings: 131072 },
  gemma2: { head_dim: 256, num_attention_heads: 8, hidden_size: 2304, num_hidden_layers: 26, rope_theta: 1e4, max_position_embeddings: 8192 },
  gemma: { head_dim: 256, num_attention_heads: 16, hidden_size: 3072, num_hidden_layers: 28, rope_theta: 1e4, max_position_embeddings: 8192 },
  llama4: { head_dim: 128, num_attention_heads: 40, hidden_size: 5120, num_hidden_layers: 48, rope_theta: 500000, max_position_embeddings: 131072, no_rope_layer_interval: 4, attn_temperature_tuning: true, floor_scale: 8192, attn_scale: 0.1 },
  llama: { hidden_size: 4096, num_attention_heads: 32, num_hidden_layers: 32, rope_theta: 1e4, max_position_embeddings: 2048 },
  deepseek_v2: { qk_rope_head_dim: 64, qk_nope_head_dim: 128, rope_theta: 1e4 },
  deepseek_v3: { qk_rope_head_dim: 64, qk_nope_head_dim: 128, rope_theta: 1e4, rope_interleave: true },
  smollm3: { no_rope_layer_interval: 4 },
  cohere2: { sliding_window_pattern: 4 },
  olmo3: { sliding_window_pattern: 4 },
  qwen3_5: { full_attention_interval: 4 },
  qwen3_next: { full_attention_interval: 4 },
  gptj: { n_embd: 4096, n_head: 16, n_layer: 28, n_positions: 2048, rotary_dim: 64 },
  mpt: { n_heads: 16, n_layers: 24, max_seq_len: 2048 },
  bloom: { n_head: 8, n_layer: 2 },
  falcon: { alibi: false, rope_theta: 1e4 },
  chatglm: { rope_ratio: 1 },
  modernbert: { global_rope_theta: 160000, local_rope_theta: 10000, global_attn_every_n_layers: 3, max_position_embeddings: 8192 },
  mllama: { rope_theta: 500000, num_hidden_layers: 40, cross_attention_layers: [3, 8, 13, 18, 23, 28, 33, 38] },
  gpt2: { n_positions: 1024, n_layer: 12, n_head: 12 },
  gpt_bigcode: { n_positions: 1024, n_layer: 12, n_head: 12 },
  opt: { max_position_embeddings: 2048, num_hidden_layers: 12 },
  bert: { max_position_embeddings: 512, num_hidden_layers: 12 },
  roberta: { max_position_embeddings: 512, num_hidden_layers: 12, pad_token_id: 1 },
  glm: { head_dim: 128, partial_rotary_factor: 0.5 },
  glm4: { head_dim: 128, partial_rotary_factor: 0.5 },
  glm4_moe: { partial_rotary_factor: 0.5 }, // Glm4MoeConfig: setdefault("partial_rotary_factor", 0.5)
});

/**
 * Pairing of rotated dims from the model code (config.json does not say):
 *   'half'        rotate_half over [x0..x(r/2-1) | x(r/2)..x(r-1)] (Llama, NeoX, Qwen, Phi, Gemma, ...)
 *   'interleaved' (2i, 2i+1) pairs: GPT-J/CodeGen rotate_every_two, Cohere's and GLM's rotate_half over
 *                 x[..., ::2] / x[..., 1::2], ChatGLM's remote code, Llama 4's and DeepSeek-V2's complex product.
 * DeepSeek-V3 (rope_interleave, default true) pairs (2i, 2i+1) too but writes the result half-split.
 */
export const INTERLEAVED_FAMILIES = new Set(['gptj', 'codegen', 'cohere', 'cohere2', 'glm', 'glm4', 'chatglm', 'deepseek_v2', 'llama4']);

/** Families that read GPT-J's top-level rotary_dim (everyone else derives it from partial_rotary_factor). */
export const ROTARY_DIM_FAMILIES = new Set(['gptj', 'codegen']);

/** Families whose layers use RoPE (so a config without rope keys still means the class default RoPE). */
export const ROPE_FAMILIES = new Set([
  'llama', 'llama4', 'mistral', 'mixtral', 'ministral', 'ministral3', 'qwen', 'qwen2', 'qwen2_moe', 'qwen3', 'qwen3_moe',
  'qwen3_next', 'qwen2_vl', 'qwen2_5_vl', 'qwen3_vl', 'qwen3_5', 'phi', 'phi3', 'phi3_v', 'phimoe', 'gemma', 'gemma2',
  'gemma3', 'gpt_neox', 'gpt_neox_japanese', 'stablelm', 'stablelm_epoch', 'persimmon', 'internlm', 'internlm2',
  'internlm3', 'chatglm', 'glm', 'glm4', 'glm4_moe', 'cohere', 'cohere2', 'deepseek', 'deepseek_v2', 'deepseek_v3',
  'exaone', 'exaone4', 'olmo', 'olmo2', 'olmo3', 'granite', 'granitemoe', 'starcoder2', 'minicpm', 'minicpm3',
  'nemotron', 'smollm3', 'gptj', 'codegen', 'falcon', 'baichuan', 'yi', 'helium', 'arcee', 'apertus', 'seed_oss',
  'ernie4_5', 'hunyuan_v1_dense', 'bitnet', 'olmoe', 'modernbert', 'mllama', 'jamba',
]);

/** Phi-3's config class maps the legacy rope types 'su' and 'yarn' to 'longrope' ('su' is longrope everywhere). */
export const PHI3_FAMILIES = new Set(['phi3', 'phi3_v']);

/** Learned absolute tables: { layers key, rows key, offset } (table row = position + offset). */
export const LEARNED_FAMILIES = Object.freeze({
  gpt2: { maxLen: 'n_positions', offset: 0 },
  gpt_bigcode: { maxLen: 'n_positions', offset: 0 },
  gpt_neo: { maxLen: 'max_position_embeddings', offset: 0 },
  opt: { maxLen: 'max_position_embeddings', offset: 2 }, // OPTLearnedPositionalEmbedding: row = position + 2
  bert: { maxLen: 'max_position_embeddings', offset: 0, typeKey: true },
  albert: { maxLen: 'max_position_embeddings', offset: 0, typeKey: true },
  electra: { maxLen: 'max_position_embeddings', offset: 0, typeKey: true },
  // create_position_ids_from_input_ids: the first token's row is padding_idx + 1
  roberta: { maxLen: 'max_position_embeddings', offset: 'pad_token_id + 1', typeKey: true },
  distilbert: { maxLen: 'max_position_embeddings', offset: 0 }, // sinusoidal_pos_embds: fixed sinusoidal table
});

/**
 * Encoder-decoder families: both stacks add a table to their embeddings (one entry per encoder layer, then one
 * per decoder layer). BART/mBART: BartLearnedPositionalEmbedding, row = position + 2. Marian/Pegasus: the
 * sinusoidal table with sin | cos halves. M2M100/NLLB: fairseq's (tensor2tensor) table from position
 * padding_idx + 1.
 */
export const ENCODER_DECODER_FAMILIES = Object.freeze({
  bart: { kind: 'learned', offset: 2 },
  mbart: { kind: 'learned', offset: 2 },
  marian: { kind: 'sinusoidal', pairing: 'half', variant: 'paper', offset: 0 },
  pegasus: { kind: 'sinusoidal', pairing: 'half', variant: 'paper', offset: 0 },
  m2m100: { kind: 'sinusoidal', pairing: 'half', variant: 'tensor2tensor', offset: 'pad_token_id + 1' },
  nllb_moe: { kind: 'sinusoidal', pairing: 'half', variant: 'tensor2tensor', offset: 'pad_token_id + 1' },
});

/** Families with no position scheme posenc builds: refused with the reason rather than guessed. */
export const REFUSED_FAMILIES = Object.freeze({
  t5: 'relative position buckets (T5 attention bias)',
  mt5: 'relative position buckets (T5 attention bias)',
  umt5: 'relative position buckets (T5 attention bias)',
  longt5: 'relative position buckets (T5 attention bias)',
  switch_transformers: 'relative position buckets (T5 attention bias)',
  deberta: 'disentangled relative position attention (DeBERTa)',
  'deberta-v2': 'disentangled relative position attention (DeBERTa)',
  'transfo-xl': 'Transformer-XL relative positions',
  mamba: 'no attention (a state-space model)',
  mamba2: 'no attention (a state-space model)',
  rwkv: 'no attention (RWKV)',
});

/** Keys of a text config that are about positions: each one present is either read or listed in `ignored`. */
export const POSITION_KEYS = Object.freeze([
  'rope_theta', 'rope_scaling', 'rope_parameters', 'partial_rotary_factor', 'rotary_pct', 'rope_pct', 'rotary_dim',
  'rotary_emb_base', 'rotary', 'rope_local_base_freq', 'max_position_embeddings', 'n_positions', 'max_seq_len',
  'seq_length', 'original_max_position_embeddings', 'position_embedding_type', 'alibi', 'alibi_bias_max',
  'attn_config', 'learned_pos_emb', 'no_rope_layers', 'no_rope_layer_interval', 'layer_types', 'sliding_window_pattern',
  '_sliding_window_pattern', 'full_attention_interval', 'rope_interleave', 'qk_rope_head_dim', 'rope_ratio',
  'attn_temperature_tuning', 'floor_scale', 'attn_scale', 'use_rope', 'position_encoding_2d', 'sinusoidal_pos_embds',
  'original_rope', 'kv_channels', 'head_dim', 'use_alibi', 'scale_embedding', 'global_rope_theta', 'local_rope_theta',
  'global_attn_every_n_layers', 'cross_attention_layers',
]);
