-- complete: marks running jobs succeeded, each under its fence. Journal
-- each with journal.sql and keep their results with keep_results.sql in
-- the same transaction.
--
-- ?1 = fences: a JSON array of [id, token] (text)
-- ?2 = now: the caller's clock, ms: finished_at (integer)
--
-- Returns one row per completion whose fence held, as journal.sql takes it:
-- id, token, queue, attempts, owner_host, owner_pid, owner_nonce.
UPDATE leasehold_jobs AS j SET state = 'succeeded', finished_at = ?2
FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS token
      FROM json_each(?1)) AS f
WHERE j.id = f.id AND j.token = f.token AND j.state = 'running'
RETURNING id, token, queue, attempts, owner_host, owner_pid, owner_nonce
