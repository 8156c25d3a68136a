// report-targets.mjs — every target of the performance issues (14, and the bench lines of 11 and 13), each
// evaluated on one run's results as met / missed with the measured ratio. No Node-only API.
//
// A target covers several workloads (both pairings, both layouts): its line gives every workload's value and
// is met only when all are. Ratios are those of the tables: time(contender) / time(posenc), median of the
// per-round ratios, so "≥ 0.95× limit: rotation" reads: posenc reaches 95 % of the hand-written kernel's speed.

import { ratio, difference } from '../web/widgets/lib/measure.js';
import { status as rowStatus, measured as rowMeasured, bound as rowBound } from './targets.mjs';

/** time(onnxruntime-web op) / time(posenc contender `against`, 'api' by default), same child process. */
export function ortRatio(results, threads, wid, op, against = 'api') {
  const run = results.ort.find((o) => o.threads === threads);
  const w = run?.workloads.find((x) => x.id === wid);
  if (!w) return null;
  return ratio(w.results, `ort-${op}`, against);
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
  const fmt = (r) => (r ? `${r.median.toFixed(2)}×` : 'n/a');
  // One target over a list of workloads. f(w): the ratio summary (or null); ceiling(w): text naming what bounds
  // that workload on this machine, printed beside each workload that misses (the evidence); note(w): a
  // sentence about the worst workload. Status: met when every workload has a value and meets the bound,
  // missed when any value misses, not measured when none has a value or the rest lack one.
  const line = (issue, target, list, f, dir, bound, { ceiling, note } = {}) => {
    const vals = list.map((w) => ({ w, r: f(w) })).filter((x) => x.r);
    if (vals.length === 0) {
      T.push({ issue, target, measured: 'not measured', status: 'not measured', note: typeof note === 'string' ? note : 'no workload of this kind in this run' });
      return;
    }
    const ok = (v) => (dir === 'min' ? v >= bound : v <= bound);
    const all = vals.every((x) => ok(x.r.median));
    const worst = vals.reduce((a, b) => ((dir === 'min' ? b.r.median < a.r.median : b.r.median > a.r.median) ? b : a));
    const bracket = (x) => {
      const c = !ok(x.r.median) && ceiling ? ceiling(x.w) : null;
      return c ? ` [${c}]` : '';
    };
    const measured = vals.map((x) => `${short(x.w)} ${x.r.median.toFixed(2)}×${bracket(x)}`).join('; ');
    const lacking = list.filter((w) => !vals.some((x) => x.w === w));
    T.push({
      issue,
      target,
      measured: lacking.length ? `${measured}; no value for ${lacking.map(short).join(', ')}` : measured,
      worst: { id: worst.w.id, value: worst.r.median },
      status: !all ? 'missed' : lacking.length ? 'not measured' : 'met',
      note: !all && typeof note === 'function' ? note(worst.w) : lacking.length ? `${lacking.length} of ${list.length} workloads without a value` : undefined,
    });
  };

  // ---- issue 14 ----------------------------------------------------------------------------------------------
  const inCache = rope((p) => p.size === 'decode' || p.size === 'prefill');
  line(14, 'decode and prefill, public API with pe.tensor ≥ 0.95× limit: rotation', inCache, (w) => ratio(w.results, 'rotation', 'api'), 'min', 0.95, {
    ceiling: (w) => `raw pe_rope_apply_qk alone ${fmt(ratio(w.results, 'rotation', 'raw-apply'))} of the hand kernel`,
    note: (w) => `worst ${w.id}${w.params.size === 'decode' ? `: the API call adds ${fmtUs(difference(w.results, 'api', 'raw-apply'))} over raw apply` : ''}${codeNote(results)}`,
  });
  line(14, 'decode and prefill, public API with pe.tensor ≥ 0.62× the in-place limit', inCache, (w) => ratio(w.results, 'limit', 'api'), 'min', 0.62, {
    ceiling: (w) => {
      const c = ratio(w.results, 'limit', 'rotation');
      return c && `ceiling: the hand kernel itself ${fmt(c)} of the in-place pass${c.median < 0.62 ? ', so out of reach here' : ''}`;
    },
    note: () => 'a rotation needs 4 multiplies per 8 floats against 1 for `x *= s`: in cache the multiply pipes bound it, and the hand-written rotation (limit: rotation) is the ceiling shown beside each miss',
  });
  line(14, 'large bshd ≥ 0.95× the in-place limit', rope((p) => p.size === 'large' && p.layout === 'bshd'), (w) => ratio(w.results, 'limit', 'api'), 'min', 0.95, {
    ceiling: (w) => `limit: rotation ${fmt(ratio(w.results, 'limit', 'rotation'))} of the in-place pass`,
    note: (w) => `bytes: q and k read and written once (${(w.params.bytes / 2 ** 20).toFixed(0)} MiB each way) plus the cos/sin table`,
  });
  line(14, 'large bhsd ≥ 0.85× the in-place limit', rope((p) => p.size === 'large' && p.layout === 'bhsd'), (w) => ratio(w.results, 'limit', 'api'), 'min', 0.85, {
    ceiling: (w) => `limit: rotation (2 heads of q and k per table row read) ${fmt(ratio(w.results, 'limit', 'rotation'))} of the in-place pass`,
  });
  line(14, 'interleaved within 1.1× of half-split (same tensors, same rounds), every workload', rope((p) => p.pairing === 'half'), (w) => ratio(w.results, 'api-other', 'api'), 'max', 1.1, {
    ceiling: (w) => {
      const c = ratioAcross(ws, w, 'rotation');
      return c && `hand kernels' interleaved / half-split ${fmt(c)}`;
    },
    note: () => {
      const il = results.code?.rot_il_bshd?.perEightFloats;
      const half = results.code?.rot_half_bshd?.perEightFloats;
      return `interleaved pairs are expanded with shuffles (2 per 4 frequencies, shared by q and k)${il && half ? `: V8 code of the hand kernels ${il} against ${half} instructions per 8 floats` : ''}`;
    },
  });
  line(14, 'decode with a new position every call within 1.1× of cached positions', rope((p) => p.size === 'decode'), (w) => ratio(w.results, 'api-new', 'api'), 'max', 1.1, {
    ceiling: (w) => `a new position costs ${fmtUs(difference(w.results, 'api-new', 'api'))} per call`,
    note: () => 'one cos/sin row of 64 frequencies in double per call',
  });
  {
    // the workloads onnxruntime-web was asked to run with 1 thread (every workload of a full run)
    const planned = results.ortPlanned?.[1];
    const list = rope(() => true).filter((w) => !planned || planned.includes(w.id));
    const worstOrt = (w, a = 'api') => {
      const c = ortRatio(results, 1, w.id, 'contrib', a);
      const o = ortRatio(results, 1, w.id, 'onnx', a);
      return !c ? o : !o ? c : c.median < o.median ? c : o;
    };
    const target = '≥ 30× onnxruntime-web (1 thread, end to end), every workload (worse of com.microsoft and ONNX-23)';
    if (results.ortMissing) {
      T.push({ issue: 14, target, measured: 'not measured', status: 'not measured', note: results.ortMissing });
    } else {
      line(14, target, list, (w) => worstOrt(w), 'min', 30, {
        // onnxruntime's time over the in-place pass's, from the tables' two ratios taken in their own processes
        ceiling: (w) => {
          const o = worstOrt(w);
          const l = ratio(w.results, 'limit', 'api');
          if (!o || !l) return null;
          const at = o.median / l.median;
          return `posenc at ${fmt(l)} of the in-place limit; at that limit it would be ${at.toFixed(1)}×${at < 30 ? ', so out of reach here' : ''}`;
        },
        note: () => "what bounds the ratio is onnxruntime's own speed: 30× would need it within 30× of a read and a write of the tensors",
      });
      // like for like: session.run copies its feeds in and its outputs out; so does rope.apply with Float32Arrays
      const copies = list.map((w) => ({ w, r: worstOrt(w, 'api-copy') })).filter((x) => x.r);
      if (copies.length) {
        T.push({ issue: 14, target: 'reported: posenc with Float32Array copies in and out (as session.run copies its feeds and outputs) vs onnxruntime-web, 1 thread', measured: copies.map((x) => `${short(x.w)} ${x.r.median.toFixed(2)}×`).join('; '), status: 'reported' });
      }
    }
  }
  for (const [size, js] of [['decode', 6], ['prefill', 12], ['large', 9]]) {
    line(14, `${size}: ≥ ${js}× plain JS`, rope((p) => p.size === size), (w) => ratio(w.results, 'js', 'api'), 'min', js, {
      ceiling: (w) => {
        const rot = ratio(w.results, 'js', 'rotation');
        const lim = ratio(w.results, 'js', 'limit');
        if (!rot && !lim) return null;
        const best = Math.max(rot?.median ?? 0, lim?.median ?? 0);
        return `ceiling: plain JS / limit: rotation ${fmt(rot)}, plain JS / in-place limit ${fmt(lim)}${best < js ? ', so out of reach here' : ''}`;
      },
      note: () => 'the ceiling beside each miss is plain JS over the hand-written SIMD128 rotation and over the unrolled `x *= s` pass, in the same rounds: posenc at either kernel would be that many times plain JS',
    });
  }
  {
    // the native contender: posenc's C through simd.h's native mapping, SIMD against wasm SIMD128
    const isa = results.machine?.nativeIsa;
    const list = rope(() => true);
    const vals = list.map((w) => ({ w, r: ratio(w.results, 'native-apply', 'raw-apply') })).filter((x) => x.r);
    const simd = isa && !/scalar|portable/i.test(isa);
    T.push({
      issue: 14,
      target: 'native C contender is SIMD (the ISA every table names) against wasm SIMD128',
      measured: isa ? `${isa}${vals.length ? `; native apply / wasm apply: ${vals.map((x) => `${short(x.w)} ${x.r.median.toFixed(2)}×`).join('; ')}` : ''}` : 'not measured',
      status: !isa ? 'not measured' : simd ? 'met' : 'missed',
      note: !isa ? results.machine?.nativeNote ?? '--no-native or no gcc' : simd ? undefined : `the native build fell back to ${isa}`,
    });
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
  const pe = c.pe__apply_half_fwd ?? c.pe_rope_apply;
  const rot = c.rot_half_bshd;
  const peText = !pe
    ? 'the rotation loop is not in the function measured'
    : `posenc's half-split kernel: best leaf loop ${pe.leafPerEightFloats?.[0] ?? pe.perEightFloats} instructions per 8 floats (${pe.leafLoops ?? 1} leaf loops)`;
  return `; V8 code: ${peText}, the hand kernel ${rot ? (rot.leafPerEightFloats?.[0] ?? rot.perEightFloats) : '?'}`;
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
