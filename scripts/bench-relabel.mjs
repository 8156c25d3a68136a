// bench-relabel.mjs — what runs on the main thread while a reader scrolls through the playground right after a
// language switch, in headless Chromium against the built site (after `bash build.sh wasm`):
//   node scripts/bench-relabel.mjs [--runs 2] [--width 1280]
// Every widget is started, the page goes back to the top, the language switches to Chinese, and the page is
// scrolled to the end a screen at a time, as languageDrawn() in tests/browser/lib.js does. Printed, never
// asserted (times depend on the machine):
//   - the main thread's tasks over 50 ms during the switch and during the scroll after it, twice: by wall clock
//     (the Long Tasks API: what a reader on this machine waits) and by the renderer main thread's own CPU time
//     (Chromium's trace, RunTask events' thread duration), which a machine shared with other jobs does not
//     inflate — on the 2-core machine shared by several sessions the wall times are several times the CPU times;
//   - each widget's render() and each slice of its draw() (a draw yields between figures after a switch,
//     base.js yieldIfLong), the slowest first, so a task that is over budget has a name.
import { loadavg } from 'node:os';
import { serveStatic, launchChromium, buildSite, settle, languageDrawn } from '../tests/browser/lib.js';

/**
 * The renderer main thread's top-level tasks from a Chromium trace: [{ wall, cpu, parts }] in ms; parts: the
 * task's largest direct children (event dispatch, timer, style recalculation, layout …) by CPU time.
 */
const PARTS = new Set(['EventDispatch', 'TimerFire', 'FunctionCall', 'UpdateLayoutTree', 'Layout', 'FireAnimationFrame',
  'IntersectionObserverController::computeIntersections', 'FireIdleCallback', 'RunMicrotasks', 'v8.run', 'ParseHTML',
  'PrePaint', 'Paint', 'Layerize', 'HitTest', 'ResizeObserverController::handleObservations', 'GCEvent', 'MajorGC', 'MinorGC']);
function mainThreadTasks(trace) {
  const ev = trace.traceEvents ?? trace;
  const main = ev.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (!main) return [];
  const mine = ev.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.dur > 0).sort((a, b) => a.ts - b.ts);
  const tasks = mine.filter((e) => e.name === 'RunTask');
  return tasks.map((t) => {
    const inside = mine.filter((e) => e !== t && e.ts >= t.ts && e.ts + e.dur <= t.ts + t.dur && PARTS.has(e.name));
    // the outermost of those, and inside a timer, an event or a function call what took its time
    const within = (o, xs) => xs.filter((e) => e !== o && e.ts >= o.ts && e.ts + e.dur <= o.ts + o.dur);
    const outermost = (xs) => xs.filter((e) => !xs.some((p) => p !== e && p.ts <= e.ts && p.ts + p.dur >= e.ts + e.dur && p.dur > e.dur));
    const label = (e) => e.name + (e.args?.data?.type ? ` ${e.args.data.type}` : '') + (e.args?.data?.functionName ? ` ${e.args.data.functionName}` : '');
    const parts = outermost(inside).flatMap((e) => {
      const kids = /^(TimerFire|EventDispatch|FunctionCall|v8.run)/.test(e.name) ? outermost(within(e, inside).filter((k) => !/^(FunctionCall|v8.run)$/.test(k.name))) : [];
      return kids.length ? kids.map((k) => ({ name: `${label(e)} > ${label(k)}`, cpu: (k.tdur ?? k.dur) / 1000 })) : [{ name: label(e), cpu: (e.tdur ?? e.dur) / 1000 }];
    }).sort((a, b) => b.cpu - a.cpu).slice(0, 4);
    return { wall: t.dur / 1000, cpu: (t.tdur ?? t.dur) / 1000, parts };
  });
}

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const RUNS = Number(arg('--runs', 2));
const WIDTH = Number(arg('--width', 1280));

