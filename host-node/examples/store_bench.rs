//! Store throughput, measured side by side with pgbench on the same server.
//!
//! ```text
//! eval "$(scripts/pg-cluster.sh start)"
//! cargo run --release -p leasehold --features postgres --example store_bench
//! ```
//!
//! 50,000 trivial jobs are enqueued in one bulk statement, then worked to
//! empty; jobs/s is counted from the first claim to the last completion
//! (across all worker processes). Runs:
//!
//! - PostgreSQL, page claims + coalesced completions: 2 worker processes,
//!   10 jobs in flight each, pages claimed ahead (the seed-000
//!   page-in-a-closure pattern), completions coalesced into one fenced
//!   statement per flush. Once per page size of `--page` (default `100,500`;
//!   graphile-worker's published performance setup fetches 500 jobs at a
//!   time into its local queue).
//! - PostgreSQL, one job per claim: 2 worker processes, 10 slots each, every
//!   slot claims one job and completes it with its own statement.
//! - PostgreSQL, one job per claim, fused: as above, but each completion
//!   rides in the statement that claims the slot's next job
//!   (`Store::complete_and_claim`): one commit per job instead of two.
//! - SQLite, one process, both ways (pages of the first `--page` size).
//!
//! Each PostgreSQL run goes twice: succeeded jobs kept (the default), and
//! deleted by their completion (`OnSuccess::Delete`, as graphile-worker
//! does; runs named `…-delete` for `--only`).
//!
//! Every job runs under a lease with a heartbeat timer armed (trivial jobs
//! finish before it first fires) and every completion is fenced by its token.
//! Each PostgreSQL run gets a fresh schema, its bulk load, `ANALYZE`, and a
//! `CHECKPOINT` before its workers start, so no run pays for the writes of
//! the one before.
//!
//! Alongside: `pgbench -b simple-update -c 4` tps on the same cluster, and each
//! worker process's peak memory (VmHWM).
//!
//! `--vacuum-every N` sets the workers' `StoreConfig::vacuum_every` (0: the
//! jobs table is left to autovacuum), to compare.
//!
//! Each worker process records itself in the workers table every 5 s, as a
//! `Worker` does (`BENCH_RECORD_EVERY_MS` in the environment changes the
//! interval; 0 turns it off).
//!
//! `BENCH_SETUP_SQL` in the environment is run in each PostgreSQL run's
//! schema after its migrations and bulk load (before `ANALYZE`), to measure
//! a schema variant with the same build, e.g.
//! `BENCH_SETUP_SQL='DROP INDEX leasehold_jobs_parked'`.
//!
//! The PostgreSQL URL comes from `--pg-url` or `LEASEHOLD_TEST_PG_URL`; without
//! one the PostgreSQL runs are skipped (one line says so).

use std::collections::VecDeque;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use leasehold::core::Millis;
use leasehold::core::lease::{FenceOutcome, OwnerId};
use leasehold::store::{ClaimedJob, Coalescer, EnqueueOptions, OnSuccess, Store, StoreConfig, WorkerCounters};
use tokio::sync::{Semaphore, mpsc};

const QUEUE: &str = "bench";
const LEASE: Duration = Duration::from_secs(30);
const HEARTBEAT_EVERY: Duration = Duration::from_secs(10);
const PGBENCH: &str = "/usr/lib/postgresql/15/bin/pgbench";

fn now() -> Millis {
    Millis(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_millis() as u64,
    )
}

#[derive(Clone, Debug)]
struct Args {
    pg_url: Option<String>,
    jobs: usize,
    inflight: usize,
    /// Page sizes of the pages runs (the first one for SQLite).
    pages: Vec<usize>,
    workers: usize,
    pgbench_secs: u32,
    /// `StoreConfig::vacuum_every` of the workers (0: off).
    vacuum_every: u32,
    /// Which runs: any of pgbench, pg-pages, pg-single, pg-fused (each also
    /// with `-delete`), sqlite-pages, sqlite-single.
    only: Option<Vec<String>>,
}

impl Args {
    fn runs(&self, name: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|r| r == name))
    }
}

