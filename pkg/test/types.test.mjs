// The published types: an ES module and a CommonJS consumer compile against them
// (`tsc --noEmit`, module nodenext), and misuse is rejected (@ts-expect-error lines).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(pkg, 'node_modules', 'typescript', 'bin', 'tsc');
const skip = existsSync(tsc) ? false : 'typescript is not installed in pkg/node_modules: types test skipped';

test('the types compile for ES module and CommonJS consumers', { skip, timeout: 120_000 }, () => {
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(pkg, 'test', 'types')], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stdout + run.stderr);
});
