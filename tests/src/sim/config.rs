//! What one simulation runs: the lease parameters, the workload, the fault
//! rates and sizes, and the deliberately broken variant (if any).
//!
//! All spans are milliseconds of simulated real time; rates are given as the
//! mean gap between two occurrences per worker (0 turns a fault off) and
//! probabilities in per-mille.

use leasehold_core::lease::LeasePolicy;
use leasehold_core::options::{Config, OptionError, OptionsInput};
use leasehold_core::job_backoff;

/// A deliberately broken variant the simulator must catch (the mutation
/// check). Each lives where the real defect would: in the core's
/// supervision or lease watch (behind the core feature `mutations`), the
/// pid probe, the host, or the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mutation {
    /// The correct system.
    None,
    /// Supervision measures the write tolerance from when a confirming reply
    /// arrived instead of from when the renewal was sent (core).
    ToleranceFromReply,
    /// The pid probe reads `EPERM` from `kill(pid, 0)` as a dead owner (probe).
    EpermAsDead,
    /// The host ignores a renewal's `false` (the fence answer) and reports
    /// it to the runner as `true` (host).
    FenceIgnored,
    /// Supervision has no write-tolerance deadline and no reconfirm bound
    /// (core).
    NoLapseDeadline,
    /// The store accepts renewals and settles whatever their fencing token
    /// (store).
    UnfencedStore,
    /// The host drops a renewal's confirmed answer instead of reporting it
    /// to the runner (host): the owner lapses although its renewals
    /// succeed.
    ConfirmationDropped,
    /// The pid probe ignores the recorded process start time, so a reused
    /// pid reads as the owner alive (probe). Caught by the reclaim bound
    /// where only same-host peers could take over.
    StartTimeIgnored,
    /// The work's guard never acts on its exit deadline (host): only its
    /// worker can stop it, so the work of a paused worker runs on beside its
    /// successor.
    GuardDeadlineOff,
    /// The lapse does not fall earlier by the exit grace (the write
    /// tolerance is `S − I − K`, as if stopped work ended at once): work
    /// that takes up to the grace to end outlives the lease.
    GraceOutsideBudget,
    /// The host drops an outcome whose settle the store did not answer and
    /// gives the item back (host), as hosts did before the settle phase:
    /// finished work is performed again.
    SettleDropped,
    /// The store's cancel of a *pending* item drops the lease's end a retry
    /// kept (store), as every real store did before ba01e5c: an item
    /// cancelled while it ran, retried, cancelled again while it waits and
    /// retried again is due at once, and a peer starts it beside the first
    /// attempt, whose owner hears of the cancel only at its next renewal.
    /// Caught by the operator ([`Operator`]).
    CancelDropsLeaseEnd,
    /// Each claimant's lease watch times a lease from its recorded
    /// heartbeat on the claimant's clock instead of from its own first
    /// sight of it (core: `WatchMutation::FromHeartbeat`): a takeover, and
    /// the claim of a retried item carrying a cancelled lease, go by the
    /// claimant's wall clock alone, as in the stores before the watch.
    /// Harmless while clocks stay in the band; caught where hosts' wall
    /// clocks step ([`SimConfig::clock_steps`]): a worker started after a
    /// step forward takes items over from owners still working, and one
    /// started after a step back has its own taken from it.
    WallClockTakeover,
}

