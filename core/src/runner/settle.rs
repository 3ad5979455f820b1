//! The settle phase: an outcome reached is written until the store answers.
//!
//! A host that opts in ([`Runner::with_settle_phase`]) separates the work
//! from the write of its outcome. The work (the perform) may be stopped by a
//! lapse within the grace, as always. Once it reached an outcome (it
//! resolved, or raised with an error of its own) the host reports it with
//! [`Runner::outcome_reached`] and the item enters its settling phase, which
//! is never dropped:
//!
//! - the runner asks for the fenced settle ([`Action::Settle`]) and, while
//!   the store is unavailable, asks again after [`SETTLE_RETRY`] (100 ms,
//!   doubling to 1.5 s);
//! - it ends only when the store answers: [`SettleAnswer::Landed`] counts the
//!   outcome as it would have been counted without the phase (`performed`,
//!   or `failed` for a perform that raised), [`SettleAnswer::FenceRefused`]
//!   counts a lost claim — the only case in which nothing is settled;
//! - the grace and the drop do not apply; a lapse or a lost renewal while
//!   settling aborts nothing and drops nothing;
//! - renewals go on while settling, for as long as they land: the lease
//!   stays fresh, so no peer takes the job over while its outcome waits on a
//!   store that answers renewals but not the settle. Once supervision lapses
//!   or a renewal is refused they stop, and the settle's fence decides;
//! - the item keeps its worker and its pass: the pass does not end, and
//!   `stop`, `quiesce` and `dispose` do not resolve, while an item settles.
//!   A second stop or a dispose changes nothing for it: it stays until it
//!   lands or its fence is refused.
//!
//! A claim heard after its write tolerance (see [`Runner::claim_found`]) is
//! not performed; in the settle phase its job is handed back at once with a
//! fenced release ([`Action::Release`]) instead of staying claimed for a
//! whole lease. The worker waits for the release's answer before claiming
//! again.

use super::slot::{Busy, Phase, Slot, Tally};
use super::{Action, ItemKey, LogKind, Runner};
use crate::backoff::{Backoff, RECOVERY_PROBE_MAX_MS};
use crate::event::Event;
use crate::Millis;

/// How a settle answered ([`Runner::settle_answered`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SettleAnswer<E> {
    /// The outcome is written: the attempt is counted as it ended.
    Landed,
    /// The fence refused the write: another claimant holds the job now (or
    /// it is gone). Nothing is settled; counted `claimLost`.
    FenceRefused,
    /// The store could not answer (`E` says why): the settle is tried again
    /// after [`SETTLE_RETRY`].
    Unavailable(E),
}

/// The wait before a settle is tried again after the `k`-th unavailable
/// answer: 100 ms, doubling, at most [`RECOVERY_PROBE_MAX_MS`] (1.5 s), so a
/// recovered store sees the outcome within 2 s. Short, because a finished
/// outcome waits on it and the fence makes a late write safe.
pub const SETTLE_RETRY: Backoff = Backoff { initial_ms: 100.0, max_ms: RECOVERY_PROBE_MAX_MS, multiplier: 2.0 };

impl<E: Clone> Runner<E> {
    /// Settle phase: the perform of the item at `key` reached `outcome`
    /// (`Ok`: it resolved; `Err`: it raised an error of its own, not its
    /// signal's). The item enters its settling phase and the host is asked
    /// for [`Action::Settle`]. Ignored for an item that is not performing.
    /// Without the settle phase this is [`Runner::item_settled`].
    pub fn outcome_reached(&mut self, now: Millis, key: ItemKey, outcome: Result<(), E>) {
        if !self.settle_phase {
            return self.item_settled(now, key, outcome);
        }
        let Some(busy) = self.slot_mut(key).and_then(Slot::busy_mut) else { return };
        if !matches!(busy.phase, Phase::Performing) {
            return;
        }
        busy.drop_at = None;
        busy.phase = Phase::Settling { outcome, tries: 0, retry_at: None };
        self.actions.push_back(Action::Settle { key });
    }

    /// The settle in flight for the item at `key` answered. `Landed` and
    /// `FenceRefused` end the item (see [`SettleAnswer`]); `Unavailable`
    /// logs `<name> settle failed` and asks again after [`SETTLE_RETRY`].
    /// Ignored for an item with no settle in flight.
    pub fn settle_answered(&mut self, now: Millis, key: ItemKey, answer: SettleAnswer<E>) {
        let Some(busy) = self.slot_mut(key).and_then(Slot::busy_mut) else { return };
        let Phase::Settling { tries, retry_at, .. } = &mut busy.phase else { return };
        if retry_at.is_some() {
            return;
        }
        match answer {
            SettleAnswer::Unavailable(error) => {
                *tries = tries.saturating_add(1);
                *retry_at = Some(now.after(SETTLE_RETRY.delay_after(*tries)));
                self.actions.push_back(Action::Log { kind: LogKind::SettleFailed, error });
            }
            SettleAnswer::Landed => {
                let mut busy = self.take_busy(key).expect("settling item present");
                if let Phase::Settling { outcome, .. } = core::mem::replace(&mut busy.phase, Phase::Performing) {
                    self.count_outcome(now, busy.tally(), outcome);
                }
                self.worker_free(now);
            }
            SettleAnswer::FenceRefused => {
                let busy = self.take_busy(key).expect("settling item present");
                self.count_refused(now, busy.tally());
                self.worker_free(now);
            }
        }
    }

    /// The release of the declined claim at `key` answered (`Err`: it
    /// raised; logged `<name> release failed`, and the job comes back once
    /// its lease is stale). Frees the worker.
    pub fn release_answered(&mut self, now: Millis, key: ItemKey, outcome: Result<(), E>) {
        let releasing = self.slot_ref(key).and_then(Slot::busy).is_some_and(|b| matches!(b.phase, Phase::Releasing));
        if !releasing {
            return;
        }
        self.take_busy(key);
        if let Err(error) = outcome {
            self.actions.push_back(Action::Log { kind: LogKind::ReleaseFailed, error });
        }
        self.worker_free(now);
    }

    /// A settle whose fence was refused (or an item the host found lost,
    /// [`Runner::item_lost`]): a lost claim, traced once.
    pub(super) fn count_refused(&mut self, now: Millis, busy: Tally) {
        let Some(pass) = self.pass.as_mut() else { return };
        pass.report.claim_lost = pass.report.claim_lost.saturating_add(1);
        if self.tracing && !busy.lost {
            let event = Event::ClaimLost { at: now, item: busy.ordinal, lapsed: false, unconfirmed_ms: 0 };
            self.actions.push_back(Action::Emit(event));
        }
    }

    /// Keeps the worker of a declined claim busy with its release. Answers
    /// the key the host stores the item at; `None` when no slot is free (a
    /// host defect: a claim is only made for a free worker).
    pub(super) fn release_declined(&mut self, now: Millis, ordinal: u32) -> Option<ItemKey> {
        let Some(index) = self.slots.iter().position(|s| s.busy().is_none()) else {
            self.worker_free_after_claim(now);
            return None;
        };
        let slot = self.slot_at_mut(index);
        let phase = Phase::Releasing;
        slot.occupy(Busy { ordinal, started_at: now, lost: true, supervisor: None, drop_at: None, phase });
        let key = ItemKey { slot: index as u16, generation: slot.generation };
        self.actions.push_back(Action::Release { key });
        self.pump_claims(now);
        Some(key)
    }
}
