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

/*
 * Each item's AbortSignal, made without an AbortController where that is cheaper and the
 * signal is the same: Node.js 20 only (20.20: measured below). There `new
 * AbortController().signal` costs 1.7 µs, most of a short item's time: Node's
 * createAbortSignal makes an EventTarget, sets its prototype to AbortSignal.prototype and
 * then adds three properties, and V8 11.3 makes a new hidden class for each signal so made
 * (two signals never share a map: the properties' transition is not cached after a
 * prototype change), which is slow to build and leaves garbage. `Reflect.construct(
 * EventTarget, [], AbortSignal)` runs the same EventTarget constructor on an object born
 * with AbortSignal.prototype, and the same three properties (AbortSignal's own symbols,
 * read from a real signal) are then set in the same order: the same own properties, the
 * same values, one shared hidden class, ~60 ns. Such a signal is aborted by Node's own
 * abortSignal(), the function AbortController#abort calls (aborted, reason, the trusted
 * 'abort' event, onabort, signals made by AbortSignal.any from it), reached through the
 * signal's own deserialize method (the path a signal sent to a worker is aborted by, its
 * port's message): it is handed a port object of ours, whose message we deliver.
 *
 * `itemSignals()` answers `{ make(), abort(signal, reason) }`, or undefined wherever any of
 * that is not so (another runtime or version, Node's internals changed: a check at first
 * use makes a signal this way and a real one, compares them, aborts it and checks what
 * that did); callers then make an AbortController per item as before.
 */
let madeSignals; // undefined: not tried yet; null: none
function itemSignals() {
  if (madeSignals === undefined) madeSignals = fastSignals() ?? null;
  return madeSignals ?? undefined;
}

function fastSignals() {
  const p = typeof process === 'object' && process !== null ? process : undefined;
  if (p?.release?.name !== 'node' || p.versions?.bun !== undefined || p.versions?.deno !== undefined) return undefined;
  if (String(p.versions.node).split('.')[0] !== '20') return undefined;
  if (typeof AbortController !== 'function' || typeof AbortSignal !== 'function' || typeof EventTarget !== 'function') return undefined;
  try {
    const named = (keys, description) => keys.find((k) => typeof k === 'symbol' && k.description === description);
    const real = new AbortController().signal;
    const keys = Reflect.ownKeys(real);
    const kAborted = named(keys, 'kAborted');
    const kReason = named(keys, 'kReason');
    const kComposite = named(keys, 'kComposite');
    const kDeserialize = named(Object.getOwnPropertySymbols(AbortSignal.prototype), 'messaging_deserialize_symbol');
    if (kAborted === undefined || kReason === undefined || kComposite === undefined || typeof AbortSignal.prototype[kDeserialize] !== 'function') return undefined;
    // The constructors as they are now, as a real signal's are made from Node's own: a global
    // replaced later by the application (a shim EventTarget, a subclass of AbortSignal) must
    // not change what the items get.
    const Target = EventTarget;
    const Signal = AbortSignal;
    const make = () => {
      const signal = Reflect.construct(Target, [], Signal);
      signal[kAborted] = false;
      signal[kReason] = undefined;
      signal[kComposite] = false;
      return signal;
    };
    const ignore = () => undefined;
    const abort = (signal, reason) => {
      if (signal[kAborted]) return;
      const port = { onmessage: undefined, unref: ignore, close: ignore };
      signal[kDeserialize]({ aborted: false, reason: undefined, port });
      port.onmessage({ data: reason });
    };
    return signalsAlike(real, make, abort) ? { make, abort } : undefined;
  } catch {
    return undefined;
  }
}

/* Whether signals `make()` answers are like `real` (a fresh AbortController's) and `abort`
   aborts them as AbortController#abort does its own. */
function signalsAlike(real, make, abort) {
  const signal = make();
  const realKeys = Reflect.ownKeys(real);
  const keys = Reflect.ownKeys(signal);
  if (Object.getPrototypeOf(signal) !== AbortSignal.prototype || keys.length !== realKeys.length) return false;
  for (let i = 0; i < keys.length; i += 1) {
    const a = real[realKeys[i]];
    const b = signal[keys[i]];
    if (keys[i] !== realKeys[i] || typeof a !== typeof b || (typeof a !== 'object' && a !== b)) return false;
    if (a instanceof Map && !(b instanceof Map && b.size === 0 && a.size === 0 && b !== a)) return false;
  }
  if (signal.aborted !== false || signal.reason !== undefined) return false;
  signal.throwIfAborted();
  const seen = [];
  signal.addEventListener('abort', (event) => seen.push(event));
  signal.onabort = (event) => seen.push(event);
  const dependant = AbortSignal.any?.([signal]);
  const reason = new Error('check');
  abort(signal, reason);
  abort(signal, new Error('again'));
  let thrown;
  try {
    signal.throwIfAborted();
  } catch (error) {
    thrown = error;
  }
  const event = seen[0];
  return signal.aborted === true && signal.reason === reason && thrown === reason
    && seen.length === 2 && seen[1] === event && event instanceof Event && event.type === 'abort'
    && event.isTrusted === true && event.target === signal
    && (dependant === undefined || (dependant.aborted === true && dependant.reason === reason));
}

module.exports = { settle, attempt, unrefTimer, clearTimer, createDeadlineTimer, checkedSignal, itemSignals };
