'use strict';
/*
 * `queue.work(queue, handler, options)`: a queue's jobs performed by the package's job
 * runner (runner.js over the core: passes, leases, heartbeats, supervision, abort), with
 * claims, renewals and settles through the store's fenced statements.
 *
 * - One runner per slot (`concurrency` of them, each performing one job at a time), as the
 *   `leasehold` command-line tool does: a slot that finishes claims the next job at once,
 *   whatever its neighbours are doing, and a long job holds up nobody's pass.
 * - Claims take a page of `pageSize` jobs in one statement, shared by the slots, and carry
 *   the completions waiting to be written (settled first, each under its fence). The runner
 *   measures a job's lease from the `at` of its own claim call, the database from when the
 *   statement that stamped it ran, which was sent earlier when a slot joined a claim under
 *   way or took a job left in the page, or when the answer came late: a job whose stamping
 *   statement was sent more than the lease policy's claim age tolerance (at most 100 ms, at
 *   most half the skew allowance) before the slot's `at` is renewed first (one
 *   statement for the page's jobs), as the Rust worker does, so the runner's view of the
 *   lease never lags the store's by more than that. Stale running
 *   jobs the claim names are taken over with the store's compare-and-swap (liveness here is lease-only: a stale lease is enough).
 * - The work and the write of its outcome are two phases. The handler's answer (a result,
 *   or a thrown error) is held and written with the fenced complete / fail, tried again
 *   while the database does not answer (the core's recovery backoff) however long that
 *   takes, lapse or not: it lands if nobody took the job meanwhile, and only a refused
 *   fence gives it up. A handler that throws its signal's reason (the claim was lost or
 *   lapsed, or the job was cancelled) settles nothing. Meanwhile claims leave the held jobs
 *   alone, and a job that comes back to this worker anyway (its own claim, held up past
 *   the job's lease, took it over) is settled with the outcome it holds, not run again.
 *   The slot takes its next job while the outcome is written, and the runner counts
 *   each job once it is: performed (completed), failed (its attempt failed and was
 *   recorded: retried or dead-lettered; `item-failed` with the handler's error, as the
 *   runner reports a throwing perform), or a lost claim (cancelled under it, its write
 *   refused by the fence, or its claim lost or lapsed).
 * - Completions from all slots are coalesced (queue.js `completer`): those waiting when a
 *   claim starts ride on it, the others go in a flush of their own; each still fenced.
 * - LISTEN/NOTIFY (queue.js) wakes every slot when work arrives; polling every `pollMs`
 *   is the backstop.
 */

const { jsonText, storableText, unknownOption } = require('./queue-input.js');
const { checkedSignal } = require('./timing.js');

/** The runner's internal option: abort an item through this glue, no AbortController per item (runner.js). */
const ABORT_ITEM = Symbol.for('leasehold.runner.abortItem');
/** The runner's internal answers (runner.js): the item was lost, not performed; its outcome comes later. */
const ITEM_LOST = Symbol.for('leasehold.runner.itemLost');
const OUTCOME_LATER = Symbol.for('leasehold.runner.outcomeLater');

const WORK_OPTIONS = ['concurrency', 'staleAfterMs', 'heartbeatMs', 'pollMs', 'pageSize', 'onEvent', 'logger'];

/**
 * @param {object} store  the queue's statements (queue.js `createStore`)
 * @param {object} api    the package's runner API (createJobRunner, JOB_CLAIM_LOST)
 * @param {object} policy the core's decisions (recovery delays)
 */
