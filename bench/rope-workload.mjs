// rope-workload.mjs — the RoPE apply workload of `npm run bench` and every contender for it (workloads.mjs
// re-exports it). No Node-only API: the environment is passed in (see workloads.mjs), so a page can run it.
//
// Contender ids (shared across workloads so report.mjs can form ratios):
//   api        posenc SIMD, public API, pe.tensor inputs, q and k in one call: rope.apply(q, { k, ... }),
//              the same positions every call (the rope's cached table is reused: "cached positions")
//   api-new    (decode) the same call with a new position every call (a table that is not cached)
//   api-other  (half-split workloads) the same call through an interleaved rope on the same tensors, so
//              "interleaved vs half-split" is a ratio taken in the same rounds
//   api-copy   (half/bshd) the same call with plain Float32Arrays, copied in and out by the API
//   raw        posenc SIMD exports: one pe_rope_cos_sin table + pe_rope_apply_qk (what rope.apply(q, { k }) calls);
//              raw-apply: pe_rope_apply_qk only (table made once)
//   scalar     posenc scalar build, public API, pe.tensor
//   js         plain JS loops with a cached cos/sin table (plainjs.mjs)
//   rotation   limit: rotation — the hand-written SIMD128 rotation (bench/wasm/rotation.c), table made once
//   limit      limit: in-place — an unrolled SIMD128 `x *= s` pass over the same bytes (bench/wasm/limit.c)
//   memcpy     memory.copy of the same bytes
//   native     posenc's C, gcc -O3 -march=native, SIMD via simd.h, same work as `raw`; native-apply: apply only

import { fillRandom } from '../web/widgets/lib/measure.js';
import { loop } from './clock.mjs';
import { rawRope, rawFloat32, rawInt32, rawApplyConfig } from './raw.mjs';
import * as plain from './plainjs.mjs';

const SEQ_FROM_POSITIONS = -1n; // PE_SEQ_LEN_FROM_POSITIONS (an i64 argument: BigInt at the JS boundary)
const LAYOUT = { bshd: 0, bhsd: 1 };
const PAIRING = { half: 0, interleaved: 1 };

export const ROPE_SHAPES = {
  decode: { shape: [1, 1, 32, 128], pos0: 4095 },
  prefill: { shape: [1, 512, 32, 128], pos0: 0 },
  large: { shape: [4, 2048, 32, 128], pos0: 0 },
};
export const TABLE_POSITIONS = 4096; // cos/sin cache rows (plain JS, onnxruntime)

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = d; // NaN sticks
  }
  return m;
}

const want = (include, id) => !include || include.includes(id);

/**
 * RoPE apply, in place, on q and k of one shape. opts: { size: 'decode'|'prefill'|'large', pairing, layout,
 * include?: [contender ids], shape?: [B, S, H, 128] in place of the size's (run.mjs --quick) }.
 */
