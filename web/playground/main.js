// The playground page's own script: its headings and prose in English and Chinese. The widgets come from
// posenc-widgets.js (loaded by its own script tag, as on any page); this script talks to that bundle through
// window.posencWidgets and the 'pe-lang-change' event, so the page never carries a second copy of them.
// Elements with data-i18n="key" get their text from the strings below; data-i18n-aria sets aria-label.

import { CONTENT_STRINGS } from './strings-content.js';

const STRINGS = {
  en: {
    'page.title': 'posenc playground — position encodings, live',
    'page.subtitle': 'position encodings for transformers, computed live in your browser',
    'page.lede': 'Every picture on this page is computed as you watch by the posenc WebAssembly core, and the tiny transformers are trained by this project on this project\u2019s data. Move a control and the numbers change; the address bar keeps your settings, so a view can be shared.',
    'page.nav': 'Sections',
    'page.footer': 'posenc · MIT licence · the widgets on this page can be embedded in any page with one script tag: see the example blog post.',
    'page.blog': 'Example blog post with embedded widgets',
    'sec.why': 'Why position',
    'sec.sinusoidal': 'Sinusoidal',
    'sec.learned': 'Learned',
    'sec.rope': 'RoPE',
    'sec.alibi': 'ALiBi',
    'sec.scaling': 'Length extension',
    'sec.lab': 'Tiny-model lab',
    'sec.precision': 'Precision',
    'sec.speed': 'Speed',
    'sec.pitfalls': 'Pitfalls',
    'sec.references': 'References',
    'lede.references': 'The papers and posts behind each section, in the order the ideas appear on this page.',
    'cite.label': 'Where the ideas come from:',
    'cite.etal': 'et al.',
    'idea.nope': 'a decoder without any position encoding (NoPE) can still work out order from the causal mask:',
    'idea.sin': 'the sinusoidal table:',
    'idea.learnedcmp': 'learned positions, compared with it:',
    'idea.rope': 'rotary embeddings:',
    'idea.barbero': 'which RoPE frequencies models really use:',
    'idea.mrope': 'RoPE over time, height and width (M-RoPE, Qwen2-VL):',
    'idea.alibi': 'ALiBi:',
    'idea.pi': 'position interpolation:',
    'idea.ntk': 'NTK-aware scaling:',
    'idea.dynamic': 'dynamic NTK:',
    'idea.yarn': 'YaRN:',
    'idea.longrope': 'LongRoPE:',
    'idea.llama3': 'Llama 3 scaling:',
    'idea.nopelab': 'NoPE against the others on length generalisation:',
    'code.title': 'In code',
    'code.copy': 'Copy',
    'code.copied': 'Copied',
    'toc.progress': 'section {n} of {total}',
    'lede.why': 'Attention compares every token with every other token, and nothing in that comparison says where a token stands. Without a position encoding, \u201c猫 吃 鱼\u201d (cat eats fish) and \u201c鱼 吃 猫\u201d (fish eats cat) look the same to it.',
    'lede.sinusoidal': 'The original Transformer adds a fixed table of sines and cosines to the token embeddings: each pair of columns is a clock hand turning at its own speed.',
    'lede.learned': 'GPT-2 and OPT learn one vector per position instead. It works well inside the trained range, and there is simply nothing to look up past it.',
    'lede.rope': 'Rotary embeddings turn each pair of query and key dimensions by an angle proportional to the position, so their dot product depends only on the distance between them.',
    'lede.alibi': 'ALiBi adds no vector at all: each head subtracts a penalty proportional to the distance from its attention scores, with a different slope per head.',
    'lede.scaling': 'To read past the trained length, RoPE models stretch their frequencies: position interpolation, NTK-aware, dynamic NTK, YaRN, LongRoPE and Llama 3 each do it differently.',
    'lede.lab': 'Small transformers trained by this project, one per encoding on the same data and budget. Type an input, watch the attention, and see how each one copes with sequences longer than it was trained on.',
    'lede.precision': 'At position one million the angle is a million radians. How accurately can a float store it, and what does that do to cos and sin?',
    'lede.speed': 'The benchmark, run here in your browser: the SIMD128 build against the scalar build against a plain JavaScript loop.',
    'lede.pitfalls': 'Mistakes that are easy to make and that explainers often repeat, each shown live.',
  },
  zh: {
    'page.title': 'posenc 演练场 —— 位置编码，实时计算',
    'page.subtitle': 'Transformer 的位置编码，在你的浏览器里实时计算',
    'page.lede': '本页的每一幅图都由 posenc 的 WebAssembly 内核当场算出；其中的小型 Transformer 由本项目在自己的数据上训练。拖动控件，数字随之改变；地址栏记录着你的设置，可以把当前视图分享出去。',
    'page.nav': '章节',
    'page.footer': 'posenc · MIT 许可 · 本页的组件只需一个 script 标签即可嵌入任何网页：见示例博客文章。',
    'page.blog': '嵌入组件的示例博客文章',
    'sec.why': '为什么需要位置',
    'sec.sinusoidal': '正弦位置编码',
    'sec.learned': '可学习的位置编码',
    'sec.rope': '旋转位置编码（RoPE）',
    'sec.alibi': '线性偏置（ALiBi）',
    'sec.scaling': '长度外推',
    'sec.lab': '小模型实验室',
    'sec.precision': '数值精度',
    'sec.speed': '速度',
    'sec.pitfalls': '常见陷阱',
    'sec.references': '参考文献',
    'lede.references': '各节背后的论文与帖子，按它们在本页出现的顺序排列。',
    'cite.label': '这些想法的出处：',
    'cite.etal': '等',
    'idea.nope': '不加任何位置编码的解码器（NoPE）仍能从因果掩码推断顺序：',
    'idea.sin': '正弦位置表：',
    'idea.learnedcmp': '可学习位置及其与正弦表的比较：',
    'idea.rope': '旋转位置编码：',
    'idea.barbero': '模型实际用到哪些 RoPE 频率：',
    'idea.mrope': '在时间、高度、宽度上的 RoPE（M-RoPE，Qwen2-VL）：',
    'idea.alibi': 'ALiBi：',
    'idea.pi': '位置插值：',
    'idea.ntk': 'NTK 感知缩放：',
    'idea.dynamic': '动态 NTK：',
    'idea.yarn': 'YaRN：',
    'idea.longrope': 'LongRoPE：',
    'idea.llama3': 'Llama 3 的缩放：',
    'idea.nopelab': 'NoPE 与其他编码在长度泛化上的比较：',
    'code.title': '代码',
    'code.copy': '复制',
    'code.copied': '已复制',
    'toc.progress': '第 {n} 节，共 {total} 节',
    'lede.why': '注意力让每个词元与所有其他词元比较，而这种比较本身并不知道词元的位置。没有位置编码，“猫 吃 鱼”和“鱼 吃 猫”在它看来是一样的。',
    'lede.sinusoidal': '最初的 Transformer 把一张固定的正弦、余弦表加到词嵌入上：每一对列就像一根以自己速度转动的时钟指针。',
    'lede.learned': 'GPT-2 和 OPT 则为每个位置学习一个向量。在训练长度之内效果很好，超出之后就根本无表可查。',
    'lede.rope': '旋转位置编码把查询和键的每一对维度旋转一个与位置成正比的角度，于是它们的点积只取决于两者之间的距离。',
    'lede.alibi': 'ALiBi 完全不加向量：每个注意力头从注意力分数中减去一个与距离成正比的惩罚，每个头的斜率各不相同。',
    'lede.scaling': '为了读取超过训练长度的序列，RoPE 模型会拉伸其频率：位置插值、NTK 感知、动态 NTK、YaRN、LongRoPE 和 Llama 3 各有各的做法。',
    'lede.lab': '本项目训练的小型 Transformer，每种编码一个，数据与训练预算完全相同。输入一段文字，观察注意力，看看它们如何应对比训练时更长的序列。',
    'lede.precision': '在位置一百万处，角度就是一百万弧度。浮点数能把它存得多准？这又会怎样影响 cos 和 sin？',
    'lede.speed': '在你的浏览器里运行基准测试：SIMD128 版本、标量版本与纯 JavaScript 循环的对比。',
    'lede.pitfalls': '一些很容易犯、讲解文章也常常重复的错误，每一个都现场演示。',
  },
};

