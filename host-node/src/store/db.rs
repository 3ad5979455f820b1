//! Running one statement of the catalogue (`core/sql/*/`) on either
//! database, written once: a flow that is the same on SQLite and PostgreSQL
//! but for its statements' texts is generic over [`Db`], names its
//! statements by file name (checked when the crate is built) and binds its
//! values by parameter name ([`Arg`]).
//!
//! Binding by name is what lets one flow serve both databases where their
//! statements take different parameters: a SQLite statement stamps time
//! with the caller's clock and binds `now`, its PostgreSQL twin reads the
//! server's clock and does not; the flow offers `now` and each statement
//! takes what its header names.

use sqlx::{Executor, IntoArguments, Pool};

use leasehold_core::queue::migrations::Migration;
use leasehold_core::queue::statements::Statement;

use super::backend::{BoxFuture, boxed};
use super::rows::DecodeRow;
use super::{BackendKind, Store, StoreResult};

/// Receives a LISTEN connection's notifications: `Some(queue)` per
/// notification, `None` after the connection was lost (notifications may
/// have been missed); answers `false` once nobody listens any more.
pub(crate) type Deliver = Box<dyn Fn(Option<&str>) -> bool + Send + Sync + 'static>;

/// Upkeep run in the background, that no caller waits for.
pub(crate) type Upkeep = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'static>>;

/// A value offered to a statement's parameter of the same name.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg<'a> {
    /// An integer (NULL when `None`).
    Int(Option<i64>),
    /// A 32-bit integer (a column declared `INTEGER` on PostgreSQL).
    Int32(i32),
    /// A text (NULL when `None`).
    Text(Option<&'a str>),
    /// A boolean.
    Bool(bool),
    /// An unsigned number bound as its decimal text (a transaction id,
    /// which PostgreSQL reads from text).
    Decimal(u64),
    /// A list of texts: an array on PostgreSQL, a JSON array's text on
    /// SQLite.
    Texts(&'a [&'a str]),
    /// A list of ids: an array on PostgreSQL, a JSON array's text on SQLite.
    Ids(&'a [i64]),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(Some(v))
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(v: Option<i64>) -> Self {
        Arg::Int(v)
    }
}

impl From<i32> for Arg<'_> {
    fn from(v: i32) -> Self {
        Arg::Int32(v)
    }
}

impl From<bool> for Arg<'_> {
    fn from(v: bool) -> Self {
        Arg::Bool(v)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(Some(v))
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Arg::Text(v)
    }
}

impl<'a> From<&'a [i64]> for Arg<'a> {
    fn from(v: &'a [i64]) -> Self {
        Arg::Ids(v)
    }
}

/// One database's driver and statement catalogue: what a generic flow
/// needs to run a statement on it. Implemented by `sqlx::Sqlite` (in
/// `sqlite/`) and `sqlx::Postgres` (in `postgres/`).
pub(crate) trait Db: sqlx::Database<Row: DecodeRow, Arguments: IntoArguments<Self>> {
    /// Which database this is.
    const KIND: BackendKind;
    /// Its statements, one per file of its `core/sql/` folder.
    const STATEMENTS: &'static [Statement];
    /// The statement that wakes a queue's listeners when its transaction
    /// commits (`queue` bound), where the database has one.
    const NOTIFY: Option<&'static Statement>;
    /// The statement that begins a transaction holding the write lock from
    /// its start, where a plain `BEGIN` does not (SQLite's `BEGIN IMMEDIATE`).
    const BEGIN_WRITE: Option<&'static Statement>;
    /// The statement that takes the migration lock in a transaction
    /// (`key` bound), where the write lock is not that lock already.
    const MIGRATION_LOCK: Option<&'static Statement>;
    /// The statement that reads the server's clock (ms since the Unix
    /// epoch), where the database stamps with its own.
    const SERVER_CLOCK: Option<&'static Statement>;
    /// The statement that begins a read-only transaction reading one
    /// snapshot, where a plain `BEGIN` does not (SQLite's does).
    const READ_SNAPSHOT: Option<&'static Statement>;

    /// Adds one value to `args` as this database binds it.
    fn add(args: &mut Self::Arguments, value: Arg<'_>) -> Result<(), sqlx::error::BoxDynError>;

    /// Runs `statement` with `offered` on `pool` only if that costs no
    /// wait: answers `None` when it would have waited (see each backend).
    fn execute_if_idle<'a>(pool: &'a Pool<Self>, statement: &'static Statement, offered: Offered<'a>) -> BoxFuture<'a, Option<u64>>;

    /// Opens the database's LISTEN connection on `pool` and spawns the task
    /// that hands its notifications to `deliver` (see [`Deliver`]); `None`
    /// where the database has none (SQLite: the store's local wakers are
    /// all there is).
    fn listen(pool: &Pool<Self>, deliver: Deliver) -> BoxFuture<'_, Option<tokio::task::JoinHandle<()>>>;

