// `leasehold/pglite`: the queue of `leasehold/postgres` with no server. A folder's jobs outlive
// the process that queued them; a PGlite instance given is left open; bad targets are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { connect, LeaseholdSchemaError } from 'leasehold/pglite';
import { checkReports, checkShownStates } from './queue-reports.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A queue on an in-memory PGlite instance, both closed after the test. */
async function inMemory(t) {
  const db = new PGlite();
  const queue = await connect(db);
  t.after(async () => {
    await queue.close();
    await db.close();
  });
  return { db, queue };
}

/**
 * Two queues on one in-memory PGlite instance (two workers of one database), and `step(ms)`,
 * which moves this process's wall clock (Date.now, which PGlite's clock reads too) that far
 * ahead; all closed and the clock put back after the test.
 */
async function twoQueues(t) {
  const db = new PGlite();
  const owner = await connect(db);
  const taker = await connect(db);
  const realNow = Date.now;
  t.after(async () => {
    Date.now = realNow;
    await owner.close();
    await taker.close();
    await db.close();
  });
  return { owner, taker, step: (ms) => (Date.now = () => realNow() + ms) };
}

test('jobs queued in a folder are worked once it is opened again, by a PGlite instance given (left open)', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'leasehold-pglite-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await connect({ dataDir });
  const ids = [];
  for (let i = 0; i < 20; i += 1) ids.push((await first.enqueue('files', { i }, { priority: i % 2 })).id);
  await assert.rejects(first.enqueue('files', 'a\u0000b'), /NUL character/);
  await first.close(); // closes the folder it opened

  // Each PGlite start costs seconds: the instance given is the same folder, opened again.
  const db = await PGlite.create(dataDir);
  t.after(() => db.close());
  const again = await connect(db);
  const done = [];
  const working = again.work('files', (payload) => {
    done.push(payload.i);
    return { twice: payload.i * 2 };
  }, { concurrency: 4, pageSize: 5 });
  for (let waited = 0; (await again.counts())[0].succeeded < 20; waited += 20) {
    assert.ok(waited < 30_000, 'the 20 jobs were worked within 30 s');
    await sleep(20);
  }
  await working.dispose();
  assert.deepEqual([...done].sort((a, b) => a - b), [...Array(20).keys()], 'each job once, none of the refused one');
  assert.deepEqual((await again.job(ids[3])).result, { twice: 6 });
  await again.close();
  assert.equal((await db.query('SELECT count(*)::int AS n FROM leasehold_jobs')).rows[0].n, 20, 'the instance is left open');
});

test('a folder open in one queue is refused to a second (PGlite would let both run, the last to close overwriting the other\'s jobs), and opens once the first closed', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'leasehold-pglite-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await connect({ dataDir });
  const { id } = await first.enqueue('files', { n: 1 });
  const beside = await connect({ dataDir }).catch((error) => error);
  if (!(beside instanceof Error)) await beside.close();
  await first.close();
  assert.ok(beside instanceof Error && beside.code === 'QUEUE_IN_USE', `refused: ${beside}`);
  assert.match(beside.message, /the folder .* is open in another queue/);
  const second = await connect({ dataDir });
  t.after(() => second.close());
  assert.deepEqual((await second.job(id)).payload, { n: 1 }, 'the first queue\'s job is kept');
  const memory = await connect({ dataDir: 'memory://' });
  await memory.close();
  assert.equal(fs.existsSync('memory:'), false, 'PGlite\'s memory:// is not taken for a folder');
});

