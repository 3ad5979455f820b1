//! Workers that crash: a `work` process killed with SIGKILL mid-job leaves
//! its job to another worker once the lease is stale; every job ends done
//! exactly once (one succeeded attempt each), the killed one's attempt is
//! logged as lease-lost. On SQLite with two workers, on PostgreSQL with
//! three (when `LEASEHOLD_TEST_PG_URL` is set).

mod cli_support;
mod store_support;

use cli_support::{Scratch, signal, succeeded_attempts, wait_exit};
use leasehold::store::{AttemptOutcome, JobId, JobState, Store};
use rustix::process::Signal;
use std::process::Child;
use std::time::{Duration, Instant};

/// Waits until `store` records a running job owned by `pid`; answers it.
async fn job_running_under(store: &Store, ids: &[JobId], pid: u32) -> JobId {
    let start = Instant::now();
    loop {
        for &id in ids {
            let job = store.job(id).await.unwrap();
            if job.state == JobState::Running && job.lease.as_ref().is_some_and(|l| l.owner.pid == pid) {
                return id;
            }
        }
        assert!(start.elapsed() < Duration::from_secs(30), "worker {pid} never ran a job");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Queues `jobs` sleeping jobs, starts `workers` workers, kills the first
/// mid-job, and checks that the rest finish everything exactly once.
async fn a_killed_worker_s_job_is_reclaimed(s: &Scratch, jobs: usize, workers: usize) {
    let ids: Vec<JobId> = (0..jobs).map(|_| s.enqueue(&[], "sleep 1")).collect();
    let lease = ["--stale-after", "2s", "--concurrency", "1"];
    let mut victim = s.spawn(&[&["work"][..], &lease].concat());
    let store = s.store().await;
    let orphan = job_running_under(&store, &ids, victim.id()).await;
    signal(&victim, Signal::KILL);
    let victim_pid = victim.id();
    wait_exit(&mut victim, Duration::from_secs(5));

    let mut survivors: Vec<Child> =
        (1..workers).map(|_| s.spawn(&[&["work", "--until-empty"][..], &lease].concat())).collect();
    for worker in &mut survivors {
        let status = wait_exit(worker, Duration::from_secs(60));
        assert!(status.success(), "a surviving worker exits 0 once the queue is empty");
    }

    for &id in &ids {
        let job = store.job(id).await.unwrap();
        assert_eq!(job.state, JobState::Succeeded, "job {id}");
        assert_eq!(succeeded_attempts(&job), 1, "job {id} done exactly once: {:?}", job.attempt_log);
        let results = store.results(id).await.unwrap();
        assert_eq!(results.len(), 1, "one recorded result per job, the fenced winner's");
    }
    let orphan = store.job(orphan).await.unwrap();
    let lost = &orphan.attempt_log[0];
    assert_eq!(lost.outcome, AttemptOutcome::LeaseLost, "the killed worker's attempt: {:?}", orphan.attempt_log);
    assert_eq!(lost.owner.pid, victim_pid);
    assert!(lost.error.as_deref().unwrap_or_default().contains("reclaimed"), "{:?}", lost.error);
    assert_ne!(orphan.attempt_log[1].owner.pid, victim_pid, "a survivor finished it");
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_two_workers_one_killed_every_job_done_once() {
    let s = Scratch::new();
    a_killed_worker_s_job_is_reclaimed(&s, 4, 2).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_three_workers_one_killed_every_job_done_once() {
    let Some(url) = store_support::pg_schema_url("cli_reclaim").await else { return };
    let s = Scratch::with_url(url);
    a_killed_worker_s_job_is_reclaimed(&s, 6, 3).await;
}

/// Whether process `pid` is gone within `limit` (an orphan is reaped by init).
fn gone_within(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        let Some(pid) = rustix::process::Pid::from_raw(pid) else { return true };
        if rustix::process::test_kill_process(pid).is_err() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_command_started_dies_with_a_worker_killed_outright() {
    let s = Scratch::new();
    let pid_file = s.path("grandchild.pid");
    // The shell starts a grandchild and waits for it: PDEATHSIG on the
    // shell alone would leave the grandchild running after the worker died.
    let id = s.enqueue(&[], &format!("sleep 30 & echo $! > {}; wait", pid_file.display()));
    let mut worker = s.spawn(&["work", "--stale-after", "2s"]);
    let store = s.store().await;
    job_running_under(&store, &[id], worker.id()).await;
    let start = Instant::now();
    let grandchild = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file).ok().and_then(|t| t.trim().parse::<i32>().ok()) {
            break pid;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "the command never started its grandchild");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    signal(&worker, Signal::KILL);
    wait_exit(&mut worker, Duration::from_secs(5));
    assert!(gone_within(grandchild, Duration::from_secs(5)), "the grandchild {grandchild} outlived its worker");
}
