-- complete: completes the jobs a worker finished, each under its fence,
-- keeping them marked succeeded with their results, and nothing else: the
-- completion part of claim.sql alone, for a completion that claims
-- nothing (claim.sql with a page of 0 would still plan and run its claim
-- and stale-lease parts on every call). complete_deleting.sql deletes the
-- jobs instead.
--
-- $1 = settle_ids: jobs to complete, ascending (int8[])
-- $2 = settle_tokens: their fencing tokens, in the same order (int8[])
-- $3 = settle_results: their results as JSON text, NULL for none (text[])
--
-- Returns one row per completion whose fence held: id. Each is journaled;
-- the settle fragments say why they are written as they are.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
\include fragments/settle_keep.sql,
\include fragments/settle_journal.sql
SELECT id FROM done
