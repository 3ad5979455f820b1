'use strict';
/*
 * The JS side of the leasehold runner: plumbing between the user's callbacks
 * and the wasm `Core` (crate leasehold-wasm), which decides everything.
 *
 * What lives here, and only this: the user's functions, the claimed items by
 * slot, one AbortController per item in flight, one timer per runner, the
 * promises `tick`/`quiesce`/`dispose` answer, and the events built for
 * `onEvent`. Passes, batch bounds, concurrency, backoff, wakes, stop
 * generations and lease supervision are the core's: every completion is
 * reported with one call into wasm, and what to do next is read back as
 * records from a buffer in wasm memory (see host-wasm/src/protocol.rs).
 *
 * Crossings per item: `claimFound` when the claim answers, `performed` (or
 * `failed`) when `perform` settles. Renewals add one each.
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

/* `timing`: timing.js, handed over by the entry (the browser build has no require). */
function createApi(wasm, timing) {
  const { settle, createDeadlineTimer } = timing;
  const P = wasm.protocol();
  const { stride: STRIDE, header: HEADER, end: END, deadline: DEADLINE } = P;
  const LEN = HEADER + P.capacity * STRIDE;
  const OP_CLAIM = P.ops.claim;
  const OP_PERFORM = P.ops.perform;
  const OP_RENEW = P.ops.renew;
  const OP_ABORT = P.ops.abort;
  const OP_DROP = P.ops.drop;
  const OP_LOG = P.ops.log;
  const OP_PASS_ENDED = P.ops.passEnded;
  const OP_MORE = P.ops.more;
  const OP_EVENT = P.ops.event;
  /* Event opcodes by the seed's type strings (the core's `Event::type_name`). */
  const eventOp = (type) => OP_EVENT + P.events.indexOf(type);
  const EV_PASS_START = eventOp('pass-start');
  const EV_PASS_END = eventOp('pass-end');
  const EV_CLAIMED = eventOp('claimed');
  const EV_CLAIM_FAILED = eventOp('claim-failed');
  const EV_PERFORMED = eventOp('performed');
  const EV_ITEM_FAILED = eventOp('item-failed');
  const EV_HEARTBEAT = eventOp('heartbeat');
  const EV_HEARTBEAT_FAILED = eventOp('heartbeat-failed');
  const EV_CLAIM_LOST = eventOp('claim-lost');
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
    const sink = options.onEvent ? options.onEvent : undefined;
    const clock = options.now ?? Date.now;
    const logger = loggerOf(options.logger);
    const ptr = core.bufferPtr();

    let buf = new Float64Array(wasm.wasmMemory().buffer, ptr, LEN);
    /* Memory growth detaches the old ArrayBuffer; a detached view reads length 0. */
    const view = () => (buf.length === 0 ? (buf = new Float64Array(wasm.wasmMemory().buffer, ptr, LEN)) : buf);

    /* Per slot: the item, its generation, its controller, and the two
       settlement handlers, made once per slot rather than once per item. */
    const items = [];
    const gens = [];
    const controllers = [];
    const onDone = [];
    const onFail = [];
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

    const report = (b, f) => ({ claimed: f[b], performed: f[b + 1], failed: f[b + 2], claimLost: f[b + 3] });

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

    /* The event a record describes, or undefined for one this glue does not know.
       The per-item events come first: they are most of the records. */
    function event(f, b) {
      const code = f[b];
      const at = f[b + 1];
      switch (code) {
        case EV_CLAIMED:
          return { type: 'claimed', name, at, item: f[b + 2] };
        case EV_PERFORMED:
          return { type: 'performed', name, at, item: f[b + 2], durationMs: f[b + 3] };
        case EV_HEARTBEAT:
          return { type: 'heartbeat', name, at, item: f[b + 2] };
        case EV_PASS_START:
          return { type: 'pass-start', name, at };
        case EV_PASS_END:
          return { type: 'pass-end', name, at, report: report(b + 2, f), nextDelayMs: f[b + 6] };
        case EV_CLAIM_FAILED:
          return { type: 'claim-failed', name, at, error: errors[f[b + 2]] };
        case EV_ITEM_FAILED:
          return { type: 'item-failed', name, at, item: f[b + 2], error: errors[f[b + 3]] };
        case EV_HEARTBEAT_FAILED:
          return { type: 'heartbeat-failed', name, at, item: f[b + 2], error: errors[f[b + 3]] };
        case EV_CLAIM_LOST:
          return f[b + 3] === 1
            ? { type: 'claim-lost', name, at, item: f[b + 2], lapsed: true, unconfirmedMs: f[b + 4] }
            : { type: 'claim-lost', name, at, item: f[b + 2], lapsed: false };
        default:
          return undefined;
      }
    }

    function startClaim(at) {
      let answer;
      try {
        answer = claim(at);
      } catch (error) {
        answer = Promise.reject(error);
      }
      settle(answer, onClaimed, onClaimFailed);
    }

    function onClaimed(item) {
      const now = time();
      if (item === null || item === undefined) {
        core.claimEmpty(now);
      } else {
        const slot = core.claimFound(now);
        if (slot >= 0) items[slot] = item;
      }
      run();
    }

    function onClaimFailed(error) {
      core.claimFailed(time(), errors.push(error) - 1);
      run();
    }

    function startPerform(slot, gen) {
      if (onDone[slot] === undefined) {
        onDone[slot] = () => performed(slot);
        onFail[slot] = (error) => failed(slot, error);
      }
      gens[slot] = gen;
      const controller = new AbortController();
      controllers[slot] = controller;
      let outcome;
      try {
        outcome = perform(items[slot], controller.signal);
      } catch (error) {
        outcome = Promise.reject(error);
      }
      settle(outcome, onDone[slot], onFail[slot]);
    }

    function performed(slot) {
      items[slot] = undefined;
      controllers[slot] = undefined;
      core.performed(time(), slot, gens[slot]);
      run();
    }

    function failed(slot, error) {
      items[slot] = undefined;
      controllers[slot] = undefined;
      core.failed(time(), slot, gens[slot], errors.push(error) - 1);
      run();
    }

    function startRenewal(slot, gen, call, at) {
      let answer;
      try {
        answer = heartbeat(items[slot], at);
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

    function abort(slot, gen, lapsed) {
      const controller = controllers[slot];
      if (controller !== undefined && gens[slot] === gen) {
        controller.abort(new JobClaimLostError(name, lapsed));
      }
    }

    function passEnded(pass, b, f) {
      const waiter = waiters.get(pass);
      if (waiter === undefined) return;
      waiters.delete(pass);
      waiter.resolve(report(b, f));
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
          if (code === OP_PERFORM) startPerform(f[b + 1], f[b + 2]);
          else if (code === OP_CLAIM) startClaim(f[b + 1]);
          else if (code >= OP_EVENT) {
            if (sink !== undefined) emit(event(f, b));
          } else if (code === OP_PASS_ENDED) passEnded(f[b + 1], b + 2, f);
          else if (code === OP_RENEW) startRenewal(f[b + 1], f[b + 2], f[b + 3], f[b + 4]);
          else if (code === OP_ABORT) abort(f[b + 1], f[b + 2], f[b + 3] === 1);
          else if (code === OP_LOG) log(f[b + 1], errors[f[b + 2]]);
          else if (code === OP_MORE) more = true;
          else if (code === OP_DROP) {
            items[f[b + 1]] = undefined;
            controllers[f[b + 1]] = undefined;
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
