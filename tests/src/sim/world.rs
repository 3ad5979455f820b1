//! The simulated world: workers (each a core [`Runner`] with per-item
//! supervision), their clocks and processes, the network to the store, the
//! store, the faults, and the invariant checks, driven by one event queue in
//! simulated real time.
//!
//! # The host each worker runs (what a real host does, minus real time)
//!
//! - It reads its clock (real time plus its offset) at every input, executes
//!   the runner's actions in order, and arms one timer for the runner's
//!   `poll_timeout`, converting the remaining local ms into real ms when it
//!   arms it (a clock that steps afterwards makes the timer early or late,
//!   as a real monotonic sleep would).
//! - `perform` starts an execution (see [`super::exit`]) that works for a
//!   drawn duration, whatever its worker does. Once the host hears that
//!   the work finished, it reports the outcome to the runner's settle phase,
//!   which asks for the fenced settle until the store answers: landed, or
//!   refused by the fence (only then is nothing settled). An abort stops the
//!   work (it ends within the exit grace); a lapse heard after the work had
//!   finished (its worker was paused) keeps the outcome. When the lease
//!   lapsed (rather than was lost) the host gives the item back with a
//!   fenced release once the work has ended, retried until the store
//!   answers. A perform that raises on its own (work failure) also releases
//!   the item.
//! - `heartbeat` is a fenced renewal stamped with the runner's `at`.
//! - A claim the runner declines (heard past its write tolerance) is handed
//!   back at once with a fenced release, as the runner asks.
//! - A claim never takes an item whose outcome the claimant still settles
//!   (the real stores' claims exclude them), so a worker never takes its own
//!   stale lease over and fences its own settle out.
//! - It notes when it ran the runner's timer later than due because it was
//!   stalled (`renewing-owner-not-interrupted` does not hold such an owner
//!   to its renewals).
//! - Paused, the host runs nothing: timers, replies and the news of finished
//!   work wait (the work itself runs on, and its guard too). On resume
//!   the host feeds the runner's overdue timers first, then what waited.
//!   Throttled, timers fire only on multiples of the throttle period;
//!   replies still arrive.

mod exits;

use super::check::{self, Invariant, Spans, Stall, Violation};
use super::config::{Mutation, SimConfig};
use super::exit::{ExecId, Executions};
use super::probe::ProcessTable;
use super::rng::Rng;
use super::store::{Claimed, ItemState, Owner, Store, Written};
use super::trace::{Trace, TraceLine, What};
use leasehold_core::lease::EvidenceKind;
use leasehold_core::options::Config;
use leasehold_core::runner::{Action, ItemKey, Runner, SettleAnswer};
use leasehold_core::supervision::CallId;
use leasehold_core::Millis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Simulated real time starts here, so no stamp saturates at the epoch.
pub const EPOCH: u64 = 1_000_000;

const NO_WORKER: u8 = 255;
const NO_ITEM: u32 = u32::MAX;

/// A request on its way to the store.
#[derive(Clone, Copy, Debug)]
enum Req {
    Claim { at: Millis },
    Renew { key: ItemKey, call: CallId, item: u32, token: u64, at: Millis },
    Settle { key: ItemKey, item: u32, token: u64 },
    /// `key`: the runner's declined claim being handed back (settle phase).
    Release { item: u32, token: u64, key: Option<ItemKey> },
}

/// What happens to the reply of a request the store applied.
#[derive(Clone, Copy, Debug)]
enum Fate {
    /// Answered after this many ms.
    Answer(u64),
    /// An error after this many ms (the write may have landed).
    Error(u64),
    /// No reply ever.
    Never,
}

/// A reply on its way back to a worker. `Err(())` is a failed call.
#[derive(Clone, Copy, Debug)]
enum Rep {
    Claim { at: Millis, answer: Result<Claimed, ()> },
    Renew { key: ItemKey, call: CallId, item: u32, token: u64, at: Millis, sent: u64, answer: Result<bool, ()> },
    Settle { key: ItemKey, item: u32, token: u64, answer: Result<bool, ()> },
    Release { item: u32, token: u64, key: Option<ItemKey>, answer: Result<bool, ()> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Crash,
    Restart,
    PauseStart,
    PauseEnd,
    ThrottleStart,
    ThrottleEnd,
    PartitionStart,
    PartitionEnd,
    ClockStep,
    Drift,
    Reap { pid: u32 },
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Timer { w: u8, inc: u32 },
    Arrive { w: u8, inc: u32, req: Req, fate: Fate, sent: u64 },
    Reply { w: u8, inc: u32, rep: Rep },
    /// The work of `exec` comes to its end (its process exits, stalled
    /// worker or not); the host hears of it when it runs.
    WorkDone { w: u8, inc: u32, key: ItemKey, exec: ExecId },
    /// The guard of `exec` checks whether its exit deadline passed unmoved.
    GuardCheck { exec: ExecId, deadline: u64 },
    ReleaseRetry { w: u8, inc: u32, item: u32, token: u64 },
    Fault { w: u8, fault: Fault },
    Enqueue { item: u32 },
    Calm,
    ProbeStart,
    ProbeCrash { w: u8, inc: u32, item: u32 },
    ProbeDeadline { item: u32 },
}

impl Ev {
    /// The worker whose host handles this event (a paused host defers it).
    fn host_worker(&self) -> Option<(u8, u32)> {
        match *self {
            Ev::Timer { w, inc }
            | Ev::Reply { w, inc, .. }
            | Ev::WorkDone { w, inc, .. }
            | Ev::ReleaseRetry { w, inc, .. } => Some((w, inc)),
            _ => None,
        }
    }
}

struct Queued {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time, self.seq).cmp(&(other.time, other.seq))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Working,
    Settling,
}

/// One item a worker believes it owns.
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The incarnation that holds it.
    inc: u32,
    key: ItemKey,
    item: u32,
    token: u64,
    /// `T`: the last stamp the store confirmed and the worker heard of.
    stamp: u64,
    /// Every renewal so far was confirmed and heard of within `G`.
    prompt: bool,
    /// The renewal in flight: its call and real send time.
    inflight: Option<(CallId, u64)>,
    /// A renewal answered `false` reached the worker.
    lost_seen: bool,
    /// How the store took this token's lease over, if it did.
    taken: Option<EvidenceKind>,
    phase: Phase,
    work_ms: u64,
    work_fails: bool,
    /// Its execution, once performed.
    exec: Option<ExecId>,
}

struct Incarnation {
    number: u32,
    owner: Owner,
    runner: Runner<()>,
    held: Vec<Option<Held>>,
    /// Claims the runner declined (heard too late), handed back by key:
    /// item and token.
    declined: Vec<(ItemKey, u32, u64)>,
    /// Real time of the armed timer.
    timer: Option<u64>,
    /// Real time the armed timer was due before a throttle rounded it up
    /// (while throttled, the first due time it missed).
    due: u64,
}

struct Worker {
    host: u8,
    uid: u8,
    offset: u64,
    inc: Option<Incarnation>,
    incarnations: u32,
    paused: bool,
    throttle: Option<u64>,
    /// `Some(true)`: calls hang; `Some(false)`: calls fail.
    partition: Option<bool>,
    stall_end: u64,
    /// When its host last ran the runner's timer later than it was due
    /// because the worker was stalled (real ms; 0: never).
    late_timer: u64,
    deferred: Vec<Ev>,
    /// The items its last crashed incarnation was settling (number, items):
    /// a claim it sent before it died still excludes them when it lands.
    crashed_settling: (u32, Vec<u32>),
    calls: Rng,
    work: Rng,
    faults: Rng,
}

