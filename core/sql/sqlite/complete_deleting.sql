-- complete_deleting: complete.sql for a store that deletes the jobs it
-- completes: deletes running jobs, each under its fence. Journal each with
-- journal.sql and delete their attempt log and results
-- (delete_attempts.sql, delete_results.sql) in the same transaction.
--
-- ?1 = fences: a JSON array of [id, token] (text)
--
-- Returns one row per completion whose fence held, as journal.sql takes it:
-- id, token, queue, attempts, owner_host, owner_pid, owner_nonce.
--
-- By primary key for the listed ids, then the token test on each row: a
-- join against json_each would scan the jobs table.
DELETE FROM leasehold_jobs
WHERE id IN (SELECT json_extract(value, '$[0]') FROM json_each(?1))
  AND state = 'running'
  AND EXISTS (SELECT 1 FROM json_each(?1)
              WHERE json_extract(value, '$[0]') = leasehold_jobs.id
                AND json_extract(value, '$[1]') = leasehold_jobs.token)
RETURNING id, token, queue, attempts, owner_host, owner_pid, owner_nonce
