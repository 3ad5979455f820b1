'use strict';
/* The Node.js entry of `leasehold/eventlog` (require and import alike:
   eventlog.mjs re-exports this module). The event log's wasm module is its
   own, compiled and instantiated here, so users of the runner alone never
   load it; the pump's, likewise, when the first EventPump is made. */
// forgetWatermark is the pump's, not the module's.
const { forgetWatermark, ...log } = require('./eventlog.js').createEventLogApi(require('./leasehold_eventlog_node.cjs'));
const pump = require('./eventlog-pump.js').createPumpApi(() => require('./leasehold_pump_node.cjs'), { ...log, forgetWatermark });
const api = { ...log, ...pump };
module.exports = { ...api, default: api };
