//! The SQLite backend: one file in WAL mode, the caller's clock.
//!
//! Batched inputs travel as one JSON text parameter read with `json_each`, so
//! a batch of any size is one statement. Operations that write two tables
//! (fail + attempt log, takeover + attempt log) run in one `BEGIN
//! IMMEDIATE` transaction, which takes the write lock up front: two
//! processes never interleave inside one, and a crash mid-way commits nothing.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Row, Sqlite, Transaction};

use leasehold_core::queue::statements::sqlite as sql;

use super::backend::{self, ClaimRequest, ClaimRound, FenceRow, OwnerParams, TakenOver, Takeover};
use super::migrate::{self, AppliedMigration, MigrationSet};
use super::validate::NewJob;
use super::{
    BackendKind, JobId, JobRecord, JobState, OnSuccess, QueueCounts, StoreConfig, StoreError,
    StoreResult, rows,
};

pub(crate) const KIND: BackendKind = BackendKind::Sqlite;

/// How long a writer waits for another process's write lock.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub(crate) async fn connect(
    url: &str,
    redacted: &str,
    config: &StoreConfig,
) -> StoreResult<SqlitePool> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    if config.read_only {
        return connect_read_only(url, config).await.map_err(unreachable);
    }
    let options = SqliteConnectOptions::from_str(url)
        .map_err(unreachable)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        // WAL + NORMAL: a commit survives a process crash; only an OS crash
        // may lose the last commits (never corrupting the file).
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = || {
        SqlitePoolOptions::new()
            .max_connections(config.max_connections.unwrap_or(1).max(1))
            .min_connections(1)
            // A `sqlite::memory:` database lives as long as its connection.
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(config.connect_timeout)
            .test_before_acquire(false)
            .connect_with(options.clone())
    };
    // Turning a new file to WAL takes an exclusive lock and SQLite answers
    // SQLITE_BUSY at once, without its busy handler, when another process
    // opens the same new file at that moment: try again for as long as a
    // writer would wait.
    let started = std::time::Instant::now();
    let backoff = leasehold_core::Backoff { initial_ms: 10.0, max_ms: 500.0, multiplier: 2.0 };
    let mut failures = 0u32;
    loop {
        match pool().await {
            Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                failures = failures.saturating_add(1);
                tokio::time::sleep(Duration::from_millis(backoff.delay_after(failures))).await;
            }
            other => return other.map_err(unreachable),
        }
    }
}

/// Opens the file read-only (see [`super::Store::connect_with`]): `mode=ro`
/// first; if the file cannot be read so (a WAL file whose `-shm` file is
/// missing, in a folder this process may not write), `immutable=1`.
async fn connect_read_only(url: &str, config: &StoreConfig) -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::from_str(url)?
        .create_if_missing(false)
        .read_only(true)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = |options: SqliteConnectOptions| {
        SqlitePoolOptions::new()
            .max_connections(config.max_connections.unwrap_or(1).max(1))
            .acquire_timeout(config.connect_timeout)
            .test_before_acquire(false)
            .connect_lazy_with(options)
    };
    // SQLite opens the file lazily: the first read says whether it can.
    let probe = sql::PROBE.text;
    let read_only = pool(options.clone());
    let refused = match sqlx::query(probe).execute(&read_only).await {
        Ok(_) => return Ok(read_only),
        Err(e) => e,
    };
    read_only.close().await;
    let immutable = pool(options.immutable(true));
    match sqlx::query(probe).execute(&immutable).await {
        Ok(_) => Ok(immutable),
        // The first refusal says what is wrong with the file.
        Err(_) => Err(refused),
    }
}

/// Whether SQLite answered SQLITE_BUSY (5) or SQLITE_LOCKED (6).
pub(crate) fn is_busy(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if matches!(db.code().as_deref(), Some("5" | "6")))
}

async fn immediate(pool: &SqlitePool) -> StoreResult<Transaction<'static, Sqlite>> {
    Ok(pool.begin_with(sql::BEGIN_IMMEDIATE.text).await?)
}

