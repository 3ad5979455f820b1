/* The Node.js ES module entry: the CommonJS entry itself, so that `import`
   and `require` share one wasm instance and one JobClaimLostError class.
   A plain import (not createRequire) so that bundlers targeting Node.js
   follow it. */
import api from './index.cjs';

export const { createJobRunner, jobBackoff, DEFAULT_JOB_BATCH_LIMIT, JOB_CLAIM_LOST, JobClaimLostError } = api;
export const { heartbeatLoop, runSupervised, leaseLiveness, sameHostIncarnation, leasePolicy, LEASE_LOST, LeaseLostError } = api;
export const { createJobTraceSink, resumeJobTrace } = api;
export const { init, initSync, initTrace } = api;
export default api;
