/* The browser entry: an ES module that fetches leasehold_bg.wasm from beside
   web/leasehold.js (resolved against this module's URL) and instantiates it
   before anything is exported (top-level await), so the API is ready on import. */
import init, * as wasm from './web/leasehold.js';
import * as timing from './web/timing.mjs';
import { createApi } from './web/runner.mjs';
import { createLeaseApi } from './web/lease.mjs';
import { createTraceApi } from './web/trace.mjs';
import initTrace, * as traceWasm from './web/leasehold_trace.js';

/* The trace ring's module (leasehold_trace_bg.wasm) is fetched alongside. */
await Promise.all([
  init({ module_or_path: new URL('./web/leasehold_bg.wasm', import.meta.url) }),
  initTrace({ module_or_path: new URL('./web/leasehold_trace_bg.wasm', import.meta.url) }),
]);
const api = createApi(wasm, timing);
Object.assign(api, createLeaseApi(wasm, timing));
Object.assign(api, createTraceApi(() => traceWasm));

export const { createJobRunner, jobBackoff, DEFAULT_JOB_BATCH_LIMIT, JOB_CLAIM_LOST, JobClaimLostError } = api;
export const { heartbeatLoop, runSupervised, leaseLiveness, sameHostIncarnation, leasePolicy, LEASE_LOST, LeaseLostError } = api;
export const { createJobTraceSink, resumeJobTrace } = api;
export default api;
