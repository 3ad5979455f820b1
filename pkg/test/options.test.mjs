// Options (issue 2, clause 1, and our checks): bad options throw a TypeError (wrong kind,
// not a finite number) or RangeError (out of range) naming the option; defaults as the seed's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createJobRunner, jobBackoff, base, queue, virtualTime } from './helpers.mjs';

const ok = { claim: async () => null, perform: async () => {} };
const make = (over) => createJobRunner(base({ ...ok, ...over }));

function refuses(over, kind, pattern) {
  assert.throws(() => make(over), (error) => {
    assert.equal(error.constructor, kind, `${error}`);
    assert.match(error.message, pattern);
    return true;
  });
}

test('options that are not an object are a TypeError', () => {
  for (const value of [undefined, null, 5, 'x']) {
    assert.throws(() => createJobRunner(value), TypeError);
  }
});

test('intervalMs: missing, not a number or not finite is a TypeError; negative a RangeError', () => {
  refuses({ intervalMs: undefined }, TypeError, /intervalMs must be a number, got undefined/);
  refuses({ intervalMs: '100' }, TypeError, /intervalMs must be a number, got string/);
  refuses({ intervalMs: Number.NaN }, TypeError, /intervalMs must be a finite number, got NaN/);
  refuses({ intervalMs: Number.POSITIVE_INFINITY }, TypeError, /intervalMs/);
  refuses({ intervalMs: -1 }, RangeError, /intervalMs must not be negative/);
});

test('every numeric option is named when it is wrong', () => {
  for (const option of ['staleAfterMs', 'heartbeatEveryMs', 'heartbeatSkewMs', 'batchLimit']) {
    refuses({ [option]: Number.NaN }, TypeError, new RegExp(option));
    refuses({ [option]: -5 }, RangeError, new RegExp(option));
    refuses({ [option]: 'soon' }, TypeError, new RegExp(`${option} must be a number`));
  }
  refuses({ concurrency: '4' }, TypeError, /concurrency must be a number/);
});

test('backoff fields are checked by name', () => {
  refuses({ backoff: { ...jobBackoff(100), maxMs: -1 } }, RangeError, /backoff\.maxMs/);
  refuses({ backoff: { ...jobBackoff(100), initialMs: Number.NaN } }, TypeError, /backoff\.initialMs/);
  refuses({ backoff: { initialMs: 1, maxMs: 2 } }, TypeError, /backoff\.multiplier must be a number, got undefined/);
  refuses({ backoff: 3 }, TypeError, /backoff must be an object/);
});

test('callbacks must be functions; the optional ones may be left out', () => {
  refuses({ claim: undefined }, TypeError, /claim must be a function/);
  refuses({ perform: {} }, TypeError, /perform must be a function, got object/);
  refuses({ heartbeat: 'yes' }, TypeError, /heartbeat must be a function/);
  refuses({ onEvent: 1 }, TypeError, /onEvent must be a function/);
  refuses({ logger: 5 }, TypeError, /logger must be a logger object \(with an error method\) or a function answering one, got number/);
  refuses({ now: 5 }, TypeError, /now must be a function/);
  refuses({ name: 12 }, TypeError, /name must be a string/);
  const runner = createJobRunner({ name: 'bare', intervalMs: 10, staleAfterMs: 100, ...ok });
  assert.equal(runner.name, 'bare');
  runner.dispose();
});

test('with a heartbeat, a cadence of half the stale window or slower is a RangeError', () => {
  refuses({ heartbeat: async () => true, staleAfterMs: 1000, heartbeatEveryMs: 500 }, RangeError,
    /heartbeatEveryMs \(500\) must be under half of staleAfterMs \(1000\)/);
  make({ heartbeat: async () => true, staleAfterMs: 1000, heartbeatEveryMs: 499 }).dispose();
  // Without a heartbeat the cadence is never used, so there is no such rule.
  make({ staleAfterMs: 1000, heartbeatEveryMs: 500 }).dispose();
});

test('a refusal caused by a default names the option that was given and says what the default was', () => {
  // staleAfterMs 300 alone: heartbeatEveryMs defaults to 250, not under half of it.
  refuses({ heartbeat: async () => true, staleAfterMs: 300 }, RangeError,
    /^createJobRunner: heartbeatEveryMs \(250, its default: the larger of 250 and a third of staleAfterMs\) must be under half of staleAfterMs \(300\) so two renewals fit in the stale window: give a heartbeatEveryMs under 150, or a staleAfterMs above 500$/);
  // heartbeatEveryMs 1 alone: heartbeatSkewMs, never given, defaults to half of it, 0.
  refuses({ heartbeat: async () => true, staleAfterMs: 1000, heartbeatEveryMs: 1 }, RangeError,
    /^createJobRunner: heartbeatEveryMs \(1\) must be at least 2 when heartbeatSkewMs is left out/);
  refuses({ heartbeat: async () => true, staleAfterMs: 1000, heartbeatEveryMs: 100, heartbeatSkewMs: 0 }, RangeError,
    /^createJobRunner: heartbeatSkewMs must be above 0/);
});

