//! Shared by the store tests: a fresh database per test on each backend (a
//! SQLite file in a temp dir; a PostgreSQL schema of its own when
//! `LEASEHOLD_TEST_PG_URL` is set — see scripts/pg-cluster.sh), owners, and
//! a clock that is virtual on SQLite and real on PostgreSQL (which stamps
//! leases with the server's clock, so its time can only pass for real).
#![allow(dead_code, unused_macros)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leasehold::core::Millis;
use leasehold::core::lease::{FenceOutcome, OwnerId};
use leasehold::store::{BackendKind, ClaimedJob, EnqueueOptions, Fence, JobId, Store, StoreConfig};
use serde_json::Value;

/// The env var naming the throwaway PostgreSQL cluster.
pub const PG_URL_VAR: &str = "LEASEHOLD_TEST_PG_URL";

/// One test database.
pub struct TestDb {
    pub store: Store,
    pub url: String,
    pub kind: BackendKind,
    clock: TestClock,
    _dir: Option<tempfile::TempDir>,
}

enum TestClock {
    Virtual(AtomicU64),
    Wall,
}

/// Wall-clock ms since the Unix epoch.
pub fn wall_now() -> Millis {
    Millis(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as u64,
    )
}

impl TestDb {
    /// The instant to pass as `now`.
    pub fn now(&self) -> Millis {
        match &self.clock {
            TestClock::Virtual(ms) => Millis(ms.load(Ordering::SeqCst)),
            TestClock::Wall => wall_now(),
        }
    }

    /// Lets `span` pass: instantly on SQLite's virtual clock, by sleeping on
    /// PostgreSQL.
    pub async fn advance(&self, span: Duration) {
        match &self.clock {
            TestClock::Virtual(ms) => {
                ms.fetch_add(span.as_millis() as u64, Ordering::SeqCst);
            }
            TestClock::Wall => tokio::time::sleep(span).await,
        }
    }

    /// Another store on the same database (its own pool), as a second
    /// process would have.
    pub async fn second_store(&self, config: StoreConfig) -> Store {
        Store::connect_with(&self.url, config)
            .await
            .expect("second store connects")
    }

    /// Enqueues `payload` on `queue`, due now, with the default options:
    /// the job's id.
    pub async fn enqueue(&self, queue: &str, payload: serde_json::Value) -> JobId {
        self.store
            .enqueue(queue, &payload, &EnqueueOptions::default(), self.now())
            .await
            .expect("enqueue")
    }

    /// Enqueues `payload` on `queue` now with `options`: the job's id.
    pub async fn enqueue_with(&self, queue: &str, payload: serde_json::Value, options: &EnqueueOptions) -> JobId {
        self.store
            .enqueue(queue, &payload, options, self.now())
            .await
            .expect("enqueue")
    }

    /// Enqueues `n` jobs on `queue` in one batch, due now, with the default
    /// options and the payloads `0`..`n`: their ids in order.
    pub async fn enqueue_n(&self, queue: &str, n: usize) -> Vec<JobId> {
        let jobs: Vec<_> = (0..n).map(|i| (serde_json::json!(i), EnqueueOptions::default())).collect();
        self.store.enqueue_many(queue, &jobs, self.now()).await.expect("enqueue_many")
    }

    /// `claimant`'s claim on `queue` now, for `lease`, which must find a
    /// job.
    pub async fn claim(&self, queue: &str, claimant: &OwnerId, lease: Duration) -> ClaimedJob {
        self.try_claim(queue, claimant, lease).await.expect("a job to claim")
    }

    /// `claimant`'s claim on `queue` now, for `lease`: the job it took, or
    /// `None` when none was due.
    pub async fn try_claim(&self, queue: &str, claimant: &OwnerId, lease: Duration) -> Option<ClaimedJob> {
        self.store.claim(queue, claimant, self.now(), lease).await.expect("claim")
    }

    /// Enqueues one job (payload `1`) on `queue` and has `claimant` claim it
    /// for `lease`: the claim.
    pub async fn enqueue_and_claim(&self, queue: &str, claimant: &OwnerId, lease: Duration) -> ClaimedJob {
        let id = self.enqueue(queue, serde_json::json!(1)).await;
        let job = self.claim(queue, claimant, lease).await;
        assert_eq!(job.id, id, "the claim took another job than the one enqueued");
        job
    }

    /// `claimant`'s claim of up to `n` jobs on `queue` now, for `lease`.
    pub async fn claim_page(&self, queue: &str, claimant: &OwnerId, lease: Duration, n: usize) -> Vec<ClaimedJob> {
        self.store
            .claim_page(queue, claimant, self.now(), lease, n)
            .await
            .expect("claim_page")
    }

