// rope-cases.js — fuzz cases for pe.rope(options) and every method of a rope (invFreq, invFreq64,
// attentionScaling, cosSin, apply, rerotate), and pe.ropeFromHFConfig.
//
// A case is plain data (so fast-check prints and shrinks it); steps(spec, env) turns it into the calls to make,
// each with the plan of what the API must do (common.js Plan) and a check of a returned value.
import fc from 'fast-check';
import { policy, maybe, Plan, sizeArb, extraKeyArb, floatDescArb, posDescArb, positionValues, NEVER_FITS } from './common.js';
import { buildFloat, buildPositions, throwingGetter, changingGetter, proxyOf, NASTY_FLOATS } from './values.js';
import { refCosSin, compare, allFinite, ANGLE_CHECKED } from './refs.js';
import { refApply } from '../helpers.js';

// ---- pe.rope options --------------------------------------------------------------------------------------

const evenDim = fc.integer({ min: 1, max: 32 }).map((h) => ({ fate: 'ok', v: 2 * h }));
const headDimArb = fc.oneof(
  { weight: 10, arbitrary: evenDim },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 7, 1026, 2048, -2, 2 ** 31, 2 ** 32 + 2, NaN, '64', 64n, null).map((v) => ({ fate: 'error', v })) },
);

// Positive finite odd values of base / factor are 'either': accepted, they must give finite, right results
// (issue 10 class 5); refused, a RangeError naming the field.
const positiveNasty = NASTY_FLOATS.filter((v) => Number.isFinite(v) && v > 0 && v !== 1);
const baseArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(10000, 500000, 1e6, 10, 2, 1.5).map((v) => ({ fate: 'ok', v })) },
  { weight: 3, arbitrary: fc.double({ min: 1.5, max: 1e7, noNaN: true }).map((v) => ({ fate: 'ok', v })) },
  { weight: 2, arbitrary: fc.constantFrom(...positiveNasty, 0.5, 1e-5).map((v) => ({ fate: 'either', v })) },
  { weight: 1, arbitrary: fc.constantFrom(NaN, Infinity, -Infinity, -0, 0, 1, -10000, '10000', null).map((v) => ({ fate: v === null ? 'ok' : v === 1 ? 'either' : 'error', v })) },
);
const factorArb = fc.oneof(
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
  rotary: fc.constantFrom(1, 1, 1, 0.5, 0.25, 'odd', 'big'),
  base: baseArb,
  pairing: fc.constantFrom('half', 'half', 'interleaved', 'HALF', 3),
  scaling: scalingArb,
  extra: extraKeyArb(['headdim', 'Base', 'rotary_dim', 'theta', 'pairng']),
  hostile: fc.constantFrom(null, null, null, null, null, null, 'throwBase', 'changeHeadDim'),
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

// ---- rope methods -----------------------------------------------------------------------------------------

const seqLenArb = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ fate: 'ok', v: undefined }) },
  { weight: 3, arbitrary: fc.constantFrom(1, 100, 4096, 200000).map((v) => ({ fate: 'ok', v })) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 0.5, NaN, Infinity, '10', 10n, 2 ** 53 + 2).map((v) => ({ fate: 'error', v })) },
);

const dimsArb = fc.record({
  B: sizeArb(1, 3, { huge: false }),
  S: sizeArb(1, 6, { huge: false }),
  H: sizeArb(1, 4, { huge: false }),
  // shapes whose element count overflows 32 bits or cannot fit in 4 GiB, with each entry < 2^31
  huge: maybe(fc.constantFrom([65536, 65536, 1], [2 ** 16, 2 ** 15, 2], [65537, 65537, 1], [2 ** 11, 2 ** 11, 2 ** 11], [1, 2 ** 31 - 1, 1], [1, 1, 2 ** 30]), 0.06),
});

