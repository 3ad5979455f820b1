//! The job runner as a sans-IO state machine.
//!
//! The runner claims bounded work, performs it at the configured concurrency
//! under supervised renewals, isolates each item from the next, backs off when
//! a pass raises, coalesces wakes, and drains every item in flight on stop.
//! It never calls the user's code: it asks the host to, through [`Action`]s.
//!
//! # The run loop a host writes
//!
//! ```text
//! loop {
//!     while let Some(action) = runner.poll_action() { execute it }
//!     wait until: a callback settles  -> runner.claim_found/claim_empty/claim_failed/
//!                                        item_settled/renewal_answered(now, ..)
//!                 runner.poll_timeout() passes -> runner.handle_timeout(now)
//!                 the user calls start/tick/wake/stop/quiesce/dispose
//! }
//! ```
//!
//! `now` is read by the host at each input. Items stay in the host, stored at
//! the slot named by the [`ItemKey`] that [`Runner::claim_found`] answers;
//! error payloads `E` are opaque and handed back in [`Action::Log`] and
//! [`Event`]s.

mod settle;
mod slot;

pub use settle::{SettleAnswer, SETTLE_RETRY};
pub use slot::ItemKey;

use crate::backoff::{MAX_BACKOFF_DOUBLINGS, MAX_DELAY_MS};
use crate::event::{Event, PassReport};
use crate::options::Config;
use crate::supervision::{Answer, CallId, Cadence, Reconfirm, Step, SupervisionPolicy, Supervisor};
use crate::Millis;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use slot::{Busy, Phase, Slot};

/// Identifies one pass, so a host can resolve every `tick()` and `quiesce()`
/// that waits on it when [`Action::PassEnded`] names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PassId(pub u64);

/// What [`Runner::tick`] answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ticket {
    /// The runner is disposed: the tick resolves at once with this report
    /// ([`PassReport::IDLE`]).
    Done(PassReport),
    /// The tick resolves when this pass ends (a new pass, or the one in
    /// flight, which a tick joins rather than overlaps).
    Pass(PassId),
}

/// Which line to log at error level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// `<name> work failed`: a perform raised while its claim was held.
    WorkFailed,
    /// `<name> claim failed`: a claim raised.
    ClaimFailed,
    /// `<name> settle failed`: a settle could not reach the store; it is
    /// tried again (settle phase only, see [`Runner::with_settle_phase`]).
    SettleFailed,
    /// `<name> release failed`: the release of a declined claim raised; the
    /// job comes back when its lease goes stale (settle phase only).
    ReleaseFailed,
}

impl LogKind {
    /// The message suffix after the runner name: `work failed`, `claim
    /// failed`, `settle failed` or `release failed`.
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::WorkFailed => "work failed",
            LogKind::ClaimFailed => "claim failed",
            LogKind::SettleFailed => "settle failed",
            LogKind::ReleaseFailed => "release failed",
        }
    }
}

/// What the runner asks its host to do, in order.
#[allow(missing_docs)] // each variant's doc names its fields and units
#[derive(Clone, Debug, PartialEq)]
pub enum Action<E> {
    /// Call `claim(at)`; answer with [`Runner::claim_found`],
    /// [`Runner::claim_empty`] or [`Runner::claim_failed`]. Only one claim is
    /// ever in flight.
    Claim { at: Millis },
    /// Start `perform(item, signal)` for the item stored at `key`; answer with
    /// [`Runner::item_settled`] (or, in the settle phase, with
    /// [`Runner::outcome_reached`] when the work reached an outcome).
    Perform { key: ItemKey },
    /// Settle phase only: write the outcome the item at `key` reached with
    /// the host's fenced settle; answer with [`Runner::settle_answered`].
    /// Asked again, after [`SETTLE_RETRY`], for as long as the store is
    /// unavailable.
    Settle { key: ItemKey },
    /// Settle phase only: the claim stored at `key` was heard too late to be
    /// performed; hand it back with the host's fenced release (queued again
    /// at once, its attempt not counted) and answer with
    /// [`Runner::release_answered`].
    Release { key: ItemKey },
    /// Call `heartbeat(item, at)` for the item at `key`; answer with
    /// [`Runner::renewal_answered`] quoting `call`.
    Renew { key: ItemKey, call: CallId, at: Millis },
    /// Abort the item's signal with a `JobClaimLostError` (`lapsed` says
    /// whether supervision lapsed rather than a renewal answering false).
    Abort { key: ItemKey, lapsed: bool },
    /// The grace period after an abort passed: drop the perform (native
    /// hosts). The item is settled as `claimLost`; do not report it. Never
    /// asked for an item whose perform reached its outcome.
    Drop { key: ItemKey },
    /// Log `<name> <kind.suffix()>` at error level with the error.
    Log { kind: LogKind, error: E },
    /// Hand this event to the trace sink (only produced when one exists).
    Emit(Event<E>),
    /// The pass ended: resolve every waiter on it with `report`.
    PassEnded { pass: PassId, report: PassReport },
}

