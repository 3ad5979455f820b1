//! The SQLite backend: one file in WAL mode, the caller's clock.
//!
//! Batched inputs travel as one JSON text parameter read with `json_each`, so
//! a batch of any size is one statement. Operations that write two tables
//! (fail + attempt log, takeover + attempt log) run in one `BEGIN
//! IMMEDIATE` transaction, which takes the write lock up front: two
//! processes never interleave inside one, and a crash mid-way commits nothing.

mod claim;
mod enqueue;
mod journal;
mod purge;
mod settle;
mod steer;

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::error::BoxDynError;
use sqlx::sqlite::{SqliteArguments, SqliteConnection, SqliteQueryResult, SqliteRow};
use sqlx::{Arguments, Executor, Sqlite, Transaction};

use leasehold_core::queue::migrations::Migration;
use leasehold_core::queue::statements::Statement;
use leasehold_core::queue::statements::sqlite as sql;

use super::backend::{BoxFuture, boxed};
use super::db::{self, Arg, Db, Deliver, Offered, Upkeep, add_scalar};
use super::rows::DecodeRow;
use super::{BackendKind, StoreConfig, StoreError, StoreResult};

/// How long a writer waits for another process's write lock.
pub(crate) const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a write that must not wait ([`Db::execute_if_idle`]) waits for
/// a locked file.
const IF_IDLE_BUSY_MS: u128 = 20;

pub(crate) async fn connect(
    url: &str,
    redacted: &str,
    config: &StoreConfig,
) -> StoreResult<SqlitePool> {
    let unreachable = |source| StoreError::Unreachable {
        url: redacted.to_owned(),
        source,
    };
    if names_no_file(url) {
        return Err(StoreError::UnsupportedUrl { url: redacted.to_owned() });
    }
    if config.read_only {
        return connect_read_only(url, config).await.map_err(unreachable);
    }
    let options = SqliteConnectOptions::from_str(url).map_err(unreachable)?;
    if let Some(refusal) = read_only_file(options.get_filename()) {
        return Err(refusal);
    }
    let options = options
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
            other => {
                return other.map_err(|e| not_writable(options.get_filename(), &e).unwrap_or_else(|| unreachable(e)));
            }
        }
    }
}

/// Why SQLite could not open or write `path` (answered SQLITE_READONLY or
/// SQLITE_CANTOPEN, extended codes included), when this process may not
/// write it: the file, its `-wal` or `-shm` file, its folder (where SQLite
/// creates a missing file and those two; or no such folder) or a read-only
/// file system. `None` for
/// any other failure, or when both may be written (the driver's error says
/// more then).
fn not_writable(path: &std::path::Path, error: &sqlx::Error) -> Option<StoreError> {
    use rustix::fs::{access, Access};
    use rustix::io::Errno;
    let sqlx::Error::Database(db) = error else { return None };
    let code: i64 = db.code()?.parse().ok()?;
    // SQLITE_READONLY (8), SQLITE_CANTOPEN (14), in the low byte of an extended code.
    if !matches!(code & 0xff, 8 | 14) {
        return None;
    }
    if let Some(refusal) = read_only_file(path) {
        return Some(refusal);
    }
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => std::path::Path::new("."),
    };
    let reason = match access(folder, Access::WRITE_OK | Access::EXEC_OK) {
        Err(Errno::ROFS) => format!("it is on a read-only file system ({})", folder.display()),
        Err(Errno::NOENT) if !path.exists() => {
            format!("its folder {} does not exist: SQLite creates the file, not its folder", folder.display())
        }
        Err(Errno::ACCESS | Errno::PERM) if !path.exists() => {
            format!("its folder {} may not be written by this process, so the file can not be created in it", folder.display())
        }
        Err(Errno::ACCESS | Errno::PERM) => format!(
            "its folder {} may not be written by this process, and SQLite writes its -wal and -shm files beside \
             the file; it can still be opened read-only",
            folder.display()
        ),
        // Writable, or missing (a folder that does not exist): the driver's error stands.
        _ => return None,
    };
    Some(StoreError::NotWritable { path: path.to_owned(), reason })
}

/// Refuses an existing file this process may not write, or whose `-wal` or
/// `-shm` file it may not write, before SQLite opens it: SQLite would open
/// it all the same and refuse only the first write (a migration, an
/// enqueue) with its bare SQLITE_READONLY.
fn read_only_file(path: &std::path::Path) -> Option<StoreError> {
    use rustix::fs::{access, Access};
    use rustix::io::Errno;
    if !path.is_file() {
        return None;
    }
    let reason = match access(path, Access::WRITE_OK) {
        Err(Errno::ROFS) => "it is on a read-only file system; it can still be opened read-only".to_owned(),
        Err(_) => "the file may not be written by this process (it is read-only to it); it can still be opened read-only".to_owned(),
        Ok(()) => {
            // Made by a process of another user that has the file open, or left by one that did not close it.
            let beside = |suffix: &str| {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                std::path::PathBuf::from(name)
            };
            let (suffix, file) = ["-wal", "-shm"]
                .into_iter()
                .map(|suffix| (suffix, beside(suffix)))
                .find(|(_, file)| file.is_file() && access(file, Access::WRITE_OK).is_err())?;
            format!(
                "its {suffix} file {} may not be written by this process (a process of another user made it); \
                 it can still be opened read-only",
                file.display()
            )
        }
    };
    Some(StoreError::NotWritable { path: path.to_owned(), reason })
}