export const methodArb = fc.oneof(
  fc.record({ m: fc.constantFrom('invFreq', 'invFreq64', 'attentionScaling'), seqLen: seqLenArb }),
  fc.record({
    m: fc.constant('cosSin'),
    n: fc.integer({ min: 0, max: 12 }),
    positions: posDescArb,
    second: fc.constantFrom('none', 'seqLen', 'options', 'out', 'outTensor', 'outBad', 'extra'),
    seqLen: seqLenArb,
  }),
  fc.record({
    m: fc.constant('apply'),
    dims: dimsArb,
    layout: fc.constantFrom('bshd', 'bshd', 'bhsd', 'BSHD', null, 1),
    x: floatDescArb,
    positions: maybe(posDescArb, 0.6),
    inverse: fc.constantFrom(undefined, false, true, 1),
    seqLen: seqLenArb,
    k: maybe(fc.record({ desc: floatDescArb, kHeads: maybe(sizeArb(1, 3, { huge: false }), 0.4) }), 0.35),
    extra: extraKeyArb(['position', 'shapes', 'offsets', 'Layout']),
    hostile: fc.constantFrom(null, null, null, null, null, null, 'throwShape', 'changeShape', 'proxyShape', 'shapeLen'),
  }),
  fc.record({
    m: fc.constant('rerotate'),
    dims: dimsArb,
    withShape: fc.boolean(),
    delta: fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: -2147483647, max: 2147483647 }).map((v) => ({ fate: 'ok', v })) },
      { weight: 1, arbitrary: fc.constantFrom(NaN, 0.5, 2 ** 31, -(2 ** 31) - 1, '1', 1n, null, Infinity).map((v) => ({ fate: 'error', v })) },
    ),
    x: floatDescArb,
    seqLen: seqLenArb,
    extra: extraKeyArb(['shapes', 'position', 'layuot']),
  }),
  fc.record({ m: fc.constant('afterFree'), inner: fc.constantFrom('apply', 'cosSin', 'invFreq') }),
);

/** positions (n of them) from a description: { value, fate, values }, n adjusted for the 'wrong' length. */
function positionsFor(pd, env, nSeq, nBatch) {
  let n = pd.len === 'batch' ? nBatch : pd.len === 'wrong' ? nSeq + 1 : nSeq;
  if (pd.len === 'batch' && nBatch === nSeq) n = nSeq;
  const built = buildPositions(pd, env, positionValues(pd, n));
  const lengthOk = pd.len !== 'wrong';
  return { ...built, fate: lengthOk ? built.fate : 'error' };
}

/** The tolerance of a float32 cos/sin (times scale) of a double angle a. */
const trigTol = (a, scale) => scale * (3e-7 + 2 ** -50 * Math.abs(a));

function checkTables(what, got, ref, scale) {
  for (let i = 0; i < ref.angle.length; i++) {
    const a = ref.angle[i];
    for (const [name, g, r] of [
      ['cos', got.cos[i], ref.cos[i]],
      ['sin', got.sin[i], ref.sin[i]],
    ]) {
      if (!Number.isFinite(g)) return `${what}.${name}[${i}] = ${g} (not finite; angle ${a})`;
      if (Math.abs(g) > scale * (1 + 1e-6)) return `${what}.${name}[${i}] = ${g}, outside [-${scale}, ${scale}] (angle ${a})`;
      if (Math.abs(a) <= ANGLE_CHECKED && !(Math.abs(g - r) <= trigTol(a, scale))) {
        return `${what}.${name}[${i}] = ${g}, expected ${r} (angle ${a})`;
      }
    }
  }
  return null;
}

/** invFreq64 and attention factor the API says it uses for seqLen; a violation string when they are unusable. */
function freqOf(rope, seqLen) {
  const inv = rope.invFreq64(seqLen);
  const scale = rope.attentionScaling(seqLen);
  const bad = allFinite('invFreq64', inv) ?? (Number.isFinite(scale) && scale > 0 ? null : `attentionScaling = ${scale}`);
  return { inv, scale, bad };
}

