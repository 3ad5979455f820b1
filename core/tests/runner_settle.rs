//! The settle phase (our addition to seed 000): an outcome a perform reached
//! is written until the store answers; only a refused fence throws it away.
//! With S = 3000, I = 250, a 500 ms abort grace: K = 125, W = 3000 − 250 −
//! 125 − 500 − 1 = 2124; hanging renewals lapse the claim at 2374 after it,
//! and a perform that ignores its signal is dropped at 2874.

mod common;
use common::*;
use leasehold_core::event::Event;
use leasehold_core::runner::{LogKind, SettleAnswer};

fn hb_options() -> leasehold_core::OptionsInput {
    let mut opts = options(1000.0, 3000.0);
    opts.heartbeat = true;
    opts.heartbeat_every_ms = Some(250.0);
    opts.abort_grace = leasehold_core::AbortGrace::Ms(500.0);
    opts
}

/// Settles find the store unavailable until `t0 + until`, then `then`.
fn settle_from(t0: u64, until: u64, then: SettleAnswer<String>) -> SettleFn {
    Box::new(move |_, now| {
        if now < t0 + until {
            Reply::After(5, SettleAnswer::Unavailable("database is locked".into()))
        } else {
            Reply::After(5, then.clone())
        }
    })
}

/// One item under hb_options(), performed by `perform` while renewals answer `renew`; its
/// settles find the store unavailable until `until` ms after the start, then `then`.
/// Answers the host and the start `t0`.
fn settling_host(events: bool, perform: PerformFn, renew: RenewFn, until: u64, then: SettleAnswer<String>) -> (Host, u64) {
    let host = Host::with_heartbeat(hb_options(), events, queue(1), perform, renew);
    let t0 = host.now;
    (host.settling(settle_from(t0, until, then), release_ok()), t0)
}

fn release_ok() -> ReleaseFn {
    Box::new(|_| Reply::After(10, Ok(())))
}

fn settle_logs(host: &Host) -> usize {
    host.logs.iter().filter(|(kind, _)| *kind == LogKind::SettleFailed).count()
}

#[test]
fn an_outcome_reached_while_renewals_fail_keeps_settling_until_it_lands() {
    let renew: RenewFn = Box::new(|_, _| Reply::After(1, Err("down".into())));
    let (mut host, t0) = settling_host(true, perform_ok(500), renew, 8_000, SettleAnswer::Landed);
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert!(host.settles.len() > 5, "tried again and again: {:?}", host.settles);
    assert!(host.settles.last().unwrap().1 >= t0 + 8_000, "it landed once the store answered");
    assert!(host.aborts.is_empty() && host.dropped.is_empty(), "finished work is neither aborted nor dropped");
    assert_eq!(settle_logs(&host), host.settles.len() - 1);
    assert!(host.events.iter().any(|e| matches!(e, Event::Performed { item: 0, .. })));
    assert!(!host.events.iter().any(|e| matches!(e, Event::ClaimLost { .. })));
}

#[test]
fn settles_are_tried_again_after_the_core_backoff() {
    let (mut host, _) = settling_host(false, perform_ok(0), renew_true(1), 5_000, SettleAnswer::Landed);
    host.tick();
    let gaps: Vec<u64> = host.settles.windows(2).map(|w| w[1].1 - w[0].1).collect();
    // Each answer takes 5 ms; the wait after it is 100 ms doubling to 1.5 s.
    assert_eq!(gaps[..6], [105, 205, 405, 805, 1505, 1505]);
}

#[test]
fn a_lapse_during_settling_drops_nothing() {
    // Renewals hang: supervision lapses at 2374, while the outcome reached
    // at 100 is still settling; the grace (500) would drop it at 2874.
    let (mut host, t0) = settling_host(true, perform_ok(100), Box::new(|_, _| Reply::Never), 6_000, SettleAnswer::Landed);
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert!(host.aborts.is_empty(), "nothing to abort: the work is over");
    assert!(host.dropped.is_empty(), "a settling item is never dropped");
    assert!(host.settles.last().unwrap().1 >= t0 + 6_000);
}

