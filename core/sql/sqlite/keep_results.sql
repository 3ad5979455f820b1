-- keep_results: writes the results of attempts whose settle landed, in the
-- settle's transaction.
--
-- ?1 = results: a JSON array of [id, token, result as JSON text] (text)
-- ?2 = now: the caller's clock, ms (integer)
INSERT OR REPLACE INTO leasehold_results (job_id, token, recorded_at, result)
SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), ?2, json_extract(value, '$[2]')
FROM json_each(?1)
