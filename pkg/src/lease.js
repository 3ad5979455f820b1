'use strict';
/*
 * The JS side of run leases: `heartbeatLoop`,
 * `runSupervised`, `leaseLiveness`, `sameHostIncarnation`, `leasePolicy`.
 *
 * Plumbing only, as in runner.js: the wasm `LeaseSupervisor` (crate
 * leasehold-wasm, src/lease/) is the core's heartbeat supervision state
 * machine and decides when to pulse, when the deadline falls, when to
 * reconfirm, when the lease lapses and whether to warn. What lives here: the
 * user's store and hooks, one timer for the supervisor's next deadline, one
 * for the `onReconfirm` budget, the AbortController, the promise, and the log
 * lines. Options are checked by wasm (TypeError/RangeError naming the option
 * or the broken policy relation) before the store is touched. Liveness is the
 * core's lease rule, one wasm call per check.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the
 * build script wraps it as an ES module).
 */

const LEASE_LOST = 'LEASE_LOST';

/** A store outcome as words, for messages: `'LostToNewerToken'`, `{ _tag }`'s tag, or its string form. */
function describe(outcome) {
  if (typeof outcome === 'string') return outcome;
  try {
    if (outcome !== null && typeof outcome === 'object' && typeof outcome._tag === 'string') return outcome._tag;
    return String(outcome);
  } catch {
    return typeof outcome;
  }
}

/**
 * The reason a lease's `signal` is aborted with: the fence was lost (a store
 * call answered anything but `Updated`) or, when `lapsed`, the lease went
 * unconfirmed past the write tolerance and the reconfirmation did not renew it.
 */
class LeaseLostError extends Error {
  constructor(runId, end) {
    const lapsed = end !== undefined && end !== null && end.type === 'lapsed';
    super(
      lapsed
        ? `The lease on run ${runId} lapsed: it went ${end.unconfirmedMs} ms without a confirmed renewal.`
        : `The lease on run ${runId} was lost: the store answered ${describe(end?.outcome)}.`,
    );
    this.name = 'LeaseLostError';
    this.code = LEASE_LOST;
    this.runId = runId;
    this.lapsed = lapsed;
    if (lapsed) this.unconfirmedMs = end.unconfirmedMs;
    else this.outcome = end?.outcome;
  }
}

/**
 * `warn(message, meta)` through the `logger` option: a logger object, or a
 * function answering one at each line (createJobRunner's form); default
 * `console`. Its `warn` where it has one, else its `error`. A logger
 * that throws costs the lease nothing.
 */
function warner(option) {
  const current = option === undefined || option === null ? () => console : typeof option === 'function' ? option : () => option;
  return (message, meta) => {
    try {
      const logger = current();
      const line = typeof logger.warn === 'function' ? logger.warn : logger.error;
      line.call(logger, message, meta);
    } catch {
      /* A logger that throws must not stall supervision. */
    }
  };
}

const STOPPED = Object.freeze({ type: 'stopped' });

