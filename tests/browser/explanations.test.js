// What the playground tells a learner is right (issue 15's defects 3 onwards), on the built playground page in
// headless Chromium: formulas, captions, labels and axes are checked against the numbers the widgets draw.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { repoRoot, serveStatic, launchChromium, collectErrors, buildSite, settle, languageDrawn } from './lib.js';

const PREFIX = '/some/sub/path/';
const SHOTS = join(repoRoot, 'test-results/explanations');
let browser, server, site;
before(async () => {
  await mkdir(SHOTS, { recursive: true });
  [site, browser] = await Promise.all([buildSite(), launchChromium()]);
  server = await serveStatic(site.dir, { prefix: PREFIX });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(path, { width = 1280, height = 900, scale = 1 } = {}) {
  const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: scale });
  const errors = collectErrors(page);
  await page.goto(server.url + path);
  return { page, errors };
}

/** A number as the widgets print it (fmt: '−' for minus, 'e' exponents, a unit after a space). */
const num = (s) => Number(String(s).trim().split(/\s+/)[0].replace('−', '-'));
const wrap = (x) => x - 2 * Math.PI * Math.round(x / (2 * Math.PI));

/** The TeX source of every formula under sel (lib/math.js keeps it in data-tex). */
// the TeX source of each formula, without the colour macros (\qc{…}, \kc{…}, \relc{…}: lib/palette.js) around terms
const uncolour = (f) => {
  for (let prev = ''; prev !== f;) {
    prev = f;
    f = f.replace(/\\(?:qc|kc|relc)\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}/g, '$1');
  }
  return f;
};
const texOf = (page, sel) => page.$$eval(`${sel} .pe-math[data-tex]`, (as) => as.map((a) => a.dataset.tex)).then((fs) => fs.map(uncolour));

