//! The statements of [`super::dashboard`], one static string each, per
//! backend. Every one reads through an index (the partial indexes of the
//! live and parked states, the primary key, the journal's commit order), so
//! none scans a table of a million jobs; what would (the succeeded jobs of
//! a large table) is estimated from a sample of ids instead.

/// SQLite: parameters `?N`, times are the caller's `now`.
#[cfg(feature = "sqlite")]
pub(super) mod sqlite {
    /// Queued jobs per queue split by due time and attempts at `?1` (ms):
    /// due first attempts, scheduled (not yet due) first attempts, retries.
    pub const QUEUED: &str = "
        SELECT queue,
               sum(CASE WHEN attempts = 0 AND run_at <= ?1 THEN 1 ELSE 0 END) AS queued,
               sum(CASE WHEN attempts = 0 AND run_at > ?1 THEN 1 ELSE 0 END) AS scheduled,
               sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END) AS retrying
        FROM leasehold_jobs WHERE state = 'queued' GROUP BY queue";

    pub const RUNNING: &str = "
        SELECT queue, count(*) AS n FROM leasehold_jobs WHERE state = 'running' GROUP BY queue";

    pub const PARKED: &str = "
        SELECT queue, state, count(*) AS n FROM leasehold_jobs INDEXED BY leasehold_jobs_parked
        WHERE state IN ('dead', 'cancelled') GROUP BY queue, state";

    pub const SUCCEEDED: &str = "
        SELECT queue, count(*) AS n FROM leasehold_jobs WHERE state = 'succeeded' GROUP BY queue";

    /// Two subqueries: SQLite reads `min` or `max` off the index only when
    /// it is the query's one aggregate (together they scan the table).
    pub const SPAN: &str = "SELECT (SELECT min(id) FROM leasehold_jobs), (SELECT max(id) FROM leasehold_jobs)";

    /// The queue and state of the ids `?1` (a JSON array).
    pub const SAMPLE: &str = "
        SELECT queue, state FROM leasehold_jobs WHERE id IN (SELECT value FROM json_each(?1))";

    pub const JOURNAL_SPAN: &str =
        "SELECT (SELECT min(id) FROM leasehold_settlements), (SELECT max(id) FROM leasehold_settlements)";

    /// The first journal row at or after id `?1`: its id and time.
    pub const JOURNAL_PROBE: &str = "
        SELECT id, at FROM leasehold_settlements WHERE id >= ?1 ORDER BY id LIMIT 1";

    /// Settlements from journal id `?1` on, settled at or after `?2` (ms),
    /// by bucket of `?3` ms and outcome; with how long the settled attempt
    /// waited after it was due (`waited`, known when it was the job's
    /// latest and last: a retry's settle moves the due time) and ran (`ran`: claim to settle, for attempts that ended
    /// their work: done, retrying, dead).
    pub const ACTIVITY: &str = "
        SELECT (at - ?2) / ?3 AS bucket, outcome, count(*) AS n,
               sum(CASE WHEN error LIKE 'stolen by%' THEN 1 ELSE 0 END) AS stolen,
               count(waited) AS waited_n, coalesce(sum(waited), 0) AS waited_sum, max(waited) AS waited_max,
               count(ran) AS ran_n, coalesce(sum(ran), 0) AS ran_sum, max(ran) AS ran_max
        FROM (SELECT s.at, s.outcome, s.error,
                     CASE WHEN s.outcome IN ('done', 'dead') AND j.token = s.token
                          THEN max(j.claimed_at - j.run_at, 0) END AS waited,
                     CASE WHEN s.outcome IN ('done', 'retrying', 'dead')
                          THEN max(s.at - coalesce(a.started_at, CASE WHEN j.token = s.token THEN j.claimed_at END), 0)
                     END AS ran
              FROM leasehold_settlements s
              LEFT JOIN leasehold_jobs j ON j.id = s.job_id
              LEFT JOIN leasehold_attempts a ON a.job_id = s.job_id AND a.token = s.token
              WHERE s.id >= ?1 AND s.at >= ?2)
        GROUP BY bucket, outcome";

    /// The settlements of job `?3` between journal ids `?1` and `?2`.
    pub const JOB_SETTLEMENTS: &str = "
        SELECT id, job_id, queue, attempt, token, owner_host, owner_pid, owner_nonce, outcome, error, retry_at, at
        FROM leasehold_settlements WHERE id >= ?1 AND id <= ?2 AND job_id = ?3 ORDER BY id";

    /// A page of jobs, newest first: ids below `?1` and at or above `?2`,
    /// of queue `?3` (NULL: any), stored state `?4` (NULL: any), derived
    /// state `?5` (`queued`, `scheduled`, `retrying` at `?6` ms; NULL: no
    /// split), payload containing `?7` (NULL: any), at most `?8` rows.
    pub const PAGE: &str = concat!(
        "SELECT ", crate::store::list::job_columns!("payload"), " FROM leasehold_jobs
        WHERE id < ?1 AND id >= ?2 AND (?3 IS NULL OR queue = ?3) AND (?4 IS NULL OR state = ?4)
          AND (?5 IS NULL
               OR (?5 = 'queued' AND attempts = 0 AND run_at <= ?6)
               OR (?5 = 'scheduled' AND attempts = 0 AND run_at > ?6)
               OR (?5 = 'retrying' AND attempts > 0))
          AND (?7 IS NULL OR instr(payload, ?7) > 0)
        ORDER BY id DESC LIMIT ?8"
    );

    /// [`PAGE`] of running jobs, through their index (few, and anywhere in
    /// the id range).
    pub const PAGE_RUNNING: &str = concat!(
        "SELECT ", crate::store::list::job_columns!("payload"), " FROM leasehold_jobs INDEXED BY leasehold_jobs_running
        WHERE state = 'running' AND id < ?1 AND id >= ?2 AND (?3 IS NULL OR queue = ?3)
          AND (?7 IS NULL OR instr(payload, ?7) > 0)
        ORDER BY id DESC LIMIT ?8"
    );

    /// [`PAGE`] of dead or cancelled jobs (`?4`), through their index.
    pub const PAGE_PARKED: &str = concat!(
        "SELECT ", crate::store::list::job_columns!("payload"), " FROM leasehold_jobs INDEXED BY leasehold_jobs_parked
        WHERE state IN ('dead', 'cancelled') AND state = ?4 AND id < ?1 AND id >= ?2
          AND (?3 IS NULL OR queue = ?3) AND (?7 IS NULL OR instr(payload, ?7) > 0)
        ORDER BY id DESC LIMIT ?8"
    );

    /// What changes when jobs change state: the newest and oldest job, the
    /// newest settlement, the running jobs' count and tokens (a claim), the
    /// dead and cancelled jobs' count (a retry), the paused queues.
    pub const CHANGE_MARKER: &str = "
        SELECT (SELECT coalesce(max(id), 0) FROM leasehold_jobs) || ':' ||
               (SELECT coalesce(min(id), 0) FROM leasehold_jobs) || ':' ||
               (SELECT coalesce(max(id), 0) FROM leasehold_settlements) || ':' ||
               (SELECT count(*) || '/' || coalesce(sum(token), 0) FROM leasehold_jobs WHERE state = 'running') || ':' ||
               (SELECT count(*) FROM leasehold_jobs INDEXED BY leasehold_jobs_parked
                WHERE state IN ('dead', 'cancelled')) || ':' ||
               (SELECT count(*) FROM leasehold_paused_queues)";
}

