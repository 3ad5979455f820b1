// The event pump from Node.js, over real files: kicks batched into one pass, chunks that
// carry the watermarks they complete (never ahead of what is durable), a failing log
// retried in the background and backfilled into a new epoch, emit, retention, close,
// and restarts: each source derived at least once, no event shown twice to a reader
// that resumes by sequence number.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventPump, EventLog, readEventLog, tempLog } from './eventlog-helpers.mjs';

/** An in-memory journal: one event per entry. */
function journal(name, count = 0) {
  const j = {
    entries: Array.from({ length: count }, (_, i) => i),
    derived: 0,
    logged: [],
    quiet: false,
    committedLength: () => j.entries.length,
    derive(index) {
      j.derived += 1;
      return [{ type: 'entry', at: 1_000 + index, body: { source: name, index } }];
    },
    identity: () => ({ journal: name }),
    onLogged: undefined,
  };
  j.logged = [];
  const source = { committedLength: j.committedLength, derive: (i) => j.derive(i), identity: j.identity,
    quiet: () => j.quiet, logged: (p) => { j.logged.push(p); j.onLogged?.(p); } };
  return { j, source };
}

const indices = (records, name) => records.filter((r) => r.event.source === name).map((r) => r.event.body.index);

test('kicks within the delay make one pass; flush logs everything with the watermarks', async (t) => {
  const file = tempLog(t);
  const a = journal('a');
  const pump = await EventPump.open({ path: file, kickDelayMs: 30, sources: { a: a.source } });
  a.j.entries.push(0, 1, 2);
  pump.kick('a');
  pump.kick('a');
  await sleep(10);
  assert.equal(a.j.derived, 0, 'not before the delay');
  await sleep(80);
  assert.equal(a.j.derived, 3, 'one pass derived the burst');
  a.j.entries.push(3);
  await pump.flush();
  const read = await pump.readFrom(0);
  assert.deepEqual(indices(read.records, 'a'), [0, 1, 2, 3]);
  assert.deepEqual(read.records[0].event.identity, { journal: 'a' }, 'the source identity fills the draft');
  assert.equal(read.marks.get('a'), 4);
  await pump.close();
});

test('a kick naming no source of the pump is told once, names the sources, and throws nothing', async (t) => {
  const file = tempLog(t);
  const a = journal('orders');
  const notices = [];
  const pump = await EventPump.open({ path: file, kickDelayMs: 5, sources: { orders: a.source }, onNotice: (text) => notices.push(text) });
  a.j.entries.push(0);
  pump.kick('ordres');
  pump.kick('ordres');
  assert.deepEqual(notices.filter((n) => n.includes('kick')), [
    `event pump ${file}: kick('ordres') names no source of this pump (its sources: 'orders'); nothing of it is derived`,
  ]);
  pump.kick('orders');
  await sleep(40);
  assert.equal(a.j.derived, 1, 'a known kick derives');
  assert.equal(notices.filter((n) => n.includes('kick')).length, 1, 'a known name is not told');
  await pump.close();
  pump.kick('ordres');
  pump.kick('other');
  assert.equal(notices.filter((n) => n.includes('kick')).length, 1, 'nothing is told after close');
});

test('a source read with fewer entries than its watermark is said once through onNotice, and derives past it', async (t) => {
  const file = tempLog(t);
  const a = journal('a', 4);
  const notices = [];
  const pump = await EventPump.open({ path: file, sources: { a: a.source }, onNotice: (text) => notices.push(text) });
  assert.equal(readEventLog(file).marks.get('a'), 4);
  a.j.entries.length = 1; // the journal replaced or cut back
  await pump.flush();
  await pump.flush();
  const said = notices.filter((n) => n.includes('fewer than its watermark'));
  assert.deepEqual(said, ["event source 'a' holds 1 committed entries, fewer than its watermark 4: its entries are derived again only from 4 on (was its journal replaced or cut back? remove the source and add it again to derive it from its first entry)"]);
  a.j.entries.push(1, 2, 3, 4);
  await pump.flush();
  assert.deepEqual(indices(readEventLog(file).records, 'a'), [0, 1, 2, 3, 4], 'past the watermark it derives on');
  await pump.close();
});

