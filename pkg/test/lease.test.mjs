// Run leases (seed 003 `heartbeatLoop`, `leaseLiveness`, `sameHostIncarnation`; issue 4), in
// virtual time: node:test's mocked setTimeout and Date from 0 ms, so every `at` is ms since the
// loop started. The same rules as host-node/tests/heartbeat_loop.rs, with the same numbers.
// Policy: the seed defaults (interval 2 s, write tolerance 11 s, reconfirm bound 2 s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  heartbeatLoop, runSupervised, leaseLiveness, sameHostIncarnation, leasePolicy, LeaseLostError, LEASE_LOST,
  virtualTime, settle,
} from './helpers.mjs';

const OWNER = Object.freeze({ hostId: 'host-a', pid: 4242, nonce: 'incarnation-1' });
const HANG = Symbol('hang');
/** A store reply: `outcome` (or a rejection when `outcome` is an Error) after `ms` virtual ms. */
const after = (ms, outcome) => ({ ms, outcome });
const UPDATED = after(0, 'Updated');
const unavailable = () => new Error('store unavailable');
const RAISES = after(0, unavailable());

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A store answering from two scripts (an empty script answers `Updated` at once). Records every
 * call as [kind, at, heartbeats still unanswered when it was made].
 */
function scripted(heartbeats = [], reconfirms = []) {
  const calls = [];
  let unanswered = 0;
  const call = (kind, queue) => (runId, owner, at) => {
    assert.equal(runId, 'run-1');
    assert.equal(owner, OWNER, 'the owner reaches the store as given');
    calls.push([kind, at, unanswered]);
    const reply = queue.shift() ?? UPDATED;
    if (reply === HANG) {
      if (kind === 'heartbeat') unanswered += 1;
      return new Promise(() => {});
    }
    if (kind === 'heartbeat') unanswered += 1;
    const answer = async () => {
      if (reply.ms > 0) await delay(reply.ms);
      if (kind === 'heartbeat') unanswered -= 1;
      if (reply.outcome instanceof Error) throw reply.outcome;
      return reply.outcome;
    };
    return answer();
  };
  return {
    calls,
    sent: (kind) => calls.filter((c) => c[0] === kind).map((c) => c[1]),
    store: { heartbeat: call('heartbeat', [...heartbeats]), reconfirm: call('reconfirm', [...reconfirms]) },
  };
}

/** Hooks that journal `reconfirm <ms>` and `lapse <ms>`; the receipt answers as `receipt` says. */
function journaling(journal, receipt = UPDATED) {
  return {
    onReconfirm: (gap) => {
      journal.push(`reconfirm ${gap}`);
      if (receipt === HANG) return new Promise(() => {});
      return delay(receipt.ms).then(() => {
        if (receipt.outcome instanceof Error) throw receipt.outcome;
      });
    },
    onLapse: (gap) => {
      journal.push(`lapse ${gap}`);
    },
  };
}

/** A logger keeping its lines; with `warn: false` it has only `error`. */
function recorder({ warn = true } = {}) {
  const lines = [];
  const keep = (level) => (message, meta) => lines.push({ level, message, meta });
  const logger = warn ? { warn: keep('warn'), error: keep('error') } : { error: keep('error') };
  return { lines, logger, count: (text) => lines.filter((l) => l.message.includes(text)).length };
}

const quiet = { warn() {} };

/** Runs a loop to its end; answers how it ended, when (virtual ms), and its handle. */
async function run(t, store, over = {}) {
  const clock = virtualTime(t, 0);
  const lease = heartbeatLoop({ runId: 'run-1', owner: OWNER, store, logger: quiet, ...over });
  let end;
  lease.ended.then((e) => {
    end = e;
  });
  const elapsed = await clock.until(() => end !== undefined);
  return { end, elapsed, lease, clock };
}

const lost = (outcome, at) => ({ type: 'lost', outcome, at });
const lapsed = (unconfirmedMs) => ({ type: 'lapsed', unconfirmedMs });

