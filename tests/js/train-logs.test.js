// train-logs.test.js — every shipped tiny model has the trainer's log beside it (the playground's training curves),
// and the log belongs to that model: the same run settings as its config.json, one loss per step, and the mean of
// its last 100 losses equals the final_train_loss the trainer recorded in config.json when it trained the weights.
// The log stores each loss with 6 significant digits, so that mean can differ from the recorded one by at most
// half a unit in the 6th digit of the largest loss it averages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TASKS, ENCODINGS } from '../../scripts/model-build.mjs';

const MODELS = join(dirname(fileURLToPath(import.meta.url)), '../../web/playground/public/models');
const readJson = (p) => JSON.parse(readFileSync(join(MODELS, p), 'utf8'));
const index = readJson('index.json');
const entries = (index.models ?? index).filter((e) => e && e.path);

test('index.json lists every trained model (task x encoding), each with its train-log.json', () => {
  assert.deepEqual(entries.map((e) => e.name).sort(), TASKS.flatMap((t) => ENCODINGS.map((e) => `${t}-${e}`)).sort());
  for (const e of entries) assert.equal(e.train_log, `${e.name}/train-log.json`, e.name);
});

for (const e of entries) {
  test(`${e.name}: the log matches config.json's training run`, () => {
    const log = readJson(e.train_log);
    const t = readJson(`${e.path}config.json`).posenc.training;
    assert.equal(log.model, e.name);
    for (const [k, v] of [['steps', t.steps], ['batch_size', t.batch_size], ['seq_len', t.seq_len], ['warmup_steps', t.warmup_steps]])
      assert.equal(log[k], v, k);
    assert.equal(log.loss.length, t.steps);
    for (const [i, l] of log.loss.entries()) assert.ok(Number.isFinite(l) && l > 0, `loss[${i}] = ${l}`);
    const tail = log.loss.slice(-Math.min(100, t.steps));
    const mean = tail.reduce((a, b) => a + b, 0) / tail.length;
    const bound = 0.5e-5 * Math.max(...tail);
    assert.ok(Math.abs(mean - t.final_train_loss) <= bound, `mean of the last ${tail.length}: ${mean} vs ${t.final_train_loss} (bound ${bound})`);
    // training worked: the last losses are far below the first ones
    assert.ok(mean < log.loss[0] / 2, `${mean} vs first ${log.loss[0]}`);
  });
}
