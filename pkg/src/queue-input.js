'use strict';
/*
 * What the Node.js queues (`leasehold/postgres`, `leasehold/pglite`) accept, checked before
 * anything is written: queue names, enqueue options, payloads and results as the stored JSON
 * text. The rules are the Rust store's (the same database, the same rows), their limits the
 * core's (`limits`, queue-policy.js): a queue name is 1 to maxQueueNameBytes bytes of A-Z a-z
 * 0-9 and the core's punctuation (_ - . :), a payload is JSON without the NUL character
 * (PostgreSQL's jsonb cannot store it), an idempotency key is 1 to maxIdempotencyKeyBytes
 * bytes. A refusal is a TypeError or RangeError naming the argument; nothing is queued.
 */

// The rules every store shares (the IndexedDB one too): queue names, JSON data.
const { queueNameRule, checkJson, byteLength, nearOption } = require('./idb-input.js');

/** The refusal of option `name` of `where`, which takes the `known` ones: what was probably meant, if anything. */
function unknownOption(where, name, known) {
  const near = nearOption(name, known);
  return new TypeError(`${where}: unknown option ${JSON.stringify(name)}${near ? `: did you mean ${near}?` : ''} (known: ${known.join(', ')})`);
}

const INT32_MAX = 2 ** 31 - 1;
const DAY_MS = 86_400_000;
const ENQUEUE_OPTIONS = ['runAt', 'delayMs', 'priority', 'maxAttempts', 'idempotencyKey', 'timeoutMs'];

const kind = (value) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value);

/* Half of a UTF-16 surrogate pair without its other half: no UTF-8 text holds it, so
   PostgreSQL refuses it in JSON and a text column would get U+FFFD in its place. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why `text` cannot be stored as it is (NUL, a lone surrogate), or undefined. */
function unstorable(text) {
  if (text.includes('\0')) return 'the NUL character (\\u0000), which PostgreSQL cannot store';
  if (LONE_SURROGATE.test(text)) return 'a lone surrogate (half of a UTF-16 pair), which UTF-8 cannot hold';
  return undefined;
}

/**
 * `value` as the JSON text a row stores, or a TypeError naming `what` and the path to what
 * JSON would drop or change without a word (the rule of leasehold/indexeddb, idb-input.js:
 * a function, a symbol, a BigInt, NaN or ±Infinity, a cycle, an object neither plain nor
 * with a toJSON such as a Map, undefined but as an object's property), or to a string or key
 * holding U+0000 or a lone surrogate, which PostgreSQL cannot store. `undefined` answers `null` when `optional`
 * (a handler that returned nothing).
 */
function jsonText(where, what, value, optional = false) {
  if (value === undefined && optional) return null;
  let text;
  try {
    checkJson(value, what);
    text = JSON.stringify(value, function check(key, v) {
      const why = unstorable(key) ?? (typeof v === 'string' ? unstorable(v) : undefined);
      if (why !== undefined) throw new TypeError(`holds ${why}, in a string or key`);
      return v;
    });
  } catch (error) {
    throw new TypeError(`${where}: ${what} is not storable as JSON: ${error.message}`);
  }
  if (text === undefined) throw new TypeError(`${where}: ${what} is not storable as JSON: ${kind(value)} has no JSON form`);
  return text;
}

/** `value`, an integer from `min` to `max`, or a TypeError or RangeError naming `name` (`why`: after the range). */
function integer(where, name, value, min, max, why = '') {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`${where}: ${name} must be an integer, got ${typeof value === 'number' ? value : kind(value)}`);
  }
  if (value < min || value > max) throw new RangeError(`${where}: ${name} must be ${min}..${max}${why}, got ${value}`);
  return value;
}

/**
 * Enqueue options as the enqueue statement binds them (`defaultMaxAttempts` and
 * `limits.maxIdempotencyKeyBytes`: the core's); refuses unknown names.
 */
