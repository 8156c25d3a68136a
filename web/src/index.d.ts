// posenc — types. The single source of truth for the JS API's shape (both entries, 'posenc' and 'posenc/url',
// export the same API).
//
// Conventions:
// - Float data are Float32Array or Tensor (wasm memory, zero-copy). Results are new Float32Arrays, the input
//   itself for in-place operations, or options.out where a function takes one (pe.attention, pe.alibiBias,
//   pe.sinusoidal, rope.cosSin: no allocation per call).
// - Positions are an Int32Array (checked by one scan in wasm, no per-element JS work) or any array-like of
//   integers in [0, 2^31 - 1].
// - Wrong types throw TypeError, out-of-range values RangeError; the message names the argument and the bound,
//   e.g. "rope: headDim must be an even integer in [2, 1024], got 7". A failed call changes nothing.
// - Options are strict: an unknown key is a TypeError naming it and the nearest known key. Typed arrays must be
//   real typed arrays (not objects with their prototype, not Proxies); a detached one is a TypeError. Using an
//   object after free() is a TypeError.

/** Options of init(). */
export interface InitOptions {
  /**
   * true: the SIMD128 build (throws if the engine cannot run it). false: the scalar build.
   * Omitted: SIMD if the engine validates it and a check computation gives the right numbers, else scalar.
   */
  simd?: boolean;
}

/**
 * Loads posenc (cached: the same build returns the same object).
 * The default entry carries both wasm modules inlined; 'posenc/url' loads dist/*.wasm by URL
 * (streaming compilation where available).
 */
export function init(options?: InitOptions): Promise<Posenc>;
export default init;

/** A storage type: float32, or 16-bit float16 (IEEE binary16) / bfloat16 held as raw bit patterns. */
export type Dtype = 'float32' | 'float16' | 'bfloat16';
export type HalfDtype = 'float16' | 'bfloat16';

/**
 * An array that lives in wasm memory: pass it wherever data of its dtype is accepted, with no copy; its dtype
 * is the default dtype of the call it is passed to (a different options.dtype is a TypeError). `Tensor` alone
 * is a float32 tensor.
 */
export interface Tensor<D extends Dtype = 'float32'> {
  /**
   * A view of the data: a Float32Array, or for a 16-bit tensor a Uint16Array of the raw bit patterns (in every
   * engine, also where Float16Array exists: bits are kept exactly). Re-derived whenever the wasm memory has
   * grown (any posenc call may grow it), so read it again after each call instead of keeping it. Throws a
   * TypeError after free().
   */
  readonly array: D extends 'float32' ? Float32Array : Uint16Array;
  readonly length: number;
  readonly dtype: D;
  /** True once free() has been called. */
  readonly freed: boolean;
  /** Releases the memory; calling it again does nothing. */
  free(): void;
}

/** Options of pe.tensor(). */
export interface TensorOptions<D extends Dtype = Dtype> {
  /**
   * The storage type; default 'float32' (a Float16Array: 'float16'). A Uint16Array source needs a 16-bit dtype
   * (its bits are copied); a Float32Array source with a 16-bit dtype is rounded to nearest even.
   */
  dtype?: D | null;
}

/** Float input: copied in and out (Float32Array) or used in place (Tensor, or a Float32Array viewing wasm memory). */
export type FloatInput = Float32Array | Tensor;

/**
 * 16-bit input: a Uint16Array of raw bits (copied in and out unless it views wasm memory), a 16-bit Tensor (in
 * place), or at run time a Float16Array where the engine has one (float16).
 */
export type HalfInput = Uint16Array | Tensor<'float16'> | Tensor<'bfloat16'>;

/** Data of any storage type. */
export type DataInput = FloatInput | HalfInput;

/** Positions: Int32Array, or any array-like of integers in [0, 2^31 - 1]. */
export type Positions = Int32Array | ArrayLike<number>;

export type RopeType = 'default' | 'linear' | 'dynamic' | 'yarn' | 'longrope' | 'llama3' | 'proportional';

/**
 * Which two dimensions of a head form one rotated pair:
 * 'half' (GPT-NeoX, Llama, HF rotate_half): [x0 .. x(r/2-1) | x(r/2) .. x(r-1)], pair i = (i, i + r/2);
 * 'interleaved' (GPT-J, the RoFormer paper): [(x0,x1), (x2,x3), ...], pair i = (2i, 2i + 1).
 */
export type Pairing = 'half' | 'interleaved';

/** Memory order of a 4-d tensor of heads; headDim is always innermost. */
export type Layout = 'bshd' | 'bhsd';

/**
 * RoPE scaling, as Hugging Face's rope_parameters / rope_scaling. Every key is also accepted in HF's
 * snake_case spelling (rope_type or type, original_max_position_embeddings, attention_factor, beta_fast,
 * beta_slow, mscale, mscale_all_dim, truncate, low_freq_factor, high_freq_factor, short_factor, long_factor);
 * null means "not given", as in config.json.
 */
export interface RopeScaling {
  /** Required when scaling is given. */
  type?: RopeType;
  rope_type?: RopeType;
  /**
   * linear, dynamic, llama3: required, > 0. yarn, longrope: default maxPositionEmbeddings / original
   * (longrope without maxPositionEmbeddings: 1). proportional: default 1 (frequencies are divided by it).
   */
  factor?: number | null;
  /** yarn, longrope: default maxPositionEmbeddings. llama3: required. */
  originalMaxPositionEmbeddings?: number;
  /** yarn, longrope: default derived (yarn 0.1 ln(factor) + 1 or the mscale ratio; longrope sqrt(1 + ln f / ln original)). Multiplies cos and sin. */
  attentionFactor?: number;
  /** yarn: default 32 (0 also means the default, as HF's `or 32`). */
  betaFast?: number;
  /** yarn: default 1 (0 also means the default). */
  betaSlow?: number;
  /** yarn: used only when mscale and mscaleAllDim are both non-zero. */
  mscale?: number;
  mscaleAllDim?: number;
  /** yarn: default true (floor/ceil the correction range). */
  truncate?: boolean;
  /** llama3: required. */
  lowFreqFactor?: number;
  /** llama3: required, > lowFreqFactor. */
  highFreqFactor?: number;
  /** longrope: required, rotaryDim / 2 values > 0. */
  shortFactor?: ArrayLike<number>;
  /** longrope: required, rotaryDim / 2 values > 0. */
  longFactor?: ArrayLike<number>;
  [hfKey: string]: unknown;
}

