//! Known defects the simulator found in the current core and store rules,
//! each reproducible. They are `#[ignore]`d so CI stays green until the
//! owners of that code decide the fix; run them with
//! `cargo test -p leasehold-tests --release --test sim_known_defects -- --ignored`
//! (each fails today with a replayable seed). Once fixed, drop the
//! `#[ignore]` and fold the switch into the standard profile.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, SimConfig};

fn assert_clean(cfg: &SimConfig, seeds: u64) {
    let summary = run_seeds(0, seeds, cfg, 1);
    if let Some(failure) = summary.failures.first() {
        panic!("seed {}: {}", failure.seed, failure.violation.as_ref().expect("a violation"));
    }
}

/// The runner performs a claim whose answer arrives after the lease's budget
/// (`claim_at + S − K`): another worker may hold the item by then. Replay:
/// `sim --replay 0 --late-claims`. A fix: at `claim_found`, a claim heard
/// past its budget is not performed (counted `claimLost`).
#[test]
#[ignore = "known core defect: a claim answered late is performed past its lease"]
fn a_claim_answered_late_is_not_performed_past_its_lease() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.faults.late_claims = true;
    assert_clean(&cfg, 200);
}

/// Supervision bounds the reconfirmation by `now + R` where it *handled*
/// the deadline, not `deadline + R` (issue 2's wording): a clock that steps
/// forward at the deadline and back during the reconfirmation lapses up to
/// `K` too late. Replay: `sim --replay 1685 --full-skew-band`.
#[test]
#[ignore = "known core defect: the reconfirm bound is measured from the handled time on a stepping clock"]
fn clock_steps_across_the_whole_skew_allowance_keep_the_budget() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.faults.clock_band_ms = cfg.params.skew_ms;
    assert_clean(&cfg, 20_000);
}

/// With every worker on one host, a claim that landed but whose answer was
/// lost leaves the item running under a live owner that does not know it:
/// peers' pid probe answers "alive", and the steal rules refuse the owner
/// itself (`ClaimantIsOwner`), so the item is never settled. Replay:
/// `sim --replay 0 --hosts 1`.
#[test]
#[ignore = "known design gap: pid liveness strands an item whose claim answer was lost"]
fn one_host_settles_every_item_once_faults_stop() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.hosts = 1;
    assert_clean(&cfg, 200);
}