function startWork(store, api, policy, queue, handler, options = {}) {
  const where = 'work';
  if (typeof handler !== 'function') throw new TypeError(`${where}: handler must be a function, got ${typeof handler}`);
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${where}: options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  for (const name of Object.keys(options)) {
    if (!WORK_OPTIONS.includes(name)) throw unknownOption(where, name, WORK_OPTIONS);
  }
  const { concurrency = 1, staleAfterMs = 30_000, heartbeatMs, pollMs = 1_000, onEvent, logger } = options;
  const slots = store.integer(where, 'concurrency', concurrency, 1, 64);
  const pageSize = store.integer(where, 'pageSize', options.pageSize ?? slots, 1, 500);
  const leaseMs = store.integer(where, 'staleAfterMs', staleAfterMs, 1, 2 ** 31 - 1);
  // At least 2: the runner's clock-skew allowance is half the cadence and must be 1 ms or
  // more (the runner would refuse it naming heartbeatSkewMs, an option work() does not have).
  if (heartbeatMs !== undefined) store.integer(where, 'heartbeatMs', heartbeatMs, 2, 2 ** 31 - 1);
  /** A page's job stamped longer than this before a slot's claim is renewed first (ms; the
      runner measures the lease from the claim, and the gap comes out of its skew allowance). */
  const claimAgeToleranceMs = claimAgeTolerance(policy, leaseMs, heartbeatMs);

  /**
   * Claimed jobs not yet handed to a slot, each with `at`: when the statement that last
   * stamped its lease was sent (this process's clock), no later than the database's stamp.
   * Not when it answered: an answer held up by the network (or a process frozen meanwhile)
   * comes with leases that may be stale already.
   */
  const page = [];
  let disposing; // dispose()'s promise, once it was called
  let paging; // the page claim (or renewal) in flight, which every slot without a job waits on
  /** Outcomes held, not yet settled, by job id (`{ token, reached }`): claims leave these
      jobs alone. */
  const held = new Map();
  /** Outcomes whose settle the fence refused, by job id (`{ token, reached, until }`), kept
      one lease for `adopt`. */
  const refused = new Map();
  /** The settles in flight, and how many may be before a slot waits for its own. */
  const settles = new Set();
  const backlog = 4 * Math.max(slots, pageSize);
  /** The jobs being performed, by id: their token and how to abort them (a cancel). */
  const running = new Map();
  const completions = store.completer(queue, leaseMs);

  async function claimPage() {
    const at = Date.now();
    const jobs = await store.claimPage(queue, pageSize, leaseMs, held.keys(), completions);
    for (const job of jobs) page.push({ job, at });
    return jobs.length;
  }

  /** Starts the next page's claim (or a renewal of the waiting page), shared by every slot. */
  function turn(work) {
    if (paging === undefined) paging = work().finally(() => (paging = undefined));
    return paging;
  }

  /** The runner's claim, made at `at` (the runner's clock): its lease is measured from there. */
  async function claim(at) {
    for (;;) {
      // Disposing: no job is handed out any more (a runner's pass would otherwise go on
      // claiming until the queue is empty); the page's jobs go back to the queue.
      if (disposing !== undefined) return null;
      const next = page[0];
      if (next === undefined) {
        if ((await turn(claimPage)) === 0 && page.length === 0) return null;
        continue;
      }
      // A job stamped before this claim was made (it waited in the page, its page was claimed
      // for another slot, or its answer came late) is renewed with the rest of the page, one
      // statement, before it is handed over: the runner measures its lease from `at`. The
      // renewal is sent after `at`, so one is enough (unless it joined one sent earlier).
      if (at - next.at > claimAgeToleranceMs) {
        await turn(refreshPage);
        continue;
      }
      page.shift();
      // Pages larger than the slots (claims ahead, for short jobs) are followed by the next
      // one as soon as a page's first job is handed out: short jobs drain a page faster than
      // a claim's round trip, and a claim always under way keeps the slots from waiting on
      // it (a worker holds fewer than two pages). With pages of `concurrency` (the default)
      // nothing is claimed before a slot is free: a busy worker holds no jobs an idle one
      // could run.
      if (pageSize > slots && page.length < pageSize) void turn(claimPage).catch(() => undefined);
      return next.job;
    }
  }

  /** Renews the jobs waiting in the page; drops the ones whose fence no longer holds. */
  async function refreshPage() {
    const waiting = page.slice();
    if (waiting.length === 0) return 0;
    const at = Date.now();
    const renewed = new Set(await store.renewMany(waiting.map((entry) => entry.job)));
    for (const entry of waiting) {
      if (renewed.has(entry.job.id)) entry.at = at;
      else {
        // A slot whose claim was made before the page went stale for another's may have
        // taken it meanwhile (its runner finds out from its own renewal).
        const index = page.indexOf(entry);
        if (index >= 0) page.splice(index, 1);
      }
    }
    return waiting.length;
  }

  /**
   * Runs the handler and writes its outcome; answers as the runner should count the job:
   * throws the signal's reason (the runner lost the claim), ITEM_LOST (cancelled), or the
   * write's answer (`outcomeOf`), later: the slot takes its next job while it is written.
   * `checkLease`: the runner's, called by the handler's signal before it answers a check.
   */
  async function perform(job, checkLease) {
    const adopted = adopt(job);
    return adopted === undefined ? performNew(job, checkLease) : written(job, adopted);
  }

  /**
   * The outcome this worker has for `job` under an earlier token (held, or refused and
   * still kept), taken for this token; undefined if none. A claim leaves the held jobs
   * alone, but the list it sends is read when it is made and the database judges the
   * leases when the statement runs: a claim held up (a lock, a stalled connection) may take
   * over this worker's own stale lease of a job that finished here meanwhile, which fences
   * its settle out. The outcome is then written under the new lease instead of the work
   * running again.
   */
  function adopt(job) {
    const earlier = held.get(job.id) ?? refused.get(job.id);
    refused.delete(job.id);
    if (earlier === undefined || earlier.token >= job.token || (earlier.until !== undefined && earlier.until <= Date.now())) return undefined;
    return earlier.reached;
  }

  async function performNew(job, checkLease) {
    const ctx = contextOf(job, running, checkLease);
    let reached;
    try {
      // This worker may still run an earlier attempt of the same job: its claim was lost
      // (cancelled, or its lease went stale and was taken back) while its handler ignored
      // its signal. The job is not started beside it here: this attempt begins once that
      // handler returned (the runner renews the new lease meanwhile), or not at all if its
      // own claim was lost by then.
      if (ctx.earlier !== undefined) await ctx.earlier;
      if (ctx.reason() !== undefined) throw ctx.reason();
      ctx.begin();
      const result = await handler(job.payload, ctx.value);
      reached = ctx.timedOut() ? failure(ctx.timedOut()) : success(result);
    } catch (error) {
      // Stopped on its signal with no outcome: nothing is written, as in the Rust worker
      // (a cancelled job is nobody's now: that is no failure of this worker's).
      if (ctx.reason() !== undefined && error === ctx.reason() && !ctx.timedOut()) {
        if (error instanceof CancelledError) return ITEM_LOST;
        throw error;
      }
      reached = failure(ctx.timedOut() ?? error);
    } finally {
      ctx.done();
    }
    // The slot is free for the next job while the outcome is written: the write is
    // coalesced with the other slots' and lands within one statement, long before the
    // lease (renewed up to the handler's end) goes stale; the runner counts the job once
    // it landed. More than `backlog` outcomes waiting (a database that stopped answering)
    // hold the slots until they land.
    return written(job, reached);
  }

  /** Holds `reached` for `job` and writes it; answers as perform does. */
  function written(job, reached) {
    const mine = { token: job.token, reached };
    held.set(job.id, mine);
    const landing = settle(job, reached).then(
      (landed) => {
        if (held.get(job.id) === mine) {
          held.delete(job.id);
          // Kept a lease longer: the takeover may be this worker's own, its answer still on the way.
          if (!landed) keepRefused(job.id, { ...mine, until: Date.now() + leaseMs });
        }
        return landed;
      },
      (error) => {
        if (held.get(job.id) === mine) held.delete(job.id);
        throw error;
      },
    );
    const outcome = outcomeOf(landing, reached).finally(() => settles.delete(outcome));
    settles.add(outcome);
    return settles.size > backlog ? outcome : { [OUTCOME_LATER]: outcome };
  }

  function keepRefused(id, entry) {
    const now = Date.now();
    for (const [other, kept] of refused) if (kept.until <= now) refused.delete(other);
    refused.set(id, entry);
  }

  /** How the runner counts a written outcome: performed, failed with the attempt's error (recorded), or lost (refused). */
  async function outcomeOf(landing, reached) {
    if (!(await landing)) return ITEM_LOST;
    if (!reached.ok) throw reached.raised;
    return undefined;
  }

  /** Writes the held outcome until the store answers; a refused fence gives it up. */
  async function settle(job, reached) {
    for (let failures = 0; ; failures += 1) {
      try {
        return await (reached.ok ? completions.complete(job, reached.result) : store.fail(job, reached.error));
      } catch (error) {
        // The queue was closed under it: nothing can land any more.
        if (store.closed) throw error;
        await sleep(policy.recoveryDelayMs(failures + 1));
      }
    }
  }

  /** A result the database cannot store (not JSON, a NUL character) fails the attempt. */
  function success(result) {
    try {
      return { ok: true, result: jsonText(where, "the handler's result", result, true) };
    } catch (error) {
      return failure(error);
    }
  }

  /** `error`: what the handler raised (or the timeout, or a result that cannot be stored), reported to the runner once recorded. */
  function failure(error) {
    const message = error instanceof Error ? error.message || String(error) : typeof error === 'string' ? error : safeText(error);
    return { ok: false, error: storableText(message), raised: error };
  }

  const runners = [];
  for (let i = 0; i < slots; i += 1) {
    runners.push(
      runnerOf(api, {
        name: `${queue}#${i + 1}`,
        intervalMs: pollMs,
        staleAfterMs: leaseMs,
        ...(heartbeatMs === undefined ? {} : { heartbeatEveryMs: heartbeatMs }),
        concurrency: 1,
        batchLimit: Number.MAX_SAFE_INTEGER,
        claim,
        perform,
        heartbeat: (job) => store.renew(job),
        // The claim was lost or lapsed, or the runner is disposed: the job's own abort.
        [ABORT_ITEM]: (job, reason) => running.get(job.id)?.abort(reason, job.token),
        ...(onEvent === undefined ? {} : { onEvent }),
        ...(logger === undefined ? {} : { logger }),
      }),
    );
  }
  const wake = () => {
    for (const runner of runners) runner.wake();
  };
  // A cancel of a job this worker performs aborts its handler at once; its settle, if any,
  // is refused by the fence (the cancel moved the token).
  const cancelled = (id, token) => {
    running.get(id)?.abort(new CancelledError(id), token);
  };
  const unsubscribe = store.subscribe(queue, wake, cancelled);
  for (const runner of runners) runner.start();

  async function dispose() {
    disposing ??= (async () => {
      unsubscribe();
      // Every outcome reached is written (or refused by its fence) before a runner's
      // dispose resolves: its pass waits for the jobs whose outcome comes later.
      await Promise.all(runners.map((runner) => runner.dispose()));
      await completions.flush();
      // Jobs claimed in a page and never started go back to the queue at once.
      if (paging !== undefined) await paging.catch(() => undefined);
      const left = page.splice(0).map((entry) => entry.job);
      if (left.length > 0) await store.release(left).catch(() => undefined);
    })();
    return disposing;
  }
  const working = { dispose, wake };
  if (typeof Symbol.asyncDispose === 'symbol') working[Symbol.asyncDispose] = dispose;
  return working;
}

