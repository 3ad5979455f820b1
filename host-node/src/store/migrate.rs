//! Namespaced migration sets with reserved id blocks.
//!
//! Every applied migration is one row of `leasehold_migrations` (id,
//! namespace, name, applied_at). A set owns the ids
//! `[id_block, id_block + ID_BLOCK_SIZE)`; its migration number `n` is stored
//! as `id_block + n`. Running the sets:
//!
//! - installs the missing migrations in id order and records each, all in
//!   one transaction, so installing twice changes nothing;
//! - holds the database's migration lock for that transaction (PostgreSQL: a
//!   transaction-scoped advisory lock; SQLite: `BEGIN IMMEDIATE`), so two
//!   processes migrating at once take turns and the second finds nothing to do;
//! - refuses a database whose block holds an id above this build's newest
//!   ([`StoreError::SchemaTooNew`]) or an id recorded under another name or
//!   namespace ([`StoreError::MigrationMismatch`]), before changing anything.
//!
//! [`plan`] is the pure part (which migrations to apply, or why not), shared
//! by both backends.

use std::collections::{BTreeMap, BTreeSet};

use super::backend::{BoxFuture, Migrations, boxed};
use super::db::{self, Db, statement};
use super::rows::DecodeRow;
use super::{StoreError, StoreResult};

/// Ids each migration set reserves, and the advisory-lock key PostgreSQL
/// migrations hold (the core's: the npm package's stores migrate the same
/// database under the same lock).
pub use leasehold_core::queue::migrations::{ID_BLOCK_SIZE, PG_MIGRATION_LOCK_KEY};

/// One migration: its number within its set and its script for each
/// backend (the core's type).
pub use leasehold_core::queue::migrations::Migration;

/// A namespaced migration set owning one id block.
#[derive(Clone, Copy, Debug)]
pub struct MigrationSet {
    /// The owner's name, recorded with each id.
    pub namespace: &'static str,
    /// First id of the block: a positive multiple of [`ID_BLOCK_SIZE`].
    pub id_block: i64,
    /// The migrations in ascending number order.
    pub migrations: &'static [Migration],
}

impl MigrationSet {
    fn id(&self, migration: &Migration) -> i64 {
        self.id_block + migration.number
    }

    fn owns(&self, id: i64) -> bool {
        (self.id_block..self.id_block + ID_BLOCK_SIZE).contains(&id)
    }
}

/// One row of `leasehold_migrations`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppliedMigration {
    /// The id.
    pub id: i64,
    /// The recorded namespace.
    pub namespace: String,
    /// The recorded name.
    pub name: String,
}

/// A migration to install.
#[derive(Clone, Copy, Debug)]
pub struct Pending<'a> {
    /// Its id.
    pub id: i64,
    /// Its set's namespace.
    pub namespace: &'static str,
    /// The migration.
    pub migration: &'a Migration,
}

/// Checks that `sets` compose: distinct namespaces and blocks, blocks that
/// are positive multiples of [`ID_BLOCK_SIZE`], numbers strictly ascending in
/// `1..ID_BLOCK_SIZE`.
pub fn check_sets(sets: &[&MigrationSet]) -> StoreResult<()> {
    let fail = |msg: String| Err(StoreError::InvalidMigrationSets(msg));
    let mut namespaces = BTreeSet::new();
    let mut blocks = BTreeSet::new();
    for set in sets {
        if !namespaces.insert(set.namespace) {
            return fail(format!("namespace {:?} appears twice", set.namespace));
        }
        if set.id_block <= 0 || set.id_block % ID_BLOCK_SIZE != 0 {
            return fail(format!(
                "{:?}: id block {} is not a positive multiple of {ID_BLOCK_SIZE}",
                set.namespace, set.id_block
            ));
        }
        if !blocks.insert(set.id_block) {
            return fail(format!(
                "{:?}: id block {} is taken",
                set.namespace, set.id_block
            ));
        }
        let mut last = 0;
        for m in set.migrations {
            if m.number <= last || m.number >= ID_BLOCK_SIZE {
                return fail(format!(
                    "{:?}: migration {} ({:?}) is not ascending within 1..{ID_BLOCK_SIZE}",
                    set.namespace, m.number, m.name
                ));
            }
            last = m.number;
        }
    }
    Ok(())
}

