//! The queue's tables: migration set `leasehold-queue`, id block 1000.
//!
//! `leasehold_jobs` holds one row per job, including the lease of its current
//! claim (owner identity, fencing `token`, `heartbeat_at`, `lease_ms`, and
//! `expires_at = heartbeat_at + lease_ms`, which the stale-lease index
//! orders). `leasehold_attempts` holds one row per attempt that ended
//! otherwise than in success, written by the same statement that ends it
//! (fail, reclaim, steal); the running attempt and the succeeded one are
//! read off the job row (migration 3, view `leasehold_attempt_log`). So a
//! claim and a completion are each a single row update on the hot path.
//!
//! There is no foreign key from attempts to jobs on purpose: attempts are
//! written only by the statement that changes the job, and on PostgreSQL a
//! foreign-key check would take a second lock on the job row per settle.
//!
//! All times are BIGINT milliseconds since the Unix epoch.

use super::migrate::{Migration, MigrationSet};

/// The queue's migration set: namespace `leasehold-queue`, ids 1000..2000.
pub const QUEUE_MIGRATIONS: MigrationSet = MigrationSet {
    namespace: "leasehold-queue",
    id_block: 1000,
    migrations: &[
        Migration { number: 1, name: "0001_jobs_and_attempts", sqlite: SQLITE_0001, postgres: POSTGRES_0001 },
        Migration { number: 2, name: "0002_attempt_results", sqlite: SQLITE_0002, postgres: POSTGRES_0002 },
        Migration { number: 3, name: "0003_success_on_the_job_row", sqlite: ATTEMPT_LOG_0003, postgres: ATTEMPT_LOG_0003 },
        Migration { number: 4, name: "0004_settlements_journal", sqlite: SQLITE_0004, postgres: POSTGRES_0004 },
        Migration { number: 5, name: "0005_schedules", sqlite: SQLITE_0005, postgres: POSTGRES_0005 },
        Migration { number: 6, name: "0006_steering", sqlite: SQLITE_0006, postgres: POSTGRES_0006 },
        Migration { number: 7, name: "0007_workers_and_trace_context", sqlite: SQLITE_0007, postgres: POSTGRES_0007 },
        Migration { number: 8, name: "0008_parked_jobs_index", sqlite: SQLITE_0008, postgres: POSTGRES_0008 },
    ],
};

/// The dead-lettered and cancelled jobs by queue, for what a dashboard
/// counts and lists (`store::dashboard`): without it, counting a queue's dead
/// jobs or listing them reads the whole table. Partial, so the hot path (a
/// job going from queued to running to succeeded) never writes to it; on
/// PostgreSQL with the id, so a queue's dead jobs are listed newest first
/// off the index.
const SQLITE_0008: &str = r#"
CREATE INDEX leasehold_jobs_parked ON leasehold_jobs (queue, state)
    WHERE state IN ('dead', 'cancelled');
"#;

const POSTGRES_0008: &str = r#"
CREATE INDEX leasehold_jobs_parked ON leasehold_jobs (queue, state, id)
    WHERE state IN ('dead', 'cancelled');
"#;

/// Workers (`store::workers`): one row per worker incarnation and queue,
/// keyed by the owner's nonce (fresh per process start) and the queue, with
/// its owner identity as the jobs record it (`owner_host`, `owner_pid`) and
/// the machine's host name for people (`hostname`: `uname`'s, may be empty).
/// The worker upserts it every few seconds with its counters since it started
/// (totals, not increments, so a write that is repeated or lost changes
/// nothing for good) and `last_seen` (ms since the Unix epoch; PostgreSQL:
/// the server's clock). `stopped_at` is set once by a worker that stopped
/// cleanly and never cleared. Not written on the claim or settle path: one
/// upsert per interval per worker, nothing per job.
///
/// `leasehold_jobs.trace_context` is the W3C `traceparent` of the span that
/// enqueued the job (NULL when none was recorded), so the span of each
/// attempt can link to it.
const SQLITE_0007: &str = r#"
CREATE TABLE leasehold_workers (
    owner_nonce   TEXT    NOT NULL,
    queue         TEXT    NOT NULL,
    owner_host    TEXT    NOT NULL,
    owner_pid     INTEGER NOT NULL,
    hostname      TEXT    NOT NULL,
    started_at    INTEGER NOT NULL,
    last_seen     INTEGER NOT NULL,
    stopped_at    INTEGER,
    claimed       INTEGER NOT NULL DEFAULT 0,
    succeeded     INTEGER NOT NULL DEFAULT 0,
    failed        INTEGER NOT NULL DEFAULT 0,
    dead_lettered INTEGER NOT NULL DEFAULT 0,
    renewals      INTEGER NOT NULL DEFAULT 0,
    lapses        INTEGER NOT NULL DEFAULT 0,
    losses        INTEGER NOT NULL DEFAULT 0,
    steals        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (owner_nonce, queue)
) WITHOUT ROWID;
ALTER TABLE leasehold_jobs ADD COLUMN trace_context TEXT;
"#;

