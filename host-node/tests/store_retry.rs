//! `fail`: retries after an exponential backoff until the attempt budget is
//! spent, then dead-letters with the last error; a lease lost on the last
//! attempt dead-letters too.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::lease::FenceOutcome;
use leasehold::store::{
    AttemptOutcome, FailOutcome, JobState, StoreConfig,
};
use serde_json::json;
use store_support::{attempts, backend_test, owner, retrying};

const LEASE: Duration = Duration::from_millis(300);

/// Retries after 300 ms, then 600, then 700 ms at most.
fn quick_retry() -> StoreConfig {
    retrying(Duration::from_millis(300), Duration::from_millis(700))
}

backend_test! {
    async fn failed_attempt_is_retried_after_a_doubling_backoff_then_dead_lettered(db with quick_retry()) {
        let s = &db.store;
        let id = db.enqueue_with("q", json!(1), &attempts(3)).await;
        let me = owner("h", "a");
        let mut expected_delays = [300u64, 600].into_iter();
        for attempt in 1..=3u32 {
            let job = db.try_claim("q", &me, LEASE).await.expect("due");
            assert_eq!(job.attempt, attempt);
            let outcome = s
                .fail(job.fence(), &format!("boom {attempt}"), None, db.now())
                .await
                .unwrap();
            if attempt < 3 {
                let delay = expected_delays.next().unwrap();
                let FailOutcome::Retrying { at } = outcome else {
                    panic!("{outcome:?}")
                };
                let record = s.job(id).await.unwrap();
                assert_eq!(record.state, JobState::Queued);
                assert_eq!(record.run_at, at);
                let failed_at = record.attempt_log.last().unwrap().ended_at.unwrap();
                assert_eq!(
                    at.0 - failed_at.0,
                    delay,
                    "{}: backoff after attempt {attempt}",
                    db.label()
                );
                // Not due before the backoff has passed.
                assert!(db.try_claim("q", &me, LEASE).await.is_none());
                db.advance(Duration::from_millis(delay + 20)).await;
            } else {
                assert_eq!(outcome, FailOutcome::DeadLettered);
            }
        }
        let record = s.job(id).await.unwrap();
        assert_eq!(record.state, JobState::Dead);
        assert_eq!(record.last_error.as_deref(), Some("boom 3"));
        assert!(record.finished_at.is_some());
        let outcomes: Vec<_> = record.attempt_log.iter().map(|a| a.outcome).collect();
        assert_eq!(outcomes, [AttemptOutcome::Failed; 3]);
        let errors: Vec<_> = record
            .attempt_log
            .iter()
            .map(|a| a.error.clone().unwrap())
            .collect();
        assert_eq!(errors, ["boom 1", "boom 2", "boom 3"]);
        let tokens: Vec<_> = record.attempt_log.iter().map(|a| a.token).collect();
        assert!(
            tokens.windows(2).all(|w| w[0] < w[1]),
            "tokens grow: {tokens:?}"
        );
        // A dead letter is never claimed again.
        db.advance(Duration::from_secs(1)).await;
        assert!(db.try_claim("q", &me, LEASE).await.is_none());
        assert_eq!(s.counts(db.now()).await.unwrap()[0].dead, 1);
    }
}

backend_test! {
    async fn backoff_stops_growing_at_its_ceiling(db with quick_retry()) {
        let s = &db.store;
        let id = db.enqueue_with("q", json!(1), &attempts(10)).await;
        let me = owner("h", "a");
        let mut last_delay = 0;
        for _ in 0..3 {
            db.advance(Duration::from_millis(800)).await;
            let job = db.try_claim("q", &me, LEASE).await.expect("due");
            let FailOutcome::Retrying { at } = s.fail(job.fence(), "x", None, db.now()).await.unwrap()
            else {
                panic!("retries left")
            };
            let record = s.job(id).await.unwrap();
            last_delay = at.0 - record.attempt_log.last().unwrap().ended_at.unwrap().0;
        }
        assert_eq!(last_delay, 700, "{}: capped at max", db.label());
    }
}

backend_test! {
    async fn lease_lost_on_the_final_attempt_dead_letters_the_job(db with quick_retry()) {
        let s = &db.store;
        let id = db.enqueue_with("q", json!(1), &attempts(1)).await;
        let first = db.claim("q", &owner("h1", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        // The reclaim finds no attempt left: nothing is handed out.
        assert!(db.try_claim("q", &owner("h2", "b"), LEASE).await.is_none());
        let record = s.job(id).await.unwrap();
        assert_eq!(record.state, JobState::Dead);
        assert!(
            record
                .last_error
                .as_deref()
                .unwrap()
                .contains("final attempt"),
            "{:?}",
            record.last_error
        );
        assert_eq!(record.attempt_log.len(), 1);
        assert_eq!(record.attempt_log[0].outcome, AttemptOutcome::LeaseLost);
        // The old owner is fenced out of the dead letter.
        assert_eq!(
            s.complete(first.fence(), None, db.now()).await.unwrap(),
            FenceOutcome::LostToNewerToken
        );
    }
}
