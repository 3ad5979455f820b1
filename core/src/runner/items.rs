//! The life of a claimed item: it is performed in a free slot under
//! supervised renewals, counted when it settles, aborted when its claim is
//! lost or lapses, and dropped once its grace passed.

use super::slot::{Busy, Phase, Slot, Tally};
use super::{Action, ItemKey, LogKind, Runner};
use crate::event::Event;
use crate::options::Scheduling;
use crate::supervision::{Answer, CallId, Cadence, Reconfirm, Step, Supervisor, MAX_STEPS_PER_INPUT};
use crate::Millis;

impl<E: Clone> Runner<E> {
    /// The claim in flight answered an item. Answers where the host must
    /// store it (it is performed next). `None` when the item is not to be
    /// performed: no claim was in flight (a host defect), or, with a
    /// heartbeat, the claim answered after its write tolerance `W` was spent
    /// (traced `claim-lost` with `lapsed: true`, counted `claimLost`; the
    /// lease expires in the store and another worker reclaims it).
    pub fn claim_found(&mut self, now: Millis) -> Option<ItemKey> {
        let pass = self.pass.as_mut().filter(|p| p.claim_in_flight)?;
        pass.claim_in_flight = false;
        pass.waiting = pass.waiting.saturating_sub(1);
        pass.performing += 1;
        let ordinal = pass.report.claimed;
        pass.report.claimed = pass.report.claimed.saturating_add(1);
        let claim_at = pass.claim_at;
        if self.tracing {
            if !pass.announced {
                pass.announced = true;
                let at = pass.started_at;
                self.actions.push_back(Action::Emit(Event::PassStart { at }));
            }
            self.actions.push_back(Action::Emit(Event::Claimed { at: now, item: ordinal }));
        }
        if self.config.scheduling == Scheduling::Queue {
            self.queue_found();
        }
        // A claim heard after its write tolerance was spent may already be
        // held by another process by the time work starts: it is not
        // performed (supervision could not decide in time), and counts as a
        // lapsed claim.
        if let Some(lease) = self.config.lease {
            let unconfirmed_ms = now.since(claim_at);
            if unconfirmed_ms >= lease.write_tolerance_ms {
                if let Some(pass) = self.pass.as_mut() {
                    pass.report.claim_lost = pass.report.claim_lost.saturating_add(1);
                }
                if self.tracing {
                    let event = Event::ClaimLost { at: now, item: ordinal, lapsed: true, unconfirmed_ms };
                    self.actions.push_back(Action::Emit(event));
                }
                if self.settle_phase {
                    // Handed back at once rather than left running in the
                    // store for a whole lease; the worker waits for the
                    // release (see `release_answered`).
                    return self.release_declined(now, ordinal);
                }
                self.worker_free_after_claim(now);
                return None;
            }
        }
        let index = self.slots.iter().position(|s| s.busy().is_none())?;
        let supervisor = self.config.lease.map(|lease| {
            #[allow(unused_mut)]
            let mut supervisor = Supervisor::new(lease.supervision(Cadence::Grid, Reconfirm::Renewal), now, claim_at);
            #[cfg(feature = "mutations")]
            supervisor.set_mutation(self.supervision_mutation);
            supervisor
        });
        let slot = self.slot_at_mut(index);
        let supervisor = supervisor.map(|supervisor| slot.supervisor_box(supervisor));
        slot.occupy(Busy { ordinal, started_at: now, lost: false, supervisor, drop_at: None, phase: Phase::Performing });
        let key = ItemKey { slot: index as u16, generation: slot.generation };
        self.actions.push_back(Action::Perform { key });
        self.pump_claims(now);
        Some(key)
    }

    /// The item at `key` settled: `Ok` when `perform` resolved, `Err` when it
    /// raised. Counted: resolved → `performed`, even if the claim was lost meanwhile;
    /// raised after the claim was lost → `claimLost` (not logged); raised
    /// otherwise → `failed`, logged and traced (passes: the loop backs off;
    /// queue scheduling: it does not). Answers for an item already settled
    /// (or dropped) are ignored. In the settle phase this answers a perform
    /// that ended without an outcome to write (it observed its signal); an
    /// item already settling ignores it.
    pub fn item_settled(&mut self, now: Millis, key: ItemKey, outcome: Result<(), E>) {
        if !self.slot_ref(key).and_then(Slot::busy).is_some_and(|b| matches!(b.phase, Phase::Performing)) {
            return;
        }
        let Some(busy) = self.take_busy(key) else { return };
        self.count_outcome(now, busy.tally(), outcome);
        self.worker_free(now);
    }

