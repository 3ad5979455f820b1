-- dashboard_activity: settlements per time bucket and outcome, as SQLite's
-- dashboard_activity, from a transaction id on.
--
-- $1 = from_xid: the first transaction id to read (text)
-- $2 = since: the first instant counted (ms since the Unix epoch)
-- $3 = bucket_ms: the bucket's width (ms)
--
-- Returns per bucket and outcome: bucket, outcome, n, stolen, waited_n,
-- waited_sum, waited_max, ran_n, ran_sum, ran_max.
SELECT (at - $2) / $3 AS bucket, outcome, count(*) AS n,
       sum(CASE WHEN error LIKE 'stolen by%' THEN 1 ELSE 0 END)::bigint AS stolen,
       count(waited) AS waited_n, coalesce(sum(waited), 0)::bigint AS waited_sum, max(waited) AS waited_max,
       count(ran) AS ran_n, coalesce(sum(ran), 0)::bigint AS ran_sum, max(ran) AS ran_max
FROM (SELECT s.at, s.outcome, s.error,
             CASE WHEN s.outcome IN ('done', 'dead') AND j.token = s.token
                  THEN greatest(j.claimed_at - j.run_at, 0) END AS waited,
             CASE WHEN s.outcome IN ('done', 'retrying', 'dead')
                  THEN greatest(s.at - coalesce(a.started_at, CASE WHEN j.token = s.token THEN j.claimed_at END), 0)
             END AS ran
      FROM leasehold_settlements s
      LEFT JOIN leasehold_jobs j ON j.id = s.job_id
      LEFT JOIN leasehold_attempts a ON a.job_id = s.job_id AND a.token = s.token
      WHERE s.xid >= $1::text::xid8 AND s.at >= $2) settled
GROUP BY bucket, outcome
