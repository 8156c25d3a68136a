// The repository's copy of the reference vectors (tests/golden/) is intact: every file SHA256SUMS lists is
// present with its recorded hash, and every file of the copied set is listed. A line-ending conversion, an
// editor's reformat or a bad merge of a golden file fails here, naming the file, instead of as a numeric
// mismatch somewhere else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { GOLDEN_DIR } from './helpers.js';

const listing = readFileSync(new URL('SHA256SUMS', GOLDEN_DIR), 'utf8').trim().split('\n');
const recorded = new Map(listing.map((line) => {
  const m = /^([0-9a-f]{64}) {2}(\S+)$/.exec(line);
  assert.ok(m, `SHA256SUMS: malformed line ${JSON.stringify(line)}`);
  return [m[2], m[1]];
}));

test('tests/golden: SHA256SUMS covers the copied set (README, e2e, mrope, every json/bin)', () => {
  for (const name of ['README.md', 'e2e/README.md', 'mrope/README.md', 'rope_inv_freq.json', 'rope_cos_sin.json',
    'rope_apply_half_split.json', 'rope_apply_interleaved.json', 'alibi.json', 'sinusoidal.json',
    'learned_opt.json', 'mrope/mrope.json', 'mrope/rope2d.json', 'e2e/llama3.bin']) {
    assert.ok(recorded.has(name), `SHA256SUMS does not list ${name}`);
  }
  // Files of the copied set not listed would escape the check; hf-configs/ carries its own notes.
  const onDisk = readdirSync(GOLDEN_DIR, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${e.parentPath ?? e.path}/${e.name}`.slice(GOLDEN_DIR.pathname.length).replace(/^\/+/, ''))
    .filter((name) => !name.startsWith('hf-configs/') && name !== 'SHA256SUMS' && name !== 'PROVENANCE.md');
  assert.deepEqual(onDisk.filter((name) => !recorded.has(name)), [], 'files in tests/golden/ missing from SHA256SUMS');
});

test('tests/golden: every listed file has its recorded SHA-256', () => {
  for (const [name, hash] of recorded) {
    const actual = createHash('sha256').update(readFileSync(new URL(name, GOLDEN_DIR))).digest('hex');
    assert.equal(actual, hash, `tests/golden/${name} differs from the copy recorded in SHA256SUMS`);
  }
});
