'use strict';
/*
 * The event pump for Node.js (`EventPump` of `leasehold/eventlog`): derives
 * events from durable sources after their appends and appends them to the
 * event log with the watermarks of the sources they complete, in the same
 * write and fdatasync, so a restart derives again only past them (every
 * derived event is logged at least once).
 *
 * The order of every operation (the pass: sources, chunks, the append in
 * flight while the next chunk is derived, watermarks; failure reporting and
 * the retry timer; compaction; emit; close's last watermarks) is the wasm
 * PumpCore's, leasehold-core's pump machine, the one the native pump
 * drives. What lives here: one promise chain that starts one operation at a
 * time, the timer, and `#drive`, which does what the machine asks with the
 * sources and the log.
 *
 * A source: `{ committedLength(): number, derive(index): draft[],
 * identity?(): object, quiet?(): boolean, logged?(position): void }`.
 */
const { performance } = require('node:perf_hooks');
const { EventLogError, knownOptions, shown, noticeTo } = require('./eventlog-input.js');

const DAY_MS = 24 * 3600 * 1000;

/* The longest setTimeout: a longer delay fires after 1 ms (with a warning), and a
   deadline further off (a kickDelayMs of years) re-armed the timer every
   millisecond. Capped, it fires early, the core finds nothing due, and it is
   armed again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/* `load()` answers the pump's wasm module (PumpCore), first required when
   the first pump is made. */