/// PostgreSQL: parameters `$N`, times are the server's clock.
#[cfg(feature = "postgres")]
pub(super) mod postgres {
    /// The server's clock in ms since the Unix epoch.
    macro_rules! db_now {
        () => {
            "CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint)"
        };
    }

    pub const QUEUED: &str = concat!(
        "SELECT queue,
               sum(CASE WHEN attempts = 0 AND run_at <= now THEN 1 ELSE 0 END)::bigint AS queued,
               sum(CASE WHEN attempts = 0 AND run_at > now THEN 1 ELSE 0 END)::bigint AS scheduled,
               sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END)::bigint AS retrying
        FROM leasehold_jobs, (SELECT ", db_now!(), " AS now) clock
        WHERE state = 'queued' GROUP BY queue"
    );

    pub const RUNNING: &str = "
        SELECT queue, count(*) AS n FROM leasehold_jobs WHERE state = 'running' GROUP BY queue";

    pub const PARKED: &str = "
        SELECT queue, state, count(*) AS n FROM leasehold_jobs
        WHERE state IN ('dead', 'cancelled') GROUP BY queue, state";

    pub const SUCCEEDED: &str = "
        SELECT queue, count(*) AS n FROM leasehold_jobs WHERE state = 'succeeded' GROUP BY queue";

    pub const SPAN: &str = "SELECT min(id), max(id) FROM leasehold_jobs";

    pub const SAMPLE: &str = "SELECT queue, state FROM leasehold_jobs WHERE id = ANY($1)";

    pub const NOW: &str = concat!("SELECT ", db_now!());

    /// The journal's first and last transaction ids (as text: `xid8`).
    pub const JOURNAL_SPAN: &str = "
        SELECT (SELECT xid::text FROM leasehold_settlements ORDER BY xid LIMIT 1),
               (SELECT xid::text FROM leasehold_settlements ORDER BY xid DESC LIMIT 1)";

    /// The first journal row at or after transaction id `$1`: its xid and time.
    pub const JOURNAL_PROBE: &str = "
        SELECT xid::text, at FROM leasehold_settlements WHERE xid >= $1::text::xid8 ORDER BY xid LIMIT 1";

    /// As the SQLite `ACTIVITY`, from transaction id `$1` on.
    pub const ACTIVITY: &str = "
        SELECT (at - $2) / $3 AS bucket, outcome, count(*) AS n,
               sum(CASE WHEN error LIKE 'stolen by%' THEN 1 ELSE 0 END)::bigint AS stolen,
               count(waited) AS waited_n, coalesce(sum(waited), 0)::bigint AS waited_sum, max(waited) AS waited_max,
               count(ran) AS ran_n, coalesce(sum(ran), 0)::bigint AS ran_sum, max(ran) AS ran_max
        FROM (SELECT s.at, s.outcome, s.error,
                     CASE WHEN s.outcome IN ('done', 'dead') AND j.token = s.token
                          THEN greatest(j.claimed_at - j.run_at, 0) END AS waited,
                     CASE WHEN s.outcome IN ('done', 'retrying', 'dead')
                          THEN greatest(s.at - coalesce(a.started_at, CASE WHEN j.token = s.token THEN j.claimed_at END), 0)
                     END AS ran
              FROM leasehold_settlements s
              LEFT JOIN leasehold_jobs j ON j.id = s.job_id
              LEFT JOIN leasehold_attempts a ON a.job_id = s.job_id AND a.token = s.token
              WHERE s.xid >= $1::text::xid8 AND s.at >= $2) settled
        GROUP BY bucket, outcome";

    /// The settlements of job `$3` with transaction ids from `$1` to `$2`.
    pub const JOB_SETTLEMENTS: &str = "
        SELECT id, job_id, queue, attempt, token, owner_host, owner_pid, owner_nonce, outcome, error, retry_at, at
        FROM leasehold_settlements
        WHERE xid >= $1::text::xid8 AND xid <= $2::text::xid8 AND job_id = $3 ORDER BY xid, id";

    /// As the SQLite `PAGE`; the derived states at the server's clock.
    pub const PAGE: &str = concat!(
        "SELECT ", crate::store::list::job_columns!("payload::text"), " FROM leasehold_jobs
        WHERE id < $1 AND id >= $2 AND ($3::text IS NULL OR queue = $3) AND ($4::text IS NULL OR state = $4)
          AND ($5::text IS NULL
               OR ($5 = 'queued' AND attempts = 0 AND run_at <= ", db_now!(), ")
               OR ($5 = 'scheduled' AND attempts = 0 AND run_at > ", db_now!(), ")
               OR ($5 = 'retrying' AND attempts > 0))
          AND ($6::text IS NULL OR strpos(payload::text, $6) > 0)
        ORDER BY id DESC LIMIT $7"
    );

    pub const PAGE_RUNNING: &str = concat!(
        "SELECT ", crate::store::list::job_columns!("payload::text"), " FROM leasehold_jobs
        WHERE state = 'running' AND id < $1 AND id >= $2 AND ($3::text IS NULL OR queue = $3)
          AND ($4::text IS NULL OR $4 = 'running') AND ($5::text IS NULL OR TRUE)
          AND ($6::text IS NULL OR strpos(payload::text, $6) > 0)
        ORDER BY id DESC LIMIT $7"
    );

    pub const PAGE_PARKED: &str = concat!(
        "SELECT ", crate::store::list::job_columns!("payload::text"), " FROM leasehold_jobs
        WHERE state IN ('dead', 'cancelled') AND state = $4 AND id < $1 AND id >= $2
          AND ($3::text IS NULL OR queue = $3) AND ($5::text IS NULL OR TRUE)
          AND ($6::text IS NULL OR strpos(payload::text, $6) > 0)
        ORDER BY id DESC LIMIT $7"
    );

    pub const CHANGE_MARKER: &str = "
        SELECT concat_ws(':',
               (SELECT max(id) FROM leasehold_jobs),
               (SELECT min(id) FROM leasehold_jobs),
               (SELECT xid::text || '/' || id FROM leasehold_settlements ORDER BY xid DESC, id DESC LIMIT 1),
               (SELECT count(*) || '/' || coalesce(sum(token), 0) FROM leasehold_jobs WHERE state = 'running'),
               (SELECT count(*) FROM leasehold_jobs WHERE state IN ('dead', 'cancelled')),
               (SELECT count(*) FROM leasehold_paused_queues))";
}
