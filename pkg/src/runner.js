'use strict';
/*
 * The JS side of the leasehold runner: plumbing between the user's callbacks
 * and the wasm `Core` (crate leasehold-wasm), which decides everything.
 *
 * What lives here, and only this: the user's functions, the claimed items by
 * slot, one AbortSignal per item in flight (timing.js itemSignals, or an
 * AbortController), one timer per runner, the
 * promises `tick`/`quiesce`/`dispose` answer, and the events built for
 * `onEvent`. Passes, batch bounds, concurrency, backoff, wakes, stop
 * generations and lease supervision are the core's: every completion is
 * reported with one call into wasm, and what to do next is read back as
 * records from a buffer in wasm memory (see host-wasm/src/protocol.rs).
 *
 * Crossings per item: `claimFound` when the claim answers, `performed` (or
 * `failed`, or `lost`) when `perform` settles; an item whose outcome comes later
 * (OUTCOME_LATER) `detached` then, and its end once more. Renewals add one each.
 * Before each of the two the glue reads, from the buffer's header, whether the
 * core would read the answer's time (`claimTime`, `settleTime`, rewritten by
 * every input): where it would not (one worker without heartbeat or trace
 * sink; in a pool, most answers) no clock is read, which in Node.js costs as
 * much as a crossing.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the
 * build script wraps it as an ES module).
 */

const JOB_CLAIM_LOST = 'CLAIM_LOST';

/**
 * The reason an item's signal is aborted with: the claim changed hands
 * (a renewal answered false) or lapsed (renewals stopped confirming in time).
 */
class JobClaimLostError extends Error {
  constructor(job, lapsed = false) {
    super(
      lapsed
        ? `The claim ${job} held lapsed: its renewals stopped confirming before the lease went stale.`
        : `Another process took over the work ${job} had claimed.`,
    );
    this.job = job;
    this.name = 'JobClaimLostError';
    this.code = JOB_CLAIM_LOST;
    this.lapsed = lapsed;
  }
}

/*
 * An internal option (a registered symbol, so no public name and no wasm option):
 * `options[ABORT_ITEM] = (item, reason) => void` makes the runner call it where it would
 * abort an item's signal, and call `perform(item, checkLease)` with no signal, so no
 * AbortController is made per item. For glue that keeps its own per-item abort (the job
 * queues' work(), which makes the handler's signal only when the handler reads it):
 * `checkLease()` is what that signal's checks call first (timing.js `checkedSignal`).
 */
const ABORT_ITEM = Symbol.for('leasehold.runner.abortItem');
/*
 * An internal answer (a registered symbol, no public name): a `perform` that resolves to
 * it reports its item lost, not performed: counted `claimLost` and traced `claim-lost`.
 * For glue that writes its own outcomes (the job queues' work()), whose job was cancelled
 * under it or whose write the store's fence refused.
 */
const ITEM_LOST = Symbol.for('leasehold.runner.itemLost');
/*
 * An internal answer (a registered symbol): a `perform` that resolves to an object holding
 * a promise under it frees its slot for the next claim at once, and its item is counted when
 * that promise settles: resolved (performed, or lost for ITEM_LOST) or rejected (failed with
 * the reason). For glue whose outcome write is slower than its work (the job queues).
 */
const OUTCOME_LATER = Symbol.for('leasehold.runner.outcomeLater');
/*
 * An internal method (a registered symbol): `runner[CHECK_LEASE]()` hands the core the clock
 * when it has passed the core's next deadline (see checkLease), so a lapse due is reported
 * there and then. For glue whose handler signals read the clock (the IndexedDB queue's).
 */
const CHECK_LEASE = Symbol.for('leasehold.runner.checkLease');
/* What a slot's `controller` holds for an item in flight under ABORT_ITEM. */
const HOOKED = Object.freeze({});

const IDLE = Object.freeze({ claimed: 0, performed: 0, failed: 0, claimLost: 0 });
const noop = () => undefined;
const consoleLogger = () => console;

/* `logger` as the reference takes it (a function answering the logger at
   each line), or the logger itself (`console`, a pino or winston instance):
   either way a function answering the logger. Checked by the core's options
   reader (an object must have an `error` method). */
