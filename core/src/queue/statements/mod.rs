//! The queue's SQL statements, one per `.sql` file under `core/sql/`, for
//! each dialect the stores speak (PostgreSQL and SQLite), readable whole.
//!
//! A host executes these texts with its own driver and binds their
//! parameters in order: nothing else is SQL. Each file opens with a header
//! comment naming what the statement does, each parameter
//! (`-- $1 = name: meaning (type)`, `?1` for SQLite) and the rows it
//! returns; [`Statement::params`] holds those names, read off the header
//! when the crate is built (a header that does not name exactly the
//! parameters its SQL uses fails the build). Parts several statements share
//! word for word live once, in `core/sql/<dialect>/fragments/` (or in
//! `core/sql/fragments/` when both dialects' statements share them), and
//! the build splices them in (see `core/build.rs`): each text here is whole.
//!
//! - PostgreSQL texts stamp time with the server's clock
//!   (`statement_timestamp()` in ms since the Unix epoch); batches bind
//!   arrays, read with `unnest`. Each operation is one statement.
//! - SQLite texts take the caller's clock as a parameter; batches bind one
//!   JSON text read with `json_each`. Operations that write two tables run
//!   several statements in one `BEGIN IMMEDIATE` transaction
//!   ([`sqlite::BEGIN_IMMEDIATE`]): the file headers say which go together.

/// The PostgreSQL statements: one constant per file of `core/sql/postgres/`,
/// documented by its header and its SQL.
pub mod postgres {
    use super::{Dialect, Statement};
    include!(concat!(env!("OUT_DIR"), "/postgres_statements.rs"));
}

/// The SQLite statements: one constant per file of `core/sql/sqlite/`,
/// documented by its header and its SQL.
pub mod sqlite {
    use super::{Dialect, Statement};
    include!(concat!(env!("OUT_DIR"), "/sqlite_statements.rs"));
}

/// The SQL dialect a statement is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// PostgreSQL (placeholders `$1`, `$2`, …).
    Postgres,
    /// SQLite (placeholders `?1`, `?2`, …).
    Sqlite,
}

/// One SQL statement: its text as its file holds it with any shared
/// fragments spliced in (header comment included: both databases skip
/// comments) and its parameters' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Statement {
    /// The file's name without `.sql`, e.g. `"claim"`.
    pub name: &'static str,
    /// The dialect it is written in.
    pub dialect: Dialect,
    /// The SQL text, one statement (no trailing `;`).
    pub text: &'static str,
    /// The parameters' names in placeholder order: `params[0]` is `$1`
    /// (or `?1`). Empty for a statement that binds nothing.
    pub params: &'static [&'static str],
}
