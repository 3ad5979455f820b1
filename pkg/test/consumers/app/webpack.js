// webpack 5: `leasehold/auto` (top-level await in the package), the trace ring on demand.
// Named imports, as users write them: a bundler that trusted `sideEffects: false` would
// take them straight from browser.mjs and drop auto.mjs's `await init()`.
import { createJobRunner, createJobTraceSink, initTrace, DEFAULT_JOB_BATCH_LIMIT } from 'leasehold/auto';
import * as indexeddb from 'leasehold/indexeddb';
import { run, runQueue, fetchedWasm, report } from './run.js';

report(async () => {
  const afterInit = fetchedWasm();
  await initTrace();
  const leasehold = { createJobRunner, createJobTraceSink, DEFAULT_JOB_BATCH_LIMIT };
  return { ...(await run(leasehold)), queue: await runQueue(indexeddb), fetched: { atImport: ['leasehold_bg.wasm'], afterInit } };
});