/// Decides what to install: the migrations of `sets` not in `applied`, in id
/// order, or the reason to refuse the database (see the module docs).
/// Applied ids outside every set's block belong to other owners and are left
/// alone.
pub fn plan<'a>(
    sets: &[&'a MigrationSet],
    applied: &[AppliedMigration],
) -> StoreResult<Vec<Pending<'a>>> {
    check_sets(sets)?;
    let applied: BTreeMap<i64, &AppliedMigration> = applied.iter().map(|a| (a.id, a)).collect();
    let mut pending = Vec::new();
    for set in sets {
        let known: BTreeMap<i64, &Migration> =
            set.migrations.iter().map(|m| (set.id(m), m)).collect();
        let newest_known = known.keys().next_back().copied().unwrap_or(set.id_block);
        for (&id, row) in applied.range(set.id_block..set.id_block + ID_BLOCK_SIZE) {
            debug_assert!(set.owns(id));
            match known.get(&id) {
                None if id > newest_known => {
                    // Report the newest applied id, the most useful number to a reader.
                    let (&top, top_row) = applied
                        .range(set.id_block..set.id_block + ID_BLOCK_SIZE)
                        .next_back()
                        .unwrap_or((&id, row));
                    return Err(StoreError::SchemaTooNew {
                        namespace: set.namespace.to_owned(),
                        applied_id: top,
                        applied_name: top_row.name.clone(),
                        known_id: newest_known,
                    });
                }
                None => {
                    return Err(mismatch(id, set.namespace, "(none)", row));
                }
                Some(m) if m.name != row.name || set.namespace != row.namespace => {
                    return Err(mismatch(id, set.namespace, m.name, row));
                }
                Some(_) => {}
            }
        }
        for (&id, m) in &known {
            if !applied.contains_key(&id) {
                pending.push(Pending {
                    id,
                    namespace: set.namespace,
                    migration: m,
                });
            }
        }
    }
    pending.sort_by_key(|p| p.id);
    Ok(pending)
}

