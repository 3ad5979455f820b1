-- tally_attempts: the given jobs' retried failures and reclaimed attempts.
-- A failed attempt was retried unless it is a dead job's last (its token is
-- the job's latest); a lost lease was reclaimed from a lost worker unless
-- the attempt after it (token + 1, on the job row or logged) is the same
-- owner's: a worker taking its own stale lease back retries, it rescues
-- nobody.
--
-- ?1 = ids: a JSON array of job ids (text)
--
-- Returns one row: retried, reclaimed (NULL when no attempt matched).
SELECT sum(CASE WHEN a.outcome = 'failed' AND NOT (j.state = 'dead' AND a.token = j.token)
            THEN 1 ELSE 0 END) AS retried,
       sum(CASE WHEN a.outcome = 'lease-lost'
                 AND NOT (j.token = a.token + 1 AND j.owner_nonce = a.owner_nonce
                          AND j.owner_host = a.owner_host)
                 AND NOT EXISTS (SELECT 1 FROM leasehold_attempts n
                                 WHERE n.job_id = a.job_id AND n.token = a.token + 1
                                   AND n.owner_nonce = a.owner_nonce AND n.owner_host = a.owner_host)
            THEN 1 ELSE 0 END) AS reclaimed
FROM leasehold_attempts a JOIN leasehold_jobs j ON j.id = a.job_id
WHERE a.job_id IN (SELECT value FROM json_each(?1))