#[test]
fn an_outcome_reached_within_the_grace_after_a_lapse_is_settled() {
    // The lapse aborts at 2374; the perform ignores its signal and resolves
    // at 2600, inside the grace: its outcome settles, and lands.
    let (mut host, t0) = settling_host(true, perform_ok(2_600), Box::new(|_, _| Reply::Never), 4_000, SettleAnswer::Landed);
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert_eq!(host.aborts, vec![(0, true, t0 + 2_374)]);
    assert!(host.dropped.is_empty());
}

#[test]
fn a_refused_fence_ends_the_settle_as_a_lost_claim() {
    let (mut host, _) = settling_host(true, perform_ok(100), renew_true(1), 400, SettleAnswer::FenceRefused);
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    let lost: Vec<_> = host.events.iter().filter(|e| matches!(e, Event::ClaimLost { .. })).collect();
    assert!(matches!(lost[..], [Event::ClaimLost { item: 0, lapsed: false, .. }]), "{lost:?}");
    assert!(!host.events.iter().any(|e| matches!(e, Event::Performed { .. })));
    let tries = host.settles.len();
    host.run_until(host.now + 10_000);
    assert_eq!(host.settles.len(), tries, "nothing is tried after the refusal");
}

#[test]
fn a_raised_outcome_that_lands_counts_failed_once() {
    let perform: PerformFn = Box::new(|_| Reply::After(10, Err("exit code 3".into())));
    let (mut host, _) = settling_host(true, perform, renew_true(1), 300, SettleAnswer::Landed);
    assert_eq!(host.tick(), report(1, 0, 1, 0));
    let failed: Vec<_> = host.logs.iter().filter(|(kind, _)| *kind == LogKind::WorkFailed).collect();
    assert_eq!(failed, vec![&(LogKind::WorkFailed, "exit code 3".to_string())]);
}

#[test]
fn a_perform_that_observed_its_signal_settles_nothing() {
    // Renewals answer false: the claim is lost, the perform stops.
    let renew_false: RenewFn = Box::new(|_, _| Reply::After(1, Ok(false)));
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), Box::new(|_| Reply::Never), renew_false)
        .settling(settle_from(0, 0, SettleAnswer::Landed), release_ok());
    host.abort_rejects_after = Some(10);
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert!(host.settles.is_empty());
}

#[test]
fn dispose_waits_for_a_settling_item_and_a_second_dispose_changes_nothing() {
    let (mut host, t0) = settling_host(false, perform_ok(50), renew_true(1), 7_000, SettleAnswer::Landed);
    host.runner.start(leasehold_core::Millis(t0));
    host.run_until(t0 + 1_000);
    let pass = host.runner.dispose().expect("the pass is in flight");
    assert_eq!(host.runner.dispose(), None, "a second dispose answers at once, as the seed's");
    host.runner.stop();
    host.run_until(t0 + 6_900);
    assert_eq!(host.report_of(pass), None, "the pass waits for the settle");
    host.run_until(t0 + 10_000);
    assert_eq!(host.report_of(pass), Some(report(1, 1, 0, 0)));
    assert!(host.settles.last().unwrap().1 >= t0 + 7_000);
}

#[test]
fn a_claim_heard_after_its_write_tolerance_is_released_at_once() {
    // The claim answers 3000 ms after it was made: past W = 2124.
    let claim = one_item(7, 3_000, 0);
    let host = Host::with_heartbeat(hb_options(), true, claim, perform_ok(10), renew_true(1));
    let t0 = host.now;
    let mut host = host.settling(settle_from(t0, 0, SettleAnswer::Landed), release_ok());
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert_eq!(host.releases, vec![(7, t0 + 3_000)]);
    assert!(host.performed.is_empty());
    assert_eq!(host.claims, vec![t0, t0 + 3_010], "the worker claims again once the release answered");
}

#[test]
fn without_the_settle_phase_a_late_claim_is_not_released() {
    let claim = one_item(7, 3_000, 0);
    let mut host = Host::with_heartbeat(hb_options(), true, claim, perform_ok(10), renew_true(1));
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert!(host.releases.is_empty());
}
