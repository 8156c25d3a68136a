// Issue 10's concrete examples, classes 1-3 and 5-7 (class 4, the tiny models, lives in tests/js/model*.test.js),
// each its own test on both builds, each on a fresh instance. Every example must end in a clean TypeError /
// RangeError whose message names the function and the argument, or in a right, finite result; and the
// instance must be intact afterwards: the known-good RoPE apply bit for bit (computed at start-up on a fresh
// instance), alibiSlopes(4) exact, the allocator working, canary tensors unchanged (tests/js/fuzz/env.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS } from './helpers.js';
import { instanceMaker } from './fuzz/run.js';
import { makeEnv } from './fuzz/env.js';
import { detached, lookAlike, proxyOf, changingLength, f32Data } from './fuzz/values.js';
import { refAlibiSlopes, refSinusoidal } from './fuzz/refs.js';

const maker = await instanceMaker();

/** A fresh instance of one build with its fuzz environment (canaries, known-good apply). */
async function freshEnv(simd) {
  const pe = await maker.make(simd);
  const other = await maker.make(!simd);
  return makeEnv(pe, other);
}

/**
 * Runs fn(pe). It must throw a TypeError or RangeError (not a wasm trap, not another class) whose message
 * contains `where` and one of `names` — or, when `right` is given, may return a value for which right(value)
 * returns null (else the problem). The instance must be intact afterwards.
 */
function expectClean(env, fn, { where, names, right = null }) {
  let value;
  let error = null;
  try {
    value = fn(env.pe);
  } catch (e) {
    error = e;
  }
  if (error !== null) {
    assert.ok(!(error instanceof WebAssembly.RuntimeError), `wasm trap: ${error.message}`);
    assert.ok(error instanceof TypeError || error instanceof RangeError, `threw ${error?.constructor?.name}: ${error?.message}`);
    assert.ok(error.message.includes(where), `the message does not name ${where}: ${error.message}`);
    assert.ok(
      names.some((n) => error.message.includes(n)),
      `the message names none of ${names.join(', ')}: ${error.message}`,
    );
    assert.doesNotMatch(error.message, /^[^:]*: [^,]*\(pe_status \d+\)$/, `a bare C status names no argument: ${error.message}`);
  } else {
    assert.ok(right !== null, `accepted (returned ${value?.constructor?.name ?? value}); expected a TypeError/RangeError naming ${names.join(' or ')}`);
    const bad = right(value);
    assert.equal(bad, null, `accepted with a wrong result: ${bad}`);
  }
  assert.equal(env.checkIntact(), null, 'instance damaged afterwards');
}

/** null if got[i] is within one float32 ulp of ref[i] for the spot indices, else the first that is not. */
function spots(got, refAt, idx, tol = (r) => Math.abs(r) * 2 ** -23 + 1e-30) {
  for (const i of idx) {
    const r = refAt(i);
    if (!(Math.abs(got[i] - r) <= tol(r))) return `[${i}] = ${got[i]}, expected ${r}`;
  }
  return null;
}

const allFinite = (a) => {
  for (let i = 0; i < a.length; i++) if (!Number.isFinite(a[i])) return `[${i}] = ${a[i]}`;
  return null;
};

/** The module's memory buffer: a look-alike over it has a byteOffset that would be a raw pointer. */
const LA = (env, len, byteOffset) => lookAlike(Float32Array.prototype, { length: len, buffer: env.wasmBuffer(), byteOffset });
const LAi32 = (env, len, byteOffset) => lookAlike(Int32Array.prototype, { length: len, buffer: env.wasmBuffer(), byteOffset });

const EXAMPLES = [];
const example = (name, run) => EXAMPLES.push([name, run]);

// ---- class 1: block sizes past 2^31 wrap ---------------------------------------------------------------------

