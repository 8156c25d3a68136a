// The module's ABI tables (c/src/abi.c) against the public header: status names in enum order, the limits
// the wrapper reads, and the pe_rope layout used to read a resolved config back. The header is parsed here
// independently of the C compiler, so a status added to pe_status without its name in abi.c, or a limit whose
// value drifted, fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileBytes, decodeBase64, stubImports } from '../../web/src/loader.js';
import { simdWasmBase64, scalarWasmBase64 } from '../../web/src/wasm-inline.js';
import { Heap } from '../../web/src/memory.js';
import { BUILDS, loadBuild, assertThrowsNaming } from './helpers.js';

const header = readFileSync(new URL('../../c/include/posenc.h', import.meta.url), 'utf8').replace(/\/\*[\s\S]*?\*\//g, ' ');

/** pe_status's enumerators in declaration order, from the header. */
function headerStatuses() {
  const body = /typedef enum pe_status \{([\s\S]*?)\} pe_status;/.exec(header)[1];
  return body
    .split(',')
    .map((s) => s.trim().split(/\s*=/)[0])
    .filter((s) => s !== '' && s !== 'PE_STATUS_COUNT');
}

/** A #define'd number or an enumerator with an explicit value, from the header. */
function headerValue(name) {
  const def = new RegExp(`#define ${name}\\s+\\(?(-?[0-9.]+(?:e[-+]?[0-9]+)?)\\)?\\s`).exec(header);
  if (def) return Number(def[1]);
  const en = new RegExp(`\\b${name}\\s*=\\s*(-?\\d+)`).exec(header);
  return en ? Number(en[1]) : undefined;
}

for (const [name, b64] of [['simd', simdWasmBase64], ['scalar', scalarWasmBase64]]) {
  test(`status names and limits come from the module and match the header [${name}]`, async () => {
    const module = await compileBytes(decodeBase64(b64));
    const { exports: ex } = await WebAssembly.instantiate(module, stubImports(module));
    if (typeof ex._initialize === 'function') ex._initialize();
    const heap = new Heap(ex);
    const statuses = headerStatuses();
    assert.ok(statuses.length >= 17, `parsed ${statuses.length} statuses from the header`);
    assert.equal(ex.pe_abi_status_count(), statuses.length, "PE_STATUS_COUNT");
    statuses.forEach((s, code) => {
      const p = ex.pe_abi_status_name(code) >>> 0;
      assert.notEqual(p, 0, `abi.c has no name for status ${code} (${s})`);
      assert.equal(heap.cString(p), s, `status ${code}`);
    });
    assert.equal(ex.pe_abi_status_name(statuses.length), 0, 'no name past PE_STATUS_COUNT');
    assert.equal(ex.pe_abi_status_name(-1), 0);

    const n = ex.pe_abi_limit_count();
    const limits = {};
    for (let i = 0; i < n; i++) limits[heap.cString(ex.pe_abi_limit_name(i) >>> 0)] = ex.pe_abi_limit_value(i);
    for (const key of ['PE_ROPE_MAX_HEAD_DIM', 'PE_SEQ_LEN_NONE', 'PE_SEQ_LEN_FROM_POSITIONS', 'PE_ROTATE_FORWARD', 'PE_ROTATE_INVERSE']) {
      assert.ok(key in limits, `the module reports ${key}`);
    }
    for (const [key, value] of Object.entries(limits)) {
      const expected = headerValue(key);
      if (expected !== undefined) assert.equal(value, expected, `${key}: module ${value}, header ${expected}`);
    }
    assert.equal(limits.PE_ROPE_MAX_FREQ, limits.PE_ROPE_MAX_HEAD_DIM / 2);
  });

  test(`messages carry the module's bounds and status names [${name}]`, async () => {
    const pe = await loadBuild(BUILDS.find((b) => b.name === name).simd);
    assertThrowsNaming(() => pe.rope({ headDim: 2 * (headerValue('PE_ROPE_MAX_HEAD_DIM') + 1) }), RangeError, `[2, ${headerValue('PE_ROPE_MAX_HEAD_DIM')}]`);
    // a refusal only the C core makes comes back named as the option, with the status's name
    assertThrowsNaming(
      () => pe.rope({ headDim: 8, base: 1, scaling: { type: 'yarn', factor: 2, originalMaxPositionEmbeddings: 64 } }),
      RangeError,
      'rope: base',
      'PE_ERR_BASE',
    );
  });
}
