// f16.test.js — Float16Array as 16-bit data (issue 11), in headless Chromium, which has Float16Array (Node 20
// has none, so tests/js cover Uint16Array and pe.tensor only). A Float16Array is float16 data of its own: it
// is the default dtype of every call, it gives the same bits as the same data as a Uint16Array with
// dtype 'float16', and it is refused where bfloat16 or float32 data are asked for. posenc is loaded from
// web/src by the page itself (both builds).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { repoRoot, serveStatic, launchChromium, collectErrors } from './lib.js';

let browser;
let server;

before(async () => {
  [server, browser] = await Promise.all([serveStatic(repoRoot), launchChromium()]);
});
after(async () => {
  await browser?.close();
  await server?.close();
});

test('Float16Array: its own dtype in pe.tensor, rope.apply / rerotate / cosSin, sinusoidal.add, pe.learned', async () => {
  const page = await browser.newPage();
  const errors = collectErrors(page);
  try {
    // a blank page on the server's origin, so the page can import web/src from it
    await page.route(`${server.url}f16-blank.html`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>f16</title>' }));
    await page.goto(`${server.url}f16-blank.html`);
    const result = await page.evaluate(async () => {
      const { init } = await import('/web/src/index.js');
      if (typeof Float16Array !== 'function') return { skipped: true };
      const bitsOf = (a) => Array.from(new Uint16Array(a.buffer, a.byteOffset, a.length));
      const out = { skipped: false, builds: {} };
      for (const simd of [true, false]) {
        const pe = await init({ simd });
        const r = {};
        const t = pe.tensor(Float16Array.of(1, -2, 0.5, 65504));
        r.tensor = [t.dtype, Array.from(t.array)];
        t.free();
        const rope = pe.rope({ headDim: 8 });
        const vals = Float16Array.from({ length: 2 * 8 }, (_, i) => Math.sin(i + 1) * 3);
        const raw = Uint16Array.from(bitsOf(vals));
        const shape = [1, 2, 1, 8];
        r.apply = [bitsOf(rope.apply(Float16Array.from(vals), { shape, positions: [3, 2147483647] })), Array.from(rope.apply(Uint16Array.from(raw), { shape, positions: [3, 2147483647], dtype: 'float16' }))];
        r.rerotate = [bitsOf(rope.rerotate(Float16Array.from(vals), -9)), Array.from(rope.rerotate(Uint16Array.from(raw), -9, { dtype: 'float16' }))];
        const cs = { cos: new Float16Array(8), sin: new Float16Array(8) };
        rope.cosSin([0, 1000], { out: cs });
        const cs16 = rope.cosSin([0, 1000], { dtype: 'float16' });
        r.cosSin = [bitsOf(cs.cos).concat(bitsOf(cs.sin)), Array.from(cs16.cos).concat(Array.from(cs16.sin))];
        r.sin = [bitsOf(pe.sinusoidal.add(Float16Array.from(vals), { shape: [1, 2, 8] })), Array.from(pe.sinusoidal.add(Uint16Array.from(raw), { shape: [1, 2, 8], dtype: 'float16' }))];
        const L = pe.learned(Float16Array.of(1, 2, 3, 4, 5, 6, 7, 8), { dModel: 4 });
        r.learned = [L.dtype, Array.from(L.lookup([1])), bitsOf(L.add(Float16Array.of(0.5, 0.5, 0.5, 0.5), { shape: [1, 1, 4], positions: [1] }))];
        L.free();
        const refused = [];
        for (const [name, fn] of [
          ['apply bf16', () => rope.apply(new Float16Array(16), { shape, dtype: 'bfloat16' })],
          ['apply f32', () => rope.apply(new Float16Array(16), { shape, dtype: 'float32' })],
          ['tensor bf16', () => pe.tensor(new Float16Array(4), { dtype: 'bfloat16' })],
          ['learned f32', () => pe.learned(new Float16Array(8), { dModel: 4, dtype: 'float32' })],
        ]) {
          try {
            fn();
            refused.push(`${name}: nothing thrown`);
          } catch (e) {
            refused.push(`${name}: ${e.name}: ${e.message}`);
          }
        }
        r.refused = refused;
        rope.free();
        out.builds[simd ? 'simd' : 'scalar'] = r;
      }
      return out;
    });
    if (result.skipped) {
      assert.fail('this Chromium has no Float16Array');
    }
    for (const [build, r] of Object.entries(result.builds)) {
      assert.deepEqual(r.tensor, ['float16', [0x3c00, 0xc000, 0x3800, 0x7bff]], `${build}: pe.tensor(Float16Array)`);
      for (const k of ['apply', 'rerotate', 'cosSin', 'sin']) assert.deepEqual(r[k][0], r[k][1], `${build}: ${k} with a Float16Array == Uint16Array + dtype float16`);
      assert.equal(r.learned[0], 'float16');
      assert.deepEqual(r.learned[1], [5, 6, 7, 8], `${build}: lookup of a Float16Array table`);
      assert.deepEqual(r.learned[2], [0x4580, 0x4680, 0x4780, 0x4840], `${build}: 0.5 + (5, 6, 7, 8) in float16`);
      for (const line of r.refused) assert.match(line, /^[^:]+: TypeError: .*(dtype|float16|Float32Array)/, `${build}: ${line}`);
    }
    assert.deepEqual(result.builds.simd.apply, result.builds.scalar.apply, 'SIMD == scalar');
    assert.deepEqual(errors, [], 'no page errors');
  } finally {
    await page.close();
  }
});
