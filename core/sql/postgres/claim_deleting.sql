-- claim_deleting: claim.sql for a store that deletes completed jobs: the
-- completed jobs go with their attempt log and results (the journal keeps
-- each completion), then the page is claimed, in ONE statement.
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
-- $11 = settle_ids: jobs to complete, ascending, may be empty (int8[])
-- $12 = settle_tokens: their fencing tokens, in the same order (int8[])
-- $13 = watched: the queued jobs carrying a cancelled attempt's lease
--       (expires_at, see retry.sql) that the claimant has watched unrenewed
--       for that lease's window, as 'id:token' texts; any other such job is
--       not claimed. NULL: no such gate (a PostgreSQL server, see the
--       claim_page fragment) (text[])
--
-- Returns the rows claim.sql returns.
--
-- Every completion is journaled (the journal keeps a deleted job's). $9 is
-- a one-time filter: a claim that does not look for stale leases never
-- scans for them. The completion runs first: its rows come first in the
-- result, so its CTE runs to completion, taking the statement's one
-- blocking lock (on the job it completes), before `picked` locks anything
-- (see the claim_page fragment). The fragments say why each part is
-- written as it is.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
\include fragments/settle_delete.sql,
\include fragments/settle_journal.sql,
\include fragments/claim_page.sql
\include fragments/done_rows.sql
UNION ALL
\include fragments/claim_rows.sql
