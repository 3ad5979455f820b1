// The exports a seed user relies on, and how the package loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as lib from 'leasehold';

const require = createRequire(import.meta.url);

test('the seed exports are all there', () => {
  assert.equal(typeof lib.createJobRunner, 'function');
  assert.equal(typeof lib.jobBackoff, 'function');
  assert.equal(lib.DEFAULT_JOB_BATCH_LIMIT, 25);
  assert.equal(lib.JOB_CLAIM_LOST, 'CLAIM_LOST');
  assert.equal(typeof lib.JobClaimLostError, 'function');
});

test('require and import share one instance', () => {
  const cjs = require('leasehold');
  assert.equal(cjs.createJobRunner, lib.createJobRunner);
  assert.equal(cjs.JobClaimLostError, lib.JobClaimLostError);
  assert.equal(lib.default.JobClaimLostError, lib.JobClaimLostError);
});

test('jobBackoff: own interval, up to ten times it, never past a minute unless the interval is', () => {
  assert.deepEqual({ ...lib.jobBackoff(100) }, { initialMs: 100, maxMs: 1000, multiplier: 2 });
  assert.deepEqual({ ...lib.jobBackoff(10_000) }, { initialMs: 10_000, maxMs: 60_000, multiplier: 2 });
  assert.deepEqual({ ...lib.jobBackoff(120_000) }, { initialMs: 120_000, maxMs: 120_000, multiplier: 2 });
  assert.equal(Object.getPrototypeOf(lib.jobBackoff(1)), Object.prototype, 'a plain object');
});

test('JobClaimLostError is an Error with the seed fields, plus lapsed', () => {
  const lost = new lib.JobClaimLostError('audit.sweep');
  assert.ok(lost instanceof Error);
  assert.equal(lost.name, 'JobClaimLostError');
  assert.equal(lost.code, 'CLAIM_LOST');
  assert.equal(lost.job, 'audit.sweep');
  assert.equal(lost.lapsed, false);
  assert.equal(lost.message, 'Another process took over the work audit.sweep had claimed.');
  assert.ok(Object.hasOwn(lost, 'code'), 'code is an own property, as in the seed');
  const lapsed = new lib.JobClaimLostError('audit.sweep', true);
  assert.equal(lapsed.lapsed, true);
  assert.match(lapsed.message, /audit\.sweep/);
  assert.match(String(lapsed.stack), /JobClaimLostError/);
});

test('the runner exposes its name and the seed methods, usable detached', async () => {
  const runner = lib.createJobRunner({ name: 'audit.core.sweep', intervalMs: 10, staleAfterMs: 30_000,
    logger: () => ({ error() {} }), claim: async () => null, perform: async () => {} });
  assert.equal(runner.name, 'audit.core.sweep');
  for (const method of ['start', 'tick', 'wake', 'stop', 'quiesce', 'dispose']) {
    assert.equal(typeof runner[method], 'function', method);
  }
  const { tick, dispose } = runner;
  assert.deepEqual({ ...(await tick()) }, { claimed: 0, performed: 0, failed: 0, claimLost: 0 });
  await dispose();
});

test('package.json maps require, import, browsers and types', () => {
  const manifest = require('leasehold/package.json');
  const root = manifest.exports['.'];
  assert.equal(manifest.name, 'leasehold');
  assert.equal(manifest.type, 'commonjs');
  assert.equal(root.node.require.default, './dist/index.cjs');
  assert.equal(root.node.import.default, './dist/index.mjs');
  assert.equal(root.browser.default, './dist/browser.mjs');
  assert.equal(manifest.exports['./auto'].browser.default, './dist/auto.mjs');
  assert.ok(root.node.require.types && root.node.import.types && root.browser.types);
  assert.equal(manifest.main, './dist/index.cjs', 'require(folder) finds the CommonJS entry too');
});

test('each .wasm is reachable through exports, and ships once', async () => {
  const { readdir } = await import('node:fs/promises');
  const manifest = require('leasehold/package.json');
  const dist = new URL('../dist/', import.meta.url);
  const wasm = (await readdir(dist, { recursive: true })).filter((f) => f.endsWith('.wasm')).sort();
  assert.deepEqual(wasm, ['leasehold_bg.wasm', 'leasehold_eventlog_bg.wasm', 'leasehold_pump_bg.wasm', 'leasehold_trace_bg.wasm']);
  for (const file of wasm) {
    assert.equal(manifest.exports[`./${file}`], `./dist/${file}`);
    assert.ok(require.resolve(`leasehold/${file}`).endsWith(file));
  }
});

test('in Node.js, init, initSync and initTrace are there and have nothing left to do', async () => {
  assert.equal(await lib.init(), undefined);
  assert.equal(await lib.init(new URL('https://example.invalid/never-fetched.wasm')), undefined);
  assert.equal(lib.initSync(), undefined);
  assert.equal(await lib.initTrace(), undefined);
  assert.equal(require('leasehold').init, lib.init);
});
