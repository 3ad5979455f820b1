/* `leasehold/postgres` in a browser bundle: a connect that says it runs in Node.js only (node-only.mjs). */
import { nodeOnlyQueue } from './node-only.mjs';

const api = nodeOnlyQueue('postgres', 'over a pg pool');
export const { connect, LeaseholdSchemaError } = api;
export default api;
