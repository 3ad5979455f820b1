// esbuild: it does not follow `new URL(…, import.meta.url)`, so the .wasm files are
// imported as files (--loader:.wasm=file) and their URLs handed to init and initTrace.
import * as leasehold from 'leasehold';
import wasmUrl from 'leasehold/leasehold_bg.wasm';
import traceWasmUrl from 'leasehold/leasehold_trace_bg.wasm';
import * as indexeddb from 'leasehold/indexeddb';
import { run, runQueue, fetchedWasm, report } from './run.js';

report(async () => {
  const atImport = fetchedWasm();
  let early;
  try {
    leasehold.createJobRunner({ name: 'early', intervalMs: 10, claim: () => null, perform: () => {} });
  } catch (error) {
    early = error.message;
  }
  await leasehold.init(wasmUrl);
  const afterInit = fetchedWasm();
  await leasehold.initTrace(fetch(traceWasmUrl));
  return { ...(await run(leasehold)), queue: await runQueue(indexeddb), fetched: { atImport, afterInit }, early };
});