    /// Settles `fence` as done (with `result`, if any) and claims up to `n`
    /// jobs on `queue` for `claimant` in the same round trip, now: the
    /// settle's outcome and the page claimed.
    pub async fn complete_and_claim(&self, fence: Fence, result: Option<&Value>, queue: &str, claimant: &OwnerId, lease: Duration, n: usize) -> (FenceOutcome, Vec<ClaimedJob>) {
        self.store
            .complete_and_claim(fence, result, queue, claimant, self.now(), lease, n)
            .await
            .expect("complete_and_claim")
    }

    /// A label for assertion messages.
    pub fn label(&self) -> &'static str {
        match self.kind {
            BackendKind::Sqlite => "sqlite",
            BackendKind::Postgres => "postgres",
        }
    }
}

/// Names the backend when a test fails: the store tests loop over every
/// backend, and an assertion's own message does not say which one it was on.
impl Drop for TestDb {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("(the failure above was on {})", self.label());
        }
    }
}

/// A SQLite database in a fresh temp dir.
pub async fn sqlite_db(config: StoreConfig) -> TestDb {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("queue.db").display());
    let store = Store::connect_with(&url, config)
        .await
        .expect("sqlite store connects");
    TestDb {
        store,
        url,
        kind: BackendKind::Sqlite,
        clock: TestClock::Virtual(AtomicU64::new(1_700_000_000_000)),
        _dir: Some(dir),
    }
}

/// The URL of a fresh, empty schema named `name` on the test cluster, or
/// `None` (after printing one line saying so) when no cluster is configured
/// or this build lacks the `postgres` feature.
#[cfg(not(feature = "postgres"))]
pub async fn pg_schema_url(name: &str) -> Option<String> {
    println!("skipping the PostgreSQL half of {name}: built without the `postgres` feature");
    None
}

/// The URL of a fresh, empty schema named `name` on the test cluster, or
/// `None` (after printing one line saying so) when no cluster is configured.
#[cfg(feature = "postgres")]
pub async fn pg_schema_url(name: &str) -> Option<String> {
    let Ok(base) = std::env::var(PG_URL_VAR) else {
        println!(
            "skipping the PostgreSQL half of {name}: {PG_URL_VAR} is not set (run scripts/pg-cluster.sh start)"
        );
        return None;
    };
    let schema = schema_name(name);
    let admin = sqlx::PgPool::connect(&base)
        .await
        .expect("test cluster reachable");
    sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"
    )))
    .execute(&admin)
    .await
    .expect("fresh schema");
    admin.close().await;
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(format!("{base}{sep}options[search_path]={schema}"))
}

/// `t_` and `name`, cut to PostgreSQL's 63-byte identifiers: a longer name
/// keeps its first 44 bytes and gains a hash of the whole, so two long test
/// names with a common start still get schemas of their own.
#[cfg(feature = "postgres")]
fn schema_name(name: &str) -> String {
    use std::hash::{Hash, Hasher};
    let full = format!("t_{name}");
    if full.len() <= 63 {
        return full;
    }
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    full.hash(&mut hasher);
    format!("{}_{:016x}", &full[..46], hasher.finish())
}

/// A PostgreSQL database (a fresh schema) when the cluster is configured.
pub async fn pg_db(name: &str, config: StoreConfig) -> Option<TestDb> {
    let url = pg_schema_url(name).await?;
    let store = Store::connect_with(&url, config)
        .await
        .expect("postgres store connects");
    Some(TestDb {
        store,
        url,
        kind: BackendKind::Postgres,
        clock: TestClock::Wall,
        _dir: None,
    })
}

/// Every backend available: SQLite always, PostgreSQL when configured.
pub async fn backends(name: &str) -> Vec<TestDb> {
    backends_with(name, StoreConfig::default()).await
}

/// [`backends`] with a config.
pub async fn backends_with(name: &str, config: StoreConfig) -> Vec<TestDb> {
    let mut dbs = vec![sqlite_db(config.clone()).await];
    dbs.extend(pg_db(name, config).await);
    dbs
}