pub(crate) async fn migrate(pool: &SqlitePool, sets: &[&MigrationSet]) -> StoreResult<()> {
    let mut tx = immediate(pool).await?;
    sqlx::query(sql::MIGRATIONS_TABLE.text).execute(&mut *tx).await?;
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
        sqlx::raw_sql(pending.migration.sqlite)
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
    pool: &SqlitePool,
    queue: &str,
    jobs: &[NewJob],
    now: i64,
) -> StoreResult<Vec<Option<JobId>>> {
    let batch: Vec<_> = jobs
        .iter()
        .map(|j| {
            (
                &j.payload,
                j.priority,
                j.due(now),
                j.max_attempts,
                j.timeout_ms,
                &j.idempotency_key,
            )
        })
        .collect();
    let batch = serde_json::to_string(&batch).expect("tuples of strings and numbers serialize");
    let returned: Vec<(i64, Option<String>)> = sqlx::query_as(sql::ENQUEUE.text)
        .bind(queue)
        .bind(now)
        .bind(batch)
        .fetch_all(pool)
        .await?;
    let conflicted = backend::conflicted_keys(jobs, &returned);
    let existing: HashMap<String, i64> = if conflicted.is_empty() {
        HashMap::new()
    } else {
        sqlx::query_as::<_, (String, i64)>(sql::KEYED_JOBS.text)
            .bind(queue)
            .bind(serde_json::to_string(&conflicted).expect("strings serialize"))
            .fetch_all(pool)
            .await?
            .into_iter()
            .collect()
    };
    backend::assign_ids(jobs, returned, &existing)
}

pub(crate) async fn claim(
    pool: &SqlitePool,
    request: &ClaimRequest<'_>,
) -> StoreResult<(ClaimRound, Vec<i64>)> {
    let &ClaimRequest {
        queue,
        ref owner,
        lease_ms,
        n,
        look_for_stale,
        refused,
        settle,
        settle_results,
        on_success,
        now,
    } = request;
    // Commits are cheap in WAL mode: the completion goes first on its own.
    let done = if settle.is_empty() {
        Vec::new()
    } else {
        complete(pool, settle, settle_results, on_success, now).await?
    };
    // Two statements (one when this claim does not look for stale leases),
    // no transaction: the stale read only sizes the page and
    // names candidates (each takeover re-checks its snapshot), and the claim
    // is one atomic UPDATE.
    let stale = if look_for_stale {
        sqlx::query(sql::STALE.text)
            .bind(queue)
            .bind(now)
            .bind(serde_json::to_string(refused).expect("ids serialize"))
            .bind(n)
            .fetch_all(pool)
            .await?
            .iter()
            .map(rows::stale)
            .collect::<StoreResult<Vec<_>>>()?
    } else {
        Vec::new()
    };
    let room = n - stale.len() as i64;
    let mut claimed = Vec::new();
    if room > 0 {
        let found = sqlx::query(sql::CLAIM.text)
            .bind(owner.host)
            .bind(owner.pid)
            .bind(owner.nonce)
            .bind(owner.start_time)
            .bind(owner.boot_id)
            .bind(now)
            .bind(lease_ms)
            .bind(queue)
            .bind(room)
            .fetch_all(pool)
            .await?;
        claimed = in_claim_order(&found)?;
    }
    Ok((
        ClaimRound {
            claimed,
            stale,
            now,
        },
        done,
    ))
}

/// Claimed rows in the queue's order (RETURNING order is unspecified).
fn in_claim_order(found: &[sqlx::sqlite::SqliteRow]) -> StoreResult<Vec<super::ClaimedJob>> {
    let mut keyed = found
        .iter()
        .map(|r| {
            let priority: i32 = r.try_get("priority")?;
            let run_at: i64 = r.try_get("run_at")?;
            Ok(((priority, run_at), rows::claimed(r, false)?))
        })
        .collect::<StoreResult<Vec<_>>>()?;
    keyed.sort_by_key(|((priority, run_at), job)| (*priority, *run_at, job.id));
    Ok(keyed.into_iter().map(|(_, job)| job).collect())
}

