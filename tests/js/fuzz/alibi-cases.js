// alibi-cases.js — fuzz cases for pe.alibiSlopes, pe.alibiBias and pe.alibiBiasFromMask. See rope-cases.js for
// the shape of a case.
import fc from 'fast-check';
import { policy, maybe, mostly, Plan, sizeArb, extraKeyArb, NEVER_FITS } from './common.js';
import { buildFloat, proxyOf, changingLength, changingGetter, lookAlike } from './values.js';
import { refAlibiSlopes, refAlibiBias, refAlibiFromMask, compare } from './refs.js';

const ulp32 = (r) => Math.abs(r) * 2 ** -23 + 1e-45;
/** Element count of dims (all ok numbers), or null; a case whose count is between the cheap and the
 *  never-fits range is made cheap by the caller. */
function count(...dims) {
  return dims.reduce((a, b) => a * b, 1);
}

/** Slopes option description -> { value, fate, values }. */
const slopesArb = maybe(mostly(['ok', 'okArray'], ['short', 'nan', 'huge', 'proxy', 'lookalike', 'lenChange'], 0.3), 0.35);
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
  causal: mostly([undefined, true, false], [1, 'yes'], 0.08),
  slopes: slopesArb,
  out: maybe(mostly(['f32', 'tensor'], ['short', 'freed', 'foreign', 'lookalike', 'f64'], 0.3), 0.35),
  extra: extraKeyArb(['casual', 'slope', 'outs']),
  changeOut: fc.constantFrom(false, false, false, true),
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
  let opts = o;
  if (spec.changeOut && out !== null && small) {
    opts = changingGetter(o, 'out', o.out, new Float32Array(1)); // valid on the first read only
    plan.part('out', 'either');
  }
  return [
    {
      plan,
      cleanup: () => out?.cleanup(),
      run: () => env.pe.alibiBias(h.v, q.v, k.v, opts),
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
  form: mostly(['rows', 'flat', 'flatI32'], ['ragged', 'bad', 'flatHuge', 'rowsWithShape', 'proxyRows', 'lenChange'], 0.25),
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
