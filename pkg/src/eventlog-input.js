'use strict';
/*
 * The caller's input to the event log, checked before anything is written:
 * drafts become the JSON records the native host writes and reads
 * (`{"source","at","type","identity"?,"body"?}` in that order, `identity`
 * left out when empty, `body` when null), and watermarks are `[source,
 * position]` pairs that never go back.
 */

const { types } = require('node:util');

class EventLogError extends Error {
  constructor(message, code, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'EventLogError';
    this.code = code;
    if (details.path !== undefined) this.path = details.path;
    if (details.op !== undefined) this.op = details.op;
    if (details.epoch !== undefined) this.epoch = details.epoch;
  }
}

const bad = (message) => new EventLogError(message, 'EVENTLOG_BAD_INPUT');

/* A toJSON that threw, as a refusal naming where it is (the error as its cause). */
const toJsonThrew = (where, error) => new EventLogError(`${where}: its toJSON threw: ${error?.message ?? String(error)}`, 'EVENTLOG_BAD_INPUT', { cause: error });

/* `value.toJSON(key)`, a throw refused as toJsonThrew. */
function callToJson(value, key, where) {
  try {
    return value.toJSON(key);
  } catch (error) {
    throw toJsonThrew(where, error);
  }
}

/* Refuses an option `options` has that `known` does not list (a misspelt one would
   otherwise be ignored without a word). */
function knownOptions(options, known, who) {
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) throw bad(`${who}: unknown option ${JSON.stringify(name)} (known: ${known.join(', ')})`);
  }
}

/* `onNotice` as the log and the pump call it: one that throws, or rejects
   (an async one), does not stop the operation that tells it (a pump's
   machine was left mid-way), nor end the process (an unhandled rejection
   does): the text goes to stderr instead. */
function noticeTo(onNotice) {
  const fallback = (text, error) => process.stderr.write(`leasehold: ${text} (onNotice failed: ${error?.message ?? error})\n`);
  return (text) => {
    try {
      const answer = onNotice(text);
      if (typeof answer?.then === 'function') answer.then(undefined, (error) => fallback(text, error));
    } catch (error) {
      fallback(text, error);
    }
  };
}

/* A wrong number as a refusal shows it: a string quoted and a bigint with its `n`,
   so that neither reads as the number it is not ('3' is not 3); an array or object
   by its kind. */
function shown(value) {
  if (typeof value === 'string') return `${JSON.stringify(value)} (a string)`;
  if (typeof value === 'bigint') return `${value}n (a bigint)`;
  if (Array.isArray(value)) return 'an array';
  if (value !== null && typeof value === 'object') return 'an object';
  return String(value);
}

/* The deepest nesting of arrays and objects a body or identity may have:
   readers (serde_json's default limit, 128 with the record's own object)
   could not read a deeper one back. The native writer refuses the same. */
const MAX_VALUE_DEPTH = 100;

/* Whether JSON would write the object `value` as `{}` whatever it holds:
   what it holds is not its own enumerable fields (a Map's entries, an
   Error's message and stack, a RegExp's pattern). A plain object is
   answered by its prototype alone. Told by what the object is, not by
   its prototype chain, so one made in another realm (a `vm` context, a
   worker's message) is told too. */
function emptiedByJson(value) {
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return false;
  return types.isMap(value) || types.isSet(value) || ArrayBuffer.isView(value) || types.isAnyArrayBuffer(value)
    || types.isNativeError(value) || value instanceof Error || types.isRegExp(value) || types.isWeakMap(value) || types.isWeakSet(value) || types.isPromise(value);
}

/* Throws when `value` would not come back from JSON as it is: names the
   draft, the field and the path to the value. A cycle nests without end,
   so the depth limit finds it; `cycleAt` then says it is one. */