    /// The background vacuum of the jobs table, where the database wants
    /// one (PostgreSQL: see `store::vacuum`).
    fn vacuum(pool: &Pool<Self>) -> Option<Upkeep>;

    /// The script of `migration` this database runs.
    fn script(migration: &Migration) -> &'static str;

    /// Column `i` of `row`, a position in the settlements journal's commit
    /// order (NULL: `None`).
    fn journal_key(row: &Self::Row, i: usize) -> StoreResult<Option<u64>>;

    /// How many rows a statement changed.
    fn rows_affected(result: &Self::QueryResult) -> u64;

    /// The pool as an executor.
    fn on_pool(pool: &Pool<Self>) -> impl Executor<'_, Database = Self>;

    /// A connection (a transaction's) as an executor.
    fn on_conn(conn: &mut Self::Connection) -> impl Executor<'_, Database = Self>;
}

/// The statement named `name` (its file name without `.sql`) of `DB`'s
/// catalogue. Call it in a `const` block: a name the catalogue lacks then
/// fails the build.
pub(crate) const fn statement<DB: Db>(name: &str) -> &'static Statement {
    let all = DB::STATEMENTS;
    let mut i = 0;
    while i < all.len() {
        if same(all[i].name.as_bytes(), name.as_bytes()) {
            return &all[i];
        }
        i += 1;
    }
    panic!("no such statement in the catalogue");
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// `statement`'s parameters bound from `offered` by name, in placeholder
/// order; offered values it does not name are left out. A parameter none
/// is offered for is a fault of the caller, answered as an error naming it.
fn bind<DB: Db>(statement: &Statement, offered: &[(&str, Arg<'_>)]) -> StoreResult<DB::Arguments> {
    let mut args = DB::Arguments::default();
    for param in statement.params {
        let Some((_, value)) = offered.iter().find(|(name, _)| name == param) else {
            return Err(sqlx::Error::Protocol(format!("{} needs {param}, which was not offered", statement.name)).into());
        };
        DB::add(&mut args, *value).map_err(sqlx::Error::Encode)?;
    }
    Ok(args)
}

/// `statement` with `offered` bound, to run on an executor.
pub(crate) fn query<DB: Db>(
    statement: &'static Statement,
    offered: &[(&str, Arg<'_>)],
) -> StoreResult<sqlx::query::Query<'static, DB, DB::Arguments>> {
    Ok(sqlx::query_with(statement.text, bind::<DB>(statement, offered)?))
}

/// Runs `statement` with `offered` on `on`; answers how many rows it
/// changed.
pub(crate) async fn execute<'c, DB: Db>(
    on: impl Executor<'c, Database = DB>,
    statement: &'static Statement,
    offered: &[(&str, Arg<'_>)],
) -> StoreResult<u64> {
    Ok(DB::rows_affected(&query(statement, offered)?.execute(on).await?))
}

/// The scalar types both databases bind the same way; each backend's
/// [`Db::add`] hands these here and binds only its list form itself.
pub(crate) fn add_scalar<DB: sqlx::Database>(
    args: &mut DB::Arguments,
    value: Arg<'_>,
) -> Result<(), sqlx::error::BoxDynError>
where
    for<'q> Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i32: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> bool: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    use sqlx::Arguments;
    match value {
        Arg::Int(v) => args.add(v),
        Arg::Int32(v) => args.add(v),
        Arg::Text(v) => args.add(v),
        Arg::Bool(v) => args.add(v),
        Arg::Decimal(v) => args.add(v.to_string()),
        Arg::Ids(_) | Arg::Texts(_) => Err("a list binds as its backend's list form".into()),
    }
}

/// The statement named `name` of `DB`'s catalogue, looked up when it runs.
fn named<DB: Db>(name: &str) -> StoreResult<&'static Statement> {
    DB::STATEMENTS.iter().find(|s| s.name == name).ok_or_else(|| {
        sqlx::Error::Protocol(format!("the {:?} catalogue has no statement {name}", DB::KIND)).into()
    })
}

/// A row of either database, read by column name (rows own their data).
pub(crate) type AnyRow = dyn DecodeRow + 'static;

/// Hands each row of a read to the caller's decoder.
pub(crate) type EachRow<'a> = &'a mut (dyn FnMut(&AnyRow) -> StoreResult<()> + Send);

/// Values offered by parameter name.
pub(crate) type Offered<'a> = &'a [(&'a str, Arg<'a>)];

/// Several reads from one snapshot, each named once the rows of the one
/// before it were seen.
pub(crate) trait SnapshotReader {
    /// The next read: a statement's name and the values offered to it;
    /// `None` when done.
    fn next_read(&mut self) -> Option<(&'static str, Vec<(&'static str, Arg<'_>)>)>;

    /// One row of the read named last.
    fn row(&mut self, row: &AnyRow) -> StoreResult<()>;
}

/// Running a statement of the catalogue by name: what a flow that is the
/// same on both databases asks of its backend. Rows are handed to the
/// caller as [`DecodeRow`]s, read by column name.
pub(crate) trait Statements {
    /// Runs the statement `name` with `offered`; hands `each` its rows.
    fn fetch<'a>(&'a self, name: &'a str, offered: Offered<'a>, each: EachRow<'a>) -> BoxFuture<'a, ()>;

    /// Runs the reads `reader` names, in turn, from one snapshot (a
    /// read-only transaction), handing it each read's rows before asking
    /// for the next.
    fn read_snapshot<'a>(&'a self, reader: &'a mut (dyn SnapshotReader + Send)) -> BoxFuture<'a, ()>;

    /// Runs the statement `name` with `offered`; answers how many rows it
    /// changed.
    fn execute<'a>(&'a self, name: &'a str, offered: Offered<'a>) -> BoxFuture<'a, u64>;

    /// As [`Statements::execute`] if that costs no wait; `None` when it
    /// would have waited (a background write that must not hold up claims).
    fn execute_if_idle<'a>(&'a self, name: &'a str, offered: Offered<'a>) -> BoxFuture<'a, Option<u64>>;
}

impl<DB: Db> Statements for Pool<DB> {
    fn fetch<'a>(&'a self, name: &'a str, offered: Offered<'a>, each: EachRow<'a>) -> BoxFuture<'a, ()> {
        boxed(async move {
            let rows = query(named::<DB>(name)?, offered)?.fetch_all(DB::on_pool(self)).await?;
            rows.iter().try_for_each(|row| each(row))
        })
    }

    fn read_snapshot<'a>(&'a self, reader: &'a mut (dyn SnapshotReader + Send)) -> BoxFuture<'a, ()> {
        boxed(async move {
            let mut tx = match DB::READ_SNAPSHOT {
                Some(begin) => self.begin_with(begin.text).await?,
                None => self.begin().await?,
            };
            while let Some((name, offered)) = reader.next_read() {
                let read = query(named::<DB>(name)?, &offered)?;
                drop(offered);
                for row in read.fetch_all(DB::on_conn(&mut tx)).await? {
                    reader.row(&row)?;
                }
            }
            Ok(tx.commit().await?)
        })
    }

    fn execute<'a>(&'a self, name: &'a str, offered: Offered<'a>) -> BoxFuture<'a, u64> {
        boxed(async move { execute(DB::on_pool(self), named::<DB>(name)?, offered).await })
    }

    fn execute_if_idle<'a>(&'a self, name: &'a str, offered: Offered<'a>) -> BoxFuture<'a, Option<u64>> {
        boxed(async move { DB::execute_if_idle(self, named::<DB>(name)?, offered).await })
    }
}

