// leasehold/indexeddb when the wall clock steps forward in every tab at once (an NTP
// correction, a user setting the clock): Playwright's clock moves every page's Date.now ahead
// without firing their timers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, missing } from './chromium.mjs';

// Leases are stamped with each tab's Date.now and judged stale on the claimer's Date.now, so a
// step forward longer than the stale window makes every running job look stale to every tab at
// once, while its owner works on inside its deadline (timed on monotonic timers). A tab takes a
// lease over only once it has itself seen that lease unrenewed for the stale window on its own
// monotonic clock (the core's LeaseWatch), which a step does not move; without that rule the two
// executions here overlapped by about 1.5 s (up to one renewal interval).
const skip = missing ? `${missing}: IndexedDB queue tests skipped` : false;

let browser;
before(async () => {
  if (!skip) browser = await launch();
});
after(async () => {
  if (browser) await browser.close();
});

test('a forward step of the wall clock in every tab does not let a running job be taken over while its owner works', { skip, timeout: 60_000 }, async () => {
  const STALE_MS = 6000; // renewals every 2 s
  await browser.context.clock.install();
  const owner = await browser.tab(`work=clock&tab=owner&ms=20000&stale=${STALE_MS}`);
  const producer = await browser.tab();
  const id = await producer.evaluate(async () => {
    window.q = await lh.connect({ name: 'clock' });
    return (await q.enqueue('jobs', {})).id;
  });
  await owner.waitForFunction(() => window.recorded > 0, undefined, { polling: 5 });
  await browser.tab(`work=clock&tab=taker&ms=1000&stale=${STALE_MS}`);
  await new Promise((resolve) => setTimeout(resolve, 300)); // just after a renewal, most likely
  await browser.context.clock.setSystemTime(Date.now() + 60_000);
  await owner.waitForFunction(() => window.running === 0, undefined, { timeout: 40_000 });
  const runs = (await producer.evaluate(() => ledger.all())).filter((r) => r.set === 'clock' && r.job === id);
  runs.sort((x, y) => x.start - y.start);
  for (let i = 1; i < runs.length; i++) {
    assert.ok(runs[i - 1].end <= runs[i].start, `executions overlap by ${runs[i - 1].end - runs[i].start} ms: ${JSON.stringify(runs)}`);
  }
});
