/* The ES module entry of `leasehold/eventlog`: the CommonJS entry itself, so
   `import` and `require` share one wasm instance and one error class. */
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./eventlog.cjs');

export const { EventLog, EventPump, EventLogError, readEventLog, MAX_CHUNK_SIZE, DEFAULT_CHUNK_SIZE } = api;
export default api;
