// tensor-cases.js — fuzz cases for pe.tensor: lengths, copies of arrays (real, wasm views, Proxies, look-alikes,
// detached, other element types), options, free / double free / use after free / use by another instance.
import fc from 'fast-check';
import { policy, Plan, sizeArb } from './common.js';
import { f32Data, proxyOf, detached, lookAlike } from './values.js';
import { compare } from './refs.js';

// ---- tensor -----------------------------------------------------------------------------------------------

export const tensorCaseArb = fc.record({
  arg: fc.oneof(
    { weight: 6, arbitrary: fc.record({ kind: fc.constant('length'), n: sizeArb(0, 64) }) },
    { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('f32', 'wasmView', 'proxy', 'proxyLen', 'lookalike', 'detached', 'f64', 'big', 'u16'), n: fc.integer({ min: 0, max: 40 }), later: fc.constantFrom(2 ** 20, 2 ** 31, 0) }) },
  ),
  options: fc.constantFrom(undefined, undefined, undefined, 'dtype32', 'unknown', 'notObject'),
  after: fc.constantFrom('none', 'none', 'free', 'free', 'doubleFree', 'useAfterFree', 'foreignUse', 'growth'),
});

export function tensorSteps(spec, env) {
  const plan = new Plan('tensor');
  plan.names.push('argument'); // pe.tensor's one argument may be called just that
  const a = spec.arg;
  let arg;
  let expected = null;
  if (a.kind === 'length') {
    arg = a.n.v;
    plan.part('length', a.n.fate);
    if (a.n.fate === 'ok') expected = new Float32Array(a.n.v);
  } else {
    const n = a.n;
    const data = f32Data(n, 9);
    switch (a.kind) {
      case 'f32':
        arg = data;
        expected = data;
        break;
      case 'wasmView': {
        const t = env.pe.tensor(data);
        env.scratchTensors.push(t);
        arg = t.array;
        expected = data;
        break;
      }
      case 'proxy':
        arg = proxyOf(data);
        plan.part('lengthOrArray', 'either');
        break;
      case 'proxyLen':
        arg = proxyOf(data, { lengthSeq: [n, a.later] });
        plan.part('lengthOrArray', 'either');
        break;
      case 'lookalike':
        arg = lookAlike(Float32Array.prototype, { length: n, buffer: env.wasmBuffer(), byteOffset: 64 });
        plan.part('lengthOrArray', 'error');
        break;
      case 'detached':
        arg = detached(Float32Array, n);
        plan.part('lengthOrArray', 'error');
        break;
      case 'f64':
        arg = Float64Array.from(data);
        plan.part('lengthOrArray', 'error');
        break;
      case 'big':
        arg = new BigInt64Array(n);
        plan.part('lengthOrArray', 'error');
        break;
      case 'u16':
        arg = new Uint16Array(n);
        plan.part('lengthOrArray', 'either'); // raw 16-bit storage once dtypes land
        break;
      default:
        throw new Error(a.kind);
    }
  }
  let opts;
  if (spec.options === 'dtype32') {
    opts = { dtype: 'float32' };
  } else if (spec.options === 'unknown') {
    opts = { dtpye: 'float16' };
    plan.part('dtpye', policy.unknownKey);
  } else if (spec.options === 'notObject') {
    opts = 5;
    plan.part('options', policy.unknownKey);
  }
  let t = null;
  const steps = [
    {
      plan,
      run: () => (t = opts === undefined ? env.pe.tensor(arg) : env.pe.tensor(arg, opts)),
      check: (r) => {
        if (expected === null) return null;
        if (r.length !== expected.length) return `tensor.length ${r.length}, expected ${expected.length}`;
        return compare('tensor.array', r.array, expected, () => 0);
      },
    },
  ];
  steps.push(() => {
    if (t === null) return null;
    switch (spec.after) {
      case 'free':
        return { plan: new Plan('tensor.free'), run: () => t.free(), check: () => (t.freed ? null : 'freed is false after free()') };
      case 'doubleFree':
        t.free();
        return { plan: new Plan('tensor.free'), run: () => t.free() };
      case 'useAfterFree':
        t.free();
        return { plan: new Plan('tensor').part('freed', 'error'), run: () => t.array };
      case 'growth': {
        // a call that grows the wasm memory (a 36 MiB table copied in) detaches every view: the tensor's data must
        // stay where it was and .array give a live view of it
        const data = Float32Array.from(t.array);
        const big = new Float32Array(9 << 20);
        let L = null;
        return {
          plan: new Plan('learned'),
          run: () => (L = env.pe.learned(big, { dModel: 1024 })),
          check: () => compare('tensor.array after the memory grew', t.array, data, () => 0),
          cleanup: () => L?.free(),
        };
      }
      case 'foreignUse': {
        const r = env.other.rope({ headDim: 2 });
        const n = t.length - (t.length % 2);
        return {
          plan: new Plan('rope.apply').part('x', n === 0 ? 'either' : 'error').part('another', 'error'),
          run: () => r.apply(t, { shape: [1, Math.max(1, n / 2), 1, 2] }),
          cleanup: () => r.free(),
        };
      }
      default:
        return null;
    }
  });
  steps.push(() => {
    t?.free();
    return null;
  });
  return steps;
}
