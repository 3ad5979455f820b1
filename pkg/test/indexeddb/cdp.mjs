// Headless Chromium driven over the DevTools protocol alone, for the tests that need a hidden
// tab. Playwright turns focus emulation on in every page it attaches to, which keeps each one
// visible and its timers unthrottled, so these tabs are opened and driven without it (its
// WebSocket client is borrowed: playwright-core/lib/utilsBundle). A tab another tab was opened
// in front of is hidden, as a tab the user switched away from, and its timers are throttled as
// in a user's Chrome: wake-ups aligned to whole seconds, and once it has been hidden
// `throttled` seconds (Chrome waits 5 minutes), chained timers woken once a minute.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { serve } from '../serve.mjs';
import { chromiumPath } from './chromium.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { ws: WebSocket } = createRequire(import.meta.url)('playwright-core/lib/utilsBundle');

/** Launches Chromium; answers `{ tab(query), close(), errors }`. */
export async function launchRaw({ throttled = 300 } = {}) {
  const server = await serve(root);
  const profile = mkdtempSync(path.join(tmpdir(), 'leasehold-cdp-'));
  const proc = spawn(chromiumPath, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--mute-audio',
    `--enable-features=IntensiveWakeUpThrottling:grace_period_seconds/${throttled}`,
    '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const endpoint = await new Promise((resolve, reject) => {
    let text = '';
    proc.stderr.on('data', (chunk) => {
      text += chunk;
      const found = /DevTools listening on (ws:\S+)/.exec(text);
      if (found) resolve(found[1]);
    });
    proc.on('exit', (code) => reject(new Error(`chromium exited (${code}): ${text}`)));
  });
  const socket = new WebSocket(endpoint);
  await new Promise((resolve, reject) => {
    socket.on('open', resolve);
    socket.on('error', reject);
  });
  let lastId = 0;
  const pending = new Map();
  const errors = [];
  socket.on('message', (data) => {
    const message = JSON.parse(data);
    if (message.id !== undefined) {
      const call = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) call.reject(new Error(`${call.method}: ${message.error.message}`));
      else call.resolve(message.result);
    } else if (message.method === 'Runtime.exceptionThrown') {
      errors.push(message.params.exceptionDetails.exception?.description ?? message.params.exceptionDetails.text);
    }
  });
  const send = (method, params = {}, sessionId = undefined) => new Promise((resolve, reject) => {
    const id = ++lastId;
    pending.set(id, { resolve, reject, method });
    socket.send(JSON.stringify({ id, method, params, sessionId }));
  });

  /**
   * Opens pkg/test/indexeddb/tab.html?QUERY in a window of its own, or with `inTab` as a tab in
   * front of the last window's (`hide()` opens another in front of it).
   */
  async function tab(query = '', { inTab = false } = {}) {
    const url = `${server.origin}/test/indexeddb/tab.html?${query}`;
    const { targetId } = await send('Target.createTarget', { url, newWindow: !inTab });
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    await send('Runtime.enable', {}, sessionId);
    /** `fn(arg)` evaluated in the tab (awaited); answers its value. */
    async function evaluate(fn, arg) {
      const result = await send('Runtime.evaluate', {
        expression: `(${fn})(${arg === undefined ? '' : JSON.stringify(arg)})`, awaitPromise: true, returnByValue: true,
      }, sessionId);
      if (result.exceptionDetails) throw new Error(result.exceptionDetails.exception?.description ?? result.exceptionDetails.text);
      return result.result.value;
    }
    /** Evaluates `fn(arg)` every 20 ms until it answers something truthy; answers that. */
    async function until(fn, arg, timeout = 60_000) {
      const end = Date.now() + timeout;
      for (;;) {
        const value = await evaluate(fn, arg).catch(() => undefined);
        if (value) return value;
        if (Date.now() > end) throw new Error(`nothing after ${timeout} ms: ${fn}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
    await until(() => window.ready === true);
    return {
      evaluate, until, send: (method, params) => send(method, params, sessionId),
      /**
       * Opens a blank tab in front of this one: this page is hidden, as a tab the user switched
       * away from. Answers once the page says so.
       */
      async hide() {
        const front = await send('Target.createTarget', { url: 'data:text/html,<p>in front', newWindow: false });
        const attached = await send('Target.attachToTarget', { targetId: front.targetId, flatten: true });
        await send('Runtime.enable', {}, attached.sessionId);
        await until(() => document.visibilityState === 'hidden', undefined, 10_000);
      },
      close: () => send('Target.closeTarget', { targetId }),
    };
  }
  async function close() {
    const exited = new Promise((resolve) => (proc.exitCode !== null ? resolve() : proc.on('exit', resolve)));
    await Promise.race([send('Browser.close').catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5000))]);
    const killer = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
    socket.close();
    await server.close();
    // Its helper processes may still be writing the profile for a moment after it exits.
    for (let i = 0; ; i++) {
      try {
        rmSync(profile, { recursive: true, force: true });
        break;
      } catch (error) {
        if (i === 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }
  return { tab, close, errors };
}