test('a skew allowance that leaves no write tolerance is a RangeError', () => {
  refuses({ heartbeat: async () => true, staleAfterMs: 3000, heartbeatEveryMs: 1000, heartbeatSkewMs: 2000 },
    RangeError, /heartbeatSkewMs/);
});

test('staleAfterMs may be left out only when there is no heartbeat (the seed never reads it then)', () => {
  make({ staleAfterMs: undefined }).dispose();
  refuses({ staleAfterMs: undefined, heartbeat: async () => true }, TypeError,
    /staleAfterMs must be a number \(required with a heartbeat\), got undefined/);
  refuses({ staleAfterMs: '3000', heartbeat: async () => true }, TypeError, /staleAfterMs must be a number, got string/);
});

test('the default cadence is a third of staleAfterMs, never under 250 ms', async (t) => {
  const clock = virtualTime(t);
  const cadence = async (staleAfterMs) => {
    const renewals = [];
    let release;
    const runner = make({ staleAfterMs, claim: queue(1).claim,
      perform: () => new Promise((resolve) => { release = resolve; }),
      heartbeat: async (item, at) => { renewals.push(at); return true; } });
    const start = clock.now();
    const pass = runner.tick();
    await clock.until(() => renewals.length === 2);
    release();
    await pass;
    await runner.dispose();
    return renewals.map((at) => at - start);
  };
  assert.deepEqual(await cadence(3000), [1000, 2000]);
  assert.deepEqual(await cadence(700), [250, 500], "a third of 700 is 233: raised to 250");
});

test('logger and now are optional: console and Date.now', async (t) => {
  const original = console.error;
  const seen = [];
  console.error = (...args) => seen.push(args);
  t.after(() => { console.error = original; });
  const events = [];
  const before = Date.now();
  const runner = createJobRunner({ name: 'defaults', intervalMs: 10, staleAfterMs: 100, claim: queue(1).claim,
    perform: async () => { throw new Error('boom'); }, onEvent: (e) => events.push(e) });
  await runner.tick();
  await runner.dispose();
  assert.equal(seen.length, 1);
  assert.equal(seen[0][0], 'defaults work failed');
  assert.equal(seen[0][1].module, 'defaults');
  assert.equal(seen[0][1].err.message, 'boom');
  assert.ok(events[0].at >= before && events[0].at <= Date.now());
});

test('fractional times and spans are truncated', async () => {
  const events = [];
  let clock = 1000.75;
  const runner = make({ intervalMs: 250.9, now: () => clock, claim: queue(1).claim,
    perform: async () => { clock += 7.5; }, onEvent: (e) => events.push(e) });
  await runner.tick();
  await runner.dispose();
  assert.deepEqual(events.map((e) => e.at), [1000, 1000, 1008, 1008]);
  assert.equal(events[2].durationMs, 8);
  assert.equal(events.at(-1).nextDelayMs, 250);
});

test('concurrency keeps the seed clamping: never an error', () => {
  for (const concurrency of [0, -3, 2.9, 1e9, Number.NaN, Number.POSITIVE_INFINITY, null, undefined]) {
    make({ concurrency }).dispose();
  }
});

test('a logger that throws does not stall the pass', async () => {
  const runner = make({ claim: queue(2).claim, logger: () => { throw new Error('no logger'); },
    perform: async () => { throw new Error('bad'); } });
  assert.deepEqual({ ...(await runner.tick()) }, { claimed: 2, performed: 0, failed: 2, claimLost: 0 });
  await runner.dispose();
});

test('a key close to an option name is refused with the option it is close to', () => {
  refuses({ intervalMS: 500 }, TypeError, /unknown option intervalMS: did you mean intervalMs\?/);
  refuses({ INTERVALMS: 500 }, TypeError, /did you mean intervalMs\?/);
  refuses({ concurency: 4 }, TypeError, /unknown option concurency: did you mean concurrency\?/);
  refuses({ heartbeatEvreyMs: 100 }, TypeError, /did you mean heartbeatEveryMs\?/);
  refuses({ onevent: () => {} }, TypeError, /did you mean onEvent\?/);
  refuses({ staleAfter: 100 }, TypeError, /did you mean staleAfterMs\?/);
  refuses({ Now: () => 0 }, TypeError, /did you mean now\?/);
});

test('keys far from every option name are left alone, as the reference runner leaves them', async () => {
  const runner = make({ queue: 'mail', id: 7, on: true, timeoutMs: 5, metadata: {} });
  assert.deepEqual({ ...(await runner.tick()) }, { claimed: 0, performed: 0, failed: 0, claimLost: 0 });
  await runner.dispose();
});
