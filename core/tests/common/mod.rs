//! A virtual-time host for the core runner: scripted callbacks answer after
//! chosen delays, timers fire exactly when the core asks. Everything a JS or
//! tokio host does, minus real time.
#![allow(dead_code)]

use leasehold_core::event::{Event, PassReport};
use leasehold_core::options::OptionsInput;
use leasehold_core::runner::{Action, DetachedId, Ended, ItemKey, LogKind, PassId, Runner, SettleAnswer, Ticket};
use leasehold_core::supervision::CallId;
use leasehold_core::Millis;

/// How a scripted callback answers.
#[derive(Clone, Debug)]
pub enum Reply<T> {
    /// After `ms` milliseconds of virtual time.
    After(u64, T),
    /// Never.
    Never,
}

pub type ClaimFn = Box<dyn FnMut(u64) -> Reply<Result<Option<u64>, String>>>;
pub type PerformFn = Box<dyn FnMut(u64) -> Reply<Result<(), String>>>;
pub type RenewFn = Box<dyn FnMut(u64, u64) -> Reply<Result<bool, String>>>;
/// Settle phase: `(item, now)` → how the settle answers.
pub type SettleFn = Box<dyn FnMut(u64, u64) -> Reply<SettleAnswer<String>>>;
/// Settle phase: `item` → how the release of a declined claim answers.
pub type ReleaseFn = Box<dyn FnMut(u64) -> Reply<Result<(), String>>>;

/// The error a perform raises when it observed its signal (settle phase: a
/// stop without an outcome).
pub const ABORTED: &str = "aborted";

/// The error a perform raises to say its job was lost to something the host
/// learned itself (a cancel, a refused write): reported with `item_lost`.
pub const LOST: &str = "lost";

enum Due {
    Claim(Result<Option<u64>, String>),
    Settle(ItemKey, Result<(), String>),
    Renew(ItemKey, CallId, Result<bool, String>),
    SettleAnswered(ItemKey, SettleAnswer<String>),
    Released(ItemKey, Result<(), String>),
    Ended(DetachedId, Ended<String>),
}

pub struct Host {
    pub runner: Runner<String>,
    tracing: bool,
    pub now: u64,
    pub events: Vec<Event<String>>,
    pub logs: Vec<(LogKind, String)>,
    pub ended: Vec<(PassId, PassReport)>,
    /// `at` of each claim made.
    pub claims: Vec<u64>,
    /// (item, at) of each renewal sent.
    pub renewals: Vec<(u64, u64)>,
    /// (item, lapsed, time) of each abort.
    pub aborts: Vec<(u64, bool, u64)>,
    /// (item, time) of each perform dropped after its grace period.
    pub dropped: Vec<(u64, u64)>,
    /// Items started, with start time.
    pub performed: Vec<(u64, u64)>,
    /// Settle phase: (item, time) of each settle asked for.
    pub settles: Vec<(u64, u64)>,
    /// Settle phase: (item, time) of each release asked for.
    pub releases: Vec<(u64, u64)>,
    /// How many claims were in flight at most at once.
    pub max_claims_in_flight: usize,
    /// How many performs were in flight at most at once.
    pub max_performing: usize,
    /// When an item is aborted, its perform rejects after this many ms (None: ignores the signal).
    pub abort_rejects_after: Option<u64>,
    /// Detached items: a perform's answer detaches its item, whose end (the answer: `Ok`
    /// performed, [`LOST`] lost, another error failed) is reported this many ms later.
    pub detach_for: Option<u64>,
    /// When each detached item's end was reported.
    pub detached_ends: Vec<u64>,
    claim: ClaimFn,
    perform: PerformFn,
    heartbeat: RenewFn,
    settle: Option<SettleFn>,
    release: ReleaseFn,
    items: Vec<Option<u64>>,
    due: Vec<(u64, u64, Due)>,
    seq: u64,
    claims_in_flight: usize,
    performing: usize,
}

