// abi.js — what the wrapper reads from the wasm module (c/src/abi.c) instead of hard-coding it: struct
// layouts, status codes by name, and the header's limits and enum values.
//
// Each pe_abi_*_layout(int32_t *count) export returns int32 byte offsets of the struct's fields in
// declaration order, followed by sizes (pe_rope_config: sizeof(pe_rope_config) and sizeof(pe_rope)).

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

/**
 * The module's status codes: { names: ['PE_OK', 'PE_ERR_NULL', ...], code: { PE_OK: 0, ... }, text: [...] }
 * (text: pe_status_string of each).
 */
export function readStatuses(exports, heap) {
  const count = exports.pe_abi_status_count();
  const names = [];
  const text = [];
  const code = {};
  for (let s = 0; s < count; s++) {
    const p = exports.pe_abi_status_name(s) >>> 0;
    const name = p === 0 ? `PE_STATUS_${s}` : heap.cString(p);
    names.push(name);
    text.push(heap.cString(exports.pe_status_string(s) >>> 0));
    code[name] = s;
  }
  return { names: Object.freeze(names), code: Object.freeze(code), text: Object.freeze(text) };
}

/** The header's limits and enum values the wrapper uses: { PE_ROPE_MAX_HEAD_DIM: 1024, ... }. */
export function readLimits(exports, heap) {
  const limits = {};
  const count = exports.pe_abi_limit_count();
  for (let i = 0; i < count; i++) limits[heap.cString(exports.pe_abi_limit_name(i) >>> 0)] = exports.pe_abi_limit_value(i);
  return Object.freeze(limits);
}

/** limits[name], or an Error naming the mismatch between the wasm module and this wrapper. */
export function limit(limits, name) {
  const v = limits[name];
  if (v === undefined) throw new Error(`posenc: the wasm module reports no ${name}; rebuild the wasm and the JS together`);
  return v;
}
