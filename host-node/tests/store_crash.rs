//! Faults: two worker processes on one database, one killed with SIGKILL in
//! the middle of its work — every job is settled exactly once and the dead
//! worker's jobs are reclaimed after the stale window; and a connection
//! dropped before a settle lands leaves the job claimable after its lease.
//!
//! The worker processes are this test binary, re-invoked to run the ignored
//! `crash_worker_process` test with the database URL in its environment.

#![cfg(feature = "sqlite")]

mod store_support;

use std::collections::HashMap;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use leasehold::core::lease::{FenceOutcome, OwnerId};
use leasehold::store::{AttemptOutcome, EnqueueOptions, JobId, JobState, Store, StoreConfig};
use serde_json::json;
use store_support::{owner, pg_schema_url, wall_now};

const LEASE: Duration = Duration::from_millis(1000);
const HEARTBEAT_EVERY: Duration = Duration::from_millis(250);
const JOBS: usize = 40;
// Long enough that the victim is always mid-job when it is killed.
const WORK: Duration = Duration::from_millis(200);
const URL_VAR: &str = "LEASEHOLD_CRASH_URL";
const LOG_VAR: &str = "LEASEHOLD_CRASH_LOG";

/// The worker: claims one job at a time on two slots, renews its lease while
/// it works, completes it, and appends `job token pid` to the log for each
/// completion that landed. Exits once the queue has nothing queued or
/// running. Does nothing unless started by the crash test.
#[test]
#[ignore = "a worker process started by two_workers_one_killed_mid_job_*"]
fn crash_worker_process() {
    let (Ok(url), Ok(log)) = (std::env::var(URL_VAR), std::env::var(LOG_VAR)) else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let store = Store::connect(&url).await.expect("worker connects");
        let me = owner("crash-host", &format!("worker-{}", std::process::id()));
        let slots: Vec<_> = (0..2)
            .map(|_| tokio::spawn(work_slot(store.clone(), me.clone(), log.clone())))
            .collect();
        for slot in slots {
            slot.await.expect("slot");
        }
    });
}

async fn work_slot(store: Store, me: OwnerId, log: String) {
    let coalescer = store.coalescer();
    loop {
        let Some(job) = store
            .claim("q", &me, wall_now(), LEASE)
            .await
            .expect("claim")
        else {
            let counts = store.counts(wall_now()).await.expect("counts");
            if counts.iter().all(|c| c.waiting() == 0 && c.running == 0) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let fence = job.fence();
        let beats = coalescer.clone();
        let heartbeat = tokio::spawn(async move {
            loop {
                tokio::time::sleep(HEARTBEAT_EVERY).await;
                if beats.heartbeat(fence, wall_now()).await.expect("heartbeat")
                    != FenceOutcome::Updated
                {
                    return;
                }
            }
        });
        tokio::time::sleep(WORK).await;
        let outcome = store.complete(fence, None, wall_now()).await.expect("complete");
        heartbeat.abort();
        if outcome == FenceOutcome::Updated {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .open(&log)
                .expect("log");
            // One short write per line: O_APPEND keeps lines whole across processes.
            file.write_all(
                format!("{} {} {}\n", job.id.0, job.token, std::process::id()).as_bytes(),
            )
            .expect("log write");
        }
    }
}

fn spawn_worker(url: &str, log: &std::path::Path) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "crash_worker_process",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(URL_VAR, url)
        .env(LOG_VAR, log)
        .stdout(Stdio::null())
        .spawn()
        .expect("worker starts")
}

/// Whether `pid` holds a job it claimed less than a quarter of the work
/// time ago.
async fn holds_fresh_claim(store: &Store, ids: &[JobId], pid: u32) -> bool {
    let now = wall_now().0;
    for id in ids {
        let record = store.job(*id).await.unwrap();
        if let Some(lease) = &record.lease {
            let fresh = lease
                .heartbeat_at
                .is_some_and(|at| now.saturating_sub(at.0) < WORK.as_millis() as u64 / 4);
            if lease.owner.pid == pid && fresh {
                return true;
            }
        }
    }
    false
}

fn log_lines(log: &std::path::Path) -> Vec<(i64, u64, u32)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let mut f = l.split(' ');
            let mut next = || f.next().expect("three fields");
            (
                next().parse().unwrap(),
                next().parse().unwrap(),
                next().parse().unwrap(),
            )
        })
        .collect()
}

