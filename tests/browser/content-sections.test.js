// The playground's sections 4.1 "Why rotation beats addition", 6.1 "Multimodal and 2D RoPE" and 6.2 "Per-layer
// schedules" (issues 13 and 15), on the built site in headless Chromium: each renders at 1280 and 390 px in
// English and Chinese with its headings in the table of contents, and each interactive answers a control with
// the numbers an independent computation gives (formulas written out here in float64: the sinusoidal table,
// RoPE's relative form, Hugging Face's get_rope_index for one image, the M-RoPE and 2D pair rules, the Gemma 3 /
// Llama 4 layer patterns and Llama 4's query temperature). Screenshots: test-results/content/*.png.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settle, visibleTexts, isEnglish, drawing } from './lib.js';
import { usePlayground } from './playground-page.js';
import { gaussian } from '../../web/widgets/lib/random.js';

const site = usePlayground({ shots: 'test-results/content' });
const open = (path, o) => site.open(path, o);
const SECTIONS = [
  { id: 'rotation', widgets: ['#rotadd-w'] },
  { id: 'multimodal', widgets: ['#mrope-w', '#rope2d-w'] },
  { id: 'layers', widgets: ['#layers-w'] },
];

/** Waits for the widget's next drawing after `act` (data-draws grows). */
async function redraw(page, sel, act) {
  const n = await page.$eval(sel, (e) => Number(e.dataset.draws ?? 0));
  await act();
  await page.waitForFunction(([s, k]) => Number(document.querySelector(s).dataset.draws) > k && !document.querySelector(s).dataset.busy, [sel, n]);
}

for (const width of [1280, 390]) {
  for (const lang of ['en', 'zh']) {
    test(`sections 4.1, 6.1, 6.2 at ${width} px in ${lang}: drawn, in the table of contents, nothing sideways, no errors`, async () => {
      const { page, errors, close } = await open(`index.html?lang=${lang}`, { width });
      try {
        for (const { id, widgets } of SECTIONS) {
          for (const w of widgets) {
            const st = await settle(page, w);
            assert.equal(st.state, 'ready', `${w}: ${st.error}`);
          }
          const toc = await page.$eval(`nav.toc a[href="#${id}"]`, (a) => ({ text: a.textContent, sub: a.closest('li').classList.contains('sub'), num: getComputedStyle(a, '::before').content }));
          const heading = await page.$eval(`#${id} h2`, (h) => h.textContent);
          assert.ok(toc.text.length > 1 && toc.sub, `#${id} is a sub-section in the table of contents (${JSON.stringify(toc)})`);
          if (lang === 'zh') {
            assert.match(toc.text, /[\u4e00-\u9fff]/, `TOC entry of #${id} in Chinese: ${toc.text}`);
            assert.match(heading, /[\u4e00-\u9fff]/, `heading of #${id} in Chinese: ${heading}`);
            const english = (await visibleTexts(page, `#${id}`)).filter(isEnglish);
            assert.deepEqual(english, [], `English left in #${id}`);
          }
          // nothing pushes the page sideways
          const over = await page.evaluate((s) => [...document.querySelectorAll(`#${s} *`)].filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('.code-pair pre, .pe-scroll, .pe-math, .katex')).map((e) => e.className || e.localName).slice(0, 5), id);
          assert.deepEqual(over, [], `#${id} at ${width} px: elements past the right edge`);
        }
        // screenshots, each widget on its own, without the sticky table of contents over them
        await page.addStyleTag({ content: 'nav.toc { position: static !important; }' });
        for (const { id, widgets } of SECTIONS) {
          for (const w of widgets) await page.locator(w).screenshot({ path: site.shot(`${w.slice(1)}-${width}-${lang}.png`) });
          await page.locator(`#${id} .code-pair`).screenshot({ path: site.shot(`${id}-code-${width}-${lang}.png`) });
        }
        // numbered 4.1, 6.1, 6.2 (CSS counters, li.sub): each follows its main section in the table of contents
        const toc = await page.$$eval('nav.toc li', (lis) => lis.map((li) => `${li.classList.contains('sub') ? '.' : ''}${li.querySelector('a').getAttribute('href')}`));
        assert.deepEqual(toc.slice(3, 10), ['#rope', '.#rotation', '#alibi', '#scaling', '.#multimodal', '.#layers', '#lab']);
        assert.deepEqual(await page.$$eval('#rotation h2 .num, #multimodal h2 .num, #layers h2 .num', (ns) => ns.map((n) => n.textContent)), ['4.1', '6.1', '6.2']);
        assert.deepEqual(errors, []);
      } finally {
        await close();
      }
    });
  }
}