pub(crate) async fn take_over(
    pool: &SqlitePool,
    owner: &OwnerParams<'_>,
    lease_ms: i64,
    takeovers: &[Takeover<'_>],
    now: i64,
) -> StoreResult<Vec<TakenOver>> {
    let mut tx = immediate(pool).await?;
    let mut out = Vec::new();
    for t in takeovers {
        let c = t.candidate;
        let taken = sqlx::query(sql::TAKE_OVER.text)
            .bind(c.id)
            .bind(c.token)
            .bind(&c.owner.nonce)
            .bind(c.heartbeat_at)
            .bind(now)
            .bind(owner.host)
            .bind(owner.pid)
            .bind(owner.nonce)
            .bind(owner.start_time)
            .bind(owner.boot_id)
            .bind(lease_ms)
            .fetch_optional(&mut *tx)
            .await?;
        // The replaced owner's attempt, as the journal records it: lost,
        // or (on the last attempt) dead-lettered with the job.
        let replaced = |row: &sqlx::sqlite::SqliteRow, attempt: i64| -> StoreResult<Ended> {
            let owner = &c.owner;
            let (host, pid, nonce) = (owner.host_id.clone(), i64::from(owner.pid), owner.nonce.clone());
            Ok((c.id, c.token, row.try_get("queue")?, attempt, Some(host), Some(pid), Some(nonce)))
        };
        let result = match taken {
            Some(row) => {
                let claimed = rows::claimed(&row, true)?;
                let lost = replaced(&row, i64::from(claimed.attempt) - 1)?;
                journal(&mut tx, &[lost], "lost", Some(&t.note), None, now).await?;
                Some(TakenOver::Claimed(claimed))
            }
            None => {
                let note = format!("lease lost on the final attempt: {}", t.note);
                let buried = sqlx::query(sql::BURY.text)
                    .bind(c.id)
                    .bind(c.token)
                    .bind(&c.owner.nonce)
                    .bind(c.heartbeat_at)
                    .bind(now)
                    .bind(&note)
                    .fetch_optional(&mut *tx)
                    .await?;
                match buried {
                    Some(row) => {
                        let dead = replaced(&row, row.try_get("attempts")?)?;
                        journal(&mut tx, &[dead], "dead", Some(&note), None, now).await?;
                        Some(TakenOver::DeadLettered(c.id))
                    }
                    None => None,
                }
            }
        };
        let Some(result) = result else { continue };
        sqlx::query(sql::ATTEMPT_LOST.text)
            .bind(c.id)
            .bind(c.token)
            .bind(&c.owner.host_id)
            .bind(i64::from(c.owner.pid))
            .bind(&c.owner.nonce)
            .bind(c.owner.start_time.map(|t| t as i64))
            .bind(&c.owner.boot_id)
            .bind(c.claimed_at)
            .bind(now)
            .bind(&t.note)
            .execute(&mut *tx)
            .await?;
        out.push(result);
    }
    tx.commit().await?;
    Ok(out)
}

/// Fences as a JSON array of `[id, token]`, read by `json_each`.
fn pairs_json(pairs: &[(i64, i64)]) -> String {
    serde_json::to_string(pairs).expect("pairs of integers serialize")
}

pub(crate) async fn renew(
    pool: &SqlitePool,
    pairs: &[(i64, i64)],
    owner_nonce: Option<&str>,
    now: i64,
) -> StoreResult<Vec<i64>> {
    Ok(sqlx::query_scalar(sql::RENEW.text)
        .bind(pairs_json(pairs))
        .bind(now)
        .bind(owner_nonce)
        .fetch_all(pool)
        .await?)
}

pub(crate) async fn release(
    pool: &SqlitePool,
    pairs: &[(i64, i64)],
    now: i64,
) -> StoreResult<Vec<i64>> {
    let mut tx = immediate(pool).await?;
    let released: Vec<Ended> = sqlx::query_as(sql::RELEASE.text).bind(pairs_json(pairs)).fetch_all(&mut *tx).await?;
    journal(&mut tx, &released, "released", None, None, now).await?;
    tx.commit().await?;
    Ok(released.into_iter().map(|ended| ended.0).collect())
}

/// An attempt a settle ended, as the journal records it: job id, token,
/// queue, attempt number, owner host, pid and nonce.
type Ended = (i64, i64, String, i64, Option<String>, Option<i64>, Option<String>);

/// Journals `ended` (nothing when empty) as settled with `outcome`.
async fn journal(
    tx: &mut Transaction<'static, Sqlite>,
    ended: &[Ended],
    outcome: &str,
    error: Option<&str>,
    retry_at: Option<i64>,
    now: i64,
) -> StoreResult<()> {
    if ended.is_empty() {
        return Ok(());
    }
    sqlx::query(sql::JOURNAL.text)
        .bind(serde_json::to_string(ended).expect("numbers and strings serialize"))
        .bind(outcome)
        .bind(error)
        .bind(retry_at)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Completes the fenced jobs. `Keep`: one transaction marks them succeeded
/// and writes the results of those that landed (the succeeded attempt is
/// not logged: the job row keeps what inspection shows of it, see
/// [`rows::attempt_log`]). `Delete`: one transaction deletes the fenced
/// rows, then the attempt log and results of those that were deleted.
/// Either way the transaction journals each completion.
pub(crate) async fn complete(
    pool: &SqlitePool,
    pairs: &[(i64, i64)],
    results: &[Option<String>],
    on_success: OnSuccess,
    now: i64,
) -> StoreResult<Vec<i64>> {
    match on_success {
        OnSuccess::Keep => complete_kept(pool, pairs, results, now).await,
        OnSuccess::Delete => delete_completed(pool, pairs, now).await,
    }
}

/// [`complete`] under [`OnSuccess::Keep`]: answers the ids it completed.
async fn complete_kept(
    pool: &SqlitePool,
    pairs: &[(i64, i64)],
    results: &[Option<String>],
    now: i64,
) -> StoreResult<Vec<i64>> {
    let mut tx = immediate(pool).await?;
    let landed: Vec<Ended> = sqlx::query_as(sql::COMPLETE.text)
        .bind(pairs_json(pairs))
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
    journal(&mut tx, &landed, "done", None, None, now).await?;
    let kept = landed_results(pairs, results, &landed);
    if !kept.is_empty() {
        sqlx::query(sql::KEEP_RESULTS.text)
            .bind(serde_json::to_string(&kept).expect("ids and strings serialize"))
            .bind(now)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(landed.into_iter().map(|ended| ended.0).collect())
}

/// The results to keep: for each `(id, token)` that landed, the first
/// result given with that fence.
fn landed_results<'a>(
    pairs: &[(i64, i64)],
    results: &'a [Option<String>],
    landed: &[Ended],
) -> Vec<(i64, i64, &'a str)> {
    landed
        .iter()
        .filter_map(|&(id, token, ..)| {
            let i = pairs
                .iter()
                .zip(results)
                .position(|(&pair, result)| pair == (id, token) && result.is_some())?;
            Some((id, token, results[i].as_deref()?))
        })
        .collect()
}

/// [`complete`] under [`OnSuccess::Delete`]: answers the ids it deleted.
async fn delete_completed(pool: &SqlitePool, pairs: &[(i64, i64)], now: i64) -> StoreResult<Vec<i64>> {
    let mut tx = immediate(pool).await?;
    let ended: Vec<Ended> = sqlx::query_as(sql::COMPLETE_DELETING.text)
        .bind(pairs_json(pairs))
        .fetch_all(&mut *tx)
        .await?;
    // The journal keeps the completion of the job it deletes.
    journal(&mut tx, &ended, "done", None, None, now).await?;
    let deleted: Vec<i64> = ended.into_iter().map(|ended| ended.0).collect();
    if !deleted.is_empty() {
        let ids = serde_json::to_string(&deleted).expect("ids serialize");
        for statement in [sql::DELETE_ATTEMPTS, sql::DELETE_RESULTS] {
            sqlx::query(statement.text).bind(&ids).execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    Ok(deleted)
}

pub(crate) async fn fail(
    pool: &SqlitePool,
    (id, token): (i64, i64),
    error: &str,
    result: Option<&str>,
    retry_delays_ms: &[i64],
    now: i64,
) -> StoreResult<Option<(JobState, i64)>> {
    let mut tx = immediate(pool).await?;
    let row = sqlx::query(sql::FAIL.text)
        .bind(id)
        .bind(token)
        .bind(now)
        .bind(serde_json::to_string(retry_delays_ms).expect("integers serialize"))
        .bind(error)
        .fetch_optional(&mut *tx)
        .await?;
    let Some(row) = row else { return Ok(None) };
    let state: String = row.try_get("state")?;
    let run_at: i64 = row.try_get("run_at")?;
    let ended: Ended = (
        id,
        token,
        row.try_get("queue")?,
        row.try_get("attempts")?,
        row.try_get("owner_host")?,
        row.try_get("owner_pid")?,
        row.try_get("owner_nonce")?,
    );
    let (outcome, retry_at) = if state == "dead" { ("dead", None) } else { ("retrying", Some(run_at)) };
    journal(&mut tx, &[ended], outcome, Some(error), retry_at, now).await?;
    sqlx::query(sql::ATTEMPT_FAILED.text)
        .bind(id)
        .bind(now)
        .bind(error)
        .execute(&mut *tx)
        .await?;
    if let Some(result) = result {
        sqlx::query(sql::KEEP_RESULTS.text)
            .bind(serde_json::to_string(&[(id, token, result)]).expect("ids and strings serialize"))
            .bind(now)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    let state = JobState::parse(&state).ok_or_else(|| StoreError::CorruptRow {
        table: "leasehold_jobs",
        detail: format!("unknown state {state:?}"),
    })?;
    Ok(Some((state, run_at)))
}

pub(crate) async fn fence_rows(pool: &SqlitePool, ids: &[i64]) -> StoreResult<Vec<FenceRow>> {
    sqlx::query(sql::FENCE_ROWS.text)
        .bind(serde_json::to_string(ids).expect("ids serialize"))
        .fetch_all(pool)
        .await?
        .iter()
        .map(rows::fence_row)
        .collect()
}

pub(crate) async fn counts(pool: &SqlitePool) -> StoreResult<Vec<QueueCounts>> {
    let found = sqlx::query(sql::COUNTS.text)
        .fetch_all(pool)
        .await?;
    rows::counts(&found)
}

pub(crate) async fn job(pool: &SqlitePool, id: JobId) -> StoreResult<Option<JobRecord>> {
    // One read transaction: the job row and its attempt log from one snapshot.
    let mut tx = pool.begin().await?;
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
