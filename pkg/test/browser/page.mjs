// One pass over an in-page queue of 40 items, 4 at a time, with heartbeats: item 9's
// renewal answers false, so its signal aborts and it counts as a lost claim. Before that,
// the entry is used as a page would: nothing is fetched on import, calls before `init()`
// say so, and the trace ring's .wasm is fetched only by `initTrace()`.
import { createJobRunner, JobClaimLostError, DEFAULT_JOB_BATCH_LIMIT } from '../../dist/browser.mjs';
import { createJobTraceSink, resumeJobTrace, init, initTrace } from '../../dist/browser.mjs';

const fetched = () => performance.getEntriesByType('resource').map((e) => e.name.split('/').pop()).filter((n) => n.endsWith('.wasm'));
const refusal = (f) => {
  try {
    f();
    return 'no error';
  } catch (error) {
    return `${error.name}: ${error.message}`;
  }
};

try {
  const loading = {
    fetchedAtImport: fetched(),
    beforeInit: refusal(() => createJobRunner({ name: 'early', intervalMs: 10, claim: () => null, perform: () => {} })),
    batchLimitBeforeInit: DEFAULT_JOB_BATCH_LIMIT,
  };
  await init();
  loading.fetchedAfterInit = fetched();
  loading.traceBeforeInitTrace = refusal(() => createJobTraceSink());
  await initTrace();
  loading.fetchedAfterInitTrace = fetched();
  const queue = Array.from({ length: 40 }, (_, id) => ({ id }));
  const events = {};
  let reason;
  const sink = createJobTraceSink({ capacity: 5 });
  const runner = createJobRunner({
    name: 'page', intervalMs: 1000, staleAfterMs: 3000, heartbeatEveryMs: 20, concurrency: 4, batchLimit: 100,
    logger: () => ({ error() {} }),
    claim: async () => queue.shift() ?? null,
    perform: (item, signal) => new Promise((resolve, reject) => {
      signal.addEventListener('abort', () => { reason = signal.reason; reject(signal.reason); });
      setTimeout(resolve, item.id % 3 === 0 ? 60 : 1);
    }),
    heartbeat: async (item) => item.id !== 9,
    onEvent: (e) => { events[e.type] = (events[e.type] ?? 0) + 1; sink(e); },
  });
  const report = await runner.tick();
  await runner.dispose();
  window.__result = {
    loading,
    report: { ...report },
    events,
    reason: { isClaimLost: reason instanceof JobClaimLostError, code: reason?.code, job: reason?.job, lapsed: reason?.lapsed },
    defaultBatchLimit: DEFAULT_JOB_BATCH_LIMIT,
    trace: { outcomes: sink.spans()[0].items.map((i) => i.outcome), resumed: resumeJobTrace(JSON.stringify(sink)).spans().length },
  };
} catch (error) {
  window.__result = { error: String(error && error.stack || error) };
}
