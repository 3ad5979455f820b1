-- running_leases: a queue's running jobs' leases as a claimant's lease
-- watch reads them at each look for stale leases: which renewal of which
-- claim each one is, so that a lease is taken over only once the claimant
-- has seen it unrenewed for its stale window on its own clock.
--
-- ?1 = queue: the queue's name (text)
--
-- Returns one row per running job: id, token, heartbeat_at.
SELECT id, token, heartbeat_at
FROM leasehold_jobs
WHERE queue = ?1 AND state = 'running'
