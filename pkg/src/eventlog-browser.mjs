/* `leasehold/eventlog` in a browser bundle: calls that say it runs in Node.js only (node-only.mjs). */
import { nodeOnlyEventLog } from './node-only.mjs';

const api = nodeOnlyEventLog();
export const { EventLog, EventPump, EventLogError, readEventLog, MAX_CHUNK_SIZE, DEFAULT_CHUNK_SIZE } = api;
export default api;
