/* The ES module entry of `leasehold/eventlog`: the CommonJS entry itself, so
   `import` and `require` share one wasm instance and one error class. A plain
   import (not createRequire) so that bundlers targeting Node.js follow it. */
import api from './eventlog.cjs';

export const { EventLog, EventPump, EventLogError, readEventLog, MAX_CHUNK_SIZE, DEFAULT_CHUNK_SIZE } = api;
export default api;
