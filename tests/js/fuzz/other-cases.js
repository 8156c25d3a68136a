// other-cases.js — fuzz cases for pe.alibiSlopes, pe.alibiBias, pe.alibiBiasFromMask, pe.sinusoidal (+ .add),
// pe.learned (+ lookup, add, free), pe.attention and pe.tensor. See rope-cases.js for the shape of a case.
import fc from 'fast-check';
import { policy, maybe, Plan, sizeArb, extraKeyArb, floatDescArb, posDescArb, positionValues, NEVER_FITS, HUGE_REFUSED } from './common.js';
import { buildFloat, buildPositions, f32Data, proxyOf, changingLength, detached, lookAlike, NASTY_FLOATS, NOT_SIZES } from './values.js';
import { refAlibiSlopes, refAlibiBias, refAlibiFromMask, refSinusoidal, compare, allFinite, ANGLE_CHECKED } from './refs.js';
import { refAttention } from '../attention-ref.js';
import { refApply } from '../helpers.js';

const ulp32 = (r) => Math.abs(r) * 2 ** -23 + 1e-45;

/** Element count of dims (all ok numbers), or null; a case whose count is between the cheap and the
 *  never-fits range is made cheap by the caller. */
function count(...dims) {
  return dims.reduce((a, b) => a * b, 1);
}

/** Slopes option description -> { value, fate, values }. */
const slopesArb = maybe(fc.constantFrom('ok', 'okArray', 'short', 'nan', 'huge', 'proxy', 'lookalike', 'lenChange'), 0.35);
function slopesOf(kind, nHeads) {
  const n = Number.isInteger(nHeads) && nHeads > 0 && nHeads < 64 ? nHeads : 1;
  const vals = Array.from({ length: n }, (_, h) => Math.fround(0.5 / (h + 1)));
  switch (kind) {
    case 'ok':
      return { value: Float32Array.from(vals), fate: 'ok', values: vals };
    case 'okArray':
      return { value: vals, fate: 'ok', values: vals };
    case 'short':
      return { value: vals.slice(1), fate: 'error', values: null };
    case 'nan':
      return { value: [...vals.slice(1), NaN], fate: 'error', values: null };
    case 'huge':
      return { value: [...vals.slice(1), 1e39], fate: 'error', values: null };
    case 'proxy':
      return { value: proxyOf(Float32Array.from(vals)), fate: 'either', values: vals };
    case 'lookalike':
      return { value: lookAlike(Float32Array.prototype, { length: n, buffer: new ArrayBuffer(4 * n), byteOffset: 0 }), fate: 'either', values: null };
    case 'lenChange':
      return { value: changingLength(vals, [n, 2 ** 30]), fate: 'either', values: null };
    default:
      throw new Error(kind);
  }
}

// ---- ALiBi ------------------------------------------------------------------------------------------------

export const slopesCaseArb = fc.record({ n: sizeArb(1, 300) });
export function slopesSteps(spec, env) {
  const plan = new Plan('alibiSlopes').part('nHeads', spec.n.fate);
  return [
    {
      plan,
      run: () => env.pe.alibiSlopes(spec.n.v),
      check: (s) => {
        if (!(s instanceof Float32Array)) return 'alibiSlopes did not return a Float32Array';
        const ref = refAlibiSlopes(spec.n.v);
        return compare('alibiSlopes', s, ref, (i) => ulp32(ref[i]));
      },
    },
  ];
}

const dim3Arb = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(sizeArb(1, 6, { huge: false }), sizeArb(1, 9, { huge: false }), sizeArb(1, 9, { huge: false })) },
  { weight: 1, arbitrary: fc.constantFrom([1, 1, 2 ** 29 + 1], [2 ** 16, 2 ** 16, 1], [65537, 65537, 1], [2 ** 11, 2 ** 11, 2 ** 11], [1, 2 ** 31 - 1, 2], [2 ** 31, 1, 1], [1, 1, 2 ** 32 + 1]).map((t) => t.map((v) => ({ fate: 'huge', v }))) },
);