const POSTGRES_0007: &str = r#"
CREATE TABLE leasehold_workers (
    owner_nonce   text   NOT NULL,
    queue         text   NOT NULL,
    owner_host    text   NOT NULL,
    owner_pid     bigint NOT NULL,
    hostname      text   NOT NULL,
    started_at    bigint NOT NULL,
    last_seen     bigint NOT NULL,
    stopped_at    bigint,
    claimed       bigint NOT NULL DEFAULT 0,
    succeeded     bigint NOT NULL DEFAULT 0,
    failed        bigint NOT NULL DEFAULT 0,
    dead_lettered bigint NOT NULL DEFAULT 0,
    renewals      bigint NOT NULL DEFAULT 0,
    lapses        bigint NOT NULL DEFAULT 0,
    losses        bigint NOT NULL DEFAULT 0,
    steals        bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (owner_nonce, queue)
);
ALTER TABLE leasehold_jobs ADD COLUMN trace_context text;
"#;

/// Steering (`store::steer`): `cancelled` becomes a stored state beside
/// queued, running, succeeded and dead, with who cancelled a job, when
/// (`cancelled_at`, ms) and why; `leasehold_paused_queues` holds one row per
/// paused queue (claims skip those queues; a resume deletes the row).
///
/// SQLite cannot change a CHECK in place, so the jobs table is rebuilt: the
/// view over it is dropped first (a rename checks the views that name the
/// table) and made again after, and the AUTOINCREMENT counter is carried
/// over so no id is ever issued twice, even one whose job was purged.
const SQLITE_0006: &str = r#"
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
"#;

const POSTGRES_0006: &str = r#"
ALTER TABLE leasehold_jobs DROP CONSTRAINT leasehold_jobs_state_check;
ALTER TABLE leasehold_jobs ADD CONSTRAINT leasehold_jobs_state_check
    CHECK (state IN ('queued', 'running', 'succeeded', 'dead', 'cancelled'));
ALTER TABLE leasehold_jobs ADD COLUMN cancelled_at bigint,
    ADD COLUMN cancelled_by text, ADD COLUMN cancel_reason text;
CREATE TABLE leasehold_paused_queues (
    queue     text   PRIMARY KEY,
    paused_at bigint NOT NULL,
    paused_by text   NOT NULL
);
"#;

/// Schedules (`store::schedule`): one row per schedule, holding what its
/// jobs are enqueued with, its cadence (`every_ms`, or `cron` in
/// `time_zone`), its policies, and its cursor `last_slot` — every slot at or
/// before it was enqueued or skipped — which each enqueue moves with a
/// compare-and-swap in the transaction that inserts the jobs. `next_slot` is
/// the first slot after the cursor (NULL: none), so the due schedules of a
/// queue are one index range. `paused_at` is NULL while active.
/// `last_job_id` is the last job enqueued, for the overlap policy and the
/// listing; no foreign key, as jobs are purged on their own.
const SQLITE_0005: &str = r#"
CREATE TABLE leasehold_schedules (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    queue         TEXT    NOT NULL,
    payload       TEXT    NOT NULL,
    max_attempts  INTEGER NOT NULL CHECK (max_attempts >= 1),
    timeout_ms    INTEGER,
    every_ms      INTEGER CHECK (every_ms >= 1000),
    cron          TEXT,
    time_zone     TEXT    NOT NULL,
    catch_up      TEXT    NOT NULL CHECK (catch_up IN ('all', 'one', 'none')),
    overlap       TEXT    NOT NULL CHECK (overlap IN ('allow', 'skip')),
    paused_at     INTEGER,
    created_at    INTEGER NOT NULL,
    last_slot     INTEGER NOT NULL,
    next_slot     INTEGER,
    last_run_slot INTEGER,
    last_job_id   INTEGER,
    CHECK ((every_ms IS NULL) <> (cron IS NULL))
);
CREATE INDEX leasehold_schedules_due ON leasehold_schedules (queue, next_slot)
    WHERE paused_at IS NULL;
"#;

const POSTGRES_0005: &str = r#"
CREATE TABLE leasehold_schedules (
    id            bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text    NOT NULL UNIQUE,
    queue         text    NOT NULL,
    payload       jsonb   NOT NULL,
    max_attempts  integer NOT NULL CHECK (max_attempts >= 1),
    timeout_ms    bigint,
    every_ms      bigint  CHECK (every_ms >= 1000),
    cron          text,
    time_zone     text    NOT NULL,
    catch_up      text    NOT NULL CHECK (catch_up IN ('all', 'one', 'none')),
    overlap       text    NOT NULL CHECK (overlap IN ('allow', 'skip')),
    paused_at     bigint,
    created_at    bigint  NOT NULL,
    last_slot     bigint  NOT NULL,
    next_slot     bigint,
    last_run_slot bigint,
    last_job_id   bigint,
    CHECK ((every_ms IS NULL) <> (cron IS NULL))
);
CREATE INDEX leasehold_schedules_due ON leasehold_schedules (queue, next_slot)
    WHERE paused_at IS NULL;