test('pulses renew one interval after the previous pulse completed', async (t) => {
  const slow = after(100, 'Updated');
  const s = scripted([slow, slow, slow, after(0, 'LostToNewerToken')]);
  const { end, elapsed } = await run(t, s.store);
  assert.deepEqual(s.sent('heartbeat'), [2000, 4100, 6200, 8300]);
  assert.deepEqual(s.sent('reconfirm'), []);
  assert.deepEqual([end, elapsed], [lost('LostToNewerToken', 8300), 8300]);
});

test('a lost fence ends the loop at once, aborts the signal and calls no lapse hook', async (t) => {
  const journal = [];
  const s = scripted([UPDATED, after(30, 'LostNotRunning')]);
  const { end, elapsed, lease } = await run(t, s.store, journaling(journal));
  assert.deepEqual([end, elapsed], [lost('LostNotRunning', 4000), 4030], 'ends when the answer arrives');
  assert.deepEqual(journal, []);
  assert.equal(lease.signal.aborted, true);
  const reason = lease.signal.reason;
  assert.ok(reason instanceof LeaseLostError);
  assert.deepEqual([reason.code, reason.runId, reason.lapsed, reason.outcome], [LEASE_LOST, 'run-1', false, 'LostNotRunning']);
  assert.match(reason.message, /run-1 was lost: the store answered LostNotRunning/);
});

test('the seed\'s tagged outcome objects are read by their _tag', async (t) => {
  const s = scripted([after(0, { _tag: 'Updated' }), after(0, { _tag: 'LostToNewerToken' })]);
  const { end } = await run(t, s.store);
  assert.deepEqual(end, lost({ _tag: 'LostToNewerToken' }, 4000));
  assert.deepEqual(s.sent('heartbeat'), [2000, 4000]);
});

test('a reconfirmation answering a lost fence ends the loop without lapse', async (t) => {
  const journal = [];
  const s = scripted([HANG], [after(0, 'LostMissing')]);
  const { end, elapsed } = await run(t, s.store, journaling(journal));
  assert.deepEqual([end, elapsed], [lost('LostMissing', 11000), 11000]);
  assert.deepEqual(journal, []);
});

test('failing writes are tolerated and warned once per outage through logger.warn', async (t) => {
  const log = recorder();
  const s = scripted([RAISES, RAISES, UPDATED, RAISES, RAISES, RAISES, after(0, 'LostToNewerToken')]);
  const { end } = await run(t, s.store, { logger: log.logger });
  // Two outages (2000-4000, 8000-12000) under the 11 s tolerance: no reconfirmation, no lapse.
  assert.deepEqual(s.sent('heartbeat'), [2000, 4000, 6000, 8000, 10000, 12000, 14000]);
  assert.deepEqual(s.sent('reconfirm'), []);
  assert.deepEqual(end, lost('LostToNewerToken', 14000));
  const warnings = log.lines.filter((l) => l.message === 'run heartbeat write failed');
  assert.deepEqual(warnings.map((l) => [l.level, l.meta.sentAt, l.meta.runId, l.meta.err.message]),
    [['warn', 2000, 'run-1', 'store unavailable'], ['warn', 8000, 'run-1', 'store unavailable']]);
  assert.equal(log.count('lapsed'), 0);
});

test('a logger without warn gets the warnings through error; a logger function is asked at each line', async (t) => {
  const log = recorder({ warn: false });
  const s = scripted([RAISES, after(0, 'LostToNewerToken')]);
  await run(t, s.store, { logger: () => log.logger });
  assert.deepEqual(log.lines.map((l) => [l.level, l.message]), [['error', 'run heartbeat write failed']]);
});

test('a logger that throws costs the lease nothing', async (t) => {
  const s = scripted([RAISES, UPDATED, after(0, 'LostToNewerToken')]);
  const { end } = await run(t, s.store, { logger: { warn() { throw new Error('log sink down'); } } });
  assert.deepEqual(end, lost('LostToNewerToken', 6000));
});

