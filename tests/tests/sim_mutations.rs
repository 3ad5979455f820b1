//! The mutation check (issue 8): each deliberately broken variant is caught
//! by some seed within the CI budget, by the invariant its defect breaks.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, Invariant, Mutation, SimConfig};

/// Seeds each variant may take; every one is caught within a few dozen.
const BUDGET: u64 = 500;

fn caught(mutation: Mutation, expected: &[Invariant]) {
    caught_in(SimConfig::standard(4, 100), mutation, expected);
}

fn caught_in(cfg: SimConfig, mutation: Mutation, expected: &[Invariant]) {
    let cfg = cfg.with_mutation(mutation);
    let summary = run_seeds(0, BUDGET, &cfg, 1);
    let failure = summary
        .failures
        .first()
        .unwrap_or_else(|| panic!("{} was not caught in {BUDGET} seeds", mutation.name()));
    let violation = failure.violation.as_ref().expect("a failure has a violation");
    assert!(
        expected.contains(&violation.invariant),
        "{} was caught by seed {}, but by {} instead of one of {:?}",
        mutation.name(),
        failure.seed,
        violation,
        expected
    );
}

#[test]
fn tolerance_measured_from_reply_arrival_is_caught() {
    caught(Mutation::ToleranceFromReply, &[Invariant::OwnerStopsInBudget, Invariant::ExclusiveOwnership]);
}

#[test]
fn eperm_read_as_dead_is_caught() {
    caught(Mutation::EpermAsDead, &[Invariant::PidEvidenceTrue, Invariant::ExclusiveOwnership]);
}

#[test]
fn fence_answer_ignored_is_caught() {
    // A renewal answers `false` to a working owner where renewals reach the
    // store late: throttled hosts over a slow store (elsewhere the owner has
    // lapsed long before a peer takes over, and a `false` reaches only
    // owners settling their outcome, which the fence decides anyway).
    caught_in(
        SimConfig::throttled(4, 100),
        Mutation::FenceIgnored,
        &[Invariant::OwnerStopsInBudget, Invariant::ExclusiveOwnership, Invariant::NoSettleAfterLost],
    );
}

#[test]
fn lapse_deadline_removed_is_caught() {
    caught(Mutation::NoLapseDeadline, &[Invariant::OwnerStopsInBudget, Invariant::ExclusiveOwnership]);
}

#[test]
fn unfenced_store_is_caught() {
    caught(Mutation::UnfencedStore, &[Invariant::FenceMonotonic, Invariant::SettledExactlyOnce]);
}

#[test]
fn a_dropped_confirmation_is_caught_as_an_interrupted_renewing_owner() {
    caught(Mutation::ConfirmationDropped, &[Invariant::RenewingOwnerNotInterrupted]);
}

#[test]
fn a_guard_that_ignores_its_exit_deadline_is_caught_by_work_running_beside_its_successor() {
    // A paused worker neither renews nor aborts: only the guard's deadline
    // ends its work before a peer takes the item over.
    caught(Mutation::GuardDeadlineOff, &[Invariant::ExecutionsExclusive]);
}

#[test]
fn a_grace_outside_the_lease_budget_is_caught_by_work_still_ending_when_its_successor_starts() {
    caught_in(SimConfig::slow_exit(4, 100), Mutation::GraceOutsideBudget, &[Invariant::ExecutionsExclusive]);
}

#[test]
fn a_settle_dropped_when_the_store_does_not_answer_is_caught_by_the_finished_work_run_again() {
    caught(Mutation::SettleDropped, &[Invariant::FinishedWorkKept]);
}

#[test]
fn a_cancel_that_drops_the_kept_lease_end_is_caught_by_a_retry_started_beside_the_first_attempt() {
    // The operator cancels a running item, retries it (due at the cancelled
    // attempt's lease end), cancels it again while it waits and retries it
    // again: with the end dropped a peer starts it at once, while the first
    // owner works on until its next renewal is refused (before ba01e5c).
    caught(Mutation::CancelDropsLeaseEnd, &[Invariant::ExclusiveOwnership, Invariant::ExecutionsExclusive]);
}

#[test]
fn a_takeover_by_the_wall_clock_alone_is_caught_where_wall_clocks_step() {
    // A worker started after its host's wall clock stepped forward reads
    // every older worker's lease as long expired (or one started after a
    // step back stamps leases that read so): without the lease watch it
    // takes items over from owners still working (`sim_clock_steps.rs`
    // has the figures).
    caught_in(
        SimConfig::clock_steps(4, 100),
        Mutation::WallClockTakeover,
        &[Invariant::ExclusiveOwnership, Invariant::ExecutionsExclusive],
    );
}

#[test]
fn every_broken_variant_has_its_check_here() {
    // A new `Mutation` joins `BROKEN` and gets a test above that requires
    // it caught; this count is the reminder.
    assert_eq!(Mutation::BROKEN.len(), 12, "a mutation was added or removed: add or remove its test in this file");
}

#[test]
fn fence_answer_ignored_leads_to_a_settle_after_the_lost_answer() {
    // Beyond the first violation: with the budget check off, the ignored
    // `false` lets the work run on and settle. Supervision lapses an owner
    // before any peer can take its lease over unless its timers are held
    // back, so a throttled owner over a slow store is the surest way to get
    // a renewal landing after the takeover. (The operator's cancels, which
    // refuse renewals at any time, now expose it in the standard profile
    // too: seed 2.)
    let mut cfg = SimConfig::throttled(4, 100).with_mutation(Mutation::FenceIgnored);
    cfg.budget_check = false;
    let summary = run_seeds(0, BUDGET, &cfg, 0);
    assert!(
        summary
            .failures
            .iter()
            .any(|f| f.violation.as_ref().is_some_and(|v| v.invariant == Invariant::NoSettleAfterLost)),
        "no seed of {BUDGET} showed a settle after a lost renewal"
    );
}

#[test]
fn pid_start_time_ignored_is_caught_by_the_reclaim_bound() {
    // One host, recycled pids: the crashed owner often comes back under its
    // own old pid, and only the start time says the old owner is gone.
    let cfg = SimConfig::reclaim(3).with_mutation(Mutation::StartTimeIgnored);
    let summary = run_seeds(0, 50, &cfg, 1);
    let failure = summary.failures.first().expect("start-time-ignored was not caught in 50 seeds");
    assert_eq!(failure.violation.as_ref().map(|v| v.invariant), Some(Invariant::DeadOwnerReclaimed));
}
