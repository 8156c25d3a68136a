// errors.js — argument checks for the API boundary.
//
// Every check throws before any wasm call is made, so a bad call leaves no state behind and the object it was
// made on keeps working. Wrong types are TypeErrors, out-of-range values RangeErrors, and every message names
// the function, the argument and the bound, then shows the value it got:
//     rope: headDim must be an even integer in [2, 1024], got 7
// The C side validates again; statusError() turns a C status into an Error as a backstop.
//
// Messages are built only on the throwing path: a valid argument costs its comparisons and nothing more (no
// template strings, no lists joined), which keeps small calls such as a decode-step rope.apply cheap. Callers
// on hot paths therefore pass constant names, or test the value inline and call these only to throw.

import { typedArrayTag, viewLength, posesAsTypedArray } from './typed-arrays.js';

/** Short, safe rendering of a received value for an error message. */
export function describe(v) {
  if (v === null) return 'null';
  if (v === undefined) return 'undefined';
  switch (typeof v) {
    case 'number':
      return Object.is(v, -0) ? '-0' : String(v);
    case 'bigint':
      return `${v}n`;
    case 'string':
      return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v);
    case 'boolean':
      return String(v);
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default: {
      // Only the engine's own answers are trusted here: a look-alike's getters could throw or lie.
      const tag = typedArrayTag(v);
      if (tag !== undefined) return `a ${tag}(${viewLength(v)})`;
      try {
        if (Array.isArray(v)) return 'an Array';
        if (ArrayBuffer.isView(v)) return 'a DataView';
        if (posesAsTypedArray(v)) return 'an object posing as a typed array';
        const name = v.constructor?.name;
        return typeof name === 'string' && name !== 'Object' && name !== '' ? `a ${name.slice(0, 40)}` : 'an object';
      } catch {
        return 'an object'; // a Proxy whose traps throw
      }
    }
  }
}

export function typeError(where, what, got) {
  return new TypeError(`${where}: ${what}, got ${describe(got)}`);
}

export function rangeError(where, what, got) {
  return new RangeError(`${where}: ${what}, got ${describe(got)}`);
}

export const INT32_MAX = 2147483647;

/** An integer in [lo, hi] (a number; not a BigInt, not a numeric string). */
export function checkInt(where, name, v, lo, hi) {
  if (typeof v !== 'number') throw typeError(where, `${name} must be an integer in [${lo}, ${hi}]`, v);
  if (!Number.isInteger(v) || v < lo || v > hi) {
    throw rangeError(where, `${name} must be an integer in [${lo}, ${hi}]`, v);
  }
  return v;
}

/** A finite number, optionally > 0 (positive) or >= 0 (nonNegative). */
export function checkNumber(where, name, v, { positive = false, nonNegative = false } = {}) {
  const bound = positive ? 'a finite number > 0' : nonNegative ? 'a finite number >= 0' : 'a finite number';
  if (typeof v !== 'number') throw typeError(where, `${name} must be ${bound}`, v);
  if (!Number.isFinite(v) || (positive && !(v > 0)) || (nonNegative && !(v >= 0))) {
    throw rangeError(where, `${name} must be ${bound}`, v);
  }
  return v;
}

/** One of a fixed set of strings. (The list of allowed values is spelled out only when throwing.) */
export function checkEnum(where, name, v, allowed) {
  if (typeof v === 'string' && allowed.includes(v)) return v;
  const list = allowed.map((s) => `'${s}'`).join(', ');
  if (typeof v !== 'string') throw typeError(where, `${name} must be one of ${list}`, v);
  throw rangeError(where, `${name} must be one of ${list}`, v);
}

/**
 * A plain options object (or undefined/null, which mean {}), as a snapshot: each own option is read once,
 * here, so a getter or Proxy that changes its answer cannot pass a check with one value and reach the C core
 * with another.
 */
export function checkOptions(where, name, v) {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v) || ArrayBuffer.isView(v)) {
    throw typeError(where, `${name} must be an options object`, v);
  }
  return { ...v };
}

/**
 * Backstop for a non-zero pe_status from the C core, for failures no JS check names more precisely: the C
 * failure as it is, with the status's name. PE_ERR_NULL (a wrapper bug, never the caller's) is a plain Error;
 * every other status is about a value, a RangeError.
 */
export function statusError(where, statuses, status) {
  const name = statuses.names[status] ?? `PE_STATUS_${status}`;
  const msg = `${where}: ${statuses.text[status] ?? 'unknown status'} (${name})`;
  return name === 'PE_ERR_NULL' ? new Error(msg) : new RangeError(msg);
}

/** Edit distance between two short strings (for "did you mean"). */
function editDistance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length];
}

/** The keys an options object may have, for checkKnownKeys (made once per function, at module load). */
export function knownKeys(...keys) {
  return Object.freeze({ set: new Set(keys), list: Object.freeze(keys) });
}

/**
 * Every key of options object `o` is known: `known` is a knownKeys() set (hot paths) or an array of names;
 * otherwise a TypeError naming the key and the nearest known one: "rope.apply: options.position is not an
 * option; did you mean positions?". Nothing is silently ignored. Costs a for-in over the keys a call passes.
 */
export function checkKnownKeys(where, name, o, known) {
  if (Array.isArray(known)) {
    for (const key in o) if (!known.includes(key)) throw unknownKey(where, name, key, known);
    return;
  }
  for (const key in o) if (!known.set.has(key)) throw unknownKey(where, name, key, known.list);
}

function unknownKey(where, name, key, list) {
  const k = key.toLowerCase();
  let best = list[0];
  for (const c of list) if (editDistance(k, c.toLowerCase()) < editDistance(k, best.toLowerCase())) best = c;
  return new TypeError(`${where}: ${name}.${key.slice(0, 60)} is not an option; did you mean ${best}? (options: ${list.join(', ')})`);
}
