//! The job runner as a sans-IO state machine.
//!
//! The runner claims bounded work, performs it at the configured concurrency
//! under supervised renewals, isolates each item from the next, backs off when
//! a pass raises, coalesces wakes, and drains every item in flight on stop.
//! It never calls the user's code: it asks the host to, through [`Action`]s.
//!
//! When claims are made is the [`Scheduling`] in its options: passes (the
//! default, and the only one of the JS API), or the scheduling of a worker
//! pool on a job queue ([`queue`]).
//!
//! # The run loop a host writes
//!
//! ```text
//! loop {
//!     while let Some(action) = runner.poll_action() { execute it }
//!     wait until: a callback settles  -> runner.claim_found/claim_empty/claim_failed/
//!                                        item_settled/item_lost/item_detached/detached_ended/
//!                                        renewal_answered(now, ..)
//!                 runner.poll_timeout() passes -> runner.handle_timeout(now)
//!                 the user calls start/tick/wake/stop/quiesce/dispose
//! }
//! ```
//!
//! `now` is read by the host at each input. Items stay in the host, stored at
//! the slot named by the [`ItemKey`] that [`Runner::claim_found`] answers;
//! error payloads `E` are opaque and handed back in [`Action::Log`] and
//! [`Event`]s.
//!
//! One concern per module: [`Action`] and the other answers in `action`, the
//! user's calls in `calls`, when claims are made and passes end in `pass`
//! (and [`queue`]), an item's life in `items`, the settle phase in `settle`,
//! items counted after their worker moved on in `detach`, the per-slot
//! bookkeeping in `slot`.

mod action;
mod calls;
mod detach;
mod items;
mod pass;
pub mod queue;
mod settle;
mod slot;
#[cfg(test)]
mod slot_deadline_tests;

pub use action::{Action, LogKind, PassId, Ticket};
pub use detach::{DetachedId, Ended};
pub use settle::{SettleAnswer, SETTLE_RETRY};
pub use slot::ItemKey;

use crate::backoff::MAX_DELAY_MS;
use crate::event::Event;
use crate::options::{Config, Scheduling};
use crate::Millis;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use pass::Pass;
use slot::{Busy, Deadlines, Slot};

/// The job runner state machine. See the module docs.
///
/// `E` is the host's error payload; it is cloned once when an error is both
/// logged and traced.
#[derive(Debug)]
pub struct Runner<E> {
    config: Config,
    /// Whether a trace sink exists: with none, no event is built.
    tracing: bool,
    /// Whether the host settles outcomes in a phase of their own.
    settle_phase: bool,
    disposed: bool,
    started: bool,
    /// Passes: a follow-up pass was asked for during the pass in flight.
    waking: bool,
    /// Consecutive raising passes (queue: consecutive raising claims).
    failures: u32,
    /// The scheduling chain a stop retires.
    generation: u64,
    /// The loop's next pass (queue: the next idle poll): when, and for which
    /// chain.
    timer: Option<(Millis, u64)>,
    /// A chain that joined the pass in flight and schedules after it.
    chain_after_pass: Option<u64>,
    /// Queue: a claim now may find work.
    may_be_work: bool,
    /// Queue: no claim until then (claims failed).
    paused_until: Option<Millis>,
    pass: Option<Pass>,
    next_pass: u64,
    slots: Vec<Slot<E>>,
    /// The slots' deadlines as last computed (see [`Deadlines`]).
    deadlines: Deadlines,
    /// Detached items by [`DetachedId`], until their end is reported.
    detached: Vec<Option<slot::Tally>>,
    actions: VecDeque<Action<E>>,
    #[cfg(feature = "mutations")]
    supervision_mutation: crate::supervision::Mutation,
}

impl<E: Clone> Runner<E> {
    /// A runner with validated options (see
    /// [`crate::options::OptionsInput::validate`]). `tracing` says whether a
    /// trace sink exists. Allocates its slots and action queue once.
    pub fn new(config: Config, tracing: bool) -> Self {
        let pool = config.pool_size() as usize;
        Runner {
            config,
            tracing,
            settle_phase: false,
            disposed: false,
            started: false,
            waking: false,
            failures: 0,
            generation: 0,
            timer: None,
            chain_after_pass: None,
            may_be_work: false,
            paused_until: None,
            pass: None,
            next_pass: 0,
            slots: (0..pool).map(|_| Slot::default()).collect(),
            deadlines: Deadlines::new(pool),
            detached: Vec::new(),
            // The largest burst is a timeout round that lapses every item (a
            // `claim-lost` event and an abort each) and the pass's few
            // actions after it; the queue grows once past that if ever.
            actions: VecDeque::with_capacity(8 + 2 * pool),
            #[cfg(feature = "mutations")]
            supervision_mutation: crate::supervision::Mutation::None,
        }
    }

