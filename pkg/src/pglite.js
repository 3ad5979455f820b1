'use strict';
/*
 * `leasehold/pglite`: the same queue with no server, on PGlite (`@electric-sql/pglite`,
 * PostgreSQL compiled to WebAssembly, a peer dependency the user installs): a folder per
 * queue database, opened by one process at a time. It speaks PostgreSQL, so it runs the
 * very statements `leasehold/postgres` runs (and the Rust store's): no third dialect.
 *
 * Why PGlite and not SQLite: `node:sqlite` needs Node.js 22.5 or later, and better-sqlite3
 * compiles a native module at install; PGlite is plain JS and wasm from the npm registry.
 *
 * `connect({ dataDir })` opens (or creates) the folder and closes it on `close()`;
 * `connect(db)` takes a PGlite instance the caller made (memory, a folder, extensions) and
 * leaves it open. PGlite is one connection: its transactions hold it exclusively, and a
 * LISTEN costs nothing extra.
 */

const { mkdirSync } = require('node:fs');
const path = require('node:path');
const { createQueue } = require('./queue.js');
const { checkMigrate } = require('./queue-input.js');
const { kindOf, distance } = require('./idb-input.js');
const { WriterLock } = require('./eventlog-lock.js');

/*
 * PGlite takes no lock of its own: a second process (or a second connect in this one)
 * opening the same folder runs beside the first, and whichever closes last writes its files
 * over the other's, losing jobs the other committed. So a folder is opened under an
 * exclusive flock on `<dataDir>/leasehold-queue.lock`, held by the event log's lock holder
 * (a small `sh` + util-linux `flock` process that lets go when this process ends, even by
 * SIGKILL). Where that cannot run (no `sh` or no `flock`: Windows, macOS without
 * util-linux) the folder opens without it, as before; only a lock another holds refuses.
 */
async function lockFolder(dataDir) {
  // PGlite's own schemes (`memory://`, `idb://NAME`, `file://PATH`) are not a folder path:
  // handed over as they are, unlocked.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir)) return undefined;
  // Made as PGlite makes it (its parent must exist), so that the lock file can go inside.
  try {
    mkdirSync(dataDir);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  try {
    return await WriterLock.acquire(path.join(dataDir, 'leasehold-queue'));
  } catch (error) {
    if (error.reason !== 'in-use') return undefined;
    const refusal = new Error(
      `connect: the folder ${dataDir} is open in another queue (this process or another; ${path.join(dataDir, 'leasehold-queue.lock')} is locked): one process at a time may open a folder, close the other first`,
    );
    refusal.code = 'QUEUE_IN_USE';
    throw refusal;
  }
}

function isPGlite(db) {
  return (
    db !== null &&
    typeof db === 'object' &&
    typeof db.query === 'function' &&
    typeof db.exec === 'function' &&
    typeof db.transaction === 'function' &&
    typeof db.listen === 'function'
  );
}

function pgliteAdapter(db, owned, lock) {
  // The rows, and how many rows the statement changed (`changed`).
  const rows = (result) => Object.assign(result.rows, { changed: result.affectedRows ?? 0 });
  const on = (tx) => {
    const via = (statement, values) => tx.query(statement.text, values).then(rows);
    via.script = (text) => tx.exec(text);
    return via;
  };
  return {
    run: (statement, values) => db.query(statement.text, values).then(rows),
    transaction: (fn) => db.transaction((tx) => fn(on(tx))),
    // One connection: a transaction is a consistent read already (nothing else runs in it).
    snapshot: (_begin, fn) => db.transaction((tx) => fn(on(tx))),
    async listen(channel, onPayload) {
      return db.listen(channel, onPayload);
    },
    close: async () => {
      if (!owned) return;
      try {
        await db.close();
      } finally {
        await lock?.release();
      }
    },
  };
}

/**
 * Refuses a `{ dataDir }` target that names no folder or holds another key, saying which:
 * `migrate` is the second argument's, and a near miss of `dataDir` is named as one.
 */
function checkFolder(target) {
  for (const name of Object.keys(target)) {
    if (name === 'dataDir') continue;
    if (name === 'migrate') {
      throw new TypeError('connect: migrate is an option of the second argument: connect({ dataDir }, { migrate: false })');
    }
    const near = distance(name, 'dataDir') <= 2 ? ' (did you mean dataDir?)' : '';
    throw new TypeError(`connect: unknown field ${JSON.stringify(name)}${near} (give { dataDir } or a PGlite instance)`);
  }
  if (typeof target.dataDir !== 'string' || target.dataDir === '') {
    throw new TypeError(`connect: dataDir must be a folder's path, a non-empty string (give { dataDir: "folder" }), got ${target.dataDir === '' ? 'an empty string' : kindOf(target.dataDir)}`);
  }
}

function createPgliteApi(deps) {
  /**
   * Answers the queue over `target`: `{ dataDir }` (a folder, created if missing, opened
   * with `PGlite.create(dataDir)` from the installed `@electric-sql/pglite`; closed by the
   * queue's `close()`), or a PGlite instance (left open). The schema is migrated unless
   * `options.migrate` is false.
   */
  async function connect(target, options = {}) {
    const migrate = checkMigrate(options);
    let db;
    let lock;
    let owned = false;
    if (isPGlite(target)) {
      db = target;
    } else if (target !== null && typeof target === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(target))) {
      checkFolder(target);
      let PGlite;
      try {
        ({ PGlite } = await import('@electric-sql/pglite'));
      } catch (error) {
        throw new Error(`connect: leasehold/pglite needs the package @electric-sql/pglite (npm install @electric-sql/pglite): ${error.message}`);
      }
      lock = await lockFolder(target.dataDir);
      try {
        db = await PGlite.create(target.dataDir);
      } catch (error) {
        await lock?.release();
        throw error;
      }
      owned = true;
    } else {
      throw new TypeError('connect: give { dataDir: "folder" } or a PGlite instance (new PGlite(...) from @electric-sql/pglite)');
    }
    try {
      return await createQueue(pgliteAdapter(db, owned, lock), deps, { owned, watchLeases: true }).open({ migrate });
    } catch (error) {
      if (owned) await db.close().catch(() => undefined);
      await lock?.release();
      throw error;
    }
  }
  return { connect };
}

module.exports = { createPgliteApi, isPGlite };
