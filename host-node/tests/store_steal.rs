//! `steal` (seed 003 R5): staleness plus acceptable evidence, observed at the
//! steal's instant, then a compare-and-swap on the exact snapshot.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::Millis;
use leasehold::core::lease::{EvidenceKind, FenceOutcome, LivenessEvidence, StealError};
use leasehold::store::{AttemptOutcome, EnqueueOptions, JobId, StealOutcome, StoreError};
use serde_json::json;
use store_support::{TestDb, backends, owner};

const LEASE: Duration = Duration::from_secs(1);

/// A job claimed by `owner("h1", "a")`, then left to go stale.
async fn stale_job(db: &TestDb) -> (JobId, leasehold::store::ClaimedJob) {
    let s = &db.store;
    let opts = EnqueueOptions::default();
    let id = s.enqueue("q", &json!(1), &opts, db.now()).await.unwrap();
    let job = db.claim("q", &owner("h1", "a"), LEASE).await;
    db.advance(LEASE * 2).await;
    (id, job)
}

fn evidence(kind: EvidenceKind, at: Millis) -> LivenessEvidence {
    LivenessEvidence {
        kind,
        checked_at: at,
    }
}

/// `owner(host, nonce)`'s steal of `id` on evidence of `kind` observed now,
/// against the job's lease as it is now.
async fn steal_now(db: &TestDb, id: JobId, (host, nonce): (&str, &str), kind: EvidenceKind) -> Result<StealOutcome, StoreError> {
    let snapshot = db.store.job(id).await.unwrap().lease.unwrap();
    let now = db.now();
    db.store.steal(id, &snapshot, &owner(host, nonce), &evidence(kind, now), now, LEASE).await
}

#[tokio::test]
async fn lease_expired_evidence_from_another_host_steals_a_stale_job() {
    for db in backends("steal_lease_expired").await {
        let (id, old) = stale_job(&db).await;
        let s = &db.store;
        let snapshot = s.job(id).await.unwrap().lease.unwrap();
        let now = db.now();
        let thief = owner("h2", "b");
        let ev = evidence(EvidenceKind::LeaseExpired, now);
        let outcome = s
            .steal(id, &snapshot, &thief, &ev, now, LEASE)
            .await
            .unwrap();
        let StealOutcome::Stolen(job) = outcome else {
            panic!("{}: {outcome:?}", db.label())
        };
        assert!(job.token > old.token);
        assert!(job.reclaimed);
        let record = s.job(id).await.unwrap();
        assert_eq!(record.lease.unwrap().owner.nonce, "b");
        let lost = &record.attempt_log[0];
        assert_eq!(lost.outcome, AttemptOutcome::LeaseLost);
        assert!(
            lost.error.as_deref().unwrap().contains("lease-expired"),
            "{lost:?}"
        );
        assert_eq!(
            s.heartbeat(old.fence(), db.now()).await.unwrap(),
            FenceOutcome::LostToNewerToken
        );
    }
}

#[tokio::test]
async fn pid_evidence_is_accepted_only_on_the_owners_host() {
    for db in backends("steal_pid_dead").await {
        let (id, _) = stale_job(&db).await;
        let err = steal_now(&db, id, ("h2", "b"), EvidenceKind::SameHostPidDead).await.unwrap_err();
        assert!(matches!(err, StoreError::StealRefused(StealError::PidEvidenceFromOtherHost)), "{}: {err}", db.label());
        let outcome = steal_now(&db, id, ("h1", "b"), EvidenceKind::SameHostPidDead).await.unwrap();
        assert!(matches!(outcome, StealOutcome::Stolen(_)), "{}: {outcome:?}", db.label());
    }
}

