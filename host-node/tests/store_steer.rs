//! Steering a queue: cancel (a fence bump: the old owner's renewals and
//! settles are refused, nothing of its attempt is kept), retry (a fresh
//! attempt budget, the history kept), pause and resume, on both stores.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::lease::FenceOutcome;
use leasehold::store::{
    AttemptOutcome, BackendKind, EnqueueOptions, FailOutcome, JobId, JobState, JournalCursor, Retried, SettlementOutcome,
    StoreConfig, StoreError,
};
use serde_json::json;
use store_support::{attempts, backend_test, backends, owner, raw};

const LEASE: Duration = Duration::from_secs(30);

/// The ids a retry answered.
fn ids(retried: Vec<Retried>) -> Vec<JobId> {
    retried.into_iter().map(|r| r.id).collect()
}

backend_test! {
    async fn a_cancelled_running_job_refuses_its_owner_and_keeps_nothing_of_the_attempt(db) {
        let s = &db.store;
        let id = db.enqueue("q", json!(1)).await;
        let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        let cancelled = s.cancel(&[id], Some("wrong input"), "ops@box", db.now()).await.unwrap();
        assert_eq!(cancelled, vec![id]);

        assert!(matches!(s.heartbeat(job.fence(), db.now()).await.unwrap(), FenceOutcome::LostToNewerToken { .. }));
        let output = json!({"exitCode": 0});
        let late = s.complete(job.fence(), Some(&output), db.now()).await.unwrap();
        assert!(matches!(late, FenceOutcome::LostToNewerToken { .. }), "{}: {late:?}", db.label());
        let late = s.fail(job.fence(), "late", Some(&output), db.now()).await.unwrap();
        assert!(matches!(late, FailOutcome::Lost(_)), "{}: {late:?}", db.label());

        let record = s.job(id).await.unwrap();
        assert_eq!(record.state, JobState::Cancelled);
        let how = record.cancellation.expect("who, when, why");
        assert_eq!((how.by.as_str(), how.reason.as_deref()), ("ops@box", Some("wrong input")));
        assert!(record.finished_at.is_some());
        assert!(s.results(id).await.unwrap().is_empty(), "{}: the late result is refused", db.label());
        let [attempt] = record.attempt_log.as_slice() else { panic!("{:?}", record.attempt_log) };
        assert_eq!(attempt.outcome, AttemptOutcome::LeaseLost);
        assert_eq!(attempt.error.as_deref(), Some("cancelled by ops@box: wrong input"));
        assert!(db.try_claim("q", &owner("h", "b"), LEASE).await.is_none(), "never retried");
        let journal = s.settlements(&mut JournalCursor::default()).await.unwrap();
        let [row] = journal.as_slice() else { panic!("{}: {journal:?}", db.label()) };
        assert_eq!((row.job, row.outcome, row.token), (id, SettlementOutcome::Cancelled, job.token));
        assert_eq!(row.owner.as_ref().map(|o| o.nonce.as_str()), Some("a"), "{}: the owner it was taken from", db.label());
        assert_eq!(row.error.as_deref(), Some("cancelled by ops@box: wrong input"));
    }
}

backend_test! {
    async fn cancelling_a_queued_or_scheduled_job_keeps_it_from_every_claim(db) {
        let s = &db.store;
        let now = db.enqueue("q", json!(1)).await;
        let later = EnqueueOptions { delay: Some(Duration::from_secs(1)), ..Default::default() };
        let scheduled = db.enqueue_with("q", json!(2), &later).await;
        let both = s.cancel(&[scheduled, now, now], None, "me", db.now()).await.unwrap();
        assert_eq!(both, vec![now, scheduled]);
        db.advance(Duration::from_millis(1100)).await;
        assert!(db.try_claim("q", &owner("h", "a"), LEASE).await.is_none());
        let counts = s.counts(db.now()).await.unwrap();
        assert_eq!((counts[0].cancelled, counts[0].queued), (2, 0));
        assert_eq!(s.job(now).await.unwrap().cancellation.unwrap().reason, None);
        let journal = s.settlements(&mut JournalCursor::default()).await.unwrap();
        let cancelled: Vec<_> = journal.iter().map(|r| (r.job, r.outcome, r.owner.is_none())).collect();
        assert_eq!(cancelled, [(now, SettlementOutcome::Cancelled, true), (scheduled, SettlementOutcome::Cancelled, true)]);
    }
}

