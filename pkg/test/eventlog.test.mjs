// The event log from Node.js (`leasehold/eventlog`): appends durable on return, reading
// back by sequence number, recovery at open, one writer, and bad input refused with
// nothing written. Real files in a temporary folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';
import fs from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { EventLog, EventPump, readEventLog, tempLog, drafts, notices } from './eventlog-helpers.mjs';

test('a new log is created, appends come back in order with their sequence numbers', async (t) => {
  const file = tempLog(t);
  const opened = await EventLog.open(file);
  assert.equal(opened.created, true);
  assert.equal(opened.setAside, undefined);
  assert.equal(typeof opened.log.epoch, 'bigint');
  const first = await opened.log.append(drafts(3), new Map([['jobs', 3]]));
  assert.deepEqual(first, { first: 0, end: 3 });
  const second = await opened.log.append(drafts(2, 'jobs', 3), [['jobs', 5]]);
  assert.deepEqual(second, { first: 3, end: 5 });
  assert.equal(opened.log.head, 5);
  const read = await opened.log.readFrom(2);
  assert.equal(read.epoch, opened.log.epoch);
  assert.deepEqual(read.records.map((r) => r.seq), [2, 3, 4]);
  assert.deepEqual(read.records[0].event, drafts(3)[2]);
  assert.equal(read.next, 5);
  await opened.log.close();
  await assert.rejects(opened.log.append(drafts(1)), { code: 'EVENTLOG_CLOSED' });
});

test('a reopened log keeps its epoch and watermarks and never reuses a sequence number', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(4), { jobs: 4 });
  const epoch = log.epoch;
  await log.close();
  const again = await EventLog.open(file);
  assert.equal(again.created, false);
  assert.equal(again.log.epoch, epoch);
  assert.deepEqual([...again.marks], [['jobs', 4]]);
  const { first } = await again.log.append(drafts(1, 'jobs', 4), { jobs: 5 });
  assert.ok(first > 4, `numbers skip ahead after an open (got ${first})`);
  await again.log.close();
  // The skip itself is durable: a crash that loses the append above would not reuse it.
  const read = readEventLog(file, 0);
  assert.deepEqual(read.records.map((r) => r.seq), [0, 1, 2, 3, first]);
});

test('a torn tail is cut back at open and the epoch is kept', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(2), { jobs: 2 });
  const epoch = log.epoch;
  const whole = log.byteLength;
  await log.close();
  // A crash inside a write leaves a prefix of a frame: here of the first one.
  const frame = fs.readFileSync(file).subarray(20);
  for (const torn of [1, 7, 13, 40, frame.length - 1]) {
    fs.appendFileSync(file, frame.subarray(0, torn));
    const said = notices();
    const again = await EventLog.open(file, { onNotice: said.onNotice });
    assert.equal(again.created, false);
    assert.equal(again.log.epoch, epoch);
    assert.equal(fs.statSync(file).size, whole, `${torn} torn bytes cut`);
    assert.match(again.notice, new RegExp(`torn tail of ${torn} bytes truncated`));
    assert.equal(said.said.length, 1);
    await again.log.close();
  }
});

test('a damaged frame before the tail starts a new epoch and keeps the damaged file aside', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(2), { jobs: 2 });
  await log.append(drafts(2, 'jobs', 2), { jobs: 4 });
  const epoch = log.epoch;
  await log.close();
  const bytes = fs.readFileSync(file);
  bytes[40] ^= 0xff; // inside the first frame's body
  fs.writeFileSync(file, bytes);
  const said = notices();
  const again = await EventLog.open(file, { onNotice: said.onNotice });
  assert.equal(again.created, true);
  assert.notEqual(again.log.epoch, epoch);
  assert.equal(again.setAside, `${file}.corrupt-${again.log.epoch}`);
  assert.deepEqual(fs.readFileSync(again.setAside), bytes, 'the damaged file is kept as it was');
  assert.equal(again.marks.size, 0, 'every source derives again');
  assert.match(said.said[0], /is corrupt/);
  assert.deepEqual(readEventLog(file).records, []);
  await again.log.close();
});

test('a second writer is refused while one holds the log, and may open once it closed', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(1));
  const before = fs.readFileSync(file);
  await assert.rejects(EventLog.open(file), (e) => e.code === 'EVENTLOG_IN_USE' && /already open for writing/.test(e.message));
  assert.deepEqual(fs.readFileSync(file), before, 'the refused open touched nothing');
  await log.close();
  const next = await EventLog.open(file);
  await next.log.close();
});

