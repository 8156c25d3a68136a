#!/usr/bin/env node
// v8-code.mjs (Node only) — what V8's optimising compiler (TurboFan) makes of a wasm module's rotation loops:
// the evidence behind the "limit: rotation" notes. Compiles the module with
// `--print-wasm-code --no-wasm-lazy-compilation --no-liftoff` in a child process and, for every function,
// finds its loops (a backward jump) that hold f32x4 multiplies (vmulps / mulps); the innermost such loop
// of the function with the most multiplies is summarised.
//
//   node bench/v8-code.mjs FILE.wasm [FUNCTION_INDEX...]     prints one JSON line per function asked (or the top 3)
//
// "per 8 floats": a rotation does 4 multiplies per 8 floats of one tensor (x1·c, x2·s, x2·c, x1·s on 4 lanes
// each), so a loop's instructions / (multiplies / 4) are its instructions per 8 rotated floats.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SIMD_MUL = /^(v?mulps)$/;

/** Parses V8's --print-wasm-code output into { [name]: [{ addr, op, text }] }. */
export function parseCode(text) {
  const fns = {};
  let cur = null;
  for (const line of text.split('\n')) {
    const name = line.match(/^name: (\S+)/); // wasm-function[N], or the name-section name
    if (name) {
      cur = fns[name[1]] = [];
      continue;
    }
    if (line.startsWith('--- End code')) {
      cur = null;
      continue;
    }
    const ins = cur && line.match(/^0x([0-9a-f]+)\s+[0-9a-f]+\s+[0-9a-f]+\s+(.*)$/);
    if (ins) {
      const text = ins[2].trim();
      const op = text.replace(/^REX\.W\s+/, '').split(/\s+/)[0];
      cur.push({ addr: parseInt(ins[1], 16), op, text });
    }
  }
  return fns;
}

