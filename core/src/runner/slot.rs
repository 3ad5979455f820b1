//! Per-item bookkeeping: one slot per worker of the pool, reused item after
//! item so nothing is allocated per item.

use crate::supervision::Supervisor;
use crate::Millis;

/// Names one claimed item: the slot the host keeps it in and that slot's
/// generation, so an answer for an item that already settled is recognised
/// and ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ItemKey {
    /// Index into the host's item storage, `0..pool size`.
    pub slot: u16,
    /// Bumped each time the slot is reused.
    pub generation: u32,
}

#[derive(Clone, Debug)]
pub(crate) struct Busy {
    /// Ordinal of the item in its pass (claim order, from 0).
    pub ordinal: u32,
    /// When `perform` started, for `durationMs`.
    pub started_at: Millis,
    /// The reference implementation's `lost` flag: set when the claim was lost or lapsed.
    pub lost: bool,
    /// Present when a heartbeat is configured and supervision is running.
    pub supervisor: Option<Supervisor>,
    /// When an aborted perform is dropped (native hosts with a grace period).
    pub drop_at: Option<Millis>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Slot {
    pub generation: u32,
    pub busy: Option<Busy>,
}

impl Slot {
    /// The earliest instant this slot needs a timeout at.
    pub fn deadline(&self) -> Option<Millis> {
        let busy = self.busy.as_ref()?;
        let supervision = busy.supervisor.as_ref().and_then(Supervisor::next_deadline);
        match (supervision, busy.drop_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