test('a log removed behind its writer is noticed at the next append and a new log starts', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file, { onNotice() {} });
  await log.append(drafts(2), { jobs: 2 });
  const epoch = log.epoch;
  fs.unlinkSync(file);
  await assert.rejects(log.append(drafts(1, 'jobs', 2), { jobs: 3 }), { code: 'EVENTLOG_IO' });
  assert.equal(log.broken, true);
  await assert.rejects(log.append(drafts(1, 'jobs', 2), { jobs: 3 }), (e) => e.code === 'EVENTLOG_REPLACED' && e.epoch !== epoch);
  assert.notEqual(log.epoch, epoch);
  assert.equal(log.marks.size, 0);
  await log.append(drafts(3), { jobs: 3 });
  assert.equal(readEventLog(file).records.length, 3);
  await log.close();
});

test('a log truncated behind its writer is set aside at the next append', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file, { onNotice() {} });
  await log.append(drafts(2), { jobs: 2 });
  await log.append(drafts(2, 'jobs', 2), { jobs: 4 });
  fs.truncateSync(file, 60);
  await assert.rejects(log.append(drafts(1, 'jobs', 4), { jobs: 5 }), { code: 'EVENTLOG_IO' });
  await assert.rejects(log.append(drafts(1, 'jobs', 4), { jobs: 5 }), { code: 'EVENTLOG_REPLACED' });
  const aside = fs.readdirSync(path.dirname(file)).filter((n) => n.includes('.replaced-'));
  assert.equal(aside.length, 1, 'the truncated file is kept aside');
  await log.close();
});

test('compaction drops what keep refuses, keeps sequence numbers and records the watermarks', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append([...drafts(3, 'old'), ...drafts(2, 'live', 3)], { old: 3, live: 2 });
  const dropped = await log.compact((event) => event.source !== 'old', { old: 3, live: 2 });
  assert.equal(dropped, 3);
  assert.equal(log.dropped, 3);
  const { records } = await log.readFrom(0);
  assert.deepEqual(records.map((r) => [r.seq, r.event.source]), [[3, 'live'], [4, 'live']]);
  assert.equal((await log.compact(() => true, { old: 3, live: 2 })), 0, 'nothing to drop leaves the file');
  const { first } = await log.append(drafts(1, 'live', 5), { live: 3 });
  assert.equal(first, 5);
  await log.close();
  const again = await EventLog.open(file);
  assert.deepEqual(new Map(again.marks), new Map([['old', 3], ['live', 3]]));
  await again.log.close();
});