/** The runner's claim age tolerance for these spans; 0 (renew every waiting job) where the
    runner refuses them, which its own creation then reports worded as work()'s. */
function claimAgeTolerance(policy, staleAfterMs, heartbeatMs) {
  try {
    return policy.claimAgeToleranceMs(staleAfterMs, heartbeatMs);
  } catch {
    return 0;
  }
}

/** `api.createJobRunner(options)`, its refusals (bad heartbeatMs, pollMs) worded as work()'s options. */
function runnerOf(api, options) {
  try {
    return api.createJobRunner(options);
  } catch (error) {
    if (error instanceof Error) {
      error.message = error.message
        .replace(/^createJobRunner: /, 'work: ')
        .replace(/\bheartbeatEveryMs\b/g, 'heartbeatMs')
        .replace(/\bintervalMs\b/g, 'pollMs');
    }
    throw error;
  }
}

/**
 * The handler's second argument: `{ signal, job, attempt }`, and the job's abort. The
 * signal aborts when the runner aborts the job (claim lost or lapsed, dispose), when the
 * job is cancelled (a NOTIFY naming its id and token) or when its timeout passes, with the
 * first of those reasons. It is made when the handler first reads it (an AbortSignal costs
 * more than a short job's whole turn): until then the reason is only kept. Its `aborted`
 * and `throwIfAborted()` first ask the runner (`checkLease`) whether the lease lapsed by
 * the clock, in case the runner's timer has not fired yet (the process was frozen).
 */
