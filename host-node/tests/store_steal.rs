//! `steal` (seed 003 R5): staleness plus acceptable evidence, observed at the
//! steal's instant, then a compare-and-swap on the exact snapshot.

#![cfg(feature = "sqlite")]

mod store_support;

use std::time::Duration;

use leasehold::core::Millis;
use leasehold::core::lease::{EvidenceKind, FenceOutcome, LivenessEvidence, StealError};
use leasehold::store::{AttemptOutcome, JobId, StealOutcome, StoreError};
use store_support::{TestDb, backend_test, owner};

const LEASE: Duration = Duration::from_secs(1);

/// A job claimed by `owner("h1", "a")`, then left to go stale.
async fn stale_job(db: &TestDb) -> (JobId, leasehold::store::ClaimedJob) {
    let job = db.enqueue_and_claim("q", &owner("h1", "a"), LEASE).await;
    db.advance(LEASE * 2).await;
    (job.id, job)
}

fn evidence(kind: EvidenceKind, at: Millis) -> LivenessEvidence {
    LivenessEvidence {
        kind,
        checked_at: at,
    }
}

/// `owner(host, nonce)`'s steal of `id` now, on evidence of `kind` probed
/// `probe_age_ms` before the steal's instant, against the job's lease as it
/// is now.
async fn steal_probed(
    db: &TestDb,
    id: JobId,
    (host, nonce): (&str, &str),
    kind: EvidenceKind,
    probe_age_ms: u64,
) -> Result<StealOutcome, StoreError> {
    let snapshot = db.store.job(id).await.unwrap().lease.unwrap();
    let now = db.now();
    let probed = evidence(kind, Millis(now.0 - probe_age_ms));
    db.store.steal(id, &snapshot, &owner(host, nonce), &probed, now, LEASE).await
}

/// [`steal_probed`] on evidence probed at the steal's instant.
async fn steal_now(db: &TestDb, id: JobId, thief: (&str, &str), kind: EvidenceKind) -> Result<StealOutcome, StoreError> {
    steal_probed(db, id, thief, kind, 0).await
}

backend_test! {
    async fn lease_expired_evidence_from_another_host_steals_a_stale_job(db) {
        let (id, old) = stale_job(&db).await;
        let s = &db.store;
        let outcome = steal_now(&db, id, ("h2", "b"), EvidenceKind::LeaseExpired).await.unwrap();
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

backend_test! {
    async fn pid_evidence_is_accepted_only_on_the_owners_host(db) {
        let (id, _) = stale_job(&db).await;
        let err = steal_now(&db, id, ("h2", "b"), EvidenceKind::SameHostPidDead).await.unwrap_err();
        assert!(matches!(err, StoreError::StealRefused(StealError::PidEvidenceFromOtherHost)), "{}: {err}", db.label());
        let outcome = steal_now(&db, id, ("h1", "b"), EvidenceKind::SameHostPidDead).await.unwrap();
        assert!(matches!(outcome, StealOutcome::Stolen(_)), "{}: {outcome:?}", db.label());
    }
}

backend_test! {
    async fn unreachable_evidence_is_accepted_only_across_hosts(db) {
        let (id, _) = stale_job(&db).await;
        let unreachable = EvidenceKind::CrossHostUnreachableStale;
        let err = steal_now(&db, id, ("h1", "b"), unreachable).await.unwrap_err();
        assert!(matches!(err, StoreError::StealRefused(StealError::CrossHostEvidenceOnSameHost)), "{}: {err}", db.label());
        let outcome = steal_now(&db, id, ("h9", "b"), unreachable).await.unwrap();
        assert!(matches!(outcome, StealOutcome::Stolen(_)), "{}: {outcome:?}", db.label());
    }
}

backend_test! {
    async fn evidence_probed_before_the_steal_instant_is_refused(db) {
        let (id, _) = stale_job(&db).await;
        let err = steal_probed(&db, id, ("h2", "b"), EvidenceKind::LeaseExpired, 1).await.unwrap_err();
        assert!(matches!(err, StoreError::StealRefused(StealError::EvidenceNotFresh { .. })), "{err}");
        // Nothing was written.
        assert_eq!(db.store.job(id).await.unwrap().lease.unwrap().owner.nonce, "a");
    }
}

backend_test! {
    async fn live_lease_cannot_be_stolen_with_any_evidence(db) {
        let id = db.enqueue_and_claim("q", &owner("h1", "a"), LEASE).await.id;
        for (kind, thief) in [
            (EvidenceKind::LeaseExpired, ("h2", "b")),
            (EvidenceKind::SameHostPidDead, ("h1", "b")),
            (EvidenceKind::CrossHostUnreachableStale, ("h2", "b")),
        ] {
            let err = steal_now(&db, id, thief, kind).await.unwrap_err();
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

backend_test! {
    async fn steal_on_a_changed_snapshot_changes_nothing(db) {
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

backend_test! {
    async fn steal_of_an_unknown_job_is_an_error(db) {
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
