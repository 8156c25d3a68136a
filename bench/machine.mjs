// machine.mjs (Node only) — what run.mjs records about the machine and the build it measured.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';

function version(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n')[0].trim();
  } catch {
    return null;
  }
}

export function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    v8: process.versions.v8,
    emcc: version('emcc', ['--version']),
    gcc: version('gcc', ['--version']),
    date: new Date().toISOString(),
  };
}

export function sizes(ROOT) {
  const gz = (buf) => zlib.gzipSync(buf, { level: 9 }).length;
  const out = {};
  const file = (rel) => {
    const p = path.join(ROOT, rel);
    return fs.existsSync(p) ? fs.readFileSync(p) : null;
  };
  for (const rel of ['dist/posenc.simd.wasm', 'dist/posenc.wasm']) {
    const b = file(rel);
    if (b) out[rel] = { raw: b.length, gzip: gz(b) };
  }
  // the JS wrapper: every module of web/src except the generated inline wasm (what a bundler includes
  // next to the .wasm files with the 'posenc/url' entry)
  const srcDir = path.join(ROOT, 'web/src');
  const js = fs
    .readdirSync(srcDir)
    .filter((f) => f.endsWith('.js') && !f.startsWith('wasm-inline') && f !== 'url.js' && !f.endsWith('.test.js'))
    .sort();
  const all = Buffer.concat(js.map((f) => fs.readFileSync(path.join(srcDir, f))));
  out['web/src/*.js (wrapper, without the inlined wasm)'] = { raw: all.length, gzip: gz(all), files: js };
  const inline = file('web/src/wasm-inline.js');
  if (inline) {
    const both = Buffer.concat([all, inline]);
    out['web/src/*.js + wasm-inline.js (default entry, both builds inlined)'] = { raw: both.length, gzip: gz(both) };
  }
  return out;
}