export const biasCaseArb = fc.record({
  dims: dim3Arb,
  causal: fc.constantFrom(undefined, true, false, 1, 'yes'),
  slopes: slopesArb,
  out: maybe(fc.constantFrom('f32', 'tensor', 'short', 'freed', 'foreign', 'lookalike', 'f64'), 0.35),
  extra: extraKeyArb(['casual', 'slope', 'outs']),
});
export function biasSteps(spec, env) {
  const plan = new Plan('alibiBias');
  const [h, q, k] = spec.dims;
  const names = ['nHeads', 'qLen', 'kLen'];
  const huge = h.fate === 'huge';
  if (huge) {
    const c = count(h.v, q.v, k.v);
    // 2^29 + 1 floats (2 GiB) may fit; everything else in this list does not (or wraps in 32 bits)
    plan.part('nHeads', c >= NEVER_FITS ? 'error' : 'either').part('qLen', 'either').part('kLen', 'either');
  } else {
    [h, q, k].forEach((d, i) => plan.part(names[i], d.fate));
  }
  const small = !huge && [h, q, k].every((d) => d.fate === 'ok');
  if (huge && count(h.v, q.v, k.v) < NEVER_FITS) return [{ plan: new Plan('skip'), run: () => null, skip: true }]; // not fuzzed: it would allocate 2 GiB
  const o = {};
  if (spec.causal !== undefined) o.causal = spec.causal;
  plan.part('causal', typeof spec.causal === 'boolean' || spec.causal === undefined ? 'ok' : 'error');
  let sl = null;
  if (spec.slopes !== null) {
    sl = slopesOf(spec.slopes, h.v);
    if (small && sl.values !== null && sl.values.length !== h.v) sl = { ...sl, fate: 'error' };
    o.slopes = sl.value;
    plan.part('slopes', sl.fate);
  }
  const n = small ? h.v * q.v * k.v : 4;
  let out = null;
  if (spec.out !== null) {
    const kind = { f32: 'f32', tensor: 'tensor', short: 'wrongLength', freed: 'freed', foreign: 'foreign', lookalike: 'lookalike', f64: 'f64' }[spec.out];
    out = buildFloat({ kind, seed: 1, delta: -1, offset: 0 }, env, n);
    o.out = out.value;
    plan.part('out', out.fate);
  }
  if (spec.extra !== null) {
    o[spec.extra] = true;
    plan.part(spec.extra, policy.unknownKey);
  }
  return [
    {
      plan,
      cleanup: () => out?.cleanup(),
      run: () => env.pe.alibiBias(h.v, q.v, k.v, o),
      check: (r) => {
        if (out !== null && r !== out.value && !(out.value instanceof Float32Array)) return 'alibiBias did not return options.out';
        if (sl !== null && sl.values === null) return null;
        const got = r.array ?? r;
        const slopes = sl !== null ? sl.values : Array.from(refAlibiSlopes(h.v), Math.fround);
        const ref = refAlibiBias(slopes, q.v, k.v, spec.causal === true);
        return compare('alibiBias', got, ref, (i) => ulp32(ref[i]));
      },
    },
  ];
}

