// One tab of the IndexedDB queue tests. `window.lh` is leasehold/indexeddb, `window.ledger`
// records executions durably (the IndexedDB database `ledger`, store `runs`: one record per
// execution with its job, token, tab, start, and end once it ended), so that a tab that is
// closed or reloaded mid-job leaves its start behind.
//
// ?work=NAME&tab=ID&ms=N&stale=MS&concurrency=C&poll=MS&slow=K: works queue `jobs` of queue set NAME; each
// job takes N ms (or the payload's `ms`) times K, honours its signal, and answers `done by ID`.
// With &steps=fetch a job is requests one after another (no timer) instead of a sleep.
// With &ignoreAbort=1 the handler records the abort and answers anyway (the fence must refuse it).
// With &keepWorking=1 its sleep does not end at the abort: it works its full time whatever the
// signal says (an owner that has not heard of a cancel yet).
import * as lh from '../../dist/indexeddb.mjs';

const params = new URLSearchParams(location.search);
const tab = params.get('tab') ?? 'tab';

function request(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}
const ledgerDb = new Promise((resolve, reject) => {
  const open = indexedDB.open('ledger', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('runs', { keyPath: 'key', autoIncrement: true });
  open.onsuccess = () => resolve(open.result);
  open.onerror = () => reject(open.error);
});
/* Writes `record` (strict durability) and answers its key once committed. */
async function write(record) {
  const db = await ledgerDb;
  const t = db.transaction('runs', 'readwrite', { durability: 'strict' });
  const key = request(t.objectStore('runs').put(record));
  await new Promise((resolve, reject) => {
    t.oncomplete = resolve;
    t.onabort = () => reject(t.error);
  });
  return key;
}
const ledger = {
  async start(job, token) {
    const record = { set: params.get('work'), job, token, tab, start: Date.now() };
    record.key = await write(record);
    return record;
  },
  end(record, outcome, extra = {}) {
    return write({ ...record, ...extra, end: Date.now(), outcome });
  },
  async all() {
    const db = await ledgerDb;
    return request(db.transaction('runs').objectStore('runs').getAll());
  },
};

const sleep = (ms, signal) => new Promise((resolve) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => {
    clearTimeout(timer);
    resolve();
  }, { once: true });
});

window.lh = lh;
window.ledger = ledger;
window.sleep = sleep;
window.running = 0; // handlers running
window.recorded = 0; // of them, those whose start is in the ledger

const name = params.get('work');
if (name !== null) {
  const ms = Number(params.get('ms') ?? 50);
  const slow = Number(params.get('slow') ?? 1); // every job takes this many times as long
  const ignoreAbort = params.get('ignoreAbort') === '1';
  const keepWorking = params.get('keepWorking') === '1';
  window.queue = await lh.connect({ name });
  window.working = window.queue.work('jobs', async (payload, { signal, job }) => {
    window.running += 1;
    const run = await ledger.start(job.id, job.token);
    window.recorded += 1;
    try {
      if (params.get('steps') === 'fetch') {
        // Work that needs no timer: one request after another until the time is up, the signal
        // handed to each, as a handler calling an API does (network answers reach a hidden tab
        // unthrottled). `window.steps` counts the requests answered.
        const until = Date.now() + (payload?.ms ?? ms) * slow;
        try {
          while (Date.now() < until) {
            await fetch(`./tab.html?step=${Date.now()}`, { cache: 'no-store', signal }).then((r) => r.text());
            window.steps = (window.steps ?? 0) + 1;
          }
        } catch {
          /* aborted: recorded below */
        }
      } else {
        await sleep((payload?.ms ?? ms) * slow, keepWorking ? undefined : signal);
      }
      if (signal.aborted) {
        const reason = signal.reason;
        await ledger.end(run, 'aborted', { code: reason?.code, lapsed: reason?.lapsed ?? null });
        if (!ignoreAbort) throw reason;
      } else {
        await ledger.end(run, 'returned');
      }
      return `done by ${tab}`;
    } finally {
      window.recorded -= 1;
      window.running -= 1;
    }
  }, {
    concurrency: Number(params.get('concurrency') ?? 1),
    staleAfterMs: Number(params.get('stale') ?? 1000),
    pollMs: Number(params.get('poll') ?? 100),
    logger: { error() {} },
  });
}
window.ready = true;
