//! Liveness checks (seed 003 `LivenessCheck`, `LivenessContext`,
//! `leaseLiveness`): is the recorded owner of a stale run still working?

use super::OwnerId;
use crate::Millis;

/// What a liveness check knows beyond the owner recorded on the run (seed 003
/// `LivenessContext`): who would take over, the last heartbeat the owner
/// persisted (`None`: none recorded), and the instant the arbitration is made
/// against.
#[derive(Clone, Copy, Debug)]
pub struct LivenessContext<'a> {
    /// The identity that would take the run over.
    pub claimant: &'a OwnerId,
    /// The owner's last persisted heartbeat, if any.
    pub heartbeat_at: Option<Millis>,
    /// The reading the arbitration is made against.
    pub now: Millis,
}

/// The question asked before a steal (seed 003 `LivenessCheck`): is the
/// recorded owner still working? `true` refuses the takeover.
///
/// Consulted only for a run whose lease already expired, so a check with no
/// better evidence than the lease answers `false` there.
pub trait LivenessCheck {
    /// Whether `expected` (the owner recorded on the run) is alive.
    fn is_alive(&self, expected: &OwnerId, context: &LivenessContext<'_>) -> bool;
}
