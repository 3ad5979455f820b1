-- release: hands claimed, unperformed jobs back, each under its fence:
-- queued again at once, the attempt not counted. Journal each with
-- journal.sql in the same transaction.
--
-- ?1 = fences: a JSON array of [id, token] (text)
--
-- Returns one row per release whose fence held, as journal.sql takes it:
-- id, token, queue, attempt (the number it did not burn), owner_host,
-- owner_pid, owner_nonce.
UPDATE leasehold_jobs AS j SET state = 'queued', attempts = j.attempts - 1,
    heartbeat_at = NULL, expires_at = NULL
FROM (SELECT json_extract(value, '$[0]') AS id, json_extract(value, '$[1]') AS token
      FROM json_each(?1)) AS f
WHERE j.id = f.id AND j.token = f.token AND j.state = 'running'
RETURNING id, token, queue, attempts + 1, owner_host, owner_pid, owner_nonce
