// rope-methods.js — fuzz cases for the methods of a rope: invFreq, invFreq64, attentionScaling, cosSin, apply,
// rerotate, and any of them after free(). Results are checked against refs.js / helpers.refApply in double, from
// the inverse frequencies and attention factor the rope reports (and rope-cases.js checks those for finiteness).
import fc from 'fast-check';
import { policy, maybe, Plan, sizeArb, extraKeyArb, floatDescArb, posDescArb, positionValues } from './common.js';
import { buildFloat, buildPositions, throwingGetter, changingGetter, proxyOf } from './values.js';
import { refCosSin, compare, allFinite, ANGLE_CHECKED } from './refs.js';
import { refApply } from '../helpers.js';

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
    layout: fc.constantFrom(...Array(6).fill('bshd'), ...Array(5).fill('bhsd'), null, 'BSHD', 1),
    x: floatDescArb,
    positions: maybe(posDescArb, 0.6),
    inverse: fc.constantFrom(undefined, undefined, undefined, false, false, true, true, true, 1),
    seqLen: seqLenArb,
    k: maybe(fc.record({ desc: floatDescArb, kHeads: maybe(sizeArb(1, 3, { huge: false }), 0.4), same: fc.constantFrom(false, false, false, false, true) }), 0.35),
    extra: extraKeyArb(['position', 'shapes', 'offsets', 'Layout']),
    hostile: fc.constantFrom(...Array(24).fill(null), 'throwShape', 'changeShape', 'proxyShape', 'shapeLen', 'proxyOptions', 'changePositions'),
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
  // the previous apply again with the other direction (or again as it was): the rope's cached table must follow
  fc.record({ m: fc.constant('again'), flip: fc.boolean(), seed: fc.nat(1000) }),
  fc.record({ m: fc.constant('again'), flip: fc.constant(true), seed: fc.nat(1000) }),
);

/** positions (n of them) from a description: { value, fate, values }, n adjusted for the 'wrong' length. */
function positionsFor(pd, env, nSeq, nBatch) {
  let n = pd.len === 'batch' ? nBatch : pd.len === 'wrong' ? nBatch + 1 : nSeq; // nBatch + 1: neither seq nor batch * seq
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
export function freqOf(rope, seqLen) {
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
      plan.part('kHeads', m.k.kHeads.v === null ? 'ok' : m.k.kHeads.fate); // null: not given
      if (m.k.kHeads.fate === 'ok') kH = m.k.kHeads.v;
    }
    if (m.k.same && x.fate === 'ok' && small) {
      // k is x itself (or its view): each would be rotated twice; must be refused as overlapping
      k = { value: x.value, fate: 'error', expected: null, cleanup() {} };
    } else {
      k = buildFloat(m.k.desc, env, small ? B * S * kH * D : D);
    }
    if (k.value === null) {
      k = { value: null, fate: 'ok', expected: null, cleanup() {} }; // k: null means no keys
      if (m.k.kHeads !== null) plan.part('kHeads', 'error'); // the head count of keys that are not there
    }
    o.k = k.value;
    plan.part('k', small ? k.fate : 'either');
    if (m.k.same) plan.part('x', 'either').part('overlap', 'either');
  }
  if (m.extra !== null) {
    o[m.extra] = 1;
    plan.part(m.extra, policy.unknownKey);
  }
  let options = o;
  if (m.hostile === 'throwShape') options = throwingGetter(o, 'shape');
  if (m.hostile === 'changeShape') {
    options = changingGetter(o, 'shape', o.shape, [B, small ? S * 1000003 : 2 ** 31, H, D]);
    plan.part('shape', 'either');
  }
  if (m.hostile === 'proxyShape') {
    options = { ...o, shape: proxyOf(o.shape, { lengthSeq: [4, 2 ** 31] }) };
    plan.part('shape', 'either');
  }
  if (m.hostile === 'proxyOptions') {
    options = new Proxy(o, {}); // a Proxy options object: an object like any other
  }
  if (m.hostile === 'changePositions' && pos !== null && pos.values !== null) {
    options = changingGetter(o, 'positions', o.positions, Int32Array.from({ length: o.positions.length ?? 1 }, () => -5));
    plan.part('positions', 'either');
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
      if (x.expected === null || (pos !== null && pos.values === null) || ['changeShape', 'proxyShape', 'changePositions'].includes(m.hostile)) return null;
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
      if (bad || k === null || k.value === null || k.expected === null) return bad;
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