test('the deadline runs from the send time of the last confirmed renewal', async (t) => {
  // Sent at 2000, confirmed at 9000: the deadline is 2000 + 11000, not 9000 + 11000. The next
  // pulse (11000) hangs.
  const s = scripted([after(7000, 'Updated'), HANG], [after(0, 'LostToNewerToken')]);
  const { end } = await run(t, s.store);
  assert.deepEqual(s.sent('heartbeat'), [2000, 11000]);
  assert.deepEqual(s.sent('reconfirm'), [13000]);
  assert.deepEqual(end, lost('LostToNewerToken', 13000));
});

test('at the deadline one reconfirmation is made, bounded by one interval', async (t) => {
  const journal = [];
  const log = recorder();
  const s = scripted([HANG], [HANG]);
  const { end, elapsed, lease } = await run(t, s.store, { ...journaling(journal), logger: log.logger });
  assert.deepEqual(s.sent('reconfirm'), [11000], 'one reconfirmation, at the deadline');
  assert.deepEqual([end, elapsed], [lapsed(13000), 13000], 'timed out one interval later');
  assert.deepEqual(journal, ['lapse 13000']);
  assert.equal(log.count('run lease lapsed'), 1);
  const reason = lease.signal.reason;
  assert.ok(reason instanceof LeaseLostError);
  assert.deepEqual([reason.code, reason.lapsed, reason.unconfirmedMs], [LEASE_LOST, true, 13000]);
});

test('a renewed reconfirmation goes on and calls onReconfirm with the gap', async (t) => {
  const journal = [];
  // The pulse sent at 2000 fails only at 12000; the reconfirmation at 11000 renews at 11500;
  // pulses then resume and renew until a lost fence.
  const s = scripted([after(10_000, unavailable()), UPDATED, UPDATED, after(0, 'LostToNewerToken')],
    [after(500, 'Updated')]);
  const { end } = await run(t, s.store, journaling(journal));
  assert.deepEqual(s.sent('reconfirm'), [11000]);
  assert.deepEqual(s.sent('heartbeat'), [2000, 14000, 16000, 18000]);
  assert.deepEqual(end, lost('LostToNewerToken', 18000));
  assert.deepEqual(journal, ['reconfirm 11000'], 'no lapse');
});

test('a reconfirmation runs while a heartbeat write hangs', async (t) => {
  const journal = [];
  const s = scripted([HANG], [UPDATED, after(0, 'LostToNewerToken')]);
  const { end } = await run(t, s.store, journaling(journal));
  assert.deepEqual(s.calls, [['heartbeat', 2000, 0], ['reconfirm', 11000, 1], ['reconfirm', 22000, 1]],
    'each reconfirmation was sent with the 2000 heartbeat still unanswered');
  assert.deepEqual(journal, ['reconfirm 11000']);
  assert.deepEqual(end, lost('LostToNewerToken', 22000));
});

test('onReconfirm is bounded by the remaining budget, and a hanging hook lapses', async (t) => {
  const journal = [];
  const log = recorder();
  // The pulse sent at 2000 fails at 11500; the reconfirmation sent at 11000 renews at 11100,
  // leaving 11000 + 11000 - 11100 = 10900 ms for the receipt, which hangs. Pulses renew
  // meanwhile (13500 .. 21500): a receipt that never completes still lapses the lease at 22000.
  const s = scripted([after(9500, unavailable())], [after(100, 'Updated')]);
  const { end, elapsed } = await run(t, s.store, { ...journaling(journal, HANG), logger: log.logger });
  assert.equal(elapsed, 22000);
  assert.deepEqual(s.sent('heartbeat'), [2000, 13500, 15500, 17500, 19500, 21500]);
  assert.deepEqual(end, lapsed(500), 'unconfirmed since the last renewal, sent at 21500');
  assert.deepEqual(journal, ['reconfirm 11000', 'lapse 500']);
  assert.equal(log.count('run lease reconfirm receipt overran the lease budget'), 1);
});