test('dispose() stops claiming: the running job finishes, the jobs claimed ahead go back unstarted, the rest stay queued', async (t) => {
  const { queue } = await inMemory(t);
  for (let i = 0; i < 8; i += 1) await queue.enqueue('t', { i });
  let started;
  const first = new Promise((resolve) => (started = resolve));
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const ran = [];
  const working = queue.work('t', async (payload) => {
    ran.push(payload.i);
    started();
    await gate;
    return payload.i;
  }, { concurrency: 1, pageSize: 3, pollMs: 10 });
  await first;
  const disposed = working.dispose();
  release();
  await disposed;
  assert.deepEqual(ran, [0], 'only the job running when dispose() was called ran');
  const [counts] = await queue.counts();
  assert.equal(counts.succeeded, 1);
  assert.equal(counts.queued, 7, 'the others are queued again, unstarted (no attempt counted)');
});

test("a page's job that waited longer than half the skew allowance is renewed before it is handed over", async (t) => {
  // At a 150 ms cadence the skew allowance is 75 ms: a job handed over 70 ms after its page's
  // claim stamped its lease would have the worker stop 70 ms late, leaving 5 ms for the clocks.
  // It waits at most 37 ms unrenewed (a fixed 100 ms had let it through).
  const { db, queue } = await inMemory(t);
  const a = (await queue.enqueue('p', { job: 'a' })).id;
  const b = (await queue.enqueue('p', { job: 'b' })).id;
  const seen = {};
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  const working = queue.work('p', async (payload) => {
    const id = payload.job === 'a' ? a : b;
    const { rows } = await db.query('SELECT claimed_at, heartbeat_at FROM leasehold_jobs WHERE id = $1', [id]);
    seen[payload.job] = { claimed: Number(rows[0].claimed_at), stamped: Number(rows[0].heartbeat_at) };
    if (payload.job === 'a') await sleep(70);
    else done();
  }, { concurrency: 1, pageSize: 2, staleAfterMs: 600, heartbeatMs: 150, pollMs: 10 });
  await finished;
  await working.dispose();
  assert.equal(seen.a.stamped, seen.a.claimed, 'the first job is handed over as its page was claimed');
  assert.ok(seen.b.stamped - seen.b.claimed >= 50, `the second was renewed first: stamped ${seen.b.stamped - seen.b.claimed} ms after its claim`);
});