async fn kill_one_worker_mid_job(url: &str, label: &str) {
    let store = Store::connect(url).await.unwrap();
    let jobs: Vec<_> = (0..JOBS)
        .map(|i| (json!({ "i": i }), EnqueueOptions::default()))
        .collect();
    let ids = store.enqueue_many("q", &jobs, wall_now()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("completions.log");
    let mut victim = spawn_worker(url, &log);
    let mut survivor = spawn_worker(url, &log);
    let victim_pid = victim.id();

    // Wait until the victim has completed a few jobs (so it is mid-stream)
    // and has just claimed another — it has most of that job's work ahead —
    // then kill it without warning.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "{label}: victim never got to work"
        );
        if log_lines(&log).iter().filter(|l| l.2 == victim_pid).count() >= 2
            && holds_fresh_claim(&store, &ids, victim_pid).await
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    victim.kill().expect("SIGKILL"); // std's kill is SIGKILL on Unix
    let killed_at = wall_now();
    victim.wait().unwrap();
    // What it held when it died: running under its lease, never to be renewed.
    let mut held: Vec<JobId> = Vec::new();
    for id in &ids {
        let record = store.job(*id).await.unwrap();
        if record
            .lease
            .as_ref()
            .is_some_and(|l| l.owner.pid == victim_pid)
        {
            held.push(*id);
        }
    }
    assert!(!held.is_empty(), "{label}: the victim died holding a job");

    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = survivor.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "{label}: survivor did not finish the queue"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "{label}: survivor failed: {status}");

    // Every job settled, exactly once, by whoever held its live fence.
    let counts = store.counts(wall_now()).await.unwrap();
    assert_eq!(
        (counts[0].succeeded, counts[0].waiting(), counts[0].running),
        (JOBS as u64, 0, 0),
        "{label}"
    );
    let lines = log_lines(&log);
    let mut per_job: HashMap<i64, usize> = HashMap::new();
    for (id, _, _) in &lines {
        *per_job.entry(*id).or_default() += 1;
    }
    assert_eq!(
        per_job.len(),
        JOBS,
        "{label}: every job's completion landed"
    );
    assert!(
        per_job.values().all(|n| *n == 1),
        "{label}: a completion landed twice: {per_job:?}"
    );
    for id in &ids {
        let record = store.job(*id).await.unwrap();
        assert_eq!(record.state, JobState::Succeeded);
        let succeeded: Vec<_> = record
            .attempt_log
            .iter()
            .filter(|a| a.outcome == AttemptOutcome::Succeeded)
            .collect();
        assert_eq!(
            succeeded.len(),
            1,
            "{label}: job {id} attempts {:?}",
            record.attempt_log
        );
        let tokens: Vec<_> = record.attempt_log.iter().map(|a| a.token).collect();
        assert!(
            tokens.windows(2).all(|w| w[0] < w[1]),
            "{label}: tokens grow {tokens:?}"
        );
    }

    // The jobs the victim held were reclaimed by the survivor, after the window.
    let survivor_pid = survivor.id();
    for id in held {
        let record = store.job(id).await.unwrap();
        let lost = record
            .attempt_log
            .iter()
            .find(|a| a.owner.pid == victim_pid && a.outcome == AttemptOutcome::LeaseLost)
            .unwrap_or_else(|| {
                panic!(
                    "{label}: job {id} lost by the victim: {:?}",
                    record.attempt_log
                )
            });
        let done = record.attempt_log.last().unwrap();
        assert_eq!(
            (done.outcome, done.owner.pid),
            (AttemptOutcome::Succeeded, survivor_pid)
        );
        assert!(done.token > lost.token);
        // The victim's last renewal was at most one heartbeat interval before
        // the kill; the takeover came only once a whole lease had passed since.
        let reclaimed_at = lost.ended_at.unwrap().0;
        let earliest = killed_at.0 + LEASE.as_millis() as u64 - HEARTBEAT_EVERY.as_millis() as u64;
        assert!(
            reclaimed_at + 50 >= earliest,
            "{label}: reclaimed at {reclaimed_at}, killed at {}, lease {LEASE:?}",
            killed_at.0
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_one_killed_mid_job_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("crash.db").display());
    kill_one_worker_mid_job(&url, "sqlite").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_one_killed_mid_job_postgres() {
    let Some(url) = pg_schema_url("crash_sigkill").await else {
        return;
    };
    kill_one_worker_mid_job(&url, "postgres").await;
}

#[tokio::test]
async fn connection_dropped_before_a_settle_leaves_the_job_claimable_after_the_lease() {
    let Some(url) = pg_schema_url("crash_dropped_connection").await else {
        return;
    };
    let victim_url = format!("{url}&application_name=leasehold-victim");
    let victim = Store::connect_with(&victim_url, StoreConfig::default().with_max_connections(1))
        .await
        .unwrap();
    let other = Store::connect(&url).await.unwrap();
    let id = other
        .enqueue("q", &json!(1), &EnqueueOptions::default(), wall_now())
        .await
        .unwrap();
    let me = owner("h", "victim");
    let job = victim
        .claim("q", &me, wall_now(), LEASE)
        .await
        .unwrap()
        .unwrap();
    terminate_sessions(&url, "leasehold-victim").await;

    // The settle travels on the dead connection: an error, and nothing settled.
    let err = victim.complete(job.fence(), None, wall_now()).await.unwrap_err();
    assert!(
        matches!(err, leasehold::store::StoreError::Database(_)),
        "{err}"
    );
    let record = other.job(id).await.unwrap();
    assert_eq!((record.state, record.token), (JobState::Running, job.token));

    // Inside the lease nobody takes it; after it, it is reclaimed.
    let thief = owner("h", "thief");
    assert!(
        other
            .claim("q", &thief, wall_now(), LEASE)
            .await
            .unwrap()
            .is_none()
    );
    tokio::time::sleep(LEASE + Duration::from_millis(200)).await;
    let taken = other
        .claim("q", &thief, wall_now(), LEASE)
        .await
        .unwrap()
        .expect("reclaimed");
    assert!(taken.token > job.token);

    // The victim's pool reconnects; its old fence is refused.
    let late = victim.complete(job.fence(), None, wall_now()).await.unwrap();
    assert_eq!(late, FenceOutcome::LostToNewerToken);
}

#[cfg(feature = "postgres")]
async fn terminate_sessions(url: &str, application_name: &str) {
    let admin = sqlx::PgPool::connect(url).await.unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    )
    .bind(application_name)
    .fetch_all(&admin)
    .await
    .unwrap();
    assert!(!killed.is_empty(), "the victim had a session");
    admin.close().await;
    // Let the termination reach the victim's socket.
    tokio::time::sleep(Duration::from_millis(100)).await;
}

#[cfg(not(feature = "postgres"))]
async fn terminate_sessions(_url: &str, _application_name: &str) {
    unreachable!("no PostgreSQL databases without the feature")
}