test('an onReconfirm hook that rejects lapses the lease', async (t) => {
  const journal = [];
  const log = recorder();
  const s = scripted([HANG], [after(100, 'Updated')]);
  const hooks = journaling(journal, after(50, new Error('receipt table unavailable')));
  const { end, elapsed } = await run(t, s.store, { ...hooks, logger: log.logger });
  assert.deepEqual([end, elapsed], [lapsed(150), 11150], 'lapsed as the receipt failed, 150 ms after the renewal sent at 11000');
  assert.deepEqual(journal, ['reconfirm 11000', 'lapse 150']);
  const failed = log.lines.filter((l) => l.message === 'run lease reconfirm receipt failed');
  assert.deepEqual(failed.map((l) => l.meta.err.message), ['receipt table unavailable']);
});

test('an onReconfirm hook that throws synchronously lapses the lease', async (t) => {
  const journal = [];
  const s = scripted([HANG], [after(100, 'Updated')]);
  const { end, elapsed } = await run(t, s.store, {
    onReconfirm: (gap) => {
      journal.push(`reconfirm ${gap}`);
      throw new Error('no receipt');
    },
    onLapse: (gap) => journal.push(`lapse ${gap}`),
  });
  assert.deepEqual([end, elapsed], [lapsed(100), 11100]);
  assert.deepEqual(journal, ['reconfirm 11000', 'lapse 100']);
});

test('a reconfirmation that raises calls onLapse, then aborts the owned work (runSupervised)', async (t) => {
  const clock = virtualTime(t, 0);
  const journal = [];
  const log = recorder();
  const s = scripted([HANG], [after(40, unavailable())]);
  let result;
  runSupervised((signal) => new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => {
      journal.push('work aborted');
      reject(signal.reason);
    });
  }), { runId: 'run-1', owner: OWNER, store: s.store, ...journaling(journal), logger: log.logger }).then((r) => {
    result = r;
  });
  await clock.until(() => result !== undefined);
  assert.deepEqual(result, lapsed(11040));
  assert.deepEqual(journal, ['lapse 11040', 'work aborted'], 'the lapse hook runs before the work is interrupted');
  assert.equal(log.count('run lease reconfirm failed'), 1);
  assert.equal(log.count('run lease lapsed'), 1);
});

test('a stall past the pulse and the deadline reconfirms and reports the gap once', async (t) => {
  const journal = [];
  // The loop arms its timer (first pulse at 2000); the clock then jumps 28 s ahead, as after a
  // process stall: the pulse (2000) and the deadline (11000) are both overdue when it fires.
  let jump = 0;
  const s = scripted([UPDATED, after(0, 'LostToNewerToken')], [UPDATED]);
  const clock = virtualTime(t, 0);
  const lease = heartbeatLoop({ runId: 'run-1', owner: OWNER, store: s.store, logger: quiet, ...journaling(journal),
    now: () => Date.now() + jump });
  jump = 28_000;
  let end;
  lease.ended.then((e) => {
    end = e;
  });
  await clock.until(() => end !== undefined);
  assert.deepEqual(s.sent('reconfirm'), [30000], 'one reconfirmation for the gap');
  assert.deepEqual(journal, ['reconfirm 30000'], 'the gap is reported once');
  assert.deepEqual(s.sent('heartbeat'), [30000, 32000], 'pulses resume after the reconfirmation decided');
  assert.deepEqual(end, lost('LostToNewerToken', 32000));
});

test('runSupervised aborts the owned work\'s signal on a lost fence', async (t) => {
  const clock = virtualTime(t, 0);
  const journal = [];
  const s = scripted([UPDATED, after(0, 'LostToNewerToken')]);
  let result;
  let reason;
  runSupervised((signal) => new Promise((resolve, reject) => {
    signal.addEventListener('abort', () => {
      journal.push('work aborted');
      reason = signal.reason;
      reject(signal.reason);
    });
  }), { runId: 'run-1', owner: OWNER, store: s.store, logger: quiet, ...journaling(journal) }).then((r) => {
    result = r;
  });
  const elapsed = await clock.until(() => result !== undefined);
  assert.deepEqual([result, elapsed], [lost('LostToNewerToken', 4000), 4000]);
  assert.deepEqual(journal, ['work aborted'], 'no lapse hook on a lost fence');
  assert.ok(reason instanceof LeaseLostError);
});