/** The innermost loop holding multiplies: { instructions, mul, addsub, load, store, lea, stack, perEightFloats }. */
export function innermostRotationLoop(code) {
  let best = null;
  for (let i = 0; i < code.length; i++) {
    const j = code[i].text.match(/^j\w+\s+0x([0-9a-f]+)/);
    if (!j) continue;
    const target = parseInt(j[1], 16);
    if (target >= code[i].addr) continue; // forward jump
    const start = code.findIndex((c) => c.addr === target);
    if (start < 0) continue;
    const body = code.slice(start, i + 1);
    const mul = body.filter((c) => SIMD_MUL.test(c.op)).length;
    if (mul === 0) continue;
    if (!best || body.length < best.body.length) best = { body, mul };
  }
  if (!best) return null;
  const { body, mul } = best;
  // every leaf loop (one holding no other loop) with multiplies: a kernel with specialised paths (unrolled
  // head rows, a generic tail) has several, and which one runs depends on the shape; their range bounds it
  const loops = [];
  for (let i = 0; i < code.length; i++) {
    const j = code[i].text.match(/^j\w+\s+0x([0-9a-f]+)/);
    const target = j ? parseInt(j[1], 16) : NaN;
    if (!(target < code[i].addr)) continue;
    const start = code.findIndex((c) => c.addr === target);
    if (start < 0) continue;
    const m = code.slice(start, i + 1).filter((c) => SIMD_MUL.test(c.op)).length;
    if (m > 0) loops.push({ start, end: i, n: i + 1 - start, m });
  }
  const leaves = loops.filter((l) => !loops.some((o) => o !== l && o.start >= l.start && o.end <= l.end));
  const per = leaves.map((l) => l.n / (l.m / 4));
  const count = (re) => body.filter((c) => re.test(c.op)).length;
  const mem = (c) => /\[/.test(c.text);
  return {
    instructions: body.length,
    mul,
    addsub: count(/^v?(add|sub)ps$/),
    load: body.filter((c) => /^v?mov(dqu|ups|aps)$/.test(c.op) && /,\[/.test(c.text)).length,
    store: body.filter((c) => /^v?mov(dqu|ups|aps)$/.test(c.op) && /^\S+\s+\[/.test(c.text.replace(/^REX\.W\s+/, ''))).length,
    shuffle: count(/^v?(pshufd|shufps|unpck[lh]ps|pshufb)$/),
    lea: count(/^lea/),
    stack: body.filter((c) => mem(c) && /\[rbp[-+]/.test(c.text)).length,
    branch: count(/^j/),
    perEightFloats: +(body.length / (mul / 4)).toFixed(1),
    leafLoops: leaves.length,
    leafPerEightFloats: [+Math.min(...per).toFixed(1), +Math.max(...per).toFixed(1)],
  };
}

/**
 * Runs V8 on the wasm file; returns { [fn]: summary } for the functions asked (indices, or names where the
 * module has a name section) or the 3 with most multiplies.
 */
export function rotationLoops(file, indices = []) {
  const self = fileURLToPath(import.meta.url);
  const r = spawnSync(process.execPath, ['--print-wasm-code', '--no-wasm-lazy-compilation', '--no-liftoff', self, '--compile', file], { encoding: 'utf8', maxBuffer: 512 << 20 });
  if (r.status !== 0) throw new Error(`v8-code: node exited ${r.status}: ${r.stderr.slice(-500)}`);
  const fns = parseCode(r.stdout);
  const names = indices.length
    ? indices.map((i) => (typeof i === 'number' ? `wasm-function[${i}]` : i))
    : Object.keys(fns).sort((a, b) => fns[b].filter((c) => SIMD_MUL.test(c.op)).length - fns[a].filter((c) => SIMD_MUL.test(c.op)).length).slice(0, 3);
  const out = {};
  for (const n of names) if (fns[n]) out[n] = innermostRotationLoop(fns[n]);
  return out;
}

/** A cursor over a wasm binary: LEB128 unsigned integers, names, and the position `p` (starts past the header). */
function wasmReader(bytes) {
  const r = { p: 8 };
  r.u = () => {
    let v = 0;
    let shift = 0;
    let x;
    do {
      x = bytes[r.p++];
      v |= (x & 0x7f) << shift;
      shift += 7;
    } while (x & 0x80);
    return v >>> 0;
  };
  r.byte = () => bytes[r.p++];
  r.str = () => {
    const l = r.u();
    const t = new TextDecoder().decode(bytes.subarray(r.p, r.p + l));
    r.p += l;
    return t;
  };
  /** Calls visit(id, end) for each section, then moves to the section's end whatever visit read. */
  r.sections = (visit) => {
    while (r.p < bytes.length) {
      const id = r.byte();
      const end = r.u() + r.p;
      visit(id, end);
      r.p = end;
    }
  };
  return r;
}

/** Function indices of a module's exports, from its export section (names -> index). */
export function exportIndices(bytes) {
  const r = wasmReader(bytes);
  const { u } = r;
  let imported = 0;
  const out = {};
  r.sections((id) => {
    if (id === 2) {
      for (let n = u(); n > 0; n--) {
        r.p += u();
        r.p += u();
        const kind = r.byte();
        if (kind === 0) (u(), imported++);
        else if (kind === 1) (r.p++, (u() & 1 ? (u(), u()) : u()));
        else if (kind === 2) (u() & 1 ? (u(), u()) : u());
        else r.p += 2;
      }
    } else if (id === 7) {
      for (let n = u(); n > 0; n--) {
        const name = r.str();
        const kind = r.byte();
        const idx = u();
        if (kind === 0) out[name] = idx;
      }
    }
  });
  return { exports: out, imported };
}

/** Function names from a module's "name" custom section (function index -> name); {} when it has none. */
export function functionNames(bytes) {
  const r = wasmReader(bytes);
  const out = {};
  r.sections((id, end) => {
    if (id !== 0 || r.str() !== 'name') return;
    while (r.p < end) {
      const sub = r.byte();
      const subEnd = r.u() + r.p;
      if (sub === 1) for (let n = r.u(); n > 0; n--) out[r.u()] = r.str();
      r.p = subEnd;
    }
  });
  return out;
}

const argv = process.argv.slice(2);
if (argv[0] === '--compile') {
  const fs = await import('node:fs');
  const m = await WebAssembly.compile(fs.readFileSync(argv[1]));
  const imports = {};
  for (const imp of WebAssembly.Module.imports(m)) (imports[imp.module] ??= {})[imp.name] = () => 0;
  await WebAssembly.instantiate(m, imports);
} else if (process.argv[1] === fileURLToPath(import.meta.url) && argv[0]) {
  for (const [fn, s] of Object.entries(rotationLoops(argv[0], argv.slice(1).map(Number)))) console.log(JSON.stringify({ fn, ...s }));
}