// ── Why rotation beats addition ─────────────────────────────────────────────────────────────────────────────

/** The four added-position terms and RoPE's q^T R((n−m)θ)k, in float64 from the formulas (half pairing). */
function reference(d, m, n, { identity = false, seed = 1 } = {}) {
  const x = gaussian(d, seed), x2 = gaussian(d, seed + 1);
  const W = (s) => (identity ? Float64Array.from({ length: d * d }, (_, i) => (i % (d + 1) === 0 ? 1 : 0)) : Float64Array.from(gaussian(d * d, s), (v) => Math.fround(v / Math.sqrt(d))));
  const Wq = W(seed + 2), Wk = W(seed + 3);
  const mv = (M, v) => Array.from({ length: d }, (_, r) => v.reduce((s, vc, c) => s + M[r * d + c] * vc, 0));
  const dot = (a, b) => a.reduce((s, v, i) => s + v * b[i], 0);
  // the paper's table: column 2i is sin(p / 10000^(2i/d)), 2i + 1 its cos
  const sinus = (p) => Array.from({ length: d }, (_, c) => { const a = p / 10000 ** ((2 * Math.floor(c / 2)) / d); return c % 2 ? Math.cos(a) : Math.sin(a); });
  const q = mv(Wq, x), k = mv(Wk, x2), pq = mv(Wq, sinus(m)), pk = mv(Wk, sinus(n));
  const terms = { cc: dot(q, k), cp: dot(q, pk), pc: dot(pq, k), pp: dot(pq, pk) };
  terms.add = terms.cc + terms.cp + terms.pc + terms.pp;
  // R(φ) = [[cos, −sin], [sin, cos]] on pairs (i, i + d/2): qᵀR(φ)k = cos φ (q₁k₁ + q₂k₂) + sin φ (q₂k₁ − q₁k₂), φ = (n − m)θᵢ
  let rope = 0;
  for (let i = 0; i < d / 2; i++) {
    const phi = (n - m) * 10000 ** ((-2 * i) / d);
    const [q1, q2, k1, k2] = [q[i], q[i + d / 2], k[i], k[i + d / 2]];
    rope += Math.cos(phi) * (q1 * k1 + q2 * k2) + Math.sin(phi) * (q2 * k1 - q1 * k2);
  }
  terms.rope = rope;
  return terms;
}

const readTerms = (page) => page.$$eval('#rotadd-w tr[data-term]', (trs) => Object.fromEntries(trs.map((r) => [r.dataset.term, { v: Number(r.dataset.value), span: Number(r.dataset.span) }])));

