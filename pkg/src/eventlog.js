'use strict';
/*
 * The durable event log for Node.js (`leasehold/eventlog`): the file the
 * native host writes, written and read through `node:fs`.
 *
 * The bytes (header, frames, checksums) and what an open does with the file
 * it finds (take it over, cut a torn tail, or set it aside and start a new
 * epoch) are the wasm module's (host-wasm/src/eventlog.rs over
 * leasehold-core's pump::frame and pump::recovery). What lives here: the
 * log's state and the order of its operations, over the file operations
 * (eventlog-files.js), the writer lock (eventlog-lock.js), checking the
 * caller's input (eventlog-input.js), and JSON.
 *
 * Numbers: sequence numbers, positions and lengths are JS numbers; epochs
 * (nanoseconds since the Unix epoch) are BigInts.
 */
const fs = require('node:fs');
const zlib = require('node:zlib');
const { promisify } = require('node:util');
const { WriterLock } = require('./eventlog-lock.js');
const { EventLogError, draftsBatch, checkMarks, knownOptions, marksOf, shown, noticeTo } = require('./eventlog-input.js');
const { ioError, readOrMissing, writeDurably, reopenRenamed, checkPath } = require('./eventlog-files.js');

const fdatasync = promisify(fs.fdatasync);

/* zlib's CRC-32 (Node.js 20.15, 22.2 and later): the framing's checksum (IEEE 802.3),
   taken by zlib's native code several times faster than the wasm module takes it over a
   large frame (about 80 µs against 28 for 144 KB). Where Node.js lacks it, the module sums. */
const crc32 = typeof zlib.crc32 === 'function' ? zlib.crc32 : undefined;

/* The wall clock in nanoseconds since the Unix epoch, for new epochs. */
const nowNs = () => BigInt(Date.now()) * 1000000n + (process.hrtime.bigint() % 1000000n);

