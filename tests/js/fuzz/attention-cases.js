// attention-cases.js — fuzz cases for pe.attention, checked against tests/js/attention-ref.js (naive double
// attention with RoPE and ALiBi). See rope-cases.js for the shape of a case.
import fc from 'fast-check';
import { maybe, mostly, Plan } from './common.js';
import { buildFloat, proxyOf, changingGetter } from './values.js';
import { refAlibiSlopes, compare } from './refs.js';
import { attnRecord, attnBase, attnTensors, addExtraKey, attnStep } from './attention-common.js';
import { refAttention } from '../attention-ref.js';
import { refApply } from '../helpers.js';

// ---- attention --------------------------------------------------------------------------------------------

export const attnCaseArb = attnRecord({
  layout: mostly([undefined, 'bshd', 'bhsd'], ['bsdh'], 0.05),
  causal: mostly([undefined, true, false], [1], 0.05),
  rope: mostly([null, 'same'], ['foreign', 'freed', 'otherDim', 'notRope'], 0.1),
  alibi: mostly([undefined, undefined, true, 'slopes'], ['short', 'nan'], 0.05),
  scale: mostly([undefined, undefined, 0.3, 2, -0.5], [NaN, 0, 1e-46, 1e39, '1'], 0.05),
  positions: mostly([null, null, 'array', 'qk', 'qOnly'], ['negative', 'shortK', 'proxy'], 0.1),
  returnWeights: fc.constantFrom(undefined, true, false),
  out: mostly([null, null, 'f32', 'tensor'], ['overlapQ', 'short'], 0.05),
  huge: maybe(fc.constantFrom({ heads: 1, qLen: 16385, kLen: 32768, headDim: 1, returnWeights: true }, { heads: 2 ** 16, qLen: 2 ** 16, kLen: 1, headDim: 1 }, { heads: 1, qLen: 1, kLen: 2 ** 31, headDim: 2 }, { heads: 2 ** 32 + 1, qLen: 1, kLen: 1, headDim: 1 }), 0.06),
  changeShape: fc.constantFrom(false, false, false, false, true),
}, { qLenMax: 5, headDims: [2, 4, 8, 6], extraKeys: ['causual', 'positionIds', 'scales', 'mask_'] });

