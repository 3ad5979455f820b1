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

use leasehold_core::queue::statements::postgres as sql;

use super::backend::{self, ClaimRequest, ClaimRound, FenceRow, OwnerParams, TakenOver, Takeover};
use super::migrate::{self, AppliedMigration, MigrationSet, PG_MIGRATION_LOCK_KEY};
use super::validate::NewJob;
use super::wake::NOTIFY_CHANNEL;
use super::{
    BackendKind, ClaimedJob, JobId, JobRecord, JobState, OnSuccess, QueueCounts, StoreConfig,
    StoreError, StoreResult, rows,
};

pub(crate) const KIND: BackendKind = BackendKind::Postgres;

/// Fences as two arrays (ids, tokens) in ascending id order: the order in
/// which a batch locks its rows (see `claim.sql`); with their
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
    sqlx::query(sql::MIGRATION_LOCK.text)
        .bind(PG_MIGRATION_LOCK_KEY)
        .execute(&mut *tx)
        .await?;
    sqlx::query(sql::MIGRATIONS_TABLE.text)
        .execute(&mut *tx)
        .await?;
    let applied = sqlx::query(sql::MIGRATIONS_APPLIED.text)
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
        sqlx::query(sql::MIGRATION_RECORD.text)
            .bind(pending.id)
            .bind(pending.namespace)
            .bind(pending.migration.name)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

pub(crate) async fn enqueue(
    pool: &PgPool,
    queue: &str,
    jobs: &[NewJob],
    _now: i64,
) -> StoreResult<Vec<Option<JobId>>> {
    debug_assert_eq!(NOTIFY_CHANNEL, "leasehold_jobs");
    // `notified` is read only so the planner must run the NOTIFY.
    let returned: Vec<(i64, Option<String>, i64)> = sqlx::query_as(sql::ENQUEUE.text)
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
        sqlx::query_as::<_, (String, i64)>(sql::KEYED_JOBS.text)
            .bind(queue)
            .bind(&conflicted)
            .fetch_all(pool)
            .await?
            .into_iter()
            .collect()
    };
    backend::assign_ids(jobs, returned, &existing)
}

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
    // A claim that does not look for stale leases names no refused ids.
    let refused: &[i64] = if *look_for_stale { refused } else { &[] };
    let (ids, tokens, results) = by_id(settle, settle_results);
    let query = sqlx::query(sql::CLAIM.text)
        .bind(*queue)
        .bind(*n)
        .bind(owner.host)
        .bind(owner.pid)
        .bind(owner.nonce)
        .bind(owner.start_time)
        .bind(owner.boot_id)
        .bind(*lease_ms)
        .bind(*look_for_stale)
        .bind(refused)
        .bind(ids)
        .bind(tokens)
        .bind(results)
        .bind(*on_success == OnSuccess::Delete);
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
    let found = sqlx::query(sql::TAKE_OVER.text)
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
    fenced_batch(pool, sql::RELEASE.text, pairs).await
}

pub(crate) async fn renew(
    pool: &PgPool,
    pairs: &[(i64, i64)],
    owner_nonce: Option<&str>,
    _now: i64,
) -> StoreResult<Vec<i64>> {
    let (ids, tokens): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
    Ok(sqlx::query_scalar(sql::RENEW.text)
        .bind(ids)
        .bind(tokens)
        .bind(owner_nonce)
        .fetch_all(pool)
        .await?)
}

/// Completes the fenced jobs: the claim statement with a page of 0.
pub(crate) async fn complete(
    pool: &PgPool,
    pairs: &[(i64, i64)],
    results: &[Option<String>],
    on_success: OnSuccess,
    now: i64,
) -> StoreResult<Vec<i64>> {
    let nobody = OwnerParams { host: "", pid: 0, nonce: "", start_time: None, boot_id: None };
    let request = ClaimRequest {
        queue: "",
        owner: nobody,
        lease_ms: 0,
        n: 0,
        look_for_stale: false,
        refused: &[],
        settle: pairs,
        settle_results: results,
        on_success,
        now,
    };
    Ok(claim(pool, &request).await?.1)
}

pub(crate) async fn fail(
    pool: &PgPool,
    (id, token): (i64, i64),
    error: &str,
    result: Option<&str>,
    retry_delays_ms: &[i64],
    _now: i64,
) -> StoreResult<Option<(JobState, i64)>> {
    let row: Option<(String, i64)> = sqlx::query_as(sql::FAIL.text)
        .bind(id)
        .bind(token)
        .bind(retry_delays_ms)
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
    sqlx::query(sql::FENCE_ROWS.text)
        .bind(ids)
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::fence_row)
        .collect()
}

pub(crate) async fn counts(pool: &PgPool) -> StoreResult<Vec<QueueCounts>> {
    let found: Vec<PgRow> = sqlx::query(sql::COUNTS.text)
        .fetch_all(pool)
        .await?;
    rows::counts(&found)
}

pub(crate) async fn job(pool: &PgPool, id: JobId) -> StoreResult<Option<JobRecord>> {
    // One snapshot for the job row and its attempt log.
    let mut tx = pool
        .begin_with(sql::READ_SNAPSHOT.text)
        .await?;
    let Some(row) = sqlx::query(sql::JOB.text)
        .bind(id.0)
        .fetch_optional(&mut *tx)
        .await?
    else {
        return Ok(None);
    };
    let mut record = rows::job(&row)?;
    let ended =
        sqlx::query(sql::JOB_ATTEMPTS.text)
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
    match sqlx::raw_sql(sql::VACUUM_JOBS.text)
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
    let schema: String = sqlx::query_scalar(sql::CURRENT_SCHEMA.text)
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