export interface RopeOptions {
  /** Required: even, 2..1024. */
  headDim: number;
  /** Dimensions rotated per head: even, 2..headDim; default headDim. HF: int(head_dim * partial_rotary_factor). */
  rotaryDim?: number;
  /** rope_theta: finite, > 0 (and != 1 for 'yarn'); default 10000. */
  base?: number;
  /** Default 'half'. */
  pairing?: Pairing;
  /** dynamic: required. yarn / longrope: used for the default factor and original max. */
  maxPositionEmbeddings?: number;
  /** Default: no scaling ({ type: 'default' }). Unknown keys, here and in scaling, are TypeErrors. */
  scaling?: RopeScaling | null;
  /**
   * M-RoPE (Qwen2-VL; Qwen3-VL interleaved): each pair reads the position of one of three streams (t, h, w).
   * Then cosSin / apply take positions [t..., h..., w...] (3 * n), and pe.attention positions { q, k } of three
   * streams each (see AttentionOptions.rope).
   */
  mrope?: MropeOptions | null;
}

export interface MropeOptions {
  /**
   * mrope_section: pairs on t, h, w; each in [0, rotaryDim / 2]. Chunked: must add up to rotaryDim / 2.
   * Interleaved: pair j takes h if j % 3 == 1 and j < 3 * section[1], w if j % 3 == 2 and j < 3 * section[2], else t.
   */
  section: readonly [number, number, number] | ArrayLike<number>;
  /** Default false (chunked: Qwen2-VL, Qwen2.5-VL); true: Qwen3-VL. */
  interleaved?: boolean;
}

/** pe.mropePositions's options: the inputs of Hugging Face's get_rope_index. */
export interface MropePositionsOptions {
  /** config.json: model_type ('qwen2_vl' | 'qwen2_5_vl' | 'qwen3_vl'), image/video/vision_start token ids, spatial_merge_size and tokens_per_second (top level or vision_config). */
  config: Record<string, unknown>;
  imageGridThw?: ReadonlyArray<ArrayLike<number>> | null;
  videoGridThw?: ReadonlyArray<ArrayLike<number>> | null;
  /** [batch][seq] of 0/1 (left padding). */
  attentionMask?: ReadonlyArray<ArrayLike<number>> | ArrayLike<number> | null;
  /** Qwen2.5-VL: seconds per temporal grid, one per video (default 1). */
  secondPerGridTs?: ArrayLike<number> | null;
}

export type Rope2dKind = 'pixtral' | 'qwen2-vl' | 'llama4';
export interface Rope2dOptions {
  kind: Rope2dKind;
  /** A multiple of 4, at most 1024. */
  headDim: number;
  /** Default 10000. */
  base?: number;
  /** pixtral: optional (bounds the grid by imageSize / patchSize); llama4: required (the square tile's side). */
  imageSize?: number;
  patchSize?: number;
  /** qwen2-vl only; default 2. */
  spatialMergeSize?: number;
}
/** A patch grid: one image, or the kind's list (pixtral: images [[h, w]...]; qwen2-vl: gridThw [[t, h, w]...]). */
export interface Rope2dGrid {
  gridH?: number;
  gridW?: number;
  /** qwen2-vl: frames (default 1). */
  gridT?: number;
  images?: ReadonlyArray<readonly [number, number]>;
  gridThw?: ReadonlyArray<readonly [number, number, number]>;
}
export interface Rope2d {
  readonly kind: Rope2dKind;
  readonly headDim: number;
  /** headDim / 2: the width of each cosSin row. */
  readonly nFreq: number;
  /** The two streams [a..., b...] the pairs turn by (pixtral / qwen2-vl: row, column; llama4: column + 1, row + 1, CLS 0). */
  positions(grid: Rope2dGrid): Int32Array;
  cosSin(grid: Rope2dGrid): { cos: Float32Array; sin: Float32Array; n: number };
  apply<T extends FloatInput>(x: T, options: { shape: readonly [number, number, number, number] | ArrayLike<number>; layout?: Layout; grid: Rope2dGrid; inverse?: boolean }): T;
  free(): void;
}

/** A rope's resolved config: what the C core resolved, in RopeOptions' shape, so pe.rope(config) rebuilds it. */
export interface RopeConfig extends RopeOptions {
  base: number;
  pairing: Pairing;
  /** Only the fields its type reads, every default filled in. */
  scaling: RopeScaling & { type: RopeType };
}

/** rope.apply's and rope.rerotate's named shape; headDim, when given, must be the rope's. */
export interface RopeShape {
  batch: number;
  seq: number;
  heads: number;
  headDim?: number;
}

/**
 * A shape: named, or an array in the tensor's own memory order, what x.shape prints in PyTorch / ORT:
 * [batch, seq, heads, headDim] for 'bshd', [batch, heads, seq, headDim] for 'bhsd'. (Before issue 11 the
 * array was [batch, seq, heads, headDim] whatever the layout.)
 */
export type RopeShapeInput = RopeShape | readonly [number, number, number, number] | ArrayLike<number>;

/**
 * Element strides of a view of head vectors (headDim stays contiguous): head (b, s, h) starts at element
 * offset + b·batch + s·seq + h·heads. Each omitted one is the dense stride of the shape in the layout.
 * Integers ≥ 0; head vectors that would overlap are a RangeError, and so is any element past the array.
 *   fused per-token QKV [b, s, (h + 2kv)·d]:  q { batch: s·w, seq: w, heads: d }, offset 0; k the same, kOffset h·d
 *                                             (w = (h + 2kv)·d: Phi-3 qkv_proj, Llama fused)
 *   fused per-head QKV [b, s, h, 3d]:         q and k { batch: s·h·3d, seq: h·3d, heads: 3d }, offsets 0 and d
 *                                             (GPT-NeoX, BLOOM query_key_value)
 *   bhsd KV cache of C slots per head:        { batch: kv·C·d, seq: d, heads: C·d }, offset t0·d for slots t0 ..
 */
export interface RopeStrides {
  batch?: number;
  seq?: number;
  heads?: number;
}