function enqueueOptions(options, defaultMaxAttempts, limits) {
  const where = 'enqueue';
  if (options === undefined || options === null) options = {};
  if (typeof options !== 'object' || Array.isArray(options)) throw new TypeError(`${where}: options must be an object, got ${kind(options)}`);
  for (const name of Object.keys(options)) {
    if (!ENQUEUE_OPTIONS.includes(name)) {
      throw unknownOption(where, name, ENQUEUE_OPTIONS);
    }
  }
  const { runAt, delayMs, priority = 0, maxAttempts = defaultMaxAttempts, idempotencyKey, timeoutMs } = options;
  if (runAt !== undefined && delayMs !== undefined) throw new TypeError(`${where}: give runAt or delayMs, not both`);
  let at = null;
  if (runAt !== undefined) {
    at = runAt instanceof Date ? runAt.getTime() : runAt;
    integer(where, 'runAt (ms since the Unix epoch, or a Date)', at, 0, Number.MAX_SAFE_INTEGER);
  }
  // The database adds the delay to its own clock; the sum must stay a safe integer, as runAt
  // must, or job() could not read the row back. A day of room for that clock being ahead.
  const latest = Number.MAX_SAFE_INTEGER - Date.now() - DAY_MS;
  const delay = delayMs === undefined ? 0 : integer(where, 'delayMs', delayMs, 0, latest, ' (due by 2^53 − 1 ms since the Unix epoch, as runAt)');
  if (idempotencyKey !== undefined) {
    if (typeof idempotencyKey !== 'string') throw new TypeError(`${where}: idempotencyKey must be a string, got ${kind(idempotencyKey)}`);
    if (idempotencyKey.length === 0) throw new RangeError(`${where}: idempotencyKey must not be empty`);
    const max = limits.maxIdempotencyKeyBytes;
    if (byteLength(idempotencyKey) > max) throw new RangeError(`${where}: idempotencyKey is longer than ${max} bytes`);
    const why = unstorable(idempotencyKey);
    if (why !== undefined) throw new TypeError(`${where}: idempotencyKey holds ${why}`);
  }
  return {
    runAt: at,
    delayMs: delay,
    priority: integer(where, 'priority', priority, -INT32_MAX - 1, INT32_MAX),
    maxAttempts: integer(where, 'maxAttempts', maxAttempts, 1, INT32_MAX),
    key: idempotencyKey ?? null,
    timeoutMs: timeoutMs === undefined ? null : integer(where, 'timeoutMs', timeoutMs, 1, Number.MAX_SAFE_INTEGER),
  };
}

/** Job ids: one safe positive integer or a non-empty array of them. */
function jobIds(where, ids) {
  const list = Array.isArray(ids) ? ids : [ids];
  if (list.length === 0) throw new RangeError(`${where}: no job ids given`);
  for (const id of list) integer(where, 'a job id', id, 1, Number.MAX_SAFE_INTEGER);
  return list;
}

/** Text for a text column: PostgreSQL refuses U+0000 there, so it becomes U+FFFD. */
const storableText = (text) => String(text).replaceAll('\0', '\uFFFD');

/**
 * A cancel's `reason`: a string of at most `limits.maxCancelTextBytes` bytes (the core's)
 * that can be stored as it is.
 */
function cancelReason(reason, limits) {
  if (typeof reason !== 'string') throw new TypeError(`cancel: reason must be a string, got ${kind(reason)}`);
  const why = unstorable(reason);
  if (why !== undefined) throw new TypeError(`cancel: reason holds ${why}`);
  const max = limits.maxCancelTextBytes;
  if (byteLength(reason) > max) throw new RangeError(`cancel: reason must be at most ${max} bytes`);
  return reason;
}

/**
 * `connect`'s options (the PostgreSQL stores'): only `migrate`, true or false. Answers
 * whether to migrate (default true); a migrate of another kind (`'no'`, `0`) had migrated.
 */
function checkMigrate(options = {}) {
  if (options === null || typeof options !== 'object') throw new TypeError('connect: options must be an object');
  for (const name of Object.keys(options)) {
    if (name !== 'migrate') throw unknownOption('connect', name, ['migrate']);
  }
  if (options.migrate !== undefined && typeof options.migrate !== 'boolean') {
    throw new TypeError(`connect: migrate must be true or false, got ${kind(options.migrate)}`);
  }
  return options.migrate !== false;
}

module.exports = { unknownOption, queueNameRule, jsonText, enqueueOptions, jobIds, integer, storableText, cancelReason, kind, checkMigrate };