/**
 * The steps of a rope method call: [{ plan, run, check }]. `rope` is a live rope of env.pe with plain options
 * `ro` (its resolved headDim etc).
 */
export function methodStep(m, rope, env) {
  const D = rope.headDim;
  switch (m.m) {
    case 'invFreq':
    case 'invFreq64':
    case 'attentionScaling': {
      const plan = new Plan(`rope.${m.m}`).part('seqLen', m.seqLen.fate);
      return {
        plan,
        run: () => rope[m.m](m.seqLen.v),
        check: (v) => {
          if (m.m === 'attentionScaling') return Number.isFinite(v) && v > 0 ? null : `attentionScaling = ${v}`;
          if (v.length !== rope.nFreq) return `${m.m}.length ${v.length}, expected nFreq ${rope.nFreq}`;
          // >= 0: a frequency may underflow to 0 (an accepted extreme factor or base); it must stay finite
          for (let i = 0; i < v.length; i++) if (!(Number.isFinite(v[i]) && v[i] >= 0)) return `${m.m}[${i}] = ${v[i]}`;
          return null;
        },
      };
    }
    case 'cosSin': {
      const plan = new Plan('rope.cosSin');
      // any number of positions is a valid table: the 'wrong' length is just one more row
      const n = m.positions.len === 'wrong' ? m.n + 1 : m.n;
      const pos = buildPositions(m.positions, env, positionValues(m.positions, n));
      plan.part('positions', pos.fate);
      const count = n * rope.nFreq;
      let second;
      let outs = null;
      if (m.second === 'seqLen') {
        second = m.seqLen.v;
        plan.part('seqLen', m.seqLen.fate);
      } else if (m.second === 'options') {
        second = { seqLen: m.seqLen.v };
        plan.part('seqLen', m.seqLen.fate);
      } else if (m.second === 'out' || m.second === 'outTensor') {
        outs = m.second === 'out' ? { cos: new Float32Array(count), sin: new Float32Array(count) } : { cos: env.pe.tensor(count), sin: env.pe.tensor(count) };
        if (m.second === 'outTensor') env.scratchTensors.push(outs.cos, outs.sin);
        second = { out: outs };
      } else if (m.second === 'outBad') {
        second = { out: { cos: new Float32Array(count + 1), sin: new Float32Array(count) } };
        plan.part('out', 'error');
      } else if (m.second === 'extra') {
        second = { seqlen: 5 };
        plan.part('seqlen', policy.unknownKey);
      }
      return {
        plan,
        run: () => rope.cosSin(pos.value, second),
        check: (r) => {
          if (pos.values === null) return null; // accepted an array-like a correct call may read: only intactness is checked
          const cos = outs ? (outs.cos.array ?? outs.cos) : r.cos;
          const sin = outs ? (outs.sin.array ?? outs.sin) : r.sin;
          if (outs && (r.cos !== outs.cos || r.sin !== outs.sin)) return 'cosSin with options.out did not return out.cos / out.sin';
          if (cos.length !== count || sin.length !== count) return `cosSin lengths ${cos.length}, ${sin.length}, expected ${count}`;
          const sl = typeof second === 'number' ? second : second?.seqLen;
          const eff = sl ?? (pos.values.length ? Math.max(...pos.values) + 1 : 0);
          const f = freqOf(rope, eff === 0 ? undefined : eff);
          if (f.bad) return `accepted rope has ${f.bad}`;
          return checkTables('cosSin', { cos, sin }, refCosSin(pos.values, f.inv, f.scale), f.scale);
        },
      };
    }
    case 'apply':
      return applyStep(m, rope, env, D);
    case 'rerotate':
      return rerotateStep(m, rope, env, D);
    case 'afterFree': {
      rope.free();
      const plan = new Plan(`rope.${m.inner}`).part('rope', 'error').part('freed', 'error');
      const x = new Float32Array(D);
      const run = { apply: () => rope.apply(x, { shape: [1, 1, 1, D] }), cosSin: () => rope.cosSin([1]), invFreq: () => rope.invFreq() }[m.inner];
      return { plan, run };
    }
    default:
      throw new Error(`fuzz: unknown method ${m.m}`);
  }
}