/* `timing`: timing.js, handed over by the entry (the browser build has no require). */
function createLeaseApi(wasm, timing) {
  const { settle, attempt, unrefTimer, clearTimer, createDeadlineTimer } = timing;
  const P = wasm.supervisorProtocol();
  const STRIDE = P.stride;
  const MAX_DELAY_MS = P.maxDelayMs;
  /* Codes and field offsets by name (host-wasm's record codec exports them). */
  const K = P.kinds;
  const [OP_RENEW, OP_RECONFIRM, OP_FAILED, OP_RECONFIRMED, OP_LOST, OP_LAPSED] = [
    K.renew, K.reconfirm, K.failed, K.reconfirmed, K.lost, K.lapsed,
  ].map((kind) => kind.code);
  /* The log messages, in the core's words (leasehold-core's lease::Notice). */
  const NOTICE = P.notices;

  function heartbeatLoop(options) {
    // Throws a TypeError/RangeError naming the option or the broken relation.
    const supervisor = new wasm.LeaseSupervisor(options);
    const { runId, owner, store } = options;
    const onReconfirm = options.onReconfirm ?? undefined;
    const onLapse = options.onLapse ?? undefined;
    const clock = options.now ?? (() => Date.now());
    const warn = warner(options.logger);
    const controller = new AbortController();
    let resolveEnded;
    const ended = new Promise((resolve) => {
      resolveEnded = resolve;
    });

    /* Set once the lease ended or the loop was stopped: answers, timers and
       receipts still on their way are ignored. */
    let over = false;
    /* One timer, for the supervisor's next deadline, and the loop's time:
       max(now(), the latest deadline a timer fired for) (timing.js). */
    const timer = createDeadlineTimer(clock, MAX_DELAY_MS, (now) => {
      if (!over) apply(supervisor.timeout(now), undefined);
    });
    const time = timer.time;
    let receiptTimer;
    let receipts = 0;

    /* Supervision is over: no timer fires, no answer is fed, and the wasm
       supervisor is freed now rather than whenever the GC finalizes it. */
    function close() {
      if (over) return;
      over = true;
      timer.disarm();
      if (receiptTimer !== undefined) clearTimer(receiptTimer);
      receiptTimer = undefined;
      supervisor.free();
    }

    function finish(end) {
      close();
      controller.abort(new LeaseLostError(runId, end));
      resolveEnded(end);
    }

    /* Executes the steps one input produced. `answered` is the store answer
       that was fed, if any: a `failed` step warns with its error, a `lost`
       step ends with its outcome. A deadline already due (a held pulse
       released by the answer) is handled at once, as a timer of 0 ms would
       be, but without waiting a turn: one follow-up always moves the core's
       deadline past `now`. */
    function apply(records, answered, followUp = true) {
      for (let b = 0; b < records.length && !over; b += STRIDE) {
        const code = records[b];
        if (code === OP_RENEW) send('heartbeat', records[b + K.renew.call], records[b + K.renew.at]);
        else if (code === OP_RECONFIRM) send('reconfirm', records[b + K.reconfirm.call], records[b + K.reconfirm.at]);
        else if (code === OP_FAILED) {
          if (records[b + K.failed.first] === 1) {
            const message = answered.kind === 'reconfirm' ? NOTICE.reconfirmFailed : NOTICE.renewalFailed;
            warn(message, { runId, owner, sentAt: records[b + K.failed.at], err: answered.error });
          }
        } else if (code === OP_RECONFIRMED) startReceipt(records[b + K.reconfirmed.unconfirmedMs], records[b + K.reconfirmed.budgetMs]);
        else if (code === OP_LOST) finish(Object.freeze({ type: 'lost', outcome: answered.outcome, at: records[b + K.lost.at] }));
        else if (code === OP_LAPSED) lapse(records[b + K.lapsed.unconfirmedMs]);
      }
      if (over) return;
      const deadline = supervisor.deadline();
      const now = time();
      if (followUp && deadline >= 0 && deadline <= now) apply(supervisor.timeout(now), undefined, false);
      else arm();
    }

    function send(kind, call, at) {
      settle(
        attempt(() => store[kind](runId, owner, at)),
        (outcome) => {
          if (!over) apply(supervisor.answered(time(), call, outcome), { kind, outcome });
        },
        (error) => {
          if (!over) apply(supervisor.raised(time(), call), { kind, error });
        },
      );
    }

    /* `onReconfirm`, bounded by the budget the renewal left: a
       receipt that throws, rejects or is still running when it is spent
       lapses the lease. A later reconfirmation replaces it. */
    function startReceipt(unconfirmedMs, budgetMs) {
      if (onReconfirm === undefined) return;
      const receipt = ++receipts;
      if (receiptTimer !== undefined) clearTimer(receiptTimer);
      const failed = (message, error) => {
        if (over || receipt !== receipts) return;
        if (receiptTimer !== undefined) clearTimer(receiptTimer);
        receiptTimer = undefined;
        warn(message, error === undefined ? { runId, owner, unconfirmedMs } : { runId, owner, unconfirmedMs, err: error });
        apply(supervisor.receiptFailed(time()), undefined);
      };
      receiptTimer = unrefTimer(() => failed(NOTICE.receiptOverran), budgetMs);
      settle(
        attempt(onReconfirm, unconfirmedMs),
        () => {
          if (over || receipt !== receipts) return;
          clearTimer(receiptTimer);
          receiptTimer = undefined;
        },
        (error) => failed(NOTICE.receiptFailed, error),
      );
    }

    /* Warn, run `onLapse(unconfirmedMs)`, then interrupt. */
    function lapse(unconfirmedMs) {
      close();
      warn(NOTICE.lapsed, { runId, owner, unconfirmedMs });
      const end = Object.freeze({ type: 'lapsed', unconfirmedMs });
      const hook = onLapse === undefined ? undefined : attempt(onLapse, unconfirmedMs);
      settle(
        hook,
        () => finish(end),
        (error) => {
          warn(NOTICE.lapseHookFailed, { runId, owner, unconfirmedMs, err: error });
          finish(end);
        },
      );
    }

    /* The timer moves whenever the supervisor's deadline changes. */
    function arm() {
      timer.arm(supervisor.deadline(), false);
    }

    for (const message of supervisor.warnings()) warn(message, { runId, owner });
    supervisor.start(time());
    arm();

    return {
      ended,
      signal: controller.signal,
      stop() {
        if (over) return;
        close();
        resolveEnded(STOPPED);
      },
    };
  }

  function runSupervised(work, options) {
    if (typeof work !== 'function') {
      throw new TypeError(`runSupervised: work must be a function, got ${work === null ? 'null' : typeof work}`);
    }
    const lease = heartbeatLoop(options);
    const output = attempt(work, lease.signal);
    return new Promise((resolve, reject) => {
      /* The work settling while the lease holds ends the loop; after the
         lease ended (its signal aborted), what the work settled to is only
         the proof that it stopped, and the answer is the lease's end. */
      const settled = (answer) => {
        if (lease.signal.aborted) lease.ended.then(resolve);
        else {
          lease.stop();
          answer();
        }
      };
      settle(
        output,
        (value) => settled(() => resolve({ type: 'finished', value })),
        (error) => settled(() => reject(error)),
      );
    });
  }

  function leaseLiveness(staleAfterMs) {
    // Throws a TypeError/RangeError naming staleAfterMs.
    const windowMs = wasm.leaseLivenessWindow(staleAfterMs);
    return (expectedOwner, context) => wasm.leaseIsAlive(windowMs, context);
  }

  return {
    heartbeatLoop,
    runSupervised,
    leaseLiveness,
    sameHostIncarnation: (expectedOwner, claimant) => wasm.sameHostIncarnation(expectedOwner, claimant),
    leasePolicy: (policy) => wasm.leasePolicy(policy),
    LEASE_LOST,
    LeaseLostError,
  };
}

module.exports = { createLeaseApi, LeaseLostError, LEASE_LOST };
