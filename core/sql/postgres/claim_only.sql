-- claim_only: claims a page of the queue's due jobs for a worker and names
-- stale candidates, completing nothing: claim.sql without its settling
-- CTEs, for a claim with no completion to carry. PostgreSQL plans
-- claim.sql afresh on every execution (its settling CTEs keep the generic
-- plan dear), which costs a lone claim more than its work; this statement
-- settles into a cached generic plan.
--
-- $1 = queue: the queue's name (text)
-- $2 = page_size: most jobs to claim, 0..=1000 (int8)
-- $3 = owner_host: the claimant's host id (text)
-- $4 = owner_pid: the claimant's pid (int8)
-- $5 = owner_nonce: the claimant's incarnation nonce (text)
-- $6 = owner_start_time: the claimant's process start time, or NULL (int8)
-- $7 = owner_boot_id: the claimant's boot id, or NULL (text)
-- $8 = lease_ms: the stale window of the claims, ms (int8)
-- $9 = look_for_stale: whether to name stale running jobs as candidates (bool)
-- $10 = refused_ids: stale jobs not to name (int8[])
-- $11 = watched: the queued jobs carrying a cancelled attempt's lease
--       (expires_at, see retry.sql) that the claimant has watched unrenewed
--       for that lease's window, as 'id:token' texts; any other such job is
--       not claimed. NULL: no such gate (a PostgreSQL server, see the
--       claim_page fragment) (text[])
--
-- Returns one row per job, `kind` first, exactly as claim.sql (never
-- 'done'); the claim_page fragment, which claim.sql shares, says why each
-- part is written as it is.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
\include fragments/claim_page.sql
\include fragments/claim_rows.sql
