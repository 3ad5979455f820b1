/* `leasehold/indexeddb` for `import` in Node.js: the CommonJS entry itself, so that `import`
   and `require` share one wasm instance with `leasehold`. */
import api from './indexeddb.cjs';

export const { connect, QueueError, QueueUnavailableError, JobCancelledError } = api;
