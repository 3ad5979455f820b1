'use strict';
/*
 * `leasehold/postgres`: the durable queue over a node-postgres pool (`pg`, a peer dependency
 * the user installs and configures). The pool is recognised by its shape, not `instanceof`,
 * since two copies of `pg` may be installed side by side. Statements go through
 * `pool.query` as named prepared statements (prepared once per connection); a LISTEN takes
 * one connection of the pool for as long as some `work` runs. The pool stays the user's:
 * `close()` stops the queue's work and its LISTEN, and leaves the pool open.
 *
 * The words BEGIN, COMMIT, ROLLBACK and LISTEN below are the driver's part (what sqlx's
 * `begin()` and `PgListener::listen` send for the Rust store); every statement of the queue
 * is the catalogue's.
 */

const { createQueue } = require('./queue.js');
const { checkMigrate } = require('./queue-input.js');

/** Whether `pool` is a node-postgres Pool: query(), connect(), end(), and its counters. */
function isPool(pool) {
  return (
    pool !== null &&
    typeof pool === 'object' &&
    typeof pool.query === 'function' &&
    typeof pool.connect === 'function' &&
    typeof pool.end === 'function' &&
    typeof pool.totalCount === 'number' &&
    typeof pool.idleCount === 'number'
  );
}

function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value !== 'object') return `a ${typeof value}`;
  if (typeof value.query === 'function' && typeof value.connect === 'function') {
    return 'a single connection (a pg.Client?): the queue needs a pool, for its LISTEN beside its statements';
  }
  return `an object without query(), connect() and end() (${value.constructor?.name ?? 'Object'})`;
}

function poolAdapter(pool) {
  // The rows, and how many rows the statement changed (`changed`).
  const rows = (result) => Object.assign(result.rows, { changed: result.rowCount ?? 0 });
  const on = (client) => {
    const via = (statement, values) => client.query({ name: statement.name, text: statement.text, values }).then(rows);
    via.script = (text) => client.query(text);
    return via;
  };
  async function withClient(begin, fn) {
    const client = await pool.connect();
    let broken;
    try {
      await begin(client);
      const answer = await fn(on(client));
      await client.query('COMMIT');
      return answer;
    } catch (error) {
      await client.query('ROLLBACK').catch((e) => (broken = e));
      throw error;
    } finally {
      client.release(broken);
    }
  }
  return {
    run: (statement, values) => pool.query({ name: statement.name, text: statement.text, values }).then(rows),
    transaction: (fn) => withClient((client) => client.query('BEGIN'), fn),
    snapshot: (begin, fn) => withClient((client) => client.query(begin.text), fn),
    /**
     * LISTEN on one pooled connection, taken again after a loss, a try a second until it is
     * back (however long the database is away: a try that failed had left it lost for good);
     * onLost wakes everyone at the loss and again once it is back, for what was sent between.
     */
    async listen(channel, onPayload, onLost) {
      let client;
      let stopped = false;
      let retry;
      const onNotification = (message) => {
        if (message.channel === channel) onPayload(message.payload);
      };
      const drop = (c, error) => {
        c.removeListener('notification', onNotification);
        c.removeListener('error', lost);
        c.release(error);
      };
      const lost = (error) => {
        if (stopped || client === undefined) return;
        const gone = client;
        client = undefined;
        drop(gone, error ?? new Error('LISTEN connection lost'));
        onLost();
        reopen();
      };
      /** One try a second, one chain of them at a time (a failed LISTEN may also report the loss). */
      function reopen() {
        if (stopped || retry !== undefined) return;
        retry = setTimeout(() => {
          retry = undefined;
          open().then(() => client !== undefined && onLost(), reopen);
        }, 1_000);
        retry.unref?.();
      }
      async function open() {
        const c = await pool.connect();
        if (stopped) return c.release();
        c.on('notification', onNotification);
        c.once('error', lost);
        client = c;
        try {
          await c.query(`LISTEN ${channel}`);
        } catch (error) {
          // Not listening: the connection goes, and a retry (or the caller) takes another.
          if (client === c) {
            client = undefined;
            drop(c, error);
          }
          throw error;
        }
      }
      await open();
      return async () => {
        stopped = true;
        clearTimeout(retry);
        const c = client;
        client = undefined;
        if (c === undefined) return;
        c.removeListener('notification', onNotification);
        c.removeListener('error', lost);
        await c.query(`UNLISTEN ${channel}`).then(
          () => c.release(),
          (error) => c.release(error),
        );
      };
    },
    close: () => Promise.resolve(),
  };
}

function createPostgresApi(deps) {
  /**
   * Answers the queue over `pool` once its schema is current (migrated unless
   * `options.migrate` is false).
   */
  async function connect(pool, options = {}) {
    if (!isPool(pool)) {
      throw new TypeError(`connect: pool must be a pg.Pool (new pg.Pool({ connectionString })), got ${describe(pool)}`);
    }
    const max = pool.options?.max;
    if (typeof max === 'number' && max < 2) {
      throw new RangeError(`connect: the pool allows ${max} connection${max === 1 ? '' : 's'}; the queue needs at least 2 (its LISTEN holds one while some work() runs)`);
    }
    return createQueue(poolAdapter(pool), deps).open({ migrate: checkMigrate(options) });
  }
  return { connect };
}

module.exports = { createPostgresApi, isPool };
