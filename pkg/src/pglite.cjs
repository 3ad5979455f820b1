'use strict';
/* The Node.js entry of `leasehold/pglite` (require and import alike: pglite.mjs re-exports
   this module): the queue of `leasehold/postgres` on PGlite, with no server. */
const api = require('./index.cjs');
const policy = require('./queue-policy.js').queuePolicy(require('./leasehold_node.cjs'));
const { SchemaError } = require('./queue-migrate.js');
const { connect } = require('./pglite.js').createPgliteApi({ sql: require('./postgres-sql.cjs'), api, policy });
const pglite = { connect, LeaseholdSchemaError: SchemaError };
module.exports = { ...pglite, default: pglite };