impl Mutation {
    /// Every broken variant (not `None`).
    pub const BROKEN: [Mutation; 12] = [
        Mutation::ToleranceFromReply,
        Mutation::EpermAsDead,
        Mutation::FenceIgnored,
        Mutation::NoLapseDeadline,
        Mutation::UnfencedStore,
        Mutation::StartTimeIgnored,
        Mutation::ConfirmationDropped,
        Mutation::GuardDeadlineOff,
        Mutation::GraceOutsideBudget,
        Mutation::SettleDropped,
        Mutation::CancelDropsLeaseEnd,
        Mutation::WallClockTakeover,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mutation::None => "none",
            Mutation::ToleranceFromReply => "tolerance-from-reply",
            Mutation::EpermAsDead => "eperm-as-dead",
            Mutation::FenceIgnored => "fence-ignored",
            Mutation::NoLapseDeadline => "no-lapse-deadline",
            Mutation::UnfencedStore => "unfenced-store",
            Mutation::StartTimeIgnored => "start-time-ignored",
            Mutation::ConfirmationDropped => "confirmation-dropped",
            Mutation::GuardDeadlineOff => "guard-deadline-off",
            Mutation::GraceOutsideBudget => "grace-outside-budget",
            Mutation::SettleDropped => "settle-dropped",
            Mutation::CancelDropsLeaseEnd => "cancel-drops-lease-end",
            Mutation::WallClockTakeover => "wall-clock-takeover",
        }
    }

    /// Parses [`Mutation::name`].
    pub fn parse(name: &str) -> Option<Mutation> {
        core::iter::once(Mutation::None).chain(Mutation::BROKEN).find(|m| m.name() == name)
    }

    /// The core supervision variant this mutation selects.
    pub fn supervision(self) -> leasehold_core::supervision::Mutation {
        use leasehold_core::supervision::Mutation as Core;
        match self {
            Mutation::ToleranceFromReply => Core::ToleranceFromReply,
            Mutation::NoLapseDeadline => Core::NoLapseDeadline,
            _ => Core::None,
        }
    }

    /// The core lease watch variant this mutation selects.
    pub fn watch(self) -> leasehold_core::lease::WatchMutation {
        use leasehold_core::lease::WatchMutation as Core;
        match self {
            Mutation::WallClockTakeover => Core::FromHeartbeat,
            _ => Core::None,
        }
    }
}

/// The lease and runner parameters every worker runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Params {
    /// `S`, `staleAfterMs`: a lease older than this (strictly) is stale.
    pub stale_after_ms: u64,
    /// `I`, `heartbeatEveryMs`: the renewal cadence; also `R`.
    pub heartbeat_every_ms: u64,
    /// `K`, `heartbeatSkewMs`: the skew allowance; every worker's clock
    /// stays within `[real, real + K]`.
    pub skew_ms: u64,
    /// `W` when overridden (`None`: the runner's own `S − I − K − 1`). Only the
    /// validator-agreement check sets it, to step outside the relation.
    pub tolerance_ms: Option<u64>,
    /// `intervalMs`: the delay between passes (the claim interval).
    pub claim_interval_ms: u64,
    /// Items a worker performs at once.
    pub concurrency: u32,
    /// Claim attempts per pass.
    pub batch_limit: u32,
    /// Claims an item may have; the next claim dead-letters it.
    pub max_attempts: u32,
    /// `G`: the longest a stopped perform takes to end (SIGTERM, then
    /// SIGKILL by the grace), the runner's abort grace (0: never dropped);
    /// each stop draws its latency in `[0, G]`.
    pub exit_grace_ms: u64,
}

impl Params {
    /// The options a worker's runner is built from, validated by the core's
    /// option validator, with `W` overridden when [`Params::tolerance_ms`]
    /// says so.
    ///
    /// # Errors
    /// The validator's [`OptionError`] when the set is refused.
    pub fn config(&self) -> Result<Config, OptionError> {
        let mut config = OptionsInput {
            interval_ms: self.claim_interval_ms as f64,
            stale_after_ms: self.stale_after_ms as f64,
            heartbeat: true,
            heartbeat_every_ms: Some(self.heartbeat_every_ms as f64),
            heartbeat_skew_ms: Some(self.skew_ms as f64),
            backoff: Some(job_backoff(self.claim_interval_ms as f64)),
            batch_limit: Some(f64::from(self.batch_limit)),
            concurrency: Some(f64::from(self.concurrency)),
            // `G`: the runner's lease budget makes room for it (`W = S − I −
            // K − G − 1`).
            abort_grace: match self.exit_grace_ms {
                0 => leasehold_core::options::AbortGrace::Never,
                grace => leasehold_core::options::AbortGrace::Ms(grace as f64),
            },
            names: leasehold_core::options::OptionNames::JS,
            scheduling: leasehold_core::options::Scheduling::Passes,
            // The simulated store takes a claim for stale after this same window.
            store_lease_ms: Some(self.stale_after_ms as f64),
            // A simulated work ends on its own (within the grace once
            // aborted), not when its perform is dropped, as the command-line
            // tool's guarded commands do: its perform keeps its whole grace.
            drop_by_exit_deadline: false,
        }
        .validate()?;
        if let (Some(w), Some(lease)) = (self.tolerance_ms, config.lease.as_mut()) {
            lease.write_tolerance_ms = w;
        }
        Ok(config)
    }

    /// The lease each claim is kept under (`I`, `K`, `S`, `W`, `G`; a
    /// reconfirmation is bounded by `I`).
    ///
    /// # Panics
    /// When the set is refused by the validator (check [`Params::config`]
    /// first).
    pub fn lease(&self) -> LeasePolicy {
        self.config().expect("validated params").lease.expect("heartbeat configured")
    }

