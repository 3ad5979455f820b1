// Host duties seen from outside: timers never keep Node.js alive, and a long run does not
// grow the heap (no per-item closures or controllers retained). Each runs in a child process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');

test('a process with started runners and a heartbeat in flight exits by itself', () => {
  const started = Date.now();
  const child = spawnSync(process.execPath, [path.join(fixtures, 'exits.mjs')], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(child.error, undefined, 'it exited before the 20 s limit');
  assert.equal(child.status, 0, child.stderr);
  assert.match(child.stdout, /idle claimed/);
  assert.match(child.stdout, /busy claimed/);
  assert.ok(Date.now() - started < 20_000);
});

test('a million items leave the JS heap and the wasm memory where they were', { timeout: 300_000 }, () => {
  const child = spawnSync(process.execPath, ['--expose-gc', path.join(fixtures, 'memory.cjs'), '1000000'],
    { encoding: 'utf8', timeout: 280_000 });
  assert.equal(child.status, 0, child.stderr);
  const m = JSON.parse(child.stdout.trim());
  assert.equal(m.performed, 1_000_000);
  assert.equal(m.wasmAfter, m.wasmBefore, 'wasm memory did not grow');
  const grown = m.heapAfter - m.heapBefore;
  assert.ok(grown < 2 * 1024 * 1024, `heap grew by ${grown} bytes over a million items`);
});