function checkJson(value, where, depth, root) {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw bad(`${where} is ${value}, which JSON can not hold`);
      return;
    case 'object':
      break;
    default:
      throw bad(`${where} is a ${typeof value}, which JSON can not hold`);
  }
  if (value === null) return;
  if (typeof value.toJSON === 'function') {
    checkJson(callToJson(value, undefined, where), where, depth, root);
    return;
  }
  if (emptiedByJson(value)) {
    // An Error is the likely one (`body: { error }`): its message is not a field JSON writes.
    const hint = types.isNativeError(value) || value instanceof Error ? ' (its message and stack are not fields JSON writes): give error.message' : '';
    const name = value.constructor.name;
    throw bad(`${where} is ${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name}, which JSON would turn into {}${hint}`);
  }
  if (depth > MAX_VALUE_DEPTH) {
    const cycle = cycleAt(root.value, root.where, new Set());
    if (cycle !== undefined) throw bad(`${cycle} refers to itself (a cycle), which JSON can not hold`);
    throw bad(`${where} nests deeper than ${MAX_VALUE_DEPTH} levels of arrays and objects (readers could not read it back)`);
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) throw bad(`${where}[${i}] is undefined, which JSON would turn into null`);
      checkJson(value[i], `${where}[${i}]`, depth + 1, root);
    }
  } else {
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      const v = value[key];
      if (v !== undefined) checkJson(v, `${where}.${key}`, depth + 1, root);
    }
  }
}

/* Whether `value` is JSON as it is, with nothing checkJson would look at
   twice: strings, booleans, finite numbers, null, and arrays and plain
   objects of those, at most MAX_VALUE_DEPTH deep, without `toJSON`, holes
   or undefined items. Builds no text: it is the path every ordinary draft
   takes, and a `false` sends the value to checkJson, which names what is
   wrong (or accepts what needs a closer look, such as a `toJSON`). */
function plainJson(value, depth) {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > MAX_VALUE_DEPTH || typeof value.toJSON === 'function') return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      if (item === undefined || !plainJson(item, depth + 1)) return false;
    }
    return true;
  }
  // Only a plain object is taken as it is; anything else (a Map, an Error, a
  // boxed String, a class's instance) goes to checkJson, as what JSON makes
  // of it depends on what it is.
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const v = value[key];
    if (v !== undefined && !plainJson(v, depth + 1)) return false;
  }
  return true;
}

/* checkJson, through plainJson first: the names of the draft and its
   fields are built only for a value that is not plain JSON. */
function checkValue(value, index, field) {
  if (plainJson(value, 1)) return;
  const where = `draft ${index}.${field}`;
  checkJson(value, where, 1, { value, where });
}

/* Where `value` first refers back to an object that contains it. */
function cycleAt(value, where, open) {
  if (value === null || typeof value !== 'object') return undefined;
  if (open.has(value)) return where;
  open.add(value);
  for (const key of Object.keys(value)) {
    const found = cycleAt(value[key], Array.isArray(value) ? `${where}[${key}]` : `${where}.${key}`, open);
    if (found !== undefined) return found;
  }
  open.delete(value);
  return undefined;
}

/* How the items of a batch's JSON text are laid out (host-wasm's
   eventlog/batch.rs reads them): a draft's kind says which items it has,
   and an item of any length is followed by the separator, a string
   `JSON.stringify` writes with a backslash, so the module finds the items'
   ends without reading them. A source or type the same as the draft
   before's is not repeated (most drafts of an append share them). */
const HAS_IDENTITY = 1;
const HAS_BODY = 2;
const WHOLE = 4;
const SAME_SOURCE = 8;
const SAME_TYPE = 16;
const SEPARATOR = '\u001f';

/* `value` checked as a draft's `field`: whether it is plain JSON (else
   checkJson accepted it, as it may hold a `toJSON`). */
function plainValue(value, index, field) {
  if (plainJson(value, 1)) return true;
  checkValue(value, index, field);
  return false;
}

/* What JSON writes for a draft's identity object: its toJSON's answer (a
   Date's is a string), a boxed primitive's value. Any but an object of
   fields made a record the native reader refuses, and with it the whole
   log ("record N is not an event"). */
