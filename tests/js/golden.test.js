// Every RoPE case of tests/golden/ (Hugging Face transformers' outputs), on the SIMD and the scalar build,
// against the *_f64 values (the same formulas run in double; right to ~1e-14 relative / ~5e-11 absolute).
// Ropes are made with pe.ropeFromHFConfig(config), so config.json parsing is under test too.
//
// Tolerances, and why they are what exact double-angle code achieves:
// - inv_freq, relative 2e-6. invFreq() is float32: rounding alone is <= 2^-24 ~ 6e-8 relative. invFreq64() is
//   the double the kernels use; it is held to 1e-12 relative (pow() differs from numpy's by an ulp or two).
// - attention_scaling, relative 1e-12: a double computed from the same closed forms.
// - cos/sin, absolute 2e-6 * max(1, a) (a = attention factor). Angles are formed and reduced in double, so the
//   only float32 steps are the reduced angle r (|r| <= pi/4, rounding moves it by <= 2^-25 rad), the short
//   polynomials (~1 ulp of float32 ~ 6e-8) and the multiplication by a: ~2e-7 * a in all. A float32 angle, as
//   the float32 reference forms it, would be off by ~1e-3 at position 10000; the f64 values leave no room
//   for that.
// - applied q/k, absolute 3e-5 * max(1, a). Inputs are randn (|x| up to ~4.5); each output is
//   x_a*cos - x_b*sin in float32: two products and a difference, each rounded (2^-24 relative), on top of
//   the cos/sin error above times |x|: ~4.5 * (2e-7 + 3 * 6e-8) ~ 2e-6 * a in the worst element. 3e-5 leaves
//   an order of magnitude for the inputs' tails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILDS, loadBuild, loadGolden, configJsonOf, maxAbsDiff, maxRelDiff, Worst, assertBitEqual } from './helpers.js';

const TOL_INV_FREQ = 2e-6;
const TOL_INV_FREQ64 = 1e-12;
const TOL_ATTN = 1e-12;
const TOL_COS_SIN = 2e-6;
const TOL_APPLY = 3e-5;

const worst = new Worst();

const invFreqFile = loadGolden('rope_inv_freq.json');
const cosSinFile = loadGolden('rope_cos_sin.json');
const halfFile = loadGolden('rope_apply_half_split.json');
const interFile = loadGolden('rope_apply_interleaved.json');

function relErr(a, b) {
  return Math.abs(a - b) / Math.abs(b);
}