test('runSupervised waits for aborted work to settle before it answers', async (t) => {
  const clock = virtualTime(t, 0);
  const s = scripted([after(0, 'LostToNewerToken')]);
  let result;
  let stoppedAt;
  runSupervised((signal) => new Promise((resolve) => {
    signal.addEventListener('abort', () => setTimeout(() => {
      stoppedAt = Date.now();
      resolve('cleaned up');
    }, 300));
  }), { runId: 'run-1', owner: OWNER, store: s.store, logger: quiet }).then((r) => {
    result = r;
  });
  const elapsed = await clock.until(() => result !== undefined);
  assert.deepEqual([result, stoppedAt, elapsed], [lost('LostToNewerToken', 2000), 2300, 2300]);
});

test('runSupervised answers the work\'s value and stops heartbeats when the work finishes', async (t) => {
  const clock = virtualTime(t, 0);
  const s = scripted();
  let result;
  runSupervised((signal) => delay(5000).then(() => (signal.aborted ? 'aborted' : 'report')),
    { runId: 'run-1', owner: OWNER, store: s.store, logger: quiet }).then((r) => {
    result = r;
  });
  await clock.until(() => result !== undefined);
  assert.deepEqual(result, { type: 'finished', value: 'report' });
  await clock.advance(20_000);
  assert.deepEqual(s.sent('heartbeat'), [2000, 4000], 'no pulse after the work finished');
});

test('runSupervised rejects with the work\'s error while the lease holds, and stops heartbeats', async (t) => {
  const clock = virtualTime(t, 0);
  const s = scripted();
  const broken = new Error('work failed');
  let failure;
  runSupervised(() => delay(3000).then(() => {
    throw broken;
  }), { runId: 'run-1', owner: OWNER, store: s.store, logger: quiet }).catch((e) => {
    failure = e;
  });
  await clock.until(() => failure !== undefined);
  assert.equal(failure, broken);
  await clock.advance(20_000);
  assert.deepEqual(s.sent('heartbeat'), [2000]);
});

test('stop() ends supervision without aborting the signal and abandons the call in flight', async (t) => {
  const clock = virtualTime(t, 0);
  const s = scripted([after(500, 'LostToNewerToken')]);
  const lease = heartbeatLoop({ runId: 'run-1', owner: OWNER, store: s.store, logger: quiet });
  await clock.advance(2100);
  lease.stop();
  assert.deepEqual(await lease.ended, { type: 'stopped' });
  await clock.advance(30_000);
  assert.equal(lease.signal.aborted, false, 'the late lost answer is ignored');
  assert.deepEqual(s.sent('heartbeat'), [2000]);
});

test('an unsafe policy is refused, with the relation named, before any store call', async (t) => {
  const clock = virtualTime(t, 0);
  const s = scripted();
  const options = { runId: 'run-1', owner: OWNER, store: s.store, logger: quiet };
  assert.throws(() => heartbeatLoop({ ...options, policy: { heartbeatIntervalMs: 0 } }),
    { name: 'RangeError', message: 'lease policy: heartbeatIntervalMs must be positive, got 0' });
  let called = false;
  assert.throws(() => runSupervised(() => {
    called = true;
  }, { ...options, policy: { writeToleranceMs: 12_000 } }), (e) => e instanceof RangeError &&
    e.message.includes('writeToleranceMs + heartbeatIntervalMs + skewAllowanceMs (12000 + 2000 + 1000 = 15000) must be less than staleAfterMs (15000)'));
  assert.throws(() => heartbeatLoop({ ...options, policy: { staleAfterMs: 3999, heartbeatIntervalMs: 2000 } }),
    { name: 'RangeError', message: /staleAfterMs \(3999\) must be more than 2 \* heartbeatIntervalMs/ });
  assert.equal(called, false, 'the work was not started');
  await clock.advance(30_000);
  assert.deepEqual(s.calls, []);
});

