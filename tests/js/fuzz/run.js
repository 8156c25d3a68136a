// run.js — the JS API fuzzer's driver: one fast-check arbitrary over every public entry point, the runner of
// one case (each call judged, the instance checked intact after each), and fresh instances on demand (a call
// that damaged an instance must not poison the cases after it).
//
// Property, for every generated case: each call ends in success with a right result, or in a TypeError /
// RangeError whose message names the function and the argument — never another error class, never a wasm trap,
// never a hang — and afterwards the instance still computes the known-good RoPE apply bit for bit, alibiSlopes(4)
// exactly, and the canary tensors are unchanged.
import fc from 'fast-check';
import { init } from '../../../web/src/index.js';
import { attempt, judge } from './common.js';
import { makeEnv } from './env.js';
import { ropeCaseArb, ropeSteps } from './rope-cases.js';
import { hfCaseArb, hfSteps } from './hf-cases.js';
import { slopesCaseArb, slopesSteps, biasCaseArb, biasSteps, maskCaseArb, maskSteps } from './alibi-cases.js';
import { sinCaseArb, sinSteps, learnedCaseArb, learnedSteps } from './encoding-cases.js';
import { attnCaseArb, attnSteps } from './attention-cases.js';
import { mropeAttnCaseArb, mropeAttnSteps } from './mrope-attention-cases.js';
import { tensorCaseArb, tensorSteps } from './tensor-cases.js';

/** Entry points: [name, arbitrary of its specs, steps(spec, env), weight]. */
export const ENTRIES = [
  ['rope', ropeCaseArb, ropeSteps, 6],
  ['ropeFromHFConfig', hfCaseArb, hfSteps, 1],
  ['alibiSlopes', slopesCaseArb, slopesSteps, 1],
  ['alibiBias', biasCaseArb, biasSteps, 2],
  ['alibiBiasFromMask', maskCaseArb, maskSteps, 1],
  ['sinusoidal', sinCaseArb, sinSteps, 2],
  ['learned', learnedCaseArb, learnedSteps, 2],
  ['attention', attnCaseArb, attnSteps, 3],
  ['attentionMrope', mropeAttnCaseArb, mropeAttnSteps, 1],
  ['tensor', tensorCaseArb, tensorSteps, 2],
];
const STEPS = Object.fromEntries(ENTRIES.map(([name, , steps]) => [name, steps]));

/** The arbitrary of one case: { entry, spec }. */
export const caseArb = fc.oneof(...ENTRIES.map(([entry, arb, , weight]) => ({ weight, arbitrary: arb.map((spec) => ({ entry, spec })) })));

/**
 * Fresh posenc instances, not the cached ones of init(): a module is compiled once per build and instantiated
 * anew for each fresh instance (web/src/loader.js's instantiate), so a damaged instance can be replaced.
 * Falls back to init() (one cached instance per build) if the loader's internals are not there.
 */
export async function instanceMaker() {
  try {
    const loader = await import('../../../web/src/loader.js');
    const inline = await import('../../../web/src/wasm-inline.js');
    const modules = {
      true: await loader.compileBytes(loader.decodeBase64(inline.simdWasmBase64)),
      false: await loader.compileBytes(loader.decodeBase64(inline.scalarWasmBase64)),
    };
    return { fresh: true, make: (simd) => loader.instantiate(modules[simd], simd) };
  } catch {
    return { fresh: false, make: (simd) => init({ simd }) };
  }
}

/**
 * A holder of the fuzz environment for one build: env() gives a live one, renew() replaces a damaged one.
 * The known-good result is computed once, on the first (fresh) instance, and every later instance must agree.
 */
export async function makeEnvHolder(simd) {
  const maker = await instanceMaker();
  const first = makeEnv(await maker.make(simd), await maker.make(!simd));
  const holder = {
    current: first,
    renewals: 0,
    fresh: maker.fresh,
    env: () => holder.current,
    async renew() {
      if (!maker.fresh) return false;
      const env = makeEnv(await maker.make(simd), await maker.make(!simd));
      env.expected = first.expected; // the start-up result stays the reference
      const bad = env.checkIntact();
      if (bad) throw new Error(`fuzz: a fresh instance does not reproduce the start-up known-good result: ${bad}`);
      holder.current = env;
      holder.renewals++;
      return true;
    },
  };
  return holder;
}