#[tokio::test]
async fn unreachable_evidence_is_accepted_only_across_hosts() {
    for db in backends("steal_unreachable").await {
        let (id, _) = stale_job(&db).await;
        let unreachable = EvidenceKind::CrossHostUnreachableStale;
        let err = steal_now(&db, id, ("h1", "b"), unreachable).await.unwrap_err();
        assert!(matches!(err, StoreError::StealRefused(StealError::CrossHostEvidenceOnSameHost)), "{}: {err}", db.label());
        let outcome = steal_now(&db, id, ("h9", "b"), unreachable).await.unwrap();
        assert!(matches!(outcome, StealOutcome::Stolen(_)), "{}: {outcome:?}", db.label());
    }
}

#[tokio::test]
async fn evidence_probed_before_the_steal_instant_is_refused() {
    for db in backends("steal_evidence_not_fresh").await {
        let (id, _) = stale_job(&db).await;
        let s = &db.store;
        let snapshot = s.job(id).await.unwrap().lease.unwrap();
        let now = db.now();
        let ev = evidence(EvidenceKind::LeaseExpired, Millis(now.0 - 1));
        let err = s
            .steal(id, &snapshot, &owner("h2", "b"), &ev, now, LEASE)
            .await
            .unwrap_err();
        assert!(matches!(
            err,
            StoreError::StealRefused(StealError::EvidenceNotFresh { .. })
        ));
        // Nothing was written.
        assert_eq!(
            s.job(id).await.unwrap().lease.unwrap().owner.nonce,
            "a"
        );
    }
}

#[tokio::test]
async fn live_lease_cannot_be_stolen_with_any_evidence() {
    for db in backends("steal_live_lease").await {
        let s = &db.store;
        let id = db.enqueue("q", json!(1)).await;
        db.claim("q", &owner("h1", "a"), LEASE).await;
        let snapshot = s.job(id).await.unwrap().lease.unwrap();
        let now = db.now();
        for (kind, thief) in [
            (EvidenceKind::LeaseExpired, owner("h2", "b")),
            (EvidenceKind::SameHostPidDead, owner("h1", "b")),
            (EvidenceKind::CrossHostUnreachableStale, owner("h2", "b")),
        ] {
            let err = s
                .steal(id, &snapshot, &thief, &evidence(kind, now), now, LEASE)
                .await
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    StoreError::StealRefused(StealError::LeaseNotStale { .. })
                ),
                "{} {kind:?}: {err}",
                db.label()
            );
        }
    }
}

#[tokio::test]
async fn steal_on_a_changed_snapshot_changes_nothing() {
    for db in backends("steal_snapshot_changed").await {
        let (id, old) = stale_job(&db).await;
        let s = &db.store;
        let snapshot = s.job(id).await.unwrap().lease.unwrap();
        // The owner renews after the snapshot was read: the heartbeat moved.
        assert_eq!(
            s.heartbeat(old.fence(), db.now()).await.unwrap(),
            FenceOutcome::Updated
        );
        db.advance(LEASE * 2).await;
        let now = db.now();
        let ev = evidence(EvidenceKind::LeaseExpired, now);
        let outcome = s
            .steal(id, &snapshot, &owner("h2", "b"), &ev, now, LEASE)
            .await
            .unwrap();
        assert_eq!(outcome, StealOutcome::SnapshotChanged);
        let record = s.job(id).await.unwrap();
        assert_eq!(record.token, old.token);
        assert_eq!(record.attempt_log.len(), 1);
    }
}

#[tokio::test]
async fn steal_of_an_unknown_job_is_an_error() {
    for db in backends("steal_unknown_job").await {
        let (id, _) = stale_job(&db).await;
        let snapshot = db.store.job(id).await.unwrap().lease.unwrap();
        let now = db.now();
        let ev = evidence(EvidenceKind::LeaseExpired, now);
        let err = db
            .store
            .steal(
                JobId(424_242),
                &snapshot,
                &owner("h2", "b"),
                &ev,
                now,
                LEASE,
            )
            .await
            .unwrap_err();
        assert!(
            matches!(err, StoreError::UnknownJob(JobId(424_242))),
            "{err}"
        );
        assert!(err.to_string().contains("424242"));
    }
}