fn parse_args(mut it: impl Iterator<Item = String>) -> Args {
    let mut args = Args {
        pg_url: std::env::var("LEASEHOLD_TEST_PG_URL").ok(),
        jobs: 50_000,
        inflight: 10,
        pages: vec![100, 500],
        workers: 2,
        pgbench_secs: 10,
        vacuum_every: StoreConfig::default().vacuum_every.unwrap_or(0),
        only: None,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--pg-url" => args.pg_url = Some(value()),
            "--jobs" => args.jobs = value().parse().expect("--jobs N"),
            "--inflight" => args.inflight = value().parse().expect("--inflight N"),
            "--page" => {
                args.pages = value()
                    .split(',')
                    .map(|n| n.parse().expect("--page N[,N...]"))
                    .collect()
            }
            "--workers" => args.workers = value().parse().expect("--workers N"),
            "--pgbench-secs" => args.pgbench_secs = value().parse().expect("--pgbench-secs N"),
            "--vacuum-every" => args.vacuum_every = value().parse().expect("--vacuum-every N"),
            "--only" => args.only = Some(value().split(',').map(str::to_owned).collect()),
            other => panic!("unknown flag {other}"),
        }
    }
    args
}

fn main() {
    let mut argv = std::env::args().skip(1).peekable();
    if argv.peek().map(String::as_str) == Some("worker") {
        argv.next();
        return worker_main(argv.collect());
    }
    let args = parse_args(argv);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(orchestrate(args));
}

// ---------------------------------------------------------------- orchestrator

/// What one worker process reports.
#[derive(Debug, Default, Clone, Copy)]
struct WorkerReport {
    completed: u64,
    first_claim: u64,
    last_complete: u64,
    vmhwm_kb: u64,
}

