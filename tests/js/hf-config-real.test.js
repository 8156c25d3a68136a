// pe.fromHFConfig on every published config.json in tests/golden/hf-configs/, against what transformers computes
// for it (expected.json; its README gives the encoding and the tolerance rule): exact layer kinds, layer types,
// rope parameters, pairing, M-RoPE sections, ALiBi head counts and learned-table sizes; inv_freq within one
// float32 ulp of the float64 reference (1e-12 for the double copy), attention scaling, softmax and query scales
// within 1e-12 relative. Both builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BUILDS, loadBuild } from './helpers.js';

const DIR = new URL('../golden/hf-configs/', import.meta.url);
const expected = JSON.parse(readFileSync(new URL('expected.json', DIR), 'utf8'));
const F32_ULP = 2 ** -23;
const PAIRING = {
  half_split: { pairing: 'half', outputPairing: undefined },
  interleaved: { pairing: 'interleaved', outputPairing: undefined },
  interleaved_in_half_split_out: { pairing: 'interleaved', outputPairing: 'half' },
};

function relClose(got, want, tol, what) {
  assert.ok(Math.abs(got - want) <= tol * Math.abs(want), `${what}: got ${got}, want ${want} (tolerance ${tol} relative)`);
}

/** expected.json's run-length-encoded layers, one item per layer. */
function expandLayers(c) {
  const out = [];
  for (const run of c.layers) {
    assert.equal(run.start, out.length, `${c.file}: runs are contiguous`);
    for (let i = 0; i < run.count; i++) out.push(run);
  }
  assert.equal(out.length, c.num_layers);
  return out;
}

function checkRope(c, key, want, rope, layer) {
  const what = `${c.file} rope ${key}`;
  assert.equal(rope.type, want.rope_type, `${what}: type`);
  assert.equal(rope.base, want.base, `${what}: base`);
  assert.equal(rope.headDim, want.head_dim, `${what}: headDim`);
  assert.equal(rope.rotaryDim, want.rotary_dim, `${what}: rotaryDim`);
  assert.equal(rope.nFreq, want.n_inv_freq, `${what}: nFreq`);
  const p = PAIRING[want.pairing];
  assert.ok(p, `${what}: known pairing ${want.pairing}`);
  assert.equal(rope.pairing, p.pairing, `${what}: pairing`);
  assert.equal(layer.outputPairing, p.outputPairing, `${what}: outputPairing`);
  assert.deepEqual(layer.mrope === undefined ? undefined : { ...layer.mrope, section: [...layer.mrope.section] }, want.mrope, `${what}: mrope`);
  for (const ev of want.evaluations) {
    const sl = ev.seq_len ?? undefined;
    const f32 = rope.invFreq(sl);
    const f64 = rope.invFreq64(sl);
    assert.equal(f32.length, ev.inv_freq_f64.length, `${what}: invFreq length`);
    for (let i = 0; i < f32.length; i++) {
      const ref = ev.inv_freq_f64[i];
      assert.ok(Math.abs(f32[i] - ref) <= F32_ULP * Math.abs(ref), `${what} seqLen ${sl}: invFreq[${i}] = ${f32[i]}, f64 reference ${ref}`);
      relClose(f64[i], ref, 1e-12, `${what} seqLen ${sl}: invFreq64[${i}]`);
    }
    relClose(rope.attentionScaling(sl), ev.attention_scaling, 1e-12, `${what} seqLen ${sl}: attentionScaling`);
  }
}

function checkConfig(pe, c) {
  const config = JSON.parse(readFileSync(new URL(c.file, DIR), 'utf8'));
  const spec = pe.fromHFConfig(config);
  try {
    assert.equal(spec.modelType, c.model_type, `${c.file}: modelType`);
    assert.equal(spec.numLayers, c.num_layers, `${c.file}: numLayers`);
    assert.equal(spec.layers.length, c.num_layers, `${c.file}: one entry per layer`);
    const want = expandLayers(c);
    const ropeOf = new Map(); // expected rope key -> our rope object
    const keyOf = new Map(); // our rope object -> expected rope key
    const attention = c.attention ?? {};
    for (let i = 0; i < c.num_layers; i++) {
      const w = want[i];
      const l = spec.layers[i];
      const what = `${c.file} layer ${i}`;
      assert.equal(l.kind, w.kind, `${what}: kind`);
      assert.equal(l.layerType, w.layer_type, `${what}: layerType`);
      if (w.query_scale === undefined) {
        assert.equal(l.queryScale, undefined, `${what}: no query scale`);
      } else {
        const ref = attention.query_scale[w.query_scale];
        assert.equal(l.queryScale?.type, w.query_scale, `${what}: queryScale type`);
        for (const [pos, factor] of ref.samples) relClose(l.queryScale.at(pos), factor, 1e-12, `${what}: queryScale.at(${pos})`);
      }
      if (w.kind === 'rope') {
        // identical layers share one rope; layers expected to differ do not
        if (!ropeOf.has(w.rope)) {
          assert.ok(!keyOf.has(l.rope), `${what}: rope ${w.rope} is a different object from rope ${keyOf.get(l.rope)}`);
          ropeOf.set(w.rope, l.rope);
          keyOf.set(l.rope, w.rope);
          checkRope(c, w.rope, c.ropes[w.rope], l.rope, l);
        }
        assert.equal(l.rope, ropeOf.get(w.rope), `${what}: shares the rope object of rope ${w.rope}`);
        if (attention.softmax_scale === undefined) assert.equal(l.scale, undefined, `${what}: no softmax scale`);
        else relClose(l.scale, attention.softmax_scale, 1e-12, `${what}: scale (softmax)`);
      } else if (w.kind === 'alibi') {
        const a = attention.alibi;
        assert.equal(l.slopes.length, a.num_heads, `${what}: one slope per head`);
        for (let h = 0; h < a.num_heads; h++) {
          const ref = a.slopes_f64[h];
          assert.ok(Math.abs(l.slopes[h] - ref) <= F32_ULP * ref, `${what}: slope ${h} = ${l.slopes[h]}, f64 reference ${ref}`);
        }
      } else if (w.kind === 'learned') {
        assert.equal(l.maxLen, w.max_len, `${what}: maxLen`);
        assert.equal(l.offset, w.offset, `${what}: offset`);
      }
    }
    assert.deepEqual([...ropeOf.keys()].sort(), Object.keys(c.ropes).sort(), `${c.file}: every expected rope is used`);
    // `ignored` names keys that are in the file, by their dotted path
    for (const path of spec.ignored) {
      const value = path.split('.').reduce((o, k) => (o !== null && typeof o === 'object' ? o[k] : undefined), config);
      assert.ok(value !== undefined && value !== null, `${c.file}: ignored '${path}' is a key of the file`);
    }
  } finally {
    spec.free();
  }
}

for (const build of BUILDS) {
  test(`fromHFConfig on every published config in tests/golden/hf-configs [${build.name}]`, async (t) => {
    const pe = await loadBuild(build.simd);
    assert.ok(expected.configs.length >= 40, 'at least 40 published configs');
    for (const c of expected.configs) {
      await t.test(c.file.replace(/^configs\//, ''), () => checkConfig(pe, c));
    }
  });
}