/// Declares a `#[tokio::test]` that runs its body once on every backend
/// [`backends_with`] opens (SQLite always, PostgreSQL when configured), the
/// [`TestDb`] bound to the name in parentheses; the PostgreSQL schema is
/// named after the test binary and the test:
///
/// ```ignore
/// backend_test! {
///     /// What the test shows.
///     async fn claim_only_sees_its_own_queue(db) {
///         assert!(db.try_claim("q", &owner("h", "n"), LEASE).await.is_none());
///     }
/// }
/// ```
///
/// `(db with config)` opens the stores with that [`StoreConfig`] expression
/// instead of the default one.
macro_rules! backend_test {
    ($(#[$attr:meta])* async fn $name:ident($db:ident $(with $config:expr)?) $body:block) => {
        $(#[$attr])*
        #[tokio::test]
        async fn $name() {
            let config = $crate::store_support::backend_test!(@config $($config)?);
            let name = concat!(module_path!(), "_", stringify!($name));
            for $db in $crate::store_support::backends_with(name, config).await $body
        }
    };
    (@config) => { ::leasehold::store::StoreConfig::default() };
    (@config $config:expr) => { $config };
}
#[allow(unused_imports)]
pub(crate) use backend_test;

/// The default config with failed attempts retried after `initial`, the
/// wait doubling on each further failure up to `max`.
pub fn retrying(initial: Duration, max: Duration) -> StoreConfig {
    StoreConfig::default().with_retry(leasehold::store::RetryBackoff { initial, max })
}

/// The ids of `jobs`, in order.
pub fn job_ids(jobs: &[ClaimedJob]) -> Vec<JobId> {
    jobs.iter().map(|job| job.id).collect()
}

/// Enqueue options with an attempt budget of `max_attempts`, the rest
/// default.
pub fn attempts(max_attempts: u32) -> EnqueueOptions {
    EnqueueOptions { max_attempts, ..EnqueueOptions::default() }
}

/// Enqueue options with the idempotency key `key`, the rest default.
pub fn keyed(key: &str) -> EnqueueOptions {
    EnqueueOptions { idempotency_key: Some(key.to_owned()), ..EnqueueOptions::default() }
}

/// Completions of `fences` with no result, for [`Store::complete_many`].
pub fn without_results(
    fences: &[leasehold::store::Fence],
) -> Vec<(leasehold::store::Fence, Option<&'static serde_json::Value>)> {
    fences.iter().map(|fence| (*fence, None)).collect()
}

/// An owner on `host` with incarnation `nonce`, in this process.
pub fn owner(host: &str, nonce: &str) -> OwnerId {
    OwnerId {
        host_id: host.to_owned(),
        pid: std::process::id(),
        nonce: nonce.to_owned(),
        start_time: None,
        boot_id: None,
    }
}

/// Rows of `table` whose `job_id` is one of `ids`, read straight from the
/// database (the store's own reads join the job row, which is gone).
pub async fn raw_rows(db: &TestDb, ids: &[i64], table: &str) -> i64 {
    let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
    raw(
        db,
        &format!("SELECT count(*) FROM {table} WHERE job_id IN ({list})"),
        "",
    )
    .await
}

/// Runs `sql` straight on the database (`sqlite` or `postgres`, whichever
/// is not empty, for statements the two spell apart); answers its first
/// column as a number (0 when it returns no row).
pub async fn raw(db: &TestDb, sqlite: &str, postgres: &str) -> i64 {
    let pick = |own: &str| {
        if own.is_empty() {
            sqlite.to_owned()
        } else {
            own.to_owned()
        }
    };
    match db.kind {
        leasehold::store::BackendKind::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(sqlite.to_owned()))
                .fetch_optional(&pool)
                .await
                .unwrap()
                .unwrap_or(0)
        }
        #[cfg(feature = "postgres")]
        leasehold::store::BackendKind::Postgres => {
            let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
            sqlx::query_scalar(sqlx::AssertSqlSafe(pick(postgres)))
                .fetch_optional(&pool)
                .await
                .unwrap()
                .unwrap_or(0)
        }
        #[cfg(not(feature = "postgres"))]
        leasehold::store::BackendKind::Postgres => unreachable!(
            "no PostgreSQL databases without the feature {}",
            pick(postgres)
        ),
    }
}

/// Another connection holding the database locked (SQLite: `BEGIN
/// EXCLUSIVE`; PostgreSQL: `LOCK TABLE leasehold_jobs IN ACCESS EXCLUSIVE
/// MODE`) until dropped or released with [`unlock`].
pub enum Lock {
    Sqlite(sqlx::SqliteConnection),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgConnection),
}

pub async fn lock(db: &TestDb) -> Lock {
    use sqlx::Connection;
    match db.kind {
        leasehold::store::BackendKind::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            sqlx::query("BEGIN EXCLUSIVE")
                .execute(&mut c)
                .await
                .unwrap();
            Lock::Sqlite(c)
        }
        #[cfg(feature = "postgres")]
        leasehold::store::BackendKind::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
            sqlx::query("BEGIN").execute(&mut c).await.unwrap();
            sqlx::query("LOCK TABLE leasehold_jobs IN ACCESS EXCLUSIVE MODE")
                .execute(&mut c)
                .await
                .unwrap();
            Lock::Postgres(c)
        }
        #[cfg(not(feature = "postgres"))]
        leasehold::store::BackendKind::Postgres => unreachable!("built without postgres"),
    }
}

pub async fn unlock(lock: Lock) {
    match lock {
        Lock::Sqlite(mut c) => {
            sqlx::query("ROLLBACK").execute(&mut c).await.unwrap();
        }
        #[cfg(feature = "postgres")]
        Lock::Postgres(mut c) => {
            sqlx::query("ROLLBACK").execute(&mut c).await.unwrap();
        }
    }
}
