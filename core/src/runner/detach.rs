//! Detached items: the worker moves on while the item's outcome is written.
//!
//! A host whose perform writes its own outcome (the npm package's job
//! queues: the handler's answer goes to the store with a fenced write,
//! coalesced with other workers' writes) does not want the worker to wait
//! for that write before its next claim, yet the item must be counted as it
//! really ended: performed once the write landed, failed once a failure was
//! recorded, a lost claim when the fence refused the write. So the host
//! detaches the item when its work is over ([`Runner::item_detached`]): its
//! slot is free at once (the next claim may follow), its renewals stop, and
//! its pass stays open until the host reports how it ended
//! ([`Runner::detached_ended`]), which counts and traces it then, by the
//! rules of [`Runner::item_settled`] and [`Runner::item_lost`]. `quiesce`
//! and `dispose` wait for detached items as for items in slots.
//!
//! Detached items are kept in a table that grows to the most ever detached
//! at once and is reused after; the host bounds how many that is.

use super::slot::{Phase, Slot};
use super::{ItemKey, Runner};
use crate::Millis;

/// Names a detached item until [`Runner::detached_ended`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DetachedId(pub u32);

/// How a detached item ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ended<E> {
    /// Its outcome was written: counted `performed`, traced `performed`
    /// with `durationMs` from its start to this report.
    Performed,
    /// Its failure was recorded with error `E`: counted `failed`, logged
    /// and traced (`item-failed`) as a perform that raised, unless its claim
    /// was lost while it ran (then counted `claimLost`, neither logged nor
    /// traced again).
    Failed(E),
    /// Nothing was written (cancelled, or the fence refused the write):
    /// counted `claimLost`, traced `claim-lost` once (see
    /// [`Runner::item_lost`]).
    Lost,
}

impl<E: Clone> Runner<E> {
    /// The work of the item at `key` is over and its outcome is being
    /// written by the host: the item leaves its slot, which is free for the
    /// next claim, and its renewals stop. Answers the id to report its end
    /// with; `None` (nothing changes) for an item that is not performing
    /// (settled, dropped, or in the settle phase's own settling).
    pub fn item_detached(&mut self, now: Millis, key: ItemKey) -> Option<DetachedId> {
        let performing = self.slot_ref(key).and_then(Slot::busy).is_some_and(|b| matches!(b.phase, Phase::Performing));
        if !performing {
            return None;
        }
        let tally = self.take_busy(key)?.tally();
        let index = match self.detached.iter().position(Option::is_none) {
            Some(free) => {
                self.detached[free] = Some(tally);
                free
            }
            None => {
                self.detached.push(Some(tally));
                self.detached.len() - 1
            }
        };
        if let Some(pass) = self.pass.as_mut() {
            pass.detached += 1;
        }
        self.worker_free(now);
        Some(DetachedId(index as u32))
    }

    /// The detached item `id` ended as `ended`: counted and traced in its
    /// pass, which may then end. Ignored for an id not detached (or already
    /// reported).
    pub fn detached_ended(&mut self, now: Millis, id: DetachedId, ended: Ended<E>) {
        let Some(tally) = self.detached.get_mut(id.0 as usize).and_then(Option::take) else { return };
        match ended {
            Ended::Performed => self.count_outcome(now, tally, Ok(())),
            Ended::Failed(error) => self.count_outcome(now, tally, Err(error)),
            Ended::Lost => self.count_refused(now, tally),
        }
        if let Some(pass) = self.pass.as_mut() {
            pass.detached -= 1;
        }
        self.maybe_end_pass(now);
    }
}