test('a watermark is never ahead of the records that are durable', async (t) => {
  const file = tempLog(t);
  const a = journal('a', 30);
  const b = journal('b', 7);
  let checks = 0;
  const check = () => {
    const { records, marks } = readEventLog(file);
    for (const name of ['a', 'b']) {
      const mark = marks.get(name) ?? 0;
      const logged = indices(records, name);
      for (let i = 0; i < mark; i++) assert.ok(logged.includes(i), `${name} ${i} is durable below its watermark ${mark}`);
    }
    checks += 1;
  };
  a.j.onLogged = check;
  b.j.onLogged = check;
  const pump = await EventPump.open({ path: file, chunkSize: 4, sources: { a: a.source, b: b.source } });
  assert.ok(checks >= 9, `checked at each durable chunk (${checks})`);
  assert.deepEqual(pump.status().marks, new Map([['a', 30], ['b', 7]]));
  await pump.close();
});

test('a log removed behind the pump fails the flush, then is backfilled into a new epoch in the background', async (t) => {
  const file = tempLog(t);
  const a = journal('a', 5);
  const said = [];
  const pump = await EventPump.open({ path: file, retryAfterMs: 20, sources: { a: a.source }, onNotice: (s) => said.push(s) });
  const epoch = pump.head.epoch;
  fs.unlinkSync(file);
  a.j.entries.push(5);
  await assert.rejects(pump.flush(), { code: 'EVENTLOG_IO' });
  assert.equal(pump.status().failing !== undefined, true);
  await sleep(300);
  assert.notEqual(pump.head.epoch, epoch, 'a new epoch');
  assert.equal(pump.backfilled, true);
  const read = readEventLog(file);
  assert.deepEqual(indices(read.records, 'a'), [0, 1, 2, 3, 4, 5], 'everything derived again');
  const reports = said.filter((s) => s.includes('append failed'));
  assert.ok(reports.length >= 1 && reports.length <= 2, 'the failure, then the new log, each said once');
  assert.equal(new Set(reports).size, reports.length, 'not once per retry');
  await pump.flush();
  assert.equal(pump.status().failing, undefined);
  await pump.close();
});

test('a flush notices a log replaced behind the pump even with nothing new to log', async (t) => {
  const file = tempLog(t);
  const a = journal('a', 3);
  const pump = await EventPump.open({ path: file, kickDelayMs: 5, sources: { a: a.source }, onNotice() {} });
  fs.unlinkSync(file);
  await assert.rejects(pump.flush(), { code: 'EVENTLOG_REPLACED' });
  await sleep(100);
  assert.deepEqual(indices(readEventLog(file).records, 'a'), [0, 1, 2], 'backfilled into the new log');
  await pump.close();
});

test('emit logs producer drafts; close records watermarks moved without events', async (t) => {
  const file = tempLog(t);
  const a = journal('a');
  a.j.derive = () => []; // entries without events
  const pump = await EventPump.open({ path: file, sources: { a: a.source } });
  await pump.emit([{ source: 'a', type: 'moved', body: { to: 'b' } }]);
  a.j.entries.push(0, 1, 2);
  await pump.flush();
  assert.equal(readEventLog(file).marks.get('a'), undefined, 'moved in memory only');
  await pump.close();
  const { records, marks } = readEventLog(file);
  assert.equal(marks.get('a'), 3, 'close wrote the watermark');
  assert.equal(records[0].event.type, 'moved');
  assert.deepEqual(records[0].event.identity, { journal: 'a' });
  await assert.rejects(pump.flush(), { code: 'EVENTLOG_CLOSED' });
  await assert.rejects(pump.emit([{ source: 'a', type: 'x', body: 1n }]), { code: 'EVENTLOG_CLOSED' });
});

test('retention drops old records of quiet or removed sources only', async (t) => {
  const file = tempLog(t);
  const quiet = journal('quiet', 2);
  const busy = journal('busy', 2);
  quiet.j.quiet = true;
  const pump = await EventPump.open({ path: file, retentionMs: 1_000, now: () => 10_000, sources: { quiet: quiet.source, busy: busy.source } });
  assert.equal(await pump.compact(), 2);
  const { records } = await pump.readFrom(0);
  assert.deepEqual(records.map((r) => r.event.source), ['busy', 'busy']);
  await pump.removeSource('busy');
  assert.equal(await pump.compact(), 2, 'a removed source is droppable');
  await pump.close();
});