    /// The item at `key` ended without its outcome written, for a reason
    /// the host learned itself rather than from the runner's renewals: the
    /// job was cancelled under it, or the store's fence refused the write
    /// of its outcome (another claimant holds the job now, or it is gone).
    /// Counted `claimLost` and traced `claim-lost` (`lapsed: false`) once,
    /// as a settle whose fence was refused ([`SettleAnswer::FenceRefused`]);
    /// not logged and never backing the loop off: it is contention, not a
    /// failure. A host whose perform writes its own outcome reports it here
    /// instead of as performed. Ignored for an item that is not performing.
    ///
    /// [`SettleAnswer::FenceRefused`]: super::SettleAnswer::FenceRefused
    pub fn item_lost(&mut self, now: Millis, key: ItemKey) {
        if !self.slot_ref(key).and_then(Slot::busy).is_some_and(|b| matches!(b.phase, Phase::Performing)) {
            return;
        }
        let Some(busy) = self.take_busy(key) else { return };
        self.count_refused(now, busy.tally());
        self.worker_free(now);
    }

    /// Counts an item's outcome as [`Runner::item_settled`] says.
    pub(super) fn count_outcome(&mut self, now: Millis, busy: Tally, outcome: Result<(), E>) {
        let item = busy.ordinal;
        let Some(pass) = self.pass.as_mut() else { return };
        match outcome {
            Ok(()) => {
                pass.report.performed = pass.report.performed.saturating_add(1);
                if self.tracing {
                    let duration_ms = now.since(busy.started_at);
                    self.actions.push_back(Action::Emit(Event::Performed { at: now, item, duration_ms }));
                }
            }
            Err(_) if busy.lost => pass.report.claim_lost = pass.report.claim_lost.saturating_add(1),
            Err(error) => {
                pass.report.failed = pass.report.failed.saturating_add(1);
                pass.raised = true;
                self.log_and_trace(LogKind::WorkFailed, error, |error| Event::ItemFailed { at: now, item, error });
            }
        }
    }

    /// The renewal `call` for the item at `key` answered: `Ok(true)` landed,
    /// `Ok(false)` lost the claim, `Err` raised (the lease is as it was).
    pub fn renewal_answered(&mut self, now: Millis, key: ItemKey, call: CallId, outcome: Result<bool, E>) {
        let Some(slot) = self.slot_mut(key) else { return };
        let Some(busy) = slot.busy_mut() else { return };
        let Some(supervisor) = busy.supervisor.as_mut() else { return };
        if supervisor.ended() {
            return;
        }
        let item = busy.ordinal;
        let answer = match &outcome {
            Ok(true) => Answer::Updated,
            Ok(false) => Answer::Lost,
            Err(_) => Answer::Failed,
        };
        let mut steps = StepBuffer::default();
        supervisor.handle_answer(now, call, answer);
        while let Some(step) = supervisor.poll_output() {
            steps.push(step);
        }
        let mut error = outcome.err();
        for step in steps.iter() {
            if let (Step::Failed { at, .. }, true) = (step, self.tracing) {
                if let Some(error) = error.take() {
                    self.actions.push_back(Action::Emit(Event::HeartbeatFailed { at, item, error }));
                }
            }
            self.apply_step(now, key, item, step);
        }
    }

    /// The instant by which the work of the item at `key` must have ended:
    /// its lease's [`crate::lease::LeasePolicy::exit_deadline`] from the send
    /// time of its last confirmed renewal (the claim's `at` until one
    /// confirms), so it moves later with every confirmed renewal. A host hands
    /// it to whatever must end the work when the host itself cannot (a
    /// watchdog process), and to the work so it can bound its own I/O.
    /// `None` without renewals, or when `key` is no longer performing.
    pub fn exit_deadline(&self, key: ItemKey) -> Option<Millis> {
        let lease = self.config.lease?;
        let slot = self.slots.get(usize::from(key.slot)).filter(|s| s.generation == key.generation)?;
        let supervisor = slot.busy()?.supervisor.as_ref()?;
        Some(lease.exit_deadline(supervisor.last_confirmed()))
    }

