'use strict';
/*
 * `leasehold/indexeddb`: `connect({ name })` answers a job queue over IndexedDB shared by
 * every page and worker of the origin, with the queue API of the package's other stores.
 *
 * `work(queue, handler)` is a leasehold runner (`createJobRunner`) whose claim, perform
 * and heartbeat are this store's: the lease timing, renewal supervision, aborts, pass
 * backoff and wakes are the runner's, the takeover rule is the core's (its lease watch and
 * lease liveness), the retry backoff is the core's. What lives here is glue:
 *
 * - A claim takes a page of up to `pageSize` jobs in one transaction, under a Web Lock
 *   named `leasehold:NAME:claim` where the context has `navigator.locks` (the claim
 *   mutex: it is held for that one transaction, never for a job, so neither a closed tab
 *   nor a frozen one keeps it), and hands the runner one job per claim call. Jobs that
 *   waited in the page longer than the lease policy's claim age tolerance (at most 100 ms,
 *   at most half the skew allowance) are renewed (together, in one
 *   transaction) before the next is handed over, so the runner's lease never starts
 *   earlier than the store's: a job taken over meanwhile is skipped.
 * - The runner's heartbeats are fenced renewals of the lease deadline. A tab that closes
 *   or freezes stops renewing and its jobs are taken over once their lease is stale and
 *   this connection has seen it unrenewed for the stale window on its own clock; a
 *   tab whose job was taken over hears it from its next renewal (the fence refuses), and
 *   the runner aborts the handler's signal.
 * - The handler's outcome is written with a fenced settle, tried again while the
 *   database fails, until it lands or the fence refuses it (then nothing is written:
 *   another tab has the job). Settles of one connection share transactions.
 * - Enqueues, resumes and retries wake the queue's workers in every tab
 *   (BroadcastChannel `leasehold:NAME`); a cancel tells the owner tab to abort at once
 *   (its token moved anyway, so its next write is refused).
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the build script
 * wraps it as an ES module). Everything it uses comes in through `deps`.
 */

/** Page jobs older than this (since their page was claimed) are renewed before the runner gets them, ms. */

/** The runner's internal answer: a perform resolving to it reports its item lost, not performed (runner.js). */
const ITEM_LOST = Symbol.for('leasehold.runner.itemLost');
/** The runner's internal method: report a lapse the clock says is due (runner.js). */
const CHECK_LEASE = Symbol.for('leasehold.runner.checkLease');

const CONNECT_OPTIONS = ['name', 'durability'];
const WORK_OPTIONS = ['concurrency', 'staleAfterMs', 'heartbeatMs', 'pollMs', 'pageSize', 'onEvent', 'logger'];
const DURABILITIES = ['default', 'strict', 'relaxed'];
/** The most jobs one claim transaction takes. */
const MAX_PAGE_SIZE = 500;
/**
 * Claims per runner pass. A pass ends once its claims are performed and the next one waits
 * `pollMs`: with the runner's default of 25 a busy queue would idle every 25 jobs, so a pass
 * goes on claiming while the queue has due work (as the command-line tool's workers do).
 */
const BATCH_LIMIT = 1_000_000;

/** The reason a handler's signal aborts with when its job is cancelled. */
class JobCancelledError extends Error {
  constructor(id) {
    super(`Job ${id} was cancelled.`);
    this.name = 'JobCancelledError';
    this.code = 'JOB_CANCELLED';
    this.job = id;
  }
}

const errorText = (error) => {
  if (error instanceof Error) return error.message || error.name;
  try {
    return typeof error === 'string' ? error : JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
};

function randomId() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID().slice(0, 8);
  return Math.random().toString(16).slice(2, 10);
}

/* The runner's refusals as this API's: its option names, and `work` as the call refused. */
function renamed(error) {
  if (error instanceof Error) {
    error.message = error.message.replace(/^createJobRunner: /, 'work: ')
      .replace(/\bheartbeatEveryMs\b/g, 'heartbeatMs').replace(/\bintervalMs\b/g, 'pollMs');
  }
  return error;
}

