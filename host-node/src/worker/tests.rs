//! A job that comes back to the worker that finished it, under a newer
//! token, is settled with the outcome that worker holds, not run again.
//!
//! How it comes back: the worker's claim leaves its held jobs alone, but on
//! PostgreSQL a claim statement held up by a lock runs with the clock of when
//! it ran (measured: a claim sent before a 3 s `LOCK TABLE` stamps its
//! `statement_timestamp()` 3 s later) and the exclusion list of when it was
//! sent. A job that finished meanwhile and whose lease went stale is then
//! taken over by the worker's own claim, which fences its own settle out.
//! These tests set up the state that leaves, on SQLite: the job taken over
//! by the worker's own claim while its outcome is held, or after its settle
//! was refused for it.

use super::*;
use crate::runner::JobRunner;
use crate::store::{EnqueueOptions, JobState};
use std::sync::atomic::AtomicU32;
use std::time::{SystemTime, UNIX_EPOCH};

const LEASE: Duration = Duration::from_secs(30);

/// Counts its runs; each answers `{"run": n}`.
struct Counted(Arc<AtomicU32>);

impl Handler for Counted {
    async fn handle(&self, _job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<serde_json::Value>, BoxError> {
        let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
        Ok(Some(serde_json::json!({ "run": n })))
    }
}

fn wall_now() -> Millis {
    Millis(SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_millis() as u64)
}

struct Setup {
    store: Store,
    worker: Worker<Counted>,
    runs: Arc<AtomicU32>,
    settled: Arc<Mutex<Vec<Settlement>>>,
    /// The job as the worker's first claim got it.
    first: ClaimedJob,
    _dir: tempfile::TempDir,
}

/// A worker whose first claim got the job, with `{"run": "first"}` held
/// for it.
async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("queue.db").display());
    let store = Store::connect(&url).await.unwrap();
    store.enqueue("q", &serde_json::json!({}), &EnqueueOptions::default(), wall_now()).await.unwrap();
    let runs = Arc::new(AtomicU32::new(0));
    let settled: Arc<Mutex<Vec<Settlement>>> = Arc::default();
    let worker = Worker::new(store.clone(), "q", Counted(runs.clone())).lease(LEASE).on_settled({
        let settled = settled.clone();
        move |_, s| settled.lock().unwrap().push(s.clone())
    });
    let first = store.claim_page("q", worker.owner(), wall_now(), LEASE, 1).await.unwrap().remove(0);
    worker.held.hold(first.id, first.token, Reached::Completed(Some(serde_json::json!({ "run": "first" }))));
    Setup { store, worker, runs, settled, first, _dir: dir }
}

/// The worker's own claim, made once the lease is stale, takes the job
/// over; the page it answered is the worker's next claim, as a claim held
/// up would hand it over.
async fn take_over_by_own_claim(s: &Setup) {
    let later = Millis(wall_now().0 + LEASE.as_millis() as u64 + 1_000);
    let taken = s.store.claim_page("q", s.worker.owner(), later, LEASE, 1).await.unwrap();
    assert_eq!(taken.len(), 1, "the worker's own stale lease is taken over");
    assert!(taken[0].token > s.first.token, "under a new token");
    let mut page = s.worker.page.lock().unwrap();
    page.jobs.extend(taken);
    page.claimed_at = wall_now();
}

/// Runs one pass of the worker; answers the job as it ended.
async fn run(s: Setup) -> (crate::store::JobRecord, Vec<(u64, serde_json::Value)>, u32, Vec<Settlement>) {
    let (store, id, runs, settled) = (s.store.clone(), s.first.id, s.runs.clone(), s.settled.clone());
    let runner = JobRunner::builder("test.adopt").stale_after(LEASE).spawn(s.worker).unwrap();
    runner.tick().await;
    runner.dispose().await;
    let job = store.job(id).await.unwrap();
    let results = store.results(id).await.unwrap();
    let settled = settled.lock().unwrap().clone();
    (job, results, runs.load(Ordering::SeqCst), settled)
}

#[tokio::test]
async fn a_job_taken_over_by_its_own_worker_while_its_outcome_is_held_is_settled_with_it() {
    let s = setup().await;
    take_over_by_own_claim(&s).await;
    let first_token = s.first.token;
    let (job, results, runs, settled) = run(s).await;
    assert_eq!(runs, 0, "the finished work is not run again");
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].0 > first_token, "recorded under the new lease: {results:?}");
    assert_eq!(results[0].1, serde_json::json!({ "run": "first" }));
    assert_eq!(settled, vec![Settlement::Completed]);
}

#[tokio::test]
async fn a_job_taken_over_by_its_own_worker_after_its_settle_was_refused_is_settled_with_its_outcome() {
    let s = setup().await;
    take_over_by_own_claim(&s).await;
    // The settle under the first token ran after the takeover: refused.
    let answer = Job::settle(&s.worker, Arc::new(s.first.clone()), Ok(())).await.unwrap();
    assert!(matches!(answer, Settled::FenceRefused));
    let (job, results, runs, settled) = run(s).await;
    assert_eq!(runs, 0, "the finished work is not run again");
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].1, serde_json::json!({ "run": "first" }));
    assert_eq!(settled, vec![Settlement::Lost { lapsed: false }, Settlement::Completed]);
}

#[tokio::test]
async fn an_outcome_refused_for_another_workers_takeover_is_kept_one_lease_only() {
    let s = setup().await;
    let id = s.first.id;
    s.worker.held.refused(id, s.first.token, Instant::now());
    assert!(!s.worker.held.adopt(id, s.first.token + 1), "kept no longer than asked");
    assert!(s.worker.held.is_empty(), "a refused outcome is not waiting for its settle");
}
