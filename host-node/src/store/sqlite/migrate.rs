//! Installing migration sets on SQLite: under `BEGIN IMMEDIATE`, so two
//! processes opening one new file never both apply a migration.

use leasehold_core::queue::statements::sqlite as sql;
use sqlx::SqlitePool;

use super::immediate;
use crate::store::backend::{BoxFuture, Migrations, boxed};
use crate::store::migrate::{self, Installer, MigrationSet};

const INSTALLER: Installer = Installer {
    table: sql::MIGRATIONS_TABLE.text,
    applied: sql::MIGRATIONS_APPLIED.text,
    record: sql::MIGRATION_RECORD.text,
    text: |migration| migration.sqlite,
};

impl Migrations for SqlitePool {
    fn migrate<'a>(&'a self, sets: &'a [&'a MigrationSet]) -> BoxFuture<'a, ()> {
        boxed(async move {
            let mut tx = immediate(self).await?;
            migrate::install::<sqlx::Sqlite>(&mut *tx, sets, &INSTALLER).await?;
            Ok(tx.commit().await?)
        })
    }
}