export function attnSteps(spec, env) {
  const plan = new Plan('attention');
  const dims = attnBase(spec);
  const { B, H, Sq, Sk, D, layout, shape, o } = dims;
  plan.part('layout', spec.layout === 'bsdh' ? 'error' : 'ok');
  plan.part('causal', spec.causal === 1 ? 'error' : 'ok');
  let rope = null;
  if (spec.rope !== null) {
    if (spec.rope === 'same') rope = env.pe.rope({ headDim: D, base: 10000 });
    if (spec.rope === 'foreign') rope = env.other.rope({ headDim: D });
    if (spec.rope === 'freed') (rope = env.pe.rope({ headDim: D })).free();
    if (spec.rope === 'otherDim') rope = env.pe.rope({ headDim: D + 2 });
    if (spec.rope === 'notRope') rope = { headDim: D, apply() {} };
    o.rope = rope;
    plan.part('rope', spec.rope === 'same' ? 'ok' : 'error');
  }
  let slopes = null;
  if (spec.alibi !== undefined) {
    if (spec.alibi === true) {
      o.alibi = true;
      slopes = Array.from(refAlibiSlopes(H), Math.fround);
    } else {
      const vals = Array.from({ length: H }, (_, h) => Math.fround(0.3 / (h + 1)));
      o.alibi = spec.alibi === 'slopes' ? Float32Array.from(vals) : spec.alibi === 'short' ? vals.slice(1) : [...vals.slice(1), NaN];
      slopes = vals;
      plan.part('alibi', spec.alibi === 'slopes' ? 'ok' : 'error');
    }
  }
  if (spec.scale !== undefined) {
    o.scale = spec.scale;
    const ok = typeof spec.scale === 'number' && Number.isFinite(Math.fround(spec.scale)) && Math.fround(spec.scale) !== 0;
    plan.part('scale', ok ? 'ok' : 'error');
  }
  let qpos = Array.from({ length: Sq }, (_, i) => Sk - Sq + i);
  let kpos = Array.from({ length: Sk }, (_, j) => j);
  if (spec.positions !== null) {
    const kp = kpos.map((j) => 3 * j + 1);
    switch (spec.positions) {
      case 'array':
        o.positions = kp;
        kpos = kp;
        qpos = kp.slice(Sk - Sq);
        break;
      case 'qk':
        qpos = qpos.map((p) => p + 7);
        o.positions = { q: qpos, k: Int32Array.from(kp) };
        kpos = kp;
        break;
      case 'qOnly':
        qpos = qpos.map((p) => 2 * p);
        o.positions = { q: Int32Array.from(qpos) };
        break;
      case 'negative':
        o.positions = { q: qpos.map((p, i) => (i === 0 ? -1 : p)) };
        plan.part('positions', 'error');
        break;
      case 'shortK':
        o.positions = { k: kp.slice(1) };
        plan.part('positions', Sk > 0 ? 'error' : 'ok');
        break;
      case 'proxy':
        o.positions = proxyOf(Int32Array.from(kp));
        kpos = kp;
        qpos = kp.slice(Sk - Sq);
        plan.part('positions', 'either');
        break;
      default:
        throw new Error(spec.positions);
    }
  }
  if (spec.returnWeights !== undefined) o.returnWeights = spec.returnWeights;
  const nq = B * Sq * H * D;
  const t = attnTensors(spec, env, plan, dims);
  const { q } = t;
  let out = null;
  if (spec.out !== null) {
    if (spec.out === 'overlapQ') {
      if (spec.q.kind === 'tensor' || spec.q.kind === 'wasmView') {
        out = { value: q.value, fate: 'error', expected: null, cleanup() {} };
      } else {
        out = buildFloat({ kind: 'f32', seed: 4 }, env, nq);
      }
    } else {
      out = buildFloat({ kind: spec.out === 'short' ? 'wrongLength' : spec.out, seed: 4, delta: -1 }, env, nq);
    }
    o.out = out.value;
    plan.part('out', out.fate);
  }
  if (spec.huge !== null) {
    Object.assign(shape, { batch: 1, kvHeads: undefined, ...spec.huge });
    delete shape.kvHeads;
    if (spec.huge.returnWeights) o.returnWeights = true;
    delete o.rope;
    plan.part('shape', 'error');
    // q, k, v (sized for the small shape) no longer match either: any of them may be named first
    for (const name of ['q', 'k', 'v', 'out', 'positions', 'weights']) plan.part(name, 'either');
  }
  addExtraKey(spec, o, plan);
  if (spec.changeShape && spec.huge === null) {
    o.shape = changingGetter(shape, 'qLen', shape.qLen, 2 ** 20); // right on the first read only
    plan.part('shape', 'either').part('qLen', 'either').part('q', 'either');
  }
  return [
    attnStep({
      plan,
      env,
      t,
      o,
      extra: [out],
      cleanup: () => {
        if (spec.rope === 'same' || spec.rope === 'otherDim' || spec.rope === 'foreign') rope.free();
      },
      checked: spec.positions !== 'proxy',
      what: 'attention.out',
      reference: () => {
        const refOpts = { layout, causal: spec.causal === true, scale: spec.scale, slopes, qpos, kpos };
        let qd = q.expected;
        if (rope !== null) {
          const seqLen = Math.max(...qpos, ...kpos) + 1;
          const ropeRef = { invFreq: rope.invFreq64(seqLen), pairing: rope.pairing, scale: rope.attentionScaling(seqLen) };
          if (spec.kRotated === true) {
            qd = refApply(q.expected, { shape: [B, Sq, H, D], layout, positions: qpos, ...ropeRef });
          } else {
            refOpts.rope = ropeRef;
          }
        }
        return refAttention(qd, t.k.expected, t.v.expected, { ...shape, qLen: Sq }, refOpts);
      },
      more: (r, ref) => {
        if (out !== null && r.out !== out.value && !(out.value instanceof Float32Array)) return 'attention did not return options.out as out';
        if (spec.returnWeights !== true) return null;
        if (!r.weights) return 'returnWeights: no weights';
        return compare('attention.weights', r.weights, ref.weights, () => 5e-6);
      },
    }),
  ];
}
