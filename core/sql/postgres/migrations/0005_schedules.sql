-- 0005_schedules: schedules: one row per schedule, holding what its jobs are enqueued
-- with, its cadence (every_ms, or cron in time_zone), its policies, and its
-- cursor last_slot (every slot at or before it was enqueued or skipped),
-- which each enqueue moves with a compare-and-swap in the transaction that
-- inserts the jobs. next_slot is the first slot after the cursor (NULL:
-- none), paused_at is NULL while active, last_job_id the last job enqueued.
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
