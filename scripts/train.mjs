// train.mjs — `npm run train`: trains every (task, position encoding) tiny model on the same data and budget
// and writes them to web/playground/public/models/<task>-<encoding>/ (model.safetensors, config.json,
// logits.json, train-log.json: every step's loss), plus the check sets (<task>-check.json) and index.json.
//
//   node scripts/train.mjs [--jobs 2] [--only copy-rope,lm-alibi] [--steps N] [--out DIR]
//   node scripts/train.mjs --status      which shipped models were trained from this checkout's C sources
//
// Trainings run side by side (--jobs, default 2: this machine has two cores); each is single-threaded and
// deterministic, so the weights do not depend on how many run at once. --steps overrides the budget (for a
// quick look; the shipped models use the defaults in c/model/main.c).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync, copyFileSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { buildModelTool, sourcesHash, ROOT, MODELS_DIR, TASKS, ENCODINGS } from './model-build.mjs';

// --status: a model is "current" when its config.json's sources_sha256 is this checkout's; retraining then
// reproduces its bytes. Otherwise the kernels changed since (the weights still work; the logits move slightly).
function status(out) {
  const now = sourcesHash();
  let stale = 0;
  for (const t of TASKS) for (const e of ENCODINGS) {
    const p = join(out, `${t}-${e}`, 'config.json');
    if (!existsSync(p)) { console.log(`${t}-${e}`.padEnd(17), 'missing'); stale++; continue; }
    const h = JSON.parse(readFileSync(p, 'utf8')).posenc?.training?.sources_sha256;
    const ok = h === now;
    if (!ok) stale++;
    console.log(`${t}-${e}`.padEnd(17), ok ? 'current' : `trained from other sources (${String(h).slice(0, 12)}; now ${now.slice(0, 12)})`);
  }
  console.log(stale ? `${stale} model(s) to retrain for byte-exact reproducibility: npm run train` : 'all models match this checkout');
}

function parseArgs(argv) {
  const opts = { jobs: 2, only: null, steps: null, out: MODELS_DIR, status: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--jobs') opts.jobs = Math.max(1, parseInt(next(), 10));
    else if (a === '--only') opts.only = next().split(',').map((s) => s.trim()).filter(Boolean);
    else if (a === '--steps') opts.steps = parseInt(next(), 10);
    else if (a === '--out') opts.out = resolve(next());
    else if (a === '--status') opts.status = true;
    else if (a === '-h' || a === '--help') {
      console.log('usage: node scripts/train.mjs [--jobs 2] [--only copy-rope,lm-alibi] [--steps N] [--out DIR] | --status');
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

function run(bin, args, prefix) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let buf = '';
    const onData = (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        process.stdout.write(`${line.startsWith(prefix) ? '' : `${prefix}: `}${line}\n`);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', reject);
    child.on('close', (code) => {
      if (buf) process.stdout.write(`${prefix}: ${buf}\n`);
      if (code === 0) resolve();
      else reject(new Error(`${prefix}: exited with code ${code}`));
    });
  });
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.status) return status(opts.out);
  // A private copy of the tool: a rebuild while the trainings run (sources edited, `npm run eval`) must not
  // change the binary halfway through the list.
  const tool = buildModelTool();
  const bin = `${tool}.train-${process.pid}`;
  copyFileSync(tool, bin);
  process.on('exit', () => rmSync(bin, { force: true }));
  let names = TASKS.flatMap((t) => ENCODINGS.map((e) => `${t}-${e}`));
  if (opts.only) {
    for (const n of opts.only) if (!names.includes(n)) throw new Error(`unknown model ${n} (one of ${names.join(', ')})`);
    names = opts.only;
  }
  mkdirSync(opts.out, { recursive: true });
  for (const task of TASKS) {
    await run(bin, ['data', '--task', task, '--out', join(opts.out, `${task}-check.json`)], `${task}-check`);
  }
  const t0 = Date.now();
  const queue = [...names];
  const failures = [];
  const worker = async () => {
    while (queue.length) {
      const name = queue.shift();
      const [task, pe] = name.split('-');
      const dir = join(opts.out, name);
      mkdirSync(dir, { recursive: true });
      const args = ['train', '--task', task, '--pe', pe, '--out', dir];
      if (opts.steps) args.push('--steps', String(opts.steps), '--warmup', String(Math.max(1, Math.floor(opts.steps / 20))));
      try {
        await run(bin, args, name);
      } catch (e) {
        failures.push(name);
        console.error(String(e.message ?? e));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(opts.jobs, names.length) }, worker));

  // index.json: every model present in the output directory, with its in-distribution numbers
  const index = [];
  for (const task of TASKS) {
    for (const pe of ENCODINGS) {
      const cfgPath = join(opts.out, `${task}-${pe}`, 'config.json');
      if (!existsSync(cfgPath)) continue;
      const cfg = JSON.parse(readFileSync(cfgPath, 'utf8'));
      const ev = cfg.posenc.evaluation.in_distribution;
      index.push({
        name: `${task}-${pe}`,
        task,
        position_encoding: pe,
        path: `${task}-${pe}/`,
        max_position_embeddings: cfg.max_position_embeddings,
        loss: ev.loss,
        accuracy: ev.accuracy,
        // the playground's training curves fetch only the logs listed here (no request that can 404)
        ...(existsSync(join(opts.out, `${task}-${pe}`, 'train-log.json')) ? { train_log: `${task}-${pe}/train-log.json` } : {}),
      });
    }
  }
  writeFileSync(
    join(opts.out, 'index.json'),
    JSON.stringify({ description: 'posenc tiny models (scripts/train.mjs); each directory holds config.json and model.safetensors', models: index }, null, 2) + '\n',
  );
  console.log(`\ntrained ${names.length - failures.length}/${names.length} models in ${((Date.now() - t0) / 1000).toFixed(0)}s -> ${relative(process.cwd(), opts.out) || '.'}`);
  console.log('model              loss    accuracy   (in distribution, check set)');
  for (const m of index) console.log(`${m.name.padEnd(17)} ${m.loss.toFixed(4)}  ${(100 * m.accuracy).toFixed(2).padStart(7)}%`);
  if (failures.length) {
    console.error(`failed: ${failures.join(', ')}`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e.message ?? e);
  process.exit(1);
});
