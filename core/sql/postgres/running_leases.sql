-- running_leases: a queue's running jobs' leases as a claimant's lease
-- watch reads them at each look for stale leases, on a database whose
-- clock is the claimants' own (PGlite, in their process): which renewal of
-- which claim each one is, so that a lease is taken over only once the
-- claimant has seen it unrenewed for its stale window on its monotonic
-- clock, whatever the wall clock did. With them, the queued jobs that still
-- carry the lease of an attempt cancelled while it ran (retry.sql keeps its
-- expires_at; the partial index leasehold_jobs_cancelled_lease holds
-- exactly those): such a job is claimed only once the claimant has watched
-- that lease for its window too (the claim statements' `watched`).
--
-- $1 = queue: the queue's name (text)
--
-- Returns one row per lease: id, token, heartbeat_at (ms), lease_ms,
-- cancelled (true for a queued job's cancelled attempt, false for a
-- running job).
SELECT id, token, heartbeat_at, lease_ms, false AS cancelled
FROM leasehold_jobs
WHERE queue = $1 AND state = 'running'
UNION ALL
SELECT id, token, heartbeat_at, lease_ms, true AS cancelled
FROM leasehold_jobs
WHERE queue = $1 AND state = 'queued' AND expires_at IS NOT NULL
