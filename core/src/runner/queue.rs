//! Queue scheduling ([`Scheduling::Queue`](crate::options::Scheduling::Queue)): what a worker pool on a job
//! queue needs, where passes would leave slots idle until a pass's last item
//! settles and the interval passes.
//!
//! - **A free slot claims as soon as work may be there.** Work may be there
//!   after a claim found an item, after an item ended (its slot is free),
//!   after a [`Runner::wake`] or a [`Runner::tick`], and when the idle poll
//!   is due. A claim that answers nothing stops the claims until one of
//!   those happens again; it does not stop the slots still working. Claims
//!   stay one at a time, so a burst fills the free slots one after another,
//!   each as soon as the claim before answered.
//! - **Idle slots poll in turns.** While started, the pool polls the queue
//!   once per `intervalMs` after the last claim answered nothing, however
//!   many slots are idle: one claim, for the whole pool.
//! - **Claim failures back off once, for the pool.** A raising claim pauses
//!   every claim (wakes and ended items included; an explicit
//!   [`Runner::tick`] does not wait) for the configured backoff's delay after
//!   that many failures in a row ([`Runner::next_delay_ms`]; `intervalMs`
//!   without a backoff); while started, one claim probes once the pause is
//!   over. The first claim that answers ends the run of failures.
//! - **Item failures do not back off**: they are counted, logged and traced,
//!   and the slot claims again.
//! - **A pass is a busy period**: it opens with a claim made while nothing
//!   was in flight, and ends once no claim is in flight and no slot holds an
//!   item. `tick` joins the one in flight or opens one (which claims at once
//!   and goes on while work is found, like a pass that drains the queue);
//!   `quiesce` and `dispose` wait for it; `pass-start` and `pass-end` trace
//!   it, `pass-end`'s `nextDelayMs` being the wait before the next idle poll.
//!   A busy period is not bounded by `batchLimit`.
//! - **`stop` ends the claims**: the busy period in flight claims no more,
//!   and ends once its items are done; a later `wake` or `tick` claims again.

use super::Runner;
use crate::backoff::MAX_BACKOFF_DOUBLINGS;
use crate::Millis;

impl<E: Clone> Runner<E> {
    /// Makes a claim when a slot is free, work may be there, no claim is in
    /// flight, the pass in flight is not halted and claims are not paused;
    /// otherwise ends the pass once nothing is left in it.
    pub(super) fn pump_queue(&mut self, now: Millis) {
        if self.paused_until.is_some_and(|until| until <= now) {
            self.paused_until = None;
        }
        let may_claim = self.may_be_work && self.paused_until.is_none() && !self.disposed;
        match &self.pass {
            None if may_claim => {
                self.begin_pass(now);
            }
            None => {}
            Some(pass) => {
                let free = pass.performing < self.config.pool_size();
                if may_claim && free && !pass.claim_in_flight && !pass.halted {
                    self.issue_claim(now);
                } else {
                    self.maybe_end_pass(now);
                }
            }
        }
    }

    /// The idle poll of `chain` is due (or, started, the pause after failed
    /// claims is over).
    pub(super) fn poll_queue(&mut self, now: Millis, chain: u64) {
        if chain == self.generation {
            self.may_be_work = true;
        }
        self.pump_queue(now);
    }

    /// Work may be there (a wake, a tick): claims resume in a halted pass.
    pub(super) fn queue_may_be_work(&mut self, now: Millis) {
        self.may_be_work = true;
        if let Some(pass) = self.pass.as_mut() {
            pass.halted = false;
        }
        self.pump_queue(now);
    }

    /// The claim answered nothing: no claim until work may be there again;
    /// while started, the idle poll is due an interval from now.
    pub(super) fn queue_found_nothing(&mut self, now: Millis) {
        self.failures = 0;
        self.may_be_work = false;
        if self.started {
            self.timer = Some((now.after(self.next_delay_ms()), self.generation));
        }
        self.maybe_end_pass(now);
    }

    /// The claim raised: every claim pauses for the backoff's delay; while
    /// started, one claim probes once it is over.
    pub(super) fn queue_claim_failed(&mut self, now: Millis) {
        self.failures = (self.failures + 1).min(MAX_BACKOFF_DOUBLINGS + 1);
        let until = now.after(self.next_delay_ms());
        self.paused_until = Some(until);
        self.may_be_work = false;
        if self.started {
            self.timer = Some((until, self.generation));
        }
        self.maybe_end_pass(now);
    }

    /// A slot's item is done with: the slot claims again unless the pass
    /// was halted.
    pub(super) fn queue_slot_free(&mut self, now: Millis) {
        if let Some(pass) = self.pass.as_mut() {
            pass.performing -= 1;
            if !pass.halted {
                self.may_be_work = true;
            }
        }
        self.pump_queue(now);
    }

    /// A claim found an item: the next free slot claims at once.
    pub(super) fn queue_found(&mut self) {
        self.failures = 0;
        if self.pass.as_ref().is_some_and(|p| !p.halted) {
            self.may_be_work = true;
        }
    }

    /// `stop`: the pass in flight claims no more.
    pub(super) fn queue_stop(&mut self) {
        self.may_be_work = false;
        if let Some(pass) = self.pass.as_mut() {
            pass.halted = true;
        }
    }
}