example('class 1: pe.alibiSlopes(2**29 + 1)', (env) => {
  const n = 2 ** 29 + 1;
  expectClean(env, (pe) => pe.alibiSlopes(n), {
    where: 'alibiSlopes',
    names: ['nHeads'],
    right: (s) => (s.length !== n ? `length ${s.length}` : spots(s, (i) => Math.fround(slopeAt(n, i)), [0, 1, 2 ** 29 - 1, 2 ** 29])),
  });
});

example('class 1: pe.alibiBias(1, 1, 2**29 + 1)', (env) => {
  const k = 2 ** 29 + 1;
  expectClean(env, (pe) => pe.alibiBias(1, 1, k), {
    where: 'alibiBias',
    names: ['kLen', 'qLen', 'nHeads'],
    right: (b) => (b.length !== k ? `length ${b.length}` : spots(b, (j) => Math.fround(Math.fround(2 ** -8) * (j - (k - 1))), [0, 1, k - 1])),
  });
});

example('class 1: pe.sinusoidal(1, 2**29 + 1)', (env) => {
  const d = 2 ** 29 + 1;
  expectClean(env, (pe) => pe.sinusoidal(1, d), {
    where: 'sinusoidal',
    names: ['dModel', 'seqLen'],
    right: (t) => (t.length !== d ? `length ${t.length}` : spots(t, (c) => (c % 2 === 0 ? 0 : 1), [0, 1, d - 2, d - 1], () => 1e-7)),
  });
});

example('class 1: pe.rope({ headDim: 1024 }).cosSin(new Int32Array(2**20 + 1))', (env) => {
  const rope = env.pe.rope({ headDim: 1024 });
  // (2^20 + 1) x 512 floats per table, two tables: more than 4 GiB; it cannot succeed
  expectClean(env, () => rope.cosSin(new Int32Array(2 ** 20 + 1)), { where: 'rope.cosSin', names: ['positions', 'nFreq'] });
  rope.free();
});

example('class 1: attention with returnWeights at 16385 x 32768', (env) => {
  const qLen = 16385;
  const kLen = 32768;
  const q = new Float32Array(qLen);
  const k = new Float32Array(kLen);
  const v = new Float32Array(kLen).fill(1);
  expectClean(env, (pe) => pe.attention(q, k, v, { shape: { heads: 1, qLen, kLen, headDim: 1 }, returnWeights: true }), {
    where: 'attention',
    names: ['returnWeights', 'weights', 'qLen', 'kLen'],
    // q = k = 0: every logit 0, so each visible key weighs 1 / kLen and out is 1
    right: (r) => (r.weights?.length !== qLen * kLen ? `weights.length ${r.weights?.length}` : spots(r.weights, () => 1 / kLen, [0, kLen - 1, qLen * kLen - 1]) ?? spots(r.out, () => 1, [0, qLen - 1])),
  });
});

example('class 1: learned.lookup of a result past 2^31 bytes', (env) => {
  const dModel = 4096;
  const L = env.pe.learned(new Float32Array(2 * dModel).fill(0.5), { dModel });
  const n = 2 ** 17 + 1; // n * dModel = 2^29 + 4096 floats
  expectClean(env, () => L.lookup(new Int32Array(n)), {
    where: 'learned.lookup',
    names: ['positions', 'dModel'],
    right: (r) => (r.length !== n * dModel ? `length ${r.length}` : spots(r, () => 0.5, [0, n * dModel - 1])),
  });
  L.free();
});

example('class 1: alibiBiasFromMask of a result past 2^31 bytes', (env) => {
  const nHeads = 2 ** 13;
  const seq = 2 ** 16 + 1; // nHeads * seq = 2^29 + 8192 floats
  const mask = new Int32Array(seq).fill(1);
  expectClean(env, (pe) => pe.alibiBiasFromMask(nHeads, mask, { shape: [1, seq] }), {
    where: 'alibiBiasFromMask',
    names: ['nHeads', 'attentionMask', 'shape', 'seq'],
    right: (r) => (r.length !== nHeads * seq ? `length ${r.length}` : spots(r, (i) => Math.fround(slopeAt(nHeads, Math.floor(i / seq))) * (i % seq), [0, 1, seq - 1, nHeads * seq - 1])),
  });
});

