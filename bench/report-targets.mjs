// report-targets.mjs — every target of the performance issues (14, and the bench lines of 11 and 13), each
// evaluated on one run's results as met / missed with the measured ratio. No Node-only API.
//
// A target covers several workloads (both pairings, both layouts): its line gives every workload's value and
// is met only when all are. Ratios are those of the tables: time(contender) / time(posenc), median of the
// per-round ratios, so "≥ 0.95× limit: rotation" reads: posenc reaches 95 % of the hand-written kernel's speed.

import { ratio, difference } from '../web/widgets/lib/measure.js';
import { status as rowStatus, measured as rowMeasured, bound as rowBound } from './targets.mjs';

export function ortRatio(results, threads, wid, op) {
  const run = results.ort.find((o) => o.threads === threads);
  const w = run?.workloads.find((x) => x.id === wid);
  if (!w) return null;
  return ratio(w.results, `ort-${op}`, 'api');
}

const short = (w) => `${w.params.size} ${w.params.pairing}/${w.params.layout}`;

/**
 * evaluate(results) -> [{ issue, target, measured, status, note? }]. status: 'met' | 'missed' | 'not measured'
 * | 'reported'. measured lists each workload's median; a missed target's note carries the evidence the run has.
 */
export function evaluateTargets(results) {
  const T = [];
  const ws = results.workloads.filter((w) => w.results);
  const rope = (pred) => ws.filter((w) => w.group === 'rope' && pred(w.params));
  // values: [{ w, r }] with r a ratio summary or null
  const line = (issue, target, list, f, dir, bound, note) => {
    const vals = list.map((w) => ({ w, r: f(w) })).filter((x) => x.r);
    if (vals.length === 0) {
      T.push({ issue, target, measured: 'not measured', status: 'not measured', note: typeof note === 'string' ? note : 'no workload of this kind in this run' });
      return;
    }
    const ok = (v) => (dir === 'min' ? v >= bound : v <= bound);
    const all = vals.every((x) => ok(x.r.median));
    const worst = vals.reduce((a, b) => ((dir === 'min' ? b.r.median < a.r.median : b.r.median > a.r.median) ? b : a));
    const measured = vals.map((x) => `${short(x.w)} ${x.r.median.toFixed(2)}×`).join('; ');
    const missing = list.length - vals.length;
    T.push({
      issue,
      target,
      measured: missing ? `${measured}; ${missing} workload(s) without a value` : measured,
      worst: { id: worst.w.id, value: worst.r.median },
      status: all ? 'met' : 'missed',
      note: !all && typeof note === 'function' ? note(worst.w) : undefined,
    });
  };
  const fmt = (r) => (r ? `${r.median.toFixed(2)}×` : 'n/a');

  // ---- issue 14 ----------------------------------------------------------------------------------------------
  const inCache = rope((p) => p.size === 'decode' || p.size === 'prefill');
  line(14, 'decode and prefill, public API with pe.tensor ≥ 0.95× limit: rotation', inCache, (w) => ratio(w.results, 'rotation', 'api'), 'min', 0.95,
    (w) => `worst ${w.id}: posenc's raw pe_rope_apply alone (table made once) reaches ${fmt(ratio(w.results, 'rotation', 'raw-apply'))} of the hand kernel${w.params.size === 'decode' ? `; the API call adds ${fmtUs(difference(w.results, 'api', 'raw-apply'))} over raw apply` : ''}${codeNote(results)}`);
  line(14, 'decode and prefill, public API with pe.tensor ≥ 0.62× the in-place limit', inCache, (w) => ratio(w.results, 'limit', 'api'), 'min', 0.62,
    (w) => `worst ${w.id}: the hand kernel itself reaches ${fmt(ratio(w.results, 'limit', 'rotation'))} of the in-place pass (4 multiplies per 8 floats against 1; in cache the multiply pipes bound both)`);
  line(14, 'large bshd ≥ 0.95× the in-place limit', rope((p) => p.size === 'large' && p.layout === 'bshd'), (w) => ratio(w.results, 'limit', 'api'), 'min', 0.95,
    (w) => `worst ${w.id}: limit: rotation reaches ${fmt(ratio(w.results, 'limit', 'rotation'))} of the in-place pass; bytes: q and k read and written once (${(w.params.bytes / 2 ** 20).toFixed(0)} MiB each way) plus the cos/sin table`);
  line(14, 'large bhsd ≥ 0.85× the in-place limit', rope((p) => p.size === 'large' && p.layout === 'bhsd'), (w) => ratio(w.results, 'limit', 'api'), 'min', 0.85,
    (w) => `worst ${w.id}: limit: rotation (2 heads of q and k per table row read) reaches ${fmt(ratio(w.results, 'limit', 'rotation'))} of the in-place pass`);
  line(14, 'interleaved within 1.1× of half-split (same tensors, same rounds), every workload', rope((p) => p.pairing === 'half'), (w) => ratio(w.results, 'api-other', 'api'), 'max', 1.1,
    (w) => `worst ${w.id}: the hand kernels' interleaved / half-split ${fmt(ratioAcross(ws, w, 'rotation'))}`);
  line(14, 'decode with a new position every call within 1.1× of cached positions', rope((p) => p.size === 'decode'), (w) => ratio(w.results, 'api-new', 'api'), 'max', 1.1,
    (w) => `worst ${w.id}: a new position costs ${fmtUs(difference(w.results, 'api-new', 'api'))} per call (one cos/sin row of 64 frequencies in double, then the table path)`);
  {
    const list = rope(() => true);
    const worstOrt = (w) => {
      const a = ortRatio(results, 1, w.id, 'contrib');
      const b = ortRatio(results, 1, w.id, 'onnx');
      return !a ? b : !b ? a : a.median < b.median ? a : b;
    };
    if (results.ortMissing) {
      T.push({ issue: 14, target: '≥ 30× onnxruntime-web (1 thread, end to end), every workload', measured: 'not measured', status: 'not measured', note: results.ortMissing });
    } else {
      line(14, '≥ 30× onnxruntime-web (1 thread, end to end), every workload (worse of com.microsoft and ONNX-23)', list, worstOrt, 'min', 30,
        (w) => {
          const o = worstOrt(w);
          const l = ratio(w.results, 'limit', 'api');
          return `worst ${w.id}: posenc at ${fmt(l)} of the in-place limit; even at that limit it would be ${o && l ? `${(o.median / l.median).toFixed(1)}×` : 'n/a'} onnxruntime-web (what bounds the ratio is onnxruntime's own speed)`;
        });
    }
  }
  for (const [size, js] of [['decode', 6], ['prefill', 12], ['large', 9]]) {
    line(14, `${size}: ≥ ${js}× plain JS`, rope((p) => p.size === size), (w) => ratio(w.results, 'js', 'api'), 'min', js,
      (w) => `worst ${w.id}: posenc at ${fmt(ratio(w.results, 'limit', 'api'))} of the in-place limit, plain JS at ${fmt(ratio(w.results, 'limit', 'js'))}: even at that limit posenc would be ${fmt(ratio(w.results, 'js', 'limit'))} plain JS`);
  }
  {
    const at = ws.filter((w) => w.group === 'attention');
    const peak = peakGflops(results);
    if (at.length && peak) {
      const parts = at.map((w) => `${w.id.replace('attention/', '')} ${gflops(w, 'raw').toFixed(1)} GFLOP/s = ${((100 * gflops(w, 'raw')) / peak).toFixed(0)} %`);
      T.push({ issue: 14, target: `attention GFLOP/s vs the register-only peak (${peak.toFixed(1)} GFLOP/s, mul + add SIMD128)`, measured: parts.join('; '), status: 'reported' });
    } else {
      T.push({ issue: 14, target: 'attention GFLOP/s vs the register-only peak', measured: 'not measured', status: 'not measured', note: at.length ? 'no limit_peak in limit.wasm' : 'no attention workload in this run' });
    }
  }

  // ---- issues 11 and 13: the bench modules -----------------------------------------------------------------
  for (const x of results.extra ?? []) {
    for (const r of x.rows) {
      T.push({ issue: x.module.startsWith('mrope') ? 13 : 11, target: `${r.name} ${rowBound(r)}`, measured: rowMeasured(r), status: rowStatus(r), note: r.note, module: x.module });
    }
  }
  return T;
}

