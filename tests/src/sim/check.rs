//! The invariants, stated precisely, and the pure predicates the world
//! checks them with on every step.
//!
//! # The model the statements are made in
//!
//! Time is simulated real time in ms. Every worker process reads one
//! clock: its host's wall clock as it read when the process started,
//! carried on at real pace (the native runner's clock: the system time
//! read once, then the monotonic clock), plus an offset that stays in the
//! skew band `[0, K]` (drift and steps move it inside the band). The first
//! part, the process's *anchor* `A`, is real time's distance from that
//! wall clock reading: 0 until a profile steps hosts' wall clocks
//! ([`super::config::Faults::wall_step_gap_ms`]), then anything up to the
//! steps' bound, different for two processes started either side of a
//! step, and fixed while the process lives. A lease stamp `T` is a reading
//! of its owner's clock when it sent the claim or renewal, at real time
//! `send(T)`, so `T − A − K ≤ send(T) ≤ T − A`. The statements below are
//! made on `T − A`, which the checker knows and no worker does.
//!
//! A claimant takes a lease over as the native SQLite store does (see
//! [`super::store`]): an owner on another host only once the claimant's
//! lease watch (the core's `LeaseWatch`) has seen that very lease, its
//! token and stamp, unrenewed for more than `S` on the claimant's monotonic
//! clock, which runs at real pace; an owner on the claimant's host only once
//! the pid probe finds it dead, and its work with it. The lease stamped `T`
//! can be read only once its renewal landed, after `send(T)`, so no
//! takeover of it lands before real time
//! `send(T) + S + 1 ≥ T − A + S + 1 − K`, whatever the claimant's clock
//! reads and however far its anchor lies from the owner's. A retry of an
//! item cancelled while it ran is held to the cancelled lease the same way.
//!
//! # Why that keeps two owners apart without reading another's clock
//!
//! The owner of a lease stamped `T` decides on its own clock alone: its
//! runner lapses the work by its clock's `T + W` (a reconfirmation by `R`
//! more), and its guard ends the work by the exit deadline; the lease
//! policy's `W + R + K + G < S` puts all of it before its clock reads
//! `T + S − K`. Its clock moves by at most `K` against real time plus its
//! fixed anchor while it holds the lease (the band), so it has stopped by
//! real `send(T) + S`, one ms before the earliest takeover above, unless it
//! was stalled. A renewal confirmed meanwhile changes the stamp: the
//! owner's deadline and every claimant's watch start again from it. No step
//! reads one worker's clock against another's, so neither statement needs
//! the two to agree: a claimant started after its host's wall clock stepped
//! hours forward reads every older owner's lease as long expired, and one
//! started after a step back stamps leases that read so to every older
//! claimant, and neither takes a lease over any sooner. The stalled owner
//! stays the one overlap a lease cannot prevent (excused below, and fenced
//! in the store).
//!
//! Where a wall clock still decides, it can only delay: an owner re-claims
//! its own stale lease on its own clock (one process, one anchor), and a
//! same-host owner the pid probe found dead, whose work died with it, is
//! taken over once the claimant's clock calls its lease stale.
//!
//! A worker **believes it owns** an item from the moment the claim's answer
//! reaches it until its runner aborts the item, the item settles in its
//! runner, or the worker crashes. A belief "at real ms `t`" means at any
//! moment of that millisecond (the lease policy: "so the two never share a
//! millisecond").
//!
//! A worker is **stalled** while it is paused (stop-the-world: nothing runs)
//! or throttled (timers fire late). A stalled owner cannot decide on time;
//! that is the one overlap a lease cannot prevent and the reason fencing
//! tokens exist.
//!
//! # The invariants
//!
//! - [`Invariant::OwnerStopsInBudget`]: a believer whose last confirmed stamp
//!   is `T` (the `at` of the last renewal the store confirmed and the worker
//!   heard of, or its claim's `at`; `A` its clock's anchor) believes at real
//!   ms `t` only if `t + K ≤ T − A + S` — so `t ≤ send(T) + S`, before any
//!   claimant's watch could let its lease go — unless it is *excused*: stalled now, or its last stall ended at
//!   `e ≥ T + W − K` (it was stalled when its deadline could have fallen) and
//!   `t ≤ e + R + K` (after a stall it gets one reconfirmation, bounded by
//!   `R` on a clock that may step by up to `K`).
//! - [`Invariant::ExclusiveOwnership`]: two workers believe they own the same
//!   item at the same real ms only when the older belief is excused (as
//!   above) and the newer one took the item with `lease-expired` evidence: a
//!   claimant on the owner's host asks the pid probe, which must never find
//!   a live (even paused) owner dead.
//! - [`Invariant::FenceMonotonic`]: the store never lands a renewal, settle or
//!   release with a token below the item's current (highest issued) one.
//! - [`Invariant::NoSettleAfterLost`]: after a renewal answered `false` reaches
//!   a worker while its runner still supervises the lease, that worker sends
//!   no settle for that claim. (An answer heard after the supervision lapsed
//!   is ignored by the runner, as the core's settle phase documents: a worker
//!   paused while its work finished lapses on resuming, keeps the outcome,
//!   and the settle's fence decides. The operator's cancels, which refuse
//!   renewals at any time, made that order common.)
//! - [`Invariant::SettledExactlyOnce`]: at most one settle lands per item, ever.
//! - [`Invariant::AllSettled`]: once faults stop, every item enqueued ends
//!   settled or dead-lettered within the calm budget.
//! - [`Invariant::DeadOwnerReclaimed`]: after the faults stop, an owner
//!   crashed while holding an item (the reclaim probe) has the item
//!   re-claimed by another process within `S + I + claim interval` of the
//!   crash. (With wall clocks that stepped, on one host, the stores break
//!   it: see the `sim` module docs, "Clock steps".)
//! - [`Invariant::LateClaimNotPerformed`]: a claim whose answer reaches the
//!   claimant when its clock reads `at + W` or later (`at`: the claim's
//!   stamp) is not performed: its write tolerance was spent before the
//!   worker even knew it held the lease, so nothing could have kept it (the
//!   runner declines it, counted `claimLost`; the host drops the item and
//!   the lease goes stale for a peer).
//! - [`Invariant::RenewingOwnerNotInterrupted`]: a *renewing* owner is never
//!   interrupted on its item. Renewing: its claim was heard within `W` of
//!   its `at` (a claim heard later is never performed, above), every
//!   renewal since was confirmed by the store and heard of within
//!   `G = min(W, R) − K − 1` ms of being sent, none is older than `G` and
//!   unanswered, and its host ran the runner's timers on time since the
//!   last confirmed stamp (see [`timers_on_time`]). A stalled host sends its
//!   renewals late however fast the store answers, and a lapse is then the
//!   supervision working, not an interruption.
//! - [`Invariant::PidEvidenceTrue`]: a takeover justified by
//!   `same-host-pid-dead` happens only when the owner's process is dead.
//! - [`Invariant::ExecutionsExclusive`]: no two executions of one item
//!   overlap in real time, exit latency included (see
//!   [`super::exit`]): the work of a stalled worker runs on, and stopped
//!   work takes up to the exit grace to end; the guard's exit deadline and
//!   the budget `W + R + K + G < S` must end it before any peer's starts.
//! - [`Invariant::FinishedWorkKept`]: a perform that finished with a result
//!   to keep, whose fence still holds, is recorded and never performed
//!   again: its item is claimed again only by a peer that took its lease
//!   over (the late settle is then refused by the fence), never handed back
//!   or re-claimed by its own worker while the outcome waits.
//! - [`Invariant::DeterministicTrace`]: the same seed gives the same trace
//!   hash (checked by running a seed twice, and against golden hashes that
//!   native and wasm32 share).

