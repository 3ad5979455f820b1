/* The Node.js ES module entry: the CommonJS entry itself, so that `import`
   and `require` share one wasm instance and one JobClaimLostError class. */
import { createRequire } from 'node:module';

const api = createRequire(import.meta.url)('./index.cjs');

export const { createJobRunner, jobBackoff, DEFAULT_JOB_BATCH_LIMIT, JOB_CLAIM_LOST, JobClaimLostError } = api;
export const { heartbeatLoop, runSupervised, leaseLiveness, sameHostIncarnation, leasePolicy, LEASE_LOST, LeaseLostError } = api;
export const { createJobTraceSink, resumeJobTrace } = api;
export default api;
