// report.mjs — turns bench results (run.mjs's results.json object) into markdown tables and a list of targets
// with their status. No Node-only API.
//
// Reading the tables: a cell "a× (lo–hi)" is time(contender) / time(posenc), formed round by round and
// summarised by its median and quartiles: above 1 posenc is faster, below 1 slower. Against the limit it is
// the fraction of the limit's speed posenc reaches.

import { ratio, difference, formatRatio, formatTime } from '../web/widgets/lib/measure.js';
import { evaluateTargets, ortRatio, gflops, peakGflops } from './report-targets.mjs';
import { status as rowStatus, measured as rowMeasured, bound as rowBound } from './targets.mjs';

const MiB = 2 ** 20;
const fmtBytes = (b) => (b == null ? 'n/a' : b >= MiB ? `${(b / MiB).toFixed(b >= 10 * MiB ? 0 : 1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const fmtUs = (d) => (d ? `${(d.median * 1e6).toFixed(2)} µs (${(d.lo * 1e6).toFixed(2)}–${(d.hi * 1e6).toFixed(2)})` : 'n/a');
// one value (the browser's fastest-round ratios) has no quartiles to show
const cell = (r) => (r && r.n === 1 ? formatRatio(r).replace(/ \(.*\)$/, '') : formatRatio(r));
const timeOf = (w, id) => {
  const r = w.results?.[id];
  return r && !r.error && r.median != null ? formatTime(r.median) : 'n/a';
};

export function report(results) {
  const lines = [];
  const out = (s = '') => lines.push(s);
  const ws = results.workloads.filter((w) => w.results);
  const m = results.machine;

  out('## posenc benchmark');
  out();
  out(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; ${m.os}; ${m.engine ?? `Node ${m.node} (V8 ${m.v8})`}; ${m.emcc ?? 'emcc ?'}; ${m.gcc ?? 'gcc ?'}.`);
  const isa = m.nativeIsa ? `native C: ${m.nativeIsa} via simd.h, gcc -O3 -march=native` : `native C: not run${m.nativeNote ? ` (${m.nativeNote})` : ''}`;
  out(`Native C contender: ${m.nativeIsa ? `${m.nativeIsa} via simd.h (gcc -O3 -march=native), SIMD against wasm SIMD128` : `not run (${m.nativeNote ?? '--no-native or no gcc'})`}.`);
  if (m.loadAverage) {
    out(`Load average (1 min) at start / end: ${m.loadAverage.start[0].toFixed(2)} / ${m.loadAverage.end[0].toFixed(2)}.`);
  }
  if (m.pageFaultSeconds) {
    out(`First touch of a fresh 4 KiB page: ${(m.pageFaultSeconds * 1e6).toFixed(1)} µs${m.mallocTuning ? '; malloc set to reuse freed memory instead of fresh pages (see docs/performance.md)' : '; malloc as is'}.`);
  }
  out(`Command: \`${results.command}\` — ${results.settings.rounds} interleaved rounds (large RoPE and attention prefill: fewer, see results.json), batches of ≥ ${results.settings.minSample * 1e3} ms; ${results.seconds ? `${results.seconds.toFixed(0)} s` : ''}.`);
  out(`Clock: ${results.settings.clock === 'cpu' ? "min(this process's CPU time, wall time) per sample (other processes' load and this process's background threads each lengthen only one of them; native C: its CPU time)" : 'wall clock (performance.now(); native C: CLOCK_MONOTONIC)'}.`);
  out(results.settings.statistic === 'fastest'
    ? "Cells: time(contender) / time(posenc), each contender's fastest round (wall clock: other load only adds time; no quartiles): > 1 means posenc is faster."
    : 'Cells: time(contender) / time(posenc), median of per-round ratios (quartiles): > 1 means posenc is faster.');
  out();

  // ---- RoPE ------------------------------------------------------------------------------------------------
  const rope = ws.filter((w) => w.group === 'rope');
  if (rope.length) {
    const ortThreads = results.ort.map((o) => o.threads);
    out(`### RoPE apply, q and k in place (posenc = SIMD build, public API: rope.apply(q, { k }), pe.tensor inputs; ${isa})`);
    out();
    out('limit: rotation = the hand-written SIMD128 rotation (bench/wasm/rotation.c: unrolled head rows, q and k sharing cos/sin loads, table made once); limit: in-place = an unrolled SIMD128 `x *= s` pass over the same bytes (read + write once), not reachable by a rotation in cache (4 multiplies per 8 floats against 1). "new position" = the same call with a position not seen before (no cached table); "interleaved" = an interleaved rope on the same tensors in the same rounds.');
    out();
    const head = ['workload', 'posenc', 'vs limit: rotation', 'vs limit: in-place', 'vs memcpy', 'new position / cached', 'interleaved / half', 'vs plain JS', 'vs posenc scalar', 'vs native C'];
    for (const t of ortThreads) head.push(`vs ORT com.microsoft (${t}t)`, `vs ORT ONNX-23 (${t}t)`);
    out(`| ${head.join(' | ')} |`);
    out(`|${head.map(() => '---').join('|')}|`);
    for (const w of rope) {
      const row = [w.label.replace(/^RoPE /, ''), timeOf(w, 'api'), cell(ratio(w.results, 'rotation', 'api')), cell(ratio(w.results, 'limit', 'api')),
        cell(ratio(w.results, 'memcpy', 'api')), w.params.size === 'decode' ? cell(ratio(w.results, 'api-new', 'api')) : '—',
        w.params.pairing === 'half' ? cell(ratio(w.results, 'api-other', 'api')) : '—',
        cell(ratio(w.results, 'js', 'api')), cell(ratio(w.results, 'scalar', 'api')), cell(ratio(w.results, 'native', 'api'))];
      for (const t of ortThreads) row.push(cell(ortRatio(results, t, w.id, 'contrib')), cell(ortRatio(results, t, w.id, 'onnx')));
      out(`| ${row.join(' | ')} |`);
    }
    out();
    out(`RoPE, where the time goes (same rounds as above; ${isa}):`);
    out();
    out('| workload | API − raw apply only (q+k) | raw: table + apply vs apply only (×) | raw apply only vs limit: rotation | limit: rotation vs limit: in-place | API with Float32Array copies (× slower) | native apply only vs wasm apply only |');
    out('|---|---|---|---|---|---|---|');
    for (const w of rope) {
      // API − raw is a fixed per-call cost: visible at decode, lost in the noise of millisecond calls
      const over = w.params.size === 'decode' ? fmtUs(difference(w.results, 'api', 'raw-apply')) : '(in the noise)';
      out(`| ${w.label.replace(/^RoPE /, '')} | ${over} | ${cell(ratio(w.results, 'raw', 'raw-apply'))} | ${cell(ratio(w.results, 'rotation', 'raw-apply'))} | ${cell(ratio(w.results, 'limit', 'rotation'))} | ${cell(ratio(w.results, 'api-copy', 'api'))} | ${cell(ratio(w.results, 'native-apply', 'raw-apply'))} |`);
    }
    out();
  }

  // ---- onnxruntime-web ------------------------------------------------------------------------------------
  for (const o of results.ort ?? []) {
    if (!o.workloads?.length) continue;
    out(`### onnxruntime-web ${o.ortVersion ?? ''}, ${o.threads} thread(s), end to end (its own process: posenc measured beside it in the same rounds)`);
    out();
    out('session.run with q, k and position_ids feeds, outputs copied back to JS; posenc = rope.apply(q, { k }) with pe.tensor inputs, and with Float32Arrays copied in and out (what session.run does with its feeds and outputs). Both outputs checked against posenc\'s ("max diff").');
    out();
    out('| workload | posenc (pe.tensor) | posenc (copies) | ORT com.microsoft | ORT ONNX-23 | com.microsoft / posenc | ONNX-23 / posenc | com.microsoft / posenc (copies) | ONNX-23 / posenc (copies) | max diff |');
    out('|---|---|---|---|---|---|---|---|---|---|');
    for (const w of o.workloads) {
      const t = (id) => timeOf(w, id);
      const diff = Object.values(w.check ?? {}).map((d) => (typeof d === 'number' ? d.toExponential(1) : String(d))).join(' / ');
      out(`| ${w.id.replace(/^rope\//, '')} | ${t('api')} | ${t('api-copy')} | ${t('ort-contrib')} | ${t('ort-onnx')} | ${cell(ratio(w.results, 'ort-contrib', 'api'))} | ${cell(ratio(w.results, 'ort-onnx', 'api'))} | ${cell(ratio(w.results, 'ort-contrib', 'api-copy'))} | ${cell(ratio(w.results, 'ort-onnx', 'api-copy'))} | ${diff} |`);
    }
    out();
  }

  if (results.code) {
    out('V8 (TurboFan) code of the innermost loop that rotates (bench/v8-code.mjs; x86-64 instructions; per 8 floats = instructions / (multiplies / 4)):');
    out();
    out('posenc\'s kernels (pe__apply_half_fwd, pe__apply_il_fwd: bench/build/posenc-names.simd.wasm, the same C and flags with a name section) have specialised paths, so several leaf loops; which one runs depends on the shape, and the best of them bounds what the instruction count can explain. rot_* = limit: rotation (bench/wasm/rotation.c).');
    out();
    out('| function | innermost loop: instructions | per 8 floats of one tensor | mulps | add/sub | loads | stores | shuffles | lea | stack refs | branches | leaf loops | best leaf loop, per 8 floats |');
    out('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const [fn, c] of Object.entries(results.code)) {
      out(c ? `| ${fn} | ${c.instructions} | ${c.perEightFloats} | ${c.mul} | ${c.addsub} | ${c.load} | ${c.store} | ${c.shuffle} | ${c.lea} | ${c.stack} | ${c.branch} | ${c.leafLoops ?? ''} | ${c.leafPerEightFloats?.[0] ?? ''} |` : `| ${fn} | no loop with multiplies in this function (the kernel is not inlined into it) | | | | | | | | | | | |`);
    }
    out();
  }

  // ---- cos/sin -----------------------------------------------------------------------------------------------
  const cs = ws.filter((w) => w.group === 'cossin');
  if (cs.length) {
    out(`### cos/sin tables (head_dim 128: 64 frequencies; angles in double; ${isa})`);
    out();
    out('| workload | posenc raw | posenc API | vs posenc scalar | vs plain JS | vs native C | max error vs double | one position vs the decode rotation of q and k |');
    out('|---|---|---|---|---|---|---|---|');
    for (const w of cs) {
      const step = w.id === 'cossin/step' ? `${cell(ratio(w.results, 'raw', 'decode-apply'))} (${timeOf(w, 'raw')} vs ${timeOf(w, 'decode-apply')})` : '';
      out(`| ${w.label} | ${timeOf(w, 'raw')} | ${timeOf(w, 'api')} | ${cell(ratio(w.results, 'scalar', 'raw'))} | ${cell(ratio(w.results, 'js', 'raw'))} | ${cell(ratio(w.results, 'native', 'raw'))} | ${w.check?.api?.toExponential(1) ?? ''} | ${step} |`);
    }
    out();
  }

  // ---- tables ------------------------------------------------------------------------------------------------
  const tb = ws.filter((w) => w.group === 'table');
  if (tb.length) {
    out(`### Sinusoidal and ALiBi tables (posenc = SIMD build, raw exports; API where it exists; ${isa})`);
    out();
    out('| workload | posenc | posenc API | vs limit (write-only fill) | vs posenc scalar | vs plain JS | vs native C |');
    out('|---|---|---|---|---|---|---|');
    for (const w of tb) {
      out(`| ${w.label} | ${timeOf(w, 'raw')} | ${timeOf(w, 'api')} | ${cell(ratio(w.results, 'limit', 'raw'))} | ${cell(ratio(w.results, 'scalar', 'raw'))} | ${cell(ratio(w.results, 'js', 'raw'))} | ${cell(ratio(w.results, 'native', 'raw'))} |`);
    }
    out();
  }

  // ---- attention ---------------------------------------------------------------------------------------------
  const at = ws.filter((w) => w.group === 'attention');
  if (at.length) {
    const peak = peakGflops(results);
    out(`### Attention, bhsd, causal (posenc = fused pe_attention, SIMD build; ${isa})`);
    out();
    out(`Register-only peak of this engine (bench/wasm/limit.c limit_peak: 12 chains of f32x4 multiply + add, no memory): ${peak ? `${peak.toFixed(1)} GFLOP/s` : 'not measured'}.`);
    out();
    out('| workload | posenc fused | GFLOP/s | of the register-only peak | vs unfused | vs posenc scalar | vs plain JS | vs native C (native GFLOP/s) | vs limit (read K, V once) | extra memory fused / unfused | peak wasm memory fused / unfused |');
    out('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const w of at) {
      const gf = (id) => (w.results[id]?.median ? (w.params.flops / w.results[id].median / 1e9).toFixed(1) : 'n/a');
      const mem = w.memory ?? {};
      out(`| ${w.label} | ${timeOf(w, 'raw')} | ${gf('raw')} | ${peak ? `${((100 * gflops(w, 'raw')) / peak).toFixed(0)} %` : 'n/a'} | ${cell(ratio(w.results, 'unfused', 'raw'))} | ${cell(ratio(w.results, 'scalar', 'raw'))} | ${cell(ratio(w.results, 'js', 'raw'))} | ${cell(ratio(w.results, 'native', 'raw'))} (${gf('native')}) | ${w.params.kind === 'decode' ? cell(ratio(w.results, 'limit', 'raw')) : '—'} | ${fmtBytes(w.extraBytes?.raw)} / ${fmtBytes(w.extraBytes?.unfused)} | ${fmtBytes(mem.raw?.bytes)} / ${fmtBytes(mem.unfused?.bytes)} |`);
    }
    out();
    out('GFLOP/s counts 4·head_dim flops per visible (query, key) pair (QKᵀ and PV), so causal work is not double counted.');
    out();
  }

  // ---- sizes -------------------------------------------------------------------------------------------------
  out('### Sizes');
  out();
  out('| file | raw | gzip -9 |');
  out('|---|---|---|');
  for (const [k, v] of Object.entries(results.sizes ?? {})) out(`| ${k} | ${fmtBytes(v.raw)} | ${fmtBytes(v.gzip)} |`);
  out();

  // ---- the bench modules ---------------------------------------------------------------------------------------
  if (results.extra?.length) {
    out('### 16-bit storage, strided views, padded batches, M-RoPE (bench/f16.mjs, strided.mjs, attention-batch.mjs, mrope.mjs)');
    out();
    out('| line | ratio (quartiles) | target | status | how |');
    out('|---|---|---|---|---|');
    for (const x of results.extra) for (const r of x.rows) out(`| ${r.name} | ${rowMeasured(r)} | ${rowBound(r)} | ${rowStatus(r)} | ${r.note ?? ''} |`);
    out();
  }

  // ---- targets -----------------------------------------------------------------------------------------------
  const targets = evaluateTargets(results);
  out('### Targets');
  out();
  out(`Each target over every workload it names (values per workload; met only when all are). ${isa}.`);
  out();
  out('| issue | target | measured | status |');
  out('|---|---|---|---|');
  for (const t of targets) out(`| ${t.issue} | ${t.target} | ${t.measured}${t.note && t.status !== 'met' ? ` — ${t.note}` : ''} | ${t.status} |`);
  out();
  return { markdown: `${lines.join('\n')}\n`, targets };
}
