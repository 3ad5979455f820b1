-- 0005_schedules: schedules: one row per schedule, holding what its jobs are enqueued
-- with, its cadence (every_ms, or cron in time_zone), its policies, and its
-- cursor last_slot (every slot at or before it was enqueued or skipped),
-- which each enqueue moves with a compare-and-swap in the transaction that
-- inserts the jobs. next_slot is the first slot after the cursor (NULL:
-- none), paused_at is NULL while active, last_job_id the last job enqueued.
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
