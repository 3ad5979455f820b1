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

// A retry makes a job cancelled while it ran due at that attempt's lease end (stamped with the
// owner's Date.now), as its owner may not have heard the cancel and stops only by then, on its
// monotonic timers. A step forward makes that due time pass early in every tab: another tab
// started the job beside the attempt still working. A tab claims such a job only once it has
// itself seen the cancelled lease unrenewed for its window on its monotonic clock.
test('a forward step of the wall clock does not let a job cancelled while it ran and retried start beside that attempt, which keeps working', { skip, timeout: 60_000 }, async () => {
  const STALE_MS = 6000;
  await browser.context.clock.install(); // every tab's clock at the real time again (run alone, installed)
  // The owner's attempt works 4 s whatever its signal says: inside its lease (6 s from its claim).
  const owner = await browser.tab(`work=cancel&tab=owner&ms=4000&stale=${STALE_MS}&keepWorking=1`);
  const producer = await browser.tab();
  const id = await producer.evaluate(async () => {
    window.q = await lh.connect({ name: 'cancel' });
    return (await q.enqueue('jobs', {})).id;
  });
  await owner.waitForFunction(() => window.recorded > 0, undefined, { polling: 5 });
  await browser.tab(`work=cancel&tab=taker&ms=50&stale=${STALE_MS}`);
  await new Promise((resolve) => setTimeout(resolve, 300)); // the taker polls meanwhile
  await producer.evaluate(async (job) => {
    await q.cancel(job);
    await q.retry(job); // due at the cancelled lease's end, about 5 s from now
  }, id);
  await browser.context.clock.setSystemTime(Date.now() + 60_000);
  const steppedAt = await producer.evaluate(() => Date.now());
  for (let waited = 0; (await producer.evaluate((job) => q.job(job), id)).state !== 'succeeded'; waited += 50) {
    assert.ok(waited < 30_000, 'the job did not run again within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await owner.waitForFunction(() => window.running === 0, undefined, { timeout: 10_000 });
  const runs = (await producer.evaluate(() => ledger.all())).filter((r) => r.set === 'cancel' && r.job === id);
  runs.sort((x, y) => x.start - y.start);
  assert.equal(runs.length, 2, JSON.stringify(runs));
  const [first, second] = runs;
  assert.ok(first.end <= second.start, `the second execution (${second.tab}) started ${first.end - second.start} ms before the cancelled attempt ended: ${JSON.stringify(runs)}`);
  // It starts once a claim has watched the cancelled lease for more than its window, not long after.
  const after = second.start - steppedAt;
  assert.ok(after > STALE_MS - 500 && after < STALE_MS + 3_000, `started ${after} ms after the step`);
});
