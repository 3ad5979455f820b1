'use strict';
/*
 * The event pump for Node.js (`EventPump` of `leasehold/eventlog`): derives
 * events from durable sources after their appends and appends them to the
 * event log with the watermarks of the sources they complete, in the same
 * write and fdatasync, so a restart derives again only past them (every
 * derived event is logged at least once).
 *
 * The decisions (dirty set, kick batching, watermarks and which are unsaved,
 * chunk cuts, failure reporting and the retry timer, the compaction
 * schedule) are the wasm PumpCore's (leasehold-core's pump::state and
 * pump::chunk, the same the native pump drives). What lives here: one
 * promise chain that runs passes, emits, compaction and close one at a time,
 * the timer, and the calls to the sources and the log.
 *
 * A source: `{ committedLength(): number, derive(index): draft[],
 * identity?(): object, quiet?(): boolean, logged?(position): void }`.
 */
const { performance } = require('node:perf_hooks');
const { EventLogError } = require('./eventlog-input.js');

const DAY_MS = 24 * 3600 * 1000;

/* `load()` answers the pump's wasm module (PumpCore), first required when
   the first pump is made. */
function createPumpApi(load, { EventLog }) {
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
      throw bad(`EventPump: ${key} must be an integer of milliseconds from ${least}, got ${String(options[key])}`);
    }
    return value;
  }

  /* The record logged for `draft` of `source`: the source's identity fills
     the keys the draft has none for, `now` a missing time. */
  function recordOf(draft, source, identity, now) {
    if (draft === null || typeof draft !== 'object') return draft; // refused by the log, naming it
    const out = { ...draft, source, at: draft.at ?? now };
    if (identity !== undefined && Object.keys(identity).length > 0) out.identity = { ...identity, ...draft.identity };
    return out;
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
    #notify;
    #chunkSize;

    constructor(options) {
      if (options === null || typeof options !== 'object') throw bad('EventPump: options must be an object');
      if (typeof options.path !== 'string' || options.path === '') throw bad('EventPump: path must be a non-empty string');
      this.#path = options.path;
      const kickDelayMs = checkMs(options, 'kickDelayMs', 50, 0);
      this.#chunkSize = checkMs(options, 'chunkSize', 1024, 1);
      const retryAfterMs = checkMs(options, 'retryAfterMs', 1000, 1);
      const compactEveryMs = checkMs(options, 'compactEveryMs', 3600 * 1000, 0);
      this.#retentionMs = checkMs(options, 'retentionMs', 7 * DAY_MS, 0);
      this.#wall = options.now ?? Date.now;
      if (typeof this.#wall !== 'function') throw bad('EventPump: now must be a function answering milliseconds since the Unix epoch');
      this.#notify = options.onNotice ?? ((text) => process.stderr.write(`leasehold: ${text}\n`));
      wasm ??= load();
      try {
        this.#core = new wasm.PumpCore(kickDelayMs, this.#chunkSize, retryAfterMs, compactEveryMs);
      } catch (error) {
        throw bad(`EventPump: ${error.message}`);
      }
      const sources = options.sources ?? {};
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
        this.#serial(() => (this.#core.handleTimeout(performance.now()) ? this.#pass() : undefined)).catch(() => {});
      }, Math.max(0, at - performance.now()));
      this.#timer.unref?.();
    }

    /* Opens (or creates) the log, compacts it, derives every source past
       its watermark. A failing first pass is reported and retried. Resolves
       `{ created, setAside, notice }` of the log's open. */
    open() {
      return this.#serial(async () => {
        if (this.#core.phase() !== 'opening') throw new EventLogError('EventPump: open() runs once', 'EVENTLOG_BAD_INPUT');
        const opened = await EventLog.open(this.#path, { maxBatch: this.#chunkSize, onNotice: this.#notify });
        this.#log = opened.log;
        this.#core.opened([...opened.marks], opened.created);
        await this.#compact().catch(() => {});
        await this.#pass().catch(() => {});
        return { created: opened.created, setAside: opened.setAside, notice: opened.notice };
      });
    }

    /* `source` appended (none: a pass is wanted): derive it after the kick
       delay, batched with other kicks. */
    kick(source) {
      this.#core.kick(source === undefined ? undefined : String(source), performance.now());
      this.#arm();
    }

    /* Derives and logs everything the sources committed so far; rejects when
       that could not be logged (the pass retries in the background). */
    flush() {
      return this.#serial(async () => {
        this.#mustBeOpen();
        this.#core.flush();
        await this.#pass();
        // What was appended must still be in the file the path names.
        await this.#logged(this.#log.verify());
      });
    }

    /* Appends producer drafts (each with its `source`) through the chain,
       in chunks of at most `chunkSize`. */
    emit(drafts) {
      if (!Array.isArray(drafts)) return Promise.reject(bad('EventPump.emit: drafts must be an array'));
      return this.#serial(async () => {
        this.#mustBeOpen();
        const now = this.#wall();
        const records = drafts.map((d) => {
          const source = d?.source;
          return recordOf(d, source, this.#sources.get(source)?.identity?.(), now);
        });
        for (let i = 0; i < records.length; i += this.#chunkSize) {
          await this.#logged(this.#log.append(records.slice(i, i + this.#chunkSize), this.#core.unsavedMarks()));
          this.#core.unsavedWritten();
        }
      });
    }

    /* Registers a source after open; it derives from its first entry. */
    addSource(name, source) {
      return this.#serial(() => {
        this.#mustBeOpen();
        checkSource(name, source);
        this.#sources.set(name, source);
        this.#core.register(name);
        this.#core.kick(undefined, performance.now());
      });
    }

    /* Derives and logs what is left of `name`, then forgets it (its
       watermark goes). Rejects, keeping it, when that could not be logged. */
    removeSource(name) {
      return this.#serial(async () => {
        this.#mustBeOpen();
        this.#core.flush();
        await this.#pass();
        this.#core.forget(name);
        this.#sources.delete(name);
      });
    }

    /* Compacts now; resolves how many records went. */
    compact() {
      return this.#serial(() => {
        this.#mustBeOpen();
        return this.#compact(true);
      });
    }

    /* The log's records from `seq` on, after everything queued before. */
    readFrom(seq = 0) {
      return this.#serial(() => {
        this.#mustBeOpen();
        return this.#log.readFrom(seq);
      });
    }

    /* Derives what is left, records moved watermarks, closes the log (also
       when that failed: the next open derives again). */
    close() {
      return this.#serial(async () => {
        if (this.#core.phase() !== 'open') {
          this.#core.closed();
          return;
        }
        try {
          this.#core.flush();
          await this.#pass();
          if (this.#core.hasUnsaved()) {
            await this.#logged(this.#log.append([], this.#core.unsavedMarks()));
            this.#core.unsavedWritten();
          }
        } catch (error) {
          this.#notify(`event log close failed: ${error.message}`);
          throw error;
        } finally {
          this.#core.closed();
          clearTimeout(this.#timer);
          await this.#log.close();
          this.#sources.clear();
        }
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

    #mustBeOpen() {
      const phase = this.#core.phase();
      if (phase !== 'open') {
        throw new EventLogError(phase === 'closed' ? 'event pump closed' : 'event pump not open yet', 'EVENTLOG_CLOSED', { path: this.#path });
      }
    }

    /* Awaits a log operation; a log created anew behind it makes every
       source derive again (backfill). */
    async #logged(operation) {
      try {
        return await operation;
      } catch (error) {
        if (error?.code === 'EVENTLOG_REPLACED') this.#core.replaced(performance.now());
        throw error;
      }
    }

    async #pass() {
      if (this.#core.phase() !== 'open') return;
      const plan = this.#core.beginPass();
      try {
        await this.#derive(plan);
      } catch (error) {
        if (this.#core.passFailed(String(error?.message ?? error), performance.now())) {
          this.#notify(`event log append failed (retrying in the background): ${error?.message ?? error}`);
        }
        throw error;
      }
      this.#core.passSucceeded();
      if (this.#core.compactionDue(performance.now())) await this.#compact().catch(() => {});
    }

    /* Derives the plan's sources chunk by chunk: the next chunk is derived
       while the last one's append is written and synced. */
    async #derive(plan) {
      const core = this.#core;
      const now = this.#wall();
      let inFlight;
      let failed;
      const settle = async () => {
        if (!inFlight) return;
        const { append, completes } = inFlight;
        inFlight = undefined;
        await this.#logged(append);
        core.chunkLogged(completes);
        for (const [name, position] of completes) this.#sources.get(name)?.logged?.(position);
      };
      const commit = async (drafts, completes) => {
        await settle();
        if (drafts.length === 0) {
          core.chunkWithoutEvents(completes);
          return;
        }
        inFlight = { append: this.#log.append(drafts, core.toWrite(completes)), completes };
      };
      try {
        let drafts = [];
        sources: for (const [name, from] of plan) {
          const source = this.#sources.get(name);
          if (!source) continue;
          const len = source.committedLength();
          if (!Number.isSafeInteger(len) || len < 0) {
            failed ??= bad(`EventPump: source '${name}' committedLength() answered ${String(len)}, not a length`);
            continue;
          }
          if (len <= from) continue;
          core.beginSource(name, from);
          const identity = source.identity?.();
          for (let index = from; index < len; index++) {
            let derived;
            try {
              derived = source.derive(index);
              if (!Array.isArray(derived)) throw new TypeError(`derive(${index}) answered ${typeof derived}, not an array of drafts`);
            } catch (error) {
              // Its watermark stops before the entry; the others go on.
              core.endSource(index);
              failed ??= new EventLogError(`EventPump: source '${name}' failed to derive entry ${index}: ${error?.message ?? error}`, 'EVENTLOG_SOURCE', { cause: error });
              continue sources;
            }
            for (const draft of derived) {
              const cut = core.push(index);
              if (cut !== undefined) {
                await commit(drafts, cut);
                drafts = [];
              }
              drafts.push(recordOf(draft, name, identity, now));
            }
          }
          core.endSource(len);
        }
        const last = core.finishChunk();
        if (last !== undefined) await commit(drafts, last);
      } finally {
        // Whatever happened, the append in flight is settled first.
        await settle().catch((error) => { failed = error; });
      }
      if (failed) throw failed;
    }

    /* Retention: records older than the window whose source is quiet or
       gone go. A failure is reported, not retried before the next one. */
    async #compact(rethrow = false) {
      const core = this.#core;
      core.compactionStarted(performance.now());
      core.startRetention(this.#wall(), this.#retentionMs);
      const droppable = (name) => {
        const source = this.#sources.get(name);
        return source === undefined || source.quiet?.() === true;
      };
      try {
        // A record that is not an event as written here is kept.
        const keep = (event) => typeof event?.source !== 'string' || !Number.isSafeInteger(event.at)
          || !core.drops(event.source, event.at, droppable);
        const dropped = await this.#logged(this.#log.compact(keep, core.marks()));
        if (dropped > 0) core.unsavedWritten();
        return dropped;
      } catch (error) {
        this.#notify(`event log compaction failed: ${error.message}`);
        if (rethrow) throw error;
        return 0;
      }
    }
  }

  return { EventPump };
}

module.exports = { createPumpApi };
