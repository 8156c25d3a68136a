// The playground's second pass, lab items (issue 15), in headless Chromium against the built site, in English
// and Chinese:
//   - formula terms tied to the figures by colour: q and k (and the relative angle) have the same colour in
//     every formula and figure (lib/palette.js): the RoPE rotation's formula and its plane, the ALiBi formula and
//     its tiles' axes, the lab's maps and input row, the frequency widget's chart and table;
//   - the lab over real tokens: hovering a cell of one attention map (or moving over the maps with the keyboard)
//     marks that query and key in every map and in the input row, and they are the input's characters there;
//   - training curves: each curve's first and last loss are the trainer's log (train-log.json beside the model),
//     and the log's last 100 steps average to the final_train_loss the trainer wrote into config.json;
//   - which frequencies the tiny RoPE model uses (Barbero et al. 2024): the per-pair norms of q and k in layer 0
//     against a float64 computation from the safetensors weights on the sample input the widget shows;
//   - the redraw after a language switch offers the browser a break between a widget's figures (yieldIfLong),
//     while the element keeps its height; the times themselves are measured by scripts/bench-relabel.mjs.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, serveStatic, launchChromium, collectErrors, buildSite, settle, visibleTexts, isEnglish, languageDrawn } from './lib.js';
import { ROLE } from '../../web/widgets/lib/palette.js';
import { parseSafetensors, readTensor } from '../../web/src/model.js';

const MODELS = join(repoRoot, 'web/playground/public/models');
const shots = join(repoRoot, 'test-results');
let browser, server, site;

