//! The simulated world: workers (each a core
//! [`Runner`](leasehold_core::runner::Runner) with per-item
//! supervision), their clocks and processes, the network to the store, the
//! store, the faults, and the invariant checks, driven by one event queue in
//! simulated real time.
//!
//! One file per concern: `queue` (the events and their order),
//! `network` (requests, their fates, the store's side), `host` (what a
//! worker believes it holds and how its host drives its runner), `exits`
//! (the work apart from its worker, and its guard), `beliefs` (overlap
//! and budget checks), `faults` (crashes, stalls, partitions, clocks),
//! `operator` (cancels and retries by hand) and `probe` (calm and the
//! reclaim probe). This file holds the world's
//! state and dispatches each event.
//!
//! # The host each worker runs (what a real host does, minus real time)
//!
//! - It reads its clock (real time plus its process's anchor, the wall
//!   clock's step when it started, plus its offset in the band) at every
//!   input, executes the runner's actions in order, and arms one timer for
//!   the runner's `poll_timeout`, converting the remaining local ms into
//!   real ms when it arms it (a clock that steps in the band afterwards
//!   makes the timer early or late, as a real monotonic sleep would).
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

mod beliefs;
mod exits;
mod faults;
mod host;
mod network;
mod operator;
mod probe;
mod queue;

use self::host::{Held, Worker};
use self::network::Req;
use self::queue::{Ev, Queued};
use super::check::{self, Invariant, Spans, Violation};
use super::config::{Mutation, SimConfig};
use super::exit::Executions;
use super::probe::ProcessTable;
use super::rng::Rng;
use super::store::{ItemState, Owner, Store};
use super::trace::{Trace, TraceLine, What};
use leasehold_core::lease::{EvidenceKind, LeaseWatch};
use leasehold_core::options::Config;
use leasehold_core::runner::ItemKey;
use leasehold_core::Millis;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Simulated real time starts here, so no stamp saturates at the epoch.
pub const EPOCH: u64 = 1_000_000;

const NO_WORKER: u8 = 255;
const NO_ITEM: u32 = u32::MAX;

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
    /// The operator's cancels (of pending and running items).
    pub cancels: u32,
    /// The operator's retries of cancelled items.
    pub retries: u32,
    /// Items the operator left cancelled at the end (finished by it).
    pub left_cancelled: u32,
    /// Takeovers whose claimant's clock was anchored more than `K` from the
    /// owner's (their processes started either side of a wall-clock step):
    /// the wall clocks disagreed, and the claimant's watch decided.
    pub takeovers_across_steps: u32,
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
    /// Every incarnation's lease watch, per worker (a process's memory; a
    /// claim it sent before it crashed still lands with it).
    watches: Vec<Vec<LeaseWatch>>,
    /// Every incarnation's anchor, per worker: how far its host's wall
    /// clock read from real time, beyond the band, when it started. Its
    /// clocks carry it for as long as it lives.
    anchors: Vec<Vec<i64>>,
    /// Each host's wall clock less real time, beyond the band (moved by
    /// the wall-step fault, [`super::config::Faults::wall_step_gap_ms`]).
    host_wall: Vec<i64>,
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
    /// The operator's choices.
    operator_rng: Rng,
    /// The operator's steps scheduled and not taken yet.
    operator_pending: u32,
    /// Every cancel of a running item: item, the token it ran under.
    cancelled: Vec<(u32, u64)>,
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
            if let Some(lease) = config.lease.as_mut() {
                lease.write_tolerance_ms = p.stale_after_ms - p.heartbeat_every_ms - p.skew_ms;
            }
        }
        let lease = config.lease.expect("heartbeat configured");
        // The checks use the clocks' real band: a peer's clock is at most
        // `band` ahead, and one's own clock steps by at most `band`.
        let band = cfg.faults.clock_band_ms.min(lease.skew_allowance_ms);
        let spans = Spans {
            stale_after: cfg.params.stale_after_ms,
            skew: band,
            tolerance: lease.write_tolerance_ms,
            reconfirm: lease.heartbeat_interval_ms,
        };
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
        store.dead_owner_watched = cfg.dead_owner_watched;
        store.cancel_drops_lease_end = cfg.mutation == Mutation::CancelDropsLeaseEnd;
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
            watches: vec![Vec::new(); usize::from(cfg.workers)],
            anchors: vec![Vec::new(); usize::from(cfg.workers)],
            host_wall: vec![0; usize::from(cfg.hosts.max(1))],
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
            operator_rng: Rng::stream(seed, 7, 0),
            operator_pending: 0,
            cancelled: Vec::new(),
        }
    }

    fn log(&mut self, what: What, worker: u8, item: u32, a: u64, b: u64) {
        self.trace.push(TraceLine { time: self.now - EPOCH, what, worker, item, a, b });
    }

    fn violate(&mut self, invariant: Invariant, item: Option<u32>, workers: Vec<u8>, detail: String) {
        if self.violation.is_none() {
            self.violation = Some(Violation { invariant, time: self.now - EPOCH, item, workers, detail });
        }
    }

    /// `w`'s runner's clock now: real time, its offset in the band, and
    /// its incarnation's anchor (the native runner's clock: the host's wall
    /// clock read once at the process's start, carried on monotonically).
    fn local(&self, w: u8) -> Millis {
        let worker = &self.workers[usize::from(w)];
        let anchor = worker.inc.as_ref().map_or(0, |inc| self.anchor(w, inc.number));
        Millis(self.now.saturating_add_signed(anchor) + worker.offset)
    }

    /// The anchor of `w`'s incarnation `inc` (see [`World::anchors`]).
    fn anchor(&self, w: u8, inc: u32) -> i64 {
        self.anchors[usize::from(w)][inc as usize]
    }

    /// The monotonic clock of `w`'s incarnation `inc` now, which its lease
    /// watch is timed on: real pace, from its start's wall-clock reading
    /// (the clock the native SQLite store's watch reads), without the
    /// band's drift and steps.
    fn mono(&self, w: u8, inc: u32) -> u64 {
        self.now.saturating_add_signed(self.anchor(w, inc))
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
        self.stats.left_cancelled = self.store.items().iter().filter(|r| r.state == ItemState::Cancelled).count() as u32;
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
        let stuck = self.store.items().iter().position(|r| !r.state.finished());
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
        self.schedule_operator();
        for w in 0..self.cfg.workers {
            self.restart(w);
            self.schedule_faults(w);
        }
    }


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
            Ev::ProbeDeadline { item } => self.probe_deadline(item),
            Ev::OperatorCancel | Ev::OperatorRetry { .. } | Ev::OperatorCancelAgain { .. } => self.operator(ev),
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
}