function createEventLogApi(wasm) {
  const K = wasm.eventLogConstants();

  function checkMaxBatch(value) {
    if (value === undefined) return K.defaultChunkSize;
    if (!Number.isSafeInteger(value) || value < 1 || value > K.maxChunkSize) {
      throw new EventLogError(`EventLog.open: maxBatch must be an integer from 1 to ${K.maxChunkSize}, got ${shown(value)}`, 'EVENTLOG_BAD_INPUT');
    }
    return value;
  }

  /* Frames up to this many bytes are synced in the append's own call by
     default: a small frame syncs in about 0.2 ms on an SSD, and the hop
     through libuv's thread pool and back would add a third to it. */
  const BLOCKING_SYNC_MAX_BYTES = 64 * 1024;

  function checkBlockingSync(value) {
    if (value === undefined) return BLOCKING_SYNC_MAX_BYTES;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new EventLogError(`EventLog.open: blockingSyncMaxBytes must be an integer from 0, got ${shown(value)}`, 'EVENTLOG_BAD_INPUT');
    }
    return value;
  }

  const utf8 = new TextEncoder();

  /* What EventLog.open hands the constructor, which no caller has. */
  const OPENING = Symbol('EventLog.open');

  /* `forgetWatermark(log, source)`: the pump removed `source`, so its
     watermark goes, and a source added again under its name appends from
     position 0 without that being refused as a watermark going back (the
     pump's passes failed on it forever). Set in the class body, which alone
     reaches its private fields; handed to the pump, not exported. */
  let forgetWatermark;

  /* Encodes `text` straight into the module's memory (draftsInput); answers
     its length in bytes. JSON text is mostly ASCII, a byte per UTF-16 unit:
     room for more (UTF-8 takes at most three bytes per unit) is made only
     for what did not fit, so the module's memory, which never shrinks, does
     not grow to three times the largest append. */
  function encodeText(text) {
    let { read, written } = utf8.encodeInto(text, wasm.draftsInput(text.length));
    if (read < text.length) {
      const room = wasm.draftsInput(written + 3 * (text.length - read)).subarray(written);
      written += utf8.encodeInto(text.slice(read), room).written;
    }
    return written;
  }

  /* The frame of a prepared append (`draftsBatch`'s answer and the
     watermarks) whose records are numbered from `first`: the module builds
     the records and the frame from the text, and zlib checksums it where
     Node.js has zlib.crc32. */
  function encode({ text, kinds, ats, names, positions }, first) {
    let frame;
    try {
      frame = wasm.encodeDrafts(encodeText(text), kinds, ats, first, names, positions, crc32 === undefined);
    } catch (error) {
      throw new EventLogError(`event log record could not be encoded: ${error.message}`, 'EVENTLOG_BAD_INPUT', { cause: error });
    }
    if (crc32 !== undefined) {
      const sum = crc32(frame.subarray(K.frameHeadLen));
      new DataView(frame.buffer, frame.byteOffset, frame.byteLength).setUint32(K.frameSumAt, sum, true);
    }
    return frame;
  }

  class EventLog {
    #path;
    #maxBatch;
    #blockingSyncMaxBytes;
    #lock;
    #notify;
    #fd;
    #fdFile;
    #epoch = 0n;
    #nextSeq = 0;
    #len = 0;
    #tail = new Uint8Array(K.tailLen);
    #records = 0;
    #dropped = 0;
    #marks = new Map();
    /* The watermarks as the appends queued so far leave them: a new append's
       must not go back from these. */
    #marksAhead = new Map();
    #broken = true;
    #reserved = false;
    #closed = false;
    #tasks = [];
    #running = false;
    /* Counts failed appends: an append queued while an earlier one was
       pending is not written when that one failed (its watermarks may rely
       on the earlier drafts). */
    #failures = 0;
    /* Records in appends accepted and not yet written or failed (those
       queued and the one syncing): the next append's first sequence number
       is `#nextSeq + #queued`, so its frame, numbered when it is made,
       is written as it is unless an append before it fails. */
    #queued = 0;

    constructor(opening, path, maxBatch, blockingSyncMaxBytes, lock, notify) {
      // Only open makes one: `new EventLog(path)` made a log without its
      // lock or options that created the file and then failed with a TypeError.
      if (opening !== OPENING) {
        throw new EventLogError('EventLog: a log is opened with `await EventLog.open(path, options)`, not `new EventLog`', 'EVENTLOG_BAD_INPUT');
      }
      this.#path = path;
      this.#maxBatch = maxBatch;
      this.#blockingSyncMaxBytes = blockingSyncMaxBytes;
      this.#lock = lock;
      this.#notify = notify;
    }

    /*
     * Opens the log at `path`, recovering or creating it. Answers `{ log,
     * created, setAside, notice, marks }`.
     */
    static {
      forgetWatermark = (log, source) => log.#marksAhead.delete(source);
    }

    static async open(path, options = {}) {
      if (options === null || typeof options !== 'object') {
        throw new EventLogError('EventLog.open: options must be an object', 'EVENTLOG_BAD_INPUT');
      }
      knownOptions(options, ['maxBatch', 'blockingSyncMaxBytes', 'onNotice', 'writerLock'], 'EventLog.open');
      checkPath(path);
      const maxBatch = checkMaxBatch(options.maxBatch);
      const blockingSyncMaxBytes = checkBlockingSync(options.blockingSyncMaxBytes);
      const notify = options.onNotice ?? ((text) => process.stderr.write(`leasehold: ${text}\n`));
      if (typeof notify !== 'function') throw new EventLogError('EventLog.open: onNotice must be a function', 'EVENTLOG_BAD_INPUT');
      // Only `false` goes without the lock: a 'false' or a 0 meant to would take it unnoticed.
      if (options.writerLock !== undefined && typeof options.writerLock !== 'boolean') {
        throw new EventLogError(`EventLog.open: writerLock must be true or false, got ${shown(options.writerLock)}`, 'EVENTLOG_BAD_INPUT');
      }
      let lock;
      if (options.writerLock !== false) {
        try {
          lock = await WriterLock.acquire(path);
        } catch (error) {
          if (error.reason === 'in-use') {
            throw new EventLogError(`event log ${path} is already open for writing elsewhere (lock ${path}.lock is held): one writer per log`, 'EVENTLOG_IN_USE', { path });
          }
          // Nothing failed but the path: bad input, which EVENTLOG_IO (a broken log) is not.
          if (error.reason === 'path') throw new EventLogError(`event log ${JSON.stringify(path)}: ${error.message} (writerLock: false goes without the lock)`, 'EVENTLOG_BAD_INPUT', { path });
          throw new EventLogError(`event log ${path}: ${error.message}`, 'EVENTLOG_IO', { path, op: 'lock', cause: error });
        }
      }
      const log = new EventLog(OPENING, path, maxBatch, blockingSyncMaxBytes, lock, noticeTo(notify));
      try {
        const { created, setAside, notice } = await log.#recover(undefined);
        return { log, created, setAside, notice, marks: new Map(log.#marks) };
      } catch (error) {
        await log.#release();
        throw error;
      }
    }

    /* Reads the file and takes it over, or sets it aside and starts anew. */
    async #recover(previous) {
      const path = this.#path;
      this.#closeFd();
      this.#broken = true;
      try {
        fs.rmSync(`${path}.compact`, { force: true });
      } catch (error) {
        throw ioError('remove stale compaction file', path, error);
      }
      const bytes = readOrMissing(path);
      const plan = wasm.planOpen(bytes, previous?.epoch ?? 0n, previous?.len ?? 0, previous?.tail ?? new Uint8Array(0));
      if (plan.kind === 'takeover') {
        let fd;
        try {
          fd = fs.openSync(path, 'a');
        } catch (error) {
          throw ioError('open', path, error);
        }
        this.#useFd(fd);
        await this.#lockFile();
        let notice;
        if (plan.tornBytes > 0) {
          try {
            fs.ftruncateSync(fd, plan.validLen);
            fs.fdatasyncSync(fd);
          } catch (error) {
            throw ioError('truncate torn tail', path, error);
          }
          if (previous) {
            notice = `event log ${path}: ${plan.tornBytes} bytes of a failed append truncated at byte ${plan.validLen}`;
          } else {
            notice = `event log ${path}: torn tail of ${plan.tornBytes} bytes truncated at byte ${plan.validLen} (epoch ${plan.epoch} kept)`;
            this.#notify(notice);
          }
        }
        this.#epoch = plan.epoch;
        this.#nextSeq = plan.nextSeq;
        this.#len = plan.validLen;
        this.#tail = plan.tail;
        this.#records = plan.records;
        this.#marks = new Map(plan.marks);
        this.#marksAhead = new Map(plan.marks);
        this.#broken = false;
        this.#reserved = false;
        return { created: false, setAside: undefined, notice };
      }
      const epoch = wasm.newEpoch(nowNs(), previous?.epoch ?? this.#epoch);
      let setAside;
      let reason = `no event log at ${path}`;
      if (plan.asideSuffix !== undefined) {
        setAside = `${path}${plan.asideSuffix}${epoch}`;
        try {
          fs.renameSync(path, setAside);
        } catch (error) {
          throw ioError(`rename ${plan.why} log aside`, path, error);
        }
        reason = plan.why === 'corrupt'
          ? `event log ${path} is corrupt (${plan.corruption}; kept as ${setAside})`
          : `event log ${path} changed behind its writer (kept as ${setAside})`;
      }
      await this.#create(epoch);
      const notice = `${reason}: a new event log (epoch ${epoch}) starts and every source is derived again`;
      // The first run's new log is the normal case: said in the answer only.
      if (bytes !== undefined || previous) this.#notify(notice);
      return { created: true, setAside, notice };
    }

    async #lockFile() {
      if (!this.#lock) return;
      try {
        await this.#lock.lockFile(this.#path);
      } catch (error) {
        if (error.reason === 'in-use') {
          throw new EventLogError(`event log ${this.#path} is already open for writing elsewhere (the file itself is locked): one writer per log`, 'EVENTLOG_IN_USE', { path: this.#path });
        }
        throw ioError('lock', this.#path, error);
      }
    }

    /* A new, empty log of `epoch`, through `<log>.new` and a rename. */
    async #create(epoch) {
      const path = this.#path;
      const temp = `${path}.new`;
      const header = wasm.encodeHeader(epoch);
      try {
        writeDurably(temp, header);
        fs.renameSync(temp, path);
        this.#useFd(reopenRenamed(path));
      } catch (error) {
        throw ioError('create', temp, error);
      }
      await this.#lockFile();
      this.#epoch = epoch;
      this.#nextSeq = 0;
      this.#len = header.length;
      this.#tail = header.slice(header.length - K.tailLen);
      this.#records = 0;
      this.#marks = new Map();
      this.#marksAhead = new Map();
      this.#broken = false;
      // A new epoch: readers start over from 0, the next open skips ahead.
      this.#reserved = true;
    }

    #closeFd() {
      if (this.#fd === undefined) return;
      try {
        fs.closeSync(this.#fd);
      } catch {
        // Already gone: nothing to keep.
      }
      this.#fd = undefined;
    }

    async #release() {
      this.#closeFd();
      const lock = this.#lock;
      this.#lock = undefined;
      if (lock) await lock.release();
    }

    /* Writes go to `fd` from now on; its file's identity is kept for
       #intact. */
    #useFd(fd) {
      this.#fd = fd;
      const open = fs.fstatSync(fd, { bigint: true });
      this.#fdFile = { dev: open.dev, ino: open.ino };
    }

    /* Whether the path still names the open file, `len` bytes long: one
       stat call (the open file's identity never changes). */
    #intact(len) {
      const named = fs.statSync(this.#path, { bigint: true, throwIfNoEntry: false });
      return named !== undefined && named.ino === this.#fdFile.ino && named.dev === this.#fdFile.dev && named.size === BigInt(len);
    }

    /* A broken log is reopened before it is used again; a reopened log that
       had to start anew fails the operation (derive everything again). */
    async #writable() {
      if (this.#closed) throw new EventLogError('event log closed', 'EVENTLOG_CLOSED', { path: this.#path });
      if (this.#lock?.lost) await this.#relock();
      if (!this.#broken) return;
      const previous = { epoch: this.#epoch, len: this.#len, tail: this.#tail };
      const { created } = await this.#recover(previous);
      if (created) {
        throw new EventLogError(`event log replaced by a new log (epoch ${this.#epoch}): derive everything again`, 'EVENTLOG_REPLACED', { path: this.#path, epoch: this.#epoch });
      }
    }

    /* The lock's holder process ended (killed): the lock is taken again,
       or the writer stops here if another took the log meanwhile; then the
       file is reopened as after a failure (kept only if it still holds what
       this writer wrote). */
    async #relock() {
      this.#broken = true;
      this.#closeFd();
      try {
        // Until it is taken again the lost one stays, so every use tries.
        this.#lock = await WriterLock.acquire(this.#path);
      } catch (error) {
        const code = error.reason === 'in-use' ? 'EVENTLOG_IN_USE' : 'EVENTLOG_IO';
        throw new EventLogError(`event log ${this.#path}: the writer lock was lost (its holder process ended) and could not be taken again: ${error.message}`, code, { path: this.#path, op: 'lock', cause: error });
      }
    }

    /* Writes one frame at the end and syncs it: in the call when the
       frame is at most blockingSyncMaxBytes (answers undefined), else on
       the thread pool, while this thread goes on (answers a promise; the
       next append's drafts are serialised meanwhile). Any failure marks the
       log broken (thrown, or the promise rejects), and so does finding the
       file removed or changed behind us. */
    #writeFrame(frame) {
      const fd = this.#fd;
      let intact;
      try {
        // The write only copies into the page cache.
        let done = 0;
        while (done < frame.length) done += fs.writeSync(fd, frame, done, frame.length - done, null);
      } catch (error) {
        this.#broken = true;
        throw ioError('write', this.#path, error);
      }
      // The path is checked before the sync, while this thread is warm (a
      // stat call after a sync that slept costs several times more); a
      // failed sync still wins.
      try {
        intact = this.#intact(this.#len + frame.length);
      } catch (error) {
        intact = error;
      }
      if (frame.length > this.#blockingSyncMaxBytes) {
        return fdatasync(fd).then(() => this.#wrote(frame, intact), (error) => this.#syncFailed(error));
      }
      try {
        fs.fdatasyncSync(fd);
      } catch (error) {
        this.#syncFailed(error);
      }
      this.#wrote(frame, intact);
      return undefined;
    }

    #syncFailed(error) {
      this.#broken = true;
      throw ioError('fsync', this.#path, error);
    }

    /* A frame written and synced: the log is longer by it, unless the path
       no longer named this file as it was (`intact`: false, or the stat
       call's error). */
    #wrote(frame, intact) {
      if (intact !== true) {
        this.#broken = true;
        const cause = intact === false ? new Error('the log file was removed, replaced or changed while open (the next append reopens it, or starts a new log)') : intact;
        throw ioError('append', this.#path, cause);
      }
      this.#len += frame.length;
      this.#tail = frame.slice(frame.length - K.tailLen);
    }

    #reserve() {
      if (this.#nextSeq === 0) {
        this.#reserved = true;
        return Promise.resolve();
      }
      const frame = wasm.encodeFrame(new Uint8Array(0), Uint32Array.of(0), this.#nextSeq - 1, [], new Float64Array(0));
      return Promise.resolve(this.#writeFrame(frame)).then(() => { this.#reserved = true; });
    }

    /* Runs `fn` after every operation queued before it. The next operation
       starts (its write goes to the file system) before the caller of the
       one that finished hears of it, so an append queued while another
       syncs is not held up by what that caller does next. */
    #serial(fn) {
      return new Promise((resolve, reject) => {
        this.#tasks.push({ fn, resolve, reject });
        if (!this.#running) this.#runNext();
      });
    }

    #runNext() {
      for (;;) {
        const task = this.#tasks.shift();
        this.#running = task !== undefined;
        if (!task) return;
        let result;
        try {
          result = task.fn();
        } catch (error) {
          task.reject(error);
          continue;
        }
        if (result instanceof Promise) {
          result.then(
            (value) => { this.#runNext(); task.resolve(value); },
            (error) => { this.#runNext(); task.reject(error); },
          );
          return;
        }
        // Done in the call (an append synced in it): its caller hears of
        // it after the next operation started, as above.
        task.resolve(result);
      }
    }

    /*
     * Appends `drafts` and the watermarks `marks` in one write and one
     * fdatasync; resolves `{ first, end }` (the sequence numbers given,
     * `first` to `end - 1`) once durable. Drafts are serialised at the call,
     * so a caller may queue the next append while one syncs.
     */
    append(drafts, marks) {
      let prepared;
      try {
        if (!Array.isArray(drafts)) throw new EventLogError('EventLog.append: drafts must be an array', 'EVENTLOG_BAD_INPUT');
        if (drafts.length > this.#maxBatch) {
          // Named as open takes it, so the caller knows what sets the limit.
          throw new EventLogError(`EventLog.append: ${drafts.length} drafts exceed the log's maxBatch of ${this.#maxBatch} (split them, or open the log with a larger maxBatch, at most ${K.maxChunkSize})`, 'EVENTLOG_BAD_INPUT');
        }
        const pairs = marksOf(marks, 'EventLog.append');
        checkMarks(pairs, this.#marksAhead, 'EventLog.append');
        if (this.#closed) throw new EventLogError('event log closed', 'EVENTLOG_CLOSED', { path: this.#path });
        const { text, kinds, ats } = draftsBatch(drafts, Date.now());
        const names = new Array(pairs.length);
        const positions = new Float64Array(pairs.length);
        for (let i = 0; i < pairs.length; i++) [names[i], positions[i]] = pairs[i];
        // Numbered and checksummed now, as the numbers will be unless an
        // append queued before fails: the write then only writes.
        const first = this.#nextSeq + this.#queued;
        prepared = { text, kinds, ats, count: drafts.length, pairs, names, positions, first, frame: undefined };
        prepared.frame = encode(prepared, first);
      } catch (error) {
        return Promise.reject(error);
      }
      for (const [name, position] of prepared.pairs) this.#marksAhead.set(name, position);
      const failures = this.#failures;
      this.#queued += prepared.count;
      return this.#serial(() => {
        if (this.#failures !== failures) {
          this.#queued -= prepared.count;
          throw new EventLogError(`event log ${this.#path}: an append queued before this one failed, so nothing of this one was written`, 'EVENTLOG_ABANDONED', { path: this.#path });
        }
        const failed = (error) => {
          this.#queued -= prepared.count;
          this.#failures++;
          throw error;
        };
        let result;
        try {
          result = this.#appendPrepared(prepared);
        } catch (error) {
          failed(error);
        }
        return result instanceof Promise ? result.catch(failed) : result;
      });
    }

    /* Appends a prepared append: its answer, or a promise of it. */
    #appendPrepared(prepared) {
      const unready = this.#broken || this.#closed || this.#lock?.lost || (!this.#reserved && prepared.count > 0);
      return unready ? this.#appendWhenReady(prepared) : this.#appendNow(prepared);
    }

    async #appendWhenReady(prepared) {
      if (this.#broken || this.#closed || this.#lock?.lost) await this.#writable();
      if (!this.#reserved && prepared.count > 0) await this.#reserve();
      return this.#appendNow(prepared);
    }

    #appendNow(prepared) {
      const first = this.#nextSeq;
      if (prepared.count === 0 && prepared.pairs.length === 0) return { first, end: first };
      const written = this.#writeFrame(first === prepared.first ? prepared.frame : encode(prepared, first));
      return written === undefined ? this.#appended(prepared, first) : written.then(() => this.#appended(prepared, first));
    }

    /* An append written and synced from `first` on. In one step, so an
       append made now is numbered right. */
    #appended({ count, pairs }, first) {
      this.#nextSeq += count;
      this.#queued -= count;
      this.#records += count;
      for (const [name, position] of pairs) this.#marks.set(name, position);
      return { first, end: this.#nextSeq };
    }

    /*
     * Drops every record for which `keep(event, seq)` answers false and
     * records `marks` as the log's watermarks (left out: the ones it
     * records); resolves how many went (none: the file is left as it is).
     * Through `<log>.compact`, synced and renamed over the log.
     */
    compact(keep, marks) {
      let given;
      try {
        if (typeof keep !== 'function') throw new EventLogError('EventLog.compact: keep must be a function', 'EVENTLOG_BAD_INPUT');
        if (marks !== undefined && marks !== null) {
          given = marksOf(marks, 'EventLog.compact');
          checkMarks(given, this.#marksAhead, 'EventLog.compact');
        }
      } catch (error) {
        return Promise.reject(error);
      }
      // At the call, as an append's: set when the compaction ran, they undid
      // the marks of appends queued after it, and one going back from those passed.
      if (given) this.#marksAhead = new Map(given);
      return this.#serial(() => this.#compact(keep, given));
    }

    async #compact(keep, given) {
      await this.#writable();
      // Marks left out are the log's own as the operations before this one
      // left them: the rewrite records only the marks it is given, and
      // with none every source's watermark went (a pump derived everything
      // again).
      const pairs = given ?? [...this.#marks];
      const path = this.#path;
      const bytes = readOrMissing(path) ?? Buffer.alloc(0);
      const tail = bytes.subarray(this.#len - K.tailLen, this.#len);
      if (bytes.length !== this.#len || !this.#intact(this.#len) || !Buffer.from(tail).equals(Buffer.from(this.#tail))) {
        this.#broken = true;
        throw ioError('compact', path, new Error('the log file was changed behind its writer'));
      }
      const read = wasm.readRecords(bytes, 0);
      if (read.epoch !== this.#epoch || read.damage !== undefined) {
        this.#broken = true;
        throw ioError('compact', path, new Error('the log file was changed behind its writer'));
      }
      const entries = read.entries;
      const flags = new Uint8Array(entries.length / 3);
      let dropped = 0;
      for (let i = 0; i < flags.length; i++) {
        const at = entries[3 * i + 1];
        let event;
        try {
          event = JSON.parse(bytes.toString('utf8', at, at + entries[3 * i + 2]));
        } catch {
          flags[i] = 1; // a payload that does not parse is kept
          continue;
        }
        const kept = keep(event, entries[3 * i]);
        // An async keep's Promise is truthy: every record was kept, without a word.
        if (typeof kept?.then === 'function') {
          throw new EventLogError('EventLog.compact: keep answered a Promise: it must answer at once (true keeps the record), not be async', 'EVENTLOG_BAD_INPUT');
        }
        if (kept) flags[i] = 1;
        else dropped++;
      }
      if (dropped === 0) return 0;
      const out = wasm.compactBytes(bytes, flags, this.#nextSeq - 1, this.#maxBatch, pairs.map((p) => p[0]), Float64Array.from(pairs, (p) => p[1]));
      const temp = `${path}.compact`;
      try {
        writeDurably(temp, out);
        fs.renameSync(temp, path);
      } catch (error) {
        fs.rmSync(temp, { force: true });
        throw ioError('compact', temp, error);
      }
      // From the rename on the open handle is the old file: broken until
      // the compacted one is open.
      this.#broken = true;
      this.#closeFd();
      this.#len = out.length;
      this.#tail = out.slice(out.length - K.tailLen);
      try {
        this.#useFd(reopenRenamed(path));
      } catch (error) {
        throw ioError('reopen after compaction', path, error);
      }
      await this.#lockFile();
      this.#broken = false;
      this.#records -= dropped;
      this.#dropped += dropped;
      this.#reserved = true;
      this.#marks = new Map(pairs);
      return dropped;
    }

    /*
     * Checks that the file at the path is still this log as its last append
     * left it (two stat calls); one removed, replaced, truncated or copied
     * over is reopened as the next append would: kept if it still holds
     * what was written, else set aside (`EVENTLOG_REPLACED`: a new log).
     */
    verify() {
      return this.#serial(async () => {
        if (this.#closed) throw new EventLogError('event log closed', 'EVENTLOG_CLOSED', { path: this.#path });
        if (!this.#broken && this.#intact(this.#len)) return;
        this.#broken = true;
        await this.#writable();
      });
    }

    /* The records from sequence number `seq` on: `{ epoch, records: [{ seq,
       event }], next }`, after every operation queued before. */
    readFrom(seq = 0) {
      return this.#serial(() => {
        if (this.#closed) throw new EventLogError('event log closed', 'EVENTLOG_CLOSED', { path: this.#path });
        return readLog(this.#path, seq, this.#len);
      });
    }

    /* Lets the file and the lock go once every queued operation ran. */
    close() {
      return this.#serial(async () => {
        if (this.#closed) return;
        this.#closed = true;
        this.#broken = false;
        await this.#release();
      });
    }

    get path() { return this.#path; }
    get maxBatch() { return this.#maxBatch; }
    get epoch() { return this.#epoch; }
    get head() { return this.#nextSeq; }
    get records() { return this.#records; }
    get dropped() { return this.#dropped; }
    get broken() { return this.#broken; }
    get closed() { return this.#closed; }
    get byteLength() { return this.#len; }
    get marks() { return new Map(this.#marks); }
  }

  /* Reads the records of the log at `path` from sequence number `from` on,
     without a lock (a torn tail ends the read; damage before it throws). */
  function readLog(path, from = 0, len = undefined) {
    if (!Number.isSafeInteger(from) || from < 0) {
      throw new EventLogError(`readEventLog: from must be a sequence number (an integer from 0), got ${shown(from)}`, 'EVENTLOG_BAD_INPUT');
    }
    const whole = readOrMissing(path);
    if (whole === undefined) throw new EventLogError(`no event log at ${path}`, 'EVENTLOG_MISSING', { path });
    const bytes = len === undefined ? whole : whole.subarray(0, len);
    let read;
    try {
      read = wasm.readRecords(bytes, from);
    } catch (error) {
      throw new EventLogError(`event log ${path} is corrupt: ${error.message}`, 'EVENTLOG_CORRUPT', { path });
    }
    if (read.damage !== undefined) throw new EventLogError(`event log ${path} is corrupt: ${read.damage}`, 'EVENTLOG_CORRUPT', { path });
    const { entries } = read;
    const records = new Array(entries.length / 3);
    for (let i = 0; i < records.length; i++) {
      const at = entries[3 * i + 1];
      const seq = entries[3 * i];
      try {
        records[i] = { seq, event: JSON.parse(bytes.toString('utf8', at, at + entries[3 * i + 2])) };
      } catch (error) {
        throw new EventLogError(`event log ${path}: record ${seq} is not an event: ${error.message}`, 'EVENTLOG_CORRUPT', { path });
      }
    }
    return { epoch: read.epoch, records, next: read.next, marks: new Map(read.marks) };
  }

  const readEventLog = (path, from = 0) => readLog(path, from);
  return { EventLog, EventLogError, readEventLog, MAX_CHUNK_SIZE: K.maxChunkSize, DEFAULT_CHUNK_SIZE: K.defaultChunkSize, forgetWatermark };
}

module.exports = { createEventLogApi, EventLogError };