    /// The scale every default below is built on: `S = 600`, `I = 150`,
    /// `K = 75` (so `W = 374`, `R = 150`), claim interval 100 ms,
    /// concurrency 2, batch limit 8, 5 attempts.
    pub fn standard() -> Params {
        Params {
            stale_after_ms: 600,
            heartbeat_every_ms: 150,
            skew_ms: 75,
            tolerance_ms: None,
            claim_interval_ms: 100,
            concurrency: 2,
            batch_limit: 8,
            max_attempts: 5,
            exit_grace_ms: 0,
        }
    }
}

/// Fault rates and sizes. Gaps are the mean ms between two occurrences per
/// worker (0: off); sizes are maxima in ms; probabilities per-mille.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Faults {
    /// Worker crashes.
    pub crash_gap_ms: u64,
    /// Chance a crashed worker restarts (new process, new nonce) before the
    /// faults stop; the others restart when they stop.
    pub restart_per_mille: u32,
    /// Longest delay before such a restart.
    pub restart_delay_max_ms: u64,
    /// Stop-the-world pauses: nothing runs, timers and replies wait.
    pub pause_gap_ms: u64,
    /// Longest pause.
    pub pause_max_ms: u64,
    /// Throttled background tab: timers fire only on a coarse period;
    /// replies still arrive.
    pub throttle_gap_ms: u64,
    /// Longest throttled stretch.
    pub throttle_max_ms: u64,
    /// Longest throttle period (timers fire on multiples of it).
    pub throttle_period_max_ms: u64,
    /// A worker cut off from the store: its calls fail, or hang.
    pub partition_gap_ms: u64,
    /// Longest partition.
    pub partition_max_ms: u64,
    /// Width of the band every clock's offset from real time stays in,
    /// `[0, band]`: two clocks never differ by more than this, and a clock
    /// never steps by more. At most `K`.
    pub clock_band_ms: u64,
    /// Every clock starts at one edge of the band (offset 0 or `band`), and
    /// steps to one, instead of anywhere in it.
    pub clock_extremes: bool,
    /// Clock steps to anywhere in the band.
    pub clock_step_gap_ms: u64,
    /// Clock drift: small moves inside the band.
    pub drift_gap_ms: u64,
    /// Largest drift move.
    pub drift_max_ms: u64,
    /// Steps of a host's wall clock far outside the band (an NTP
    /// correction, a clock set by hand, a resume from sleep), drawn from
    /// each of its workers' fault streams: mean gap (0: none).
    ///
    /// What a native worker sees of one is what its runner's clock sees:
    /// the host's wall clock read once when the process started, carried on
    /// by its monotonic clock. A process running across the step does not
    /// see it (its renewals' stamps, its deadlines and its timers go on as
    /// before), and one started after it reads its clock that much away
    /// from the older one's for as long as both live; the steps persist
    /// after the faults stop.
    pub wall_step_gap_ms: u64,
    /// Largest step, forward or back; each is drawn from a tenth of it up to
    /// it, and a host's wall clock stays within it of real time.
    pub wall_step_max_ms: u64,
    /// Per store call: fails (applied or not).
    pub call_fail_per_mille: u32,
    /// Per store call: hangs (a renewal's reply never comes; other calls
    /// time out with an error after up to `hang_max_ms`).
    pub call_hang_per_mille: u32,
    /// Per store call: answers late, by up to `late_max_ms`.
    pub call_late_per_mille: u32,
    /// Per store call: reaches the store late (queued behind a lock or in a
    /// client pool), by up to `late_max_ms`, then answers. A renewal applied
    /// this late may land after a takeover: the fence answers `false`.
    pub call_slow_per_mille: u32,
    /// Longest late answer or late arrival.
    pub late_max_ms: u64,
    /// Whether a claim's answer may come late (or the claim reach the store
    /// late) too.
    pub late_claims: bool,
    /// Longest hang before a timeout error.
    pub hang_max_ms: u64,
    /// Longest ordinary one-way latency to or from the store (also in calm).
    pub latency_max_ms: u64,
    /// Chance a crashed worker's pid is taken by an unrelated process.
    pub pid_squat_per_mille: u32,
    /// Chance a new worker process gets a recycled pid.
    pub pid_reuse_per_mille: u32,
}

