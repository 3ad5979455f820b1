// leasehold/indexeddb in headless Chromium, with several tabs of one origin sharing one queue:
// tabs closed, reloaded and frozen mid-job, and the fence that keeps a job from running in two
// tabs at once. Every execution is recorded durably (tab.mjs's ledger) with its start and end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, missing } from './chromium.mjs';

const skip = missing ? `${missing}: IndexedDB queue tests skipped` : false;
let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
});

// Leases in these tests: short enough to keep them quick, long enough that a tab on a loaded
// 2-core CI machine renews in time (renewals every 666 ms, lapse 1 s after the last one).
const STALE_MS = 2000;

/** Evaluates `fn(arg)` in `page` every 50 ms until it answers something truthy; answers that. */
async function until(page, fn, arg, timeout = 30_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const value = await page.evaluate(fn, arg);
    if (value) return value;
    if (Date.now() > end) throw new Error(`nothing after ${timeout} ms: ${fn}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until `page`'s worker is inside a handler whose start the ledger holds. */
const busy = (page) => page.waitForFunction(() => window.recorded > 0, undefined, { timeout: 30_000, polling: 5 });

test('several tabs drain one queue, one closed and one reloaded mid-job: every job done once, never in two tabs at once', { skip, timeout: 120_000 }, async () => {
  const JOBS = 160;
  const tabs = [];
  // Tabs b and c (closed and reloaded mid-job) take 20 times as long over each job, so that
  // the job they are in when the test sees one recorded is still running when it acts.
  for (const id of ['a', 'b', 'c', 'd']) {
    const slow = id === 'b' || id === 'c' ? 20 : 1;
    tabs.push(await browser.tab(`work=drain&tab=${id}&ms=60&concurrency=2&stale=${STALE_MS}&slow=${slow}`));
  }
  const producer = await browser.tab();
  await producer.evaluate(async (n) => {
    window.q = await lh.connect({ name: 'drain' });
    for (let i = 0; i < n; i++) await q.enqueue('jobs', { i, ms: 20 + (i % 5) * 20 });
  }, JOBS);

  // Tab b is closed while it runs a job, tab c reloaded while it runs one; the time each
  // call returned bounds when their executions ended.
  const killedAt = {};
  await busy(tabs[1]);
  await tabs[1].close();
  killedAt.b = Date.now();
  await busy(tabs[2]);
  await tabs[2].reload();
  killedAt.c = Date.now();
  await tabs[2].waitForFunction(() => window.ready === true);

  const counts = await until(producer, async (n) => {
    const [c] = await q.counts();
    return c.succeeded === n ? c : false;
  }, JOBS);
  assert.deepEqual({ ...counts, succeeded: undefined }, {
    queue: 'jobs', paused: false, queued: 0, scheduled: 0, running: 0, retrying: 0, succeeded: undefined, dead: 0, cancelled: 0,
  });
  const { jobs, runs } = await producer.evaluate(async (n) => {
    const jobs = [];
    for (let id = 1; id <= n; id++) jobs.push(await q.job(id));
    return { jobs, runs: (await ledger.all()).filter((r) => r.set === 'drain') };
  }, JOBS);

  // No double successes: each job succeeded once, by the owner of its last claim.
  for (const job of jobs) {
    const successes = job.attemptsLog.filter((a) => a.outcome === 'succeeded');
    assert.equal(successes.length, 1, `job ${job.id}: ${JSON.stringify(job.attemptsLog)}`);
    assert.equal(successes[0].token, job.attemptsLog.at(-1).token);
  }
  // Every job performed: an execution that ran to its end.
  const byJob = new Map();
  for (const run of runs) byJob.set(run.job, [...(byJob.get(run.job) ?? []), run]);
  for (const job of jobs) {
    assert.ok((byJob.get(job.id) ?? []).some((r) => r.outcome === 'returned'), `job ${job.id} never ran to its end`);
  }
  // None in two tabs at once: the executions of one job do not overlap. An execution cut off
  // by its tab's close or reload ended by the time that call returned.
  let cut = 0;
  let retaken = 0;
  for (const [job, list] of byJob) {
    list.sort((x, y) => x.start - y.start);
    for (let i = 1; i < list.length; i++) {
      const before = list[i - 1];
      const end = before.end ?? killedAt[before.tab];
      assert.ok(end !== undefined, `job ${job}: an execution in tab ${before.tab} never ended, and that tab was neither closed nor reloaded`);
      assert.ok(end <= list[i].start, `job ${job}: executions overlap: ${JSON.stringify(list)}`);
      assert.ok(list[i].token > before.token, `job ${job}: a later execution has no newer token: ${JSON.stringify(list)}`);
      retaken += 1;
    }
    cut += list.filter((r) => r.end === undefined).length;
  }
  assert.ok(cut >= 2, `the closed and the reloaded tab each left an execution unfinished (${cut})`);
  assert.ok(retaken >= 2, `their jobs were taken over by another claim (${retaken})`);
  const takenOver = jobs.filter((j) => j.attemptsLog.some((a) => a.outcome === 'lease-lost'));
  assert.ok(takenOver.length >= 2, `jobs taken over after their lease went stale: ${takenOver.length}`);
  const tabsThatWorked = new Set(runs.map((r) => r.tab));
  assert.deepEqual([...tabsThatWorked].sort(), ['a', 'b', 'c', 'd']);
  assert.deepEqual(browser.errors, []);
  for (const page of [tabs[0], tabs[2], tabs[3], producer]) await page.close();
});

test('a frozen tab whose job was taken over aborts it when thawed, and its late result is refused by the fence', { skip, timeout: 60_000 }, async () => {
  const frozen = await browser.tab(`work=frozen&tab=frozen&ms=30000&stale=${STALE_MS}&ignoreAbort=1`);
  const producer = await browser.tab();
  const { id } = await producer.evaluate(async () => {
    window.q = await lh.connect({ name: 'frozen' });
    return q.enqueue('jobs', {});
  });
  await busy(frozen);
  // Frozen: its JavaScript stops (no timer fires, no renewal is sent) until resumed. The
  // debugger's pause does that to one tab alone, whichever process it shares.
  const cdp = await browser.context.newCDPSession(frozen);
  await cdp.send('Debugger.enable');
  await cdp.send('Debugger.pause');
  // Another tab takes the job over once the frozen tab's lease is stale, and finishes it.
  const taker = await browser.tab(`work=frozen&tab=taker&ms=10&stale=${STALE_MS}`);
  const job = await until(producer, async (id) => {
    const job = await q.job(id);
    return job.state === 'succeeded' ? job : false;
  }, id);
  assert.equal(job.result, 'done by taker');
  await cdp.send('Debugger.resume');
  // Thawed, the frozen tab's runner finds its lease lapsed (it went unconfirmed past the write
  // tolerance, which ends before another tab may take over) and aborts the handler's signal.
  const aborted = await until(frozen, async () => {
    const runs = await ledger.all();
    const run = runs.find((r) => r.set === 'frozen' && r.tab === 'frozen' && r.outcome === 'aborted');
    return run ?? false;
  });
  assert.equal(aborted.code, 'CLAIM_LOST');
  assert.equal(aborted.lapsed, true);
  // Its handler answered anyway (ignoreAbort): the fenced settle was refused, nothing changed.
  await frozen.waitForFunction(() => window.running === 0);
  await frozen.evaluate(() => sleep(200));
  const after = await producer.evaluate((id) => q.job(id), id);
  assert.equal(after.result, 'done by taker');
  assert.deepEqual(after.attemptsLog.map((a) => a.outcome), ['lease-lost', 'succeeded']);
  assert.ok(after.attemptsLog[1].token > after.attemptsLog[0].token);
  const runs = await producer.evaluate(() => ledger.all());
  const mine = runs.filter((r) => r.set === 'frozen' && r.job === id);
  assert.deepEqual(mine.map((r) => `${r.tab}: ${r.outcome}`).sort(), ['frozen: aborted', 'taker: returned']);
  for (const page of [frozen, producer, taker]) await page.close();
});

test('a tab whose job was taken over hears it from its next renewal (the fence refuses) and aborts the work', { skip, timeout: 60_000 }, async () => {
  const owner = await browser.tab(`work=fence&tab=owner&ms=30000&stale=${STALE_MS}`);
  const other = await browser.tab();
  const { id } = await other.evaluate(async () => {
    window.q = await lh.connect({ name: 'fence' });
    return q.enqueue('jobs', {});
  });
  await busy(owner);
  // Another claimant takes the job over in the database (its token moves on), as a tab whose
  // clock runs ahead would: the owner is still renewing and has not lapsed.
  const token = await other.evaluate(async (id) => {
    const db = await new Promise((resolve) => {
      const r = indexedDB.open('leasehold:fence');
      r.onsuccess = () => resolve(r.result);
    });
    const t = db.transaction('jobs', 'readwrite');
    const jobs = t.objectStore('jobs');
    const job = await new Promise((resolve) => {
      jobs.get(id).onsuccess = (e) => resolve(e.target.result);
    });
    job.token += 1;
    job.owner = 'intruder';
    job.heartbeatAt = Date.now();
    job.expiresAt = Date.now() + 60_000;
    jobs.put(job);
    await new Promise((resolve) => (t.oncomplete = resolve));
    db.close();
    return job.token;
  }, id);
  const aborted = await until(owner, async () => (await ledger.all()).find((r) => r.set === 'fence' && r.outcome === 'aborted') ?? false);
  assert.equal(aborted.code, 'CLAIM_LOST');
  assert.equal(aborted.lapsed, false, 'a renewal answered that the claim is gone');
  const job = await other.evaluate((id) => q.job(id), id);
  assert.equal(job.state, 'running');
  assert.equal(job.token, token);
  assert.equal(job.lease.owner, 'intruder', 'the owner wrote nothing after losing the fence');
  for (const page of [owner, other]) await page.close();
});

test('refusals: no IndexedDB, a refused or blocked open, a newer or foreign database, and payloads that are not JSON data', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const refusal = async (fn) => {
      try {
        await fn();
        return 'no error';
      } catch (error) {
        return `${error.name} ${error.code ?? ''}: ${error.message}`;
      }
    };
    const real = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB');
    const stubbed = async (factory) => {
      Object.defineProperty(globalThis, 'indexedDB', { value: factory, configurable: true });
      try {
        return await refusal(() => lh.connect({ name: 'stub' }));
      } finally {
        Object.defineProperty(globalThis, 'indexedDB', real);
      }
    };
    const request = (fire) => ({
      open() {
        const r = {};
        setTimeout(() => fire(r));
        return r;
      },
    });
    const out = {
      none: await stubbed(undefined),
      privateMode: await stubbed(request((r) => {
        r.error = new DOMException('A mutation operation was attempted on a database that did not allow mutations.', 'InvalidStateError');
        r.onerror({ preventDefault() {} });
      })),
      blocked: await stubbed(request((r) => r.onblocked())),
      throws: await stubbed({ open() { throw new DOMException('access denied', 'SecurityError'); } }),
    };
    await new Promise((resolve) => {
      const r = indexedDB.open('leasehold:newer', 7);
      r.onsuccess = () => { r.result.close(); resolve(); };
    });
    out.newer = await refusal(() => lh.connect({ name: 'newer' }));
    await new Promise((resolve) => {
      const r = indexedDB.open('leasehold:foreign', 1);
      r.onupgradeneeded = () => r.result.createObjectStore('things');
      r.onsuccess = () => { r.result.close(); resolve(); };
    });
    out.foreign = await refusal(() => lh.connect({ name: 'foreign' }));
    out.noName = await refusal(() => lh.connect({}));
    out.misspelt = await refusal(() => lh.connect({ name: 'x', Durability: 'strict' }));
    const q = await lh.connect({ name: 'refusals' });
    const cyclic = { a: {} };
    cyclic.a.back = cyclic;
    const deep = {};
    for (let level = 0, at = deep; level < 100_000; level++) at = at.next = {};
    out.payloads = [
      await refusal(() => q.enqueue('q', { when: new Map() })),
      await refusal(() => q.enqueue('q', { items: [1, () => 2] })),
      await refusal(() => q.enqueue('q', { n: 10n })),
      await refusal(() => q.enqueue('q', { x: NaN })),
      await refusal(() => q.enqueue('q', { when: new Date('not a date') })),
      await refusal(() => q.enqueue('q', deep)),
      await refusal(() => q.enqueue('q', cyclic)),
      await refusal(() => q.enqueue('q', undefined)),
      await refusal(() => q.enqueue('q', { ok: true }, { prority: 1 })),
      await refusal(() => q.enqueue('q', { ok: true }, { runAt: 1, delayMs: 1 })),
      await refusal(() => q.enqueue('', {})),
      await refusal(() => q.enqueue('a/b', {})),
      await refusal(() => q.enqueue('q'.repeat(129), {})),
      await refusal(() => q.enqueue('q', {}, { idempotencyKey: '' })),
      await refusal(() => q.enqueue('q', {}, { idempotencyKey: 'k'.repeat(513) })),
    ];
    out.work = [
      await refusal(() => q.work('q', () => {}, { staleAfterMS: 1000 })),
      await refusal(() => q.work('q', () => {}, { staleAfterMs: 1000, heartbeatMs: 900 })),
      await refusal(() => q.work('q', 'not a function')),
      await refusal(() => q.work('q', () => {}, { heartbeatMs: 0 })),
      await refusal(() => q.work('q', () => {}, { heartbeatMs: 1 })),
      await refusal(() => q.work('q', () => {}, { onEvent: 5 })),
    ];
    out.counts = await q.counts();
    await q.close();
    out.closed = await refusal(() => q.enqueue('q', {}));
    return out;
  });
  assert.match(result.none, /^QueueUnavailableError QUEUE_UNAVAILABLE: .*"leasehold:stub": there is no IndexedDB in this context/);
  assert.match(result.privateMode, /QueueUnavailableError .*refused to open it \(InvalidStateError: .*\); private browsing windows/);
  assert.match(result.blocked, /QueueUnavailableError .*another page of this origin has it open at an older version .* blocked/);
  assert.match(result.throws, /QueueUnavailableError .*forbids storage for this page \(SecurityError: access denied\): an opaque origin/);
  assert.match(result.newer, /QueueUnavailableError .*"leasehold:newer": it was made by a newer version of leasehold/);
  assert.match(result.foreign, /QueueUnavailableError .*"leasehold:foreign": a database of that name exists but is not a leasehold queue/);
  assert.match(result.noName, /^TypeError : connect: name must be a non-empty string, got undefined/);
  assert.match(result.misspelt, /^TypeError : connect: unknown option Durability \(did you mean durability\?\)/);
  assert.deepEqual(result.payloads.map((m) => m.replace(/^(\w+) : /, '$1: ')), [
    'TypeError: payload.when is a Map, which JSON cannot hold (give plain objects, arrays, strings, numbers, booleans or null)',
    'TypeError: payload.items[1] is a function, which JSON cannot hold',
    'TypeError: payload.n is a bigint, which JSON cannot hold',
    'TypeError: payload.x is NaN, which JSON cannot hold',
    'TypeError: payload.when is an invalid Date, which JSON writes as null',
    'TypeError: payload nests too deeply to be checked or written as JSON (Maximum call stack size exceeded)',
    'TypeError: payload.a.back refers back to an object that contains it: JSON cannot hold a cycle',
    'TypeError: payload is undefined, which JSON cannot hold',
    'TypeError: enqueue: unknown option prority (did you mean priority?); known: runAt, delayMs, priority, maxAttempts, idempotencyKey, timeoutMs',
    'TypeError: enqueue: give runAt or delayMs, not both',
    // Queue names and idempotency keys by the core's rules, as the PostgreSQL stores take them.
    'RangeError: enqueue: queue "" is empty',
    'RangeError: enqueue: queue "a/b" may hold only A-Z a-z 0-9 _ - . :',
    `RangeError: enqueue: queue "${'q'.repeat(129)}" is longer than 128 bytes`,
    'RangeError: enqueue: idempotencyKey must not be empty',
    'RangeError: enqueue: idempotencyKey is longer than 512 bytes',
  ]);
  assert.match(result.work[0], /^TypeError : work: unknown option staleAfterMS \(did you mean staleAfterMs\?\)/);
  assert.match(result.work[1], /^RangeError : .*heartbeatMs/);
  assert.doesNotMatch(result.work[1], /heartbeatEveryMs/);
  assert.match(result.work[2], /^TypeError : work: handler must be a function, got a string/);
  // A renewal cadence too short to leave a clock-skew allowance is refused naming heartbeatMs,
  // the option given (it named heartbeatSkewMs, which work() has not), and as work's.
  assert.match(result.work[3], /^RangeError : work: heartbeatMs must be an integer from 2 to 2147483647, got 0/);
  assert.match(result.work[4], /^RangeError : work: heartbeatMs must be an integer from 2 to 2147483647, got 1/);
  assert.match(result.work[1], /^RangeError : work: heartbeatMs \(900\) must be under half of staleAfterMs/);
  assert.match(result.work[5], /^TypeError : work: onEvent must be a function/);
  assert.deepEqual(result.counts, [], 'nothing was queued');
  assert.match(result.closed, /^QueueError QUEUE_CLOSED: .*closed/);
  await page.close();
});

test('failed attempts wait the core retry backoff and are dead-lettered after maxAttempts; results and errors are kept', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'retries' });
    const { id } = await q.enqueue('q', { fail: true }, { maxAttempts: 3 });
    const { id: ok } = await q.enqueue('q', { fail: false });
    const working = q.work('q', async (payload, { attempt, job }) => {
      if (payload.fail) throw new Error(`attempt ${attempt} of ${job.maxAttempts} failed`);
      return { answer: 42 };
    }, { pollMs: 50 });
    let job;
    let between; // the job and its queue's counts while it waits for its second attempt
    for (;;) {
      job = await q.job(id);
      if (job.state === 'dead') break;
      if (between === undefined && job.state === 'retrying') between = { state: job.state, counts: (await q.counts())[0] };
      await sleep(50);
    }
    await working.dispose();
    return { job, between, ok: await q.job(ok), counts: await q.counts() };
  });
  const { job } = result;
  assert.equal(job.error, 'attempt 3 of 3 failed');
  assert.deepEqual(job.attemptsLog.map((a) => [a.outcome, a.error]), [
    ['failed', 'attempt 1 of 3 failed'], ['failed', 'attempt 2 of 3 failed'], ['failed', 'attempt 3 of 3 failed'],
  ]);
  const [a1, a2, a3] = job.attemptsLog;
  // The core's retry backoff: 1 s after the first failure, 2 s after the second.
  // (The upper bounds only tell the two steps apart: a claim may come late, never early.)
  assert.ok(a2.startedAt - a1.endedAt >= 1000 && a2.startedAt - a1.endedAt < 2000, `first wait ${a2.startedAt - a1.endedAt} ms`);
  assert.ok(a3.startedAt - a2.endedAt >= 2000 && a3.startedAt - a2.endedAt < 4000, `second wait ${a3.startedAt - a2.endedAt} ms`);
  assert.equal(result.between.counts.retrying, 1, 'a job that failed and waits for its retry is counted as retrying');
  assert.deepEqual(result.ok.result, { answer: 42 });
  assert.equal(result.ok.state, 'succeeded');
  assert.deepEqual(result.counts, [{ queue: 'q', paused: false, queued: 0, scheduled: 0, running: 0, retrying: 0, succeeded: 1, dead: 1, cancelled: 0 }]);
  await page.close();
});

test('a handler that throws, times out or answers what JSON cannot hold reaches onEvent as item-failed, not performed', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'failure-events' });
    const events = [];
    const { id: thrown } = await q.enqueue('q', { kind: 'throw' }, { maxAttempts: 1 });
    await q.enqueue('q', { kind: 'bigint' }, { maxAttempts: 1 });
    await q.enqueue('q', { kind: 'slow' }, { maxAttempts: 1, timeoutMs: 50 });
    const { id: ok } = await q.enqueue('q', { kind: 'ok' });
    const working = q.work('q', async ({ kind }) => {
      if (kind === 'throw') throw Object.assign(new Error('smtp down'), { code: 'ESMTP' });
      if (kind === 'bigint') return 1n;
      if (kind === 'slow') await sleep(200); // ignores its signal: the attempt still fails
      return kind;
    }, { pollMs: 50, onEvent: (event) => events.push(event), logger: { error() {} } });
    while ((await q.counts())[0].dead + (await q.counts())[0].succeeded < 4) await sleep(50);
    await working.dispose();
    return {
      ends: events.filter((e) => e.type === 'performed' || e.type === 'item-failed')
        .map((e) => [e.type, e.error?.code ?? e.error?.name ?? null]),
      thrown: (await q.job(thrown)).state, ok: (await q.job(ok)).state,
    };
  });
  // Each attempt's outcome is what the tracing sinks (leasehold/otel's spans) show: a failed
  // attempt traced as performed would leave its span without an error.
  assert.deepEqual(result.ends, [['item-failed', 'ESMTP'], ['item-failed', 'TypeError'], ['item-failed', 'TimeoutError'], ['performed', null]]);
  assert.equal(result.thrown, 'dead');
  assert.equal(result.ok, 'succeeded');
  await page.close();
});

test('a job cancelled under its handler, or whose write the fence refused, reaches onEvent as claim-lost, not performed', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'lost-events' });
    const events = [];
    const ids = {};
    for (const [kind, priority] of [['ok', 1], ['stopped', 2], ['ignored', 3]]) ids[kind] = (await q.enqueue('q', { kind }, { priority })).id;
    let running;
    let release;
    const gate = new Promise((resolve) => (release = resolve));
    const working = q.work('q', async ({ kind }, { signal }) => {
      running = kind;
      if (kind === 'stopped') await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      if (kind === 'ignored') await gate; // answers after its cancel: the fence refuses the write
      return kind;
    }, { pollMs: 50, onEvent: (event) => events.push(event) });
    while (running !== 'stopped') await sleep(10);
    await q.cancel(ids.stopped);
    while (running !== 'ignored') await sleep(10);
    await q.cancel(ids.ignored);
    release();
    while (events.filter((e) => e.type === 'claim-lost').length < 2) await sleep(20);
    await working.dispose();
    const total = { claimed: 0, performed: 0, failed: 0, claimLost: 0 };
    for (const { report } of events.filter((e) => e.type === 'pass-end')) for (const k of Object.keys(total)) total[k] += report[k];
    return {
      ends: events.filter((e) => ['performed', 'item-failed', 'claim-lost'].includes(e.type)).map((e) => [e.type, e.lapsed ?? null]),
      total,
      states: [(await q.job(ids.stopped)).state, (await q.job(ids.ignored)).state],
    };
  });
  assert.deepEqual(result.ends, [['performed', null], ['claim-lost', false], ['claim-lost', false]]);
  assert.deepEqual(result.total, { claimed: 3, performed: 1, failed: 0, claimLost: 2 });
  assert.deepEqual(result.states, ['cancelled', 'cancelled']);
  await page.close();
});

test('a connection whose database is deleted says so: QUEUE_CLOSED naming the deletion, not a newer version', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const message = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'deleted' });
    await q.enqueue('q', {});
    await new Promise((resolve, reject) => {
      const request = indexedDB.deleteDatabase('leasehold:deleted');
      request.onsuccess = resolve;
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error('the delete was blocked: the connection did not close itself'));
    });
    try {
      await q.enqueue('q', {});
      return 'enqueued';
    } catch (error) {
      return `${error.name} ${error.code}: ${error.message}`;
    }
  });
  assert.match(message, /^QueueError QUEUE_CLOSED: leasehold\/indexeddb: the database "leasehold:deleted" was deleted/);
  await page.close();
});

test('steering: cancel a running job (its signal aborts), retry it, pause and resume, priorities, idempotency keys, scheduled jobs', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'steer' });
    const out = {};
    const order = [];
    let cancelReason;
    await q.enqueue('q', { first: true });
    out.pausedNow = await q.pause('q');
    out.pausedAgain = await q.pause('q');
    const { id: long } = await q.enqueue('q', { long: true }, { priority: 5 });
    for (const p of [3, -1, 0]) await q.enqueue('q', { p }, { priority: p });
    out.key = [await q.enqueue('q', { k: 1 }, { idempotencyKey: 'k', priority: 9 }), await q.enqueue('q', { k: 2 }, { idempotencyKey: 'k' })];
    const { id: later } = await q.enqueue('q', { later: true }, { delayMs: 60_000 });
    out.countsPaused = (await q.counts())[0];
    const working = q.work('q', async (payload, { signal }) => {
      order.push(payload);
      if (payload.long && order.filter((p) => p.long).length === 1) {
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
        cancelReason = { name: signal.reason.name, code: signal.reason.code, job: signal.reason.job };
        throw signal.reason;
      }
      return 'ok';
    }, { pollMs: 50, staleAfterMs: 1500 });
    await sleep(300);
    out.whilePaused = order.length;
    await q.resume('q');
    while (!order.some((p) => p.long)) await sleep(10);
    out.leaseBefore = (await q.job(long)).lease;
    out.cancelled = await q.cancel(long, { reason: 'changed my mind' });
    while (cancelReason === undefined) await sleep(10);
    out.cancelReason = cancelReason;
    out.cancelledJob = await q.job(long);
    out.defaultAttempts = (await q.job(later)).maxAttempts;
    out.refused = [];
    for (const fn of [() => q.cancel([later, 999]), () => q.retry(later), () => q.cancel(0)]) {
      try {
        await fn();
        out.refused.push('no error');
      } catch (error) {
        out.refused.push(`${error.name} ${error.code ?? ''}: ${error.message}`);
      }
    }
    out.laterStill = (await q.job(later)).state;
    out.retried = await q.retry(long);
    out.retriedAt = Date.now();
    const retried = await q.job(long);
    out.retriedDue = { state: retried.state, runAt: retried.runAt };
    // Cancelled again while it waits, and retried again: still not due before that lease's end.
    await q.cancel(long);
    await q.retry(long);
    out.againDue = (await q.job(long)).runAt;
    while ((await q.job(long)).state !== 'succeeded') await sleep(20);
    out.retriedJob = await q.job(long);
    await working.dispose();
    out.order = order;
    out.fresh = [await q.pause('fresh'), await q.resume('fresh'), await q.resume('never')];
    out.counts = await q.counts();
    return out;
  });
  assert.equal(result.pausedNow, true);
  assert.equal(result.pausedAgain, false);
  assert.equal(result.whilePaused, 0, 'a paused queue is not claimed from');
  assert.deepEqual(result.key.map((k) => k.created), [true, false]);
  assert.equal(result.key[0].id, result.key[1].id);
  assert.deepEqual({ ...result.countsPaused }, { queue: 'q', paused: true, queued: 6, scheduled: 1, running: 0, retrying: 0, succeeded: 0, dead: 0, cancelled: 0 });
  // Lower priority first, then earlier due time, then lower id.
  assert.deepEqual(result.order.slice(0, 6), [{ p: -1 }, { first: true }, { p: 0 }, { p: 3 }, { long: true }, { k: 1 }]);
  assert.deepEqual(result.cancelled, [2]);
  assert.deepEqual(result.cancelReason, { name: 'JobCancelledError', code: 'JOB_CANCELLED', job: 2 });
  assert.equal(result.cancelledJob.state, 'cancelled');
  assert.equal(result.defaultAttempts, 25, 'the core default attempt budget');
  assert.deepEqual(result.cancelledJob.cancellation.reason, 'changed my mind');
  assert.deepEqual(result.cancelledJob.attemptsLog.map((a) => a.outcome), ['cancelled']);
  assert.deepEqual(result.refused, [
    'QueueError UNKNOWN_JOB: leasehold/indexeddb: there is no job 999',
    'QueueError JOB_STATE: leasehold/indexeddb: job 7 is queued; only dead or cancelled jobs can be retried',
    'RangeError : cancel: id must be an integer from 1 to 9007199254740991, got 0',
  ]);
  assert.equal(result.laterStill, 'scheduled', 'a refused cancel of several ids changed none of them');
  assert.deepEqual(result.retried, [2]);
  // Cancelled while it ran: due once that attempt's lease would have gone stale (its tab
  // stops the work by then even if it never heard the cancel), not at once.
  assert.equal(result.retriedDue.state, 'scheduled');
  assert.ok(result.retriedDue.runAt >= result.leaseBefore.expiresAt, `due at ${result.retriedDue.runAt}, not before the cancelled lease's end ${result.leaseBefore.expiresAt}`);
  assert.ok(result.retriedDue.runAt > result.retriedAt, 'not due at the retry');
  assert.ok(result.againDue >= result.leaseBefore.expiresAt, `due at ${result.againDue} after a second cancel and retry, before the cancelled lease's end ${result.leaseBefore.expiresAt}`);
  assert.equal(result.retriedJob.result, 'ok');
  assert.deepEqual(result.retriedJob.attemptsLog.map((a) => a.outcome), ['cancelled', 'succeeded']);
  assert.deepEqual(result.fresh, [true, true, false], 'a queue nothing was enqueued to can be paused and resumed; one never paused answers false');
  const none = { queued: 0, scheduled: 0, running: 0, retrying: 0, succeeded: 0, dead: 0, cancelled: 0 };
  assert.deepEqual(result.counts, [
    { queue: 'fresh', paused: false, ...none },
    { queue: 'q', paused: false, ...none, scheduled: 1, succeeded: 6 },
  ]);
  await page.close();
});

