// Shared by the package's tests. The package is imported by its own name (a package may
// import itself through its "exports"), so the tests load what a user loads: pkg/dist,
// built by scripts/build-pkg.sh.
export * from 'leasehold';

/** A logger that keeps what it was given. */
export function recorder() {
  const lines = [];
  return { lines, logger: () => ({ error: (message, meta) => lines.push({ message, meta }) }) };
}

export const silent = () => ({ error() {} });

/** An in-memory queue of `n` items `{ id }`: `claim` answers the next one, then `null`. */
export function queue(n) {
  let next = 0;
  const q = {
    claims: 0,
    claim: async () => {
      q.claims += 1;
      return next < n ? { id: next++ } : null;
    },
  };
  return q;
}

/** Resolves once every promise reaction queued so far has run. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Virtual time for one test: setTimeout, clearTimeout and Date are node:test's mocks,
 * starting at `start` ms. `advance(ms)` moves the clock 1 ms at a time, letting promise
 * reactions run after each step, so timers set by asynchronous chains fire on time.
 * Create runners after calling this: they read `Date.now` when created.
 */
export function virtualTime(t, start = 1000) {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: start });
  return {
    now: () => Date.now(),
    async advance(ms) {
      await settle();
      for (let i = 0; i < ms; i += 1) {
        t.mock.timers.tick(1);
        await settle();
      }
    },
    /** Advances until `done()` is true, at most `limit` ms; answers the time taken. */
    async until(done, limit = 60_000) {
      const from = Date.now();
      await settle();
      while (!done()) {
        if (Date.now() - from >= limit) throw new Error(`not done after ${limit} virtual ms`);
        t.mock.timers.tick(1);
        await settle();
      }
      return Date.now() - from;
    },
  };
}

/** A promise with its resolve/reject outside. */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Minimal options, with `over` merged in. */
export const base = (over) => ({ name: 'test', intervalMs: 1000, staleAfterMs: 30_000, logger: silent, ...over });
