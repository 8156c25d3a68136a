#!/usr/bin/env node
// npm run soak [-- --calls N] [--build simd|scalar|both] [--seed N] [--leak-self-test]
//
// 10^6 mixed API calls (default) per build (both by default) on one instance, valid and invalid, from a fixed seed: rope apply / cosSin /
// rerotate, ropes made and freed, ALiBi slopes and bias, sinusoidal tables and add, learned tables made, read
// and freed, small attention, tensors made and freed, and bad arguments of every ordinary kind (wrong lengths,
// bad positions, freed tensors and ropes, detached arrays, wrong types). Every 10^5 calls it prints the wasm
// memory size, the JS heap and the error count, and checks the known-good RoPE apply bit for bit. Verdict:
// FLAT when the wasm memory after the first checkpoint never grows and every check held; else GROWS / BROKEN
// (exit status 1). Not part of npm test (under a minute per build). --leak-self-test keeps one 4-float tensor of
// every 16 calls alive (a leak the size of issue 10's class 7), to show that the curve sees such a leak.
import { init } from '../web/src/index.js';
import { makeRng } from '../tests/js/helpers.js';
import { makeEnv } from '../tests/js/fuzz/env.js';
import { detached, f32Data } from '../tests/js/fuzz/values.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
};
const CALLS = Number(opt('calls', 1_000_000));
const SEED = Number(opt('seed', 10));
const which = opt('build', 'both');
const EVERY = Math.max(1, Math.floor(CALLS / 10));
const LEAK = args.includes('--leak-self-test');

function mixedCalls(pe, rng) {
  const ropes = [pe.rope({ headDim: 64 }), pe.rope({ headDim: 32, pairing: 'interleaved', scaling: { type: 'linear', factor: 4 } }), pe.rope({ headDim: 16, rotaryDim: 8, maxPositionEmbeddings: 512, scaling: { type: 'dynamic', factor: 2 } })];
  const rope8 = pe.rope({ headDim: 8 });
  const learned = pe.learned(f32Data(64 * 8, 1), { dModel: 8 });
  const x64 = f32Data(4 * 64, 2);
  const t64 = pe.tensor(4 * 64);
  const freedTensor = pe.tensor(8);
  freedTensor.free();
  const freedRope = pe.rope({ headDim: 2 });
  freedRope.free();
  const det = detached(Float32Array, 16);
  const q = f32Data(2 * 3 * 8, 3);
  const k = f32Data(2 * 5 * 8, 4);
  const v = f32Data(2 * 5 * 8, 5);
  const pos = (n, max) => Int32Array.from({ length: n }, () => rng.int(0, max));
  // [weight, valid?, call]
  const calls = [
    [8, true, () => ropes[0].apply(x64, { shape: [1, 4, 1, 64], positions: pos(4, 1e6) })],
    [4, true, () => ropes[1].apply(t64, { shape: [1, 2, 4, 32], layout: rng.pick(['bshd', 'bhsd']) })],
    [4, true, () => ropes[2].cosSin(pos(rng.int(1, 16), 4096))],
    [2, true, () => ropes[0].rerotate(x64, rng.int(-1000, 1000))],
    [2, true, () => pe.rope({ headDim: 2 * rng.int(1, 64), base: rng.pick([1e4, 5e5, 1e6]) }).free()],
    [3, true, () => pe.alibiSlopes(rng.int(1, 64))],
    [3, true, () => pe.alibiBias(rng.int(1, 8), rng.int(1, 16), rng.int(1, 16), { causal: rng.uniform() < 0.5 })],
    [2, true, () => pe.alibiBiasFromMask(4, [[0, 1, 1, 1], [1, 1, 1, 1]])],
    [3, true, () => pe.sinusoidal(rng.int(1, 32), rng.int(1, 64), { offset: rng.int(0, 1000) })],
    [2, true, () => pe.sinusoidal.add(x64, { shape: [2, 2, 64] })],
    [2, true, () => learned.lookup(pos(rng.int(0, 16), 63))],
    [2, true, () => learned.add(f32Data(3 * 8, 6), { shape: [1, 3, 8], positions: [0, 5, 63] })],
    [1, true, () => pe.learned(f32Data(16 * 4, 7), { dModel: 4, offset: 2 }).free()],
    [2, true, () => pe.attention(q, k, v, { shape: { batch: 2, heads: 1, qLen: 3, kLen: 5, headDim: 8 }, causal: true, rope: rng.uniform() < 0.5 ? null : rope8, returnWeights: rng.uniform() < 0.3 })],
    [3, true, () => pe.tensor(rng.int(0, 4096)).free()],
    [2, true, () => pe.tensor(x64).free()],
    // invalid: each must throw a clean error and leave nothing behind
    [2, false, () => ropes[0].apply(new Float32Array(10), { shape: [1, 4, 1, 64] })],
    [2, false, () => ropes[0].apply(x64, { shape: [1, 4, 1, 64], positions: [0, -1, 2, 3] })],
    [1, false, () => ropes[0].apply(x64, { shape: [1, 4, 1, 64], positions: [0, 1, 2] })],
    [1, false, () => ropes[0].cosSin([1, 2 ** 31])],
    [1, false, () => ropes[0].apply(freedTensor, { shape: [1, 1, 1, 8] })],
    [1, false, () => freedRope.cosSin([1])],
    [6, false, () => pe.tensor(det)], // issue 10 class 7: each failure used to leak a block
    [1, false, () => pe.tensor(-1)],
    [1, false, () => pe.tensor(2 ** 31)],
    [1, false, () => pe.alibiSlopes(0)],
    [1, false, () => pe.alibiBias(2, 2, 2, { slopes: [1] })],
    [1, false, () => pe.sinusoidal(0, 8)],
    [1, false, () => pe.sinusoidal(4, 8, { base: -1 })],
    [1, false, () => learned.lookup([64])],
    [1, false, () => pe.learned(new Float32Array(7), { dModel: 2 })],
    [1, false, () => pe.attention(q, k, new Float32Array(3), { shape: { batch: 2, heads: 1, qLen: 3, kLen: 5, headDim: 8 } })],
    [1, false, () => pe.rope({ headDim: 7 })],
    [1, false, () => pe.rope({ headDim: 8, scaling: { type: 'linear' } })],
  ];
  const total = calls.reduce((a, c) => a + c[0], 0);
  const table = [];
  for (const c of calls) for (let i = 0; i < c[0]; i++) table.push(c);
  if (table.length !== total) throw new Error('soak: weights');
  return { table, cleanup: () => [...ropes, rope8, learned, t64].forEach((o) => o.free()) };
}

