//! The PostgreSQL backend: the server's clock, `FOR UPDATE SKIP LOCKED`
//! claims, `LISTEN/NOTIFY` wake-ups.
//!
//! Every operation is ONE statement (data-modifying CTEs), so it commits or
//! not as a whole and costs one round trip: a claim page locks, updates and
//! reports stale candidates together (when it looks for them: see
//! `StoreConfig::reclaim_every`); a failure updates the job and logs the
//! attempt together; a completion is one `UPDATE`. Batches bind arrays and
//! read them with `unnest`. Every stamp is `statement_timestamp()` in
//! milliseconds: one clock for every worker (see the module docs of
//! [`crate::store`]).

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use sqlx::Row;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgListener, PgPool, PgPoolOptions, PgRow};
use sqlx::Connection;

use super::backend::{self, ClaimRequest, ClaimRound, FenceRow, OwnerParams, TakenOver, Takeover};
use super::migrate::{self, AppliedMigration, MigrationSet, PG_MIGRATION_LOCK_KEY};
use super::validate::NewJob;
use super::wake::NOTIFY_CHANNEL;
use super::{
    BackendKind, ClaimedJob, JobId, JobRecord, JobState, OnSuccess, QueueCounts, StoreConfig,
    StoreError, StoreResult, rows,
};

pub(crate) const KIND: BackendKind = BackendKind::Postgres;

/// The statement's instant in ms since the Unix epoch, as every stamp reads it.
macro_rules! db_now {
    () => {
        "CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint)"
    };
}

/// Logs the attempts a CTE named `done` ended, with outcome `$outcome` and
/// error `$error` (SQL expressions).
macro_rules! log_ended {
    ($outcome:literal, $error:literal) => {
        concat!(
            "logged AS (
                INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
                    owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
                SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time,
                    owner_boot_id, claimed_at, now, ",
            $outcome,
            ", ",
            $error,
            " FROM done)"
        )
    };
}

macro_rules! ended_columns {
    () => {
        "j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
         j.owner_boot_id, j.claimed_at, c.now"
    };
}

/// Locks the rows of the jobs `$ids` in id order, as CTE `$name`, and reads
/// their fence columns (`id`, `token`, `state`, `owner_nonce`) as locked.
///
/// Every statement that updates several running jobs takes their locks in
/// one global order first, so two batches over overlapping jobs (a coalesced
/// completion and a coalesced renewal, say) queue behind each other instead
/// of deadlocking.
///
/// The fence is then tested on these locked rows (`held!`), not in the
/// `UPDATE`: under READ COMMITTED a locked row reads as its latest version,
/// and nobody else can change it until we commit. The `UPDATE` that follows
/// is left with nothing but `id = ANY(...)`, so its only plan is the primary
/// key. With `state = 'running'` in its own `WHERE` the planner may instead
/// scan the whole partial index `leasehold_jobs_running` (its statistics say
/// it is tiny), which holds an entry for every past claim until vacuum:
/// a settle would then cost a scan over all recently worked jobs.
macro_rules! lock_in_order {
    ($name:literal, $ids:literal) => {
        concat!(
            $name,
            " AS (SELECT id, token, state, owner_nonce FROM leasehold_jobs WHERE id = ANY(",
            $ids,
            ") ORDER BY id FOR UPDATE)"
        )
    };
}

/// The ids of the rows locked by CTE `$locked` whose fence still holds: the
/// job is running under the token bound for it in `$ids`/`$tokens`, and
/// `$also` (more SQL on the locked row `l`, or "") holds. A subquery, for
/// `j.id = ANY(ARRAY(...))`.
macro_rules! held {
    ($locked:literal, $ids:literal, $tokens:literal, $also:literal) => {
        concat!(
            "SELECT l.id FROM ",
            $locked,
            " l JOIN unnest(",
            $ids,
            "::int8[], ",
            $tokens,
            "::int8[]) AS f(id, token) ON l.id = f.id AND l.token = f.token
             WHERE l.state = 'running'",
            $also
        )
    };
}

/// The completion's `UPDATE`, for fences bound as the id and token
/// arrays `$ids` and `$tokens` (in ascending id order: see [`by_id`]).
///
/// One `UPDATE` and nothing else: a succeeded attempt is not logged in
/// `leasehold_attempts` (the job row keeps its owner, token, claim time and
/// finish time, and inspection reads it from there), and the rows are not
/// locked first. The fence is the `UPDATE`'s own `WHERE`: under READ
/// COMMITTED, a row another transaction changed meanwhile is re-read in its
/// latest version after that transaction ends, and the whole `WHERE` is
/// tested again on it with the same (id, token) pair, so a stale token
/// changes nothing. The rows are visited (and locked) in the order of the
/// arrays, which the caller sorts by id: the same global order in which
/// every batch over running jobs locks them, so two batches over
/// overlapping jobs queue behind each other instead of deadlocking.
///
/// `state = 'running'` is tested inside a `CASE` on purpose: written as a
/// plain condition it matches the predicate of the partial index
/// `leasehold_jobs_running`, whose statistics may call it tiny while it
/// holds an entry for every claim since the last vacuum, and the planner may
/// then scan it whole instead of looking each id up in the primary key.
macro_rules! complete_update {
    ($ids:literal, $tokens:literal) => {
        concat!(
            "UPDATE leasehold_jobs j SET state = 'succeeded', finished_at = ",
            db_now!(),
            "\n        FROM ",
            fenced_rows!($ids, $tokens)
        )
    };
}

