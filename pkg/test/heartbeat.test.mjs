// Heartbeats (issue 2, clause 5) and supervised renewals (our addition), in virtual time.
// S = staleAfterMs 3000, I = heartbeatEveryMs 250, so K = 125, W = S − I − K − 1 = 2624 (strictly
// inside the lease; a JS perform has no exit grace), R = I = 250.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, JobClaimLostError, jobBackoff, base, queue, recorder, virtualTime } from './helpers.mjs';

const hb = (over) => base({ staleAfterMs: 3000, heartbeatEveryMs: 250, claim: queue(1).claim, ...over });
const after = (ms, value) => new Promise((resolve) => setTimeout(() => resolve(value), ms));
const plain = (report) => ({ ...report });

/** Runs one pass of one item; answers the report, the events (times relative to the claim) and the signal. */
async function onePass(t, over) {
  const clock = virtualTime(t);
  const t0 = clock.now();
  const events = [];
  let signal;
  const { lines, logger } = recorder();
  const runner = createJobRunner(hb({ logger, onEvent: (e) => events.push({ ...e, at: e.at - t0 }), ...over,
    perform: (item, s) => { signal = s; return over.perform(item, s); } }));
  let report;
  runner.tick().then((r) => { report = r; });
  await clock.until(() => report !== undefined);
  await runner.dispose();
  return { report: plain(report), events, signal, lines };
}

const only = (events, type) => events.filter((e) => e.type === type);

