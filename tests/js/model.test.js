// model.test.js — the tiny models from JS (web/src/model.js over dist/posenc-model*.wasm, both builds): every shipped model
// loads and reaches the in-distribution loss/accuracy recorded in its config.json; wasm logits match the native
// (gcc) logits within the stated tolerance; attention weights; RoPE scalings; malformed files are rejected with
// clear errors; memory is released.
//
// Native vs wasm, same sources: |logit difference| <= 1e-5 absolute. The native logits come from
// build/native/scalar/test_model_shipped --logits (built by build.sh from the current sources). Both run the same C
// with the same summation order and no FMA contraction (GELU's tanh is our own arithmetic, not libm's); they
// could differ only in expf inside pe_attention (glibc vs musl) and in pe_attention's SIMD path. Observed:
// identical up to the 9 printed digits (< 1e-7).
// Against logits.json (the trainer's logits, from the sources named by config.json's sources_sha256):
// <= 1e-4, because the kernels may have reordered sums since the models were trained.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createModelApi, parseSafetensors, ModelFileError, readTensor } from '../../web/src/model.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const MODELS = process.env.POSENC_MODELS_DIR ?? join(ROOT, 'web/playground/public/models'); // override: test a fresh `train.mjs --out DIR`
const NATIVE_TOL = 1e-5;
const TRAINER_TOL = 1e-4;
const NATIVE_TOOL = join(ROOT, 'build/native/scalar/test_model_shipped');