/// [`complete_update`] for [`OnSuccess::Delete`]: the fenced rows are
/// deleted instead of marked succeeded. The fence is the `DELETE`'s own
/// `WHERE`, re-tested on the latest row version under READ COMMITTED
/// exactly as the `UPDATE`'s, and the rows are visited in the same id
/// order.
///
/// [`OnSuccess::Delete`]: super::OnSuccess::Delete
macro_rules! complete_delete {
    ($ids:literal, $tokens:literal) => {
        concat!("DELETE FROM leasehold_jobs j USING ", fenced_rows!($ids, $tokens))
    };
}

/// The fence of a completion, after its `FROM` / `USING`: the jobs `j`
/// running under the tokens bound for them, answered by id with what the
/// settlements journal records of the attempt.
macro_rules! fenced_rows {
    ($ids:literal, $tokens:literal) => {
        concat!(
            "unnest(",
            $ids,
            "::int8[], ",
            $tokens,
            "::int8[]) AS f(id, token)
        WHERE j.id = f.id AND j.token = f.token
          AND CASE WHEN j.state = 'running' THEN true ELSE false END
        RETURNING j.id, j.token, j.queue, j.attempts, j.owner_host, j.owner_pid, j.owner_nonce"
        )
    };
}

/// The completion as CTE `done` (the ids and tokens it landed on), for
/// fences bound as `$ids`/`$tokens`: `keep` marks the rows succeeded
/// ([`complete_update`]) and writes, in CTE `done_results`, the result bound
/// for each landed fence in `$results` (JSON text, NULL for none; a job
/// listed twice keeps one); `delete` deletes them ([`complete_delete`])
/// with, in CTEs of their own, their attempt log and recorded results (a
/// data-modifying CTE must sit at the top level, and runs to completion
/// even if nothing reads it). So a result is written by the settle
/// statement itself, and only where its fence held. Either way CTE
/// `done_journal` appends each completion to the settlements journal (kept
/// when the job is deleted).
macro_rules! done_cte {
    (@journal) => {
        "done_journal AS (
        INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
            owner_nonce, outcome, at)
        SELECT id, queue, attempts, token, owner_host, owner_pid, owner_nonce, 'done', (SELECT now FROM clock)
        FROM done)"
    };
    (keep, $ids:literal, $tokens:literal, $results:literal) => {
        concat!(
            "done AS (",
            complete_update!($ids, $tokens),
            "),
    ",
            done_cte!(@journal),
            ",
    done_results AS (
        INSERT INTO leasehold_results (job_id, token, recorded_at, result)
        SELECT DISTINCT ON (d.id) d.id, d.token, ",
            db_now!(),
            ", r.result::jsonb
        FROM done d
        JOIN unnest(",
            $ids,
            "::int8[], ",
            $tokens,
            "::int8[], ",
            $results,
            "::text[]) AS r(id, token, result) ON r.id = d.id AND r.token = d.token
        WHERE r.result IS NOT NULL
        ORDER BY d.id
        ON CONFLICT (job_id, token) DO UPDATE
            SET recorded_at = EXCLUDED.recorded_at, result = EXCLUDED.result)"
        )
    };
    (delete, $ids:literal, $tokens:literal) => {
        concat!(
            "done AS (",
            complete_delete!($ids, $tokens),
            "),
    ",
            done_cte!(@journal),
            ",
    done_log AS (
        DELETE FROM leasehold_attempts a WHERE a.job_id = ANY(ARRAY(SELECT id FROM done))),
    done_results AS (
        DELETE FROM leasehold_results r WHERE r.job_id = ANY(ARRAY(SELECT id FROM done)))"
        )
    };
}

/// Fences as two arrays (ids, tokens) in ascending id order: the order in
/// which a batch locks its rows (see [`complete_update`]); with their
/// results, in the same order.
fn by_id(pairs: &[(i64, i64)], results: &[Option<String>]) -> (Vec<i64>, Vec<i64>, Vec<Option<String>>) {
    debug_assert_eq!(pairs.len(), results.len(), "one result (or none) per fence");
    let mut sorted: Vec<((i64, i64), Option<String>)> =
        pairs.iter().copied().zip(results.iter().cloned()).collect();
    sorted.sort_unstable_by_key(|(pair, _)| *pair);
    let mut out = (Vec::with_capacity(sorted.len()), Vec::with_capacity(sorted.len()), Vec::with_capacity(sorted.len()));
    for ((id, token), result) in sorted {
        out.0.push(id);
        out.1.push(token);
        out.2.push(result);
    }
    out
}

pub(crate) async fn connect(
    url: &str,
    redacted: &str,
    config: &StoreConfig,
) -> StoreResult<PgPool> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    let mut options = PgConnectOptions::from_str(url).map_err(unreachable)?;
    if options.get_application_name().is_none() {
        // Names our sessions in pg_stat_activity unless the URL already does.
        options = options.application_name("leasehold");
    }
    // Our statements are prepared once per connection and always want the
    // same plan (index scans on the partial indexes and the primary key).
    // Left to choose, the server re-plans the claim CTE for each of its
    // first executions and may keep doing so; planning it costs more than
    // running it.
    options = options.options([("plan_cache_mode", "force_generic_plan")]);
    if config.read_only {
        // An inspecting store: the server refuses any write.
        options = options.options([("default_transaction_read_only", "on")]);
    }
    // One connection first, bounded by the connect timeout: the pool retries
    // a refused connection until its acquire timeout and then says only that
    // it timed out; this says why (refused, no such host, bad password).
    let probe = tokio::time::timeout(config.connect_timeout, PgConnection::connect_with(&options))
        .await
        .map_err(|_| {
            unreachable(sqlx::Error::Io(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within the connect timeout ({:?})", config.connect_timeout),
            )))
        })?
        .map_err(unreachable)?;
    let _ = probe.close().await;
    PgPoolOptions::new()
        .max_connections(config.max_connections.unwrap_or(10).max(1))
        .acquire_timeout(config.connect_timeout)
        // A dead connection surfaces as an error on use, which the caller's
        // runner backs off on; a ping before every statement would double
        // the round trips of the hot path.
        .test_before_acquire(false)
        .connect_with(options)
        .await
        .map_err(unreachable)
}