async function soak(simd) {
  const pe = await init({ simd });
  const env = makeEnv(pe, await init({ simd: !simd }), { room: false }); // no spare room: growth must show
  const rng = makeRng(SEED);
  const { table, cleanup } = mixedCalls(pe, rng);
  const name = simd ? 'simd' : 'scalar';
  const rows = [];
  let errors = 0;
  let wrongKind = 0;
  let unexpectedOk = 0;
  let broken = null;
  const t0 = performance.now();
  console.log(`[${name}] ${CALLS} mixed calls, seed ${SEED}; wasm memory ${pe.memoryBytes} bytes at start`);
  console.log(`[${name}]     calls   wasm memory (bytes)   JS heap (MiB)   errors   seconds`);
  const leaked = [];
  for (let i = 1; i <= CALLS; i++) {
    if (LEAK && i % 16 === 0) leaked.push(pe.tensor(4));
    const [, valid, call] = table[rng.int(0, table.length - 1)];
    try {
      call();
      if (!valid) unexpectedOk++;
    } catch (e) {
      errors++;
      if (valid || !(e instanceof TypeError || e instanceof RangeError)) {
        wrongKind++;
        if (wrongKind <= 3) console.log(`[${name}] call ${i}: ${valid ? 'a valid call threw' : 'wrong error kind'}: ${e?.name}: ${e?.message}`);
      }
    }
    if (i % EVERY === 0) {
      const bad = env.checkIntact();
      if (bad && broken === null) broken = `after call ${i}: ${bad}`;
      const row = { calls: i, wasm: pe.memoryBytes, heap: process.memoryUsage().heapUsed / 2 ** 20, errors, s: (performance.now() - t0) / 1000 };
      rows.push(row);
      console.log(`[${name}] ${String(i).padStart(9)}   ${String(row.wasm).padStart(19)}   ${row.heap.toFixed(1).padStart(13)}   ${String(errors).padStart(6)}   ${row.s.toFixed(1).padStart(7)}`);
    }
  }
  cleanup();
  const first = rows[0].wasm;
  const last = rows[rows.length - 1].wasm;
  const grew = rows.some((r) => r.wasm > first);
  const verdict = broken ? 'BROKEN' : grew ? 'GROWS' : wrongKind || unexpectedOk ? 'WRONG ERRORS' : 'FLAT';
  console.log(
    `[${name}] verdict: ${verdict} — wasm memory ${first} bytes at call ${rows[0].calls}, ${last} at call ${CALLS}` +
      `${grew ? ` (grew by ${last - first} bytes)` : ''}; ${errors} invalid calls refused, ${wrongKind} of the wrong kind, ` +
      `${unexpectedOk} invalid calls accepted${broken ? `; instance damaged ${broken}` : ''}`,
  );
  return verdict === 'FLAT';
}

const builds = which === 'both' ? [true, false] : [which !== 'scalar'];
let ok = true;
for (const simd of builds) ok = (await soak(simd)) && ok;
process.exit(ok ? 0 : 1);