impl Faults {
    /// No faults at all; ordinary latency only.
    pub fn none(latency_max_ms: u64) -> Faults {
        Faults {
            crash_gap_ms: 0,
            restart_per_mille: 0,
            restart_delay_max_ms: 0,
            pause_gap_ms: 0,
            pause_max_ms: 0,
            throttle_gap_ms: 0,
            throttle_max_ms: 0,
            throttle_period_max_ms: 0,
            partition_gap_ms: 0,
            partition_max_ms: 0,
            clock_band_ms: 0,
            clock_extremes: false,
            clock_step_gap_ms: 0,
            drift_gap_ms: 0,
            drift_max_ms: 0,
            wall_step_gap_ms: 0,
            wall_step_max_ms: 0,
            call_fail_per_mille: 0,
            call_hang_per_mille: 0,
            call_late_per_mille: 0,
            call_slow_per_mille: 0,
            late_max_ms: 0,
            late_claims: false,
            hang_max_ms: 0,
            latency_max_ms,
            pid_squat_per_mille: 0,
            pid_reuse_per_mille: 0,
        }
    }

    /// Every fault on, sized against the stale window `S`: pauses, late
    /// answers and late arrivals up to three stale windows (claims' answers
    /// included), partitions up to two; clocks step and drift across the
    /// whole skew allowance `K`.
    pub fn standard(stale_after_ms: u64, skew_ms: u64) -> Faults {
        let s = stale_after_ms;
        Faults {
            crash_gap_ms: 6 * s,
            restart_per_mille: 700,
            restart_delay_max_ms: 2 * s,
            pause_gap_ms: 5 * s,
            pause_max_ms: 3 * s,
            throttle_gap_ms: 8 * s,
            throttle_max_ms: 3 * s,
            throttle_period_max_ms: 2 * s,
            partition_gap_ms: 5 * s,
            partition_max_ms: 2 * s,
            clock_band_ms: skew_ms,
            clock_extremes: false,
            clock_step_gap_ms: 3 * s,
            drift_gap_ms: s,
            drift_max_ms: (s / 60).max(1),
            wall_step_gap_ms: 0,
            wall_step_max_ms: 0,
            call_fail_per_mille: 20,
            call_hang_per_mille: 10,
            call_late_per_mille: 30,
            call_slow_per_mille: 20,
            late_max_ms: 3 * s,
            late_claims: true,
            hang_max_ms: 3 * s,
            latency_max_ms: 8,
            pid_squat_per_mille: 300,
            pid_reuse_per_mille: 300,
        }
    }
}

/// The work the workers are given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Items enqueued in all.
    pub items: u32,
    /// How long faults go on; then they stop and the system must finish.
    pub chaos_ms: u64,
    /// Longest short perform.
    pub work_short_max_ms: u64,
    /// Longest long perform (spans several renewals).
    pub work_long_max_ms: u64,
    /// Chance a perform is long.
    pub long_per_mille: u32,
    /// Chance a perform raises (the item is released for a retry).
    pub work_fail_per_mille: u32,
}

impl Workload {
    /// `items` items, half enqueued at once and half over the chaos window;
    /// performs of up to half a stale window, one in five up to 2.5 windows.
    pub fn standard(items: u32, stale_after_ms: u64) -> Workload {
        Workload {
            items,
            chaos_ms: 5 * stale_after_ms,
            work_short_max_ms: stale_after_ms / 2,
            work_long_max_ms: 5 * stale_after_ms / 2,
            long_per_mille: 200,
            work_fail_per_mille: 30,
        }
    }
}

/// The operator steering jobs by hand, as `leasehold cancel` / `retry` (and
/// the JS and dashboard equivalents) do, over the same store rules (see
/// [`super::store::Store::cancel`]): while the faults last it cancels a
/// random pending or running item every so often; after a short delay it
/// retries a cancelled item, or leaves it cancelled (finished by its
/// decision); a retried item that still waits may be cancelled again, then
/// retried or left again, and so on. The operator's clock is real time (a
/// retry is due at once unless a kept lease's end holds it back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operator {
    /// Mean gap between two cancels of a random pending or running item,
    /// over the whole run (0: no operator).
    pub cancel_gap_ms: u64,
    /// Longest delay before each next step (retry, cancel again).
    pub delay_max_ms: u64,
    /// Chance a cancelled item is retried (else it is left cancelled).
    pub retry_per_mille: u32,
    /// Chance a retried item is cancelled again, if it still waits then.
    pub again_per_mille: u32,
}

impl Operator {
    /// No operator.
    pub const OFF: Operator = Operator { cancel_gap_ms: 0, delay_max_ms: 0, retry_per_mille: 0, again_per_mille: 0 };

