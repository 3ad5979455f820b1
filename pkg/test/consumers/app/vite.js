// Vite (5 and current): the .wasm URLs are the package's own `new URL(…, import.meta.url)`.
import * as leasehold from 'leasehold';
import * as indexeddb from 'leasehold/indexeddb';
import { run, runQueue, fetchedWasm, report } from './run.js';

report(async () => {
  const atImport = fetchedWasm();
  await leasehold.init();
  const afterInit = fetchedWasm();
  await leasehold.initTrace();
  return { ...(await run(leasehold)), queue: await runQueue(indexeddb), fetched: { atImport, afterInit } };
});