async fn orchestrate(args: Args) {
    println!(
        "store_bench: {} jobs, {} in flight per worker process, pages of {:?}",
        args.jobs, args.inflight, args.pages
    );
    match &args.pg_url {
        Some(url) => {
            if args.runs("pgbench") {
                print_pgbench(url, &args, "before the store runs").await;
            }
            for on_success in [OnSuccess::Keep, OnSuccess::Delete] {
                let (suffix, kept) = match on_success {
                    OnSuccess::Keep => ("", "succeeded jobs kept"),
                    OnSuccess::Delete => ("-delete", "succeeded jobs deleted"),
                };
                if args.runs(&format!("pg-pages{suffix}")) {
                    for &page in &args.pages {
                        let run = Run { mode: "pages", page, on_success };
                        let reports = pg_run(url, &args, run).await;
                        let label = format!(
                            "PostgreSQL, pages of {page} + coalesced completions, {kept}"
                        );
                        report(&label, &args, &reports, 48_000.0);
                    }
                }
                if args.runs(&format!("pg-single{suffix}")) {
                    let run = Run { mode: "single", page: 1, on_success };
                    let reports = pg_run(url, &args, run).await;
                    let label = format!("PostgreSQL, one job per claim, {kept}");
                    report(&label, &args, &reports, 3_760.0);
                }
                if args.runs(&format!("pg-fused{suffix}")) {
                    let run = Run { mode: "fused", page: 1, on_success };
                    let reports = pg_run(url, &args, run).await;
                    let label = format!(
                        "PostgreSQL, one job per claim, completion fused with the next claim, {kept}"
                    );
                    report(&label, &args, &reports, 3_760.0);
                }
            }
            // Again afterwards: on a shared machine the server's capacity
            // drifts, and the two readings bracket the store runs.
            if args.runs("pgbench") {
                print_pgbench(url, &args, "after the store runs").await;
            }
        }
        None => {
            println!("PostgreSQL runs skipped: no --pg-url and LEASEHOLD_TEST_PG_URL is not set")
        }
    }
    let dir = std::env::temp_dir().join(format!("leasehold-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for mode in ["pages", "single"] {
        if !args.runs(&format!("sqlite-{mode}")) {
            continue;
        }
        let path = dir.join(format!("{mode}.db"));
        let url = format!("sqlite://{}", path.display());
        prepare(&url, args.jobs).await;
        let run = Run { mode, page: args.pages[0], on_success: OnSuccess::Keep };
        let reports = run_workers(&url, &args, run, 1).await;
        let label = match mode {
            "pages" => "SQLite, one process, page claims + coalesced completions",
            _ => "SQLite, one process, one job per claim",
        };
        report(label, &args, &reports, 10_000.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

async fn print_pgbench(url: &str, args: &Args, when: &str) {
    match pgbench_tps(url, args.pgbench_secs).await {
        Ok(tps) => println!(
            "pgbench -b simple-update -c 4 -j 2 -T {} ({when}): {tps:.0} tps",
            args.pgbench_secs
        ),
        Err(e) => println!("pgbench: not run ({e})"),
    }
}

fn report(label: &str, args: &Args, reports: &[WorkerReport], target: f64) {
    let completed: u64 = reports.iter().map(|r| r.completed).sum();
    let first = reports
        .iter()
        .map(|r| r.first_claim)
        .filter(|t| *t > 0)
        .min()
        .unwrap_or(0);
    let last = reports.iter().map(|r| r.last_complete).max().unwrap_or(0);
    let secs = last.saturating_sub(first) as f64 / 1000.0;
    let rate = if secs > 0.0 {
        completed as f64 / secs
    } else {
        0.0
    };
    let memory: Vec<String> = reports
        .iter()
        .map(|r| format!("{:.1} MiB", r.vmhwm_kb as f64 / 1024.0))
        .collect();
    println!(
        "{label}: {completed}/{} jobs in {secs:.2}s = {rate:.0} jobs/s (target {target:.0}: {}); peak memory per worker: {}",
        args.jobs,
        if rate >= target { "met" } else { "NOT met" },
        memory.join(", ")
    );
}

/// One run's worker setup.
#[derive(Clone, Copy)]
struct Run {
    /// `pages`, `single` or `fused`.
    mode: &'static str,
    /// Jobs per claim (pages).
    page: usize,
    on_success: OnSuccess,
}

/// Creates a fresh schema, enqueues the jobs, and runs the workers.
async fn pg_run(base: &str, args: &Args, run: Run) -> Vec<WorkerReport> {
    let schema = format!("bench_{}", run.mode);
    let pool = sqlx_admin(base).await;
    let sep = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{sep}options[search_path]={schema}");
    pool_execute(
        &pool,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema};"),
    )
    .await;
    prepare(&url, args.jobs).await;
    // A schema variant to measure (see the module docs).
    if let Ok(extra) = std::env::var("BENCH_SETUP_SQL") {
        pool_execute(&pool, &format!("SET search_path = {schema}; {extra}; RESET search_path;")).await;
    }
    // Fresh statistics after the bulk load, as autovacuum would give a
    // long-lived table, so the claim uses its index from the first page.
    pool_execute(&pool, &format!("ANALYZE {schema}.leasehold_jobs;")).await;
    // Each run starts with the dirty pages of the bulk load (and of the run
    // before) written out, so no run pays for another's checkpoint. Needs
    // superuser or pg_checkpoint; without, the runs just go on.
    if let Err(e) = sqlx::raw_sql("CHECKPOINT").execute(&pool).await {
        println!("  (no CHECKPOINT before the run: {e})");
    }
    pool.close().await;
    run_workers(&url, args, run, args.workers).await
}

async fn sqlx_admin(url: &str) -> sqlx::PgPool {
    sqlx::PgPool::connect(url)
        .await
        .expect("PostgreSQL reachable")
}

async fn pool_execute(pool: &sqlx::PgPool, sql: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(pool)
        .await
        .expect("admin statement");
}

/// Connects (migrating) and enqueues `jobs` trivial jobs in one statement.
async fn prepare(url: &str, jobs: usize) {
    let store = Store::connect(url).await.expect("store connects");
    let batch: Vec<_> = (0..jobs)
        .map(|i| (serde_json::json!({ "n": i }), EnqueueOptions::default()))
        .collect();
    let started = std::time::Instant::now();
    store
        .enqueue_many(QUEUE, &batch, now())
        .await
        .expect("bulk enqueue");
    println!(
        "  enqueued {jobs} jobs in one statement in {:.2}s",
        started.elapsed().as_secs_f64()
    );
    store.close().await;
}

async fn run_workers(url: &str, args: &Args, run: Run, workers: usize) -> Vec<WorkerReport> {
    let exe = std::env::current_exe().expect("own path");
    let children: Vec<_> = (0..workers)
        .map(|_| {
            Command::new(&exe)
                .args([
                    "worker",
                    url,
                    run.mode,
                    &args.inflight.to_string(),
                    &run.page.to_string(),
                    &args.vacuum_every.to_string(),
                    match run.on_success {
                        OnSuccess::Keep => "keep",
                        OnSuccess::Delete => "delete",
                    },
                ])
                .stdout(Stdio::piped())
                .spawn()
                .expect("worker starts")
        })
        .collect();
    let outputs = tokio::task::spawn_blocking(move || {
        children
            .into_iter()
            .map(|c| c.wait_with_output().expect("worker output"))
            .collect::<Vec<_>>()
    })
    .await
    .expect("join");
    outputs
        .iter()
        .map(|out| {
            assert!(out.status.success(), "worker failed: {}", out.status);
            parse_report(&String::from_utf8_lossy(&out.stdout))
        })
        .collect()
}

fn parse_report(text: &str) -> WorkerReport {
    let line = text
        .lines()
        .find(|l| l.starts_with("RESULT "))
        .expect("worker printed RESULT");
    let mut r = WorkerReport::default();
    for field in line.split_whitespace().skip(1) {
        let (k, v) = field.split_once('=').expect("k=v");
        let v: u64 = v.parse().expect("number");
        match k {
            "completed" => r.completed = v,
            "first_claim" => r.first_claim = v,
            "last_complete" => r.last_complete = v,
            "vmhwm_kb" => r.vmhwm_kb = v,
            _ => {}
        }
    }
    r
}

/// `pgbench -i` into its own database, then `-b simple-update -c 4`; answers tps.
async fn pgbench_tps(url: &str, secs: u32) -> Result<f64, String> {
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    let param = |name: &str| {
        query
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .map(str::to_owned)
    };
    let host = param("host").unwrap_or_else(|| "localhost".into());
    let port = param("port").unwrap_or_else(|| "5432".into());
    let pool = sqlx_admin(url).await;
    let exists: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = 'leasehold_pgbench'")
            .fetch_optional(&pool)
            .await
            .map_err(|e| e.to_string())?;
    if exists.is_none() {
        pool_execute(&pool, "CREATE DATABASE leasehold_pgbench").await;
    }
    pool.close().await;
    let base = ["-h", &host, "-p", &port, "-U", "postgres"];
    let init = Command::new(PGBENCH)
        .args(base)
        .args(["-i", "-q", "-s", "10", "leasehold_pgbench"])
        .output()
        .map_err(|e| format!("{PGBENCH}: {e}"))?;
    if !init.status.success() {
        return Err(String::from_utf8_lossy(&init.stderr).into_owned());
    }
    let run = Command::new(PGBENCH)
        .args(base)
        .args([
            "-b",
            "simple-update",
            "-c",
            "4",
            "-j",
            "2",
            "-T",
            &secs.to_string(),
            "leasehold_pgbench",
        ])
        .output()
        .map_err(|e| format!("{PGBENCH}: {e}"))?;
    let out = String::from_utf8_lossy(&run.stdout);
    out.lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("no tps in pgbench output: {out}"))
}

// ---------------------------------------------------------------- worker process

fn worker_main(args: Vec<String>) {
    let [url, mode, inflight, page, vacuum_every, on_success] = args.as_slice() else {
        panic!("worker URL MODE INFLIGHT PAGE VACUUM_EVERY keep|delete")
    };
    let on_success = match on_success.as_str() {
        "keep" => OnSuccess::Keep,
        "delete" => OnSuccess::Delete,
        other => panic!("worker: keep or delete, not {other}"),
    };
    let inflight: usize = inflight.parse().expect("inflight");
    let page: usize = page.parse().expect("page");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let stats = runtime.block_on(async {
        let vacuum_every: u32 = vacuum_every.parse().expect("vacuum_every");
        let config = StoreConfig::default()
            .with_max_connections(inflight as u32 + 2)
            .with_vacuum_every(Some(vacuum_every))
            .with_on_success(on_success);
        let store = Store::connect_with(url, config)
            .await
            .expect("worker connects");
        let me = OwnerId {
            host_id: "bench-host".into(),
            pid: std::process::id(),
            nonce: format!("bench-{}", std::process::id()),
            start_time: None,
            boot_id: None,
        };
        let stats = Arc::new(Stats::default());
        // Each worker records itself in the workers table as a `Worker`
        // does (every 5 s; BENCH_RECORD_EVERY_MS to change, 0: never).
        let every: u64 = std::env::var("BENCH_RECORD_EVERY_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(5_000);
        let recorder = (every > 0).then(|| {
            let (store, me, stats) = (store.clone(), me.clone(), stats.clone());
            tokio::spawn(async move {
                let mut ticker = tokio::time::interval(Duration::from_millis(every));
                loop {
                    ticker.tick().await;
                    let counters = WorkerCounters { claimed: stats.completed.load(Ordering::Relaxed), ..Default::default() };
                    store.record_worker(QUEUE, &me, &counters, false, now()).await.expect("worker record");
                }
            })
        });
        match mode.as_str() {
            "pages" => work_pages(&store, &me, inflight, page, &stats).await,
            "single" => work_single(&store, &me, inflight, &stats, false).await,
            "fused" => work_single(&store, &me, inflight, &stats, true).await,
            other => panic!("unknown mode {other}"),
        }
        if let Some(recorder) = recorder {
            recorder.abort();
        }
        store.close().await;
        stats
    });
    println!(
        "RESULT completed={} first_claim={} last_complete={} vmhwm_kb={}",
        stats.completed.load(Ordering::SeqCst),
        stats.first_claim.load(Ordering::SeqCst),
        stats.last_complete.load(Ordering::SeqCst),
        vmhwm_kb()
    );
}

#[derive(Default)]
struct Stats {
    completed: AtomicU64,
    first_claim: AtomicU64,
    last_complete: AtomicU64,
}

impl Stats {
    fn claimed(&self) {
        let _ = self
            .first_claim
            .compare_exchange(0, now().0, Ordering::SeqCst, Ordering::SeqCst);
    }

    fn completed(&self, outcome: FenceOutcome) {
        assert_eq!(
            outcome,
            FenceOutcome::Updated,
            "a bench completion lost its fence"
        );
        self.completed.fetch_add(1, Ordering::SeqCst);
        self.last_complete.fetch_max(now().0, Ordering::SeqCst);
    }
}

/// Whether the queue has nothing left to claim.
async fn drained(store: &Store) -> bool {
    let counts = store.counts(now()).await.expect("counts");
    counts
        .iter()
        .filter(|c| c.queue == QUEUE)
        .all(|c| c.waiting() == 0)
}

/// [`drained`] asked by one slot at a time, and answered from memory once
/// true: it reads the whole table, and every slot of a process asking at
/// once at the end of a run would hold up the last completions the figure
/// waits for.
#[derive(Default)]
struct DrainCheck {
    seen: std::sync::atomic::AtomicBool,
    asking: tokio::sync::Mutex<()>,
}

impl DrainCheck {
    async fn drained(&self, store: &Store) -> bool {
        if self.seen.load(Ordering::SeqCst) {
            return true;
        }
        let _turn = self.asking.lock().await;
        if !self.seen.load(Ordering::SeqCst) && drained(store).await {
            self.seen.store(true, Ordering::SeqCst);
        }
        self.seen.load(Ordering::SeqCst)
    }
}

/// The job itself: trivial, raced against its armed heartbeat timer as the
/// runner would (the timer never fires for work this short).
async fn perform(job: &ClaimedJob, coalescer: &Coalescer) {
    let fence = job.fence();
    let heartbeat = async {
        loop {
            tokio::time::sleep(HEARTBEAT_EVERY).await;
            if coalescer.heartbeat(fence, now()).await.expect("heartbeat") != FenceOutcome::Updated
            {
                return;
            }
        }
    };
    tokio::select! {
        biased;
        () = std::future::ready(()) => { std::hint::black_box(&job.payload); }
        () = heartbeat => {}
    }
}

/// Page claims ahead of the performers (up to two pages leased and waiting),
/// `inflight` performers, completions coalesced.
async fn work_pages(store: &Store, me: &OwnerId, inflight: usize, page: usize, stats: &Arc<Stats>) {
    // Room for two pages: the next page's claim goes out while a whole page
    // still waits, so its round trip (a commit) overlaps the work instead of
    // stalling the performers once per page.
    let (tx, mut rx) = mpsc::channel::<ClaimedJob>(2 * page);
    let claimer = {
        let store = store.clone();
        let me = me.clone();
        let stats = stats.clone();
        tokio::spawn(async move {
            loop {
                let Ok(permits) = tx.reserve_many(page).await else {
                    return;
                };
                let jobs = store
                    .claim_page(QUEUE, &me, now(), LEASE, page)
                    .await
                    .expect("claim");
                if jobs.is_empty() {
                    drop(permits);
                    if drained(&store).await {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                    continue;
                }
                stats.claimed();
                for (permit, job) in permits.zip(jobs) {
                    permit.send(job);
                }
            }
        })
    };
    let coalescer = store.coalescer();
    let slots = Arc::new(Semaphore::new(inflight));
    let mut settling = VecDeque::new();
    while let Some(job) = rx.recv().await {
        let slot = slots.clone().acquire_owned().await.expect("open");
        let coalescer = coalescer.clone();
        let stats = stats.clone();
        settling.push_back(tokio::spawn(async move {
            perform(&job, &coalescer).await;
            // The slot frees when the work is done; the completion rides the
            // next coalesced statement.
            drop(slot);
            stats.completed(
                coalescer
                    .complete(job.fence(), None, now())
                    .await
                    .expect("complete"),
            );
        }));
        while settling
            .front()
            .is_some_and(|t: &tokio::task::JoinHandle<()>| t.is_finished())
        {
            settling
                .pop_front()
                .expect("front")
                .await
                .expect("settle task");
        }
    }
    claimer.await.expect("claimer");
    for task in settling {
        task.await.expect("settle task");
    }
}

/// `inflight` slots, each claiming one job, performing it and completing it
/// with its own statement — or, `fused`, completing it in the same
/// statement that claims the slot's next job.
async fn work_single(
    store: &Store,
    me: &OwnerId,
    inflight: usize,
    stats: &Arc<Stats>,
    fused: bool,
) {
    let coalescer = store.coalescer();
    let drain = Arc::new(DrainCheck::default());
    let slots: Vec<_> = (0..inflight)
        .map(|_| {
            let drain = drain.clone();
            let store = store.clone();
            let me = me.clone();
            let stats = stats.clone();
            let coalescer = coalescer.clone();
            tokio::spawn(async move {
                let mut next: Option<ClaimedJob> = None;
                loop {
                    let job = match next.take() {
                        Some(job) => job,
                        None => match store.claim(QUEUE, &me, now(), LEASE).await.expect("claim") {
                            Some(job) => job,
                            None if drain.drained(&store).await => return,
                            None => {
                                tokio::time::sleep(Duration::from_millis(2)).await;
                                continue;
                            }
                        },
                    };
                    stats.claimed();
                    perform(&job, &coalescer).await;
                    if fused {
                        let (outcome, page) = store
                            .complete_and_claim(job.fence(), None, QUEUE, &me, now(), LEASE, 1)
                            .await
                            .expect("complete and claim");
                        stats.completed(outcome);
                        next = page.into_iter().next();
                    } else {
                        stats
                            .completed(store.complete(job.fence(), None, now()).await.expect("complete"));
                    }
                }
            })
        })
        .collect();
    for slot in slots {
        slot.await.expect("slot");
    }
}

/// Peak resident set size of this process (Linux `VmHWM`), in KiB.
fn vmhwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
