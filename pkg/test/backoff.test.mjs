// Backoff (issue 2, clause 2): after k raising passes the next delay is
// min(max, initial × max(1, multiplier)^(min(k−1, 30))); a clean pass resets it to intervalMs;
// without backoff a raising pass waits intervalMs; lost claims never back off; delays past
// 2^31−1 ms are clamped and reported as scheduled. Checked on pass-end and on the loop's timer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, jobBackoff, base, virtualTime } from './helpers.mjs';

/** A claim that hands out one item per pass (so pass-end is emitted), then raises or not. */
function oneThenMaybeRaise() {
  const s = { give: 0, raise: true };
  s.claim = async () => {
    if (s.give > 0) { s.give -= 1; return { id: 1 }; }
    if (s.raise) throw new Error('refused');
    return null;
  };
  return s;
}

async function delaysOf(options, passes, setup = () => {}) {
  const delays = [];
  const source = oneThenMaybeRaise();
  const runner = createJobRunner(base({ claim: source.claim, perform: async () => {},
    onEvent: (e) => { if (e.type === 'pass-end') delays.push(e.nextDelayMs); }, ...options }));
  for (let i = 0; i < passes; i += 1) {
    setup(source, i);
    source.give = 1;
    await runner.tick();
  }
  await runner.dispose();
  return delays;
}

test('a raising pass doubles the next delay up to max; a clean pass resets it', async () => {
  const delays = await delaysOf({ intervalMs: 100, backoff: jobBackoff(100) }, 7, (s, i) => { s.raise = i < 6; });
  assert.deepEqual(delays, [100, 200, 400, 800, 1000, 1000, 100]);
});

test('without backoff a raising pass waits the plain interval', async () => {
  assert.deepEqual(await delaysOf({ intervalMs: 70 }, 3), [70, 70, 70]);
});

test('a fractional multiplier grows step by step; under 1 counts as 1', async () => {
  const grow = await delaysOf({ intervalMs: 100, backoff: { initialMs: 100, maxMs: 10_000, multiplier: 1.5 } }, 4);
  assert.deepEqual(grow, [100, 150, 225, 337]);
  const flat = await delaysOf({ intervalMs: 100, backoff: { initialMs: 40, maxMs: 10_000, multiplier: 0.5 } }, 3);
  assert.deepEqual(flat, [40, 40, 40]);
});

test('a failed item backs the loop off too', async () => {
  const delays = [];
  let give = 0;
  const runner = createJobRunner(base({ intervalMs: 50, backoff: jobBackoff(50),
    claim: async () => (give-- > 0 ? { id: 1 } : null),
    perform: async () => { throw new Error('bad item'); },
    onEvent: (e) => { if (e.type === 'pass-end') delays.push(e.nextDelayMs); } }));
  for (let i = 0; i < 3; i += 1) { give = 1; await runner.tick(); }
  assert.deepEqual(delays, [50, 100, 200]);
  await runner.dispose();
});

test('delays past 2^31−1 ms are clamped, and nextDelayMs says what was scheduled', async () => {
  const delays = await delaysOf({ intervalMs: 1e12 }, 1, (s) => { s.raise = false; });
  assert.deepEqual(delays, [2_147_483_647]);
  const backedOff = await delaysOf({ intervalMs: 10, backoff: { initialMs: 1e15, maxMs: 1e16, multiplier: 2 } }, 1);
  assert.deepEqual(backedOff, [2_147_483_647]);
});

test('the started loop waits the backed-off delays between passes', async (t) => {
  const clock = virtualTime(t, 0);
  const claims = [];
  const runner = createJobRunner(base({ intervalMs: 100, backoff: jobBackoff(100),
    claim: async (at) => { claims.push(at); throw new Error('down'); }, perform: async () => {} }));
  runner.start();
  await clock.advance(1600);
  runner.stop();
  // Passes at 0, then +100, +200, +400, +800 (the first raising pass waits the initial delay).
  assert.deepEqual(claims, [0, 100, 300, 700, 1500]);
  await runner.dispose();
});

test('an over-large interval does not turn into a hot loop', async (t) => {
  const clock = virtualTime(t, 0);
  let claims = 0;
  const runner = createJobRunner(base({ intervalMs: 1e12, claim: async () => { claims += 1; return null; },
    perform: async () => {} }));
  runner.start();
  await clock.advance(500);
  assert.equal(claims, 1, 'one pass at start, then a wait of 2^31−1 ms, not 1 ms');
  await runner.dispose();
});
