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

use leasehold_core::queue::statements::Statement;

use super::rows::DecodeRow;
use super::{BackendKind, StoreResult};

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

    /// Adds one value to `args` as this database binds it.
    fn add(args: &mut Self::Arguments, value: Arg<'_>) -> Result<(), sqlx::error::BoxDynError>;

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
    for<'q> Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    use sqlx::Arguments;
    match value {
        Arg::Int(v) => args.add(v),
        Arg::Int32(v) => args.add(v),
        Arg::Text(v) => args.add(v),
        Arg::Bool(v) => args.add(v),
        Arg::Ids(_) => Err("a list of ids binds as its backend's list form".into()),
    }
}
