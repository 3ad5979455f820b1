// `leasehold/postgres` against a real PostgreSQL (LEASEHOLD_TEST_PG_URL; skipped without it):
// the queue's API, its refusals (nothing queued), its schema checks, cancel and retry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { connect, LeaseholdSchemaError } from 'leasehold/postgres';
import { checkReports, checkShownStates, until } from './queue-reports.mjs';
import { deferred } from './helpers.mjs';

const url = process.env.LEASEHOLD_TEST_PG_URL;
const skip = url ? false : 'LEASEHOLD_TEST_PG_URL is not set (scripts/pg-cluster.sh start): leasehold/postgres tests skipped';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A pool on a fresh schema of its own, and `open(options)` connecting a queue to it; all closed and dropped after the test. */
async function freshPool(t, name) {
  const schema = `nodepg_${name}_${process.pid}`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`);
  const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });
  const queues = [];
  const open = async (options) => {
    const queue = await connect(pool, options);
    queues.push(queue);
    return queue;
  };
  t.after(async () => {
    for (const queue of queues) await queue.close();
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });
  return { pool, schema, admin, open };
}


test('a job enqueued is worked once, its result kept, its failure retried after the core backoff', { skip }, async (t) => {
  const { open } = await freshPool(t, 'roundtrip');
  const queue = await open();
  const first = await queue.enqueue('mail', { to: 'ada' });
  const flaky = await queue.enqueue('mail', { to: 'bob' }, { idempotencyKey: 'bob', priority: -1 });
  assert.deepEqual(await queue.enqueue('mail', { to: 'bob' }, { idempotencyKey: 'bob' }), { id: flaky.id, created: false });
  const seen = [];
  const working = queue.work('mail', async (payload, { job, attempt, signal }) => {
    assert.ok(signal instanceof AbortSignal);
    seen.push([payload.to, attempt, job.id]);
    if (payload.to === 'bob' && attempt === 1) throw new Error('smtp down');
    return { sent: payload.to };
  });
  await until('both jobs to succeed', async () => (await queue.counts())[0]?.succeeded === 2);
  await working.dispose();
  assert.deepEqual(seen.map(([to, attempt]) => `${to}#${attempt}`), ['bob#1', 'ada#1', 'bob#2'], 'lower priority first, the retry later');
  const job = await queue.job(flaky.id);
  assert.equal(job.state, 'succeeded');
  assert.deepEqual(job.result, { sent: 'bob' });
  assert.deepEqual(job.attemptsLog.map((a) => [a.outcome, a.error]), [['failed', 'smtp down'], ['succeeded', null]]);
  // The retry waited the core's first backoff step (1 s) after the failure.
  assert.ok(job.attemptsLog[1].startedAt - job.attemptsLog[0].endedAt >= 990, JSON.stringify(job.attemptsLog));
  assert.equal((await queue.job(first.id)).attempts, 1);
  assert.equal(await queue.job(999_999), null);
});

test('a succeeded job whose handler answered nothing shows its result as null, as the types and the IndexedDB queue say', { skip }, async (t) => {
  const { open } = await freshPool(t, 'noresult');
  const queue = await open();
  const { id } = await queue.enqueue('quiet', {});
  const working = queue.work('quiet', () => undefined);
  await until('the job to succeed', async () => (await queue.job(id)).state === 'succeeded');
  await working.dispose();
  const job = await queue.job(id);
  assert.ok('result' in job, JSON.stringify(job));
  assert.equal(job.result, null);
  // A job that has not succeeded has no result to show.
  const queued = await queue.enqueue('later', {});
  assert.equal((await queue.job(queued.id)).result, undefined);
});

