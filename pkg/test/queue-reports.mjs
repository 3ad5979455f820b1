// Shared by the queue tests of leasehold/postgres and leasehold/pglite: how `work()` reports
// each job to its runner (pass reports, onEvent, the logger), one job at a time in one slot,
// and the states counts() and job(id) answer.
import assert from 'node:assert/strict';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers `check()` once it is truthy, polling every 25 ms; throws naming `what` after `ms`. */
export async function until(what, check, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/**
 * Works four jobs in `queue` (a fresh queue named `reports`), in priority order:
 * - `done`: the handler returns: performed;
 * - `boom`: the handler throws on its only attempt: failed, with the handler's error, logged;
 * - `stopped`: cancelled while it runs, the handler rejects with its signal's reason: a lost claim;
 * - `ignored`: cancelled while it runs, the handler ignores its signal and returns: the write
 *   of its outcome is refused by the fence the cancel moved: a lost claim.
 * Asserts the events and the pass reports say exactly that.
 */
export async function checkReports(queue) {
  const boom = new Error('boom');
  const ids = {};
  for (const [name, priority] of [['done', 1], ['boom', 2], ['stopped', 3], ['ignored', 4]]) {
    ids[name] = (await queue.enqueue('reports', { name }, { priority, maxAttempts: 1 })).id;
  }
  const events = [];
  const logs = [];
  let running;
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const working = queue.work(
    'reports',
    async ({ name }, { signal }) => {
      running = name;
      if (name === 'boom') throw boom;
      if (name === 'stopped') {
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      }
      if (name === 'ignored') await gate;
      return { name };
    },
    { onEvent: (event) => events.push(event), logger: { error: (message, meta) => logs.push({ message, meta }) } },
  );
  await until('the job "stopped" to run', () => running === 'stopped');
  assert.deepEqual(await queue.cancel(ids.stopped), [ids.stopped]);
  await until('the job "ignored" to run', () => running === 'ignored');
  assert.deepEqual(await queue.cancel(ids.ignored), [ids.ignored]);
  await sleep(200); // the cancel reaches the worker (its handler ignores it)
  release();
  await until('the job "ignored" to be reported', () => events.filter((e) => e.type === 'claim-lost').length === 2);
  await working.dispose();

  const outcomes = events.filter((e) => ['performed', 'item-failed', 'claim-lost'].includes(e.type)).map((e) => e.type);
  assert.deepEqual(outcomes, ['performed', 'item-failed', 'claim-lost', 'claim-lost'], JSON.stringify(events));
  assert.equal(events.find((e) => e.type === 'item-failed').error, boom, 'the handler\'s own error');
  for (const lost of events.filter((e) => e.type === 'claim-lost')) assert.equal(lost.lapsed, false);
  const total = { claimed: 0, performed: 0, failed: 0, claimLost: 0 };
  for (const { report } of events.filter((e) => e.type === 'pass-end')) for (const k of Object.keys(total)) total[k] += report[k];
  assert.deepEqual(total, { claimed: 4, performed: 1, failed: 1, claimLost: 2 });
  assert.deepEqual(logs.map((l) => [l.message, l.meta.err]), [['reports#1 work failed', boom]]);

  const states = {};
  for (const [name, id] of Object.entries(ids)) states[name] = (await queue.job(id)).state;
  assert.deepEqual(states, { done: 'succeeded', boom: 'dead', stopped: 'cancelled', ignored: 'cancelled' });
}

/**
 * counts() and job(id) in `queue` (a fresh queue named `c`) tell queued jobs apart as the
 * dashboard's overview does: due, scheduled for later, retrying after a failure.
 */
export async function checkShownStates(queue) {
  const ids = {};
  ids.held = (await queue.enqueue('c', { n: 'held' })).id;
  ids.later = (await queue.enqueue('c', { n: 'later' }, { delayMs: 3_600_000 })).id;
  ids.flaky = (await queue.enqueue('c', { n: 'flaky' }, { priority: -1 })).id;
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  let holding;
  const held = new Promise((resolve) => (holding = resolve));
  // One slot: the flaky job first (its priority), which fails; then the held one, which keeps the slot.
  const working = queue.work('c', async (payload) => {
    if (payload.n === 'flaky') throw new Error('not yet');
    holding();
    await gate;
  }, { logger: { error() {} } });
  await held;
  ids.due = (await queue.enqueue('c', { n: 'due' })).id;
  const [counts] = await queue.counts();
  const states = {};
  for (const [name, id] of Object.entries(ids)) states[name] = (await queue.job(id)).state;
  release();
  await working.dispose();
  assert.deepEqual(
    [counts.queued, counts.scheduled, counts.running, counts.retrying, counts.succeeded],
    [1, 1, 1, 1, 0],
    `queued, scheduled, running, retrying, succeeded: ${JSON.stringify(counts)}`,
  );
  assert.deepEqual(states, { held: 'running', later: 'scheduled', flaky: 'retrying', due: 'queued' });
}