/** V8's instruction counts per 8 floats: posenc's apply loop against the hand kernel's (bench/v8-code.mjs). */
function codeNote(results) {
  const c = results.code;
  if (!c) return '';
  const pe = c.pe_rope_apply;
  const rot = c.rot_half_bshd;
  return `; V8 code: ${pe ? `pe_rope_apply's innermost rotation loop ${pe.perEightFloats} instructions per 8 floats (${pe.lea} lea, ${pe.stack} stack refs)` : 'the rotation loop is not inlined into pe_rope_apply'}, the hand kernel ${rot ? rot.perEightFloats : '?'}`;
}

function fmtUs(d) {
  return d ? `${(d.median * 1e6).toFixed(2)} µs` : 'n/a';
}

/** The same contender's time in the workload with the other pairing (same size and layout), over this one's. */
function ratioAcross(ws, w, id) {
  const other = ws.find((x) => x.group === 'rope' && x.params.size === w.params.size && x.params.layout === w.params.layout && x.params.pairing !== w.params.pairing);
  const a = other?.results?.[id]?.median;
  const b = w.results?.[id]?.median;
  return a && b ? { median: a / b } : null;
}

export function gflops(w, id) {
  const m = w.results?.[id]?.median;
  return m ? w.params.flops / m / 1e9 : NaN;
}

/** The register-only peak, from any attention workload's 'peak' contender (the median over workloads). */
export function peakGflops(results) {
  const xs = results.workloads.filter((w) => w.group === 'attention' && w.results?.peak?.median).map((w) => results.peakFlops / w.results.peak.median / 1e9);
  if (!xs.length || !results.peakFlops) return null;
  xs.sort((a, b) => a - b);
  return xs[xs.length >> 1];
}