function translatePage(api) {
  const { t } = api;
  for (const el of document.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of document.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  document.title = t('page.title');
}

// The table of contents stays at the top of the screen and says where the reader is: the section whose
// heading was passed last is marked (aria-current="location", data-current on <nav>), and the bar under the
// links fills with the share of the page read so far.
function tocProgress() {
  const nav = document.querySelector('nav.toc');
  if (!nav) return;
  const links = [...nav.querySelectorAll('a[href^="#"]')];
  const sections = links.map((a) => document.getElementById(a.getAttribute('href').slice(1))).filter(Boolean);
  const bar = nav.querySelector('.toc-progress span');
  let frame = 0;
  const update = () => {
    frame = 0;
    const line = nav.getBoundingClientRect().bottom + 48; // below the scroll margin a jump leaves
    let current = 0;
    sections.forEach((s, i) => { if (s.getBoundingClientRect().top <= line) current = i; });
    // at the foot of the page the last sections cannot reach the line: the lowest one on screen is being read
    const max = document.documentElement.scrollHeight - innerHeight;
    if (scrollY >= max - 2) sections.forEach((s, i) => { if (s.getBoundingClientRect().top < innerHeight * 0.6) current = Math.max(current, i); });
    links.forEach((a, i) => {
      if (i === current) a.setAttribute('aria-current', 'location');
      else a.removeAttribute('aria-current');
    });
    if (nav.dataset.current !== sections[current].id) {
      nav.dataset.current = sections[current].id;
      // on a phone the links scroll sideways: keep the current one in view
      const a = links[current], ol = a.closest('ol');
      if (ol.scrollWidth > ol.clientWidth) ol.scrollTo({ left: a.offsetLeft - ol.clientWidth / 2 + a.offsetWidth / 2 });
    }
    bar.style.transform = `scaleX(${max > 0 ? Math.min(1, scrollY / max) : 1})`;
  };
  addEventListener('scroll', () => { frame ||= requestAnimationFrame(update); }, { passive: true });
  addEventListener('resize', () => { frame ||= requestAnimationFrame(update); });
  update();
}

// Copy buttons beside each code listing.
function copyButtons(api) {
  for (const b of document.querySelectorAll('.code-pair button.copy')) {
    b.addEventListener('click', async () => {
      const code = b.closest('figure').querySelector('code').textContent;
      try {
        await navigator.clipboard.writeText(code);
      } catch {
        // no clipboard permission (an http page, a headless test): select the text for Ctrl+C instead
        const r = document.createRange();
        r.selectNodeContents(b.closest('figure').querySelector('code'));
        getSelection().removeAllRanges();
        getSelection().addRange(r);
      }
      b.textContent = api.t('code.copied');
      b.dataset.copied = '';
      setTimeout(() => { b.textContent = api.t('code.copy'); delete b.dataset.copied; }, 1500);
    });
  }
}

// After a jump to a section (#fragment on load, a table-of-contents link), the widgets around it start and
// settle their heights within a moment; a widget just above the target, whose tail sits under the sticky bar,
// can be the browser's scroll anchor and push the target down. Until the reader scrolls (or 5 s pass), the
// target is put back at the top whenever the page's height changes, before the browser paints.
function pinJumpTarget(target) {
  if (!target || typeof ResizeObserver !== 'function') return;
  const main = document.querySelector('main');
  let height = main.offsetHeight;
  const ro = new ResizeObserver(() => {
    if (main.offsetHeight === height) return; // the observer's first call reports the size it started with
    height = main.offsetHeight;
    target.scrollIntoView({ block: 'start' });
  });
  const EVENTS = ['wheel', 'touchstart', 'keydown', 'mousedown'];
  const stop = () => {
    ro.disconnect();
    for (const ev of EVENTS) removeEventListener(ev, stop, true);
  };
  for (const ev of EVENTS) addEventListener(ev, stop, { capture: true, passive: true });
  setTimeout(stop, 5000);
  ro.observe(main);
}

const hashTarget = () => {
  try {
    return location.hash.length > 1 ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
  } catch {
    return null;
  }
};

function start(api) {
  api.registerStrings(STRINGS);
  api.registerStrings(CONTENT_STRINGS);
  translatePage(api);
  tocProgress();
  copyButtons(api);
  document.addEventListener('pe-lang-change', () => translatePage(api));
  document.documentElement.dataset.page = 'ready';
  // the widgets now hold their heights: show a page opened at #section, on that section (index.html)
  if (document.documentElement.hasAttribute('data-jump')) {
    hashTarget()?.scrollIntoView({ block: 'start' });
    document.documentElement.removeAttribute('data-jump');
    pinJumpTarget(hashTarget());
  }
  addEventListener('hashchange', () => pinJumpTarget(hashTarget()));
}

if (window.posencWidgets) start(window.posencWidgets);
else document.addEventListener('pe-widgets-ready', (e) => start(e.detail), { once: true });
