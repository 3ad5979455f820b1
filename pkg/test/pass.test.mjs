// A pass (issue 2, clauses 3 and 4) through the JS API: claims bounded by batchLimit,
// serialized at every concurrency, nothing-to-claim and raising claims end the pass, each
// item counted once, failures isolated and logged; items and callbacks as JS gives them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, base, queue, recorder, deferred, settle } from './helpers.mjs';

const plain = (report) => ({ ...report });

test('a pass claims until nothing is left and performs every item in claim order', async () => {
  const q = queue(5);
  const seen = [];
  const runner = createJobRunner(base({ claim: q.claim, perform: async (item) => { seen.push(item.id); } }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 5, performed: 5, failed: 0, claimLost: 0 });
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  assert.equal(q.claims, 6, 'the sixth claim answered null');
  await runner.dispose();
});

test('batchLimit bounds claim attempts, counting every answer', async () => {
  let claims = 0;
  const runner = createJobRunner(base({ batchLimit: 3, claim: async () => { claims += 1; return claims === 2 ? null : { claims }; },
    perform: async () => {} }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  assert.equal(claims, 2, 'null ends the pass before the bound');
  const q = queue(100);
  const bounded = createJobRunner(base({ batchLimit: 10, concurrency: 4, claim: q.claim, perform: async () => {} }));
  assert.equal((await bounded.tick()).claimed, 10);
  assert.equal(q.claims, 10);
  await runner.dispose();
  await bounded.dispose();
});

test('undefined, like null, means nothing to claim', async () => {
  let claims = 0;
  const runner = createJobRunner(base({ claim: async () => { claims += 1; return claims < 3 ? { claims } : undefined; },
    perform: async () => {} }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 2, performed: 2, failed: 0, claimLost: 0 });
  await runner.dispose();
});

test('items are passed through untouched, whatever they are', async () => {
  const values = [{ id: 1 }, 0, '', false, Number.NaN, [1, 2], Symbol.for('x'), 10n];
  let next = 0;
  const seen = [];
  const runner = createJobRunner(base({ batchLimit: 100, claim: async () => (next < values.length ? values[next++] : null),
    perform: async (item) => { seen.push(item); } }));
  const report = await runner.tick();
  assert.equal(report.performed, values.length);
  assert.equal(seen.length, values.length);
  seen.forEach((item, i) => assert.ok(Object.is(item, values[i]), `item ${i}`));
  await runner.dispose();
});

test('callbacks may answer plain values instead of promises', async () => {
  let next = 0;
  const seen = [];
  const runner = createJobRunner(base({ claim: () => (next < 3 ? next++ : null), perform: (item) => { seen.push(item); } }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 3, performed: 3, failed: 0, claimLost: 0 });
  assert.deepEqual(seen, [0, 1, 2]);
  await runner.dispose();
});

test('callbacks that throw synchronously behave like rejected promises', async () => {
  const { lines, logger } = recorder();
  let claims = 0;
  const runner = createJobRunner(base({ name: 'sync', logger, claim: () => {
    claims += 1;
    if (claims === 3) throw new Error('claim threw');
    return { claims };
  }, perform: (item) => { if (item.claims === 1) throw new Error('perform threw'); } }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 2, performed: 1, failed: 1, claimLost: 0 });
  assert.deepEqual(lines.map((l) => [l.message, l.meta.module, l.meta.err.message]), [
    ['sync work failed', 'sync', 'perform threw'],
    ['sync claim failed', 'sync', 'claim threw'],
  ]);
  await runner.dispose();
});

test('thenables are awaited like promises', async () => {
  let next = 0;
  const later = (value) => ({ then: (resolve) => setTimeout(() => resolve(value), 1) });
  const runner = createJobRunner(base({ claim: () => later(next < 2 ? next++ : null), perform: () => later(undefined) }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 2, performed: 2, failed: 0, claimLost: 0 });
  await runner.dispose();
});

test('a failing item is isolated, counted once and logged with the thrown value', async () => {
  const { lines, logger } = recorder();
  const boom = new Error('boom');
  const runner = createJobRunner(base({ name: 'iso', logger, concurrency: 3, claim: queue(6).claim,
    perform: async (item) => { if (item.id === 2) throw boom; } }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 6, performed: 5, failed: 1, claimLost: 0 });
  assert.equal(lines.length, 1);
  assert.equal(lines[0].message, 'iso work failed');
  assert.equal(lines[0].meta.err, boom, 'the error is the thrown value itself');
  await runner.dispose();
});

test('a raising claim ends the pass but keeps what was done, and is logged', async () => {
  const { lines, logger } = recorder();
  let n = 0;
  const runner = createJobRunner(base({ name: 'db', logger, batchLimit: 10,
    claim: async () => { n += 1; if (n === 3) throw new Error('db down'); return { n }; }, perform: async () => {} }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 2, performed: 2, failed: 0, claimLost: 0 });
  assert.equal(n, 3, 'no claim after the one that raised');
  assert.deepEqual(lines.map((l) => l.message), ['db claim failed']);
  await runner.dispose();
});

test('up to concurrency items at once, claims one at a time', async () => {
  let performing = 0;
  let peak = 0;
  let claiming = 0;
  let peakClaims = 0;
  let next = 0;
  const gates = [];
  const runner = createJobRunner(base({ batchLimit: 40, concurrency: 4,
    claim: async () => {
      claiming += 1;
      peakClaims = Math.max(peakClaims, claiming);
      await settle();
      claiming -= 1;
      return next < 12 ? next++ : null;
    },
    perform: async () => {
      performing += 1;
      peak = Math.max(peak, performing);
      const gate = deferred();
      gates.push(gate);
      await gate.promise;
      performing -= 1;
    } }));
  let ended = false;
  const pass = runner.tick().then((report) => { ended = true; return report; });
  // Hold every item until four are in flight (or the queue ran dry), then let them go.
  while (!ended) {
    await settle();
    if (gates.length === 4 || (next >= 12 && gates.length > 0)) gates.splice(0).forEach((g) => g.resolve());
  }
  assert.equal((await pass).performed, 12);
  assert.equal(peak, 4);
  assert.equal(peakClaims, 1);
  await runner.dispose();
});

test('the pool is min(concurrency, batchLimit)', async () => {
  let performing = 0;
  let peak = 0;
  const runner = createJobRunner(base({ batchLimit: 2, concurrency: 16, claim: queue(10).claim,
    perform: async () => { performing += 1; peak = Math.max(peak, performing); await settle(); performing -= 1; } }));
  assert.equal((await runner.tick()).claimed, 2);
  assert.equal(peak, 2);
  await runner.dispose();
});

test('a claim that raises at concurrency > 1 leaves no worker waiting', async () => {
  let n = 0;
  const runner = createJobRunner(base({ concurrency: 8, batchLimit: 50,
    claim: async () => { n += 1; if (n === 4) throw new Error('x'); return { n }; },
    perform: () => new Promise((resolve) => setTimeout(resolve, 2)) }));
  assert.deepEqual(plain(await runner.tick()), { claimed: 3, performed: 3, failed: 0, claimLost: 0 });
  await runner.dispose();
});