for (const build of BUILDS) {
  test(`golden rope_inv_freq.json [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(invFreqFile.cases.length > 0);
    for (const c of invFreqFile.cases) {
      await t.test(c.id, () => {
        const rope = pe.ropeFromHFConfig(configJsonOf(c.config));
        try {
          assert.equal(rope.type, c.rope_type);
          const e = c.expected;
          assert.equal(rope.nFreq, e.n_inv_freq);
          const seqLen = c.seq_len ?? undefined;
          const f32 = rope.invFreq(seqLen);
          const f64 = rope.invFreq64(seqLen);
          assert.ok(f32 instanceof Float32Array && f64 instanceof Float64Array);
          assert.equal(f32.length, e.n_inv_freq);
          const r32 = maxRelDiff(f32, e.inv_freq_f64);
          const r64 = maxRelDiff(f64, e.inv_freq_f64);
          const ra = relErr(rope.attentionScaling(seqLen), e.attention_scaling);
          worst.record('inv_freq f32 (rel)', build.name, r32.err, TOL_INV_FREQ, c.id);
          worst.record('inv_freq f64 (rel)', build.name, r64.err, TOL_INV_FREQ64, c.id);
          worst.record('attention_scaling (rel)', build.name, ra, TOL_ATTN, c.id);
          assert.ok(r32.err <= TOL_INV_FREQ, `invFreq rel err ${r32.err} at ${r32.at}`);
          assert.ok(r64.err <= TOL_INV_FREQ64, `invFreq64 rel err ${r64.err} at ${r64.at}`);
          assert.ok(ra <= TOL_ATTN, `attention scaling ${rope.attentionScaling(seqLen)} vs ${e.attention_scaling}`);
        } finally {
          rope.free();
        }
      });
    }
  });

  test(`golden rope_cos_sin.json [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(cosSinFile.cases.length > 0);
    for (const c of cosSinFile.cases) {
      await t.test(c.id, () => {
        const rope = pe.ropeFromHFConfig(configJsonOf(c.config));
        try {
          const e = c.expected;
          const [B, S, W] = e.shape; // golden rows are cat(freqs, freqs): width W = 2 * nFreq
          assert.equal(rope.nFreq * 2, W);
          // One call over the whole batch: seqLen defaults to max(positions) + 1 over all of them, which is how
          // one HF forward call decides dynamic growth and longrope's long/short switch.
          const positions = Int32Array.from(c.position_ids.flat());
          const { cos, sin } = rope.cosSin(positions);
          const n = rope.nFreq;
          assert.equal(cos.length, B * S * n);
          // Our (B*S, n) rows against both halves of the golden (B, S, 2n) rows.
          const wantCos = new Float64Array(B * S * n);
          const wantSin = new Float64Array(B * S * n);
          for (let row = 0; row < B * S; row++) {
            for (let i = 0; i < n; i++) {
              wantCos[row * n + i] = e.cos_f64[row * W + i];
              wantSin[row * n + i] = e.sin_f64[row * W + i];
              assert.equal(e.cos_f64[row * W + i], e.cos_f64[row * W + n + i]); // the data are cat(freqs, freqs)
            }
          }
          const tol = TOL_COS_SIN * Math.max(1, e.attention_scaling);
          const dc = maxAbsDiff(cos, wantCos);
          const ds = maxAbsDiff(sin, wantSin);
          const err = Math.max(dc.err, ds.err);
          worst.record('cos/sin (abs)', build.name, err, tol, c.id);
          assert.ok(dc.err <= tol, `cos abs err ${dc.err} at ${dc.at} (position ${positions[Math.floor(dc.at / n)]})`);
          assert.ok(ds.err <= tol, `sin abs err ${ds.err} at ${ds.at} (position ${positions[Math.floor(ds.at / n)]})`);
          // The frequencies the forward pass used.
          const used = maxRelDiff(rope.invFreq64(Math.max(...positions) + 1), e.inv_freq_used_f64);
          assert.ok(used.err <= TOL_INV_FREQ64, `inv_freq used rel err ${used.err}`);
        } finally {
          rope.free();
        }
      });
    }
  });

  test(`golden rope_apply_half_split.json [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(halfFile.cases.length > 0);
    for (const c of halfFile.cases) {
      await t.test(c.id, () => {
        const rope = pe.ropeFromHFConfig(configJsonOf(c.config));
        try {
          assert.equal(rope.rotaryDim, c.rotary_dim);
          const [B, H, S, D] = c.shape; // golden tensors are [B, H, S, D]: our 'bhsd' layout, and its shape array
          const positions = Int32Array.from(c.position_ids.flat()); // per batch: length B * S
          const tol = TOL_APPLY * Math.max(1, c.expected.attention_scaling);
          for (const which of ['q', 'k']) {
            const x = Float32Array.from(c.inputs[which]);
            const out = rope.apply(x, { shape: [B, H, S, D], layout: 'bhsd', positions });
            assert.equal(out, x, 'apply works in place and returns x');
            const d = maxAbsDiff(out, c.expected[`${which}_embed_f64`]);
            worst.record('apply half-split (abs)', build.name, d.err, tol, `${c.id}.${which}`);
            assert.ok(d.err <= tol, `${which} abs err ${d.err} at ${d.at}`);
          }
        } finally {
          rope.free();
        }
      });
    }
  });

  test(`golden rope_apply_interleaved.json [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(interFile.cases.length > 0);
    for (const c of interFile.cases) {
      await t.test(c.id, () => {
        const [B, H, S, D] = c.shape;
        const positions = Int32Array.from(c.position_ids.flat());
        const scale = c.expected.attention_scaling ?? 1; // GPT-J has no scaling
        const tol = TOL_APPLY * Math.max(1, scale);
        const rope = pe.ropeFromHFConfig(configJsonOf(c.config), { pairing: 'interleaved' });
        try {
          assert.equal(rope.rotaryDim, c.rotary_dim);
          const r = c.rotary_dim;
          for (const which of ['q', 'k']) {
            const want = c.expected[`${which}_embed_f64`];
            if (c.variant === 'gptj') {
              // GPT-J: pairs (2i, 2i+1) of the first rotary_dim dimensions, output interleaved, rest untouched.
              const x = Float32Array.from(c.inputs[which]);
              rope.apply(x, { shape: [B, H, S, D], layout: 'bhsd', positions });
              const d = maxAbsDiff(x, want);
              worst.record('apply gptj interleaved (abs)', build.name, d.err, tol, `${c.id}.${which}`);
              assert.ok(d.err <= tol, `${which} abs err ${d.err} at ${d.at}`);
            } else {
              assert.equal(c.variant, 'deepseek_v3');
              // DeepSeek-V3 reads pairs interleaved and writes them de-interleaved:
              //   out = cat(x_even*cos - x_odd*sin, x_odd*cos + x_even*sin).
              // That is exactly (1) an interleaved apply followed by the de-interleave permutation
              // [y0, y2, y4, ... | y1, y3, y5, ...] of the rotated part, and equally (2) the de-interleave
              // permutation followed by a half-split apply. Check both.
              const x = Float32Array.from(c.inputs[which]);
              rope.apply(x, { shape: [B, H, S, D], layout: 'bhsd', positions });
              const way1 = deinterleave(x, D, r);
              const d1 = maxAbsDiff(way1, want);
              worst.record('apply deepseek interleave->deinterleave (abs)', build.name, d1.err, tol, `${c.id}.${which}`);
              assert.ok(d1.err <= tol, `${which} (interleaved apply, then de-interleave) abs err ${d1.err} at ${d1.at}`);

              const half = pe.ropeFromHFConfig(configJsonOf(c.config), { pairing: 'half' });
              try {
                const way2 = deinterleave(Float32Array.from(c.inputs[which]), D, r);
                half.apply(way2, { shape: [B, H, S, D], layout: 'bhsd', positions });
                const d2 = maxAbsDiff(way2, want);
                worst.record('apply deepseek deinterleave->half (abs)', build.name, d2.err, tol, `${c.id}.${which}`);
                assert.ok(d2.err <= tol, `${which} (de-interleave, then half-split apply) abs err ${d2.err} at ${d2.at}`);
              } finally {
                half.free();
              }
            }
          }
        } finally {
          rope.free();
        }
      });
    }
  });
}

