//! Seed 000, items: each counted in exactly one of performed / failed /
//! claimLost; a failing item is isolated, logged, traced and backs off; a
//! lost claim never backs off; the outcome follows the `lost` flag; an item
//! the host found lost (`item_lost`) counts as a lost claim.

mod common;
use common::*;
use leasehold_core::event::Event;
use leasehold_core::runner::LogKind;

#[test]
fn a_failing_item_is_isolated_counted_logged_and_traced() {
    let perform: PerformFn = Box::new(|item| Reply::After(1, if item == 1 { Err("boom".into()) } else { Ok(()) }));
    let mut host = Host::new(options(1000.0, 30000.0), true, queue(4), perform);
    assert_eq!(host.tick(), report(4, 3, 1, 0));
    assert_eq!(host.logs, vec![(LogKind::WorkFailed, "boom".to_string())]);
    let failed: Vec<_> = host.events.iter().filter(|e| matches!(e, Event::ItemFailed { .. })).collect();
    assert_eq!(failed.len(), 1);
    assert!(matches!(failed[0], Event::ItemFailed { item: 1, error, .. } if error == "boom"));
}

#[test]
fn a_failing_item_backs_the_loop_off() {
    let mut opts = options(50.0, 3000.0);
    opts.backoff = Some(leasehold_core::job_backoff(50.0));
    let perform: PerformFn = Box::new(|_| Reply::After(0, Err("bad item".into())));
    let mut host = Host::new(opts, true, one_per_pass(), perform);
    for _ in 0..3 {
        assert_eq!(host.tick(), report(1, 0, 1, 0));
    }
    assert_eq!(host.next_delays(), vec![50, 100, 200]);
}

fn losing_host(perform: PerformFn) -> Host {
    // Renewals answer false: the claim is lost at the first beat (250 ms).
    let mut opts = options(1000.0, 3000.0);
    opts.heartbeat = true;
    opts.heartbeat_every_ms = Some(250.0);
    opts.backoff = Some(leasehold_core::job_backoff(1000.0));
    let heartbeat: RenewFn = Box::new(|_, _| Reply::After(0, Ok(false)));
    Host::with_heartbeat(opts, true, queue(1), perform, heartbeat)
}

#[test]
fn work_that_fails_after_its_claim_was_lost_counts_claim_lost_and_is_not_logged() {
    let mut host = losing_host(Box::new(|_| Reply::Never));
    host.abort_rejects_after = Some(5);
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert!(host.logs.is_empty());
    assert!(!host.events.iter().any(|e| matches!(e, Event::ItemFailed { .. })));
}

#[test]
fn a_lost_claim_never_backs_off() {
    let mut host = losing_host(Box::new(|_| Reply::Never));
    host.abort_rejects_after = Some(5);
    host.tick();
    assert_eq!(host.next_delays(), vec![1000]);
}

#[test]
fn work_that_completes_after_its_claim_was_lost_counts_performed() {
    // The seed decides by the flag, not the error: a stage that finished is
    // work performed even though the fence answered false while it settled.
    let mut host = losing_host(Box::new(|_| Reply::After(400, Ok(()))));
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert_eq!(host.aborts.len(), 1, "the signal was still aborted");
}

#[test]
fn every_item_is_counted_exactly_once() {
    let perform: PerformFn = Box::new(|item| Reply::After(item % 7, if item % 3 == 0 { Err("x".into()) } else { Ok(()) }));
    let mut opts = options(1000.0, 30000.0);
    opts.concurrency = Some(5.0);
    opts.batch_limit = Some(100.0);
    let mut host = Host::new(opts, false, queue(40), perform);
    let r = host.tick();
    assert_eq!(r.claimed, 40);
    assert_eq!(r.performed + r.failed + r.claim_lost, r.claimed);
    assert_eq!(r.failed, 14);
}

#[test]
fn a_perform_that_ignores_the_abort_is_dropped_after_the_grace_period() {
    let mut opts = options(1000.0, 3000.0);
    opts.heartbeat = true;
    opts.heartbeat_every_ms = Some(250.0);
    opts.abort_grace = leasehold_core::AbortGrace::Ms(250.0);
    let heartbeat: RenewFn = Box::new(|_, _| Reply::After(0, Ok(false)));
    let mut host = Host::with_heartbeat(opts, false, queue(1), Box::new(|_| Reply::Never), heartbeat);
    let start = host.now;
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert_eq!(host.aborts, vec![(0, false, start + 250)]);
    assert_eq!(host.dropped, vec![(0, start + 500)], "lost at 250 ms, dropped 250 ms later");
}

