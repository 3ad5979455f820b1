-- running_leases: a queue's running jobs' leases as a claimant's lease
-- watch reads them at each look for stale leases: which renewal of which
-- claim each one is, so that a lease is taken over only once the claimant
-- has seen it unrenewed for its stale window on its own clock. With them,
-- the queued jobs that still carry the lease of an attempt cancelled while
-- it ran (retry.sql keeps its expires_at): a claimant claims one only once
-- it has watched that lease for its window too (claim.sql's ?10).
--
-- ?1 = queue: the queue's name (text)
--
-- Returns one row per lease: id, token, heartbeat_at, lease_ms, cancelled
-- (1 for a queued job's cancelled attempt, 0 for a running job).
SELECT id, token, heartbeat_at, lease_ms, 0 AS cancelled
FROM leasehold_jobs
WHERE queue = ?1 AND state = 'running'
UNION ALL
SELECT id, token, heartbeat_at, lease_ms, 1 AS cancelled
FROM leasehold_jobs
WHERE queue = ?1 AND state = 'queued' AND expires_at IS NOT NULL