/// Whether a `sqlite:` URL names no file and no in-memory database
/// (`sqlite:`, `sqlite://`, `sqlite://?mode=rwc`): SQLite opens a private
/// temporary database for an empty file name, deleted when it closes, so
/// whatever was queued there (say, with a path from an unset variable) would
/// be gone without a word. Read as sqlx reads the URL.
fn names_no_file(url: &str) -> bool {
    let rest = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let (file, params) = rest.split_once('?').unwrap_or((rest, ""));
    file.is_empty() && !params.split('&').any(|param| param == "mode=memory")
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

pub(super) async fn immediate(pool: &SqlitePool) -> StoreResult<Transaction<'static, Sqlite>> {
    Ok(pool.begin_with(sql::BEGIN_IMMEDIATE.text).await?)
}

/// SQLite binds a list of ids as the text of a JSON array (read with
/// `json_each`) and stamps time with the caller's clock.
impl Db for Sqlite {
    const KIND: BackendKind = BackendKind::Sqlite;
    const STATEMENTS: &'static [Statement] = sql::ALL;
    const READ_SNAPSHOT: Option<&'static Statement> = None;
    const SERVER_CLOCK: Option<&'static Statement> = None;
    const BEGIN_WRITE: Option<&'static Statement> = Some(&sql::BEGIN_IMMEDIATE);
    const MIGRATION_LOCK: Option<&'static Statement> = None;
    const NOTIFY: Option<&'static Statement> = None;

    fn add(args: &mut SqliteArguments, value: Arg<'_>) -> Result<(), BoxDynError> {
        match value {
            Arg::Ids(ids) => args.add(serde_json::to_string(ids)?),
            Arg::Texts(texts) => args.add(serde_json::to_string(texts)?),
            scalar => add_scalar::<Sqlite>(args, scalar),
        }
    }

    /// Only if the pool's connection is free (a SQLite pool has one
    /// writer), waiting at most [`IF_IDLE_BUSY_MS`] for a locked file: a
    /// write stuck behind a lock would hold the connection the worker's
    /// claims and renewals need. The connection's busy timeout is put back
    /// after; a connection where that fails is closed rather than returned
    /// to the pool with the short one.
    fn execute_if_idle<'a>(pool: &'a SqlitePool, statement: &'static Statement, offered: Offered<'a>) -> BoxFuture<'a, Option<u64>> {
        boxed(async move {
            let Some(mut conn) = pool.try_acquire() else { return Ok(None) };
            let set = |ms: u128| sqlx::AssertSqlSafe(format!("PRAGMA busy_timeout = {ms}"));
            sqlx::raw_sql(set(IF_IDLE_BUSY_MS)).execute(&mut *conn).await?;
            let written = db::query(statement, offered)?.execute(&mut *conn).await;
            if sqlx::raw_sql(set(BUSY_TIMEOUT.as_millis())).execute(&mut *conn).await.is_err() {
                conn.close_on_drop();
            }
            match written {
                Ok(done) => Ok(Some(done.rows_affected())),
                Err(e) if is_busy(&e) => Ok(None),
                Err(e) => Err(e.into()),
            }
        })
    }

    fn listen(_pool: &SqlitePool, _deliver: Deliver) -> BoxFuture<'_, Option<tokio::task::JoinHandle<()>>> {
        boxed(async { Ok(None) })
    }

    /// None: SQLite reuses a deleted row's space without one.
    fn vacuum(_pool: &SqlitePool) -> Option<Upkeep> {
        None
    }

    fn script(migration: &Migration) -> &'static str {
        migration.sqlite
    }

    /// The journal's id.
    fn journal_key(row: &SqliteRow, i: usize) -> StoreResult<Option<u64>> {
        Ok(row.opt_int_at(i)?.map(|id| id.max(0) as u64))
    }

    fn rows_affected(result: &SqliteQueryResult) -> u64 {
        result.rows_affected()
    }

    fn on_pool(pool: &SqlitePool) -> impl Executor<'_, Database = Sqlite> {
        pool
    }

    fn on_conn(conn: &mut SqliteConnection) -> impl Executor<'_, Database = Sqlite> {
        conn
    }
}