"#;

/// The settlements journal: one row per settled attempt, appended by the
/// statement (PostgreSQL) or transaction (SQLite) that settles it — `done`
/// (completed, kept or deleted), `retrying` and `dead` (failed), `lost`
/// (its lease taken over by another claimant), `released` (handed back
/// unstarted; `cancelled`, the operator's cancel of a queued or running
/// job) — so every settlement the store holds can be listed, a
/// deleted job's too, and none depends on a worker living past its commit.
/// Rows stay until `purge` removes those older than its cutoff.
///
/// `attempt` is the attempt number the settlement ended (the job's
/// `attempts` then), `token` its fencing token, `owner_*` the claimant that
/// held it (for `lost`: the one who lost it), `retry_at` the due time of a
/// retry, `at` when it was settled (ms since the Unix epoch; PostgreSQL:
/// the server's clock).
///
/// Reading it in commit order (see `super::journal`): on SQLite, writers
/// take turns on the file and each assigns its ids under the write lock, so
/// ids commit in order (`AUTOINCREMENT`: an id is never reused, not even
/// after a purge emptied the table). On PostgreSQL they do not: a
/// transaction may take a lower id and commit after another's higher one.
/// Each row therefore records the id of the transaction that wrote it
/// (`xid`, a 64-bit `xid8` that never wraps), which is what a reader
/// orders its watermark by. The one index, on `(xid, id)`, serves those
/// reads and purge's walk; no primary key besides it, so an append costs one
/// index entry.
const SQLITE_0004: &str = r#"
CREATE TABLE leasehold_settlements (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id      INTEGER NOT NULL,
    queue       TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    token       INTEGER NOT NULL,
    owner_host  TEXT,
    owner_pid   INTEGER,
    owner_nonce TEXT,
    outcome     TEXT    NOT NULL
                CHECK (outcome IN ('done', 'retrying', 'dead', 'lost', 'released', 'cancelled')),
    error       TEXT,
    retry_at    INTEGER,
    at          INTEGER NOT NULL
);
"#;

const POSTGRES_0004: &str = r#"
CREATE TABLE leasehold_settlements (
    id          bigint  GENERATED ALWAYS AS IDENTITY,
    xid         xid8    NOT NULL DEFAULT pg_current_xact_id(),
    job_id      bigint  NOT NULL,
    queue       text    NOT NULL,
    attempt     integer NOT NULL,
    token       bigint  NOT NULL,
    owner_host  text,
    owner_pid   bigint,
    owner_nonce text,
    outcome     text    NOT NULL
                CHECK (outcome IN ('done', 'retrying', 'dead', 'lost', 'released', 'cancelled')),
    error       text,
    retry_at    bigint,
    at          bigint  NOT NULL
);
CREATE INDEX leasehold_settlements_commit_order ON leasehold_settlements (xid, id);
"#;

/// From this migration on, a completion does not log its attempt: it is one
/// `UPDATE` of the job row, which keeps the owner, token and claim time of
/// the attempt that succeeded and gains its `finished_at` (on PostgreSQL,
/// an insert into `leasehold_attempts` and its primary key was a third of
/// the tuples a job wrote). `leasehold_attempt_log` is every ended attempt:
/// the logged ones (failed, lease lost — and the successes logged before
/// this migration, which are kept), plus each succeeded job's last attempt
/// read off its row unless it was logged. The same SQL on both backends.
const ATTEMPT_LOG_0003: &str = r#"
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
"#;

/// What an attempt produced (the CLI: exit code and output tail), one row per
/// `(job_id, token)`, written by the fenced settle that ends that attempt
/// ([`super::Store::complete`], [`super::Store::fail`]), so only while that
/// token holds the job. Kept apart from the attempt log, whose rows a
/// completion does not write.
const SQLITE_0002: &str = r#"
CREATE TABLE leasehold_results (
    job_id      INTEGER NOT NULL,
    token       INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    result      TEXT    NOT NULL,
    PRIMARY KEY (job_id, token)
) WITHOUT ROWID;
"#;

const POSTGRES_0002: &str = r#"
CREATE TABLE leasehold_results (
    job_id      bigint NOT NULL,
    token       bigint NOT NULL,
    recorded_at bigint NOT NULL,
    result      jsonb  NOT NULL,
    PRIMARY KEY (job_id, token)
);
"#;

const SQLITE_0001: &str = r#"
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
"#;

// fillfactor leaves room on each page so a heartbeat (which changes only
// unindexed columns besides expires_at's partial index) can often stay a
// heap-only update.
const POSTGRES_0001: &str = r#"
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
"#;