export interface ApplyOptions {
  /** See RopeShapeInput: named, or an array in x's own memory order ([b, h, s, d] for 'bhsd'). */
  shape: RopeShapeInput;
  /** Memory order of x; default 'bshd'. */
  layout?: Layout;
  /**
   * x is a strided view (RopeStrides): only its head vectors are read and written, the rest of the array is
   * left as it is. A pe.tensor is rotated where it lies (zero-copy); a Float32Array has the span the call
   * touches (offset .. the furthest element) copied in and out. Default: dense.
   */
  strides?: RopeStrides | null;
  /** Element of x where head (0, 0, 0) starts; default 0. */
  offset?: number | null;
  /**
   * Length seq (shared by the batch) or batch * seq (one row per sequence: left padding, packing).
   * Default 0 .. seq-1.
   */
  positions?: Positions;
  /** The inverse rotation with the attention factor divided out: apply then inverse gives back x. */
  inverse?: boolean;
  /**
   * The "current sequence length" that picks dynamic's grown base and longrope's long factors.
   * Default max(positions) + 1 over all positions, as one HF forward call decides.
   */
  seqLen?: number;
  /**
   * Keys to rotate in the same call, in place, with the same cos/sin table as x (the queries): one table for
   * both. Shape [batch, seq, kHeads, headDim] in the same layout, at the same positions; `inverse` and `seqLen`
   * apply to both. The result is bit for bit that of a separate apply on k. Must not share memory with x.
   * (A Float32Array viewing wasm memory that the call detached must be re-read from its tensor: only x's
   * fresh view is returned.)
   */
  k?: DataInput | null;
  /**
   * Heads of k (grouped-query / multi-query attention: fewer key heads than query heads); default
   * the shape's heads. Only with k. Any count ≥ 1: each head is rotated on its own, so it need not divide heads.
   */
  kHeads?: number;
  /**
   * k's view (RopeStrides; only with k; default dense for k's own shape). k may be the same array as x (a fused
   * QKV buffer, copied once when it is a Float32Array): the q and k head vectors must not share an element
   * (a RangeError; q and k with different batch/seq strides, or heads interleaved at different strides, are
   * refused when they could meet).
   */
  kStrides?: RopeStrides | null;
  /** Element of k where its head (0, 0, 0) starts; default 0. Only with k. */
  kOffset?: number | null;
  /**
   * Storage type of x (and k); default x's own: a Tensor's dtype, 'float16' for a Float16Array, else 'float32'.
   * 16-bit data are a Uint16Array of raw bits (either type), a Float16Array (float16) or a 16-bit Tensor
   * (rotated in place); rotated in float32 arithmetic, rounded to nearest even on store. An array or tensor that
   * does not match is a TypeError naming it.
   */
  dtype?: Dtype;
}

/** The second argument of rope.cosSin in its options form. */
export interface CosSinOptions {
  /** As cosSin's seqLen argument; default max(positions) + 1. */
  seqLen?: number | null;
  /**
   * Where to write the tables instead of new arrays: Float32Arrays or Tensors of positions.length · nFreq each
   * (a RangeError otherwise), not overlapping. A Tensor is written by the kernel in place (zero-copy).
   * With a 16-bit dtype: Uint16Arrays or 16-bit Tensors of that dtype.
   */
  out?: { cos: DataInput; sin: DataInput } | null;
  /**
   * Storage type of the tables; default 'float32' (or out.cos's own, when it is a 16-bit Tensor). 'float16' |
   * 'bfloat16': the float32 table rounded once to nearest even (the kernels' store), as Uint16Arrays of raw bits.
   */
  dtype?: Dtype | null;
}

export interface RerotateOptions {
  /**
   * Optional (required with strides or offset): checked against x when given (RopeShapeInput: an array is in
   * the layout's memory order); every head vector turns by the same angle whatever the layout.
   */
  shape?: RopeShapeInput;
  layout?: Layout;
  /** Re-rotate only the head vectors of this view (e.g. the used slots of a KV cache with spare capacity). */
  strides?: RopeStrides | null;
  offset?: number | null;
  /** Which frequencies (dynamic, longrope); default none (HF's seq_len=None). */
  seqLen?: number;
  /**
   * Storage type of x, as for apply (default x's own: a Tensor's dtype, 'float16' for a Float16Array, else
   * 'float32'). 16-bit x turns in float32 arithmetic and is rounded once on store (M-RoPE deltas too: one pass
   * turns each pair by its own axis's signed delta).
   */
  dtype?: Dtype | null;
}

export interface Rope {
  readonly headDim: number;
  readonly rotaryDim: number;
  /** Frequencies per position (width of invFreq and of each cosSin row): rotaryDim / 2, or headDim / 2 for 'proportional'. */
  readonly nFreq: number;
  readonly pairing: Pairing;
  readonly type: RopeType;
  readonly base: number;
  /**
   * The resolved config, read back from the C core (defaults filled in the way Hugging Face does), in
   * pe.rope()'s option shape: pe.rope({ ...rope.config, headDim: 24 }) is the same RoPE for another head size.
   * rotaryDim appears only when partial. Derived values are included as resolved (yarn's and longrope's
   * attentionFactor, yarn's factor from maxPositionEmbeddings): change the fields they come from and drop them to
   * have them derived again. A fresh copy each time.
   */
  readonly config: RopeConfig;
  readonly freed: boolean;

