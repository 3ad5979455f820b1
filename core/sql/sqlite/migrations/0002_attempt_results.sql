-- 0002_attempt_results: what an attempt produced (the CLI: exit code and output tail), one row
-- per (job_id, token), written by the fenced settle that ends that attempt,
-- so only while that token holds the job. Kept apart from the attempt log,
-- whose rows a completion does not write.
CREATE TABLE leasehold_results (
    job_id      INTEGER NOT NULL,
    token       INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    result      TEXT    NOT NULL,
    PRIMARY KEY (job_id, token)
) WITHOUT ROWID;
