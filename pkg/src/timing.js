'use strict';
/*
 * What the runner glue (runner.js) and the lease glue (lease.js) both need
 * from JS: promise plumbing and one timer for a wasm state machine's next
 * deadline. The deadlines themselves are the core's.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the
 * build script wraps it as an ES module); the entries hand it to the glue.
 */

/** Hands `value` (a promise, a thenable or a plain value) to `ok`/`fail`, never synchronously. */
function settle(value, ok, fail) {
  (value instanceof Promise ? value : Promise.resolve(value)).then(ok, fail);
}

/** Calls `fn(...args)`, turning a synchronous throw into a rejection. */
function attempt(fn, ...args) {
  try {
    return fn(...args);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** `setTimeout` whose timer never keeps a Node.js process alive on its own. */
function unrefTimer(fn, delay) {
  const timer = setTimeout(fn, delay);
  if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
  return timer;
}

/**
 * One unref'd timer for a state machine's next deadline (ms on `clock`), and
 * the time inputs are stamped with.
 *
 * `time()` is max(clock(), floor), where floor is the latest deadline a timer
 * fired for: a timer that fires means its deadline has come even when the
 * clock lags or stands still (a test's fake clock), and every input after it
 * is stamped no earlier, so the next delay is measured from there rather than
 * fired at once. Delays are clamped to `maxDelayMs` (2^31 − 1: longer ones
 * would fire at once); a clamped timer fires early and `onFire` finds nothing
 * due. `onFire(now)` gets the time the firing is handled at.
 */
function createDeadlineTimer(clock, maxDelayMs, onFire) {
  let timer;
  let armedAt = -1;
  let floor = 0;
  const time = () => {
    const now = clock();
    return now > floor ? now : floor;
  };
  function fired() {
    if (armedAt > floor) floor = armedAt;
    timer = undefined;
    armedAt = -1;
    onFire(time());
  }
  return {
    time,
    /**
     * Sets the timer for `deadline` (negative: none wanted, the timer is
     * left as it is). With `onlyEarlier` (the runner) a timer set for an
     * earlier or equal deadline stays: it fires, nothing is due, and it is
     * set again for what is next, so a stream of short items costs no timer
     * calls. Without it (the lease) the timer moves to any other deadline.
     */
    arm(deadline, onlyEarlier) {
      if (deadline < 0) return;
      if (timer !== undefined && (onlyEarlier ? armedAt <= deadline : armedAt === deadline)) return;
      if (timer !== undefined) clearTimeout(timer);
      const now = time();
      const delay = Math.min(maxDelayMs, Math.max(0, deadline - now));
      armedAt = delay === maxDelayMs ? now + delay : deadline;
      timer = unrefTimer(fired, delay);
    },
    /** Clears the timer, if set. */
    disarm() {
      if (timer === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      armedAt = -1;
    },
  };
}

/* AbortSignal's own `aborted` getter and `throwIfAborted`, which checkedSignal wraps. */
const signalProto = typeof AbortSignal === 'function' ? AbortSignal.prototype : undefined;
const abortedOf = signalProto && Object.getOwnPropertyDescriptor(signalProto, 'aborted')?.get;

/**
 * Makes `signal.aborted` and `signal.throwIfAborted()` call `check()` first (on this one
 * signal, as own properties), so a handler's check sees an abort that is already due but
 * whose timer has not fired yet: `check` feeds the runner's core the clock, which may abort
 * the signal there and then. Why: after a process was frozen (SIGSTOP, a suspended machine
 * or tab) past a lease, the timers due meanwhile all fire on resume in the order they were
 * due, so a handler's own timer (a step's sleep) usually fires before the runner's deadline
 * timer, and the step would run on a signal that does not know yet that the lease lapsed.
 * Answers `signal`.
 */
function checkedSignal(signal, check) {
  if (abortedOf === undefined) return signal;
  const throwIfAborted = signalProto.throwIfAborted;
  Object.defineProperty(signal, 'aborted', {
    configurable: true,
    get() {
      check();
      return abortedOf.call(this);
    },
  });
  if (typeof throwIfAborted === 'function') {
    Object.defineProperty(signal, 'throwIfAborted', {
      configurable: true,
      writable: true,
      value() {
        check();
        return throwIfAborted.call(this);
      },
    });
  }
  return signal;
}

module.exports = { settle, attempt, unrefTimer, createDeadlineTimer, checkedSignal };