impl Store {
    /// The rows of the statement `name` run with `offered`, each decoded by
    /// `decode`.
    pub(crate) async fn rows<T: Send>(
        &self,
        name: &str,
        offered: Offered<'_>,
        decode: impl Fn(&AnyRow) -> StoreResult<T> + Send + Sync,
    ) -> StoreResult<Vec<T>> {
        let mut found = Vec::new();
        let mut keep = |row: &AnyRow| {
            found.push(decode(row)?);
            Ok(())
        };
        self.backend().fetch(name, offered, &mut keep).await?;
        Ok(found)
    }

    /// Runs the reads `names` in order from one snapshot, each with
    /// `offered`; hands `each` every row with its read's index.
    pub(crate) async fn read_together(
        &self,
        names: &[&'static str],
        offered: &[(&'static str, Arg<'_>)],
        each: impl FnMut(usize, &AnyRow) -> StoreResult<()> + Send,
    ) -> StoreResult<()> {
        let mut reads = Together { names, offered, next: 0, each };
        self.backend().read_snapshot(&mut reads).await
    }

    /// Runs the statement `name` with `offered`; answers how many rows it
    /// changed.
    pub(crate) async fn run(&self, name: &str, offered: Offered<'_>) -> StoreResult<u64> {
        self.backend().execute(name, offered).await
    }
}

/// Reads named up front, each with the same values ([`Store::read_together`]).
struct Together<'a, F> {
    names: &'a [&'static str],
    offered: &'a [(&'static str, Arg<'a>)],
    /// The index of the next read.
    next: usize,
    each: F,
}

impl<F: FnMut(usize, &AnyRow) -> StoreResult<()>> SnapshotReader for Together<'_, F> {
    fn next_read(&mut self) -> Option<(&'static str, Vec<(&'static str, Arg<'_>)>)> {
        let name = self.names.get(self.next)?;
        self.next += 1;
        Some((name, self.offered.to_vec()))
    }

    fn row(&mut self, row: &AnyRow) -> StoreResult<()> {
        (self.each)(self.next - 1, row)
    }
}
