-- dashboard_activity: settlements per time bucket and outcome, with how long each
-- settled attempt waited after it was due (`waited`, known when it was the
-- job's latest and last: a retry's settle moves the due time) and ran (`ran`:
-- claim to settle, for attempts that ended their work: done, retrying,
-- dead).
--
-- ?1 = from_id: the first journal id to read
-- ?2 = since: the first instant counted (ms since the Unix epoch)
-- ?3 = bucket_ms: the bucket's width (ms)
--
-- Returns per bucket and outcome: bucket, outcome, n, stolen, waited_n,
-- waited_sum, waited_max, ran_n, ran_sum, ran_max.
SELECT (at - ?2) / ?3 AS bucket, outcome, count(*) AS n,
       sum(CASE WHEN error LIKE 'stolen by%' THEN 1 ELSE 0 END) AS stolen,
       count(waited) AS waited_n, coalesce(sum(waited), 0) AS waited_sum, max(waited) AS waited_max,
       count(ran) AS ran_n, coalesce(sum(ran), 0) AS ran_sum, max(ran) AS ran_max
FROM (SELECT s.at, s.outcome, s.error,
             CASE WHEN s.outcome IN ('done', 'dead') AND j.token = s.token
                  THEN max(j.claimed_at - j.run_at, 0) END AS waited,
             CASE WHEN s.outcome IN ('done', 'retrying', 'dead')
                  THEN max(s.at - coalesce(a.started_at, CASE WHEN j.token = s.token THEN j.claimed_at END), 0)
             END AS ran
      FROM leasehold_settlements s
      LEFT JOIN leasehold_jobs j ON j.id = s.job_id
      LEFT JOIN leasehold_attempts a ON a.job_id = s.job_id AND a.token = s.token
      WHERE s.id >= ?1 AND s.at >= ?2)
GROUP BY bucket, outcome