  /** M-RoPE: the section, the layout and each pair's axis (0 t, 1 h, 2 w); null for a plain rope. */
  readonly mrope: { section: number[]; interleaved: boolean; pairAxis: Int32Array } | null;
  /** Inverse frequencies, float32. seqLen matters for dynamic and longrope; default none (HF's seq_len=None). */
  invFreq(seqLen?: number): Float32Array;
  /** Inverse frequencies in double precision: the values the kernels form angles from. */
  invFreq64(seqLen?: number): Float64Array;
  /** HF's attention factor (yarn, longrope; 1 otherwise), which multiplies cos and sin. */
  attentionScaling(seqLen?: number): number;
  /**
   * cos and sin of position * invFreq[i], times the attention factor: (positions.length, nFreq), row-major.
   * (Hugging Face's tables are cat(freqs, freqs), twice as wide.) seqLen defaults to max(positions) + 1.
   */
  cosSin(positions: Positions, seqLen?: number | null): { cos: Float32Array; sin: Float32Array };
  /** The same, the second argument as options; with out, the tables are written there and out.cos / out.sin returned. */
  cosSin(positions: Positions, options: CosSinOptions & { out?: null; dtype?: 'float32' | null }): { cos: Float32Array; sin: Float32Array };
  /** 16-bit tables: Uint16Arrays of raw bits. */
  cosSin(positions: Positions, options: CosSinOptions & { out?: null; dtype: HalfDtype }): { cos: Uint16Array; sin: Uint16Array };
  cosSin<C extends DataInput, S extends DataInput>(positions: Positions, options: CosSinOptions & { out: { cos: C; sin: S } }): { cos: C; sin: S };
  /**
   * Rotates x in place and returns it (for a view of wasm memory that the call had to detach: a fresh view of
   * the same elements); with options.k, rotates k too from the same table.
   *
   * Cost: the rope keeps the last cos/sin table it built (in wasm memory, freed with the rope) with its key:
   * the positions' values (or "default positions" and their count), seqLen and inverse. A call with an equal
   * key reuses it, so q then k at the same positions, or repeated calls with the same positions, build it
   * once. Positions are compared by value (n integers, far less than building n · nFreq angles), so an array
   * mutated in place is noticed. Otherwise a call costs its argument checks and the kernels: nothing is
   * allocated in the steady state.
   *
   * Dynamic and LongRoPE with a KV cache: their frequencies depend on the sequence length, and Hugging Face
   * keeps each cached key with the rotation of the step that produced it, choosing that step's seq_len as
   * max(position_ids) + 1 over the whole batch. Do the same: at each step, rotate the new keys once, where they
   * sit in the cache (strides / offset), with rope.apply(kCache, { positions, seqLen }) and seqLen = the
   * largest position of the step's tokens in any sequence + 1; then attend with pe.attention(q, kCache, v,
   * { rope, kRotated: true, seqLen }) at the same seqLen, so only q is rotated. Keys from before the
   * short -> long switch then keep their short rotation, as in HF. Rotating the raw cache again at a later
   * seqLen (kRotated false) is not what HF computes once the cache crosses the switch. Tested against a
   * float64 reference across the switch in tests/js/strides-kvcache.test.js.
   */
  apply<T extends DataInput>(x: T, options: ApplyOptions): T;
  /**
   * Re-rotates already-rotated vectors (cached keys) by a position delta (either sign): a pure rotation, so
   * rerotate(apply(x at p), delta) == apply(x at p + delta). In place; returns x. An M-RoPE rope also takes
   * [dt, dh, dw], one delta per axis.
   */
  rerotate<T extends DataInput>(x: T, delta: number | readonly [number, number, number], options?: RerotateOptions): T;
  /** Releases the wasm object; calling it again does nothing. Other methods then throw. */
  free(): void;
}

export interface FromHFConfigOptions {
  /**
   * Overrides the pairing the model type implies (config.json does not say): 'interleaved' for GPT-J, CodeGen,
   * Cohere/Cohere2, GLM/ChatGLM, DeepSeek-V2/V3 and Llama 4, 'half' for the rest (and configs without model_type).
   */
  pairing?: Pairing;
}

export interface RopeFromHFConfigOptions extends FromHFConfigOptions {
  /**
   * 'text' (default): the text layers' RoPE (the M-RoPE rope for Qwen2/2.5/3-VL). 'vision': the vision tower's
   * 2D RoPE from vision_config, a Rope2d (see the overload); not with layerType or pairing.
   */
  part?: 'text';
  /**
   * The layer type whose RoPE to build ('sliding_attention', 'full_attention', ...), in every form: layer_types,
   * the family's default pattern (Gemma 2/3, Cohere2, EXAONE 4, OLMo 3, Qwen 3.5, Llama 4), Gemma 3's
   * rope_local_base_freq, rope_parameters keyed by layer type. Required when layer types differ in RoPE (Gemma 3);
   * a RangeError for a type the config does not have, a TypeError for one whose layers have no RoPE.
   */
  layerType?: string;
}

/** A position-dependent factor multiplied into q: factor = at(position). */
export type HFQueryScale =
  /** Llama 4 NoPE layers (attn_temperature_tuning): log(floor((position + 1) / floorScale) + 1) * attnScale + 1. */
  | { readonly type: 'llama4_temperature'; readonly floorScale: number; readonly attnScale: number; at(position: number): number }
  /** Ministral 3 / Devstral (llama_4_scaling_beta): 1 + beta * log(1 + floor(position / originalMaxPositionEmbeddings)). */
  | { readonly type: 'llama_4'; readonly beta: number; readonly originalMaxPositionEmbeddings: number; at(position: number): number };

/** One layer's position scheme. Identical layers share one object (and one Rope). */
export type HFLayer = (
  | {
      readonly kind: 'rope';
      readonly rope: Rope;
      /** DeepSeek MLA: the softmax scale (qk_head_dim^-0.5, times V3's yarn mscale^2), for pe.attention's scale. */
      readonly scale?: number;
      readonly queryScale?: HFQueryScale;
      /**
       * 'half': DeepSeek-V3 rope_interleave. Pairs are (2i, 2i+1) (rope.pairing 'interleaved') and transformers writes
       * the rotated dims back as [evens | odds]; q·k is the same, an elementwise comparison with HF's q needs the permutation.
       */
      readonly outputPairing?: 'half';
      /**
       * Qwen2/2.5/3-VL and Qwen 3.5 M-RoPE sections (mrope_section, mrope_interleaved). `rope` is then the M-RoPE
       * rope itself (rope.mrope has the same sections): positions [t..., h..., w...] from pe.mropePositions.
       */
      readonly mrope?: { readonly section: readonly [number, number, number]; readonly interleaved: boolean };
    }
  /** BLOOM, Falcon alibi, Baichuan-13B: pe.alibiSlopes(nHeads); MPT: its own slopes from alibi_bias_max. */
  | { readonly kind: 'alibi'; readonly slopes: Float32Array; readonly alibiBiasMax?: number }
  /** A learned absolute table added once to the embeddings (every layer carries it): row = position + offset (OPT, RoBERTa: 2). */
  | { readonly kind: 'learned'; readonly maxLen: number; readonly offset: number }
  /** A fixed table added to the embeddings, as pe.sinusoidal(seqLen, dModel, { base, pairing, variant, offset }) builds it. */
  | { readonly kind: 'sinusoidal'; readonly dModel: number; readonly base: number; readonly pairing: 'interleaved' | 'half'; readonly variant: 'paper' | 'tensor2tensor'; readonly offset: number; readonly maxLen?: number }
  /** No positions in this layer: NoPE (Llama 4, SmolLM3, EXAONE 4 / Cohere2 full layers), linear attention (Qwen 3.5). */
  | { readonly kind: 'none'; readonly queryScale?: HFQueryScale }
) & {
  /** The layer's type, where the model's layers differ ('sliding_attention', 'full_attention', 'chunked_attention', ...). */
  readonly layerType?: string;
  /** Encoder-decoder models (BART, Marian, M2M100, ...): encoder layers come first, then decoder layers. */
  readonly stack?: 'encoder' | 'decoder';
};

