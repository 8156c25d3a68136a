// encoding-cases.js — fuzz cases for the absolute encodings: pe.sinusoidal (+ .add) and pe.learned (+ lookup,
// add, free). See rope-cases.js for the shape of a case.
import fc from 'fast-check';
import { policy, maybe, mostly, Plan, sizeArb, extraKeyArb, floatDescArb, posDescArb, positionValues } from './common.js';
import { buildFloat, buildPositions, NASTY_FLOATS } from './values.js';
import { refSinusoidal, compare, allFinite, ANGLE_CHECKED } from './refs.js';

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
  pairing: mostly([undefined, 'interleaved', 'half'], ['Half'], 0.05),
  x: floatDescArb,
  positions: maybe(posDescArb, 0.35),
  out: maybe(mostly(['f32', 'tensor'], ['short', 'freed', 'lookalike'], 0.3), 0.35),
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
    const n = pd.len === 'batch' ? spec.batch * S : pd.len === 'wrong' ? spec.batch * S + 1 : S;
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
  offset: mostly([undefined, 0, 1, 2], [-1, 0.5, 2 ** 31], 0.1),
  maxLen: mostly(['none', 'exact'], ['more', 'huge'], 0.1),
  table: floatDescArb,
  ops: fc.array(
    fc.record({
      op: fc.constantFrom('lookup', 'lookup', 'lookup', 'add', 'add', 'add', 'free'),
      positions: posDescArb,
      n: fc.integer({ min: 0, max: 8 }),
      batch: fc.integer({ min: 1, max: 2 }),
      x: floatDescArb,
      outside: mostly([null], ['high', 'low'], 0.1),
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
  // a table of another length is still a table when it holds whole rows: then only its row count is wrong
  const wholeRows = spec.table.kind === 'wrongLength' && okD && (tableLen + spec.table.delta) % D === 0 && tableLen + spec.table.delta > 0;
  plan.part('table', wholeRows ? 'either' : table.fate);
  if (wholeRows) plan.part('maxLen', 'either').part('offset', 'either'); // the rows held decide which is wrong
  const o = { dModel: D };
  const rowsHeld = wholeRows ? (tableLen + spec.table.delta) / D : spec.rows;
  const offOk = spec.offset === undefined || (Number.isInteger(spec.offset) && spec.offset >= 0 && spec.offset < rowsHeld);
  if (spec.offset !== undefined) o.offset = spec.offset;
  plan.part('offset', offOk ? 'ok' : 'error');
  if (!offOk) plan.part('maxLen', 'either'); // a bad offset may show as the maxLen it leaves
  const offset = spec.offset ?? 0;
  let maxLen = spec.rows - offset;
  if (spec.maxLen === 'exact') o.maxLen = maxLen;
  if (spec.maxLen === 'more') o.maxLen = maxLen + 1;
  // a given maxLen must account for exactly the rows the table holds
  if (o.maxLen !== undefined && spec.maxLen !== 'huge') plan.part('maxLen', o.maxLen + offset === rowsHeld ? 'ok' : 'error');
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
      check: (r) => (wholeRows || r.maxLen === maxLen && r.dModel === D && r.offset === offset ? null : `learned: maxLen ${r.maxLen} dModel ${r.dModel} offset ${r.offset}, expected ${maxLen} ${D} ${offset}`),
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
