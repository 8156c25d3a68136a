// Shared helpers for the node --test suites: loading both builds, golden files, a seeded PRNG, a naive
// double-precision RoPE reference, and a tracker of the worst error measured per check.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';

/** Both builds; every suite runs its tests on each. */
export const BUILDS = [
  { name: 'simd', simd: true },
  { name: 'scalar', simd: false },
];

/**
 * The posenc instance for one build. init({ simd: true }) throws when the engine cannot run the SIMD build;
 * Node 20 can, so that is a failure here, not a skip.
 */
export async function loadBuild(simd) {
  const pe = await init({ simd });
  assert.equal(pe.simd, simd, `init({ simd: ${simd} }) returned the ${pe.simd ? 'SIMD' : 'scalar'} build`);
  return pe;
}

// The reference vectors the tests read: <repo>/tests/golden/ (tests/golden/README.md, PROVENANCE.md).
export const GOLDEN_DIR = new URL('../golden/', import.meta.url);

const goldenCache = new Map();
export function loadGolden(file) {
  if (!goldenCache.has(file)) goldenCache.set(file, JSON.parse(readFileSync(new URL(file, GOLDEN_DIR), 'utf8')));
  return goldenCache.get(file);
}

/**
 * A golden case's `config` as the config.json it stands for: the Phi-3 style top-level attribute is stored as
 * `original_max_position_embeddings_attr` in the golden files (README: "a Phi-3 style top-level config
 * attribute"), and `resolved_rope_parameters` is transformers' output, not part of config.json.
 */
export function configJsonOf(goldenConfig) {
  const { resolved_rope_parameters: _resolved, original_max_position_embeddings_attr: attr, ...config } = goldenConfig;
  if (attr !== undefined) config.original_max_position_embeddings = attr;
  return config;
}

/** The same config in the older spelling: top-level rope_theta + rope_scaling + partial_rotary_factor. */
export function olderSpellingOf(configJson) {
  const { rope_parameters: rp, ...rest } = configJson;
  if (!rp) return rest;
  const { rope_theta, partial_rotary_factor, rope_type, ...scaling } = rp;
  const out = { ...rest, rope_theta };
  if (partial_rotary_factor !== undefined) out.partial_rotary_factor = partial_rotary_factor;
  // "type" is the oldest key name; use it for half of the types so both spellings get exercised.
  const typeKey = ['linear', 'yarn', 'llama3'].includes(rope_type) ? 'type' : 'rope_type';
  out.rope_scaling = rope_type === 'default' && Object.keys(scaling).length === 0 ? null : { [typeKey]: rope_type, ...scaling };
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Seeded PRNG (no Math.random anywhere in the tests)
// ---------------------------------------------------------------------------------------------------------

/** mulberry32: small, fast, good enough for test data; deterministic from the seed. */
export function makeRng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    uniform: next,
    /** integer in [lo, hi] */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    /** even integer in [lo, hi] (lo, hi even) */
    even: (lo, hi) => lo + 2 * Math.floor(next() * ((hi - lo) / 2 + 1)),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    /** standard normal (Box-Muller) */
    normal: () => {
      const u = 1 - next();
      const v = next();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
  };
}

export function randnF32(rng, n) {
  const x = new Float32Array(n);
  for (let i = 0; i < n; i++) x[i] = rng.normal();
  return x;
}

// ---------------------------------------------------------------------------------------------------------
// Naive double-precision reference
// ---------------------------------------------------------------------------------------------------------

/** theta_i = 1 / base^(2i / dim), i < dim/2, the default RoPE frequencies, in double. */
export function defaultInvFreq(base, dim) {
  const out = new Float64Array(dim / 2);
  for (let i = 0; i < dim / 2; i++) out[i] = 1 / Math.pow(base, (2 * i) / dim);
  return out;
}

/**
 * RoPE on x (read as doubles), written the obvious way: element by element with Math.cos / Math.sin of the
 * angle position * invFreq[i] formed in double. shape is [batch, seq, heads, headDim]; layout is the memory
 * order; positions has length seq (shared) or batch*seq; pairs are (i, i + n) for 'half' and (2i, 2i + 1) for
 * 'interleaved', n = invFreq.length; scale multiplies cos and sin (HF's attention factor). inverse turns the
 * other way.
 */
/**
 * rope.apply's shape array for a logical [batch, seq, heads, headDim] in `layout`: the tensor's own memory
 * order, what x.shape prints ([b, s, h, d] for 'bshd', [b, h, s, d] for 'bhsd').
 */
export function shapeFor(layout, [B, S, H, D]) {
  return layout === 'bhsd' ? [B, H, S, D] : [B, S, H, D];
}

