// typed-arrays.js — what is a real typed array, asked of the engine rather than of the object.
//
// `instanceof` accepts objects made with a typed array's prototype and Proxies around real arrays, whose
// `byteOffset` and `length` are whatever they claim; a byteOffset taken from such an object would be used as a
// pointer into wasm memory. %TypedArray%.prototype's Symbol.toStringTag getter returns the element type only
// for a real typed array (undefined for a look-alike or a Proxy), and its buffer / byteOffset / length getters
// read the engine's own slots. They are captured here when the module loads, so later changes to the
// prototypes change nothing. This module imports nothing (errors.js renders values with it).

const TypedArrayPrototype = Object.getPrototypeOf(Int8Array.prototype);
const uncurry = (f) => Function.prototype.call.bind(f);
const intrinsicGetter = (key) => uncurry(Object.getOwnPropertyDescriptor(TypedArrayPrototype, key).get);
const tagOf = intrinsicGetter(Symbol.toStringTag);
/** The length of a real typed array (tag checked first), read through the intrinsic getter. */
export const viewLength = intrinsicGetter('length');
/** The buffer and byteOffset of a real typed array, through the intrinsic getters. */
export const viewBuffer = intrinsicGetter('buffer');
export const viewByteOffset = intrinsicGetter('byteOffset');
/** %TypedArray%.prototype.set, uncurried: (target, source, offset), immune to an overridden `set`. */
export const typedArraySet = uncurry(TypedArrayPrototype.set);
const isPrototypeOf = uncurry(Object.prototype.isPrototypeOf);
const bufferDetachedGetter = Object.getOwnPropertyDescriptor(ArrayBuffer.prototype, 'detached')?.get;

/** 'Float32Array', 'Int32Array', ... for a real typed array; undefined for anything else (look-alikes, Proxies). */
export function typedArrayTag(v) {
  return tagOf(v);
}

/** True for an object that poses as a typed array (has one's prototype, or is a Proxy of one) but is not one. */
export function posesAsTypedArray(v) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function') || tagOf(v) !== undefined) return false;
  try {
    return isPrototypeOf(TypedArrayPrototype, v);
  } catch {
    return true; // a Proxy whose getPrototypeOf trap throws is not something to read data from
  }
}

/** True when real typed array `a`'s buffer is detached (a detached array has length 0, so only that case asks). */
export function isDetached(a) {
  const b = viewBuffer(a);
  if (b.byteLength !== 0 || typeof SharedArrayBuffer === 'function' && b instanceof SharedArrayBuffer) return false;
  if (bufferDetachedGetter !== undefined) return bufferDetachedGetter.call(b);
  try {
    new Uint8Array(b); // eslint-disable-line no-new
    return false;
  } catch {
    return true;
  }
}
