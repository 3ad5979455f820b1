//! Liveness checks: is the recorded owner of a stale run still working?

use super::OwnerId;
use crate::Millis;

/// What a liveness check knows beyond the owner recorded on the run: who would take over, the last heartbeat the owner
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

/// The question asked before a steal: is the
/// recorded owner still working? `true` refuses the takeover.
///
/// Consulted only for a run whose lease already expired, so a check with no
/// better evidence than the lease answers `false` there.
pub trait LivenessCheck {
    /// Whether `expected` (the owner recorded on the run) is alive.
    fn is_alive(&self, expected: &OwnerId, context: &LivenessContext<'_>) -> bool;

    /// Whether the check has proof that `expected` is not working any more,
    /// whatever its lease says (a process table with no such process). A
    /// takeover on such proof needs no watch of the lease
    /// ([`super::LeaseWatch`]), as it consults no clock. The default, right
    /// for any check that reads only the lease: `false`.
    fn proven_gone(&self, _expected: &OwnerId, _context: &LivenessContext<'_>) -> bool {
        false
    }
}

/// The lease-only liveness check: the
/// recorded owner is alive while its persisted heartbeat is inside the
/// stale-after window, `heartbeat_at >= now - stale_after_ms`, and gone once
/// it is not. No recorded heartbeat means no lease: gone.
///
/// The weakest honest answer, and one every host can give — the only check in
/// the wasm host, where there is no process table to ask. A crashed owner's
/// runs become reclaimable once the lease it stopped renewing expires; a
/// deployment that can say more (the native host's pid probe) refuses the
/// takeover for longer. The owner identity is not consulted. Build it from a
/// policy with [`super::LeasePolicy::lease_liveness`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseLiveness {
    /// The stale-after window, ms.
    pub stale_after_ms: u64,
}

impl LeaseLiveness {
    /// Whether a heartbeat persisted at `heartbeat_at` is still inside the
    /// window at `now`: `heartbeat_at >= now - stale_after_ms`. A heartbeat
    /// later than `now` (a peer's clock ahead of ours) is inside; `now`
    /// earlier than `stale_after_ms` after the epoch leaves every heartbeat
    /// inside. `None` (no heartbeat) is outside.
    #[must_use]
    pub fn is_fresh(&self, heartbeat_at: Option<Millis>, now: Millis) -> bool {
        heartbeat_at.is_some_and(|at| now.since(at) <= self.stale_after_ms)
    }
}

impl Default for LeaseLiveness {
    /// The default window, 15 000 ms: [`super::LeasePolicy::DEFAULT`]'s
    /// stale-after.
    fn default() -> LeaseLiveness {
        super::LeasePolicy::DEFAULT.lease_liveness()
    }
}

impl LivenessCheck for LeaseLiveness {
    /// [`LeaseLiveness::is_fresh`] on the context's heartbeat and `now`.
    fn is_alive(&self, _expected: &OwnerId, context: &LivenessContext<'_>) -> bool {
        self.is_fresh(context.heartbeat_at, context.now)
    }
}
