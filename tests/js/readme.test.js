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

/** The ```js blocks of the README's "## Example" section (up to the next "## " heading), in order. */
function exampleBlocks(text) {
  const start = text.search(/^## Example\s*$/m);
  assert.ok(start >= 0, 'README.md has no "## Example" section');
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
