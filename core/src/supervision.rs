//! Heartbeat supervision, as a state machine.
//!
//! One [`Supervisor`] watches one lease. Pulses renew it every interval; a
//! renewal answered "not updated" is a lost fence and ends supervision at
//! once ([`Step::Lost`]); a renewal that raises is tolerated. An independent
//! deadline, `W` (the write tolerance) after the **send time** of the last
//! renewal that confirmed, races the pulses: at the deadline one
//! reconfirmation is made, bounded by `R` (the reconfirm bound). Confirmed:
//! supervision goes on ([`Step::Reconfirmed`]). Lost: [`Step::Lost`]. Raised,
//! timed out, or confirmed too late to leave any budget: [`Step::Lapsed`].
//!
//! The send time, not the reply's arrival, re-arms the deadline: a peer judges
//! staleness from the stamp the store recorded, which is the send time.
//!
//! Two knobs make this one machine serve both users:
//! - [`Cadence`]: the job runner pulses on a fixed grid from the claim and
//!   skips a slot while a renewal is in flight; `heartbeatLoop` sleeps one interval after each
//!   pulse completes.
//! - [`Reconfirm`]: the runner, whose JS API only has `heartbeat`, reconfirms
//!   with another renewal (or by waiting for the one in flight);
//!   `heartbeatLoop` makes a separate `reconfirm` store call, which may run
//!   while a renewal write hangs.
//!
//! Inputs: [`Supervisor::handle_timeout`], [`Supervisor::handle_answer`],
//! [`Supervisor::handle_receipt_failed`]. Outputs: [`Step`]s, taken with
//! [`Supervisor::poll_output`] after each input (at most
//! [`MAX_STEPS_PER_INPUT`] per input), and [`Supervisor::poll_timeout`], the
//! one instant the host must wake it at.

use crate::Millis;

/// When pulses are due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cadence {
    /// Every interval on a fixed grid from the origin; a slot that finds a
    /// renewal in flight is skipped.
    Grid,
    /// One interval after the previous pulse completed.
    AfterPulse,
}

/// How a reconfirmation is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reconfirm {
    /// By a renewal: the one in flight, or a new one when none is; bounded by
    /// `deadline + R` however late the deadline was handled.
    Renewal,
    /// By a separate reconfirm call, even while a renewal is in flight;
    /// bounded by `R` from when it is made.
    Separate,
}

/// Supervision parameters, all in ms except the two knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SupervisionPolicy {
    /// `I`: pulse interval, ≥ 1.
    pub interval_ms: u64,
    /// `W`: the write tolerance, measured from the send time of the last
    /// confirmed renewal.
    pub tolerance_ms: u64,
    /// `R`: how long one reconfirmation may take.
    pub reconfirm_ms: u64,
    /// When pulses are due.
    pub cadence: Cadence,
    /// How reconfirmation is made.
    pub reconfirm: Reconfirm,
}

/// Identifies one renewal or reconfirm call, to match its answer.
pub type CallId = u32;

/// How a renewal or reconfirm call answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The write landed under our fence.
    Updated,
    /// Any other outcome: the fence is lost.
    Lost,
    /// The call raised: the lease is as it was.
    Failed,
}

/// What the supervisor asks of its host, or reports.
#[allow(missing_docs)] // each variant's doc names its fields and units
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Send a renewal stamped `at`; answer with [`Supervisor::handle_answer`].
    Renew { call: CallId, at: Millis },
    /// Send a separate reconfirm stamped `at` ([`Reconfirm::Separate`] only).
    Reconfirm { call: CallId, at: Millis },
    /// A call sent at `at` confirmed.
    Confirmed { call: CallId, at: Millis },
    /// A call sent at `at` raised; `first_in_outage` is true for the first
    /// failure since the last confirmation (warn once per outage).
    Failed { call: CallId, at: Millis, first_in_outage: bool },
    /// A reconfirmation after a gap of `unconfirmed_ms` succeeded; the lease
    /// has `budget_ms` left.
    Reconfirmed { unconfirmed_ms: u64, budget_ms: u64 },
    /// The fence was lost by the call sent at `at`: interrupt the owned work
    /// now; no lapse hook runs. Supervision has ended.
    Lost { at: Millis },
    /// The lease lapsed after `unconfirmed_ms` without confirmation.
    /// Supervision has ended.
    Lapsed { unconfirmed_ms: u64 },
}

