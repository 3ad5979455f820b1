//! Liveness evidence: what a claimant brings to
//! take over a run whose owner stopped renewing.

/// The kind of evidence, each with a name (see [`EvidenceKind::as_str`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvidenceKind {
    /// `lease-expired`: the persisted heartbeat is older than the stale cutoff.
    /// Checked by the store itself, so accepted from a claimant on any host.
    LeaseExpired,
    /// `same-host-pid-dead`: a process probe on the owner's own host found the
    /// owner's process gone. Meaningful only on the same host.
    SameHostPidDead,
    /// `cross-host-unreachable-stale`: the deployment judged another host's
    /// owner unreachable. Meaningful only across hosts.
    CrossHostUnreachableStale,
}

impl EvidenceKind {
    /// This kind's name: `lease-expired`, `same-host-pid-dead` or
    /// `cross-host-unreachable-stale`.
    pub fn as_str(self) -> &'static str {
        match self {
            EvidenceKind::LeaseExpired => "lease-expired",
            EvidenceKind::SameHostPidDead => "same-host-pid-dead",
            EvidenceKind::CrossHostUnreachableStale => "cross-host-unreachable-stale",
        }
    }
}

/// Evidence that the owner in an exact run snapshot is no longer live, observed
/// at `checked_at` (which must equal the consuming operation's `now`, to the
/// millisecond).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LivenessEvidence {
    /// What was observed.
    pub kind: EvidenceKind,
    /// When it was observed.
    pub checked_at: crate::Millis,
}