backend_test! {
    async fn cancelling_a_finished_or_unknown_job_names_it_and_changes_nothing(db) {
        let s = &db.store;
        let queued = db.enqueue("q", json!(1)).await;
        let done = s.enqueue("q", &json!(2), &EnqueueOptions { priority: -1, ..Default::default() }, db.now()).await.unwrap();
        let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        assert_eq!(job.id, done);
        s.complete(job.fence(), None, db.now()).await.unwrap();

        let err = s.cancel(&[queued, done], None, "me", db.now()).await.unwrap_err();
        assert!(
            matches!(err, StoreError::WrongState { job, state: "succeeded", .. } if job == done),
            "{}: {err}",
            db.label()
        );
        assert!(err.to_string().contains("is succeeded"), "{err}");
        let err = s.cancel(&[queued, JobId(999)], None, "me", db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::UnknownJob(JobId(999))), "{}: {err}", db.label());
        // A NUL character, which PostgreSQL's text columns refuse, is refused on both stores.
        let err = s.cancel(&[queued], Some("a\0b"), "me", db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "reason", .. }), "{}: {err}", db.label());
        let err = s.cancel(&[queued], None, "m\0e", db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "by", .. }), "{}: {err}", db.label());
        assert_eq!(s.job(queued).await.unwrap().state, JobState::Queued, "{}: nothing changed", db.label());

        let err = s.cancel_queue("nowhere", JobState::Queued, None, "me", db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::UnknownQueue(_)), "{err}");
        let err = s.cancel_queue("q", JobState::Dead, None, "me", db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidOption { option: "state", .. }), "{err}");
        assert_eq!(s.cancel_queue("q", JobState::Queued, None, "me", db.now()).await.unwrap(), vec![queued]);
    }
}

/// A cancel and the owner's completion race: exactly one wins. Either the
/// job succeeded (its result kept, the cancel refused naming `succeeded`),
/// or it is cancelled and nothing of the attempt is kept.
#[tokio::test]
async fn a_cancel_racing_the_completion_has_exactly_one_outcome() {
    const ROUNDS: usize = 300;
    for db in backends("steer_cancel_race").await {
        let worker = db.second_store(StoreConfig::default()).await;
        let s = &db.store;
        let (mut succeeded, mut cancelled) = (0, 0);
        let mut cursor = JournalCursor::default();
        for round in 0..ROUNDS {
            let id = db.enqueue("race", json!(round)).await;
            let job = worker.claim("race", &owner("h", "w"), db.now(), LEASE).await.unwrap().expect("due");
            let now = db.now();
            let ids = [id];
            let output = json!({"exitCode": 0});
            let (completed, cancel) = tokio::join!(worker.complete(job.fence(), Some(&output), now), s.cancel(&ids, None, "me", now));
            let record = s.job(id).await.unwrap();
            let results = s.results(id).await.unwrap();
            let journaled: Vec<_> = s.settlements(&mut cursor).await.unwrap().into_iter().map(|r| (r.job, r.outcome)).collect();
            match (completed.unwrap(), cancel) {
                (FenceOutcome::Updated, Err(StoreError::WrongState { state: "succeeded", .. })) => {
                    succeeded += 1;
                    assert_eq!(record.state, JobState::Succeeded);
                    assert_eq!(results.len(), 1, "{}: the result is kept", db.label());
                    assert_eq!(journaled, [(id, SettlementOutcome::Done)], "{}: round {round}", db.label());
                }
                (FenceOutcome::LostToNewerToken { .. }, Ok(ids)) => {
                    cancelled += 1;
                    assert_eq!(ids, vec![id]);
                    assert_eq!(record.state, JobState::Cancelled);
                    assert!(results.is_empty(), "{}: round {round} kept {results:?}", db.label());
                    assert_eq!(journaled, [(id, SettlementOutcome::Cancelled)], "{}: round {round}", db.label());
                    assert!(record.attempt_log.iter().all(|a| a.outcome != AttemptOutcome::Succeeded));
                }
                (completed, cancel) => panic!("{}: round {round}: {completed:?} and {cancel:?}", db.label()),
            }
        }
        println!("{}: {succeeded} succeeded, {cancelled} cancelled of {ROUNDS}", db.label());
    }
}