pub fn options(interval_ms: f64, stale_after_ms: f64) -> OptionsInput {
    OptionsInput { interval_ms, stale_after_ms, ..OptionsInput::default() }
}

/// Claims answer `0..n` immediately, then nothing.
pub fn queue(n: u64) -> ClaimFn {
    let mut next = 0;
    Box::new(move |_| {
        let item = (next < n).then(|| {
            next += 1;
            next - 1
        });
        Reply::After(0, Ok(item))
    })
}

/// The first claim answers `item` `first_ms` after it is asked; the others answer nothing
/// `then_ms` after.
pub fn one_item(item: u64, first_ms: u64, then_ms: u64) -> ClaimFn {
    let mut first = true;
    Box::new(move |_| {
        if std::mem::take(&mut first) { Reply::After(first_ms, Ok(Some(item))) } else { Reply::After(then_ms, Ok(None)) }
    })
}

/// Claims answer items `1, 2, …` after `ms` each, until call `nth` raises `error`.
pub fn claim_raising_at(nth: u64, ms: u64, error: &str) -> ClaimFn {
    let (mut calls, error) = (0, error.to_owned());
    Box::new(move |_| {
        calls += 1;
        Reply::After(ms, if calls == nth { Err(error.clone()) } else { Ok(Some(calls)) })
    })
}

/// One item per pass: claims alternate between an item and nothing.
pub fn one_per_pass() -> ClaimFn {
    let mut calls = 0;
    Box::new(move |_| {
        calls += 1;
        Reply::After(0, Ok((calls % 2 == 1).then_some(calls / 2)))
    })
}

pub fn perform_ok(ms: u64) -> PerformFn {
    Box::new(move |_| Reply::After(ms, Ok(())))
}

pub fn renew_true(ms: u64) -> RenewFn {
    Box::new(move |_, _| Reply::After(ms, Ok(true)))
}

impl Host {
    pub fn new(options: OptionsInput, tracing: bool, claim: ClaimFn, perform: PerformFn) -> Host {
        Self::with_heartbeat(options, tracing, claim, perform, Box::new(|_, _| Reply::Never))
    }

    pub fn with_heartbeat(options: OptionsInput, tracing: bool, claim: ClaimFn, perform: PerformFn, heartbeat: RenewFn) -> Host {
        let config = options.validate().expect("valid options");
        let pool = config.pool_size() as usize;
        Host {
            runner: Runner::new(config, tracing),
            tracing,
            now: 1_000,
            events: Vec::new(),
            logs: Vec::new(),
            ended: Vec::new(),
            claims: Vec::new(),
            renewals: Vec::new(),
            aborts: Vec::new(),
            dropped: Vec::new(),
            performed: Vec::new(),
            settles: Vec::new(),
            releases: Vec::new(),
            max_claims_in_flight: 0,
            max_performing: 0,
            abort_rejects_after: None,
            detach_for: None,
            detached_ends: Vec::new(),
            claim,
            perform,
            heartbeat,
            settle: None,
            release: Box::new(|_| Reply::After(1, Ok(()))),
            items: vec![None; pool],
            due: Vec::new(),
            seq: 0,
            claims_in_flight: 0,
            performing: 0,
        }
    }

    /// Opts the runner into the settle phase: settles answer with `settle`,
    /// releases of declined claims with `release`.
    pub fn settling(mut self, settle: SettleFn, release: ReleaseFn) -> Host {
        self.runner = Runner::new(*self.runner.config(), self.tracing).with_settle_phase();
        self.settle = Some(settle);
        self.release = release;
        self
    }

    fn at(&self) -> Millis {
        Millis(self.now)
    }

    fn schedule(&mut self, after: u64, due: Due) {
        self.seq += 1;
        self.due.push((self.now + after, self.seq, due));
    }