/**
 * A multimodal config's vision tower (vision_config): its 2D RoPE where it has one. Qwen2-VL / 2.5-VL / 3-VL /
 * 3.5 ('qwen2-vl', base 10000), Pixtral and Mistral 3 ('pixtral'), Llama 4 ('llama4'); SigLIP / CLIP towers learn
 * their positions ('learned'); any other tower is 'unknown' (never guessed).
 */
export type HFVision =
  | {
      readonly kind: Rope2dKind;
      /** vision_config.model_type, or the tower the wrapper builds ('qwen2_5_vl', 'pixtral', 'llama4_vision_model'). */
      readonly modelType: string;
      readonly rope: Rope2d;
      readonly headDim: number;
      readonly heads: number;
      readonly numLayers?: number;
      readonly patchSize: number;
      readonly base: number;
      /** pixtral, llama4: image_size (the grid is at most imageSize / patchSize a side). */
      readonly imageSize?: number;
      /** qwen2-vl: merge-window size and frames per temporal patch. */
      readonly spatialMergeSize?: number;
      readonly temporalPatchSize?: number;
      /** Position keys of vision_config not built (Qwen3-VL's interpolated learned table: num_position_embeddings). */
      readonly ignored: readonly string[];
      /** Keys filled from the vision config class's defaults (Qwen2VLVisionConfig, Qwen2_5_VLVisionConfig). */
      readonly defaults: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'learned'; readonly modelType: string }
  | { readonly kind: 'unknown'; readonly modelType: string | undefined };

/** pe.fromHFConfig's result (frozen). */
export interface HFPositionSpec {
  /** config.json's model_type. */
  readonly modelType: string | undefined;
  /** The text config's model type, where it differs (multimodal wrappers: 'gemma3_text', ...). */
  readonly textModelType?: string;
  readonly numLayers: number;
  /** One entry per layer. */
  readonly layers: readonly HFLayer[];
  /** Position keys present in the file that were not read (dotted paths: 'text_config.rope_theta', 'rope_scaling.factor'). */
  readonly ignored: readonly string[];
  /** Keys the file omits that were filled from the text config class's defaults (Gemma 3: 'text_config.head_dim': 256). */
  readonly defaults: Readonly<Record<string, unknown>>;
  /** The vision tower, when the config has a vision_config. */
  readonly vision?: HFVision;
  /** Frees every Rope in `layers` and the vision tower's Rope2d. */
  free(): void;
}

export interface Posenc {
  /** Which build is running. */
  readonly simd: boolean;
  /**
   * The tiny transformers of the playground (c/model), on their own wasm module of this build, loaded with
   * web/src/model.js on first use: a promise, the same one every time once it has resolved.
   */
  readonly models: Promise<ModelApi>;
  /**
   * A tiny model from a safetensors file (F32) and its config.json object; rejects with ModelFileError
   * (from 'posenc/model') if malformed. Loads the model module first if needed.
   */
  loadModel(safetensors: Uint8Array | ArrayBuffer | ArrayBufferView, config: TinyModelConfig): Promise<TinyModel>;
  /** Fetches `config.json` and `model.safetensors` under baseUrl and loads them. */
  fetchModel(baseUrl: string | URL, options?: { fetch?: typeof fetch }): Promise<TinyModel>;
  /** Current size of the module's WebAssembly memory in bytes (diagnostics, leak checks). */
  readonly memoryBytes: number;

  rope(options: RopeOptions): Rope;
  /** HF get_rope_index (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): positions [3][batch][seq] flattened, deltas per row. */
  mropePositions(inputIds: ReadonlyArray<ArrayLike<number>> | ArrayLike<number>, options: MropePositionsOptions): { positions: Int32Array; deltas: Int32Array };
  /** 2D RoPE of a vision encoder over a patch grid. */
  rope2d(options: Rope2dOptions): Rope2d;
  /**
   * The RoPE of a Hugging Face config.json object as published (all that fromHFConfig reads), for one layer type.
   * Throws a TypeError naming the reason when the model has none ("this model (bloom) uses ALiBi; use
   * pe.fromHFConfig or pe.alibiSlopes"). Unknown rope types and unknown keys in the rope parameters are errors
   * naming the key. YaRN: an explicit factor is used even where max_position_embeddings /
   * original_max_position_embeddings differs, as current transformers does (4.4x versions took the correction
   * range from max_position_embeddings and give other frequencies for such files).
   */
  ropeFromHFConfig(config: Record<string, unknown>, options?: RopeFromHFConfigOptions): Rope;
  /** The vision tower's 2D RoPE from vision_config; a TypeError naming why when it has none (SigLIP, no vision_config). */
  ropeFromHFConfig(config: Record<string, unknown>, options: { part: 'vision' }): Rope2d;
  /**
   * Every layer's position scheme from a config.json as published: text_config of multimodal wrappers with that
   * class's defaults, pairing by model type, legacy rope spellings ('su', 'mrope', type / rope_type, null),
   * partial rotary (rotary_pct, rotary_dim, partial_rotary_factor, qk_rope_head_dim), layer types, NoPE layers,
   * ALiBi and learned-table models as what they are. Llama 4 without text_config gets Llama4TextConfig's defaults,
   * as in transformers (a flattened copy's top-level keys are listed in `ignored`). docs/hf-config.md lists the
   * families. Free the result's ropes with spec.free().
   */
  fromHFConfig(config: Record<string, unknown>, options?: FromHFConfigOptions): HFPositionSpec;
  /**
   * An array in wasm memory: zero-filled of the given length, or a copy of an array. float32 by default; with
   * options.dtype 'float16' | 'bfloat16' a 16-bit tensor, from a length, a Uint16Array of raw bits, a
   * Float32Array (rounded to nearest even) or a Float16Array.
   */
  tensor(lengthOrArray: number | Float32Array, options?: TensorOptions<'float32'>): Tensor<'float32'>;
  tensor<D extends HalfDtype>(lengthOrArray: number | Float32Array | Uint16Array, options: TensorOptions<D> & { dtype: D }): Tensor<D>;