test('defect 3: the shifted-score formula reads q^T R((n−m)θ) k, as the rotations drawn give', async () => {
  const { page, errors } = await open('index.html');
  try {
    await settle(page, '#rope-w');
    const formulas = await texOf(page, '#rope-w .pe-rr-relative');
    const shifted = formulas.find((f) => f.includes('\\tilde q_{m+s}'));
    assert.ok(shifted, `the relative-position formula is shown (${formulas})`);
    assert.match(shifted, /R\\big\(\(n-m\)\\theta\\big\)/, shifted);
    // the same thing in numbers, with the page's own R(φ) = [[cos, −sin], [sin, cos]]: q = (1, 0), k = (0, 1),
    // θ = π/2, m − n = 1 gives (R(mθ)q)·(R(nθ)k) = +1, and qᵀR(φ)k = −sin φ, so φ = (n − m)θ
    const R = (p, [x, y]) => [x * Math.cos(p) - y * Math.sin(p), x * Math.sin(p) + y * Math.cos(p)];
    const th = Math.PI / 2, m = 1, n = 0;
    const [a, b] = [R(m * th, [1, 0]), R(n * th, [0, 1])];
    const lhs = a[0] * b[0] + a[1] * b[1];
    const rhs = (phi) => [1, 0][0] * R(phi, [0, 1])[0] + [1, 0][1] * R(phi, [0, 1])[1];
    assert.ok(Math.abs(lhs - rhs((n - m) * th)) < 1e-12 && Math.abs(lhs - rhs((m - n) * th)) > 1);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('defect 4: the rotation plane\'s arc is the starting angle plus (m − n)θ, and the caption says so', async () => {
  const { page, errors } = await open('index.html');
  try {
    await settle(page, '#rope-w');
    const sel = '#rope-w';
    // move the query away from the key so m − n is large
    await page.focus(`${sel} input[data-key="m"]`);
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowRight');
    await page.waitForTimeout(200);
    const rows = await page.$$eval(`${sel} .pe-rr-rotation tr[data-row]`, (trs) => Object.fromEntries(trs.map((r) => [r.dataset.row, r.cells[1].textContent])));
    for (const k of ['angleStart', 'angleRel', 'angleArc']) assert.ok(k in rows, `table row ${k} (${Object.keys(rows)})`);
    const start = num(rows.angleStart), rel = num(rows.angleRel), arc = num(rows.angleArc);
    assert.ok(Math.abs(wrap(start + rel - arc)) < 1e-3, `${start} + ${rel} = ${arc} (mod 2π)`);
    // the angle the figure draws from k̃ to q̃ (the two thick arrows; SVG y points down)
    const drawn = await page.$$eval(`${sel} .pe-rr-rotation svg line[stroke-width="0.035"]`, (ls) => ls.map((l) => Math.atan2(-Number(l.getAttribute('y2')), Number(l.getAttribute('x2')))));
    assert.equal(drawn.length, 2);
    const [angK, angQ] = drawn;
    assert.ok(Math.abs(wrap(angQ - angK - arc)) < 1e-3, `drawn angle ${wrap(angQ - angK)} vs table ${arc}`);
    const note = await page.$eval(`${sel} .pe-rr-rotation .pe-note`, (p) => p.textContent);
    assert.ok(!/angle between them is \(m − n\)·θᵢ,/.test(note), note);
    assert.match(note, /angle from k to q plus \(m − n\)·θᵢ/);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('defect 5: keyboard focus on a RoPE drag handle is a thin ring, not an outline in viewBox units', async () => {
  const { page, errors } = await open('index.html');
  try {
    await settle(page, '#rope-w');
    const sel = '#rope-w';
    await page.focus(`${sel} [data-key="play"]`);
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.dataset?.handle ?? document.activeElement?.outerHTML.slice(0, 80));
    assert.equal(focused, 'n', 'Tab from the play button reaches the key handle');
    const ring = await page.evaluate(() => {
      const c = document.activeElement;
      const cs = getComputedStyle(c);
      const scale = c.ownerSVGElement.getScreenCTM().a; // CSS px per viewBox unit
      const outline = cs.outlineStyle === 'none' ? 0 : parseFloat(cs.outlineWidth) * scale;
      return { outline, focusVisible: c.matches(':focus-visible'), stroke: cs.stroke, scale };
    });
    assert.ok(ring.focusVisible);
    assert.ok(ring.outline <= 4, `focus outline ${ring.outline.toFixed(0)} px wide on screen`);
    assert.equal(ring.stroke, 'rgb(224, 138, 0)', 'a visible focus ring in the focus colour');
    await page.locator(`${sel} .pe-rr-rotation figure`).first().screenshot({ path: join(SHOTS, 'rope-handle-focus.png') });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('defect 6: the length-extension slider follows the factor: s = 64 shows and computes s·L = 262144', async () => {
  const { page, errors } = await open('index.html');
  try {
    const sel = '#scaling-w';
    await settle(page, sel);
    const opt = await page.$eval(`${sel} select[data-key="factor"]`, (s) => [...s.options].find((o) => o.textContent === '64').value);
    await page.selectOption(`${sel} select[data-key="factor"]`, opt);
    await page.waitForTimeout(300);
    const slider = await page.$eval(`${sel} input[data-key="seqLen"]`, (i) => ({ max: 2 ** Number(i.max), value: 2 ** Number(i.value), shown: i.closest('label').querySelector('output').textContent }));
    assert.equal(slider.shown, '262144', 'the slider reads s·L');
    assert.equal(slider.value, 262144);
    assert.ok(slider.max >= 262144, `slider range reaches s·L (max ${slider.max})`);
    // and the table is computed at that length: dynamic NTK's slowest ratio is the one of s·L
    const dyn = await page.$$eval(`${sel} .pe-sc-methods table.pe-table tr`, (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)).find((r) => /dynamic/.test(r[0])));
    const expected = await page.evaluate(async () => {
      const pe = await window.posencWidgets.getPosenc();
      const mk = (scaling) => pe.rope({ headDim: 128, base: 10000, maxPositionEmbeddings: 4096, ...(scaling ? { scaling } : {}) });
      const a = mk({ type: 'dynamic', factor: 64 }), b = mk(null);
      const r = a.invFreq64(262144).at(-1) / b.invFreq64(262144).at(-1);
      a.free(); b.free();
      return r;
    });
    assert.ok(Math.abs(num(dyn[2]) / expected - 1) < 2e-3, `dynamic NTK slowest ratio ${JSON.stringify(dyn)} vs ${expected} at 262144`);
    await page.locator(`${sel} .pe-sc-methods`).screenshot({ path: join(SHOTS, 'scaling-64.png') });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('defect 7: the extrapolation measure control works on the LM task, and a dashed line means one thing', async () => {
  const { page, errors } = await open('index.html');
  try {
    const sel = '#extra-w';
    await settle(page, sel);
    await page.selectOption(`${sel} select[data-key="task"]`, '1'); // options are [copy, lm]
    await settle(page, sel);
    const metric = () => page.$eval(`${sel} select[data-key="metric"]`, (s) => ['accuracy', 'loss'][s.selectedIndex]);
    const cells = () => page.$$eval(`${sel} table.pe-table td`, (tds) => tds.map((t) => t.textContent).filter((t) => /\d/.test(t)));
    assert.equal(await metric(), 'loss', 'the LM task measures loss by default, and the menu says so');
    assert.ok((await cells()).some((c) => /^\d\.\d{3}$/.test(c.split('/').pop().trim())), `loss numbers in the table (${(await cells()).slice(0, 4)})`);
    await page.selectOption(`${sel} select[data-key="metric"]`, '0');
    await settle(page, sel);
    assert.equal(await metric(), 'accuracy');
    assert.ok((await cells()).some((c) => /%$/.test(c.trim())), `accuracy in the table after choosing it (${(await cells()).slice(0, 4)})`);
    await page.selectOption(`${sel} select[data-key="metric"]`, '1');
    await settle(page, sel);
    assert.ok(!(await cells()).some((c) => /%$/.test(c.trim())), 'back to loss');
    // dashed = npm run eval's numbers, and nothing else
    await page.check(`${sel} input[data-key="showEval"]`);
    await settle(page, sel);
    const legend = await page.$$eval(`${sel} .u-legend .u-series`, (rows) => rows.slice(1).map((r) => ({ label: r.querySelector('.u-label')?.textContent ?? '', style: r.querySelector('.u-marker') ? getComputedStyle(r.querySelector('.u-marker')).borderTopStyle : '' })));
    assert.ok(legend.length >= 10, `legend rows ${legend.length}`);
    for (const row of legend) assert.equal(row.style, /npm run eval/.test(row.label) ? 'dashed' : 'solid', `${row.label}: ${row.style}`);
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

/** Boxes of the visible children of a label row; true when two of them overlap. */
const overlaps = (boxes) => boxes.some((a, i) => boxes.some((b, j) => j > i && a.x < b.x + b.w - 0.5 && b.x < a.x + a.w - 0.5 && a.y < b.y + b.h - 0.5 && b.y < a.y + a.h - 0.5));

test('defect 8: the lab\'s attention maps are labelled with the input characters, readable and not overlapping', async () => {
  for (const width of [1280, 390]) {
    const { page, errors } = await open('index.html', { width, height: 900 });
    try {
      const sel = '#attn-w';
      await settle(page, sel);
      const input = await page.$eval(`${sel} input[data-key="text"], ${sel} input[type="text"]`, (i) => i.value);
      const maps = await page.$$eval(`${sel} [data-head] figure.pe-hm`, (figs) => figs.map((f) => {
        const box = (e) => { const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; };
        const shown = (row) => [...row.children].filter((c) => getComputedStyle(c).visibility !== 'hidden' && c.textContent);
        const x = f.querySelector('.pe-hm-x'), y = f.querySelector('.pe-hm-ynames'), xl = f.querySelector('.pe-hm-xlabel');
        return {
          canvas: box(f.querySelector('canvas')),
          xNames: [...x.children].map((c) => c.textContent), yNames: [...y.children].map((c) => c.textContent),
          xBoxes: shown(x).map(box), yBoxes: shown(y).map(box), xFont: parseFloat(getComputedStyle(x).fontSize),
          xRow: box(x), xLabel: box(xl),
        };
      }));
      assert.ok(maps.length >= 4, `${maps.length} maps`);
      const chars = [...input].map((c) => (c === ' ' ? '␣' : c));
      for (const m of maps) {
        assert.deepEqual(m.xNames, chars, 'key axis: the input characters');
        assert.deepEqual(m.yNames, chars, 'query axis: the input characters');
        assert.ok(!overlaps(m.xBoxes) && !overlaps(m.yBoxes), 'axis names do not overlap');
        assert.ok(m.xLabel.y >= m.xRow.y + m.xRow.h - 0.5, 'the axis title sits below the names, not among them');
        assert.ok(m.xFont >= 7, `names at ${m.xFont} px`);
        assert.ok(m.canvas.w >= Math.min(330, width - 100), `map ${m.canvas.w.toFixed(0)} px wide at ${width} px`);
      }
      await page.locator(sel).screenshot({ path: join(SHOTS, `lab-${width}.png`) });
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  }
});

test('defect 9: the sinusoidal table\'s title matches its picture: positions along x, dimensions down', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, errors } = await open(`index.html?lang=${lang}`);
    try {
      const sel = '#sin';
      await settle(page, sel);
      const fig = await page.evaluate(() => {
        const f = document.querySelector('#sin figure.pe-hm');
        const h4 = f.closest('div').previousElementSibling;
        return { title: h4.textContent, x: f.querySelector('.pe-hm-xlabel').textContent, y: f.querySelector('.pe-hm-ylabel').textContent, ticks: [...f.querySelectorAll('.pe-hm-x span')].map((s) => s.textContent) };
      });
      const length = await page.$eval(`${sel} input[data-key="length"]`, (i) => i.value);
      assert.deepEqual(fig.ticks, ['0', String(Number(length) - 1)], 'x runs over the positions');
      if (lang === 'en') {
        assert.equal(fig.x, 'position');
        assert.equal(fig.y, 'dimension');
        assert.ok(!/one row per position/.test(fig.title), fig.title);
        assert.match(fig.title, /positions run left to right/);
      } else {
        assert.ok(!/每个位置一行/.test(fig.title), fig.title);
        assert.match(fig.title, /位置从左到右/);
        assert.equal(fig.y, '维度');
      }
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  }
});

test('defect 10: the long-term decay chart calls no curve an "upper bound" of a curve it does not bound', async () => {
  for (const lang of ['en', 'zh']) {
    const { page, errors } = await open(`index.html?lang=${lang}`);
    try {
      const sel = '#rope-w';
      await settle(page, sel);
      const legend = await page.$$eval(`${sel} .pe-rr-decay .u-legend .u-series .u-label`, (ls) => ls.map((l) => l.textContent));
      const text = await page.$eval(`${sel} .pe-rr-decay`, (e) => e.textContent);
      // the two curves' values at the largest distance, as the widget prints them
      const at = await page.$eval(`${sel} .pe-rr-decay p[aria-live]`, (p) => p.textContent);
      const [term, score] = await page.$eval(`${sel} .pe-rr-decay p[aria-live]`, (p) => [Number(p.dataset.term), Number(p.dataset.score)]);
      assert.ok(Number.isFinite(term) && Number.isFinite(score), at);
      if (term < score) {
        assert.ok(!legend.some((l) => /upper bound|上界 \(/.test(l)), `a curve below the other is not its "upper bound": ${legend}`);
      }
      assert.ok(!/bound \d|上界为/.test(at), at);
      assert.ok(legend.length === 3, `${legend}`);
      assert.ok(text.length > 0);
      assert.deepEqual(errors, []);
    } finally {
      await page.close();
    }
  }
});

test('defect 11: on a phone, key formulas and the precision table fit, what still scrolls sideways shows it, the pairing diagram is readable', async () => {
  const { page, errors } = await open('index.html', { width: 390, height: 844, scale: 2 });
  try {
    for (const sel of ['#sin', '#learned-w', '#rope-w', '#scaling-w', '#attn-w', '#extra-w', '#prec', '#pitfalls-w']) await settle(page, sel, { timeout: 60_000 });
    await page.evaluate(() => document.fonts.ready);
    await page.waitForTimeout(300);
    const boxes = await page.evaluate(() => [...document.querySelectorAll('.pe-widget *')].filter((e) => {
      const cs = getComputedStyle(e);
      return /auto|scroll/.test(cs.overflowX) && e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0;
    }).map((e) => ({ where: `${e.closest('.pe-widget').id} ${e.className}`, text: e.textContent.slice(0, 40), math: e.classList.contains('pe-math'), overflow: e.dataset.overflow ?? null, mask: getComputedStyle(e).maskImage })));
    for (const b of boxes) {
      assert.equal(b.overflow, 'right', `${b.where} (${b.text}) scrolls sideways with a cue`);
      assert.match(b.mask, /gradient/, `${b.where}: the right edge fades`);
    }
    // the formulas the issue names fit without scrolling: the M_k rotation (sinusoidal), the cos + sin score (pitfalls)
    const math = boxes.filter((b) => b.math).map((b) => b.where + ' ' + b.text);
    assert.ok(!math.some((m) => /^sin |^pitfalls-w /.test(m)), `formulas that still scroll: ${math}`);
    // the precision table, posenc column included, is on screen
    const prec = await page.$eval('#prec table.pe-table', (t) => {
      const box = t.closest('.pe-scroll') ?? t.parentElement;
      const last = [...t.rows[0].cells].at(-1);
      return { last: last.textContent, right: last.getBoundingClientRect().right, boxRight: box.getBoundingClientRect().right };
    });
    assert.match(prec.last, /posenc/);
    assert.ok(prec.right <= prec.boxRight + 1, `posenc column visible (${prec.right} ≤ ${prec.boxRight})`);
    // a scrolled-to-the-end box says so
    const flipped = await page.evaluate(async () => {
      const e = document.querySelector('[data-overflow="right"]');
      if (!e) return 'none';
      e.scrollLeft = e.scrollWidth;
      await new Promise((ok) => setTimeout(ok, 100));
      return e.dataset.overflow;
    });
    assert.ok(flipped === 'left' || flipped === 'none', flipped);
    // the pairing diagram's numbers: at least 11 px on screen
    const sizes = await page.$$eval('#rope-w .pe-rr-pairing figure svg text', (ts) => ts.map((t) => parseFloat(getComputedStyle(t).fontSize) * t.ownerSVGElement.getScreenCTM().a));
    assert.ok(sizes.length > 0 && Math.min(...sizes) >= 11, `pairing diagram text ${Math.min(...sizes).toFixed(1)} px`);
    await page.locator('#rope-w .pe-rr-pairing figure').first().screenshot({ path: join(SHOTS, 'pairing-phone.png') });
    await page.locator('#pitfalls-w').screenshot({ path: join(SHOTS, 'pitfalls-phone.png') });
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});

test('defect 12: ALiBi tiles, head numbers, clock direction, the learned lookup at −1, the precision text, "1 head", the language switch', async () => {
  const { page, errors } = await open('index.html');
  try {
    // ALiBi: 8 bias tiles in two even rows of 4 at 1280 px, heads numbered from 0 as in the heatmap
    await settle(page, '#alibi-w');
    const tiles = await page.$$eval('#alibi-w .pe-alibi-tiles canvas', (cs) => cs.map((c) => c.getBoundingClientRect()).map((r) => ({ x: r.x, y: r.y, w: r.width })));
    assert.equal(tiles.length, 8);
    const rows = [...new Set(tiles.map((t) => Math.round(t.y)))];
    assert.equal(rows.length, 2, `tile rows at ${rows}`);
    assert.deepEqual(tiles.map((t) => Math.round(t.y)), [rows[0], rows[0], rows[0], rows[0], rows[1], rows[1], rows[1], rows[1]]);
    const caps = await page.$$eval('#alibi-w .pe-alibi-tiles figcaption', (fs) => fs.map((f) => f.textContent));
    assert.match(caps[0], /^head 0 /);
    assert.equal(await page.$eval('#alibi-w table.pe-table tbody td', (td) => td.textContent), '0');
    const shownHead = await page.$eval('#alibi-w input[data-key="head"]', (i) => i.closest('label').querySelector('output').textContent);
    assert.equal(shownHead, '0');
    await page.fill('#alibi-w input[data-key="heads"]', '1');
    await page.press('#alibi-w input[data-key="heads"]', 'Enter');
    await page.waitForFunction(() => /1 head\b/.test(document.querySelector('#alibi-w h4')?.textContent ?? ''));
    assert.equal(await page.$eval('#alibi-w h4', (e) => e.textContent), 'The slope for 1 head');

    // sinusoidal clock: pair 0 turns by ω₀ = 1 rad per position, counter-clockwise like the RoPE planes
    await settle(page, '#sin');
    const clock = await page.evaluate(() => {
      const l = document.querySelector('#sin .pe-clock svg line[stroke="#c0392b"]');
      return { angle: Math.atan2(-Number(l.getAttribute('y2')), Number(l.getAttribute('x2'))) };
    });
    const pos = await page.$eval('#sin input[data-key="position"]', (i) => Number(i.value));
    assert.ok(Math.abs(wrap(clock.angle - pos)) < 1e-3, `hand at ${clock.angle} rad for position ${pos}`);

    // learned lookup: −1 reaches the library and is refused in words, not shown as row 0
    await settle(page, '#learned-w');
    await page.fill('#learned-w input[data-key="probe"]', '-1');
    await page.press('#learned-w input[data-key="probe"]', 'Enter');
    await page.waitForFunction(() => document.querySelector('#learned-w').dataset.probe === 'refused');
    assert.equal(await page.$eval('#learned-w input[data-key="probe"]', (i) => i.value), '-1');
    assert.match(await page.$eval('#learned-w', (e) => [...e.querySelectorAll('div[aria-live] p')].map((p) => p.textContent).join(' ')), /refused: RangeError/);

    // precision: the text quotes the table's float32 error at its last position
    await settle(page, '#prec');
    const prec = await page.evaluate(() => {
      const rows = [...document.querySelectorAll('#prec table.pe-table tbody tr')];
      const last = rows.at(-1);
      const notes = [...document.querySelectorAll('#prec .pe-note')].map((p) => p.textContent);
      return { pos: last.cells[0].textContent, f32: last.cells[1].textContent, note: notes.find((n) => n.includes('24-bit')) };
    });
    assert.ok(prec.note.includes(`at p = ${prec.pos} the table shows ${prec.f32} rad`), prec.note);
    assert.ok(!/about 0\.03 rad/.test(prec.note));

    // the language switch: no widget re-renders in the switch's own task; those on screen follow in later tasks,
    // those off screen wait (data-relabel="pending") until they come within a screen of the viewport
    const ids = await page.$$eval('main [id]', (els) => els.filter((e) => e.localName.startsWith('pe-')).map((e) => `#${e.id}`));
    for (const sel of ids) await settle(page, sel, { timeout: 60_000 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    const sw = await page.evaluate(() => {
      const all = [...document.querySelectorAll('main .pe-widget[data-draws]')];
      const seen = (e) => { const r = e.getBoundingClientRect(); return r.bottom > 0 && r.top < innerHeight; };
      window.posencWidgets.setLang('zh');
      return {
        zhNow: all.filter((e) => e.dataset.lang === 'zh').length,
        onScreen: all.filter(seen).map((e) => `#${e.id}`),
        pending: all.filter((e) => e.dataset.relabel === 'pending').map((e) => `#${e.id}`),
        // beyond the relabel margin (one screen) with a screen to spare
        far: all.filter((e) => e.getBoundingClientRect().top > 2 * innerHeight).map((e) => `#${e.id}`),
        all: all.map((e) => `#${e.id}`),
      };
    });
    assert.equal(sw.zhNow, 0, 'no widget re-renders inside the switch');
    assert.ok(sw.onScreen.length >= 1, 'a widget is on screen');
    assert.deepEqual(sw.pending, sw.all.filter((id) => !sw.onScreen.includes(id)), 'exactly the off-screen widgets wait');
    await page.waitForFunction((on) => on.every((id) => document.querySelector(id).dataset.lang === 'zh'), sw.onScreen);
    await page.waitForTimeout(500);
    const still = await page.$$eval('main .pe-widget[data-relabel="pending"]', (es) => es.map((e) => `#${e.id}:${e.dataset.lang}`));
    assert.ok(sw.far.length >= 5, `widgets far below: ${sw.far}`);
    assert.deepEqual(still.filter((x) => sw.far.includes(x.split(':')[0])), sw.far.map((id) => `${id}:en`), 'far widgets keep their language until they are near (a screen ahead)');
    await page.locator('#pitfalls-w').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelector('#pitfalls-w').dataset.lang === 'zh');
    assert.equal(await page.$eval('#scaling-w', (e) => `${e.dataset.relabel}:${e.dataset.lang}`), 'pending:en', 'a widget far from the reader still waits');
    await languageDrawn(page, 'zh');
    assert.deepEqual(errors, []);
  } finally {
    await page.close();
  }
});