test('a job cancelled and retried while its handler ignores its signal is not started beside that handler in the same worker', { skip, timeout: 60_000 }, async () => {
  // A worker claims by passes: it claims again only once every job of its pass returned, so
  // the retried job waits for the handler that ignored its cancel. (leasehold/postgres and
  // leasehold/pglite claim per slot, and wait for it explicitly: queue-work.js.)
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'ignored' });
    let live = 0;
    let most = 0;
    const runs = [];
    const working = q.work('q', async () => {
      live += 1;
      most = Math.max(most, live);
      runs.push(Date.now());
      await sleep(runs.length === 1 ? 3_000 : 50); // the first ignores its signal
      live -= 1;
    }, { concurrency: 2, staleAfterMs: 1500, pollMs: 20, logger: { error() {} } });
    const { id } = await q.enqueue('q', {});
    while (runs.length === 0) await sleep(10);
    await q.cancel(id);
    await q.retry(id); // due at the cancelled lease's end, within 1.5 s: a free slot claims it then
    while ((await q.job(id)).state !== 'succeeded') await sleep(20);
    await working.dispose();
    return { runs: runs.length, most, gap: runs[1] - runs[0] };
  });
  assert.equal(result.runs, 2);
  assert.equal(result.most, 1, 'the handlers of the two attempts ran at the same time in one tab');
  assert.ok(result.gap >= 3_000, `the second attempt started ${result.gap} ms after the first, which ran 3 s`);
  await page.close();
});