  /**
   * ALiBi slopes for any head count ≥ 1 (Press et al. 2022, BLOOM's build_alibi_tensor schedule): 2^(-8(h+1)/n)
   * for n a power of two; otherwise the n0 = largest-power-of-two slopes, then the odd-indexed slopes of the
   * 2·n0 set (the paper's interleaving). Computed in double, rounded once.
   */
  alibiSlopes(nHeads: number): Float32Array;
  /**
   * (nHeads, qLen, kLen): bias[h, i, j] = slope[h] · (j − (kLen − qLen + i)); query i sits at key position
   * kLen − qLen + i (decoding against a cache of kLen − qLen keys). causal: −Infinity where j > kLen − qLen + i
   * (with qLen > kLen the first rows are fully masked). Not causal: the same signed distance (softmax-equivalent
   * to BLOOM's per-key slope · j), not |j − i|.
   */
  alibiBias(nHeads: number, qLen: number, kLen: number, options?: AlibiBiasOptions & { out?: null }): Float32Array;
  /** The same, written into options.out, which is returned. */
  alibiBias<O extends FloatInput>(nHeads: number, qLen: number, kLen: number, options: AlibiBiasOptions & { out: O }): O;
  /**
   * BLOOM's padded-batch form, as build_alibi_tensor(attention_mask, num_heads): shape [batch · nHeads, 1, seq],
   * row b · nHeads + h = slope[h] · ((cumsum(mask[b]) − 1) · mask[b]) — a per-key position that skips padding;
   * padded keys get 0 (mask them separately). attentionMask: rows [batch][seq] of 0/1 (or booleans), or flat
   * data with options.shape [batch, seq] (default [1, length]).
   */
  alibiBiasFromMask(
    nHeads: number,
    attentionMask: ArrayLike<ArrayLike<number | boolean>> | ArrayLike<number | boolean>,
    options?: AlibiMaskOptions,
  ): Float32Array;
  /**
   * Absolute sinusoidal encodings (Vaswani et al. 2017, 3.5). Called: the (seqLen, dModel) table, row r at
   * position offset + r. `.add(x, options)`: adds them in place to (batch, seq, dModel) embeddings.
   */
  readonly sinusoidal: Sinusoidal;
  /**
   * A learned absolute position table (GPT-2, OPT): `table` is (maxLen + offset, dModel) row-major; position p
   * reads row p + offset. The table is copied into wasm memory once (a Tensor is used in place instead).
   */
  learned(table: DataInput, options: LearnedOptions): Learned;
  /**
   * Fused attention, out = softmax(scale · Q Kᵀ + bias) · V, with the online softmax (no qLen × kLen matrix
   * unless returnWeights), RoPE and ALiBi folded in, causal masking and grouped-query / multi-query attention.
   * q and out: (batch, qLen, heads, headDim) for 'bshd' or (batch, heads, qLen, headDim) for 'bhsd'; k and v
   * the same with kLen and kvHeads. q, k and v are not modified.
   *
   * Positions: key j at j and query i at kLen − qLen + i unless options.positions says otherwise. They decide
   * the causal mask (key j visible to query i iff kpos[j] ≤ qpos[i]), the ALiBi bias slope[h] · (kpos[j] −
   * qpos[i]) and the RoPE angles. A fully masked query row (causal with qLen > kLen or with explicit positions)
   * gives an all-zero output row and an all-zero weights row. Logits of any finite size (±1e4) stay finite.
   * q, k, v must hold finite values, with scale · q·k finite (not checked per element; NaN or Infinity in, NaN
   * out). The SIMD and scalar builds give bit-identical results.
   */
  attention(q: FloatInput, k: FloatInput, v: FloatInput, options: AttentionOptions & { out?: null; dtype?: 'float32' | null }): AttentionResult<Float32Array>;
  /** The same, writing into options.out (e.g. a Tensor: zero-copy). */
  attention<O extends FloatInput>(q: FloatInput, k: FloatInput, v: FloatInput, options: AttentionOptions & { out: O; dtype?: 'float32' | null }): AttentionResult<O>;
  /**
   * 16-bit storage: q, k, v (and out) hold float16 or bfloat16 bit patterns, all of options.dtype; each value is
   * widened exactly, the softmax and the accumulation run in float32 as for float32 data, and out is rounded to
   * nearest even. With a rope, the rotated q and k are rounded to the type as rope.apply would store them.
   */
  attention(q: HalfInput, k: HalfInput, v: HalfInput, options: AttentionOptions & { out?: null; dtype: HalfDtype }): AttentionResult<Uint16Array>;
  /** The same, writing into options.out. */
  attention<O extends HalfInput>(q: HalfInput, k: HalfInput, v: HalfInput, options: AttentionOptions & { out: O; dtype: HalfDtype }): AttentionResult<O>;
  /** 16-bit tensors carry their dtype: q's is the call's when options.dtype is not given. */
  attention<D extends HalfDtype>(q: Tensor<D>, k: HalfInput, v: HalfInput, options: AttentionOptions & { out?: null; dtype?: D | null }): AttentionResult<Uint16Array>;
}

export interface AlibiBiasOptions {
  /** Default false. */
  causal?: boolean;
  /** nHeads finite slopes; default pe.alibiSlopes(nHeads). */
  slopes?: Float32Array | ArrayLike<number>;
  /**
   * Where to write the bias instead of a new array: a Float32Array or Tensor of nHeads · qLen · kLen (a
   * RangeError otherwise), returned. A Tensor is written by the kernel in place (zero-copy).
   */
  out?: FloatInput | null;
}

export interface AlibiMaskOptions {
  /** [batch, seq] for flat attentionMask data; not allowed with nested rows. */
  shape?: readonly [number, number] | ArrayLike<number>;
  /** nHeads finite slopes; default pe.alibiSlopes(nHeads). */
  slopes?: Float32Array | ArrayLike<number>;
}

/**
 * Where sin and cos go: 'interleaved' (the paper, XLM, DistilBERT: sin on even, cos on odd columns) or 'half'
 * (Marian: [sin a0 .. sin a(h−1) | cos a0 .. ], h = ceil(dModel / 2)).
 */
export type SinusoidalPairing = 'interleaved' | 'half';

export interface SinusoidalOptions {
  /** Default 10000; finite, > 0. */
  base?: number;
  /** Default 'interleaved' ('half' with variant 'tensor2tensor', which allows only 'half'). */
  pairing?: SinusoidalPairing;
  /**
   * Frequencies. 'paper' (default): angle p / base^(2i/dModel) for column pair i. 'tensor2tensor' (fairseq, HF
   * FSMT): angle p · exp(−i · ln(base) / (floor(dModel/2) − 1)), sin | cos halves, a zero last column for odd
   * dModel; needs dModel ≥ 4.
   * Odd dModel otherwise follows each reference: 'interleaved' ends with a sin column, 'half' puts ceil(d/2)
   * sin columns before floor(d/2) cos columns.
   */
  variant?: 'paper' | 'tensor2tensor';
  /** FSMT's padding_idx: the row of this position is all zeros. Default none. */
  paddingIdx?: number | null;
  /**
   * Storage type of the table / of x; default 'float32', or out's / x's own (a Tensor's dtype, 'float16' for a
   * Float16Array). 16-bit: raw bits in a Uint16Array (or Float16Array, or 16-bit Tensor); add widens x exactly,
   * adds the float32 encoding and rounds once to nearest even.
   */
  dtype?: Dtype | null;
}

