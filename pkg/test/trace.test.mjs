// Trace events (issue 2, clause 6): seed names and fields, plus `item` on per-item events;
// pass-start only once a claim succeeded, with the time read at the head of the pass;
// nothing for a pass that claimed nothing; a throwing sink costs nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, base, queue } from './helpers.mjs';

test('one pass: event order, names and fields', async () => {
  let clock = 1000;
  const events = [];
  const boom = new Error('boom');
  let next = 0;
  const runner = createJobRunner(base({ name: 'tr', intervalMs: 250, now: () => clock, claim: async () => {
    clock += 1;
    return next < 3 ? { id: next++ } : null;
  }, perform: async (item) => {
    clock += 10;
    if (item.id === 1) throw boom;
  }, onEvent: (e) => events.push(e) }));
  await runner.tick();
  await runner.dispose();
  assert.deepEqual(events, [
    { type: 'pass-start', name: 'tr', at: 1000 },
    { type: 'claimed', name: 'tr', at: 1001, item: 0 },
    { type: 'performed', name: 'tr', at: 1011, item: 0, durationMs: 10 },
    { type: 'claimed', name: 'tr', at: 1012, item: 1 },
    { type: 'item-failed', name: 'tr', at: 1022, item: 1, error: boom },
    { type: 'claimed', name: 'tr', at: 1023, item: 2 },
    { type: 'performed', name: 'tr', at: 1033, item: 2, durationMs: 10 },
    { type: 'pass-end', name: 'tr', at: 1034, report: { claimed: 3, performed: 2, failed: 1, claimLost: 0 }, nextDelayMs: 250 },
  ]);
  assert.equal(events[4].error, boom, 'the thrown value itself');
});

test('a pass that claims nothing emits nothing; a raising first claim emits only claim-failed', async () => {
  const events = [];
  const q = queue(0);
  const runner = createJobRunner(base({ claim: q.claim, perform: async () => {}, onEvent: (e) => events.push(e) }));
  await runner.tick();
  assert.equal(events.length, 0);
  const down = new Error('down');
  const failing = createJobRunner(base({ claim: async () => { throw down; }, perform: async () => {},
    onEvent: (e) => events.push(e) }));
  await failing.tick();
  assert.deepEqual(events.map((e) => e.type), ['claim-failed']);
  assert.equal(events[0].error, down);
  await runner.dispose();
  await failing.dispose();
});

test('item ordinals follow claim order at any concurrency', async () => {
  const claimed = [];
  const performed = new Map();
  const runner = createJobRunner(base({ concurrency: 4, batchLimit: 50, claim: queue(10).claim,
    perform: (item) => new Promise((resolve) => setTimeout(resolve, (10 - item.id) % 3)),
    onEvent: (e) => {
      if (e.type === 'claimed') claimed.push(e.item);
      if (e.type === 'performed') performed.set(e.item, e);
    } }));
  await runner.tick();
  await runner.dispose();
  assert.deepEqual(claimed, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual([...performed.keys()].sort((a, b) => a - b), claimed);
});

test('a throwing sink costs the pass nothing', async () => {
  let calls = 0;
  const runner = createJobRunner(base({ claim: queue(3).claim, perform: async () => {},
    onEvent: () => { calls += 1; throw new Error('sink'); } }));
  assert.equal((await runner.tick()).performed, 3);
  assert.equal(calls, 8, 'pass-start, 3 × (claimed, performed), pass-end');
  await runner.dispose();
});

test('events are plain objects and each one is new', async () => {
  const events = [];
  const runner = createJobRunner(base({ claim: queue(2).claim, perform: async () => {}, onEvent: (e) => events.push(e) }));
  await runner.tick();
  await runner.dispose();
  for (const e of events) assert.equal(Object.getPrototypeOf(e), Object.prototype);
  assert.equal(new Set(events).size, events.length);
});
