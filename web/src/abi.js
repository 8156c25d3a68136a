// abi.js — struct layouts read from the wasm module (c/src/abi.c), so no offset is hard-coded in JS.
//
// Each pe_abi_*_layout(int32_t *count) export returns int32 byte offsets of the struct's fields in
// declaration order, followed by sizeof(struct) (pe_rope_config: also sizeof(pe_rope)).

import { SLOT } from './memory.js';

/**
 * Reads one layout. `fields` names the struct's fields in declaration order; `sizes` names the sizes that
 * follow them. Returns { offsets: { field: byteOffset }, [size]: bytes }.
 */
export function readLayout(ctx, exportName, fields, sizes = ['size']) {
  const { exports: ex, heap } = ctx;
  const countPtr = heap.scratch(SLOT.OUT, 16);
  const p = ex[exportName](countPtr) >>> 0;
  const count = heap.i32[countPtr >>> 2];
  if (count !== fields.length + sizes.length) {
    throw new Error(
      `posenc: ${exportName} reports ${count - sizes.length} fields, this wrapper knows ${fields.length}; rebuild the wasm and the JS together`,
    );
  }
  const i32 = heap.i32;
  const layout = { offsets: {} };
  fields.forEach((name, i) => {
    layout.offsets[name] = i32[(p >>> 2) + i];
  });
  sizes.forEach((name, i) => {
    layout[name] = i32[(p >>> 2) + fields.length + i];
  });
  return layout;
}
