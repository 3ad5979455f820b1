// The loop (issue 2, clause 7): tick joins, wake coalesces, start/stop with stop
// generations, quiesce and dispose — in virtual time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, base, deferred, settle, virtualTime } from './helpers.mjs';

/** A source that gives one item per pass, whose perform waits for `release()`. */
function gated() {
  const g = { passes: 0, claimsAt: [], pending: [] };
  let fresh = true;
  g.claim = async (at) => {
    g.claimsAt.push(at);
    if (fresh) { fresh = false; g.passes += 1; return { pass: g.passes }; }
    fresh = true;
    return null;
  };
  g.perform = () => { const d = deferred(); g.pending.push(d); return d.promise; };
  g.release = () => g.pending.splice(0).forEach((d) => d.resolve());
  return g;
}

/** A runner (the minimal options) over a fresh `gated()` source. */
function gatedRunner() {
  const g = gated();
  return { g, runner: createJobRunner(base({ claim: g.claim, perform: g.perform })) };
}

test('start runs a pass at once, then one per interval; a second start does nothing', async (t) => {
  const clock = virtualTime(t, 0);
  const claims = [];
  const runner = createJobRunner(base({ intervalMs: 100, claim: async (at) => { claims.push(at); return null; },
    perform: async () => {} }));
  runner.start();
  runner.start();
  await clock.advance(350);
  runner.stop();
  await clock.advance(300);
  assert.deepEqual(claims, [0, 100, 200, 300]);
  await runner.dispose();
});

test('tick during a pass joins that pass', async () => {
  const { g, runner } = gatedRunner();
  const a = runner.tick();
  await settle();
  const b = runner.tick();
  assert.equal(a, b, 'the same promise');
  g.release();
  assert.deepEqual({ ...(await a) }, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  assert.equal(g.passes, 1);
  await runner.dispose();
});

test('wake while idle runs one pass at once', async () => {
  let claims = 0;
  const runner = createJobRunner(base({ claim: async () => { claims += 1; return null; }, perform: async () => {} }));
  runner.wake();
  await settle();
  assert.equal(claims, 1);
  await runner.dispose();
});

test('wakes during a pass coalesce into exactly one follow-up pass', async () => {
  const { g, runner } = gatedRunner();
  const first = runner.tick();
  await settle();
  for (let i = 0; i < 5; i += 1) runner.wake();
  g.release();
  await first;
  await settle();
  assert.equal(g.passes, 2, 'one follow-up');
  g.release();
  await settle();
  await settle();
  assert.equal(g.passes, 2, 'and only one');
  await runner.dispose();
});

test('stop drops a follow-up that a wake had asked for', async () => {
  const { g, runner } = gatedRunner();
  const first = runner.tick();
  await settle();
  runner.wake();
  runner.stop();
  g.release();
  await first;
  await settle();
  assert.equal(g.passes, 1);
  await runner.dispose();
});

test('a pass that outlives its stop schedules nothing for a loop started again since', async (t) => {
  const clock = virtualTime(t, 0);
  const g = gated();
  const runner = createJobRunner(base({ intervalMs: 100, claim: g.claim,
    perform: (item) => (item.pass === 1 ? g.perform() : undefined) }));
  runner.start(); // pass 1 at 0, held open
  await clock.advance(10);
  runner.stop();
  runner.start(); // joins pass 1; only this chain schedules after it
  await clock.advance(40);
  g.release(); // pass 1 ends at 50
  await clock.advance(400);
  runner.stop();
  const heads = g.claimsAt.filter((_, i) => i % 2 === 0);
  assert.deepEqual(heads, [0, 150, 250, 350, 450], 'one pass per interval: a single chain');
  await runner.dispose();
});

test('quiesce stops and waits for the pass in flight, and the loop can start again', async () => {
  const { g, runner } = gatedRunner();
  runner.start();
  await settle();
  let quiet = false;
  const q = runner.quiesce().then((value) => { quiet = true; return value; });
  await settle();
  assert.equal(quiet, false);
  g.release();
  assert.equal(await q, undefined);
  runner.start();
  await settle();
  assert.equal(g.passes, 2);
  g.release();
  await runner.dispose();
});

test('dispose waits for the pass in flight; afterwards start, tick and wake do nothing', async () => {
  const { g, runner } = gatedRunner();
  runner.tick();
  await settle();
  let disposed = false;
  const d = runner.dispose().then(() => { disposed = true; });
  await settle();
  assert.equal(disposed, false);
  g.release();
  await d;
  await runner.dispose();
  runner.start();
  runner.wake();
  const report = await runner.tick();
  await settle();
  assert.equal(g.passes, 1);
  assert.deepEqual({ ...report }, { claimed: 0, performed: 0, failed: 0, claimLost: 0 });
});

test('callbacks may call the runner: a perform that wakes it gets its follow-up pass', async () => {
  let runner;
  let passes = 0;
  let fresh = true;
  runner = createJobRunner(base({
    claim: async () => { if (fresh) { fresh = false; passes += 1; return passes; } fresh = true; return null; },
    perform: (item) => { if (item === 1) runner.wake(); },
  }));
  await runner.tick();
  await settle();
  await settle();
  assert.equal(passes, 2);
  await runner.dispose();
});

test('a sink that stops the loop at pass-end leaves nothing scheduled', async (t) => {
  const clock = virtualTime(t, 0);
  let claims = 0;
  let runner;
  runner = createJobRunner(base({ intervalMs: 100, claim: async () => { claims += 1; return claims === 1 ? 1 : null; },
    perform: async () => {}, onEvent: (e) => { if (e.type === 'pass-end') runner.stop(); } }));
  runner.start();
  await clock.advance(500);
  assert.equal(claims, 2, 'the first pass only');
  await runner.dispose();
});

test('a tick from inside a sink starts the next pass without overlapping', async () => {
  let runner;
  let claims = 0;
  let nested;
  runner = createJobRunner(base({ claim: async () => { claims += 1; return claims === 1 ? 1 : null; },
    perform: async () => {},
    onEvent: (e) => { if (e.type === 'pass-end' && !nested) nested = runner.tick(); } }));
  const first = await runner.tick();
  assert.equal(first.claimed, 1);
  const second = await nested;
  assert.equal(second.claimed, 0);
  assert.equal(claims, 3);
  await runner.dispose();
});

test('a clock that stands still neither stalls the loop nor spins it', async (t) => {
  const clock = virtualTime(t, 0);
  let claims = 0;
  const renewals = [];
  let release;
  const runner = createJobRunner(base({ intervalMs: 100, staleAfterMs: 3000, heartbeatEveryMs: 250, now: () => 5000,
    claim: async () => { claims += 1; return claims === 1 ? { id: 1 } : null; },
    perform: () => new Promise((resolve) => { release = resolve; }),
    heartbeat: async (item, at) => { renewals.push([Date.now(), at]); return true; } }));
  runner.start();
  await clock.advance(600);
  release();
  await clock.advance(1000);
  runner.stop();
  // Renewals every 250 ms of timer time, stamped on the grid from the frozen claim time.
  assert.deepEqual(renewals, [[250, 5250], [500, 5500]]);
  // The pass ended at 600; then one pass per interval: about 10 in 1000 ms, not thousands.
  assert.ok(claims >= 10 && claims <= 13, `${claims} claims`);
  await runner.dispose();
});
