//! Passes: when claims are made, and when a pass ends.
//!
//! Under [`Scheduling::Passes`] (the default, and the JS API's only one) a
//! pass starts `min(concurrency, batchLimit)` workers that claim
//! one at a time until a claim answers nothing, raises, or the batch limit
//! is spent; it ends once its last item settles, and the loop schedules the
//! next pass after the interval, or the backoff when the pass raised.
//!
//! Under [`Scheduling::Queue`] see [`super::queue`]: a pass is a busy
//! period, and the claims follow the free slots.
//!
//! Either way, only one claim is ever in flight, and a pass's report counts
//! what its claims found.

use super::{Action, PassId, Runner};
use crate::backoff::MAX_BACKOFF_DOUBLINGS;
use crate::event::{Event, PassReport};
use crate::options::Scheduling;
use crate::Millis;

/// The bookkeeping of the pass in flight.
#[derive(Clone, Debug)]
pub(super) struct Pass {
    pub id: PassId,
    /// Read at the head of the pass, published with the first claim.
    pub started_at: Millis,
    pub announced: bool,
    pub attempts: u64,
    pub report: PassReport,
    pub raised: bool,
    pub drained: bool,
    /// Passes: workers waiting for a claim (the one in flight included).
    /// Queue: always 0 (a free slot claims when work may be there).
    pub waiting: u32,
    pub claim_in_flight: bool,
    /// The `at` the claim in flight was made with: a new lease's first stamp.
    pub claim_at: Millis,
    /// Workers holding an item (performing, settling or releasing it).
    pub performing: u32,
    /// Items detached from their workers whose end is not reported yet.
    pub detached: u32,
    /// Queue: `stop` was called during this pass; it claims no more.
    pub halted: bool,
}

impl<E: Clone> Runner<E> {
    /// A pass (or join the one in flight), then schedule
    /// the next one for this chain when it ends.
    pub(super) fn run_chain(&mut self, now: Millis, chain: u64) {
        if self.disposed {
            return;
        }
        if self.config.scheduling == Scheduling::Queue {
            return self.poll_queue(now, chain);
        }
        if self.pass.is_none() {
            self.begin_pass(now);
        }
        if self.pass.is_some() {
            self.chain_after_pass = Some(chain);
        } else if chain == self.generation {
            // The pass ended within begin_pass (impossible today: a pass
            // always waits for its first claim), schedule at once.
            self.timer = Some((now.after(self.next_delay_ms()), chain));
        }
    }

    /// Opens a pass and makes its first claim.
    pub(super) fn begin_pass(&mut self, now: Millis) -> PassId {
        let id = PassId(self.next_pass);
        self.next_pass += 1;
        let queue = self.config.scheduling == Scheduling::Queue;
        self.pass = Some(Pass {
            id,
            started_at: now,
            announced: false,
            attempts: 0,
            report: PassReport::IDLE,
            raised: false,
            drained: false,
            waiting: if queue { 0 } else { self.config.pool_size() },
            claim_in_flight: false,
            claim_at: now,
            performing: 0,
            detached: 0,
            halted: false,
        });
        if queue {
            self.issue_claim(now);
        } else {
            self.pump_claims(now);
        }
        id
    }

    /// Asks the host for a claim on behalf of the pass in flight.
    pub(super) fn issue_claim(&mut self, now: Millis) {
        let Some(pass) = self.pass.as_mut() else { return };
        pass.attempts += 1;
        pass.claim_in_flight = true;
        pass.claim_at = now;
        self.actions.push_back(Action::Claim { at: now });
        if self.config.scheduling == Scheduling::Queue {
            // The answer decides when the next idle poll is due.
            self.timer = None;
        }
    }

    /// Issues the next claim when a worker may claim and none is in flight;
    /// ends the pass once nothing is left in it.
    pub(super) fn pump_claims(&mut self, now: Millis) {
        if self.config.scheduling == Scheduling::Queue {
            return self.pump_queue(now);
        }
        let Some(pass) = self.pass.as_mut() else { return };
        if pass.claim_in_flight || pass.waiting == 0 {
            return self.maybe_end_pass(now);
        }
        if pass.drained || pass.attempts >= self.config.batch_limit {
            pass.waiting = 0;
            return self.maybe_end_pass(now);
        }
        self.issue_claim(now);
    }

    /// The claim in flight answered nothing (`null`/`undefined`). Passes:
    /// the pass takes no more claims, for every worker. Queue: no claim is
    /// made until work may be there again (see [`super::queue`]).
    pub fn claim_empty(&mut self, now: Millis) {
        let Some(pass) = self.pass.as_mut().filter(|p| p.claim_in_flight) else { return };
        pass.claim_in_flight = false;
        if self.config.scheduling == Scheduling::Queue {
            return self.queue_found_nothing(now);
        }
        pass.drained = true;
        pass.waiting = 0;
        self.maybe_end_pass(now);
    }

    /// The claim in flight raised: logged and traced (`claim-failed`).
    /// Passes: the pass ends once its items settle, and the loop backs off.
    /// Queue: no claim is made for the pool until the backoff's delay passed
    /// (see [`super::queue`]).
    pub fn claim_failed(&mut self, now: Millis, error: E) {
        let Some(pass) = self.pass.as_mut().filter(|p| p.claim_in_flight) else { return };
        pass.claim_in_flight = false;
        pass.raised = true;
        self.log_and_trace(crate::runner::LogKind::ClaimFailed, error, |error| Event::ClaimFailed { at: now, error });
        if self.config.scheduling == Scheduling::Queue {
            return self.queue_claim_failed(now);
        }
        if let Some(pass) = self.pass.as_mut() {
            pass.drained = true;
            pass.waiting = 0;
        }
        self.maybe_end_pass(now);
    }

    /// The worker whose claim answered an item it does not perform wants
    /// another claim.
    pub(super) fn worker_free_after_claim(&mut self, now: Millis) {
        if let Some(pass) = self.pass.as_mut() {
            pass.performing -= 1;
            if self.config.scheduling == Scheduling::Passes {
                pass.waiting += 1;
            }
        }
        self.pump_claims(now);
    }

    /// A worker's item is done with.
    pub(super) fn worker_free(&mut self, now: Millis) {
        if self.config.scheduling == Scheduling::Queue {
            return self.queue_slot_free(now);
        }
        self.worker_free_after_claim(now);
    }

    pub(super) fn maybe_end_pass(&mut self, now: Millis) {
        let Some(pass) = &self.pass else { return };
        if pass.claim_in_flight || pass.waiting > 0 || pass.performing > 0 || pass.detached > 0 {
            return;
        }
        let pass = self.pass.take().expect("checked above");
        let queue = self.config.scheduling == Scheduling::Queue;
        if !queue {
            // Lost claims are contention, not failure: only raising passes
            // back off. (Queue: claim answers count the failures.)
            self.failures = if pass.raised { (self.failures + 1).min(MAX_BACKOFF_DOUBLINGS + 1) } else { 0 };
        }
        let next_delay_ms = self.next_delay_ms();
        if pass.announced && self.tracing {
            let report = pass.report;
            self.actions.push_back(Action::Emit(Event::PassEnd { at: now, report, next_delay_ms }));
        }
        self.actions.push_back(Action::PassEnded { pass: pass.id, report: pass.report });
        if queue {
            return;
        }
        if let Some(chain) = self.chain_after_pass.take() {
            if !self.disposed && chain == self.generation {
                self.timer = Some((now.after(next_delay_ms), chain));
            }
        }
        if core::mem::take(&mut self.waking) && !self.disposed {
            self.begin_pass(now);
        }
    }
}
