// eval.mjs — `npm run eval`: loss (and accuracy for the copy task) of every shipped tiny model at 1x, 2x, 4x and
// 8x its training length; RoPE models also under inference-time scaling (linear / PI, NTK-aware, dynamic NTK,
// YaRN); the LM with non-overlapping and sliding-window evaluation. Native (build/model/posenc-model eval),
// two models at a time.
//
//   node scripts/eval.mjs [--models DIR] [--tokens N] [--write docs/eval.md] [--json FILE]
//
// Prints markdown tables. --write replaces the block between <!-- eval:begin --> and <!-- eval:end --> in the
// given file and draws eval-lm.svg and eval-copy.svg next to it; --json (default: <models>/eval.json, for the playground's loss-vs-length figure) saves the rows.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, readdirSync, copyFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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

// A line chart (SVG, no dependencies) of a metric against evaluation length, log2 x-axis, one line per model
// variant: the ALiBi paper's figure 1 layout.
const COLORS = { none: '#7f7f7f', sinusoidal: '#1f77b4', learned: '#9467bd', rope: '#d62728', alibi: '#2ca02c',
  'rope + linear (PI)': '#ff7f0e', 'rope + NTK-aware': '#e377c2', 'rope + dynamic NTK': '#8c564b', 'rope + YaRN': '#17becf' };
function svgChart(rows, task, mode, trainLen, metric, title, yLabel) {
  const W = 640, H = 380, L = 64, R = 190, T = 40, B = 50;
  const series = [];
  for (const pe of ENCODINGS) {
    for (const v of pe === 'rope' ? Object.keys(VARIANT_LABEL) : ['trained']) {
      const pts = rows.filter((r) => r.model === `${task}-${pe}` && r.variant === v && r.mode === mode && r[metric] != null)
        .map((r) => [r.factor, r[metric]]);
      if (v !== 'trained') {
        const base = rows.find((r) => r.model === `${task}-${pe}` && r.variant === 'trained' && r.mode === mode && r.factor === 1);
        if (base) pts.push([1, base[metric]]);
      }
      pts.sort((a, b) => a[0] - b[0]);
      if (pts.length) series.push({ name: VARIANT_LABEL[v] ?? pe, pts, dash: v !== 'trained' });
    }
  }
  const ys = series.flatMap((s) => s.pts.map((p) => p[1]));
  let y0 = Math.min(...ys), y1 = Math.max(...ys);
  if (metric === 'accuracy') { y0 = 0; y1 = 1; } else {
    const pad = (y1 - y0) * 0.05 || 0.1;
    y0 -= pad; y1 += pad;
  }
  const X = (f) => L + ((Math.log2(f)) / 3) * (W - L - R);
  const Y = (v) => T + (1 - (v - y0) / (y1 - y0)) * (H - T - B);
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`, `<text x="${L}" y="22" font-size="14">${title}</text>`];
  for (const f of [1, 2, 4, 8]) {
    out.push(`<line x1="${X(f)}" y1="${T}" x2="${X(f)}" y2="${H - B}" stroke="#ddd"/>`,
      `<text x="${X(f)}" y="${H - B + 16}" text-anchor="middle">${f * trainLen}</text>`);
  }
  for (let k = 0; k <= 4; k++) {
    const v = y0 + ((y1 - y0) * k) / 4;
    out.push(`<line x1="${L}" y1="${Y(v)}" x2="${W - R}" y2="${Y(v)}" stroke="#eee"/>`,
      `<text x="${L - 6}" y="${Y(v) + 4}" text-anchor="end">${metric === 'accuracy' ? `${Math.round(100 * v)}%` : v.toFixed(2)}</text>`);
  }
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">evaluation length (training length ${trainLen})</text>`,
    `<text transform="translate(16 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${yLabel}</text>`);
  series.forEach((s, i) => {
    const c = COLORS[s.name] ?? '#000';
    out.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${s.dash ? ' stroke-dasharray="5 3"' : ''} points="${s.pts.map(([f, v]) => `${X(f).toFixed(1)},${Y(v).toFixed(1)}`).join(' ')}"/>`);
    for (const [f, v] of s.pts) out.push(`<circle cx="${X(f).toFixed(1)}" cy="${Y(v).toFixed(1)}" r="3" fill="${c}"/>`);
    const ly = T + 10 + i * 18;
    out.push(`<line x1="${W - R + 12}" y1="${ly}" x2="${W - R + 36}" y2="${ly}" stroke="${c}" stroke-width="2"${s.dash ? ' stroke-dasharray="5 3"' : ''}/>`,
      `<text x="${W - R + 42}" y="${ly + 4}">${s.name}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tool = buildModelTool();
  const bin = `${tool}.eval-${process.pid}`; // a private copy, as in train.mjs
  copyFileSync(tool, bin);
  process.on('exit', () => rmSync(bin, { force: true }));
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
    const dir = dirname(o.write);
    if (trainLen.lm) {
      writeFileSync(join(dir, 'eval-lm.svg'), svgChart(rows, 'lm', 'sliding', trainLen.lm, 'loss',
        'lm: loss against evaluation length (sliding windows)', 'loss, nats per character'));
    }
    if (trainLen.copy) {
      writeFileSync(join(dir, 'eval-copy.svg'), svgChart(rows, 'copy', 'nonoverlapping', trainLen.copy, 'accuracy',
        'copy: accuracy against evaluation length', 'accuracy on the copied letters'));
    }
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
