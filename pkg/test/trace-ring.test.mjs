// The trace ring (issue 6; seed 000 exports createJobTraceSink and resumeJobTrace): a sink used
// as a real runner's onEvent keeps each pass that claimed something as a span, in a bounded ring
// that saves as JSON and resumes; bad input is refused naming the problem; the sink never throws
// into its runner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawnSync } from 'node:child_process';
import { createJobRunner, createJobTraceSink, resumeJobTrace, base, queue, virtualTime } from './helpers.mjs';

const after = (ms, value) => new Promise((resolve) => setTimeout(() => resolve(value), ms));

/** Runs `passes` ticks of a runner over `n` queued items `{ id }` with `sink` as its onEvent. */
async function run(sink, { n = 1, passes = 1, ...over } = {}) {
  const runner = createJobRunner(base({ claim: queue(n).claim, perform: async () => {}, onEvent: sink, ...over }));
  const reports = [];
  for (let i = 0; i < passes; i += 1) reports.push({ ...(await runner.tick()) });
  await runner.dispose();
  return reports;
}

test('a pass that claimed is one span: its report, and one item span per claim with duration and outcome', async (t) => {
  const clock = virtualTime(t);
  const t0 = clock.now();
  const sink = createJobTraceSink();
  const runner = createJobRunner(base({
    name: 'mailer', intervalMs: 1000, staleAfterMs: 3000, heartbeatEveryMs: 250, claim: queue(3).claim,
    heartbeat: async (item) => item.id !== 2,
    perform: async (item, signal) => {
      if (item.id === 0) return after(100);
      if (item.id === 1) { await after(50); throw new Error('bad row'); }
      // Item 2 runs until its renewal answers false and the signal aborts.
      return new Promise((resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    },
    onEvent: sink,
  }));
  let report;
  runner.tick().then((r) => { report = { ...r }; });
  await clock.until(() => report !== undefined);
  await runner.dispose();

  assert.deepEqual(report, { claimed: 3, performed: 1, failed: 1, claimLost: 1 });
  const spans = sink.spans();
  assert.equal(spans.length, 1);
  const [span] = spans;
  const rel = (at) => at - t0;
  assert.deepEqual({ ...span, start: rel(span.start), end: rel(span.end), items: undefined }, {
    name: 'mailer', start: 0, end: 400, report, nextDelayMs: 1000, claimError: null, items: undefined,
  });
  assert.deepEqual(span.items.map((i) => [i.item, rel(i.start), rel(i.end), i.durationMs, i.outcome, i.error, i.lapsed]), [
    [0, 0, 100, 100, 'performed', null, false],
    [1, 100, 150, 50, 'failed', 'Error: bad row', false],
    [2, 150, 400, 250, 'claim-lost', null, false],
  ]);
  assert.deepEqual(span.items.map((i) => [i.heartbeats, i.heartbeatFailures]), [[0, 0], [0, 0], [0, 0]]);
  assert.equal(Object.getPrototypeOf(span), Object.prototype, 'a plain object');
  assert.equal(sink.size, 1);
  assert.equal(sink.openPasses, 0);
});

test('passes that claim nothing record nothing; a claim that raises after items is the span\'s claimError', async () => {
  const sink = createJobTraceSink();
  await run(sink, { n: 0, passes: 3 });
  await run(sink, { claim: async () => { throw new Error('db down'); } });
  assert.deepEqual(sink.spans(), [], 'no span, and no pass left open');
  assert.equal(sink.openPasses, 0);

  let calls = 0;
  await run(sink, { claim: async () => { calls += 1; if (calls === 1) return { id: 1 }; throw new Error('db down'); } });
  const [span] = sink.spans();
  assert.equal(span.claimError, 'Error: db down');
  assert.deepEqual(span.report, { claimed: 1, performed: 1, failed: 0, claimLost: 0 });
  assert.deepEqual(span.items.map((i) => i.outcome), ['performed']);
});

test('capacity keeps the newest spans: the oldest goes first and is counted as dropped', async () => {
  const sink = createJobTraceSink({ capacity: 3 });
  assert.equal(sink.capacity, 3);
  for (let batch = 1; batch <= 5; batch += 1) await run(sink, { n: batch, batchLimit: 10 });
  assert.equal(sink.dropped, 2);
  assert.deepEqual(sink.spans().map((s) => s.report.claimed), [3, 4, 5], 'oldest first');
  assert.equal(createJobTraceSink().capacity, 100, 'the core\'s default');
});

test('one sink serves several runners: spans are told apart by runner name', async () => {
  const sink = createJobTraceSink();
  await Promise.all([run(sink, { name: 'a', n: 2 }), run(sink, { name: 'b', n: 1 })]);
  assert.deepEqual(sink.spans().map((s) => [s.name, s.items.length]).sort(), [['a', 2], ['b', 1]]);
});

test('onSpan gets each finished span as it is recorded; one that throws costs the runner nothing', async () => {
  const seen = [];
  const sink = createJobTraceSink({ onSpan: (span) => { seen.push(span); throw new Error('observer'); } });
  const reports = await run(sink, { n: 2, passes: 2, batchLimit: 1 });
  assert.deepEqual(reports.map((r) => r.performed), [1, 1]);
  assert.deepEqual(seen, sink.spans());
});

test('saved: JSON.stringify(sink) resumes with resumeJobTrace, keeping the history, and goes on', async () => {
  const first = createJobTraceSink({ capacity: 4 });
  await run(first, { n: 3, passes: 3, batchLimit: 1 });
  const text = JSON.stringify(first);
  const saved = JSON.parse(text);
  assert.deepEqual(saved, first.save());
  assert.deepEqual(Object.keys(saved), ['version', 'capacity', 'dropped', 'spans']);
  assert.equal(saved.version, 1);
  assert.equal(saved.spans.length, 3);
  first.dispose();

  for (const input of [text, saved]) {
    const sink = resumeJobTrace(input);
    assert.equal(sink.capacity, 4, 'the saved capacity');
    assert.deepEqual(sink.spans(), saved.spans, 'the history as it was');
    await run(sink, { name: 'after-restart', n: 2, passes: 2, batchLimit: 1 });
    assert.deepEqual(sink.spans().map((s) => s.name), ['test', 'test', 'after-restart', 'after-restart']);
    assert.deepEqual(sink.spans().slice(0, 2), saved.spans.slice(1));
    assert.equal(sink.dropped, 1, 'the oldest saved span went first');
    sink.dispose();
  }

  const copy = resumeJobTrace(resumeJobTrace(text), { capacity: 5 });
  assert.deepEqual(copy.spans(), saved.spans, 'a sink itself is a saved ring (its toJSON)');
  assert.equal(copy.capacity, 5);

  const smaller = resumeJobTrace(text, { capacity: 1 });
  assert.equal(smaller.capacity, 1);
  assert.equal(smaller.dropped, 2);
  assert.deepEqual(smaller.spans(), saved.spans.slice(-1));
});

test('bad saved input and bad options are refused with TypeError or RangeError naming the problem', () => {
  const saved = { version: 1, capacity: 2, dropped: 0, spans: [] };
  const span = { name: 'a', start: 1, end: 2, report: { claimed: 1, performed: 1, failed: 0, claimLost: 0 },
    nextDelayMs: 5, claimError: null, items: [{ item: 0, start: 1, end: 2, durationMs: 1, outcome: 'performed',
      heartbeats: 0, heartbeatFailures: 0, lapsed: false, error: null }] };
  const cases = [
    [() => resumeJobTrace(), TypeError, /resumeJobTrace: saved must be a saved trace .*got undefined/],
    [() => resumeJobTrace(42), TypeError, /saved must be a saved trace .*got number/],
    [() => resumeJobTrace('{"version":'), TypeError, /resumeJobTrace: saved is not JSON/],
    [() => resumeJobTrace({ capacity: 3 }), TypeError, /saved: missing field `version`/],
    [() => resumeJobTrace({ ...saved, version: 2 }), RangeError, /saved\.version: saved trace has format version 2; this build reads version 1/],
    [() => resumeJobTrace({ ...saved, capacity: 0 }), RangeError, /saved\.capacity is 0/],
    [() => resumeJobTrace({ ...saved, spans: [span, { ...span, end: 'late' }] }), TypeError, /saved\.spans\[1\]\.end: invalid type: string "late", expected a whole number, 0 or more/],
    [() => resumeJobTrace({ ...saved, capacity: NaN }), TypeError, /saved\.capacity: invalid type: null \(NaN and Infinity are saved as null\)/],
    [() => resumeJobTrace({ ...saved, spans: null }), TypeError, /saved\.spans: expected an object or an array here, got null/],
    [() => resumeJobTrace({ ...saved, spans: [{ ...span, items: [{ ...span.items[0], outcome: 'done' }] }] }), TypeError,
      /saved\.spans\[0\]\.items\[0\]\.outcome: unknown variant `done`/],
    [() => resumeJobTrace({ ...saved, get dropped() { throw new Error('getter'); } }), TypeError,
      /resumeJobTrace: reading saved threw: Error: getter/],
    [() => { const cyclic = { ...saved }; cyclic.self = cyclic; return resumeJobTrace(cyclic); }, TypeError,
      /reading saved threw: TypeError: Converting circular structure to JSON/],
    [() => resumeJobTrace(saved, { capacity: 0 }), RangeError, /resumeJobTrace: capacity must be an integer from 1/],
    [() => createJobTraceSink({ capacity: 0 }), RangeError, /createJobTraceSink: capacity must be an integer from 1 to 4294967295, got 0/],
    [() => createJobTraceSink({ capacity: 1.5 }), RangeError, /capacity .* got 1\.5/],
    [() => createJobTraceSink({ capacity: '10' }), TypeError, /createJobTraceSink: capacity must be a number, got string/],
    [() => createJobTraceSink({ capacity: Infinity }), TypeError, /capacity must be a finite number, got Infinity/],
    [() => createJobTraceSink({ onSpan: 'log' }), TypeError, /onSpan must be a function, got string/],
    [() => createJobTraceSink('big'), TypeError, /createJobTraceSink: options must be an object, got string/],
  ];
  for (const [call, kind, message] of cases) {
    assert.throws(call, (error) => error instanceof kind && message.test(error.message), String(message));
  }
  assert.equal(resumeJobTrace(saved).spans().length, 0, 'the good one is accepted');
});

test('a sink that gets garbage never throws into its runner, and keeps recording', async () => {
  const sink = createJobTraceSink();
  const garbage = [undefined, null, 7, 'pass-start', {}, { type: 'pass-start' }, { type: 'nope', name: 'x', at: 1 },
    { type: 'claimed', name: 'x', at: 'soon', item: 0 }, { get type() { throw new Error('getter'); } },
    new Proxy({}, { get() { throw new Error('trap'); } })];
  for (const event of garbage) assert.doesNotThrow(() => sink(event));
  assert.equal(sink(null), undefined);
  // A runner whose events are interleaved with garbage still gets its span.
  const runner = createJobRunner(base({ claim: queue(2).claim, perform: async () => {},
    onEvent: (e) => { sink(e); sink({ ...e, type: 'garbage' }); sink({ ...e, at: {} }); } }));
  assert.equal((await runner.tick()).performed, 2);
  await runner.dispose();
  assert.deepEqual(sink.spans().map((s) => s.items.map((i) => i.outcome)), [['performed', 'performed']]);
});

test('dispose frees the ring: later events are ignored and reads say it was disposed', async () => {
  const sink = createJobTraceSink();
  await run(sink);
  sink.dispose();
  sink.dispose();
  assert.doesNotThrow(() => sink({ type: 'pass-start', name: 'x', at: 1 }));
  assert.throws(() => sink.spans(), /JobTraceSink: the sink was disposed/);
  assert.throws(() => JSON.stringify(sink), /disposed/);
  if (typeof Symbol.dispose === 'symbol') assert.equal(sink[Symbol.dispose], sink.dispose);
});

test('exported by the CommonJS entry as the same functions', () => {
  const cjs = createRequire(import.meta.url)('leasehold');
  assert.equal(cjs.createJobTraceSink, createJobTraceSink);
  assert.equal(cjs.resumeJobTrace, resumeJobTrace);
  assert.equal(cjs.default.createJobTraceSink, createJobTraceSink);
});

test('dispose gives the ring\'s memory back: filling and disposing rings again and again does not grow wasm memory', () => {
  const bindings = createRequire(import.meta.url)('../dist/leasehold_trace_node.cjs');
  const fill = () => {
    const sink = createJobTraceSink({ capacity: 100 });
    for (let pass = 0; pass < 150; pass += 1) {
      const at = pass * 100;
      sink({ type: 'pass-start', name: 'mem', at });
      for (let item = 0; item < 5; item += 1) {
        sink({ type: 'claimed', name: 'mem', at: at + item, item });
        sink({ type: 'item-failed', name: 'mem', at: at + item + 1, item, error: new Error('x'.repeat(200)) });
      }
      sink({ type: 'pass-end', name: 'mem', at: at + 9, report: { claimed: 5, performed: 0, failed: 5, claimLost: 0 }, nextDelayMs: 1 });
    }
    assert.equal(sink.size, 100);
    sink.dispose();
  };
  fill();
  const before = bindings.wasmMemory().buffer.byteLength;
  for (let round = 0; round < 40; round += 1) fill();
  assert.equal(bindings.wasmMemory().buffer.byteLength, before);
});

test('the trace ring\'s wasm module is loaded in Node.js only once a sink is made', () => {
  const script = `
    const lib = require('leasehold');
    const loaded = () => Object.keys(require.cache).some((f) => f.endsWith('leasehold_trace_node.cjs'));
    const before = loaded();
    lib.createJobRunner({ name: 'n', intervalMs: 10, claim: () => null, perform: () => {} });
    const withRunner = loaded();
    lib.createJobTraceSink();
    console.log(JSON.stringify([before, withRunner, loaded()]));`;
  const run = spawnSync(process.execPath, ['-e', script], { cwd: new URL('..', import.meta.url), encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(JSON.parse(run.stdout), [false, false, true]);
});