/** [B, S, H] and their fate from a dims description (bhsd arrays need S == H to read the same either way). */
function dimsOf(dims, layoutIsBhsd) {
  if (dims.huge !== null) return { B: dims.huge[0], S: dims.huge[1], H: dims.huge[2], fate: 'error', huge: true };
  let S = dims.S.v;
  let H = dims.H.v;
  // Until every caller has moved to the memory-order shape (issue 11), a bhsd array shape is read the same
  // both ways only when seq == heads.
  if (layoutIsBhsd && dims.S.fate === 'ok' && dims.H.fate === 'ok') H = S;
  const fate = [dims.B, dims.S, dims.H].some((d) => d.fate !== 'ok') ? 'error' : 'ok';
  return { B: dims.B.v, S, H, fate, huge: false };
}

function applyStep(m, rope, env, D) {
  const plan = new Plan('rope.apply');
  const layoutOk = m.layout === 'bshd' || m.layout === 'bhsd' || m.layout === null;
  plan.part('layout', layoutOk ? 'ok' : 'error');
  const layout = m.layout === 'bhsd' ? 'bhsd' : 'bshd';
  const dm = dimsOf(m.dims, layout === 'bhsd');
  plan.part('shape', dm.fate);
  const { B, S, H } = dm;
  const small = dm.fate === 'ok';
  const total = small ? B * S * H * D : 0;
  const x = buildFloat(m.x, env, small ? total : 4 * D);
  plan.part('x', small ? x.fate : 'either');
  const o = { shape: [B, S, H, D], layout: m.layout ?? undefined };
  let pos = null;
  if (m.positions !== null) {
    pos = small ? positionsFor(m.positions, env, S, B * S) : { value: new Int32Array(4), fate: 'either', values: null };
    o.positions = pos.value;
    plan.part('positions', pos.fate);
  }
  if (m.inverse !== undefined) o.inverse = m.inverse;
  plan.part('inverse', m.inverse === 1 ? 'error' : 'ok');
  if (m.seqLen.v !== undefined) o.seqLen = m.seqLen.v;
  plan.part('seqLen', m.seqLen.fate);
  let k = null;
  let kH = H;
  if (m.k !== null) {
    if (m.k.kHeads !== null) {
      o.kHeads = m.k.kHeads.v;
      plan.part('kHeads', m.k.kHeads.fate);
      if (m.k.kHeads.fate === 'ok') kH = m.k.kHeads.v;
    }
    k = buildFloat(m.k.desc, env, small ? B * S * kH * D : D);
    o.k = k.value;
    plan.part('k', small ? k.fate : 'either');
    // x and k both views into one tensor's memory would overlap; the builders never make them overlap
  }
  if (m.extra !== null) {
    o[m.extra] = 1;
    plan.part(m.extra, policy.unknownKey);
  }
  let options = o;
  if (m.hostile === 'throwShape') options = throwingGetter(o, 'shape');
  if (m.hostile === 'changeShape') {
    options = changingGetter(o, 'shape', o.shape, [B, S * 1000003, H, D]);
    plan.part('shape', 'either');
  }
  if (m.hostile === 'proxyShape') {
    options = { ...o, shape: proxyOf(o.shape, { lengthSeq: [4, 2 ** 31] }) };
    plan.part('shape', 'either');
  }
  if (m.hostile === 'shapeLen') {
    options = { ...o, shape: [B, S, H, D, 1] };
    plan.part('shape', 'error');
  }
  const cleanup = () => {
    x.cleanup();
    k?.cleanup();
  };
  return {
    plan,
    cleanup,
    run: () => rope.apply(x.value, options),
    check: (r) => {
      if (!m.hostile?.endsWith('Shape') && r !== x.value && !(x.value instanceof Float32Array)) return 'apply did not return x';
      if (x.expected === null || (pos !== null && pos.values === null) || m.hostile === 'changeShape' || m.hostile === 'proxyShape') return null;
      const got = r.array ?? r; // a tensor, or x (or a fresh view of it)
      const positions = pos !== null ? pos.values : Array.from({ length: S }, (_, i) => i);
      const maxP = positions.length ? Math.max(...positions) : 0;
      const eff = m.seqLen.v ?? maxP + 1;
      const f = freqOf(rope, eff);
      if (f.bad) return `accepted rope has ${f.bad}`;
      const inverse = m.inverse === true;
      const scale = inverse ? 1 / f.scale : f.scale;
      const shape = [B, S, H, D];
      const bad = checkRotation('x', got, x.expected, { shape, layout, positions, invFreq: f.inv, pairing: rope.pairing, scale, inverse });
      if (bad || k === null || k.expected === null) return bad;
      const kGot = k.value.array ?? k.value;
      return checkRotation('options.k', kGot, k.expected, { shape: [B, S, kH, D], layout, positions, invFreq: f.inv, pairing: rope.pairing, scale, inverse });
    },
  };
}

