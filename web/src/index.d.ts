// posenc — types. The single source of truth for the JS API's shape (both entries, 'posenc' and 'posenc/url',
// export the same API).
//
// Conventions:
// - Float data are Float32Array or Tensor (wasm memory, zero-copy). Results are new Float32Arrays, or the
//   input itself for in-place operations.
// - Positions are an Int32Array (checked by one scan in wasm, no per-element JS work) or any array-like of
//   integers in [0, 2^31 - 1].
// - Wrong types throw TypeError, out-of-range values RangeError; the message names the argument and the bound,
//   e.g. "rope: headDim must be an even integer in [2, 1024], got 7". A failed call changes nothing.

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

/** A float32 array that lives in wasm memory: pass it wherever a Float32Array is accepted, with no copy. */
export interface Tensor {
  /**
   * A view of the data. Re-derived whenever the wasm memory has grown (any posenc call may grow it), so read
   * it again after each call instead of keeping it. Throws after free().
   */
  readonly array: Float32Array;
  readonly length: number;
  /** True once free() has been called. */
  readonly freed: boolean;
  /** Releases the memory; calling it again does nothing. */
  free(): void;
}

/** Float input: copied in and out (Float32Array) or used in place (Tensor, or a Float32Array viewing wasm memory). */
export type FloatInput = Float32Array | Tensor;

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
  /** rope_theta: finite, > 0, != 1; default 10000. */
  base?: number;
  /** Default 'half'. */
  pairing?: Pairing;
  /** dynamic: required. yarn / longrope: used for the default factor and original max. */
  maxPositionEmbeddings?: number;
  /** Default: no scaling ({ type: 'default' }). */
  scaling?: RopeScaling | null;
}

export interface ApplyOptions {
  /** [batch, seq, heads, headDim]: the logical sizes, whatever the layout. */
  shape: readonly [number, number, number, number] | ArrayLike<number>;
  /** Memory order of x; default 'bshd'. */
  layout?: Layout;
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
}

export interface RerotateOptions {
  /** Optional: checked against x when given; every head vector turns by the same angle whatever the layout. */
  shape?: readonly [number, number, number, number] | ArrayLike<number>;
  layout?: Layout;
  /** Which frequencies (dynamic, longrope); default none (HF's seq_len=None). */
  seqLen?: number;
}

export interface Rope {
  readonly headDim: number;
  readonly rotaryDim: number;
  /** Frequencies per position (width of invFreq and of each cosSin row): rotaryDim / 2, or headDim / 2 for 'proportional'. */
  readonly nFreq: number;
  readonly pairing: Pairing;
  readonly type: RopeType;
  readonly base: number;
  /** The resolved options, defaults filled in the way Hugging Face does (a fresh copy each time). */
  readonly config: Readonly<Record<string, unknown>>;
  readonly freed: boolean;

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
  cosSin(positions: Positions, seqLen?: number): { cos: Float32Array; sin: Float32Array };
  /** Rotates x in place and returns it (for a view of wasm memory that the call had to detach: a fresh view of the same elements). */
  apply<T extends FloatInput>(x: T, options: ApplyOptions): T;
  /**
   * Re-rotates already-rotated vectors (cached keys) by a position delta (either sign): a pure rotation, so
   * rerotate(apply(x at p), delta) == apply(x at p + delta). In place; returns x.
   */
  rerotate<T extends FloatInput>(x: T, delta: number, options?: RerotateOptions): T;
  /** Releases the wasm object; calling it again does nothing. Other methods then throw. */
  free(): void;
}

export interface RopeFromHFConfigOptions {
  /** Not in config.json: 'interleaved' for GPT-J / CodeGen style checkpoints. Default 'half'. */
  pairing?: Pairing;
  /** For rope_parameters keyed by layer type ({ full_attention: {...}, sliding_attention: {...} }). */
  layerType?: string;
}

export interface Posenc {
  /** Which build is running. */
  readonly simd: boolean;
  /** Current size of the module's WebAssembly memory in bytes (diagnostics, leak checks). */
  readonly memoryBytes: number;

  rope(options: RopeOptions): Rope;
  /**
   * A Hugging Face config.json object, as it is: newer rope_parameters (rope_type, rope_theta,
   * partial_rotary_factor inside) or older top-level rope_theta + rope_scaling (type or rope_type) +
   * partial_rotary_factor; head_dim or hidden_size // num_attention_heads (or qk_rope_head_dim); GPT-J's top-level rotary_dim,
   * GPT-NeoX's rotary_pct / rotary_emb_base; Phi-3's top-level original_max_position_embeddings (overrides the
   * one in the rope parameters).
   */
  ropeFromHFConfig(config: Record<string, unknown>, options?: RopeFromHFConfigOptions): Rope;
  /** A float32 array in wasm memory: zero-filled of the given length, or a copy of a Float32Array. */
  tensor(lengthOrArray: number | Float32Array): Tensor;

  // ---------------------------------------------------------------------------------------------------
  // Declared by the DESIGN.md contract and implemented by the encodings / attention work. Until their
  // implementation lands in web/src, these members are absent at run time.
  // ---------------------------------------------------------------------------------------------------

  /** ALiBi slopes for any head count (Press et al. 2022; BLOOM's schedule). */
  alibiSlopes?(nHeads: number): Float32Array;
  /** (nHeads, qLen, kLen): slope * (j - i). */
  alibiBias?(nHeads: number, qLen: number, kLen: number, options?: { causal?: boolean }): Float32Array;
  /** (seqLen, dModel) absolute sinusoidal table; 'interleaved' (paper) or 'half' (Marian). */
  sinusoidal?(seqLen: number, dModel: number, options?: { base?: number; offset?: number; pairing?: Pairing }): Float32Array;
  /** Learned absolute position table; add() throws RangeError past maxLen. */
  learned?(
    table: Float32Array,
    options: { maxLen: number; dModel: number; offset?: number },
  ): { add<T extends FloatInput>(x: T, options: { shape: readonly [number, number, number]; positions?: Positions }): T };
  /** Attention with RoPE / ALiBi folded in. */
  attention?(
    q: FloatInput,
    k: FloatInput,
    v: FloatInput,
    options: {
      shape: { batch: number; heads: number; kvHeads?: number; qLen: number; kLen: number; headDim: number };
      layout?: Layout;
      causal?: boolean;
      rope?: Rope;
      positions?: Positions;
      alibi?: boolean | Float32Array;
      scale?: number;
      returnWeights?: boolean;
    },
  ): { out: Float32Array; weights?: Float32Array };
}
