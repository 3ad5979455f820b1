'use strict';
/* The Node.js entry (require and import alike: index.mjs re-exports this
   module, so one process holds one wasm instance). The runner's wasm module
   is compiled and instantiated synchronously on first require; the trace
   ring's, likewise, when the first trace sink is made. `init`, `initSync` and
   `initTrace` exist so that code shared with browsers runs unchanged: here
   there is nothing left for them to do. */
const timing = require('./timing.js');
const wasm = require('./leasehold_node.cjs');
const api = require('./runner.js').createApi(wasm, timing);
Object.assign(api, require('./lease.js').createLeaseApi(wasm, timing));
Object.assign(api, require('./trace.js').createTraceApi(() => require('./leasehold_trace_node.cjs')));
api.init = () => Promise.resolve();
api.initSync = () => undefined;
api.initTrace = () => Promise.resolve();
module.exports = { ...api, default: api };
