// The browser build in headless Chromium: a page served on localhost imports dist/browser.mjs,
// loads the .wasm beside it with init() and initTrace(), and runs a runner against an in-page queue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './serve.mjs';

const chromiumPath = '/usr/bin/chromium';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const skip = existsSync(chromiumPath) ? false : `no Chromium at ${chromiumPath}: browser test skipped`;

test('a runner in headless Chromium performs an in-page queue and reports its pass', { skip, timeout: 120_000 }, async (t) => {
  const { chromium } = await import('playwright-core');
  const server = await serve(root);
  t.after(server.close);
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (error) => errors.push(String(error)));
  await page.goto(`${server.origin}/test/browser/index.html`);
  await page.waitForFunction(() => window.__result !== undefined, undefined, { timeout: 60_000 });
  const result = await page.evaluate(() => window.__result);
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(errors, []);
  assert.deepEqual(result.loading.fetchedAtImport, [], 'importing the entry fetches no .wasm');
  assert.match(result.loading.beforeInit, /^Error: leasehold: createJobRunner\(\) needs the WebAssembly module.*`await init\(\)` first/);
  assert.equal(result.loading.batchLimitBeforeInit, undefined);
  assert.deepEqual(result.loading.fetchedAfterInit, ['leasehold_bg.wasm'], 'init() fetches the runner module alone');
  assert.match(result.loading.traceBeforeInitTrace, /^Error: leasehold: a trace sink needs .*`await initTrace\(\)` first/);
  assert.deepEqual(result.loading.fetchedAfterInitTrace, ['leasehold_bg.wasm', 'leasehold_trace_bg.wasm']);
  assert.deepEqual(result.report, { claimed: 40, performed: 39, failed: 0, claimLost: 1 });
  assert.deepEqual(result.reason, { isClaimLost: true, code: 'CLAIM_LOST', job: 'page', lapsed: false });
  assert.equal(result.events['claim-lost'], 1);
  assert.ok(result.events.heartbeat >= 1, 'long items were renewed');
  assert.equal(result.events.claimed, 40);
  assert.equal(result.defaultBatchLimit, 25);
  assert.equal(result.trace.outcomes.length, 40, 'the trace sink recorded the pass');
  assert.equal(result.trace.outcomes.filter((o) => o === 'claim-lost').length, 1);
  assert.equal(result.trace.resumed, 1, 'and resumed from its JSON');
});