test('a target that is neither a folder nor a PGlite instance is refused', async () => {
  await assert.rejects(connect('/tmp/folder'), /give \{ dataDir: "folder" \} or a PGlite instance/);
  await assert.rejects(connect({ dataDir: '' }), /give \{ dataDir/);
  await assert.rejects(connect({ dataDir: '/tmp/x', mode: 'rw' }), /unknown field "mode"/);
  await assert.rejects(connect({ dataDir: '/tmp/x' }, { migrat: false }), /unknown option "migrat"/);
  // Each says what is wrong with it: a near miss of dataDir, migrate given in the target,
  // a dataDir that is no path; they had all said only to give { dataDir } or a PGlite instance.
  await assert.rejects(connect({ datadir: '/tmp/x' }), /^TypeError: connect: unknown field "datadir" \(did you mean dataDir\?\)/);
  await assert.rejects(connect({ dataDir: '/tmp/x', migrate: false }), /^TypeError: connect: migrate is an option of the second argument: connect\(\{ dataDir \}, \{ migrate: false \}\)$/);
  await assert.rejects(connect({ dataDir: 5 }), /^TypeError: connect: dataDir must be a folder's path, a non-empty string \(give \{ dataDir: "folder" \}\), got a number$/);
  await assert.rejects(connect({ dataDir: '' }), /got an empty string$/);
  // migrate is true or false: 'no' had migrated without a word.
  await assert.rejects(connect({ dataDir: '/tmp/x' }, { migrate: 'no' }), /^TypeError: connect: migrate must be true or false, got string$/);
  await assert.rejects(connect({ dataDir: '/tmp/x' }, null), /^TypeError: connect: options must be an object$/);
});

test("queue names and idempotency keys are held to the core's limits, and the schema is recorded under the core's migration set", async (t) => {
  // The core's rules as the package's wasm module hands them to the queue glue.
  const rules = createRequire(import.meta.url)('../dist/leasehold_node.cjs').queueDefaults();
  const { db, queue } = await inMemory(t);
  const longest = 'q'.repeat(rules.maxQueueNameBytes);
  assert.equal((await queue.enqueue(longest, {})).created, true);
  await assert.rejects(queue.enqueue(`${longest}q`, {}), new RegExp(`is longer than ${rules.maxQueueNameBytes} bytes`));
  for (const mark of rules.queueNamePunctuation) assert.equal((await queue.enqueue(`a${mark}b`, {})).created, true, mark);
  await assert.rejects(queue.enqueue('a/b', {}), /may hold only A-Z a-z 0-9 _ - \. :/);
  const key = 'k'.repeat(rules.maxIdempotencyKeyBytes);
  assert.equal((await queue.enqueue('keys', {}, { idempotencyKey: key })).created, true);
  await assert.rejects(queue.enqueue('keys', {}, { idempotencyKey: `${key}k` }), new RegExp(`longer than ${rules.maxIdempotencyKeyBytes} bytes`));
  const { rows } = await db.query('SELECT min(id) AS first, namespace FROM leasehold_migrations GROUP BY namespace');
  assert.deepEqual(rows.map((r) => [Number(r.first), r.namespace]), [[rules.migrations.idBlock + 1, rules.migrations.namespace]]);
});

test('work() words the runner\'s refusals as its own options, and takes pollMs 0 as the 1 ms floor', async (t) => {
  const { queue } = await inMemory(t);
  assert.throws(() => queue.work('q', () => undefined, { pollMs: -1 }), (error) => /^work: pollMs\b/.test(error.message) && !/intervalMs|createJobRunner/.test(error.message));
  assert.throws(() => queue.work('q', () => undefined, { staleAfterMs: 1_000, heartbeatMs: 900 }), /: work: heartbeatMs \(900\)/);
  const { id } = await queue.enqueue('q', {});
  let done;
  const ran = new Promise((resolve) => (done = resolve));
  const working = queue.work('q', () => done(), { pollMs: 0 });
  await ran;
  await working.dispose();
  assert.equal((await queue.job(id)).state, 'succeeded');
});

test('work() reports each job as it ended: performed, failed with its error, a lost claim when cancelled or its write refused', async (t) => {
  const { queue } = await inMemory(t);
  await checkReports(queue);
});

// A process frozen past its lease (SIGSTOP, a suspended machine), here by blocking the event
// loop: on resume the timers due meanwhile fire in the order they were due, so the handler's
// step (a timer set before the freeze) runs before the runner's deadline timer has told it
// anything. Its signal reads the clock when checked, and says the lease lapsed.
test("a handler frozen past its lease sees its signal aborted (lapsed) at its first check after, before the runner's timer fires", async (t) => {
  const { queue } = await inMemory(t);
  const { id } = await queue.enqueue('frozen', {}, { maxAttempts: 1 });
  let renewed;
  const heartbeat = new Promise((resolve) => (renewed = resolve));
  let answer;
  const checked = new Promise((resolve) => (answer = resolve));
  const working = queue.work(
    'frozen',
    async (payload, { signal }) => {
      // Just after a renewal, the runner's next timer is a renewal one interval (500 ms) away.
      await heartbeat;
      const step = sleep(1);
      const thawAt = Date.now() + 2_000; // past the lease (1,500 ms) and the lapse in it
      while (Date.now() < thawAt);
      await step;
      answer([signal.aborted, signal.reason?.code, signal.reason?.lapsed]);
      signal.throwIfAborted();
    },
    { staleAfterMs: 1_500, onEvent: (event) => event.type === 'heartbeat' && renewed() },
  );
  assert.deepEqual(await checked, [true, 'CLAIM_LOST', true]);
  await working.dispose();
  const job = await queue.job(id);
  assert.equal(job.state, 'running', 'nothing was written: the job is left to whoever takes it over');
});

test('a handler whose synchronous start (a busy loop, a huge JSON.parse) outlasts its lease sees its signal aborted (lapsed) at its first check after', async (t) => {
  const { queue } = await inMemory(t);
  const { id } = await queue.enqueue('blocked', {}, { maxAttempts: 1 });
  let answer;
  const checked = new Promise((resolve) => (answer = resolve));
  const working = queue.work(
    'blocked',
    (payload, { signal }) => {
      // No await before: the runner that started this handler is still on its stack.
      const until = Date.now() + 2_000; // past the lease (1,500 ms) and the lapse in it
      while (Date.now() < until);
      answer([signal.aborted, signal.reason?.code, signal.reason?.lapsed]);
      signal.throwIfAborted();
    },
    { staleAfterMs: 1_500 },
  );
  assert.deepEqual(await checked, [true, 'CLAIM_LOST', true]);
  await working.dispose();
  const job = await queue.job(id);
  assert.equal(job.state, 'running', 'nothing was written: the job is left to whoever takes it over');
});

test('counts() and job(id) tell queued jobs apart as the overview does: due, scheduled for later, retrying after a failure', async (t) => {
  const { queue } = await inMemory(t);
  await checkShownStates(queue);
});

test('bad input is refused naming the cause, and nothing is queued: a schema missing, payloads JSON would change, a NUL character', async (t) => {
  const db = new PGlite();
  t.after(() => db.close());
  await assert.rejects(connect(db, { migrate: false }), (error) => error instanceof LeaseholdSchemaError && /no leasehold schema/.test(error.message) && /migrate: true/.test(error.message));
  const queue = await connect(db);
  t.after(() => queue.close());
  const deep = {};
  for (let level = 0, at = deep; level < 100_000; level++) at = at.next = {};
  const refusals = [
    [{ when: new Map() }, /payload\.when is a Map, which JSON cannot hold/],
    [{ when: new Date('not a date') }, /payload\.when is an invalid Date, which JSON writes as null/],
    [deep, /payload nests too deeply to be checked or written as JSON/],
    [{ send: () => 1 }, /payload\.send is a function/],
    [{ n: Infinity }, /payload\.n is Infinity/],
    [{ text: 'a\u0000b' }, /NUL character/],
  ];
  for (const [payload, message] of refusals) await assert.rejects(queue.enqueue('q', payload), message);
  await assert.rejects(queue.enqueue('q', {}, { idempotencyKey: 'a\u0000b' }), /idempotencyKey holds the NUL character/);
  assert.deepEqual(await queue.counts(), [], 'nothing was queued');
  const { id } = await queue.enqueue('q', {});
  await assert.rejects(queue.cancel([id], { reasn: 'typo' }), /cancel: unknown option "reasn": did you mean reason\? \(known: reason\)/);
  assert.equal((await queue.job(id)).state, 'queued', 'a cancel with a misspelt option changes nothing');
  // An option of createJobRunner's, or a misspelling, is refused naming what the call takes.
  const meant = [
    [{ heartbeatEveryMs: 1000 }, 'heartbeatMs'], [{ intervalMs: 1000 }, 'pollMs'], [{ batchLimit: 10 }, 'pageSize'], [{ concurency: 2 }, 'concurrency'],
  ];
  for (const [options, name] of meant) {
    const given = Object.keys(options)[0];
    assert.throws(() => queue.work('q', () => 1, options), { name: 'TypeError', message: new RegExp(`^work: unknown option "${given}": did you mean ${name}\\? \\(known: concurrency, `) });
  }
  await assert.rejects(queue.enqueue('q', {}, { delay: 5 }), /^TypeError: enqueue: unknown option "delay": did you mean delayMs\? \(known: /);
  await assert.rejects(queue.enqueue('q', {}, { maxAttempt: 5 }), /enqueue: unknown option "maxAttempt": did you mean maxAttempts\?/);
  await assert.rejects(queue.enqueue('q', {}, { color: 'red' }), /enqueue: unknown option "color" \(known: runAt, /);
  // The refusals carry leasehold/indexeddb's codes, so code written for any store tells them
  // apart; they had none here.
  await assert.rejects(queue.cancel([id, 999]), { name: 'RangeError', code: 'UNKNOWN_JOB', message: /job 999 does not exist/ });
  await assert.rejects(queue.retry(id), { name: 'RangeError', code: 'JOB_STATE', message: /job \d+ is queued/ });
  assert.equal((await queue.job(id)).state, 'queued');
});

test("a handler's signal aborts with the reasons leasehold/indexeddb gives: a cancel's code JOB_CANCELLED, a timeout's name TimeoutError", async (t) => {
  const { queue } = await inMemory(t);
  const reasons = new Map();
  const working = queue.work('r', (payload, { signal }) => new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => {
      reasons.set(payload, signal.reason);
      reject(signal.reason);
    });
  }), { concurrency: 2, pollMs: 10, logger: { error() {} } });
  const { id } = await queue.enqueue('r', 'cancelled');
  await queue.enqueue('r', 'timed out', { timeoutMs: 50, maxAttempts: 1 });
  while ((await queue.counts())[0]?.running !== 2) await sleep(10);
  const t0 = Date.now();
  await queue.cancel(id);
  while (reasons.size < 2) await sleep(10);
  await working.dispose();
  const cancelled = reasons.get('cancelled');
  assert.deepEqual([cancelled.name, cancelled.code, cancelled.job], ['JobCancelledError', 'JOB_CANCELLED', id]);
  assert.equal(reasons.get('timed out').name, 'TimeoutError');
  // Retried, cancelled again while it waits and retried again: due, both times, once the
  // cancelled attempt's lease (30 s) would have gone stale, as its owner might not have
  // heard the cancel.
  await queue.retry(id);
  const retried = (await queue.job(id)).runAt;
  await queue.cancel(id);
  await queue.retry(id);
  const again = (await queue.job(id)).runAt;
  assert.ok(retried > t0 + 20_000 && again > t0 + 20_000, `due ${retried - t0} ms, then ${again - t0} ms after the cancel`);
});

test('a closed queue refuses every call but close with code QUEUE_CLOSED', async () => {
  const queue = await connect(new PGlite());
  await queue.close();
  await assert.rejects(queue.enqueue('q', {}), { code: 'QUEUE_CLOSED', message: 'enqueue: the queue is closed' });
  await assert.rejects(queue.counts(), { code: 'QUEUE_CLOSED' });
});

test('a forward step of the wall clock does not let a second queue take a job over while its owner renews it', async (t) => {
  // PGlite stamps and judges leases with this process's wall clock (Date.now), which steps (an
  // NTP correction, a laptop waking from sleep) while the runners time their work on timers.
  // A 60 s step makes every running lease look stale at once: a claim of the other queue on
  // the same database took the job over beside its working owner until the owner's next
  // renewal was refused. A lease is taken over only once the claimant has seen it unrenewed
  // for its stale window on its monotonic clock (performance.now), which the step does not move.
  const { owner, taker, step } = await twoQueues(t);
  const { id } = await owner.enqueue('step', {});
  const runs = [];
  let release;
  const released = new Promise((resolve) => (release = resolve));
  let started;
  const running = new Promise((resolve) => (started = resolve));
  const work = (queue, who) => queue.work('step', async () => {
    const run = { who, start: performance.now(), end: undefined };
    runs.push(run);
    started();
    await released;
    run.end = performance.now();
  }, { staleAfterMs: 3_000, pollMs: 100 });
  const owning = work(owner, 'owner');
  await running;
  const taking = work(taker, 'taker');
  await sleep(500); // the taker has looked at the running lease
  step(60_000);
  await sleep(4_000); // more than the stale window after the step: the owner renews every second
  release();
  await owning.dispose();
  await taking.dispose();
  assert.deepEqual(runs.map((r) => r.who), ['owner'], `the job ran ${runs.length} times: ${JSON.stringify(runs)}`);
  assert.equal((await owner.job(id)).state, 'succeeded');
});

test('a job cancelled while it ran and retried is not started beside that attempt after a forward step of the wall clock, and runs once the cancelled lease was watched for its window', async (t) => {
  // A retry makes the job due at the cancelled attempt's lease end (expires_at, stamped with
  // Date.now), as its owner may not have heard the cancel and stops its work only by then,
  // timed on its monotonic timers. A step of the wall clock makes that due time pass early: the
  // other queue on the same database started the job at its next poll, beside the attempt.
  // A claimant takes such a job only once it has seen the cancelled lease unrenewed for its
  // window on its monotonic clock (performance.now), as it takes over a running lease.
  const STALE_MS = 3_000; // the owner renews every second
  const { owner, taker, step } = await twoQueues(t);
  const { id } = await owner.enqueue('cancelled', {});
  const runs = [];
  let started;
  const running = new Promise((resolve) => (started = resolve));
  // The first attempt keeps working 2 s whatever its signal says: an owner that has not heard
  // the cancel, and stops inside its lease (3 s from its claim, its last renewal here).
  const work = (queue, who) => queue.work('cancelled', async () => {
    const run = { who, start: performance.now(), end: undefined };
    runs.push(run);
    started();
    await sleep(runs.length === 1 ? 2_000 : 10);
    run.end = performance.now();
  }, { staleAfterMs: STALE_MS, pollMs: 100, logger: { error() {} } });
  const owning = work(owner, 'owner');
  await running;
  const taking = work(taker, 'taker');
  await sleep(300); // the taker polls meanwhile
  await owner.cancel(id);
  await owner.retry(id); // due at the cancelled lease's end, about 2.7 s from now
  const retriedAt = performance.now();
  step(60_000); // the job is due at once
  for (const until = retriedAt + 15_000; (await owner.job(id)).state !== 'succeeded';) {
    assert.ok(performance.now() < until, `the job did not run again within 15 s: ${JSON.stringify(runs)}`);
    await sleep(50);
  }
  await owning.dispose();
  await taking.dispose();
  assert.equal(runs.length, 2, JSON.stringify(runs));
  const [first, second] = runs;
  assert.ok(second.start >= first.end, `the second execution (${second.who}) started ${Math.round(first.end - second.start)} ms before the cancelled attempt ended`);
  // It starts once a claim has watched the cancelled lease for more than its window (looks come
  // once a second), not long after.
  const after = second.start - retriedAt;
  assert.ok(after > STALE_MS && after < STALE_MS + 2_500, `started ${Math.round(after)} ms after the retry`);
});

test('a job cancelled and retried while its handler ignores its signal is not started beside that handler in the same worker', async (t) => {
  const { queue } = await inMemory(t);
  let live = 0;
  let most = 0;
  const runs = [];
  const working = queue.work('q', async () => {
    live += 1;
    most = Math.max(most, live);
    runs.push(Date.now());
    await sleep(runs.length === 1 ? 2_500 : 50); // the first ignores its signal
    live -= 1;
  }, { concurrency: 2, staleAfterMs: 600, heartbeatMs: 150, pollMs: 10, logger: { error() {} } });
  const { id } = await queue.enqueue('q', {});
  while (runs.length === 0) await sleep(10);
  await queue.cancel(id);
  await queue.retry(id); // due at the cancelled lease's end, ~0.6 s on: a free slot claims it then
  while ((await queue.job(id)).state !== 'succeeded') await sleep(20);
  await working.dispose();
  assert.equal(runs.length, 2);
  assert.equal(most, 1, 'the handlers of the two attempts ran at the same time in one worker');
  assert.ok(runs[1] - runs[0] >= 2_500, `the second attempt started ${runs[1] - runs[0]} ms after the first, which ran 2.5 s`);
});
