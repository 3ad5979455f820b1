// `runner[Symbol.asyncDispose]()`: what `await using runner = createJobRunner(…)` calls at
// the end of its scope. It is dispose: it waits for the pass in flight, then the runner is done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, base, deferred } from './helpers.mjs';

test('Symbol.asyncDispose disposes the runner once the pass in flight has settled', async () => {
  assert.equal(typeof Symbol.asyncDispose, 'symbol', 'this Node.js has the symbol');
  const work = deferred();
  let claims = 0;
  const runner = createJobRunner(base({
    claim: async () => (claims++ === 0 ? { id: 1 } : null),
    perform: () => work.promise,
  }));
  assert.equal(typeof runner[Symbol.asyncDispose], 'function');
  const pass = runner.tick();
  await new Promise((resolve) => setImmediate(resolve));
  let disposed = false;
  const disposing = runner[Symbol.asyncDispose]().then(() => {
    disposed = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(disposed, false, 'it waits for the item in flight');
  work.resolve();
  await disposing;
  assert.deepEqual({ ...(await pass) }, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  assert.deepEqual({ ...(await runner.tick()) }, { claimed: 0, performed: 0, failed: 0, claimLost: 0 });
  assert.equal(claims, 2, 'no claim after dispose');
});
