//! Purging finished jobs: only succeeded / dead ones, only those finished
//! before the retention span, with their attempt log and results; never a
//! job still to be worked.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::store::{EnqueueOptions, JobState, Store, StoreError};
use serde_json::json;
use store_support::{TestDb, attempts, backend_test, owner, raw, raw_rows, without_results};

const LEASE: Duration = Duration::from_secs(30);

/// Enqueues `n` jobs allowed one attempt each, claims them, and settles
/// them: even ones completed (with a recorded result), odd ones failed
/// (dead-lettered). Answers (succeeded ids, dead ids).
async fn finish(db: &TestDb, n: usize) -> (Vec<i64>, Vec<i64>) {
    let s = &db.store;
    let once = attempts(1);
    let jobs: Vec<_> = (0..n).map(|i| (json!(i), once.clone())).collect();
    s.enqueue_many("q", &jobs, db.now()).await.unwrap();
    let me = owner("h", "a");
    let (mut done, mut dead) = (Vec::new(), Vec::new());
    while done.len() + dead.len() < n {
        let page = db.claim_page("q", &me, LEASE, 100).await;
        assert!(!page.is_empty(), "{}: ran out of jobs to claim", db.label());
        let (even, odd): (Vec<_>, Vec<_>) = page.iter().partition(|j| j.payload.as_u64().unwrap() % 2 == 0);
        let result = json!({"exit": 0});
        let completions: Vec<_> = even.iter().map(|j| (j.fence(), Some(&result))).collect();
        assert!(s.complete_many(&completions, db.now()).await.unwrap().iter().all(|o| o.is_updated()));
        done.extend(even.iter().map(|j| j.id.0));
        for job in odd {
            s.fail(job.fence(), "boom", None, db.now()).await.unwrap();
            dead.push(job.id.0);
        }
    }
    (done, dead)
}

async fn exists(s: &Store, id: i64) -> bool {
    match s.job(leasehold::store::JobId(id)).await {
        Ok(_) => true,
        Err(StoreError::UnknownJob { .. }) => false,
        Err(e) => panic!("reading job {id}: {e}"),
    }
}

backend_test! {
    async fn a_purge_removes_finished_jobs_older_than_the_span_and_nothing_else(db) {
        let s = &db.store;
        let (old_done, old_dead) = finish(&db, 6).await;
        db.advance(Duration::from_millis(1500)).await;
        let (new_done, new_dead) = finish(&db, 4).await;
        // Still to be worked: one queued, one running.
        let waiting = db.enqueue("q", json!("waiting")).await;
        let running = db.enqueue("q", json!("running")).await;
        db.claim_page("q", &owner("h", "a"), LEASE, 1).await;

        let purged = s.purge(None, &[JobState::Succeeded], Duration::from_secs(1), db.now()).await.unwrap();
        assert_eq!(purged, old_done.len() as u64);
        for &id in &old_done {
            assert!(!exists(s, id).await, "{}: job {id} finished long ago and was kept", db.label());
        }
        for &id in old_dead.iter().chain(&new_done).chain(&new_dead) {
            assert!(exists(s, id).await, "{}: job {id} was purged", db.label());
        }

        let purged = s.purge(None, &[JobState::Dead, JobState::Succeeded], Duration::from_secs(1), db.now()).await.unwrap();
        assert_eq!(purged, old_dead.len() as u64);
        let counts = s.counts(db.now()).await.unwrap();
        let q = counts.iter().find(|c| c.queue == "q").unwrap();
        assert_eq!(
            (q.queued, q.running, q.succeeded, q.dead),
            (1, 1, new_done.len() as u64, new_dead.len() as u64)
        );
        assert!(exists(s, waiting.0).await && exists(s, running.0).await);

        // A span of zero takes every finished job, and still no other.
        db.advance(Duration::from_millis(50)).await;
        let purged = s.purge(None, &[JobState::Succeeded, JobState::Dead], Duration::ZERO, db.now()).await.unwrap();
        assert_eq!(purged, (new_done.len() + new_dead.len()) as u64);
        let tally = s.tally(&[waiting, running]).await.unwrap();
        assert_eq!((tally.queued, tally.running), (1, 1));
    }
}

