-- claim: completes the jobs a worker finished, each under its fence, keeping
-- them marked succeeded with their results, and claims a page of the
-- queue's due jobs for it, in ONE statement (one commit, one round trip).
-- claim_deleting.sql is the same claim deleting the completed jobs;
-- claim_only.sql the claim with nothing to complete, complete.sql the
-- completion with nothing to claim (each plans only its own parts).
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
-- $13 = settle_results: their results as JSON text, NULL for none (text[])
-- $14 = watched: the queued jobs carrying a cancelled attempt's lease
--       (expires_at, see retry.sql) that the claimant has watched unrenewed
--       for that lease's window, as 'id:token' texts; any other such job is
--       not claimed. NULL: no such gate (a PostgreSQL server, see the
--       claim_page fragment) (text[])
--
-- Returns one row per job, `kind` first:
--   'done'    id: a completion whose fence held (other columns NULL);
--   'claimed' id, token, payload (text), attempts, max_attempts, timeout_ms,
--             now, priority, run_at: a claimed job, in no particular order;
--   'stale'   id, token, now, priority, run_at, owner_host, owner_pid,
--             owner_nonce, owner_start_time, owner_boot_id, claimed_at,
--             heartbeat_at, lease_ms: a candidate for takeover, read but not
--             locked (take_over.sql compares and swaps on this snapshot).
-- `now` is the statement's clock, ms since the Unix epoch.
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
\include fragments/settle_keep.sql,
\include fragments/settle_journal.sql,
\include fragments/claim_page.sql
\include fragments/done_rows.sql
UNION ALL
\include fragments/claim_rows.sql
