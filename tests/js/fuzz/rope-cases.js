// rope-cases.js — fuzz cases for pe.rope(options), then a few methods on the rope made (rope-methods.js).
//
// A case is plain data (so fast-check prints and shrinks it); steps(spec, env) turns it into the calls to make,
// each with the plan of what the API must do (common.js Plan) and a check of a returned value.
import fc from 'fast-check';
import { policy, maybe, Plan, extraKeyArb } from './common.js';
import { throwingGetter, changingGetter, NASTY_FLOATS } from './values.js';
import { methodArb, methodStep, freqOf } from './rope-methods.js';

// ---- pe.rope options --------------------------------------------------------------------------------------

const evenDim = fc.integer({ min: 1, max: 32 }).map((h) => ({ fate: 'ok', v: 2 * h }));
const headDimArb = fc.oneof(
  { weight: 10, arbitrary: evenDim },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 7, 1026, 2048, -2, 2 ** 31, 2 ** 32 + 2, NaN, '64', 64n, null).map((v) => ({ fate: 'error', v })) },
);

// Positive finite odd values of base / factor are 'either': accepted, they must give finite, right results
// (issue 10 class 5); refused, a RangeError naming the field.
const positiveNasty = NASTY_FLOATS.filter((v) => Number.isFinite(v) && v > 0 && v !== 1);
export const baseArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(10000, 500000, 1e6, 10, 2, 1.5).map((v) => ({ fate: 'ok', v })) },
  { weight: 3, arbitrary: fc.double({ min: 1.5, max: 1e7, noNaN: true }).map((v) => ({ fate: 'ok', v })) },
  { weight: 2, arbitrary: fc.constantFrom(...positiveNasty, 0.5, 1e-5).map((v) => ({ fate: 'either', v })) },
  { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1, -10000, '10000', null).map((v) => ({ fate: v === null ? 'ok' : v === 1 ? 'either' : 'error', v })) },
);
export const factorArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(0.5, 1, 2, 4, 8, 16, 32).map((v) => ({ fate: 'ok', v })) },
  { weight: 2, arbitrary: fc.constantFrom(...positiveNasty).map((v) => ({ fate: 'either', v })) },
  { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -1, 0, -0, '2').map((v) => ({ fate: 'error', v })) },
);
const scalingArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ type: 'none' }) },
  { weight: 8, arbitrary: fc.record({ type: fc.constantFrom('linear', 'dynamic', 'yarn', 'llama3', 'longrope', 'proportional'), factor: factorArb, mscale: maybe(fc.constantFrom(1, 0.707, 1e300, 1e-300), 0.4), extra: maybe(fc.constantFrom('factr', 'orig_max'), 0.04) }) },
  { weight: 1, arbitrary: fc.constantFrom({ type: 'bogus' }, { type: 7 }, { type: 'value', v: 'linear' }, { type: 'value', v: [1] }) },
);

export const ropeOptsArb = fc.record({
  headDim: headDimArb,
  rotary: fc.constantFrom(1, 1, 1, 1, 1, 1, 0.5, 0.5, 0.25, 0.25, 'odd', 'big'),
  base: baseArb,
  pairing: fc.constantFrom(...Array(6).fill('half'), ...Array(5).fill('interleaved'), 'HALF', 3),
  scaling: scalingArb,
  extra: extraKeyArb(['headdim', 'Base', 'rotary_dim', 'theta', 'pairng']),
  hostile: fc.constantFrom(...Array(14).fill(null), 'throwBase', 'changeHeadDim'),
});