test('bad input is refused naming the cause, and nothing is queued', { skip }, async (t) => {
  const { pool, open } = await freshPool(t, 'badinput');
  await assert.rejects(connect({ query() {}, connect() {}, end() {} }), /pool must be a pg\.Pool.*pg\.Client/);
  await assert.rejects(connect('postgres://x'), /pool must be a pg\.Pool.*got a string/);
  await assert.rejects(connect(pool, { migrat: true }), /unknown option "migrat"/);
  const single = new pg.Pool({ connectionString: url, max: 1 });
  await assert.rejects(connect(single), /the pool allows 1 connection; the queue needs at least 2/);
  await single.end();
  const queue = await open();
  const cycle = {};
  cycle.self = cycle;
  const deep = {};
  for (let level = 0, at = deep; level < 100_000; level++) at = at.next = {};
  const refusals = [
    [['bad name', {}], /queue "bad name" may hold only/],
    [['mail', { at: 1n }], /payload is not storable as JSON: payload\.at is a bigint/],
    [['mail', { text: 'a\u0000b' }], /payload is not storable as JSON: holds the NUL character/],
    [['mail', { ['k\u0000']: 1 }], /NUL character/],
    [['mail', { s: 'a\ud800' }], /payload is not storable as JSON: holds a lone surrogate/],
    [['mail', { ['\udc00k']: 1 }], /lone surrogate/],
    [['mail', {}, { idempotencyKey: 'k\udc00' }], /idempotencyKey holds a lone surrogate/],
    [['mail', cycle], /payload is not storable as JSON/],
    [['mail', undefined], /payload is not storable as JSON: payload is undefined/],
    // What JSON would drop or change without a word is refused, as leasehold/indexeddb refuses it.
    [['mail', { when: new Map() }], /payload\.when is a Map, which JSON cannot hold/],
    [['mail', { send: () => 1 }], /payload\.send is a function/],
    [['mail', { n: NaN }], /payload\.n is NaN/],
    [['mail', { when: new Date('not a date') }], /payload\.when is an invalid Date, which JSON writes as null/],
    [['mail', deep], /^TypeError: enqueue: payload is not storable as JSON: payload nests too deeply to be checked or written as JSON/],
    [['mail', [1, undefined]], /payload\[1\] is undefined/],
    // A hole in an array reads as undefined and JSON writes null in its place.
    [['mail', { list: [1, , 3] }], /payload\.list\[1\] is undefined/], // eslint-disable-line no-sparse-arrays
    [['mail', () => 1], /payload is not storable as JSON/],
    [['mail', {}, { delay: 5 }], /unknown option "delay"/],
    [['mail', {}, { runAt: 1, delayMs: 1 }], /runAt or delayMs, not both/],
    [['mail', {}, { maxAttempts: 0 }], /maxAttempts must be 1\.\./],
    [['mail', {}, { priority: 1.5 }], /priority must be an integer/],
    [['mail', {}, { idempotencyKey: '' }], /idempotencyKey must not be empty/],
    [['mail', {}, { timeoutMs: 0 }], /timeoutMs must be 1\.\./],
    // Due past 2^53 − 1 ms since the epoch: a row job() could not read back.
    [['mail', {}, { delayMs: Number.MAX_SAFE_INTEGER }], /^RangeError: enqueue: delayMs must be 0\.\.\d+ \(due by 2\^53 − 1 ms since the Unix epoch, as runAt\), got 9007199254740991$/],
  ];
  for (const [args, message] of refusals) await assert.rejects(queue.enqueue(...args), message, JSON.stringify(args.slice(0, 1)));
  assert.deepEqual(await queue.counts(), [], 'nothing was queued');
  assert.throws(() => queue.work('mail', 'not a function'), /handler must be a function/);
  assert.throws(() => queue.work('mail', () => 1, { concurency: 2 }), /unknown option "concurency"/);
  // heartbeatMs is named as work() takes it: an integer from 2 (the runner's skew allowance,
  // half of it, must be 1 ms or more), never as heartbeatSkewMs, an option work() lacks.
  for (const heartbeatMs of [0, 1]) {
    assert.throws(() => queue.work('mail', () => 1, { heartbeatMs }), (error) => error instanceof RangeError && error.message === `work: heartbeatMs must be 2..2147483647, got ${heartbeatMs}`);
  }
  assert.throws(() => queue.work('mail', () => 1, { heartbeatMs: 250.5 }), (error) => error instanceof TypeError && /^work: heartbeatMs must be an integer, got 250\.5$/.test(error.message));
  assert.throws(() => queue.work('mail', () => 1, [{ concurrency: 2 }]), /^TypeError: work: options must be an object, got an array$/);
  // A stale window too short for the default cadence says the cadence is the default, named as work() takes it.
  assert.throws(() => queue.work('mail', () => 1, { staleAfterMs: 100 }), /^RangeError: work: heartbeatMs \(250, its default: the larger of 250 and a third of staleAfterMs\) must be under half of staleAfterMs \(100\) so two renewals fit in the stale window: give a heartbeatMs under 50, or a staleAfterMs above 500$/);
  await assert.rejects(queue.cancel([]), /no job ids/);
  const { id } = await queue.enqueue('mail', {});
  await assert.rejects(queue.cancel(id, { reason: 'a\u0000b' }), /cancel: reason holds the NUL character/);
  await assert.rejects(queue.cancel(id, { reason: 'x\ud800y' }), /cancel: reason holds a lone surrogate/);
  await assert.rejects(queue.cancel(id, { reason: 7 }), /cancel: reason must be a string, got number/);
  await assert.rejects(queue.cancel(id, { reason: 'x'.repeat(4097) }), /reason must be at most 4096 bytes/);
  assert.equal((await queue.job(id)).state, 'queued', 'nothing was cancelled');
});

