'use strict';
/*
 * The checks `leasehold/indexeddb` makes on what it is given, before anything is written:
 * option objects (a misspelt key is refused naming it), queue names, ids, enqueue options,
 * and payloads and results (JSON data only: the PostgreSQL stores check theirs by this rule
 * too, queue-input.js). Each refusal is a TypeError or RangeError naming the argument and
 * what was wrong with it.
 *
 * Shared by the Node.js build (CommonJS, as is) and the browser build (the build script
 * wraps it as an ES module).
 */

/** A value's kind for messages: 'null', 'an array', 'a Map', 'a string', … */
function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  if (type === 'object') {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return name && name !== 'Object' ? `a ${name}` : 'an object';
  }
  if (type === 'undefined') return 'undefined';
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** Edit distance of two short strings, case ignored (for "did you mean"). */
function distance(a, b) {
  a = a.toLowerCase();
  b = b.toLowerCase();
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/**
 * Names of `createJobRunner` and of the other calls that a queue's calls take under names of
 * their own: what was meant by one given where it is unknown.
 */
const RENAMED = { heartbeatEveryMs: 'heartbeatMs', intervalMs: 'pollMs', batchLimit: 'pageSize', delay: 'delayMs', timeout: 'timeoutMs' };

/**
 * The option of `known` an unknown `key` was probably meant to be: its name in this call
 * (`heartbeatEveryMs` is `work`'s `heartbeatMs`), or one up to two edits away; else undefined.
 */
function nearOption(key, known) {
  const renamed = Object.prototype.hasOwnProperty.call(RENAMED, key) ? RENAMED[key] : undefined;
  if (renamed !== undefined && known.includes(renamed)) return renamed;
  return known.find((k) => distance(k, key) <= 2);
}

/** Refuses `options` unless it is undefined or a plain object whose keys are all in `known`. */
function checkKeys(where, options, known) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${where}: options must be an object, got ${kindOf(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      const near = nearOption(key, known);
      throw new TypeError(`${where}: unknown option ${key}${near ? ` (did you mean ${near}?)` : ''}; known: ${known.join(', ')}`);
    }
  }
  return options;
}

function checkName(where, what, value) {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${where}: ${what} must be a non-empty string, got ${typeof value === 'string' ? 'an empty string' : kindOf(value)}`);
  }
  return value;
}

const utf8 = new TextEncoder();
/** The UTF-8 length of `text` in bytes (browsers have no Buffer). */
const byteLength = (text) => utf8.encode(text).length;

/**
 * The queue-name check of `limits` (`{ maxQueueNameBytes, queueNamePunctuation }`, the
 * core's rules as the wasm module's `queueDefaults()` gives them): `(where, name)` answers
 * `name` or throws naming what is wrong with it: a TypeError for a name that is not a
 * string, a RangeError for one that is empty, too long in UTF-8 bytes, or holds more than
 * A-Z a-z 0-9 and the punctuation.
 */
function queueNameRule(limits) {
  const max = limits.maxQueueNameBytes;
  const punctuation = limits.queueNamePunctuation;
  const allowed = new RegExp(`^[A-Za-z0-9${punctuation.replace(/[\\\]^-]/g, '\\$&')}]+$`);
  const listed = ['A-Z a-z 0-9', ...punctuation].join(' ');
  return (where, name) => {
    if (typeof name !== 'string') throw new TypeError(`${where}: queue must be a string, got ${kindOf(name)}`);
    const why =
      name.length === 0
        ? 'is empty'
        : byteLength(name) > max
          ? `is longer than ${max} bytes`
          : allowed.test(name)
            ? undefined
            : `may hold only ${listed}`;
    if (why) throw new RangeError(`${where}: queue ${JSON.stringify(name)} ${why}`);
    return name;
  };
}

/** An integer option in [min, max], or `fallback` when undefined. */
function checkInteger(where, what, value, min, max, fallback) {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`${where}: ${what} must be a finite number, got ${typeof value === 'number' ? value : kindOf(value)}`);
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${where}: ${what} must be an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

/** A job id (a positive safe integer) or a list of them, as a non-empty list. */
function checkIds(where, ids) {
  const list = Array.isArray(ids) ? ids : [ids];
  if (list.length === 0) throw new TypeError(`${where}: ids must name at least one job, got an empty array`);
  list.forEach((id, i) => checkInteger(where, Array.isArray(ids) ? `ids[${i}]` : 'id', id, 1, Number.MAX_SAFE_INTEGER));
  return [...new Set(list)];
}

const plain = new Set([Object.prototype, null, Array.prototype]);

/*
 * Refuses what JSON would drop or change without a word: functions, symbols, bigints,
 * NaN and ±Infinity, cycles, and objects that are neither plain nor have a toJSON (a Map
 * or Set becomes {} in JSON). Undefined object properties are dropped, as JSON does.
 */
function checkJsonValue(value, path, seen) {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${path} is ${value}, which JSON cannot hold`);
      return;
    case 'object':
      break;
    default:
      throw new TypeError(`${path} is ${kindOf(value)}, which JSON cannot hold`);
  }
  if (value === null) return;
  if (typeof value.toJSON === 'function') {
    // A Date that holds no time (new Date('x')) is written as null.
    if (value instanceof Date && Number.isNaN(value.getTime())) throw new TypeError(`${path} is an invalid Date, which JSON writes as null`);
    return;
  }
  if (!plain.has(Object.getPrototypeOf(value))) {
    throw new TypeError(`${path} is ${kindOf(value)}, which JSON cannot hold (give plain objects, arrays, strings, numbers, booleans or null)`);
  }
  if (seen.has(value)) throw new TypeError(`${path} refers back to an object that contains it: JSON cannot hold a cycle`);
  seen.add(value);
  if (Array.isArray(value)) {
    // By index, not forEach: a hole (`[1, , 3]`) is undefined here, which JSON turns into null.
    for (let i = 0; i < value.length; i++) checkJsonValue(value[i], `${path}[${i}]`, seen);
  } else {
    for (const key of Object.keys(value)) {
      if (value[key] !== undefined) checkJsonValue(value[key], `${path}.${key}`, seen);
    }
  }
  seen.delete(value);
}

