//! Per-item bookkeeping: one slot per worker of the pool, reused item after
//! item so nothing is allocated per item.

use crate::supervision::Supervisor;
use alloc::boxed::Box;
use alloc::vec::Vec;
use core::cell::Cell;
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

/// Where an item is in its life (see [`super::Runner::with_settle_phase`]).
#[derive(Clone, Debug)]
pub(crate) enum Phase<E> {
    /// Its perform runs: a lapse aborts it and, after the grace, drops it.
    Performing,
    /// Its perform reached `outcome`, which the host is writing with its
    /// fenced settle. Never dropped: it ends only when the settle lands or
    /// its fence is refused.
    Settling {
        /// What the perform answered, counted once the settle lands.
        outcome: Result<(), E>,
        /// Settles that found the store unavailable so far.
        tries: u32,
        /// When the next try is due; `None` while one is in flight.
        retry_at: Option<Millis>,
    },
    /// A claim declined before its work started, being handed back with the
    /// host's fenced release.
    Releasing,
}

#[derive(Clone, Debug)]
pub(crate) struct Busy<E> {
    /// Ordinal of the item in its pass (claim order, from 0).
    pub ordinal: u32,
    /// When `perform` started, for `durationMs`.
    pub started_at: Millis,
    /// Set when the claim was lost or lapsed while the perform ran: a perform
    /// that then raises counts `claimLost` rather than `failed`, and
    /// `claim-lost` is not traced a second time.
    pub lost: bool,
    /// Present when a heartbeat is configured and supervision is running.
    /// Boxed: a supervisor is about 240 bytes, and a `Busy` is moved into
    /// and out of its slot once per item; without a heartbeat (no
    /// supervisor) the move is then a few words rather than the whole
    /// supervisor's room, and with one the box is what moves.
    pub supervisor: Option<Box<Supervisor>>,
    /// When an aborted perform is dropped (native hosts with a grace period).
    pub drop_at: Option<Millis>,
    pub phase: Phase<E>,
}

impl<E> Busy<E> {
    /// What counting its outcome needs.
    pub fn tally(&self) -> Tally {
        Tally { ordinal: self.ordinal, started_at: self.started_at, lost: self.lost }
    }
}

/// What counting an item's outcome needs, kept past its slot by a detached
/// item (see [`super::Runner::item_detached`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tally {
    /// Ordinal of the item in its pass.
    pub ordinal: u32,
    /// When `perform` started, for `durationMs`.
    pub started_at: Millis,
    /// Whether the claim was lost or lapsed while the perform ran (see [`Busy::lost`]).
    pub lost: bool,
}

/// One worker's place: its item while busy. Only the runner changes it, and
/// only through [`super::Runner`]'s slot accessors, which mark its kept
/// deadline stale (see [`Deadlines`]).
#[derive(Clone, Debug)]
pub(crate) struct Slot<E> {
    pub generation: u32,
    busy: Option<Busy<E>>,
    /// The supervisor box of the slot's last item, kept for its next one so
    /// that an item under a heartbeat allocates nothing.
    spare: Option<Box<Supervisor>>,
}

impl<E> Default for Slot<E> {
    fn default() -> Self {
        Slot { generation: 0, busy: None, spare: None }
    }
}

impl<E> Slot<E> {
    /// The item in the slot, if any.
    pub fn busy(&self) -> Option<&Busy<E>> {
        self.busy.as_ref()
    }

    /// The item in the slot, to change.
    pub fn busy_mut(&mut self) -> Option<&mut Busy<E>> {
        self.busy.as_mut()
    }

    /// Puts `busy` in the slot (a free one).
    pub fn occupy(&mut self, busy: Busy<E>) {
        debug_assert!(self.busy.is_none(), "a busy slot occupied");
        self.busy = Some(busy);
    }

    /// Frees the slot, answering its item; the item's supervisor box is kept
    /// for the next one ([`Slot::supervisor_box`]).
    pub fn vacate(&mut self) -> Option<Busy<E>> {
        let mut busy = self.busy.take()?;
        if let Some(spare) = busy.supervisor.take() {
            self.spare = Some(spare);
        }
        Some(busy)
    }

    /// `supervisor` boxed, in the box the slot's last item left if any.
    pub fn supervisor_box(&mut self, supervisor: Supervisor) -> Box<Supervisor> {
        match self.spare.take() {
            Some(mut spare) => {
                *spare = supervisor;
                spare
            }
            None => Box::new(supervisor),
        }
    }

    /// The earliest instant this slot needs a timeout at, computed from its
    /// item as it is now.
    pub fn deadline(&self) -> Option<Millis> {
        let busy = self.busy.as_ref()?;
        let supervision = busy.supervisor.as_deref().and_then(Supervisor::poll_timeout);
        let own = match &busy.phase {
            Phase::Performing => busy.drop_at,
            Phase::Settling { retry_at, .. } => *retry_at,
            Phase::Releasing => None,
        };
        match (supervision, own) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Each slot's deadline as last computed, side by side, and which slots
/// changed since.
///
/// The runner's next timeout is asked after every input and takes the
/// earliest deadline of every slot, but an input changes one slot or two: the
/// others' deadlines are kept here, in one short array (no item is looked
/// into), and only the slots marked stale since the last ask (every mutable
/// access to a slot marks it) are computed again. A pool has at most 64
/// slots, one bit each.
#[derive(Debug)]
pub(crate) struct Deadlines {
    kept: Vec<Cell<Option<Millis>>>,
    stale: Cell<u64>,
}

impl Deadlines {
    /// For `pool` slots (at most 64), all free.
    pub fn new(pool: usize) -> Self {
        assert!(pool <= 64, "a pool has at most 64 slots");
        Deadlines { kept: (0..pool).map(|_| Cell::new(None)).collect(), stale: Cell::new(0) }
    }

    /// Slot `index` may have changed: its deadline is computed again at the
    /// next ask.
    pub fn mark(&self, index: usize) {
        self.stale.set(self.stale.get() | 1 << index);
    }

    /// The earliest deadline of `slots`, computing again only the stale ones.
    pub fn earliest<E>(&self, slots: &[Slot<E>]) -> Option<Millis> {
        let mut stale = self.stale.replace(0);
        while stale != 0 {
            let index = stale.trailing_zeros() as usize;
            stale &= stale - 1;
            self.kept[index].set(slots[index].deadline());
        }
        debug_assert!(
            slots.iter().zip(&self.kept).all(|(slot, kept)| slot.deadline() == kept.get()),
            "a slot's kept deadline went stale"
        );
        self.kept.iter().filter_map(Cell::get).min()
    }
}
