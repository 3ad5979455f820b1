//! `OnSuccess::Delete`: a completion deletes the job it completes, with its
//! attempt log and results, under the same fence as a completion that keeps
//! it; every other write keeps the job as before.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::lease::FenceOutcome;
use leasehold::store::{
    FailOutcome, JobId, JobState, OnSuccess, Store, StoreConfig, StoreError,
};
use serde_json::json;
use store_support::{TestDb, attempts, backend_test, backends_with, keyed, owner, raw_rows, without_results};

// As in store_fencing: long enough that a loaded machine never stalls a
// whole window between two statements on PostgreSQL (real time).
const LEASE: Duration = Duration::from_secs(1);

fn deleting() -> StoreConfig {
    StoreConfig::default().with_on_success(OnSuccess::Delete)
}

async fn exists(s: &Store, id: JobId) -> bool {
    match s.job(id).await {
        Ok(_) => true,
        Err(StoreError::UnknownJob { .. }) => false,
        Err(e) => panic!("reading job {id:?}: {e}"),
    }
}

/// Counts of (succeeded, dead) jobs in queue `q`.
async fn finished(db: &TestDb) -> (u64, u64) {
    let counts = db.store.counts(db.now()).await.unwrap();
    counts
        .iter()
        .find(|c| c.queue == "q")
        .map_or((0, 0), |c| (c.succeeded, c.dead))
}

backend_test! {
    async fn a_completion_deletes_the_job_with_its_attempt_log_and_results(db with deleting()) {
        let s = &db.store;
        let twice = attempts(2);
        let id = db.enqueue_with("q", json!("x"), &twice).await;
        let me = owner("h", "a");
        // A failed first attempt (logged, with a result), then a second.
        let first = db.claim("q", &me, LEASE).await;
        let failed = s.fail(first.fence(), "boom", Some(&json!({"exit": 1})), db.now()).await.unwrap();
        assert!(matches!(failed, FailOutcome::Retrying { .. }));
        db.advance(Duration::from_millis(1100)).await;
        let second = db.try_claim("q", &me, LEASE).await.expect("the retry is due");
        assert_eq!(raw_rows(&db, &[id.0], "leasehold_attempts").await, 1);
        assert_eq!(raw_rows(&db, &[id.0], "leasehold_results").await, 1);

        assert_eq!(s.complete(second.fence(), None, db.now()).await.unwrap(), FenceOutcome::Updated);
        assert!(!exists(s, id).await, "{}: the completed job is still there", db.label());
        assert_eq!(raw_rows(&db, &[id.0], "leasehold_attempts").await, 0, "{}: attempt rows remain", db.label());
        assert_eq!(raw_rows(&db, &[id.0], "leasehold_results").await, 0, "{}: result rows remain", db.label());
        assert_eq!(finished(&db).await, (0, 0));
        // Completing it again lands nowhere.
        assert_eq!(s.complete(second.fence(), None, db.now()).await.unwrap(), FenceOutcome::LostMissing);
    }
}