/** This checkout's native logits for a model's logits.json input, or null without the native test build. */
function nativeLogits(name) {
  if (!existsSync(NATIVE_TOOL) || process.env.POSENC_MODELS_DIR) return null;
  const r = spawnSync(NATIVE_TOOL, ['--logits', name], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${NATIVE_TOOL} --logits ${name} failed: ${r.stderr}`);
  return JSON.parse(r.stdout).logits;
}

async function instantiate(file) {
  const module = new WebAssembly.Module(readFileSync(join(ROOT, file)));
  const imports = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    (imports[imp.module] ??= {})[imp.name] = imp.name === 'proc_exit' ? (c) => { throw new Error(`proc_exit(${c})`); } : () => 52;
  }
  const instance = await WebAssembly.instantiate(module, imports);
  if (instance.exports._initialize) instance.exports._initialize();
  return instance;
}

const builds = [
  ['simd', 'dist/posenc-model.simd.wasm'],
  ['scalar', 'dist/posenc-model.wasm'],
];

const modelNames = existsSync(MODELS)
  ? readdirSync(MODELS).filter((d) => existsSync(join(MODELS, d, 'config.json'))).sort()
  : [];

function readModel(name) {
  const dir = join(MODELS, name);
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const bytes = new Uint8Array(readFileSync(join(dir, config.posenc.weights)));
  return { config, bytes, dir };
}

function checkSet(config) {
  return JSON.parse(readFileSync(join(MODELS, `${config.posenc.task}-check.json`), 'utf8'));
}

// A safetensors writer for crafting test files: tensors { name: { dtype, shape, data: Uint8Array } }.
function writeSafetensors(tensors, metadata) {
  const header = {};
  if (metadata) header.__metadata__ = metadata;
  let off = 0;
  const parts = [];
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + t.data.length] };
    parts.push(t.data);
    off += t.data.length;
  }
  let json = JSON.stringify(header);
  while ((8 + json.length) % 8) json += ' ';
  const out = new Uint8Array(8 + json.length + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(new TextEncoder().encode(json), 8);
  let at = 8 + json.length;
  for (const p of parts) { out.set(p, at); at += p.length; }
  return out;
}

// Rewrites a real model file: edit(header object) may change it; tensor data is kept by name.
function rewrite(bytes, edit) {
  const parsed = parseSafetensors(bytes);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + parsed.headerLength)));
  const meta = header.__metadata__;
  delete header.__metadata__;
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    tensors[name] = { dtype: t.dtype, shape: t.shape, data: bytes.slice(parsed.dataOffset + t.data_offsets[0], parsed.dataOffset + t.data_offsets[1]) };
  }
  const m = { ...meta };
  edit(tensors, m);
  return writeSafetensors(tensors, m);
}

test('shipped models exist (run `npm run train` to make them)', () => {
  assert.ok(modelNames.length >= 10, `expected 10 models in ${MODELS}, found ${modelNames.join(', ') || 'none'}`);
  for (const t of ['copy', 'lm']) for (const pe of ['none', 'sinusoidal', 'learned', 'rope', 'alibi']) assert.ok(modelNames.includes(`${t}-${pe}`), `${t}-${pe} missing`);
});

for (const [buildName, file] of builds) {
  describe(`tiny models, ${buildName} build`, async () => {
    const instance = await instantiate(file);
    const api = createModelApi(instance);

    for (const name of modelNames) {
      test(`${name}: loads, reaches its recorded in-distribution loss/accuracy, matches native logits`, () => {
        const { config, bytes, dir } = readModel(name);
        const model = api.loadModel(bytes, config);
        try {
          assert.equal(model.positionEncoding, config.position_encoding);
          assert.equal(model.vocab, config.posenc.vocab);
          // in distribution: the check set, as recorded by the trainer (native)
          const set = checkSet(config);
          let lossSum = 0, correct = 0, count = 0;
          for (const seq of set.sequences) {
            const text = seq.text;
            const tokens = model.encode(text.slice(0, -1));
            const all = model.encode(text);
            const targets = new Int32Array(tokens.length);
            for (let i = 0; i < tokens.length; i++) targets[i] = seq.scored[i] === '1' ? all[i + 1] : -1;
            const r = model.evaluate(tokens, { targets });
            lossSum += r.lossSum; correct += r.correct; count += r.count;
          }
          const rec = config.posenc.evaluation.in_distribution;
          assert.equal(count, rec.targets, 'scored targets');
          const loss = lossSum / count, acc = correct / count;
          assert.ok(Math.abs(loss - rec.loss) <= 1e-4 * Math.max(1, rec.loss), `loss ${loss} vs recorded ${rec.loss}`);
          assert.ok(Math.abs(acc - rec.accuracy) <= 1 / count + 1e-12, `accuracy ${acc} vs recorded ${rec.accuracy}`);
          // wasm vs the trainer's logits (logits.json), and vs this checkout's native build when there is one
          const trainer = JSON.parse(readFileSync(join(dir, 'logits.json'), 'utf8'));
          const { logits } = model.forward(trainer.text);
          const maxDiff = (ref) => {
            assert.equal(logits.length, ref.length);
            let md = 0;
            for (let i = 0; i < logits.length; i++) md = Math.max(md, Math.abs(logits[i] - ref[i]));
            return md;
          };
          const mt = maxDiff(trainer.logits);
          assert.ok(mt <= TRAINER_TOL, `max |wasm - trainer| logit difference ${mt} > ${TRAINER_TOL}`);
          const native = nativeLogits(name);
          if (native) {
            const mn = maxDiff(native);
            assert.ok(mn <= NATIVE_TOL, `max |wasm - native| logit difference ${mn} > ${NATIVE_TOL}`);
          }
        } finally {
          model.free();
        }
      });
    }

    test('attention weights: shape, causal zeros, rows sum to 1; same logits with and without', () => {
      const { config, bytes } = readModel('copy-alibi');
      const model = api.loadModel(bytes, config);
      const text = '.abc|abc.de|d';
      const n = text.length;
      const a = model.forward(text, { attention: true });
      const b = model.forward(text);
      assert.deepEqual(a.logits, b.logits);
      assert.equal(a.attention.length, model.numLayers * model.numHeads * n * n);
      for (let r = 0; r < model.numLayers * model.numHeads * n; r++) {
        const i = r % n;
        let s = 0;
        for (let j = 0; j < n; j++) {
          const p = a.attention[r * n + j];
          if (j > i) assert.equal(p, 0);
          s += p;
        }
        assert.ok(Math.abs(s - 1) < 1e-5, `row sum ${s}`);
      }
      model.free();
    });

    // q and k (forward({ qk })) against float64 references: layer 0 from the weights (x0 = 8 E[token],
    // RMSNorm, q = h Wq^T), and every layer through its own attention weights (softmax of the RoPE-turned q.k
    // / sqrt(hd), turned here in double, half-split pairs, base rope_theta), which the model computed from them.
    // Tolerances: float32 sums of 64 products of O(1) terms (layer 0, 1e-4 absolute); softmax weights of
    // float32 scores of magnitude < 30 (1e-4).
    test('forward({ qk }): each layer\'s q and k before RoPE; same logits and attention bit for bit', () => {
      const { config, bytes } = readModel('copy-rope');
      const model = api.loadModel(bytes, config);
      const parsed = parseSafetensors(bytes);
      const text = '.qhbe|qhbe.xkdmz|xkd';
      const n = text.length, D = model.hiddenSize, H = model.numHeads, hd = D / H, L = model.numLayers;
      const ids = model.encode(text);
      const a = model.forward(ids, { attention: true, qk: true });
      const b = model.forward(ids, { attention: true });
      assert.deepEqual(a.logits, b.logits);
      assert.deepEqual(a.attention, b.attention);
      assert.equal(a.q.length, L * n * D);
      assert.equal(a.k.length, L * n * D);
      const E = readTensor(bytes, parsed, 'model.embed_tokens.weight');
      const g = readTensor(bytes, parsed, 'model.layers.0.input_layernorm.weight');
      const Wq = readTensor(bytes, parsed, 'model.layers.0.self_attn.q_proj.weight');
      const Wk = readTensor(bytes, parsed, 'model.layers.0.self_attn.k_proj.weight');
      let worst = 0;
      for (let t = 0; t < n; t++) {
        const x = Array.from({ length: D }, (_, i) => 8 * E[ids[t] * D + i]);
        const r = 1 / Math.sqrt(x.reduce((s2, v) => s2 + v * v, 0) / D + 1e-5);
        const hN = x.map((v, i) => v * r * g[i]);
        for (let o = 0; o < D; o++) {
          let q = 0, k = 0;
          for (let i = 0; i < D; i++) { q += hN[i] * Wq[o * D + i]; k += hN[i] * Wk[o * D + i]; }
          worst = Math.max(worst, Math.abs(a.q[t * D + o] - q), Math.abs(a.k[t * D + o] - k));
        }
      }
      assert.ok(worst < 1e-4, `layer 0 q/k differ from the float64 reference by ${worst}`);
      const theta = config.rope_theta;
      const turn = (v, off, p) => {
        const out = new Float64Array(hd);
        for (let i = 0; i < hd / 2; i++) {
          const ang = p * theta ** (-2 * i / hd), c = Math.cos(ang), s2 = Math.sin(ang);
          const x1 = v[off + i], x2 = v[off + i + hd / 2];
          out[i] = x1 * c - x2 * s2;
          out[i + hd / 2] = x1 * s2 + x2 * c;
        }
        return out;
      };
      let worstP = 0;
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          for (let i = 0; i < n; i++) {
            const qi = turn(a.q, (l * n + i) * D + h * hd, i);
            const sc = [];
            for (let j = 0; j <= i; j++) {
              const kj = turn(a.k, (l * n + j) * D + h * hd, j);
              let d = 0;
              for (let x = 0; x < hd; x++) d += qi[x] * kj[x];
              sc.push(d / Math.sqrt(hd));
            }
            const mx = Math.max(...sc);
            const z = sc.reduce((s2, v) => s2 + Math.exp(v - mx), 0);
            for (let j = 0; j <= i; j++) {
              worstP = Math.max(worstP, Math.abs(Math.exp(sc[j] - mx) / z - a.attention[((l * H + h) * n + i) * n + j]));
            }
          }
        }
      }
      assert.ok(worstP < 1e-4, `attention from the returned q, k differs by ${worstP}`);
      assert.throws(() => model.forward(ids, { qK: true }), /did you mean qk/);
      model.free();
    });

    test('RoPE scalings run beyond the training length; other models reject them', () => {
      const { config, bytes } = readModel('copy-rope');
      const model = api.loadModel(bytes, config);
      const T = model.maxPositionEmbeddings;
      const tokens = new Int32Array(4 * T).map((_, i) => (i * 7) % model.vocabSize);
      const base = model.forward(tokens).logits;
      for (const type of ['linear', 'ntk', 'dynamic', 'yarn']) {
        const { logits } = model.forward(tokens, { ropeScaling: { type, factor: 4 } });
        assert.ok(logits.every(Number.isFinite), type);
        assert.notDeepEqual(logits, base, `${type} changes the logits`);
      }
      assert.deepEqual(model.forward(tokens, { ropeScaling: { type: 'trained' } }).logits, base);
      assert.throws(() => model.forward(tokens, { ropeScaling: { type: 'longrope', factor: 2 } }), RangeError);
      assert.throws(() => model.forward(tokens, { ropeScaling: { type: 'yarn', factor: 0 } }), /factor must be a finite number > 0/);
      model.free();
      const alibi = api.loadModel(readModel('copy-alibi').bytes, readModel('copy-alibi').config);
      assert.throws(() => alibi.forward([1, 2], { ropeScaling: { type: 'linear', factor: 2 } }), /applies to RoPE models/);
      alibi.free();
    });

    test('bad inputs: learned positions past the table, unknown characters, token ids', () => {
      const { config, bytes } = readModel('copy-learned');
      const model = api.loadModel(bytes, config);
      const T = model.maxPositionEmbeddings;
      assert.throws(() => model.forward(new Int32Array(T + 1)), /max_position_embeddings = 64/);
      assert.equal(model.forward(new Int32Array(T)).seqLen, T);
      assert.throws(() => model.encode('abc!'), /character "!" at index 3/);
      assert.throws(() => model.forward([0, 99]), /\[0, 27\], got 99 at index 1/);
      assert.throws(() => model.forward([0, 1.5]), RangeError);
      assert.throws(() => model.forward([]), /at least 1 token/);
      assert.throws(() => model.forward(42), TypeError);
      assert.equal(model.decode(model.encode('.ab|ab')), '.ab|ab');
      model.free();
      assert.throws(() => model.forward([1]), /freed/);
      model.free(); // twice is fine
    });

    test('malformed files are rejected with clear errors', () => {
      const { config, bytes } = readModel('lm-rope');
      const rejects = (b, re, cfg = config) => assert.throws(() => api.loadModel(b, cfg), (e) => e instanceof ModelFileError && re.test(e.message), String(re));
      // truncated anywhere
      for (const cut of [0, 4, 7, 8, 20, 100, bytes.length >> 1, bytes.length - 4, bytes.length - 1]) {
        rejects(bytes.slice(0, cut), /too short|past the end|outside the data section|malformed JSON|cover/);
      }
      // header length past the end
      const big = bytes.slice();
      new DataView(big.buffer).setBigUint64(0, BigInt(bytes.length), true);
      rejects(big, /header length \d+ runs past the end/);
      const huge = bytes.slice();
      new DataView(huge.buffer).setBigUint64(0, 1n << 62n, true);
      rejects(huge, /runs past the end/);
      // corrupted JSON
      const bad = bytes.slice();
      bad[8] = 0x5b; // '['
      rejects(bad, /malformed JSON|must be an object/);
      const bad2 = bytes.slice();
      bad2[12] = 0xff;
      rejects(bad2, /UTF-8|malformed JSON/);
      // wrong dtype, missing tensor, extra tensor, wrong shape, overlap
      rejects(rewrite(bytes, (t) => { t['model.norm.weight'].dtype = 'F16'; t['model.norm.weight'].data = t['model.norm.weight'].data.slice(0, 128); }), /dtype F16, only F32/);
      rejects(rewrite(bytes, (t) => { delete t['model.layers.1.mlp.up_proj.weight']; }), /missing tensor 'model.layers.1.mlp.up_proj.weight'/);
      rejects(rewrite(bytes, (t) => { t['lm_head.weight'] = { dtype: 'F32', shape: [1], data: new Uint8Array(4) }; }), /unexpected tensor 'lm_head.weight'/);
      rejects(rewrite(bytes, (t) => { t['model.norm.weight'].shape = [4, 16]; }), /shape \[4, 16\], expected \[64\]/);
      rejects(rewrite(bytes, (t) => { t['model.norm.weight'].dtype = 'Q4'; }), /unknown dtype "Q4"/);
      // metadata: missing key (the C loader's message), mismatch with config.json
      rejects(rewrite(bytes, (t, m) => { delete m.embedding_multiplier; }), /lacks 'embedding_multiplier'/);
      rejects(bytes, /config.json says hidden_size = 32 but the safetensors file says 64/, { ...config, hidden_size: 32 });
      rejects(bytes, /position_encoding must be one of/, { ...config, position_encoding: 'spiral' });
      rejects(bytes, /config.json lacks 'rope_theta'/, Object.fromEntries(Object.entries(config).filter(([k]) => k !== 'rope_theta')));
      // raw parser: overlaps, holes, bad offsets
      const f32 = (n) => new Uint8Array(4 * n);
      const raw = (header, dataLen) => {
        const json = JSON.stringify(header);
        const out = new Uint8Array(8 + json.length + dataLen);
        new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
        out.set(new TextEncoder().encode(json), 8);
        return out;
      };
      assert.throws(() => parseSafetensors(raw({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, 12)), /overlaps/);
      assert.throws(() => parseSafetensors(raw({ a: { dtype: 'F32', shape: [2], data_offsets: [4, 12] } }, 12)), /hole/);
      assert.throws(() => parseSafetensors(raw({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } }, 12)), /cover 8 of the 12/);
      assert.throws(() => parseSafetensors(raw({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, 8)), /needs 12/);
      assert.throws(() => parseSafetensors(raw({ a: { dtype: 'F32', shape: [-1], data_offsets: [0, 8] } }, 8)), /non-negative integers/);
      assert.throws(() => parseSafetensors(raw({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8], extra: 1 } }, 8)), /unknown key 'extra'/);
      assert.throws(() => parseSafetensors(raw({ __metadata__: { a: 1 } }, 0)), /must be a string/);
      assert.throws(() => parseSafetensors('not bytes'), TypeError);
      const ok = parseSafetensors(writeSafetensors({ x: { dtype: 'F32', shape: [2], data: f32(2) } }, { k: 'v' }));
      assert.deepEqual(ok.metadata, { k: 'v' });
      assert.deepEqual(readTensor(writeSafetensors({ x: { dtype: 'F32', shape: [2], data: new Uint8Array(new Float32Array([1.5, -2]).buffer) } }), parseSafetensors(writeSafetensors({ x: { dtype: 'F32', shape: [2], data: f32(2) } })), 'x').length, 2);
      // the module still works after all that
      const m = api.loadModel(bytes, config);
      assert.equal(m.forward('the cat').seqLen, 7);
      m.free();
    });

    test('sizes past what wasm memory holds are refused before any allocation; the model stays usable', () => {
      // copy-rope: 2 layers, 4 heads, hidden 64, intermediate 256, head_dim 16, vocab 28
      const { config, bytes } = readModel('copy-rope');
      const model = api.loadModel(bytes, config);
      const fresh = api.loadModel(bytes, config);
      try {
        const probe = new Int32Array(3000).map((_, i) => (i * 7 + 2) % model.vocabSize);
        const want = fresh.forward(probe).logits;
        assert.deepEqual(model.forward(probe).logits, want);
        const mem = instance.exports.memory.buffer.byteLength;
        // attention weights of 2 * 4 * 11586^2 floats are 4295532672 bytes: past 2^32 (the JS byte count once wrapped)
        assert.throws(() => model.forward(new Int32Array(11586).fill(2), { attention: true }),
          (e) => e instanceof RangeError && /forward: 11586 tokens' ids, logits and attention weights need 4296876648 bytes, more than the 4294967296 bytes \(4 GiB\)/.test(e.message), 'attention past 4 GiB');
        assert.equal(instance.exports.memory.buffer.byteLength, mem, 'nothing was allocated');
        assert.deepEqual(model.forward(probe).logits, want, 'the model still computes the same logits');
        // the scratch of 5957222 tokens is 5957222 * 721 floats: more bytes than a 32-bit size_t counts
        assert.throws(() => model.forward(new Int32Array(5957222).fill(2)),
          (e) => e instanceof RangeError && /scratch/.test(e.message) && /17180628248 bytes/.test(e.message) && /4294967295/.test(e.message), 'scratch past size_t');
        assert.equal(instance.exports.memory.buffer.byteLength, mem, 'nothing was allocated');
        assert.deepEqual(model.forward(probe).logits, want, 'the model still computes the same logits');
        const { attention } = model.forward(probe.subarray(0, 40), { attention: true });
        for (let row = 0; row < 2 * 4 * 40; row++) {
          let sum = 0;
          for (let j = 0; j < 40; j++) sum += attention[row * 40 + j];
          assert.ok(Math.abs(sum - 1) < 1e-5, `attention row ${row} sums to ${sum}`);
        }
      } finally {
        model.free();
        fresh.free();
      }
    });

    test('the C reader counts sizes in 64 bits: a 64 GiB learned table is refused by name and bound; huge weights too', () => {
      const ex = instance.exports;
      const u8 = () => new Uint8Array(ex.memory.buffer);
      const meta = { vocab_size: '2', hidden_size: '1024', num_hidden_layers: '1', num_attention_heads: '1',
        intermediate_size: '1', max_position_embeddings: String(2 ** 24), position_encoding: 'learned', rope_theta: '10000',
        rms_norm_eps: '1e-5', embedding_multiplier: '1' };
      const file = writeSafetensors({}, meta); // header only: the size check comes first
      const m = ex.malloc(ex.pe_model_struct_size()), out = ex.malloc(8), f = ex.malloc(file.length);
      u8().set(file, f);
      assert.notEqual(ex.pe_model_open(m, out, f, file.length), 0);
      const msgPtr = ex.pe_model_message(m);
      const msg = new TextDecoder().decode(u8().subarray(msgPtr, u8().indexOf(0, msgPtr)));
      // (embeddings 2 * 1024 + positions 2^24 * 1024 + one layer 2 * 1024 + 4 * 1024^2 + 2 * 1 * 1024 + norm 1024) floats * 4 bytes
      assert.equal(msg, 'config: the weights take 68736282624 bytes, more than size_t holds here (4294967295)');
      for (const p of [m, out, f]) ex.free(p);

      // a finite weight of 1.77e31 (the fuzzer's find): its logits would overflow, so the file is refused
      const { config, bytes } = readModel('copy-rope');
      const huge = bytes.slice();
      new DataView(huge.buffer).setFloat32(huge.length - 4, 1.7702046e31, true);
      assert.throws(() => api.loadModel(huge, config),
        (e) => e instanceof ModelFileError && /tensor 'model.norm.weight' holds a value beyond \+-10000 \(PE_MODEL_MAX_WEIGHT\), at element 63/.test(e.message));
    });

    test('file bytes: a view whose own length lies is read at its real length; look-alikes are TypeErrors', () => {
      const { config, bytes } = readModel('copy-rope');
      const want = api.loadModel(bytes, config);
      const lying = Uint8Array.from(bytes);
      Object.defineProperty(lying, 'length', { value: 16 });
      const m = api.loadModel(lying, config);
      assert.deepEqual(m.forward('.ab|ab').logits, want.forward('.ab|ab').logits);
      m.free();
      want.free();
      const fake = Object.create(Uint8Array.prototype, { length: { value: bytes.length }, buffer: { value: bytes.buffer } });
      assert.throws(() => api.loadModel(fake, config), (e) => e instanceof TypeError && /loadModel: the file must be/.test(e.message));
      assert.throws(() => api.loadModel(Object.create(ArrayBuffer.prototype), config), TypeError);
    });

    test('options are strict: an unknown key is a TypeError naming it and the nearest known one', () => {
      const { config, bytes } = readModel('copy-rope');
      const model = api.loadModel(bytes, config);
      try {
        assert.throws(() => model.forward([1, 2], { atention: true }), (e) => e instanceof TypeError && /forward: options.atention is not an option; did you mean attention\?/.test(e.message));
        assert.throws(() => model.forward([1, 2], { ropeScaling: { type: 'linear', facter: 2 } }), (e) => e instanceof TypeError && /ropeScaling.facter is not an option; did you mean factor\?/.test(e.message));
        assert.throws(() => model.evaluate([1, 2], { target: [2, -1] }), (e) => e instanceof TypeError && /did you mean targets\?/.test(e.message));
        assert.throws(() => model.forward([1, 2], { ropeScaling: { type: 'linear', factor: 0.25 } }), (e) => e instanceof RangeError && /ropeScaling linear x 0.25 is refused/.test(e.message));
        assert.equal(model.forward([1, 2], { attention: true, ropeScaling: { type: 'linear', factor: 2 } }).attention.length, 2 * 4 * 2 * 2);
      } finally {
        model.free();
      }
    });

    test('tokens are read once: a Proxy whose length grows after the check; BigInt ids are a TypeError', () => {
      const { config, bytes } = readModel('copy-rope');
      const model = api.loadModel(bytes, config);
      try {
        let lengthReads = 0;
        const tokens = new Proxy([1, 2, 3], { get: (t, k) => (k === 'length' ? (lengthReads++ ? 1e6 : 3) : Reflect.get(t, k)) });
        const r = model.forward(tokens);
        assert.equal(r.seqLen, 3);
        assert.equal(lengthReads, 1);
        assert.deepEqual(r.logits, model.forward([1, 2, 3]).logits);
        assert.throws(() => model.forward(new BigInt64Array(2)), (e) => e instanceof TypeError && /token ids must be numbers, got 0n at index 0/.test(e.message));
      } finally {
        model.free();
      }
    });

    test('load/free 30 times: memory does not keep growing', () => {
      const { config, bytes } = readModel('lm-sinusoidal');
      const mem = () => instance.exports.memory.buffer.byteLength;
      const once = () => {
        const m = api.loadModel(bytes, config);
        m.forward(new Int32Array(256), { attention: true });
        m.free();
      };
      for (let i = 0; i < 3; i++) once(); // the first rounds may grow the memory once
      const before = mem();
      for (let i = 0; i < 30; i++) once();
      assert.equal(mem(), before);
    });
  });
}

// docs/eval.md promises bit-identical logits across the builds (fixed summation orders, pe_attention's SIMD and
// scalar paths bit for bit), so the check is on the bits.
test('SIMD and scalar builds give the same logits, bit for bit', async () => {
  const [a, b] = await Promise.all(builds.map(([, f]) => instantiate(f)));
  const apiA = createModelApi(a), apiB = createModelApi(b);
  for (const name of ['copy-rope', 'lm-alibi', 'lm-none']) {
    const { config, bytes } = readModel(name);
    const ma = apiA.loadModel(bytes, config), mb = apiB.loadModel(bytes, config);
    const tokens = new Int32Array(3 * ma.maxPositionEmbeddings).map((_, i) => (i * 11 + 3) % ma.vocabSize);
    const la = ma.forward(tokens).logits, lb = mb.forward(tokens).logits;
    assert.ok(la instanceof Float32Array && lb instanceof Float32Array && la.length === lb.length);
    const [ba, bb] = [new Uint32Array(la.buffer, la.byteOffset, la.length), new Uint32Array(lb.buffer, lb.byteOffset, lb.length)];
    const differ = ba.findIndex((bits, i) => bits !== bb[i]);
    assert.equal(differ, -1, `${name}: SIMD vs scalar logits differ first at ${differ}: ${la[differ]} vs ${lb[differ]}`);
    ma.free();
    mb.free();
  }
});
