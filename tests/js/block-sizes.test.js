// The one size policy (memory.js Heap.malloc / Heap.scratch, rope-table.js's table block) at the 2^31 boundary,
// against a recording malloc: no byte count reaches malloc past MAX_BLOCK_BYTES (plus the slack that aligns a
// block) or wrapped, a refused block leaves its slot (or the rope's table) empty, and capacities are what was
// asked for. Sizes this large cannot be allocated for real in a test; the API-level cases are in adversarial.test.js.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Heap, SLOT, MAX_BLOCK_BYTES, BLOCK_ALIGN_SLACK } from '../../web/src/memory.js';
import { buildTable } from '../../web/src/rope-table.js';
import { assertThrowsNaming } from './helpers.js';

/** Exports with a bump allocator that records every request; pointers past the 64 KiB memory are fine here. */
function recordingExports() {
  const requests = [];
  let next = 1024;
  return {
    requests,
    memory: new WebAssembly.Memory({ initial: 1 }),
    malloc(bytes) {
      requests.push(bytes);
      const p = next;
      next += Math.max(8, bytes >>> 0);
      return p | 0;
    },
    free() {},
    pe_rope_cos_sin: () => 0,
  };
}

test('scratch capacities: powers of two up to 2^30 bytes, then exact; past MAX_BLOCK_BYTES refused and the slot left empty', () => {
  const ex = recordingExports();
  const heap = new Heap(ex);
  heap.scratch(SLOT.RESULT, 100);
  assert.deepEqual(ex.requests, [128 + BLOCK_ALIGN_SLACK], 'a capacity of 128, plus the slack that aligns the block');
  heap.scratch(SLOT.RESULT, 2 ** 30 + 4);
  assert.equal(ex.requests.at(-1), 2 ** 30 + 4 + BLOCK_ALIGN_SLACK, 'past 2^30 the block is exactly the size asked for');
  heap.scratch(SLOT.RESULT, MAX_BLOCK_BYTES);
  assert.equal(ex.requests.at(-1), MAX_BLOCK_BYTES + BLOCK_ALIGN_SLACK);
  const before = ex.requests.length;
  for (const bytes of [MAX_BLOCK_BYTES + 1, 2 ** 31 + 4, 2 ** 32, 2 ** 32 + 8, 2 ** 40]) {
    assertThrowsNaming(() => heap.scratch(SLOT.RESULT, bytes, 'alibiBias', 'the bias'), RangeError, 'alibiBias', 'the bias', `${bytes} bytes`, `${MAX_BLOCK_BYTES}`);
  }
  assert.equal(ex.requests.length, before, 'malloc never saw a refused size');
  assert.ok(ex.requests.every((b) => b > 0 && b <= MAX_BLOCK_BYTES + BLOCK_ALIGN_SLACK), `requests ${ex.requests}`);
  // the slot is empty after a refusal: a small request allocates again instead of reusing a bogus capacity
  heap.scratch(SLOT.RESULT, 64);
  assert.equal(ex.requests.length, before + 1, 'the refused slot kept no capacity');
  for (const bad of [-1, 1.5, NaN, Infinity]) assertThrowsNaming(() => heap.malloc(bad, 'x', 'y'), RangeError, 'x', 'y');
});

test("the rope's cached table block: refused past MAX_BLOCK_BYTES with the cache left empty, never wrapped", () => {
  const ex = recordingExports();
  const heap = new Heap(ex);
  const st = {
    ctx: { heap, exports: ex, status: { PE_ERR_POSITION: 11 }, statusError: () => new Error('status') },
    ptr: 8,
    nFreq: 2 ** 20, // as if: the table is rows * nFreq floats for cos, the same for sin
    seqLenFromPositions: -1n,
    tabPtr: 0,
    tabCap: 0,
    tabValid: false,
    tabRows: 0,
    tabIota: false,
    tabSeqLen: -1,
    tabExtra: 1,
    tabPos: new Int32Array(0),
  };
  // 2^7 + 1 rows: 2^27 + 2^20 floats per table, 2^30 + 2^23 bytes for cos | sin: allocated exactly
  buildTable(st, 'rope.apply', 'options.positions', null, 2 ** 7 + 1, -1, 1);
  assert.equal(ex.requests.at(-1), (2 ** 27 + 2 ** 20) * 8 + BLOCK_ALIGN_SLACK);
  assert.equal(st.tabCap, 2 ** 27 + 2 ** 20);
  assert.equal(st.tabValid, true);
  // 2^8 + 1 rows: 2^31 + 2^23 bytes. The old rounding made it 2^32, which reached malloc as 0.
  const before = ex.requests.length;
  assertThrowsNaming(() => buildTable(st, 'rope.apply', 'options.positions', null, 2 ** 8 + 1, -1, 1), RangeError, 'rope.apply', 'cos | sin table');
  assert.ok(ex.requests.slice(before).every((b) => b <= MAX_BLOCK_BYTES + BLOCK_ALIGN_SLACK), 'no wrapped request');
  assert.equal(st.tabCap, 0, 'the failed build leaves no capacity behind');
  assert.equal(st.tabPtr, 0);
  assert.equal(st.tabValid, false);
  // and the next build allocates what it needs
  buildTable(st, 'rope.apply', 'options.positions', null, 4, -1, 1);
  assert.equal(st.tabValid, true);
  assert.ok(st.tabCap >= 4 * 2 ** 20);
});
