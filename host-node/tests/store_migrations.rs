//! Migrations (seed 003): namespaced sets with id blocks, idempotent, safe
//! under concurrent migrators, refusing a schema from a newer build; and the
//! connect errors of a database that cannot be reached.

mod store_support;

use std::time::Duration;

use leasehold::store::{
    Migration, MigrationSet, QUEUE_MIGRATIONS, Store, StoreConfig, StoreError,
};
use store_support::{backends, pg_schema_url};

const EXTRA: MigrationSet = MigrationSet {
    namespace: "extra-tests",
    id_block: 7000,
    migrations: &[Migration {
        number: 1,
        name: "0001_notes",
        sqlite: "CREATE TABLE extra_notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);",
        postgres: "CREATE TABLE extra_notes (id bigint PRIMARY KEY, body text NOT NULL);",
    }],
};

async fn migration_rows(url: &str) -> Vec<(i64, String, String)> {
    let q = "SELECT id, namespace, name FROM leasehold_migrations ORDER BY id";
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let rows = sqlx::query_as(q).fetch_all(&pool).await.unwrap();
        pool.close().await;
        rows
    } else {
        pg_rows(url, q).await
    }
}

#[cfg(feature = "postgres")]
async fn pg_rows(url: &str, q: &'static str) -> Vec<(i64, String, String)> {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let rows = sqlx::query_as(q).fetch_all(&pool).await.unwrap();
    pool.close().await;
    rows
}

#[cfg(not(feature = "postgres"))]
async fn pg_rows(_url: &str, _q: &'static str) -> Vec<(i64, String, String)> {
    unreachable!("no PostgreSQL databases without the feature")
}

async fn execute(url: &str, sql: &'static str) {
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        sqlx::raw_sql(sql).execute(&pool).await.unwrap();
        pool.close().await;
    } else {
        pg_execute(url, sql).await;
    }
}

#[cfg(feature = "postgres")]
async fn pg_execute(url: &str, sql: &'static str) {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    sqlx::raw_sql(sql).execute(&pool).await.unwrap();
    pool.close().await;
}

#[cfg(not(feature = "postgres"))]
async fn pg_execute(_url: &str, _sql: &'static str) {
    unreachable!("no PostgreSQL databases without the feature")
}

#[tokio::test]
async fn connect_installs_the_queue_set_in_its_block() {
    for db in backends("mig_installs").await {
        let rows = migration_rows(&db.url).await;
        assert_eq!(rows, [(1001, "leasehold-queue".into(), "0001_jobs_and_attempts".into())], "{}", db.label());
    }
}

#[tokio::test]
async fn installing_twice_changes_nothing() {
    for db in backends("mig_twice").await {
        let before = migration_rows(&db.url).await;
        db.store.migrate(&[&QUEUE_MIGRATIONS]).await.unwrap();
        let again = Store::connect(&db.url).await.unwrap();
        again.migrate(&[&QUEUE_MIGRATIONS]).await.unwrap();
        assert_eq!(migration_rows(&db.url).await, before, "{}", db.label());
    }
}

#[tokio::test]
async fn composed_sets_install_in_their_own_blocks() {
    for db in backends("mig_composed").await {
        db.store.migrate(&[&QUEUE_MIGRATIONS, &EXTRA]).await.unwrap();
        db.store.migrate(&[&QUEUE_MIGRATIONS, &EXTRA]).await.unwrap();
        let rows = migration_rows(&db.url).await;
        let ids: Vec<_> = rows.iter().map(|r| (r.0, r.1.as_str())).collect();
        assert_eq!(ids, [(1001, "leasehold-queue"), (7001, "extra-tests")], "{}", db.label());
    }
}

#[tokio::test]
async fn sets_sharing_a_block_are_refused_before_touching_the_database() {
    for db in backends("mig_block_clash").await {
        let clash = MigrationSet { namespace: "intruder", id_block: 1000, ..EXTRA };
        let err = db.store.migrate(&[&QUEUE_MIGRATIONS, &clash]).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidMigrationSets(_)), "{err}");
        assert_eq!(migration_rows(&db.url).await.len(), 1);
    }
}

#[tokio::test]
async fn concurrent_migrators_on_a_fresh_database_all_succeed_once() {
    // Fresh databases, not yet migrated: every connect migrates at once.
    let mut urls = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    urls.push(format!("sqlite://{}", dir.path().join("fresh.db").display()));
    urls.extend(pg_schema_url("mig_concurrent").await);
    for url in urls {
        let mut tasks = Vec::new();
        for _ in 0..6 {
            let url = url.clone();
            tasks.push(tokio::spawn(async move {
                let store = Store::connect(&url).await?;
                store.migrate(&[&QUEUE_MIGRATIONS, &EXTRA]).await?;
                Ok::<_, StoreError>(())
            }));
        }
        for t in tasks {
            t.await.unwrap().unwrap_or_else(|e| panic!("{url}: {e}"));
        }
        assert_eq!(migration_rows(&url).await.len(), 2, "{url}");
    }
}

#[tokio::test]
async fn database_migrated_by_a_newer_build_is_refused_with_a_clear_error() {
    for db in backends("mig_too_new").await {
        execute(
            &db.url,
            "INSERT INTO leasehold_migrations (id, namespace, name, applied_at)
             VALUES (1002, 'leasehold-queue', '0002_from_the_future', 0)",
        )
        .await;
        let err = Store::connect(&db.url).await.unwrap_err();
        match &err {
            StoreError::SchemaTooNew { namespace, applied_id, known_id, applied_name } => {
                assert_eq!((namespace.as_str(), *applied_id, *known_id), ("leasehold-queue", 1002, 1001));
                assert_eq!(applied_name, "0002_from_the_future");
            }
            other => panic!("{}: {other}", db.label()),
        }
        assert!(err.to_string().contains("upgrade leasehold"), "{err}");
    }
}

#[tokio::test]
async fn unreachable_postgres_at_start_is_a_clear_error() {
    if cfg!(not(feature = "postgres")) {
        println!("skipping unreachable_postgres_at_start_is_a_clear_error: built without the `postgres` feature");
        return;
    }
    // Port 1 on loopback: nothing listens there.
    let url = "postgres://someone:hunter2@127.0.0.1:1/nowhere";
    let config = StoreConfig::default().with_connect_timeout(Duration::from_secs(3));
    let err = Store::connect_with(url, config).await.unwrap_err();
    assert!(matches!(err, StoreError::Unreachable { .. }), "{err}");
    let message = err.to_string();
    assert!(message.contains("cannot reach the database"), "{message}");
    assert!(message.contains("127.0.0.1:1"), "{message}");
    assert!(!message.contains("hunter2"), "the password is redacted: {message}");
}

#[tokio::test]
async fn sqlite_file_in_a_missing_folder_is_a_clear_error() {
    let err = Store::connect("sqlite:///nonexistent-leasehold-dir/sub/queue.db").await.unwrap_err();
    assert!(matches!(err, StoreError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains("nonexistent-leasehold-dir"), "{err}");
}

#[tokio::test]
async fn url_of_another_database_kind_is_refused() {
    let err = Store::connect("mysql://localhost/x").await.unwrap_err();
    assert!(matches!(err, StoreError::UnsupportedUrl { .. }), "{err}");
    assert!(err.to_string().contains("sqlite://"), "{err}");
}
