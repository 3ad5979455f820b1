'use strict';
/*
 * Opening the IndexedDB database behind `leasehold/indexeddb`'s `connect({ name })`,
 * its schema, and the errors that say why a browser has no usable IndexedDB.
 *
 * One database per queue set, named `leasehold:NAME`, at schema version 1:
 *   jobs    keyPath id (auto-increment, so ids only grow and are never reused). Indexes:
 *           due   [queue, state, priority, runAt]  claims walk the queued jobs in order
 *           lease [queue, state, expiresAt]        running jobs by lease expiry (a job out of
 *                                                  a lease has no expiresAt, and so is not in
 *                                                  it, but one cancelled while it ran: see
 *                                                  idb-store.js's cancel)
 *           key   [queue, idempotencyKey] unique   only jobs enqueued with a key are in it
 *           state [queue, state]                   counts
 *   queues  keyPath queue: { queue, paused }, one per queue ever enqueued to or paused.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the build script
 * wraps it as an ES module).
 */

const SCHEMA_VERSION = 1;
const PREFIX = 'leasehold:';

/**
 * IndexedDB cannot be used here: none in this context, the browser refused to open the
 * database (private browsing, storage disabled or full, an opaque origin), another page
 * blocks the upgrade, or the database was made by a newer version of leasehold. The
 * message names the cause; `cause` is the browser's own error where it gave one.
 */
class QueueUnavailableError extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'QueueUnavailableError';
    this.code = 'QUEUE_UNAVAILABLE';
  }
}

/** What a DOMException from `indexedDB.open` most likely means, in words. */
function causeOf(error) {
  const name = error && error.name;
  const said = error && error.message ? `: ${error.message}` : '';
  switch (name) {
    case 'InvalidStateError':
    case 'UnknownError':
      return `the browser refused to open it (${name}${said}); private browsing windows and disabled site storage do that`;
    case 'SecurityError':
      return `the browser forbids storage for this page (SecurityError${said}): an opaque origin (file://, a sandboxed iframe, data: URL) or storage blocked by the user's settings`;
    case 'QuotaExceededError':
      return `the origin's storage is full (QuotaExceededError${said})`;
    default:
      return `${name || 'an error'}${said}`;
  }
}

function unavailable(database, cause, error) {
  return new QueueUnavailableError(`leasehold/indexeddb: cannot open the IndexedDB database "${database}": ${cause}`, error);
}

/* The schema, from nothing (the only version so far). */
function upgrade(db, oldVersion) {
  if (oldVersion < 1) {
    const jobs = db.createObjectStore('jobs', { keyPath: 'id', autoIncrement: true });
    jobs.createIndex('due', ['queue', 'state', 'priority', 'runAt']);
    jobs.createIndex('lease', ['queue', 'state', 'expiresAt']);
    jobs.createIndex('key', ['queue', 'idempotencyKey'], { unique: true });
    jobs.createIndex('state', ['queue', 'state']);
    db.createObjectStore('queues', { keyPath: 'queue' });
  }
}

/**
 * Opens (creating or upgrading) `leasehold:NAME` in `factory` (the context's `indexedDB`).
 * Answers the IDBDatabase; rejects with a QueueUnavailableError naming the cause. When a
 * newer schema is opened by another page later, this connection closes itself (so it never
 * blocks that page), and its next operation fails with a QueueUnavailableError saying so.
 */
function openQueueDatabase(factory, name) {
  const database = PREFIX + name;
  if (factory === undefined || factory === null) {
    return Promise.reject(unavailable(database, 'there is no IndexedDB in this context (no `indexedDB` global: a Node.js process, or a browser with storage disabled)'));
  }
  return new Promise((resolve, reject) => {
    let request;
    try {
      request = factory.open(database, SCHEMA_VERSION);
    } catch (error) {
      reject(unavailable(database, causeOf(error), error));
      return;
    }
    let refused = false;
    request.onupgradeneeded = (event) => upgrade(request.result, event.oldVersion);
    request.onblocked = () => {
      refused = true;
      reject(unavailable(database, `another page of this origin has it open at an older version and does not close it, so the upgrade to version ${SCHEMA_VERSION} is blocked: close that page (or reload it with this version)`));
    };
    request.onerror = (event) => {
      const error = request.error;
      if (event && typeof event.preventDefault === 'function') event.preventDefault();
      if (refused) return;
      if (error && error.name === 'VersionError') {
        reject(unavailable(database, `it was made by a newer version of leasehold (its version is above ${SCHEMA_VERSION}, the newest this one knows): use that version, or another name`, error));
      } else {
        reject(unavailable(database, causeOf(error), error));
      }
    };
    request.onsuccess = () => {
      const db = request.result;
      if (refused) {
        db.close();
        return;
      }
      if (!db.objectStoreNames.contains('jobs') || !db.objectStoreNames.contains('queues')) {
        db.close();
        reject(unavailable(database, 'a database of that name exists but is not a leasehold queue (it has no jobs store): use another name'));
        return;
      }
      resolve(db);
    };
  });
}

module.exports = { openQueueDatabase, QueueUnavailableError, SCHEMA_VERSION };
