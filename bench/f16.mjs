#!/usr/bin/env node
// f16.mjs — pe_rope_apply on 16-bit storage vs float32, raw kernel calls (no JS copies), large bshd
// [1, 2048, 32, 128]: memory-bound, so 16-bit data (half the bytes) should approach 2x per element.
//
//   node bench/f16.mjs [--scalar]      (after `bash build.sh wasm`; ~10 s)
//
// Each dtype is timed as the minimum over interleaved repetitions (other load only ever adds time).
import { simdWasmBase64, scalarWasmBase64 } from '../web/src/wasm-inline.js';
import { instantiateRaw, decodeBase64, rawRope, rawInt32, rawApplyConfig } from './raw.mjs';

const scalar = process.argv.includes('--scalar');
const raw = await instantiateRaw(decodeBase64(scalar ? scalarWasmBase64 : simdWasmBase64));
const ex = raw.exports;
const [B, S, H, D] = [1, 2048, 32, 128];
const n = B * S * H * D;
const rope = rawRope(raw, D);
const positions = rawInt32(raw, Int32Array.from({ length: S }, (_, i) => i + 1000));
const cos = raw.malloc(S * (D / 2) * 4);
const sin = raw.malloc(S * (D / 2) * 4);
if (ex.pe_rope_cos_sin(cos, sin, rope, positions, S, -1n, 1.0) !== 0) throw new Error('cos_sin failed');

// the dtype field's offset, from the module's own layout table (the last field before sizeof)
const countPtr = raw.malloc(8);
const layoutPtr = ex.pe_abi_rope_apply_config_layout(countPtr) >>> 0;
const count = raw.i32(countPtr, 1)[0];
const dtypeOffset = raw.i32(layoutPtr, count)[count - 2];
const configs = [0, 1, 2].map((dtype) => {
  const cfg = rawApplyConfig(raw, { batch: B, seq: S, heads: H });
  new DataView(raw.memory.buffer).setInt32(cfg + dtypeOffset, dtype, true);
  return cfg;
});
// separate buffers per dtype (rotating one type's bits as the other would drift into subnormals and NaNs)
const x32 = raw.malloc(n * 4);
const xf16 = raw.malloc(n * 2);
const xbf16 = raw.malloc(n * 2);
{
  const f = raw.f32(x32, n);
  for (let i = 0; i < n; i++) f[i] = Math.sin(i * 0.37) * 3;
  const bits = new Uint32Array(f.buffer, x32, n);
  const h = new Uint16Array(raw.memory.buffer, xf16, n);
  const hb = new Uint16Array(raw.memory.buffer, xbf16, n);
  for (let i = 0; i < n; i++) {
    hb[i] = bits[i] >>> 16; // truncated: fine as data
    h[i] = 0x3800 + (i % 0x0800) + ((i & 1) << 15); // float16 in ±[0.5, 2)
  }
}
const cases = [
  { name: 'float32', x: x32, cfg: configs[0], best: Infinity },
  { name: 'float16', x: xf16, cfg: configs[1], best: Infinity },
  { name: 'bfloat16', x: xbf16, cfg: configs[2], best: Infinity },
];
for (let rep = 0; rep < 15; rep++) {
  for (const c of cases) {
    const t0 = performance.now();
    const st = ex.pe_rope_apply(rope, c.x, cos, sin, c.cfg);
    const dt = performance.now() - t0;
    if (st !== 0) throw new Error(`pe_rope_apply ${c.name}: status ${st}`);
    if (rep > 0) c.best = Math.min(c.best, dt);
  }
}
const f32 = cases[0].best;
console.log(`rope.apply bshd [${B}, ${S}, ${H}, ${D}] (${(n / 1e6).toFixed(1)}M elements), ${scalar ? 'scalar' : 'SIMD'} build, min of 14:`);
for (const c of cases) {
  console.log(`  ${c.name.padEnd(8)} ${c.best.toFixed(2).padStart(8)} ms  ${((n / c.best) / 1e6).toFixed(0).padStart(5)} M elem/ms  ${(f32 / c.best).toFixed(2)}x vs float32`);
}
