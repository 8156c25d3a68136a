// common.js — shared pieces of the fuzz cases: the plan of one call (what the API must do with it), the
// judge of its outcome, and the fast-check arbitraries of argument descriptions.
import fc from 'fast-check';
import { FuzzGetterError, HUGE_SIZES, NOT_SIZES, show } from './values.js';

/** Sizes that must always be refused: as a dimension of anything, they make more than 2^30 floats (4 GiB). */
export const HUGE_REFUSED = HUGE_SIZES.filter((v) => v >= 2 ** 30);

/**
 * What the fuzzer demands beyond issue 10's hardening. unknownKey: the fate of an options object with an
 * unknown key (DESIGN "Strict options", issue 11): 'error' (every entry point is strict since jscore 979d681;
 * set it to 'either' to fuzz a build from before).
 * hfStrict: ropeFromHFConfig of a model without RoPE (BLOOM, GPT-2), which DESIGN says throws, and of a fractional
 * num_attention_heads or hidden_size: 'error' (so since main 919388d; hf-config.js belongs to branch hfconfig).
 */
export const policy = { unknownKey: 'error', hfStrict: 'error' };

/** The float32 count no call can allocate: 4 GiB of wasm memory holds at most 2^30 floats. */
export const NEVER_FITS = 2 ** 30;

/**
 * What the API must do with one call, from the fates of its parts (see values.js): 'ok' when every part is
 * valid, 'error' when a part is invalid, 'either' otherwise; and the names an error message may name.
 */
export class Plan {
  constructor(where) {
    this.where = where;
    this.fates = [];
    this.names = [];
  }
  part(name, fate) {
    this.fates.push(fate);
    if (fate !== 'ok') this.names.push(name);
    return this;
  }
  get fate() {
    return this.fates.includes('error') ? 'error' : this.fates.includes('either') ? 'either' : 'ok';
  }
}