    /// Executes every action the runner asked for.
    pub fn drain(&mut self) {
        while let Some(action) = self.runner.poll_action() {
            match action {
                Action::Claim { at } => {
                    self.claims.push(at.0);
                    self.claims_in_flight += 1;
                    self.max_claims_in_flight = self.max_claims_in_flight.max(self.claims_in_flight);
                    if let Reply::After(ms, r) = (self.claim)(at.0) {
                        self.schedule(ms, Due::Claim(r));
                    }
                }
                Action::Perform { key } => {
                    let item = self.items[key.slot as usize].expect("item stored");
                    self.performed.push((item, self.now));
                    self.performing += 1;
                    self.max_performing = self.max_performing.max(self.performing);
                    if let Reply::After(ms, r) = (self.perform)(item) {
                        self.schedule(ms, Due::Settle(key, r));
                    }
                }
                Action::Renew { key, call, at } => {
                    let item = self.items[key.slot as usize].expect("item stored");
                    self.renewals.push((item, at.0));
                    if let Reply::After(ms, r) = (self.heartbeat)(item, at.0) {
                        self.schedule(ms, Due::Renew(key, call, r));
                    }
                }
                Action::Abort { key, lapsed } => {
                    let item = self.items[key.slot as usize].expect("item stored");
                    self.aborts.push((item, lapsed, self.now));
                    if let Some(ms) = self.abort_rejects_after {
                        self.schedule(ms, Due::Settle(key, Err("aborted".into())));
                    }
                }
                Action::Drop { key } => {
                    let item = self.items[key.slot as usize].take().expect("item stored");
                    self.performing -= 1;
                    self.dropped.push((item, self.now));
                    self.due.retain(|(_, _, d)| !matches!(d, Due::Settle(k, _) if *k == key));
                }
                Action::Settle { key } => {
                    let item = self.items[key.slot as usize].expect("item stored");
                    self.settles.push((item, self.now));
                    let settle = self.settle.as_mut().expect("settle phase");
                    if let Reply::After(ms, r) = settle(item, self.now) {
                        self.schedule(ms, Due::SettleAnswered(key, r));
                    }
                }
                Action::Release { key } => {
                    let item = self.items[key.slot as usize].expect("item stored");
                    self.releases.push((item, self.now));
                    if let Reply::After(ms, r) = (self.release)(item) {
                        self.schedule(ms, Due::Released(key, r));
                    }
                }
                Action::Log { kind, error } => self.logs.push((kind, error)),
                Action::Emit(event) => self.events.push(event),
                Action::PassEnded { pass, report } => self.ended.push((pass, report)),
            }
        }
    }

    /// Runs virtual time forward to `until`, delivering answers and timers in
    /// time order.
    pub fn run_until(&mut self, until: u64) {
        loop {
            self.drain();
            let next_due = self.due.iter().map(|(t, s, _)| (*t, *s)).min();
            let next_timer = self.runner.poll_timeout().map(|m| m.0);
            let next = match (next_due, next_timer) {
                (Some((t, _)), Some(timer)) => t.min(timer),
                (Some((t, _)), None) => t,
                (None, Some(timer)) => timer,
                (None, None) => break,
            };
            if next > until {
                break;
            }
            self.now = self.now.max(next);
            if next_due.is_some_and(|(t, _)| t <= next) {
                let (_, seq) = next_due.unwrap();
                let index = self.due.iter().position(|(_, s, _)| *s == seq).unwrap();
                let (_, _, due) = self.due.remove(index);
                self.deliver(due);
            } else {
                self.runner.handle_timeout(self.at());
            }
        }
        self.now = self.now.max(until);
    }

    /// Freezes the host for `ms` (a SIGSTOP of its process, a starved
    /// thread): time passes with no timer run and no answer delivered; what
    /// came due meanwhile is handled at the thaw.
    pub fn freeze(&mut self, ms: u64) {
        self.now += ms;
        for (at, _, _) in &mut self.due {
            *at = (*at).max(self.now);
        }
    }