function identityAsWritten(identity, index) {
  let value = identity;
  if (typeof value.toJSON === 'function') value = callToJson(value, 'identity', `draft ${index}.identity`);
  if (value instanceof String || value instanceof Number || value instanceof Boolean) value = value.valueOf();
  return value;
}

/* Checks draft number `index` and adds its items to `batch.items`;
   answers its kind. The record is `{source, at, type, identity?, body?}`
   with `at` from `batch.ats[index]` (`now`, ms since the Unix epoch, for a
   missing `at`). `batch.source` and `batch.type`: the last ones added. */
function addDraft(batch, draft, index, now) {
  const { items, ats } = batch;
  if (draft === null || typeof draft !== 'object' || Array.isArray(draft)) throw bad(`draft ${index} must be an object`);
  for (const key in draft) {
    if (key !== 'source' && key !== 'type' && key !== 'at' && key !== 'identity' && key !== 'body') throw bad(`draft ${index} has a field '${key}' the event log does not keep (source, type, at, identity, body)`);
  }
  const { source, type, at, identity, body } = draft;
  if (typeof source !== 'string') throw bad(`draft ${index}: source must be a string`);
  if (typeof type !== 'string' || type === '') throw bad(`draft ${index}: type must be a non-empty string`);
  if (at !== undefined && (!Number.isSafeInteger(at) || at < 0)) {
    throw bad(`draft ${index}: at must be milliseconds since the Unix epoch (an integer from 0), got ${shown(at)}`);
  }
  let kind = 0;
  let plain = true;
  if (identity !== undefined && identity !== null) {
    if (typeof identity !== 'object' || Array.isArray(identity)) throw bad(`draft ${index}: identity must be an object`);
    plain = plainValue(identity, index, 'identity');
    // A plain object is written as one; anything else only if its toJSON or
    // boxed value is one (looked at only then: this is every draft's path).
    const written = plain ? identity : identityAsWritten(identity, index);
    if (written === null || typeof written !== 'object' || Array.isArray(written)) {
      throw bad(`draft ${index}: identity must be an object of fields, and JSON writes this one as ${Array.isArray(written) ? 'an array' : shown(written)}`);
    }
    // Empty as JSON writes it: one whose fields are all undefined is left
    // out too (written `{}`, the native reader reads no identity there).
    for (const key in identity) {
      if (Object.prototype.hasOwnProperty.call(identity, key) && identity[key] !== undefined) {
        kind |= HAS_IDENTITY;
        break;
      }
    }
  }
  if (body !== undefined && body !== null) {
    plain = plainValue(body, index, 'body') && plain;
    kind |= HAS_BODY;
  }
  ats[index] = at ?? now;
  // A top-level item that is the separator's string would pass for one.
  if (source === SEPARATOR || type === SEPARATOR || body === SEPARATOR) plain = false;
  if (!plain) {
    // A toJSON is called with the key its value has in the record (and the
    // separator's string nests there): the record is left to JSON.stringify
    // as it is.
    const record = { source, at: ats[index], type };
    if (kind & HAS_IDENTITY) record.identity = identity;
    if (kind & HAS_BODY) record.body = body;
    items.push(record, SEPARATOR);
    return WHOLE;
  }
  if (source === batch.source) kind |= SAME_SOURCE;
  else items.push((batch.source = source));
  if (type === batch.type) kind |= SAME_TYPE;
  else items.push((batch.type = type));
  if (kind & HAS_IDENTITY) items.push(identity, SEPARATOR);
  if (kind & HAS_BODY) items.push(body, SEPARATOR);
  return kind;
}

/* The drafts of one append, checked, as the wasm module builds their
   records: `{ text, kinds, ats }`, one JSON text of every draft's items
   (one JSON.stringify for the whole append), a kind byte per draft and
   `at` per draft. Throws `EVENTLOG_BAD_INPUT` naming the first draft that
   is wrong. */