test('bad input is refused naming the cause, and nothing is written', async (t) => {
  const file = tempLog(t);
  await assert.rejects(EventLog.open(path.join(path.dirname(file), 'missing', 'events.log')), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /does not exist/.test(e.message));
  await assert.rejects(EventLog.open(file, { maxBatch: 0 }), /maxBatch must be an integer/);
  await assert.rejects(EventLog.open(file, { maxbatch: 4 }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /EventLog.open: unknown option "maxbatch" \(known: maxBatch, blockingSyncMaxBytes, onNotice, writerLock\)/.test(e.message));
  await assert.rejects(EventLog.open(file, { blockingSyncMaxBytes: -1 }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /blockingSyncMaxBytes must be an integer from 0, got -1/.test(e.message));
  await assert.rejects(EventLog.open(file, { blockingSyncMaxBytes: '10' }), /blockingSyncMaxBytes must be an integer from 0, got "10" \(a string\)/);
  await assert.rejects(EventLog.open(file, { maxBatch: [] }), /maxBatch must be an integer from 1 to \d+, got an array/);
  await assert.rejects(EventPump.open({ path: file, chunksize: 4 }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /EventPump: unknown option "chunksize" \(known: path, sources, /.test(e.message));
  assert.equal(fs.existsSync(file), false, 'nothing was opened');
  const { log } = await EventLog.open(file);
  await log.append(drafts(1), { jobs: 5 });
  const before = fs.readFileSync(file);
  const cycle = { a: 1 };
  cycle.self = cycle;
  const cases = [
    [[{ source: 'jobs', type: 'x', body: { n: 10n } }], /draft 0\.body\.n is a bigint/],
    [[{ source: 'jobs', type: 'x', body: cycle }], /cycle/],
    [[{ source: 'jobs', type: 'x', body: { f() {} } }], /is a function/],
    [[{ source: 'jobs', type: 'x', body: [1, Number.NaN] }], /NaN/],
    [[{ source: 'jobs', type: 'x', body: new Map() }], /Map/],
    [[drafts(1)[0], { source: 'jobs', type: 'x', wid: 'w' }], /draft 1 has a field 'wid'/],
    [[{ type: 'x' }], /source must be a string/],
    [[{ source: 'jobs', type: 'x', at: -1 }], /at must be milliseconds/],
    [drafts(1), /watermark of source 'jobs' would go back from 5 to 4/, { jobs: 4 }],
    [drafts(1), /must be a position/, { jobs: 1.5 }],
    [drafts(1), /must be a position \(an integer from 0\), got "7" \(a string\)/, { jobs: '7' }],
    [drafts(1), /the watermark of source 'jobs' is given twice/, [['jobs', 30], ['jobs', 25]]],
    [[{ source: 'jobs', type: 'x', at: 5n }], /at must be milliseconds .*, got 5n \(a bigint\)/],
  ];
  for (const [input, message, marks] of cases) {
    await assert.rejects(log.append(input, marks), (e) => e.code === 'EVENTLOG_BAD_INPUT' && message.test(e.message), String(message));
  }
  let deep = {};
  for (let i = 0; i < 120; i++) deep = { deep };
  await assert.rejects(log.append([{ source: 'jobs', type: 'x', body: deep }]), /nests deeper than 100/);
  assert.deepEqual(fs.readFileSync(file), before, 'nothing was written');
  await log.close();
});

test('values JSON holds through toJSON, undefined fields and non-ASCII text are written as JSON.stringify writes them', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const body = { when: new Date(0), skipped: undefined, list: [1, 'é', null, { deep: ['ü'] }], text: 'naïve \u2028 😀' };
  const identity = { request: 'r-é', gone: undefined };
  await log.append([{ source: 'jobs', at: 7, type: 'x', identity, body }, { source: 'jobs', at: 8, type: 'y', identity: {} }], { jobs: 2 });
  const read = await log.readFrom(0);
  assert.deepEqual(read.records.map((r) => r.event), [
    { source: 'jobs', at: 7, type: 'x', identity: { request: 'r-é' }, body: JSON.parse(JSON.stringify(body)) },
    { source: 'jobs', at: 8, type: 'y' },
  ]);
  await log.close();
});

/* The payloads of the records in the log file at `file`, in order (the layout of the
   framing: a 20-byte header, then frames of a 12-byte head, a record count, and records
   of a sequence number, a length and the payload). */
function payloads(file) {
  const bytes = fs.readFileSync(file);
  const out = [];
  for (let at = 20; at < bytes.length;) {
    const len = bytes.readUInt32LE(at);
    let r = at + 16;
    for (let n = bytes.readUInt32LE(at + 12); n > 0; n--) {
      const size = bytes.readUInt32LE(r + 8);
      if (size > 0) out.push(bytes.subarray(r + 12, r + 12 + size).toString('utf8'));
      r += 12 + size;
    }
    at += 12 + len;
  }
  return out;
}

test('each record holds the bytes JSON.stringify writes for it, whatever its values hold', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const sep = '\u001f';
  const written = [
    { source: 'jobs', at: 7, type: 'x', identity: { request: 'r-1' }, body: { n: 1 } },
    { source: 'jobs', type: 'no at', body: 'text' },
    { source: 'jobs', at: 0, type: 'zero', identity: {} },
    { source: 'jobs', at: -0, type: 'minus zero', identity: null, body: null },
    { source: 'jobs', at: Number.MAX_SAFE_INTEGER, type: 'largest', body: [1e21, 0.1, -0, 5e-324, 1.7976931348623157e308] },
    // Not a lone surrogate: the native reader can not read one (refused, a test below).
    { source: 'q"u\\o\nte\u0000', at: 1, type: 'ünï 😀 \u2028', body: 'a "quoted" \\ back\tslash \\ud800 as text' },
    { source: sep, at: 2, type: 'separator as source', body: 1 },
    { source: 'jobs', at: 3, type: sep, body: 2 },
    { source: 'jobs', at: 4, type: 'separator as body', body: sep },
    { source: 'jobs', at: 5, type: 'separator nested', identity: { [sep]: sep, k: [sep, sep] }, body: [sep, { a: sep }, [',', sep]] },
    { source: 'jobs', at: 6, type: 'toJSON', identity: { when: new Date(0) }, body: new Date(1) },
    { source: 'jobs', at: 8, type: 'toJSON with its key', body: { toJSON: (key) => `key ${key}` } },
    { source: 'jobs', at: 9, type: 'scalars', body: false },
    { source: 'jobs', at: 10, type: 'scalars', body: 0 },
    { source: 'jobs', at: 11, type: 'undefined fields', identity: { gone: undefined }, body: { skipped: undefined, kept: [null] } },
    { source: '', at: 12, type: 'empty source', body: {} },
    { source: 'jobs', at: 99_999_999, type: 'eight digits', body: 3 },
    { source: 'jobs', at: 100_000_000, type: 'nine digits', body: 4 },
    { source: 'jobs', at: 1_700_000_000_007, type: 'zeros inside', body: 5 },
    { source: 'jobs', at: 13, type: 'mostly not ASCII', body: { text: '日本語の本文 😀😀😀 ' + 'ü€😀'.repeat(500) } },
  ];
  await log.append(written, { jobs: 1 });
  await log.append([written[9]], { jobs: 2 });
  await log.append([], { jobs: 3 });
  const got = payloads(file);
  const expected = [...written, written[9]].map((d, i) => {
    const record = { source: d.source, at: d.at ?? JSON.parse(got[i]).at, type: d.type };
    // Left out when empty as JSON writes it, as the native writer leaves it out.
    if (d.identity != null && Object.values(d.identity).some((v) => v !== undefined)) record.identity = d.identity;
    if (d.body != null) record.body = d.body;
    return JSON.stringify(record);
  });
  assert.deepEqual(got, expected);
  assert.equal(JSON.parse(got[11]).body, 'key body', 'toJSON is called with the key "body"');
  const read = await log.readFrom(0);
  assert.deepEqual(read.records.map((r) => JSON.stringify(r.event)), expected.map((e) => JSON.stringify(JSON.parse(e))));
  await log.close();
});

test('a path in a read-only folder is refused at open', { skip: process.platform === 'win32' }, (t) => {
  const file = tempLog(t);
  const top = path.dirname(file);
  const dir = path.join(top, 'read-only');
  fs.mkdirSync(dir, { mode: 0o555 });
  fs.chmodSync(top, 0o755);
  // As root every folder is writable: the open runs as an unprivileged user then, with
  // a copy of the built package it can read wherever this checkout is.
  const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const dist = path.join(top, 'dist');
  fs.cpSync(new URL('../dist/', import.meta.url), dist, { recursive: true });
  const script = `Promise.resolve().then(() => require(${JSON.stringify(path.join(dist, 'eventlog.cjs'))}).EventLog.open(${JSON.stringify(path.join(dir, 'e.log'))}))
    .then(() => console.log('opened'), (e) => console.log(e.code + ': ' + e.message))`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', cwd: top, ...asUser });
  if (run.error || (asUser.uid && run.status !== 0)) {
    t.skip(`an unprivileged user can not run ${process.execPath} here (${run.error?.code ?? run.stderr.trim().split('\n')[0]})`);
    return;
  }
  assert.match(run.stdout, /EVENTLOG_BAD_INPUT: .*is not writable/, run.stderr);
  assert.deepEqual(fs.readdirSync(dir), []);
});

test('verify passes a log as written and notices one copied over behind its writer', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file, { onNotice() {} });
  await log.append(drafts(2), { jobs: 2 });
  const older = fs.readFileSync(file);
  await log.append(drafts(2, 'jobs', 2), { jobs: 4 });
  await log.verify();
  const epoch = log.epoch;
  fs.writeFileSync(`${file}.old`, older);
  fs.renameSync(`${file}.old`, file); // an older copy restored over the log
  await assert.rejects(log.verify(), (e) => e.code === 'EVENTLOG_REPLACED' && e.epoch !== epoch);
  assert.equal(fs.readdirSync(path.dirname(file)).filter((n) => n.includes('.replaced-')).length, 1);
  await log.verify();
  await log.close();
});