    fn deliver(&mut self, due: Due) {
        let now = self.at();
        match due {
            Due::Claim(Ok(Some(item))) => {
                self.claims_in_flight -= 1;
                // None: the core declined to perform it (claimed too late).
                if let Some(key) = self.runner.claim_found(now) {
                    self.items[key.slot as usize] = Some(item);
                }
            }
            Due::Claim(Ok(None)) => {
                self.claims_in_flight -= 1;
                self.runner.claim_empty(now);
            }
            Due::Claim(Err(e)) => {
                self.claims_in_flight -= 1;
                self.runner.claim_failed(now, e);
            }
            // Settle phase: an outcome (anything but a stop) settles next;
            // the item and its renewals stay.
            Due::Settle(key, r) if self.settle.is_some() && r.as_ref().err().is_none_or(|e| e != ABORTED) => {
                self.performing -= 1;
                self.runner.outcome_reached(now, key, r);
            }
            Due::Settle(key, r) if self.detach_for.is_some() => {
                self.performing -= 1;
                self.forget(key);
                let id = self.runner.item_detached(now, key).expect("a performing item detaches");
                let ended = match r {
                    Ok(()) => Ended::Performed,
                    Err(e) if e == LOST => Ended::Lost,
                    Err(e) => Ended::Failed(e),
                };
                self.schedule(self.detach_for.unwrap_or(0), Due::Ended(id, ended));
            }
            Due::Ended(id, ended) => {
                self.detached_ends.push(self.now);
                self.runner.detached_ended(now, id, ended);
            }
            Due::Settle(key, Err(e)) if e == LOST => {
                self.performing -= 1;
                self.forget(key);
                self.runner.item_lost(now, key);
            }
            Due::Settle(key, r) => {
                self.performing -= 1;
                self.forget(key);
                self.runner.item_settled(now, key, r);
            }
            Due::SettleAnswered(key, answer) => {
                if !matches!(answer, SettleAnswer::Unavailable(_)) {
                    self.forget(key);
                }
                self.runner.settle_answered(now, key, answer);
            }
            Due::Released(key, r) => {
                self.forget(key);
                self.runner.release_answered(now, key, r);
            }
            Due::Renew(key, call, r) => self.runner.renewal_answered(now, key, call, r),
        }
    }

    /// The item at `key` is gone: its renewals in flight are abandoned too.
    fn forget(&mut self, key: ItemKey) {
        self.items[key.slot as usize] = None;
        self.due.retain(|(_, _, d)| !matches!(d, Due::Renew(k, _, _) if *k == key));
    }

    /// Runs a tick to completion (up to 10 virtual minutes) and answers its report.
    pub fn tick(&mut self) -> PassReport {
        match self.runner.tick(self.at()) {
            Ticket::Done(report) => report,
            Ticket::Pass(id) => {
                let deadline = self.now + 600_000;
                while self.now < deadline {
                    if let Some(report) = self.report_of(id) {
                        return report;
                    }
                    let before = self.now;
                    self.run_until(self.now + 1_000);
                    if self.now == before {
                        break;
                    }
                }
                self.report_of(id).expect("pass ended")
            }
        }
    }

    /// Starts the loop now; answers that instant (the test's `t0`).
    pub fn start(&mut self) -> u64 {
        let t0 = self.now;
        self.runner.start(Millis(t0));
        t0
    }

    pub fn report_of(&self, id: PassId) -> Option<PassReport> {
        self.ended.iter().find(|(p, _)| *p == id).map(|(_, r)| *r)
    }

    pub fn types(&self) -> Vec<&'static str> {
        self.events.iter().map(Event::type_name).collect()
    }

    pub fn next_delays(&self) -> Vec<u64> {
        self.events
            .iter()
            .filter_map(|e| match e {
                Event::PassEnd { next_delay_ms, .. } => Some(*next_delay_ms),
                _ => None,
            })
            .collect()
    }
}

pub fn report(claimed: u32, performed: u32, failed: u32, claim_lost: u32) -> PassReport {
    PassReport { claimed, performed, failed, claim_lost }
}
