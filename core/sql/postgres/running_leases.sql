-- running_leases: a queue's running jobs' leases as a claimant's lease
-- watch reads them at each look for stale leases, on a database whose
-- clock is the claimants' own (PGlite, in their process): which renewal of
-- which claim each one is, so that a lease is taken over only once the
-- claimant has seen it unrenewed for its stale window on its monotonic
-- clock, whatever the wall clock did.
--
-- $1 = queue: the queue's name (text)
--
-- Returns one row per running job: id, token, heartbeat_at (ms).
SELECT id, token, heartbeat_at
FROM leasehold_jobs
WHERE queue = $1 AND state = 'running'