test('a writer whose lock holder was killed takes the lock again before it appends, or stops', async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file, { onNotice() {} });
  await log.append(drafts(1), { jobs: 1 });
  const holders = () => spawnSync('pgrep', ['-P', String(process.pid), '-x', 'sh'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const [holder] = holders();
  assert.ok(holder, 'the lock holder runs');
  process.kill(Number(holder), 'SIGKILL');
  // Another writer may take the log while the lock is gone: this one then stops. The lock
  // goes once the killed holder's descriptors are closed, which a loaded machine may take
  // longer than a fixed sleep to do: the other writer tries until it has it.
  let other;
  for (const until = Date.now() + 10_000; other === undefined;) {
    try {
      other = await EventLog.open(file, { onNotice() {} });
    } catch (error) {
      if (error.code !== 'EVENTLOG_IN_USE' || Date.now() > until) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await assert.rejects(log.append(drafts(1, 'jobs', 1), { jobs: 2 }), (e) => e.code === 'EVENTLOG_IN_USE' && /writer lock was lost/.test(e.message));
  await other.log.close();
  // Once free, it takes the lock again and goes on with the file as it left it.
  const { first } = await log.append(drafts(1, 'jobs', 1), { jobs: 2 });
  assert.ok(first >= 1);
  assert.deepEqual(readEventLog(file).records.map((r) => r.event.body.item), [0, 1]);
  await log.close();
});

test('appends queued while one syncs are written as they were framed when made, each framed once', async (t) => {
  // The module counted: a queued append is numbered when it is made, counting the one
  // still syncing, so the write only writes; framing it again would put the work of an
  // append back between two syncs.
  const require = createRequire(import.meta.url);
  const module = require('../dist/leasehold_eventlog_node.cjs');
  let framed = 0;
  const counted = new Proxy(module, {
    get: (target, name) => (name === 'encodeDrafts' ? (...args) => (framed++, target.encodeDrafts(...args)) : target[name]),
  });
  const { createEventLogApi } = require('../dist/eventlog.js');
  const api = createEventLogApi(counted);
  const file = tempLog(t);
  const { log } = await api.EventLog.open(file);
  const made = [];
  for (let i = 0; i < 5; i++) made.push(log.append(drafts(3, 'jobs', 3 * i), { jobs: 3 * i + 3 }));
  assert.deepEqual(await Promise.all(made), [0, 3, 6, 9, 12].map((first) => ({ first, end: first + 3 })));
  assert.equal(framed, 5);
  await log.close();
  const read = readEventLog(file, 0);
  assert.deepEqual(read.records.map((r) => r.seq), Array.from({ length: 15 }, (_, i) => i));
  assert.deepEqual(read.records.map((r) => r.event), drafts(15));
});

test("a frame checksummed with zlib's CRC-32 is the byte-for-byte frame the module checksums", async (t) => {
  // Where Node.js has zlib.crc32 the glue asks the module for a frame without its checksum
  // and writes zlib's there; the file must hold exactly the frame the module sums itself.
  const require = createRequire(import.meta.url);
  const module = require('../dist/leasehold_eventlog_node.cjs');
  const summed = [];
  const asked = [];
  const watched = new Proxy(module, {
    get: (target, name) => (name === 'encodeDrafts'
      ? (...args) => {
        summed.push(target.encodeDrafts(...args.slice(0, 6), true));
        asked.push(args[6]);
        return target.encodeDrafts(...args);
      }
      : target[name]),
  });
  const { createEventLogApi } = require('../dist/eventlog.js');
  const api = createEventLogApi(watched);
  const file = tempLog(t);
  const { log } = await api.EventLog.open(file);
  const before = fs.statSync(file).size;
  await log.append(drafts(300), { jobs: 300 });
  await log.append(drafts(2, 'jobs', 300), { jobs: 302 });
  await log.close();
  assert.deepEqual(asked, [typeof zlib.crc32 !== 'function', typeof zlib.crc32 !== 'function']);
  assert.deepEqual(fs.readFileSync(file).subarray(before), Buffer.concat(summed));
  assert.deepEqual(readEventLog(file, 0).records.map((r) => r.event), drafts(302));
});

test('appends synced in the call and on the thread pool are the same durable appends', async (t) => {
  // The frame of 3 drafts is about 400 bytes: a limit of 0 syncs it on the thread pool,
  // the default in the call; a limit between sends the larger appends to the thread pool.
  const read = [];
  for (const blockingSyncMaxBytes of [0, undefined, 500]) {
    const file = tempLog(t);
    const { log } = await EventLog.open(file, { blockingSyncMaxBytes });
    const made = [drafts(3), drafts(1, 'jobs', 3), drafts(8, 'jobs', 4)].map((batch, i) => log.append(batch, { jobs: [3, 4, 12][i] }));
    assert.deepEqual(await Promise.all(made), [{ first: 0, end: 3 }, { first: 3, end: 4 }, { first: 4, end: 12 }]);
    await log.close();
    const back = readEventLog(file, 0);
    assert.deepEqual(back.records.map((r) => r.event), drafts(12));
    read.push(back.records.map((r) => r.seq));
  }
  assert.deepEqual(read[1], read[0]);
  assert.deepEqual(read[2], read[0]);
});

test('watermarks given as any iterable of pairs are recorded, as a Map or an array is', async (t) => {
  // The types take an Iterable; read as an object, an iterator has no keys, and its
  // watermarks went without a word.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(1), new Map([['jobs', 1]]).entries());
  await log.append(drafts(1, 'jobs', 1), (function* () { yield ['jobs', 2]; yield ['other', 7]; })());
  await log.append([], new Set([['other', 9]]));
  assert.deepEqual(log.marks, new Map([['jobs', 2], ['other', 9]]));
  await assert.rejects(log.append([], 'jobs'), /marks must be a Map, an iterable of \[source, position\] pairs or an object/);
  await log.close();
  assert.deepEqual(readEventLog(file).marks, new Map([['jobs', 2], ['other', 9]]));
});

test('compaction without marks keeps the watermarks the log records', async (t) => {
  // The rewrite records only the marks it is given: left out, every watermark went, and a
  // pump reopening the log derived every source again.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append([...drafts(2, 'old'), ...drafts(1, 'live', 2)], { old: 2, live: 1 });
  assert.equal(await log.compact((event) => event.source !== 'old'), 2);
  assert.deepEqual(log.marks, new Map([['old', 2], ['live', 1]]));
  await assert.rejects(log.append(drafts(1, 'live', 3), { live: 0 }), /would go back from 1 to 0/);
  // Given, they are the log's from then on: a source left out loses its watermark.
  await log.append(drafts(1, 'old', 4), { old: 3 });
  assert.equal(await log.compact((event) => event.source !== 'old', { live: 1 }), 1);
  await log.close();
  const again = await EventLog.open(file);
  assert.deepEqual(again.marks, new Map([['live', 1]]));
  await again.log.close();
});

test('an Error, a RegExp or another object JSON writes as {} is refused naming it, as a Map is', async (t) => {
  // `body: { error }` was logged as `"error":{}`: the message and stack are not fields JSON writes.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const cases = [
    [{ error: new Error('boom') }, /draft 0\.body\.error is an Error, which JSON would turn into \{\} \(its message and stack are not fields JSON writes\): give error\.message/],
    [{ error: new TypeError('bad') }, /draft 0\.body\.error is a TypeError/],
    [[/x+/], /draft 0\.body\[0\] is a RegExp/],
    [{ pending: Promise.resolve(1) }, /draft 0\.body\.pending is a Promise/],
    [new WeakMap(), /draft 0\.body is a WeakMap/],
  ];
  for (const [body, message] of cases) {
    await assert.rejects(log.append([{ source: 'jobs', type: 'x', body }]), (e) => e.code === 'EVENTLOG_BAD_INPUT' && message.test(e.message), String(message));
  }
  await assert.rejects(log.append([{ source: 'jobs', type: 'x', identity: { cause: new RangeError('r') } }]), /draft 0\.identity\.cause is a RangeError/);
  // Made in another realm (a vm context), where this realm's `instanceof` says no.
  const other = vm.runInNewContext('({ error: new Error("far"), map: new Map([[1, 2]]), pattern: /y/, set: new Set([1]) })');
  for (const [field, message] of [['error', /draft 0\.body\.error is an Error, which JSON would turn into \{\} \(its message and stack/], ['map', /draft 0\.body\.map is a Map/], ['pattern', /draft 0\.body\.pattern is a RegExp/], ['set', /draft 0\.body\.set is a Set/]]) {
    await assert.rejects(log.append([{ source: 'jobs', type: 'x', body: { [field]: other[field] } }]), (e) => e.code === 'EVENTLOG_BAD_INPUT' && message.test(e.message), field);
  }
  // What JSON writes in full goes: an Error's message, a class's own fields, an object without a prototype.
  class Point { constructor() { this.x = 1; } }
  const bare = Object.assign(Object.create(null), { y: 2 });
  await log.append([{ source: 'jobs', type: 'x', at: 1, body: { error: new Error('boom').message, point: new Point(), bare } }]);
  assert.equal(log.byteLength > 0 && log.head, 1);
  await log.close();
  assert.deepEqual(readEventLog(file).records.map((r) => r.event.body), [{ error: 'boom', point: { x: 1 }, bare: { y: 2 } }]);
});

test('a toJSON that throws is refused naming the draft and field, the error as its cause, and nothing is written', async (t) => {
  // Its error came out as it was thrown: no code, no draft named.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const boom = new Error('boom');
  const bomb = { toJSON() { throw boom; } };
  const cases = [
    [{ body: { x: [1, bomb] } }, 'draft 1.body.x[1]: its toJSON threw: boom'],
    [{ identity: bomb }, 'draft 1.identity: its toJSON threw: boom'],
    [{ body: bomb }, 'draft 1.body: its toJSON threw: boom'],
  ];
  for (const [fields, message] of cases) {
    const drafts = [{ source: 'jobs', type: 'fine', at: 1 }, { source: 'jobs', type: 'x', at: 2, ...fields }];
    await assert.rejects(log.append(drafts, { jobs: 2 }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && e.message === message && e.cause === boom, message);
  }
  // One that answers when checked and throws when written is refused the same way.
  let calls = 0;
  const fickle = { toJSON() { calls += 1; if (calls > 1) throw boom; return 1; } };
  await assert.rejects(log.append([{ source: 'jobs', type: 'x', body: { fickle } }]), (e) => e.code === 'EVENTLOG_BAD_INPUT' && e.message === 'a draft: its toJSON threw: boom' && e.cause === boom);
  assert.equal(log.head, 0);
  assert.deepEqual(log.marks, new Map());
  await log.close();
  assert.deepEqual(readEventLog(file).records, []);
});

test('an identity whose fields are all undefined is left out, as an empty one is', async (t) => {
  // It was written `"identity":{}`, which the native writer never writes and its reader
  // reads as no identity: the two readers answered different events.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append([
    { source: 'jobs', type: 'x', at: 1, identity: { request: undefined } },
    { source: 'jobs', type: 'x', at: 2, identity: { request: undefined, worker: 'w' }, body: { n: 1 } },
    { source: 'jobs', type: 'x', at: 3, identity: { request: undefined }, body: { when: new Date(0) } },
  ]);
  await log.close();
  assert.deepEqual(readEventLog(file).records.map((r) => r.event), [
    { source: 'jobs', at: 1, type: 'x' },
    { source: 'jobs', at: 2, type: 'x', identity: { worker: 'w' }, body: { n: 1 } },
    { source: 'jobs', at: 3, type: 'x', body: { when: '1970-01-01T00:00:00.000Z' } },
  ]);
});

test('a writerLock that is not true or false is refused, by the log and by the pump', async (t) => {
  // Only false went without the lock: 'false' or 0 took it, unnoticed.
  const file = tempLog(t);
  for (const writerLock of ['false', 0, null]) {
    await assert.rejects(EventLog.open(file, { writerLock }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /EventLog.open: writerLock must be true or false, got /.test(e.message), String(writerLock));
    await assert.rejects(EventPump.open({ path: file, writerLock }), /writerLock must be true or false/);
  }
  assert.equal(fs.existsSync(`${file}.lock`), false, 'no lock was taken');
  const { log } = await EventLog.open(file, { writerLock: false });
  assert.equal(fs.existsSync(`${file}.lock`), false);
  await log.close();
});

test('a folder given as the log path is refused as bad input, before any lock file is made', async (t) => {
  // It failed reading, as EVENTLOG_IO (a broken log), and left `<folder>.lock` beside it.
  const folder = path.join(path.dirname(tempLog(t)), 'logs');
  fs.mkdirSync(folder);
  await assert.rejects(EventLog.open(folder), (e) => e.code === 'EVENTLOG_BAD_INPUT' && e.message === `event log ${folder} is a folder: give the path of the log file in it (e.g. ${path.join(folder, 'events.log')})`);
  await assert.rejects(EventPump.open({ path: `${folder}/` }), { code: 'EVENTLOG_BAD_INPUT' });
  assert.equal(fs.existsSync(`${folder}.lock`), false);
  assert.deepEqual(fs.readdirSync(folder), []);
});

test('a log path with a line break is refused as bad input when the writer lock is to be taken', { skip: process.platform === 'win32' }, async (t) => {
  // It was EVENTLOG_IO, which says a file operation failed and the log is broken.
  const file = path.join(path.dirname(tempLog(t)), 'a\nb.log');
  await assert.rejects(EventLog.open(file), (e) => e.code === 'EVENTLOG_BAD_INPUT' && e.message === 'event log "' + file.replace('\n', '\\n') + '": a log path with a line break can not be locked (writerLock: false goes without the lock)');
  const { log } = await EventLog.open(file, { writerLock: false });
  await log.append(drafts(1));
  await log.close();
  assert.equal(readEventLog(file).records.length, 1);
});

test('new EventLog is refused, naming EventLog.open, before any file is made', async (t) => {
  // It made a log without its lock or options, which created the file at the first
  // append and then failed with a TypeError (`this[#notify] is not a function`).
  const file = tempLog(t);
  assert.throws(() => new EventLog(file), (e) => e.code === 'EVENTLOG_BAD_INPUT' && e.message === 'EventLog: a log is opened with `await EventLog.open(path, options)`, not `new EventLog`');
  assert.equal(fs.existsSync(file), false);
});

test('an append over maxBatch is refused naming the option that sets the limit', async (t) => {
  // It said "the batch limit of 2", which no option is called.
  const { log } = await EventLog.open(tempLog(t), { maxBatch: 2 });
  await assert.rejects(log.append(drafts(3)), (e) => e.code === 'EVENTLOG_BAD_INPUT'
    && e.message === "EventLog.append: 3 drafts exceed the log's maxBatch of 2 (split them, or open the log with a larger maxBatch, at most 1048576)");
  assert.equal(log.head, 0);
  await log.close();
});

test('where sh is missing, open says to pass writerLock: false, as where flock is', { skip: process.platform === 'win32' }, (t) => {
  // It said only "spawn sh ENOENT".
  const file = tempLog(t);
  const entry = createRequire(import.meta.url).resolve('leasehold/eventlog');
  const script = `require(${JSON.stringify(entry)}).EventLog.open(${JSON.stringify(file)}).then(() => console.log('opened'), (e) => console.log(e.code, e.message))`;
  const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env: { ...process.env, PATH: path.dirname(file) } });
  assert.equal(run.stdout.trim(), `EVENTLOG_IO event log ${file}: could not start the lock holder (sh): spawn sh ENOENT (pass writerLock: false to go without)`);
});