export const maskCaseArb = fc.record({
  nHeads: sizeArb(1, 6),
  batch: fc.integer({ min: 1, max: 3 }),
  seq: fc.integer({ min: 1, max: 10 }),
  bits: fc.nat(),
  form: fc.constantFrom('rows', 'rows', 'flat', 'flatI32', 'ragged', 'bad', 'flatHuge', 'rowsWithShape', 'proxyRows', 'lenChange'),
  slopes: slopesArb,
  extra: extraKeyArb(['shapes', 'slope']),
});
export function maskSteps(spec, env) {
  const plan = new Plan('alibiBiasFromMask').part('nHeads', spec.nHeads.fate);
  const { batch: B, seq: S } = spec;
  const rows = Array.from({ length: B }, (_, b) => Array.from({ length: S }, (_, j) => ((spec.bits >>> ((b * S + j) % 30)) & 1) || (j === S - 1 ? 1 : 0)));
  let mask;
  const o = {};
  switch (spec.form) {
    case 'rows':
      mask = rows;
      break;
    case 'flat':
      mask = rows.flat();
      o.shape = [B, S];
      break;
    case 'flatI32':
      mask = Int32Array.from(rows.flat());
      o.shape = [B, S];
      break;
    case 'ragged':
      mask = rows.map((r, b) => (b === B - 1 ? [...r, 1] : r));
      plan.part('attentionMask', B > 1 ? 'error' : 'ok');
      break;
    case 'bad':
      mask = rows.map((r) => r.map((v, j) => (j === 0 ? 2 : v)));
      plan.part('attentionMask', 'either'); // 0/1 or booleans; a 2 may be read as "attend"
      break;
    case 'flatHuge':
      mask = rows.flat();
      o.shape = [2 ** 16, 2 ** 16];
      plan.part('shape', 'error');
      plan.part('attentionMask', 'either'); // its length against batch * seq names both
      break;
    case 'rowsWithShape':
      mask = rows;
      o.shape = [B, S];
      plan.part('shape', 'error'); // not allowed with nested rows
      break;
    case 'proxyRows':
      mask = proxyOf(rows);
      plan.part('attentionMask', 'either');
      break;
    case 'lenChange':
      mask = changingLength(rows.flat(), [B * S, 2 ** 31]);
      o.shape = [B, S];
      plan.part('attentionMask', 'either');
      break;
    default:
      throw new Error(spec.form);
  }
  let sl = null;
  if (spec.slopes !== null) {
    sl = slopesOf(spec.slopes, spec.nHeads.v);
    if (spec.nHeads.fate === 'ok' && sl.values !== null && sl.values.length !== spec.nHeads.v) sl = { ...sl, fate: 'error' };
    o.slopes = sl.value;
    plan.part('slopes', sl.fate);
  }
  if (spec.extra !== null) {
    o[spec.extra] = 1;
    plan.part(spec.extra, policy.unknownKey);
  }
  return [
    {
      plan,
      run: () => env.pe.alibiBiasFromMask(spec.nHeads.v, mask, o),
      check: (r) => {
        if (['bad', 'proxyRows', 'lenChange'].includes(spec.form) || (sl !== null && sl.values === null)) return null;
        const slopes = sl !== null ? sl.values : Array.from(refAlibiSlopes(spec.nHeads.v), Math.fround);
        const ref = refAlibiFromMask(slopes, spec.form === 'ragged' ? mask : rows); // ragged: B = 1, one longer row
        return compare('alibiBiasFromMask', r, ref, (i) => ulp32(ref[i]));
      },
    },
  ];
}

// ---- sinusoidal -------------------------------------------------------------------------------------------

const sinBaseArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(undefined, 10000, 100, 2, 1e6).map((v) => ({ fate: 'ok', v })) },
  { weight: 2, arbitrary: fc.constantFrom(...NASTY_FLOATS.filter((v) => Number.isFinite(v) && v > 0)).map((v) => ({ fate: 'either', v })) },
  { weight: 1, arbitrary: fc.constantFrom(NaN, -1, 0, Infinity, '100').map((v) => ({ fate: 'error', v })) },
);
const offsetArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(undefined, 0, 1, 1000, 2 ** 31 - 64).map((v) => ({ fate: 'ok', v })) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 0.5, NaN, 2 ** 31, 2 ** 32, '1').map((v) => ({ fate: 'error', v })) },
);

export const sinCaseArb = fc.record({
  fn: fc.constantFrom('table', 'table', 'add'),
  seqLen: sizeArb(1, 24),
  dModel: sizeArb(1, 40),
  batch: fc.integer({ min: 1, max: 2 }),
  base: sinBaseArb,
  offset: offsetArb,
  pairing: fc.constantFrom(undefined, 'interleaved', 'half', 'Half'),
  x: floatDescArb,
  positions: maybe(posDescArb, 0.35),
  out: maybe(fc.constantFrom('f32', 'tensor', 'short', 'freed', 'lookalike'), 0.35),
  extra: extraKeyArb(['offest', 'pairng', 'base_']),
});

function checkSinusoidal(what, got, positions, dModel, base, pairing, plus = null) {
  const { out, angle } = refSinusoidal(positions, dModel, base, pairing);
  if (plus) for (let i = 0; i < out.length; i++) out[i] += plus[i % plus.length];
  const fin = allFinite(what, got);
  if (fin) return fin;
  for (let i = 0; i < out.length; i++) {
    const a = Math.abs(angle[i]);
    if (a > ANGLE_CHECKED) {
      if (!plus && Math.abs(got[i]) > 1) return `${what}[${i}] = ${got[i]}, outside [-1, 1] (angle ${angle[i]})`;
      continue;
    }
    const t = 4e-7 + 2 ** -49 * a + (plus ? 4e-7 : 0);
    if (!(Math.abs(got[i] - out[i]) <= t)) return `${what}[${i}] = ${got[i]}, expected ${out[i]} (angle ${angle[i]})`;
  }
  return null;
}