#[derive(Clone, Copy, Debug)]
struct Call {
    id: CallId,
    sent_at: Millis,
}

#[derive(Clone, Copy, Debug)]
struct Reconfirming {
    /// The call that decides it (for `Renewal`, the renewal in flight).
    call: CallId,
    /// When the reconfirmation must have confirmed.
    bound: Millis,
    /// The gap it was opened for: from the last confirmed send time to the
    /// moment the deadline was handled.
    unconfirmed_ms: u64,
}

/// Deliberately broken supervision variants, for the simulator's mutation
/// check only (cargo feature `mutations`, off by default and test-only). The
/// simulator must catch each of them; nothing else may set one.
#[cfg(feature = "mutations")]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mutation {
    /// The correct machine.
    #[default]
    None,
    /// BROKEN: the write tolerance is measured from when a confirming reply
    /// arrived instead of from when the renewal was sent.
    ToleranceFromReply,
    /// BROKEN: no write-tolerance deadline and no reconfirm bound; only a
    /// lost fence ends supervision.
    NoLapseDeadline,
}

/// One lease under supervision. See the module docs.
#[derive(Clone, Debug)]
pub struct Supervisor {
    policy: SupervisionPolicy,
    next_pulse: Millis,
    last_confirmed: Millis,
    pulse: Option<Call>,
    reconfirm_call: Option<Call>,
    reconfirming: Option<Reconfirming>,
    failing: bool,
    next_call: CallId,
    ended: bool,
    out: Outbox,
    #[cfg(feature = "mutations")]
    mutation: Mutation,
}

/// The most steps one input makes: an answer's [`Step::Failed`] or
/// [`Step::Confirmed`], then the [`Step::Lapsed`] or [`Step::Reconfirmed`]
/// it decided. A timeout makes one (a renewal, a reconfirm or a lapse), a
/// failed receipt one.
pub const MAX_STEPS_PER_INPUT: usize = 2;

/// The steps not yet polled, held in the supervisor itself (no allocation).
/// Hosts poll them all after each input; room for two inputs' steps keeps a
/// host that polls once after two inputs whole. Every runner item carries
/// one, so its size is per-item memory: room for more inputs, or `usize`
/// indices, would cost each item in flight 24 or 14 bytes more per place.
#[derive(Clone, Copy, Debug, Default)]
struct Outbox {
    steps: [Option<Step>; 2 * MAX_STEPS_PER_INPUT],
    head: u8,
    len: u8,
}

impl Outbox {
    const ROOM: u8 = 2 * MAX_STEPS_PER_INPUT as u8;

    fn push(&mut self, step: Step) {
        // Full only for a host that stopped polling for several inputs; the
        // oldest step then goes, so the latest (the one that ends
        // supervision) is never the one lost.
        if self.len == Self::ROOM {
            self.head = (self.head + 1) % Self::ROOM;
            self.len -= 1;
        }
        self.steps[usize::from((self.head + self.len) % Self::ROOM)] = Some(step);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<Step> {
        if self.len == 0 {
            return None;
        }
        let step = self.steps[usize::from(self.head)].take();
        self.head = (self.head + 1) % Self::ROOM;
        self.len -= 1;
        step
    }
}

impl Supervisor {
    /// Starts supervising at `now`; `confirmed_at` is the stamp of the lease as
    /// it stands (for the runner: the `at` its claim was made with). The first
    /// pulse is due one interval after `now`.
    pub fn new(policy: SupervisionPolicy, now: Millis, confirmed_at: Millis) -> Self {
        Supervisor {
            policy,
            next_pulse: now.after(policy.interval_ms.max(1)),
            last_confirmed: confirmed_at,
            pulse: None,
            reconfirm_call: None,
            reconfirming: None,
            failing: false,
            next_call: 0,
            ended: false,
            out: Outbox::default(),
            #[cfg(feature = "mutations")]
            mutation: Mutation::None,
        }
    }

