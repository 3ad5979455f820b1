//! The simulator's invariants hold for the correct system across many seeds
//! (issue 8: "CI runs at least 1,000 seeds natively"). Run in release (the
//! CI script runs `cargo test -p leasehold-tests --release`); a debug build
//! runs a tenth of the seeds so `cargo test` stays quick.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, Operator, SimConfig, Summary};

const SEEDS: u64 = if cfg!(debug_assertions) { 200 } else { 2_000 };

fn assert_clean(summary: &Summary) {
    if let Some(failure) = summary.failures.first() {
        panic!(
            "{} of {} seeds broke an invariant; first: seed {}: {}",
            summary.failures.len(),
            summary.seeds,
            failure.seed,
            failure.violation.as_ref().expect("a failure has a violation")
        );
    }
}

#[test]
fn four_workers_and_a_hundred_items_keep_every_invariant_under_every_fault() {
    let summary = run_seeds(0, SEEDS, &SimConfig::standard(4, 100), 1);
    assert_clean(&summary);
    assert_eq!(summary.seeds, SEEDS);
    // The faults really happened: takeovers, lapses, crashes, stalls,
    // overlaps the lease policy allows (stalled owners), and claims heard
    // too late to perform. (A renewal answered `false` reaches an owner
    // still working only where renewals reach the store late: the throttled
    // scenario below; here owners lapse first, and a `false` finds them
    // settling, where the fence decides, unless the operator cancelled the
    // item under them.)
    let [settled, _, steals, lapses, _, crashes, stalls, excused, declined, cancels, retries, left, _] = summary.totals;
    // Every item ends settled or left cancelled by the operator (finished
    // by its decision), the probe item too.
    assert!(settled + left >= 101 * SEEDS - SEEDS / 10, "items settled {settled}, left cancelled {left}");
    for (what, count) in
        [
            ("steals", steals),
            ("lapses", lapses),
            ("crashes", crashes),
            ("stalls", stalls),
            ("excused overlaps", excused),
            ("declined claims", declined),
            ("cancels", cancels),
            ("retries", retries),
        ]
    {
        assert!(count > SEEDS / 10, "too few {what} to mean anything: {count}");
    }
}

#[test]
fn work_that_takes_up_to_the_grace_to_end_never_runs_beside_its_successor() {
    let summary = run_seeds(30_000, SEEDS / 2, &SimConfig::slow_exit(4, 100), 1);
    assert_clean(&summary);
    let [_, _, steals, lapses, ..] = summary.totals;
    assert!(steals > SEEDS / 10 && lapses > SEEDS / 10, "steals {steals}, lapses {lapses}");
}

#[test]
fn two_workers_keep_every_invariant() {
    assert_clean(&run_seeds(10_000, SEEDS / 2, &SimConfig::standard(2, 40), 1));
}

#[test]
fn eight_workers_at_concurrency_four_keep_every_invariant() {
    let mut cfg = SimConfig::standard(8, 150);
    cfg.params.concurrency = 4;
    assert_clean(&run_seeds(20_000, SEEDS / 4, &cfg, 1));
}

#[test]
fn three_hosts_and_one_item_at_a_time_keep_every_invariant() {
    let mut cfg = SimConfig::standard(6, 60);
    cfg.hosts = 3;
    cfg.params.concurrency = 1;
    assert_clean(&run_seeds(30_000, SEEDS / 4, &cfg, 1));
}

#[test]
fn a_dead_owners_item_is_reclaimed_within_stale_after_plus_an_interval_plus_the_claim_interval() {
    // Every seed ends with the reclaim probe: the owner of a fresh item
    // crashes while renewing, and the item must be re-claimed in the bound.
    // One host and recycled pids make the pid probe decide every takeover.
    let summary = run_seeds(40_000, SEEDS / 4, &SimConfig::reclaim(3), 1);
    assert_clean(&summary);
    let [_, _, steals, _, _, crashes, ..] = summary.totals;
    assert_eq!(crashes, SEEDS / 4, "one probe crash per seed");
    assert!(steals >= SEEDS / 4, "every probe item taken over: {steals} takeovers");
}

#[test]
fn throttled_hosts_over_a_slow_store_keep_every_invariant() {
    // Renewals land after takeovers and answer `false` while their owners
    // still work: the lost fence must stop them. (Rarer since takeovers
    // wait for the claimant's lease watch: a throttled claimant looks at the
    // leases only when its timers let it claim, so it takes them over later
    // than its wall clock would have: 19 lost fences in these 500 seeds, 45
    // by the wall clock.)
    let summary = run_seeds(50_000, SEEDS / 4, &SimConfig::throttled(4, 60), 1);
    assert_clean(&summary);
    let [_, _, steals, _, losses, ..] = summary.totals;
    assert!(steals > SEEDS / 4 && losses > SEEDS / 200, "takeovers {steals}, lost fences {losses}");
}

#[test]
fn the_operators_retries_wait_for_the_cancelled_attempts_lease_end_at_the_boundary() {
    // The boundary scenario (clocks at the two edges of the skew band,
    // jumping between them, a claim every ms, owners lapsing exactly at
    // their bound) with the operator cancelling and retrying about once a
    // stale window: a retry is due at the cancelled attempt's lease end, and
    // the owner's budget ends one ms before a clock `K` ahead reads it. (A
    // retry due one ms earlier broke an invariant in about 2% of these seeds
    // while claims judged the due time alone; now that a claimant also waits
    // for its watch of the cancelled lease, it breaks none: checked by hand,
    // not kept as a mutation.)
    let mut cfg = SimConfig::boundary(SimConfig::boundary_params());
    let s = cfg.params.stale_after_ms;
    cfg.operator = Operator { cancel_gap_ms: s, delay_max_ms: s / 20, ..Operator::standard(s) };
    let summary = run_seeds(80_000, SEEDS, &cfg, 1);
    assert_clean(&summary);
    let [_, _, _, _, _, _, _, _, _, cancels, retries, ..] = summary.totals;
    assert!(cancels > SEEDS && retries > SEEDS, "cancels {cancels}, retries {retries}");
}

#[test]
fn wall_clocks_stepping_far_beyond_the_skew_allowance_keep_every_invariant() {
    // Hosts' wall clocks step by up to ten stale windows, forward and back;
    // a worker started after a step reads its clock that far from the older
    // workers' (and stamps its leases so). Each claimant's lease watch, on
    // its own monotonic clock, decides every takeover across such a step.
    let summary = run_seeds(90_000, SEEDS, &SimConfig::clock_steps(4, 100), 1);
    assert_clean(&summary);
    let [_, _, steals, _, _, crashes, .., across] = summary.totals;
    assert!(steals > SEEDS && crashes > SEEDS, "takeovers {steals}, crashes {crashes}");
    assert!(across > SEEDS, "too few takeovers across a wall-clock step to mean anything: {across}");
}