test('an append queued behind a compaction with marks keeps its watermark ahead', async (t) => {
  // The compaction set the marks appends are checked against when it ran, undoing those
  // of appends queued after it: a watermark going back from them (5 to 3) was taken.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append([...drafts(1, 'old'), ...drafts(1, 'live', 1)], { old: 1, live: 1 });
  const compacted = log.compact((event) => event.source !== 'old', { live: 1 });
  const appended = log.append(drafts(1, 'live', 2), { live: 5 });
  assert.deepEqual(await Promise.all([compacted, appended]), [1, { first: 2, end: 3 }]);
  await assert.rejects(log.append([], { live: 3 }), /watermark of source 'live' would go back from 5 to 3/);
  // A source the marks leave out is forgotten: it may start again from 0.
  await log.append(drafts(1, 'old', 3), { old: 0 });
  assert.deepEqual(log.marks, new Map([['live', 5], ['old', 0]]));
  await log.close();
  assert.deepEqual(readEventLog(file).marks, new Map([['live', 5], ['old', 0]]));
});

test("a read's marks are the log's, from the frames before where it starts too", async (t) => {
  // As the types now say: they said "recorded by the frames read".
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(2), { jobs: 2 });
  await log.append(drafts(1, 'other'), { other: 1 });
  assert.deepEqual((await log.readFrom(2)).marks, new Map([['jobs', 2], ['other', 1]]));
  assert.deepEqual(readEventLog(file, 100).marks, new Map([['jobs', 2], ['other', 1]]));
  await log.close();
});