function instrument() {
  window.__long = [];
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push({ t: e.startTime, d: e.duration }); }).observe({ type: 'longtask', buffered: true });
  // each widget class's render(), and each slice of its draw(): from its start or a yieldIfLong() resuming to
  // the next yieldIfLong() or its end (an async draw's parts between awaits of anything else count together)
  window.__spans = [];
  const push = (el, tag, what) => {
    const t = performance.now();
    window.__spans.push({ tag, what, t: el.__t0, d: t - el.__t0 });
  };
  const define = customElements.define.bind(customElements);
  customElements.define = (tag, cls, o) => {
    const proto = cls.prototype;
    if (tag.startsWith('pe-') && !proto.__timed) {
      proto.__timed = true;
      for (const m of ['render', 'draw']) {
        if (!Object.hasOwn(proto, m)) continue;
        const f = proto[m];
        proto[m] = function (...a) {
          this.__t0 = performance.now();
          let r;
          try {
            r = f.apply(this, a);
            return r;
          } finally {
            if (r && typeof r.then === 'function') r.finally(() => push(this, tag, `${m}(), last slice`));
            else push(this, tag, `${m}()`);
          }
        };
      }
      const y = proto.yieldIfLong;
      if (y && !Object.hasOwn(proto, 'yieldIfLong')) {
        proto.yieldIfLong = async function (...a) {
          if (this.relabeling) push(this, tag, 'draw() slice');
          await y.apply(this, a);
          this.__t0 = performance.now();
        };
      }
    }
    return define(tag, cls, o);
  };
}

const site = await buildSite();
const server = await serveStatic(site.dir);
const browser = await launchChromium();
try {
  for (let run = 1; run <= RUNS; run++) {
    const page = await browser.newPage({ viewport: { width: WIDTH, height: 900 } });
    await page.addInitScript(instrument);
    await page.goto(server.url + 'index.html');
    const ids = await page.$$eval('main [id]', (els) => els.filter((e) => e.localName.startsWith('pe-')).map((e) => `#${e.id}`));
    for (const sel of ids) await settle(page, sel, { timeout: 180_000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(1000);
    await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink.user_timing'] });
    let t0 = await page.evaluate(() => performance.now());
    await page.click('pe-lang-toggle button');
    await page.waitForFunction(() => [...document.querySelectorAll('.pe-widget[data-draws]')].every((e) => e.dataset.lang === 'zh' || e.dataset.relabel === 'pending'), null, { timeout: 60_000 });
    await page.waitForTimeout(500);
    const sw = await page.evaluate((t) => window.__long.filter((e) => e.t >= t), t0);
    t0 = await page.evaluate(() => performance.now());
    await languageDrawn(page, 'zh', { timeout: 180_000 });
    await page.waitForTimeout(500);
    const { long, spans } = await page.evaluate((t) => ({ long: window.__long.filter((e) => e.t >= t), spans: window.__spans.filter((e) => e.t >= t) }), t0);
    const cpu = mainThreadTasks(JSON.parse(String(await browser.stopTracing())));
    const worst = (xs) => (xs.length ? Math.max(...xs.map((x) => x.d)).toFixed(0) : '0');
    console.log(`run ${run} (${WIDTH} px, load average ${loadavg()[0].toFixed(1)}): by wall clock, switch ${sw.length} long tasks, worst ${worst(sw)} ms; scrolling after it ${long.length} long tasks, worst ${worst(long)} ms`);
    const over = cpu.filter((x) => x.cpu > 50);
    console.log(`  by main-thread CPU time (switch and scroll together): ${over.length} tasks over 50 ms, ${cpu.filter((x) => x.cpu > 100).length} over 100 ms, worst ${over.length ? Math.max(...over.map((x) => x.cpu)).toFixed(0) : '<50'} ms (its wall time ${over.length ? over.reduce((a, b) => (b.cpu > a.cpu ? b : a)).wall.toFixed(0) : '–'} ms)`);
    for (const x of over.sort((a, b) => b.cpu - a.cpu).slice(0, 6)) {
      console.log(`    ${x.cpu.toFixed(0).padStart(5)} ms CPU (${x.wall.toFixed(0)} ms wall): ${x.parts.map((p) => `${p.name} ${p.cpu.toFixed(0)}`).join(', ')}`);
    }
    console.log('  by wall clock, each widget\'s render() and draw() slices, slowest first:');
    for (const x of spans.sort((a, b) => b.d - a.d).slice(0, 8)) console.log(`    ${x.d.toFixed(0).padStart(5)} ms  ${x.tag} ${x.what}`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
  await site.remove();
}
