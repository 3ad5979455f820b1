//! `fail`: retries after an exponential backoff until the attempt budget is
//! spent, then dead-letters with the last error; a lease lost on the last
//! attempt dead-letters too.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::lease::FenceOutcome;
use leasehold::store::{
    AttemptOutcome, EnqueueOptions, FailOutcome, JobState, RetryBackoff, StoreConfig,
};
use serde_json::json;
use store_support::{backends_with, owner};

const LEASE: Duration = Duration::from_millis(300);

fn quick_retry() -> StoreConfig {
    StoreConfig::default().with_retry(RetryBackoff {
        initial: Duration::from_millis(300),
        max: Duration::from_millis(700),
    })
}

#[tokio::test]
async fn failed_attempt_is_retried_after_a_doubling_backoff_then_dead_lettered() {
    for db in backends_with("retry_backoff_then_dead", quick_retry()).await {
        let s = &db.store;
        let opts = EnqueueOptions {
            max_attempts: 3,
            ..Default::default()
        };
        let id = s.enqueue("q", &json!(1), &opts, db.now()).await.unwrap();
        let me = owner("h", "a");
        let mut expected_delays = [300u64, 600].into_iter();
        for attempt in 1..=3u32 {
            let job = s
                .claim("q", &me, db.now(), LEASE)
                .await
                .unwrap()
                .expect("due");
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
                assert!(s.claim("q", &me, db.now(), LEASE).await.unwrap().is_none());
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
        assert!(s.claim("q", &me, db.now(), LEASE).await.unwrap().is_none());
        assert_eq!(s.counts().await.unwrap()[0].dead, 1);
    }
}

#[tokio::test]
async fn backoff_stops_growing_at_its_ceiling() {
    for db in backends_with("retry_backoff_ceiling", quick_retry()).await {
        let s = &db.store;
        let opts = EnqueueOptions {
            max_attempts: 10,
            ..Default::default()
        };
        let id = s.enqueue("q", &json!(1), &opts, db.now()).await.unwrap();
        let me = owner("h", "a");
        let mut last_delay = 0;
        for _ in 0..3 {
            db.advance(Duration::from_millis(800)).await;
            let job = s
                .claim("q", &me, db.now(), LEASE)
                .await
                .unwrap()
                .expect("due");
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

#[tokio::test]
async fn lease_lost_on_the_final_attempt_dead_letters_the_job() {
    for db in backends_with("retry_lost_final_attempt", quick_retry()).await {
        let s = &db.store;
        let opts = EnqueueOptions {
            max_attempts: 1,
            ..Default::default()
        };
        let id = s.enqueue("q", &json!(1), &opts, db.now()).await.unwrap();
        let first = db.claim("q", &owner("h1", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        // The reclaim finds no attempt left: nothing is handed out.
        assert!(
            s.claim("q", &owner("h2", "b"), db.now(), LEASE)
                .await
                .unwrap()
                .is_none()
        );
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