const rgb = (hex) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(', ')})`;
const Q = rgb(ROLE.q), K = rgb(ROLE.k), REL = rgb(ROLE.rel);

const page = (lang, body) => `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>lab</title><link rel="icon" href="data:,"><style>body { max-width: 1000px; margin: 0 auto; padding: 0 8px; }</style></head>
<body>${body}<script type="module" src="./posenc-widgets.js"></script></body></html>`;
const BODY = {
  colours: '<pe-rope-rotation id="rr" sections="rotation,relative"></pe-rope-rotation><pe-alibi id="al"></pe-alibi><pe-pitfalls id="pf" sections="score"></pe-pitfalls>',
  lab: '<pe-attention id="at"></pe-attention>',
  curves: '<pe-train-curves id="tc" smooth="1"></pe-train-curves>',
  freqs: '<pe-rope-freqs id="rf"></pe-rope-freqs>',
  relabel: '<pe-lang-toggle></pe-lang-toggle><pe-rope-rotation id="rr" eager></pe-rope-rotation><pe-learned id="le" eager></pe-learned><pe-sinusoidal id="si" eager></pe-sinusoidal>',
};

before(async () => {
  site = await buildSite();
  for (const lang of ['en', 'zh']) for (const [k, b] of Object.entries(BODY)) await writeFile(join(site.dir, `lab-${k}-${lang}.html`), page(lang, b));
  server = await serveStatic(site.dir);
  browser = await launchChromium();
  await mkdir(shots, { recursive: true });
});
after(async () => {
  await browser?.close();
  await server?.close();
});

async function open(name, lang, viewport = { width: 1100, height: 900 }) {
  const p = await browser.newPage({ viewport });
  const errors = collectErrors(p);
  await p.goto(`${server.url}lab-${name}-${lang}.html`);
  return { page: p, errors };
}

/** Visible texts of a widget that are English (names and identifiers aside, no Chinese in them): none in Chinese. */
async function englishLeft(p, sel) {
  return (await visibleTexts(p, sel)).filter((x) => isEnglish(x) && !/[\u3400-\u9fff]/.test(x));
}

/** The colours of a formula's coloured terms: [{ text, color }] of the KaTeX spans with an inline colour. */
const termColours = (p, sel) => p.$$eval(`${sel} .katex-html [style*="color"]`, (els) => els.map((e) => ({ text: e.textContent, color: getComputedStyle(e).color })));

for (const lang of ['en', 'zh']) {
  test(`${lang}: q and k have one colour each in every formula and figure`, async () => {
    const { page: p, errors } = await open('colours', lang);
    try {
      for (const s of ['#rr', '#al', '#pf']) await settle(p, s);
      // RoPE rotation: the formula's q̃, q, m in the query colour, k̃, k, n in the key colour; the plane's arrows the same
      const rot = await termColours(p, '#rr .pe-rr-rotation');
      assert.ok(rot.length >= 6, `coloured terms in the rotation formula: ${JSON.stringify(rot)}`);
      // (a term's accent alone, the ~ of q̃, is a span of its own with its term's colour: only letters are checked)
      for (const { text, color } of rot) {
        if (/[qm]/.test(text)) assert.equal(color, Q, `rotation formula term “${text}”`);
        else if (/[kn]/.test(text)) assert.equal(color, K, `rotation formula term “${text}”`);
        else assert.ok([Q, K].includes(color), `rotation formula mark “${text}”`);
      }
      const arrows = await p.$$eval('#rr .pe-rr-rotation svg line[stroke-width="0.035"]', (ls) => ls.map((l) => l.getAttribute('stroke')));
      assert.deepEqual(arrows.map(rgb).sort(), [Q, K].sort(), 'the plane draws q̃ and k̃ in the same two colours');
      const handles = await p.$$eval('#rr [data-handle]', (cs) => Object.fromEntries(cs.map((c) => [c.dataset.handle, c.getAttribute('fill')])));
      assert.equal(rgb(handles.m), Q, 'the query position handle');
      assert.equal(rgb(handles.n), K, 'the key position handle');
      const arc = await p.$eval('#rr .pe-rr-rotation svg path', (a) => a.getAttribute('stroke'));
      const rel = await termColours(p, '#rr .pe-rr-relative');
      assert.equal(rgb(arc), REL);
      assert.ok(rel.some((x) => /θ/.test(x.text) && x.color === REL), 'the relative angle in the formula has the arc’s colour');
      for (const { text, color } of rel) if (/[qk]/.test(text) && !/θ/.test(text)) assert.equal(color, /q/.test(text) ? Q : K, `relative formula term “${text}”`);
      // ALiBi: q_i and i in the query colour, k_j and j in the key colour; the tiles' axes and the attention maps the same
      const al = await termColours(p, '#al');
      assert.ok(al.some((x) => /q/.test(x.text) && x.color === Q) && al.some((x) => /k/.test(x.text) && x.color === K), JSON.stringify(al));
      for (const { text, color } of al) if (/[qikj]/.test(text)) assert.equal(color, /[qi]/.test(text) ? Q : K, `ALiBi term “${text}”`);
      const axes = await p.$$eval('#al .pe-hm', (fs) => fs.map((f) => ({ x: getComputedStyle(f.querySelector('.pe-hm-xlabel')).color, y: getComputedStyle(f.querySelector('.pe-hm-ylabel')).color, yOn: !f.querySelector('.pe-hm-ylabel').hidden })));
      assert.ok(axes.length >= 3);
      for (const a of axes) {
        assert.equal(a.x, K, 'a key axis');
        if (a.yOn) assert.equal(a.y, Q, 'a query axis');
      }
      // the pitfall's complex form: every q term blue, every k term red, the angle purple
      const pf = await termColours(p, '#pf');
      assert.ok(pf.length >= 10);
      for (const { text, color } of pf) if (/[qkθ]/.test(text)) assert.equal(color, /θ/.test(text) ? REL : /q/.test(text) ? Q : K, `pitfall term “${text}”`);
      if (lang === 'zh') for (const s of ['#rr', '#al']) assert.deepEqual(await englishLeft(p, s), [], `${s} in Chinese`);
      assert.deepEqual(errors, []);
    } finally {
      await p.close();
    }
  });

  test(`${lang}: the lab links a hovered or focused cell to its query and key in every map and the input row`, async () => {
    const { page: p, errors } = await open('lab', lang);
    try {
      await settle(p, '#at');
      const text = await p.$eval('#at input[data-key="text"]', (i) => i.value);
      const chars = [...text].map((c) => (c === ' ' ? '␣' : c));
      const n = chars.length;
      assert.ok(n >= 40, `a long enough input (${n})`);
      const maps = await p.$$eval('#at .pe-hm', (fs) => fs.length);
      assert.equal(maps, 4, 'four heads');
      // the axes: queries in the query colour, keys in the key colour
      const axis = await p.$eval('#at .pe-hm', (f) => ({ x: getComputedStyle(f.querySelector('.pe-hm-xlabel')).color, y: getComputedStyle(f.querySelector('.pe-hm-ylabel')).color }));
      assert.deepEqual(axis, { x: K, y: Q });
      // hover the cell at query i, key j of head 2
      const i = n - 5, j = 7;
      const canvas = p.locator('#at [data-head="2"] canvas');
      await canvas.scrollIntoViewIfNeeded();
      const box = await canvas.boundingBox();
      await p.mouse.move(box.x + ((j + 0.5) / n) * box.width, box.y + ((i + 0.5) / n) * box.height);
      await p.waitForFunction(() => document.querySelector('#at').dataset.linkQuery !== undefined);
      const state = async () => p.evaluate(() => {
        const at = document.querySelector('#at');
        const figs = [...at.querySelectorAll('.pe-hm')].map((f) => ({
          mark: f.dataset.mark, y: f.querySelector('.pe-hm-on-y')?.textContent, x: f.querySelector('.pe-hm-on-x')?.textContent,
          yBg: f.querySelector('.pe-hm-on-y') && getComputedStyle(f.querySelector('.pe-hm-on-y')).backgroundColor,
          xBg: f.querySelector('.pe-hm-on-x') && getComputedStyle(f.querySelector('.pe-hm-on-x')).backgroundColor,
          readout: f.querySelector('.pe-hm-readout').textContent,
        }));
        const q = at.querySelector('tr[data-row="input"] .pe-role-q-bg'), k = at.querySelector('tr[data-row="input"] .pe-role-k-bg');
        return { figs, q: q && { pos: +q.dataset.pos, text: q.textContent }, k: k && { pos: +k.dataset.pos, text: k.textContent },
          link: [+at.dataset.linkQuery, +at.dataset.linkKey] };
      });
      let st = await state();
      assert.deepEqual(st.link, [i, j]);
      for (const f of st.figs) {
        assert.equal(f.mark, `${i},${j}`, 'every map marks the same cell');
        assert.equal(f.y, chars[i], 'the query name is the input character');
        assert.equal(f.x, chars[j], 'the key name is the input character');
        assert.equal(f.yBg, Q);
        assert.equal(f.xBg, K);
        assert.ok(f.readout.includes(`“${chars[i]}”`) && f.readout.includes(`“${chars[j]}”`), f.readout);
      }
      // each map's readout gives its own head's weight: they differ between heads
      assert.ok(new Set(st.figs.map((f) => f.readout)).size > 1, 'each head its own weight');
      assert.deepEqual(st.q, { pos: i, text: chars[i] });
      assert.deepEqual(st.k, { pos: j, text: chars[j] });
      // above the diagonal (a masked cell): nothing is marked
      await p.mouse.move(box.x + box.width - 2, box.y + 2);
      await p.waitForFunction(() => document.querySelector('#at').dataset.linkQuery === undefined);
      // keyboard: focus head 0's map, arrows move the marked cell
      await p.locator('#at [data-head="0"] canvas').focus();
      await p.waitForFunction(() => document.querySelector('#at').dataset.linkQuery !== undefined);
      st = await state();
      assert.deepEqual(st.link, [n - 1, 0], 'focus starts at the last query, first key');
      await p.keyboard.press('ArrowUp');
      await p.keyboard.press('ArrowRight');
      await p.keyboard.press('ArrowRight');
      st = await state();
      assert.deepEqual(st.link, [n - 2, 2]);
      assert.deepEqual(st.q, { pos: n - 2, text: chars[n - 2] });
      assert.deepEqual(st.k, { pos: 2, text: chars[2] });
      for (const f of st.figs) assert.equal(f.mark, `${n - 2},2`);
      // (the pointer parked off the maps, so scrolling for the screenshots leaves the keyboard's mark)
      await p.mouse.move(1, 1);
      await p.locator('#at .pe-scroll').first().screenshot({ path: join(shots, `lab-link-strip-${lang}.png`) });
      await p.locator('#at .pe-grid').screenshot({ path: join(shots, `lab-link-maps-${lang}.png`) });
      assert.equal(Number(await p.evaluate(() => document.querySelector('#at').dataset.linkQuery)), n - 2);
      await p.keyboard.press('Escape');
      assert.equal(await p.evaluate(() => document.querySelector('#at').dataset.linkQuery), undefined);
      if (lang === 'zh') assert.deepEqual(await englishLeft(p, '#at'), []);
      assert.deepEqual(errors, []);
    } finally {
      await p.close();
    }
  });

  test(`${lang}: training curves are the trainer's logs`, async () => {
    const { page: p, errors } = await open('curves', lang);
    try {
      await settle(p, '#tc');
      const shipped = JSON.parse(await readFile(join(MODELS, 'index.json'), 'utf8'));
      let checked = 0;
      for (const [ti, task] of ['copy', 'lm'].entries()) {
        await p.selectOption('#tc select[data-key="task"]', String(ti));
        await settle(p, '#tc');
        await p.waitForFunction((t) => document.querySelector('#tc .pe-chart')?.dataset.task === t || document.querySelector('#tc [data-missing]'), task);
        const rows = await p.$$eval('#tc tr[data-enc]', (rs) => rs.map((r) => ({ ...r.dataset })));
        const plotted = await p.evaluate(() => document.querySelector('#tc .pe-chart')?._peChart?.u.data ?? null);
        for (const enc of ['none', 'sinusoidal', 'learned', 'rope', 'alibi']) {
          // what index.json lists is what is shipped (the next test shows the widget follows it, whatever it lists)
          const entry = shipped.models.find((m) => m.name === `${task}-${enc}`);
          const row = rows.find((r) => r.enc === enc);
          if (!entry?.train_log) {
            assert.equal(row, undefined, `${task}-${enc} has no log and no curve`);
            continue;
          }
          const file = join(MODELS, entry.train_log);
          assert.ok(existsSync(file), `index.json lists ${entry.train_log}`);
          const log = JSON.parse(await readFile(file, 'utf8'));
          const cfg = JSON.parse(await readFile(join(MODELS, `${task}-${enc}`, 'config.json'), 'utf8'));
          assert.ok(row, `${task}-${enc}: a row`);
          assert.equal(Number(row.first), log.loss[0]);
          assert.equal(Number(row.last), log.loss.at(-1));
          // smoothing off: the plotted series starts and ends at the logged values, one point per step
          assert.equal(Number(row.plottedFirst), log.loss[0]);
          assert.equal(Number(row.plottedLast), log.loss.at(-1));
          const series = plotted[1 + rows.indexOf(row)];
          assert.equal(series.length, log.steps);
          assert.equal(series[0], log.loss[0]);
          assert.equal(series.at(-1), log.loss.at(-1));
          // the trainer's own record of the last 100 steps (config.json), from the log printed to 6 digits
          const tail = log.loss.slice(-100).reduce((a, b) => a + b, 0) / 100;
          const want = cfg.posenc.training.final_train_loss;
          assert.ok(Math.abs(tail - want) <= 1e-5 * want + 1e-12, `${task}-${enc}: last-100 mean ${tail} vs final_train_loss ${want}`);
          assert.ok(Math.abs(Number(row.tail) - tail) <= 1e-12 * tail);
          assert.equal(log.steps, cfg.posenc.training.steps);
          checked++;
        }
        await p.locator('#tc').screenshot({ path: join(shots, `lab-curves-${task}-${lang}.png`) });
        if (lang === 'zh') assert.deepEqual(await englishLeft(p, '#tc'), []);
      }
      assert.ok(checked >= 2, `at least two models' logs are shipped and drawn (${checked})`);
      assert.deepEqual(errors, [], 'no failed request: only the logs index.json lists are fetched');
    } finally {
      await p.close();
    }
  });

  test(`${lang}: training curves show whatever logs index.json lists (all of them, or none)`, async () => {
    // index.json and the logs it names are served here, so this holds however many logs are shipped: each listed
    // log is a curve and a row with its first and last loss; with none listed, every model is named as missing
    // and no log is requested at all
    const { page: p, errors } = await open('curves', lang);
    try {
      const index = JSON.parse(await readFile(join(MODELS, 'index.json'), 'utf8'));
      // a log of 40 steps whose losses are a formula of the model's place in index.json and the step
      const loss = (m, i) => Number((3 / (1 + m) + 2 / (1 + i)).toPrecision(6));
      const synthetic = (m) => ({ steps: 40, batch_size: 2, seq_len: 8, warmup_steps: 4, loss: Array.from({ length: 40 }, (_, i) => loss(m, i)) });
      let listAll = true;
      const logRequests = [];
      await p.route('**/models/index.json', (r) => r.fulfill({ contentType: 'application/json', body: JSON.stringify({ ...index,
        models: index.models.map((m) => ({ ...m, train_log: listAll ? `test-logs/${m.name}.json` : undefined })) }) }));
      await p.route('**/models/test-logs/*.json', (r) => {
        const name = decodeURIComponent(new URL(r.request().url()).pathname.split('/').pop().replace(/\.json$/, ''));
        logRequests.push(name);
        r.fulfill({ contentType: 'application/json', body: JSON.stringify(synthetic(index.models.findIndex((m) => m.name === name))) });
      });
      await p.reload();
      errors.length = 0; // the first load's requests, cut off by the reload
      await settle(p, '#tc');
      for (const [ti, task] of ['copy', 'lm'].entries()) {
        await p.selectOption('#tc select[data-key="task"]', String(ti));
        await settle(p, '#tc');
        await p.waitForFunction((t) => document.querySelector('#tc .pe-chart')?.dataset.task === t, task);
        const rows = await p.$$eval('#tc tr[data-enc]', (rs) => rs.map((r) => ({ ...r.dataset })));
        const want = index.models.filter((m) => m.task === task);
        assert.deepEqual(rows.map((r) => `${task}-${r.enc}`).sort(), want.map((m) => m.name).sort(), `${task}: a row for every model index.json lists`);
        for (const r of rows) {
          const m = index.models.findIndex((x) => x.name === `${task}-${r.enc}`);
          assert.equal(Number(r.first), loss(m, 0));
          assert.equal(Number(r.last), loss(m, 39));
        }
        assert.equal(await p.$('#tc [data-missing]'), null, 'nothing is reported missing');
      }
      // none listed: no curve, every model named, no log fetched
      listAll = false;
      logRequests.length = 0;
      await p.reload();
      await settle(p, '#tc');
      const missing = await p.$eval('#tc [data-missing]', (e) => e.dataset.missing.split(','));
      assert.deepEqual(missing.sort(), index.models.filter((m) => m.task === 'copy').map((m) => m.position_encoding).sort());
      assert.deepEqual(await p.$$('#tc tr[data-enc]'), []);
      assert.deepEqual(logRequests, []);
      assert.deepEqual(errors, []);
    } finally {
      await p.close();
    }
  });

  test(`${lang}: per-frequency-pair norms of q and k in the tiny RoPE model (layer 0 against the weights)`, async () => {
    const { page: p, errors } = await open('freqs', lang);
    try {
      await settle(p, '#rf');
      const text = await p.$eval('#rf', (e) => e.dataset.sample);
      const bytes = new Uint8Array(await readFile(join(MODELS, 'copy-rope/model.safetensors')));
      const cfg = JSON.parse(await readFile(join(MODELS, 'copy-rope/config.json'), 'utf8'));
      const parsed = parseSafetensors(bytes);
      const E = readTensor(bytes, parsed, 'model.embed_tokens.weight');
      const g = readTensor(bytes, parsed, 'model.layers.0.input_layernorm.weight');
      const W = { q: readTensor(bytes, parsed, 'model.layers.0.self_attn.q_proj.weight'), k: readTensor(bytes, parsed, 'model.layers.0.self_attn.k_proj.weight') };
      const D = cfg.hidden_size, H = cfg.num_attention_heads, hd = D / H, P = hd / 2;
      const ids = [...text].map((c) => cfg.posenc.vocab.indexOf(c));
      assert.ok(ids.length === cfg.max_position_embeddings && ids.every((x) => x >= 0), 'the sample is a training-length copy sequence');
      // float64: x = 8 E[token], RMSNorm, q = h Wq^T; pair i of head h = dims h*hd + i and h*hd + i + hd/2;
      // mean over positions of the pair's norm, then over heads
      const want = { q: new Float64Array(P), k: new Float64Array(P) };
      for (const t of ids) {
        const x = Array.from({ length: D }, (_, i) => cfg.embedding_multiplier * E[t * D + i]);
        const r = 1 / Math.sqrt(x.reduce((a, v) => a + v * v, 0) / D + cfg.rms_norm_eps);
        const hN = x.map((v, i) => v * r * g[i]);
        for (const w of ['q', 'k']) {
          const y = Array.from({ length: D }, (_, o) => hN.reduce((a, v, i) => a + v * W[w][o * D + i], 0));
          for (let hh = 0; hh < H; hh++) for (let i = 0; i < P; i++) want[w][i] += Math.hypot(y[hh * hd + i], y[hh * hd + i + P]) / ids.length / H;
        }
      }
      const rows = await p.$$eval('#rf tr[data-pair]', (rs) => rs.map((r) => ({ q: Number(r.dataset.q), k: Number(r.dataset.k), share: Number(r.dataset.share) })));
      assert.equal(rows.length, P);
      // float32 projections of O(1) entries against float64: 1e-4 relative
      for (let i = 0; i < P; i++) {
        assert.ok(Math.abs(rows[i].q - want.q[i]) <= 1e-4 * want.q[i], `pair ${i}: q ${rows[i].q} vs ${want.q[i]}`);
        assert.ok(Math.abs(rows[i].k - want.k[i]) <= 1e-4 * want.k[i], `pair ${i}: k ${rows[i].k} vs ${want.k[i]}`);
      }
      const tot = want.q.reduce((a, v, i) => a + v * want.k[i], 0);
      for (let i = 0; i < P; i++) assert.ok(Math.abs(rows[i].share - (want.q[i] * want.k[i]) / tot) < 1e-4);
      // the θ column is the model's frequencies, b^(−2i/d)
      const theta = await p.$$eval('#rf tr[data-pair] td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
      assert.equal(theta[0], '1');
      assert.equal(theta[2], String(Number((10000 ** (-4 / hd)).toPrecision(3))));
      // the chart's q series in the query colour, k in the key colour
      const strokes = await p.evaluate(() => document.querySelector('#rf .pe-chart')._peChart.u.series.slice(1).map((s) => s._stroke ?? s.stroke()));
      assert.deepEqual(strokes.map(rgb), [Q, K]);
      // another layer: other numbers
      await p.selectOption('#rf select[data-key="layer"]', '1');
      await settle(p, '#rf');
      const l1 = await p.$$eval('#rf tr[data-pair]', (rs) => rs.map((r) => Number(r.dataset.q)));
      assert.ok(l1.some((v, i) => Math.abs(v - rows[i].q) > 1e-3), 'layer 1 differs from layer 0');
      await p.locator('#rf').screenshot({ path: join(shots, `lab-freqs-${lang}.png`) });
      if (lang === 'zh') assert.deepEqual(await englishLeft(p, '#rf'), []);
      assert.deepEqual(errors, []);
    } finally {
      await p.close();
    }
  });
}

