// The README's Example section runs as written: its ```js blocks are taken out of README.md, `from 'posenc'` is
// pointed at web/src/index.js (what the package's "exports" map resolves to), and the module runs with
// `queries` supplied (seeded randn data of the size it places). Its results are then held to a computation that
// does not go through the example: cos/sin and the rotated q against Llama 3.1's inverse frequencies written out
// from Hugging Face's _compute_llama3_parameters and Math.cos/Math.sin in double, and q bit for bit against
// pe.rope() built from camelCase options (not the config.json path the example takes) on a copy of the data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { init } from '../../web/src/index.js';
import { makeRng, randnF32, refApply, maxAbsDiff } from './helpers.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The ```js blocks of the README's "## <title>" section (up to the next "## " heading), in order. */
function exampleBlocks(text, title = 'Example') {
  const start = text.search(new RegExp(`^## ${title}\\s*$`, 'm'));
  assert.ok(start >= 0, `README.md has no "## ${title}" section`);
  const rest = text.slice(start + 1);
  const next = rest.search(/^## /m);
  const section = next < 0 ? rest : rest.slice(0, next);
  return [...section.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

// The example's Llama 3.1 shapes: 32 heads of 128, a (1, 4, 32, 128) q at positions 0..3.
const SHAPE = [1, 4, 32, 128];
const POSITIONS = [0, 1, 2, 3];

/** Llama 3 inverse frequencies in double, step by step as transformers' _compute_llama3_parameters has them. */
function llama3InvFreq({ base, dim, factor, lowFreqFactor, highFreqFactor, originalMax }) {
  const lowFreqWavelen = originalMax / lowFreqFactor;
  const highFreqWavelen = originalMax / highFreqFactor;
  return Float64Array.from({ length: dim / 2 }, (_, i) => {
    const invFreq = 1 / Math.pow(base, (2 * i) / dim);
    const wavelen = (2 * Math.PI) / invFreq;
    if (wavelen < highFreqWavelen) return invFreq;
    if (wavelen > lowFreqWavelen) return invFreq / factor;
    const smooth = (originalMax / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
    return (1 - smooth) * (invFreq / factor) + smooth * invFreq;
  });
}

/**
 * Runs the example; returns what it printed, its module bindings cos and sin, and the contents of every
 * pe.tensor it freed (read just before free(), since the example frees q after printing).
 */
async function runExample(queries) {
  const blocks = exampleBlocks(readme);
  assert.ok(blocks.length >= 1, 'the Example section has no ```js block');
  let source = blocks.join('\n');
  assert.match(source, /from 'posenc';/, "the example imports from 'posenc'");
  const entry = new URL('../../web/src/index.js', import.meta.url).href;
  source = source.replaceAll("from 'posenc';", `from ${JSON.stringify(entry)};`);
  source += '\nexport { cos, sin };\n';
  const dir = new URL('../../build/readme-example/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL('example.mjs', dir);
  writeFileSync(file, source);

  const pe = await init();
  const probe = pe.tensor(1);
  const proto = Object.getPrototypeOf(probe);
  probe.free();
  const freed = [];
  const { free } = proto;
  proto.free = function freeAndRecord() {
    if (!this.freed) freed.push(this.array.slice());
    return free.call(this);
  };
  const printed = [];
  const { log } = console;
  console.log = (...args) => printed.push(args);
  globalThis.queries = queries;
  try {
    const bindings = await import(`${pathToFileURL(file.pathname).href}?run=${Date.now()}`);
    return { printed, freed, cos: bindings.cos, sin: bindings.sin };
  } finally {
    console.log = log;
    proto.free = free;
    delete globalThis.queries;
  }
}

test('README Example: runs as written and computes Llama 3.1 RoPE (cosSin and apply against the formulas)', async () => {
  const n = SHAPE.reduce((a, b) => a * b, 1);
  const queries = randnF32(makeRng(2024), n);
  const { printed, freed, cos, sin } = await runExample(queries);

  const invFreq = llama3InvFreq({ base: 500000, dim: 128, factor: 8, lowFreqFactor: 1, highFreqFactor: 4,
    originalMax: 8192 });
  assert.ok(cos instanceof Float32Array && sin instanceof Float32Array, 'cosSin gives Float32Arrays');
  assert.equal(cos.length, POSITIONS.length * 64);
  assert.equal(sin.length, POSITIONS.length * 64);
  const cosRef = new Float64Array(cos.length);
  const sinRef = new Float64Array(sin.length);
  POSITIONS.forEach((p, s) => invFreq.forEach((f, i) => {
    cosRef[s * 64 + i] = Math.cos(p * f); // llama3's attention factor is 1
    sinRef[s * 64 + i] = Math.sin(p * f);
  }));
  // Angles reduced in double, float32 polynomials: ~2e-7 (see golden.test.js for the budget).
  for (const [name, got, ref] of [['cos', cos, cosRef], ['sin', sin, sinRef]]) {
    const { err, at } = maxAbsDiff(got, ref);
    assert.ok(err <= 2e-6, `${name}[${at}] off by ${err}`);
  }

  assert.equal(freed.length, 1, 'the example frees the one tensor it makes');
  const [q] = freed;
  assert.equal(q.length, n);
  const expected = refApply(queries, { shape: SHAPE, layout: 'bshd', positions: POSITIONS, invFreq, pairing: 'half' });
  // |x| <= ~4.5 randn, three float32 roundings on top of the cos/sin error (golden.test.js's 3e-5 budget).
  const { err, at } = maxAbsDiff(q, expected);
  assert.ok(err <= 3e-5, `q[${at}] off by ${err}`);
  let moved = 0;
  for (let i = 0; i < n; i++) if (q[i] !== queries[i]) moved++;
  assert.ok(moved > n / 2, `apply rotated the data (${moved} of ${n} values changed)`);

  // The same computation through the other door: pe.rope with camelCase options, on a copy, bit for bit.
  const pe = await init();
  const direct = pe.rope({ headDim: 128, base: 500000, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1,
    highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } });
  const copy = queries.slice();
  direct.apply(copy, { shape: SHAPE, layout: 'bshd', positions: POSITIONS });
  assert.deepEqual(new Uint32Array(q.buffer), new Uint32Array(copy.buffer), 'q equals pe.rope(...).apply bit for bit');
  const tables = direct.cosSin(POSITIONS);
  assert.deepEqual(new Uint32Array(cos.buffer), new Uint32Array(tables.cos.buffer), 'cos bit for bit');
  assert.deepEqual(new Uint32Array(sin.buffer), new Uint32Array(tables.sin.buffer), 'sin bit for bit');

  // What it prints: the first 8 values of the rotated q (position 0, where the rotation is the identity).
  assert.equal(printed.length, 1, 'the example prints one line');
  const [shown] = printed[0];
  assert.ok(shown instanceof Float32Array && shown.length === 8);
  assert.deepEqual(Array.from(shown), Array.from(q.subarray(0, 8)));
  assert.deepEqual(Array.from(shown), Array.from(queries.subarray(0, 8)));
});

// ---------------------------------------------------------------------------------------------------------
// "Using posenc in a runtime": the decode loop runs as written (its `step` exported), on a left-padded batch of
// 2 (lengths 6 and 4 in a prefill of 6 slots) and 4 decode steps, with seeded float16 projections. Each step's
// output is held to a float64 computation that shares nothing with the block: the 16-bit inputs decoded, q and k
// rotated with Math.cos / Math.sin at HF's position ids (real tokens count from 0), attention over each
// sequence's real tokens only (no padding, no mask), in double. Bound per element: out is the float32 result
// rounded once to float16 (u·|ref|, u = 2^-11); q and k are each rounded once to float16 after their rotation
// (rope.apply: within 1 ulp, 2u relative), which moves a logit by at most 4u·A (A: the largest scale·Σ|q_d k_d|
// of the step) and the output by at most 2·4u·A·max|v|; plus 2e-5 for the float32 arithmetic
// (attention-batch.test.js's bound at these sizes).
const F16 = {
  decode(h) {
    const e = (h >> 10) & 31;
    const m = h & 1023;
    const v = e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25);
    return h & 0x8000 ? -v : v;
  },
  /** n random float16 patterns of values in (-2, 2) */
  random(rng, n) {
    return Uint16Array.from({ length: n }, () => (rng.uniform() < 0.5 ? 0x8000 : 0) | ((15 - rng.int(0, 6)) << 10) | rng.int(0, 1023));
  },
};

async function importBlock(title, exportsLine) {
  let source = exampleBlocks(readme, title).join('\n');
  const entry = new URL('../../web/src/index.js', import.meta.url).href;
  source = source.replaceAll("from 'posenc';", `from ${JSON.stringify(entry)};`) + exportsLine;
  const dir = new URL('../../build/readme-example/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const file = new URL('runtime.mjs', dir);
  writeFileSync(file, source);
  return import(`${pathToFileURL(file.pathname).href}?run=${Date.now()}`);
}

test('README "Using posenc in a runtime": the decode loop runs as written and matches a float64 computation', async () => {
  const mod = await importBlock('Using posenc in a runtime', '\nexport { step, B, H, KV, D, W };\n');
  const { step, B, H, KV, D, W } = mod;
  const rng = makeRng(77);
  const invFreq = Float64Array.from({ length: D / 2 }, (_, i) => 1 / Math.pow(10000, (2 * i) / D));
  const lengths = [6, 4];
  const P = 6;
  const seqs = lengths.map(() => ({ keys: [], values: [], n: 0 })); // real tokens: rotated keys, values
  const rotate = (x, p) => refApply(x, { shape: [1, 1, 1, D], layout: 'bshd', positions: [p], invFreq, pairing: 'half' });
  let worst = 0;
  for (let phase = 0; phase < 5; phase++) {
    const T = phase === 0 ? P : 1;
    const newMask = Int32Array.from({ length: B * T }, (_, i) => (phase > 0 || i % T >= P - lengths[Math.floor(i / T)] ? 1 : 0));
    const qkv = F16.random(rng, B * T * W);
    const input = Float64Array.from(qkv, F16.decode);
    const out = step(qkv, T, newMask);
    assert.ok(out instanceof Uint16Array && out.length === B * T * H * D, 'step returns float16 bits [B, T, H, D]');
    const scale = Math.fround(1 / Math.sqrt(D));
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T; t++) {
        if (!newMask[b * T + t]) continue; // padding rows mean nothing
        const s = seqs[b];
        const p = s.n++;
        const tokAt = (b * T + t) * W;
        const head = (h) => input.subarray(tokAt + h * D, tokAt + (h + 1) * D);
        const qs = Array.from({ length: H }, (_, h) => rotate(head(h), p));
        for (let g = 0; g < KV; g++) {
          (s.keys[g] ??= []).push(rotate(head(H + g), p));
          (s.values[g] ??= []).push(head(H + KV + g));
        }
        for (let h = 0; h < H; h++) {
          const g = Math.floor(h / (H / KV));
          const lg = s.keys[g].map((kk) => scale * kk.reduce((acc, x, d) => acc + x * qs[h][d], 0));
          const A = Math.max(...s.keys[g].map((kk) => scale * kk.reduce((acc, x, d) => acc + Math.abs(x * qs[h][d]), 0)));
          const vmax = Math.max(...s.values[g].map((vv) => Math.max(...vv.map(Math.abs))));
          const m = Math.max(...lg);
          const w = lg.map((x) => Math.exp(x - m));
          const sum = w.reduce((a, x) => a + x, 0);
          for (let d = 0; d < D; d++) {
            const ref = w.reduce((acc, x, j) => acc + (x / sum) * s.values[g][j][d], 0);
            const got = F16.decode(out[((b * T + t) * H + h) * D + d]);
            const bound = 2 ** -11 * Math.abs(ref) + 8 * 2 ** -11 * A * vmax + 2e-5;
            worst = Math.max(worst, Math.abs(got - ref) / bound);
            assert.ok(Math.abs(got - ref) <= bound, `phase ${phase} b ${b} t ${t} h ${h} d ${d}: ${got} vs ${ref} (bound ${bound})`);
          }
        }
      }
    }
  }
  console.log(`# README runtime loop: worst err / bound ${worst.toFixed(3)}`);
});
