// values.js — the adversarial values of the JS API fuzzer, built from plain-data descriptions so that
// fast-check can generate, shrink and print them. Every builder takes the description and the fuzz
// environment (env.pe, env.other) and returns a fresh JS value: objects that pose as typed arrays, Proxies,
// getters that throw or change between reads, detached buffers, freed tensors and tensors of another instance.
//
// A description is { kind, ... }. `fate` of a description says what the API must do with it where a
// Float32Array (or positions, or a number) is expected:
//   'ok'     a valid value: the call must succeed (when everything else is valid) with the right result
//   'error'  the call must throw a TypeError or RangeError whose message names the argument
//   'either' accepting it is allowed (then the result must be right or, where it cannot be known, at least
//            leave the instance intact), refusing it must be a clean TypeError/RangeError naming the argument
// A builder may also throw its own FuzzGetterError from a getter the API reads: that error propagating is
// fine (the caller's code threw), any other outcome is judged as above.

/** Thrown by the fuzzer's own getters; passing it through unchanged is correct API behaviour. */
export class FuzzGetterError extends Error {
  constructor(what) {
    super(`fuzz getter threw (${what})`);
    this.name = 'FuzzGetterError';
  }
}

/** A deterministic Float32Array of n values in [-2, 2] from an integer seed (no Math.random). */
export function f32Data(n, seed) {
  const out = new Float32Array(n);
  let a = (seed * 2654435761) >>> 0;
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out[i] = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 4 - 2;
  }
  return out;
}

/** An object whose prototype is a typed array's, with own length/buffer/byteOffset: not a real view. */
export function lookAlike(proto, { length, buffer, byteOffset }) {
  return Object.create(proto, {
    length: { value: length },
    byteLength: { value: length * 4 },
    buffer: { value: buffer },
    byteOffset: { value: byteOffset },
  });
}

/**
 * A Proxy of a real typed array: every read goes through the handler. lengthSeq: the values `length`
 * returns on successive reads (the last repeats), to model a length that changes between reads.
 */