export interface SinusoidalTableOptions extends SinusoidalOptions {
  /** Position of row 0; default 0. offset + seqLen − 1 must fit in int32. */
  offset?: number;
  /**
   * Where to write the table instead of a new array: a Float32Array or Tensor of seqLen · dModel (a RangeError
   * otherwise), returned. A Tensor is written by the kernel in place (zero-copy).
   */
  out?: FloatInput | null;
}

export interface SinusoidalAddOptions extends SinusoidalOptions {
  /** [batch, seq, dModel]. */
  shape: readonly [number, number, number] | ArrayLike<number>;
  /**
   * Length seq (shared by the batch) or batch · seq (one row per sequence: left padding, packing); integers
   * ≥ 0. Default offset + s. Not together with offset.
   */
  positions?: Positions;
  /** Position of sequence index 0 when positions is not given; default 0. */
  offset?: number;
}

export interface Sinusoidal {
  /** The (seqLen, dModel) table, row r at position offset + r. Angles in double, one rounding to float32. */
  (seqLen: number, dModel: number, options?: SinusoidalTableOptions & { out?: null; dtype?: 'float32' | null }): Float32Array;
  /** The table in 16-bit storage: a Uint16Array of raw bits (the float32 table rounded once). */
  (seqLen: number, dModel: number, options: SinusoidalTableOptions & { out?: null; dtype: HalfDtype }): Uint16Array;
  /** The same, written into options.out, which is returned. */
  <O extends DataInput>(seqLen: number, dModel: number, options: SinusoidalTableOptions & { out: O }): O;
  /** x[b, s, :] += PE(position of (b, s)), in place; returns x. */
  add<T extends DataInput>(x: T, options: SinusoidalAddOptions): T;
}

export interface LearnedOptions {
  /** Required: the embedding width. */
  dModel: number;
  /** Positions per table; default table rows − offset. Given: the table must have (maxLen + offset) rows. */
  maxLen?: number;
  /** Rows in front of position 0 (OPT: 2, so its padding position −1 reads row 1); default 0. */
  offset?: number;
  /**
   * Storage type of the table; default the table's own (a Tensor's dtype, 'float16' for a Float16Array, else
   * 'float32'). A 16-bit table (a Uint16Array of raw bits with this option) is kept 16-bit: half the memory.
   */
  dtype?: Dtype | null;
}

export interface LearnedAddOptions {
  /** [batch, seq, dModel]; dModel must be the table's. */
  shape: readonly [number, number, number] | ArrayLike<number>;
  /** Length seq (shared) or batch · seq (one row per sequence); default 0 .. seq − 1 (then seq ≤ maxLen). */
  positions?: LearnedPositions;
  /**
   * Storage type of x (default x's own); any x dtype goes with any table dtype: 16-bit values widened exactly,
   * added in float32, a 16-bit x rounded once to nearest even.
   */
  dtype?: Dtype | null;
}

/**
 * Positions of a learned table: integers in [−offset, maxLen − 1]. A position ≥ maxLen throws a RangeError
 * naming maxLen; negative positions are the offset rows (OPT: −1 = padding, row 1), anything below −offset
 * throws. Nothing outside the table is ever read. (OPT derives them from the attention mask as
 * (cumsum(mask) · mask − 1)[:, pastLength:].)
 */
export type LearnedPositions = Int32Array | ArrayLike<number>;

export interface Learned {
  readonly maxLen: number;
  readonly dModel: number;
  readonly offset: number;
  readonly freed: boolean;
  /** The table's storage type. */
  readonly dtype: Dtype;
  /** (positions.length, dModel): the table rows of the positions (a 16-bit table's widened exactly). */
  lookup(positions: LearnedPositions): Float32Array;
  /** x[b, s, :] += table[position(b, s) + offset, :], in place; returns x. */
  add<T extends DataInput>(x: T, options: LearnedAddOptions): T;
  /** Releases the wasm copy of the table (a Tensor table stays yours); calling it again does nothing. */
  free(): void;
}

export interface AttentionShape {
  /** Default 1. */
  batch?: number;
  /** Query heads. */
  heads: number;
  /** Key/value heads; must divide heads (grouped-query; 1 = multi-query). Default heads. */
  kvHeads?: number;
  qLen: number;
  /** Default qLen. */
  kLen?: number;
  /** Any size ≥ 1; with a rope, the rope's headDim. */
  headDim: number;
  /** Head size of v and out (DeepSeek MLA: q/k 192, v 128). Default headDim. */
  vHeadDim?: number;
}

/** Element strides of a view of head vectors (headDim stays contiguous); 0 or missing: dense for the layout. */
export interface AttentionStrides {
  batch?: number;
  seq?: number;
  heads?: number;
}

/** Llama 4's NoPE-layer temperature or Mistral's llama_4_scaling_beta, as pe.fromHFConfig's layer.queryScale. */
export type QueryScaleRule =
  | { type: 'llama4_temperature'; floorScale: number; attnScale: number; at?: (position: number) => number }
  | { type: 'llama_4'; beta: number; originalMaxPositionEmbeddings: number; at?: (position: number) => number };

/**
 * Positions for attention, integers ≥ 0: an array of the kLen key positions shared by the batch (queries take
 * the last qLen of them; needs qLen ≤ kLen), or { q, k }, each shared (qLen / kLen) or one row per sequence
 * (batch · qLen / batch · kLen: left padding, packing), either optional (default: key j at j, query i at
 * kLen − qLen + i).
 */
export type AttentionPositions = Positions | { q?: Positions | null; k?: Positions | null };