backend_test! {
    async fn a_purged_job_takes_its_attempt_log_and_results_with_it(db) {
        let s = &db.store;
        let (done, dead) = finish(&db, 2).await;
        let ids = [done[0], dead[0]];
        assert_eq!(raw_rows(&db, &ids, "leasehold_attempts").await, 1, "the dead job's failed attempt is logged");
        assert_eq!(raw_rows(&db, &ids, "leasehold_results").await, 1, "the done job's result is recorded");
        db.advance(Duration::from_millis(50)).await;
        s.purge(None, &[JobState::Succeeded, JobState::Dead], Duration::ZERO, db.now()).await.unwrap();
        assert_eq!(raw_rows(&db, &ids, "leasehold_attempts").await, 0, "{}: attempt rows of purged jobs remain", db.label());
        assert_eq!(raw_rows(&db, &ids, "leasehold_results").await, 0, "{}: result rows of purged jobs remain", db.label());
    }
}

backend_test! {
    async fn a_purge_keeps_to_its_queue_when_given_one(db) {
        let s = &db.store;
        let me = owner("h", "a");
        for queue in ["keep", "q"] {
            s.enqueue(queue, &json!(queue), &EnqueueOptions::default(), db.now()).await.unwrap();
            let job = db.claim(queue, &me, LEASE).await;
            s.complete(job.fence(), None, db.now()).await.unwrap();
        }
        db.advance(Duration::from_millis(50)).await;
        let purged = s.purge(Some("q"), &[JobState::Succeeded], Duration::ZERO, db.now()).await.unwrap();
        assert_eq!(purged, 1);
        let counts = s.counts(db.now()).await.unwrap();
        assert_eq!(counts.iter().map(|c| (c.queue.as_str(), c.succeeded)).collect::<Vec<_>>(), [("keep", 1)]);
        let err = s.purge(Some("bad queue!"), &[JobState::Succeeded], Duration::ZERO, db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidQueueName { .. }), "{err}");
    }
}

backend_test! {
    /// The walk steps from row to row through the primary key: ids far apart
    /// cost no more than ids side by side (a walk over fixed ranges of ids
    /// would take 10^11 statements here, and never end in time).
    async fn a_purge_over_ids_far_apart_walks_only_the_rows_there_are(db) {
        let s = &db.store;
        let (first, _) = finish(&db, 1).await;
        raw(
            &db,
            "UPDATE sqlite_sequence SET seq = 1000000000000000 WHERE name = 'leasehold_jobs'",
            "SELECT 0::bigint FROM (SELECT setval(pg_get_serial_sequence('leasehold_jobs', 'id'), 1000000000000000)) AS s",
        )
        .await;
        let (far, _) = finish(&db, 1).await;
        assert!(far[0] > 1_000_000_000_000_000 && first[0] < 10, "{}: ids {first:?} {far:?}", db.label());
        db.advance(Duration::from_millis(50)).await;
        let purge = s.purge(None, &[JobState::Succeeded, JobState::Dead], Duration::ZERO, db.now());
        let purged = tokio::time::timeout(Duration::from_secs(60), purge).await.expect("the purge ends").unwrap();
        assert_eq!(purged, 2);
    }
}

backend_test! {
    async fn a_purge_walks_past_its_first_range_of_ids(db) {
        let s = &db.store;
        // More jobs than one range of ids, completed a page at a time.
        let n = 12_500;
        db.enqueue_n("q", n).await;
        loop {
            let page = db.claim_page("q", &owner("h", "a"), LEASE, 1000).await;
            if page.is_empty() {
                break;
            }
            let fences: Vec<_> = page.iter().map(|j| j.fence()).collect();
            s.complete_many(&without_results(&fences), db.now()).await.unwrap();
        }
        db.advance(Duration::from_millis(50)).await;
        let purged = s.purge(None, &[JobState::Succeeded], Duration::ZERO, db.now()).await.unwrap();
        assert_eq!(purged, n as u64);
        assert!(s.counts(db.now()).await.unwrap().iter().all(|c| c.queue != "q"));
    }
}

backend_test! {
    async fn a_purge_of_jobs_still_to_be_worked_is_refused(db) {
        let s = &db.store;
        let id = db.enqueue("q", json!(1)).await;
        for states in [&[JobState::Queued][..], &[JobState::Succeeded, JobState::Running], &[]] {
            let err = s.purge(None, states, Duration::ZERO, db.now()).await.unwrap_err();
            assert!(
                matches!(err, StoreError::InvalidOption { option: "states", .. }),
                "{}: {states:?} gave {err}",
                db.label()
            );
        }
        let err = s.purge(None, &[JobState::Dead], Duration::MAX, db.now()).await.unwrap_err();
        assert!(err.to_string().contains("older_than"), "{err}");
        assert!(exists(s, id.0).await);
    }
}