fn mismatch(id: i64, namespace: &str, expected: &str, row: &AppliedMigration) -> StoreError {
    StoreError::MigrationMismatch {
        id,
        namespace: namespace.to_owned(),
        expected_name: expected.to_owned(),
        found_namespace: row.namespace.clone(),
        found_name: row.name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &[Migration] = &[
        Migration {
            number: 1,
            name: "0001_a",
            sqlite: "",
            postgres: "",
        },
        Migration {
            number: 2,
            name: "0002_b",
            sqlite: "",
            postgres: "",
        },
    ];
    const SET_A: MigrationSet = MigrationSet {
        namespace: "a",
        id_block: 1000,
        migrations: A,
    };
    const SET_B: MigrationSet = MigrationSet {
        namespace: "b",
        id_block: 2000,
        migrations: A,
    };

    fn row(id: i64, namespace: &str, name: &str) -> AppliedMigration {
        AppliedMigration {
            id,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    #[test]
    fn fresh_database_gets_every_migration_in_id_order() {
        let ids: Vec<i64> = plan(&[&SET_B, &SET_A], &[])
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(ids, [1001, 1002, 2001, 2002]);
    }

    #[test]
    fn fully_migrated_database_plans_nothing() {
        let applied = [row(1001, "a", "0001_a"), row(1002, "a", "0002_b")];
        assert!(plan(&[&SET_A], &applied).unwrap().is_empty());
    }

    #[test]
    fn partly_migrated_database_gets_the_rest() {
        let applied = [row(1001, "a", "0001_a")];
        let ids: Vec<i64> = plan(&[&SET_A], &applied)
            .unwrap()
            .iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(ids, [1002]);
    }

    #[test]
    fn a_gap_in_the_numbers_is_filled_when_its_migration_arrives() {
        // Numbers need not be contiguous: a database that got 1 and 3 (a
        // build without 2) gets 2 from a build that has it.
        const GAPPED: &[Migration] = &[
            Migration { number: 1, name: "0001_a", sqlite: "", postgres: "" },
            Migration { number: 2, name: "0002_b", sqlite: "", postgres: "" },
            Migration { number: 3, name: "0003_c", sqlite: "", postgres: "" },
        ];
        let set = MigrationSet { namespace: "a", id_block: 1000, migrations: GAPPED };
        let applied = [row(1001, "a", "0001_a"), row(1003, "a", "0003_c")];
        let ids: Vec<i64> = plan(&[&set], &applied).unwrap().iter().map(|p| p.id).collect();
        assert_eq!(ids, [1002]);
    }

    #[test]
    fn database_migrated_by_a_newer_version_is_refused() {
        let applied = [
            row(1001, "a", "0001_a"),
            row(1002, "a", "0002_b"),
            row(1003, "a", "0003_c"),
        ];
        match plan(&[&SET_A], &applied).unwrap_err() {
            StoreError::SchemaTooNew {
                namespace,
                applied_id,
                known_id,
                applied_name,
            } => {
                assert_eq!(
                    (namespace.as_str(), applied_id, known_id),
                    ("a", 1003, 1002)
                );
                assert_eq!(applied_name, "0003_c");
            }
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn renamed_migration_is_refused_as_a_mismatch() {
        let applied = [row(1001, "a", "0001_other")];
        assert!(matches!(
            plan(&[&SET_A], &applied).unwrap_err(),
            StoreError::MigrationMismatch { id: 1001, .. }
        ));
    }

    #[test]
    fn id_recorded_by_another_namespace_is_refused() {
        let applied = [row(1001, "intruder", "0001_a")];
        assert!(matches!(
            plan(&[&SET_A], &applied).unwrap_err(),
            StoreError::MigrationMismatch { .. }
        ));
    }

    #[test]
    fn other_owners_blocks_are_left_alone() {
        let applied = [row(7001, "someone-else", "0001_x")];
        assert_eq!(plan(&[&SET_A], &applied).unwrap().len(), 2);
    }

    #[test]
    fn sets_sharing_a_block_or_namespace_do_not_compose() {
        let clash = MigrationSet {
            namespace: "c",
            id_block: 1000,
            migrations: A,
        };
        assert!(check_sets(&[&SET_A, &clash]).is_err());
        let twin = MigrationSet {
            namespace: "a",
            id_block: 3000,
            migrations: A,
        };
        assert!(check_sets(&[&SET_A, &twin]).is_err());
    }

    #[test]
    fn block_off_the_grid_and_unordered_numbers_are_refused() {
        let off = MigrationSet {
            namespace: "c",
            id_block: 1500,
            migrations: A,
        };
        assert!(check_sets(&[&off]).is_err());
        const BACKWARDS: &[Migration] = &[
            Migration {
                number: 2,
                name: "x",
                sqlite: "",
                postgres: "",
            },
            Migration {
                number: 1,
                name: "y",
                sqlite: "",
                postgres: "",
            },
        ];
        let unordered = MigrationSet {
            namespace: "c",
            id_block: 3000,
            migrations: BACKWARDS,
        };
        assert!(check_sets(&[&unordered]).is_err());
    }
}

/// Installing migration sets, the one flow both databases run: in one
/// transaction that holds the database's migration lock — SQLite's
/// `BEGIN IMMEDIATE` write lock, so two processes opening one new file never
/// both apply a migration; PostgreSQL's transaction-scoped advisory lock,
/// released by the commit (or by the server if this connection dies), so
/// concurrent migrators queue and a crashed one never wedges the next.
impl<DB: Db> Migrations for sqlx::Pool<DB> {
    fn migrate<'a>(&'a self, sets: &'a [&'a MigrationSet]) -> BoxFuture<'a, ()> {
        boxed(async move {
            let mut tx = match DB::BEGIN_WRITE {
                Some(begin) => self.begin_with(begin.text).await?,
                None => self.begin().await?,
            };
            if let Some(lock) = DB::MIGRATION_LOCK {
                db::execute(DB::on_conn(&mut tx), lock, &[("key", PG_MIGRATION_LOCK_KEY.into())]).await?;
            }
            db::execute(DB::on_conn(&mut tx), const { statement::<DB>("migrations_table") }, &[]).await?;
            let applied = db::query(const { statement::<DB>("migrations_applied") }, &[])?
                .fetch_all(DB::on_conn(&mut tx))
                .await?
                .iter()
                .map(|row| Ok(AppliedMigration { id: row.int("id")?, namespace: row.text("namespace")?, name: row.text("name")? }))
                .collect::<StoreResult<Vec<_>>>()?;
            for pending in plan(sets, &applied)? {
                sqlx::raw_sql(DB::script(pending.migration)).execute(DB::on_conn(&mut tx)).await?;
                let record = [("id", pending.id.into()), ("namespace", pending.namespace.into()), ("name", pending.migration.name.into())];
                db::execute(DB::on_conn(&mut tx), const { statement::<DB>("migration_record") }, &record).await?;
            }
            Ok(tx.commit().await?)
        })
    }
}
