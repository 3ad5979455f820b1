// The same bytes as the native log: a log written from Node.js is read by the Rust
// reader, and one written natively is read from Node.js, torn tails included; each
// side's writer lock refuses the other. The native side is the example program
// host-node/examples/eventlog_tool.rs (built by the workspace's `cargo test`, or here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { EventLog, readEventLog, tempLog, drafts } from './eventlog-helpers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/* The tool's path: LEASEHOLD_EVENTLOG_TOOL, or the workspace's debug build (built now
   when missing and cargo is there). */
function findTool() {
  if (process.env.LEASEHOLD_EVENTLOG_TOOL) return process.env.LEASEHOLD_EVENTLOG_TOOL;
  const meta = spawnSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: root, encoding: 'utf8' });
  if (meta.status !== 0) return undefined;
  const tool = path.join(JSON.parse(meta.stdout).target_directory, 'debug', 'examples', 'eventlog_tool');
  if (!fs.existsSync(tool)) {
    const build = spawnSync('cargo', ['build', '-q', '-p', 'leasehold', '--example', 'eventlog_tool'], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) return undefined;
  }
  return tool;
}

const tool = findTool();
const skip = tool ? false : 'cargo is not installed: the native side of the cross-implementation tests is skipped';

function native(...args) {
  const run = spawnSync(tool, args, { encoding: 'utf8' });
  const out = JSON.parse(run.stdout.trim().split('\n').pop());
  if (run.status !== 0) throw Object.assign(new Error(out.error), { kind: out.kind });
  return out;
}

test('a log written from Node.js, torn tail included, reads the same in the Rust reader', { skip }, async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const written = [...drafts(70), { source: 'other', type: 'noted', at: 5, body: 'grüße ✓' }, { source: 'other', type: 'bare', at: 6 }];
  await log.append(written.slice(0, 64), { jobs: 64 });
  await log.append(written.slice(64), { jobs: 70, other: 2 });
  const epoch = log.epoch;
  const whole = log.byteLength;
  await log.close();
  // A crash in the middle of a write: half of one more frame at the end.
  const more = fs.readFileSync(file).subarray(20, 20 + 300);
  fs.appendFileSync(file, more);

  const read = native('read', file, '0');
  assert.equal(read.epoch, String(epoch));
  assert.equal(read.validLen, whole);
  assert.equal(read.tornBytes, 300);
  assert.deepEqual(read.marks, { jobs: 70, other: 2 });
  assert.deepEqual(read.records.map((r) => r.event), written);
  assert.deepEqual(read.records, readEventLog(file).records, 'both readers answer the same records');

  // The native writer recovers what Node.js left: the tail cut, the epoch kept.
  const opened = native('open', file);
  assert.equal(opened.created, false);
  assert.equal(opened.epoch, String(epoch));
  assert.equal(fs.statSync(file).size, whole);
});

test('a log written natively, torn tail included, reads the same from Node.js and recovers there', { skip }, async (t) => {
  const file = tempLog(t);
  const wrote = native('write', file, '100', '--torn');
  const native0 = native('read', file, '0');
  assert.ok(native0.tornBytes > 0, 'the tool left a torn tail');
  const read = readEventLog(file, 0);
  assert.equal(String(read.epoch), wrote.epoch);
  assert.deepEqual(read.records, native0.records);
  assert.equal(read.records.length, 100);
  assert.equal(read.records[99].event.body.text, 'grüße ✓');
  assert.deepEqual(readEventLog(file, 60).records.map((r) => r.seq)[0], 60);

  const opened = await EventLog.open(file, { onNotice() {} });
  assert.equal(opened.created, false);
  assert.equal(String(opened.log.epoch), wrote.epoch);
  assert.deepEqual([...opened.marks], [['native', 100]]);
  assert.equal(fs.statSync(file).size, native0.validLen, 'the torn tail was cut back');
  await opened.log.append(drafts(2), { jobs: 2 });
  await opened.log.close();
  const after = native('read', file, '0');
  assert.equal(after.records.length, 102);
  assert.deepEqual(after.marks, { native: 100, jobs: 2 });
  assert.equal(native('open', file).created, false);
});