impl Worker {
    fn stall(&self) -> Stall {
        Stall { now: self.paused || self.throttle.is_some(), last_end: self.stall_end }
    }
}

/// Counts of what happened in one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Items settled.
    pub settled: u32,
    /// Items dead-lettered.
    pub dead_lettered: u32,
    /// Takeovers of running items (stale leases).
    pub steals: u32,
    /// Items aborted because supervision lapsed.
    pub lapses: u32,
    /// Items aborted because a renewal answered `false`.
    pub losses: u32,
    /// Worker crashes.
    pub crashes: u32,
    /// Pauses and throttled stretches.
    pub stalls: u32,
    /// Overlaps the lease policy allows (a stalled owner and a lease-expired
    /// takeover), seen and checked.
    pub excused_overlaps: u32,
    /// Claims heard past their write tolerance, declined by the runner.
    pub claims_declined: u32,
    /// Events processed.
    pub events: u64,
}

/// What one run answered.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The seed.
    pub seed: u64,
    /// The first invariant broken, if any.
    pub violation: Option<Violation>,
    /// The hash of the whole trace.
    pub hash: u64,
    /// Simulated real time at the end (ms since [`EPOCH`]).
    pub duration_ms: u64,
    /// Counts.
    pub stats: Stats,
    /// Every step, when recorded.
    pub trace: Vec<TraceLine>,
}

/// The world. Build with [`World::new`], run with [`World::run`].
pub struct World {
    cfg: SimConfig,
    config: Config,
    spans: Spans,
    prompt: Option<u64>,
    now: u64,
    seq: u64,
    queue: BinaryHeap<Reverse<Queued>>,
    workers: Vec<Worker>,
    /// Every incarnation's identity, per worker.
    owners: Vec<Vec<Owner>>,
    store: Store,
    table: ProcessTable,
    trace: Trace,
    violation: Option<Violation>,
    stats: Stats,
    calm: bool,
    chaos_end: u64,
    done_by: u64,
    enqueued: u32,
    probe: Option<u32>,
    probe_owner: Option<(u8, u32)>,
    probe_crash_at: u64,
    /// Every takeover: item, the token taken over, the evidence.
    takeovers: Vec<(u32, u64, EvidenceKind)>,
    /// Beliefs that ended during the current ms (they still shared it).
    ended_now: Vec<(u64, u8, Held)>,
    finished: bool,
    rng: Rng,
    /// Every execution (see [`super::exit`]).
    execs: Executions,
    /// Exit latencies of stopped executions.
    exit_rng: Rng,
}

fn key_eq(a: ItemKey, b: ItemKey) -> bool {
    a.slot == b.slot && a.generation == b.generation
}

fn answer_code(answer: Result<bool, ()>) -> u64 {
    match answer {
        Ok(true) => 1,
        Ok(false) => 0,
        Err(()) => 2,
    }
}

fn evidence_code(evidence: Option<EvidenceKind>) -> u64 {
    match evidence {
        None => 0,
        Some(EvidenceKind::LeaseExpired) => 1,
        Some(_) => 2,
    }
}

impl World {
    /// A world for `seed` under `cfg`; `record` keeps the whole trace.
    ///
    /// # Panics
    /// When `cfg.params` is refused by the core's option validator (the
    /// caller checks [`super::config::Params::config`] first).
    pub fn new(seed: u64, cfg: &SimConfig, record: bool) -> World {
        let mut config = cfg.params.config().expect("params accepted by the option validator");
        if cfg.mutation == Mutation::GraceOutsideBudget {
            // The lapse as if stopped work ended at once: `W = S − I − K`.
            let p = cfg.params;
            if let Some(hb) = config.heartbeat.as_mut() {
                hb.tolerance_ms = p.stale_after_ms - p.heartbeat_every_ms - p.skew_ms;
            }
        }
        let hb = config.heartbeat.expect("heartbeat configured");
        // The checks use the clocks' real band: a peer's clock is at most
        // `band` ahead, and one's own clock steps by at most `band`.
        let band = cfg.faults.clock_band_ms.min(hb.skew_ms);
        let spans =
            Spans { stale_after: cfg.params.stale_after_ms, skew: band, tolerance: hb.tolerance_ms, reconfirm: hb.reconfirm_ms };
        let mut setup = Rng::stream(seed, 1, 0);
        let workers = (0..cfg.workers)
            .map(|w| Worker {
                host: w % cfg.hosts.max(1),
                uid: setup.below(2) as u8,
                offset: if cfg.faults.clock_extremes { setup.below(2) * spans.skew } else { setup.range(0, spans.skew) },
                inc: None,
                incarnations: 0,
                paused: false,
                throttle: None,
                partition: None,
                stall_end: 0,
                late_timer: 0,
                deferred: Vec::new(),
                crashed_settling: (u32::MAX, Vec::new()),
                calls: Rng::stream(seed, 2, u64::from(w)),
                work: Rng::stream(seed, 3, u64::from(w)),
                faults: Rng::stream(seed, 4, u64::from(w)),
            })
            .collect();
        let store = Store::new(
            cfg.workload.items,
            cfg.params.stale_after_ms,
            cfg.params.max_attempts,
            cfg.mutation == Mutation::UnfencedStore,
            cfg.mutation == Mutation::EpermAsDead,
        );
        let mut store = store;
        store.start_time_ignored = cfg.mutation == Mutation::StartTimeIgnored;
        store.reclaim_own_stale = cfg.reclaim_own_stale;
        let chaos_end = EPOCH + cfg.workload.chaos_ms;
        let capacity = u64::from(cfg.workers.max(1)) * u64::from(cfg.params.concurrency.max(1));
        let work = u64::from(cfg.workload.items) * cfg.workload.work_long_max_ms / capacity;
        World {
            cfg: *cfg,
            config,
            spans,
            prompt: check::prompt_bound(spans),
            now: EPOCH,
            seq: 0,
            queue: BinaryHeap::with_capacity(64),
            workers,
            owners: vec![Vec::new(); usize::from(cfg.workers)],
            store,
            table: ProcessTable::new(),
            trace: Trace::new(record),
            violation: None,
            stats: Stats::default(),
            calm: false,
            chaos_end,
            done_by: chaos_end + 60 * cfg.params.stale_after_ms + 2 * work + 100 * cfg.params.claim_interval_ms,
            enqueued: 0,
            probe: None,
            probe_owner: None,
            probe_crash_at: 0,
            takeovers: Vec::new(),
            ended_now: Vec::new(),
            finished: false,
            rng: Rng::stream(seed, 5, 0),
            execs: Executions::default(),
            exit_rng: Rng::stream(seed, 6, 0),
        }
    }