    /// Opts into the settle phase (an outcome reached is written until the
    /// store answers, and is never dropped by a lapse or a stop): the host
    /// answers a perform that reached an outcome with
    /// [`Runner::outcome_reached`] and writes it when asked by
    /// [`Action::Settle`], and hands declined claims back when asked by
    /// [`Action::Release`]. Without it (the JS API, and any host that does not opt in) the
    /// perform settles by itself and nothing here changes.
    #[must_use]
    pub fn with_settle_phase(mut self) -> Self {
        self.settle_phase = true;
        self
    }

    /// MUTATION CHECK ONLY (feature `mutations`): supervise every item
    /// claimed from now on with a deliberately broken variant.
    #[cfg(feature = "mutations")]
    pub fn set_supervision_mutation(&mut self, mutation: crate::supervision::Mutation) {
        self.supervision_mutation = mutation;
    }

    /// The options in force.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether a pass is in flight.
    pub fn pass_in_flight(&self) -> Option<PassId> {
        self.pass.as_ref().map(|p| p.id)
    }

    /// Whether [`Runner::dispose`] was called.
    pub fn is_disposed(&self) -> bool {
        self.disposed
    }

    /// The delay after the last pass (queue scheduling: before the next idle
    /// poll, or the pause after the last failed claims), in ms clamped to
    /// [`MAX_DELAY_MS`]: the backoff's after that many failures in a row,
    /// the interval without failures or without a backoff.
    pub fn next_delay_ms(&self) -> u64 {
        let delay = match self.config.backoff {
            Some(backoff) if self.failures > 0 => backoff.delay_after(self.failures),
            _ => self.config.interval_ms,
        };
        delay.min(MAX_DELAY_MS)
    }

    // ---- time --------------------------------------------------------------

    /// Whether [`Runner::claim_found`] reads its `now`. It does not when
    /// nothing about a found item is timed: no trace sink (no `claimed`
    /// event, no `durationMs`), no heartbeat (no lease starts at the
    /// answer), and one worker under pass scheduling (the answer never
    /// issues the next claim: that worker goes on to perform, and the pass
    /// cannot end while it does). A host whose clock reading costs
    /// something per item (Node.js: `Date.now()` calls into C++) may then
    /// answer a claim with the `at` the claim was made with instead of
    /// reading its clock; the runner's actions and timeouts are the same
    /// either way. Fixed for the runner's life (by its options).
    pub fn claim_found_reads_time(&self) -> bool {
        self.tracing
            || self.config.lease.is_some()
            || self.config.scheduling == Scheduling::Queue
            || self.config.pool_size() > 1
    }

    /// Whether an answer's time is read depends on the state (see
    /// [`Runner::claim_found_reads_time_now`] and
    /// [`Runner::performed_reads_time_now`]): several workers under pass
    /// scheduling, no heartbeat, no trace sink, no settle phase. Otherwise
    /// every answer's time is read (beyond what
    /// [`Runner::claim_found_reads_time`] spares). Fixed for the runner's life.
    pub fn time_read_by_state(&self) -> bool {
        !(self.tracing || self.config.lease.is_some() || self.config.scheduling == Scheduling::Queue || self.settle_phase)
            && self.config.pool_size() > 1
    }

    /// Whether [`Runner::claim_found`], called now, reads its `now`. Where
    /// [`Runner::time_read_by_state`] holds, the answer's time is only the
    /// `at` of the next claim it issues, and it issues one only when
    /// another worker still waits for an item and the pass may claim more
    /// (not drained, under its batch limit): with every other worker busy
    /// (most answers of a pass whose items take longer than its claims) it
    /// is not read, and any time at or after the claim's `at` gives the
    /// same actions and timeouts. Changes with every input: ask it just
    /// before answering.
    pub fn claim_found_reads_time_now(&self) -> bool {
        !self.time_read_by_state()
            || self.pass.as_ref().is_some_and(|pass| {
                pass.claim_in_flight && pass.waiting > 1 && !pass.drained && pass.attempts < self.config.batch_limit
            })
    }

