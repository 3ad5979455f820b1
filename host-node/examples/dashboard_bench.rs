//! How fast the dashboard's reads answer on a million jobs, on SQLite and
//! PostgreSQL (`LEASEHOLD_TEST_PG_URL`, e.g. from `scripts/pg-cluster.sh
//! start`), and how much its page weighs. Prints figures; asserts nothing.
//!
//! ```sh
//! cargo run --release -p leasehold --features postgres --example dashboard_bench [-- --jobs 1000000]
//! ```
//!
//! The table: 96% succeeded (spread over the last 7 days, the last hour's
//! 20,000 of them with settlements), 2% dead, 1% cancelled, 1% queued (half
//! of those scheduled), 200 running, on 3 queues.

use std::time::{Duration, Instant};

use leasehold::core::Millis;
use leasehold::store::dashboard::{JobQuery, ShownState};
use leasehold::store::Store;

const ASSETS: &[(&str, &str)] = &[
    ("index.html", include_str!("../src/bin/leasehold/ui/assets/index.html")),
    ("app.js", include_str!("../src/bin/leasehold/ui/assets/app.js")),
    ("app.css", include_str!("../src/bin/leasehold/ui/assets/app.css")),
    ("icon.svg", include_str!("../src/bin/leasehold/ui/assets/icon.svg")),
];

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_millis() as u64
}

/// Fills the jobs and settlements tables in a few statements.
fn fill_sql(jobs: u64, now: u64, postgres: bool) -> Vec<String> {
    let series = if postgres {
        format!("generate_series(1, {jobs}) AS n(i)")
    } else {
        format!("(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {jobs}) SELECT i FROM s) AS n")
    };
    let payload = if postgres { "jsonb_build_object('command', 'echo job ' || i)" } else { "json_object('command', 'echo job ' || i)" };
    let week = 7 * 86_400_000u64;
    vec![
        format!(
            "INSERT INTO leasehold_jobs (queue, payload, state, run_at, attempts, max_attempts, token, owner_host, owner_pid,
                 owner_nonce, claimed_at, heartbeat_at, lease_ms, expires_at, created_at, finished_at)
             SELECT CASE i % 3 WHEN 0 THEN 'mail' WHEN 1 THEN 'reports' ELSE 'default' END, {payload},
                 CASE WHEN i > {jobs} - 200 THEN 'running' WHEN i % 100 < 2 THEN 'dead' WHEN i % 100 = 2 THEN 'cancelled'
                      WHEN i > {jobs} - 10000 THEN 'queued' ELSE 'succeeded' END,
                 CASE WHEN i > {jobs} - 5000 AND i <= {jobs} - 200 THEN {now} + 3600000 ELSE {start} + i * {step} END,
                 CASE WHEN i > {jobs} - 10000 AND i <= {jobs} - 200 THEN 0 ELSE 1 END, 3, 1, 'bench', 1, 'n',
                 {start} + i * {step} + 50, {start} + i * {step} + 60, 30000, {start} + i * {step} + 30060,
                 {start} + i * {step}, {start} + i * {step} + 300
             FROM {series}",
            start = now - week,
            step = week / jobs,
        ),
        format!(
            "INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid, owner_nonce, outcome, at)
             SELECT id, queue, 1, 1, 'bench', 1, 'n', 'done', finished_at FROM leasehold_jobs
             WHERE id > {} AND state = 'succeeded' ORDER BY id",
            jobs.saturating_sub(30_000)
        ),
    ]
}

async fn median<F, Fut, T>(runs: usize, mut f: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        let _ = f().await;
        times.push(started.elapsed());
    }
    times.sort();
    times[runs / 2]
}

async fn measure(label: &str, store: &Store) {
    let t = Millis(now());
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    let overview = store.overview(t).await.expect("overview");
    let hour = Millis((t.0 / 60_000) * 60_000 + 60_000 - 3_600_000);
    let page = |state: Option<ShownState>, text: Option<&str>| JobQuery { state, text: text.map(str::to_owned), ..JobQuery::default() };
    println!("{label}: {} queues, succeeded estimated: {} (id span {})", overview.queues.len(), overview.succeeded_estimated, overview.id_span);
    let o = median(7, || store.overview(t)).await;
    let a = median(7, || store.activity(hour, 60_000, t)).await;
    let w = median(7, || store.workers()).await;
    println!("  overview (counts + last hour by minute + workers):   {} ({} + {} + {})", ms(o + a + w), ms(o), ms(a), ms(w));
    let first = page(None, None);
    println!("  first page of jobs (50):                             {}", ms(median(7, || store.job_page(&first, t)).await));
    let dead = page(Some(ShownState::Dead), None);
    println!("  first page of dead jobs:                             {}", ms(median(7, || store.job_page(&dead, t)).await));
    let deep = JobQuery { before: Some(leasehold::store::JobId(500_000)), ..JobQuery::default() };
    println!("  a page in the middle (before id 500,000):            {}", ms(median(7, || store.job_page(&deep, t)).await));
    let text = page(None, Some("echo job 12345"));
    println!("  text search, first window of 100,000 ids:            {}", ms(median(7, || store.job_page(&text, t)).await));
    println!("  change marker (polled each second while a page is open): {}", ms(median(7, || store.change_marker()).await));
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let jobs: u64 = args.iter().position(|a| a == "--jobs").and_then(|i| args.get(i + 1)).and_then(|n| n.parse().ok()).unwrap_or(1_000_000);
    let weight: usize = ASSETS.iter().map(|(_, text)| text.len()).sum();
    let list: Vec<String> = ASSETS.iter().map(|(name, text)| format!("{name} {} B", text.len())).collect();
    println!("page assets: {weight} bytes ({})", list.join(", "));

    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("bench.db").display());
    let store = Store::connect(&url).await.expect("sqlite");
    let pool = sqlx::SqlitePool::connect(&url).await.expect("pool");
    let started = Instant::now();
    for sql in fill_sql(jobs, now(), false) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&pool).await.expect("fill");
    }
    // As a queue's file is between bursts: the write-ahead log folded back in.
    sqlx::raw_sql("PRAGMA wal_checkpoint(TRUNCATE)").execute(&pool).await.expect("checkpoint");
    println!("SQLite: {jobs} jobs written in {:.1} s", started.elapsed().as_secs_f64());
    measure("SQLite", &store).await;

    let Ok(base) = std::env::var("LEASEHOLD_TEST_PG_URL") else {
        println!("PostgreSQL: skipped (LEASEHOLD_TEST_PG_URL is not set; scripts/pg-cluster.sh start prints it)");
        return;
    };
    let admin = sqlx::PgPool::connect(&base).await.expect("postgres");
    sqlx::raw_sql("DROP SCHEMA IF EXISTS dashboard_bench CASCADE; CREATE SCHEMA dashboard_bench").execute(&admin).await.expect("schema");
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options[search_path]=dashboard_bench");
    let store = Store::connect(&url).await.expect("postgres store");
    let pool = sqlx::PgPool::connect(&url).await.expect("pool");
    let started = Instant::now();
    for sql in fill_sql(jobs, now(), true) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql)).execute(&pool).await.expect("fill");
    }
    for table in ["leasehold_jobs", "leasehold_settlements"] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("VACUUM ANALYZE {table}"))).execute(&pool).await.expect("analyze");
    }
    println!("PostgreSQL: {jobs} jobs written in {:.1} s", started.elapsed().as_secs_f64());
    measure("PostgreSQL", &store).await;
    sqlx::raw_sql("DROP SCHEMA dashboard_bench CASCADE").execute(&admin).await.expect("drop");
}
