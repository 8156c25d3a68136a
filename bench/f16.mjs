#!/usr/bin/env node
// f16.mjs — pe_rope_apply on 16-bit storage vs float32, raw kernel calls (no JS copies), large bshd
// [1, 2048, 32, 128]: memory-bound, so 16-bit data (half the bytes) should approach 2x per element (issue 11's
// target: float16 >= 1.7x float32). Part of `npm run bench` (measure(), the interface in targets.mjs).
//
//   node bench/f16.mjs [--quick] [--rounds N]      (after `bash build.sh wasm`)
import { compare } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rawRope, rawInt32, rawApplyConfig } from './raw.mjs';
import { rowFrom, standalone } from './targets.mjs';

/** The three dtypes' applies in raw's memory, measured side by side: rows float16 and bfloat16 vs float32. */
export async function measure(pe, { quick = false, rounds = 9, minSample = 0.02, raw }) {
  const ex = raw.exports;
  const [B, S, H, D] = quick ? [1, 256, 32, 128] : [1, 2048, 32, 128];
  const n = B * S * H * D;
  const ptrs = [];
  const keep = (p) => (ptrs.push(p), p);
  const rope = keep(rawRope(raw, D));
  const positions = keep(rawInt32(raw, Int32Array.from({ length: S }, (_, i) => i + 1000)));
  const cos = keep(raw.malloc(S * (D / 2) * 4));
  const sin = keep(raw.malloc(S * (D / 2) * 4));
  if (ex.pe_rope_cos_sin(cos, sin, rope, positions, S, -1n, 1.0) !== 0) throw new Error('cos_sin failed');

  // the dtype field's offset, from the module's own layout table (the last field before sizeof)
  const countPtr = keep(raw.malloc(8));
  const layoutPtr = ex.pe_abi_rope_apply_config_layout(countPtr) >>> 0;
  const count = raw.i32(countPtr, 1)[0];
  const dtypeOffset = raw.i32(layoutPtr, count)[count - 2];
  const configs = [0, 1, 2].map((dtype) => {
    const cfg = keep(rawApplyConfig(raw, { batch: B, seq: S, heads: H }));
    new DataView(raw.memory.buffer).setInt32(cfg + dtypeOffset, dtype, true);
    return cfg;
  });
  // separate buffers per dtype (rotating one type's bits as the other would drift into subnormals and NaNs)
  const x32 = keep(raw.malloc(n * 4));
  const xf16 = keep(raw.malloc(n * 2));
  const xbf16 = keep(raw.malloc(n * 2));
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
  const call = (x, cfg, name) => loop(() => {
    const st = ex.pe_rope_apply(rope, x, cos, sin, cfg);
    if (st !== 0) throw new Error(`pe_rope_apply ${name}: status ${st}`);
  });
  const { results } = await compare([
    { id: 'float32', sample: call(x32, configs[0], 'float32') },
    { id: 'float16', sample: call(xf16, configs[1], 'float16') },
    { id: 'bfloat16', sample: call(xbf16, configs[2], 'bfloat16') },
  ], { rounds, minSample });
  for (const p of ptrs) raw.free(p);
  const shape = `bshd [${B},${S},${H},${D}]`;
  const note = 'raw pe_rope_apply, one tensor, table made once; time(float32) / time(16-bit)';
  return ['float16', 'bfloat16'].map((dt) => rowFrom(results, 'float32', dt, {
    name: `${dt} vs float32 apply, ${quick ? '' : 'large '}${shape}`,
    target: 1.7,
    better: 'higher',
    note: results[dt]?.error ? results[dt].error : note,
  }));
}

await standalone(import.meta.url, measure);