function createIndexedDbApi(deps) {
  const { input, open, store: storeModule } = deps;
  const { checkKeys, checkName, checkInteger, checkIds, jsonData, enqueueFields, kindOf } = input;

  async function connect(options) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError(`connect: options must be an object with a name, got ${kindOf(options)}`);
    }
    checkKeys('connect', options, CONNECT_OPTIONS);
    const name = checkName('connect', 'name', options.name);
    const durability = options.durability;
    if (durability !== undefined && !DURABILITIES.includes(durability)) {
      throw new TypeError(`connect: durability must be one of ${DURABILITIES.join(', ')}, got ${typeof durability === 'string' ? `"${durability}"` : kindOf(durability)}`);
    }
    await deps.init();
    const db = await open.openQueueDatabase(globalThis.indexedDB, name);
    return createQueue(db, name, durability);
  }

  function createQueue(db, name, durability) {
    const defaults = deps.queueDefaults();
    /* Queue names as every store takes them: the core's rules (the Rust store's, and the PostgreSQL stores'). */
    const queueName = input.queueNameRule(defaults);
    const livenessByWindow = new Map();
    /* The core's lease liveness rule for the owner's own stale window (lease-only: no process table here). */
    function isAlive(job, now) {
      let check = livenessByWindow.get(job.leaseMs);
      if (check === undefined) {
        check = deps.leaseLiveness(job.leaseMs);
        livenessByWindow.set(job.leaseMs, check);
      }
      return check(job.owner, { heartbeatAtMs: job.heartbeatAt, nowMs: now });
    }
    const watches = new Map(); // queue -> the core's LeaseWatch
    /*
     * What one claim of `queue` may take, from every lease it read (idb-store.js `claim`):
     * `takeable`, the running jobs that may be taken over, and `unwatched`, the ids of the
     * queued jobs still carrying the lease of an attempt cancelled while it ran that may not
     * be claimed yet. Leases are stamped with Date.now, which steps (an NTP correction, a clock
     * set by hand, a laptop resumed from sleep) while the owners' deadlines run on monotonic
     * timers: on the wall clock alone, a step forward would make every running job look stale
     * at once, and a retried job due at its cancelled attempt's lease end start beside that
     * attempt. So each lease must have been seen unrenewed by this connection for longer than
     * its stale window on this page's monotonic clock (the core's LeaseWatch); a running one
     * must be stale on the wall clock too.
     */
    function judge(queue, running, cancelled, leaseMs, now) {
      let watch = watches.get(queue);
      if (watch === undefined) {
        watch = deps.leaseWatch();
        watches.set(queue, watch);
      }
      const mono = performance.now();
      const takeable = running.filter((job) =>
        watch.unrenewedFor(job.id, job.token, job.heartbeatAt ?? undefined, job.leaseMs, mono) && !isAlive(job, now));
      const unwatched = new Set();
      for (const job of cancelled) {
        // A job cancelled by a version that kept only the lease's end has no window: this
        // claimant's own.
        const window = job.leaseMs ?? leaseMs;
        if (!watch.cancelledUnrenewedFor(job.id, job.token, job.heartbeatAt ?? undefined, window, mono)) unwatched.add(job.id);
      }
      watch.forgetUnseenSince(mono);
      return { takeable, unwatched };
    }
    const workers = new Set();
    const store = storeModule.createJobStore(db, {
      durability,
      retryDelayMs: deps.retryDelayMs,
      judge,
    });
    const label = `${name}#${randomId()}`;
    const lockName = `leasehold:${name}:claim`;
    const locks = globalThis.navigator?.locks;
    const Channel = globalThis.BroadcastChannel;
    const channel = typeof Channel === 'function' ? new Channel(`leasehold:${name}`) : undefined;
    let closed = false;

    /* A message from this connection or another: wake the workers it concerns, abort cancelled work. */
    function heard(message) {
      if (message === null || typeof message !== 'object') return;
      for (const worker of workers) {
        if (message.type === 'enqueued' && (message.queue === undefined || message.queue === worker.queue)) worker.wake();
        else if (message.type === 'cancelled') worker.cancelled(message.ids);
      }
    }
    if (channel !== undefined) channel.onmessage = (event) => heard(event.data);
    function tell(message) {
      heard(message);
      if (channel !== undefined && !closed) channel.postMessage(message);
    }

    function claimPage(queue, owner, leaseMs, n, now) {
      const claim = () => store.claim(queue, owner, leaseMs, n, now);
      return locks && typeof locks.request === 'function' ? locks.request(lockName, claim) : claim();
    }

    /* Settles of this connection share transactions: while one is committing, the next ones gather. */
    let gathering = [];
    let settling = false;
    function settleOnce(settle) {
      return new Promise((resolve, reject) => {
        gathering.push({ settle, resolve, reject });
        if (!settling) flush();
      });
    }
    async function flush() {
      settling = true;
      while (gathering.length !== 0) {
        const batch = gathering;
        gathering = [];
        try {
          const outcomes = await store.settle(batch.map((b) => b.settle), Date.now());
          batch.forEach((b, i) => b.resolve(outcomes[i]));
        } catch (error) {
          for (const b of batch) b.reject(error);
        }
      }
      settling = false;
    }

    /* A finished outcome is written until it lands or its fence refuses it; a closed connection ends the tries. */
    async function settle(job, outcome, log) {
      for (let failures = 1; ; failures += 1) {
        try {
          return await settleOnce({ id: job.id, token: job.token, ...outcome });
        } catch (error) {
          if (closed || error?.code === 'QUEUE_CLOSED') throw error;
          log(error);
          await new Promise((resolve) => setTimeout(resolve, deps.recoveryDelayMs(failures)));
        }
      }
    }

    function live(where) {
      if (closed) throw new storeModule.QueueError('QUEUE_CLOSED', `leasehold/indexeddb: ${where}: the queue "${name}" was closed`);
    }

    async function enqueue(queue, payload, options) {
      queueName('enqueue', queue);
      const now = Date.now();
      const fields = enqueueFields(options, now, defaults);
      const data = jsonData(payload, 'payload');
      live('enqueue');
      const record = {
        queue, state: 'queued', payload: data, ...fields, attempts: 0, token: 0, owner: null, claimedAt: null,
        heartbeatAt: null, leaseMs: null, lastError: null, createdAt: now, finishedAt: null, cancellation: null, log: [],
      };
      const answer = await store.enqueue(record);
      if (answer.created) tell({ type: 'enqueued', queue });
      return answer;
    }

    function work(queue, handler, options) {
      queueName('work', queue);
      if (typeof handler !== 'function') throw new TypeError(`work: handler must be a function, got ${kindOf(handler)}`);
      const o = checkKeys('work', options, WORK_OPTIONS);
      live('work');
      const concurrency = checkInteger('work', 'concurrency', o.concurrency, 1, 64, 1);
      const pageSize = checkInteger('work', 'pageSize', o.pageSize, 1, MAX_PAGE_SIZE, concurrency);
      const staleAfterMs = checkInteger('work', 'staleAfterMs', o.staleAfterMs, 1, 2 ** 31 - 1, 30_000);
      // At least 2: the runner's clock-skew allowance is half the cadence, and must be 1 ms or
      // more (refused otherwise naming heartbeatSkewMs, an option work() does not have).
      checkInteger('work', 'heartbeatMs', o.heartbeatMs, 2, 2 ** 31 - 1, undefined);
      return startWorker({ queue, handler, concurrency, pageSize, staleAfterMs, options: o });
    }

    function startWorker({ queue, handler, concurrency, pageSize, staleAfterMs, options }) {
      const owner = `${label}/${queue}#${randomId()}`;
      const page = []; // claimed jobs not handed to the runner yet
      let pageClaimedAt = 0;
      // How long a page's job may wait before it is renewed first (ms): the runner measures its
      // lease from the claim that hands it over, and the gap comes out of its skew allowance.
      // 0 (always renew) where the runner refuses the spans, which its creation reports.
      let claimAgeToleranceMs = 0;
      try {
        claimAgeToleranceMs = deps.claimAgeToleranceMs(staleAfterMs, options.heartbeatMs);
      } catch {
        /* the runner's own refusal follows */
      }
      const running = new Map(); // job id -> { token, controller }
      let stopping = false;
      const logLine = (message) => (error) => {
        try {
          const logger = typeof options.logger === 'function' ? options.logger() : options.logger ?? console;
          logger.error(`${runnerName} ${message}`, { module: runnerName, err: error });
        } catch {
          /* a logger that throws costs the work nothing */
        }
      };
      const runnerName = `${name}/${queue}`;

      async function claim(at) {
        for (;;) {
          if (stopping) return null; // what is left of the page is handed back by dispose
          if (page.length !== 0 && at - pageClaimedAt > claimAgeToleranceMs) {
            // The rest of the page is renewed together; a job taken over meanwhile drops out.
            const waiting = page.splice(0);
            const held = await store.renewAll(waiting, at);
            page.push(...waiting.filter((_, i) => held[i]));
            pageClaimedAt = at;
          }
          const next = page.shift();
          if (next !== undefined) return next;
          const jobs = await claimPage(queue, owner, staleAfterMs, pageSize, at);
          if (jobs.length === 0) return null;
          page.push(...jobs);
          pageClaimedAt = at;
        }
      }

      async function perform(job, signal) {
        const controller = new AbortController();
        const follow = () => controller.abort(signal.reason);
        if (signal.aborted) follow();
        else signal.addEventListener('abort', follow, { once: true });
        running.set(job.id, { token: job.token, controller });
        let timedOut;
        const timer = job.timeoutMs === null ? undefined : setTimeout(() => {
          timedOut = new Error(`job ${job.id}: attempt ${job.attempts} timed out after ${job.timeoutMs} ms`);
          timedOut.name = 'TimeoutError';
          controller.abort(timedOut);
        }, job.timeoutMs);
        const ctx = {
          // Its checks hand the runner the clock first (runner.js checkLease): a tab thawed
          // past its lease sees the lapse at its first check, whichever timer fires first
          // (the runner's abort reaches this signal through `follow`, synchronously).
          signal: deps.checkedSignal(controller.signal, () => runner[CHECK_LEASE]()),
          job: { id: job.id, queue, token: job.token, attempt: job.attempts, maxAttempts: job.maxAttempts },
          attempt: job.attempts,
        };
        let outcome;
        let failure; // what the runner is told a failed attempt raised
        try {
          const value = await handler(job.payload, ctx);
          if (timedOut) failure = timedOut;
          else outcome = { ok: true, result: value === undefined ? null : jsonData(value, 'the handler\'s result') };
        } catch (error) {
          const reason = controller.signal.reason;
          const stopped = controller.signal.aborted && reason !== timedOut && (error === reason || error?.code === reason?.code);
          // Cancelled: the cancel wrote the outcome, and the runner counts a lost claim.
          // Claim lost or lapsed: the runner knows; nothing to write.
          if (stopped && reason instanceof JobCancelledError) return ITEM_LOST;
          if (stopped) throw error;
          failure = timedOut ?? error;
        } finally {
          if (timer !== undefined) clearTimeout(timer);
          signal.removeEventListener('abort', follow);
          running.delete(job.id);
        }
        if (outcome === undefined) outcome = { ok: false, error: failure === timedOut ? timedOut.message : errorText(failure) };
        const settled = await settle(job, outcome, logLine('settling a job failed; trying again'));
        // The fence refused the write (another tab has the job, or it was cancelled): a lost claim.
        if (settled === 'lost') return ITEM_LOST;
        // Once recorded, a failed attempt is raised to the runner, so that its report counts it
        // `failed` and its onEvent (leasehold/otel's spans) shows `item-failed` with the error.
        if (!outcome.ok) throw failure;
      }

      let runner;
      try {
        runner = deps.createJobRunner({
          name: runnerName,
          intervalMs: options.pollMs ?? 1000,
          staleAfterMs,
          heartbeatEveryMs: options.heartbeatMs,
          concurrency,
          batchLimit: BATCH_LIMIT,
          logger: options.logger,
          onEvent: options.onEvent,
          claim,
          perform,
          heartbeat: (job, at) => store.renew(job, at),
        });
      } catch (error) {
        throw renamed(error);
      }

      let disposed;
      const worker = {
        queue,
        wake: () => runner.wake(),
        cancelled(ids) {
          for (const id of ids) {
            const held = running.get(id);
            if (held !== undefined) held.controller.abort(new JobCancelledError(id));
          }
        },
      };
      workers.add(worker);
      runner.start();
      worker.dispose = () => dispose();

      /* Stops claiming, lets running work finish (and settle), hands the unstarted rest of the page back. */
      function dispose() {
        if (disposed === undefined) {
          stopping = true;
          disposed = (async () => {
            try {
              await runner.dispose();
              const left = page.splice(0);
              if (left.length !== 0 && !closed) await store.release(left);
            } finally {
              workers.delete(worker);
            }
          })();
        }
        return disposed;
      }
      const working = { dispose };
      if (typeof Symbol.asyncDispose === 'symbol') working[Symbol.asyncDispose] = dispose;
      return working;
    }

    async function cancel(ids, options) {
      const list = checkIds('cancel', ids);
      const o = checkKeys('cancel', options, ['reason']);
      if (o.reason !== undefined && typeof o.reason !== 'string') throw new TypeError(`cancel: reason must be a string, got ${kindOf(o.reason)}`);
      live('cancel');
      const done = await store.cancel(list, o.reason ?? null, label, Date.now());
      tell({ type: 'cancelled', ids: done });
      return done;
    }

    async function retry(ids) {
      const list = checkIds('retry', ids);
      live('retry');
      const done = await store.retry(list, Date.now());
      tell({ type: 'enqueued' });
      return done;
    }

    /* A queue nothing was enqueued to yet can be paused too: its first jobs then wait. */
    async function pause(queue) {
      queueName('pause', queue);
      live('pause');
      return store.setPaused(queue, true);
    }

    async function resume(queue) {
      queueName('resume', queue);
      live('resume');
      const changed = await store.setPaused(queue, false);
      if (changed) tell({ type: 'enqueued', queue });
      return changed;
    }

    async function counts() {
      live('counts');
      return store.counts(Date.now());
    }

    async function job(id) {
      checkInteger('job', 'id', id, 1, Number.MAX_SAFE_INTEGER);
      live('job');
      const record = await store.get(id);
      if (record === undefined) return null;
      return {
        id: record.id, queue: record.queue, state: storeModule.shownState(record, Date.now()), payload: record.payload,
        priority: record.priority, runAt: record.runAt, attempts: record.attempts, maxAttempts: record.maxAttempts,
        result: record.result, error: record.lastError, idempotencyKey: record.idempotencyKey, timeoutMs: record.timeoutMs,
        token: record.token, createdAt: record.createdAt, finishedAt: record.finishedAt, cancellation: record.cancellation,
        lease: record.state === 'running' ? { owner: record.owner, heartbeatAt: record.heartbeatAt, expiresAt: record.expiresAt } : null,
        attemptsLog: record.log,
      };
    }

    async function close() {
      if (closed) return;
      await Promise.all([...workers].map((w) => w.dispose()));
      closed = true;
      if (channel !== undefined) channel.close();
      store.close();
    }

    return { name, enqueue, work, counts, job, cancel, retry, pause, resume, close };
  }

  return { connect, JobCancelledError, QueueError: storeModule.QueueError, QueueUnavailableError: open.QueueUnavailableError };
}

module.exports = { createIndexedDbApi };