function draftsBatch(drafts, now) {
  const batch = { items: [], ats: new Float64Array(drafts.length), source: undefined, type: undefined };
  const kinds = new Uint8Array(drafts.length);
  for (let i = 0; i < drafts.length; i++) kinds[i] = addDraft(batch, drafts[i], i, now);
  let text;
  try {
    text = JSON.stringify(batch.items);
  } catch (error) {
    // A toJSON that answered when checked and throws when written.
    throw toJsonThrew('a draft', error);
  }
  // One look over the whole text, by a plain search first (2 µs for 250 KB of JSON,
  // against 70 µs for the pattern); the drafts are searched only when it finds one.
  if (text.includes('\\ud') && ESCAPED_SURROGATE.test(text)) throw bad(surrogateAt(drafts));
  return { text, kinds, ats: batch.ats };
}

/* A lone UTF-16 surrogate (half of a pair, as slicing a string between
   the halves of an emoji leaves): JSON.stringify writes it as an escape
   (`\ud800`) that the native reader (serde_json) refuses, and with it the
   whole log ("record N is not an event"), so it is refused here. In the
   JSON text, it is the one `\ud800`-`\udfff` escape not itself escaped
   (a paired one is written as it is). */
const ESCAPED_SURROGATE = /(?:^|[^\\])(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/;
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/* Names the draft and field holding a lone surrogate. */
function surrogateAt(drafts) {
  for (let i = 0; i < drafts.length; i++) {
    for (const field of ['source', 'type', 'identity', 'body']) {
      const value = drafts[i][field];
      if (value !== undefined && ESCAPED_SURROGATE.test(JSON.stringify(value) ?? '')) {
        return `draft ${i}.${field} holds a lone UTF-16 surrogate (half of a pair, as slicing a string can leave), which the native reader can not read: it would refuse the whole log`;
      }
    }
  }
  return 'a draft holds a lone UTF-16 surrogate, which the native reader can not read: it would refuse the whole log';
}

/* Watermarks as `[source, position]` pairs: from a Map, an iterable of
   pairs, or a plain object (`undefined`: none). Any iterable is read as
   pairs (`map.entries()`, a generator, a Set): taken as an object, its own
   keys would be none, and its watermarks would go without a word. */
function marksOf(marks, who) {
  if (marks === undefined || marks === null) return [];
  let entries;
  if (typeof marks === 'object' && typeof marks[Symbol.iterator] === 'function') entries = [...marks];
  else if (typeof marks === 'object') entries = Object.entries(marks);
  else throw bad(`${who}: marks must be a Map, an iterable of [source, position] pairs or an object`);
  const out = new Map();
  for (const entry of entries) {
    if (!Array.isArray(entry) || entry.length !== 2) throw bad(`${who}: each watermark must be a [source, position] pair`);
    const [name, position] = entry;
    if (typeof name !== 'string') throw bad(`${who}: a watermark's source must be a string`);
    // The module would take it as U+FFFD, another name than the drafts'.
    if (LONE_SURROGATE.test(name)) throw bad(`${who}: the watermark source ${JSON.stringify(name)} holds a lone UTF-16 surrogate, which the log can not hold`);
    if (!Number.isSafeInteger(position) || position < 0) {
      throw bad(`${who}: the watermark of source '${name}' must be a position (an integer from 0), got ${shown(position)}`);
    }
    // Two for one source would leave the one that counts to the order they came in.
    if (out.has(name)) throw bad(`${who}: the watermark of source '${name}' is given twice`);
    out.set(name, position);
  }
  return [...out];
}

/* Refuses a watermark that goes back from the one `ahead` holds. */
function checkMarks(pairs, ahead, who) {
  for (const [name, position] of pairs) {
    const current = ahead.get(name);
    if (current !== undefined && position < current) {
      throw bad(`${who}: the watermark of source '${name}' would go back from ${current} to ${position}`);
    }
  }
}

module.exports = { EventLogError, draftsBatch, marksOf, checkMarks, knownOptions, shown, noticeTo, MAX_VALUE_DEPTH };
