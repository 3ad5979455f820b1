-- 0006_steering: steering: 'cancelled' becomes a stored state beside queued, running,
-- succeeded and dead, with who cancelled a job, when (cancelled_at, ms) and
-- why; leasehold_paused_queues holds one row per paused queue (claims skip
-- those queues; a resume deletes the row).
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