/**
 * `checkJsonValue` from the top: a value nested so deep that checking it ran out of stack
 * is refused as such (JSON.stringify would run out too), not with the engine's bare message.
 */
function checkJson(value, path) {
  try {
    checkJsonValue(value, path, new Set());
  } catch (error) {
    if (error instanceof RangeError) throw new TypeError(`${path} nests too deeply to be checked or written as JSON (${error.message})`);
    throw error;
  }
}

/** `value` as JSON data (a fresh copy, what a reader gets back), or a TypeError naming `path`. */
function jsonData(value, path) {
  checkJson(value, path);
  return JSON.parse(JSON.stringify(value));
}

const ENQUEUE_OPTIONS = ['runAt', 'delayMs', 'priority', 'maxAttempts', 'idempotencyKey', 'timeoutMs'];
const I32 = 2 ** 31 - 1;

/**
 * The enqueue options as a job record's fields, given `now` and the core's queue rules
 * (`queueDefaults()`: the default attempt budget, the idempotency-key limit).
 */
function enqueueFields(options, now, rules) {
  const where = 'enqueue';
  const o = checkKeys(where, options, ENQUEUE_OPTIONS);
  if (o.runAt !== undefined && o.delayMs !== undefined) {
    throw new TypeError(`${where}: give runAt or delayMs, not both`);
  }
  let runAt = now;
  if (o.runAt !== undefined) {
    const at = o.runAt instanceof Date ? o.runAt.getTime() : o.runAt;
    if (typeof at !== 'number' || !Number.isFinite(at)) {
      throw new TypeError(`${where}: runAt must be a Date or epoch milliseconds, got ${o.runAt instanceof Date ? 'an invalid Date' : kindOf(o.runAt)}`);
    }
    runAt = Math.trunc(at);
  } else if (o.delayMs !== undefined) {
    runAt = now + checkInteger(where, 'delayMs', o.delayMs, 0, Number.MAX_SAFE_INTEGER - now);
  }
  const key = o.idempotencyKey;
  if (key !== undefined && typeof key !== 'string') {
    throw new TypeError(`${where}: idempotencyKey must be a string, got ${kindOf(key)}`);
  }
  if (key === '') throw new RangeError(`${where}: idempotencyKey must not be empty`);
  if (key !== undefined && byteLength(key) > rules.maxIdempotencyKeyBytes) {
    throw new RangeError(`${where}: idempotencyKey is longer than ${rules.maxIdempotencyKeyBytes} bytes`);
  }
  return {
    runAt,
    priority: checkInteger(where, 'priority', o.priority, -I32 - 1, I32, 0),
    maxAttempts: checkInteger(where, 'maxAttempts', o.maxAttempts, 1, I32, rules.maxAttempts),
    idempotencyKey: key ?? null,
    timeoutMs: checkInteger(where, 'timeoutMs', o.timeoutMs, 1, Number.MAX_SAFE_INTEGER, null),
  };
}

module.exports = {
  kindOf, distance, nearOption, checkKeys, checkName, checkInteger, checkIds, checkJson, jsonData, enqueueFields, queueNameRule, byteLength,
};