/** Compares a rotated tensor with refApply's double result, skipping elements whose angle is too large. */
function checkRotation(what, got, x, opts) {
  const ref = refApply(x, opts);
  const maxAngle = Math.max(...opts.positions.map((p) => Math.abs(p))) * Math.max(...opts.invFreq);
  const tol = 2e-6 * Math.max(1, opts.scale) + (maxAngle <= ANGLE_CHECKED ? 2 ** -49 * maxAngle * 4 : Infinity);
  const finite = allFinite(what, got);
  if (finite) return finite;
  if (tol === Infinity) return null;
  return compare(what, got, ref, () => tol);
}

function rerotateStep(m, rope, env, D) {
  const plan = new Plan('rope.rerotate');
  plan.part('delta', m.delta.fate);
  plan.part('seqLen', m.seqLen.fate);
  const dm = m.withShape ? dimsOf(m.dims, false) : { B: 1, S: 2, H: 1, fate: 'ok' };
  if (m.withShape) plan.part('shape', dm.fate);
  const small = dm.fate === 'ok';
  const total = small ? dm.B * dm.S * dm.H * D : 2 * D;
  const x = buildFloat(m.x, env, total);
  plan.part('x', small ? x.fate : 'either');
  const o = {};
  if (m.withShape) o.shape = [dm.B, dm.S, dm.H, D];
  if (m.seqLen.v !== undefined) o.seqLen = m.seqLen.v;
  if (m.extra !== null) {
    o[m.extra] = 1;
    plan.part(m.extra, policy.unknownKey);
  }
  return {
    plan,
    cleanup: () => x.cleanup(),
    run: () => rope.rerotate(x.value, m.delta.v, o),
    check: (r) => {
      if (x.expected === null) return null;
      const got = r.array ?? r;
      const f = freqOf(rope, m.seqLen.v);
      if (f.bad) return `accepted rope has ${f.bad}`;
      return checkRotation('x', got, x.expected, { shape: [1, 1, total / D, D], layout: 'bshd', positions: [m.delta.v], invFreq: f.inv, pairing: rope.pairing, scale: 1 });
    },
  };
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
  for (const m of spec.methods) steps.push(() => (rope === null ? null : methodStep(m, rope, env)));
  steps.push(() => {
    rope?.free();
    return null;
  });
  return steps;
}

// ---- pe.ropeFromHFConfig ----------------------------------------------------------------------------------

