-- 0001_jobs_and_attempts: the jobs table (one row per job, with the lease of its current claim:
-- owner identity, fencing token, heartbeat_at, lease_ms, and expires_at =
-- heartbeat_at + lease_ms, which the stale-lease index orders) and the
-- attempts table (one row per attempt that ended otherwise than in success,
-- written by the statement that ends it). No foreign key from attempts to
-- jobs on purpose: attempts are written only by the statement that changes
-- the job, and on PostgreSQL a foreign-key check would take a second lock
-- on the job row per settle. All times are milliseconds since the Unix epoch.
CREATE TABLE leasehold_jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    queue            TEXT    NOT NULL,
    payload          TEXT    NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'dead')),
    priority         INTEGER NOT NULL DEFAULT 0,
    run_at           INTEGER NOT NULL,
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL CHECK (max_attempts >= 1),
    timeout_ms       INTEGER,
    idempotency_key  TEXT,
    token            INTEGER NOT NULL DEFAULT 0,
    owner_host       TEXT,
    owner_pid        INTEGER,
    owner_nonce      TEXT,
    owner_start_time INTEGER,
    owner_boot_id    TEXT,
    claimed_at       INTEGER,
    heartbeat_at     INTEGER,
    lease_ms         INTEGER,
    expires_at       INTEGER,
    last_error       TEXT,
    created_at       INTEGER NOT NULL,
    finished_at      INTEGER
);
CREATE INDEX leasehold_jobs_queued ON leasehold_jobs (queue, priority, run_at, id)
    WHERE state = 'queued';
CREATE INDEX leasehold_jobs_running ON leasehold_jobs (queue, expires_at)
    WHERE state = 'running';
CREATE UNIQUE INDEX leasehold_jobs_idempotency ON leasehold_jobs (queue, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE TABLE leasehold_attempts (
    job_id           INTEGER NOT NULL,
    token            INTEGER NOT NULL,
    owner_host       TEXT    NOT NULL,
    owner_pid        INTEGER NOT NULL,
    owner_nonce      TEXT    NOT NULL,
    owner_start_time INTEGER,
    owner_boot_id    TEXT,
    started_at       INTEGER NOT NULL,
    ended_at         INTEGER NOT NULL,
    outcome          TEXT    NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'lease-lost')),
    error            TEXT,
    PRIMARY KEY (job_id, token)
) WITHOUT ROWID;
