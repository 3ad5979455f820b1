'use strict';
/* `leasehold/indexeddb` in Node.js (require and import alike: indexeddb-node.mjs re-exports
   this module). Node.js has no IndexedDB of its own: this entry serves code that provides a
   global `indexedDB` (the `fake-indexeddb` package, in tests) and shares the runner's wasm
   instance with `leasehold`. Browsers get indexeddb.mjs. */
const leasehold = require('./index.cjs');
const wasm = require('./leasehold_node.cjs');

module.exports = require('./idb-queue.js').createIndexedDbApi({
  init: () => Promise.resolve(),
  createJobRunner: leasehold.createJobRunner,
  leaseLiveness: leasehold.leaseLiveness,
  checkedSignal: require('./timing.js').checkedSignal,
  queueDefaults: wasm.queueDefaults,
  retryDelayMs: wasm.retryDelayMs,
  recoveryDelayMs: wasm.recoveryDelayMs,
  claimAgeToleranceMs: wasm.claimAgeToleranceMs,
  leaseWatch: () => new wasm.LeaseWatch(),
  input: require('./idb-input.js'),
  open: require('./idb-open.js'),
  store: require('./idb-store.js'),
});
