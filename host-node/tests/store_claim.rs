//! Claims: order, pages, fencing tokens, reclaim of stale leases under the
//! liveness check, and concurrent claimers.

#![cfg(feature = "sqlite")]

mod store_support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use leasehold::core::Millis;
use leasehold::core::lease::{FenceOutcome, LivenessCheck, LivenessContext, OwnerId};
use leasehold::store::{AttemptOutcome, EnqueueOptions, JobState, StoreConfig};
use serde_json::json;
use store_support::{attempts, backend_test, backends_with, job_ids, owner};

// Long enough that a loaded machine never stalls a whole window between two
// statements of a test on PostgreSQL (where time passes for real).
const LEASE: Duration = Duration::from_secs(1);

backend_test! {
    async fn claim_takes_priority_then_due_time_then_id(db) {
        let now = db.now();
        let opts = |priority: i32, run_at: u64| EnqueueOptions {
            priority,
            run_at: Some(Millis(now.0 - run_at)),
            ..Default::default()
        };
        // Enqueued out of order on purpose.
        let late_low = db.enqueue_with("q", json!("late-low"), &opts(5, 10)).await;
        let early_low = db.enqueue_with("q", json!("early-low"), &opts(5, 20)).await;
        let high = db.enqueue_with("q", json!("high"), &opts(1, 1)).await;
        let tie_a = db.enqueue_with("q", json!("tie-a"), &opts(5, 10)).await;
        let me = owner("h", "n1");
        let mut order = Vec::new();
        while let Some(job) = db.try_claim("q", &me, LEASE).await {
            order.push(job.id);
        }
        assert_eq!(order, [high, early_low, late_low, tie_a]);
    }
}

backend_test! {
    async fn job_not_yet_due_is_not_claimed(db) {
        let opts = EnqueueOptions {
            delay: Some(Duration::from_secs(1)),
            ..Default::default()
        };
        let id = db.enqueue_with("q", json!(1), &opts).await;
        let me = owner("h", "n1");
        assert!(db.try_claim("q", &me, LEASE).await.is_none());
        db.advance(Duration::from_millis(1100)).await;
        let job = db.try_claim("q", &me, LEASE).await.expect("due now");
        assert_eq!(job.id, id);
    }
}

backend_test! {
    async fn claim_only_sees_its_own_queue(db) {
        db.enqueue("other", json!(1)).await;
        assert!(db.try_claim("q", &owner("h", "n"), LEASE).await.is_none());
    }
}

backend_test! {
    async fn claim_hands_out_payload_attempt_timeout_and_a_first_token(db) {
        let s = &db.store;
        let opts = EnqueueOptions {
            max_attempts: 3,
            timeout: Some(Duration::from_secs(9)),
            ..Default::default()
        };
        let id = db.enqueue_with("q", json!({"to": "a@b"}), &opts).await;
        let job = db.claim("q", &owner("h", "n"), LEASE).await;
        assert_eq!(job.id, id);
        assert_eq!(job.payload, json!({"to": "a@b"}));
        assert_eq!((job.attempt, job.max_attempts, job.token), (1, 3, 1));
        assert_eq!(job.timeout, Some(Duration::from_secs(9)));
        assert!(!job.reclaimed);
        let record = s.job(id).await.unwrap();
        assert_eq!(record.state, JobState::Running);
        let lease = record.lease.expect("running job has a lease");
        assert_eq!(lease.owner.nonce, "n");
        assert_eq!(lease.token, 1);
        assert_eq!(lease.lease_ms, LEASE.as_millis() as u64);
        assert_eq!(record.attempt_log.len(), 1);
        assert_eq!(record.attempt_log[0].outcome, AttemptOutcome::Running);
    }
}

backend_test! {
    async fn claim_page_takes_up_to_n_in_queue_order(db) {
        let ids = db.enqueue_n("q", 7).await;
        let me = owner("h", "n");
        let page = db.claim_page("q", &me, LEASE, 5).await;
        assert_eq!(job_ids(&page), ids[..5]);
        let rest = db.claim_page("q", &me, LEASE, 5).await;
        assert_eq!(job_ids(&rest), ids[5..]);
        assert!(db.claim_page("q", &me, LEASE, 5).await.is_empty());
    }
}

backend_test! {
    async fn page_size_outside_bounds_is_refused(db) {
        let me = owner("h", "n");
        for n in [0, 1001] {
            let err = db.store.claim_page("q", &me, db.now(), LEASE, n).await.unwrap_err();
            assert!(err.to_string().contains("page size"), "{n}: {err}");
        }
    }
}

