//! Installing migration sets on SQLite: under `BEGIN IMMEDIATE`, so two
//! processes opening one new file never both apply a migration.

use sqlx::Row;

use leasehold_core::queue::statements::sqlite as sql;
use sqlx::SqlitePool;

use super::immediate;
use crate::store::backend::{BoxFuture, Migrations, boxed};
use crate::store::migrate::{self, AppliedMigration, MigrationSet};

impl Migrations for SqlitePool {
    fn migrate<'a>(&'a self, sets: &'a [&'a MigrationSet]) -> BoxFuture<'a, ()> {
        let pool = self;
        boxed(async move {
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
        })
    }
}
