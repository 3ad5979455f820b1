-- 0004_settlements_journal: the settlements journal: one row per settled attempt (done, retrying,
-- dead, lost, released, cancelled), appended by the statement (PostgreSQL)
-- or transaction (SQLite) that settles it, kept until purge removes it.
-- attempt is the attempt number the settlement ended, token its fencing
-- token, owner_* the claimant that held it, retry_at a retry's due time,
-- at when it was settled (ms; PostgreSQL: the server's clock).
--
-- On PostgreSQL ids do not commit in order: each row records the id of the
-- transaction that wrote it (xid, a 64-bit xid8 that never wraps), which
-- is what a reader orders its watermark by. The one index, on (xid, id),
-- serves those reads and purge's walk; no primary key besides it, so an
-- append costs one index entry.
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
