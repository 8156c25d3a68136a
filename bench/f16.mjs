#!/usr/bin/env node
// f16.mjs — pe_rope_apply on 16-bit storage vs float32, raw kernel calls (no JS copies), side by side.
// Large bshd [1, 2048, 32, 128] is memory-bound for float32, so 16-bit data (half the bytes) could approach 2x per
// element if the conversions were free; in wasm SIMD128 they are bit arithmetic (c/src/f16.h), so the ratio says
// how far the conversions are from free.
//
//   node bench/f16.mjs [--scalar] [--wasm FILE]     (after `bash build.sh wasm`; ~10 s)
//
// For `npm run bench`: `import { f16Ratios } from './f16.mjs'`, then `await f16Ratios()` returns
//   { build, workloads: [{ name, layout, shape: [b, s, h, d], elements, ms: { float32, float16, bfloat16 },
//                          f16, bf16 }] }
// where f16 / bf16 are speedups over float32 (float32 time / 16-bit time, > 1 = 16-bit faster), each time the
// minimum over interleaved repetitions (other load only ever adds time).
import { simdWasmBase64, scalarWasmBase64 } from '../web/src/wasm-inline.js';
import { instantiateRaw, decodeBase64, rawRope, rawInt32, rawApplyConfig } from './raw.mjs';

/** The workloads: the large bshd target, the same bytes in bhsd, and a prefill-sized bshd. */
export const F16_WORKLOADS = [
  { name: 'large bshd', layout: 'bshd', shape: [1, 2048, 32, 128], reps: 15 },
  { name: 'large bhsd', layout: 'bhsd', shape: [1, 2048, 32, 128], reps: 15 },
  { name: 'prefill bshd', layout: 'bshd', shape: [1, 128, 32, 128], reps: 200 },
];
const DTYPES = ['float32', 'float16', 'bfloat16']; // PE_DTYPE_* 0, 1, 2

function dtypeOffset(raw) {
  // the dtype field's offset, from the module's own layout table (the last field before sizeof)
  const ex = raw.exports;
  const countPtr = raw.malloc(8);
  const layoutPtr = ex.pe_abi_rope_apply_config_layout(countPtr) >>> 0;
  const count = raw.i32(countPtr, 1)[0];
  const off = raw.i32(layoutPtr, count)[count - 2];
  raw.free(countPtr);
  return off;
}

function measure(raw, { name, layout, shape, reps }) {
  const ex = raw.exports;
  const [B, S, H, D] = shape;
  const n = B * S * H * D;
  const rope = rawRope(raw, D);
  const positions = rawInt32(raw, Int32Array.from({ length: S }, (_, i) => i + 1000));
  const cos = raw.malloc(S * (D / 2) * 4);
  const sin = raw.malloc(S * (D / 2) * 4);
  if (ex.pe_rope_cos_sin(cos, sin, rope, positions, S, -1n, 1.0) !== 0) throw new Error('bench f16: cos_sin failed');
  const dOff = dtypeOffset(raw);
  const cases = DTYPES.map((dtype, code) => {
    const cfg = rawApplyConfig(raw, { batch: B, seq: S, heads: H, layout: layout === 'bhsd' ? 1 : 0 });
    new DataView(raw.memory.buffer).setInt32(cfg + dOff, code, true);
    // separate buffers per dtype (rotating one type's bits as the other would drift into subnormals and NaNs)
    return { dtype, cfg, x: raw.malloc(n * (code ? 2 : 4)), best: Infinity };
  });
  {
    const f = raw.f32(cases[0].x, n);
    for (let i = 0; i < n; i++) f[i] = Math.sin(i * 0.37) * 3;
    const bits = new Uint32Array(raw.memory.buffer, cases[0].x, n);
    const h = new Uint16Array(raw.memory.buffer, cases[1].x, n);
    const hb = new Uint16Array(raw.memory.buffer, cases[2].x, n);
    for (let i = 0; i < n; i++) {
      hb[i] = bits[i] >>> 16; // truncated: fine as data
      h[i] = 0x3800 + (i % 0x0800) + ((i & 1) << 15); // float16 in ±[0.5, 2)
    }
  }
  for (let rep = 0; rep <= reps; rep++) {
    for (const c of cases) {
      const t0 = performance.now();
      const st = ex.pe_rope_apply(rope, c.x, cos, sin, c.cfg);
      const dt = performance.now() - t0;
      if (st !== 0) throw new Error(`bench f16: pe_rope_apply ${c.dtype}: status ${st}`);
      if (rep > 0) c.best = Math.min(c.best, dt); // the first call compiles and warms
    }
  }
  for (const c of cases) raw.free(c.x), raw.free(c.cfg);
  raw.free(cos), raw.free(sin), raw.free(positions), raw.free(rope);
  const [t32, t16, tb16] = cases.map((c) => c.best);
  return {
    name,
    layout,
    shape,
    elements: n,
    ms: { float32: t32, float16: t16, bfloat16: tb16 },
    f16: t32 / t16,
    bf16: t32 / tb16,
  };
}

/**
 * f16 vs f32 and bf16 vs f32 rope.apply speedups, per workload.
 * @param {{ scalar?: boolean, wasm?: Uint8Array, workloads?: typeof F16_WORKLOADS, reps?: number }} [options]
 */
export async function f16Ratios({ scalar = false, wasm, workloads = F16_WORKLOADS, reps } = {}) {
  const raw = await instantiateRaw(wasm ?? decodeBase64(scalar ? scalarWasmBase64 : simdWasmBase64));
  const build = wasm ? 'given module' : scalar ? 'scalar' : 'SIMD';
  return { build, workloads: workloads.map((w) => measure(raw, reps ? { ...w, reps } : w)) };
}

async function main() {
  const args = process.argv.slice(2);
  const at = args.indexOf('--wasm');
  let wasm;
  if (at >= 0) wasm = new Uint8Array((await import('node:fs')).readFileSync(args[at + 1]));
  const { build, workloads } = await f16Ratios({ scalar: args.includes('--scalar'), wasm });
  console.log(`rope.apply on 16-bit storage vs float32, ${build} build, min of repetitions:`);
  for (const w of workloads) {
    console.log(`  ${w.name} [${w.shape.join(', ')}] (${(w.elements / 1e6).toFixed(2)}M elements)`);
    for (const [dtype, speed] of [['float32', 1], ['float16', w.f16], ['bfloat16', w.bf16]])
      console.log(`    ${dtype.padEnd(8)} ${w.ms[dtype].toFixed(3).padStart(8)} ms  ${speed.toFixed(2)}x float32`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
