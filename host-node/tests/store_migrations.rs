//! Migrations (seed 003): namespaced sets with id blocks, idempotent, safe
//! under concurrent migrators, refusing a schema from a newer build; and the
//! connect errors of a database that cannot be reached.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::store::{
    AttemptOutcome, EnqueueOptions, JobId, Migration, MigrationSet, QUEUE_MIGRATIONS, Store,
    StoreConfig, StoreError, JobState,
};
use serde_json::json;
use store_support::{attempts, backend_test, owner, pg_schema_url, wall_now};

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
    query_rows(url, "SELECT id, namespace, name FROM leasehold_migrations ORDER BY id").await
}

/// The rows of `q` on either backend.
async fn query_rows<T>(url: &str, q: &'static str) -> Vec<T>
where
    T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow> + PgFromRow + Send + Unpin,
{
    if url.starts_with("sqlite:") {
        let pool = sqlx::SqlitePool::connect(url).await.unwrap();
        let rows = sqlx::query_as(q).fetch_all(&pool).await.unwrap();
        pool.close().await;
        rows
    } else {
        pg_rows(url, q).await
    }
}

/// What a PostgreSQL row decodes into (nothing to ask without the feature).
#[cfg(feature = "postgres")]
trait PgFromRow: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow> {}
#[cfg(feature = "postgres")]
impl<T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>> PgFromRow for T {}
#[cfg(not(feature = "postgres"))]
trait PgFromRow {}
#[cfg(not(feature = "postgres"))]
impl<T> PgFromRow for T {}

#[cfg(feature = "postgres")]
async fn pg_rows<T: PgFromRow + Send + Unpin>(url: &str, q: &'static str) -> Vec<T> {
    let pool = sqlx::PgPool::connect(url).await.unwrap();
    let rows = sqlx::query_as(q).fetch_all(&pool).await.unwrap();
    pool.close().await;
    rows
}

#[cfg(not(feature = "postgres"))]
async fn pg_rows<T>(_url: &str, _q: &'static str) -> Vec<T> {
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

/// The rows the queue's migration set records, in id order.
fn queue_set_rows() -> Vec<(i64, String, String)> {
    QUEUE_MIGRATIONS
        .migrations
        .iter()
        .map(|m| (QUEUE_MIGRATIONS.id_block + m.number, QUEUE_MIGRATIONS.namespace.to_owned(), m.name.to_owned()))
        .collect()
}

/// The id of the queue set's newest migration.
fn newest_queue_id() -> i64 {
    queue_set_rows().last().map_or(0, |row| row.0)
}

backend_test! {
    async fn connect_installs_the_queue_set_in_its_block(db) {
        let rows = migration_rows(&db.url).await;
        assert_eq!(rows[..3], [
                (1001, "leasehold-queue".into(), "0001_jobs_and_attempts".into()),
                (1002, "leasehold-queue".into(), "0002_attempt_results".into()),
                (1003, "leasehold-queue".into(), "0003_success_on_the_job_row".into()),
            ]
        );
        assert_eq!(rows, queue_set_rows(), "{}: every migration of the set", db.label());
    }
}

backend_test! {
    async fn installing_twice_changes_nothing(db) {
        let before = migration_rows(&db.url).await;
        db.store.migrate(&[&QUEUE_MIGRATIONS]).await.unwrap();
        let again = Store::connect(&db.url).await.unwrap();
        again.migrate(&[&QUEUE_MIGRATIONS]).await.unwrap();
        assert_eq!(migration_rows(&db.url).await, before);
    }
}

backend_test! {
    async fn composed_sets_install_in_their_own_blocks(db) {
        db.store
            .migrate(&[&QUEUE_MIGRATIONS, &EXTRA])
            .await
            .unwrap();
        db.store
            .migrate(&[&QUEUE_MIGRATIONS, &EXTRA])
            .await
            .unwrap();
        let rows = migration_rows(&db.url).await;
        let ids: Vec<_> = rows.iter().map(|r| (r.0, r.1.as_str())).collect();
        let queue = queue_set_rows();
        let mut expected: Vec<_> = queue.iter().map(|r| (r.0, r.1.as_str())).collect();
        expected.push((7001, "extra-tests"));
        assert_eq!(ids, expected);
    }
}

backend_test! {
    async fn sets_sharing_a_block_are_refused_before_touching_the_database(db) {
        let clash = MigrationSet {
            namespace: "intruder",
            id_block: 1000,
            ..EXTRA
        };
        let err = db
            .store
            .migrate(&[&QUEUE_MIGRATIONS, &clash])
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::InvalidMigrationSets(_)), "{err}");
        assert_eq!(migration_rows(&db.url).await.len(), QUEUE_MIGRATIONS.migrations.len());
    }
}

