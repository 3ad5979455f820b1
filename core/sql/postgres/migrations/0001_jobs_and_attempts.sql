-- 0001_jobs_and_attempts: the jobs table (one row per job, with the lease of its current claim:
-- owner identity, fencing token, heartbeat_at, lease_ms, and expires_at =
-- heartbeat_at + lease_ms, which the stale-lease index orders) and the
-- attempts table (one row per attempt that ended otherwise than in success,
-- written by the statement that ends it). No foreign key from attempts to
-- jobs on purpose: attempts are written only by the statement that changes
-- the job, and on PostgreSQL a foreign-key check would take a second lock
-- on the job row per settle. All times are milliseconds since the Unix epoch.
--
-- fillfactor leaves room on each page so a heartbeat (which changes only
-- unindexed columns besides expires_at's partial index) can often stay a
-- heap-only update.
CREATE TABLE leasehold_jobs (
    id               bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue            text    NOT NULL,
    payload          jsonb   NOT NULL,
    state            text    NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'dead')),
    priority         integer NOT NULL DEFAULT 0,
    run_at           bigint  NOT NULL,
    attempts         integer NOT NULL DEFAULT 0,
    max_attempts     integer NOT NULL CHECK (max_attempts >= 1),
    timeout_ms       bigint,
    idempotency_key  text,
    token            bigint  NOT NULL DEFAULT 0,
    owner_host       text,
    owner_pid        bigint,
    owner_nonce      text,
    owner_start_time bigint,
    owner_boot_id    text,
    claimed_at       bigint,
    heartbeat_at     bigint,
    lease_ms         bigint,
    expires_at       bigint,
    last_error       text,
    created_at       bigint  NOT NULL,
    finished_at      bigint
) WITH (fillfactor = 80);
CREATE INDEX leasehold_jobs_queued ON leasehold_jobs (queue, priority, run_at, id)
    WHERE state = 'queued';
CREATE INDEX leasehold_jobs_running ON leasehold_jobs (queue, expires_at)
    WHERE state = 'running';
CREATE UNIQUE INDEX leasehold_jobs_idempotency ON leasehold_jobs (queue, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE TABLE leasehold_attempts (
    job_id           bigint NOT NULL,
    token            bigint NOT NULL,
    owner_host       text   NOT NULL,
    owner_pid        bigint NOT NULL,
    owner_nonce      text   NOT NULL,
    owner_start_time bigint,
    owner_boot_id    text,
    started_at       bigint NOT NULL,
    ended_at         bigint NOT NULL,
    outcome          text   NOT NULL CHECK (outcome IN ('succeeded', 'failed', 'lease-lost')),
    error            text,
    PRIMARY KEY (job_id, token)
);
