'use strict';
/*
 * The queue policy and rules of the Node.js stores, from the core through the runner's wasm
 * module (read once per process): the retry delays a failed attempt's fail statement binds,
 * the wait before a settle the database did not answer is tried again, the default attempt
 * budget, how often a claim looks for stale leases (once per that cadence, or once per lease
 * where that is shorter), the limits on queue names and idempotency keys, and the migration
 * set's namespace, id block and lock key. None is written here: a change in the core reaches
 * the package with its next build.
 */
function queuePolicy(wasm) {
  const defaults = wasm.queueDefaults();
  // The fail statement picks element k - 1 for failed attempt k, the last one for every
  // later attempt: the core's retry backoff, up to where it stops growing.
  const retryDelaysMs = [];
  for (let attempt = 1; attempt <= 64; attempt += 1) {
    const delay = wasm.retryDelayMs(attempt);
    if (retryDelaysMs.length > 0 && delay === retryDelaysMs[retryDelaysMs.length - 1]) break;
    retryDelaysMs.push(delay);
    if (delay >= defaults.retryBackoff.maxMs) break;
  }
  return Object.freeze({
    retryDelaysMs,
    maxAttempts: defaults.maxAttempts,
    /** The wait before settle try `failures + 1`, ms. */
    recoveryDelayMs: (failures) => wasm.recoveryDelayMs(failures),
    /** How long before a slot's claim a page's job may have been stamped and still be handed over without a renewal, ms (the runner's lease policy, from `staleAfterMs` and the cadence, undefined: the default). */
    claimAgeToleranceMs: (staleAfterMs, heartbeatEveryMs) => wasm.claimAgeToleranceMs(staleAfterMs, heartbeatEveryMs),
    reclaimEveryMs: defaults.reclaimEveryMs,
    /** A new lease watch (the core's LeaseWatch): `sight(id, token, heartbeatAt, monoMs)`, `unrenewedFor(id, token, heartbeatAt, staleAfterMs, monoMs)`, for a cancelled attempt's lease a queued job carries `cancelledUnrenewedFor(id, token, heartbeatAt, staleAfterMs, monoMs)` and `cancelledWatched(monoMs)` ('id:token' texts), `forgetUnseenSince(monoMs)`. */
    leaseWatch: () => new wasm.LeaseWatch(),
    limits: Object.freeze({
      maxQueueNameBytes: defaults.maxQueueNameBytes,
      queueNamePunctuation: defaults.queueNamePunctuation,
      maxIdempotencyKeyBytes: defaults.maxIdempotencyKeyBytes,
      maxCancelTextBytes: defaults.maxCancelTextBytes,
    }),
    /** `{ namespace, idBlock, blockSize, lockKey }` (lockKey: a decimal string, bound as text). */
    migrations: Object.freeze({ ...defaults.migrations }),
  });
}
module.exports = { queuePolicy };