    /// MUTATION CHECK ONLY (feature `mutations`): run a deliberately broken
    /// variant of this machine.
    #[cfg(feature = "mutations")]
    pub(crate) fn set_mutation(&mut self, mutation: Mutation) {
        self.mutation = mutation;
    }

    /// Whether the deadline and the reconfirm bound are in force (always,
    /// unless the `NoLapseDeadline` mutation is set).
    fn lapses(&self) -> bool {
        #[cfg(feature = "mutations")]
        if self.mutation == Mutation::NoLapseDeadline {
            return false;
        }
        true
    }

    /// The instant a confirmation re-arms the deadline from: the send time
    /// (unless the `ToleranceFromReply` mutation is set).
    fn confirmed_from(&self, sent_at: Millis, _now: Millis) -> Millis {
        #[cfg(feature = "mutations")]
        if self.mutation == Mutation::ToleranceFromReply {
            return _now;
        }
        sent_at
    }

    /// The next step the inputs so far produced, oldest first; `None` once
    /// all were taken. Poll until `None` after each input.
    pub fn poll_output(&mut self) -> Option<Step> {
        self.out.pop()
    }

    /// Whether supervision ended (lost or lapsed).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The send time of the last renewal that confirmed.
    pub(crate) fn last_confirmed(&self) -> Millis {
        self.last_confirmed
    }

    fn deadline(&self) -> Millis {
        self.last_confirmed.after(self.policy.tolerance_ms)
    }

    /// The one instant the host must call [`Supervisor::handle_timeout`] at,
    /// or `None` once supervision ended.
    pub fn poll_timeout(&self) -> Option<Millis> {
        if self.ended {
            return None;
        }
        if !self.lapses() {
            return Some(self.next_pulse);
        }
        let decision = match self.reconfirming {
            Some(r) => r.bound,
            None => self.deadline(),
        };
        let pulse_waits = self.reconfirming.is_some()
            || (self.policy.cadence == Cadence::AfterPulse && self.pulse.is_some());
        Some(if pulse_waits { decision } else { decision.min(self.next_pulse) })
    }

    fn call_id(&mut self) -> CallId {
        let id = self.next_call;
        self.next_call = self.next_call.wrapping_add(1);
        id
    }

    /// Timers due at `now`: the deadline first (it decides), then a pulse.
    pub fn handle_timeout(&mut self, now: Millis) {
        if self.ended {
            return;
        }
        match self.reconfirming {
            _ if !self.lapses() => {}
            Some(r) if now >= r.bound => return self.lapse(now),
            None if now >= self.deadline() => self.begin_reconfirm(now),
            _ => {}
        }
        if self.ended {
            return;
        }
        if now < self.next_pulse {
            return;
        }
        match self.policy.cadence {
            Cadence::Grid => {
                // Next grid point strictly after `now`; slots missed during a
                // stall collapse into this one.
                let interval = self.policy.interval_ms.max(1);
                let behind = now.since(self.next_pulse) / interval + 1;
                self.next_pulse = self.next_pulse.after(behind.saturating_mul(interval));
            }
            Cadence::AfterPulse => {
                // A pulse in flight, or a reconfirmation deciding, holds the
                // due pulse back without consuming it: it goes out once they
                // answer. (Consuming it would stop the pulses for good, the
                // lease kept only by a reconfirmation every write tolerance.)
                if self.pulse.is_some() || self.reconfirming.is_some() {
                    return;
                }
                self.next_pulse = Millis::MAX;
            }
        }
        // A renewal slower than the cadence must not queue behind itself, and
        // a reconfirmation in progress owns the lease until it decides.
        if self.pulse.is_some() || self.reconfirming.is_some() {
            return;
        }
        let id = self.call_id();
        self.pulse = Some(Call { id, sent_at: now });
        self.out.push(Step::Renew { call: id, at: now });
    }

