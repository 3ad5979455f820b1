-- complete_deleting: complete.sql for a store that deletes completed jobs:
-- each job whose fence holds goes, with its attempt log and results (the
-- journal keeps its completion).
--
-- $1 = settle_ids: jobs to complete, ascending (int8[])
-- $2 = settle_tokens: their fencing tokens, in the same order (int8[])
--
-- Returns one row per completion whose fence held: id.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
\include fragments/settle_delete.sql,
\include fragments/settle_journal.sql
SELECT id FROM done