pub(crate) async fn migrate(pool: &PgPool, sets: &[&MigrationSet]) -> StoreResult<()> {
    let mut tx = pool.begin().await?;
    // Transaction-scoped: released by the commit (or by the server if this
    // connection dies), so a crashed migrator never wedges the next one.
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(PG_MIGRATION_LOCK_KEY)
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS leasehold_migrations (
            id bigint PRIMARY KEY, namespace text NOT NULL, name text NOT NULL,
            applied_at bigint NOT NULL)",
    )
    .execute(&mut *tx)
    .await?;
    let applied = sqlx::query("SELECT id, namespace, name FROM leasehold_migrations")
        .fetch_all(&mut *tx)
        .await?
        .iter()
        .map(|r| {
            Ok(AppliedMigration {
                id: r.try_get(0)?,
                namespace: r.try_get(1)?,
                name: r.try_get(2)?,
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    for pending in migrate::plan(sets, &applied)? {
        sqlx::raw_sql(pending.migration.postgres)
            .execute(&mut *tx)
            .await?;
        sqlx::query(concat!(
            "INSERT INTO leasehold_migrations (id, namespace, name, applied_at) VALUES ($1, $2, $3, ",
            db_now!(),
            ")"
        ))
        .bind(pending.id)
        .bind(pending.namespace)
        .bind(pending.migration.name)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

const ENQUEUE: &str = concat!(
    "WITH clock AS MATERIALIZED (SELECT ",
    db_now!(),
    " AS now),
    ins AS (
        INSERT INTO leasehold_jobs
            (queue, payload, priority, run_at, max_attempts, timeout_ms, idempotency_key, created_at)
        SELECT $1, i.payload::jsonb, i.priority, coalesce(i.run_at, c.now + i.delay_ms),
               i.max_attempts, i.timeout_ms, i.key, c.now
        FROM unnest($2::text[], $3::int4[], $4::int8[], $5::int8[], $6::int4[], $7::int8[], $8::text[])
             WITH ORDINALITY AS i(payload, priority, run_at, delay_ms, max_attempts, timeout_ms, key, ord),
             clock c
        ORDER BY i.ord
        ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
        RETURNING id, idempotency_key, run_at),
    wake AS (
        SELECT pg_notify('",
    "leasehold_jobs",
    "', current_schema() || '/' || $1) FROM clock c WHERE EXISTS (SELECT 1 FROM ins WHERE ins.run_at <= c.now))
    SELECT ins.id, ins.idempotency_key, (SELECT count(*) FROM wake) AS notified FROM ins"
);

pub(crate) async fn enqueue(
    pool: &PgPool,
    queue: &str,
    jobs: &[NewJob],
    _now: i64,
) -> StoreResult<Vec<Option<JobId>>> {
    debug_assert_eq!(NOTIFY_CHANNEL, "leasehold_jobs");
    // `notified` is read only so the planner must run the NOTIFY.
    let returned: Vec<(i64, Option<String>, i64)> = sqlx::query_as(ENQUEUE)
        .bind(queue)
        .bind(jobs.iter().map(|j| j.payload.as_str()).collect::<Vec<_>>())
        .bind(jobs.iter().map(|j| j.priority).collect::<Vec<_>>())
        .bind(jobs.iter().map(|j| j.run_at).collect::<Vec<_>>())
        .bind(jobs.iter().map(|j| j.delay_ms).collect::<Vec<_>>())
        .bind(jobs.iter().map(|j| j.max_attempts).collect::<Vec<_>>())
        .bind(jobs.iter().map(|j| j.timeout_ms).collect::<Vec<_>>())
        .bind(
            jobs.iter()
                .map(|j| j.idempotency_key.as_deref())
                .collect::<Vec<_>>(),
        )
        .fetch_all(pool)
        .await?;
    let returned: Vec<(i64, Option<String>)> =
        returned.into_iter().map(|(id, key, _)| (id, key)).collect();
    let conflicted = backend::conflicted_keys(jobs, &returned);
    let existing: HashMap<String, i64> = if conflicted.is_empty() {
        HashMap::new()
    } else {
        // A new statement, so a new snapshot: it sees the job a concurrent
        // enqueue with the same key committed while ours waited on it.
        sqlx::query_as::<_, (String, i64)>(
            "SELECT idempotency_key, id FROM leasehold_jobs
             WHERE queue = $1 AND idempotency_key = ANY($2)",
        )
        .bind(queue)
        .bind(&conflicted)
        .fetch_all(pool)
        .await?
        .into_iter()
        .collect()
    };
    backend::assign_ids(jobs, returned, &existing)
}

/// The claim's look for stale leases, as CTE `stale` (candidates, read
/// only, not locked: the takeover compares and swaps on the snapshot).
/// Binds $1 queue, $2 page size, $9 refused ids.
macro_rules! stale_cte {
    () => {
        "stale AS MATERIALIZED (
        SELECT j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
               j.owner_boot_id, j.claimed_at, j.heartbeat_at, j.lease_ms, j.priority, j.run_at
        FROM leasehold_jobs j
        WHERE j.queue = $1 AND j.state = 'running' AND j.expires_at < (SELECT now FROM clock)
          AND j.id <> ALL($9)
        ORDER BY j.priority, j.run_at, j.id
        LIMIT $2)"
    };
}

/// The claim of due queued jobs, as CTEs `picked` (locked, skipping locked
/// ones; at most `$limit` of them) and `claimed`. Binds $1 queue, $3..$7
/// claimant, $8 lease ms.
macro_rules! take_queued_ctes {
    ($limit:literal) => {
        concat!(
            "picked AS (
        SELECT j.ctid FROM leasehold_jobs j
        WHERE j.queue = $1 AND j.state = 'queued' AND j.run_at <= (SELECT now FROM clock)
          AND NOT EXISTS (SELECT 1 FROM leasehold_paused_queues WHERE queue = $1)
        ORDER BY j.priority, j.run_at, j.id
        LIMIT ",
            $limit,
            "
        FOR UPDATE SKIP LOCKED),
    claimed AS (
        UPDATE leasehold_jobs j SET state = 'running', token = j.token + 1,
            attempts = j.attempts + 1, owner_host = $3, owner_pid = $4, owner_nonce = $5,
            owner_start_time = $6, owner_boot_id = $7, claimed_at = c.now, heartbeat_at = c.now,
            lease_ms = $8, expires_at = c.now + $8
        FROM clock c
        -- ANY(ARRAY(...)) rather than a join: the planner cannot know the
        -- page is small and would hash-join it against a scan of the table.
        -- By ctid, the row versions `picked` locked (the latest ones: a
        -- locked row cannot change under us), so the update fetches each
        -- row directly instead of looking it up again in the primary key.
        -- A row claimed and handed back by others while this statement ran
        -- is locked in a version this statement's snapshot cannot see: the
        -- update skips it and it stays queued for the next claim.
        WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM picked))
        RETURNING j.id, j.token, j.payload::text AS payload, j.attempts, j.max_attempts,
            j.timeout_ms, c.now, j.priority, j.run_at)"
        )
    };
}

/// The claim's result rows of kind 'claimed' (the owner columns, which only
/// stale rows fill, are NULL).
macro_rules! claimed_rows {
    () => {
        "SELECT 'claimed' AS kind, id, token, payload, attempts, max_attempts, timeout_ms, now,
        priority, run_at, NULL::text AS owner_host, NULL::bigint AS owner_pid,
        NULL::text AS owner_nonce, NULL::bigint AS owner_start_time, NULL::text AS owner_boot_id,
        NULL::bigint AS claimed_at, NULL::bigint AS heartbeat_at, NULL::bigint AS lease_ms
    FROM claimed"
    };
}

/// The claim's result rows of kind 'stale', to follow `claimed_rows!`.
macro_rules! stale_rows {
    () => {
        "SELECT 'stale', s.id, s.token, NULL, NULL, NULL, NULL, (SELECT now FROM clock),
        s.priority, s.run_at, s.owner_host, s.owner_pid, s.owner_nonce, s.owner_start_time,
        s.owner_boot_id, s.claimed_at, s.heartbeat_at, s.lease_ms
    FROM stale s"
    };
}

/// The completion's result rows of kind 'done', to come first.
macro_rules! done_rows {
    () => {
        "SELECT 'done' AS kind, id, NULL::bigint AS token, NULL::text AS payload,
        NULL::int4 AS attempts, NULL::int4 AS max_attempts, NULL::bigint AS timeout_ms,
        NULL::bigint AS now, NULL::int4 AS priority, NULL::bigint AS run_at,
        NULL::text AS owner_host, NULL::bigint AS owner_pid, NULL::text AS owner_nonce,
        NULL::bigint AS owner_start_time, NULL::text AS owner_boot_id,
        NULL::bigint AS claimed_at, NULL::bigint AS heartbeat_at, NULL::bigint AS lease_ms
    FROM done"
    };
}

macro_rules! clock_cte {
    () => {
        concat!("WITH clock AS MATERIALIZED (SELECT ", db_now!(), " AS now)")
    };
}

/// A claim that looks for stale leases: stale candidates take the page's
/// first slots, due queued jobs fill the rest. Binds $1..$9.
const CLAIM: &str = concat!(
    clock_cte!(),
    ",\n    ",
    stale_cte!(),
    ",\n    ",
    take_queued_ctes!("greatest($2 - (SELECT count(*) FROM stale), 0)"),
    "\n    ",
    claimed_rows!(),
    "\n    UNION ALL\n    ",
    stale_rows!()
);

/// A claim of due queued jobs only (see [`StoreConfig::reclaim_every`]):
/// the plan has no stale-lease scan to set up and run. Binds $1..$8.
///
/// [`StoreConfig::reclaim_every`]: super::StoreConfig::reclaim_every
const CLAIM_QUEUED: &str = concat!(
    clock_cte!(),
    ",\n    ",
    take_queued_ctes!("$2"),
    "\n    ",
    claimed_rows!()
);

/// Completion fused with the next claim: one statement, one commit. The
/// completion (`keep` or `delete`: see [`done_cte`]) binds $10 ids and $11
/// tokens (and, to keep, $12 results); its `done` rows come back with
/// `kind` 'done'.
///
/// `done` is the first branch of the result on purpose: it runs first, so
/// the statement's one blocking lock (on the job it completes) is taken
/// before `picked` locks anything. `picked` itself never waits (SKIP
/// LOCKED), but it can keep a lock on a row that turned from queued to
/// running under it; a statement that waited while holding such a lock could
/// close a cycle with another worker's completion.
macro_rules! complete_and_claim {
    ($mode:ident $(, $results:literal)?) => {
        concat!(
            clock_cte!(),
            ",\n    ",
            done_cte!($mode, "$10", "$11" $(, $results)?),
            ",\n    ",
            stale_cte!(),
            ",\n    ",
            take_queued_ctes!("greatest($2 - (SELECT count(*) FROM stale), 0)"),
            "\n    ",
            done_rows!(),
            "\n    UNION ALL\n    ",
            claimed_rows!(),
            "\n    UNION ALL\n    ",
            stale_rows!()
        )
    };
}

/// [`complete_and_claim`] without the look for stale leases: the completion
/// binds $9 ids and $10 tokens (and, to keep, $11 results).
macro_rules! complete_and_claim_queued {
    ($mode:ident $(, $results:literal)?) => {
        concat!(
            clock_cte!(),
            ",\n    ",
            done_cte!($mode, "$9", "$10" $(, $results)?),
            ",\n    ",
            take_queued_ctes!("$2"),
            "\n    ",
            done_rows!(),
            "\n    UNION ALL\n    ",
            claimed_rows!()
        )
    };
}

const COMPLETE_AND_CLAIM: &str = complete_and_claim!(keep, "$12");
const COMPLETE_AND_CLAIM_QUEUED: &str = complete_and_claim_queued!(keep, "$11");
const DELETE_AND_CLAIM: &str = complete_and_claim!(delete);
const DELETE_AND_CLAIM_QUEUED: &str = complete_and_claim_queued!(delete);

pub(crate) async fn claim(
    pool: &PgPool,
    request: &ClaimRequest<'_>,
) -> StoreResult<(ClaimRound, Vec<i64>)> {
    let ClaimRequest {
        queue,
        owner,
        lease_ms,
        n,
        look_for_stale,
        refused,
        settle,
        settle_results,
        on_success,
        now: _,
    } = request;
    let sql = match (settle.is_empty(), *look_for_stale, on_success) {
        (true, true, _) => CLAIM,
        (true, false, _) => CLAIM_QUEUED,
        (false, true, OnSuccess::Keep) => COMPLETE_AND_CLAIM,
        (false, false, OnSuccess::Keep) => COMPLETE_AND_CLAIM_QUEUED,
        (false, true, OnSuccess::Delete) => DELETE_AND_CLAIM,
        (false, false, OnSuccess::Delete) => DELETE_AND_CLAIM_QUEUED,
    };
    let mut query = sqlx::query(sql)
        .bind(*queue)
        .bind(*n)
        .bind(owner.host)
        .bind(owner.pid)
        .bind(owner.nonce)
        .bind(owner.start_time)
        .bind(owner.boot_id)
        .bind(*lease_ms);
    if *look_for_stale {
        query = query.bind(*refused);
    }
    if !settle.is_empty() {
        let (ids, tokens, results) = by_id(settle, settle_results);
        query = query.bind(ids).bind(tokens);
        if *on_success == OnSuccess::Keep {
            query = query.bind(results);
        }
    }
    let found = query.fetch_all(pool).await?;
    let mut round = ClaimRound::default();
    let mut done = Vec::new();
    let mut claimed: Vec<((i32, i64), ClaimedJob)> = Vec::with_capacity(found.len());
    for row in &found {
        let kind: &str = row.try_get("kind")?;
        match kind {
            "claimed" => {
                round.now = row.try_get("now")?;
                let order = (row.try_get("priority")?, row.try_get("run_at")?);
                claimed.push((order, rows::claimed(row, false)?));
            }
            "stale" => {
                round.now = row.try_get("now")?;
                round.stale.push(rows::stale(row)?);
            }
            _ => done.push(row.try_get("id")?),
        }
    }
    // RETURNING order is unspecified: hand the page out in the queue's order.
    claimed.sort_by_key(|((priority, run_at), job)| (*priority, *run_at, job.id));
    round.claimed = claimed.into_iter().map(|(_, job)| job).collect();
    Ok((round, done))
}

/// The compare-and-swap of a takeover: the exact snapshot, still stale by
/// the database's clock.
macro_rules! snapshot_matches {
    () => {
        "j.id = ANY(ARRAY(SELECT id FROM locked)) AND j.id = i.id AND j.state = 'running'
         AND j.token = i.token
         AND j.owner_nonce = i.nonce
         AND j.heartbeat_at IS NOT DISTINCT FROM i.heartbeat_at AND j.expires_at < c.now"
    };
}

const TAKE_OVER: &str = concat!(
    "WITH clock AS MATERIALIZED (SELECT ",
    db_now!(),
    " AS now),
    input AS (
        SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::text[],
                             $6::text[], $7::int8[], $8::int8[], $9::text[], $10::int8[])
            AS i(id, token, nonce, heartbeat_at, note, old_host, old_pid, old_start_time,
                 old_boot_id, old_claimed_at)),
    -- A job another claimant is taking over right now is skipped, not waited
    -- for: its snapshot is about to change anyway, and not waiting means two
    -- takeovers over overlapping pages can never deadlock.
    locked AS (
        SELECT id FROM leasehold_jobs WHERE id = ANY($1) ORDER BY id FOR UPDATE SKIP LOCKED),
    taken AS (
        UPDATE leasehold_jobs j SET token = j.token + 1, attempts = j.attempts + 1,
            owner_host = $11, owner_pid = $12, owner_nonce = $13, owner_start_time = $14,
            owner_boot_id = $15, claimed_at = c.now, heartbeat_at = c.now, lease_ms = $16,
            expires_at = c.now + $16
        FROM input i, clock c
        WHERE ",
    snapshot_matches!(),
    " AND j.attempts < j.max_attempts
        RETURNING j.id, j.token, j.payload::text AS payload, j.attempts, j.max_attempts,
            j.timeout_ms, c.now, j.queue),
    buried AS (
        UPDATE leasehold_jobs j SET token = j.token + 1, state = 'dead', finished_at = c.now,
            last_error = 'lease lost on the final attempt: ' || i.note
        FROM input i, clock c
        WHERE ",
    snapshot_matches!(),
    " AND j.attempts >= j.max_attempts
        RETURNING j.id, j.queue, j.attempts),
    ended AS (
        INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
            owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
        SELECT i.id, i.token, i.old_host, i.old_pid, i.nonce, i.old_start_time, i.old_boot_id,
            i.old_claimed_at, c.now, 'lease-lost', i.note
        FROM input i, clock c
        WHERE i.id IN (SELECT id FROM taken UNION ALL SELECT id FROM buried)),
    -- The replaced owner's attempt, journaled as lost (or, on the last
    -- attempt, the job as dead-lettered).
    journal AS (
        INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
            owner_nonce, outcome, error, at)
        SELECT i.id, t.queue, t.attempts - 1, i.token, i.old_host, i.old_pid, i.nonce, 'lost',
            i.note, c.now
        FROM input i JOIN taken t ON t.id = i.id, clock c
        UNION ALL
        SELECT i.id, b.queue, b.attempts, i.token, i.old_host, i.old_pid, i.nonce, 'dead',
            'lease lost on the final attempt: ' || i.note, c.now
        FROM input i JOIN buried b ON b.id = i.id, clock c)
    SELECT 'claimed' AS kind, id, token, payload, attempts, max_attempts, timeout_ms, now
    FROM taken
    UNION ALL
    SELECT 'dead', id, NULL::bigint, NULL::text, NULL::int4, NULL::int4, NULL::bigint,
        NULL::bigint
    FROM buried"
);

