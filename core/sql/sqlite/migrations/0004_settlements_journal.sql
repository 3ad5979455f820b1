-- 0004_settlements_journal: the settlements journal: one row per settled attempt (done, retrying,
-- dead, lost, released, cancelled), appended by the statement (PostgreSQL)
-- or transaction (SQLite) that settles it, kept until purge removes it.
-- attempt is the attempt number the settlement ended, token its fencing
-- token, owner_* the claimant that held it, retry_at a retry's due time,
-- at when it was settled (ms; PostgreSQL: the server's clock).
--
-- On SQLite writers take turns on the file and each assigns its ids under
-- the write lock, so ids commit in order (AUTOINCREMENT: an id is never
-- reused, not even after a purge emptied the table).
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