test('rotation vs addition: the four terms and the RoPE score match the formulas; moving m moves the cross terms, not RoPE', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    await settle(page, '#rotadd-w');
    const sel = '#rotadd-w';
    const check = async (identity) => {
      const { m, n } = await page.$eval(sel, (e) => ({ m: Number(e.dataset.m), n: Number(e.dataset.n) }));
      const got = await readTerms(page);
      const want = reference(16, m, n, { identity });
      // the widget's table is float32 (pe.sinusoidal) and its products float64: 1e-4 covers float32 rounding of O(10) sums
      for (const k of Object.keys(want)) assert.ok(Math.abs(got[k].v - want[k]) < 1e-4, `${k} at m=${m}, n=${n}: ${got[k].v} vs ${want[k]}`);
      return { m, n, got };
    };
    const a = await check(false);
    assert.equal(a.n - a.m, -4);
    // RoPE stays flat over every m of the chart (float32 rounding) while the added score moves by units
    assert.ok(a.got.rope.span < 1e-4, `RoPE span ${a.got.rope.span}`);
    assert.ok(a.got.cp.span > 0.5 && a.got.pc.span > 0.5 && a.got.add.span > 1, JSON.stringify(a.got));
    assert.equal(a.got.cc.span, 0);
    // slide the query: the cross terms change, the RoPE score does not
    await redraw(page, sel, async () => { await page.focus(`${sel} input[data-key="m"]`); await page.keyboard.press('End'); });
    const b = await check(false);
    assert.ok(b.m > a.m + 100);
    assert.ok(Math.abs(b.got.cp.v - a.got.cp.v) > 1e-3 || Math.abs(b.got.pc.v - a.got.pc.v) > 1e-3);
    assert.ok(Math.abs(b.got.rope.v - a.got.rope.v) < 1e-4);
    // without projections the position·position term is Σ cos((n − m)ωᵢ): relative; the cross terms are not
    await redraw(page, sel, () => page.check(`${sel} input[data-key="identity"]`));
    const c = await check(true);
    assert.ok(c.got.pp.span < 1e-4, `pp span with W = I: ${c.got.pp.span}`);
    let sumCos = 0;
    for (let i = 0; i < 8; i++) sumCos += Math.cos((c.n - c.m) / 10000 ** ((2 * i) / 16));
    assert.ok(Math.abs(c.got.pp.v - sumCos) < 1e-4, `${c.got.pp.v} vs Σ cos = ${sumCos}`);
    assert.ok(c.got.cp.span > 0.5, `cross term still moves with W = I (${c.got.cp.span})`);
    // the formula says R((n − m)θ), never R((m − n)θ)
    const texts = await page.$$eval(`${sel} .pe-math[data-tex]`, (as) => as.map((x) => x.dataset.tex).join(' '));
    assert.match(texts, /R\\big\(\(n-m\)\\theta\\big\)/);
    assert.doesNotMatch(texts, /\(m-n\)\\theta/);
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

// ── Multimodal and 2D RoPE ──────────────────────────────────────────────────────────────────────────────────

/**
 * get_rope_index for 3 words, vision start, T × R × C merged patches, vision end, 3 words (no padding): the vision
 * tokens start at 4 on every axis and add (t · step, row, column), step 1 (Qwen2-VL) or second_per_grid_t ·
 * tokens_per_second (Qwen2.5-VL); text resumes at 1 + the largest position used.
 */
function thwReference(R, C, T = 1, step = 1) {
  const out = [];
  for (let i = 0; i < 4; i++) out.push([i, i, i]);
  for (let f = 0; f < T; f++) for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) out.push([4 + f * step, 4 + r, 4 + c]);
  const next = 4 + Math.max((T - 1) * step, R - 1, C - 1) + 1;
  for (let i = 0; i < 4; i++) out.push([next + i, next + i, next + i]);
  return out;
}
/** The pair → axis rules (chunked: consecutive blocks; interleaved: j mod 3 with the section bounds). */
const axisOf = (j, section, interleaved) => {
  if (!interleaved) return j < section[0] ? 0 : j < section[0] + section[1] ? 1 : 2;
  if (j % 3 === 1 && j < 3 * section[1]) return 1;
  if (j % 3 === 2 && j < 3 * section[2]) return 2;
  return 0;
};

