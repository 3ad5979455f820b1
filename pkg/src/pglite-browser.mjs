/* `leasehold/pglite` in a browser bundle: a connect that says it runs in Node.js only (node-only.mjs). */
import { nodeOnlyQueue } from './node-only.mjs';

const api = nodeOnlyQueue('pglite', 'its database is a folder, locked with flock');
export const { connect, LeaseholdSchemaError } = api;
export default api;