example("class 1: apply's cached table past 2^31 bytes, then a normal apply on the same rope", (env) => {
  const rope = env.pe.rope({ headDim: 1024 });
  const S = 2 ** 19 + 1; // x: 2 GiB + 4 KiB of float32 (a JS array, zero pages until touched); its copy and its
  //                        cos/sin table (S x 512 x 2 floats) would need as much again each: more than 4 GiB
  let x = new Float32Array(S * 1024);
  expectClean(env, () => rope.apply(x, { shape: [1, S, 1, 1024] }), { where: 'rope.apply', names: ['shape', 'x', 'positions', 'table'] });
  x = null;
  const y = rope.apply(new Float32Array(2048).fill(1), { shape: [1, 2, 1, 1024], positions: [0, 0] });
  assert.ok(y.every((v) => v === 1), 'apply at position 0 must leave x unchanged');
  const z = rope.apply(Float32Array.from({ length: 2048 }, (_, i) => (i % 1024 === 0 ? 1 : 0)), { shape: [1, 2, 1, 1024], positions: [0, 1] });
  assert.ok(Math.abs(z[1024] - Math.cos(1)) < 1e-6 && Math.abs(z[1024 + 512] - Math.sin(1)) < 1e-6, 'apply at position 1 rotates pair 0 by 1 rad');
  rope.free();
  assert.equal(env.checkIntact(), null);
});

example('class 1: after try { pe.alibiSlopes(2**29 + 1) } catch {}, pe.alibiBias(8, 64, 64) is right and leaves other tensors alone', (env) => {
  const canary = env.pe.tensor(f32Data(4096, 77));
  try {
    env.pe.alibiSlopes(2 ** 29 + 1);
  } catch {
    // refused or not: what matters is what comes after
  }
  const b = env.pe.alibiBias(8, 64, 64);
  const s = Array.from(refAlibiSlopes(8), Math.fround);
  assert.equal(spots(b, (i) => Math.fround(s[Math.floor(i / 4096)] * ((i % 64) - Math.floor((i % 4096) / 64))), [0, 1, 63, 64, 4095, 4096, 8 * 4096 - 1]), null);
  assert.deepEqual(Array.from(canary.array), Array.from(f32Data(4096, 77)), 'an unrelated tensor changed');
  canary.free();
  assert.equal(env.checkIntact(), null);
});

// ---- class 2: objects posing as typed arrays -----------------------------------------------------------------