test('options of the wrong kind are a TypeError naming the option', () => {
  const s = scripted();
  const options = { runId: 'run-1', owner: OWNER, store: s.store };
  const cases = [
    [undefined, 'heartbeatLoop: options must be an object, got undefined'],
    [{ ...options, runId: 7 }, 'heartbeatLoop: runId must be a string, got number'],
    [{ ...options, owner: null }, 'heartbeatLoop: owner must be an object ({ hostId, pid, nonce }), got null'],
    [{ ...options, store: { heartbeat() {} } }, 'heartbeatLoop: store.reconfirm must be a function, got undefined'],
    [{ ...options, onLapse: 'yes' }, 'heartbeatLoop: onLapse must be a function, got string'],
    [{ ...options, now: 5 }, 'heartbeatLoop: now must be a function, got number'],
    [{ ...options, logger: 'console' }, 'heartbeatLoop: logger must be a logger object or a function answering one, got string'],
    [{ ...options, policy: 3 }, 'lease policy: policy must be an object, got number'],
    [{ ...options, policy: { staleAfterMs: '15000' } }, 'lease policy: staleAfterMs must be a number, got string'],
    [{ ...options, policy: { skewAllowanceMs: Number.NaN } }, 'lease policy: skewAllowanceMs must be a finite number, got NaN'],
  ];
  for (const [given, message] of cases) assert.throws(() => heartbeatLoop(given), { name: 'TypeError', message });
  assert.throws(() => heartbeatLoop({ ...options, policy: { skewAllowanceMs: -1 } }),
    { name: 'RangeError', message: 'lease policy: skewAllowanceMs must not be negative, got -1' });
  assert.throws(() => runSupervised('work', options), { name: 'TypeError', message: 'runSupervised: work must be a function, got string' });
  assert.deepEqual(s.calls, []);
});

test('a misspelt policy field is refused naming the field it was meant to be, before the store is touched', () => {
  // Ignored, `staleAfterMS: 5000` would leave the owner on the default 15 s while its
  // peers steal after 5 s: the work would overlap the next owner's.
  const s = scripted();
  const options = { runId: 'run-1', owner: OWNER, store: s.store };
  for (const [field, meant] of [['staleAfterMS', 'staleAfterMs'], ['heartbeatIntervalMS', 'heartbeatIntervalMs'],
    ['skewAllowanceMS', 'skewAllowanceMs'], ['writeToleranceMs ', 'writeToleranceMs'], ['staleAfterMillis', undefined]]) {
    const policy = { [field]: 5000 };
    const message = `lease policy: unknown field ${field}: did you mean ${meant}?`;
    if (meant === undefined) {
      assert.equal(leasePolicy(policy).staleAfterMs, 15_000, 'a key far from every field is ignored');
      continue;
    }
    assert.throws(() => leasePolicy(policy), { name: 'TypeError', message });
    assert.throws(() => heartbeatLoop({ ...options, policy }), { name: 'TypeError', message });
  }
  assert.deepEqual(s.calls, []);
});

test('a misspelt heartbeatLoop option is refused naming the option, before the store is touched', () => {
  // Ignored, `Policy` would run on the default policy and `onlapse` without its hook, unsaid.
  const s = scripted();
  const options = { runId: 'run-1', owner: OWNER, store: s.store };
  for (const [key, meant] of [['Policy', 'policy'], ['onlapse', 'onLapse'], ['runID', 'runId'], ['onReconfim', 'onReconfirm']]) {
    const message = `heartbeatLoop: unknown option ${key}: did you mean ${meant}?`;
    assert.throws(() => heartbeatLoop({ ...options, [key]: {} }), { name: 'TypeError', message });
  }
  heartbeatLoop({ ...options, purpose: 'a key far from every option is ignored' }).stop();
  assert.deepEqual(s.calls, []);
});

test('a safe but wasteful policy is warned about once, through the logger, and runs', async (t) => {
  const log = recorder();
  const policy = { heartbeatIntervalMs: 2000, skewAllowanceMs: 1000, staleAfterMs: 15_000, writeToleranceMs: 1500 };
  const s = scripted([after(0, 'LostToNewerToken')]);
  const { end } = await run(t, s.store, { policy, logger: log.logger });
  assert.deepEqual(log.lines.map((l) => [l.level, l.message]), [['warn',
    'lease policy: writeToleranceMs (1500) is under one heartbeatIntervalMs (2000): every renewal becomes a reconfirmation and one failed write lapses the lease']]);
  // Deadline 1500 comes before the first pulse: a reconfirmation renews at once, then the pulse.
  assert.deepEqual(s.sent('reconfirm'), [1500]);
  assert.deepEqual(end, lost('LostToNewerToken', 2000));
});

