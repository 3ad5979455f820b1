//! Taking a job over from a named owner on evidence: the steal rules of
//! [`check_steal`] first, then a compare-and-swap on the exact snapshot read.

use std::time::Duration;

use leasehold_core::Millis;
use leasehold_core::lease::{LivenessEvidence, OwnerId, StealAttempt, check_steal};

use super::exchange::{OwnerParams, StaleCandidate, TakenOver, Takeover};
use super::{AttemptOutcome, JobId, LeaseSnapshot, StealOutcome, Store, StoreResult, validate};

impl Store {
    /// Takes `job` over from the owner in `snapshot`.
    ///
    /// First the steal rules ([`check_steal`]) must accept: evidence observed
    /// at exactly `now`, of a kind that fits the host relation, and a lease
    /// stale at `now` — otherwise [`StoreError::StealRefused`](super::StoreError::StealRefused) names the rule
    /// and nothing is read or written. Then a compare-and-swap on the exact
    /// snapshot (running, same token, same owner nonce, same heartbeat, and
    /// — on PostgreSQL — stale by the database's clock too): the claimant
    /// gets a fresh token under a lease of `lease`, and the replaced
    /// attempt is logged as `lease-lost` naming the thief and the evidence.
    /// A changed snapshot answers [`StealOutcome::SnapshotChanged`].
    pub async fn steal(
        &self,
        job: JobId,
        snapshot: &LeaseSnapshot,
        claimant: &OwnerId,
        evidence: &LivenessEvidence,
        now: Millis,
        lease: Duration,
    ) -> StoreResult<StealOutcome> {
        check_steal(&StealAttempt {
            owner: &snapshot.owner,
            claimant,
            heartbeat_at: snapshot.heartbeat_at,
            stale_after_ms: snapshot.lease_ms,
            evidence,
            now,
        })?;
        let lease_ms = validate::lease_ms(lease)?;
        let now_ms = validate::millis("now", now)?;
        let owner = OwnerParams::new(claimant)?;
        let record = self.job(job).await?;
        let candidate = StaleCandidate {
            id: job.0,
            token: i64::try_from(snapshot.token).unwrap_or(i64::MAX),
            owner: snapshot.owner.clone(),
            // The replaced attempt's start, logged with it; a snapshot that no
            // longer matches fails the swap whatever this says.
            claimed_at: record
                .attempt_log
                .last()
                .filter(|a| a.outcome == AttemptOutcome::Running)
                .map(|a| a.started_at.0 as i64)
                .unwrap_or(now_ms),
            heartbeat_at: snapshot.heartbeat_at.map(|h| h.0 as i64),
            lease_ms: snapshot.lease_ms as i64,
        };
        let note = format!(
            "stolen by {} pid {} on evidence {}",
            claimant.host_id,
            claimant.pid,
            evidence.kind.as_str()
        );
        let takeover = [Takeover {
            candidate: &candidate,
            note,
            watched: false,
        }];
        let taken = self.backend().take_over(&owner, lease_ms, &takeover, now_ms).await?;
        Ok(match taken.into_iter().next() {
            Some(TakenOver::Claimed(job)) => StealOutcome::Stolen(job),
            Some(TakenOver::DeadLettered(_)) => StealOutcome::DeadLettered,
            None => StealOutcome::SnapshotChanged,
        })
    }
}