#[tokio::test]
async fn concurrent_migrators_on_a_fresh_database_all_succeed_once() {
    // Fresh databases, not yet migrated: every connect migrates at once.
    // Several fresh SQLite files: opening a new file at once from many
    // connections is where SQLite answers "database is locked" without
    // waiting (turning the file to WAL), which the store must ride out.
    let mut urls = Vec::new();
    let dir = tempfile::tempdir().unwrap();
    for n in 0..5 {
        urls.push(format!("sqlite://{}", dir.path().join(format!("fresh-{n}.db")).display()));
    }
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
        assert_eq!(migration_rows(&url).await.len(), QUEUE_MIGRATIONS.migrations.len() + 1, "{url}");
    }
}

backend_test! {
    async fn database_migrated_by_a_newer_build_is_refused_with_a_clear_error(db) {
        execute(
            &db.url,
            "INSERT INTO leasehold_migrations (id, namespace, name, applied_at)
             VALUES (1999, 'leasehold-queue', '0999_from_the_future', 0)",
        )
        .await;
        let err = Store::connect(&db.url).await.unwrap_err();
        let StoreError::SchemaTooNew { namespace, applied_id, known_id, applied_name } = &err else {
            panic!("{}: {err}", db.label())
        };
        assert_eq!(
            (namespace.as_str(), *applied_id, *known_id, applied_name.as_str()),
            ("leasehold-queue", 1999, newest_queue_id(), "0999_from_the_future")
        );
        assert!(err.to_string().contains("upgrade leasehold"), "{err}");
    }
}

#[tokio::test]
async fn unreachable_postgres_at_start_is_a_clear_error() {
    if cfg!(not(feature = "postgres")) {
        println!(
            "skipping unreachable_postgres_at_start_is_a_clear_error: built without the `postgres` feature"
        );
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
    assert!(
        !message.contains("hunter2"),
        "the password is redacted: {message}"
    );
}

#[tokio::test]
async fn url_of_another_database_kind_is_refused() {
    let err = Store::connect("mysql://localhost/x").await.unwrap_err();
    assert!(matches!(err, StoreError::UnsupportedUrl { .. }), "{err}");
    assert!(err.to_string().contains("sqlite://"), "{err}");
}

#[tokio::test]
async fn a_sqlite_url_that_names_no_file_is_refused_not_opened_as_a_temporary_database() {
    // SQLite takes an empty file name for a private temporary database, deleted on close:
    // every job queued there was gone without a word.
    for url in ["sqlite:", "sqlite://", "sqlite://?mode=rwc"] {
        for config in [StoreConfig::default(), StoreConfig::default().with_read_only(true)] {
            let err = Store::connect_with(url, config).await.unwrap_err();
            assert!(matches!(err, StoreError::UnsupportedUrl { .. }), "{url}: {err}");
            assert!(err.to_string().contains("sqlite://PATH (a file)"), "{err}");
        }
    }
    for url in ["sqlite::memory:", "sqlite://?mode=memory"] {
        Store::connect(url).await.unwrap_or_else(|e| panic!("{url}: {e}"));
    }
}

#[tokio::test]
async fn sqlite_file_in_a_missing_folder_is_a_clear_error() {
    // It was "cannot reach the database at …: unable to open database file", naming no folder.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("no-such-folder").join("queue.db");
    let err = Store::connect(&format!("sqlite://{}", file.display())).await.unwrap_err();
    assert!(matches!(err, StoreError::NotWritable { .. }), "{err}");
    let folder = dir.path().join("no-such-folder");
    assert!(err.to_string().contains(&format!("its folder {} does not exist", folder.display())), "{err}");
    assert!(!folder.exists(), "nothing was made");
}

#[tokio::test]
async fn a_zero_connect_timeout_is_refused_naming_it() {
    // It was taken, and every connect then failed as the database unreachable (on SQLite:
    // "pool timed out while waiting for an open connection").
    let config = StoreConfig::default().with_connect_timeout(Duration::ZERO);
    let err = Store::connect_with("sqlite::memory:", config).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidOption { option: "connect_timeout", .. }), "{err}");
    let config = StoreConfig::default().with_connect_timeout(Duration::from_secs(1));
    assert!(Store::connect_with("sqlite::memory:", config).await.is_ok());
}