test('renewals run every heartbeatEveryMs on a fixed grid from the claim; true traces heartbeat', async (t) => {
  const renewals = [];
  const { report, events } = await onePass(t, {
    heartbeat: async (item, at) => { renewals.push([item.id, at]); return true; },
    perform: () => after(1100),
  });
  assert.deepEqual(report, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  assert.deepEqual(renewals.map(([id, at]) => [id, at - 1000]), [[0, 250], [0, 500], [0, 750], [0, 1000]]);
  assert.deepEqual(only(events, 'heartbeat').map((e) => [e.at, e.item, e.name]),
    [[250, 0, 'test'], [500, 0, 'test'], [750, 0, 'test'], [1000, 0, 'test']]);
});

test('a renewal never overlaps the one in flight: its slot is skipped', async (t) => {
  const sent = [];
  await onePass(t, {
    heartbeat: (item, at) => { sent.push(at - 1000); return after(600, true); },
    perform: () => after(2000),
  });
  assert.deepEqual(sent, [250, 1000, 1750]);
});

test('a renewal that raises traces heartbeat-failed with the error and leaves the lease as it was', async (t) => {
  const down = new Error('db down');
  let calls = 0;
  const { report, events, signal } = await onePass(t, {
    heartbeat: async () => { calls += 1; if (calls === 1) throw down; return true; },
    perform: () => after(600),
  });
  assert.deepEqual(report, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  const failed = only(events, 'heartbeat-failed');
  assert.equal(failed.length, 1);
  assert.equal(failed[0].error, down);
  assert.deepEqual([failed[0].at, failed[0].item], [250, 0]);
  assert.deepEqual(only(events, 'heartbeat').map((e) => e.at), [500]);
  assert.equal(signal.aborted, false);
});

test('false loses the claim: claim-lost is traced and the signal aborts with JobClaimLostError', async (t) => {
  let abortedAt;
  const { report, events, signal, lines } = await onePass(t, {
    name: 'fence',
    heartbeat: async (item, at) => at - 1000 < 500,
    perform: (item, s) => new Promise((resolve, reject) => {
      s.addEventListener('abort', () => { abortedAt = Date.now() - 1000; reject(s.reason); });
    }),
  });
  assert.deepEqual(report, { claimed: 1, performed: 0, failed: 0, claimLost: 1 });
  assert.ok(signal instanceof AbortSignal);
  assert.ok(signal.reason instanceof JobClaimLostError);
  assert.equal(signal.reason.code, 'CLAIM_LOST');
  assert.equal(signal.reason.job, 'fence');
  assert.equal(signal.reason.lapsed, false);
  assert.equal(abortedAt, 500);
  const lost = only(events, 'claim-lost');
  assert.deepEqual(lost.map((e) => [e.at, e.item, e.lapsed, e.name]), [[500, 0, false, 'fence']]);
  assert.equal(lines.length, 0, 'a lost claim is not a failure: nothing logged');
  assert.equal(only(events, 'item-failed').length, 0);
});

test('once the claim is lost, work that still completes counts as performed (the flag rule)', async (t) => {
  const { report, signal } = await onePass(t, {
    heartbeat: async () => false,
    perform: () => after(400),
  });
  assert.deepEqual(report, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  assert.equal(signal.aborted, true);
});

test('after a false answer no more renewals are sent', async (t) => {
  const sent = [];
  await onePass(t, {
    heartbeat: async (item, at) => { sent.push(at - 1000); return false; },
    perform: () => after(1500),
  });
  assert.deepEqual(sent, [250]);
});

test('renewals that hang forever lapse the claim at W + R after it, at least K before S', async (t) => {
  const { report, events, signal } = await onePass(t, {
    heartbeat: () => new Promise(() => {}),
    perform: (item, s) => new Promise((resolve, reject) => s.addEventListener('abort', () => reject(s.reason))),
  });
  assert.deepEqual(report, { claimed: 1, performed: 0, failed: 0, claimLost: 1 });
  assert.equal(signal.reason.lapsed, true);
  assert.equal(signal.reason.code, 'CLAIM_LOST');
  const lost = only(events, 'claim-lost');
  assert.deepEqual(lost.map((e) => [e.at, e.lapsed, e.unconfirmedMs, e.item]), [[2874, true, 2874, 0]]);
  assert.ok(lost[0].at < 3000 - 125);
});

test('renewals that keep raising lapse when the reconfirming renewal raises', async (t) => {
  const sent = [];
  const { report, events } = await onePass(t, {
    heartbeat: async (item, at) => { sent.push(at - 1000); throw new Error('down'); },
    perform: (item, s) => new Promise((resolve, reject) => s.addEventListener('abort', () => reject(s.reason))),
  });
  assert.deepEqual(report, { claimed: 1, performed: 0, failed: 0, claimLost: 1 });
  assert.equal(sent.at(-1), 2624, 'the deadline sends one reconfirming renewal');
  assert.deepEqual(only(events, 'claim-lost').map((e) => [e.at, e.lapsed]), [[2624, true]]);
  assert.equal(only(events, 'heartbeat-failed').length, sent.length);
});

test('heartbeatSkewMs moves the decision earlier', async (t) => {
  const { events } = await onePass(t, {
    heartbeatSkewMs: 500,
    heartbeat: () => new Promise(() => {}),
    perform: (item, s) => new Promise((resolve, reject) => s.addEventListener('abort', () => reject(s.reason))),
  });
  // W = 3000 − 250 − 500 − 1 = 2249; the hanging renewal gets R = 250 more.
  assert.deepEqual(only(events, 'claim-lost').map((e) => [e.at, e.unconfirmedMs]), [[2499, 2499]]);
});

test('renewals still in flight when the item settles are abandoned: nothing more is traced', async (t) => {
  const { report, events, signal } = await onePass(t, {
    heartbeat: () => after(400, false),
    perform: () => after(300),
  });
  assert.deepEqual(report, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(only(events, 'claim-lost').length, 0);
  assert.equal(signal.aborted, false);
});

test('a lost claim never backs the loop off', async (t) => {
  const { events } = await onePass(t, {
    backoff: jobBackoff(1000),
    heartbeat: async () => false,
    perform: (item, s) => new Promise((resolve, reject) => s.addEventListener('abort', () => reject(s.reason))),
  });
  assert.equal(only(events, 'pass-end')[0].nextDelayMs, 1000);
});

test('each item gets its own signal: losing one claim aborts only that item', async (t) => {
  const clock = virtualTime(t);
  const signals = new Map();
  const runner = createJobRunner(hb({ concurrency: 3, claim: queue(3).claim,
    heartbeat: async (item) => item.id !== 1,
    perform: (item, signal) => { signals.set(item.id, signal); return after(600); } }));
  let report;
  runner.tick().then((r) => { report = r; });
  await clock.until(() => report !== undefined);
  assert.deepEqual([0, 1, 2].map((id) => signals.get(id).aborted), [false, true, false]);
  assert.equal(new Set(signals.values()).size, 3);
  await runner.dispose();
});

test('a claim that answers after its write tolerance is spent is not performed: it lapsed', async (t) => {
  const clock = virtualTime(t);
  const events = [];
  let performed = 0;
  let claims = 0;
  const runner = createJobRunner(hb({ onEvent: (e) => events.push(e),
    // The first claim's answer takes 2700 ms, past W = 2624; the second answers at once.
    claim: (at) => { claims += 1; return claims === 1 ? after(2700, { id: 0 }) : (claims === 2 ? { id: 1 } : null); },
    perform: async () => { performed += 1; },
    heartbeat: async () => true }));
  let report;
  runner.tick().then((r) => { report = r; });
  await clock.until(() => report !== undefined);
  assert.deepEqual(plain(report), { claimed: 2, performed: 1, failed: 0, claimLost: 1 });
  assert.equal(performed, 1, 'only the prompt claim was performed');
  const lapsed = only(events, 'claim-lost');
  assert.deepEqual(lapsed.map((e) => [e.item, e.lapsed, e.unconfirmedMs, e.at - 1000]), [[0, true, 2700, 2700]]);
  await runner.dispose();
});


test('an item\'s signal is an AbortSignal like an AbortController\'s: same own properties; a lost claim aborts it as abort() does', async (t) => {
  const { once, addAbortListener } = await import('node:events');
  const seen = [];
  let dependant;
  let onceEvent;
  const { signal } = await onePass(t, {
    heartbeat: async () => false,
    perform: (item, s) => {
      const real = new AbortController().signal;
      assert.deepEqual(Reflect.ownKeys(s).map(String), Reflect.ownKeys(real).map(String));
      assert.equal(Object.getPrototypeOf(s), AbortSignal.prototype);
      assert.equal(Object.prototype.toString.call(s), '[object AbortSignal]');
      s.addEventListener('abort', (event) => seen.push(['listener', event.type, event.isTrusted, event.target === s]));
      s.onabort = (event) => seen.push(['onabort', event.type]);
      addAbortListener?.(s, () => seen.push(['addAbortListener']));
      dependant = AbortSignal.any?.([s]);
      once(s, 'abort').then(([event]) => { onceEvent = event; });
      return new Promise((resolve, reject) => s.addEventListener('abort', () => reject(s.reason), { once: true }));
    },
  });
  assert.ok(signal.reason instanceof JobClaimLostError);
  assert.equal(signal.aborted, true);
  assert.throws(() => signal.throwIfAborted(), (error) => error === signal.reason);
  assert.deepEqual(seen.slice(0, 2), [['listener', 'abort', true, true], ['onabort', 'abort']]);
  if (addAbortListener) assert.deepEqual(seen[2], ['addAbortListener']);
  if (dependant) assert.equal(dependant.reason, signal.reason);
  assert.equal(onceEvent?.type, 'abort');
});
