// The guided path of the playground (issue 15): the sticky table of contents says where the reader is, every
// citation leads to a reference with its link, code sits beside the math and copies, and <pe-aliasing> shows
// float16 / bfloat16 position ids collapsing neighbours while posenc keeps each token's angle. Built playground,
// headless Chromium, English and Chinese.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settle, visibleTexts, isEnglish } from './lib.js';
import { usePlayground } from './playground-page.js';

const site = usePlayground({ shots: 'test-results/guide' });
const open = (path, o) => site.open(path, { permissions: ['clipboard-read', 'clipboard-write'], ...o });

// f16 as IEEE binary16 rounds integers: 11 significant bits, ties to even (independent of lib/floats.js)
function f16int(p) {
  if (p < 2048) return p;
  const step = 2 ** (Math.floor(Math.log2(p)) - 10);
  const q = p / step, r = Math.floor(q), f = q - r;
  return (f > 0.5 || (f === 0.5 && r % 2 === 1) ? r + 1 : r) * step;
}

for (const width of [1280, 390]) {
  test(`table of contents at ${width} px: stays on screen and marks the section being read, with a progress bar`, async () => {
    const { page, errors, close } = await open('index.html', { width });
    try {
      const order = await page.$$eval('nav.toc a', (as) => as.map((a) => a.getAttribute('href').slice(1)));
      assert.equal(order.length, 14); // 11 sections and the sub-sections 4.1, 6.1, 6.2
      assert.equal(order.at(-1), 'references');
      const seen = [];
      for (const id of ['sinusoidal', 'alibi', 'precision', 'references']) {
        // widgets starting around the target may still settle their heights: jump again until it holds
        await page.waitForFunction((s) => {
          const ok = document.querySelector('nav.toc').dataset.current === s;
          if (!ok) document.getElementById(s).scrollIntoView({ block: 'start' });
          return ok;
        }, id, { polling: 250 });
        const st = await page.evaluate(() => {
          const nav = document.querySelector('nav.toc');
          const cur = nav.querySelector('a[aria-current="location"]');
          return {
            top: nav.getBoundingClientRect().top,
            current: cur?.getAttribute('href'),
            currentCount: nav.querySelectorAll('a[aria-current]').length,
            bar: new DOMMatrix(getComputedStyle(nav.querySelector('.toc-progress span')).transform).a,
            curVisible: (() => { const r = cur.getBoundingClientRect(), o = cur.closest('ol').getBoundingClientRect(); return r.left >= o.left - 1 && r.right <= o.right + 1; })(),
          };
        });
        assert.ok(Math.abs(st.top) <= 1, `the table of contents is at the top of the screen (${st.top})`);
        assert.equal(st.current, `#${id}`);
        assert.equal(st.currentCount, 1);
        assert.ok(st.curVisible, 'the current section’s link is in view');
        seen.push(st.bar);
      }
      for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `progress grows: ${seen}`);
      assert.ok(seen.at(-1) > 0.9, `at the references the bar is nearly full (${seen.at(-1)})`);
      // a section heading is not hidden under the sticky bar after a jump
      await page.click('nav.toc a[href="#scaling"]');
      await page.waitForFunction(() => document.querySelector('nav.toc').dataset.current === 'scaling');
      const gap = await page.evaluate(() => document.querySelector('#scaling h2').getBoundingClientRect().top - document.querySelector('nav.toc').getBoundingClientRect().bottom);
      assert.ok(gap >= 0, `the heading is below the table of contents (${gap.toFixed(0)} px)`);
      await page.screenshot({ path: site.shot(`toc-${width}.png`) });
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });
}

