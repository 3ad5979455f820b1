//! Finished work is never thrown away: a worker whose database is locked for
//! twice the stale window while its handler finishes records that job once,
//! and never runs it again (on SQLite: another connection holds `BEGIN
//! EXCLUSIVE` past the store's busy timeout; on PostgreSQL: another
//! connection holds `LOCK TABLE leasehold_jobs IN ACCESS EXCLUSIVE MODE`).
#![cfg(feature = "sqlite")]

mod store_support;

use leasehold::runner::{AbortSignal, BoxError, JobRunner};
use leasehold::store::{ClaimedJob, EnqueueOptions, JobState};
use leasehold::worker::{Handler, Settlement, Worker, WorkerStats};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store_support::{backends, lock, unlock, wall_now};
use tokio::sync::Notify;

/// The stale window; the lock is held for twice that (past SQLite's 10 s busy
/// timeout, so its writes fail rather than wait).
const STALE: Duration = Duration::from_secs(6);

/// Counts its runs per job; the first run answers once `go` is notified.
struct Counted {
    runs: Arc<Mutex<HashMap<i64, u32>>>,
    started: Arc<Notify>,
    go: Arc<Notify>,
}

impl Handler for Counted {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        let first = {
            let mut runs = self.runs.lock().unwrap();
            let n = runs.entry(job.id.0).or_default();
            *n += 1;
            *n == 1
        };
        if first {
            self.started.notify_one();
            self.go.notified().await;
        }
        Ok(Some(serde_json::json!({ "exitCode": 0 })))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_finished_while_the_database_is_locked_for_twice_the_stale_window_is_recorded_once_and_never_run_again() {
    for db in backends("worker_outage").await {
        let store = &db.store;
        let id = store.enqueue("q", &serde_json::json!({}), &EnqueueOptions::default(), wall_now()).await.unwrap();
        let runs: Arc<Mutex<HashMap<i64, u32>>> = Arc::default();
        let (started, go) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let settled: Arc<Mutex<Vec<Settlement>>> = Arc::default();
        let handler = Counted { runs: runs.clone(), started: started.clone(), go: go.clone() };
        let stats = WorkerStats::new();
        let worker = Worker::new(store.clone(), "q", handler).lease(STALE).sharing_stats(stats.clone()).on_settled({
            let settled = settled.clone();
            move |_, s| settled.lock().unwrap().push(s.clone())
        });
        // Two workers in the runner: the free one keeps claiming (every
        // 100 ms) and would take the stale lease over once the lock goes.
        let runner = JobRunner::builder("test.outage")
            .interval(Duration::from_millis(100))
            .stale_after(STALE)
            .heartbeat_every(Duration::from_secs(1))
            .concurrency(2)
            .spawn(worker)
            .unwrap();
        runner.start();
        started.notified().await;
        let held = lock(&db).await;
        go.notify_one();
        tokio::time::sleep(STALE * 2).await;
        unlock(held).await;
        // Long enough for the settle to land and for a second run, if any,
        // to start and finish.
        tokio::time::sleep(STALE).await;
        runner.dispose().await;
        let job = store.job(id).await.unwrap();
        assert_eq!(job.state, JobState::Succeeded, "{}", db.label());
        assert_eq!(job.attempts, 1, "{}: claimed once", db.label());
        assert_eq!(runs.lock().unwrap().get(&id.0), Some(&1), "{}: run once", db.label());
        assert_eq!(*settled.lock().unwrap(), vec![Settlement::Completed], "{}", db.label());
        assert_eq!(store.results(id).await.unwrap().len(), 1, "{}: its result recorded with it", db.label());
        let counted = stats.counters();
        assert_eq!(
            (counted.claimed, counted.lapses, counted.losses, counted.succeeded),
            (1, 0, 0, 1),
            "{}: an outcome held through the outage is neither a lapse nor a loss: {counted:?}",
            db.label()
        );
    }
}

/// Runs each job at once, counting its runs.
struct Quick {
    runs: Arc<Mutex<HashMap<i64, u32>>>,
}

impl Handler for Quick {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        *self.runs.lock().unwrap().entry(job.id.0).or_default() += 1;
        Ok(None)
    }
}

/// A claim that waited behind a lock and was heard after its write
/// tolerance is not performed; it is handed back at once (its attempt not
/// counted), so the same pass claims the job again and runs it, instead of
/// the job staying `running` under the declined lease until it is stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_declined_after_a_stall_is_claimable_again_at_once() {
    const LEASE: Duration = Duration::from_secs(8);
    for db in backends("worker_declined").await {
        let store = &db.store;
        let id = store.enqueue("q", &serde_json::json!({}), &EnqueueOptions::default(), wall_now()).await.unwrap();
        let runs: Arc<Mutex<HashMap<i64, u32>>> = Arc::default();
        let worker = Worker::new(store.clone(), "q", Quick { runs: runs.clone() }).lease(LEASE);
        let runner = JobRunner::builder("test.declined")
            .stale_after(LEASE)
            .heartbeat_every(Duration::from_secs(1))
            .spawn(worker)
            .unwrap();
        // The claim waits 7 s behind the lock (under SQLite's busy
        // timeout), past its write tolerance (at most 8 − 1 − 0.5 s).
        let held = lock(&db).await;
        let pass = tokio::spawn({
            let runner = runner.clone();
            async move { runner.tick().await }
        });
        tokio::time::sleep(Duration::from_secs(7)).await;
        unlock(held).await;
        let report = pass.await.unwrap();
        let job = store.job(id).await.unwrap();
        assert_eq!(job.state, JobState::Succeeded, "{}: claimed again in the same pass, {report:?}", db.label());
        assert_eq!((report.claim_lost, report.performed), (1, 1), "{}", db.label());
        assert_eq!(job.attempts, 1, "{}: the declined claim's attempt is not counted", db.label());
        assert_eq!(runs.lock().unwrap().get(&id.0), Some(&1), "{}", db.label());
        runner.dispose().await;
    }
}
