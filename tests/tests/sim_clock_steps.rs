//! Wall clocks that step far beyond the skew allowance (the `sim` module
//! docs, "Clock steps"; the profile `SimConfig::clock_steps`): a worker
//! started after its host's clock stepped reads its clock seconds away from
//! the older workers'. Each claimant's lease watch (the core's `LeaseWatch`,
//! timed on its own monotonic clock) keeps it from taking over an item whose
//! owner still works; with the watch timing leases from their stamps on the
//! claimant's clock instead (`wall-clock-takeover`, the stores before the
//! watch) the same seeds find two workers on one item at once.
//!
//! Replay: `sim --profile clock-steps --replay SEED [--mutation
//! wall-clock-takeover]`.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, Invariant, Mutation, SimConfig, Summary};

/// Seeds each side runs.
const SEEDS: u64 = if cfg!(debug_assertions) { 50 } else { 500 };

fn first_failure(summary: &Summary) -> Option<String> {
    summary.failures.first().map(|f| format!("seed {}: {}", f.seed, f.violation.as_ref().expect("a failure has a violation")))
}

#[test]
fn without_the_watch_a_worker_whose_clock_stepped_takes_items_from_working_owners_in_almost_every_seed() {
    let cfg = SimConfig::clock_steps(4, 100).with_mutation(Mutation::WallClockTakeover);
    let summary = run_seeds(0, SEEDS, &cfg, 0);
    let first = summary.failures.first().expect("no seed caught the wall-clock takeover");
    // Seed 0 already: at t=2181 ms w1 takes item 26 over from w2, which
    // claimed it 12 ms before and started 20 ms before on a host whose wall
    // clock had stepped 6 s back, so that its fresh lease read 6 s old on
    // w1's clock; w2 works on until its next renewal is refused.
    assert_eq!(first.seed, 0, "{:?}", first_failure(&summary));
    // 494 of 500.
    assert!(summary.failures.len() as u64 > SEEDS * 9 / 10, "only {} of {SEEDS} seeds caught it", summary.failures.len());
    for failure in &summary.failures {
        let violation = failure.violation.as_ref().expect("a failure has a violation");
        assert!(
            matches!(violation.invariant, Invariant::ExclusiveOwnership | Invariant::ExecutionsExclusive),
            "seed {} broke {violation} rather than showing two workers on one item",
            failure.seed
        );
    }
}

#[test]
fn with_the_watch_the_same_seeds_keep_every_invariant() {
    let summary = run_seeds(0, SEEDS, &SimConfig::clock_steps(4, 100), 1);
    assert_eq!(first_failure(&summary), None);
    let across = summary.totals[12];
    assert!(across > SEEDS, "too few takeovers across a wall-clock step to mean anything: {across}");
}

#[test]
fn the_wall_clock_alone_was_safe_while_every_clock_stayed_in_the_skew_band() {
    // The standard profile: clocks step and drift inside `K` only. Only
    // steps beyond it expose the takeover by the wall clock.
    let cfg = SimConfig::standard(4, 100).with_mutation(Mutation::WallClockTakeover);
    assert_eq!(first_failure(&run_seeds(0, SEEDS, &cfg, 1)), None);
}

/// What the profile found in the SQLite store, now closed there: without
/// [`SimConfig::dead_owner_watched`], on one host a dead owner is taken over
/// on the pid probe's proof, and the takeover still waits for the claimant's
/// clock to call the lease stale. A process started after the host's wall
/// clock stepped back (or claimants started before a step forward) stamps
/// leases that read that far in the future to the others, so its item stays
/// with it for the step after it dies. The profile must keep finding it
/// with the rule off. Replay: `sim --profile clock-steps --hosts 1
/// --no-watch-dead-owners --replay 5`.
#[test]
fn on_one_host_a_dead_owner_whose_clock_read_ahead_keeps_its_item_for_the_step() {
    let mut cfg = SimConfig::clock_steps(4, 100);
    cfg.hosts = 1;
    cfg.dead_owner_watched = false;
    let summary = run_seeds(0, SEEDS, &cfg, 1);
    let failure = summary.failures.first().expect("no seed showed the stranded item");
    let violation = failure.violation.as_ref().expect("a failure has a violation");
    assert_eq!((failure.seed, violation.invariant), (5, Invariant::DeadOwnerReclaimed), "{violation}");
}

/// The rule (`SimConfig::dead_owner_watched`, on as in the SQLite store):
/// the claimant's watch may let a proven-gone owner's lease go too, as it
/// may any other owner's. One host then reclaims in the bound.
#[test]
fn when_the_watch_may_let_a_dead_owners_lease_go_too_one_host_reclaims_it_in_the_bound() {
    let mut cfg = SimConfig::clock_steps(4, 100);
    cfg.hosts = 1;
    cfg.dead_owner_watched = true;
    assert_eq!(first_failure(&run_seeds(0, SEEDS, &cfg, 1)), None);
}
