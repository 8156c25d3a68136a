// report.mjs — turns bench results (run.mjs's results.json object) into markdown tables and a list of targets
// with their status. No Node-only API.
//
// Reading the tables: a cell "a× (lo–hi)" is time(contender) / time(posenc), formed round by round and
// summarised by its median and quartiles: above 1 posenc is faster, below 1 slower. Against the limit it is
// the fraction of the limit's speed posenc reaches.

import { ratio, difference, formatRatio, formatTime } from '../web/widgets/lib/measure.js';

const MiB = 2 ** 20;
const fmtBytes = (b) => (b == null ? 'n/a' : b >= MiB ? `${(b / MiB).toFixed(b >= 10 * MiB ? 0 : 1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const fmtUs = (d) => (d ? `${(d.median * 1e6).toFixed(2)} µs (${(d.lo * 1e6).toFixed(2)}–${(d.hi * 1e6).toFixed(2)})` : 'n/a');
const cell = (r) => formatRatio(r);
const timeOf = (w, id) => {
  const r = w.results?.[id];
  return r && !r.error && r.median != null ? formatTime(r.median) : 'n/a';
};

function ortRatio(results, threads, wid, op) {
  const run = results.ort.find((o) => o.threads === threads);
  const w = run?.workloads.find((x) => x.id === wid);
  if (!w) return null;
  return ratio(w.results, `ort-${op}`, 'api');
}

export function report(results) {
  const lines = [];
  const out = (s = '') => lines.push(s);
  const ws = results.workloads.filter((w) => w.results);
  const byId = new Map(ws.map((w) => [w.id, w]));
  const m = results.machine;

  out('## posenc benchmark');
  out();
  out(`Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; ${m.os}; Node ${m.node} (V8 ${m.v8}); ${m.emcc ?? 'emcc ?'}; ${m.gcc ?? 'gcc ?'}.`);
  if (m.nativeIsa) out(`Native C contender: ${m.nativeIsa} via simd.h (gcc -O3 -march=native), SIMD against wasm SIMD128.`);
  if (m.loadAverage) {
    out(`Load average (1 min) at start / end: ${m.loadAverage.start[0].toFixed(2)} / ${m.loadAverage.end[0].toFixed(2)}.`);
  }
  if (m.pageFaultSeconds) {
    out(`First touch of a fresh 4 KiB page: ${(m.pageFaultSeconds * 1e6).toFixed(1)} µs${m.mallocTuning ? '; malloc set to reuse freed memory instead of fresh pages (see docs/performance.md)' : '; malloc as is'}.`);
  }
  out(`Command: \`${results.command}\` — ${results.settings.rounds} interleaved rounds (large RoPE and attention prefill: fewer, see results.json), batches of ≥ ${results.settings.minSample * 1e3} ms; ${results.seconds ? `${results.seconds.toFixed(0)} s` : ''}.`);
  out('Cells: time(contender) / time(posenc), median of per-round ratios (quartiles): > 1 means posenc is faster.');
  out();

  // ---- RoPE ------------------------------------------------------------------------------------------------
  const rope = ws.filter((w) => w.group === 'rope');
  if (rope.length) {
    const ortThreads = results.ort.map((o) => o.threads);
    out('### RoPE apply, q and k in place (posenc = SIMD build through the public API, pe.tensor inputs)');
    out();
    const head = ['workload', 'posenc', 'vs limit (in-place)', 'vs memcpy', 'vs plain JS', 'vs posenc scalar', 'vs native C'];
    for (const t of ortThreads) head.push(`vs ORT com.microsoft (${t}t)`, `vs ORT ONNX-23 (${t}t)`);
    out(`| ${head.join(' | ')} |`);
    out(`|${head.map(() => '---').join('|')}|`);
    for (const w of rope) {
      const row = [w.label.replace(/^RoPE /, ''), timeOf(w, 'api'), cell(ratio(w.results, 'limit', 'api')), cell(ratio(w.results, 'memcpy', 'api')),
        cell(ratio(w.results, 'js', 'api')), cell(ratio(w.results, 'scalar', 'api')), cell(ratio(w.results, 'native', 'api'))];
      for (const t of ortThreads) row.push(cell(ortRatio(results, t, w.id, 'contrib')), cell(ortRatio(results, t, w.id, 'onnx')));
      out(`| ${row.join(' | ')} |`);
    }
    out();
    out('RoPE, where the time goes (same rounds as above):');
    out();
    out('| workload | API − raw exports, q+k | API with Float32Array copies (× slower) | raw: table + apply vs apply only (×) | one table for q and k vs two (×) | raw apply only vs limit | native apply only vs wasm apply only |');
    out('|---|---|---|---|---|---|---|');
    for (const w of rope) {
      // API − raw is a fixed per-call cost: visible at decode, lost in the noise of millisecond calls
      const over = w.params.size === 'decode' ? fmtUs(difference(w.results, 'api', 'raw')) : '(in the noise)';
      out(`| ${w.label.replace(/^RoPE /, '')} | ${over} | ${cell(ratio(w.results, 'api-copy', 'api'))} | ${cell(ratio(w.results, 'raw', 'raw-apply'))} | ${cell(ratio(w.results, 'raw', 'raw-table1'))} | ${cell(ratio(w.results, 'limit', 'raw-apply'))} | ${cell(ratio(w.results, 'native-apply', 'raw-apply'))} |`);
    }
    out();
  }

  // ---- cos/sin -----------------------------------------------------------------------------------------------
  const cs = ws.filter((w) => w.group === 'cossin');
  if (cs.length) {
    out('### cos/sin tables (head_dim 128: 64 frequencies; angles in double)');
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
    out('### Sinusoidal and ALiBi tables (posenc = SIMD build, raw exports; API where it exists)');
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
    out('### Attention, bhsd, causal (posenc = fused pe_attention, SIMD build)');
    out();
    out('| workload | posenc fused | GFLOP/s | vs unfused | vs posenc scalar | vs plain JS | vs native C (native GFLOP/s) | vs limit (read K, V once) | extra memory fused / unfused | peak wasm memory fused / unfused |');
    out('|---|---|---|---|---|---|---|---|---|---|');
    for (const w of at) {
      const gf = (id) => (w.results[id]?.median ? (w.params.flops / w.results[id].median / 1e9).toFixed(1) : 'n/a');
      const mem = w.memory ?? {};
      out(`| ${w.label} | ${timeOf(w, 'raw')} | ${gf('raw')} | ${cell(ratio(w.results, 'unfused', 'raw'))} | ${cell(ratio(w.results, 'scalar', 'raw'))} | ${cell(ratio(w.results, 'js', 'raw'))} | ${cell(ratio(w.results, 'native', 'raw'))} (${gf('native')}) | ${w.params.kind === 'decode' ? cell(ratio(w.results, 'limit', 'raw')) : '—'} | ${fmtBytes(w.extraBytes?.raw)} / ${fmtBytes(w.extraBytes?.unfused)} | ${fmtBytes(mem.raw?.bytes)} / ${fmtBytes(mem.unfused?.bytes)} |`);
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

  // ---- targets -----------------------------------------------------------------------------------------------
  const targets = evaluateTargets(results, byId);
  out('### Targets');
  out();
  out('| target | measured (worst case) | status |');
  out('|---|---|---|');
  for (const t of targets) out(`| ${t.target} | ${t.measured} | ${t.status} |`);
  out();
  return { markdown: `${lines.join('\n')}\n`, targets };
}

/** Each target: the worst case across the workloads it covers. */
function evaluateTargets(results, byId) {
  const T = [];
  const variants = (size) => [...byId.values()].filter((w) => w.group === 'rope' && w.params.size === size);
  const worst = (list, f, dir) => {
    // dir 'min': the smallest value is the worst; 'max': the largest
    let best = null;
    for (const w of list) {
      const v = f(w);
      if (!v) continue;
      if (!best || (dir === 'min' ? v.median < best.v.median : v.median > best.v.median)) best = { w, v };
    }
    return best;
  };
  const short = (w) => `${w.params.pairing}/${w.params.layout}`;
  const add = (target, list, f, dir, bound, fmt = (v) => `${v.median.toFixed(2)}×`) => {
    const r = worst(list, f, dir);
    if (!r) {
      T.push({ target, measured: 'not measured', status: 'n/a' });
      return;
    }
    const ok = dir === 'min' ? r.v.median >= bound : r.v.median <= bound;
    const by = dir === 'min' ? r.v.median / bound : bound / r.v.median;
    T.push({
      target,
      measured: `${fmt(r.v)} (${r.w.group === 'rope' ? short(r.w) : r.w.label})`,
      status: ok ? 'met' : `missed (${(by * 100).toFixed(0)}% of target)`,
      value: r.v.median,
      bound,
    });
  };
  const ortWorst = (size, threads) => (w) => {
    const a = ortRatio(results, threads, w.id, 'contrib');
    const b = ortRatio(results, threads, w.id, 'onnx');
    if (!a) return b;
    if (!b) return a;
    return a.median < b.median ? a : b;
  };
  for (const [size, lim, js, ort, nat] of [
    ['prefill', 0.9, 10, 15, 0.6],
    ['large', 0.9, null, 10, 0.7],
    ['decode', null, 7, 30, null],
  ]) {
    const list = variants(size);
    if (lim) add(`RoPE ${size}: ≥ ${lim}× the in-place limit`, list, (w) => ratio(w.results, 'limit', 'api'), 'min', lim);
    if (js) add(`RoPE ${size}: ≥ ${js}× plain JS`, list, (w) => ratio(w.results, 'js', 'api'), 'min', js);
    if (ort) add(`RoPE ${size}: ≥ ${ort}× onnxruntime-web end to end (1 thread)`, list, ortWorst(size, 1), 'min', ort);
    if (nat) add(`RoPE ${size}: ≥ ${nat}× native`, list, (w) => ratio(w.results, 'native', 'api'), 'min', nat);
  }
  add('RoPE decode: public API with pe.tensor within 0.5 µs of the raw kernel call (q and k)', variants('decode'),
    (w) => difference(w.results, 'api', 'raw'), 'max', 0.5e-6, (v) => `${(v.median * 1e6).toFixed(2)} µs`);
  const step = byId.get('cossin/step');
  add('One new decode position\'s cos/sin ≤ the decode apply (q and k)', step ? [step] : [],
    (w) => ratio(w.results, 'raw', 'decode-apply'), 'max', 1, (v) => `${v.median.toFixed(2)}× the apply`);
  const attn = [...byId.values()].filter((w) => w.group === 'attention');
  add('Attention: fused faster than unfused', attn, (w) => ratio(w.results, 'unfused', 'raw'), 'min', 1);
  add('Attention: SIMD ≥ 3× scalar', attn, (w) => ratio(w.results, 'scalar', 'raw'), 'min', 3);
  add('Attention: ≥ 0.4× native GFLOP/s', attn, (w) => ratio(w.results, 'native', 'raw'), 'min', 0.4);
  // memory: the fused kernel's extra memory has no (q_len x k_len) term
  {
    const rows = attn.filter((w) => w.extraBytes);
    if (rows.length) {
      let ok = true;
      const parts = [];
      for (const w of rows) {
        const p = w.params;
        const linear = 4 * ((p.Sq + p.Sk) * p.H * p.D * p.B + (p.Sq + p.Sk) * p.D);
        if (!(w.extraBytes.raw <= linear)) ok = false;
        parts.push(`${w.id.replace('attention/', '')}: ${fmtBytes(w.extraBytes.raw)} vs ${fmtBytes(w.extraBytes.unfused)}`);
      }
      T.push({ target: 'Attention: memory O(seq) without weights (extra memory, fused vs unfused)', measured: parts.join('; '), status: ok ? 'met' : 'missed' });
    }
  }
  const s = results.sizes?.['dist/posenc.simd.wasm'];
  const j = results.sizes?.['web/src/*.js (wrapper, without the inlined wasm)'];
  T.push({
    target: 'Sizes of posenc.simd.wasm and the JS wrapper, raw and gzip',
    measured: s && j ? `wasm ${fmtBytes(s.raw)} (${fmtBytes(s.gzip)} gz), JS ${fmtBytes(j.raw)} (${fmtBytes(j.gzip)} gz)` : 'n/a',
    status: 'reported',
  });
  return T;
}