export const hfCaseArb = fc.record({
  hidden: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(64, 128, 256).map((v) => ({ fate: 'ok', v })) }, { weight: 1, arbitrary: fc.constantFrom(0, -64, 2 ** 31, 2 ** 32 + 64, NaN, '128', 100.5).map((v) => ({ fate: 'error', v })) }),
  heads: fc.oneof({ weight: 6, arbitrary: fc.constantFrom(1, 2, 4, 8).map((v) => ({ fate: 'ok', v })) }, { weight: 1, arbitrary: fc.constantFrom(0, 2 ** 32, 0.5, null).map((v) => ({ fate: 'error', v })) }, { weight: 1, arbitrary: fc.constant({ fate: 'ok', v: 3 }) }),
  theta: baseArb,
  partial: maybe(fc.oneof(fc.constantFrom(0.5, 0.25).map((v) => ({ fate: 'ok', v })), fc.constantFrom(0, -1, NaN, 2, 1e-300).map((v) => ({ fate: 'error', v }))), 0.3),
  scaling: maybe(fc.record({ type: fc.constantFrom('linear', 'dynamic', 'yarn'), factor: factorArb }), 0.4),
  modelType: fc.constantFrom('llama', 'llama', 'qwen2', 'bloom', 'gpt2'),
  wrap: fc.constantFrom('plain', 'plain', 'plain', 'notObject', 'throwTheta', 'textConfig'),
});

export function hfSteps(spec, env) {
  const plan = new Plan('ropeFromHFConfig');
  let c = { model_type: spec.modelType, hidden_size: spec.hidden.v, num_attention_heads: spec.heads.v, max_position_embeddings: 4096 };
  plan.part('hidden_size', spec.hidden.fate).part('num_attention_heads', spec.heads.fate);
    if (spec.hidden.fate === 'ok' && spec.heads.fate === 'ok' && Math.floor(spec.hidden.v / spec.heads.v) % 2 !== 0) plan.part('head_dim', 'error').part('headDim', 'either').part('num_attention_heads', 'either');
  if (spec.theta.v !== null) c.rope_theta = spec.theta.v;
  plan.part('rope_theta', spec.theta.fate);
  if (spec.partial !== null) {
    c.partial_rotary_factor = spec.partial.v;
    plan.part('partial_rotary_factor', spec.partial.fate === 'ok' ? 'either' : spec.partial.fate); // may leave an odd rotary dim
  }
  if (spec.scaling !== null) {
    c.rope_scaling = { rope_type: spec.scaling.type, factor: spec.scaling.factor.v, original_max_position_embeddings: 2048 };
    plan.part('factor', spec.scaling.factor.fate);
  }
  // ALiBi and learned-table models have no RoPE: asking for one throws
  if (spec.modelType === 'bloom' || spec.modelType === 'gpt2') plan.part('model_type', policy.noRope);
  if (spec.wrap === 'notObject') {
    c = [c];
    plan.part('config', 'error');
  }
  if (spec.wrap === 'throwTheta') c = throwingGetter(c, 'rope_theta');
  if (spec.wrap === 'textConfig') {
    c = { model_type: 'llava', text_config: c }; // read through text_config, or refused naming it
    plan.part('text_config', 'either').part('hidden_size', 'either').part('head_dim', 'either');
  }
  let rope = null;
  return [
    {
      plan,
      run: () => (rope = env.pe.ropeFromHFConfig(c)),
      check: (r) => {
        const hd = Math.floor(spec.hidden.v / spec.heads.v); // HF: hidden_size // num_attention_heads
        if (r.headDim !== hd) return `headDim ${r.headDim}, expected hidden_size / num_attention_heads = ${hd}`;
        const { cos, sin } = r.cosSin([0, 1, 4095, 2147483647]);
        const bad = allFinite('cos', cos) ?? allFinite('sin', sin);
        if (bad) return bad;
        const s = r.attentionScaling();
        for (let i = 0; i < cos.length; i++) if (Math.abs(cos[i]) > s * (1 + 1e-6) || Math.abs(sin[i]) > s * (1 + 1e-6)) return `cos/sin[${i}] beyond the attention factor ${s}: ${cos[i]}, ${sin[i]}`;
        return null;
      },
    },
    () => {
      rope?.free();
      return null;
    },
  ];
}

export { NEVER_FITS };
