// runner.mjs — the benchmark's plan and its loop, shared by `npm run bench` (run.mjs, Node) and the browser run
// (browser.mjs, `npm run bench:web`). No Node-only API: the environment (workloads.mjs's env) is passed in.

import * as W from './workloads.mjs';
import { compare, formatTime } from '../web/widgets/lib/measure.js';
import { measure as f16 } from './f16.mjs';
import { measure as strided } from './strided.mjs';
import { measure as attentionBatch } from './attention-batch.mjs';
import { measure as mropeBench } from './mrope.mjs';
import { measure as mropeAttention } from './mrope-attention.mjs';

export const PAIRINGS = ['half', 'interleaved'];
export const LAYOUTS = ['bshd', 'bhsd'];
export const PEAK_FLOPS = W.PEAK_FLOPS;
// what the targets and the main tables read (rope-workload.mjs's ids); the rest: api-copy, scalar
const ROPE_TARGET_CONTENDERS = ['api', 'api-new', 'api-other', 'raw', 'raw-apply', 'js', 'rotation', 'limit', 'memcpy', 'native', 'native-apply'];

/** The workload specs of one run; quick: one workload per target, large tensors smaller (a smoke test). */
export function plan(quick) {
  const p = [];
  if (quick) {
    for (const layout of LAYOUTS) p.push({ kind: 'rope', size: 'decode', pairing: 'half', layout });
    p.push({ kind: 'rope', size: 'prefill', pairing: 'half', layout: 'bshd' });
    for (const layout of LAYOUTS) p.push({ kind: 'rope', size: 'large', pairing: 'half', layout, shape: [1, 1024, 32, 128] });
  } else {
    for (const size of ['decode', 'prefill', 'large']) {
      for (const pairing of PAIRINGS) {
        for (const layout of LAYOUTS) {
          // the diagnostic contenders (copies, scalar build) once per size: at large one call of each is
          // 0.1–1 s, and the targets do not need them
          const first = pairing === 'half' && layout === 'bshd';
          p.push({ kind: 'rope', size, pairing, layout, include: first ? undefined : ROPE_TARGET_CONTENDERS });
        }
      }
    }
  }
  p.push({ kind: 'cossin', count: 1, pos0: 4095 });
  if (!quick) {
    p.push({ kind: 'cossin', count: 4096, pos0: 0 });
    p.push({ kind: 'sinusoidal' });
    p.push({ kind: 'alibi' });
  }
  for (const kind of quick ? ['decode'] : ['prefill', 'decode']) {
    for (const pos of quick ? ['alibi'] : ['alibi', 'rope']) p.push({ kind: 'attention', attn: kind, pos });
  }
  return p;
}

export const idOf = (w) =>
  w.kind === 'rope'
    ? `rope/${w.size}/${w.pairing}/${w.layout}`
    : w.kind === 'cossin'
      ? w.count === 1
        ? 'cossin/step'
        : `cossin/${w.count}x64`
      : w.kind === 'attention'
        ? `attention/${w.attn}/${w.pos}`
        : w.kind;

function build(env, spec) {
  if (spec.kind === 'rope') return W.ropeWorkload(env, spec);
  if (spec.kind === 'cossin') return W.cosSinWorkload(env, spec);
  if (spec.kind === 'sinusoidal') return W.sinusoidalWorkload(env);
  if (spec.kind === 'alibi') return W.alibiWorkload(env);
  return W.attentionWorkload(env, { kind: spec.attn, pos: spec.pos });
}

/**
 * Runs every selected workload of specs: checks its outputs once, then its contenders side by side.
 * opts: { quick, rounds, minSample, selected(id), log(line), instantiateRaw, modules: { raw, unfused } (compiled,
 * for attention's peak-memory figures) }. labels collects contender id -> label. Returns the workload entries.
 */
export async function runPlan(env, specs, labels, opts) {
  const { quick, rounds: ROUNDS, minSample, selected = () => true, log = () => {} } = opts;
  const out = [];
  const hasAttention = typeof env.raw.exports.pe_attention === 'function';
  for (const spec of specs) {
    const id = idOf(spec);
    if (!selected(id)) continue;
    if (spec.kind === 'attention' && !hasAttention) {
      out.push({ id, skipped: 'pe_attention is not exported by this build' });
      continue;
    }
    let w;
    try {
      w = build(env, spec);
    } catch (e) {
      log(`bench: ${id}: set-up failed: ${e.message}`);
      out.push({ id, error: e.message });
      continue;
    }
    const check = w.check();
    const ts = Date.now();
    // the long workloads (large RoPE: ~0.5 s per round; attention prefill: ~0.3 s) get fewer rounds
    const long = (spec.kind === 'rope' && spec.size === 'large') || (spec.kind === 'attention' && spec.attn === 'prefill');
    const rounds = long && !quick ? Math.min(ROUNDS, 5) : ROUNDS;
    const res = await compare(w.contenders, { rounds, minSample });
    w.dispose();
    for (const c of w.contenders) labels[c.id] ??= c.label;
    const slim = {};
    for (const [cid, r] of Object.entries(res.results)) {
      slim[cid] = r.error ? { error: r.error } : { iters: r.iters, median: r.median, lo: r.lo, hi: r.hi, times: r.times };
    }
    const entry = { id: w.id, group: w.group, label: w.label, params: w.params, rounds, check, results: slim, seconds: (Date.now() - ts) / 1e3 };
    if (w.extraBytes) entry.extraBytes = w.extraBytes;
    if (spec.kind === 'attention' && opts.instantiateRaw && opts.modules) {
      entry.memory = await W.attentionMemory(opts.instantiateRaw, opts.modules, { kind: spec.attn, pos: spec.pos });
    }
    out.push(entry);
    const head = res.results.api && !res.results.api.error ? 'api' : 'raw';
    log(`bench: ${w.id.padEnd(34)} ${formatTime(res.results[head]?.median).padStart(9)} (${head})  ${entry.seconds.toFixed(1)} s`);
  }
  return out;
}

// the bench modules with their own targets (interface: targets.mjs), run after the workloads
export const MODULES = [
  ['f16', f16], // issue 11: float16 / bfloat16 vs float32 apply
  ['strided', strided], // issue 11: strided vs dense apply
  ['attention-batch', attentionBatch], // issue 11: one padded-batch attention call vs per-sequence calls
  ['mrope', mropeBench], // issue 13: M-RoPE vs plain apply
  ['mrope-attention', mropeAttention], // issue 13: M-RoPE vs plain-RoPE attention
];

/** Runs each selected module's measure(pe, opts); returns [{ module, rows, seconds }]. A failure is a row. */
export async function runModules(pe, raw, opts) {
  const { quick, rounds, minSample, selected = () => true, log = () => {} } = opts;
  const out = [];
  for (const [name, measure] of MODULES) {
    if (!selected(`extra/${name}`)) continue;
    const ts = Date.now();
    let rows;
    try {
      rows = await measure(pe, { quick, rounds, minSample, raw });
    } catch (e) {
      log(`bench: ${name}: ${e.stack ?? e}`);
      rows = [{ name: `bench/${name}.mjs`, ratio: null, target: NaN, better: 'higher', note: `failed: ${e.message ?? e}` }];
    }
    out.push({ module: name, rows, seconds: (Date.now() - ts) / 1e3 });
    log(`bench: bench/${name}.mjs: ${rows.length} line(s), ${((Date.now() - ts) / 1e3).toFixed(1)} s`);
  }
  return out;
}
