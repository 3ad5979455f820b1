//! Inspection: counts by queue and state; one job with its attempts.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::store::{AttemptOutcome, EnqueueOptions, JobId, QueueCounts, StoreError};
use serde_json::json;
use store_support::{attempts, backend_test, owner};

const LEASE: Duration = Duration::from_secs(1);

backend_test! {
    async fn counts_are_per_queue_and_state_in_name_order(db) {
        let s = &db.store;
        let one = |n: usize| {
            (0..n)
                .map(|i| (json!(i), EnqueueOptions::default()))
                .collect::<Vec<_>>()
        };
        s.enqueue_many("b-queue", &one(4), db.now()).await.unwrap();
        s.enqueue_many("a-queue", &one(2), db.now()).await.unwrap();
        let me = owner("h", "a");
        let page = db.claim_page("b-queue", &me, LEASE, 3).await;
        s.complete(page[0].fence(), None, db.now()).await.unwrap();
        let single = attempts(1);
        db.enqueue_with("a-queue", json!("doomed"), &single).await;
        let page_a = db.claim_page("a-queue", &me, LEASE, 3).await;
        let doomed = page_a
            .iter()
            .find(|j| j.payload == json!("doomed"))
            .unwrap();
        s.fail(doomed.fence(), "no", None, db.now()).await.unwrap();
        let counts = s.counts(db.now()).await.unwrap();
        assert_eq!(
            counts,
            [
                QueueCounts {
                    queue: "a-queue".into(),
                    queued: 0,
                    scheduled: 0,
                    retrying: 0,
                    running: 2,
                    succeeded: 0,
                    dead: 1,
                    cancelled: 0
                },
                QueueCounts {
                    queue: "b-queue".into(),
                    queued: 1,
                    scheduled: 0,
                    retrying: 0,
                    running: 2,
                    succeeded: 1,
                    dead: 0,
                    cancelled: 0
                },
            ]
        );
    }
}

backend_test! {
    async fn job_shows_every_attempt_with_owner_token_times_outcome_and_error(db) {
        let s = &db.store;
        let id = db.enqueue_with("q", json!({"k": 1}), &attempts(5)).await;
        // Attempt 1 fails, attempt 2 is lost to a reclaim, attempt 3 succeeds.
        let a1 = db.claim("q", &owner("h1", "a"), LEASE).await;
        s.fail(a1.fence(), "first error", None, db.now()).await.unwrap();
        db.advance(Duration::from_secs(2)).await;
        let a2 = db.claim("q", &owner("h2", "b"), LEASE).await;
        db.advance(LEASE * 2).await;
        let a3 = db.claim("q", &owner("h3", "c"), LEASE).await;
        let running = s.job(id).await.unwrap();
        assert_eq!(
            running.attempt_log.last().unwrap().outcome,
            AttemptOutcome::Running
        );
        s.complete(a3.fence(), None, db.now()).await.unwrap();

        let record = s.job(id).await.unwrap();
        let log = &record.attempt_log;
        assert_eq!(log.len(), 3);
        let view: Vec<_> = log
            .iter()
            .map(|a| (a.token, a.owner.nonce.as_str(), a.outcome))
            .collect();
        assert_eq!(
            view,
            [
                (a1.token, "a", AttemptOutcome::Failed),
                (a2.token, "b", AttemptOutcome::LeaseLost),
                (a3.token, "c", AttemptOutcome::Succeeded),
            ]
        );
        assert_eq!(log[0].error.as_deref(), Some("first error"));
        assert!(log[1].error.as_deref().unwrap().contains("reclaimed by h3"));
        assert_eq!(log[2].error, None);
        assert_eq!(log[0].owner.host_id, "h1");
        assert_eq!(log[0].owner.pid, std::process::id());
        for a in log {
            assert!(a.ended_at.unwrap() >= a.started_at, "{a:?}");
        }
        assert!(log[1].ended_at.unwrap().0 - log[1].started_at.0 > LEASE.as_millis() as u64);
        assert_eq!(record.attempts, 3);
    }
}

backend_test! {
    async fn unknown_job_id_is_a_clear_error(db) {
        let err = db.store.job(JobId(31337)).await.unwrap_err();
        assert!(matches!(err, StoreError::UnknownJob(JobId(31337))), "{err}");
        assert_eq!(err.to_string(), "unknown job id 31337 (never queued, or deleted once finished: purged, or succeeded under delete-on-success)");
    }
}