test('leasePolicy answers the checked policy, with the defaults filled in', () => {
  assert.deepEqual({ ...leasePolicy() },
    { heartbeatIntervalMs: 2000, skewAllowanceMs: 1000, staleAfterMs: 15_000, writeToleranceMs: 11_000, warnings: [] });
  const fast = { heartbeatIntervalMs: 500, skewAllowanceMs: 250, staleAfterMs: 4000, writeToleranceMs: 3000 };
  assert.deepEqual({ ...leasePolicy(fast) }, { ...fast, warnings: [] });
  assert.deepEqual({ ...leasePolicy({ heartbeatIntervalMs: 1000.9 }) }.heartbeatIntervalMs, 1000, 'fractions truncated');
  // Each relation broken by one millisecond.
  assert.throws(() => leasePolicy({ ...fast, writeToleranceMs: 3250 }), { name: 'RangeError', message: /\(3250 \+ 500 \+ 250 = 4000\) must be less than staleAfterMs \(4000\)/ });
  assert.doesNotThrow(() => leasePolicy({ ...fast, writeToleranceMs: 3249 }));
  assert.throws(() => leasePolicy({ heartbeatIntervalMs: 1000, skewAllowanceMs: 1, writeToleranceMs: 1, staleAfterMs: 2000 }),
    { name: 'RangeError', message: /staleAfterMs \(2000\) must be more than 2 \* heartbeatIntervalMs \(2 \* 1000 = 2000\)/ });
  assert.doesNotThrow(() => leasePolicy({ heartbeatIntervalMs: 1000, skewAllowanceMs: 1, writeToleranceMs: 1, staleAfterMs: 2001 }));
  for (const field of ['heartbeatIntervalMs', 'skewAllowanceMs', 'staleAfterMs', 'writeToleranceMs']) {
    assert.throws(() => leasePolicy({ ...fast, [field]: 0 }), { name: 'RangeError', message: `lease policy: ${field} must be positive, got 0` });
  }
});

test('leaseLiveness: alive while heartbeatAtMs >= nowMs - staleAfterMs; no heartbeat is gone', () => {
  const claimant = { hostId: 'host-b', pid: 1, nonce: 'b' };
  const byDefault = leaseLiveness();
  const short = leaseLiveness(5000);
  const table = [
    // [check, heartbeatAtMs, nowMs, alive]
    [byDefault, 1000, 16_000, true], // exactly staleAfterMs (15 s) old: still inside
    [byDefault, 999, 16_000, false], // one ms past
    [byDefault, 16_000, 16_000, true],
    [byDefault, 20_000, 16_000, true], // a heartbeat ahead of our clock
    [byDefault, null, 16_000, false], // no lease recorded
    [byDefault, 0, 10_000, true], // now inside the first window after the epoch
    [short, 11_000, 16_000, true],
    [short, 10_999, 16_000, false],
    [leaseLiveness(null), 999, 16_000, false], // null: the default window
  ];
  for (const [check, heartbeatAtMs, nowMs, alive] of table) {
    assert.equal(check(OWNER, { claimant, heartbeatAtMs, nowMs }), alive, `${heartbeatAtMs} at ${nowMs}`);
  }
  assert.equal(byDefault(undefined, { heartbeatAtMs: 1000, nowMs: 16_000 }), true, 'the owner is not consulted');
});