function createPumpApi(load, { EventLog, MAX_CHUNK_SIZE, forgetWatermark }) {
  let wasm;
  const bad = (message) => new EventLogError(message, 'EVENTLOG_BAD_INPUT');

  function checkSource(name, source) {
    if (typeof name !== 'string') throw bad('EventPump: a source name must be a string');
    if (source === null || typeof source !== 'object' && typeof source !== 'function') {
      throw bad(`EventPump: source '${name}' must be an object`);
    }
    for (const method of ['committedLength', 'derive']) {
      if (typeof source[method] !== 'function') throw bad(`EventPump: source '${name}' has no ${method}() method`);
    }
  }

  function checkMs(options, key, fallback, least) {
    const value = options[key] ?? fallback;
    if (!Number.isSafeInteger(value) || value < least) {
      throw bad(`EventPump: ${key} must be an integer of milliseconds from ${least}, got ${shown(options[key])}`);
    }
    return value;
  }

  /* Drafts, not milliseconds, and at most what one append may carry: checked
     here so the refusal names the pump's option (the core's named
     `chunk_size`, the log's `maxBatch`). */
  function checkChunkSize(value) {
    if (value === undefined) return 1024;
    if (!Number.isSafeInteger(value) || value < 1 || value > MAX_CHUNK_SIZE) {
      throw bad(`EventPump: chunkSize must be an integer of drafts from 1 to ${MAX_CHUNK_SIZE}, got ${shown(value)}`);
    }
    return value;
  }

  /* The record logged for `draft` of `source`: the source's identity fills
     the keys the draft has none for, `now` a missing time. */
  function recordOf(draft, source, identity, now) {
    if (draft === null || typeof draft !== 'object') return draft; // refused by the log, naming it
    const out = { ...draft, source, at: draft.at ?? now };
    // A draft's identity that is not an object is left for the log to refuse
    // naming it: spread, a string's letters became fields '0', '1', …
    const own = draft.identity;
    const mergeable = own === undefined || own === null || (typeof own === 'object' && !Array.isArray(own));
    if (identity !== undefined && mergeable && Object.keys(identity).length > 0) out.identity = { ...identity, ...own };
    return out;
  }

  /* What a source's method answered, as a refusal shows it. A Promise is
     said as one: the methods are called in the pass and answer at once. */
  function answered(value) {
    if (typeof value?.then === 'function') return 'a Promise (a source answers at once: its methods can not be async)';
    return Array.isArray(value) ? 'an array' : shown(value);
  }

  /* What `source.identity()` answers, checked to be an object (or none):
     its fields fill those of the source's events. A Promise, an object
     without fields, left the events without their identity. */
  function sourceIdentity(name, source) {
    const identity = source?.identity?.();
    if (identity === undefined || identity === null) return undefined;
    if (typeof identity !== 'object' || Array.isArray(identity) || typeof identity.then === 'function') {
      throw bad(`EventPump: source '${name}' identity() answered ${answered(identity)}, not an object`);
    }
    return identity;
  }

  class EventPump {
    #path;
    #core;
    #sources = new Map();
    #log;
    #chain = Promise.resolve();
    #timer;
    #timerAt = -1;
    #retentionMs;
    #wall;
    /* Whether a failing `now` was said already. */
    #clockFailed = false;
    #notify;
    #told;
    #chunkSize;
    /* What the log is opened with besides its path. */
    #logOptions;
    /* Names kicked that no source has, each said once. */
    #unknownKicks = new Set();

    constructor(options) {
      if (options === null || typeof options !== 'object') throw bad('EventPump: options must be an object');
      const known = ['path', 'sources', 'kickDelayMs', 'chunkSize', 'retryAfterMs', 'compactEveryMs', 'retentionMs', 'now', 'onNotice', 'blockingSyncMaxBytes', 'writerLock'];
      knownOptions(options, known, 'EventPump');
      if (typeof options.path !== 'string' || options.path === '') throw bad('EventPump: path must be a non-empty string');
      this.#path = options.path;
      const kickDelayMs = checkMs(options, 'kickDelayMs', 50, 0);
      this.#chunkSize = checkChunkSize(options.chunkSize);
      const retryAfterMs = checkMs(options, 'retryAfterMs', 1000, 1);
      const compactEveryMs = checkMs(options, 'compactEveryMs', 3600 * 1000, 0);
      this.#retentionMs = checkMs(options, 'retentionMs', 7 * DAY_MS, 0);
      this.#wall = options.now ?? Date.now;
      if (typeof this.#wall !== 'function') throw bad('EventPump: now must be a function answering milliseconds since the Unix epoch');
      this.#notify = options.onNotice ?? ((text) => process.stderr.write(`leasehold: ${text}\n`));
      if (typeof this.#notify !== 'function') throw bad('EventPump: onNotice must be a function');
      // Checked by EventLog.open, as it checks them for a log opened alone.
      this.#logOptions = { maxBatch: this.#chunkSize, onNotice: this.#notify };
      for (const key of ['blockingSyncMaxBytes', 'writerLock']) if (options[key] !== undefined) this.#logOptions[key] = options[key];
      wasm ??= load();
      try {
        this.#core = new wasm.PumpCore(kickDelayMs, this.#chunkSize, retryAfterMs, compactEveryMs);
      } catch (error) {
        throw bad(`EventPump: ${error.message}`);
      }
      const sources = options.sources ?? {};
      // An array's or a string's entries would pass for sources named '0', '1', …
      if (!(sources instanceof Map) && (typeof sources !== 'object' || Array.isArray(sources))) {
        throw bad(`EventPump: sources must be a Map or an object of source names to sources, got ${Array.isArray(sources) ? 'an array' : shown(sources)}`);
      }
      for (const [name, source] of sources instanceof Map ? sources : Object.entries(sources)) {
        checkSource(name, source);
        this.#sources.set(name, source);
        this.#core.register(name);
      }
    }

    /* `new EventPump(options)` then `open()`. */
    static async open(options) {
      const pump = new EventPump(options);
      await pump.open();
      return pump;
    }

    #serial(fn) {
      const run = this.#chain.then(fn);
      this.#chain = run.catch(() => {}).then(() => this.#arm());
      return run;
    }

    /* Sets the one timer to what the core asks for. */
    #arm() {
      const at = this.#core.phase() === 'closed' ? -1 : this.#core.pollTimeout();
      if (at === this.#timerAt) return;
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#timerAt = at;
      if (at < 0) return;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#timerAt = -1;
        this.#serial(() => {
          this.#core.handleTimeout(performance.now());
          return this.#drive();
        }).catch(() => {});
      }, Math.min(Math.max(0, at - performance.now()), MAX_TIMER_MS));
      this.#timer.unref?.();
    }

    /* Opens (or creates) the log, compacts it, derives every source past
       its watermark. A failing first pass is reported and retried. Resolves
       `{ created, setAside, notice }` of the log's open. */
    open() {
      return this.#serial(async () => {
        if (this.#core.phase() !== 'opening') throw new EventLogError('EventPump: open() runs once', 'EVENTLOG_BAD_INPUT');
        const opened = await EventLog.open(this.#path, this.#logOptions);
        this.#log = opened.log;
        this.#core.opened(performance.now(), [...opened.marks], opened.created);
        await this.#drive();
        return { created: opened.created, setAside: opened.setAside, notice: opened.notice };
      });
    }

    /* `source` appended (none: a pass is wanted): derive it after the kick
       delay, batched with other kicks. */
    kick(source) {
      const name = source === undefined ? undefined : String(source);
      // A name no source has (a typo) would only ever mark nothing dirty: said once
      // through onNotice rather than thrown, as a kick is made after a source's own
      // durable append, which must not look failed.
      if (name !== undefined && !this.#sources.has(name) && this.#core.phase() !== 'closed' && !this.#unknownKicks.has(name)) {
        this.#unknownKicks.add(name);
        const known = [...this.#sources.keys()].map((n) => `'${n}'`).join(', ');
        this.#tell(`event pump ${this.#path}: kick('${name}') names no source of this pump (its sources: ${known || 'none'}); nothing of it is derived`);
      }
      this.#core.kick(performance.now(), name);
      this.#arm();
    }

    /* Derives and logs everything the sources committed so far; rejects when
       that could not be logged (the pass retries in the background). */
    flush() {
      return this.#serial(() => {
        this.#core.flush(performance.now());
        return this.#drive().then(() => {});
      });
    }

    /* Appends producer drafts (each with its `source`) through the chain,
       in chunks of at most `chunkSize`. */
    emit(drafts) {
      if (!Array.isArray(drafts)) return Promise.reject(bad('EventPump.emit: drafts must be an array'));
      return this.#serial(() => {
        const now = this.#clock();
        const records = drafts.map((d) => {
          const source = d?.source;
          return recordOf(d, source, sourceIdentity(source, this.#sources.get(source)), now);
        });
        this.#core.emit(performance.now(), records.length);
        return this.#drive(records).then(() => {});
      });
    }

    /* Registers a source after open; it derives past the watermark the log
       records for it (an earlier run's), else from its first entry. */
    addSource(name, source) {
      return this.#serial(() => {
        this.#mustBeOpen();
        checkSource(name, source);
        // Replaced, the one there went unnoticed, and the new one went on from its
        // watermark: its entries before that were never derived.
        if (this.#sources.has(name)) throw bad(`EventPump.addSource: source '${name}' is already there (removeSource('${name}') first, and the new one derives from its first entry)`);
        this.#core.addSource(performance.now(), name);
        this.#sources.set(name, source);
      });
    }

    /* Derives and logs what is left of `name`, then forgets it (its
       watermark goes). Rejects, keeping it, when that could not be logged. */
    removeSource(name) {
      return this.#serial(() => {
        this.#core.remove(performance.now(), name);
        return this.#drive().then(() => {});
      });
    }

    /* Compacts now; resolves how many records went. */
    compact() {
      return this.#serial(() => {
        this.#core.compact(performance.now());
        return this.#drive();
      });
    }

    /* The records from `seq` on, after everything queued before. */
    readFrom(seq = 0) {
      return this.#serial(() => {
        this.#mustBeOpen();
        return this.#log.readFrom(seq);
      });
    }

    /* Derives what is left, records moved watermarks, closes the log (also
       when that failed: the next open derives again). */
    close() {
      return this.#serial(() => {
        this.#core.close(performance.now());
        return this.#drive().then(() => {});
      });
    }

    /* `{ epoch, head, dropped, records }` of the log (after open). */
    get head() {
      const log = this.#log;
      return log && { epoch: log.epoch, head: log.head, dropped: log.dropped, records: log.records };
    }

    /* Whether the log was created at open or since: every source was
       derived again. */
    get backfilled() { return this.#core.status().backfilled; }

    /* `{ backfilled, failing?, dirty, marks: Map }`. */
    status() {
      const status = this.#core.status();
      return { ...status, marks: new Map(this.#core.marks()) };
    }

    /* The wall clock as `now` answers it, in ms since the Unix epoch. A
       `now` that throws or answers no such time is said (once) and
       Date.now() read instead: it is read in the middle of an operation,
       and a throw there left the pump's machine mid-operation, every
       later call refused as busy. */
    #clock() {
      let why;
      try {
        const value = this.#wall();
        if (Number.isSafeInteger(value) && value >= 0) return value;
        why = `answered ${shown(value)}`;
      } catch (error) {
        why = `threw (${error?.message ?? error})`;
      }
      if (!this.#clockFailed) {
        this.#clockFailed = true;
        this.#tell(`EventPump: now() ${why}, not milliseconds since the Unix epoch (an integer from 0): Date.now() is used where it fails`);
      }
      return Date.now();
    }

    /* Says `text` to onNotice (noticeTo: one that throws or rejects does not
       stop the operation, the text goes to stderr). */
    #tell(text) {
      this.#told ??= noticeTo(this.#notify);
      this.#told(text);
    }

    #closedError(phase) {
      return new EventLogError(phase === 'closed' ? 'event pump closed' : 'event pump not open yet', 'EVENTLOG_CLOSED', { path: this.#path });
    }

    #mustBeOpen() {
      const phase = this.#core.phase();
      if (phase !== 'open') throw this.#closedError(phase);
    }

    /*
     * Does what the machine asks until the operation started resolves (see
     * the run loop of leasehold-core's pump::machine). `emitted`: the
     * records of an emit. During a pass the drafts of the entries derived
     * are held until the machine cuts them into an append; the next chunk is
     * derived while that append is written and synced.
     */
    async #drive(emitted = []) {
      const core = this.#core;
      let held = emitted;
      let reading;
      let identity;
      let inFlight;
      const now = this.#clock();
      for (;;) {
        const out = core.pollOutput();
        if (out === undefined) return 0;
        switch (out.kind) {
          case 'read': {
            const source = this.#sources.get(out.source);
            reading = { name: out.source, source };
            identity = undefined;
            let len = 0;
            let error;
            try {
              len = source === undefined ? 0 : source.committedLength();
              if (!Number.isSafeInteger(len) || len < 0) {
                error = bad(`EventPump: source '${out.source}' committedLength() answered ${answered(len)}, not a length`);
              }
            } catch (thrown) {
              error = thrown ?? new Error('committedLength() threw');
            }
            core.handleLength(performance.now(), error === undefined ? len : 0, error);
            break;
          }
          case 'derive': {
            const { name, source } = reading;
            let derived;
            try {
              identity ??= sourceIdentity(name, source) ?? {};
              derived = source.derive(out.index);
              if (!Array.isArray(derived)) throw new TypeError(`derive(${out.index}) answered ${answered(derived)}, not an array of drafts`);
            } catch (error) {
              // Its watermark stops before the entry; the others go on.
              core.handleDerived(performance.now(), 0, new EventLogError(`EventPump: source '${name}' failed to derive entry ${out.index}: ${error?.message ?? error}`, 'EVENTLOG_SOURCE', { cause: error }));
              break;
            }
            for (const draft of derived) held.push(recordOf(draft, name, identity, now));
            core.handleDerived(performance.now(), derived.length, undefined);
            break;
          }
          case 'append': {
            const records = held.slice(0, out.drafts);
            held = held.slice(out.drafts);
            // Settled when the machine asks; a rejection is its answer then.
            inFlight = this.#log.append(records, out.marks).then(() => undefined, (error) => error ?? new Error('append failed'));
            break;
          }
          case 'settle': {
            const error = await inFlight;
            inFlight = undefined;
            core.handleAppended(performance.now(), error);
            break;
          }
          case 'logged':
            // A callback that throws must not leave the machine mid-operation
            // (every later call was refused as busy, close too, the lock held):
            // the events are durable, so it is said and the operation goes on.
            for (const [name, position] of out.completes) {
              const failed = (error) => this.#tell(`EventPump: source '${name}' logged(${position}) threw (its events are logged all the same): ${error?.message ?? error}`);
              try {
                const answer = this.#sources.get(name)?.logged?.(position);
                // An async one is not waited for; its rejection, unhandled, ended the process.
                if (typeof answer?.then === 'function') answer.then(undefined, failed);
              } catch (error) {
                failed(error);
              }
            }
            break;
          case 'compact': {
            const dropped = await this.#compact(out.marks).then((n) => [n], (error) => [0, error ?? new Error('compaction failed')]);
            core.handleCompacted(performance.now(), dropped[0], dropped[1]);
            break;
          }
          case 'verify': {
            const error = await this.#log.verify().then(() => undefined, (e) => e ?? new Error('verify failed'));
            core.handleVerified(performance.now(), error);
            break;
          }
          case 'forget':
            this.#sources.delete(out.source);
            forgetWatermark(this.#log, out.source);
            break;
          case 'closeLog':
            clearTimeout(this.#timer);
            await this.#log.close();
            this.#sources.clear();
            break;
          case 'report':
            this.#tell(out.text);
            break;
          case 'resolve': {
            if (out.error === undefined) return out.value;
            if (out.error?.notOpen !== undefined) throw this.#closedError(out.error.notOpen);
            if (out.error?.busy) throw new EventLogError('EventPump: an operation is running', 'EVENTLOG_BUSY');
            throw out.error;
          }
        }
      }
    }

    /* Retention: records older than the window whose source is quiet or
       gone go, recording `marks`. */
    #compact(marks) {
      const core = this.#core;
      core.startRetention(this.#clock(), this.#retentionMs);
      const droppable = (name) => {
        const source = this.#sources.get(name);
        return source === undefined || source.quiet?.() === true;
      };
      // A record that is not an event as written here is kept.
      const keep = (event) => typeof event?.source !== 'string' || !Number.isSafeInteger(event.at)
        || !core.drops(event.source, event.at, droppable);
      return this.#log.compact(keep, marks);
    }
  }

  return { EventPump };
}

module.exports = { createPumpApi };
