// leasehold/indexeddb in a hidden tab whose timers the browser throttles, as Chrome throttles a
// background tab's: wake-ups aligned to whole seconds, and once it has been hidden a while
// (5 minutes; 3 seconds here) chained timers woken once a minute, while network answers and
// IndexedDB events still come at once. Driven over the DevTools protocol (cdp.mjs): Playwright
// keeps every page it drives visible.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { missing } from './chromium.mjs';
import { launchRaw } from './cdp.mjs';

const skip = missing ? `${missing}: IndexedDB queue tests skipped` : false;
let browser;
before(async () => {
  if (!skip) browser = await launchRaw({ throttled: 3 });
});
after(async () => {
  if (browser) await browser.close();
});

test('a tab hidden behind another keeps renewing its job while the browser wakes its timers once a minute: no other tab takes it over', { skip, timeout: 180_000 }, async () => {
  const STALE_MS = 6000; // renewals every 2 s; one a minute would leave the lease stale for 54 s
  const JOB_MS = 25_000;
  // The owner's job needs no timer of its own (one request after another, the signal handed
  // to each), as a handler calling an API.
  const producer = await browser.tab();
  const owner = await browser.tab(`work=hidden&tab=owner&ms=${JOB_MS}&stale=${STALE_MS}&steps=fetch`, { inTab: true });
  const id = await producer.evaluate(async () => {
    window.q = await lh.connect({ name: 'hidden' });
    return (await q.enqueue('jobs', {})).id;
  });
  await owner.until(() => window.recorded > 0);
  // A tab is opened in front of it: it is hidden, as a tab the user switched away from.
  await owner.hide();
  assert.equal(await owner.evaluate(() => document.visibilityState), 'hidden');
  // Another tab works the same queue, and would take the job over once its lease is stale.
  await browser.tab(`work=hidden&tab=taker&ms=1000&stale=${STALE_MS}`);

  const job = await producer.until(async (id) => {
    const job = await q.job(id);
    return job.state === 'succeeded' ? job : false;
  }, id, 120_000);
  // Whatever happened, the owner's handler has ended (aborted, or run to its end) before the
  // executions are compared.
  await owner.until(() => window.running === 0, undefined, 120_000);

  const runs = (await producer.evaluate(() => ledger.all())).filter((r) => r.set === 'hidden' && r.job === id);
  runs.sort((x, y) => x.start - y.start);
  for (let i = 1; i < runs.length; i++) {
    assert.ok(runs[i - 1].end <= runs[i].start, `executions overlap by ${runs[i - 1].end - runs[i].start} ms: ${JSON.stringify(runs)}`);
  }
  assert.deepEqual(runs.map((r) => `${r.tab}: ${r.outcome}`), ['owner: returned']);
  assert.equal(job.result, 'done by owner');
  assert.deepEqual(job.attemptsLog.map((a) => a.outcome), ['succeeded']);
  assert.deepEqual(browser.errors, []);
});
