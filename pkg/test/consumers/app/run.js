// What every consumer app does with the package once it is loaded: one pass over ten
// in-memory items, two at a time, with heartbeats and a trace sink, answered as plain data.
export async function run(leasehold) {
  const { createJobRunner, createJobTraceSink, DEFAULT_JOB_BATCH_LIMIT } = leasehold;
  const queue = Array.from({ length: 10 }, (_, id) => ({ id }));
  const done = [];
  const trace = createJobTraceSink({ capacity: 4 });
  const runner = createJobRunner({
    name: 'consumer',
    intervalMs: 1000,
    staleAfterMs: 3000,
    concurrency: 2,
    claim: () => queue.shift() ?? null,
    perform: async (item) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      done.push(item.id);
    },
    heartbeat: () => true,
    onEvent: trace,
  });
  const report = await runner.tick();
  await runner.dispose();
  return {
    report: { ...report },
    done: done.sort((a, b) => a - b),
    traced: trace.spans().map((span) => span.items.length),
    defaultBatchLimit: DEFAULT_JOB_BATCH_LIMIT,
  };
}

/** The .wasm files this page fetched so far (their names, without a bundler's hash). */
export function fetchedWasm() {
  return performance
    .getEntriesByType('resource')
    .map((entry) => entry.name.split('/').pop())
    .filter((name) => name.endsWith('.wasm'))
    .map((name) => name.replace(/[-.][\w-]{6,}(?=\.wasm$)/, ''));
}

/** Runs `main` and leaves its answer (or its error) where the test reads it. */
export function report(main) {
  main().then(
    (result) => (globalThis.__result = result),
    (error) => (globalThis.__result = { error: String((error && error.stack) || error) }),
  );
}

/**
 * What every browser app does with `leasehold/indexeddb`: three jobs queued in the page's
 * IndexedDB and worked by one worker; answers their results in id order.
 */
export async function runQueue(indexeddb) {
  const queue = await indexeddb.connect({ name: `consumer-${Math.random()}` });
  for (const n of [1, 2, 3]) await queue.enqueue('q', { n });
  const working = queue.work('q', (payload) => payload.n * 10);
  let results;
  for (;;) {
    const jobs = await Promise.all([1, 2, 3].map((id) => queue.job(id)));
    if (jobs.every((job) => job.state === 'succeeded')) {
      results = jobs.map((job) => job.result);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await working.dispose();
  await queue.close();
  return results;
}
