// mrope-attention-cases.js — fuzz cases for pe.attention with an M-RoPE rope (positions { q, k } of three
// streams), checked against ../mrope-ref.js (double M-RoPE) and ../attention-ref.js (double attention, causal by
// token order). See rope-cases.js for the shape of a case.
import fc from 'fast-check';
import { policy, mostly, Plan, extraKeyArb, floatDescArb } from './common.js';
import { buildFloat, proxyOf, changingGetter } from './values.js';
import { compare } from './refs.js';
import { refAttention } from '../attention-ref.js';
import { refMrope } from '../mrope-ref.js';

export const mropeAttnCaseArb = fc.record({
  batch: fc.integer({ min: 1, max: 2 }),
  kvHeads: fc.integer({ min: 1, max: 2 }),
  group: fc.integer({ min: 1, max: 2 }),
  qLen: fc.integer({ min: 1, max: 4 }),
  kExtra: fc.integer({ min: 0, max: 3 }),
  headDim: fc.constantFrom(4, 6, 8),
  layout: fc.constantFrom(undefined, 'bshd', 'bhsd'),
  pairing: fc.constantFrom('half', 'interleaved'),
  interleaved: fc.boolean(),
  causal: fc.constantFrom(undefined, true, false),
  kRotated: fc.constantFrom(undefined, true, false),
  qRows: fc.constantFrom('shared', 'perSeq'),
  kRows: fc.constantFrom('shared', 'perSeq'),
  bad: mostly([null, null, null], ['noPositions', 'oneArray', 'missingQ', 'notDiv3', 'wrongRows', 'negative', 'float', 'proxy', 'changingQ', 'dtype'], 0.25),
  q: floatDescArb,
  k: floatDescArb,
  v: floatDescArb,
  seed: fc.integer({ min: 0, max: 1000 }),
  extra: extraKeyArb(['position', 'rotate']),
});

/** three streams of `rows` small positions: text runs and image-like blocks */
function streams(rows, seed) {
  const p = new Int32Array(3 * rows);
  let next = seed % 50;
  for (let r = 0; r < rows; r++) {
    const img = (seed >> r) & 1;
    p[r] = next;
    p[rows + r] = next + (img ? (r * 7) % 3 : 0);
    p[2 * rows + r] = next + (img ? (r * 5) % 4 : 0);
    next += img ? 0 : 1;
  }
  return p;
}

export function mropeAttnSteps(spec, env) {
  const plan = new Plan('attention');
  const { batch: B, kvHeads: KVH, qLen: Sq, headDim: D } = spec;
  const H = KVH * spec.group;
  const Sk = Sq + spec.kExtra;
  const layout = spec.layout ?? 'bshd';
  const half = D / 2;
  const section = spec.interleaved ? [1, 1, 1] : [1, 1, half - 2];
  const rope = env.pe.rope({ headDim: D, base: 10000, pairing: spec.pairing, mrope: { section, interleaved: spec.interleaved } });
  const shape = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D };
  const o = { shape, rope };
  if (spec.layout !== undefined) o.layout = spec.layout;
  if (spec.causal !== undefined) o.causal = spec.causal;
  if (spec.kRotated !== undefined) o.kRotated = spec.kRotated;
  const qRows = spec.qRows === 'perSeq' ? B * Sq : Sq;
  const kRows = spec.kRows === 'perSeq' ? B * Sk : Sk;
  const pq = streams(qRows, spec.seed);
  const pk = streams(kRows, spec.seed + 1);
  o.positions = { q: pq, k: pk };
  switch (spec.bad) {
    case null:
      break;
    case 'noPositions':
      delete o.positions;
      plan.part('positions', 'error');
      break;
    case 'oneArray':
      o.positions = pk;
      plan.part('positions', 'error');
      break;
    case 'missingQ':
      o.positions = { k: pk };
      plan.part('positions.q', 'error');
      break;
    case 'notDiv3':
      o.positions = { q: pq.subarray(1), k: pk };
      plan.part('positions.q', 'error');
      break;
    case 'wrongRows':
      o.positions = { q: pq, k: new Int32Array(3 * (B * Sk + 1)) };
      plan.part('positions.k', 'error');
      break;
    case 'negative':
      o.positions = { q: Array.from(pq, (x, i) => (i === pq.length - 1 ? -1 : x)), k: pk };
      plan.part('positions.q', 'error');
      break;
    case 'float':
      o.positions = { q: pq, k: Array.from(pk, (x, i) => (i === 0 ? 0.5 : x)) };
      plan.part('positions.k', 'error');
      break;
    case 'proxy':
      o.positions = { q: proxyOf(pq), k: pk };
      plan.part('positions.q', 'either');
      break;
    case 'changingQ':
      o.positions = changingGetter({ k: pk }, 'q', pq, new Int32Array(1));
      plan.part('positions.q', 'either').part('positions', 'either');
      break;
    case 'dtype':
      o.dtype = 'float16';
      plan.part('dtype', 'error');
      break;
    default:
      throw new Error(spec.bad);
  }
  const nq = B * Sq * H * D;
  const nk = B * Sk * KVH * D;
  const q = buildFloat(spec.q, env, nq);
  const k = buildFloat(spec.k, env, nk);
  const v = buildFloat(spec.v, env, nk);
  plan.part('q', q.fate).part('k', k.fate).part('v', v.fate);
  if (spec.extra !== null) {
    o[spec.extra] = 1;
    plan.part(spec.extra, policy.unknownKey);
  }
  return [
    {
      plan,
      cleanup: () => {
        for (const t of [q, k, v]) t?.cleanup();
        rope.free();
      },
      run: () => env.pe.attention(q.value, k.value, v.value, o),
      check: (r) => {
        if (q.expected === null || k.expected === null || v.expected === null || spec.bad !== null) return null;
        const common = { layout, rd: D, base: 10000, pairing: spec.pairing, section, interleaved: spec.interleaved };
        const qd = refMrope(q.expected, { ...common, shape: [B, Sq, H, D], pos3: pq, rows: qRows });
        const kd = spec.kRotated === true ? k.expected : refMrope(k.expected, { ...common, shape: [B, Sk, KVH, D], pos3: pk, rows: kRows });
        const ref = refAttention(qd, kd, v.expected, shape, { layout, causal: spec.causal === true });
        return compare('attention.out (M-RoPE)', r.out.array ?? r.out, ref.out, () => 5e-5);
      },
    },
  ];
}