/** { options, plan } for pe.rope from a description. */
export function ropeOptions(d) {
  const plan = new Plan('rope');
  const hd = d.headDim.v;
  plan.part('headDim', d.headDim.fate);
  const o = { headDim: hd };
  if (d.headDim.fate === 'ok' && d.rotary !== 1) {
    if (d.rotary === 'odd') {
      o.rotaryDim = hd - 1;
      plan.part('rotaryDim', 'error');
    } else if (d.rotary === 'big') {
      o.rotaryDim = hd + 2;
      plan.part('rotaryDim', 'error');
    } else {
      o.rotaryDim = Math.max(2, 2 * Math.floor((hd * d.rotary) / 2));
    }
  }
  if (d.base.v !== null) o.base = d.base.v;
  plan.part('base', d.base.fate);
  o.pairing = d.pairing;
  plan.part('pairing', d.pairing === 'half' || d.pairing === 'interleaved' ? 'ok' : 'error');
  const s = d.scaling;
  if (s.type === 'bogus' || s.type === 7) {
    o.scaling = { type: s.type };
    plan.part('type', 'error');
  } else if (s.type === 'value') {
    o.scaling = s.v;
    plan.part('scaling', 'error');
  } else if (s.type !== 'none') {
    const sc = { type: s.type };
    const needsFactor = ['linear', 'dynamic', 'llama3'].includes(s.type);
    if (needsFactor || s.type === 'yarn' || s.type === 'proportional') {
      sc.factor = s.factor.v;
      plan.part('factor', s.factor.fate);
      // base and factor bound the frequencies together (theta_i <= 2): an odd one of them may be named as the other
      if (s.factor.fate !== 'ok' || d.base.fate !== 'ok') plan.part('factor', 'either').part('base', 'either');
    }
    if (s.type === 'dynamic') o.maxPositionEmbeddings = 2048;
    if (s.type === 'yarn') {
      sc.originalMaxPositionEmbeddings = 4096;
      if (s.mscale !== null) {
        sc.mscale = s.mscale;
        sc.mscaleAllDim = 1;
        plan.part('mscale', s.mscale === 1 || s.mscale === 0.707 ? 'ok' : 'either');
      }
    }
    if (s.type === 'llama3') Object.assign(sc, { lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 });
    if (s.type === 'longrope') {
      const half = (o.rotaryDim ?? (typeof hd === 'number' ? hd : 2)) / 2;
      const n = Number.isInteger(half) && half > 0 && half <= 512 ? half : 1;
      sc.shortFactor = Array.from({ length: n }, (_, i) => 1 + i / n);
      sc.longFactor = Array.from({ length: n }, (_, i) => 1 + (4 * i) / n);
      sc.originalMaxPositionEmbeddings = 4096;
      o.maxPositionEmbeddings = 131072;
    }
    // an unknown key inside scaling: HF configs carry extra keys there, so it may be allowed
    if (s.extra !== null) {
      sc[s.extra] = 1;
      plan.part(s.extra, 'either');
    }
    o.scaling = sc;
  }
  if (d.extra !== null) {
    o[d.extra] = 1;
    plan.part(d.extra, policy.unknownKey);
  }
  let options = o;
  if (d.hostile === 'throwBase') options = throwingGetter(o, 'base');
  if (d.hostile === 'changeHeadDim' && d.headDim.fate === 'ok') {
    options = changingGetter(o, 'headDim', hd, 2 ** 31); // valid on the first read only
    plan.part('headDim', 'either');
  }
  return { options, plan };
}

export const ropeCaseArb = fc.record({ rope: ropeOptsArb, methods: fc.array(methodArb, { minLength: 1, maxLength: 3 }) });

/** Steps of a rope case: construct, then each method on the rope (if it was made). */
export function ropeSteps(spec, env) {
  const { options, plan } = ropeOptions(spec.rope);
  let rope = null;
  const steps = [
    {
      plan,
      run: () => (rope = env.pe.rope(options)),
      check: (r) => {
        if (typeof r?.apply !== 'function') return 'pe.rope did not return a rope';
        const f = freqOf(r, undefined);
        return f.bad ? `accepted rope has ${f.bad}` : null;
      },
    },
  ];
  let lastApply = null;
  for (const m0 of spec.methods) {
    let m = m0;
    if (m.m === 'apply') lastApply = m;
    if (m.m === 'again') {
      if (lastApply === null) continue;
      // same shape, layout and positions: only the direction (and x's data) may differ
      m = { ...lastApply, x: { ...lastApply.x, seed: m0.seed }, inverse: m0.flip ? (lastApply.inverse === true ? undefined : true) : lastApply.inverse };
    }
    steps.push(() => (rope === null ? null : methodStep(m, rope, env)));
  }
  steps.push(() => {
    rope?.free();
    return null;
  });
  return steps;
}
