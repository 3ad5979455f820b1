//! The operator: cancels and retries by hand ([`crate::sim::config::Operator`]),
//! over the store's [`Store::cancel`](crate::sim::store::Store::cancel) and
//! [`Store::retry`](crate::sim::store::Store::retry).
//!
//! - While the faults last, every so often (drawn from its own stream) it
//!   cancels a random pending or running item. A running owner is not told:
//!   its next renewal or settle is refused by the moved token (it learns of
//!   the cancel only then, or never if cut off, and stops by its own lapse as
//!   for any lost lease).
//! - After a short delay it retries the item, or leaves it cancelled: a
//!   cancelled item is finished by the operator's decision, and counts as
//!   done for `all-settled` (the run waits for every step still scheduled).
//! - A retried item that still waits when the next step comes may be
//!   cancelled again, then retried again or left, and so on: the sequence
//!   that made a job due at once beside its first attempt before ba01e5c.
//! - The checks hold the new attempt to the cancelled one's lease: the
//!   cancelled owner is treated like one whose lease was taken over
//!   (`exclusive-ownership` excuses it only while stalled), and no two
//!   executions of the item may overlap (`executions-exclusive`).

use super::queue::Ev;
use super::{World, EPOCH, NO_WORKER};
use crate::sim::store::ItemState;
use crate::sim::trace::What;
use leasehold_core::Millis;

impl World {
    /// Schedules the operator's first cancel (none when it is off).
    pub(super) fn schedule_operator(&mut self) {
        self.next_cancel(self.now);
    }

    fn next_cancel(&mut self, after: u64) {
        if let Some(gap) = self.operator_rng.gap(self.cfg.operator.cancel_gap_ms) {
            if after + gap < self.chaos_end {
                self.at(after + gap, Ev::OperatorCancel);
            }
        }
    }

    /// Schedules `ev`, one of the operator's next steps on an item, after a
    /// short delay; the run is not done while one waits.
    fn operator_step(&mut self, ev: Ev) {
        let delay = self.operator_rng.range(0, self.cfg.operator.delay_max_ms);
        self.operator_pending += 1;
        self.at(self.now + delay, ev);
    }

    pub(super) fn operator(&mut self, ev: Ev) {
        match ev {
            Ev::OperatorCancel => {
                let now = self.now;
                self.next_cancel(now);
                if self.calm {
                    return;
                }
                let probe = self.probe;
                let candidates: Vec<u32> = (0..self.store.items().len() as u32)
                    .filter(|&i| Some(i) != probe && matches!(self.store.item(i).state, ItemState::Pending | ItemState::Running))
                    .collect();
                if candidates.is_empty() {
                    return;
                }
                let item = self.operator_rng.pick(&candidates);
                self.cancel(item);
            }
            Ev::OperatorRetry { item } => {
                self.operator_pending -= 1;
                let Some(due) = self.store.retry(item, Millis(self.now)) else { return };
                self.stats.retries += 1;
                self.log(What::Retry, NO_WORKER, item, due.0.saturating_sub(EPOCH), 0);
                if self.operator_rng.chance(self.cfg.operator.again_per_mille) {
                    self.operator_step(Ev::OperatorCancelAgain { item });
                }
                self.wake_someone();
            }
            Ev::OperatorCancelAgain { item } => {
                self.operator_pending -= 1;
                if self.store.item(item).state == ItemState::Pending {
                    self.cancel(item);
                }
            }
            _ => unreachable!("not an operator event"),
        }
        self.after_store_change();
    }

    /// Cancels `item` (pending or running), and decides whether to retry it.
    fn cancel(&mut self, item: u32) {
        let Some(running) = self.store.cancel(item) else { return };
        self.stats.cancels += 1;
        if let Some(token) = running {
            self.cancelled.push((item, token));
        }
        let token = self.store.item(item).token;
        self.log(What::Cancel, NO_WORKER, item, token, running.unwrap_or(0));
        if self.operator_rng.chance(self.cfg.operator.retry_per_mille) {
            self.operator_step(Ev::OperatorRetry { item });
        }
    }

    /// Whether the operator cancelled `item` while it ran under `token`.
    pub(super) fn was_cancelled(&self, item: u32, token: u64) -> bool {
        self.cancelled.iter().any(|&(i, t)| i == item && t == token)
    }
}
