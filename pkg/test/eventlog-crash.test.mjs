// kill -9 of a writer process mid-append: the log it leaves is never corrupt (at most a
// torn tail, cut back at the next open with the epoch kept), its watermark is never
// ahead of its records, and a writer resuming from the watermark logs every item at
// least once, none twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventLog, readEventLog, tempLog } from './eventlog-helpers.mjs';

const writer = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'eventlog-writer.mjs');

/* Runs the writer until it reported `appends` durable appends, lets it go on for
   `extraMs`, kills it with SIGKILL; answers the last watermark it reported. */
function runAndKill(file, appends, extraMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [writer, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let seen = 0;
    let last = 0;
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      for (const line of text.split('\n').filter(Boolean)) {
        last = Number(line);
        seen += 1;
        if (seen === appends) setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    });
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve(last) : reject(new Error(`writer exited ${code}: ${stderr}`))));
  });
}

test('a writer killed mid-append leaves a log that recovers with nothing reported lost', { timeout: 120_000 }, async (t) => {
  const file = tempLog(t);
  let epoch;
  for (const extraMs of [0, 3, 11, 29]) {
    const reported = await runAndKill(file, 2, extraMs);
    const opened = await EventLog.open(file, { onNotice() {} });
    assert.equal(opened.created, false, 'a kill never corrupts the log');
    epoch ??= opened.log.epoch;
    assert.equal(opened.log.epoch, epoch, 'the epoch is kept');
    const mark = opened.marks.get('jobs');
    assert.ok(mark >= reported, `the watermark ${mark} covers every durable append reported (${reported})`);
    await opened.log.close();
    const items = readEventLog(file).records.map((r) => r.event.body.item);
    assert.equal(items.length, mark, 'the watermark is never ahead of the records');
    assert.deepEqual(items, Array.from({ length: mark }, (_, i) => i), 'every item once, in order');
  }
});