backend_test! {
    async fn a_retried_dead_job_gets_a_fresh_budget_keeps_its_history_and_succeeds(db) {
        let s = &db.store;
        let once = attempts(1);
        let id = db.enqueue_with("q", json!(1), &once).await;
        let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        assert_eq!(s.fail(job.fence(), "boom", None, db.now()).await.unwrap(), FailOutcome::DeadLettered);

        let err = s.retry(&[id, JobId(999)], db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::UnknownJob(JobId(999))), "{err}");
        let retried_at = db.now();
        let retried = s.retry(&[id], retried_at).await.unwrap();
        let record = s.job(id).await.unwrap();
        assert_eq!((record.state, record.attempts), (JobState::Queued, 0));
        // A dead-lettered job is due at once, and no lease holds it back.
        assert_eq!(retried.len(), 1);
        assert_eq!((retried[0].id, retried[0].due_at, retried[0].due_in(), retried[0].watch), (id, record.run_at, Duration::ZERO, None));
        let err = s.retry(&[id], db.now()).await.unwrap_err();
        assert!(matches!(err, StoreError::WrongState { state: "queued", .. }), "{err}");

        let again = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("queued again");
        assert_eq!(again.attempt, 1, "{}: a fresh budget", db.label());
        assert_eq!(s.complete(again.fence(), None, db.now()).await.unwrap(), FenceOutcome::Updated);
        let record = s.job(id).await.unwrap();
        assert_eq!(record.state, JobState::Succeeded);
        let outcomes: Vec<_> = record.attempt_log.iter().map(|a| a.outcome).collect();
        assert_eq!(outcomes, [AttemptOutcome::Failed, AttemptOutcome::Succeeded]);
    }
}

backend_test! {
    async fn a_job_cancelled_while_it_ran_is_retried_due_once_that_attempts_lease_would_have_gone_stale(db) {
        // Its owner learns of the cancel at its next renewal (or a NOTIFY it may not get) and
        // stops its work before its lease would have gone stale: not before then may another
        // worker start the job again.
        let s = &db.store;
        let id = db.enqueue("q", json!(1)).await;
        let claimed_at = db.now();
        db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        s.cancel(&[id], None, "me", db.now()).await.unwrap();
        let retried_at = db.now();
        let retried = s.retry(&[id], retried_at).await.unwrap();
        let record = s.job(id).await.unwrap();
        assert_eq!(record.state, JobState::Queued);
        assert!(record.run_at.0 >= claimed_at.0 + 30_000, "{}: due at {:?}, claimed at {claimed_at:?}", db.label(), record.run_at);
        // The retry answers that due time, on the clock that stamped it (the
        // server's on PostgreSQL), and on SQLite the window a claimant must
        // watch the cancelled lease for first.
        assert_eq!((retried.len(), retried[0].id, retried[0].due_at), (1, id, record.run_at), "{}", db.label());
        assert!(retried[0].due_in() > Duration::ZERO && retried[0].due_in() <= LEASE, "{}: {:?}", db.label(), retried[0]);
        let watch = (db.kind == BackendKind::Sqlite).then_some(LEASE);
        assert_eq!(retried[0].watch, watch, "{}", db.label());
        if db.kind == BackendKind::Sqlite {
            assert_eq!(retried[0].at, retried_at, "SQLite stamps the caller's clock");
        }
        assert!(db.try_claim("q", &owner("h", "b"), LEASE).await.is_none(), "{}: not due while the old lease runs", db.label());

        // Cancelled again while it waits, and retried again: still not due before then.
        // (The cancel of a queued job used to drop the lease's end, so the second retry
        // queued it due at once, beside the first attempt.)
        s.cancel(&[id], None, "me", db.now()).await.unwrap();
        s.retry(&[id], db.now()).await.unwrap();
        let record = s.job(id).await.unwrap();
        assert!(record.run_at.0 >= claimed_at.0 + 30_000, "{}: due at {:?} after a second cancel and retry", db.label(), record.run_at);
        assert!(db.try_claim("q", &owner("h", "b"), LEASE).await.is_none(), "{}: not due after a second cancel and retry", db.label());

        // Cancelled while queued (never claimed): due at once.
        let queued = db.enqueue("q", json!(2)).await;
        s.cancel(&[queued], None, "me", db.now()).await.unwrap();
        s.retry(&[queued], db.now()).await.unwrap();
        let again = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("due at once");
        assert_eq!(again.id, queued);
    }
}