pub(crate) async fn take_over(
    pool: &PgPool,
    owner: &OwnerParams<'_>,
    lease_ms: i64,
    takeovers: &[Takeover<'_>],
    _now: i64,
) -> StoreResult<Vec<TakenOver>> {
    fn c<'a>(t: &Takeover<'a>) -> &'a super::backend::StaleCandidate {
        t.candidate
    }
    let found = sqlx::query(TAKE_OVER)
        .bind(takeovers.iter().map(|t| c(t).id).collect::<Vec<_>>())
        .bind(takeovers.iter().map(|t| c(t).token).collect::<Vec<_>>())
        .bind(
            takeovers
                .iter()
                .map(|t| c(t).owner.nonce.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| c(t).heartbeat_at)
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| t.note.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| c(t).owner.host_id.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| i64::from(c(t).owner.pid))
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| c(t).owner.start_time.map(|s| s as i64))
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| c(t).owner.boot_id.as_deref())
                .collect::<Vec<_>>(),
        )
        .bind(
            takeovers
                .iter()
                .map(|t| c(t).claimed_at)
                .collect::<Vec<_>>(),
        )
        .bind(owner.host)
        .bind(owner.pid)
        .bind(owner.nonce)
        .bind(owner.start_time)
        .bind(owner.boot_id)
        .bind(lease_ms)
        .fetch_all(pool)
        .await?;
    found
        .iter()
        .map(|row| {
            let kind: &str = row.try_get("kind")?;
            if kind == "claimed" {
                Ok(TakenOver::Claimed(rows::claimed(row, true)?))
            } else {
                Ok(TakenOver::DeadLettered(row.try_get("id")?))
            }
        })
        .collect()
}