function loggerOf(option) {
  if (typeof option === 'function') return option;
  if (option === undefined || option === null) return consoleLogger;
  return () => option;
}

/* A report's four counts, in the order the record codec writes them from slot `o`. */
const reportAt = (f, o) => ({ claimed: f[o], performed: f[o + 1], failed: f[o + 2], claimLost: f[o + 3] });

/*
 * The core's event listing (protocol().eventKinds: `[{ type, code, fields:
 * [[name, offset, kind]] }]`) by type: `{ code, [field]: offset }`.
 */
function eventTable(kinds) {
  const table = {};
  for (const kind of kinds) {
    const entry = { code: kind.code };
    for (const [field, offset] of kind.fields) entry[field] = offset;
    table[kind.type] = entry;
  }
  return table;
}

/*
 * Checks, once at load, that the event objects `event(f, b)` builds are the
 * core's listing: for each kind, a record of distinct numbers built into an
 * event must carry exactly the listed fields, each read from its listed
 * slot. The builders are object literals (one allocation per event, the
 * runner's hot path with a sink); this keeps them from drifting from the
 * listing. Throws naming the kind that drifted.
 */
function checkEvents(kinds, event) {
  for (const kind of kinds) {
    const f = new Float64Array(16);
    for (let i = 1; i < f.length; i += 1) f[i] = 100 + i;
    f[0] = kind.code;
    const lapsed = kind.fields.find(([, , how]) => how === 'flag');
    if (lapsed !== undefined) f[lapsed[1]] = 1;
    const e = event(f, 0);
    const want = ['type', 'name', ...kind.fields.map(([field]) => field)];
    const fieldsMatch = e !== undefined && e.type === kind.type && Object.keys(e).join() === want.join();
    const slotsMatch = fieldsMatch && kind.fields.every(([field, offset, how]) => {
      if (how === 'number' || how === 'whenLapsed') return e[field] === f[offset];
      if (how === 'report') return e[field].claimed === f[offset] && e[field].claimLost === f[offset + 3];
      if (how === 'flag') return e[field] === true;
      return true;
    });
    if (!slotsMatch) throw new Error(`leasehold: the runner glue builds '${kind.type}' events unlike the core's listing`);
  }
}

/* One slot of a runner's pool: the item in it, its generation, its abort
   (an AbortController, the item's AbortSignal where timing.js itemSignals makes
   them, HOOKED, or undefined between items), and the two
   handlers its perform settles through, made once per slot. */
class Slot {
  constructor(index, performed, failed) {
    this.index = index;
    this.item = undefined;
    this.gen = 0;
    this.controller = undefined;
    this.done = (value) => performed(this, value);
    this.fail = (error) => failed(this, error);
  }
}