const LOOKALIKE_SITES = [
  ['rope.apply x', 'rope.apply', ['x'], (env) => env.pe.rope({ headDim: 4 }).apply(LA(env, 8, 0), { shape: [1, 2, 1, 4] })],
  ['rope.apply x (byteOffset 65536)', 'rope.apply', ['x'], (env) => env.pe.rope({ headDim: 4 }).apply(LA(env, 8, 65536), { shape: [1, 2, 1, 4] })],
  ['rope.apply options.k', 'rope.apply', ['k'], (env) => env.pe.rope({ headDim: 4 }).apply(new Float32Array(8), { shape: [1, 2, 1, 4], k: LA(env, 8, 1024) })],
  ['rope.apply options.positions', 'rope.apply', ['positions'], (env) => env.pe.rope({ headDim: 2 }).apply(new Float32Array([1, 0]), { shape: [1, 1, 1, 2], positions: LAi32(env, 1, 8) })],
  ['rope.rerotate x', 'rope.rerotate', ['x'], (env) => env.pe.rope({ headDim: 4 }).rerotate(LA(env, 8, 1024), 3)],
  ['rope.cosSin positions', 'rope.cosSin', ['positions'], (env) => env.pe.rope({ headDim: 2 }).cosSin(LAi32(env, 2, 8))],
  ['rope.cosSin options.out', 'rope.cosSin', ['out'], (env) => env.pe.rope({ headDim: 2 }).cosSin([1], { out: { cos: LA(env, 1, 64), sin: new Float32Array(1) } })],
  ['alibiBias options.out', 'alibiBias', ['out'], (env) => env.pe.alibiBias(1, 1, 2, { out: LA(env, 2, 0) })],
  ['alibiBias options.slopes', 'alibiBias', ['slopes'], (env) => env.pe.alibiBias(2, 1, 2, { slopes: LA(env, 2, 16) })],
  ['alibiBiasFromMask attentionMask', 'alibiBiasFromMask', ['attentionMask'], (env) => env.pe.alibiBiasFromMask(1, LAi32(env, 4, 8), { shape: [1, 4] })],
  ['sinusoidal options.out', 'sinusoidal', ['out'], (env) => env.pe.sinusoidal(2, 2, { out: LA(env, 4, 8) })],
  ['sinusoidal.add x', 'sinusoidal.add', ['x'], (env) => env.pe.sinusoidal.add(LA(env, 6, 1024), { shape: [1, 2, 3] })],
  ['learned table', 'learned', ['table'], (env) => env.pe.learned(LA(env, 12, 65536), { dModel: 3 })],
  ['learned.add x', 'learned.add', ['x'], (env) => env.pe.learned(new Float32Array(12), { dModel: 3 }).add(LA(env, 6, 65536), { shape: [1, 2, 3] })],
  ['learned.lookup positions', 'learned.lookup', ['positions'], (env) => env.pe.learned(new Float32Array(8), { dModel: 4 }).lookup(LAi32(env, 2, 8))],
  ['attention q', 'attention', ['q'], (env) => env.pe.attention(LA(env, 2, 0), new Float32Array(2), new Float32Array(2), { shape: { heads: 1, qLen: 1, headDim: 2 } })],
  ['attention v', 'attention', ['v'], (env) => env.pe.attention(new Float32Array(2), new Float32Array(2), LA(env, 2, 65536), { shape: { heads: 1, qLen: 1, headDim: 2 } })],
  ['attention options.out', 'attention', ['out'], (env) => env.pe.attention(new Float32Array(2), new Float32Array(2), new Float32Array(2), { shape: { heads: 1, qLen: 1, headDim: 2 }, out: LA(env, 2, 0) })],
  ['attention options.alibi', 'attention', ['alibi'], (env) => env.pe.attention(new Float32Array(2), new Float32Array(2), new Float32Array(2), { shape: { heads: 1, qLen: 1, headDim: 2 }, alibi: LA(env, 1, 0) })],
  ['pe.tensor', 'tensor', ['lengthOrArray', 'argument', 'array'], (env) => env.pe.tensor(LA(env, 4, 64))],
];
for (const [what, where, names, call] of LOOKALIKE_SITES) {
  example(`class 2: Object.create(Float32Array/Int32Array.prototype, {...}) as ${what}`, (env) => expectClean(env, () => call(env), { where, names }));
}

example('class 2: a Proxy of a Float32Array as rope.apply x', (env) => {
  const data = f32Data(8, 5);
  const expected = env.pe.rope({ headDim: 4 }).apply(Float32Array.from(data), { shape: [1, 2, 1, 4] });
  const p = proxyOf(Float32Array.from(data));
  expectClean(env, (pe) => pe.rope({ headDim: 4 }).apply(p, { shape: [1, 2, 1, 4] }), {
    where: 'rope.apply',
    names: ['x'],
    right: () => spots(p, (i) => expected[i], [0, 1, 2, 3, 4, 5, 6, 7], () => 0),
  });
});