const RENEW: &str = concat!(
    "WITH clock AS MATERIALIZED (SELECT ",
    db_now!(),
    " AS now),
    ",
    lock_in_order!("renewing", "$1"),
    "
    UPDATE leasehold_jobs j SET heartbeat_at = c.now, expires_at = c.now + j.lease_ms
    FROM clock c
    WHERE j.id = ANY(ARRAY(",
    held!(
        "renewing",
        "$1",
        "$2",
        " AND ($3::text IS NULL OR l.owner_nonce = $3)"
    ),
    "))
    RETURNING j.id"
);

/// Hands the fenced jobs back (queued, the attempt not counted) and
/// journals each release with the attempt number it did not burn.
const RELEASE: &str = concat!(
    clock_cte!(),
    ",
    ",
    lock_in_order!("releasing", "$1"),
    ",
    released AS (
        UPDATE leasehold_jobs j SET state = 'queued', attempts = j.attempts - 1,
            heartbeat_at = NULL, expires_at = NULL
        WHERE j.id = ANY(ARRAY(",
    held!("releasing", "$1", "$2", ""),
    "))
        RETURNING j.id, j.token, j.queue, j.attempts + 1 AS attempt, j.owner_host, j.owner_pid,
            j.owner_nonce),
    journal AS (
        INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
            owner_nonce, outcome, at)
        SELECT id, queue, attempt, token, owner_host, owner_pid, owner_nonce, 'released',
            (SELECT now FROM clock)
        FROM released)
    SELECT id FROM released"
);

/// Runs a fenced batch statement that binds `$1` ids and `$2` tokens and
/// returns the ids it landed on.
async fn fenced_batch(
    pool: &PgPool,
    sql: &'static str,
    pairs: &[(i64, i64)],
) -> StoreResult<Vec<i64>> {
    let (ids, tokens): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
    Ok(sqlx::query_scalar(sql)
        .bind(ids)
        .bind(tokens)
        .fetch_all(pool)
        .await?)
}

pub(crate) async fn release(
    pool: &PgPool,
    pairs: &[(i64, i64)],
    _now: i64,
) -> StoreResult<Vec<i64>> {
    fenced_batch(pool, RELEASE, pairs).await
}

pub(crate) async fn renew(
    pool: &PgPool,
    pairs: &[(i64, i64)],
    owner_nonce: Option<&str>,
    _now: i64,
) -> StoreResult<Vec<i64>> {
    let (ids, tokens): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
    Ok(sqlx::query_scalar(RENEW)
        .bind(ids)
        .bind(tokens)
        .bind(owner_nonce)
        .fetch_all(pool)
        .await?)
}

const COMPLETE: &str =
    concat!(clock_cte!(), ",\n    ", done_cte!(keep, "$1", "$2", "$3"), "\nSELECT id FROM done");
const DELETE_COMPLETED: &str =
    concat!(clock_cte!(), ",\n    ", done_cte!(delete, "$1", "$2"), "\nSELECT id FROM done");

pub(crate) async fn complete(
    pool: &PgPool,
    pairs: &[(i64, i64)],
    results: &[Option<String>],
    on_success: OnSuccess,
    _now: i64,
) -> StoreResult<Vec<i64>> {
    let (ids, tokens, results) = by_id(pairs, results);
    let query = match on_success {
        OnSuccess::Keep => sqlx::query_scalar(COMPLETE).bind(ids).bind(tokens).bind(results),
        OnSuccess::Delete => sqlx::query_scalar(DELETE_COMPLETED).bind(ids).bind(tokens),
    };
    Ok(query.fetch_all(pool).await?)
}

const FAIL: &str = concat!(
    "WITH clock AS MATERIALIZED (SELECT ",
    db_now!(),
    " AS now),
    -- The fence is tested on the locked row, not in the UPDATE: see lock_in_order!.
    failing AS (SELECT id, token, state FROM leasehold_jobs WHERE id = $1 FOR UPDATE),
    done AS (
        UPDATE leasehold_jobs j SET
            state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'queued' END,
            run_at = CASE WHEN j.attempts >= j.max_attempts THEN j.run_at
                     ELSE c.now + least($4::bigint,
                                        $3::bigint << least(greatest(j.attempts - 1, 0), 30)) END,
            last_error = $5,
            finished_at = CASE WHEN j.attempts >= j.max_attempts THEN c.now END
        FROM clock c
        WHERE j.id = (SELECT id FROM failing WHERE token = $2 AND state = 'running')
        RETURNING ",
    ended_columns!(),
    ", j.state, j.run_at, j.queue, j.attempts),
    ",
    log_ended!("'failed'", "$5"),
    ",
    journal AS (
        INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
            owner_nonce, outcome, error, retry_at, at)
        SELECT id, queue, attempts, token, owner_host, owner_pid, owner_nonce,
            CASE WHEN state = 'dead' THEN 'dead' ELSE 'retrying' END, $5,
            CASE WHEN state = 'dead' THEN NULL ELSE run_at END, now
        FROM done),
    -- The attempt's result, if any ($6), under the same fence.
    kept AS (
        INSERT INTO leasehold_results (job_id, token, recorded_at, result)
        SELECT id, token, now, $6::jsonb FROM done WHERE $6::text IS NOT NULL
        ON CONFLICT (job_id, token) DO UPDATE
            SET recorded_at = EXCLUDED.recorded_at, result = EXCLUDED.result)
    SELECT state, run_at FROM done"
);

pub(crate) async fn fail(
    pool: &PgPool,
    (id, token): (i64, i64),
    error: &str,
    result: Option<&str>,
    initial_ms: i64,
    max_ms: i64,
    _now: i64,
) -> StoreResult<Option<(JobState, i64)>> {
    let row: Option<(String, i64)> = sqlx::query_as(FAIL)
        .bind(id)
        .bind(token)
        .bind(initial_ms)
        .bind(max_ms)
        .bind(error)
        .bind(result)
        .fetch_optional(pool)
        .await?;
    let Some((state, run_at)) = row else {
        return Ok(None);
    };
    let state = JobState::parse(&state).ok_or_else(|| StoreError::CorruptRow {
        table: "leasehold_jobs",
        detail: format!("unknown state {state:?}"),
    })?;
    Ok(Some((state, run_at)))
}

pub(crate) async fn fence_rows(pool: &PgPool, ids: &[i64]) -> StoreResult<Vec<FenceRow>> {
    sqlx::query("SELECT id, token, state, owner_nonce FROM leasehold_jobs WHERE id = ANY($1)")
        .bind(ids)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::fence_row)
        .collect()
}

/// Purges the next range of jobs: the `$2` rows after id `$1` (through the
/// primary key), of those the ones in states `$3` that finished more than
/// `$4` ms before the statement's clock, of queue `$5` (NULL: every queue),
/// with their attempt log and results, in one statement. Answers the range's
/// last id (NULL once past the last job) and how many jobs it deleted (see
/// [`Store::purge`](super::Store::purge)).
pub(crate) const PURGE_RANGE: &str = concat!(
    "WITH range AS MATERIALIZED (
        SELECT id FROM leasehold_jobs WHERE id > $1 ORDER BY id LIMIT $2),
    gone AS (
        DELETE FROM leasehold_jobs j
        WHERE j.id = ANY(ARRAY(SELECT id FROM range)) AND j.state = ANY($3::text[])
          AND j.finished_at < ",
    db_now!(),
    " - $4
          AND ($5::text IS NULL OR j.queue = $5)
        RETURNING j.id),
    attempts AS (DELETE FROM leasehold_attempts WHERE job_id = ANY(ARRAY(SELECT id FROM gone))),
    results AS (DELETE FROM leasehold_results WHERE job_id = ANY(ARRAY(SELECT id FROM gone)))
    SELECT (SELECT max(id) FROM range) AS last, (SELECT count(*) FROM gone) AS purged"
);

pub(crate) async fn counts(pool: &PgPool) -> StoreResult<Vec<QueueCounts>> {
    let found: Vec<PgRow> = sqlx::query(
        "SELECT queue, state, count(*) AS n FROM leasehold_jobs
         GROUP BY queue, state ORDER BY queue, state",
    )
    .fetch_all(pool)
    .await?;
    rows::counts(&found)
}

pub(crate) async fn job(pool: &PgPool, id: JobId) -> StoreResult<Option<JobRecord>> {
    // One snapshot for the job row and its attempt log.
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        .await?;
    let Some(row) = sqlx::query(
        "SELECT id, queue, payload::text AS payload, state, priority, run_at, attempts,
             max_attempts, timeout_ms, idempotency_key, token, owner_host, owner_pid, owner_nonce,
             owner_start_time, owner_boot_id, claimed_at, heartbeat_at, lease_ms, last_error,
             created_at, finished_at, cancelled_at, cancelled_by, cancel_reason
         FROM leasehold_jobs WHERE id = $1",
    )
    .bind(id.0)
    .fetch_optional(&mut *tx)
    .await?
    else {
        return Ok(None);
    };
    let mut record = rows::job(&row)?;
    let ended =
        sqlx::query("SELECT * FROM leasehold_attempt_log WHERE job_id = $1 ORDER BY token")
            .bind(id.0)
            .fetch_all(&mut *tx)
            .await?
            .iter()
            .map(rows::attempt)
            .collect::<StoreResult<Vec<_>>>()?;
    tx.commit().await?;
    record.attempt_log = rows::attempt_log(&row, &record, ended)?;
    Ok(Some(record))
}

/// Vacuums the jobs table (see [`super::vacuum`]): `SKIP_LOCKED`, so it
/// neither waits for nor queues behind another process's vacuum of it;
/// `INDEX_CLEANUP ON`, because the dead entries at the head of the queued
/// index are what it is for, and left to choose (`AUTO`) the server skips
/// the indexes when few heap pages hold dead rows — a long backlog with a
/// short dead head; `TRUNCATE OFF`, because giving the table's empty tail
/// back takes an ACCESS EXCLUSIVE lock, which stops every claim meanwhile,
/// for pages the queue fills again. Errors are logged: this is upkeep, no
/// caller waits for it.
pub(crate) async fn vacuum(pool: &PgPool) {
    let started = std::time::Instant::now();
    match sqlx::raw_sql("VACUUM (SKIP_LOCKED, INDEX_CLEANUP ON, TRUNCATE OFF) leasehold_jobs")
        .execute(pool)
        .await
    {
        Ok(_) => tracing::debug!(elapsed = ?started.elapsed(), "vacuumed leasehold_jobs"),
        Err(error) => tracing::warn!(%error, "VACUUM leasehold_jobs failed"),
    }
}

/// The store's LISTEN connection on [`NOTIFY_CHANNEL`], and the schema its
/// tables live in. Notifications are `<schema>/<queue>`: the channel is
/// database-wide, and two stores in different schemas of one database must
/// not wake each other's workers.
pub(crate) struct Listener {
    listener: PgListener,
    prefix: String,
}

/// Opens the store's LISTEN connection.
pub(crate) async fn open_listener(pool: &PgPool) -> StoreResult<Listener> {
    let mut listener = PgListener::connect_with(pool).await?;
    let schema: String = sqlx::query_scalar("SELECT current_schema()")
        .fetch_one(&mut listener)
        .await?;
    listener.listen(NOTIFY_CHANNEL).await?;
    Ok(Listener {
        listener,
        prefix: format!("{schema}/"),
    })
}

/// Forwards notifications of this store's schema until `deliver` answers
/// `false` (the store is gone): `Some(queue)` per notification, `None` after
/// the connection was lost (notifications may have been missed; sqlx
/// reconnects on the next receive).
pub(crate) async fn forward_notifications(
    Listener {
        mut listener,
        prefix,
    }: Listener,
    deliver: impl Fn(Option<&str>) -> bool + Send + 'static,
) {
    loop {
        let keep = match listener.try_recv().await {
            Ok(Some(notification)) => match notification.payload().strip_prefix(prefix.as_str()) {
                Some(queue) => deliver(Some(queue)),
                None => true,
            },
            Ok(None) => deliver(None),
            Err(error) => {
                tracing::warn!(%error, "leasehold LISTEN connection failed; retrying in 1s");
                let keep = deliver(None);
                tokio::time::sleep(Duration::from_secs(1)).await;
                keep
            }
        };
        if !keep {
            return;
        }
    }
}
