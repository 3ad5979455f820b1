'use strict';
/* The Node.js entry of `leasehold/postgres` (require and import alike: postgres.mjs
   re-exports this module). It shares the runner's wasm instance with `leasehold`, and
   loads the queue's statements (dist/postgres-sql.cjs) only here. */
const api = require('./index.cjs');
const policy = require('./queue-policy.js').queuePolicy(require('./leasehold_node.cjs'));
const { SchemaError } = require('./queue-migrate.js');
const { connect } = require('./postgres.js').createPostgresApi({ sql: require('./postgres-sql.cjs'), api, policy });
const postgres = { connect, LeaseholdSchemaError: SchemaError };
module.exports = { ...postgres, default: postgres };