function nameIn(message, name) {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9_])${esc}([^A-Za-z0-9_]|$)`).test(message);
}

/**
 * null when the outcome of a call is what the plan allows, else the violation. outcome: { ok, value, error,
 * ms }. check(value): null or what is wrong with a returned value (only for plans that may succeed).
 */
export function judge(plan, outcome, check) {
  if (outcome.ms > 5000) return `took ${Math.round(outcome.ms)} ms (a hang for a call this small)`;
  if (!outcome.ok) {
    const e = outcome.error;
    if (e instanceof FuzzGetterError) return null; // the caller's own getter threw: passing it through is right
    if (e instanceof WebAssembly.RuntimeError) return `wasm trap (WebAssembly.RuntimeError: ${e.message})`;
    if (!(e instanceof TypeError || e instanceof RangeError)) {
      return `threw ${e?.constructor?.name ?? typeof e} (not TypeError/RangeError): ${e?.message ?? show(e)}`;
    }
    if (plan.fate === 'ok') return `refused a valid call: ${e.name}: ${e.message}`;
    if (!e.message.includes(plan.where)) return `${e.name} does not name the function ${plan.where}: ${e.message}`;
    if (plan.names.length && !plan.names.some((n) => nameIn(e.message, n))) {
      return `${e.name} names none of the suspect arguments [${plan.names.join(', ')}]: ${e.message}`;
    }
    return null;
  }
  if (plan.fate === 'error') return `accepted invalid arguments [${plan.names.join(', ')}] (returned ${describeValue(outcome.value)})`;
  if (check) {
    try {
      return check(outcome.value);
    } catch (e) {
      return `checking the result threw ${e?.name}: ${e?.message}`;
    }
  }
  return null;
}

function describeValue(v) {
  if (v === null || v === undefined || typeof v !== 'object') return show(v);
  if (ArrayBuffer.isView(v)) return `${v.constructor.name}(${v.length})`;
  return v.constructor?.name ?? 'an object';
}

/** Runs fn, timing it; never throws. */
export function attempt(fn) {
  const t0 = performance.now();
  try {
    const value = fn();
    return { ok: true, value, ms: performance.now() - t0 };
  } catch (error) {
    return { ok: false, error, ms: performance.now() - t0 };
  }
}

// ---- arbitraries of argument descriptions -----------------------------------------------------------------

/** { fate, v } for an integer argument with valid range [lo, hi] (hi small enough to be cheap). */
export function sizeArb(lo, hi, { huge = true } = {}) {
  const parts = [
    { weight: 20, arbitrary: fc.integer({ min: lo, max: hi }).map((v) => ({ fate: 'ok', v })) },
    { weight: 1, arbitrary: fc.constantFrom(...NOT_SIZES, lo - 1).map((v) => ({ fate: 'error', v })) },
  ];
  if (huge) parts.push({ weight: 1, arbitrary: fc.constantFrom(...HUGE_REFUSED).map((v) => ({ fate: 'error', v })) });
  return fc.oneof(...parts);
}

/** arb with probability p, else null. */
export function maybe(arb, p) {
  const w = Math.round(p * 100);
  return fc.oneof({ weight: 100 - w, arbitrary: fc.constant(null) }, { weight: w, arbitrary: arb });
}

/** One of `good` (mostly) or one of `bad` (with probability p): keeps most calls valid so results get checked. */
export function mostly(good, bad, p = 0.1) {
  const w = Math.round(p * 100);
  return fc.oneof({ weight: 100 - w, arbitrary: fc.constantFrom(...good) }, { weight: w, arbitrary: fc.constantFrom(...bad) });
}

/** An unknown option key (a near miss of a real one) or none. */
export function extraKeyArb(keys) {
  return maybe(fc.constantFrom(...keys), 0.06);
}

/** Descriptions of float32 data (values.js buildFloat); mostly valid kinds. */
export const floatDescArb = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      kind: fc.constantFrom('f32', 'f32', 'f32sub', 'tensor', 'wasmView'),
      seed: fc.nat(1000),
      pad: fc.integer({ min: 1, max: 5 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.record({ kind: fc.constant('wrongLength'), delta: fc.constantFrom(-1, 1, 7) }),
      fc.record({ kind: fc.constant('lookalike'), offset: fc.constantFrom(0, 8, 1024, 65536) }),
      fc.record({ kind: fc.constant('proxy'), seed: fc.nat(100) }),
      fc.record({ kind: fc.constant('proxyLen'), later: fc.constantFrom(0, 1, 2 ** 20, 2 ** 31) }),
      fc.constantFrom(
        { kind: 'detached' },
        { kind: 'freed' },
        { kind: 'foreign' },
        { kind: 'f64' },
        { kind: 'u16' },
        { kind: 'i32' },
        { kind: 'array' },
      ),
      fc.constantFrom(null, 5, 'x', {}, 7n).map((v) => ({ kind: 'value', v })),
    ),
  },
);

/** Descriptions of positions (materialized by positionsOf). */
export const posDescArb = fc.record({
  kind: fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom('i32', 'i32', 'i32', 'array', 'array', 'wasmI32') },
    { weight: 3, arbitrary: fc.constantFrom('proxy', 'lenChange', 'f32', 'big', 'detached', 'lookalike', 'throwIdx', 'value') },
  ),
  len: fc.constantFrom('seq', 'seq', 'seq', 'seq', 'batch', 'batch', 'batch', 'wrong'),
  maxPos: fc.constantFrom(8, 1000, 65536, 2147483647),
  seed: fc.nat(1000),
  bad: maybe(fc.constantFrom(-1, 2 ** 31, 0.5, NaN, Infinity, '3', -0, 2 ** 32 + 1), 0.08),
  later: fc.constantFrom(0, 2 ** 20, 2 ** 31),
  v: fc.constantFrom(5, 'abc', {}, true),
});

/** Integer values for a positions description: `n` of them in [lo, maxPos], from its seed. */
export function positionValues(d, n, lo = 0) {
  const out = [];
  let a = (d.seed * 2654435761 + 12345) >>> 0;
  const span = d.maxPos - lo + 1;
  for (let i = 0; i < n; i++) {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    const r = a / 4294967296;
    // include the ends of the range now and then
    out.push(i % 7 === 3 ? d.maxPos : i % 11 === 5 ? lo : lo + Math.floor(r * span));
  }
  if (d.bad !== null && n > 0) out[n - 1] = d.bad;
  return out;
}

export { show };
