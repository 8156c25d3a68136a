// native.mjs (Node only) — the native contender: bench/build/bench_native (posenc's C, gcc -O3 -march=native, SIMD via simd.h)
// as a separate, long-lived process. Each sample is one command line; the process times its own loop, so
// process and pipe overhead are outside the measurement, and while it runs this process waits (and vice
// versa), so the two never compete for a core.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export async function startNative(binary) {
  const child = spawn(binary, [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  let exited = null;
  lines.on('line', (line) => {
    const w = waiting.shift();
    if (w) w.resolve(line);
  });
  child.on('exit', (code, signal) => {
    exited = new Error(`bench_native exited (${code ?? signal})`);
    for (const w of waiting.splice(0)) w.reject(exited);
  });
  child.on('error', (e) => {
    exited = e;
    for (const w of waiting.splice(0)) w.reject(e);
  });
  const next = () =>
    new Promise((resolve, reject) => {
      if (exited) reject(exited);
      else waiting.push({ resolve, reject });
    });
  const ready = await next();
  if (ready !== 'ready') throw new Error(`bench_native: unexpected greeting ${ready}`);
  // the SIMD mapping the binary was built with (simd.h's PE_SIMD_ISA), e.g. "x86-64 SSE4.1"
  const isaReply = next();
  child.stdin.write('isa\n');
  const isa = await isaReply;

  // One command at a time (samples are awaited in turn by compare()).
  let chain = Promise.resolve();
  const ask = (cmd) => {
    const p = chain.then(async () => {
      const reply = next();
      child.stdin.write(`${cmd}\n`);
      const line = await reply;
      const t = Number(line);
      if (!Number.isFinite(t)) throw new Error(`bench_native: ${cmd}: ${line}`);
      return t;
    });
    chain = p.catch(() => {});
    return p;
  };

  return {
    isa,
    /** A sampler for one workload command (without the iteration count). */
    sampler: (cmd) => (iters) => ask(`${cmd} ${iters}`),
    /** 'cpu' | 'wall': the clock its samples are timed on (bench_native's `clock` command); resolves to it. */
    clock: (name) => chain.then(async () => {
      const reply = next();
      child.stdin.write(`clock ${name}\n`);
      return reply;
    }),
    /** Seconds per first touch of a fresh 4 KiB page on this machine. */
    pageFault: (mib = 64) => ask(`pagefault ${mib}`),
    close() {
      if (!exited) {
        child.stdin.write('quit\n');
        child.stdin.end();
      }
    },
  };
}
