'use strict';
/* The Node.js entry (require and import alike: index.mjs re-exports this
   module, so one process holds one wasm instance). The runner's wasm module
   is compiled and instantiated synchronously on first require; the trace
   ring's, likewise, when the first trace sink is made. */
const timing = require('./timing.js');
const api = require('./runner.js').createApi(require('./node/leasehold.js'), timing);
Object.assign(api, require('./lease.js').createLeaseApi(require('./node/leasehold.js'), timing));
Object.assign(api, require('./trace.js').createTraceApi(() => require('./node/leasehold_trace.js')));
module.exports = { ...api, default: api };
