//! The steal rules:
//! a claimant may take over a running job from its recorded owner only when
//! the owner's lease is stale AND the claimant brings acceptable liveness
//! evidence, observed at the very instant of the steal.
//!
//! Pure arithmetic and comparisons: the store reads the snapshot, calls
//! [`check_steal`], and only then runs its compare-and-swap on that exact
//! snapshot. Keeping the rules here means every store (SQLite, PostgreSQL, a
//! test double) refuses the same steals with the same reasons.

use core::fmt;

use super::{EvidenceKind, LivenessEvidence, OwnerId};
use crate::Millis;

/// Whether a lease whose last persisted heartbeat is `heartbeat_at` is stale
/// at `now` under a stale window of `stale_after_ms` milliseconds.
///
/// - `None` (no heartbeat recorded) holds no lease and is stale.
/// - Otherwise stale exactly when `heartbeat_at < now - stale_after_ms`, i.e.
///   when more than `stale_after_ms` milliseconds have passed. A heartbeat at
///   the cutoff itself is still live: the window is inclusive.
/// - `now` earlier than `stale_after_ms` after the epoch never makes a
///   recorded heartbeat stale (the cutoff saturates at the epoch).
#[must_use]
pub fn lease_is_stale(heartbeat_at: Option<Millis>, stale_after_ms: u64, now: Millis) -> bool {
    match heartbeat_at {
        None => true,
        Some(beat) => now.since(beat) > stale_after_ms,
    }
}

/// Everything the steal rules look at, read from one exact snapshot of the
/// job plus the claimant's own inputs.
#[derive(Clone, Copy, Debug)]
pub struct StealAttempt<'a> {
    /// The owner recorded in the snapshot the claimant wants to replace.
    pub owner: &'a OwnerId,
    /// The identity that would take the job over.
    pub claimant: &'a OwnerId,
    /// The owner's last persisted heartbeat in the snapshot (`None`: none).
    pub heartbeat_at: Option<Millis>,
    /// The stale window of the owner's lease, in milliseconds.
    pub stale_after_ms: u64,
    /// What the claimant observed about the owner.
    pub evidence: &'a LivenessEvidence,
    /// The instant the steal is made against; the evidence must carry it.
    pub now: Millis,
}

/// Why a steal was refused. Each variant names the rule that failed; the
/// rules are checked in the order of the variants, so one attempt always
/// gets the same answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StealError {
    /// The evidence was observed at another instant than the steal.
    EvidenceNotFresh {
        /// When the evidence was observed.
        checked_at: Millis,
        /// The instant of the steal.
        now: Millis,
    },
    /// The claimant is the recorded owner itself (same nonce): there is no
    /// other incarnation to take over from, and no evidence about itself can
    /// be honest.
    ClaimantIsOwner,
    /// `same-host-pid-dead` from a claimant on another host: a pid names a
    /// process only in its own host's namespace, so the probe answered about
    /// an unrelated process.
    PidEvidenceFromOtherHost,
    /// `cross-host-unreachable-stale` about an owner on the claimant's own
    /// host: reachability across hosts says nothing about a local process.
    CrossHostEvidenceOnSameHost,
    /// The owner's heartbeat is still inside the stale window: every steal
    /// needs staleness, whatever the evidence.
    LeaseNotStale {
        /// The owner's last persisted heartbeat.
        heartbeat_at: Millis,
        /// The stale window, in milliseconds.
        stale_after_ms: u64,
        /// The instant of the steal.
        now: Millis,
    },
}

