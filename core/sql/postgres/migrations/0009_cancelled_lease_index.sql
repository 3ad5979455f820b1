-- 0009_cancelled_lease_index: the queued jobs that still carry the lease of
-- an attempt cancelled while it ran (expires_at, which retry.sql keeps until
-- a claim replaces it: that attempt's owner may still be working), by
-- queue, so that a SQLite claimant's look reads them with the running leases
-- (running_leases.sql) without walking the queue's backlog. Partial, so no
-- other job is ever in it.
--
-- Before this migration a failed attempt queued for its retry kept its
-- expires_at (fail.sql clears it now, as its owner settled it); those jobs
-- are the queued ones with attempts left (a retry resets attempts to 0).
UPDATE leasehold_jobs SET expires_at = NULL
WHERE state = 'queued' AND attempts > 0 AND expires_at IS NOT NULL;
CREATE INDEX leasehold_jobs_cancelled_lease ON leasehold_jobs (queue)
    WHERE state = 'queued' AND expires_at IS NOT NULL;
