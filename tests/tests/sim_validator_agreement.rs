//! The option validator and the simulator agree (issue 8): parameter sets
//! the validator accepts survive many seeds, and a set one millisecond
//! outside the documented relation produces a counterexample.
//!
//! The relation: with a heartbeat, the runner takes the write tolerance
//! `W = S − I − K − G − 1` (the lease policy's `W + I + K + G < S`, strict;
//! `G = 0` here, as in JS), i.e. `W + R + K = S − 1` with `R = I`: the
//! owner's decision falls more than `K` before the stale cutoff. The store's
//! staleness is strict too (stale when more than `S` old), so the validator
//! keeps one millisecond to spare: `W + 1` still survives, and `W + 2` is
//! the first set outside.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, Invariant, Params, SimConfig, Summary};

const SEEDS: u64 = if cfg!(debug_assertions) { 100 } else { 1_000 };

fn first_invariant(summary: &Summary) -> Option<Invariant> {
    summary.failures.first().and_then(|f| f.violation.as_ref()).map(|v| v.invariant)
}

#[test]
fn parameter_sets_the_validator_accepts_survive_many_seeds() {
    let sets = [(600, 150, 75), (600, 100, 50), (450, 150, 75), (600, 200, 150), (600, 150, 10), (900, 299, 1)];
    for (stale_after_ms, heartbeat_every_ms, skew_ms) in sets {
        let params = Params { stale_after_ms, heartbeat_every_ms, skew_ms, ..Params::standard() };
        params.config().expect("the validator accepts this set");
        let mut cfg = SimConfig::standard(4, 60);
        cfg.params = params;
        cfg.faults = leasehold_tests::sim::Faults::standard(stale_after_ms, skew_ms);
        cfg.workload = leasehold_tests::sim::Workload::standard(60, stale_after_ms);
        let summary = run_seeds(50_000, SEEDS / 4, &cfg, 1);
        assert_eq!(first_invariant(&summary), None, "S={stale_after_ms} I={heartbeat_every_ms} K={skew_ms}: {:?}", summary.failures.first().map(|f| (f.seed, f.violation.clone())));
    }
}

#[test]
fn the_set_on_the_edge_of_the_relation_survives_the_boundary_scenario() {
    let params = SimConfig::boundary_params();
    let lease = params.lease();
    // W + R + K with the reconfirmation bound R = I.
    assert_eq!(lease.write_tolerance_ms + lease.heartbeat_interval_ms + lease.skew_allowance_ms, params.stale_after_ms - 1);
    let summary = run_seeds(0, 2 * SEEDS, &SimConfig::boundary(params), 1);
    assert_eq!(first_invariant(&summary), None, "{:?}", summary.failures.first().map(|f| (f.seed, f.violation.clone())));
    // The millisecond the strict relation keeps to spare: the equality
    // W + R + K = S is still safe against a strict staleness check.
    let mut spare = SimConfig::boundary_params();
    spare.tolerance_ms = Some(lease.write_tolerance_ms + 1);
    let summary = run_seeds(0, SEEDS, &SimConfig::boundary(spare), 1);
    assert_eq!(first_invariant(&summary), None, "{:?}", summary.failures.first().map(|f| (f.seed, f.violation.clone())));
}

#[test]
fn one_millisecond_past_the_equality_breaks_the_owners_budget() {
    let mut params = SimConfig::boundary_params();
    params.tolerance_ms = Some(params.lease().write_tolerance_ms + 2);
    let summary = run_seeds(0, SEEDS, &SimConfig::boundary(params), 1);
    assert_eq!(first_invariant(&summary), Some(Invariant::OwnerStopsInBudget));
}

#[test]
fn one_millisecond_past_the_equality_lets_a_peer_take_over_while_the_owner_still_works() {
    // Not just a budget overrun: a real second owner in the same millisecond.
    let mut params = SimConfig::boundary_params();
    params.tolerance_ms = Some(params.lease().write_tolerance_ms + 2);
    let mut cfg = SimConfig::boundary(params);
    cfg.budget_check = false;
    let summary = run_seeds(0, 2 * SEEDS, &cfg, 1);
    assert_eq!(first_invariant(&summary), Some(Invariant::ExclusiveOwnership));
    // And the edge itself shows no such overlap either.
    cfg.params.tolerance_ms = None;
    assert_eq!(first_invariant(&run_seeds(0, 2 * SEEDS, &cfg, 1)), None);
}