    /// About twenty cancels per run of the standard chaos window (one every
    /// `S / 4`); each next step within `S / 20`, so that a retry, a cancel
    /// again and a second retry often all land before the cancelled owner's
    /// next renewal (every `I = S / 4`) tells it; four cancels in five
    /// retried, seven retried items in ten cancelled again if they still
    /// wait.
    pub fn standard(stale_after_ms: u64) -> Operator {
        Operator { cancel_gap_ms: stale_after_ms / 4, delay_max_ms: stale_after_ms / 20, retry_per_mille: 800, again_per_mille: 700 }
    }
}

/// One simulation's whole setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimConfig {
    /// Worker processes (each runs one runner).
    pub workers: u8,
    /// Hosts the workers are spread over (worker `w` runs on host
    /// `w % hosts`); a claimant on the owner's host asks the pid probe, one
    /// on another host relies on the expired lease.
    pub hosts: u8,
    /// Lease and runner parameters.
    pub params: Params,
    /// Fault rates and sizes.
    pub faults: Faults,
    /// The work.
    pub workload: Workload,
    /// The operator's cancels and retries.
    pub operator: Operator,
    /// The broken variant under test, if any.
    pub mutation: Mutation,
    /// Whether `owner-stops-in-budget` is checked. Off, a run goes on past
    /// an owner that overran its budget, to see whether a peer actually
    /// takes the item over while it still believes (`exclusive-ownership`).
    pub budget_check: bool,
    /// The store lets a claimant re-claim a stale item recorded under its
    /// own incarnation, on the lease alone (on, as in the real stores'
    /// `judge_stale`; see [`super::store::own_reclaim_allowed`]).
    pub reclaim_own_stale: bool,
    /// The SQLite store's rule (on in every profile): a same-host owner the
    /// pid probe proved dead is also taken over once the claimant's watch
    /// has seen its lease unrenewed for longer than `S`, not only once the
    /// claimant's clock calls the lease stale. Without it, an owner whose
    /// clock read ahead of every claimant on its host (it started after the
    /// host's wall clock stepped back, or they before a step forward) keeps
    /// its item for the step after it died (see [`super::store`]).
    pub dead_owner_watched: bool,
}

impl SimConfig {
    /// The standard scenario: `workers` workers on up to two hosts, `items`
    /// items, [`Params::standard`], [`Faults::standard`], and the operator
    /// cancelling and retrying items ([`Operator::standard`]).
    pub fn standard(workers: u8, items: u32) -> SimConfig {
        let params = Params::standard();
        SimConfig {
            workers,
            hosts: workers.clamp(1, 2),
            params,
            faults: Faults::standard(params.stale_after_ms, params.skew_ms),
            workload: Workload::standard(items, params.stale_after_ms),
            operator: Operator::standard(params.stale_after_ms),
            mutation: Mutation::None,
            budget_check: true,
            reclaim_own_stale: true,
            dead_owner_watched: true,
        }
    }

    /// The validator-agreement scenario for `params`: three workers on three
    /// hosts whose clocks sit at the two edges of the full skew band
    /// `[0, K]` and jump from one to the other about once a stale window,
    /// zero latency, a claim every millisecond, and renewals that hang
    /// often, so owners lapse exactly at their bound and peers claim at the
    /// first millisecond their lease watch lets a lease go. A set on the
    /// edge of the relation `W + R + K ≤ S` survives it; one millisecond past
    /// the edge gives a counterexample.
    ///
    /// The jumps are what the `K` guards against: a claimant's watch times
    /// a lease on its monotonic clock from when the lease could first be
    /// read, so where clocks sit still `K` is never spent, and only an
    /// owner whose own clock steps back by `K` after stamping a renewal
    /// lapses `K` later than the stamp says.
    pub fn boundary(params: Params) -> SimConfig {
        let s = params.stale_after_ms;
        let mut faults = Faults::none(0);
        faults.clock_band_ms = params.skew_ms;
        faults.clock_extremes = true;
        faults.clock_step_gap_ms = s;
        faults.partition_gap_ms = 3 * s;
        faults.partition_max_ms = 2 * s;
        faults.call_hang_per_mille = 150;
        faults.hang_max_ms = s;
        SimConfig {
            workers: 3,
            hosts: 3,
            params,
            faults,
            workload: Workload {
                items: 12,
                chaos_ms: 20 * s,
                work_short_max_ms: s,
                work_long_max_ms: 3 * s,
                long_per_mille: 500,
                work_fail_per_mille: 0,
            },
            operator: Operator::OFF,
            mutation: Mutation::None,
            budget_check: true,
            reclaim_own_stale: true,
            dead_owner_watched: true,
        }
    }

