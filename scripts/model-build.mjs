// model-build.mjs — builds build/model/posenc-model (the native trainer / evaluator) when its sources change.
//
// gcc -O3 -ffp-contract=off, no -ffast-math and no -march: fixed summation orders in the code plus IEEE
// arithmetic without contraction give the same weights from the same seed on any x86-64 with this toolchain.
// Used by scripts/train.mjs and scripts/eval.mjs; `node scripts/model-build.mjs` builds and prints the path.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'build/model/posenc-model');
export const MODELS_DIR = join(ROOT, 'web/playground/public/models');
export const TASKS = ['copy', 'lm'];
export const ENCODINGS = ['none', 'sinusoidal', 'learned', 'rope', 'alibi'];

const FLAGS = ['-std=c11', '-O3', '-ffp-contract=off', '-Wall', '-Wextra'];

function sourceLists() {
  const srcs = [
    ...readdirSync(join(ROOT, 'c/src')).filter((f) => f.endsWith('.c')).sort().map((f) => `c/src/${f}`),
    ...['model.c', 'safetensors.c', 'tasks.c', 'train.c', 'eval.c', 'main.c'].map((f) => `c/model/${f}`),
  ];
  const headers = [
    'c/include/posenc.h',
    ...readdirSync(join(ROOT, 'c/src')).filter((f) => f.endsWith('.h')).map((f) => `c/src/${f}`),
    'c/model/model_internal.h',
    'c/model/train.h',
  ];
  return { srcs, headers };
}

/** sha256 over the C sources and headers the tool is built from: what the trained weights depend on. */
export function sourcesHash() {
  const { srcs, headers } = sourceLists();
  const hs = createHash('sha256');
  for (const f of [...srcs, ...headers]) hs.update(f).update('\0').update(readFileSync(join(ROOT, f))).update('\0');
  return hs.digest('hex');
}

export function buildModelTool({ quiet = false } = {}) {
  const { srcs } = sourceLists();
  let gccVersion;
  try {
    gccVersion = execFileSync('gcc', ['--version'], { encoding: 'utf8' }).split('\n')[0];
  } catch {
    throw new Error('gcc not found: install it (apt-get install gcc) to train or evaluate the models');
  }
  // sources: what the weights depend on (recorded in each config.json as posenc.training.sources_sha256)
  const srcHash = sourcesHash();
  const fp = createHash('sha256').update(srcHash).update(FLAGS.join(' ')).update(gccVersion).digest('hex');
  const stamp = `${BIN}.stamp`;
  if (existsSync(BIN) && existsSync(stamp) && readFileSync(stamp, 'utf8') === fp) return BIN;
  mkdirSync(dirname(BIN), { recursive: true });
  if (!quiet) console.log(`model: gcc ${FLAGS.join(' ')} -> build/model/posenc-model`);
  execFileSync('gcc', [...FLAGS, `-DPE_BUILD_FLAGS="${FLAGS.join(' ')}"`, `-DPE_SOURCES_SHA256="${srcHash}"`, '-Ic/include', ...srcs, '-lm', '-o', BIN], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  writeFileSync(stamp, fp);
  return BIN;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(buildModelTool());