test('a restarted pump derives each source past its watermark; a resuming reader sees no event twice', async (t) => {
  const file = tempLog(t);
  const a = journal('a', 10);
  const first = await EventPump.open({ path: file, sources: { a: a.source } });
  const before = await first.readFrom(0);
  await first.close();
  a.j.entries.push(10, 11);
  const b = journal('b', 3);
  const second = await EventPump.open({ path: file, sources: { a: a.source, b: b.source } });
  assert.equal(second.backfilled, false);
  const after = await second.readFrom(before.next);
  assert.deepEqual(indices(after.records, 'a'), [10, 11]);
  assert.deepEqual(indices(after.records, 'b'), [0, 1, 2]);
  assert.ok(after.records.every((r) => r.seq >= before.next));
  await second.close();
});

test('a pump killed mid-pass: the next derives every entry at least once, a resuming reader sees none twice', { timeout: 60_000 }, async (t) => {
  const file = tempLog(t);
  const count = 3000;
  const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'eventlog-pump.mjs');
  const child = spawn(process.execPath, [fixture, file, String(count)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let seenSeq = new Map();
  let next = 0;
  await new Promise((resolve) => {
    let lines = 0;
    child.stdout.on('data', (text) => {
      lines += String(text).split('\n').filter((l) => l.startsWith('a ')).length;
      if (lines >= 3 && next === 0) {
        const read = readEventLog(file, 0); // a reader while the pump runs
        for (const r of read.records) seenSeq.set(r.seq, r.event.body);
        next = read.next;
        child.kill('SIGKILL');
        resolve();
      }
    });
  });
  await new Promise((resolve) => child.once('exit', resolve));
  const a = journal('a', count);
  const b = journal('b', count);
  const pump = await EventPump.open({ path: file, chunkSize: 64, sources: { a: a.source, b: b.source }, onNotice() {} });
  await pump.flush();
  const resumed = await pump.readFrom(next);
  for (const r of resumed.records) {
    assert.ok(!seenSeq.has(r.seq), `sequence number ${r.seq} shown twice`);
    seenSeq.set(r.seq, r.event.body);
  }
  for (const name of ['a', 'b']) {
    const got = new Set([...seenSeq.values()].filter((body) => body.source === name).map((body) => body.index));
    assert.equal(got.size, count, `every entry of ${name} derived at least once`);
  }
  assert.deepEqual(pump.status().marks, new Map([['a', count], ['b', count]]));
  await pump.close();
});

test('the README example runs as shown', async (t) => {
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const example = path.join(pkg, 'examples', 'eventlog.mjs');
  const readme = fs.readFileSync(path.join(pkg, 'README.md'), 'utf8');
  assert.ok(readme.includes(fs.readFileSync(example, 'utf8').trim()), 'README.md must contain examples/eventlog.mjs verbatim');
  const dir = path.dirname(tempLog(t));
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, [example, dir], { encoding: 'utf8' });
  assert.match(out, /^0 order-placed 1\n1 order-placed 2\nresume a reader at 2;/);
});