    /// The boundary scenario's parameters: `S = 40`, `I = R = 10`, `K = 5`
    /// (so the runner's `W = 24` and `W + R + K = S − 1`), one claim per ms,
    /// one item at a time, 50 attempts.
    pub fn boundary_params() -> Params {
        Params {
            stale_after_ms: 40,
            heartbeat_every_ms: 10,
            skew_ms: 5,
            tolerance_ms: None,
            claim_interval_ms: 1,
            concurrency: 1,
            batch_limit: 4,
            max_attempts: 50,
            exit_grace_ms: 0,
        }
    }

    /// The reclaim scenario: `workers` workers on one host, no faults, a few
    /// items; every worker process gets a recycled pid when one is free, so
    /// the reclaim probe's crashed owner often comes back under its own old
    /// pid and only the start-time rule tells the two apart.
    pub fn reclaim(workers: u8) -> SimConfig {
        let params = Params::standard();
        let mut faults = Faults::none(8);
        faults.clock_band_ms = params.skew_ms / 2;
        faults.pid_reuse_per_mille = 1_000;
        SimConfig {
            workers,
            hosts: 1,
            params,
            faults,
            workload: Workload { items: 10, ..Workload::standard(10, params.stale_after_ms) },
            operator: Operator::OFF,
            mutation: Mutation::None,
            budget_check: true,
            reclaim_own_stale: true,
            dead_owner_watched: true,
        }
    }

    /// The throttled scenario: `workers` workers whose hosts are throttled
    /// most of the time (background tabs: timers fire on a period of up to
    /// one stale window) over a slow store (three calls in ten, claims
    /// included, reach it up to a stale window late), and long performs. Renewals land after a
    /// takeover and answer `false` while their owner still works: the case
    /// the fence answer exists for.
    pub fn throttled(workers: u8, items: u32) -> SimConfig {
        let params = Params::standard();
        let s = params.stale_after_ms;
        let mut faults = Faults::none(8);
        faults.clock_band_ms = params.skew_ms;
        faults.throttle_gap_ms = s;
        faults.throttle_max_ms = 3 * s;
        faults.throttle_period_max_ms = s;
        faults.call_slow_per_mille = 300;
        faults.late_max_ms = s;
        faults.late_claims = true;
        SimConfig {
            workers,
            hosts: workers.clamp(1, 2),
            params,
            faults,
            workload: Workload { long_per_mille: 800, ..Workload::standard(items, s) },
            operator: Operator::OFF,
            mutation: Mutation::None,
            budget_check: true,
            reclaim_own_stale: true,
            dead_owner_watched: true,
        }
    }

    /// The slow-exit scenario: the standard one whose stopped performs take
    /// up to `G = S / 6` to end (a command that traps SIGTERM and exits
    /// within the grace), given to the runner as its abort grace: the
    /// core's lease budget `W + I + K + G < S` lapses earlier by it.
    pub fn slow_exit(workers: u8, items: u32) -> SimConfig {
        let mut cfg = SimConfig::standard(workers, items);
        cfg.params.exit_grace_ms = cfg.params.stale_after_ms / 6;
        cfg
    }

    /// The clock-steps scenario: the standard one whose hosts' wall clocks
    /// also step by up to ten stale windows forward or back, about once a
    /// window per worker, and whose workers crash twice as often (a
    /// worker's clock shows a step only once its process restarts after
    /// it: see [`Faults::wall_step_gap_ms`]). A claimant started after a
    /// step forward reads every older worker's lease as long expired, and
    /// one started after a step back stamps leases that read so to every
    /// older worker: only each claimant's lease watch keeps it from taking
    /// a working owner's item over (`wall-clock-takeover` is caught here).
    pub fn clock_steps(workers: u8, items: u32) -> SimConfig {
        let mut cfg = SimConfig::standard(workers, items);
        let s = cfg.params.stale_after_ms;
        cfg.faults.wall_step_gap_ms = s;
        cfg.faults.wall_step_max_ms = 10 * s;
        cfg.faults.crash_gap_ms = 3 * s;
        cfg
    }

    /// The same scenario running a broken variant.
    pub fn with_mutation(self, mutation: Mutation) -> SimConfig {
        SimConfig { mutation, ..self }
    }
}
