// Headless Chromium for the IndexedDB queue tests and benchmark: one persistent context on a
// fresh profile folder (so its tabs share one origin's IndexedDB, Web Locks and
// BroadcastChannel), serving pkg/ on 127.0.0.1.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../serve.mjs';

export const chromiumPath = '/usr/bin/chromium';
export const missing = existsSync(chromiumPath) ? false : `no Chromium at ${chromiumPath}`;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Launches Chromium; answers `{ origin, context, tab(query), close() }`. `serving`: as serve.mjs takes. */
export async function launch(serving) {
  const { chromium } = await import('playwright-core');
  const server = await serve(root, serving);
  const profile = mkdtempSync(path.join(tmpdir(), 'leasehold-idb-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // Every tab keeps its timers running: the tests close, reload and freeze tabs on purpose.
      '--disable-background-timer-throttling', '--disable-renderer-backgrounding',
      '--disable-backgrounding-occluded-windows'],
  });
  const errors = [];
  /** Opens pkg/test/indexeddb/PAGE?QUERY and waits for its module to be ready. */
  async function tab(query = '', file = 'tab.html') {
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(`${server.origin}/test/indexeddb/${file}?${query}`);
    await page.waitForFunction(() => window.ready === true, undefined, { timeout: 30_000 });
    return page;
  }
  async function close() {
    await context.close();
    await server.close();
    rmSync(profile, { recursive: true, force: true });
  }
  return { origin: server.origin, context, tab, errors, close };
}