impl fmt::Display for StealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StealError::EvidenceNotFresh { checked_at, now } => write!(
                f,
                "steal refused: evidence checked at {checked_at} but the steal is at {now}; probe again at the steal's instant"
            ),
            StealError::ClaimantIsOwner => {
                f.write_str("steal refused: the claimant is the recorded owner (same nonce)")
            }
            StealError::PidEvidenceFromOtherHost => f.write_str(
                "steal refused: `same-host-pid-dead` evidence from a claimant on another host",
            ),
            StealError::CrossHostEvidenceOnSameHost => f.write_str(
                "steal refused: `cross-host-unreachable-stale` evidence about an owner on the claimant's own host",
            ),
            StealError::LeaseNotStale { heartbeat_at, stale_after_ms, now } => write!(
                f,
                "steal refused: heartbeat at {heartbeat_at} is within the {stale_after_ms}ms stale window at {now}"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for StealError {}

/// Checks the steal rules against one snapshot, in this order:
///
/// 1. the evidence was observed at exactly `now` ([`StealError::EvidenceNotFresh`]);
/// 2. the claimant is another incarnation than the owner ([`StealError::ClaimantIsOwner`]);
/// 3. the evidence fits the host relation: `lease-expired` from any host,
///    `same-host-pid-dead` only when `owner.host_id == claimant.host_id`,
///    `cross-host-unreachable-stale` only when they differ;
/// 4. the lease is stale at `now` ([`lease_is_stale`]), whatever the kind.
///
/// `Ok(())` permits the store to attempt its compare-and-swap on the same
/// snapshot; the swap itself can still find the snapshot changed.
pub fn check_steal(attempt: &StealAttempt<'_>) -> Result<(), StealError> {
    let StealAttempt {
        owner,
        claimant,
        heartbeat_at,
        stale_after_ms,
        evidence,
        now,
    } = *attempt;
    if evidence.checked_at != now {
        return Err(StealError::EvidenceNotFresh {
            checked_at: evidence.checked_at,
            now,
        });
    }
    if owner.nonce == claimant.nonce {
        return Err(StealError::ClaimantIsOwner);
    }
    let same_host = owner.host_id == claimant.host_id;
    match evidence.kind {
        EvidenceKind::LeaseExpired => {}
        EvidenceKind::SameHostPidDead if !same_host => {
            return Err(StealError::PidEvidenceFromOtherHost);
        }
        EvidenceKind::CrossHostUnreachableStale if same_host => {
            return Err(StealError::CrossHostEvidenceOnSameHost);
        }
        EvidenceKind::SameHostPidDead | EvidenceKind::CrossHostUnreachableStale => {}
    }
    match heartbeat_at {
        Some(beat) if !lease_is_stale(Some(beat), stale_after_ms, now) => {
            Err(StealError::LeaseNotStale {
                heartbeat_at: beat,
                stale_after_ms,
                now,
            })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::String;

    fn owner(host: &str, nonce: &str) -> OwnerId {
        OwnerId {
            host_id: String::from(host),
            pid: 42,
            nonce: String::from(nonce),
            start_time: None,
            boot_id: None,
        }
    }

    const WINDOW: u64 = 30_000;

    fn attempt<'a>(
        owner: &'a OwnerId,
        claimant: &'a OwnerId,
        evidence: &'a LivenessEvidence,
        heartbeat_at: Option<Millis>,
        now: Millis,
    ) -> StealAttempt<'a> {
        StealAttempt {
            owner,
            claimant,
            heartbeat_at,
            stale_after_ms: WINDOW,
            evidence,
            now,
        }
    }

    fn evidence(kind: EvidenceKind, at: Millis) -> LivenessEvidence {
        LivenessEvidence {
            kind,
            checked_at: at,
        }
    }

    const STALE_NOW: Millis = Millis(100_000);
    const OLD_BEAT: Option<Millis> = Some(Millis(100_000 - WINDOW - 1));

    #[test]
    fn lease_at_the_cutoff_is_still_live_and_one_ms_past_it_is_stale() {
        assert!(!lease_is_stale(
            Some(Millis(70_000)),
            WINDOW,
            Millis(100_000)
        ));
        assert!(lease_is_stale(
            Some(Millis(69_999)),
            WINDOW,
            Millis(100_000)
        ));
    }

    #[test]
    fn lease_without_heartbeat_is_stale() {
        assert!(lease_is_stale(None, WINDOW, Millis(0)));
    }

    #[test]
    fn lease_cutoff_saturates_before_the_window_has_passed_since_epoch() {
        assert!(!lease_is_stale(Some(Millis(0)), WINDOW, Millis(WINDOW)));
    }

    #[test]
    fn lease_expired_is_accepted_from_another_host_when_stale() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::LeaseExpired, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Ok(())
        );
    }

    #[test]
    fn lease_expired_is_accepted_from_the_same_host_when_stale() {
        let (o, c) = (owner("a", "n1"), owner("a", "n2"));
        let e = evidence(EvidenceKind::LeaseExpired, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Ok(())
        );
    }

    #[test]
    fn lease_expired_is_refused_inside_the_stale_window() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::LeaseExpired, STALE_NOW);
        let beat = Millis(STALE_NOW.0 - WINDOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, Some(beat), STALE_NOW)),
            Err(StealError::LeaseNotStale {
                heartbeat_at: beat,
                stale_after_ms: WINDOW,
                now: STALE_NOW
            })
        );
    }

    #[test]
    fn lease_without_heartbeat_can_be_stolen() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::LeaseExpired, Millis(5));
        assert_eq!(check_steal(&attempt(&o, &c, &e, None, Millis(5))), Ok(()));
    }

    #[test]
    fn pid_dead_is_accepted_on_the_same_host_when_stale() {
        let (o, c) = (owner("a", "n1"), owner("a", "n2"));
        let e = evidence(EvidenceKind::SameHostPidDead, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Ok(())
        );
    }

    #[test]
    fn pid_dead_is_refused_across_hosts() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::SameHostPidDead, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Err(StealError::PidEvidenceFromOtherHost)
        );
    }

    #[test]
    fn pid_dead_still_needs_a_stale_lease() {
        let (o, c) = (owner("a", "n1"), owner("a", "n2"));
        let e = evidence(EvidenceKind::SameHostPidDead, STALE_NOW);
        let fresh = Some(Millis(STALE_NOW.0 - 1));
        assert!(matches!(
            check_steal(&attempt(&o, &c, &e, fresh, STALE_NOW)),
            Err(StealError::LeaseNotStale { .. })
        ));
    }

    #[test]
    fn unreachable_is_accepted_across_hosts_when_stale() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::CrossHostUnreachableStale, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Ok(())
        );
    }

    #[test]
    fn unreachable_is_refused_on_the_same_host() {
        let (o, c) = (owner("a", "n1"), owner("a", "n2"));
        let e = evidence(EvidenceKind::CrossHostUnreachableStale, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Err(StealError::CrossHostEvidenceOnSameHost)
        );
    }

    #[test]
    fn unreachable_still_needs_a_stale_lease() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::CrossHostUnreachableStale, STALE_NOW);
        let fresh = Some(STALE_NOW);
        assert!(matches!(
            check_steal(&attempt(&o, &c, &e, fresh, STALE_NOW)),
            Err(StealError::LeaseNotStale { .. })
        ));
    }

    #[test]
    fn evidence_probed_one_ms_before_the_steal_is_refused() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::LeaseExpired, Millis(STALE_NOW.0 - 1));
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Err(StealError::EvidenceNotFresh {
                checked_at: Millis(STALE_NOW.0 - 1),
                now: STALE_NOW
            })
        );
    }

    #[test]
    fn evidence_from_the_future_is_refused_too() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::LeaseExpired, Millis(STALE_NOW.0 + 1));
        assert!(matches!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Err(StealError::EvidenceNotFresh { .. })
        ));
    }

    #[test]
    fn claimant_with_the_owners_nonce_is_refused() {
        let (o, c) = (owner("a", "n1"), owner("a", "n1"));
        let e = evidence(EvidenceKind::LeaseExpired, STALE_NOW);
        assert_eq!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Err(StealError::ClaimantIsOwner)
        );
    }

    #[test]
    fn stale_evidence_is_reported_before_a_host_mismatch() {
        let (o, c) = (owner("a", "n1"), owner("b", "n2"));
        let e = evidence(EvidenceKind::SameHostPidDead, Millis(1));
        assert!(matches!(
            check_steal(&attempt(&o, &c, &e, OLD_BEAT, STALE_NOW)),
            Err(StealError::EvidenceNotFresh { .. })
        ));
    }

    #[test]
    fn refusals_name_the_rule_in_their_message() {
        use alloc::string::ToString;
        assert!(
            StealError::PidEvidenceFromOtherHost
                .to_string()
                .contains("same-host-pid-dead")
        );
        assert!(
            StealError::CrossHostEvidenceOnSameHost
                .to_string()
                .contains("cross-host-unreachable-stale")
        );
    }
}
