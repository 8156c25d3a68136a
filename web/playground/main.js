// The playground page's own script: its headings and prose in English and Chinese. The widgets come from
// posenc-widgets.js (loaded by its own script tag, as on any page); this script talks to that bundle through
// window.posencWidgets and the 'pe-lang-change' event, so the page never carries a second copy of them.
// Elements with data-i18n="key" get their text from the strings below; data-i18n-aria sets aria-label.

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

function start(api) {
  api.registerStrings(STRINGS);
  translatePage(api);
  document.addEventListener('pe-lang-change', () => translatePage(api));
  document.documentElement.dataset.page = 'ready';
  // the widgets now hold their heights: show a page opened at #section, on that section (index.html)
  if (document.documentElement.hasAttribute('data-jump')) {
    document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView({ block: 'start' });
    document.documentElement.removeAttribute('data-jump');
  }
}

if (window.posencWidgets) start(window.posencWidgets);
else document.addEventListener('pe-widgets-ready', (e) => start(e.detail), { once: true });