/// The bookkeeping of the pass in flight.
#[derive(Clone, Debug)]
struct Pass {
    id: PassId,
    /// Read at the head of the pass, published with the first claim.
    started_at: Millis,
    announced: bool,
    attempts: u64,
    report: PassReport,
    raised: bool,
    drained: bool,
    /// Workers waiting for a claim (the one in flight included).
    waiting: u32,
    claim_in_flight: bool,
    /// The `at` the claim in flight was made with: a new lease's first stamp.
    claim_at: Millis,
    performing: u32,
}

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
    /// A follow-up pass was asked for during the pass in flight.
    waking: bool,
    failures: u32,
    /// The scheduling chain a stop retires.
    generation: u64,
    /// The loop's next pass: when, and for which chain.
    timer: Option<(Millis, u64)>,
    /// A chain that joined the pass in flight and schedules after it.
    chain_after_pass: Option<u64>,
    pass: Option<Pass>,
    next_pass: u64,
    slots: Vec<Slot<E>>,
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
            pass: None,
            next_pass: 0,
            slots: (0..pool).map(|_| Slot::default()).collect(),
            actions: VecDeque::with_capacity(8 + 4 * pool),
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

    /// Whether the loop is started (and not stopped since).
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// The delay after the last pass, in ms clamped to
    /// [`MAX_DELAY_MS`].
    pub fn next_delay_ms(&self) -> u64 {
        let delay = match self.config.backoff {
            Some(backoff) if self.failures > 0 => backoff.delay_after(self.failures),
            _ => self.config.interval_ms,
        };
        delay.min(MAX_DELAY_MS)
    }

    // ---- user calls ----------------------------------------------------

    /// A pass at once, then one per delay. A second start,
    /// or a start after dispose, does nothing.
    pub fn start(&mut self, now: Millis) {
        if self.disposed || self.started {
            return;
        }
        self.started = true;
        let chain = self.generation;
        self.run_chain(now, chain);
    }

    /// One pass, joining the one in flight instead of
    /// overlapping it. After dispose: [`Ticket::Done`] with an idle report.
    pub fn tick(&mut self, now: Millis) -> Ticket {
        if self.disposed {
            return Ticket::Done(PassReport::IDLE);
        }
        if let Some(pass) = &self.pass {
            return Ticket::Pass(pass.id);
        }
        Ticket::Pass(self.begin_pass(now))
    }

    /// Idle, one pass now; during a pass, exactly one
    /// follow-up pass after it, however many wakes arrive.
    pub fn wake(&mut self, now: Millis) {
        if self.disposed {
            return;
        }
        if self.pass.is_none() {
            self.begin_pass(now);
        } else {
            self.waking = true;
        }
    }

    /// Retires the scheduling chain (a pass that outlives
    /// its stop schedules nothing) and drops a pending follow-up. The pass in
    /// flight drains; in the settle phase it drains its settling items too,
    /// however many stops or disposes follow: an outcome reached is never
    /// given up on, it ends only when its settle lands or its fence is
    /// refused.
    pub fn stop(&mut self) {
        self.started = false;
        self.waking = false;
        self.generation += 1;
        self.timer = None;
        self.chain_after_pass = None;
    }

    /// Stops; answers the pass to wait for, if one is in
    /// flight. The runner can start again.
    pub fn quiesce(&mut self) -> Option<PassId> {
        self.stop();
        self.pass_in_flight()
    }

    /// Quiesces for good. Later `start`, `tick` and
    /// `wake` do nothing. A second dispose answers `None` at once.
    pub fn dispose(&mut self) -> Option<PassId> {
        if self.disposed {
            return None;
        }
        self.stop();
        self.disposed = true;
        self.pass_in_flight()
    }

    // ---- answers ---------------------------------------------------------

    /// The claim in flight answered an item. Answers where the host must
    /// store it (it is performed next). `None` when the item is not to be
    /// performed: no claim was in flight (a host defect), or, with a
    /// heartbeat, the claim answered after its write tolerance `W` was spent
    /// (traced `claim-lost` with `lapsed: true`, counted `claimLost`; the
    /// lease expires in the store and another worker reclaims it).
    pub fn claim_found(&mut self, now: Millis) -> Option<ItemKey> {
        let pass = self.pass.as_mut().filter(|p| p.claim_in_flight)?;
        pass.claim_in_flight = false;
        pass.waiting -= 1;
        pass.performing += 1;
        let ordinal = pass.report.claimed;
        pass.report.claimed += 1;
        let claim_at = pass.claim_at;
        if self.tracing {
            if !pass.announced {
                pass.announced = true;
                let at = pass.started_at;
                self.actions.push_back(Action::Emit(Event::PassStart { at }));
            }
            self.actions.push_back(Action::Emit(Event::Claimed { at: now, item: ordinal }));
        }
        // A claim heard after its write tolerance was spent may already be
        // held by another process by the time work starts: it is not
        // performed (supervision could not decide in time), and counts as a
        // lapsed claim.
        if let Some(hb) = self.config.heartbeat {
            let unconfirmed_ms = now.since(claim_at);
            if unconfirmed_ms >= hb.tolerance_ms {
                pass.report.claim_lost += 1;
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
                if let Some(pass) = self.pass.as_mut() {
                    pass.performing -= 1;
                }
                self.worker_free_after_claim(now);
                return None;
            }
        }
        let index = self.slots.iter().position(|s| s.busy.is_none())?;
        let supervisor = self.config.heartbeat.map(|hb| {
            let policy = SupervisionPolicy {
                interval_ms: hb.every_ms,
                tolerance_ms: hb.tolerance_ms,
                reconfirm_ms: hb.reconfirm_ms,
                cadence: Cadence::Grid,
                reconfirm: Reconfirm::Renewal,
            };
            #[allow(unused_mut)]
            let mut supervisor = Supervisor::new(policy, now, claim_at);
            #[cfg(feature = "mutations")]
            supervisor.set_mutation(self.supervision_mutation);
            supervisor
        });
        let slot = &mut self.slots[index];
        slot.busy = Some(Busy { ordinal, started_at: now, lost: false, supervisor, drop_at: None, phase: Phase::Performing });
        let key = ItemKey { slot: index as u16, generation: slot.generation };
        self.actions.push_back(Action::Perform { key });
        self.pump_claims(now);
        Some(key)
    }

    /// The claim in flight answered nothing (`null`/`undefined`): the pass
    /// takes no more claims, for every worker.
    pub fn claim_empty(&mut self, now: Millis) {
        let Some(pass) = self.pass.as_mut().filter(|p| p.claim_in_flight) else { return };
        pass.claim_in_flight = false;
        pass.drained = true;
        pass.waiting = 0;
        self.maybe_end_pass(now);
    }

    /// The claim in flight raised: the pass ends once its items settle, the
    /// error is logged and traced (`claim-failed`), and the loop backs off.
    pub fn claim_failed(&mut self, now: Millis, error: E) {
        let Some(pass) = self.pass.as_mut().filter(|p| p.claim_in_flight) else { return };
        pass.claim_in_flight = false;
        pass.drained = true;
        pass.raised = true;
        pass.waiting = 0;
        self.log_and_trace(LogKind::ClaimFailed, error, |error| Event::ClaimFailed { at: now, error });
        self.maybe_end_pass(now);
    }

    /// The item at `key` settled: `Ok` when `perform` resolved, `Err` when it
    /// raised. Counted per the reference implementation's flag rule: resolved → `performed`;
    /// raised after the claim was lost → `claimLost` (not logged); raised
    /// otherwise → `failed`, logged, traced, and the loop backs off. Answers
    /// for an item already settled (or dropped) are ignored. In the settle
    /// phase this answers a perform that ended without an outcome to write
    /// (it observed its signal); an item already settling ignores it.
    pub fn item_settled(&mut self, now: Millis, key: ItemKey, outcome: Result<(), E>) {
        if !self.slot_mut(key).and_then(|s| s.busy.as_ref()).is_some_and(|b| matches!(b.phase, Phase::Performing)) {
            return;
        }
        let Some(busy) = self.take_busy(key) else { return };
        self.count_outcome(now, &busy, outcome);
        self.worker_free(now);
    }

    /// Counts an item's outcome per the flag rule (see
    /// [`Runner::item_settled`]).
    fn count_outcome(&mut self, now: Millis, busy: &Busy<E>, outcome: Result<(), E>) {
        let item = busy.ordinal;
        let Some(pass) = self.pass.as_mut() else { return };
        match outcome {
            Ok(()) => {
                pass.report.performed += 1;
                if self.tracing {
                    let duration_ms = now.since(busy.started_at);
                    self.actions.push_back(Action::Emit(Event::Performed { at: now, item, duration_ms }));
                }
            }
            Err(_) if busy.lost => pass.report.claim_lost += 1,
            Err(error) => {
                pass.report.failed += 1;
                pass.raised = true;
                self.log_and_trace(LogKind::WorkFailed, error, |error| Event::ItemFailed { at: now, item, error });
            }
        }
    }

    /// The renewal `call` for the item at `key` answered: `Ok(true)` landed,
    /// `Ok(false)` lost the claim, `Err` raised (the lease is as it was).
    pub fn renewal_answered(&mut self, now: Millis, key: ItemKey, call: CallId, outcome: Result<bool, E>) {
        let Some(slot) = self.slot_mut(key) else { return };
        let Some(busy) = slot.busy.as_mut() else { return };
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
        let policy = self.config.lease_policy()?;
        let slot = self.slots.get(usize::from(key.slot)).filter(|s| s.generation == key.generation)?;
        let supervisor = slot.busy.as_ref()?.supervisor.as_ref()?;
        Some(policy.exit_deadline(supervisor.last_confirmed()))
    }

    // ---- time --------------------------------------------------------------

    /// The one instant the host must call [`Runner::handle_timeout`] at: the
    /// loop's next pass, or an item's renewal, deadline or grace end.
    ///
    /// Hosts ask it after every input (the wasm host twice per item), so the
    /// common case is short: without a heartbeat and without the settle phase
    /// no item ever has a timer (a grace end follows a lost claim, which takes
    /// a renewal; a settle retry takes the settle phase), and the slots are
    /// not looked at.
    pub fn poll_timeout(&self) -> Option<Millis> {
        let loop_timer = self.timer.map(|(at, _)| at);
        if self.config.heartbeat.is_none() && !self.settle_phase {
            debug_assert!(self.slots.iter().all(|s| s.deadline().is_none()), "an item timer without a heartbeat");
            return loop_timer;
        }
        let mut earliest = loop_timer;
        for slot in &self.slots {
            if let Some(at) = slot.deadline() {
                earliest = Some(earliest.map_or(at, |e| e.min(at)));
            }
        }
        earliest
    }

    /// Runs every timer due at `now`.
    pub fn handle_timeout(&mut self, now: Millis) {
        for index in 0..self.slots.len() {
            self.slot_timeout(now, index);
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

    // ---- internals -----------------------------------------------------------

    /// A pass (or join the one in flight), then schedule
    /// the next one for this chain when it ends.
    fn run_chain(&mut self, now: Millis, chain: u64) {
        if self.disposed {
            return;
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

    fn begin_pass(&mut self, now: Millis) -> PassId {
        let id = PassId(self.next_pass);
        self.next_pass += 1;
        self.pass = Some(Pass {
            id,
            started_at: now,
            announced: false,
            attempts: 0,
            report: PassReport::IDLE,
            raised: false,
            drained: false,
            waiting: self.config.pool_size(),
            claim_in_flight: false,
            claim_at: now,
            performing: 0,
        });
        self.pump_claims(now);
        id
    }

    /// Issues the next claim when a worker waits and none is in flight; ends
    /// the workers' loop once the pass is drained or the batch bound is hit.
    fn pump_claims(&mut self, now: Millis) {
        let Some(pass) = self.pass.as_mut() else { return };
        if pass.claim_in_flight || pass.waiting == 0 {
            return self.maybe_end_pass(now);
        }
        if pass.drained || pass.attempts >= self.config.batch_limit {
            pass.waiting = 0;
            return self.maybe_end_pass(now);
        }
        pass.attempts += 1;
        pass.claim_in_flight = true;
        pass.claim_at = now;
        self.actions.push_back(Action::Claim { at: now });
    }

    /// The worker whose claim answered a lapsed item wants another claim.
    fn worker_free_after_claim(&mut self, now: Millis) {
        if let Some(pass) = self.pass.as_mut() {
            pass.waiting += 1;
        }
        self.pump_claims(now);
    }

    fn worker_free(&mut self, now: Millis) {
        if let Some(pass) = self.pass.as_mut() {
            pass.performing -= 1;
            pass.waiting += 1;
        }
        self.pump_claims(now);
    }

    fn maybe_end_pass(&mut self, now: Millis) {
        let Some(pass) = &self.pass else { return };
        if pass.claim_in_flight || pass.waiting > 0 || pass.performing > 0 {
            return;
        }
        let pass = self.pass.take().expect("checked above");
        // Lost claims are contention, not failure: only raising passes back off.
        self.failures = if pass.raised { (self.failures + 1).min(MAX_BACKOFF_DOUBLINGS + 1) } else { 0 };
        let next_delay_ms = self.next_delay_ms();
        if pass.announced && self.tracing {
            let report = pass.report;
            self.actions.push_back(Action::Emit(Event::PassEnd { at: now, report, next_delay_ms }));
        }
        self.actions.push_back(Action::PassEnded { pass: pass.id, report: pass.report });
        if let Some(chain) = self.chain_after_pass.take() {
            if !self.disposed && chain == self.generation {
                self.timer = Some((now.after(next_delay_ms), chain));
            }
        }
        if core::mem::take(&mut self.waking) && !self.disposed {
            self.begin_pass(now);
        }
    }

    fn log_and_trace(&mut self, kind: LogKind, error: E, event: impl FnOnce(E) -> Event<E>) {
        if self.tracing {
            self.actions.push_back(Action::Log { kind, error: error.clone() });
            self.actions.push_back(Action::Emit(event(error)));
        } else {
            self.actions.push_back(Action::Log { kind, error });
        }
    }

    fn slot_mut(&mut self, key: ItemKey) -> Option<&mut Slot<E>> {
        self.slots.get_mut(usize::from(key.slot)).filter(|s| s.generation == key.generation)
    }

    /// Frees the slot of a settled item; its renewals in flight are abandoned.
    fn take_busy(&mut self, key: ItemKey) -> Option<Busy<E>> {
        let slot = self.slot_mut(key)?;
        let busy = slot.busy.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        Some(busy)
    }

    fn slot_timeout(&mut self, now: Millis, index: usize) {
        let slot = &mut self.slots[index];
        let key = ItemKey { slot: index as u16, generation: slot.generation };
        let Some(busy) = slot.busy.as_mut() else { return };
        if let Phase::Settling { retry_at, .. } = &mut busy.phase {
            if retry_at.is_some_and(|at| at <= now) {
                *retry_at = None;
                self.actions.push_back(Action::Settle { key });
            }
        }
        let Some(busy) = self.slots[index].busy.as_mut() else { return };
        if matches!(busy.phase, Phase::Performing) && busy.drop_at.is_some_and(|at| at <= now) {
            // The perform outlived its grace period: it is dropped and counted
            // as a lost claim, like a perform that raised after the abort.
            self.take_busy(key);
            if let Some(pass) = self.pass.as_mut() {
                pass.report.claim_lost += 1;
            }
            self.actions.push_back(Action::Drop { key });
            return self.worker_free(now);
        }
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
    /// outcome then follows the flag rule in [`Runner::item_settled`].
    fn lose(&mut self, now: Millis, key: ItemKey, item: u32, at: Millis, lapsed: bool, unconfirmed_ms: u64) {
        let grace = self.config.abort_grace_ms;
        let Some(busy) = self.slot_mut(key).and_then(|s| s.busy.as_mut()) else { return };
        if !matches!(busy.phase, Phase::Performing) {
            // The work is over: nothing to abort or drop. Renewals stop (the
            // supervisor ended); only the settle's own answer decides.
            return;
        }
        busy.lost = true;
        busy.drop_at = grace.map(|ms| now.after(ms));
        if self.tracing {
            self.actions.push_back(Action::Emit(Event::ClaimLost { at, item, lapsed, unconfirmed_ms }));
        }
        self.actions.push_back(Action::Abort { key, lapsed });
    }
}

/// Steps polled from one supervisor input (at most three), kept on the
/// stack while the runner applies them.
#[derive(Default)]
struct StepBuffer {
    steps: [Option<Step>; 4],
    len: usize,
}

impl StepBuffer {
    fn push(&mut self, step: Step) {
        if self.len < self.steps.len() {
            self.steps[self.len] = Some(step);
            self.len += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = Step> + '_ {
        self.steps[..self.len].iter().flatten().copied()
    }
}