backend_test! {
    async fn stale_lease_is_reclaimed_with_a_greater_token(db) {
        let s = &db.store;
        let first = db.enqueue_and_claim("q", &owner("h1", "a"), LEASE).await;
        // Inside the window: nobody else may take it.
        db.advance(LEASE / 2).await;
        assert!(db.try_claim("q", &owner("h2", "b"), LEASE).await.is_none());
        db.advance(LEASE).await;
        let second = db.claim("q", &owner("h2", "b"), LEASE).await;
        assert_eq!(second.id, first.id);
        assert!(second.token > first.token);
        assert!(second.reclaimed);
        assert_eq!(second.attempt, 2);
        let record = s.job(first.id).await.unwrap();
        assert_eq!(record.lease.unwrap().owner.nonce, "b");
        let log = &record.attempt_log;
        assert_eq!(log.len(), 2);
        assert_eq!(log[0].outcome, AttemptOutcome::LeaseLost);
        assert_eq!(log[0].owner.nonce, "a");
        assert!(
            log[0].error.as_deref().unwrap().contains("reclaimed by h2"),
            "{:?}",
            log[0]
        );
        assert_eq!(
            (log[1].outcome, log[1].token),
            (AttemptOutcome::Running, second.token)
        );
    }
}

backend_test! {
    async fn stale_jobs_come_before_queued_ones_in_a_page(db) {
        let old = db.enqueue("q", json!("old")).await;
        db.claim("q", &owner("h1", "a"), LEASE).await;
        let fresh = db.enqueue("q", json!("new")).await;
        db.advance(LEASE * 2).await;
        let page = db.claim_page("q", &owner("h2", "b"), LEASE, 1).await;
        assert_eq!(job_ids(&page), [old]);
        let page = db.claim_page("q", &owner("h2", "b"), LEASE, 5).await;
        assert_eq!(job_ids(&page), [fresh]);
    }
}

/// Calls one nonce alive, whatever the lease says; counts the questions.
struct AliveNonce {
    nonce: &'static str,
    asked: std::sync::atomic::AtomicUsize,
}

impl LivenessCheck for AliveNonce {
    fn is_alive(&self, expected: &OwnerId, context: &LivenessContext<'_>) -> bool {
        assert_eq!(
            context.claimant.nonce, "b",
            "the context names the claimant"
        );
        assert!(
            context.heartbeat_at.is_some(),
            "the context carries the persisted heartbeat"
        );
        self.asked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        expected.nonce == self.nonce
    }
}

#[tokio::test]
async fn stale_job_whose_owner_is_called_alive_is_not_reclaimed() {
    let check = Arc::new(AliveNonce {
        nonce: "a",
        asked: Default::default(),
    });
    let config = StoreConfig::default().with_liveness(check.clone());
    for db in backends_with("claim_liveness_refuses", config).await {
        let s = &db.store;
        let held = db.enqueue_and_claim("q", &owner("h1", "a"), LEASE).await.id;
        let other = db.enqueue("q", json!(2)).await;
        db.advance(LEASE * 2).await;
        let asked_before = check.asked.load(std::sync::atomic::Ordering::SeqCst);
        // A page of one: the refused stale job must not starve the queue.
        let job = db.try_claim("q", &owner("h2", "b"), LEASE).await;
        let job = match job {
            Some(job) => job,
            // The refused candidate took this page's slot; the next claim skips it.
            None => db.claim("q", &owner("h2", "b"), LEASE).await,
        };
        assert_eq!(job.id, other);
        assert_eq!(
            check.asked.load(std::sync::atomic::Ordering::SeqCst),
            asked_before + 1
        );
        assert_eq!(s.job(held).await.unwrap().lease.unwrap().owner.nonce, "a");
        // Asked again once another lease window has passed.
        db.advance(LEASE * 2).await;
        assert!(db.try_claim("q", &owner("h2", "b"), LEASE).await.is_none());
        assert_eq!(
            check.asked.load(std::sync::atomic::Ordering::SeqCst),
            asked_before + 2
        );
    }
}