export function ropeWorkload(env, { size, pairing, layout, include, shape: shapeOverride }) {
  const { pos0 } = ROPE_SHAPES[size];
  const shape = shapeOverride ?? ROPE_SHAPES[size].shape;
  const [B, S, H, D] = shape;
  const n = B * S * H * D;
  const nf = D / 2;
  const positions = Int32Array.from({ length: S }, (_, s) => pos0 + s);
  const q0 = fillRandom(new Float32Array(n), 11);
  const k0 = fillRandom(new Float32Array(n), 12);
  const contenders = [];
  const disposers = [];
  // each check returns [q, k] after one rotation of fresh copies
  const checks = {};
  const apiShape = layout === 'bhsd' ? [B, H, S, D] : shape; // rope.apply's shape: the tensor's own memory order
  const add = (id, label, fn) => contenders.push({ id, label, sample: loop(fn) });

  const rope = env.pe.rope({ headDim: D, pairing });
  disposers.push(() => rope.free());
  const apiCheck = (r) => () => {
    const q = env.pe.tensor(q0);
    const k = env.pe.tensor(k0);
    r.apply(q, { shape: apiShape, layout, positions, k });
    const out = [q.array.slice(), k.array.slice()];
    q.free();
    k.free();
    return out;
  };
  if (want(include, 'api') || want(include, 'api-new') || want(include, 'api-other')) {
    const qT = env.pe.tensor(q0);
    const kT = env.pe.tensor(k0);
    disposers.push(() => (qT.free(), kT.free()));
    if (want(include, 'api')) {
      checks.api = apiCheck(rope);
      add('api', 'posenc SIMD, API rope.apply(q, { k }), pe.tensor', () => rope.apply(qT, { shape: apiShape, layout, positions, k: kT }));
    }
    if (want(include, 'api-new') && size === 'decode') {
      // one new position per call, as a decode step has: the rope's table cache misses every time
      const pNew = positions.slice();
      let step = 0;
      add('api-new', 'posenc SIMD, API, a new position every call', () => {
        pNew[0] = pos0 + (++step & 1023);
        rope.apply(qT, { shape: apiShape, layout, positions: pNew, k: kT });
      });
    }
    if (want(include, 'api-other') && pairing === 'half') {
      const other = env.pe.rope({ headDim: D, pairing: 'interleaved' });
      disposers.push(() => other.free());
      checks['api-other'] = null; // checked in its own (interleaved) workload
      add('api-other', 'posenc SIMD, API, interleaved rope on the same tensors', () => other.apply(qT, { shape: apiShape, layout, positions, k: kT }));
    }
  }
  if (want(include, 'api-copy')) {
    const qA = q0.slice();
    const kA = k0.slice();
    add('api-copy', 'posenc SIMD, API, Float32Array copied', () => rope.apply(qA, { shape: apiShape, layout, positions, k: kA }));
  }

  // posenc SIMD, raw exports: the same work as rope.apply (a table per call, then the rotation)
  if (env.raw && (want(include, 'raw') || want(include, 'raw-apply'))) {
    const r = env.raw;
    const ex = r.exports;
    const ropePtr = rawRope(r, D, pairing);
    const qP = rawFloat32(r, q0);
    const kP = rawFloat32(r, k0);
    const posP = rawInt32(r, positions);
    const cosP = r.malloc(S * nf * 4);
    const sinP = r.malloc(S * nf * 4);
    const acP = rawApplyConfig(r, { batch: B, seq: S, heads: H, layout: LAYOUT[layout] });
    disposers.push(() => [ropePtr, qP, kP, posP, cosP, sinP, acP].forEach((p) => r.free(p)));
    ex.pe_rope_cos_sin(cosP, sinP, ropePtr, posP, S, SEQ_FROM_POSITIONS, 1.0);
    checks.raw = () => {
      const t = rawFloat32(r, q0);
      const u = rawFloat32(r, k0);
      ex.pe_rope_apply_qk(ropePtr, t, u, cosP, sinP, acP, acP);
      const out = [r.f32(t, n).slice(), r.f32(u, n).slice()];
      r.free(t);
      r.free(u);
      return out;
    };
    if (want(include, 'raw')) {
      add('raw', 'posenc SIMD, raw exports (one cos_sin table + apply_qk)', () => {
        ex.pe_rope_cos_sin(cosP, sinP, ropePtr, posP, S, SEQ_FROM_POSITIONS, 1.0);
        ex.pe_rope_apply_qk(ropePtr, qP, kP, cosP, sinP, acP, acP);
      });
    }
    if (want(include, 'raw-apply')) {
      add('raw-apply', 'posenc SIMD, raw pe_rope_apply_qk only (q and k in one call, table made once)', () => {
        ex.pe_rope_apply_qk(ropePtr, qP, kP, cosP, sinP, acP, acP);
      });
    }
  }

  if (env.peScalar && want(include, 'scalar')) {
    const ropeS = env.peScalar.rope({ headDim: D, pairing });
    const qT = env.peScalar.tensor(q0);
    const kT = env.peScalar.tensor(k0);
    disposers.push(() => (qT.free(), kT.free(), ropeS.free()));
    add('scalar', 'posenc scalar, API, pe.tensor', () => ropeS.apply(qT, { shape: apiShape, layout, positions, k: kT }));
  }

  if (want(include, 'js')) {
    const table = plain.ropeTable(TABLE_POSITIONS, D);
    const qJ = q0.slice();
    const kJ = k0.slice();
    checks.js = () => [q0, k0].map((x) => plain.ropeApply(x.slice(), table, positions, B, S, H, D, layout, pairing));
    add('js', 'plain JS loops, cached cos/sin table', () => {
      plain.ropeApply(qJ, table, positions, B, S, H, D, layout, pairing);
      plain.ropeApply(kJ, table, positions, B, S, H, D, layout, pairing);
    });
  }

  // the limits, in limit.wasm's own memory: the hand-written rotation, the in-place pass, memcpy
  if (env.limit) {
    const L = env.limit;
    const ex = L.exports;
    const qP = rawFloat32(L, q0);
    const kP = rawFloat32(L, k0);
    disposers.push(() => (L.free(qP), L.free(kP)));
    const rot = ex[`rot_${pairing === 'half' ? 'half' : 'il'}_${layout}`];
    if (want(include, 'rotation') && typeof rot === 'function' && D === 128) {
      // the table for these positions, made once (posenc's values: the contender is the rotation only)
      const tableRope = env.pe.rope({ headDim: D });
      const { cos, sin } = tableRope.cosSin(positions);
      tableRope.free();
      const cP = rawFloat32(L, cos);
      const sP = rawFloat32(L, sin);
      disposers.push(() => (L.free(cP), L.free(sP)));
      checks.rotation = () => {
        const t = rawFloat32(L, q0);
        const u = rawFloat32(L, k0);
        rot(t, u, cP, sP, B, S, H);
        const out = [L.f32(t, n).slice(), L.f32(u, n).slice()];
        L.free(t);
        L.free(u);
        return out;
      };
      add('rotation', 'limit: rotation (hand-written SIMD128, unrolled rows, q and k share cos/sin loads)', () => rot(qP, kP, cP, sP, B, S, H));
    }
    if (want(include, 'limit')) {
      add('limit', 'limit: in-place unrolled SIMD128 `x *= s` (read + write once)', () => {
        ex.limit_inplace(qP, n, 1.0);
        ex.limit_inplace(kP, n, 1.0);
      });
    }
    if (want(include, 'memcpy')) {
      const dst = L.malloc(n * 4);
      disposers.push(() => L.free(dst));
      add('memcpy', 'limit: memcpy (memory.copy)', () => {
        ex.limit_copy(dst, qP, n);
        ex.limit_copy(dst, kP, n);
      });
    }
  }

  if (env.native) {
    const cmd = (mode) => `rope ${B} ${S} ${H} ${D} ${PAIRING[pairing]} ${LAYOUT[layout]} ${pos0} ${mode}`;
    if (want(include, 'native')) contenders.push({ id: 'native', label: 'native C (gcc -O3 -march=native)', sample: env.native(cmd(0)) });
    if (want(include, 'native-apply')) contenders.push({ id: 'native-apply', label: 'native C, pe_rope_apply_qk only', sample: env.native(cmd(1)) });
  }

  return {
    id: `rope/${size}/${pairing}/${layout}`,
    group: 'rope',
    label: `RoPE ${size} [${shape}] ${pairing} ${layout}`,
    params: { size, shape, pairing, layout, pos0, bytes: 2 * n * 4 },
    contenders,
    check() {
      // reference: plain JS in double-precision angles (its own table), for q and k
      const table = plain.ropeTable(pos0 + S, D);
      const ref = [q0, k0].map((x) => plain.ropeApply(x.slice(), table, positions, B, S, H, D, layout, pairing));
      const out = {};
      for (const [id, f] of Object.entries(checks)) {
        if (!f) continue;
        const [q, k] = f();
        out[id] = Math.max(maxAbsDiff(q, ref[0]), maxAbsDiff(k, ref[1]));
      }
      return out;
    },
    dispose() {
      for (const d of disposers.reverse()) d();
    },
  };
}