export interface AttentionOptions {
  shape: AttentionShape;
  /** Memory order of q, k, v and out; default 'bshd'. */
  layout?: Layout;
  /** Key j visible to query i iff kpos[j] ≤ qpos[i]. Default false. */
  causal?: boolean;
  /**
   * RoPE of q and k (on copies) at their positions; its headDim must be shape.headDim. An M-RoPE rope (mrope
   * option, or a Qwen-VL config's) needs positions { q, k } of three streams each [t..., h..., w...] (3·qLen
   * shared or 3·batch·qLen per sequence; k's optional with kRotated); they drive the rotation only, and the
   * causal mask and ALiBi follow the token order (key j at j, query i at kLen − qLen + i), as HF masks by
   * cache_position. The result is rope.apply on q and k, then attention without a rope, bit for bit.
   */
  rope?: Rope | null;
  positions?: AttentionPositions | null;
  /** true: pe.alibiSlopes(heads); or heads finite slopes. Adds slope[h] · (kpos[j] − qpos[i]). Default none. */
  alibi?: boolean | Float32Array | ArrayLike<number>;
  /** Default 1/sqrt(headDim). Finite and not 0 in float32 (0 means the default to the C core). */
  scale?: number;
  /** Also return the (batch, heads, qLen, kLen) softmax weights (whatever the layout). Default false. */
  returnWeights?: boolean;
  /**
   * Where to write the output (e.g. a Tensor, zero-copy), of the call's dtype; must not overlap q, k or v.
   * Default a new array (a Float32Array, or a Uint16Array of bits for a 16-bit dtype).
   */
  out?: DataInput | null;
  /** The rope's "current sequence length" (dynamic, longrope). Default max(all q and k positions) + 1. */
  seqLen?: number;
  /**
   * With rope: k is already rotated (a KV cache that stores rotated keys, as HF's and llama.cpp's do, e.g.
   * filled by rope.apply(kNew, { positions })) and is used as it is; only q is rotated. Decoding then does
   * not re-rotate the whole cache on every call. The keys must have been rotated with the same rope (for
   * dynamic and longrope: the same seqLen). Key positions still drive the mask and ALiBi. Default false;
   * ignored without rope.
   */
  kRotated?: boolean;
  /** batch · kLen values, non-zero = attend (HF's attention_mask); combined with causal. A row with no key is zeros. */
  mask?: Int32Array | Uint8Array | ArrayLike<number> | null;
  /** Added to the logits; shape biasShape (default [batch, heads, qLen, kLen]). −Infinity masks. */
  bias?: FloatInput | null;
  /** [1 | batch, 1 | heads, 1 | qLen, kLen] (T5's buckets, BLOOM's padded ALiBi [batch, heads, 1, kLen]). */
  biasShape?: readonly [number, number, number, number] | null;
  /**
   * Per-query factor on scale: qLen or batch · qLen finite numbers, or a rule evaluated at the cache positions
   * kLen − qLen + i (HF's cache_position). DeepSeek's mscale² softmax factor is a plain `scale`.
   */
  queryScale?: Float32Array | ArrayLike<number> | QueryScaleRule | null;
  /** Views inside larger arrays (fused QKV, a KV cache with spare capacity); the arrays must reach every element. */
  strides?: { q?: AttentionStrides; k?: AttentionStrides; v?: AttentionStrides; out?: AttentionStrides } | null;
  /** First element of each view (elements of the dtype). strides.out / offsets.out need options.out. */
  offsets?: { q?: number; k?: number; v?: number; out?: number } | null;
  /**
   * Storage type of q, k, v and out (one for all four: a mismatch is a TypeError naming the argument). Default:
   * the type q carries (a 16-bit tensor's, float16 for a Float16Array), else 'float32'; a Uint16Array needs it
   * said. Positions, mask, bias, slopes, scales and weights are as for float32.
   */
  dtype?: Dtype | null;
}

export interface AttentionResult<O extends DataInput = Float32Array> {
  /**
   * Same shape and layout as q: a new Float32Array (Uint16Array of bits for a 16-bit dtype), or options.out
   * itself when given (for an array viewing wasm memory that the call detached by growing the memory: a fresh
   * view of the same elements).
   */
  out: O;
  /** (batch, heads, qLen, kLen) rows summing to 1 (0 for fully masked rows); only with returnWeights. */
  weights?: Float32Array;
}

// ---- Tiny models (web/src/model.js over c/model/model.c) ------------------------------------------------------

export type PositionEncoding = 'none' | 'sinusoidal' | 'learned' | 'rope' | 'alibi';
/** Inference-time RoPE scaling of a RoPE model ('trained' = as trained). */
export interface RopeScalingOption {
  type: 'trained' | 'linear' | 'ntk' | 'dynamic' | 'yarn';
  factor?: number;
}
export interface TinyModelConfig {
  vocab_size: number;
  hidden_size: number;
  num_hidden_layers: number;
  num_attention_heads: number;
  intermediate_size: number;
  max_position_embeddings: number;
  position_encoding: PositionEncoding;
  rope_theta: number;
  [key: string]: unknown;
}
export interface TinyModel {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly maxPositionEmbeddings: number;
  readonly positionEncoding: PositionEncoding;
  readonly vocab: string | null;
  readonly task: string | null;
  readonly config: TinyModelConfig;
  readonly metadata: Readonly<Record<string, string>>;
  encode(text: string): Int32Array;
  decode(tokens: ArrayLike<number>): string;
  /** logits are (seqLen, vocabSize); attention, when asked for, (layers, heads, seqLen, seqLen); q and k (qk: true),
   * (layers, seqLen, heads, headDim): each layer's query and key projections before RoPE turns them. */
  forward(
    tokens: Int32Array | number[] | string,
    options?: { attention?: boolean; qk?: boolean; ropeScaling?: RopeScalingOption | null },
  ): { logits: Float32Array; attention?: Float32Array; q?: Float32Array; k?: Float32Array; seqLen: number; vocabSize: number };
  /** Next-token loss (nats) and accuracy. */
  evaluate(
    tokens: Int32Array | number[] | string,
    options?: { targets?: ArrayLike<number>; ropeScaling?: RopeScalingOption | null },
  ): { loss: number; accuracy: number; count: number; lossSum: number; correct: number };
  free(): void;
}
export interface SafetensorsInfo {
  metadata: Record<string, string>;
  tensors: Map<string, { dtype: string; shape: number[]; begin: number; end: number }>;
  dataOffset: number;
  headerLength: number;
}
export interface ModelApi {
  loadModel(safetensors: Uint8Array | ArrayBuffer | ArrayBufferView, config: TinyModelConfig): TinyModel;
  fetchModel(baseUrl: string | URL, options?: { fetch?: typeof fetch }): Promise<TinyModel>;
  parseSafetensors(bytes: Uint8Array | ArrayBuffer | ArrayBufferView): SafetensorsInfo;
}
// ModelFileError and parseSafetensors are exported by 'posenc/model' (model.d.ts).
