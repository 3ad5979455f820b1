// webpack 5: `leasehold/auto` (top-level await in the package), the trace ring on demand.
import * as leasehold from 'leasehold/auto';
import { run, fetchedWasm, report } from './run.js';

report(async () => {
  const afterInit = fetchedWasm();
  await leasehold.initTrace();
  return { ...(await run(leasehold)), fetched: { atImport: ['leasehold_bg.wasm'], afterInit } };
});
