//! Installing migration sets on PostgreSQL: in one transaction holding the
//! transaction-scoped advisory migration lock, so concurrent migrators queue.

use sqlx::{PgPool, Row};

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Migrations, boxed};
use crate::store::migrate::{self, AppliedMigration, MigrationSet, PG_MIGRATION_LOCK_KEY};

impl Migrations for PgPool {
    fn migrate<'a>(&'a self, sets: &'a [&'a MigrationSet]) -> BoxFuture<'a, ()> {
        let pool = self;
        boxed(async move {
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
        })
    }
}
