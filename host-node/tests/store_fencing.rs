//! Fenced writes: heartbeat, reconfirm, complete and fail land only under the
//! current token; a stale owner's write changes nothing and says why; the
//! coalesced forms keep every write fenced on its own.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::lease::FenceOutcome;
use leasehold::store::{
    AttemptOutcome, FailOutcome, Fence, JobId, JobState, StoreError,
};
use serde_json::json;
use store_support::{attempts, backend_test, job_ids, owner, retrying, without_results};

// Long enough that a loaded machine never stalls a whole window between two
// statements of a test on PostgreSQL (where time passes for real).
const LEASE: Duration = Duration::from_secs(1);

backend_test! {
    async fn heartbeat_renews_the_lease_so_no_one_can_reclaim(db) {
        let s = &db.store;
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        for _ in 0..3 {
            db.advance(LEASE / 2).await;
            assert_eq!(
                s.heartbeat(job.fence(), db.now()).await.unwrap(),
                FenceOutcome::Updated
            );
        }
        // 1.5 leases since the claim, but only half of one since the last beat.
        assert!(db.try_claim("q", &owner("h", "b"), LEASE).await.is_none());
        let lease = s.job(job.id).await.unwrap().lease.unwrap();
        assert!(lease.heartbeat_at.unwrap() > job.leased_at);
    }
}

backend_test! {
    async fn heartbeat_past_the_window_still_lands_while_nobody_took_the_job(db) {
        let s = &db.store;
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        assert_eq!(
            s.heartbeat(job.fence(), db.now()).await.unwrap(),
            FenceOutcome::Updated
        );
    }
}

