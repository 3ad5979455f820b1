-- 0006_steering: steering: 'cancelled' becomes a stored state beside queued, running,
-- succeeded and dead, with who cancelled a job, when (cancelled_at, ms) and
-- why; leasehold_paused_queues holds one row per paused queue (claims skip
-- those queues; a resume deletes the row).
--
-- SQLite cannot change a CHECK in place, so the jobs table is rebuilt: the
-- view over it is dropped first (a rename checks the views that name the
-- table) and made again after, and the AUTOINCREMENT counter is carried
-- over so no id is ever issued twice, even one whose job was purged.
DROP VIEW leasehold_attempt_log;
CREATE TABLE leasehold_jobs_steered (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    queue            TEXT    NOT NULL,
    payload          TEXT    NOT NULL,
    state            TEXT    NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'running', 'succeeded', 'dead', 'cancelled')),
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
    finished_at      INTEGER,
    cancelled_at     INTEGER,
    cancelled_by     TEXT,
    cancel_reason    TEXT
);
INSERT INTO leasehold_jobs_steered (id, queue, payload, state, priority, run_at, attempts,
    max_attempts, timeout_ms, idempotency_key, token, owner_host, owner_pid, owner_nonce,
    owner_start_time, owner_boot_id, claimed_at, heartbeat_at, lease_ms, expires_at,
    last_error, created_at, finished_at)
SELECT id, queue, payload, state, priority, run_at, attempts,
    max_attempts, timeout_ms, idempotency_key, token, owner_host, owner_pid, owner_nonce,
    owner_start_time, owner_boot_id, claimed_at, heartbeat_at, lease_ms, expires_at,
    last_error, created_at, finished_at
FROM leasehold_jobs;
DELETE FROM sqlite_sequence WHERE name = 'leasehold_jobs_steered';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'leasehold_jobs_steered', seq FROM sqlite_sequence WHERE name = 'leasehold_jobs';
DROP TABLE leasehold_jobs;
ALTER TABLE leasehold_jobs_steered RENAME TO leasehold_jobs;
CREATE INDEX leasehold_jobs_queued ON leasehold_jobs (queue, priority, run_at, id)
    WHERE state = 'queued';
CREATE INDEX leasehold_jobs_running ON leasehold_jobs (queue, expires_at)
    WHERE state = 'running';
CREATE UNIQUE INDEX leasehold_jobs_idempotency ON leasehold_jobs (queue, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE VIEW leasehold_attempt_log AS
SELECT job_id, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
       started_at, ended_at, outcome, error
FROM leasehold_attempts
UNION ALL
SELECT j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
       j.owner_boot_id, j.claimed_at, j.finished_at, 'succeeded', NULL
FROM leasehold_jobs j
WHERE j.state = 'succeeded'
  AND NOT EXISTS (SELECT 1 FROM leasehold_attempts a WHERE a.job_id = j.id AND a.token = j.token);
CREATE TABLE leasehold_paused_queues (
    queue     TEXT    PRIMARY KEY,
    paused_at INTEGER NOT NULL,
    paused_by TEXT    NOT NULL
) WITHOUT ROWID;
