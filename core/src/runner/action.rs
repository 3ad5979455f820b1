//! What the runner answers its host: the [`Action`]s to carry out, the
//! ticket of a tick, and the error lines to log.

use super::ItemKey;
use crate::event::{Event, PassReport};
use crate::supervision::CallId;
use crate::Millis;

/// Identifies one pass, so a host can resolve every `tick()` and `quiesce()`
/// that waits on it when [`Action::PassEnded`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PassId(pub u64);

/// What [`super::Runner::tick`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ticket {
    /// The runner is disposed: the tick resolves at once with this report
    /// ([`PassReport::IDLE`]).
    Done(PassReport),
    /// The tick resolves when this pass ends (a new pass, or the one in
    /// flight, which a tick joins rather than overlaps).
    Pass(PassId),
}

/// Which line to log at error level: four kinds, one per variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// `<name> work failed`: a perform raised while its claim was held.
    WorkFailed,
    /// `<name> claim failed`: a claim raised.
    ClaimFailed,
    /// `<name> settle failed`: a settle could not reach the store; it is
    /// tried again (settle phase only, see
    /// [`super::Runner::with_settle_phase`]).
    SettleFailed,
    /// `<name> release failed`: the release of a declined claim raised; the
    /// job comes back when its lease goes stale (settle phase only).
    ReleaseFailed,
}

impl LogKind {
    /// The message suffix after the runner name: `work failed`, `claim
    /// failed`, `settle failed` or `release failed`.
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::WorkFailed => "work failed",
            LogKind::ClaimFailed => "claim failed",
            LogKind::SettleFailed => "settle failed",
            LogKind::ReleaseFailed => "release failed",
        }
    }
}

/// What the runner asks its host to do, in order.
#[allow(missing_docs)] // each variant's doc names its fields and units
#[derive(Clone, Debug, PartialEq)]
pub enum Action<E> {
    /// Call `claim(at)`; answer with [`super::Runner::claim_found`],
    /// [`super::Runner::claim_empty`] or [`super::Runner::claim_failed`].
    /// Only one claim is ever in flight.
    Claim { at: Millis },
    /// Start `perform(item, signal)` for the item stored at `key`; answer with
    /// [`super::Runner::item_settled`] (or, in the settle phase, with
    /// [`super::Runner::outcome_reached`] when the work reached an outcome).
    Perform { key: ItemKey },
    /// Settle phase only: write the outcome the item at `key` reached with
    /// the host's fenced settle; answer with
    /// [`super::Runner::settle_answered`]. Asked again, after
    /// [`super::SETTLE_RETRY`], for as long as the store is unavailable.
    Settle { key: ItemKey },
    /// Settle phase only: the claim stored at `key` was heard too late to be
    /// performed; hand it back with the host's fenced release (queued again
    /// at once, its attempt not counted) and answer with
    /// [`super::Runner::release_answered`].
    Release { key: ItemKey },
    /// Call `heartbeat(item, at)` for the item at `key`; answer with
    /// [`super::Runner::renewal_answered`] quoting `call`.
    Renew { key: ItemKey, call: CallId, at: Millis },
    /// Abort the item's signal with a `JobClaimLostError` (`lapsed` says
    /// whether supervision lapsed rather than a renewal answering false).
    Abort { key: ItemKey, lapsed: bool },
    /// The grace period after an abort passed: drop the perform (native
    /// hosts). The item is settled as `claimLost`; do not report it. Never
    /// asked for an item whose perform reached its outcome.
    Drop { key: ItemKey },
    /// Log `<name> <kind.suffix()>` at error level with the error.
    Log { kind: LogKind, error: E },
    /// Hand this event to the trace sink (only produced when one exists).
    Emit(Event<E>),
    /// The pass ended: resolve every waiter on it with `report`.
    PassEnded { pass: PassId, report: PassReport },
}