/// S = 3000, I = 250, K = 125, G = 250 (W = 2374: the exit deadline is 2874
/// ms after the last confirmed renewal), renewals confirming at once and a
/// perform that never ends nor heeds its signal, run for 1 s from the claim
/// at `t0` (answered).
fn working_a_second(drop_by_exit_deadline: bool) -> (Host, u64) {
    let mut opts = options(1000.0, 3000.0);
    opts.heartbeat = true;
    opts.heartbeat_every_ms = Some(250.0);
    opts.abort_grace = leasehold_core::AbortGrace::Ms(250.0);
    opts.drop_by_exit_deadline = drop_by_exit_deadline;
    let mut host = Host::with_heartbeat(opts, false, queue(1), Box::new(|_| Reply::Never), renew_true(0));
    let t0 = host.start();
    host.run_until(t0 + 1_000);
    assert_eq!((host.aborts.len(), host.dropped.len()), (0, 0));
    (host, t0)
}

// The host is frozen (time passes, no timer runs, no answer is delivered)
// from 1 000 ms, the renewal sent then confirmed: S = 3 s, G = 250 ms, so the
// lapse falls at 1 000 + 2 624 = 3 624 and the exit deadline at 3 874.

#[test]
fn a_lapse_decided_after_a_freeze_past_the_exit_deadline_drops_the_perform_at_once() {
    // Frozen 10 s: the lapse comes at the thaw, the grace spent during the
    // freeze. A perform that ignores its signal would otherwise work on
    // 250 ms past its exit deadline, beside a peer that may reclaim 125 ms
    // after it.
    let (mut host, t0) = working_a_second(true);
    host.freeze(10_000);
    host.run_until(t0 + 11_000);
    assert_eq!(host.aborts, vec![(0, true, t0 + 11_000)]);
    assert_eq!(host.dropped, vec![(0, t0 + 11_000)], "dropped with the lapse, not a grace later");
}

#[test]
fn a_lapse_decided_late_keeps_what_is_left_of_the_grace_before_the_exit_deadline() {
    // Frozen to 3 700: past the lapse, short of the exit deadline.
    let (mut host, t0) = working_a_second(true);
    host.freeze(2_700);
    host.run_until(t0 + 5_000);
    assert_eq!(host.aborts, vec![(0, true, t0 + 3_700)]);
    assert_eq!(host.dropped, vec![(0, t0 + 3_874)], "dropped at the exit deadline");
}

#[test]
fn a_guarded_perform_aborted_late_keeps_its_whole_grace() {
    // A host whose work a guard process ends by the deadline (the
    // command-line tool) reads how it ended, however late the abort: a
    // command that finished during the freeze is finished work.
    let (mut host, t0) = working_a_second(false);
    host.freeze(10_000);
    host.run_until(t0 + 12_000);
    assert_eq!(host.aborts, vec![(0, true, t0 + 11_000)]);
    assert_eq!(host.dropped, vec![(0, t0 + 11_250)], "dropped a grace after the abort");
}

#[test]
fn an_item_the_host_found_lost_counts_claim_lost_traced_once_not_logged_nor_backing_off() {
    let mut opts = options(1000.0, 30000.0);
    opts.backoff = Some(leasehold_core::job_backoff(1000.0));
    let perform: PerformFn = Box::new(|item| Reply::After(1, if item == 1 { Err(LOST.into()) } else { Ok(()) }));
    let mut host = Host::new(opts, true, queue(3), perform);
    assert_eq!(host.tick(), report(3, 2, 0, 1));
    assert!(host.logs.is_empty());
    let lost: Vec<_> = host.events.iter().filter(|e| matches!(e, Event::ClaimLost { .. })).collect();
    assert_eq!(lost.len(), 1);
    assert!(matches!(lost[0], Event::ClaimLost { item: 1, lapsed: false, unconfirmed_ms: 0, .. }));
    assert!(!host.events.iter().any(|e| matches!(e, Event::Performed { item: 1, .. } | Event::ItemFailed { .. })));
    assert_eq!(host.next_delays(), vec![1000]);
}

#[test]
fn an_item_lost_after_its_claim_was_lost_is_counted_and_traced_once() {
    // The renewal at 250 ms loses the claim; the perform then answers that it
    // found the job lost too (its write was refused).
    let mut host = losing_host(Box::new(|_| Reply::After(400, Err(LOST.into()))));
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert_eq!(host.events.iter().filter(|e| matches!(e, Event::ClaimLost { .. })).count(), 1);
    assert!(host.logs.is_empty());
}
