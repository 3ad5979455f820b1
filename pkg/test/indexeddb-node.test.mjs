// leasehold/indexeddb in Node.js: it loads (import and require share one module), and with no
// IndexedDB in the process `connect` says so instead of failing somewhere later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as imported from '../dist/indexeddb-node.mjs';

const required = createRequire(import.meta.url)('../dist/indexeddb.cjs');

test('import and require of leasehold/indexeddb in Node.js give the same functions and classes', () => {
  for (const name of ['connect', 'QueueError', 'QueueUnavailableError', 'JobCancelledError']) {
    assert.equal(typeof imported[name], 'function', name);
    assert.equal(imported[name], required[name], name);
  }
});

test('connect in Node.js without an IndexedDB rejects with a QueueUnavailableError saying there is none', async () => {
  assert.equal(globalThis.indexedDB, undefined);
  await assert.rejects(imported.connect({ name: 'jobs' }), (error) => {
    assert.ok(error instanceof imported.QueueUnavailableError);
    assert.equal(error.code, 'QUEUE_UNAVAILABLE');
    assert.match(error.message, /^leasehold\/indexeddb: cannot open the IndexedDB database "leasehold:jobs": there is no IndexedDB in this context/);
    return true;
  });
});

test('connect refuses bad options naming them, before looking for IndexedDB', async () => {
  await assert.rejects(imported.connect(), { name: 'TypeError', message: 'connect: options must be an object with a name, got undefined' });
  await assert.rejects(imported.connect({ name: '' }), { name: 'TypeError', message: 'connect: name must be a non-empty string, got an empty string' });
  await assert.rejects(imported.connect({ name: 'x', durability: 'fast' }), { name: 'TypeError', message: 'connect: durability must be one of default, strict, relaxed, got "fast"' });
  await assert.rejects(imported.connect({ nmae: 'x' }), /unknown option nmae \(did you mean name\?\)/);
});