backend_test! {
    async fn a_job_whose_owner_failed_it_is_due_at_once_when_cancelled_in_its_backoff_and_retried(db) {
        // The owner settled that attempt itself: no work of it can still run, so nothing
        // holds the retried job back.
        let s = &db.store;
        let id = db.enqueue("q", json!(1)).await;
        let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        s.fail(job.fence(), "flaky", None, db.now()).await.unwrap();
        s.cancel(&[id], None, "me", db.now()).await.unwrap();
        s.retry(&[id], db.now()).await.unwrap();
        let again = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("due at once");
        assert_eq!(again.id, id);
    }
}

backend_test! {
    async fn retry_dead_queues_every_dead_job_of_the_queue_and_a_cancelled_one_by_id(db) {
        let s = &db.store;
        let once = attempts(1);
        let mut dead = Vec::new();
        for n in 0..3 {
            dead.push(db.enqueue_with("q", json!(n), &once).await);
            let job = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
            s.fail(job.fence(), "boom", None, db.now()).await.unwrap();
        }
        let other = db.enqueue_with("other", json!(9), &once).await;
        let job = db.try_claim("other", &owner("h", "a"), LEASE).await.expect("due");
        s.fail(job.fence(), "boom", None, db.now()).await.unwrap();
        assert_eq!(ids(s.retry_dead(Some("q"), db.now()).await.unwrap()), dead);
        assert_eq!(s.job(other).await.unwrap().state, JobState::Dead, "other queues are left alone");
        assert!(matches!(s.retry_dead(Some("nowhere"), db.now()).await, Err(StoreError::UnknownQueue(_))));

        let cancelled = db.enqueue_with("q", json!(5), &once).await;
        s.cancel(&[cancelled], None, "me", db.now()).await.unwrap();
        assert_eq!(ids(s.retry(&[cancelled], db.now()).await.unwrap()), vec![cancelled]);
        let record = s.job(cancelled).await.unwrap();
        assert_eq!((record.state, record.cancellation), (JobState::Queued, None));
    }
}

backend_test! {
    async fn a_paused_queue_is_not_claimed_while_its_running_job_finishes_and_enqueues_land(db) {
        let s = &db.store;
        assert!(matches!(s.pause_queue("q", "me", db.now()).await, Err(StoreError::UnknownQueue(_))));
        db.enqueue("q", json!(1)).await;
        let running = db.try_claim("q", &owner("h", "a"), LEASE).await.expect("due");
        assert!(s.pause_queue("q", "me", db.now()).await.unwrap());
        assert!(!s.pause_queue("q", "me", db.now()).await.unwrap(), "paused already");
        let queued = db.enqueue("q", json!(2)).await;
        db.enqueue("elsewhere", json!(3)).await;

        assert!(db.try_claim("q", &owner("h", "b"), LEASE).await.is_none());
        assert!(db.try_claim("elsewhere", &owner("h", "b"), LEASE).await.is_some());
        assert_eq!(s.heartbeat(running.fence(), db.now()).await.unwrap(), FenceOutcome::Updated);
        assert_eq!(s.complete(running.fence(), None, db.now()).await.unwrap(), FenceOutcome::Updated);
        let paused = s.paused_queues().await.unwrap();
        assert_eq!(paused.iter().map(|p| (p.queue.as_str(), p.paused_by.as_str())).collect::<Vec<_>>(), [("q", "me")]);

        assert!(s.resume_queue("q").await.unwrap());
        assert!(!s.resume_queue("q").await.unwrap(), "not paused: left as it was");
        let job = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("resumed");
        assert_eq!(job.id, queued);
        assert!(s.paused_queues().await.unwrap().is_empty());
    }
}

backend_test! {
    async fn a_paused_queue_whose_jobs_were_all_deleted_can_still_be_resumed(db) {
        let s = &db.store;
        db.enqueue("gone", json!(1)).await;
        s.pause_queue("gone", "me", db.now()).await.unwrap();
        raw(&db, "DELETE FROM leasehold_jobs WHERE queue = 'gone'", "").await;
        assert!(s.resume_queue("gone").await.unwrap());
        assert!(s.paused_queues().await.unwrap().is_empty());
        assert!(matches!(s.resume_queue("gone").await, Err(StoreError::UnknownQueue(_))));
    }
}
