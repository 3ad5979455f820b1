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

/*
 * Timers a hidden browser tab does not hold back. Chrome wakes a hidden page's timers at most
 * once a second, and once the page has been hidden 5 minutes its chained timers (a timer set by
 * a timer, as a runner's next renewal is) once a minute, while the page's other work (network
 * answers, IndexedDB events) goes on at once. A runner whose renewals and lapse waited a minute
 * let a lease of 30 seconds go stale under a handler that was still working, and another tab
 * took the job over. A dedicated worker's timers are not held back: in a page (a `document`
 * and `Worker`), the timers below run in one small worker, made from a Blob, that posts back
 * when each is due. Where none can be started (a Content-Security-Policy whose worker-src or
 * script-src leaves out blob:), and outside pages (Node.js, workers), they are setTimeout.
 */
const CLOCK_SOURCE = 'const t=new Map();onmessage=(e)=>{const[id,ms]=e.data;if(ms<0){clearTimeout(t.get(id));t.delete(id)}else t.set(id,setTimeout(()=>{t.delete(id);postMessage(id)},ms))}';
let pageClock; // undefined: not tried yet; null: none (setTimeout)

/** The page's worker clock, started on first use, or null where there is none. */
function workerClock() {
  if (pageClock !== undefined) return pageClock;
  pageClock = null;
  const g = globalThis;
  if (typeof g.document !== 'object' || typeof g.Worker !== 'function' || typeof g.Blob !== 'function' || typeof g.URL?.createObjectURL !== 'function') return null;
  let worker;
  try {
    worker = new g.Worker(g.URL.createObjectURL(new g.Blob([CLOCK_SOURCE], { type: 'text/javascript' })));
  } catch {
    return null; // refused at once (a Content-Security-Policy)
  }
  const armed = new Map(); // id -> the handle
  let lastId = 0;
  worker.onmessage = (event) => {
    const handle = armed.get(event.data);
    if (handle === undefined) return;
    armed.delete(event.data);
    handle.fn();
  };
  // Refused once loading (a Content-Security-Policy, in some browsers): the timers it holds
  // move to setTimeout, due when they were; later ones are setTimeout from the start.
  worker.onerror = (event) => {
    event.preventDefault?.();
    pageClock = null;
    worker.terminate();
    for (const handle of armed.values()) {
      handle.timeout = setTimeout(handle.fn, Math.max(0, handle.due - Date.now()));
    }
    armed.clear();
  };
  pageClock = {
    set(fn, delay) {
      const handle = { id: ++lastId, fn, due: Date.now() + delay, timeout: undefined };
      armed.set(handle.id, handle);
      worker.postMessage([handle.id, delay]);
      return handle;
    },
    clear(handle) {
      if (armed.delete(handle.id)) worker.postMessage([handle.id, -1]);
    },
  };
  return pageClock;
}

/**
 * `setTimeout` whose timer never keeps a Node.js process alive on its own, and that a hidden
 * browser tab does not hold back (the page's worker clock, above). Cleared with `clearTimer`.
 */
function unrefTimer(fn, delay) {
  const clock = workerClock();
  if (clock !== null) return clock.set(fn, delay);
  const timer = setTimeout(fn, delay);
  if (typeof timer === 'object' && typeof timer.unref === 'function') timer.unref();
  return timer;
}

/** Clears a timer `unrefTimer` answered. */
function clearTimer(timer) {
  if (timer !== null && typeof timer === 'object' && 'fn' in timer) {
    if (timer.timeout !== undefined) clearTimeout(timer.timeout);
    else pageClock?.clear(timer);
  } else {
    clearTimeout(timer);
  }
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
      if (timer !== undefined) clearTimer(timer);
      const now = time();
      const delay = Math.min(maxDelayMs, Math.max(0, deadline - now));
      armedAt = delay === maxDelayMs ? now + delay : deadline;
      timer = unrefTimer(fired, delay);
    },
    /** Clears the timer, if set. */
    disarm() {
      if (timer === undefined) return;
      clearTimer(timer);
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

module.exports = { settle, attempt, unrefTimer, clearTimer, createDeadlineTimer, checkedSignal };