/// `(job_id, token, outcome)` rows of `leasehold_attempts`, the table itself.
async fn logged_attempts(url: &str) -> Vec<(i64, i64, String)> {
    query_rows(url, "SELECT job_id, token, outcome FROM leasehold_attempts ORDER BY job_id, token")
        .await
}

/// `(token, outcome)` of a job's attempt log as the store shows it.
async fn shown(store: &Store, id: JobId) -> Vec<(u64, AttemptOutcome)> {
    store
        .job(id)
        .await
        .unwrap()
        .attempt_log
        .iter()
        .map(|a| (a.token, a.outcome))
        .collect()
}

#[tokio::test]
async fn database_of_the_previous_schema_upgrades_and_keeps_its_attempt_history() {
    // The queue set as the previous build shipped it: migrations 1 and 2;
    // with the settlements journal (4), which today's settle statements
    // write to as they make that history.
    const BEFORE_0003: [Migration; 3] = [
        QUEUE_MIGRATIONS.migrations[0],
        QUEUE_MIGRATIONS.migrations[1],
        QUEUE_MIGRATIONS.migrations[3],
    ];
    assert_eq!(BEFORE_0003[2].name, "0004_settlements_journal");
    let previous = MigrationSet {
        migrations: &BEFORE_0003,
        ..QUEUE_MIGRATIONS
    };
    // Fresh, unmigrated databases (the test backends come migrated); the
    // wall clock on both, since PostgreSQL stamps with its own.
    let dir = tempfile::tempdir().unwrap();
    let mut urls = vec![format!("sqlite://{}", dir.path().join("old.db").display())];
    urls.extend(pg_schema_url("mig_upgrade_attempts").await);
    for url in urls {
        let label = url.split(':').next().unwrap_or_default().to_owned();
        let old = Store::connect_with(&url, StoreConfig::default().with_migrate(false))
            .await
            .unwrap();
        old.migrate(&[&previous]).await.unwrap();
        // History as the previous build wrote it: a failed attempt, then a
        // success that its completion logged in leasehold_attempts.
        let opts = attempts(3);
        let id = old.enqueue("q", &json!(1), &opts, wall_now()).await.unwrap();
        // This build's claim skips paused queues (a table of migration 6):
        // a stand-in for the claims below, dropped before the upgrade.
        execute(&url, "CREATE TABLE leasehold_paused_queues (queue TEXT PRIMARY KEY)").await;
        let me = owner("h", "a");
        let first = old.claim("q", &me, wall_now(), Duration::from_secs(30)).await.unwrap().unwrap();
        old.fail(first.fence(), "boom", None, wall_now()).await.unwrap();
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let second = old.claim("q", &me, wall_now(), Duration::from_secs(30)).await.unwrap().unwrap();
        old.complete(second.fence(), None, wall_now()).await.unwrap();
        execute(&url, "DROP TABLE leasehold_paused_queues").await;
        execute(
            &url,
            "INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
                 owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
             SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time,
                 owner_boot_id, claimed_at, finished_at, 'succeeded', NULL
             FROM leasehold_jobs WHERE state = 'succeeded'",
        )
        .await;
        old.close().await;

        let store = Store::connect(&url).await.unwrap();
        let applied = migration_rows(&url).await;
        assert_eq!(
            applied.last().map(|(id, _, name)| (*id, name.as_str())),
            queue_set_rows().last().map(|(id, _, name)| (*id, name.as_str())),
            "{}",
            label
        );
        // The old history is kept, and the logged success is not shown twice.
        assert_eq!(
            shown(&store, id).await,
            [(first.token, AttemptOutcome::Failed), (second.token, AttemptOutcome::Succeeded)],
            "{}",
            label
        );
        // A job completed after the upgrade logs no row for its success, and
        // still shows it, read off the job row with its owner and times.
        let later = store.enqueue("q", &json!(2), &opts, wall_now()).await.unwrap();
        let job = store.claim("q", &me, wall_now(), Duration::from_secs(30)).await.unwrap().unwrap();
        assert_eq!(job.id, later);
        store.complete(job.fence(), None, wall_now()).await.unwrap();
        assert!(
            logged_attempts(&url).await.iter().all(|(job_id, _, _)| *job_id != later.0),
            "{}",
            label
        );
        let record = store.job(later).await.unwrap();
        assert_eq!(record.attempt_log.len(), 1, "{}", label);
        let success = &record.attempt_log[0];
        assert_eq!((success.token, success.outcome), (job.token, AttemptOutcome::Succeeded));
        assert_eq!(success.owner.nonce, "a");
        assert_eq!(success.ended_at, record.finished_at);
        assert!(success.ended_at.unwrap() >= success.started_at);
    }
}

