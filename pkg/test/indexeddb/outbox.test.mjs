// The README's offline outbox (examples/offline-outbox.mjs) in headless Chromium: two tabs run
// it; POSTs queued while the browser is offline wait, and go out once each when it is online.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch, missing } from './chromium.mjs';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const example = path.join(pkg, 'examples', 'offline-outbox.mjs');

test('the README shows the offline outbox example as it is', () => {
  const readme = readFileSync(path.join(pkg, 'README.md'), 'utf8');
  assert.ok(readme.includes(readFileSync(example, 'utf8').trim()), 'README.md must contain examples/offline-outbox.mjs verbatim');
});

test('the offline outbox holds POSTs while offline and sends each once when back online, from either tab', { skip: missing ? `${missing}: skipped` : false, timeout: 60_000 }, async () => {
  const received = [];
  const browser = await launch({
    onPost: (pathname, headers, body) => {
      received.push({ pathname, key: headers['idempotency-key'], body: JSON.parse(body) });
      return 201;
    },
  });
  try {
    const a = await browser.tab('', 'outbox.html');
    const b = await browser.tab('', 'outbox.html');
    await browser.context.setOffline(true);
    await a.waitForFunction(() => !navigator.onLine);
    const ids = await a.evaluate(async () => {
      const ids = [];
      for (let i = 0; i < 8; i++) ids.push(await outbox.post('/api/notes', { text: `note ${i}` }));
      return ids;
    });
    await a.evaluate(() => new Promise((resolve) => setTimeout(resolve, 500)));
    assert.equal(received.length, 0, 'nothing is sent while offline');
    const [held] = await b.evaluate(() => outbox.counts());
    assert.deepEqual({ paused: held.paused, queued: held.queued, succeeded: held.succeeded }, { paused: true, queued: 8, succeeded: 0 });

    await browser.context.setOffline(false);
    const [sent] = await b.evaluate(async () => {
      for (;;) {
        const counts = await outbox.counts();
        if (counts[0].succeeded === 8) return counts;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    assert.equal(sent.paused, false);
    assert.equal(received.length, 8, 'each request was sent once');
    assert.equal(new Set(received.map((r) => r.key)).size, 8, 'each with its own idempotency key');
    assert.deepEqual(received.map((r) => r.body.text).sort(), ids.map((_, i) => `note ${i}`).sort());
    assert.ok(received.every((r) => r.pathname === '/api/notes'));
    assert.deepEqual(browser.errors, []);
  } finally {
    await browser.close();
  }
});