test('a schema missing, older or newer is migrated or refused saying what to do', { skip }, async (t) => {
  const { pool, schema, admin, open } = await freshPool(t, 'schema');
  await assert.rejects(connect(pool, { migrate: false }), (error) => error instanceof LeaseholdSchemaError && /no leasehold schema/.test(error.message) && /migrate: true/.test(error.message));
  await open();
  await open({ migrate: false });
  // Older: the last migration not recorded (as a database an older build made).
  const { rows } = await admin.query(`SELECT max(id) AS id FROM ${schema}.leasehold_migrations`);
  const last = Number(rows[0].id);
  const saved = await admin.query(`DELETE FROM ${schema}.leasehold_migrations WHERE id = $1 RETURNING *`, [last]);
  await assert.rejects(connect(pool, { migrate: false }), /schema is older than this package's.*not applied/);
  await admin.query(`INSERT INTO ${schema}.leasehold_migrations SELECT * FROM json_populate_record(null::${schema}.leasehold_migrations, $1)`, [saved.rows[0]]);
  // Newer: a migration this package does not know.
  await admin.query(`INSERT INTO ${schema}.leasehold_migrations VALUES (1999, 'leasehold-queue', '0999_future', 0)`);
  await assert.rejects(connect(pool), /newer than this package knows: migration 1999 \(0999_future\)/);
});

test('a cancel stops the running handler at once and nothing of its attempt is written; retry queues it again', { skip }, async (t) => {
  const { open } = await freshPool(t, 'cancel');
  const queue = await open();
  const { id } = await queue.enqueue('slow', { n: 1 });
  let started;
  const aborted = new Promise((resolve) => {
    started = queue.work('slow', (payload, { signal }) => {
      signal.addEventListener('abort', () => resolve(signal.reason));
      return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
  });
  await until('the job to run', async () => (await queue.counts())[0]?.running === 1);
  const t0 = Date.now();
  assert.deepEqual(await queue.cancel(id, { reason: 'wrong input' }), [id]);
  const reason = await aborted;
  assert.ok(Date.now() - t0 < 5_000, 'aborted by the NOTIFY, before any renewal');
  assert.match(String(reason?.message), /cancelled/);
  await started.dispose();
  const job = await queue.job(id);
  assert.equal(job.state, 'cancelled');
  assert.equal(job.attempts, 1);
  await assert.rejects(queue.cancel(id), /job \d+ is cancelled/);
  assert.deepEqual(await queue.retry([id]), [id]);
  // Cancelled while it ran: due once that attempt's lease (30 s) would have gone stale.
  const retried = await queue.job(id);
  assert.equal(retried.state, 'scheduled');
  assert.ok(retried.runAt > t0 + 20_000, `due at ${retried.runAt}, ${retried.runAt - t0} ms after the cancel`);
  // Cancelled again while it waits, and retried again: still not due before then.
  assert.deepEqual(await queue.cancel(id), [id]);
  assert.deepEqual(await queue.retry(id), [id]);
  const again = await queue.job(id);
  assert.ok(again.runAt > t0 + 20_000, `due at ${again.runAt} after a second cancel and retry, ${again.runAt - t0} ms after the first cancel`);
  assert.equal(await queue.pause('slow'), true);
  assert.equal(await queue.pause('slow'), false);
  assert.equal((await queue.counts())[0].paused, true);
  assert.equal(await queue.resume('slow'), true);
  assert.equal(await queue.resume('slow'), false, 'resumed already: left as it was');
  // At once, one of two pauses (or resumes) did it.
  assert.deepEqual((await Promise.all([queue.pause('slow'), queue.pause('slow')])).sort(), [false, true]);
  assert.deepEqual((await Promise.all([queue.resume('slow'), queue.resume('slow')])).sort(), [false, true]);
  assert.equal((await queue.counts())[0].paused, false);
});

test('the LISTEN connection is taken again after a loss however many tries it takes: a cancel after that still stops the handler at once', { skip }, async (t) => {
  const { pool } = await freshPool(t, 'relisten');
  // The pool as the queue sees it, whose connect() fails while `refusing` is above 0 (as a
  // pool's does while the database is away); it keeps the clients it hands out.
  let refusing = 0;
  const handed = [];
  const flaky = {
    options: pool.options,
    get totalCount() { return pool.totalCount; },
    get idleCount() { return pool.idleCount; },
    query: (...args) => pool.query(...args),
    end: () => Promise.resolve(),
    async connect() {
      if (refusing > 0) {
        refusing -= 1;
        throw new Error('connect ECONNREFUSED (refused by the test)');
      }
      const client = await pool.connect();
      handed.push(client);
      return client;
    },
  };
  const queue = await connect(flaky);
  const { id } = await queue.enqueue('relisten', {});
  let abortedAt;
  let end;
  // Renewals every 20 s: only the cancel's NOTIFY can abort the handler sooner.
  const working = queue.work('relisten', (payload, { signal }) => new Promise((resolve, reject) => {
    end = resolve;
    signal.addEventListener('abort', () => {
      abortedAt = Date.now();
      reject(signal.reason);
    });
  }), { staleAfterMs: 60_000 });
  try {
    await until('the job to run', async () => (await queue.counts())[0]?.running === 1);
    // The LISTEN connection dies (its server process is ended), and the next two tries to
    // take another fail, a second apart.
    const listening = await until('the LISTEN connection', () => handed.find((c) => c.listenerCount('notification') > 0));
    refusing = 2;
    await pool.query('SELECT pg_terminate_backend($1)', [listening.processID]);
    await until('the LISTEN connection to be taken again', () => refusing === 0 && handed.some((c) => c !== listening && c.listenerCount('notification') > 0), 8_000);
    const t0 = Date.now();
    assert.deepEqual(await queue.cancel(id), [id]);
    await until('the handler to be aborted', () => abortedAt !== undefined, 5_000);
    assert.ok(abortedAt - t0 < 5_000, "the cancel's NOTIFY aborted the handler, long before a renewal would have");
  } finally {
    end?.();
    await working.dispose();
    await queue.close();
  }
});

test('a job whose fence moved under it has its handler aborted as a lost claim, and nothing of its attempt is written', { skip }, async (t) => {
  const { admin, schema, open } = await freshPool(t, 'lost');
  const queue = await open();
  const { id } = await queue.enqueue('lost', {});
  const running = deferred();
  const aborted = deferred();
  const working = queue.work(
    'lost',
    (payload, ctx) =>
      new Promise((_, reject) => {
        running.resolve();
        ctx.signal.addEventListener('abort', () => {
          aborted.resolve(ctx.signal.reason);
          reject(ctx.signal.reason);
        });
      }),
    { staleAfterMs: 3_000, heartbeatMs: 50 },
  );
  await running.promise;
  // Another claimant's token, as a takeover leaves it: the next renewal is refused.
  await admin.query(`UPDATE ${schema}.leasehold_jobs SET token = token + 1 WHERE id = $1`, [id]);
  const lost = await aborted.promise;
  assert.equal(lost?.code, 'CLAIM_LOST', String(lost));
  await working.dispose();
  const job = await queue.job(id);
  assert.deepEqual([job.state, job.attempts, job.attemptsLog.length], ['running', 1, 1], 'no settle of the lost attempt');
});

test('a handler that reads its signal only after its job was cancelled finds it aborted with the cancel', { skip }, async (t) => {
  const { open } = await freshPool(t, 'latesignal');
  const queue = await open();
  const { id } = await queue.enqueue('late', {});
  const gate = deferred();
  const seen = deferred();
  const working = queue.work('late', async (payload, ctx) => {
    await gate.promise; // the cancel lands while the handler has not looked at its signal
    seen.resolve({ aborted: ctx.signal.aborted, reason: ctx.signal.reason });
    throw ctx.signal.reason;
  });
  await until('the job to run', async () => (await queue.counts())[0]?.running === 1);
  await queue.cancel(id);
  await sleep(300); // the NOTIFY reaches the worker
  gate.resolve();
  const { aborted, reason } = await seen.promise;
  assert.equal(aborted, true);
  assert.match(String(reason?.message), /job \d+ was cancelled/);
  await working.dispose();
  assert.equal((await queue.job(id)).state, 'cancelled');
});

test('counts() and job(id) tell queued jobs apart as the overview does: due, scheduled for later, retrying after a failure', { skip }, async (t) => {
  const { open } = await freshPool(t, 'counts');
  await checkShownStates(await open());
});

test('work() reports each job as it ended: performed, failed with its error, a lost claim when cancelled or its write refused', { skip }, async (t) => {
  const { open } = await freshPool(t, 'reports');
  await checkReports(await open());
});
