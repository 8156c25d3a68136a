// eval.mjs — `npm run eval`: loss (and accuracy for the copy task) of every shipped tiny model at 1x, 2x, 4x and
// 8x its training length; RoPE models also under inference-time scaling (linear / PI, NTK-aware, dynamic NTK,
// YaRN); the LM with non-overlapping and sliding-window evaluation. Native (build/model/posenc-model eval),
// two models at a time.
//
//   node scripts/eval.mjs [--models DIR] [--tokens N] [--write docs/eval.md] [--json FILE]
//
// Prints markdown tables. --write replaces the block between <!-- eval:begin --> and <!-- eval:end --> in the
// given file; --json (default: <models>/eval.json, for the playground's loss-vs-length figure) saves the rows.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildModelTool, MODELS_DIR, TASKS, ENCODINGS } from './model-build.mjs';

const VARIANT_LABEL = {
  trained: null,
  linear: 'rope + linear (PI)',
  ntk: 'rope + NTK-aware',
  dynamic: 'rope + dynamic NTK',
  yarn: 'rope + YaRN',
};

function parseArgs(argv) {
  const o = { models: MODELS_DIR, tokens: null, write: null, json: undefined, jobs: 2 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--models') o.models = resolve(next());
    else if (a === '--tokens') o.tokens = parseInt(next(), 10);
    else if (a === '--write') o.write = resolve(next());
    else if (a === '--json') o.json = resolve(next());
    else if (a === '--jobs') o.jobs = Math.max(1, parseInt(next(), 10));
    else if (a === '-h' || a === '--help') {
      console.log('usage: node scripts/eval.mjs [--models DIR] [--tokens N] [--write docs/eval.md] [--json FILE] [--jobs 2]');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  if (o.json === undefined) o.json = join(o.models, 'eval.json');
  return o;
}

function evalModel(bin, dir, tokens) {
  return new Promise((res, rej) => {
    const args = ['eval', dir];
    if (tokens) args.push('--tokens', String(tokens));
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', rej);
    child.on('close', (code) => {
      if (code !== 0) return rej(new Error(`${dir}: eval exited with ${code}`));
      res(out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)));
    });
  });
}

const fmtLoss = (r) => (r && r.loss != null ? r.loss.toFixed(3) : 'n/a');
const fmtAcc = (r) => (r && r.accuracy != null ? `${(100 * r.accuracy).toFixed(1)}%` : 'n/a');

function table(rows, task, mode, lengths, trainLen, withAcc) {
  const head = `| model | ${lengths.map((f) => `${f * trainLen} (${f}x)`).join(' | ')} |`;
  const sep = `|---|${lengths.map(() => '---:').join('|')}|`;
  const lines = [head, sep];
  for (const pe of ENCODINGS) {
    const variants = pe === 'rope' ? Object.keys(VARIANT_LABEL) : ['trained'];
    for (const v of variants) {
      const mine = rows.filter((r) => r.model === `${task}-${pe}` && r.variant === v && r.mode === mode);
      if (!mine.length) continue;
      const cells = lengths.map((f) => {
        if (v !== 'trained' && f === 1) return '=';
        const r = mine.find((x) => x.factor === f);
        if (!r) return '';
        return withAcc ? `${fmtLoss(r)} / ${fmtAcc(r)}` : fmtLoss(r);
      });
      lines.push(`| ${VARIANT_LABEL[v] ?? pe} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const bin = buildModelTool();
  const dirs = [];
  for (const t of TASKS) for (const pe of ENCODINGS) {
    const d = join(o.models, `${t}-${pe}`);
    if (existsSync(join(d, 'model.safetensors'))) dirs.push(d);
  }
  if (!dirs.length) throw new Error(`no models in ${o.models}: run \`npm run train\` first`);
  const t0 = Date.now();
  const rows = [];
  const queue = [...dirs];
  await Promise.all(Array.from({ length: Math.min(o.jobs, queue.length) }, async () => {
    while (queue.length) {
      const d = queue.shift();
      const r = await evalModel(bin, d, o.tokens);
      rows.push(...r);
      process.stderr.write(`evaluated ${r[0]?.model ?? d} (${r.length} rows)\n`);
    }
  }));
  const trainLen = {};
  for (const t of TASKS) {
    const cfg = join(o.models, `${t}-rope`, 'config.json');
    const any = readdirSync(o.models).find((n) => n.startsWith(`${t}-`) && existsSync(join(o.models, n, 'config.json')));
    const c = existsSync(cfg) ? cfg : any ? join(o.models, any, 'config.json') : null;
    if (c) trainLen[t] = JSON.parse(readFileSync(c, 'utf8')).max_position_embeddings;
  }
  const lengths = [1, 2, 4, 8];
  const parts = [];
  if (trainLen.copy) {
    parts.push(`**copy** (trained at ${trainLen.copy} tokens): loss (nats) / accuracy on the scored targets, ${rows.find((r) => r.model.startsWith('copy-'))?.targets ?? '?'} targets at 1x\n\n` +
      table(rows, 'copy', 'nonoverlapping', lengths, trainLen.copy, true));
  }
  if (trainLen.lm) {
    parts.push(`**lm, non-overlapping windows** (trained at ${trainLen.lm} characters): loss in nats per character\n\n` +
      table(rows, 'lm', 'nonoverlapping', lengths, trainLen.lm, false));
    parts.push(`**lm, sliding windows** (stride = window / 4; each character predicted with at least 3/4 of the window as context): nats per character\n\n` +
      table(rows, 'lm', 'sliding', lengths, trainLen.lm, false));
  }
  const md = parts.join('\n\n');
  console.log(md);
  console.log(`\n(${rows.length} evaluations in ${((Date.now() - t0) / 1000).toFixed(0)}s)`);
  if (o.json) {
    writeFileSync(o.json, JSON.stringify({ description: 'scripts/eval.mjs: loss / accuracy against evaluation length', lengths_factor: lengths, train_len: trainLen, rows }, null, 1) + '\n');
  }
  if (o.write) {
    const text = existsSync(o.write) ? readFileSync(o.write, 'utf8') : '<!-- eval:begin -->\n<!-- eval:end -->\n';
    const b = text.indexOf('<!-- eval:begin -->'), e = text.indexOf('<!-- eval:end -->');
    if (b < 0 || e < b) throw new Error(`${o.write} lacks the <!-- eval:begin --> ... <!-- eval:end --> markers`);
    writeFileSync(o.write, `${text.slice(0, b)}<!-- eval:begin -->\n${md}\n${text.slice(e)}`);
    console.log(`wrote the tables into ${o.write}`);
  }
}

main().catch((e) => {
  console.error(e.message ?? e);
  process.exit(1);
});