export function proxyOf(target, { lengthSeq = null, throwOn = null } = {}) {
  let reads = 0;
  return new Proxy(target, {
    get(t, key) {
      if (throwOn !== null && key === throwOn) throw new FuzzGetterError(`get ${String(key)}`);
      if (key === 'length' && lengthSeq !== null) {
        const v = lengthSeq[Math.min(reads, lengthSeq.length - 1)];
        reads++;
        return v;
      }
      const v = Reflect.get(t, key, t); // receiver t: typed-array getters need the real array as `this`
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}

/** A plain array-like object whose `length` getter returns lengthSeq[0], lengthSeq[1], ... on each read. */
export function changingLength(values, lengthSeq) {
  let reads = 0;
  const o = {};
  for (let i = 0; i < values.length; i++) o[i] = values[i];
  Object.defineProperty(o, 'length', {
    get() {
      const v = lengthSeq[Math.min(reads, lengthSeq.length - 1)];
      reads++;
      return v;
    },
  });
  return o;
}

/** A typed array whose buffer was transferred away (detached: length 0, byteLength 0). */
export function detached(Ctor, n) {
  const a = new Ctor(n);
  structuredClone(a.buffer, { transfer: [a.buffer] });
  return a;
}

/** An object whose getter for `key` throws (the options object of a careless caller, or a hostile one). */
export function throwingGetter(base, key) {
  const o = { ...base };
  Object.defineProperty(o, key, {
    enumerable: true,
    get() {
      throw new FuzzGetterError(`options.${key}`);
    },
  });
  return o;
}

/** An object whose `key` reads `first` once, then `later` on every following read. */
export function changingGetter(base, key, first, later) {
  const o = { ...base };
  let reads = 0;
  Object.defineProperty(o, key, {
    enumerable: true,
    get() {
      return reads++ === 0 ? first : later;
    },
  });
  return o;
}

// Adversarial numbers for a size or count argument (the fate is decided by the caller's bounds).
export const HUGE_SIZES = [2 ** 29 + 1, 2 ** 30, 2 ** 30 + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 2 ** 53];
// Values that are never an integer size: each is a TypeError or a RangeError.
export const NOT_SIZES = [NaN, Infinity, -Infinity, -1, -(2 ** 31), 0.5, 1.5, '4', 4n, null, true, {}, [], [4], Symbol.iterator];
// Floating-point values that break careless numerics: subnormals, the extremes, signed zero, non-finite.
export const NASTY_FLOATS = [NaN, Infinity, -Infinity, -0, 0, 5e-324, 1e-310, 1e-309, 2.2250738585072014e-308, 1e-300, 1e-45, 1e-38, 1e-10, 1e300, 1.7976931348623157e308, -1, 1];

/** Renders a value for a finding report (short; never calls user getters). */
export function show(v) {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'symbol') return v.toString();
  if (typeof v === 'number') return Object.is(v, -0) ? '-0' : String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  return String(v);
}

/**
 * Builds float data (what a Float32Array argument gets) from a description:
 *   { kind: 'f32', n, seed }             a plain Float32Array (ok)
 *   { kind: 'f32sub', n, seed, pad }     a subarray at a float offset inside a larger buffer (ok)
 *   { kind: 'tensor', n, seed }          a pe.tensor of this instance (ok)
 *   { kind: 'wasmView', n, seed }        a Float32Array viewing this instance's memory (ok)
 *   { kind: 'wrongLength', n, delta }    length n + delta (error)
 *   { kind: 'lookalike', n, offset }     Object.create(Float32Array.prototype, ...) over wasm memory (error)
 *   { kind: 'proxy', n, seed }           a Proxy of a real Float32Array (either: not a real view)
 *   { kind: 'proxyLen', n, later }       a Proxy whose length reads n, then `later` (either)
 *   { kind: 'detached', n }              a detached Float32Array (error when n > 0)
 *   { kind: 'freed', n }                 a freed tensor (error)
 *   { kind: 'foreign', n }               a live tensor of the other instance (error)
 *   { kind: 'f64', n } / { kind: 'u16', n } / { kind: 'i32', n }  other typed arrays (error, u16 either)
 *   { kind: 'array', n } / { kind: 'value', v }   a plain Array, or any other value (error)
 * Returns { value, fate, expected } where expected is the Float64Array of the data a correct call sees
 * (null when there is none), and cleanup() frees what the builder allocated.
 */
export function buildFloat(d, env, n) {
  const cleanup = [];
  const done = (value, fate, expected = null) => ({ value, fate, expected, cleanup: () => cleanup.forEach((f) => f()) });
  switch (d.kind) {
    case 'f32': {
      const a = f32Data(n, d.seed);
      return done(a, 'ok', Float64Array.from(a));
    }
    case 'f32sub': {
      const big = f32Data(n + d.pad + 3, d.seed);
      const a = big.subarray(d.pad, d.pad + n);
      return done(a, 'ok', Float64Array.from(a));
    }
    case 'tensor': {
      const data = f32Data(n, d.seed);
      const t = env.pe.tensor(data);
      cleanup.push(() => t.free());
      return done(t, 'ok', Float64Array.from(data));
    }
    case 'wasmView': {
      const data = f32Data(n, d.seed);
      const t = env.pe.tensor(data);
      cleanup.push(() => t.free());
      return done(t.array, 'ok', Float64Array.from(data));
    }
    case 'wrongLength': {
      const m = Math.max(0, n + d.delta);
      return done(f32Data(m, 1), m === n ? 'ok' : 'error', m === n ? Float64Array.from(f32Data(m, 1)) : null);
    }
    case 'lookalike': {
      const buffer = env.wasmBuffer(); // the module's memory: its byteOffset would be a pointer
      return done(lookAlike(Float32Array.prototype, { length: n, buffer, byteOffset: d.offset }), 'error');
    }
    case 'proxy':
      return done(proxyOf(f32Data(n, d.seed)), 'either');
    case 'proxyLen':
      return done(proxyOf(f32Data(n, 3), { lengthSeq: [n, d.later] }), 'either');
    case 'detached':
      return done(detached(Float32Array, n), n === 0 ? 'ok' : 'error', n === 0 ? new Float64Array(0) : null);
    case 'freed': {
      const t = env.pe.tensor(n);
      t.free();
      return done(t, 'error');
    }
    case 'foreign': {
      const t = env.other.tensor(f32Data(n, 5));
      cleanup.push(() => t.free());
      return done(t, 'error');
    }
    case 'f64':
      return done(new Float64Array(n), n === 0 ? 'either' : 'error');
    case 'u16':
      return done(new Uint16Array(n), 'either'); // raw 16-bit storage once dtypes land; never float32 data
    case 'i32':
      return done(new Int32Array(n), n === 0 ? 'either' : 'error');
    case 'array':
      return done(Array.from(f32Data(n, 2)), 'error');
    case 'value':
      return done(d.v, 'error');
    default:
      throw new Error(`fuzz: unknown float description ${d.kind}`);
  }
}

/**
 * Builds positions from a description and the integer values a correct call must see (positionValues in
 * common.js); [lo, hi] is the valid range of a position. Kinds:
 *   'i32' | 'array' | 'wasmI32'   an Int32Array, a plain Array, an Int32Array over wasm memory: ok when every
 *                                 value (as the caller really passes it: wrapped to int32) is in range
 *   'proxy'       a Proxy of an Int32Array (either: it is an array-like, but not a real view)
 *   'lenChange'   an array-like whose length reads values.length, then d.later (either)
 *   'f32'         a Float32Array of the values (either)
 *   'big'         a BigInt64Array (error)
 *   'detached'    a detached Int32Array (length 0: error unless no positions are needed)
 *   'lookalike'   Object.create(Int32Array.prototype, ...) (error unless of length 0)
 *   'throwIdx'    an array-like whose last element getter throws (error, or the getter's error)
 *   'value'       d.v, anything else (error)
 * Returns { value, fate, values } (values: what a correct call sees, or null when it must not succeed).
 */
export function buildPositions(d, env, values, lo = 0, hi = 2147483647) {
  const inRange = (vs) => vs.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi);
  const n = values.length;
  switch (d.kind) {
    case 'i32': {
      const a = Int32Array.from(values.map(Number)); // what the caller really passes: values wrapped to int32
      return { value: a, fate: inRange(Array.from(a)) ? 'ok' : 'error', values: Array.from(a) };
    }
    case 'array':
      return { value: values.slice(), fate: inRange(values) ? 'ok' : 'error', values };
    case 'wasmI32': {
      const t = env.pe.tensor(Math.max(1, n));
      env.scratchTensors.push(t);
      const a = new Int32Array(t.array.buffer, t.array.byteOffset, n);
      a.set(values.map(Number));
      return { value: a, fate: inRange(Array.from(a)) ? 'ok' : 'error', values: Array.from(a) };
    }
    case 'proxy': {
      const a = Int32Array.from(values.map(Number));
      return { value: proxyOf(a), fate: inRange(Array.from(a)) ? 'either' : 'error', values: Array.from(a) };
    }
    case 'lenChange':
      return { value: changingLength(values, [n, d.later]), fate: 'either', values: null };
    case 'f32': {
      const a = Float32Array.from(values.map(Number));
      return { value: a, fate: inRange(Array.from(a)) ? 'either' : 'error', values: Array.from(a) };
    }
    case 'big':
      return { value: new BigInt64Array(n), fate: 'error', values: null };
    case 'detached':
      return { value: detached(Int32Array, n), fate: n === 0 ? 'either' : 'error', values: [] };
    case 'lookalike':
      return { value: lookAlike(Int32Array.prototype, { length: n, buffer: env.wasmBuffer(), byteOffset: 8 }), fate: n === 0 ? 'either' : 'error', values: null };
    case 'throwIdx': {
      const o = { length: n };
      for (let i = 0; i < n; i++) {
        Object.defineProperty(o, i, {
          get() {
            if (i === n - 1) throw new FuzzGetterError(`positions[${i}]`);
            return values[i];
          },
        });
      }
      return { value: o, fate: n === 0 ? 'either' : 'error', values: n === 0 ? [] : null };
    }
    case 'value':
      return { value: d.v, fate: 'error', values: null };
    default:
      throw new Error(`fuzz: unknown positions description ${d.kind}`);
  }
}
