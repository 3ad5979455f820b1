-- renew: renews the leases of running jobs, each under its fence: the
-- heartbeat becomes now and the lease runs its stale window again.
--
-- $1 = ids: the jobs (int8[])
-- $2 = tokens: their fencing tokens, in the same order (int8[])
-- $3 = owner_nonce: also require this owner (a reconfirm), or NULL (text)
--
-- Returns one row per renewal whose fence held: id.
--
-- The rows are locked in id order first (`renewing`), so two batches over
-- overlapping jobs queue behind each other instead of deadlocking, and the
-- fence is tested on the locked rows: under READ COMMITTED a locked row
-- reads as its latest version and nobody can change it until we commit.
-- The UPDATE is then left with nothing but `id = ANY(...)`, so its only plan
-- is the primary key; with `state = 'running'` in its own WHERE the planner
-- might scan the whole partial index leasehold_jobs_running instead.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
renewing AS (
    SELECT id, token, state, owner_nonce FROM leasehold_jobs
    WHERE id = ANY($1) ORDER BY id FOR UPDATE)
UPDATE leasehold_jobs j SET heartbeat_at = c.now, expires_at = c.now + j.lease_ms
FROM clock c
WHERE j.id = ANY(ARRAY(
    SELECT l.id FROM renewing l
    JOIN unnest($1::int8[], $2::int8[]) AS f(id, token) ON l.id = f.id AND l.token = f.token
    WHERE l.state = 'running' AND ($3::text IS NULL OR l.owner_nonce = $3)))
RETURNING j.id