use core::fmt;

/// One invariant (see the module docs for each statement).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Invariant {
    /// Two believers overlap beyond what the lease policy allows.
    ExclusiveOwnership,
    /// An owner believes past its lease budget without a stall to excuse it.
    OwnerStopsInBudget,
    /// A fenced write landed with a token below the current one.
    FenceMonotonic,
    /// A settle was sent after a renewal answered lost.
    NoSettleAfterLost,
    /// An item was settled twice.
    SettledExactlyOnce,
    /// An item was neither settled nor dead-lettered once faults stopped.
    AllSettled,
    /// A dead owner's item was not reclaimed within `S + I + claim interval`.
    DeadOwnerReclaimed,
    /// A claim heard past its write tolerance was performed.
    LateClaimNotPerformed,
    /// An owner whose renewals succeeded was interrupted.
    RenewingOwnerNotInterrupted,
    /// `same-host-pid-dead` evidence about a live owner was accepted.
    PidEvidenceTrue,
    /// The same seed gave two different traces.
    DeterministicTrace,
    /// Two executions of one item ran at the same time.
    ExecutionsExclusive,
    /// Finished work whose fence still held was not recorded, and was
    /// performed again.
    FinishedWorkKept,
}

impl Invariant {
    /// The name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::ExclusiveOwnership => "exclusive-ownership",
            Invariant::OwnerStopsInBudget => "owner-stops-in-budget",
            Invariant::FenceMonotonic => "fence-monotonic",
            Invariant::NoSettleAfterLost => "no-settle-after-lost",
            Invariant::SettledExactlyOnce => "settled-exactly-once",
            Invariant::AllSettled => "all-settled",
            Invariant::DeadOwnerReclaimed => "dead-owner-reclaimed",
            Invariant::LateClaimNotPerformed => "late-claim-not-performed",
            Invariant::RenewingOwnerNotInterrupted => "renewing-owner-not-interrupted",
            Invariant::PidEvidenceTrue => "pid-evidence-true",
            Invariant::DeterministicTrace => "deterministic-trace",
            Invariant::ExecutionsExclusive => "executions-exclusive",
            Invariant::FinishedWorkKept => "finished-work-kept",
        }
    }
}