test('leaseLiveness refuses a bad window or context, naming it', () => {
  assert.throws(() => leaseLiveness('15s'), { name: 'TypeError', message: 'leaseLiveness: staleAfterMs must be a number, got string' });
  assert.throws(() => leaseLiveness(Infinity), { name: 'TypeError', message: 'leaseLiveness: staleAfterMs must be a finite number, got Infinity' });
  assert.throws(() => leaseLiveness(-1), { name: 'RangeError', message: 'leaseLiveness: staleAfterMs must not be negative, got -1' });
  const check = leaseLiveness();
  assert.throws(() => check(OWNER, null), { name: 'TypeError', message: 'leaseLiveness: context must be an object, got null' });
  assert.throws(() => check(OWNER, { heartbeatAtMs: 1 }), { name: 'TypeError', message: /context\.nowMs must be a number/ });
  assert.throws(() => check(OWNER, { heartbeatAtMs: '1', nowMs: 2 }), { name: 'TypeError', message: 'leaseLiveness: context.heartbeatAtMs must be a number, got string' });
  assert.throws(() => check(OWNER, { heartbeatAtMs: Number.NaN, nowMs: 2 }), { name: 'TypeError', message: /context\.heartbeatAtMs must be a finite number/ });
});

test('sameHostIncarnation compares host ids only', () => {
  assert.equal(sameHostIncarnation(OWNER, { hostId: 'host-a', pid: 1, nonce: 'other' }), true);
  assert.equal(sameHostIncarnation(OWNER, { ...OWNER, nonce: 'fresh' }), true);
  assert.equal(sameHostIncarnation(OWNER, { ...OWNER, hostId: 'host-b' }), false, 'same pid, other host');
  assert.throws(() => sameHostIncarnation(OWNER, { pid: 1 }), { name: 'TypeError', message: 'sameHostIncarnation: claimant.hostId must be a string, got undefined' });
  assert.throws(() => sameHostIncarnation('host-a', OWNER), { name: 'TypeError', message: /expectedOwner must be an owner object, got string/ });
});

test('a process with a heartbeat loop whose store hangs exits by itself (timers are unref\'d)', () => {
  const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'lease-exits.mjs');
  const child = spawnSync(process.execPath, [fixture], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(child.error, undefined, 'it exited before the 20 s limit');
  assert.equal(child.status, 0, child.stderr);
  assert.match(child.stdout, /pulsed/);
});

test('heartbeatLoop answers a handle: ended, signal, stop', async () => {
  const lease = heartbeatLoop({ runId: 'run-1', owner: OWNER, store: scripted().store, logger: quiet });
  assert.ok(lease.signal instanceof AbortSignal);
  assert.equal(typeof lease.stop, 'function');
  assert.ok(lease.ended instanceof Promise);
  lease.stop();
  await settle();
  assert.deepEqual(await lease.ended, { type: 'stopped' });
});

test('the browser build carries the same lease API (lease.mjs over the web glue)', async (t) => {
  const dist = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist');
  const { readFile } = await import('node:fs/promises');
  const wasm = await import(path.join(dist, 'leasehold_web.mjs'));
  wasm.initSync({ module: await readFile(path.join(dist, 'leasehold_bg.wasm')) });
  const { createLeaseApi } = await import(path.join(dist, 'lease.mjs'));
  const timing = await import(path.join(dist, 'timing.mjs'));
  const web = createLeaseApi(wasm, timing);
  assert.deepEqual(Object.keys(web).sort(),
    ['LEASE_LOST', 'LeaseLostError', 'heartbeatLoop', 'leaseLiveness', 'leasePolicy', 'runSupervised', 'sameHostIncarnation']);
  assert.equal(web.leaseLiveness(5000)(OWNER, { claimant: OWNER, heartbeatAtMs: 10_999, nowMs: 16_000 }), false);
  assert.throws(() => web.leasePolicy({ writeToleranceMs: 12_000 }), { name: 'RangeError', message: /must be less than staleAfterMs/ });
  const clock = virtualTime(t, 0);
  const s = scripted([after(0, 'LostToNewerToken')]);
  const lease = web.heartbeatLoop({ runId: 'run-1', owner: OWNER, store: s.store, logger: quiet });
  let end;
  lease.ended.then((e) => {
    end = e;
  });
  await clock.until(() => end !== undefined);
  assert.deepEqual(end, lost('LostToNewerToken', 2000));
  assert.ok(lease.signal.reason instanceof web.LeaseLostError);
});
