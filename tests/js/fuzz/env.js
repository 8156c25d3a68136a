// env.js — the fuzz environment: the instance under test, a second instance (for "tensor of another
// instance"), canary tensors and a known-good RoPE apply, computed once at start-up on the fresh instance,
// that every call must leave intact bit for bit.
import { f32Data } from './values.js';

// The known-good computation: a bshd (1, 4, 2, 16) apply at positions up to int32 max (the double angle
// reduction matters there), half pairing, queries and keys in one call.
const KG_SHAPE = [1, 4, 2, 16];
const KG_POSITIONS = Int32Array.from([0, 1, 1000, 2147483647]);
const KG_ROPE = { headDim: 16, base: 10000 };
// alibiSlopes(4) is exact in float32: 2^-2, 2^-4, 2^-6, 2^-8. Wrong values here mean the module's static
// data were overwritten (issue 10, class 2).
const SLOPES4 = [0.25, 0.0625, 0.015625, 0.00390625];

function bits(a) {
  return new Uint32Array(a.buffer, a.byteOffset, a.length);
}

/** Index of the first element where a and b differ in bits, or -1. */
export function firstBitDiff(a, b) {
  if (a.length !== b.length) return 0;
  const x = bits(a);
  const y = bits(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return i;
  return -1;
}

function knownGood(rope) {
  const x = f32Data(128, 11);
  const k = f32Data(128, 12);
  const y = rope.apply(x, { shape: KG_SHAPE, positions: KG_POSITIONS, k });
  return { x: Float32Array.from(y), k: Float32Array.from(k) };
}

/**
 * makeEnv(pe, other, { room }): pe must be fresh (nothing run on it yet) so the known-good result is that of a fresh
 * instance. other is an instance of the other build.
 */
export function makeEnv(pe, other, { room = true } = {}) {
  // Room to spare (room: true; the soak, which watches the memory size, takes none): the builders make several wasm views for one call (x, k, positions over tensors); had the
  // memory to grow for a later one, the earlier views would be detached before the call, which the API rightly
  // refuses. Growth inside a call still happens (tables, copies) and must leave the caller's views usable.
  if (room) {
    pe.tensor(4 << 20).free();
    other.tensor(1 << 20).free();
  }
  const rope = pe.rope(KG_ROPE); // kept for the whole run: its cached table must survive every bad call
  const expected = knownGood(rope);
  const canaryData = [f32Data(33, 21), f32Data(1000, 22), f32Data(7, 23)];
  const canaries = canaryData.map((d) => pe.tensor(d));
  const env = {
    pe,
    other,
    rope,
    expected,
    canaries,
    scratchTensors: [],
    /** The module's memory buffer (for look-alikes whose byteOffset would be a pointer into it). */
    wasmBuffer: () => canaries[0].array.buffer,
    /** null when the instance is intact, else what is wrong. */
    checkIntact() {
      for (let c = 0; c < canaries.length; c++) {
        if (canaries[c].freed) return `canary tensor ${c} was freed by someone else`;
        const i = firstBitDiff(canaries[c].array, canaryData[c]);
        if (i !== -1) return `canary tensor ${c} changed at [${i}]: ${canaries[c].array[i]} (was ${canaryData[c][i]})`;
      }
      let got;
      try {
        got = knownGood(rope);
      } catch (e) {
        return `known-good apply on the start-up rope threw ${e?.name}: ${e?.message}`;
      }
      let i = firstBitDiff(got.x, expected.x);
      if (i !== -1) return `known-good apply (start-up rope) differs at x[${i}]: ${got.x[i]} vs ${expected.x[i]}`;
      i = firstBitDiff(got.k, expected.k);
      if (i !== -1) return `known-good apply (start-up rope) differs at k[${i}]: ${got.k[i]} vs ${expected.k[i]}`;
      let fresh;
      try {
        fresh = pe.rope(KG_ROPE);
        got = knownGood(fresh);
      } catch (e) {
        return `known-good apply on a new rope threw ${e?.name}: ${e?.message}`;
      } finally {
        fresh?.free();
      }
      i = firstBitDiff(got.x, expected.x);
      if (i !== -1) return `known-good apply (new rope) differs at x[${i}]: ${got.x[i]} vs ${expected.x[i]}`;
      try {
        // the allocator's own bookkeeping: a block of a new size, written, freed
        const t = pe.tensor(f32Data(4099, 24));
        const ok = t.array[4098] === f32Data(4099, 24)[4098];
        t.free();
        if (!ok) return 'a new tensor does not hold the data it was made from';
      } catch (e) {
        return `making and freeing a tensor threw ${e?.name}: ${e?.message}`;
      }
      let s;
      try {
        s = pe.alibiSlopes(4);
      } catch (e) {
        return `alibiSlopes(4) threw ${e?.name}: ${e?.message}`;
      }
      for (let h = 0; h < 4; h++) if (s[h] !== SLOPES4[h]) return `alibiSlopes(4)[${h}] is ${s[h]}, expected ${SLOPES4[h]}`;
      return null;
    },
    /** Frees what one case allocated through the builders. */
    endCase() {
      for (const t of env.scratchTensors) t.free();
      env.scratchTensors.length = 0;
    },
  };
  return env;
}