example('class 2: a Proxy of a Float32Array as pe.tensor', (env) => {
  const data = f32Data(6, 6);
  expectClean(env, (pe) => pe.tensor(proxyOf(Float32Array.from(data))), {
    where: 'tensor',
    names: ['lengthOrArray', 'argument', 'array'],
    right: (t) => (t.length !== 6 ? `length ${t.length}` : spots(t.array, (i) => data[i], [0, 1, 2, 3, 4, 5], () => 0)),
  });
});

// ---- class 3: lengths read twice -----------------------------------------------------------------------------

const LEN = [3, 2 ** 31]; // a length that reads 3, then 2^31 on every later read
example('class 3: rope.cosSin with positions whose length changes between reads', (env) => {
  const rope = env.pe.rope({ headDim: 4 });
  const ref = rope.cosSin([1, 2, 3]);
  expectClean(env, () => rope.cosSin(changingLength([1, 2, 3], LEN)), {
    where: 'rope.cosSin',
    names: ['positions'],
    right: (r) => (r.cos.length !== 6 ? `length ${r.cos.length}` : spots(r.cos, (i) => ref.cos[i], [0, 1, 2, 3, 4, 5], () => 0)),
  });
  expectClean(env, () => rope.cosSin(proxyOf(Int32Array.from([1, 2, 3]), { lengthSeq: LEN })), {
    where: 'rope.cosSin',
    names: ['positions'],
    right: (r) => (r.cos.length !== 6 ? `length ${r.cos.length}` : spots(r.cos, (i) => ref.cos[i], [0, 1, 2, 3, 4, 5], () => 0)),
  });
});

example('class 3: pe.tensor of a Float32Array Proxy whose length changes between reads', (env) => {
  const data = f32Data(3, 7);
  expectClean(env, (pe) => pe.tensor(proxyOf(Float32Array.from(data), { lengthSeq: LEN })), {
    where: 'tensor',
    names: ['lengthOrArray', 'argument', 'array', 'length'],
    right: (t) => (t.length !== 3 ? `length ${t.length}` : spots(t.array, (i) => data[i], [0, 1, 2], () => 0)),
  });
});

example('class 3: ALiBi slopes whose length changes between reads', (env) => {
  const slopes = [0.5, 0.25, 0.125];
  expectClean(env, (pe) => pe.alibiBias(3, 1, 2, { slopes: changingLength(slopes, LEN) }), {
    where: 'alibiBias',
    names: ['slopes'],
    right: (b) => spots(b, (i) => slopes[i >> 1] * ((i & 1) - 1), [0, 1, 2, 3, 4, 5]),
  });
  expectClean(env, (pe) => pe.attention(new Float32Array(6), new Float32Array(6), new Float32Array(6), { shape: { heads: 3, qLen: 1, headDim: 2 }, alibi: changingLength(slopes, LEN) }), {
    where: 'attention',
    names: ['alibi'],
    right: (r) => allFinite(r.out),
  });
});

example('class 3: a learned table whose length changes between reads', (env) => {
  const table = f32Data(12, 8);
  expectClean(env, (pe) => pe.learned(proxyOf(Float32Array.from(table), { lengthSeq: [12, 2 ** 31] }), { dModel: 3 }), {
    where: 'learned',
    names: ['table'],
    right: (L) => {
      const r = L.lookup([0, 3]);
      return spots(r, (i) => table[i < 3 ? i : 9 + (i - 3)], [0, 1, 2, 3, 4, 5], () => 0);
    },
  });
  const L = env.pe.learned(Float32Array.from(table), { dModel: 3 });
  expectClean(env, () => L.lookup(changingLength([0, 1, 2], LEN)), {
    where: 'learned.lookup',
    names: ['positions'],
    right: (r) => spots(r, (i) => table[i], [0, 4, 8], () => 0),
  });
  L.free();
});

