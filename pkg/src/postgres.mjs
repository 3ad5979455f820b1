/* The ES module entry of `leasehold/postgres`: the CommonJS entry itself, so `import` and
   `require` share one wasm instance. */
import api from './postgres.cjs';

export const { connect, LeaseholdSchemaError } = api;
export default api;
