//! Seed 000, a pass: claim attempts bounded by batchLimit, nothing-to-claim
//! ends the pass for every worker, a raising claim ends it and backs off,
//! claims serialized at every concurrency, pool = min(concurrency, batchLimit).

mod common;
use common::*;
use leasehold_core::event::Event;
use leasehold_core::options::OptionsInput;
use leasehold_core::runner::LogKind;

/// The default options (1 s interval, 30 s stale window) with these
/// `batchLimit` and `concurrency`.
fn pool(batch_limit: Option<f64>, concurrency: Option<f64>) -> OptionsInput {
    OptionsInput { batch_limit, concurrency, ..options(1000.0, 30000.0) }
}

#[test]
fn empty_queue_answers_an_idle_report_after_one_claim() {
    let mut host = Host::new(options(1000.0, 30000.0), true, queue(0), perform_ok(0));
    assert_eq!(host.tick(), report(0, 0, 0, 0));
    assert_eq!(host.claims.len(), 1);
    assert!(host.events.is_empty(), "a pass that claimed nothing emits nothing");
}

#[test]
fn one_pass_claims_until_nothing_is_left() {
    let mut host = Host::new(options(1000.0, 30000.0), true, queue(5), perform_ok(0));
    assert_eq!(host.tick(), report(5, 5, 0, 0));
    assert_eq!(host.claims.len(), 6);
    let order: Vec<u64> = host.performed.iter().map(|(i, _)| *i).collect();
    assert_eq!(order, vec![0, 1, 2, 3, 4]);
}

#[test]
fn batch_limit_bounds_claim_attempts_whatever_they_answer() {
    let mut host = Host::new(pool(Some(10.0), None), false, queue(100), perform_ok(0));
    assert_eq!(host.tick().claimed, 10);
    assert_eq!(host.claims.len(), 10);

    let mut host = Host::new(pool(Some(3.0), None), false, queue(2), perform_ok(0));
    host.tick();
    assert_eq!(host.claims.len(), 3, "the empty answer counts as an attempt");
}

#[test]
fn default_batch_limit_is_25() {
    let mut host = Host::new(options(1000.0, 30000.0), false, queue(100), perform_ok(0));
    assert_eq!(host.tick().claimed, 25);
}

#[test]
fn nothing_to_claim_ends_the_pass_for_every_worker() {
    let mut host = Host::new(pool(None, Some(8.0)), false, queue(3), perform_ok(50));
    assert_eq!(host.tick(), report(3, 3, 0, 0));
    // Three items, then one empty answer: the other workers never claim again.
    assert_eq!(host.claims.len(), 4);
}

#[test]
fn a_raising_claim_ends_the_pass_keeps_what_was_done_and_is_logged_and_traced() {
    let mut host = Host::new(pool(Some(10.0), None), true, claim_raising_at(3, 0, "db down"), perform_ok(0));
    assert_eq!(host.tick(), report(2, 2, 0, 0));
    assert_eq!(host.claims.len(), 3);
    assert_eq!(host.logs, vec![(LogKind::ClaimFailed, "db down".to_string())]);
    assert!(host.events.iter().any(|e| matches!(e, Event::ClaimFailed { error, .. } if error == "db down")));
    assert_eq!(host.runner.next_delay_ms(), 1000, "no backoff configured: the plain interval");
}

#[test]
fn claims_stay_serialized_at_every_concurrency() {
    let mut next = 0;
    let claim: ClaimFn = Box::new(move |_| {
        next += 1;
        Reply::After(1, Ok((next <= 30).then_some(next)))
    });
    let mut host = Host::new(pool(Some(50.0), Some(16.0)), false, claim, perform_ok(3));
    assert_eq!(host.tick().performed, 30);
    assert_eq!(host.max_claims_in_flight, 1);
    assert!(host.max_performing > 1, "items overlap while claims are serialized");
}

#[test]
fn concurrency_bounds_items_performed_at_once() {
    for (requested, expected) in [(1.0, 1), (4.0, 4), (2.9, 2), (0.0, 1), (-3.0, 1), (f64::NAN, 1), (f64::INFINITY, 1), (100.0, 64)] {
        let mut host = Host::new(pool(Some(200.0), Some(requested)), false, queue(100), perform_ok(2));
        assert_eq!(host.tick().performed, 100);
        assert_eq!(host.max_performing, expected, "concurrency {requested}");
    }
}

#[test]
fn the_pool_is_no_larger_than_the_batch_limit() {
    let host = Host::new(pool(Some(3.0), Some(16.0)), false, queue(100), perform_ok(2));
    assert_eq!(host.runner.config().pool_size(), 3);
}

#[test]
fn a_raising_claim_with_workers_waiting_still_ends_the_pass() {
    // Seed: "a raising link in the claim chain must not leave the other
    // workers waiting forever". Items take long, so every worker waits on
    // the chain when the claim raises.
    let mut host = Host::new(pool(None, Some(8.0)), false, claim_raising_at(4, 1, "refused"), perform_ok(100));
    assert_eq!(host.tick(), report(3, 3, 0, 0));
    assert!(host.runner.pass_in_flight().is_none());
}
