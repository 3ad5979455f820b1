-- fragment settled_attempt (one text for both dialects): a settlements journal row's (s) attempt as the job's attempt
-- log numbers it, and so as `leasehold show` and the dashboard's attempts do: its place by
-- token among the job's attempts, the ones before a retry counted too. The stored attempt
-- is the attempt of the job's budget, which a retry starts again from 1, so two attempts
-- would share it; it is kept for a job deleted since (purged, or deleted on success),
-- whose log is gone. NULL for a row that ended no attempt: a claim handed back unstarted
-- (released), a cancel of a job that was not running (no owner). The log is
-- leasehold_attempt_log's two parts, read here by key: an ended attempt
-- (leasehold_attempts), else a succeeded job's last one off its row. The view itself
-- would be read whole for each row (a term naming s is not pushed into it), and scalar
-- subqueries rather than EXISTS keep PostgreSQL from hashing a whole table instead.
CASE WHEN s.outcome = 'released' OR (s.outcome = 'cancelled' AND s.owner_host IS NULL) THEN NULL
     ELSE coalesce(
         (SELECT CASE WHEN max(a.token) = s.token THEN count(*) END
          FROM leasehold_attempts a WHERE a.job_id = s.job_id AND a.token <= s.token),
         (SELECT (SELECT count(*) FROM leasehold_attempts a WHERE a.job_id = j.id AND a.token < j.token) + 1
          FROM leasehold_jobs j WHERE j.id = s.job_id AND j.state = 'succeeded' AND j.token = s.token),
         s.attempt) END