test('M-RoPE: every token’s (t, h, w) is get_rope_index’s; each pair reads its axis; cos per pair matches the formula', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    const sel = '#mrope-w';
    await settle(page, sel);
    const tokens = async () => page.$$eval(`${sel} .pe-mr-tok`, (bs) => bs.map((b) => b.dataset.thw.split(',').map(Number)));
    assert.deepEqual(await tokens(), thwReference(3, 4));
    await redraw(page, sel, async () => { await page.focus(`${sel} input[data-key="cols"]`); await page.keyboard.press('End'); });
    assert.deepEqual(await tokens(), thwReference(3, 6));
    // a two-frame video: t counts temporal patches in Qwen2-VL, time (1 s per patch · 2 tokens_per_second) in Qwen2.5-VL
    await redraw(page, sel, () => page.selectOption(`${sel} select[data-key="media"]`, { index: 1 }));
    assert.deepEqual(await tokens(), thwReference(3, 6, 2, 1));
    await redraw(page, sel, () => page.selectOption(`${sel} select[data-key="media"]`, { index: 2 }));
    assert.deepEqual(await tokens(), thwReference(3, 6, 2, 2));
    await redraw(page, sel, () => page.selectOption(`${sel} select[data-key="media"]`, { index: 0 }));
    // select the image's last patch (row 2, column 5)
    const idx = 4 + 3 * 6 - 1;
    await redraw(page, sel, () => page.click(`${sel} .pe-mr-tok[data-i="${idx}"]`));
    const thw = await page.$eval(sel, (e) => e.dataset.selected.split(',').map(Number));
    assert.deepEqual(thw, [4, 6, 9]);
    const layouts = [['chunked', [16, 24, 24], false, 1e6], ['interleaved', [24, 20, 20], true, 5e6]];
    for (const [id, section, inter, base] of layouts) {
      const cells = await page.$$eval(`${sel} figure[data-layout="${id}"] rect[data-axis]`, (rs) => rs.map((r) => r.dataset.axis));
      const cos = await page.$$eval(`${sel} figure[data-layout="${id}"] rect[data-cos]`, (rs) => rs.map((r) => Number(r.dataset.cos)));
      assert.equal(cells.length, 64);
      for (let j = 0; j < 64; j++) {
        const a = axisOf(j, section, inter);
        assert.equal(cells[j], 'thw'[a], `${id} pair ${j}`);
        // float32 cos of an angle below 10 rad: 2e-6
        const want = Math.cos(thw[a] * base ** (-(2 * j) / 128));
        assert.ok(Math.abs(cos[j] - want) < 2e-6, `${id} pair ${j}: ${cos[j]} vs ${want}`);
      }
      const counts = await page.$$eval(`${sel} tr[data-layout="${id}"]`, (trs) => trs.map((r) => Number(r.dataset.pairs)));
      assert.deepEqual(counts, [0, 1, 2].map((a) => Array.from({ length: 64 }, (_, j) => axisOf(j, section, inter)).filter((x) => x === a).length));
    }
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('2D RoPE: Pixtral and Qwen2-VL vision give each patch the angle of its row or column and their own token order', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    const sel = '#rope2d-w';
    await settle(page, sel);
    const read = (kind) => page.$$eval(`${sel} figure[data-kind="${kind}"] .pe-r2-cell`, (cs) => cs.map((c) => ({ t: Number(c.dataset.token), r: Number(c.dataset.row), c: Number(c.dataset.col), cos: Number(c.dataset.cos) })));
    const d = 64, H = 4, W = 6;
    const verify = async (j) => {
      for (const kind of ['pixtral', 'qwen2-vl']) {
        const cells = await read(kind);
        assert.equal(cells.length, H * W);
        for (const x of cells) {
          // Pixtral: f_i = 10000^(−2i/d), rows on f[2j], columns on f[2(j − d/4) + 1], raster order;
          // Qwen2-VL: g_j = 10000^(−2j/(d/2)), rows on g[j], columns on g[j − d/4], 2 × 2 windows in raster order
          const row = j < d / 4;
          const freq = kind === 'pixtral' ? 10000 ** (-(2 * (row ? 2 * j : 2 * (j - d / 4) + 1)) / d) : 10000 ** (-(2 * (row ? j : j - d / 4)) / (d / 2));
          const want = Math.cos((row ? x.r : x.c) * freq);
          assert.ok(Math.abs(x.cos - want) < 2e-6, `${kind} pair ${j} patch (${x.r}, ${x.c}): ${x.cos} vs ${want}`);
          const order = kind === 'pixtral' ? x.r * W + x.c : 4 * (Math.floor(x.r / 2) * (W / 2) + Math.floor(x.c / 2)) + 2 * (x.r % 2) + (x.c % 2);
          assert.equal(x.t, order, `${kind} token order at (${x.r}, ${x.c})`);
        }
      }
    };
    await verify(16);
    assert.equal(await page.$eval(`${sel} figure[data-kind="pixtral"]`, (f) => f.dataset.axis), 'col');
    await redraw(page, sel, async () => { await page.focus(`${sel} input[data-key="pair"]`); await page.keyboard.press('Home'); await page.keyboard.press('ArrowRight'); await page.keyboard.press('ArrowRight'); });
    await verify(2);
    assert.equal(await page.$eval(`${sel} figure[data-kind="qwen2-vl"]`, (f) => f.dataset.axis), 'row');
    // click a patch: q̃ there against k̃ at every patch, over all pairs; q = k = the widget's seeded Gaussian (seed 7)
    const q = gaussian(d, 7), k = q;
    const angle = (kind, j, r, c) => {
      const row = j < d / 4;
      const freq = kind === 'pixtral' ? 10000 ** (-(2 * (row ? 2 * j : 2 * (j - d / 4) + 1)) / d) : 10000 ** (-(2 * (row ? j : j - d / 4)) / (d / 2));
      return (row ? r : c) * freq;
    };
    // half-split pairs (j, j + d/2): q̃ᵀk̃ = Σ cos φ (q₁k₁ + q₂k₂) + sin φ (q₂k₁ − q₁k₂), φ = φ_k − φ_q
    const score = (kind, a, b) => {
      let s = 0;
      for (let j = 0; j < d / 2; j++) {
        const phi = angle(kind, j, b.r, b.c) - angle(kind, j, a.r, a.c);
        s += Math.cos(phi) * (q[j] * k[j] + q[j + d / 2] * k[j + d / 2]) + Math.sin(phi) * (q[j + d / 2] * k[j] - q[j] * k[j + d / 2]);
      }
      return s;
    };
    for (const at of [{ r: 2, c: 3 }, { r: 0, c: 1 }]) {
      await redraw(page, sel, () => page.click(`${sel} figure[data-kind="pixtral"] .pe-r2-cell[data-row="${at.r}"][data-col="${at.c}"]`));
      for (const kind of ['pixtral', 'qwen2-vl']) {
        const cells = await page.$$eval(`${sel} figure[data-kind="${kind}"] .pe-r2-cell`, (cs) => cs.map((c) => ({ r: Number(c.dataset.row), c: Number(c.dataset.col), s: Number(c.dataset.score) })));
        // float32 rotation and a 64-term float32 dot product of O(1) values: 1e-4
        for (const x of cells) assert.ok(Math.abs(x.s - score(kind, at, x)) < 1e-4, `${kind} q at (${at.r}, ${at.c}), k at (${x.r}, ${x.c}): ${x.s} vs ${score(kind, at, x)}`);
        const top = cells.reduce((a, b) => (b.s > a.s ? b : a));
        assert.deepEqual([top.r, top.c], [at.r, at.c], `${kind}: the score peaks at the selected patch`);
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

// ── Per-layer schedules ─────────────────────────────────────────────────────────────────────────────────────

test('per-layer schedules: Gemma 3’s 5 local : 1 global bases and Llama 4’s NoPE layers and query temperature, from fromHFConfig', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    const sel = '#layers-w';
    await settle(page, sel);
    const strip = () => page.$$eval(`${sel} .pe-ls-cell`, (cs) => cs.map((c) => ({ kind: c.dataset.kind, base: c.dataset.base })));
    // Gemma 3 4B (34 layers): layer i is global (base 1e6) when (i + 1) % 6 == 0, else local with base 1e4
    const g = await strip();
    assert.equal(g.length, 34);
    g.forEach((c, i) => assert.deepEqual(c, (i + 1) % 6 === 0 ? { kind: 'global', base: '1000000' } : { kind: 'local', base: '10000' }, `gemma layer ${i}`));
    const rows = () => page.$$eval(`${sel} tr[data-scheme]`, (trs) => Object.fromEntries(trs.map((r) => [r.dataset.scheme, { layers: Number(r.dataset.layers), keys: Number(r.dataset.keys), scale: Number(r.dataset.scale) }])));
    const p0 = await page.$eval(sel, (e) => Number(e.dataset.position));
    let r = await rows();
    assert.deepEqual(r.local, { layers: 29, keys: Math.min(p0 + 1, 1024), scale: 1 });
    assert.deepEqual(r.global, { layers: 5, keys: p0 + 1, scale: 1 });
    // Llama 4 Scout (48 layers): every 4th layer NoPE with the query scale; the rest chunked RoPE, base 5e5
    await redraw(page, sel, () => page.selectOption(`${sel} select[data-key="preset"]`, { label: 'Llama 4 Scout' }));
    const l = await strip();
    assert.equal(l.length, 48);
    l.forEach((c, i) => assert.deepEqual(c, (i + 1) % 4 === 0 ? { kind: 'nope', base: '' } : { kind: 'chunked', base: '500000' }, `llama layer ${i}`));
    await redraw(page, sel, async () => { await page.focus(`${sel} input[data-key="position"]`); await page.keyboard.press('End'); });
    const p = await page.$eval(sel, (e) => Number(e.dataset.position));
    assert.ok(p > 1e6, `position ${p}`);
    r = await rows();
    // transformers' Llama4TextAttention: log1p(floor((pos + 1) / floor_scale)) * attn_scale + 1, floor_scale 8192, attn_scale 0.1
    const want = Math.log1p(Math.floor((p + 1) / 8192)) * 0.1 + 1;
    assert.ok(Math.abs(r.nope.scale - want) < 1e-12, `${r.nope.scale} vs ${want}`);
    assert.equal(r.nope.keys, p + 1);
    assert.equal(r.chunked.keys, (p % 8192) + 1);
    assert.equal(r.chunked.scale, 1);
    // the section links to the config box, where a pasted config.json shows its own schedule
    assert.equal(await page.$eval('#layers .cites a[href="#scaling"]', (a) => a.getAttribute('href')), '#scaling');
    assert.ok(await page.$('#scaling-w'));
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('every control of the four new widgets changes what they show', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    // (pair 0, the fastest row pair, has θ = 1 at every head dim: headDim goes first, while pair 16 is a column pair)
    const controlsOf = { '#rotadd-w': ['m', 'delta', 'dim', 'identity'], '#mrope-w': ['rows', 'cols', 'media'], '#rope2d-w': ['headDim', 'gridH', 'gridW', 'pair', 'view'], '#layers-w': ['position', 'preset'] };
    for (const [sel, keys] of Object.entries(controlsOf)) {
      await settle(page, sel);
      assert.deepEqual((await page.$$eval(`${sel} .pe-controls [data-key]`, (els) => els.map((e) => e.dataset.key))).sort(), [...keys].sort(), `${sel}'s controls`);
      for (const key of keys) {
        const before = await drawing(page, sel);
        const c = page.locator(`${sel} [data-key="${key}"]`);
        const info = await c.evaluate((el) => ({ tag: el.localName, type: el.type, index: el.selectedIndex, options: el.options?.length }));
        await redraw(page, sel, async () => {
          if (info.tag === 'select') await c.selectOption({ index: (info.index + 1) % info.options });
          else if (info.type === 'checkbox') { await c.focus(); await page.keyboard.press('Space'); }
          else { await c.focus(); await page.keyboard.press('Home'); }
        });
        assert.notEqual((await drawing(page, sel)).signature, before.signature, `${sel}: ${key} changes the drawing`);
      }
    }
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

for (const width of [1280, 390]) {
  test(`index.html#multimodal at ${width} px lands on section 6.1 and stays there while its widgets start`, async () => {
    const { page, errors, close } = await open('index.html#multimodal', { width, ready: false });
    try {
      // the first widget is on screen; the second starts only if it is near (lazy), at 390 px it is not
      await page.waitForFunction(() => document.querySelector('#mrope-w')?.dataset.state === 'ready', null, { timeout: 60_000 });
      await page.waitForTimeout(500);
      const { top, margin } = await page.$eval('#multimodal', (s) => ({ top: s.getBoundingClientRect().top, margin: parseFloat(getComputedStyle(s).scrollMarginTop) || 0 }));
      assert.ok(Math.abs(top - margin) <= 4, `section 6.1 is at ${top.toFixed(0)} px (want ${margin})`);
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });
}