example('class 3: attention positions whose length changes between reads', (env) => {
  const shape = { heads: 1, qLen: 1, kLen: 3, headDim: 2 };
  const q = new Float32Array(2);
  const k = new Float32Array(6);
  const v = new Float32Array(6).fill(2);
  for (const positions of [changingLength([0, 1, 2], LEN), { q: changingLength([2], [1, 2 ** 31]), k: changingLength([0, 1, 2], LEN) }]) {
    expectClean(env, (pe) => pe.attention(q, k, v, { shape, positions, causal: true }), {
      where: 'attention',
      names: ['positions'],
      right: (r) => spots(r.out, () => 2, [0, 1]),
    });
  }
});

// ---- class 5: accepted configs that produce non-finite numbers -----------------------------------------------

/** Builds a rope from options and, if accepted, checks cos/sin at extreme positions are finite and within the factor. */
function ropeStaysInRange(env, options, names, positions = [0, 1, 65535, 2147483647]) {
  let rope = null;
  expectClean(env, (pe) => (rope = pe.rope(options)), {
    where: 'rope',
    names,
    right: (r) => {
      const a = r.attentionScaling();
      if (!(Number.isFinite(a) && a > 0)) return `attentionScaling() = ${a}`;
      const inv = r.invFreq64();
      const bad = allFinite(inv);
      if (bad) return `invFreq64${bad}`;
      const { cos, sin } = r.cosSin(positions);
      for (let i = 0; i < cos.length; i++) {
        if (!(Math.abs(cos[i]) <= a * (1 + 1e-6) && Math.abs(sin[i]) <= a * (1 + 1e-6))) return `cos/sin[${i}] = ${cos[i]}, ${sin[i]} (attention factor ${a})`;
      }
      const x = f32Data(r.headDim * positions.length, 3);
      const y = r.apply(x, { shape: [1, positions.length, 1, r.headDim], positions });
      return allFinite(y);
    },
  });
  rope?.free();
}

example("class 5: rope({ headDim: 2, scaling: { type: 'linear', factor: 1e-10 } }).cosSin([2147483647])", (env) => {
  ropeStaysInRange(env, { headDim: 2, scaling: { type: 'linear', factor: 1e-10 } }, ['factor'], [2147483647]);
});
example("class 5: rope({ scaling: { type: 'linear', factor: 1e-309 } })", (env) => {
  ropeStaysInRange(env, { headDim: 8, scaling: { type: 'linear', factor: 1e-309 } }, ['factor']);
});
example('class 5: rope({ base: 5e-324 })', (env) => {
  ropeStaysInRange(env, { headDim: 8, base: 5e-324 }, ['base']);
});
example("class 5: yarn with mscale: 1e300", (env) => {
  ropeStaysInRange(env, { headDim: 8, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096, mscale: 1e300, mscaleAllDim: 1 } }, ['mscale']);
});
example('class 5: sinusoidal(2, 8, { base: 5e-324 })', (env) => {
  expectClean(env, (pe) => pe.sinusoidal(2, 8, { base: 5e-324 }), {
    where: 'sinusoidal',
    names: ['base'],
    right: (t) => {
      const bad = allFinite(t);
      if (bad) return bad;
      // angles of row 1 reach 1 / base^(6/8) = 5e242: only [-1, 1] and row 0 (angle 0) are checkable
      const { out } = refSinusoidal([0], 8, 5e-324, 'interleaved');
      for (let i = 0; i < 16; i++) if (Math.abs(t[i]) > 1) return `[${i}] = ${t[i]}`;
      return spots(t, (i) => out[i], [0, 1, 2, 3, 4, 5, 6, 7], () => 1e-7);
    },
  });
});

// ---- class 6: errors of the wrong kind -----------------------------------------------------------------------