test("the pump opens its log with the log's own options: the writer lock and the sync limit", async (t) => {
  const file = tempLog(t);
  const a = journal('a', 3);
  const pump = await EventPump.open({ path: file, sources: { a: a.source }, writerLock: false, blockingSyncMaxBytes: 0 });
  await pump.flush();
  assert.deepEqual(indices(readEventLog(file, 0).records, 'a'), [0, 1, 2]);
  assert.equal(fs.existsSync(`${file}.lock`), false, 'no writer lock taken');
  await pump.close();
  await assert.rejects(EventPump.open({ path: tempLog(t), blockingSyncMaxBytes: -1 }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /blockingSyncMaxBytes must be an integer from 0, got -1/.test(e.message));
});

test("the pump's options are refused naming the option and showing the value as given", async (t) => {
  const file = tempLog(t);
  const refused = (options, message) => assert.throws(() => new EventPump({ path: file, ...options }), (e) => e.code === 'EVENTLOG_BAD_INPUT' && message.test(e.message), String(message));
  // A string was shown as the number it is not ("got 50"), chunkSize as milliseconds, and
  // a chunkSize over the most an append carries by the core's name, chunk_size.
  refused({ kickDelayMs: '50' }, /kickDelayMs must be an integer of milliseconds from 0, got "50" \(a string\)/);
  refused({ compactEveryMs: 10n }, /compactEveryMs must be .*, got 10n \(a bigint\)/);
  refused({ chunkSize: 1.5 }, /EventPump: chunkSize must be an integer of drafts from 1 to 1048576, got 1\.5/);
  refused({ chunkSize: 2_000_000 }, /EventPump: chunkSize must be an integer of drafts from 1 to 1048576, got 2000000/);
  // An array's entries passed for sources named '0', '1', …; a string's for sources that
  // were not objects.
  const { source } = journal('a');
  refused({ sources: [source] }, /EventPump: sources must be a Map or an object of source names to sources, got an array/);
  refused({ sources: 'orders' }, /EventPump: sources must be .*, got "orders" \(a string\)/);
  refused({ onNotice: 'stderr' }, /EventPump: onNotice must be a function/);
  const pump = await EventPump.open({ path: file, sources: new Map([['a', source]]), chunkSize: 1_048_576 });
  await pump.close();
  assert.equal(fs.existsSync(file), true);
});

test('a committedLength() that answers a string is reported showing it is one', async (t) => {
  const said = [];
  const pump = await EventPump.open({ path: tempLog(t), onNotice: (text) => said.push(text),
    sources: { a: { committedLength: () => '3', derive: () => [] } } });
  await assert.rejects(pump.flush(), /source 'a' committedLength\(\) answered "3" \(a string\), not a length/);
  await pump.close().catch(() => {});
});

test("an identity that is not an object is refused, not spread into fields named '0', '1', …", async (t) => {
  const file = tempLog(t);
  const said = [];
  const { source } = journal('a');
  let answer = 'north';
  const pump = await EventPump.open({ path: file, onNotice: (text) => said.push(text), sources: { a: source,
    b: { committedLength: () => 1, derive: () => [{ type: 'x', at: 1 }], identity: () => answer } } });
  // A draft's own, merged with its source's identity, was spread: "0":"x","1":"y","2":"z".
  await assert.rejects(pump.emit([{ source: 'a', type: 't', at: 1, identity: 'xyz' }]), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /draft 0: identity must be an object/.test(e.message));
  await assert.rejects(pump.emit([{ source: 'a', type: 't', at: 1, identity: ['x'] }]), /draft 0: identity must be an object/);
  await assert.rejects(pump.emit([{ source: 'b', type: 't', at: 1 }]), (e) => e.code === 'EVENTLOG_BAD_INPUT' && /source 'b' identity\(\) answered "north" \(a string\), not an object/.test(e.message));
  await assert.rejects(pump.flush(), (e) => e.code === 'EVENTLOG_SOURCE' && /source 'b' failed to derive entry 0: .*identity\(\) answered "north" \(a string\), not an object/.test(e.message));
  answer = { shop: 'north' };
  await pump.flush();
  await pump.emit([{ source: 'a', type: 't', at: 2, identity: { request: 'r' } }]);
  await pump.close();
  assert.deepEqual(readEventLog(file).records.map((r) => r.event), [
    { source: 'b', at: 1, type: 'x', identity: { shop: 'north' } },
    { source: 'a', at: 2, type: 't', identity: { journal: 'a', request: 'r' } },
  ]);
});

test('close rejects when what is left could not be logged, and closes the log all the same', async (t) => {
  // As the types and README now say: it was documented as always resolving.
  const file = tempLog(t);
  let failing = true;
  const source = { committedLength: () => 1, derive: () => { if (failing) throw new Error('journal unreadable'); return [{ type: 'x', at: 1 }]; } };
  const pump = await EventPump.open({ path: file, onNotice() {}, sources: { a: source } });
  await assert.rejects(pump.close(), (e) => e.code === 'EVENTLOG_SOURCE' && /journal unreadable/.test(e.message));
  await assert.rejects(pump.flush(), { code: 'EVENTLOG_CLOSED' });
  failing = false;
  const again = await EventPump.open({ path: file, onNotice() {}, sources: { a: source } });
  await again.close();
  assert.deepEqual(readEventLog(file).records.map((r) => r.event.type), ['x']);
});

test('a logged() or onNotice that throws does not wedge the pump', async (t) => {
  // The throw left the machine mid-operation: open rejected with the log still locked,
  // and every later flush, emit and close was refused with EVENTLOG_BUSY.
  const file = tempLog(t);
  const entries = [1];
  const said = [];
  const source = { committedLength: () => entries.length, derive: (i) => [{ type: 'x', at: i }],
    logged: (position) => { throw new Error(`logged(${position}) failed`); } };
  const pump = await EventPump.open({ path: file, sources: { a: source }, onNotice: (text) => said.push(text) });
  assert.deepEqual(said, ["EventPump: source 'a' logged(1) threw (its events are logged all the same): logged(1) failed"]);
  entries.push(2);
  await pump.flush();
  await pump.emit([{ source: 'a', type: 'emitted', at: 9 }]);
  await pump.close();
  assert.deepEqual(readEventLog(file).records.map((r) => r.event.at), [0, 1, 9]);
  assert.deepEqual(readEventLog(file).marks, new Map([['a', 2]]));

  // onNotice throwing at a report (a failing pass says so) goes to stderr instead.
  let failing = true;
  const stuck = { committedLength: () => 1, derive: () => { if (failing) throw new Error('unreadable'); return [{ type: 'y', at: 1 }]; } };
  const other = await EventPump.open({ path: tempLog(t, 'other.log'), sources: { b: stuck }, onNotice: () => { throw new Error('no notices'); } });
  failing = false;
  await other.flush();
  await other.close();
});

test("a source's method that answers a Promise is refused saying so", async (t) => {
  // An async identity() went unnoticed and its events were logged without identity; an
  // async committedLength() or derive() was said to answer "an object".
  const cases = [
    [{ committedLength: async () => 1, derive: () => [{ type: 'x' }] }, /committedLength\(\) answered a Promise \(a source answers at once: its methods can not be async\), not a length/],
    [{ committedLength: () => 1, derive: async () => [{ type: 'x' }] }, /derive\(0\) answered a Promise \(a source answers at once: its methods can not be async\), not an array of drafts/],
    [{ committedLength: () => 1, derive: () => ({ type: 'x' }) }, /derive\(0\) answered an object, not an array of drafts/],
    [{ committedLength: () => 1, derive: () => [{ type: 'x' }], identity: async () => ({ shop: 'north' }) }, /identity\(\) answered a Promise \(a source answers at once: its methods can not be async\), not an object/],
  ];
  for (const [i, [source, message]] of cases.entries()) {
    const file = tempLog(t, `async-${i}.log`);
    const pump = await EventPump.open({ path: file, onNotice() {}, sources: { a: source } });
    await assert.rejects(pump.flush(), message);
    await pump.close().catch(() => {});
    assert.deepEqual(readEventLog(file).records, [], 'nothing was logged');
  }
});

test('a source removed and added again under its name is derived from its first entry', async (t) => {
  // Its old watermark stayed with the log, which refused the new one as going back:
  // every pass failed, close too, and the new source's events were never logged.
  const file = tempLog(t);
  const said = [];
  const old = journal('a', 3);
  const pump = await EventPump.open({ path: file, onNotice: (text) => said.push(text), sources: { a: old.source } });
  await pump.removeSource('a');
  const fresh = journal('a', 1);
  await pump.addSource('a', fresh.source);
  await pump.flush();
  assert.deepEqual(pump.status().marks, new Map([['a', 1]]));
  await pump.close();
  const read = readEventLog(file);
  assert.deepEqual(indices(read.records, 'a'), [0, 1, 2, 0]);
  assert.deepEqual(read.marks, new Map([['a', 1]]));
  assert.deepEqual(said, []);
});

test('adding a source under a name already there is refused', async (t) => {
  // The one there was replaced unnoticed, and the new one went on from its watermark:
  // its entries before that were never derived.
  const file = tempLog(t);
  const first = journal('a', 2);
  const pump = await EventPump.open({ path: file, sources: { a: first.source } });
  const second = journal('a', 3);
  await assert.rejects(pump.addSource('a', second.source), (e) => e.code === 'EVENTLOG_BAD_INPUT'
    && e.message === "EventPump.addSource: source 'a' is already there (removeSource('a') first, and the new one derives from its first entry)");
  first.j.entries.push(2);
  await pump.flush();
  await pump.close();
  assert.deepEqual(indices(readEventLog(file).records, 'a'), [0, 1, 2]);
});

test("a source added after open goes on past the watermark an earlier run's log records", async (t) => {
  // As the types now say: they said it derives from its first entry.
  const file = tempLog(t);
  const a = journal('a', 3);
  const first = await EventPump.open({ path: file, sources: { a: a.source } });
  await first.close();
  const second = await EventPump.open({ path: file });
  a.j.entries.push(3);
  await second.addSource('a', a.source);
  await second.flush();
  await second.close();
  assert.deepEqual(indices(readEventLog(file).records, 'a'), [0, 1, 2, 3]);
});

test('a delay longer than setTimeout takes is waited out without the timer spinning', async (t) => {
  // A kick's deadline past 2^31 - 1 ms re-armed the timer every millisecond, each with a
  // TimeoutOverflowWarning.
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning.name);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const a = journal('a', 1);
  const file = tempLog(t);
  const pump = await EventPump.open({ path: file, kickDelayMs: Number.MAX_SAFE_INTEGER, sources: { a: a.source } });
  a.j.entries.push(1);
  pump.kick('a');
  const before = process.cpuUsage();
  await sleep(300);
  const used = process.cpuUsage(before);
  assert.ok((used.user + used.system) / 1000 < 100, `${(used.user + used.system) / 1000} ms of CPU in 300 ms idle`);
  assert.deepEqual(warnings.filter((name) => name === 'TimeoutOverflowWarning'), []);
  assert.equal(readEventLog(file).records.length, 1, 'the kick waits');
  await pump.flush();
  await pump.close();
  assert.equal(readEventLog(file).records.length, 2);
});

