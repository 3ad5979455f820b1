//! A cancelled job's running work stops and nothing of it lands: on
//! PostgreSQL the cancel's NOTIFY stops the handler at once, long before the
//! runner's next renewal; a worker cut off from the database when the cancel
//! lands ends the work by its lapse, and its late settle is refused.
#![cfg(feature = "sqlite")]

mod store_support;

use leasehold::runner::{AbortSignal, BoxError, ClaimLost, JobRunner};
use leasehold::store::{AttemptOutcome, BackendKind, ClaimedJob, EnqueueOptions, JobState, StoreConfig};
use leasehold::worker::{Handler, Settlement, Worker, WorkerStats};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store_support::{backends, lock, pg_db, unlock, wall_now};
use tokio::sync::Notify;

/// Says it started, waits for its signal, keeps why it fired, and then
/// answers a result anyway (as a command that finished as it was stopped).
struct Stubborn {
    started: Arc<Notify>,
    stopped: Arc<Mutex<Option<ClaimLost>>>,
    stopped_now: Arc<Notify>,
}

impl Handler for Stubborn {
    async fn handle(&self, _job: &ClaimedJob, signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        self.started.notify_one();
        let lost = signal.aborted().await;
        *self.stopped.lock().unwrap() = Some(lost);
        self.stopped_now.notify_one();
        Ok(Some(serde_json::json!({ "exitCode": 0 })))
    }
}

fn stubborn() -> (Stubborn, Arc<Notify>, Arc<Mutex<Option<ClaimLost>>>, Arc<Notify>) {
    let (started, stopped_now) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let stopped = Arc::new(Mutex::new(None));
    let handler = Stubborn { started: started.clone(), stopped: stopped.clone(), stopped_now: stopped_now.clone() };
    (handler, started, stopped, stopped_now)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_cancel_stops_the_handler_before_the_next_renewal() {
    let Some(db) = pg_db("worker_cancel_notify", StoreConfig::default()).await else { return };
    let store = &db.store;
    let id = store.enqueue("q", &serde_json::json!({}), &EnqueueOptions::default(), wall_now()).await.unwrap();
    let (handler, started, stopped, stopped_now) = stubborn();
    let lease = Duration::from_secs(90);
    let stats = WorkerStats::new();
    let worker = Worker::new(store.clone(), "q", handler).lease(lease).sharing_stats(stats.clone());
    // Renewals every 30 s: the first one after the claim is far away.
    let runner = JobRunner::builder("test.cancel")
        .stale_after(lease)
        .heartbeat_every(Duration::from_secs(30))
        .spawn(worker)
        .unwrap();
    runner.start();
    started.notified().await;
    store.cancel(&[id], Some("test"), "me", wall_now()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), stopped_now.notified())
        .await
        .expect("the handler is stopped by the NOTIFY, not by a renewal 30 s away");
    assert_eq!(stopped.lock().unwrap().as_ref().map(|l| l.lapsed), Some(false), "told lost, not lapsed");
    runner.dispose().await;
    let job = store.job(id).await.unwrap();
    assert_eq!(job.state, JobState::Cancelled);
    assert!(store.results(id).await.unwrap().is_empty(), "its answer is not recorded");
    let counted = stats.counters();
    assert_eq!((counted.losses, counted.lapses, counted.succeeded), (1, 0, 0), "one loss: {counted:?}");
}

/// The stale window; the database is locked for twice that.
const STALE: Duration = Duration::from_secs(6);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_the_worker_is_cut_off_ends_the_work_by_its_lapse_and_refuses_the_late_settle() {
    for db in backends("worker_cancel_cut_off").await {
        let store = &db.store;
        let id = store.enqueue("q", &serde_json::json!({}), &EnqueueOptions::default(), wall_now()).await.unwrap();
        let (handler, started, stopped, stopped_now) = stubborn();
        let settled: Arc<Mutex<Vec<Settlement>>> = Arc::default();
        let stats = WorkerStats::new();
        let worker = Worker::new(db.second_store(StoreConfig::default()).await, "q", handler).lease(STALE).sharing_stats(stats.clone()).on_settled({
            let settled = settled.clone();
            move |_, s| settled.lock().unwrap().push(s.clone())
        });
        let runner = JobRunner::builder("test.cancel")
            .stale_after(STALE)
            .heartbeat_every(Duration::from_secs(1))
            .spawn(worker)
            .unwrap();
        runner.start();
        started.notified().await;
        store.cancel(&[id], Some("cut off"), "me", wall_now()).await.unwrap();
        // The worker is cut off from here on: its renewals cannot answer.
        let held = lock(&db).await;
        tokio::time::timeout(STALE * 2, stopped_now.notified()).await.expect("the lapse ends the work");
        let lost = stopped.lock().unwrap().clone().expect("stopped");
        if db.kind == BackendKind::Sqlite {
            assert!(lost.lapsed, "sqlite: no renewal could answer; the lapse ended it");
        }
        unlock(held).await;
        tokio::time::sleep(STALE).await;
        runner.dispose().await;
        let job = store.job(id).await.unwrap();
        assert_eq!(job.state, JobState::Cancelled, "{}", db.label());
        assert!(store.results(id).await.unwrap().is_empty(), "{}: the late answer is not recorded", db.label());
        assert!(job.attempt_log.iter().all(|a| a.outcome != AttemptOutcome::Succeeded), "{}", db.label());
        let settled = settled.lock().unwrap().clone();
        assert!(matches!(settled.as_slice(), [Settlement::Lost { .. }]), "{}: refused once: {settled:?}", db.label());
        let counted = stats.counters();
        assert_eq!(
            counted.lapses + counted.losses,
            1,
            "{}: the lapse and the refused settle that followed it are one loss: {counted:?}",
            db.label()
        );
        if db.kind == BackendKind::Sqlite {
            assert_eq!(counted.lapses, 1, "{counted:?}");
        }
    }
}