backend_test! {
    async fn old_token_can_neither_renew_nor_settle(db) {
        let s = &db.store;
        let old = db.enqueue_and_claim("q", &owner("h1", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        let new = db.claim("q", &owner("h2", "b"), LEASE).await;
        assert!(new.token > old.token);
        let lost = FenceOutcome::LostToNewerToken;
        assert_eq!(
            s.heartbeat(old.fence(), db.now()).await.unwrap(),
            lost
        );
        assert_eq!(
            s.reconfirm(old.fence(), &owner("h1", "a"), db.now())
                .await
                .unwrap(),
            lost
        );
        assert_eq!(s.complete(old.fence(), None, db.now()).await.unwrap(), lost);
        assert_eq!(
            s.fail(old.fence(), "boom", None, db.now()).await.unwrap(),
            FailOutcome::Lost(lost)
        );
        // Nothing changed: still running under the new owner, no extra attempts logged.
        let record = s.job(old.id).await.unwrap();
        assert_eq!(record.state, JobState::Running);
        assert_eq!(record.token, new.token);
        assert_eq!(record.last_error, None);
        assert_eq!(record.attempt_log.len(), 2);
        // The new owner's writes land.
        assert_eq!(
            s.complete(new.fence(), None, db.now()).await.unwrap(),
            FenceOutcome::Updated
        );
    }
}

backend_test! {
    async fn complete_settles_once_and_a_second_complete_is_not_running(db) {
        let s = &db.store;
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        assert_eq!(
            s.complete(job.fence(), None, db.now()).await.unwrap(),
            FenceOutcome::Updated
        );
        assert_eq!(
            s.complete(job.fence(), None, db.now()).await.unwrap(),
            FenceOutcome::LostNotRunning
        );
        assert_eq!(
            s.heartbeat(job.fence(), db.now()).await.unwrap(),
            FenceOutcome::LostNotRunning
        );
        let record = s.job(job.id).await.unwrap();
        assert_eq!(record.state, JobState::Succeeded);
        assert!(record.finished_at.is_some());
        assert!(record.lease.is_none());
        assert_eq!(record.attempt_log.len(), 1);
        let attempt = &record.attempt_log[0];
        assert_eq!(
            (attempt.outcome, attempt.token),
            (AttemptOutcome::Succeeded, job.token)
        );
        assert!(attempt.ended_at.is_some());
        // Nothing more to claim.
        assert!(db.try_claim("q", &owner("h", "b"), LEASE).await.is_none());
    }
}

backend_test! {
    async fn fenced_write_about_an_unknown_job_says_missing(db) {
        let fence = Fence {
            job: JobId(987_654),
            token: 1,
        };
        assert_eq!(
            db.store.heartbeat(fence, db.now()).await.unwrap(),
            FenceOutcome::LostMissing
        );
        assert_eq!(
            db.store.complete(fence, None, db.now()).await.unwrap(),
            FenceOutcome::LostMissing
        );
        assert_eq!(
            db.store.fail(fence, "x", None, db.now()).await.unwrap(),
            FailOutcome::Lost(FenceOutcome::LostMissing)
        );
    }
}

backend_test! {
    async fn reconfirm_needs_the_same_owner_as_well_as_the_token(db) {
        let s = &db.store;
        let job = db.enqueue_and_claim("q", &owner("h", "a"), LEASE).await;
        db.advance(LEASE / 2).await;
        assert_eq!(
            s.reconfirm(job.fence(), &owner("h", "a"), db.now())
                .await
                .unwrap(),
            FenceOutcome::Updated
        );
        assert_eq!(
            s.reconfirm(job.fence(), &owner("h", "impostor"), db.now())
                .await
                .unwrap(),
            FenceOutcome::LostToNewerToken
        );
    }
}

backend_test! {
    async fn batched_writes_are_fenced_one_by_one(db) {
        let s = &db.store;
        db.enqueue_n("q", 4).await;
        let page = db.claim_page("q", &owner("h", "a"), LEASE, 4).await;
        let stale = Fence {
            token: page[1].token + 7,
            ..page[1].fence()
        };
        let fences = [page[0].fence(), stale, page[2].fence(), page[2].fence()];
        let renewed = s.heartbeat_many(&fences, db.now()).await.unwrap();
        assert_eq!(
            renewed,
            [
                FenceOutcome::Updated,
                FenceOutcome::LostToNewerToken,
                FenceOutcome::Updated,
                // The same fence twice: the lease it names is held and renewed.
                FenceOutcome::Updated
            ]
        );
        let completed = s.complete_many(&without_results(&fences), db.now()).await.unwrap();
        assert_eq!(
            completed,
            [
                FenceOutcome::Updated,
                FenceOutcome::LostToNewerToken,
                FenceOutcome::Updated,
                FenceOutcome::LostNotRunning
            ]
        );
        let counts = s.counts(db.now()).await.unwrap();
        assert_eq!((counts[0].succeeded, counts[0].running), (2, 2));
    }
}

backend_test! {
    /// One process may hold two tokens of a job: it reclaims its own stale
    /// attempt on the lease alone. Batched beside the current token, the stale
    /// one must be answered lost, never `Updated` (the statements answer ids).
    async fn a_stale_token_batched_beside_its_reclaim_is_answered_lost(db) {
        let s = &db.store;
        db.enqueue("q", json!(1)).await;
        let me = owner("h", "a");
        let old = db.claim("q", &me, LEASE).await;
        db.advance(LEASE * 2).await;
        let new = db.claim("q", &me, LEASE).await;
        assert_eq!((new.id, new.token > old.token), (old.id, true));
        let lost = FenceOutcome::LostToNewerToken;
        let renewed = s.heartbeat_many(&[old.fence(), new.fence()], db.now()).await.unwrap();
        assert_eq!(renewed, [lost, FenceOutcome::Updated]);
        let completed = s.complete_many(&without_results(&[old.fence(), new.fence(), new.fence()]), db.now()).await.unwrap();
        assert_eq!(completed, [lost, FenceOutcome::Updated, FenceOutcome::LostNotRunning]);
        let record = s.job(old.id).await.unwrap();
        assert_eq!((record.state, record.token), (JobState::Succeeded, new.token));
    }
}

backend_test! {
    async fn coalescer_merges_concurrent_writes_and_answers_each(db) {
        let s = &db.store;
        db.enqueue_n("q", 50).await;
        let page = db.claim_page("q", &owner("h", "a"), LEASE, 50).await;
        let coalescer = s.coalescer();
        let now = db.now();
        let mut waits = Vec::new();
        for (i, job) in page.iter().enumerate() {
            let c = coalescer.clone();
            let fence = if i % 10 == 0 {
                Fence {
                    token: 99,
                    ..job.fence()
                }
            } else {
                job.fence()
            };
            waits.push(tokio::spawn(async move {
                let beat = c.heartbeat(fence, now).await.unwrap();
                let done = c.complete(fence, None, now).await.unwrap();
                (i, beat, done)
            }));
        }
        for w in waits {
            let (i, beat, done) = w.await.unwrap();
            let expected = if i % 10 == 0 {
                FenceOutcome::LostToNewerToken
            } else {
                FenceOutcome::Updated
            };
            assert_eq!(
                (beat, done),
                (expected, expected),
                "{} job #{i}",
                db.label()
            );
        }
        let counts = s.counts(db.now()).await.unwrap();
        assert_eq!((counts[0].succeeded, counts[0].running), (45, 5));
    }
}

backend_test! {
    async fn coalesced_statement_failure_reaches_every_waiter(db) {
        let coalescer = db.store.coalescer();
        db.store.close().await;
        let err = coalescer
            .complete(
                Fence {
                    job: JobId(1),
                    token: 1,
                },
                None,
                db.now(),
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::Coalesced(_)),
            "{}: {err}",
            db.label()
        );
    }
}

backend_test! {
    async fn released_jobs_are_claimable_at_once_without_spending_an_attempt(db) {
        let s = &db.store;
        let ids = db.enqueue_n("q", 3).await;
        let page = db.claim_page("q", &owner("h", "a"), LEASE, 3).await;
        let handed_back = [page[1].fence(), page[2].fence()];
        let released = s.release_many(&handed_back, db.now()).await.unwrap();
        assert_eq!(released, [FenceOutcome::Updated; 2]);
        let record = s.job(ids[1]).await.unwrap();
        assert_eq!((record.state, record.attempts), (JobState::Queued, 0));
        assert!(record.attempt_log.is_empty(), "a released claim never ran");
        // Claimable now, not after the lease, under a greater token.
        let again = db.claim_page("q", &owner("h", "b"), LEASE, 5).await;
        assert_eq!(job_ids(&again), ids[1..]);
        assert!(again[0].token > page[1].token);
        assert_eq!(again[0].attempt, 1);
        // The released fence is dead.
        assert_eq!(
            s.complete(page[1].fence(), None, db.now()).await.unwrap(),
            FenceOutcome::LostToNewerToken
        );
        assert_eq!(
            s.release_many(&[page[1].fence()], db.now()).await.unwrap(),
            [FenceOutcome::LostToNewerToken]
        );
    }
}

backend_test! {
    /// A settle writes the attempt's result in the same statement (PostgreSQL)
    /// or transaction (SQLite) as its fenced state change: a settle whose fence
    /// was taken over leaves no result behind, one that lands keeps it — a
    /// failure's, a completion's, and one completed beside the next claim.
    async fn a_result_is_written_only_by_a_settle_whose_fence_holds(db with retrying(Duration::from_millis(1), Duration::from_millis(1))) {
        let s = &db.store;
        let thrice = attempts(3);
        let id = db.enqueue_with("q", json!(1), &thrice).await;
        let old = db.claim("q", &owner("h", "a"), LEASE).await;
        db.advance(LEASE * 2).await;
        let new = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("reclaimed");
        let left = json!({"exitCode": 1, "output": "late"});
        assert_eq!(
            s.complete(old.fence(), Some(&left), db.now()).await.unwrap(),
            FenceOutcome::LostToNewerToken
        );
        assert_eq!(
            s.fail(old.fence(), "late", Some(&left), db.now()).await.unwrap(),
            FailOutcome::Lost(FenceOutcome::LostToNewerToken)
        );
        let batch = s.complete_many(&[(old.fence(), Some(&left))], db.now()).await.unwrap();
        assert_eq!(batch, [FenceOutcome::LostToNewerToken]);
        assert!(s.results(id).await.unwrap().is_empty(), "{}: a refused settle wrote a result", db.label());

        let failed = json!({"exitCode": 3});
        let retry = s.fail(new.fence(), "exit code 3", Some(&failed), db.now()).await.unwrap();
        assert!(matches!(retry, FailOutcome::Retrying { .. }), "{}: {retry:?}", db.label());
        db.advance(Duration::from_millis(20)).await;
        let third = db.try_claim("q", &owner("h", "b"), LEASE).await.expect("the retry is due");
        let done = json!({"exitCode": 0});
        let (outcome, _) = db.complete_and_claim(third.fence(), Some(&done), "q", &owner("h", "b"), LEASE, 1).await;
        assert_eq!(outcome, FenceOutcome::Updated);
        assert_eq!(
            s.results(id).await.unwrap(),
            [(new.token, failed), (third.token, done)],
            "{}: one result per landed settle, under its token",
            db.label()
        );
    }
}