backend_test! {
    async fn a_stale_token_cannot_delete_the_job(db with deleting()) {
        let s = &db.store;
        let old = db.enqueue_and_claim("q", &owner("h1", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        let new = db.claim("q", &owner("h2", "b"), LEASE).await;
        assert_eq!((new.id, new.token > old.token), (old.id, true));

        assert_eq!(s.complete(old.fence(), None, db.now()).await.unwrap(), FenceOutcome::LostToNewerToken);
        let record = s.job(old.id).await.unwrap();
        assert_eq!((record.state, record.token), (JobState::Running, new.token));
        // The lost attempt's log row goes with the job once the new owner completes it.
        assert_eq!(raw_rows(&db, &[old.id.0], "leasehold_attempts").await, 1);
        assert_eq!(s.complete(new.fence(), None, db.now()).await.unwrap(), FenceOutcome::Updated);
        assert!(!exists(s, old.id).await);
        assert_eq!(raw_rows(&db, &[old.id.0], "leasehold_attempts").await, 0);
    }
}

backend_test! {
    async fn a_batch_deletes_only_the_jobs_whose_fence_holds(db with deleting()) {
        let s = &db.store;
        db.enqueue_n("q", 3).await;
        let page = db.claim_page("q", &owner("h", "a"), LEASE, 3).await;
        assert_eq!(page.len(), 3);
        let mut wrong = page[1].fence();
        wrong.token += 1;
        let outcomes = s.complete_many(&without_results(&[page[0].fence(), wrong, page[2].fence()]), db.now()).await.unwrap();
        assert_eq!(
            outcomes,
            [FenceOutcome::Updated, FenceOutcome::LostToNewerToken, FenceOutcome::Updated]
        );
        assert!(!exists(s, page[0].id).await && !exists(s, page[2].id).await);
        assert_eq!(s.job(page[1].id).await.unwrap().state, JobState::Running);
    }
}

/// The fused completion deletes too, whether or not its claim looks for
/// stale leases (PostgreSQL runs a different statement for each).
#[tokio::test]
async fn complete_and_claim_deletes_the_completed_job_and_claims_the_next() {
    for every in [Duration::ZERO, Duration::from_secs(3600)] {
        let config = deleting().with_reclaim_every(every);
        for db in backends_with("on_success_fused", config).await {
            let s = &db.store;
            db.enqueue_n("q", 3).await;
            let me = owner("h", "a");
            let mut job = db.claim("q", &me, LEASE).await;
            for _ in 0..2 {
                let (outcome, page) = db.complete_and_claim(job.fence(), None, "q", &me, LEASE, 1).await;
                assert_eq!(outcome, FenceOutcome::Updated, "{} every {every:?}", db.label());
                assert!(!exists(s, job.id).await, "{} every {every:?}: job {:?} kept", db.label(), job.id);
                job = page.into_iter().next().expect("the next job");
                assert_eq!(s.job(job.id).await.unwrap().state, JobState::Running);
            }
            assert_eq!(s.complete(job.fence(), None, db.now()).await.unwrap(), FenceOutcome::Updated);
            assert!(s.counts(db.now()).await.unwrap().iter().all(|c| c.queue != "q"), "{}: jobs left", db.label());
        }
    }
}

backend_test! {
    async fn failed_and_dead_lettered_jobs_are_kept_and_a_deleted_jobs_key_is_free_again(db with deleting()) {
        let s = &db.store;
        let me = owner("h", "a");
        let once = attempts(1);
        let dead = db.enqueue_with("q", json!("dead"), &once).await;
        let job = db.claim("q", &me, LEASE).await;
        assert_eq!(s.fail(job.fence(), "boom", None, db.now()).await.unwrap(), FailOutcome::DeadLettered);
        assert_eq!(s.job(dead).await.unwrap().state, JobState::Dead);
        assert_eq!(finished(&db).await, (0, 1));

        let keyed = keyed("k");
        let first = db.enqueue_with("q", json!("first"), &keyed).await;
        assert_eq!(db.enqueue_with("q", json!("again"), &keyed).await, first);
        let job = db.claim("q", &me, LEASE).await;
        assert_eq!(job.id, first);
        s.complete(job.fence(), None, db.now()).await.unwrap();
        let second = db.enqueue_with("q", json!("second"), &keyed).await;
        assert_ne!(second, first, "{}: the key still named the deleted job", db.label());
    }
}

/// The default keeps succeeded jobs: the same completion leaves the row.
#[tokio::test]
async fn the_default_keeps_succeeded_jobs() {
    assert_eq!(StoreConfig::default().on_success, OnSuccess::Keep);
    for db in backends_with("on_success_keep", StoreConfig::default()).await {
        let s = &db.store;
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        s.complete(job.fence(), None, db.now()).await.unwrap();
        assert_eq!(s.job(job.id).await.unwrap().state, JobState::Succeeded);
        assert_eq!(finished(&db).await, (1, 0));
    }
}

backend_test! {
    /// An enqueue whose key conflicts with a job that a deleting completion
    /// removes before the enqueue reads its id inserts the job again, rather
    /// than failing: one task enqueues under one key while another completes
    /// (and so deletes) each job as soon as it is claimed. Every enqueue gets
    /// an id, and no key ever names two jobs at once.
    async fn enqueues_under_a_key_whose_job_is_being_deleted_always_get_an_id(db with deleting()) {
        let deleter = db.second_store(deleting()).await;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let worker = {
            let stop = stop.clone();
            let now = db.now();
            tokio::spawn(async move {
                let me = owner("h", "deleter");
                let mut completed = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    match deleter.claim("q", &me, now, LEASE).await.unwrap() {
                        Some(job) => {
                            deleter.complete(job.fence(), None, now).await.unwrap();
                            completed += 1;
                        }
                        None => tokio::task::yield_now().await,
                    }
                }
                completed
            })
        };
        let keyed = keyed("k");
        let started = std::time::Instant::now();
        let mut enqueued = 0u64;
        while started.elapsed() < Duration::from_secs(2) {
            if let Err(e) = db.store.enqueue("q", &json!("x"), &keyed, db.now()).await {
                stop.store(true, std::sync::atomic::Ordering::Relaxed);
                panic!("{}: enqueue {enqueued} failed: {e}", db.label());
            }
            enqueued += 1;
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let completed = worker.await.unwrap();
        assert!(completed > 10, "{}: only {completed} of {enqueued} enqueues were completed meanwhile", db.label());
    }
}

backend_test! {
    /// `tally` of a set of jobs counts those deleted once finished, so a `run`
    /// watching its jobs while another worker deletes them sees them settled.
    async fn a_tally_counts_the_deleted_jobs_apart(db with deleting()) {
        let s = &db.store;
        let ids = db.enqueue_n("q", 3).await;
        let job = db.claim("q", &owner("h", "a"), LEASE).await;
        s.complete(job.fence(), None, db.now()).await.unwrap();
        let listed_twice = [ids.as_slice(), &ids[..1]].concat();
        let tally = s.tally(&listed_twice).await.unwrap();
        assert_eq!(
            (tally.queued, tally.running, tally.succeeded, tally.deleted, tally.unsettled()),
            (2, 0, 0, 1, 2)
        );
    }
}