/// One broken invariant, where and when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Which.
    pub invariant: Invariant,
    /// Simulated real time (ms).
    pub time: u64,
    /// The item concerned, if one is.
    pub item: Option<u32>,
    /// The workers concerned.
    pub workers: Vec<u8>,
    /// What exactly was seen.
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at t={}", self.invariant.name(), self.time)?;
        if let Some(item) = self.item {
            write!(f, " item {item}")?;
        }
        if !self.workers.is_empty() {
            write!(f, " workers {:?}", self.workers)?;
        }
        write!(f, ": {}", self.detail)
    }
}

/// The spans the checks need, in ms: `S`, `K`, `W`, `R`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spans {
    /// `S`.
    pub stale_after: u64,
    /// `K` (the skew band's width).
    pub skew: u64,
    /// `W`.
    pub tolerance: u64,
    /// `R`.
    pub reconfirm: u64,
}

/// What the checks know about one worker's stalls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stall {
    /// Paused or throttled now.
    pub now: bool,
    /// When its last stall ended (real ms; 0: never stalled).
    pub last_end: u64,
}

/// Whether a believer with confirmed stamp `stamp` (`T − A`: on its clock,
/// less its anchor) is still inside its budget at real ms `t`:
/// `t + K ≤ T − A + S`.
pub fn in_budget(spans: Spans, stamp: u64, t: u64) -> bool {
    t + spans.skew <= stamp + spans.stale_after
}

/// Whether a believer with confirmed stamp `stamp` (`T − A`) is excused at
/// real ms `t` by a stall (see the module docs).
pub fn excused(spans: Spans, stamp: u64, stall: Stall, t: u64) -> bool {
    if stall.now {
        return true;
    }
    let deadline_earliest = (stamp + spans.tolerance).saturating_sub(spans.skew);
    stall.last_end > 0 && stall.last_end >= deadline_earliest && t <= stall.last_end + spans.reconfirm + spans.skew
}

/// Whether a claim stamped `at` and heard when the claimant's clock read
/// `heard` may be performed: heard before its write tolerance `W` ran out.
pub fn claim_heard_in_time(spans: Spans, at: u64, heard: u64) -> bool {
    heard.saturating_sub(at) < spans.tolerance
}

/// Whether a host ran its runner's timers on time since an owner's last
/// confirmed stamp `stamp` (`T − A`: on its clock, less its anchor): no
/// timer ran late because of a stall at or after real ms `stamp − K` (the
/// earliest the stamp's renewal can have been sent). `late_timer` is the
/// real ms the host last ran a timer late (0: never).
pub fn timers_on_time(spans: Spans, stamp: u64, late_timer: u64) -> bool {
    late_timer == 0 || late_timer + spans.skew < stamp
}

/// `G = min(W, R) − K − 1`: a renewal heard of within `G` ms of being sent
/// counts as succeeding promptly; `None` when no renewal can be that fast.
pub fn prompt_bound(spans: Spans) -> Option<u64> {
    spans.tolerance.min(spans.reconfirm).checked_sub(spans.skew + 1).filter(|g| *g > 0)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    const SPANS: Spans = Spans { stale_after: 600, skew: 75, tolerance: 375, reconfirm: 150 };

    #[test]
    fn the_budget_ends_once_a_fast_clock_could_call_the_lease_stale() {
        assert!(in_budget(SPANS, 1_000, 1_525));
        assert!(!in_budget(SPANS, 1_000, 1_526));
    }

    #[test]
    fn a_stall_excuses_only_when_it_covered_the_deadline_and_for_one_reconfirmation() {
        let ended = |last_end| Stall { now: false, last_end };
        assert!(excused(SPANS, 1_000, Stall { now: true, last_end: 0 }, 9_999));
        // The stall ended before the deadline could fall: no excuse.
        assert!(!excused(SPANS, 1_000, ended(1_299), 1_400));
        // It ended after: excused for R + K after it ended.
        assert!(excused(SPANS, 1_000, ended(2_000), 2_225));
        assert!(!excused(SPANS, 1_000, ended(2_000), 2_226));
        assert!(!excused(SPANS, 1_000, Stall::default(), 1_600));
    }

    #[test]
    fn a_claim_may_be_performed_only_when_heard_before_its_write_tolerance_ran_out() {
        assert!(claim_heard_in_time(SPANS, 1_000, 1_000));
        assert!(claim_heard_in_time(SPANS, 1_000, 1_374));
        assert!(!claim_heard_in_time(SPANS, 1_000, 1_375));
    }

    #[test]
    fn only_a_timer_run_late_after_the_stamp_could_be_sent_excuses_a_lapse() {
        assert!(timers_on_time(SPANS, 1_000, 0));
        assert!(timers_on_time(SPANS, 1_000, 924));
        assert!(!timers_on_time(SPANS, 1_000, 925));
        assert!(!timers_on_time(SPANS, 1_000, 1_400));
    }

    #[test]
    fn prompt_bound_leaves_room_for_skew() {
        assert_eq!(prompt_bound(SPANS), Some(74));
        assert_eq!(prompt_bound(Spans { reconfirm: 76, ..SPANS }), None);
    }
}
