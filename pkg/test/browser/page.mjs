// One pass over an in-page queue of 40 items, 4 at a time, with heartbeats: item 9's
// renewal answers false, so its signal aborts and it counts as a lost claim.
import { createJobRunner, JobClaimLostError, DEFAULT_JOB_BATCH_LIMIT } from '../../dist/browser.mjs';
import { createJobTraceSink, resumeJobTrace } from '../../dist/browser.mjs';

try {
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
    report: { ...report },
    events,
    reason: { isClaimLost: reason instanceof JobClaimLostError, code: reason?.code, job: reason?.job, lapsed: reason?.lapsed },
    defaultBatchLimit: DEFAULT_JOB_BATCH_LIMIT,
    trace: { outcomes: sink.spans()[0].items.map((i) => i.outcome), resumed: resumeJobTrace(JSON.stringify(sink)).spans().length },
  };
} catch (error) {
  window.__result = { error: String(error && error.stack || error) };
}