export function sinSteps(spec, env) {
  const isAdd = spec.fn === 'add';
  const plan = new Plan(isAdd ? 'sinusoidal.add' : 'sinusoidal');
  const { seqLen: sq, dModel: dm } = spec;
  const small = sq.fate === 'ok' && dm.fate === 'ok';
  plan.part(isAdd ? 'shape' : 'seqLen', sq.fate).part(isAdd ? 'shape' : 'dModel', dm.fate);
  const o = {};
  if (spec.base.v !== undefined) o.base = spec.base.v;
  plan.part('base', spec.base.fate);
  if (spec.pairing !== undefined) o.pairing = spec.pairing;
  plan.part('pairing', spec.pairing === 'Half' ? 'error' : 'ok');
  const base = spec.base.v ?? 10000;
  const pairing = spec.pairing ?? 'interleaved';
  let positions = null;
  let off = spec.offset.v ?? 0;
  if (isAdd && spec.positions !== null) {
    const S = small ? sq.v : 1;
    const pd = spec.positions;
    const n = pd.len === 'batch' ? spec.batch * S : pd.len === 'wrong' ? S + 1 : S;
    const built = buildPositions(pd, env, positionValues(pd, n));
    o.positions = built.value;
    plan.part('positions', pd.len === 'wrong' ? 'error' : built.fate);
    positions = built;
    if (spec.offset.v !== undefined) {
      o.offset = spec.offset.v;
      plan.part('offset', 'error'); // not together with positions
    }
  } else if (spec.offset.v !== undefined) {
    o.offset = spec.offset.v;
    plan.part('offset', spec.offset.fate);
    if (small && spec.offset.fate === 'ok' && off + sq.v - 1 > 2147483647) plan.part('offset', 'error');
  }
  if (spec.extra !== null) {
    o[spec.extra] = 1;
    plan.part(spec.extra, policy.unknownKey);
  }
  let x = null;
  let out = null;
  const n = small ? sq.v * dm.v : 4;
  if (isAdd) {
    const B = spec.batch;
    o.shape = [B, sq.v, dm.v];
    x = buildFloat(spec.x, env, small ? B * n : 4);
    plan.part('x', small ? x.fate : 'either');
  } else if (spec.out !== null) {
    const kind = { f32: 'f32', tensor: 'tensor', short: 'wrongLength', freed: 'freed', lookalike: 'lookalike' }[spec.out];
    out = buildFloat({ kind, seed: 3, delta: 1, offset: 8 }, env, n);
    o.out = out.value;
    plan.part('out', out.fate);
  }
  return [
    {
      plan,
      cleanup: () => {
        x?.cleanup();
        out?.cleanup();
      },
      run: () => (isAdd ? env.pe.sinusoidal.add(x.value, o) : env.pe.sinusoidal(sq.v, dm.v, o)),
      check: (r) => {
        const got = r.array ?? r;
        if (isAdd) {
          if (x.expected === null || (positions !== null && positions.values === null)) return null;
          const B = spec.batch;
          const rowsPos = [];
          for (let b = 0; b < B; b++) {
            for (let s = 0; s < sq.v; s++) {
              rowsPos.push(positions === null ? off + s : positions.values.length === sq.v ? positions.values[s] : positions.values[b * sq.v + s]);
            }
          }
          const plus = x.expected;
          return checkSinusoidal('sinusoidal.add', got, rowsPos, dm.v, base, pairing, plus);
        }
        if (out !== null && r !== out.value && !(out.value instanceof Float32Array)) return 'sinusoidal did not return options.out';
        return checkSinusoidal('sinusoidal', got, Array.from({ length: sq.v }, (_, r) => off + r), dm.v, base, pairing);
      },
    },
  ];
}

// ---- learned ----------------------------------------------------------------------------------------------