/// Migration 6 rebuilds SQLite's jobs table (for the `cancelled` state):
/// the id counter is carried over, so an id whose job was purged before the
/// upgrade is never issued again, and the jobs and their states are kept.
#[tokio::test]
async fn the_steering_upgrade_keeps_every_job_and_never_reissues_a_purged_id() {
    let previous = MigrationSet {
        migrations: &QUEUE_MIGRATIONS.migrations[..5],
        ..QUEUE_MIGRATIONS
    };
    assert_eq!(previous.migrations.last().unwrap().number, 5, "the schema before steering");
    let dir = tempfile::tempdir().unwrap();
    let mut urls = vec![format!("sqlite://{}", dir.path().join("old.db").display())];
    urls.extend(pg_schema_url("mig_upgrade_steering").await);
    for url in urls {
        let old = Store::connect_with(&url, StoreConfig::default().with_migrate(false)).await.unwrap();
        old.migrate(&[&previous]).await.unwrap();
        let opts = EnqueueOptions::default();
        let kept = old.enqueue("q", &json!(1), &opts, wall_now()).await.unwrap();
        let purged = old.enqueue("q", &json!(2), &opts, wall_now()).await.unwrap();
        assert_eq!(purged, JobId(2), "{url}: a fresh database");
        execute(&url, "DELETE FROM leasehold_jobs WHERE id = 2").await;
        old.close().await;

        let store = Store::connect(&url).await.unwrap();
        let next = store.enqueue("q", &json!(3), &opts, wall_now()).await.unwrap();
        assert!(next > purged, "{url}: {next} issued after {purged} was purged");
        assert_eq!(store.job(kept).await.unwrap().state, JobState::Queued, "{url}");
        assert_eq!(store.cancel(&[kept], None, "me", wall_now()).await.unwrap(), vec![kept], "{url}");
        assert_eq!(store.job(kept).await.unwrap().state, JobState::Cancelled, "{url}");
    }
}

#[tokio::test]
async fn a_postgres_error_names_no_line_of_the_servers_own_source() {
    // "database \"x\" does not exist at line 948": the line is of PostgreSQL's C source,
    // which sqlx appends, and read as a line of something the user wrote.
    let Ok(url) = std::env::var(store_support::PG_URL_VAR) else {
        println!("skipping a_postgres_error_names_no_line_of_the_servers_own_source: {} is not set", store_support::PG_URL_VAR);
        return;
    };
    let (base, query) = url.split_once('?').unwrap_or((url.as_str(), ""));
    let base = base.rsplit_once('/').map_or(base, |(server, _)| server);
    let missing = format!("{base}/leasehold_no_such_database?{query}");
    let err = Store::connect(&missing).await.unwrap_err();
    assert!(matches!(err, StoreError::Unreachable { .. }), "{err}");
    let said = err.to_string();
    assert!(said.ends_with(r#"error returned from database: database "leasehold_no_such_database" does not exist"#), "{said}");
}

#[tokio::test]
async fn a_postgres_socket_that_is_not_there_is_named() {
    // It said only "No such file or directory (os error 2)", naming no file.
    if cfg!(not(feature = "postgres")) {
        println!("skipping a_postgres_socket_that_is_not_there_is_named: built without the `postgres` feature");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().display();
    for (url, socket) in [
        (format!("postgres://someone@localhost/db?host={folder}&port=6543"), format!("{folder}/.s.PGSQL.6543")),
        (format!("postgres://someone@localhost:7654/db?host={folder}/"), format!("{folder}/.s.PGSQL.7654")),
        (format!("postgresql://someone@localhost/db?host={folder}"), format!("{folder}/.s.PGSQL.5432")),
    ] {
        let config = StoreConfig::default().with_connect_timeout(Duration::from_secs(3));
        let err = Store::connect_with(&url, config).await.unwrap_err();
        assert!(matches!(err, StoreError::Unreachable { .. }), "{err}");
        assert!(
            err.to_string().ends_with(&format!(
                "No such file or directory (os error 2): no server listens at {socket} (is the server running, with its \
                 sockets in that folder and on that port?)"
            )),
            "{err}"
        );
    }
}
