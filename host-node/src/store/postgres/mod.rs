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

mod claim;
mod enqueue;
mod listen;
mod journal;
mod purge;
mod settle;
mod steer;

use listen::{forward_notifications, open_listener};
use std::str::FromStr;

use sqlx::error::BoxDynError;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgPool, PgPoolOptions, PgQueryResult, PgRow};
use sqlx::{Arguments, Connection, Executor, Postgres};

use leasehold_core::queue::migrations::Migration;
use leasehold_core::queue::statements::Statement;
use leasehold_core::queue::statements::postgres as sql;

use super::backend::{BoxFuture, boxed};
use super::db::{self, Arg, Db, Deliver, Offered, Upkeep, add_scalar};
use super::{BackendKind, StoreConfig, StoreError, StoreResult};

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

/// Vacuums the jobs table (see [`super::vacuum`]): `SKIP_LOCKED`, so it
/// neither waits for nor queues behind another process's vacuum of it;
/// `INDEX_CLEANUP ON`, because the dead entries at the head of the queued
/// index are what it is for, and left to choose (`AUTO`) the server skips
/// the indexes when few heap pages hold dead rows — a long backlog with a
/// short dead head; `TRUNCATE OFF`, because giving the table's empty tail
/// back takes an ACCESS EXCLUSIVE lock, which stops every claim meanwhile,
/// for pages the queue fills again. Errors are logged: this is upkeep, no
/// caller waits for it.
async fn vacuum(pool: &PgPool) {
    let started = std::time::Instant::now();
    match sqlx::raw_sql(sql::VACUUM_JOBS.text)
        .execute(pool)
        .await
    {
        Ok(_) => tracing::debug!(elapsed = ?started.elapsed(), "vacuumed leasehold_jobs"),
        Err(error) => tracing::warn!(%error, "VACUUM leasehold_jobs failed"),
    }
}

/// PostgreSQL binds a list of ids as a `BIGINT[]` (read with `unnest` or
/// `= ANY`) and stamps time with the server's clock.
impl Db for Postgres {
    const KIND: BackendKind = BackendKind::Postgres;
    const STATEMENTS: &'static [Statement] = sql::ALL;
    const READ_SNAPSHOT: Option<&'static Statement> = Some(&sql::READ_SNAPSHOT);
    const SERVER_CLOCK: Option<&'static Statement> = Some(&sql::DASHBOARD_NOW);
    const BEGIN_WRITE: Option<&'static Statement> = None;
    const MIGRATION_LOCK: Option<&'static Statement> = Some(&sql::MIGRATION_LOCK);
    const NOTIFY: Option<&'static Statement> = Some(&sql::NOTIFY_QUEUE);

    fn add(args: &mut PgArguments, value: Arg<'_>) -> Result<(), BoxDynError> {
        match value {
            Arg::Ids(ids) => args.add(ids),
            Arg::Texts(texts) => args.add(texts),
            scalar => add_scalar::<Postgres>(args, scalar),
        }
    }

    /// Always: nobody else locks what such a write touches (the workers
    /// table) and the pool has connections to spare.
    fn execute_if_idle<'a>(pool: &'a PgPool, statement: &'static Statement, offered: Offered<'a>) -> BoxFuture<'a, Option<u64>> {
        boxed(async move { db::execute(pool, statement, offered).await.map(Some) })
    }

    fn listen(pool: &PgPool, deliver: Deliver) -> BoxFuture<'_, Option<tokio::task::JoinHandle<()>>> {
        boxed(async move {
            let listener = open_listener(pool).await?;
            Ok(Some(tokio::spawn(forward_notifications(listener, deliver))))
        })
    }

    fn vacuum(pool: &PgPool) -> Option<Upkeep> {
        let pool = pool.clone();
        Some(Box::pin(async move { vacuum(&pool).await }))
    }

    fn script(migration: &Migration) -> &'static str {
        migration.postgres
    }

    /// The transaction id (`xid8`), read as text.
    fn journal_key(row: &PgRow, i: usize) -> StoreResult<Option<u64>> {
        let key: Option<String> = sqlx::Row::try_get(row, i)?;
        key.as_deref().map(journal::xid).transpose()
    }

    fn rows_affected(result: &PgQueryResult) -> u64 {
        result.rows_affected()
    }

    fn on_pool(pool: &PgPool) -> impl Executor<'_, Database = Postgres> {
        pool
    }

    fn on_conn(conn: &mut PgConnection) -> impl Executor<'_, Database = Postgres> {
        conn
    }
}