/** Per head vector of width D: the first r dims [y0 y1 y2 y3 ...] -> [y0 y2 ... | y1 y3 ...]; the rest as is. */
function deinterleave(x, D, r) {
  const out = Float32Array.from(x);
  for (let base = 0; base < x.length; base += D) {
    for (let i = 0; i < r / 2; i++) {
      out[base + i] = x[base + 2 * i];
      out[base + r / 2 + i] = x[base + 2 * i + 1];
    }
  }
  return out;
}

// rope.c promises the SIMD and scalar builds agree bit for bit on tables and apply; every golden config (each
// scaling type, partial rotary, both pairings, per-sequence positions up to 131071) holds them to it, forward
// and inverse, and rerotate by a delta.
test('golden RoPE configs: SIMD and scalar builds agree bit for bit (cosSin, apply, inverse, rerotate)', async () => {
  const pes = await Promise.all(BUILDS.map((b) => loadBuild(b.simd)));
  let n = 0;
  for (const c of cosSinFile.cases) {
    const positions = Int32Array.from(c.position_ids.flat());
    const tabs = pes.map((pe) => {
      const rope = pe.ropeFromHFConfig(configJsonOf(c.config));
      try {
        return rope.cosSin(positions);
      } finally {
        rope.free();
      }
    });
    assertBitEqual(tabs[0].cos, tabs[1].cos, `${c.id}: cos`);
    assertBitEqual(tabs[0].sin, tabs[1].sin, `${c.id}: sin`);
    n++;
  }
  for (const c of [...halfFile.cases, ...interFile.cases]) {
    const [B, H, S, D] = c.shape;
    const positions = Int32Array.from(c.position_ids.flat());
    const pairing = interFile.cases.includes(c) ? 'interleaved' : 'half';
    const options = { shape: [B, H, S, D], layout: 'bhsd', positions };
    for (const which of ['q', 'k']) {
      const outs = pes.map((pe) => {
        const rope = pe.ropeFromHFConfig(configJsonOf(c.config), { pairing });
        try {
          const forward = rope.apply(Float32Array.from(c.inputs[which]), options);
          const inverse = rope.apply(Float32Array.from(c.inputs[which]), { ...options, inverse: true });
          const moved = rope.rerotate(Float32Array.from(forward), 37, { shape: options.shape, layout: 'bhsd' });
          return { forward, inverse, moved };
        } finally {
          rope.free();
        }
      });
      for (const kind of ['forward', 'inverse', 'moved']) {
        assertBitEqual(outs[0][kind], outs[1][kind], `${c.id}.${which}: ${kind}`);
      }
      n++;
    }
  }
  worst.record('SIMD vs scalar golden configs (abs)', 'both', 0, 1e-30, `${n} tables/tensors, bit for bit`);
});

test('golden: worst measured errors (summary)', (t) => {
  worst.report(t);
  assert.ok(worst.rows.size > 0);
});
