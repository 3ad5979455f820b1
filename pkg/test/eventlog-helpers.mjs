// Shared by the event log's tests: a temporary folder per test, and drafts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export * from 'leasehold/eventlog';

/** A fresh folder, removed when the test ends; answers the path of `name` in it. */
export function tempLog(t, name = 'events.log') {
  const dir = mkdtempSync(path.join(tmpdir(), 'leasehold-eventlog-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, name);
}

/** `n` drafts of `source`, numbered from `from`. */
export function drafts(n, source = 'jobs', from = 0) {
  return Array.from({ length: n }, (_, i) => ({
    source,
    type: 'performed',
    at: 1_700_000_000_000 + from + i,
    identity: { request: `r-${from + i}` },
    body: { item: from + i, durationMs: 38 },
  }));
}

/** Notices said by a log or pump, kept. */
export function notices() {
  const said = [];
  return { said, onNotice: (text) => said.push(text) };
}