test('a compaction whose keep answers a Promise is refused, and the log left as it is', async (t) => {
  // The Promise is truthy: an async keep kept every record, without a word.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append([...drafts(2, 'old'), ...drafts(1, 'live', 2)], { old: 2, live: 1 });
  const before = fs.readFileSync(file);
  await assert.rejects(log.compact(async (event) => event.source !== 'old'), (e) => e.code === 'EVENTLOG_BAD_INPUT'
    && e.message === 'EventLog.compact: keep answered a Promise: it must answer at once (true keeps the record), not be async');
  assert.deepEqual(fs.readFileSync(file), before);
  assert.equal(await log.compact((event) => event.source !== 'old'), 2);
  await log.append(drafts(1, 'live', 3), { live: 2 });
  await log.close();
  assert.deepEqual(readEventLog(file).records.map((r) => r.event.source), ['live', 'live']);
});

test('an onNotice that throws or rejects neither fails the open nor ends the process', async (t) => {
  // A throwing one failed the open that cut a torn tail; an async one's rejection went
  // unhandled, which ends a Node.js process. The text goes to stderr instead.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append(drafts(2), { jobs: 2 });
  await log.close();
  const frame = fs.readFileSync(file).subarray(20, 27);
  for (const onNotice of [() => { throw new Error('no notices'); }, async () => { throw new Error('logger down'); }]) {
    fs.appendFileSync(file, frame);
    const again = await EventLog.open(file, { onNotice });
    assert.match(again.notice, /torn tail of 7 bytes truncated/);
    await again.log.append(drafts(1, 'jobs', 2), { jobs: 3 });
    await again.log.close();
  }
  const a = { committedLength: () => 1, derive: () => { throw new Error('unreadable'); } };
  const pump = await EventPump.open({ path: tempLog(t, 'pump.log'), sources: { a }, onNotice: async () => { throw new Error('logger down'); } });
  await assert.rejects(pump.flush(), /unreadable/);
  await pump.close().catch(() => {});
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(readEventLog(file).records.length, 4);
});