    fn at(&mut self, time: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse(Queued { time, seq: self.seq, ev }));
    }

    fn log(&mut self, what: What, worker: u8, item: u32, a: u64, b: u64) {
        self.trace.push(TraceLine { time: self.now - EPOCH, what, worker, item, a, b });
    }

    fn violate(&mut self, invariant: Invariant, item: Option<u32>, workers: Vec<u8>, detail: String) {
        if self.violation.is_none() {
            self.violation = Some(Violation { invariant, time: self.now - EPOCH, item, workers, detail });
        }
    }

    fn local(&self, w: u8) -> Millis {
        Millis(self.now + self.workers[usize::from(w)].offset)
    }

    fn alive(&self, w: u8, inc: u32) -> bool {
        self.workers[usize::from(w)].inc.as_ref().is_some_and(|i| i.number == inc)
    }

    /// Runs to the end and answers what happened.
    pub fn run(mut self, seed: u64) -> Outcome {
        self.setup();
        while let Some(Reverse(Queued { time, ev, .. })) = self.queue.pop() {
            if self.finished || self.violation.is_some() {
                break;
            }
            if time > self.done_by {
                self.give_up();
                break;
            }
            self.now = time;
            self.check_budgets();
            self.stats.events += 1;
            self.handle(ev);
        }
        if self.violation.is_none() && !self.finished {
            self.give_up();
        }
        Outcome {
            seed,
            violation: self.violation,
            hash: self.trace.hash(),
            duration_ms: self.now - EPOCH,
            stats: self.stats,
            trace: self.trace.into_lines(),
        }
    }

    fn give_up(&mut self) {
        let stuck = self.store.items().iter().position(|r| !matches!(r.state, ItemState::Settled | ItemState::DeadLettered));
        let detail = match stuck {
            Some(item) => {
                let r = *self.store.item(item as u32);
                format!(
                    "not settled within the calm budget (faults stopped at t={}): state {:?}, token {}, stamp {}, attempts {}, owner {:?}",
                    self.chaos_end - EPOCH,
                    r.state,
                    r.token,
                    r.stamp.0,
                    r.attempts,
                    r.owner.map(|o| (o.worker, o.incarnation))
                )
            }
            None => "the reclaim probe did not finish within the calm budget".into(),
        };
        self.violate(Invariant::AllSettled, stuck.map(|i| i as u32), Vec::new(), detail);
    }

    fn setup(&mut self) {
        let items = self.cfg.workload.items;
        let chaos = self.cfg.workload.chaos_ms;
        for item in 0..items {
            let when = if item < items.div_ceil(2) { EPOCH } else { EPOCH + self.rng.below(chaos.max(1)) };
            self.at(when, Ev::Enqueue { item });
        }
        self.at(self.chaos_end, Ev::Calm);
        for w in 0..self.cfg.workers {
            self.restart(w);
            self.schedule_faults(w);
        }
    }

    fn schedule_faults(&mut self, w: u8) {
        let f = self.cfg.faults;
        let kinds = [
            (f.crash_gap_ms, Fault::Crash),
            (f.pause_gap_ms, Fault::PauseStart),
            (f.throttle_gap_ms, Fault::ThrottleStart),
            (f.partition_gap_ms, Fault::PartitionStart),
            (f.clock_step_gap_ms, Fault::ClockStep),
            (f.drift_gap_ms, Fault::Drift),
        ];
        for (gap, fault) in kinds {
            self.next_fault(w, gap, fault, self.now);
        }
    }

    fn next_fault(&mut self, w: u8, gap: u64, fault: Fault, after: u64) {
        if let Some(gap) = self.workers[usize::from(w)].faults.gap(gap) {
            if after + gap < self.chaos_end {
                self.at(after + gap, Ev::Fault { w, fault });
            }
        }
    }

    // ---- events ------------------------------------------------------------

    fn handle(&mut self, ev: Ev) {
        // The work runs apart from its worker: it ends now, whatever the
        // worker does (a paused one hears of it once resumed).
        if let Ev::WorkDone { exec, .. } = ev {
            self.execs.work_done(exec, self.now);
        }
        if let Some((w, inc)) = ev.host_worker() {
            if !self.alive(w, inc) {
                return;
            }
            let worker = &mut self.workers[usize::from(w)];
            if worker.paused {
                if !matches!(ev, Ev::Timer { .. }) {
                    worker.deferred.push(ev);
                }
                return;
            }
        }
        match ev {
            Ev::Timer { w, .. } => {
                let now = self.now;
                let local = self.local(w);
                let inc = self.workers[usize::from(w)].inc.as_mut().expect("alive");
                if inc.timer != Some(now) {
                    return;
                }
                inc.timer = None;
                if inc.due < now {
                    // A throttle rounded the timer up past when it was due.
                    self.workers[usize::from(w)].late_timer = now;
                }
                let inc = self.workers[usize::from(w)].inc.as_mut().expect("alive");
                inc.runner.handle_timeout(local);
                self.drive(w);
            }
            Ev::Arrive { w, inc, req, fate, sent } => self.arrive(w, inc, req, fate, sent),
            Ev::Reply { w, rep, .. } => {
                self.reply(w, rep);
                self.drive(w);
            }
            Ev::WorkDone { w, key, .. } => {
                self.work_done(w, key);
                self.drive(w);
            }
            Ev::GuardCheck { exec, deadline } => self.guard_check(exec, deadline),
            Ev::ReleaseRetry { w, item, token, .. } => {
                self.send(w, Req::Release { item, token, key: None });
                self.arm(w);
            }
            Ev::Fault { w, fault } => self.fault(w, fault),
            Ev::Enqueue { item } => {
                self.store.enqueue(item);
                self.enqueued += 1;
                self.log(What::Enqueue, NO_WORKER, item, 0, 0);
                self.wake_someone();
            }
            Ev::Calm => self.calm(),
            Ev::ProbeStart => self.probe_start(),
            Ev::ProbeCrash { w, inc, item } => self.probe_crash(w, inc, item),
            Ev::ProbeDeadline { item } => {
                let reclaimed = self.store.item(item).owner.is_some_and(|o| Some((o.worker, o.incarnation)) != self.probe_owner);
                let settled = self.store.item(item).state == ItemState::Settled;
                if !reclaimed && !settled {
                    let bound = self.cfg.params.stale_after_ms + self.cfg.params.heartbeat_every_ms + self.cfg.params.claim_interval_ms;
                    let detail = format!(
                        "the owner crashed at t={} holding the item (stamp {}); nobody re-claimed it within S + I + claim interval = {bound}ms",
                        self.probe_crash_at - EPOCH,
                        self.store.item(item).stamp.0
                    );
                    let workers = self.probe_owner.map(|(w, _)| vec![w]).unwrap_or_default();
                    self.violate(Invariant::DeadOwnerReclaimed, Some(item), workers, detail);
                }
            }
        }
    }

    /// A producer enqueued work: it wakes one live worker (seed 000 `wake()`).
    fn wake_someone(&mut self) {
        let live: Vec<u8> =
            (0..self.cfg.workers).filter(|&w| self.workers[usize::from(w)].inc.is_some() && !self.workers[usize::from(w)].paused).collect();
        if live.is_empty() {
            return;
        }
        let w = self.rng.pick(&live);
        let local = self.local(w);
        self.workers[usize::from(w)].inc.as_mut().expect("live").runner.wake(local);
        self.log(What::Wake, w, NO_ITEM, 0, 0);
        self.drive(w);
    }

    // ---- the network and the store -------------------------------------------

    fn send(&mut self, w: u8, req: Req) {
        let inc = self.workers[usize::from(w)].inc.as_ref().expect("a live worker sends").number;
        let f = self.cfg.faults;
        let calm = self.calm;
        let is_renew = matches!(req, Req::Renew { .. });
        let late_ok = f.late_claims || !matches!(req, Req::Claim { .. });
        let worker = &mut self.workers[usize::from(w)];
        let partition = if calm { None } else { worker.partition };
        let rng = &mut worker.calls;
        let d1 = rng.range(0, f.latency_max_ms);
        let d2 = rng.range(0, f.latency_max_ms);
        let now = self.now;
        let mut reach = d1;
        let failed = |time| (time, Ev::Reply { w, inc, rep: failed_reply(req) });
        let (arrive, direct): (Option<Fate>, Option<(u64, Ev)>) = if let Some(hang) = partition {
            if !hang {
                (None, Some(failed(now + d1 + d2)))
            } else if is_renew {
                (None, None)
            } else {
                let timeout = rng.range(1, f.hang_max_ms.max(1));
                (None, Some(failed(now + timeout)))
            }
        } else if calm {
            (Some(Fate::Answer(d2)), None)
        } else {
            let roll = rng.below(1000) as u32;
            let (fail, hang, late) = (f.call_fail_per_mille, f.call_hang_per_mille, f.call_late_per_mille);
            let slow = f.call_slow_per_mille;
            if roll < fail {
                if rng.chance(500) {
                    (Some(Fate::Error(d2)), None)
                } else {
                    (None, Some(failed(now + d1 + d2)))
                }
            } else if roll < fail + hang {
                let applied = rng.chance(500);
                let timeout = rng.range(1, f.hang_max_ms.max(1));
                let fate = if is_renew { Fate::Never } else { Fate::Error(timeout) };
                match (applied, is_renew) {
                    (true, _) => (Some(fate), None),
                    (false, true) => (None, None),
                    (false, false) => (None, Some(failed(now + timeout))),
                }
            } else if roll < fail + hang + late && late_ok {
                (Some(Fate::Answer(rng.range(d2, f.late_max_ms.max(d2)))), None)
            } else if roll < fail + hang + late + slow && late_ok {
                // Queued behind a lock or in a client pool: applied late
                // (a renewal may land after a takeover), then answered.
                reach = rng.range(d1, f.late_max_ms.max(d1));
                (Some(Fate::Answer(d2)), None)
            } else {
                (Some(Fate::Answer(d2)), None)
            }
        };
        if let Some(fate) = arrive {
            self.at(now + reach, Ev::Arrive { w, inc, req, fate, sent: now });
        }
        if let Some((time, ev)) = direct {
            self.at(time, ev);
        }
    }

    fn arrive(&mut self, w: u8, inc: u32, req: Req, fate: Fate, sent: u64) {
        let rep = match req {
            Req::Claim { at } => {
                let claimant = self.owners[usize::from(w)][inc as usize];
                let uid = self.workers[usize::from(w)].uid;
                let dead_before = self.store.dead_lettered;
                // The items whose outcome this incarnation still settles (as
                // it sent the claim: a claim of a crashed one lands too).
                let worker = &self.workers[usize::from(w)];
                let settling: Vec<u32> = match worker.inc.as_ref().filter(|i| i.number == inc) {
                    Some(i) => i.held.iter().flatten().filter(|h| h.phase == Phase::Settling).map(|h| h.item).collect(),
                    None if worker.crashed_settling.0 == inc => worker.crashed_settling.1.clone(),
                    None => Vec::new(),
                };
                let claimed = self.store.claim(&claimant, uid, at, &self.table, &settling);
                if self.store.dead_lettered != dead_before {
                    self.stats.dead_lettered = self.store.dead_lettered;
                    self.log(What::DeadLettered, NO_WORKER, NO_ITEM, u64::from(self.cfg.params.max_attempts), 0);
                }
                match claimed {
                    Claimed::Empty => self.log(What::ClaimEmpty, w, NO_ITEM, 0, 0),
                    Claimed::Item { item, token, stolen } => {
                        self.log(What::ClaimLanded, w, item, token, evidence_code(stolen.map(|s| s.1)));
                        self.claim_lands_on(w, claimant.nonce, item, stolen.map(|(owner, _)| (owner.worker, owner.nonce)));
                        if let Some((owner, kind)) = stolen {
                            self.stats.steals += 1;
                            let old_token = self.store.item(item).previous_token;
                            self.takeovers.push((item, old_token, kind));
                            let now = self.now;
                            for (_, _, held) in self.ended_now.iter_mut().filter(|(t, _, _)| *t == now) {
                                if held.item == item && held.token == old_token {
                                    held.taken = Some(kind);
                                }
                            }
                            if let Some(inc) = self.workers[usize::from(owner.worker)].inc.as_mut() {
                                if inc.number == owner.incarnation {
                                    for held in inc.held.iter_mut().flatten() {
                                        if held.item == item && held.token == old_token {
                                            held.taken = Some(kind);
                                        }
                                    }
                                }
                            }
                            if kind == EvidenceKind::SameHostPidDead && self.alive(owner.worker, owner.incarnation) {
                                self.violate(
                                    Invariant::PidEvidenceTrue,
                                    Some(item),
                                    vec![owner.worker, w],
                                    format!(
                                        "w{w} took the item over with same-host-pid-dead evidence, but its owner w{} (pid {}) is alive",
                                        owner.worker, owner.pid
                                    ),
                                );
                            }
                        }
                    }
                }
                Rep::Claim { at, answer: Ok(claimed) }
            }
            Req::Renew { key, call, item, token, at } => {
                let written = self.store.renew(item, token, at);
                self.fenced(w, item, token, written, What::RenewLanded);
                Rep::Renew { key, call, item, token, at, sent, answer: Ok(written.landed) }
            }
            Req::Settle { key, item, token } => {
                let written = self.store.settle(item, token);
                self.fenced(w, item, token, written, What::SettleLanded);
                if written.landed {
                    self.stats.settled += 1;
                    self.maybe_finish();
                    if self.store.item(item).settles > 1 {
                        self.violate(
                            Invariant::SettledExactlyOnce,
                            Some(item),
                            vec![w],
                            format!("a second settle landed (token {token})"),
                        );
                    }
                }
                Rep::Settle { key, item, token, answer: Ok(written.landed) }
            }
            Req::Release { item, token, key } => {
                let written = self.store.release(item, token);
                self.fenced(w, item, token, written, What::ReleaseLanded);
                Rep::Release { item, token, key, answer: Ok(written.landed) }
            }
        };
        match fate {
            Fate::Answer(delay) => self.at(self.now + delay, Ev::Reply { w, inc, rep }),
            Fate::Error(delay) => self.at(self.now + delay, Ev::Reply { w, inc, rep: failed_reply(req_of(rep)) }),
            Fate::Never => {}
        }
        if self.store_done() && self.probe.is_none() && self.calm {
            self.schedule_probe();
        }
    }

    fn fenced(&mut self, w: u8, item: u32, token: u64, written: Written, what: What) {
        self.log(what, w, item, token, u64::from(written.landed));
        if written.below_current {
            let current = self.store.item(item).token;
            self.violate(
                Invariant::FenceMonotonic,
                Some(item),
                vec![w],
                format!("the store landed a write with token {token} below the current token {current}"),
            );
        }
    }

    fn store_done(&self) -> bool {
        self.enqueued == self.cfg.workload.items && self.store.all_done()
    }

    // ---- a worker's host -----------------------------------------------------

    fn reply(&mut self, w: u8, rep: Rep) {
        let now = self.now;
        let local = self.local(w);
        let mutation = self.cfg.mutation;
        let prompt = self.prompt;
        match rep {
            Rep::Claim { answer: Ok(Claimed::Empty), .. } => self.inc_mut(w).runner.claim_empty(local),
            Rep::Claim { answer: Err(()), .. } => {
                self.log(What::ClaimFailed, w, NO_ITEM, 0, 0);
                self.inc_mut(w).runner.claim_failed(local, ());
            }
            Rep::Claim { at, answer: Ok(Claimed::Item { item, token, stolen }) } => {
                let unconfirmed = local.since(at);
                let Some(key) = self.inc_mut(w).runner.claim_found(local) else {
                    // Declined and no worker left to hand it back: its
                    // lease goes stale for a peer.
                    self.log(What::ClaimDeclined, w, item, token, unconfirmed);
                    self.stats.claims_declined += 1;
                    return;
                };
                if !check::claim_heard_in_time(self.spans, at.0, local.0) {
                    // Heard past the write tolerance: the runner must hand
                    // it back (`Action::Release`), never perform it.
                    self.log(What::ClaimDeclined, w, item, token, unconfirmed);
                    self.stats.claims_declined += 1;
                    self.inc_mut(w).declined.push((key, item, token));
                    return;
                }
                let worker = &mut self.workers[usize::from(w)];
                let long = worker.work.chance(self.cfg.workload.long_per_mille);
                let work_ms = if long {
                    worker.work.range(self.cfg.workload.work_short_max_ms, self.cfg.workload.work_long_max_ms)
                } else {
                    worker.work.range(1, self.cfg.workload.work_short_max_ms)
                };
                let mut work_fails = worker.work.chance(self.cfg.workload.work_fail_per_mille);
                let mut work_ms = work_ms;
                if Some(item) == self.probe {
                    work_fails = false;
                    if self.probe_owner.is_none() {
                        // The probe's first owner never finishes: it crashes holding the item.
                        work_ms = u64::MAX / 4;
                        let inc = worker.inc.as_ref().expect("alive").number;
                        self.probe_owner = Some((w, inc));
                        let hold = self.rng.range(0, 3 * self.cfg.params.heartbeat_every_ms);
                        self.at(now + hold, Ev::ProbeCrash { w, inc, item });
                    }
                }
                let evidence = stolen.map(|s| s.1);
                let inc = self.inc_mut(w).number;
                let held = Held {
                    inc,
                    key,
                    item,
                    token,
                    // The claim's `at`: the lease's first stamp, where the
                    // runner's supervision starts from.
                    stamp: at.0,
                    // Renewing from a claim heard within `W` (the only
                    // kind performed): its own renewals decide from here.
                    prompt: true,
                    inflight: None,
                    lost_seen: false,
                    // A claim heard late may have been taken over already.
                    taken: self.takeovers.iter().find(|t| t.0 == item && t.1 == token).map(|t| t.2),
                    phase: Phase::Working,
                    work_ms,
                    work_fails,
                    exec: None,
                };
                self.inc_mut(w).held[usize::from(key.slot)] = Some(held);
                self.log(What::ClaimHeard, w, item, token, evidence_code(evidence));
                self.belief_starts(w, held);
            }
            Rep::Renew { key, call, item, token, at, sent, answer } => {
                self.log(What::RenewHeard, w, item, token, answer_code(answer));
                let mut renewed = None;
                if let Some(held) = self.held_mut(w, key) {
                    if held.inflight.is_some_and(|(c, _)| c == call) {
                        held.inflight = None;
                        let quick = prompt.is_some_and(|g| now - sent <= g);
                        match answer {
                            Ok(true) => {
                                held.stamp = held.stamp.max(at.0);
                                held.prompt &= quick;
                                renewed = held.exec.map(|exec| (exec, held.stamp));
                            }
                            Ok(false) => {
                                held.lost_seen = true;
                                held.prompt = false;
                            }
                            Err(()) => held.prompt = false,
                        }
                    }
                }
                if let Some((exec, stamp)) = renewed {
                    self.guard_renewed(w, exec, stamp);
                }
                let told = match answer {
                    Ok(false) if mutation == Mutation::FenceIgnored => Ok(true),
                    other => other,
                };
                if !(told == Ok(true) && mutation == Mutation::ConfirmationDropped) {
                    self.inc_mut(w).runner.renewal_answered(local, key, call, told);
                }
            }
            Rep::Settle { key, item, token, answer } => {
                self.log(What::SettleHeard, w, item, token, answer_code(answer));
                let settling = self.held_mut(w, key).is_some_and(|h| h.phase == Phase::Settling && h.token == token);
                if settling {
                    let answer = match answer {
                        Ok(true) => SettleAnswer::Landed,
                        Ok(false) => SettleAnswer::FenceRefused,
                        // The store did not answer: asked again later,
                        // unless the host drops the outcome (the mutation:
                        // what hosts did before the settle phase).
                        Err(()) if mutation == Mutation::SettleDropped => SettleAnswer::FenceRefused,
                        Err(()) => SettleAnswer::Unavailable(()),
                    };
                    if answer != SettleAnswer::Unavailable(()) {
                        self.end_belief(w, key);
                        self.log(What::ItemSettled, w, item, token, u64::from(answer == SettleAnswer::Landed));
                        if mutation == Mutation::SettleDropped && answer == SettleAnswer::FenceRefused {
                            self.release(w, item, token);
                        }
                    }
                    self.inc_mut(w).runner.settle_answered(local, key, answer);
                }
            }
            Rep::Release { key: Some(key), answer, .. } => {
                // A declined claim handed back: the worker is free again.
                self.inc_mut(w).declined.retain(|d| !key_eq(d.0, key));
                self.inc_mut(w).runner.release_answered(local, key, answer.map(drop));
            }
            Rep::Release { item, token, answer, key: None } => {
                if answer.is_err() {
                    let inc = self.inc_mut(w).number;
                    self.at(now + self.cfg.params.heartbeat_every_ms, Ev::ReleaseRetry { w, inc, item, token });
                }
            }
        }
    }

    fn work_done(&mut self, w: u8, key: ItemKey) {
        let local = self.local(w);
        let Some(held) = self.held_mut(w, key).copied() else { return };
        if held.phase != Phase::Working {
            return;
        }
        self.log(What::WorkDone, w, held.item, held.token, u64::from(held.work_fails));
        if held.work_fails {
            self.end_belief(w, key);
            self.log(What::ItemSettled, w, held.item, held.token, 0);
            self.inc_mut(w).runner.item_settled(local, key, Err(()));
            self.release(w, held.item, held.token);
            return;
        }
        if held.lost_seen {
            self.violate(
                Invariant::NoSettleAfterLost,
                Some(held.item),
                vec![w],
                format!("w{w} sends a settle for token {} after a renewal answered false", held.token),
            );
        }
        // The outcome is reached: the runner asks for its settle
        // (`Action::Settle`) until the store answers.
        self.held_mut(w, key).expect("held").phase = Phase::Settling;
        self.inc_mut(w).runner.outcome_reached(local, key, Ok(()));
    }

    fn release(&mut self, w: u8, item: u32, token: u64) {
        self.log(What::ReleaseSent, w, item, token, 0);
        self.send(w, Req::Release { item, token, key: None });
    }

    fn inc_mut(&mut self, w: u8) -> &mut Incarnation {
        self.workers[usize::from(w)].inc.as_mut().expect("a live incarnation")
    }

    fn held_mut(&mut self, w: u8, key: ItemKey) -> Option<&mut Held> {
        let inc = self.workers[usize::from(w)].inc.as_mut()?;
        inc.held.get_mut(usize::from(key.slot))?.as_mut().filter(|h| key_eq(h.key, key))
    }

    /// Executes the runner's actions until it has none, then arms its timer.
    fn drive(&mut self, w: u8) {
        loop {
            let Some(inc) = self.workers[usize::from(w)].inc.as_mut() else { return };
            let Some(action) = inc.runner.poll_action() else { break };
            match action {
                Action::Claim { at } => {
                    self.log(What::ClaimSent, w, NO_ITEM, at.0, 0);
                    self.send(w, Req::Claim { at });
                }
                Action::Perform { key } => {
                    let now = self.now;
                    let inc_number = inc.number;
                    if let Some(&(_, item, token)) = inc.declined.iter().find(|d| key_eq(d.0, key)) {
                        self.violate(
                            Invariant::LateClaimNotPerformed,
                            Some(item),
                            vec![w],
                            format!("w{w} performs token {token} although its claim was heard past its write tolerance"),
                        );
                    }
                    if let Some(held) = self.held_mut(w, key).copied() {
                        self.log(What::Perform, w, held.item, held.token, held.work_ms);
                        let exec = self.execution_starts(w, inc_number, held.item, held.token, held.stamp, held.work_fails);
                        self.held_mut(w, key).expect("held").exec = Some(exec);
                        self.at(now.saturating_add(held.work_ms), Ev::WorkDone { w, inc: inc_number, key, exec });
                    }
                }
                Action::Renew { key, call, at } => {
                    let now = self.now;
                    if let Some(held) = self.held_mut(w, key) {
                        held.inflight = Some((call, now));
                        let (item, token) = (held.item, held.token);
                        self.log(What::RenewSent, w, item, token, at.0);
                        self.send(w, Req::Renew { key, call, item, token, at });
                    }
                }
                Action::Abort { key, lapsed } => self.abort(w, key, lapsed),
                Action::Settle { key } => {
                    if let Some(held) = self.held_mut(w, key).copied().filter(|h| h.phase == Phase::Settling) {
                        self.log(What::SettleSent, w, held.item, held.token, 0);
                        self.send(w, Req::Settle { key, item: held.item, token: held.token });
                    }
                }
                Action::Release { key } => {
                    let inc = self.inc_mut(w);
                    if let Some(&(_, item, token)) = inc.declined.iter().find(|d| key_eq(d.0, key)) {
                        self.log(What::ReleaseSent, w, item, token, 0);
                        self.send(w, Req::Release { item, token, key: Some(key) });
                    }
                }
                Action::Drop { .. } | Action::Log { .. } | Action::Emit(_) | Action::PassEnded { .. } => {}
            }
        }
        self.arm(w);
    }

    /// The runner aborted an item: its perform observes the signal and
    /// raises at once, while its work takes up to the exit grace to end; a
    /// lapsed lease is given back once the work has ended.
    fn abort(&mut self, w: u8, key: ItemKey, lapsed: bool) {
        let now = self.now;
        let local = self.local(w);
        let Some(held) = self.held_mut(w, key).copied() else { return };
        if lapsed && held.exec.is_some_and(|e| self.execs.get(e).finished) {
            // The work finished while its worker could not hear of it (it
            // was paused): an outcome reached, settled once the host hears
            // of it (its WorkDone waits), whatever the lapse says.
            self.log(What::Abort, w, held.item, held.token, 1);
            return;
        }
        self.log(What::Abort, w, held.item, held.token, u64::from(lapsed));
        if lapsed {
            self.stats.lapses += 1;
        } else {
            self.stats.losses += 1;
        }
        let young = held.inflight.is_none_or(|(_, sent)| self.prompt.is_some_and(|g| now - sent <= g));
        let on_time = check::timers_on_time(self.spans, held.stamp, self.workers[usize::from(w)].late_timer);
        if held.prompt && young && on_time && self.prompt.is_some() {
            self.violate(
                Invariant::RenewingOwnerNotInterrupted,
                Some(held.item),
                vec![w],
                format!(
                    "w{w} was interrupted ({}) on token {} although every renewal was confirmed within {}ms and its timers ran on time",
                    if lapsed { "lapsed" } else { "lost" },
                    held.token,
                    self.prompt.unwrap_or(0)
                ),
            );
        }
        // The work gets SIGTERM, then SIGKILL by the grace.
        let latency = self.exit_latency();
        if let Some(exec) = held.exec {
            self.execs.stop(exec, now, latency);
        }
        self.end_belief(w, key);
        self.log(What::ItemSettled, w, held.item, held.token, 0);
        self.inc_mut(w).runner.item_settled(local, key, Err(()));
        if lapsed && latency == 0 {
            self.release(w, held.item, held.token);
        } else if lapsed {
            // Given back once the work has ended, not while it still runs.
            let inc = self.inc_mut(w).number;
            self.at(now + latency, Ev::ReleaseRetry { w, inc, item: held.item, token: held.token });
        }
    }

    fn arm(&mut self, w: u8) {
        let now = self.now;
        let local = self.local(w).0;
        let worker = &mut self.workers[usize::from(w)];
        if worker.paused {
            return;
        }
        let throttle = worker.throttle;
        let Some(inc) = worker.inc.as_mut() else { return };
        let Some(deadline) = inc.runner.poll_timeout() else {
            inc.timer = None;
            return;
        };
        let mut real = now + deadline.0.saturating_sub(local);
        // A throttled host keeps the first due time it missed, so the
        // timer counts as late when it finally runs.
        let missed = throttle.is_some() && inc.timer.is_some() && inc.due < now;
        if !missed {
            inc.due = real;
        }
        if let Some(period) = throttle {
            real = EPOCH + (real - EPOCH).div_ceil(period) * period;
        }
        if inc.timer != Some(real) {
            inc.timer = Some(real);
            let number = inc.number;
            self.at(real, Ev::Timer { w, inc: number });
        }
    }

    // ---- beliefs and their checks ----------------------------------------------

    fn belief_starts(&mut self, w: u8, held: Held) {
        let now = self.now;
        // Believers of the same item during this ms: current ones, and ones
        // whose belief ended earlier in this same ms.
        // The worker's own older belief counts too: an owner that re-claims
        // its own stale item (the own-reclaim rule) may still hold it.
        let mut others: Vec<(u8, Held)> = Vec::new();
        for other in 0..self.cfg.workers {
            if let Some(inc) = &self.workers[usize::from(other)].inc {
                // A holder settling its outcome has ended its work: only
                // its fenced settle is in flight.
                let same = |h: &&Held| h.item == held.item && h.token != held.token && h.phase == Phase::Working;
                others.extend(inc.held.iter().flatten().filter(same).map(|h| (other, *h)));
            }
        }
        // A belief that ended by handing the item back (settle, release) is
        // a causal hand-off; one whose lease was taken over still shares the
        // millisecond it ended in.
        others.extend(
            self.ended_now
                .iter()
                .filter(|(t, _, h)| *t == now && h.item == held.item && h.token != held.token && h.taken.is_some() && h.phase == Phase::Working)
                .map(|(_, o, h)| (*o, *h)),
        );
        for (other, old) in others {
            // The believer with the older token must be the one excused (a
            // claim answered late can make the newcomer the older one).
            let ((older_w, older), (newer_w, newer)) =
                if old.token < held.token { ((other, old), (w, held)) } else { ((w, held), (other, old)) };
            let stall = self.workers[usize::from(older_w)].stall();
            // What matters is how the older token lost the lease: the item
            // may have changed hands again since (released, re-claimed).
            let lease_takeover = older.taken == Some(EvidenceKind::LeaseExpired);
            if lease_takeover && check::excused(self.spans, older.stamp, stall, now) {
                self.stats.excused_overlaps += 1;
                continue;
            }
            // A same-host takeover of a dead owner (whose belief ended when
            // it died, in this same ms): `pid-evidence-true` checks the
            // evidence itself.
            if older.taken == Some(EvidenceKind::SameHostPidDead) && !self.alive(older_w, older.inc) {
                continue;
            }
            let detail = format!(
                "w{newer_w} holds token {} while w{older_w} believes it owns token {} during the same ms (its lease {}; stamp {}, in budget {}, stalled now {}, last stall ended {})",
                newer.token,
                older.token,
                match older.taken {
                    None => "was not taken over",
                    Some(EvidenceKind::LeaseExpired) => "was taken over: lease-expired",
                    Some(_) => "was taken over: same-host-pid-dead",
                },
                older.stamp,
                check::in_budget(self.spans, older.stamp, now),
                stall.now,
                stall.last_end.saturating_sub(EPOCH)
            );
            self.violate(Invariant::ExclusiveOwnership, Some(held.item), vec![older_w, newer_w], detail);
            return;
        }
    }

    fn end_belief(&mut self, w: u8, key: ItemKey) {
        let now = self.now;
        if let Some(inc) = self.workers[usize::from(w)].inc.as_mut() {
            if let Some(slot) = inc.held.get_mut(usize::from(key.slot)) {
                if let Some(held) = slot.take_if(|h| key_eq(h.key, key)) {
                    self.ended_now.retain(|(t, _, _)| *t == now);
                    self.ended_now.push((now, w, held));
                }
            }
        }
    }

    /// Every believer at this real ms is inside its budget or excused.
    fn check_budgets(&mut self) {
        if !self.cfg.budget_check {
            return;
        }
        let now = self.now;
        for w in 0..self.workers.len() {
            let worker = &self.workers[w];
            let Some(inc) = &worker.inc else { continue };
            for held in inc.held.iter().flatten().filter(|h| h.phase == Phase::Working) {
                if check::in_budget(self.spans, held.stamp, now) || check::excused(self.spans, held.stamp, worker.stall(), now) {
                    continue;
                }
                let others: Vec<u8> = self
                    .workers
                    .iter()
                    .enumerate()
                    .filter(|&(o, other)| {
                        o != w && other.inc.as_ref().is_some_and(|i| i.held.iter().flatten().any(|h| h.item == held.item))
                    })
                    .map(|(o, _)| o as u8)
                    .collect();
                let (invariant, mut workers) = if others.is_empty() {
                    (Invariant::OwnerStopsInBudget, vec![w as u8])
                } else {
                    (Invariant::ExclusiveOwnership, others)
                };
                if invariant == Invariant::ExclusiveOwnership {
                    workers.insert(0, w as u8);
                }
                let detail = format!(
                    "w{w} still believes it owns token {} at t={}, but its last confirmed stamp {} + S {} − K {} ended its budget at t={} and no stall excuses it (last stall ended {})",
                    held.token,
                    now - EPOCH,
                    held.stamp,
                    self.spans.stale_after,
                    self.spans.skew,
                    (held.stamp + self.spans.stale_after - self.spans.skew).saturating_sub(EPOCH),
                    worker.stall_end.saturating_sub(EPOCH)
                );
                let item = held.item;
                self.violate(invariant, Some(item), workers, detail);
                return;
            }
        }
    }

    // ---- faults ------------------------------------------------------------------

    fn fault(&mut self, w: u8, fault: Fault) {
        let f = self.cfg.faults;
        let now = self.now;
        let starts = !matches!(
            fault,
            Fault::PauseEnd | Fault::ThrottleEnd | Fault::PartitionEnd | Fault::Restart | Fault::Reap { .. }
        );
        if self.calm && starts {
            return;
        }
        let i = usize::from(w);
        match fault {
            Fault::Crash => {
                self.crash(w);
                self.next_fault(w, f.crash_gap_ms, Fault::Crash, now);
            }
            Fault::Restart => {
                if self.workers[i].inc.is_none() {
                    self.restart(w);
                }
            }
            Fault::Reap { pid } => {
                let host = self.workers[i].host;
                self.table.reap(host, pid);
            }
            Fault::PauseStart => {
                let duration = self.workers[i].faults.range(1, f.pause_max_ms.max(1));
                if self.workers[i].inc.is_some() && !self.workers[i].paused {
                    self.workers[i].paused = true;
                    self.stats.stalls += 1;
                    if let Some(inc) = self.workers[i].inc.as_mut() {
                        inc.timer = None;
                    }
                    self.log(What::PauseStart, w, NO_ITEM, duration, 0);
                }
                self.at(now + duration, Ev::Fault { w, fault: Fault::PauseEnd });
                self.next_fault(w, f.pause_gap_ms, Fault::PauseStart, now + duration);
            }
            Fault::PauseEnd => self.resume(w),
            Fault::ThrottleStart => {
                let duration = self.workers[i].faults.range(1, f.throttle_max_ms.max(1));
                let period = self.workers[i].faults.range(1, f.throttle_period_max_ms.max(1));
                if self.workers[i].inc.is_some() && self.workers[i].throttle.is_none() {
                    self.workers[i].throttle = Some(period);
                    self.stats.stalls += 1;
                    self.log(What::ThrottleStart, w, NO_ITEM, duration, period);
                    self.arm(w);
                }
                self.at(now + duration, Ev::Fault { w, fault: Fault::ThrottleEnd });
                self.next_fault(w, f.throttle_gap_ms, Fault::ThrottleStart, now + duration);
            }
            Fault::ThrottleEnd => self.unthrottle(w),
            Fault::PartitionStart => {
                let duration = self.workers[i].faults.range(1, f.partition_max_ms.max(1));
                let hang = self.workers[i].faults.chance(500);
                self.workers[i].partition = Some(hang);
                self.log(What::PartitionStart, w, NO_ITEM, duration, u64::from(hang));
                self.at(now + duration, Ev::Fault { w, fault: Fault::PartitionEnd });
                self.next_fault(w, f.partition_gap_ms, Fault::PartitionStart, now + duration);
            }
            Fault::PartitionEnd => {
                if self.workers[i].partition.take().is_some() {
                    self.log(What::PartitionEnd, w, NO_ITEM, 0, 0);
                }
            }
            Fault::ClockStep => {
                let to = if f.clock_extremes {
                    self.workers[i].faults.below(2) * self.spans.skew
                } else {
                    self.workers[i].faults.range(0, self.spans.skew)
                };
                self.set_clock(w, to);
                self.next_fault(w, f.clock_step_gap_ms, Fault::ClockStep, now);
            }
            Fault::Drift => {
                let by = self.workers[i].faults.range(1, f.drift_max_ms.max(1));
                let offset = self.workers[i].offset;
                let to = if self.workers[i].faults.chance(500) { offset.saturating_sub(by) } else { (offset + by).min(self.spans.skew) };
                self.set_clock(w, to);
                self.next_fault(w, f.drift_gap_ms, Fault::Drift, now);
            }
        }
    }

    fn set_clock(&mut self, w: u8, to: u64) {
        let from = self.workers[usize::from(w)].offset;
        if from != to {
            self.workers[usize::from(w)].offset = to;
            self.log(What::ClockSet, w, NO_ITEM, from, to);
        }
    }

    fn resume(&mut self, w: u8) {
        let i = usize::from(w);
        if !self.workers[i].paused {
            return;
        }
        self.workers[i].paused = false;
        self.workers[i].stall_end = self.now;
        self.log(What::PauseEnd, w, NO_ITEM, 0, 0);
        // Overdue timers first: the host reads its clock when it wakes.
        let local = self.local(w);
        if let Some(inc) = self.workers[i].inc.as_mut() {
            let due = inc.runner.poll_timeout();
            if due.is_some_and(|t| t <= local) {
                if due.is_some_and(|t| t < local) {
                    self.workers[i].late_timer = self.now;
                }
                let inc = self.workers[i].inc.as_mut().expect("alive");
                inc.runner.handle_timeout(local);
            }
        }
        self.drive(w);
        let deferred = std::mem::take(&mut self.workers[i].deferred);
        for ev in deferred {
            self.handle(ev);
        }
        self.arm(w);
    }

    fn unthrottle(&mut self, w: u8) {
        let i = usize::from(w);
        if self.workers[i].throttle.take().is_some() {
            self.workers[i].stall_end = self.now;
            self.log(What::ThrottleEnd, w, NO_ITEM, 0, 0);
            let now = self.now;
            if let Some(inc) = self.workers[i].inc.as_mut() {
                if inc.timer.is_some() && inc.due < now {
                    // The timer was due during the throttle and still waits.
                    self.workers[i].late_timer = now;
                }
                let inc = self.workers[i].inc.as_mut().expect("alive");
                inc.timer = None;
            }
            self.arm(w);
        }
    }

    fn crash(&mut self, w: u8) {
        let i = usize::from(w);
        let Some(inc) = self.workers[i].inc.take() else { return };
        self.stats.crashes += 1;
        let now = self.now;
        self.execs.worker_died(w, inc.number, now);
        let settling = inc.held.iter().flatten().filter(|h| h.phase == Phase::Settling).map(|h| h.item).collect();
        self.workers[i].crashed_settling = (inc.number, settling);
        self.ended_now.retain(|(t, _, _)| *t == now);
        self.ended_now.extend(inc.held.iter().flatten().map(|h| (now, w, *h)));
        let worker = &mut self.workers[i];
        if worker.paused || worker.throttle.is_some() {
            // It was stalled until this very moment.
            worker.stall_end = now;
        }
        worker.paused = false;
        worker.throttle = None;
        worker.deferred.clear();
        let (host, pid) = (worker.host, inc.owner.pid);
        let zombie = worker.faults.chance(300);
        let squat = worker.faults.chance(self.cfg.faults.pid_squat_per_mille);
        let restart = worker.faults.chance(self.cfg.faults.restart_per_mille);
        let restart_in = worker.faults.range(0, self.cfg.faults.restart_delay_max_ms);
        self.table.exit(host, pid, zombie);
        self.log(What::Crash, w, NO_ITEM, u64::from(pid), 0);
        if zombie {
            let reap_in = self.workers[i].faults.range(1, self.cfg.params.stale_after_ms);
            self.at(self.now + reap_in, Ev::Fault { w, fault: Fault::Reap { pid } });
        } else if squat {
            // An unrelated process of another user takes the freed pid.
            let uid = self.workers[i].uid ^ 1;
            self.table.spawn(host, uid, self.now, true);
        }
        if restart && !self.calm {
            self.at(self.now + restart_in, Ev::Fault { w, fault: Fault::Restart });
        }
    }

    fn restart(&mut self, w: u8) {
        let i = usize::from(w);
        let reuse = self.workers[i].faults.chance(self.cfg.faults.pid_reuse_per_mille);
        let (host, uid) = (self.workers[i].host, self.workers[i].uid);
        let pid = self.table.spawn(host, uid, self.now, reuse);
        let number = self.workers[i].incarnations;
        self.workers[i].incarnations += 1;
        let nonce = (u64::from(w) << 32) | u64::from(number);
        let owner = Owner { worker: w, incarnation: number, host, pid, start_time: self.now, nonce };
        self.owners[i].push(owner);
        // The settle phase, as the native host runs it: an outcome reached is
        // settled until the store answers, whatever the lease does meanwhile.
        let mut runner = Runner::new(self.config, false).with_settle_phase();
        runner.set_supervision_mutation(self.cfg.mutation.supervision());
        let pool = self.config.pool_size() as usize;
        self.workers[i].inc = Some(Incarnation { number, owner, runner, held: vec![None; pool], declined: Vec::new(), timer: None, due: 0 });
        self.workers[i].paused = false;
        self.log(What::Restart, w, NO_ITEM, u64::from(pid), nonce);
        let local = self.local(w);
        self.inc_mut(w).runner.start(local);
        self.drive(w);
    }

    // ---- calm and the reclaim probe ------------------------------------------------

    fn calm(&mut self) {
        self.calm = true;
        self.log(What::Calm, NO_WORKER, NO_ITEM, 0, 0);
        for w in 0..self.cfg.workers {
            let i = usize::from(w);
            if self.workers[i].partition.take().is_some() {
                self.log(What::PartitionEnd, w, NO_ITEM, 0, 0);
            }
            self.unthrottle(w);
            self.resume(w);
            if self.workers[i].inc.is_none() {
                self.restart(w);
            }
        }
        if self.store_done() {
            self.schedule_probe();
        }
    }

    fn schedule_probe(&mut self) {
        // Let every worker's backoff run out, so each polls every interval.
        let backoff = (10 * self.cfg.params.claim_interval_ms).min(60_000);
        self.probe = Some(NO_ITEM);
        self.at(self.now + backoff + 2 * self.cfg.params.claim_interval_ms, Ev::ProbeStart);
    }

    fn probe_start(&mut self) {
        let item = self.store.add_item();
        self.probe = Some(item);
        self.store.enqueue(item);
        self.log(What::ProbeEnqueue, NO_WORKER, item, 0, 0);
        self.wake_someone();
    }

    fn probe_crash(&mut self, w: u8, inc: u32, item: u32) {
        if !self.alive(w, inc) {
            return;
        }
        let p = self.cfg.params;
        let bound = self.now + p.stale_after_ms + p.heartbeat_every_ms + p.claim_interval_ms;
        self.probe_crash_at = self.now;
        self.log(What::ProbeCrash, w, item, bound - EPOCH, 0);
        self.crash(w);
        self.restart(w);
        self.at(bound + 1, Ev::ProbeDeadline { item });
    }

    /// Called by the store when a settle lands: the run ends once the probe
    /// item is settled.
    fn maybe_finish(&mut self) {
        if let Some(item) = self.probe {
            if item != NO_ITEM && self.store.item(item).state == ItemState::Settled && self.now > self.probe_crash_at + 1 {
                self.finished = true;
            }
        }
    }
}

fn failed_reply(req: Req) -> Rep {
    match req {
        Req::Claim { at } => Rep::Claim { at, answer: Err(()) },
        Req::Renew { key, call, item, token, at } => Rep::Renew { key, call, item, token, at, sent: 0, answer: Err(()) },
        Req::Settle { key, item, token } => Rep::Settle { key, item, token, answer: Err(()) },
        Req::Release { item, token, key } => Rep::Release { item, token, key, answer: Err(()) },
    }
}

fn req_of(rep: Rep) -> Req {
    match rep {
        Rep::Claim { at, .. } => Req::Claim { at },
        Rep::Renew { key, call, item, token, at, .. } => Req::Renew { key, call, item, token, at },
        Rep::Settle { key, item, token, .. } => Req::Settle { key, item, token },
        Rep::Release { item, token, key, .. } => Req::Release { item, token, key },
    }
}
