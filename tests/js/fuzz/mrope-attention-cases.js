// mrope-attention-cases.js — fuzz cases for pe.attention with an M-RoPE rope (positions { q, k } of three
// streams), checked against ../mrope-ref.js (double M-RoPE) and ../attention-ref.js (double attention, causal by
// token order). See rope-cases.js for the shape of a case.
import fc from 'fast-check';
import { mostly, Plan } from './common.js';
import { proxyOf, changingGetter } from './values.js';
import { attnRecord, attnBase, attnTensors, addExtraKey, attnStep } from './attention-common.js';
import { refAttention } from '../attention-ref.js';
import { refMrope } from '../mrope-ref.js';

export const mropeAttnCaseArb = attnRecord({
  pairing: fc.constantFrom('half', 'interleaved'),
  interleaved: fc.boolean(),
  qRows: fc.constantFrom('shared', 'perSeq'),
  kRows: fc.constantFrom('shared', 'perSeq'),
  bad: mostly([null, null, null], ['noPositions', 'oneArray', 'missingQ', 'notDiv3', 'wrongRows', 'negative', 'float', 'proxy', 'changingQ', 'dtype'], 0.25),
  seed: fc.integer({ min: 0, max: 1000 }),
}, { qLenMax: 4, headDims: [4, 6, 8], extraKeys: ['position', 'rotate'] });

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
  const dims = attnBase(spec);
  const { B, KVH, H, Sq, Sk, D, layout, shape, o } = dims;
  const half = D / 2;
  const section = spec.interleaved ? [1, 1, 1] : [1, 1, half - 2];
  const rope = env.pe.rope({ headDim: D, base: 10000, pairing: spec.pairing, mrope: { section, interleaved: spec.interleaved } });
  o.rope = rope;
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
  const t = attnTensors(spec, env, plan, dims);
  addExtraKey(spec, o, plan);
  return [
    attnStep({
      plan,
      env,
      t,
      o,
      cleanup: () => rope.free(),
      checked: spec.bad === null,
      what: 'attention.out (M-RoPE)',
      reference: () => {
        const common = { layout, rd: D, base: 10000, pairing: spec.pairing, section, interleaved: spec.interleaved };
        const qd = refMrope(t.q.expected, { ...common, shape: [B, Sq, H, D], pos3: pq, rows: qRows });
        const kd = spec.kRotated === true ? t.k.expected : refMrope(t.k.expected, { ...common, shape: [B, Sk, KVH, D], pos3: pk, rows: kRows });
        return refAttention(qd, kd, t.v.expected, shape, { layout, causal: spec.causal === true });
      },
    }),
  ];
}
