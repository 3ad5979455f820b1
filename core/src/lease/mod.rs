//! Run ownership: owner identity, the lease policy and its
//! validator, liveness evidence and its acceptance rules, and what a
//! heartbeat loop logs.
//!
//! The heartbeat supervision state machine that keeps a lease renewed lives in
//! [`crate::supervision`], shared with the job runner.

mod evidence;
mod liveness;
mod notice;
mod owner;
mod policy;
mod steal;
mod watch;

pub use evidence::{EvidenceKind, LivenessEvidence};
pub use liveness::{LeaseLiveness, LivenessCheck, LivenessContext};
pub use notice::Notice;
pub use owner::{OwnerId, same_host_incarnation};
pub use policy::{DEFAULT_EXIT_GRACE_MS, LeasePolicy, MAX_CLAIM_AGE_TOLERANCE_MS, PolicyError, PolicyWarning, WATCHDOG_LEAD_MS};
pub use steal::{StealAttempt, StealError, check_steal, lease_is_stale};
pub use watch::{LeaseVersion, LeaseWatch};
#[cfg(feature = "mutations")]
pub use watch::WatchMutation;

/// The answer of a fenced write (renew, reconfirm, settle, steal): it landed,
/// or the fence was lost and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceOutcome {
    /// The write landed under the caller's token.
    Updated,
    /// A newer token holds the job: another owner claimed it.
    LostToNewerToken,
    /// The job is no longer running (settled, or reset).
    LostNotRunning,
    /// No such job.
    LostMissing,
}

impl FenceOutcome {
    /// Whether the write landed.
    pub fn is_updated(self) -> bool {
        matches!(self, FenceOutcome::Updated)
    }
}
