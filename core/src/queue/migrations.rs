//! The queue's schema as migrations, one `.sql` file per migration and
//! dialect under `core/sql/<dialect>/migrations/`, named `NNNN_name.sql`.
//!
//! A host installs the ones a database lacks, in number order, each with its
//! record in `leasehold_migrations` (id = [`ID_BLOCK`] + number, namespace
//! [`NAMESPACE`], name), in one transaction under the database's migration
//! lock (`migration_lock.sql` on PostgreSQL, `begin_immediate.sql` on
//! SQLite); see the `leasehold` crate's `store::migrate` for the rules
//! (refusing a database a newer build migrated, or one whose records
//! disagree).

/// One migration: its number within its set and its script for each
/// dialect (several statements, `;`-separated, run as one script).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Migration {
    /// 1 ..= 999; its id is the set's id block + this number.
    pub number: i64,
    /// A stable name, recorded with the id and compared on every start.
    pub name: &'static str,
    /// The SQLite script.
    pub sqlite: &'static str,
    /// The PostgreSQL script.
    pub postgres: &'static str,
}

/// The namespace the queue's migrations are recorded under.
pub const NAMESPACE: &str = "leasehold-queue";

/// The first id of the queue's block of migration ids (1000..2000).
pub const ID_BLOCK: i64 = 1000;

/// Ids each migration set reserves (the queue's: [`ID_BLOCK`] onwards).
pub const ID_BLOCK_SIZE: i64 = 1000;

/// The advisory-lock key PostgreSQL migrations hold to the commit
/// (`'leasehol'` in ASCII as an int8), so two processes migrating at once
/// take turns.
pub const PG_MIGRATION_LOCK_KEY: i64 = 0x6c65_6173_6568_6f6c;

/// The queue's migrations, in number order: one per file name of
/// `core/sql/<dialect>/migrations/` (`NNNN_name.sql`, the same names in
/// both dialects).
pub const QUEUE: &[Migration] = include!(concat!(env!("OUT_DIR"), "/migrations.rs"));