function contextOf(job, running, checkLease) {
  const info = { id: job.id, queue: job.queue, token: job.token, attempt: job.attempt, maxAttempts: job.maxAttempts };
  let controller;
  let reason;
  let timedOut;
  let timer;
  const abort = (why) => {
    if (reason !== undefined) return;
    reason = why;
    controller?.abort(why);
  };
  const signal = () => {
    if (controller === undefined) {
      controller = new AbortController();
      if (reason !== undefined) controller.abort(reason);
      else if (checkLease !== undefined) checkedSignal(controller.signal, checkLease);
    }
    return controller.signal;
  };
  // This worker's attempt of the same job under an earlier claim, if its handler still runs.
  const earlier = running.get(job.id);
  let ended;
  const entry = {
    /** Aborts the job's work with `why`, if `token` is still its attempt's. */
    abort: (why, token) => {
      if (token === job.token) abort(why);
    },
    /** Resolves once its handler returned. */
    ended: new Promise((resolve) => {
      ended = resolve;
    }),
  };
  running.set(job.id, entry);
  return {
    value: {
      get signal() {
        return signal();
      },
      job: info,
      attempt: job.attempt,
    },
    /** Resolves once this worker's earlier attempt of the job returned; undefined if none runs. */
    earlier: earlier?.ended,
    /** Why the work was aborted, or undefined. */
    reason: () => reason,
    timedOut: () => timedOut,
    /** Starts the attempt's time limit, as its handler starts. */
    begin() {
      if (job.timeoutMs === null) return;
      timer = setTimeout(() => {
        timedOut = new Error(`timed out after ${job.timeoutMs} ms`);
        timedOut.name = 'TimeoutError';
        abort(timedOut);
      }, job.timeoutMs);
      timer.unref?.();
    },
    done() {
      clearTimeout(timer);
      ended();
      if (running.get(job.id) === entry) running.delete(job.id);
    },
  };
}

/** The reason a cancelled job's signal aborts with. */
class CancelledError extends Error {
  constructor(id) {
    super(`job ${id} was cancelled`);
    this.name = 'JobCancelledError';
    this.code = 'JOB_CANCELLED'; // as leasehold/indexeddb's JobCancelledError
    this.job = id;
  }
}

function safeText(value) {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

const sleep = (ms) =>
  new Promise((resolve) => {
    setTimeout(resolve, ms);
  });

module.exports = { startWork };