/**
 * Runs one case on env. Returns null, or { step, where, violation, damaged } for the first violation.
 * A case ends at its first refused call (the following steps build on its result).
 */
export function runCase(c, env, stats = null) {
  let steps;
  try {
    steps = STEPS[c.entry](c.spec, env);
  } catch (e) {
    // building the arguments (pe.tensor, pe.rope) failed: the instance was damaged by an earlier case
    env.endCase();
    return { step: 0, where: c.entry, violation: `preparing the arguments threw ${e?.name}: ${e?.message}`, damaged: true };
  }
  try {
    for (let i = 0; i < steps.length; i++) {
      let step = steps[i];
      if (typeof step === 'function') {
        try {
          step = step();
        } catch (e) {
          return { step: i, where: c.entry, violation: `preparing the call threw ${e?.name}: ${e?.message}`, damaged: true };
        }
      }
      if (!step || step.skip) continue;
      const outcome = attempt(step.run);
      const violation = judge(step.plan, outcome, step.check);
      if (stats) {
        stats.calls++;
        if (outcome.ok) stats[step.check ? 'checked' : 'returned']++;
        else stats.refused++;
      }
      try {
        step.cleanup?.();
      } catch (e) {
        return { step: i, where: step.plan.where, violation: `cleanup after the call threw ${e?.name}: ${e?.message}`, damaged: true };
      }
      const damage = env.checkIntact();
      if (violation || damage) {
        const text = [violation, damage && `instance damaged afterwards: ${damage}`].filter(Boolean).join('; ');
        return { step: i, where: step.plan.where, violation: text, damaged: damage !== null };
      }
      if (!outcome.ok) break;
    }
    return null;
  } finally {
    try {
      env.endCase();
    } catch {
      // a damaged instance may not free; it is replaced
    }
  }
}

/** What makes two findings the same: the function and the kind of violation, numbers and names left out. */
export function findingKey(r) {
  return `${r.where}: ${r.violation.replace(/\[[^\]]*\]/g, '[]').replace(/-?\d[\d.e+-]*/g, '#').slice(0, 60)}`;
}

/** A short rendering of a case for reports (JSON with the odd values spelled out). */
export function showCase(c) {
  return JSON.stringify(c, (_, v) => {
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (typeof v === 'number' && Object.is(v, -0)) return '-0';
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol') return v.toString();
    if (v === undefined) return 'undefined';
    return v;
  });
}

/**
 * fast-check run over `runs` cases from `seed` on one build. mode 'assert': stops at the first violation and
 * shrinks it (throws, for node --test). mode 'collect': keeps going, returns every distinct violation found
 * (by entry and the violation's first words), renewing the instance after damage.
 * onFinding(finding) is called for each new one; trace(case) before each case.
 * Returns { runs, perEntry: { entry: cases }, stats: { calls, checked, returned, refused }, findings, renewals }.
 */
export async function fuzz({ simd, seed, runs, mode = 'assert', onFinding = () => {}, trace = null }) {
  const holder = await makeEnvHolder(simd);
  const findings = new Map();
  let needRenew = false; // a damaged instance is replaced before the next case
  let executed = 0;
  const perEntry = {};
  const stats = { calls: 0, checked: 0, returned: 0, refused: 0 }; // API calls made; results checked; refusals
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      if (needRenew) {
        needRenew = false;
        await holder.renew();
      }
      executed++;
      perEntry[c.entry] = (perEntry[c.entry] ?? 0) + 1;
      trace?.(c);
      const r = runCase(c, holder.env(), stats);
      if (r === null) return true;
      needRenew = true; // any violation may have written where no check looks: go on with a fresh instance
      if (mode === 'collect') {
        const key = findingKey(r);
        if (!findings.has(key)) {
          const finding = { case: showCase(c), where: r.where, violation: r.violation, key };
          findings.set(key, finding);
          onFinding(finding);
        }
        return true;
      }
      throw new Error(`${r.where}: ${r.violation}`);
    }),
    { seed, numRuns: runs, includeErrorInReport: true },
  );
  return { runs: executed, perEntry, stats, findings: [...findings.values()], renewals: holder.renewals };
}