export function refApply(x, { shape, layout, positions, invFreq, pairing, scale = 1, inverse = false }) {
  const [B, S, H, D] = shape;
  const n = invFreq.length;
  const out = Float64Array.from(x);
  const perBatch = positions.length !== S;
  const sign = inverse ? -1 : 1;
  for (let b = 0; b < B; b++) {
    for (let s = 0; s < S; s++) {
      const p = positions[perBatch ? b * S + s : s];
      for (let h = 0; h < H; h++) {
        const base = layout === 'bshd' ? ((b * S + s) * H + h) * D : ((b * H + h) * S + s) * D;
        for (let i = 0; i < n; i++) {
          const a = p * invFreq[i];
          const c = Math.cos(a) * scale;
          const sn = sign * Math.sin(a) * scale;
          const ia = base + (pairing === 'half' ? i : 2 * i);
          const ib = base + (pairing === 'half' ? i + n : 2 * i + 1);
          const xa = x[ia];
          const xb = x[ib];
          out[ia] = xa * c - xb * sn;
          out[ib] = xb * c + xa * sn;
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// Error measurement
// ---------------------------------------------------------------------------------------------------------

/** max |a[i] - b[i]| (and where) */
export function maxAbsDiff(a, b) {
  assert.equal(a.length, b.length, 'length mismatch');
  let worst = 0;
  let at = -1;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  return { err: worst, at };
}

/** max |a[i] - b[i]| / |b[i]| over b[i] != 0 (exact-zero b[i] must match exactly) */
export function maxRelDiff(a, b) {
  assert.equal(a.length, b.length, 'length mismatch');
  let worst = 0;
  let at = -1;
  for (let i = 0; i < a.length; i++) {
    const d = b[i] === 0 ? (a[i] === 0 ? 0 : Infinity) : Math.abs(a[i] - b[i]) / Math.abs(b[i]);
    if (!(d <= worst)) {
      worst = d;
      at = i;
    }
  }
  return { err: worst, at };
}

/**
 * Worst error per check and build, for the summary line the closing note needs. record() keeps the case
 * with the largest err / tol.
 */
export class Worst {
  constructor() {
    this.rows = new Map();
  }
  record(check, build, err, tol, caseId) {
    const key = `${check}|${build}`;
    const row = this.rows.get(key);
    if (!row || err / tol > row.err / row.tol || (row.err === 0 && err > 0)) {
      this.rows.set(key, { check, build, err, tol, caseId });
    }
  }
  lines() {
    return [...this.rows.values()].map(
      (r) =>
        `worst ${r.check} [${r.build}]: ${r.err.toExponential(3)} (tolerance ${r.tol.toExponential(1)}, ${((100 * r.err) / r.tol).toFixed(2)}% of it) in ${r.caseId}`,
    );
  }
  /** Emits the lines as diagnostics of a node:test context (shown in the test output). */
  report(t) {
    for (const line of this.lines()) t.diagnostic(line);
  }
}

/** assert.throws that also checks the class and that the message names `name` (and optional more text). */
export function assertThrowsNaming(fn, cls, ...needles) {
  let caught = null;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught !== null, `expected a ${cls.name} naming ${needles.join(', ')}, but nothing was thrown`);
  assert.equal(caught.constructor, cls, `expected a ${cls.name}, got ${caught.constructor.name}: ${caught.message}`);
  for (const needle of needles) {
    assert.ok(caught.message.includes(needle), `message should name ${JSON.stringify(needle)}: ${caught.message}`);
  }
  return caught;
}

/**
 * Asserts that two float arrays hold the same bits in every element (-0 vs +0 and NaN payloads differ), for the
 * places where the code promises the SIMD and scalar builds agree bit for bit. The message names the first
 * differing element, both values, their bit patterns and how many elements differ.
 */
export function assertBitEqual(actual, expected, what) {
  assert.equal(actual.length, expected.length, `${what}: length ${actual.length} vs ${expected.length}`);
  assert.equal(actual.BYTES_PER_ELEMENT, expected.BYTES_PER_ELEMENT, `${what}: element sizes differ`);
  const Bits = actual.BYTES_PER_ELEMENT === 8 ? BigUint64Array : actual.BYTES_PER_ELEMENT === 4 ? Uint32Array : Uint16Array;
  const a = new Bits(actual.buffer, actual.byteOffset, actual.length);
  const b = new Bits(expected.buffer, expected.byteOffset, expected.length);
  let first = -1;
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) {
      if (first < 0) first = i;
      count++;
    }
  }
  if (count) {
    const hex = (v) => `0x${v.toString(16)}`;
    assert.fail(`${what}: ${count} of ${a.length} elements differ in their bits; first at ${first}: ` +
      `${actual[first]} (${hex(a[first])}) vs ${expected[first]} (${hex(b[first])})`);
  }
}
