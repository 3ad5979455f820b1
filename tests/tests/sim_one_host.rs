//! One host, pid liveness: the store gap the simulator found (a claim that
//! landed but whose answer was lost stranded its item under a live owner) and
//! the rule that closes it, now in the real stores (`Store::judge_stale`): a
//! claimant re-claims a stale job recorded under its own incarnation on the
//! lease alone. Replay: `sim --replay SEED --hosts 1`.
#![cfg(not(target_arch = "wasm32"))]

use leasehold_tests::sim::{run_seeds, Invariant, SimConfig};

fn assert_clean(cfg: &SimConfig, seeds: u64) {
    let summary = run_seeds(0, seeds, cfg, 1);
    if let Some(failure) = summary.failures.first() {
        panic!("seed {}: {}", failure.seed, failure.violation.as_ref().expect("a violation"));
    }
}

/// With every worker on one host, a claim that landed but whose answer was
/// lost leaves the item running under a live owner that does not know it;
/// peers' pid probe answers "alive", so without the own-reclaim rule nobody
/// can take it back and the item is never settled. Replay: `sim --replay
/// SEED --hosts 1 --no-reclaim-own-stale`.
#[test]
fn without_the_own_reclaim_rule_one_host_strands_an_item() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.hosts = 1;
    cfg.reclaim_own_stale = false;
    let summary = run_seeds(0, 200, &cfg, 1);
    let failure = summary.failures.first().expect("a seed strands an item without the rule");
    let violation = failure.violation.as_ref().expect("a violation");
    assert_eq!(violation.invariant, Invariant::AllSettled, "seed {}: {violation}", failure.seed);
}

/// The store rule that closes the gap above: a claimant may re-claim a
/// stale item recorded under its own incarnation (same nonce), on the lease
/// alone, since its own supervision lapsed any work on that lease before it
/// went stale. Under it one host settles every item, and every invariant
/// holds (an owner that re-claims its own item while stalled is checked like
/// any takeover). Replay: `sim --replay SEED --hosts 1`.
#[test]
fn one_host_settles_every_item_when_an_owner_may_reclaim_its_own_stale_item() {
    let mut cfg = SimConfig::standard(4, 100);
    cfg.hosts = 1;
    cfg.reclaim_own_stale = true;
    assert_clean(&cfg, if cfg!(debug_assertions) { 50 } else { 500 });
}
