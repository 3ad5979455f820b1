//! Regressions for the core defects this simulator found, now fixed in the
//! core (see the `sim` module docs): each scenario is the standard one with
//! the fault that exposed the defect turned up, so it bites more often than
//! in the standard profile (which also runs both faults).
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, SimConfig, Summary};

const SEEDS: u64 = if cfg!(debug_assertions) { 100 } else { 1_000 };

fn assert_clean(summary: &Summary) {
    if let Some(failure) = summary.failures.first() {
        panic!("seed {}: {}", failure.seed, failure.violation.as_ref().expect("a failure has a violation"));
    }
}

/// Defect 1: the runner performed a claim whose answer arrived after the
/// lease's budget, while another worker might hold the item. Now a claim
/// heard past its write tolerance `W` is declined (`claimLost`), and the
/// world checks that none is performed (`late-claim-not-performed`).
#[test]
fn a_claim_heard_past_its_write_tolerance_is_declined_and_never_performed() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.faults.call_late_per_mille = 150;
    cfg.faults.call_slow_per_mille = 100;
    let summary = run_seeds(60_000, SEEDS / 2, &cfg, 1);
    assert_clean(&summary);
    let declined = summary.totals[8];
    assert!(declined > SEEDS, "only {declined} claims were heard too late to perform");
}

/// Defect 2: the reconfirm bound was `now + R` from whenever the deadline
/// was handled, so a clock that stepped forward at the deadline and back
/// during the reconfirmation lapsed up to `K` too late. Now it is
/// `deadline + R`. Clocks here sit at the edges of the whole skew band and
/// step often.
#[test]
fn clock_steps_across_the_whole_skew_allowance_keep_the_budget() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.faults.clock_band_ms = cfg.params.skew_ms;
    cfg.faults.clock_extremes = true;
    cfg.faults.clock_step_gap_ms = cfg.params.stale_after_ms / 2;
    assert_clean(&run_seeds(70_000, SEEDS, &cfg, 1));
}
