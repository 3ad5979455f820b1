//! A handler's result or error holding the NUL character (`\u0000`), which
//! PostgreSQL can not store: refused or replaced before anything is written,
//! on every backend, so a worker's settle does not try a write the database
//! will never take, for ever.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::runner::{AbortSignal, BoxError, JobRunner};
use leasehold::store::{ClaimedJob, EnqueueOptions, JobState, StoreError};
use leasehold::worker::{Failure, Handler, Worker};
use serde_json::{Value, json};
use store_support::{backend_test, owner};

const LEASE: Duration = Duration::from_secs(30);

backend_test! {
    async fn a_completion_whose_result_holds_nul_is_refused_and_changes_nothing(db) {
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        let err = db.store.complete(job.fence(), Some(&json!({ "output": "a\u{0}b" })), db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "result", .. }), "{}: {err}", db.label());
        assert!(err.to_string().contains("NUL character"), "{err}");
        let err = db.store.fail(job.fence(), "boom", Some(&json!({ "k\u{0}": 1 })), db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "result", .. }), "{}: {err}", db.label());
        assert_eq!(db.store.job(job.id).await.unwrap().state, JobState::Running, "{}", db.label());
        assert!(db.store.complete(job.fence(), Some(&json!("fine")), db.now()).await.unwrap().is_updated());
    }
}

backend_test! {
    async fn a_failure_whose_error_holds_nul_is_recorded_with_u_fffd_in_its_place(db) {
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        db.store.fail(job.fence(), "bad\u{0}byte", None, db.now()).await.unwrap();
        let record = db.store.job(job.id).await.unwrap();
        assert_eq!(record.attempt_log[0].error.as_deref(), Some("bad\u{FFFD}byte"), "{}", db.label());
    }
}

/// Answers what the payload's `kind` asks for, each holding a NUL character.
struct Nul;

impl Handler for Nul {
    async fn handle(&self, job: &ClaimedJob, _signal: AbortSignal) -> Result<Option<Value>, BoxError> {
        match job.payload["kind"].as_str() {
            Some("result") => Ok(Some(json!({ "output": "a\u{0}b" }))),
            Some("failure") => Err(Failure::new("exit code 1", json!({ "output": "a\u{0}b" })).into()),
            _ => Err("bad\u{0}error".into()),
        }
    }
}

backend_test! {
    async fn a_worker_settles_handler_answers_holding_nul_instead_of_retrying_them_for_ever(db) {
        // PostgreSQL refused each of these writes with a database error, which the worker's
        // settle tried again for ever: the job stayed running, the runner never settled it.
        let once = EnqueueOptions { max_attempts: 1, ..EnqueueOptions::default() };
        let mut ids = Vec::new();
        for kind in ["result", "failure", "error"] {
            ids.push(db.enqueue_with("nul", json!({ "kind": kind }), &once).await);
        }
        let worker = Worker::new(db.store.clone(), "nul", Nul).lease(LEASE);
        let runner = JobRunner::builder("test.nul").stale_after(LEASE).batch_limit(10).spawn(worker).unwrap();
        let report = tokio::time::timeout(Duration::from_secs(20), runner.tick()).await.expect("the pass ends");
        assert_eq!((report.claimed, report.performed), (3, 3), "{}", db.label());
        tokio::time::timeout(Duration::from_secs(20), runner.dispose()).await.expect("the runner disposes");
        let errors: Vec<(JobState, Option<String>)> = {
            let mut errors = Vec::new();
            for id in &ids {
                let job = db.store.job(*id).await.unwrap();
                errors.push((job.state, job.last_error));
            }
            errors
        };
        let label = db.label();
        assert!(errors.iter().all(|(state, _)| *state == JobState::Dead), "{label}: {errors:?}");
        let [result, failure, error] = [0, 1, 2].map(|i| errors[i].1.clone().unwrap_or_default());
        assert!(result.starts_with("the handler's result holds the NUL character"), "{label}: {result}");
        assert!(failure.starts_with("exit code 1 (its result was left out"), "{label}: {failure}");
        assert_eq!(error, "bad\u{FFFD}error", "{label}");
    }
}