test('citations: each idea links to its reference, and every reference has its arXiv (or original post) link', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    const refs = await page.$$eval('#references li', (lis) => lis.map((li) => ({ id: li.id, text: li.textContent, href: li.querySelector('a').href })));
    const want = {
      'ref-vaswani': 'https://arxiv.org/abs/1706.03762', 'ref-roformer': 'https://arxiv.org/abs/2104.09864',
      'ref-alibi': 'https://arxiv.org/abs/2108.12409', 'ref-nope': 'https://arxiv.org/abs/2305.19466',
      'ref-pi': 'https://arxiv.org/abs/2306.15595', 'ref-yarn': 'https://arxiv.org/abs/2309.00071',
      'ref-longrope': 'https://arxiv.org/abs/2402.13753', 'ref-llama3': 'https://arxiv.org/abs/2407.21783',
      'ref-mrope': 'https://arxiv.org/abs/2409.12191', 'ref-barbero': 'https://arxiv.org/abs/2410.06205',
      'ref-ntk': 'https://www.reddit.com/r/LocalLLaMA/comments/14lz7j5/', 'ref-dynamic': 'https://www.reddit.com/r/LocalLLaMA/comments/14mrgpr/',
      // sections 6.1 and 6.2
      'ref-qwen25vl': 'https://arxiv.org/abs/2502.13923', 'ref-qwen3vl': 'https://github.com/QwenLM/Qwen3-VL',
      'ref-pixtral': 'https://arxiv.org/abs/2410.07073', 'ref-gemma3': 'https://arxiv.org/abs/2503.19786',
      'ref-llama4': 'https://ai.meta.com/blog/llama-4-multimodal-intelligence/',
    };
    assert.deepEqual(Object.fromEntries(refs.map((r) => [r.id, r.href])), want);
    // each citation sits in the section of its idea and points at an existing reference
    const cites = await page.$$eval('a.cite', (as) => as.map((a) => ({ section: a.closest('section').id, target: a.getAttribute('href').slice(1) })));
    const where = (t) => cites.filter((c) => c.target === t).map((c) => c.section);
    for (const c of cites) assert.ok(want[c.target], `${c.target} exists`);
    assert.ok(where('ref-roformer').includes('rope'));
    assert.ok(where('ref-barbero').includes('rope'));
    assert.ok(where('ref-mrope').includes('rope'));
    assert.ok(where('ref-vaswani').includes('sinusoidal'));
    assert.ok(where('ref-alibi').includes('alibi'));
    for (const t of ['ref-pi', 'ref-ntk', 'ref-dynamic', 'ref-yarn', 'ref-longrope', 'ref-llama3']) assert.ok(where(t).includes('scaling'), t);
    assert.ok(where('ref-nope').includes('why') && where('ref-nope').includes('lab'));
    for (const t of ['ref-mrope', 'ref-qwen25vl', 'ref-qwen3vl', 'ref-pixtral']) assert.ok(where(t).includes('multimodal'), t);
    for (const t of ['ref-gemma3', 'ref-llama4', 'ref-nope']) assert.ok(where(t).includes('layers'), t);
    assert.ok(where('ref-vaswani').includes('rotation') && where('ref-roformer').includes('rotation'));
    assert.equal(new Set(cites.map((c) => c.target)).size, 17, 'every reference is cited where its idea appears');
    // following a citation lands on its reference
    await page.click('#rope a.cite[href="#ref-roformer"]');
    await page.waitForFunction(() => { const r = document.getElementById('ref-roformer').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('code beside the math: PyTorch and posenc JS side by side for sinusoidal, RoPE and ALiBi, each copyable', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    const pairs = await page.$$eval('.code-pair', (ps) => ps.map((p) => ({
      section: p.closest('section').id,
      captions: [...p.querySelectorAll('figcaption')].map((f) => f.firstElementChild.textContent),
      codes: [...p.querySelectorAll('code')].map((c) => c.textContent),
      boxes: [...p.querySelectorAll('figure')].map((f) => f.getBoundingClientRect()).map((r) => ({ x: r.x, y: r.y })),
    })));
    assert.deepEqual(pairs.map((p) => p.section), ['sinusoidal', 'rope', 'rotation', 'alibi', 'multimodal', 'layers']);
    for (const p of pairs) {
      assert.deepEqual(p.captions, ['PyTorch', 'posenc (JavaScript)']);
      assert.match(p.codes[0], /^import (math, )?torch/);
      assert.match(p.codes[1], /^import \{ init \} from 'posenc';/);
      assert.ok(Math.abs(p.boxes[0].y - p.boxes[1].y) < 2 && p.boxes[1].x > p.boxes[0].x, 'side by side at 1280 px');
    }
    assert.match(pairs[1].codes[1], /rope\.apply\(t, \{ shape: \[batch, seq, heads, 64\], layout: 'bshd', positions \}\)/);
    assert.match(pairs.find((p) => p.section === 'alibi').codes[1], /pe\.alibiBias\(heads, qLen, kLen/);
    // copy: the clipboard gets the listing, and the button says so
    const btn = page.locator('#rope .code-pair figure').nth(1).locator('button.copy');
    await btn.click();
    await page.waitForFunction(() => document.querySelectorAll('#rope .code-pair button.copy')[1].hasAttribute('data-copied'));
    assert.equal(await btn.textContent(), 'Copied');
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), pairs[1].codes[1]);
    // the code is valid JavaScript (parsed, not run: it names the reader's own tensors)
    for (const p of pairs) {
      const ok = await page.evaluate((src) => { try { void new Function(`return (async () => { ${src.replace(/^import .*$/m, '')} });`); return true; } catch (e) { return e.message; } }, p.codes[1]);
      assert.equal(ok, true, `${p.section}: ${ok}`);
    }
    await page.locator('#alibi .code-pair').screenshot({ path: site.shot('code-alibi.png') });
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('the code listings are the same in English and Chinese: in a page opened in either, and after a switch', async () => {
  const listings = (page) => page.$$eval('.code-pair', (ps) => ps.map((p) => ({
    id: p.closest('section').id,
    codes: [...p.querySelectorAll('code')].map((c) => c.textContent),
    // the listing is not for translation tools either: every code element says translate="no"
    noTranslate: [...p.querySelectorAll('code')].every((c) => c.closest('[translate="no"]')),
  })));
  const en = await open('index.html');
  const zh = await open('index.html?lang=zh');
  try {
    const a = await listings(en.page), b = await listings(zh.page);
    assert.equal(a.length, 6);
    assert.ok(a.every((x) => x.codes.length === 2 && x.codes.every((c) => c.length > 100) && x.noTranslate));
    assert.deepEqual(b, a, 'Chinese page: the same listings, character for character');
    await en.page.evaluate(() => window.posencWidgets.setLang('zh'));
    await en.page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
    assert.deepEqual(await listings(en.page), a, 'after switching to Chinese');
    // the captions around them are translated (the copy button), the listings not
    assert.match(await zh.page.$eval('.code-pair button.copy', (b) => b.textContent), /[\u4e00-\u9fff]/);
    assert.deepEqual([...en.errors, ...zh.errors], []);
  } finally {
    await en.close();
    await zh.close();
  }
});

test('<pe-aliasing>: float16 ids round to multiples of 4 above 4096, bfloat16 far earlier; posenc keeps every angle', async () => {
  const { page, errors, close } = await open('index.html');
  try {
    const sel = '#alias-w';
    const st = await settle(page, sel);
    assert.equal(st.state, 'ready', st.error);
    const read = () => page.$$eval(`${sel} table tbody tr`, (trs) => trs.map((tr) => [...tr.cells].slice(1).map((c) => ({ v: c.textContent, same: c.classList.contains('pe-al-same') }))));
    let rows = await read();
    const ps = [4096, 4097, 4098, 4099, 4100, 4101, 4102, 4103];
    assert.deepEqual(rows[0].map((c) => Number(c.v)), ps.map(f16int));
    assert.ok(rows[0].every((c) => Number(c.v) % 4 === 0), 'float16 ids are multiples of 4 here');
    assert.deepEqual(rows[1].map((c) => Number(c.v)), ps.map(() => 4096), 'bfloat16: all eight are 4096');
    assert.deepEqual(rows[2].map((c) => Number(c.v)), ps);
    assert.equal(await page.getAttribute(sel, 'data-distinct'), '3,1,8');
    // cos of the fastest pair (θ₀ = 1): posenc's row is cos(p) itself, the float16 row cos of the rounded id
    const n = (s) => Number(s.replace('−', '-'));
    rows.slice(4).forEach((r) => assert.equal(r.length, 8));
    ps.forEach((p, i) => {
      assert.ok(Math.abs(n(rows[6][i].v) - Math.cos(p)) < 1e-3, `posenc cos at ${p}`);
      assert.ok(Math.abs(n(rows[4][i].v) - Math.cos(f16int(p))) < 1e-3, `float16 cos at ${p}`);
    });
    assert.deepEqual(rows[0].map((c) => c.same), [false, true, true, false, true, true, false, true], 'repeats are marked');
    // below 2048 float16 is exact; bfloat16 already rounds above 256
    await page.$eval(`${sel} input[data-key="start"]`, (i) => { i.value = '300'; i.dispatchEvent(new Event('input', { bubbles: true })); });
    await page.waitForFunction(() => document.querySelector('#alias-w table tbody tr th + td')?.textContent === '300');
    rows = await read();
    assert.deepEqual(rows[0].map((c) => Number(c.v)), ps.map((_, i) => 300 + i));
    assert.ok(rows[1].some((c) => c.same), 'bfloat16 merges neighbours at 300');
    assert.ok(rows[1].every((c) => Number(c.v) % 2 === 0), 'bfloat16 ids are even at 300');
    await page.locator(sel).screenshot({ path: site.shot('aliasing.png') });
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});

test('the guided path in Chinese: no English left in the table of contents, citations, code captions and <pe-aliasing>', async () => {
  const { page, errors, close } = await open('index.html?lang=zh', { width: 390 });
  try {
    await settle(page, '#alias-w');
    const texts = [
      ...await visibleTexts(page, 'nav.toc'), ...await visibleTexts(page, '#references'),
      ...await visibleTexts(page, '#alias-w'),
    ];
    for (const sel of ['#rope .cites', '#scaling .cites', '#rope .code-pair', '#rope .code-title']) texts.push(...await visibleTexts(page, sel));
    const english = texts.filter(isEnglish);
    assert.deepEqual(english, []);
    assert.ok(texts.includes('参考文献') && texts.includes('复制') && texts.includes('这些想法的出处：'), JSON.stringify(texts.slice(0, 30)));
    assert.equal(await page.$eval('#rope a.cite', (a) => a.textContent), 'Su 等 2021');
    await page.locator('#alias-w').screenshot({ path: site.shot('aliasing-zh-390.png') });
    assert.deepEqual(errors, []);
  } finally {
    await close();
  }
});