/* `timing`: timing.js, handed over by the entry (the browser build has no require). */
function createApi(wasm, timing) {
  const { settle, createDeadlineTimer } = timing;
  /* Each item's signal made and aborted without an AbortController where that is cheaper
     (Node.js 20: timing.js itemSignals), else undefined: an AbortController per item. */
  const signals = typeof timing.itemSignals === 'function' ? timing.itemSignals() : undefined;
  const P = wasm.protocol();
  const { stride: STRIDE, header: HEADER, end: END, deadline: DEADLINE, claimTime: CLAIM_TIME, settleTime: SETTLE_TIME } = P;
  const LEN = HEADER + P.capacity * STRIDE;
  /* Every code and field offset by name, read once here (host-wasm's record
     codec exports them): `K.renew.at` is where a renew record keeps its time. */
  const K = P.kinds;
  const { code: OP_CLAIM, at: CLAIM_AT } = K.claim;
  const { code: OP_PERFORM, slot: PERFORM_SLOT, gen: PERFORM_GEN } = K.perform;
  const { code: OP_RENEW, slot: RENEW_SLOT, gen: RENEW_GEN, call: RENEW_CALL, at: RENEW_AT } = K.renew;
  const { code: OP_ABORT, slot: ABORT_SLOT, gen: ABORT_GEN, lapsed: ABORT_LAPSED } = K.abort;
  const { code: OP_DROP, slot: DROP_SLOT } = K.drop;
  const { code: OP_LOG, kind: LOG_KIND, token: LOG_TOKEN } = K.log;
  const { code: OP_PASS_ENDED, pass: PASS_ENDED_PASS, claimed: PASS_ENDED_REPORT } = K.passEnded;
  const { code: OP_MORE } = K.more;
  const OP_EVENT = P.ops.event;
  /* Each event kind's code and field offsets, by type and field name. */
  const E = eventTable(P.eventKinds);
  const { code: EV_PASS_START, at: PASS_START_AT } = E['pass-start'];
  const { code: EV_PASS_END, at: PASS_END_AT, report: PASS_END_REPORT, nextDelayMs: PASS_END_NEXT } = E['pass-end'];
  const { code: EV_CLAIMED, at: CLAIMED_AT, item: CLAIMED_ITEM } = E.claimed;
  const { code: EV_CLAIM_FAILED, at: CLAIM_FAILED_AT, error: CLAIM_FAILED_ERROR } = E['claim-failed'];
  const { code: EV_PERFORMED, at: PERFORMED_AT, item: PERFORMED_ITEM, durationMs: PERFORMED_DURATION } = E.performed;
  const { code: EV_ITEM_FAILED, at: ITEM_FAILED_AT, item: ITEM_FAILED_ITEM, error: ITEM_FAILED_ERROR } = E['item-failed'];
  const { code: EV_HEARTBEAT, at: HEARTBEAT_AT, item: HEARTBEAT_ITEM } = E.heartbeat;
  const { code: EV_HEARTBEAT_FAILED, at: HEARTBEAT_FAILED_AT, item: HEARTBEAT_FAILED_ITEM, error: HEARTBEAT_FAILED_ERROR } = E['heartbeat-failed'];
  const {
    code: EV_CLAIM_LOST, at: CLAIM_LOST_AT, item: CLAIM_LOST_ITEM, lapsed: CLAIM_LOST_LAPSED, unconfirmedMs: CLAIM_LOST_UNCONFIRMED,
  } = E['claim-lost'];

  /* The event a record of the runner `name` describes, or undefined for one
     this glue does not know; `errors` holds the errors of the drain in
     progress, which `error` slots index. The per-item events come first:
     they are most of the records. */
  function eventOf(name, errors, f, b) {
    switch (f[b]) {
      case EV_CLAIMED:
        return { type: 'claimed', name, at: f[b + CLAIMED_AT], item: f[b + CLAIMED_ITEM] };
      case EV_PERFORMED:
        return { type: 'performed', name, at: f[b + PERFORMED_AT], item: f[b + PERFORMED_ITEM], durationMs: f[b + PERFORMED_DURATION] };
      case EV_HEARTBEAT:
        return { type: 'heartbeat', name, at: f[b + HEARTBEAT_AT], item: f[b + HEARTBEAT_ITEM] };
      case EV_PASS_START:
        return { type: 'pass-start', name, at: f[b + PASS_START_AT] };
      case EV_PASS_END:
        return { type: 'pass-end', name, at: f[b + PASS_END_AT], report: reportAt(f, b + PASS_END_REPORT), nextDelayMs: f[b + PASS_END_NEXT] };
      case EV_CLAIM_FAILED:
        return { type: 'claim-failed', name, at: f[b + CLAIM_FAILED_AT], error: errors[f[b + CLAIM_FAILED_ERROR]] };
      case EV_ITEM_FAILED:
        return { type: 'item-failed', name, at: f[b + ITEM_FAILED_AT], item: f[b + ITEM_FAILED_ITEM], error: errors[f[b + ITEM_FAILED_ERROR]] };
      case EV_HEARTBEAT_FAILED:
        return { type: 'heartbeat-failed', name, at: f[b + HEARTBEAT_FAILED_AT], item: f[b + HEARTBEAT_FAILED_ITEM], error: errors[f[b + HEARTBEAT_FAILED_ERROR]] };
      case EV_CLAIM_LOST:
        return f[b + CLAIM_LOST_LAPSED] === 1
          ? { type: 'claim-lost', name, at: f[b + CLAIM_LOST_AT], item: f[b + CLAIM_LOST_ITEM], lapsed: true, unconfirmedMs: f[b + CLAIM_LOST_UNCONFIRMED] }
          : { type: 'claim-lost', name, at: f[b + CLAIM_LOST_AT], item: f[b + CLAIM_LOST_ITEM], lapsed: false };
      default:
        return undefined;
    }
  }
  checkEvents(P.eventKinds, (f, b) => eventOf('check', [], f, b));
  const MAX_DELAY_MS = P.maxDelayMs;

  function jobBackoff(intervalMs) {
    return wasm.jobBackoff(intervalMs);
  }

  function createJobRunner(options) {
    // Throws a TypeError/RangeError naming the option; reads every option's kind.
    const core = new wasm.Core(options);
    const name = options.name;
    const claim = options.claim;
    const perform = options.perform;
    const heartbeat = options.heartbeat;
    const abortItem = typeof options[ABORT_ITEM] === 'function' ? options[ABORT_ITEM] : undefined;
    const sink = options.onEvent ? options.onEvent : undefined;
    const clock = options.now ?? Date.now;
    const logger = loggerOf(options.logger);
    const ptr = core.bufferPtr();

    let buf = new Float64Array(wasm.wasmMemory().buffer, ptr, LEN);
    /* Memory growth detaches the old ArrayBuffer; a detached view reads length 0. */
    const view = () => (buf.length === 0 ? (buf = new Float64Array(wasm.wasmMemory().buffer, ptr, LEN)) : buf);

    /* The pool's slots by index, each made when the core first names it and
       reused item after item, so an item allocates no closure. */
    const slots = [];
    const slotAt = (index) => slots[index] ?? (slots[index] = new Slot(index, performed, failed));
    /* Errors thrown by user code during one drain, named by index in records. */
    const errors = [];
    /* Pass number -> { promise, resolve } for the passes someone waits on. */
    const waiters = new Map();

    let draining = false;
    let more = false;
    /* One timer per runner, for the core's next deadline, and the runner's
       time: max(now(), the latest deadline a timer fired for) (timing.js). */
    const timer = createDeadlineTimer(clock, MAX_DELAY_MS, (now) => {
      core.timeout(now);
      run();
    });
    const time = timer.time;
    /* The `at` of the claim in flight: the time of an answer whose time the
       core would not read (the header's CLAIM_TIME or SETTLE_TIME is 0). */
    let claimAt = 0;

    function emit(event) {
      if (event === undefined) return;
      try {
        sink(event);
      } catch {
        /* An observer that throws is the observer's defect, not the job's. */
      }
    }

    function log(code, error) {
      try {
        logger().error(`${name} ${P.logMessages[code]}`, { module: name, err: error });
      } catch {
        /* A logger that throws must not stall the pass that called it. */
      }
    }

    function startClaim(at) {
      claimAt = at;
      let answer;
      try {
        answer = claim(at);
      } catch (error) {
        answer = Promise.reject(error);
      }
      settle(answer, onClaimed, onClaimFailed);
    }

    function onClaimed(item) {
      if (item === null || item === undefined) {
        core.claimEmpty(time());
      } else {
        // A clock reading is a call into C++: skipped where the core says it
        // would not read it (one worker, no heartbeat, no trace sink; or, in
        // a pool, no other worker waiting for an item).
        const slot = core.claimFound(view()[CLAIM_TIME] === 1 ? time() : claimAt);
        if (slot >= 0) slotAt(slot).item = item;
      }
      run();
    }

    function onClaimFailed(error) {
      core.claimFailed(time(), errors.push(error) - 1);
      run();
    }

    function startPerform(index, gen) {
      const slot = slotAt(index);
      slot.gen = gen;
      let outcome;
      try {
        if (abortItem === undefined && signals !== undefined) {
          const signal = signals.make();
          slot.controller = signal;
          outcome = perform(slot.item, signal);
        } else if (abortItem === undefined) {
          const controller = new AbortController();
          slot.controller = controller;
          // This signal learns of a lapse when the timer fires. Checking the clock on
          // each read (timing.js checkedSignal, as the queues' signals do) costs a third
          // of the throughput of short items with a heartbeat (defining its properties).
          outcome = perform(slot.item, controller.signal);
        } else {
          slot.controller = HOOKED;
          outcome = perform(slot.item, checkLease);
        }
      } catch (error) {
        outcome = Promise.reject(error);
      }
      settle(outcome, slot.done, slot.fail);
    }

    function performed(slot, value) {
      slot.item = undefined;
      slot.controller = undefined;
      if (typeof value === 'object' && value !== null && OUTCOME_LATER in value) later(slot, value[OUTCOME_LATER]);
      else if (value === ITEM_LOST) core.lost(time(), slot.index, slot.gen);
      // Skipped clock reading: a settle while a claim is in flight (a pool).
      else core.performed(view()[SETTLE_TIME] === 1 ? time() : claimAt, slot.index, slot.gen);
      run();
    }

    /* Detaches the slot's item, counted once `outcome` settles (see OUTCOME_LATER). */
    function later(slot, outcome) {
      const id = core.detached(time(), slot.index, slot.gen);
      if (id < 0) return settle(outcome, noop, noop); // no longer the core's to count
      settle(
        outcome,
        (value) => {
          if (value === ITEM_LOST) core.detachedLost(time(), id);
          else core.detachedPerformed(time(), id);
          run();
        },
        (error) => {
          core.detachedFailed(time(), id, errors.push(error) - 1);
          run();
        },
      );
    }

    function failed(slot, error) {
      slot.item = undefined;
      slot.controller = undefined;
      core.failed(time(), slot.index, slot.gen, errors.push(error) - 1);
      run();
    }

    function startRenewal(slot, gen, call, at) {
      let answer;
      try {
        answer = heartbeat(slotAt(slot).item, at);
      } catch (error) {
        answer = Promise.reject(error);
      }
      settle(
        answer,
        (landed) => {
          core.renewed(time(), slot, gen, call, !!landed);
          run();
        },
        (error) => {
          core.renewFailed(time(), slot, gen, call, errors.push(error) - 1);
          run();
        },
      );
    }

    /* A handler checks its signal: the core's deadline, if the clock has passed it,
       is handled now rather than when the timer fires. The timer may fire later than
       the handler runs: after the process was frozen, every timer due meanwhile fires
       at once in the order it was due, a handler's step before the lapse it should
       have seen. The core decides as the timer would have it decide (a lapse aborts
       the item there and then, before the check answers). Inside a drain (the
       synchronous part of a handler its perform record started: a busy loop or a huge
       JSON.parse can keep it past the lease) the records the core appends are left to
       the drain, in order, but for the aborts, which are executed at once and taken
       out (code 0, which the drain skips). */
    function checkLease() {
      const f = view();
      const deadline = f[DEADLINE];
      if (deadline < 0) return;
      const now = time();
      if (now < deadline) return;
      if (!draining) {
        core.timeout(now);
        run();
        return;
      }
      const from = f[END];
      core.timeout(now);
      const g = view();
      for (let r = from; r < g[END]; r += 1) {
        const b = HEADER + r * STRIDE;
        if (g[b] !== OP_ABORT) continue;
        g[b] = 0;
        abort(g[b + ABORT_SLOT], g[b + ABORT_GEN], g[b + ABORT_LAPSED] === 1);
      }
    }

    function abort(index, gen, lapsed) {
      const slot = slotAt(index);
      const controller = slot.controller;
      if (controller === undefined || slot.gen !== gen) return;
      const reason = new JobClaimLostError(name, lapsed);
      if (controller === HOOKED) abortItem(slot.item, reason);
      else if (signals !== undefined) signals.abort(controller, reason);
      else controller.abort(reason);
    }

    function passEnded(pass, b, f) {
      const waiter = waiters.get(pass);
      if (waiter === undefined) return;
      waiters.delete(pass);
      waiter.resolve(reportAt(f, b));
    }

    function waitFor(pass) {
      let waiter = waiters.get(pass);
      if (waiter === undefined) {
        let resolve;
        const promise = new Promise((r) => {
          resolve = r;
        });
        waiter = { promise, resolve };
        waiters.set(pass, waiter);
      }
      return waiter.promise;
    }

    /* Executes the records the core wrote. Callbacks that call back into the
       runner (a `perform` that wakes it) append records behind these, which
       this same loop then reads: the core's order, and no recursion. */
    function run() {
      if (draining) return;
      draining = true;
      try {
        let r = 0;
        for (;;) {
          const f = view();
          if (r >= f[END]) {
            if (!more) break;
            more = false;
            r = 0;
            f[END] = 0;
            core.drain();
            continue;
          }
          const b = HEADER + r * STRIDE;
          r += 1;
          const code = f[b];
          if (code === OP_PERFORM) startPerform(f[b + PERFORM_SLOT], f[b + PERFORM_GEN]);
          else if (code === OP_CLAIM) startClaim(f[b + CLAIM_AT]);
          else if (code >= OP_EVENT) {
            if (sink !== undefined) emit(eventOf(name, errors, f, b));
          } else if (code === OP_PASS_ENDED) passEnded(f[b + PASS_ENDED_PASS], b + PASS_ENDED_REPORT, f);
          else if (code === OP_RENEW) startRenewal(f[b + RENEW_SLOT], f[b + RENEW_GEN], f[b + RENEW_CALL], f[b + RENEW_AT]);
          else if (code === OP_ABORT) abort(f[b + ABORT_SLOT], f[b + ABORT_GEN], f[b + ABORT_LAPSED] === 1);
          else if (code === OP_LOG) log(f[b + LOG_KIND], errors[f[b + LOG_TOKEN]]);
          else if (code === OP_MORE) more = true;
          else if (code === OP_DROP) {
            const slot = slotAt(f[b + DROP_SLOT]);
            slot.item = undefined;
            slot.controller = undefined;
          }
        }
      } finally {
        const f = view();
        f[END] = 0;
        if (errors.length !== 0) errors.length = 0;
        draining = false;
        arm(f[DEADLINE]);
      }
    }

    /* The timer is moved only when a deadline comes earlier than the one it
       is set for; when the deadline goes later or away (the item it was for
       settled), the timer stays: it fires, the core finds nothing due, and it
       is set again for whatever is next. So a stream of short items costs no
       timer calls. A poll loop is never the reason a process stays alive. */
    function arm(at) {
      timer.arm(at, true);
    }

    /* After stop or dispose with nothing left to wait for, the timer goes. */
    function disarm() {
      if (view()[DEADLINE] < 0) timer.disarm();
    }

    const runner = {
      name,
      start() {
        core.start(time());
        run();
      },
      tick() {
        const pass = core.tick(time());
        const answer = pass < 0 ? Promise.resolve(IDLE) : waitFor(pass);
        run();
        return answer;
      },
      wake() {
        core.wake(time());
        run();
      },
      stop() {
        core.stop();
        run();
        disarm();
      },
      quiesce() {
        const pass = core.quiesce();
        run();
        disarm();
        return pass < 0 ? Promise.resolve() : waitFor(pass).then(noop);
      },
      dispose() {
        const pass = core.dispose();
        run();
        disarm();
        return pass < 0 ? Promise.resolve() : waitFor(pass).then(noop);
      },
    };
    runner[CHECK_LEASE] = checkLease;
    /* `await using runner = createJobRunner(…)` disposes it at the end of the
       scope, where the runtime knows the symbol. */
    if (typeof Symbol.asyncDispose === 'symbol') runner[Symbol.asyncDispose] = runner.dispose;
    return runner;
  }

  return {
    createJobRunner,
    jobBackoff,
    DEFAULT_JOB_BATCH_LIMIT: P.defaultBatchLimit,
    JOB_CLAIM_LOST,
    JobClaimLostError,
  };
}

/* The error class and its code are the same objects whether or not the wasm is loaded yet. */
module.exports = { createApi, JobClaimLostError, JOB_CLAIM_LOST };
