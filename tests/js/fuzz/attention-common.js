// attention-common.js — what the pe.attention fuzz cases share (attention-cases.js: plain RoPE / ALiBi;
// mrope-attention-cases.js: M-RoPE): the shape fields of a case, the options every case sets the same way,
// q / k / v built from their descriptions, the unknown extra key, and the step that runs the call and compares
// it with a double reference.
import fc from 'fast-check';
import { policy, extraKeyArb, floatDescArb } from './common.js';
import { buildFloat } from './values.js';
import { compare } from './refs.js';

/** The record fields of every attention case; `fields` adds or overrides (layout, headDim, qLen bounds, ...). */
export function attnRecord(fields, { qLenMax, headDims, extraKeys }) {
  return fc.record({
    batch: fc.integer({ min: 1, max: 2 }),
    kvHeads: fc.integer({ min: 1, max: 2 }),
    group: fc.integer({ min: 1, max: 2 }),
    qLen: fc.integer({ min: 1, max: qLenMax }),
    kExtra: fc.integer({ min: 0, max: 3 }),
    headDim: fc.constantFrom(...headDims),
    layout: fc.constantFrom(undefined, 'bshd', 'bhsd'),
    causal: fc.constantFrom(undefined, true, false),
    kRotated: fc.constantFrom(undefined, true, false),
    q: floatDescArb,
    k: floatDescArb,
    v: floatDescArb,
    extra: extraKeyArb(extraKeys),
    ...fields,
  });
}

/**
 * The dimensions of a case and the options object with shape, layout, causal and kRotated as the spec gives
 * them (undefined: not set, so the defaults are exercised too).
 */
export function attnBase(spec) {
  const { batch: B, kvHeads: KVH, qLen: Sq, headDim: D } = spec;
  const H = KVH * spec.group;
  const Sk = Sq + spec.kExtra;
  const shape = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D };
  const o = { shape };
  for (const key of ['layout', 'causal', 'kRotated']) if (spec[key] !== undefined) o[key] = spec[key];
  return { B, KVH, H, Sq, Sk, D, layout: spec.layout ?? 'bshd', shape, o };
}

/** q, k, v built from the spec's descriptions (plan parts recorded). */
export function attnTensors(spec, env, plan, { B, Sq, Sk, H, KVH, D }) {
  const q = buildFloat(spec.q, env, B * Sq * H * D);
  const k = buildFloat(spec.k, env, B * Sk * KVH * D);
  const v = buildFloat(spec.v, env, B * Sk * KVH * D);
  plan.part('q', q.fate).part('k', k.fate).part('v', v.fate);
  return { q, k, v };
}

/** The spec's unknown option key, if any: set to 1, and the plan expects the unknown-key policy. */
export function addExtraKey(spec, o, plan) {
  if (spec.extra === null) return;
  o[spec.extra] = 1;
  plan.part(spec.extra, policy.unknownKey);
}

/**
 * The one step of an attention case. `checked`: whether the output is compared (inputs with expected values
 * and no deliberate error); `reference(r)` -> { out, weights? } in double, `what` names the comparison;
 * `more(r, ref)` -> a further problem or null (weights, the returned out).
 */
export function attnStep({ plan, env, t, o, extra = [], cleanup, checked, reference, what, more }) {
  const { q, k, v } = t;
  return {
    plan,
    cleanup: () => {
      for (const x of [q, k, v, ...extra]) x?.cleanup();
      cleanup();
    },
    run: () => env.pe.attention(q.value, k.value, v.value, o),
    check: (r) => {
      if (q.expected === null || k.expected === null || v.expected === null || !checked) return null;
      const ref = reference(r);
      const bad = compare(what, r.out.array ?? r.out, ref.out, () => 5e-5);
      return bad || (more ? more(r, ref) : null);
    },
  };
}
