//! `work` through a database outage: commands that finish while the SQLite
//! file is locked by another connection (`BEGIN EXCLUSIVE`, held for twice
//! the stale window, past the store's 10 s busy timeout so writes fail as
//! they do while a server is away) are recorded once the lock goes, and no
//! command runs twice, and the lock does not flood stderr with sqlx's
//! slow-statement warnings (each one the whole SQL text).

mod cli_support;

use cli_support::{Scratch, wait_exit};
use leasehold::store::{JobId, JobState};
use sqlx::Connection;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The stale window `work` runs with; each lock is held for twice that.
const STALE: Duration = Duration::from_secs(6);

/// How many times each job's command ran, read from the lines the commands
/// appended to `runs.log`.
fn runs(s: &Scratch) -> HashMap<String, usize> {
    let log = std::fs::read_to_string(s.path("runs.log")).unwrap_or_default();
    let mut counts = HashMap::new();
    for line in log.lines() {
        *counts.entry(line.to_owned()).or_default() += 1;
    }
    counts
}

/// Queues `jobs` commands of `work_ms` each, works them with `concurrency`
/// slots, and locks the database `locks` times for 2 × [`STALE`] while
/// commands run. Answers `(jobs that ran more than once, jobs, work's
/// stderr)` once the queue is drained.
async fn through_locks(jobs: usize, concurrency: u32, work_ms: u64, locks: usize) -> (usize, usize, String) {
    let s = Scratch::new();
    let ids: Vec<JobId> = (0..jobs)
        .map(|i| s.enqueue(&[], &format!("sleep {}; echo job{i} >> runs.log", work_ms as f64 / 1000.0)))
        .collect();
    let stale = format!("{}s", STALE.as_secs());
    let concurrency = concurrency.to_string();
    let mut worker = s.spawn(&["work", "--until-empty", "--stale-after", &stale, "--concurrency", &concurrency]);
    let store = s.store().await;
    let path = s.path("queue.db");
    for _ in 0..locks {
        // Lock while commands run: wait for a command to end after the last
        // lock went (the first, at the first lock), then half a command.
        let (before, start) = (runs(&s).values().sum::<usize>(), Instant::now());
        while runs(&s).values().sum::<usize>() == before && start.elapsed() < Duration::from_secs(30) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(work_ms / 2)).await;
        let mut other = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display())).await.unwrap();
        sqlx::query("BEGIN EXCLUSIVE").execute(&mut other).await.unwrap();
        tokio::time::sleep(STALE * 2).await;
        sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
        other.close().await.unwrap();
    }
    let status = wait_exit(&mut worker, Duration::from_secs(120 + jobs as u64 * work_ms / 1000));
    assert!(status.success(), "work exits 0 once the queue is drained");
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut worker.stderr.take().unwrap(), &mut stderr).unwrap();
    for &id in &ids {
        assert_eq!(store.job(id).await.unwrap().state, JobState::Succeeded, "job {id}");
    }
    let runs = runs(&s);
    assert_eq!(runs.len(), jobs, "every command ran: {runs:?}");
    (runs.values().filter(|n| **n > 1).count(), jobs, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_worker_through_a_lock_of_twice_the_stale_window_runs_each_command_once() {
    let (twice, jobs, stderr) = through_locks(6, 1, 700, 1).await;
    assert_eq!(twice, 0, "{twice} of {jobs} commands ran twice");
    assert!(!stderr.contains("slow statement"), "sqlx's slow-statement warnings on stderr:\n{stderr}");
}

/// The reproduction behind the figures in the report: prints how many of
/// the jobs ran twice. `cargo test --features cli --test cli_outage --
/// --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement of about a minute: run it by name"]
async fn measure_commands_run_twice_through_two_locks() {
    let (twice, jobs, _) = through_locks(40, 4, 500, 2).await;
    println!("jobs {jobs}, concurrency 4, two locks of {:?}: {twice} ran twice", STALE * 2);
}

/// A lock shorter than the busy timeout makes statements slow, not failing:
/// sqlx would warn about each (the whole SQL text, and every slow pool
/// acquire) on stderr; `work` keeps those quiet by default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_lock_does_not_flood_stderr_with_slow_statement_warnings() {
    let s = Scratch::new();
    let id = s.enqueue(&[], "sleep 4");
    let mut worker = s.spawn(&["work", "--until-empty", "--stale-after", "6s"]);
    let store = s.store().await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let mut other = sqlx::SqliteConnection::connect(&format!("sqlite://{}", s.path("queue.db").display())).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE").execute(&mut other).await.unwrap();
    tokio::time::sleep(Duration::from_secs(4)).await;
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    other.close().await.unwrap();
    assert!(wait_exit(&mut worker, Duration::from_secs(60)).success(), "work exits 0 once the queue is drained");
    assert_eq!(store.job(id).await.unwrap().state, JobState::Succeeded);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut worker.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("slow statement"), "sqlx's slow-statement warnings on stderr:\n{stderr}");
    assert!(!stderr.contains("time to acquire"), "sqlx's slow-acquire warnings on stderr:\n{stderr}");
}
