//! The trace a runner emits and the report a pass answers.

use crate::Millis;

/// What one pass did.
///
/// Every claimed item is counted in exactly one of `performed`, `failed` and
/// `claim_lost`, so `claimed == performed + failed + claim_lost` once the pass
/// has ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PassReport {
    /// Items a claim answered in this pass.
    pub claimed: u32,
    /// Items whose `perform` resolved (including ones whose claim was lost
    /// while they were finishing: the reference implementation's flag rule).
    pub performed: u32,
    /// Items whose `perform` raised while the claim was still held.
    pub failed: u32,
    /// Items whose claim was lost (or lapsed) and whose `perform` then raised
    /// or was dropped after the grace period.
    pub claim_lost: u32,
}

impl PassReport {
    /// The report of a pass that claimed nothing (the reference implementation's `IDLE`).
    pub const IDLE: PassReport = PassReport { claimed: 0, performed: 0, failed: 0, claim_lost: 0 };
}

/// One trace event, with the `type` strings (see
/// [`Event::type_name`]) and fields.
///
/// `E` is the host's opaque error payload (a `JsValue` in JS, a message or
/// boxed error natively): the core hands back what the host gave it. `at` is
/// the instant in [`Millis`]. `item` is the item's ordinal in its pass
/// (0-based, in claim order), our addition so a sink can build per-item spans.
// Field meanings are on each variant: `at` instant, `item` ordinal, `error` the host's payload.
#[allow(missing_docs)]
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event<E> {
    /// The pass found work; `at` is the time read at the head of the pass.
    PassStart { at: Millis },
    /// The pass ended; `next_delay_ms` is the delay actually scheduled after it.
    PassEnd { at: Millis, report: PassReport, next_delay_ms: u64 },
    /// A claim answered an item.
    Claimed { at: Millis, item: u32 },
    /// A claim raised: the pass ends and backs off.
    ClaimFailed { at: Millis, error: E },
    /// An item's `perform` resolved after `duration_ms`.
    Performed { at: Millis, item: u32, duration_ms: u64 },
    /// An item's `perform` raised while its claim was held.
    ItemFailed { at: Millis, item: u32, error: E },
    /// A renewal sent at `at` answered `true`.
    Heartbeat { at: Millis, item: u32 },
    /// A renewal sent at `at` raised; the lease is as it was.
    HeartbeatFailed { at: Millis, item: u32, error: E },
    /// The claim was lost (a renewal answered `false`, `lapsed == false`, `at`
    /// is that renewal's send time) or lapsed under supervision (`lapsed ==
    /// true`, `at` is the decision time, `unconfirmed_ms` how long the lease
    /// went unconfirmed).
    ClaimLost { at: Millis, item: u32, lapsed: bool, unconfirmed_ms: u64 },
}

impl<E> Event<E> {
    /// The `type` string: `pass-start`, `pass-end`, `claimed`,
    /// `claim-failed`, `performed`, `item-failed`, `heartbeat`,
    /// `heartbeat-failed` or `claim-lost`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::PassStart { .. } => "pass-start",
            Event::PassEnd { .. } => "pass-end",
            Event::Claimed { .. } => "claimed",
            Event::ClaimFailed { .. } => "claim-failed",
            Event::Performed { .. } => "performed",
            Event::ItemFailed { .. } => "item-failed",
            Event::Heartbeat { .. } => "heartbeat",
            Event::HeartbeatFailed { .. } => "heartbeat-failed",
            Event::ClaimLost { .. } => "claim-lost",
        }
    }

    /// When it happened.
    pub fn at(&self) -> Millis {
        match self {
            Event::PassStart { at }
            | Event::PassEnd { at, .. }
            | Event::Claimed { at, .. }
            | Event::ClaimFailed { at, .. }
            | Event::Performed { at, .. }
            | Event::ItemFailed { at, .. }
            | Event::Heartbeat { at, .. }
            | Event::HeartbeatFailed { at, .. }
            | Event::ClaimLost { at, .. } => *at,
        }
    }

    /// The item ordinal, for per-item events.
    pub fn item(&self) -> Option<u32> {
        match self {
            Event::Claimed { item, .. }
            | Event::Performed { item, .. }
            | Event::ItemFailed { item, .. }
            | Event::Heartbeat { item, .. }
            | Event::HeartbeatFailed { item, .. }
            | Event::ClaimLost { item, .. } => Some(*item),
            _ => None,
        }
    }
}