test('jobs survive a reload: queued before, worked after', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  await page.evaluate(async () => {
    const q = await lh.connect({ name: 'reload' });
    for (let i = 0; i < 5; i++) await q.enqueue('jobs', { i });
  });
  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'reload' });
    const before = (await q.counts())[0].queued;
    const seen = [];
    const working = q.work('jobs', (payload) => {
      seen.push(payload.i);
    });
    while ((await q.counts())[0].succeeded < 5) await sleep(20);
    await working.dispose();
    return { before, seen };
  });
  assert.deepEqual(result, { before: 5, seen: [0, 1, 2, 3, 4] });
  await page.close();
});

test('dispose lets the running job finish and record its outcome, and hands the unstarted rest of its page back', { skip, timeout: 60_000 }, async () => {
  const page = await browser.tab();
  const result = await page.evaluate(async () => {
    const q = await lh.connect({ name: 'dispose' });
    for (let i = 0; i < 10; i++) await q.enqueue('jobs', { i });
    let started;
    let abortedWhileDisposing = null;
    const first = new Promise((resolve) => (started = resolve));
    const working = q.work('jobs', async (payload, { signal }) => {
      started();
      await sleep(200);
      abortedWhileDisposing = signal.aborted;
      return payload.i;
    }, { pageSize: 10 });
    await first;
    await working.dispose();
    const jobs = [];
    for (let id = 1; id <= 10; id++) jobs.push(await q.job(id));
    return { counts: (await q.counts())[0], jobs, abortedWhileDisposing };
  });
  assert.equal(result.abortedWhileDisposing, false, 'dispose waits for the handler without aborting its signal (as the types say)');
  assert.equal(result.counts.succeeded, 1, 'the running job finished and its outcome was written');
  assert.equal(result.counts.queued, 9, 'the nine claimed but unstarted jobs are queued again');
  assert.equal(result.counts.running, 0);
  for (const job of result.jobs.slice(1)) {
    assert.equal(job.attempts, 0, `job ${job.id}: a claim handed back unstarted is not counted`);
    assert.deepEqual(job.attemptsLog, []);
  }
  await page.close();
});

test('an enqueue in one tab wakes an idle worker in another at once (BroadcastChannel), not at its next poll', { skip, timeout: 60_000 }, async () => {
  // The worker polls once a minute: only the wake can bring it the job within the test's time.
  const worker = await browser.tab(`work=wake&tab=idle&ms=1&poll=60000&stale=${STALE_MS}`);
  await worker.evaluate(() => sleep(300)); // its first pass found nothing; it now sleeps
  const producer = await browser.tab();
  const job = await producer.evaluate(async () => {
    const q = await lh.connect({ name: 'wake' });
    const { id } = await q.enqueue('jobs', {});
    for (;;) {
      const job = await q.job(id);
      if (job.state === 'succeeded') return job;
      await sleep(20);
    }
  });
  assert.equal(job.result, 'done by idle');
  for (const page of [worker, producer]) await page.close();
});