backend_test! {
    async fn concurrent_claimers_never_share_a_job_and_token(db) {
        db.enqueue_n("q", 300).await;
        let mut tasks = Vec::new();
        for store_n in 0..3 {
            let store = db
                .second_store(StoreConfig::default().with_max_connections(4))
                .await;
            for task_n in 0..4 {
                let store = store.clone();
                let now = db.now();
                let me = owner("h", &format!("s{store_n}t{task_n}"));
                tasks.push(tokio::spawn(async move {
                    let mut got = Vec::new();
                    loop {
                        let page = store
                            .claim_page("q", &me, now, Duration::from_secs(60), 3)
                            .await
                            .unwrap();
                        if page.is_empty() {
                            return got;
                        }
                        got.extend(page.into_iter().map(|j| (j.id, j.token)));
                    }
                }));
            }
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        let pairs: HashSet<_> = all.iter().copied().collect();
        let ids: HashSet<_> = all.iter().map(|(id, _)| *id).collect();
        assert_eq!(
            pairs.len(),
            all.len(),
            "{}: a (job, token) was handed out twice",
            db.label()
        );
        assert_eq!(
            ids.len(),
            300,
            "{}: every job claimed exactly once",
            db.label()
        );
    }
}

backend_test! {
    async fn concurrent_reclaimers_of_stale_jobs_never_share_a_token(db) {
        let jobs: Vec<_> = (0..40)
            .map(|i| (json!(i), EnqueueOptions::default()))
            .collect();
        let opts_many: Vec<_> = jobs
            .into_iter()
            .map(|(p, _)| {
                (
                    p,
                    attempts(1000),
                )
            })
            .collect();
        db.store
            .enqueue_many("q", &opts_many, db.now())
            .await
            .unwrap();
        // Leases of 1 ms go stale at once, so every round is a race of
        // reclaims over the same snapshots.
        let mut tasks = Vec::new();
        for n in 0..6 {
            let store = db
                .second_store(StoreConfig::default().with_max_connections(2))
                .await;
            let clock_base = db.now();
            tasks.push(tokio::spawn(async move {
                let me = owner("h", &format!("r{n}"));
                let mut got = Vec::new();
                for round in 0..15u64 {
                    let now = Millis(clock_base.0 + round * 10);
                    let page = store
                        .claim_page("q", &me, now, Duration::from_millis(1), 8)
                        .await
                        .unwrap();
                    got.extend(page.into_iter().map(|j| (j.id, j.token)));
                    tokio::time::sleep(Duration::from_millis(3)).await;
                }
                got
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        let pairs: HashSet<_> = all.iter().copied().collect();
        assert_eq!(
            pairs.len(),
            all.len(),
            "{}: a (job, token) was handed out twice",
            db.label()
        );
        assert!(
            all.len() > 40,
            "{}: some jobs were reclaimed ({} claims)",
            db.label(),
            all.len()
        );
    }
}

backend_test! {
    async fn complete_and_claim_settles_one_and_claims_the_next(db) {
        let s = &db.store;
        let ids = db.enqueue_n("q", 3).await;
        let me = owner("h", "a");
        let first = db.claim("q", &me, LEASE).await;
        let (done, next) = db.complete_and_claim(first.fence(), None, "q", &me, LEASE, 1).await;
        assert_eq!(done, FenceOutcome::Updated);
        assert_eq!(job_ids(&next), [ids[1]]);
        assert_eq!(s.job(ids[0]).await.unwrap().state, JobState::Succeeded);
        // A lost fence is reported, and the claim still happens.
        let (again, last) = db.complete_and_claim(first.fence(), None, "q", &me, LEASE, 5).await;
        assert_eq!(again, FenceOutcome::LostNotRunning);
        assert_eq!(job_ids(&last), [ids[2]]);
        assert_eq!(s.job(ids[1]).await.unwrap().state, JobState::Running);
    }
}

backend_test! {
    async fn complete_and_claim_with_a_reclaimed_token_changes_nothing_and_says_why(db) {
        let s = &db.store;
        let ids = db.enqueue_n("q", 2).await;
        let lost = db.claim("q", &owner("h1", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        let thief = owner("h2", "b");
        let taken = db.claim("q", &thief, LEASE).await;
        assert_eq!((taken.id, taken.reclaimed), (lost.id, true));
        // The first owner's completion rides a claim: the fence is lost to
        // the newer token, the job stays the thief's, the claim still lands.
        let (outcome, page) = db.complete_and_claim(lost.fence(), None, "q", &owner("h1", "a"), LEASE, 5).await;
        assert_eq!(outcome, FenceOutcome::LostToNewerToken);
        assert_eq!(job_ids(&page), [ids[1]]);
        let record = s.job(ids[0]).await.unwrap();
        assert_eq!(record.state, JobState::Running);
        assert_eq!(record.token, taken.token);
        assert_eq!(record.lease.unwrap().owner.nonce, "b");
        // The thief's completion lands.
        assert_eq!(
            s.complete(taken.fence(), None, db.now()).await.unwrap(),
            FenceOutcome::Updated
        );
    }
}

/// The scene of the reclaim cadence tests: a claim that looks (the queue's
/// first) and finds nothing, then a job claimed under a 500 ms lease, then
/// 1 s on: the job's lease is stale, and 1 s has passed since the look.
/// Answers the job as first claimed.
async fn stale_one_second_after_a_look(db: &store_support::TestDb) -> leasehold::store::ClaimedJob {
    let s = &db.store;
    db.enqueue("q", json!(1)).await;
    // The first claim on the queue looks for stale leases, and (SQLite)
    // watches the running ones from then on, its own new one included.
    let first = s
        .claim("q", &owner("h1", "a"), db.now(), Duration::from_millis(500))
        .await
        .unwrap()
        .unwrap();
    db.advance(Duration::from_secs(1)).await;
    first
}

const LONG: Duration = Duration::from_secs(10);

/// The default config, looking for stale leases at most once per `span`.
fn reclaim_every(span: Duration) -> StoreConfig {
    StoreConfig::default().with_reclaim_every(span)
}

backend_test! {
    /// Claims on a queue look for stale leases at most once per
    /// `reclaim_every`; the claims in between take queued jobs only.
    async fn a_stale_lease_is_reclaimed_at_the_next_look_not_before(db with reclaim_every(Duration::from_secs(2))) {
        let s = &db.store;
        let first = stale_one_second_after_a_look(&db).await;
        assert!(
            db.try_claim("q", &owner("h2", "b"), LONG).await.is_none(),
            "{}: a claim between looks took a stale job",
            db.label()
        );
        assert_eq!(s.job(first.id).await.unwrap().lease.unwrap().owner.nonce, "a");
        db.advance(Duration::from_millis(1200)).await;
        let taken = db.try_claim("q", &owner("h2", "b"), LONG).await.expect("the look after 2 s reclaims it");
        assert_eq!((taken.id, taken.reclaimed), (first.id, true));
        assert!(taken.token > first.token);
    }
}

backend_test! {
    async fn with_reclaim_every_zero_every_claim_looks_for_stale_leases(db with reclaim_every(Duration::ZERO)) {
        let first = stale_one_second_after_a_look(&db).await;
        let taken = db
            .store
            .claim("q", &owner("h2", "b"), db.now(), LONG)
            .await
            .unwrap()
            .expect("every claim looks");
        assert_eq!((taken.id, taken.reclaimed), (first.id, true));
    }
}

backend_test! {
    /// A look takes at most a page of stale jobs; a claimant taking one job per
    /// claim gets a dead worker's others at its next claims, not one look
    /// (a second) apart.
    async fn a_dead_workers_stale_jobs_come_back_one_claim_after_another(db) {
        let s = &db.store;
        let ids = db.enqueue_n("q", 5).await;
        let lost = s
            .claim_page("q", &owner("h1", "dead"), db.now(), Duration::from_millis(300), 5)
            .await
            .unwrap();
        assert_eq!(lost.len(), 5);
        // Past the stale window and the 1 s cadence since that claim's look.
        db.advance(Duration::from_millis(1200)).await;
        let mut back = Vec::new();
        for _ in 0..5 {
            let job = db.try_claim("q", &owner("h2", "b"), LONG).await.unwrap_or_else(|| panic!("{}: only {} of 5 stale jobs came back", db.label(), back.len()));
            assert!(job.reclaimed);
            back.push(job.id);
        }
        back.sort();
        assert_eq!(back, ids);
        assert!(db.try_claim("q", &owner("h2", "b"), LONG).await.is_none());
    }
}

backend_test! {
    /// A worker that takes its own stale lease back (its supervision lapsed the
    /// work before the lease went stale) re-runs its job: that is not a rescue
    /// from a lost worker, and neither the claim nor the tally says so.
    async fn an_own_stale_lease_taken_back_is_not_reclaimed_from_a_lost_worker(db with reclaim_every(Duration::ZERO)) {
        let s = &db.store;
        let first = stale_one_second_after_a_look(&db).await;
        let again = db.try_claim("q", &owner("h1", "a"), LONG).await.expect("its own stale lease");
        assert_eq!((again.id, again.reclaimed), (first.id, false));
        assert_eq!(s.tally(&[first.id]).await.unwrap().reclaimed, 0);
        // Another owner taking the next stale lease over is a reclaim.
        db.advance(Duration::from_secs(11)).await;
        let taken = db.try_claim("q", &owner("h2", "b"), LONG).await.expect("stale again");
        assert_eq!((taken.id, taken.reclaimed), (first.id, true));
        assert_eq!(s.tally(&[first.id]).await.unwrap().reclaimed, 1);
    }
}

backend_test! {
    /// A worker passes the jobs whose outcome it still holds unsettled: their
    /// stale leases are not taken over, by itself or through this call.
    async fn a_claim_excluding_a_job_leaves_its_stale_lease_alone(db with reclaim_every(Duration::ZERO)) {
        let s = &db.store;
        let first = stale_one_second_after_a_look(&db).await;
        let me = owner("h1", "a");
        let page = s.claim_page_excluding("q", &me, db.now(), LONG, 1, &[first.id]).await.unwrap();
        assert!(page.is_empty(), "{}: the excluded stale job was taken", db.label());
        assert_eq!(s.job(first.id).await.unwrap().lease.unwrap().token, first.token);
        assert!(s.complete(first.fence(), None, db.now()).await.unwrap().is_updated(), "{}: its settle still lands", db.label());
    }
}
