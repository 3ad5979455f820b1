-- 0007_workers_and_trace_context: workers: one row per worker incarnation and queue,
-- keyed by the owner's nonce (fresh per process start) and the queue, with
-- its owner identity as the jobs record it (owner_host, owner_pid) and the
-- machine's host name for people (hostname: uname's, may be empty). The
-- worker upserts it every few seconds with its counters since it started
-- (totals, not increments, so a write that is repeated or lost changes
-- nothing for good) and last_seen (ms since the Unix epoch; PostgreSQL: the
-- server's clock). stopped_at is set once by a worker that stopped cleanly
-- and never cleared. Not written on the claim or settle path: one upsert
-- per interval per worker, nothing per job.
--
-- leasehold_jobs.trace_context is the W3C traceparent of the span that
-- enqueued the job (NULL when none was recorded), so the span of each
-- attempt can link to it.
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