    /// Whether [`Runner::item_settled`] with `Ok(())` (a perform that
    /// resolved), called now, reads its `now`. Where
    /// [`Runner::time_read_by_state`] holds, the settle's time is only the
    /// `at` of the claim the freed worker issues or of the pass's end, and
    /// neither happens while a claim is in flight (most settles of a pass
    /// whose claims take longer than its items): then any time gives the
    /// same actions and timeouts. Changes with every input: ask it just
    /// before answering.
    pub fn performed_reads_time_now(&self) -> bool {
        !self.time_read_by_state() || !self.pass.as_ref().is_some_and(|pass| pass.claim_in_flight)
    }


    /// The one instant the host must call [`Runner::handle_timeout`] at: the
    /// loop's next pass (or idle poll, or the end of a pause a claim waits
    /// for), or an item's renewal, deadline or grace end.
    ///
    /// Hosts ask it after every input (the wasm host twice per item), so the
    /// common case is short: without a heartbeat and without the settle phase
    /// no item ever has a timer (a grace end follows a lost claim, which takes
    /// a renewal; a settle retry takes the settle phase), and the slots are
    /// not looked at; with one, each slot's deadline is kept from the last
    /// ask unless the slot changed since (see `Deadlines`), so a slot an
    /// input did not touch costs a read.
    pub fn poll_timeout(&self) -> Option<Millis> {
        let mut earliest = self.timer.map(|(at, _)| at);
        if let Some(until) = self.paused_until.filter(|_| self.may_be_work) {
            earliest = Some(earliest.map_or(until, |e| e.min(until)));
        }
        if self.config.lease.is_none() && !self.settle_phase {
            debug_assert!(self.slots.iter().all(|s| s.deadline().is_none()), "an item timer without a heartbeat");
            return earliest;
        }
        match (earliest, self.deadlines.earliest(&self.slots)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Millis) {
        for index in 0..self.slots.len() {
            self.slot_timeout(now, index);
        }
        if self.paused_until.is_some_and(|until| until <= now) && self.config.scheduling == Scheduling::Queue {
            self.pump_queue(now);
        }
        if let Some((at, chain)) = self.timer {
            if at <= now {
                self.timer = None;
                self.run_chain(now, chain);
            }
        }
    }

    /// The next thing to do, in order.
    pub fn poll_action(&mut self) -> Option<Action<E>> {
        self.actions.pop_front()
    }

    /// The next thing to do, left in place: [`Runner::skip_action`] takes
    /// it once done. For a host that copies each action out field by field
    /// (the wasm host writes records): reading an action just queued whole,
    /// as [`Runner::poll_action`] moves it, stalls on the stores that made it.
    pub fn peek_action(&self) -> Option<&Action<E>> {
        self.actions.front()
    }

    /// Drops the next action (the one [`Runner::peek_action`] answers).
    pub fn skip_action(&mut self) {
        self.actions.pop_front();
    }

    // ---- shared internals ----------------------------------------------------

    fn log_and_trace(&mut self, kind: LogKind, error: E, event: impl FnOnce(E) -> Event<E>) {
        if self.tracing {
            self.actions.push_back(Action::Log { kind, error: error.clone() });
            self.actions.push_back(Action::Emit(event(error)));
        } else {
            self.actions.push_back(Action::Log { kind, error });
        }
    }

    fn slot_ref(&self, key: ItemKey) -> Option<&Slot<E>> {
        self.slots.get(usize::from(key.slot)).filter(|s| s.generation == key.generation)
    }

    /// The slot of `key`, to change (its kept deadline is marked stale).
    fn slot_mut(&mut self, key: ItemKey) -> Option<&mut Slot<E>> {
        let slot = self.slots.get_mut(usize::from(key.slot)).filter(|s| s.generation == key.generation)?;
        self.deadlines.mark(usize::from(key.slot));
        Some(slot)
    }

    /// Slot `index`, to change (its kept deadline is marked stale). Every
    /// change to a slot goes through here or [`Runner::slot_mut`].
    fn slot_at_mut(&mut self, index: usize) -> &mut Slot<E> {
        self.deadlines.mark(index);
        &mut self.slots[index]
    }

    /// Frees the slot of a settled item; its renewals in flight are abandoned.
    fn take_busy(&mut self, key: ItemKey) -> Option<Busy<E>> {
        let slot = self.slot_mut(key)?;
        let busy = slot.vacate()?;
        slot.generation = slot.generation.wrapping_add(1);
        Some(busy)
    }
}
