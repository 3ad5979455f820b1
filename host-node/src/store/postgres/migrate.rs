//! Installing migration sets on PostgreSQL: in one transaction holding the
//! transaction-scoped advisory migration lock, so concurrent migrators queue.

use leasehold_core::queue::statements::postgres as sql;
use sqlx::PgPool;

use crate::store::backend::{BoxFuture, Migrations, boxed};
use crate::store::migrate::{self, Installer, MigrationSet, PG_MIGRATION_LOCK_KEY};

const INSTALLER: Installer = Installer {
    table: sql::MIGRATIONS_TABLE.text,
    applied: sql::MIGRATIONS_APPLIED.text,
    record: sql::MIGRATION_RECORD.text,
    text: |migration| migration.postgres,
};

impl Migrations for PgPool {
    fn migrate<'a>(&'a self, sets: &'a [&'a MigrationSet]) -> BoxFuture<'a, ()> {
        boxed(async move {
            let mut tx = self.begin().await?;
            // Transaction-scoped: released by the commit (or by the server if
            // this connection dies), so a crashed migrator never wedges the next.
            sqlx::query(sql::MIGRATION_LOCK.text).bind(PG_MIGRATION_LOCK_KEY).execute(&mut *tx).await?;
            migrate::install::<sqlx::Postgres>(&mut *tx, sets, &INSTALLER).await?;
            Ok(tx.commit().await?)
        })
    }
}