    fn begin_reconfirm(&mut self, now: Millis) {
        let bound = match self.policy.reconfirm {
            // The runner's bound is fixed by the lease, not by when the
            // deadline was handled: a late timer or a clock that stepped
            // forward must not push the decision past `S − K`.
            Reconfirm::Renewal => self.deadline().after(self.policy.reconfirm_ms),
            // Seed 003 `heartbeatLoop`: the reconfirmation gets one interval
            // from when it is made (after a stall it may still renew).
            Reconfirm::Separate => now.after(self.policy.reconfirm_ms),
        };
        if bound <= now {
            return self.lapse(now);
        }
        let call = match (self.policy.reconfirm, self.pulse) {
            (Reconfirm::Renewal, Some(pulse)) => pulse.id,
            (Reconfirm::Renewal, None) => {
                let id = self.call_id();
                self.pulse = Some(Call { id, sent_at: now });
                self.out.push(Step::Renew { call: id, at: now });
                id
            }
            (Reconfirm::Separate, _) => {
                let id = self.call_id();
                self.reconfirm_call = Some(Call { id, sent_at: now });
                self.out.push(Step::Reconfirm { call: id, at: now });
                id
            }
        };
        let unconfirmed_ms = now.since(self.last_confirmed);
        self.reconfirming = Some(Reconfirming { call, bound, unconfirmed_ms });
    }

    fn lapse(&mut self, now: Millis) {
        self.ended = true;
        self.out.push(Step::Lapsed { unconfirmed_ms: now.since(self.last_confirmed) });
    }

    /// Records the answer of call `call` at `now`. Answers to unknown calls
    /// (abandoned, or after supervision ended) are ignored.
    pub fn handle_answer(&mut self, now: Millis, call: CallId, answer: Answer) {
        if self.ended {
            return;
        }
        let sent = match (self.pulse, self.reconfirm_call) {
            (Some(p), _) if p.id == call => {
                self.pulse = None;
                if self.policy.cadence == Cadence::AfterPulse {
                    self.next_pulse = now.after(self.policy.interval_ms.max(1));
                }
                p
            }
            (_, Some(r)) if r.id == call => {
                self.reconfirm_call = None;
                r
            }
            _ => return,
        };
        let deciding = self.reconfirming.is_some_and(|r| r.call == call);
        match answer {
            Answer::Lost => {
                // Durable evidence that someone else holds the lease.
                self.ended = true;
                self.out.push(Step::Lost { at: sent.sent_at });
            }
            Answer::Failed => {
                self.out.push(Step::Failed { call, at: sent.sent_at, first_in_outage: !self.failing });
                self.failing = true;
                if deciding {
                    self.lapse(now);
                }
            }
            Answer::Updated => {
                self.last_confirmed = self.last_confirmed.max(self.confirmed_from(sent.sent_at, now));
                self.failing = false;
                self.out.push(Step::Confirmed { call, at: sent.sent_at });
                if let Some(reconfirming) = self.reconfirming {
                    // The renewed budget runs from the send time; a reply that
                    // arrives after it was spent grants nothing.
                    let deadline = self.deadline();
                    if now >= deadline {
                        if deciding {
                            self.lapse(now);
                        }
                        return;
                    }
                    // A separate reconfirm still in flight keeps its call id: if
                    // it answers lost, that is still a lost fence.
                    self.reconfirming = None;
                    self.out.push(Step::Reconfirmed {
                        unconfirmed_ms: reconfirming.unconfirmed_ms,
                        budget_ms: deadline.since(now),
                    });
                }
            }
        }
    }

    /// The host's receipt hook for [`Step::Reconfirmed`] failed or overran its
    /// budget: the lease lapses.
    pub fn handle_receipt_failed(&mut self, now: Millis) {
        if !self.ended {
            self.lapse(now);
        }
    }
}
