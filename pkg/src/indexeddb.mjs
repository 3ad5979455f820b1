/* `leasehold/indexeddb` in browsers and workers: a job queue over the origin's IndexedDB,
   worked by the runner of `leasehold` (its entry, browser.mjs: one wasm instance for both).
   `connect()` runs `init()` first; a page whose bundler needs the .wasm URL calls
   `init(url)` itself before. Importing this module fetches nothing. */
import { init, createJobRunner, leaseLiveness } from './browser.mjs';
import * as wasm from './leasehold_web.mjs';
import * as input from './idb-input.mjs';
import * as open from './idb-open.mjs';
import * as store from './idb-store.mjs';
import { createIndexedDbApi } from './idb-queue.mjs';
import { checkedSignal } from './timing.mjs';

const api = createIndexedDbApi({
  init: () => init(),
  createJobRunner,
  leaseLiveness,
  checkedSignal,
  queueDefaults: () => wasm.queueDefaults(),
  retryDelayMs: (attempt) => wasm.retryDelayMs(attempt),
  recoveryDelayMs: (failures) => wasm.recoveryDelayMs(failures),
  claimAgeToleranceMs: (staleAfterMs, heartbeatEveryMs) => wasm.claimAgeToleranceMs(staleAfterMs, heartbeatEveryMs),
  leaseWatch: () => new wasm.LeaseWatch(),
  input,
  open,
  store,
});

export const { connect, QueueError, QueueUnavailableError, JobCancelledError } = api;