test('an async logged() that rejects is said, and does not end the process', async (t) => {
  // Its rejection went unhandled, which ends a Node.js process.
  const said = [];
  const a = journal('a', 1);
  const source = { ...a.source, logged: async (position) => { throw new Error(`saving ${position} failed`); } };
  const pump = await EventPump.open({ path: tempLog(t), sources: { a: source }, onNotice: (text) => said.push(text) });
  await sleep(10);
  await pump.close();
  assert.deepEqual(said, ["EventPump: source 'a' logged(1) threw (its events are logged all the same): saving 1 failed"]);
});

test('a now() that throws or answers no time is said once, and Date.now() used: the pump goes on', async (t) => {
  // A throw from the clock, read in the middle of an operation, left the machine
  // mid-operation: every later emit, flush and close was refused as busy.
  for (const [i, now] of [() => { throw new Error('no clock'); }, () => 1.5].entries()) {
    const file = tempLog(t, `clock-${i}.log`);
    const entries = [1];
    const source = { committedLength: () => entries.length, derive: () => [{ type: 'x' }] };
    const said = [];
    const before = Date.now();
    const pump = await EventPump.open({ path: file, sources: { a: source }, now, onNotice: (text) => said.push(text) });
    await pump.emit([{ source: 'a', type: 'emitted' }]);
    entries.push(2);
    await pump.flush();
    await pump.close();
    const ats = readEventLog(file).records.map((r) => r.event.at);
    assert.equal(ats.length, 3);
    for (const at of ats) assert.ok(at >= before && at <= Date.now(), `${at} is a time read from Date.now()`);
    assert.deepEqual(readEventLog(file).marks, new Map([['a', 2]]));
    assert.equal(said.length, 1, said.join('\n'));
    assert.match(said[0], /^EventPump: now\(\) (threw \(no clock\)|answered 1\.5), not milliseconds since the Unix epoch/);
  }
});