export const learnedCaseArb = fc.record({
  dModel: sizeArb(1, 12),
  rows: fc.integer({ min: 1, max: 20 }),
  offset: fc.constantFrom(undefined, 0, 1, 2, -1, 0.5, 2 ** 31),
  maxLen: fc.constantFrom('none', 'none', 'exact', 'more', 'huge'),
  table: floatDescArb,
  ops: fc.array(
    fc.record({
      op: fc.constantFrom('lookup', 'lookup', 'add', 'add', 'free'),
      positions: posDescArb,
      n: fc.integer({ min: 0, max: 8 }),
      batch: fc.integer({ min: 1, max: 2 }),
      x: floatDescArb,
      outside: fc.constantFrom(null, null, null, 'high', 'low'),
      extra: extraKeyArb(['position', 'shapes']),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});

export function learnedSteps(spec, env) {
  const plan = new Plan('learned');
  const D = spec.dModel.v;
  plan.part('dModel', spec.dModel.fate);
  const okD = spec.dModel.fate === 'ok';
  const tableLen = okD ? spec.rows * D : 12;
  const table = buildFloat(spec.table, env, tableLen);
  plan.part('table', table.fate);
  const o = { dModel: D };
  const offOk = spec.offset === undefined || (Number.isInteger(spec.offset) && spec.offset >= 0 && spec.offset < spec.rows);
  if (spec.offset !== undefined) o.offset = spec.offset;
  plan.part('offset', offOk ? 'ok' : 'error');
  if (!offOk) plan.part('maxLen', 'either'); // a bad offset may show as the maxLen it leaves
  const offset = spec.offset ?? 0;
  let maxLen = spec.rows - offset;
  if (spec.maxLen === 'exact') o.maxLen = maxLen;
  if (spec.maxLen === 'more') {
    o.maxLen = maxLen + 1;
    plan.part('maxLen', 'error');
  }
  if (spec.maxLen === 'huge') {
    o.maxLen = 2 ** 32 + 1;
    plan.part('maxLen', 'error');
  }
  let L = null;
  const steps = [
    {
      plan,
      cleanup: () => {},
      run: () => (L = env.pe.learned(table.value, o)),
      check: (r) => (r.maxLen === maxLen && r.dModel === D && r.offset === offset ? null : `learned: maxLen ${r.maxLen} dModel ${r.dModel} offset ${r.offset}, expected ${maxLen} ${D} ${offset}`),
    },
  ];
  let freed = false;
  for (const op of spec.ops) {
    steps.push(() => {
      if (L === null || table.expected === null) return null;
      const rowOf = (p) => table.expected.subarray((p + offset) * D, (p + offset + 1) * D);
      if (op.op === 'free') {
        freed = true;
        return { plan: new Plan('learned.free'), run: () => L.free() };
      }
      const where = op.op === 'lookup' ? 'learned.lookup' : 'learned.add';
      const p = new Plan(where);
      if (freed) p.part('freed', 'error');
      const pd = { ...op.positions, maxPos: maxLen - 1 };
      let n = op.op === 'lookup' ? op.n : pd.len === 'batch' ? op.batch * Math.max(1, op.n) : Math.max(1, op.n);
      if (op.op === 'add' && pd.len === 'wrong') n += 1;
      const vals = positionValues(pd, n, -offset);
      if (op.outside === 'high' && n > 0) vals[0] = maxLen;
      if (op.outside === 'low' && n > 0) vals[0] = -offset - 1;
      const pos = buildPositions(pd, env, vals, -offset, maxLen - 1);
      p.part('positions', op.op === 'add' && pd.len === 'wrong' ? 'error' : pos.fate);
      if (op.outside !== null && n > 0) p.part('maxLen', 'error').part('offset', 'error');
      if (op.op === 'lookup') {
        return {
          plan: p,
          run: () => L.lookup(pos.value),
          check: (r) => {
            if (pos.values === null) return null;
            const ref = new Float64Array(n * D);
            pos.values.forEach((v, i) => ref.set(rowOf(v), i * D));
            return compare('lookup', r, ref, () => 0);
          },
        };
      }
      const S = Math.max(1, op.n);
      const B = pd.len === 'batch' ? op.batch : 1;
      const x = buildFloat(op.x, env, B * S * D);
      p.part('x', x.fate);
      const opts = { shape: [B, S, D], positions: pos.value };
      if (op.extra !== null) {
        opts[op.extra] = 1;
        p.part(op.extra, policy.unknownKey);
      }
      return {
        plan: p,
        cleanup: () => x.cleanup(),
        run: () => L.add(x.value, opts),
        check: (r) => {
          if (pos.values === null || x.expected === null) return null;
          const got = r.array ?? r;
          const ref = Float64Array.from(x.expected);
          for (let b = 0; b < B; b++) {
            for (let s = 0; s < S; s++) {
              const v = pos.values.length === S ? pos.values[s] : pos.values[b * S + s];
              const row = rowOf(v);
              for (let d = 0; d < D; d++) ref[(b * S + s) * D + d] = Math.fround(ref[(b * S + s) * D + d] + row[d]);
            }
          }
          return compare('learned.add', got, ref, () => 0);
        },
      };
    });
  }
  steps.push(() => {
    L?.free();
    table.cleanup();
    return null;
  });
  return steps;
}

// ---- attention --------------------------------------------------------------------------------------------

export const attnCaseArb = fc.record({
  batch: fc.integer({ min: 1, max: 2 }),
  kvHeads: fc.integer({ min: 1, max: 2 }),
  group: fc.integer({ min: 1, max: 2 }),
  qLen: fc.integer({ min: 1, max: 5 }),
  kExtra: fc.integer({ min: 0, max: 3 }),
  headDim: fc.constantFrom(2, 4, 8, 6),
  layout: fc.constantFrom(undefined, 'bshd', 'bhsd', 'bsdh'),
  causal: fc.constantFrom(undefined, true, false, 1),
  rope: fc.constantFrom(null, null, 'same', 'same', 'foreign', 'freed', 'otherDim', 'notRope'),
  kRotated: fc.constantFrom(undefined, true, false),
  alibi: fc.constantFrom(undefined, undefined, true, 'slopes', 'short', 'nan'),
  scale: fc.constantFrom(undefined, undefined, 0.3, 2, NaN, 0, 1e-46, 1e39, -0.5, '1'),
  positions: fc.constantFrom(null, null, 'array', 'qk', 'qOnly', 'negative', 'shortK', 'proxy'),
  returnWeights: fc.constantFrom(undefined, true, false),
  out: fc.constantFrom(null, null, 'f32', 'tensor', 'overlapQ', 'short'),
  q: floatDescArb,
  k: floatDescArb,
  v: floatDescArb,
  huge: maybe(fc.constantFrom({ heads: 1, qLen: 16385, kLen: 32768, headDim: 1, returnWeights: true }, { heads: 2 ** 16, qLen: 2 ** 16, kLen: 1, headDim: 1 }, { heads: 1, qLen: 1, kLen: 2 ** 31, headDim: 2 }, { heads: 2 ** 32 + 1, qLen: 1, kLen: 1, headDim: 1 }), 0.06),
  extra: extraKeyArb(['causual', 'positionIds', 'scales', 'mask_']),
});

export function attnSteps(spec, env) {
  const plan = new Plan('attention');
  const { batch: B, kvHeads: KVH, qLen: Sq, headDim: D } = spec;
  const H = KVH * spec.group;
  const Sk = Sq + spec.kExtra;
  const layout = spec.layout ?? 'bshd';
  plan.part('layout', spec.layout === 'bsdh' ? 'error' : 'ok');
  const shape = { batch: B, heads: H, kvHeads: KVH, qLen: Sq, kLen: Sk, headDim: D };
  const o = { shape };
  if (spec.layout !== undefined) o.layout = spec.layout;
  if (spec.causal !== undefined) o.causal = spec.causal;
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
  if (spec.kRotated !== undefined) o.kRotated = spec.kRotated;
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
  const nk = B * Sk * KVH * D;
  const q = buildFloat(spec.q, env, nq);
  const k = buildFloat(spec.k, env, nk);
  const v = buildFloat(spec.v, env, nk);
  plan.part('q', q.fate).part('k', k.fate).part('v', v.fate);
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
  if (spec.extra !== null) {
    o[spec.extra] = 1;
    plan.part(spec.extra, policy.unknownKey);
  }
  return [
    {
      plan,
      cleanup: () => {
        for (const t of [q, k, v, out]) t?.cleanup();
        if (spec.rope === 'same' || spec.rope === 'otherDim' || spec.rope === 'foreign') rope.free();
      },
      run: () => env.pe.attention(q.value, k.value, v.value, o),
      check: (r) => {
        if (q.expected === null || k.expected === null || v.expected === null || spec.positions === 'proxy') return null;
        const got = r.out.array ?? r.out;
        if (out !== null && r.out !== out.value && !(out.value instanceof Float32Array)) return 'attention did not return options.out as out';
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
        const ref = refAttention(qd, k.expected, v.expected, shape, refOpts);
        const bad = compare('attention.out', got, ref.out, () => 5e-5);
        if (bad || spec.returnWeights !== true) return bad;
        if (!r.weights) return 'returnWeights: no weights';
        return compare('attention.weights', r.weights, ref.weights, () => 5e-6);
      },
    },
  ];
}

// ---- tensor -----------------------------------------------------------------------------------------------

export const tensorCaseArb = fc.record({
  arg: fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('length'), n: sizeArb(0, 64) }) },
    { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('f32', 'wasmView', 'proxy', 'proxyLen', 'lookalike', 'detached', 'f64', 'big', 'u16'), n: fc.integer({ min: 0, max: 40 }), later: fc.constantFrom(2 ** 20, 2 ** 31, 0) }) },
  ),
  options: fc.constantFrom(undefined, undefined, undefined, 'dtype32', 'unknown', 'notObject'),
  after: fc.constantFrom('none', 'free', 'doubleFree', 'useAfterFree', 'foreignUse'),
});

