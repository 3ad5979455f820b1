-- journal: appends settlements to the journal, in the settle's
-- transaction (ids are assigned under the write lock, so they commit in
-- order).
--
-- ?1 = ended: a JSON array of [job id, token, queue, attempt, owner host,
--      owner pid, owner nonce] per settled attempt (text)
-- ?2 = outcome: done, retrying, dead, lost or released (text)
-- ?3 = error: the error, or NULL (text)
-- ?4 = retry_at: a retry's due time, ms, or NULL (integer)
-- ?5 = now: the caller's clock, ms (integer)
INSERT INTO leasehold_settlements (job_id, token, queue, attempt, owner_host,
    owner_pid, owner_nonce, outcome, error, retry_at, at)
SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]'),
    json_extract(value, '$[3]'), json_extract(value, '$[4]'), json_extract(value, '$[5]'),
    json_extract(value, '$[6]'), ?2, ?3, ?4, ?5
FROM json_each(?1) ORDER BY key
