// A job that comes back to the worker that finished it, under a newer token, is settled with
// the outcome that worker holds, not run again.
//
// How it comes back: a worker's claims leave the jobs whose outcome it holds alone, but on
// PostgreSQL a claim statement held up by a lock runs with the clock of when it ran and the
// exclusion list of when it was sent. A job that finished meanwhile and whose lease went stale
// is then taken over by the worker's own claim, which fences its own settle out. These tests
// drive the queues' work loop over a store that answers that way: the worker's second claim
// hands back the job its first claim got, under the next token, while the first outcome's
// completion is still waiting, or after it was refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { startWork } = require('../dist/queue-work.js');
const { integer } = require('../dist/queue-input.js');
const api = require('../dist/index.cjs');
const policy = require('../dist/queue-policy.js').queuePolicy(require('../dist/leasehold_node.cjs'));

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const job = (token) => ({ id: 7, queue: 'q', token, payload: {}, attempt: token, maxAttempts: 5, timeoutMs: null });

/** A store whose claims answer `claims` in turn (then nothing); completions wait to be answered. */
function fakeStore(claims) {
  const completions = [];
  return {
    completions,
    closed: false,
    integer,
    claimPage: async () => {
      const next = claims.shift();
      return next === undefined ? [] : next();
    },
    renewMany: async (jobs) => jobs.map((j) => j.id),
    renew: async () => true,
    completer: () => ({
      complete: (j, result) => new Promise((resolve) => completions.push({ token: j.token, result, answer: resolve })),
      flush: async () => {},
    }),
    fail: async () => true,
    release: async () => {},
    subscribe: () => () => {},
  };
}

async function until(what, check) {
  for (let i = 0; i < 500; i += 1) {
    if (check()) return;
    await sleep(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Works the store's claims; answers the handler's runs and the completions asked for. */
async function work(store, finish) {
  let runs = 0;
  const working = startWork(store, api, policy, 'q', async () => ({ run: ++runs }), { pollMs: 10, staleAfterMs: 5_000 });
  try {
    await finish();
  } finally {
    for (const c of store.completions) c.answer(c.token === 2);
    await working.dispose();
  }
  return { runs, completions: store.completions.map((c) => ({ token: c.token, result: JSON.parse(c.result) })) };
}

/** The handler ran once, and its outcome was written under the first token and again under the second. */
function ranOnce(runs, completions) {
  assert.equal(runs, 1, 'the finished work is not run again');
  assert.deepEqual(completions, [
    { token: 1, result: { run: 1 } },
    { token: 2, result: { run: 1 } },
  ]);
}

test('a job taken over by its own worker while its outcome waits to be written is settled with it', async () => {
  const store = fakeStore([
    () => [job(1)],
    async () => {
      await until('the first completion', () => store.completions.length === 1);
      return [job(2)];
    },
  ]);
  const { runs, completions } = await work(store, () => until('the second completion', () => store.completions.length === 2));
  ranOnce(runs, completions);
});

test('a job taken over by its own worker after its completion was refused is settled with its outcome', async () => {
  const store = fakeStore([
    () => [job(1)],
    async () => {
      await until('the first completion', () => store.completions.length === 1);
      store.completions[0].answer(false); // the takeover moved the token: refused
      await sleep(20);
      return [job(2)];
    },
  ]);
  const { runs, completions } = await work(store, () => until('the second completion', () => store.completions.length === 2));
  ranOnce(runs, completions);
});