example('class 6: a freed tensor used is a TypeError naming it', (env) => {
  const t = env.pe.tensor(4);
  t.free();
  expectClean(env, () => t.array, { where: 'tensor', names: ['free', 'freed'] });
  expectClean(env, (pe) => pe.rope({ headDim: 2 }).apply(t, { shape: [1, 2, 1, 2] }), { where: 'rope.apply', names: ['freed'] });
});
example('class 6: a freed rope used is a TypeError naming it', (env) => {
  const r = env.pe.rope({ headDim: 2 });
  r.free();
  for (const [where, call] of [
    ['rope.invFreq', () => r.invFreq()],
    ['rope.attentionScaling', () => r.attentionScaling()],
    ['rope.cosSin', () => r.cosSin([1])],
    ['rope.apply', () => r.apply(new Float32Array(2), { shape: [1, 1, 1, 2] })],
    ['rope.rerotate', () => r.rerotate(new Float32Array(2), 1)],
  ]) {
    expectClean(env, call, { where, names: ['freed'] });
  }
});
example('class 6: a freed learned table used is a TypeError naming it', (env) => {
  const L = env.pe.learned(new Float32Array(8), { dModel: 4 });
  L.free();
  expectClean(env, () => L.lookup([0]), { where: 'learned.lookup', names: ['freed'] });
  expectClean(env, () => L.add(new Float32Array(4), { shape: [1, 1, 4] }), { where: 'learned.add', names: ['freed'] });
});
example('class 6: a value changing between reads (an ALiBi slope) is an error naming it, not a bare pe_status', (env) => {
  const slopes = [1, 1];
  let reads = 0;
  Object.defineProperty(slopes, 0, { get: () => (reads++ === 0 ? 1 : NaN) });
  expectClean(env, (pe) => pe.alibiBias(2, 2, 2, { slopes }), {
    where: 'alibiBias',
    names: ['slopes'],
    right: (b) => spots(b, (i) => [0, 1, -1, 0, 0, 1, -1, 0][i], [0, 1, 2, 3, 4, 5, 6, 7]), // read once: slope 1 for both heads
  });
});
example('class 6: detached and fake arrays passed to pe.tensor get posenc errors', (env) => {
  for (const arg of [detached(Float32Array, 4), detached(Float32Array, 0), LA(env, 4, 64), new BigInt64Array(3)]) {
    expectClean(env, (pe) => pe.tensor(arg), { where: 'tensor', names: ['lengthOrArray', 'argument', 'array', 'detached'] });
  }
});
example('class 6: detached positions are a posenc TypeError', (env) => {
  expectClean(env, (pe) => pe.rope({ headDim: 2 }).cosSin(detached(Int32Array, 3)), { where: 'rope.cosSin', names: ['positions'] });
  expectClean(env, (pe) => pe.learned(new Float32Array(8), { dModel: 4 }).lookup(detached(Int32Array, 2)), { where: 'learned.lookup', names: ['positions'] });
});

// ---- class 7: a leak -----------------------------------------------------------------------------------------

example('class 7: 50,000 failed pe.tensor calls on a detached array leak nothing', (env) => {
  const d = detached(Float32Array, 4);
  const fail = () => {
    try {
      env.pe.tensor(d);
    } catch {
      // expected
    }
  };
  for (let i = 0; i < 1000; i++) fail(); // warm-up: scratch blocks that exist once per instance
  const before = env.pe.memoryBytes;
  for (let i = 0; i < 50000; i++) fail();
  assert.equal(env.pe.memoryBytes, before, `wasm memory grew from ${before} to ${env.pe.memoryBytes} bytes`);
  // and the blocks are reusable: a tensor per failure would have exhausted a fixed-size probe by now
  assert.equal(env.checkIntact(), null);
});

/** slope h of n heads (refAlibiSlopes without building all n). */
function slopeAt(n, h) {
  let n0 = 1;
  while (n0 * 2 <= n) n0 *= 2;
  return h < n0 ? 2 ** ((-8 * (h + 1)) / n0) : 2 ** ((-4 * (2 * (h - n0) + 1)) / n0);
}

for (const { name, simd } of BUILDS) {
  for (const [what, run] of EXAMPLES) {
    test(`hardening (${name}): ${what}`, { timeout: 120_000 }, async () => {
      const env = await freshEnv(simd);
      await run(env);
    });
  }
}