test('a native writer and a Node.js writer refuse each other', { skip }, async (t) => {
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  assert.throws(() => native('open', file), (e) => e.kind === 'in-use');
  await log.close();

  const holder = spawn(tool, ['hold', file], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((resolve) => holder.stdout.once('data', resolve));
  await assert.rejects(EventLog.open(file), { code: 'EVENTLOG_IN_USE' });
  holder.stdin.end();
  await new Promise((resolve) => holder.once('exit', resolve));
  const again = await EventLog.open(file);
  await again.log.close();
});

test('a draft whose identity fields are all undefined reads the same in both readers', { skip }, async (t) => {
  // Written `"identity":{}`, it read as `identity: {}` here and as no identity natively.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  await log.append([{ source: 'jobs', type: 'x', at: 1, identity: { request: undefined }, body: { n: 1 } }]);
  await log.close();
  assert.deepEqual(native('read', file, '0').records, readEventLog(file).records);
  assert.deepEqual(readEventLog(file).records[0].event, { source: 'jobs', at: 1, type: 'x', body: { n: 1 } });
});

test('an identity JSON writes as no object (a Date, a toJSON answering an array, a boxed string) is refused', { skip }, async (t) => {
  // It was written as a string or an array, and the native reader then refused the whole
  // log ("record 1 is not an event: invalid type: sequence, expected a map").
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const cases = [
    [new Date(0), /draft 0: identity must be an object of fields, and JSON writes this one as "1970-01-01T00:00:00.000Z" \(a string\)/],
    [{ toJSON: () => [1, 2] }, /JSON writes this one as an array/],
    [new String('x'), /JSON writes this one as "x" \(a string\)/],
    [{ toJSON: () => null }, /JSON writes this one as null/],
  ];
  for (const [identity, message] of cases) {
    await assert.rejects(log.append([{ source: 'jobs', type: 'x', at: 1, identity }]), (e) => e.code === 'EVENTLOG_BAD_INPUT' && message.test(e.message), String(message));
  }
  // A toJSON answering an object of fields is written as that object.
  await log.append([{ source: 'jobs', type: 'x', at: 2, identity: { toJSON: () => ({ request: 'r-1' }) } }]);
  await log.close();
  assert.deepEqual(native('read', file, '0').records, readEventLog(file).records);
  assert.deepEqual(readEventLog(file).records.map((r) => r.event.identity), [{ request: 'r-1' }]);
});

test('a lone UTF-16 surrogate in a draft or a watermark source is refused naming where', { skip }, async (t) => {
  // JSON.stringify wrote it as an escape (\ud800) the native reader refuses, and with it the
  // whole log; `leasehold events` showed nothing after it.
  const file = tempLog(t);
  const { log } = await EventLog.open(file);
  const emoji = '😀';
  const cases = [
    [[{ source: 'jobs', type: 'x', body: { text: `cut ${emoji.slice(0, 1)}` } }], /draft 0\.body holds a lone UTF-16 surrogate \(half of a pair, as slicing a string can leave\), which the native reader can not read: it would refuse the whole log/],
    [[drafts(1)[0], { source: 'jobs', type: `x${emoji.slice(1)}` }], /draft 1\.type holds a lone UTF-16 surrogate/],
    [[{ source: '\ud800', type: 'x' }], /draft 0\.source holds a lone UTF-16 surrogate/],
    [[{ source: 'jobs', type: 'x', identity: { [`k${emoji.slice(0, 1)}`]: 1 } }], /draft 0\.identity holds a lone UTF-16 surrogate/],
  ];
  for (const [input, message] of cases) {
    await assert.rejects(log.append(input), (e) => e.code === 'EVENTLOG_BAD_INPUT' && message.test(e.message), String(message));
  }
  await assert.rejects(log.append([], { 'a\udc00': 1 }), /the watermark source "a\\udc00" holds a lone UTF-16 surrogate/);
  // Whole pairs, and the text of an escape, are written and read on both sides.
  await log.append([{ source: 'jobs', type: `x ${emoji}`, at: 1, body: { text: '\\ud800 as text', emoji } }], { [`jobs ${emoji}`]: 1 });
  await log.close();
  assert.deepEqual(native('read', file, '0').records, readEventLog(file).records);
  assert.equal(readEventLog(file).records.length, 1);
});