    /// Runs the timers of slot `index` due at `now`: a settle retry, a drop
    /// after the grace, the supervisor's renewals and deadline.
    pub(super) fn slot_timeout(&mut self, now: Millis, index: usize) {
        let slot = self.slot_at_mut(index);
        let key = ItemKey { slot: index as u16, generation: slot.generation };
        let Some(busy) = slot.busy_mut() else { return };
        if let Phase::Settling { retry_at, .. } = &mut busy.phase {
            if retry_at.is_some_and(|at| at <= now) {
                *retry_at = None;
                self.actions.push_back(Action::Settle { key });
            }
        }
        if self.drop_if_due(now, key) {
            return;
        }
        let Some(busy) = self.slot_at_mut(index).busy_mut() else { return };
        let item = busy.ordinal;
        let Some(supervisor) = busy.supervisor.as_mut() else { return };
        if supervisor.poll_timeout().is_none_or(|at| at > now) {
            return;
        }
        let mut steps = StepBuffer::default();
        supervisor.handle_timeout(now);
        while let Some(step) = supervisor.poll_output() {
            steps.push(step);
        }
        for step in steps.iter() {
            self.apply_step(now, key, item, step);
        }
        // A lapse decided late may have made the drop due already.
        self.drop_if_due(now, key);
    }

    /// Drops the perform of `key` if its grace has run out by `now`: it is
    /// counted as a lost claim, like a perform that raised after the abort.
    /// Answers whether it did.
    fn drop_if_due(&mut self, now: Millis, key: ItemKey) -> bool {
        let Some(busy) = self.slot_mut(key).and_then(Slot::busy_mut) else { return false };
        if !matches!(busy.phase, Phase::Performing) || busy.drop_at.is_none_or(|at| at > now) {
            return false;
        }
        self.take_busy(key);
        if let Some(pass) = self.pass.as_mut() {
            pass.report.claim_lost = pass.report.claim_lost.saturating_add(1);
        }
        self.actions.push_back(Action::Drop { key });
        self.worker_free(now);
        true
    }

    fn apply_step(&mut self, now: Millis, key: ItemKey, item: u32, step: Step) {
        match step {
            Step::Renew { call, at } => self.actions.push_back(Action::Renew { key, call, at }),
            Step::Confirmed { at, .. } if self.tracing => {
                self.actions.push_back(Action::Emit(Event::Heartbeat { at, item }));
            }
            Step::Lost { at } => self.lose(now, key, item, at, false, 0),
            Step::Lapsed { unconfirmed_ms } => self.lose(now, key, item, now, true, unconfirmed_ms),
            // Failed is traced by the caller (it holds the error); the runner
            // has no receipt hook, and reconfirms with renewals.
            _ => {}
        }
    }

    /// `lost = true`, trace `claim-lost`, abort the signal. The
    /// outcome is then counted as [`Runner::item_settled`] says.
    fn lose(&mut self, now: Millis, key: ItemKey, item: u32, at: Millis, lapsed: bool, unconfirmed_ms: u64) {
        // An abort decided late (the process frozen or starved past the
        // lapse, its grace spent meanwhile) would give work that ignores its
        // signal a whole grace more, beside a peer that may reclaim the item
        // soon after the exit deadline: where the host asks, the drop is due
        // by that deadline, or at once past it.
        let by = if self.config.drop_by_exit_deadline { self.exit_deadline(key) } else { None };
        let grace = self.config.abort_grace_ms.map(|ms| {
            let after = now.after(ms);
            by.map_or(after, |deadline| after.min(deadline.max(now)))
        });
        let Some(busy) = self.slot_mut(key).and_then(Slot::busy_mut) else { return };
        if !matches!(busy.phase, Phase::Performing) {
            // The work is over: nothing to abort or drop. Renewals stop (the
            // supervisor ended); only the settle's own answer decides.
            return;
        }
        busy.lost = true;
        busy.drop_at = grace;
        if self.tracing {
            self.actions.push_back(Action::Emit(Event::ClaimLost { at, item, lapsed, unconfirmed_ms }));
        }
        self.actions.push_back(Action::Abort { key, lapsed });
    }
}

/// Steps polled from one supervisor input (at most
/// [`MAX_STEPS_PER_INPUT`]), kept on the stack while the runner applies
/// them.
#[derive(Default)]
struct StepBuffer {
    steps: [Option<Step>; MAX_STEPS_PER_INPUT],
    len: usize,
}

impl StepBuffer {
    fn push(&mut self, step: Step) {
        debug_assert!(self.len < self.steps.len(), "a supervisor input made more than MAX_STEPS_PER_INPUT steps");
        if self.len < self.steps.len() {
            self.steps[self.len] = Some(step);
            self.len += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = Step> + '_ {
        self.steps[..self.len].iter().flatten().copied()
    }
}