// The mechanism behind short tasks after a language switch (no timing asserted): during the redraw that follows a
// switch, the widgets of several figures call yieldIfLong() between them, and only then; their height holds.
test('after a language switch, widgets of several figures redraw in parts and keep their height', async () => {
  const p = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors = collectErrors(p);
  await p.addInitScript(() => {
    window.__yields = [];
    const define = customElements.define.bind(customElements);
    customElements.define = (tag, cls, o) => {
      const y = cls.prototype.yieldIfLong;
      if (tag.startsWith('pe-') && y && !Object.hasOwn(cls.prototype, 'yieldIfLong')) {
        cls.prototype.yieldIfLong = function (...a) {
          window.__yields.push({ tag, relabeling: this.relabeling, minHeight: this.style.minHeight });
          return y.apply(this, a);
        };
      }
      return define(tag, cls, o);
    };
  });
  try {
    await p.goto(`${server.url}lab-relabel-en.html`);
    for (const s of ['#rr', '#le', '#si']) await settle(p, s);
    const heights = await p.$$eval('#rr, #le, #si', (els) => els.map((e) => e.getBoundingClientRect().height));
    assert.deepEqual(await p.evaluate(() => window.__yields.filter((y) => y.relabeling)), [], 'no yield in a first draw');
    await p.evaluate(() => { window.__yields = []; });
    await p.click('pe-lang-toggle button');
    await languageDrawn(p, 'zh', { timeout: 120_000 });
    const ys = await p.evaluate(() => window.__yields);
    const count = (tag) => ys.filter((y) => y.tag === tag && y.relabeling).length;
    assert.ok(count('pe-rope-rotation') >= 3, `rope-rotation: ${count('pe-rope-rotation')} breaks`);
    assert.ok(count('pe-learned') >= 3, `learned: ${count('pe-learned')} breaks`);
    assert.ok(count('pe-sinusoidal') >= 2, `sinusoidal: ${count('pe-sinusoidal')} breaks`);
    // while a widget redraws in parts, it holds the height it had
    for (const y of ys) assert.ok(y.minHeight.endsWith('px'), `${y.tag} held no height during its redraw`);
    const after = await p.$$eval('#rr, #le, #si', (els) => els.map((e) => e.getBoundingClientRect().height));
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(after[i] - heights[i]) < 0.1 * heights[i], `height ${heights[i]} -> ${after[i]}`);
    assert.deepEqual(await englishLeft(p, '#rr'), []);
    assert.deepEqual(errors, []);
  } finally {
    await p.close();
  }
});