export function tensorSteps(spec, env) {
  const plan = new Plan('tensor');
  plan.names.push('argument'); // pe.tensor's one argument may be called just that
  const a = spec.arg;
  let arg;
  let expected = null;
  if (a.kind === 'length') {
    arg = a.n.v;
    plan.part('length', a.n.fate);
    if (a.n.fate === 'ok') expected = new Float32Array(a.n.v);
  } else {
    const n = a.n;
    const data = f32Data(n, 9);
    switch (a.kind) {
      case 'f32':
        arg = data;
        expected = data;
        break;
      case 'wasmView': {
        const t = env.pe.tensor(data);
        env.scratchTensors.push(t);
        arg = t.array;
        expected = data;
        break;
      }
      case 'proxy':
        arg = proxyOf(data);
        plan.part('lengthOrArray', 'either');
        break;
      case 'proxyLen':
        arg = proxyOf(data, { lengthSeq: [n, a.later] });
        plan.part('lengthOrArray', 'either');
        break;
      case 'lookalike':
        arg = lookAlike(Float32Array.prototype, { length: n, buffer: env.wasmBuffer(), byteOffset: 64 });
        plan.part('lengthOrArray', 'error');
        break;
      case 'detached':
        arg = detached(Float32Array, n);
        plan.part('lengthOrArray', 'error');
        break;
      case 'f64':
        arg = Float64Array.from(data);
        plan.part('lengthOrArray', 'error');
        break;
      case 'big':
        arg = new BigInt64Array(n);
        plan.part('lengthOrArray', 'error');
        break;
      case 'u16':
        arg = new Uint16Array(n);
        plan.part('lengthOrArray', 'either'); // raw 16-bit storage once dtypes land
        break;
      default:
        throw new Error(a.kind);
    }
  }
  let opts;
  if (spec.options === 'dtype32') {
    opts = { dtype: 'float32' };
    plan.part('dtype', 'either');
  } else if (spec.options === 'unknown') {
    opts = { dtpye: 'float16' };
    plan.part('dtpye', policy.unknownKey);
  } else if (spec.options === 'notObject') {
    opts = 5;
    plan.part('options', policy.unknownKey);
  }
  let t = null;
  const steps = [
    {
      plan,
      run: () => (t = opts === undefined ? env.pe.tensor(arg) : env.pe.tensor(arg, opts)),
      check: (r) => {
        if (expected === null) return null;
        if (r.length !== expected.length) return `tensor.length ${r.length}, expected ${expected.length}`;
        return compare('tensor.array', r.array, expected, () => 0);
      },
    },
  ];
  steps.push(() => {
    if (t === null) return null;
    switch (spec.after) {
      case 'free':
        return { plan: new Plan('tensor.free'), run: () => t.free(), check: () => (t.freed ? null : 'freed is false after free()') };
      case 'doubleFree':
        t.free();
        return { plan: new Plan('tensor.free'), run: () => t.free() };
      case 'useAfterFree':
        t.free();
        return { plan: new Plan('tensor').part('freed', 'error'), run: () => t.array };
      case 'foreignUse': {
        const r = env.other.rope({ headDim: 2 });
        const n = t.length - (t.length % 2);
        return {
          plan: new Plan('rope.apply').part('x', n === 0 ? 'either' : 'error').part('another', 'error'),
          run: () => r.apply(t, { shape: [1, Math.max(1, n / 2), 1, 2] }),
          cleanup: () => r.free(),
        };
      }
      default:
        return null;
    }
  });
  steps.push(() => {
    t?.free();
    return null;
  });
  return steps;
}

export { NOT_SIZES, HUGE_REFUSED };
