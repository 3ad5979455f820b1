/* The ES module entry of `leasehold/pglite`: the CommonJS entry itself. */
import api from './pglite.cjs';

export const { connect, LeaseholdSchemaError } = api;
export default api;
