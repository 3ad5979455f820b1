//! Queue scheduling: a worker pool on a job queue as one runner. A free slot
//! claims as soon as work may be there, idle slots poll in turns (one claim
//! per interval for the whole pool), claim failures pause the pool with the
//! backoff and one probe, item failures back nothing off, and a pass is a
//! busy period.

mod common;
use common::*;
use leasehold_core::backoff::{recovery_backoff, RECOVERY_PROBE_MAX_MS};
use leasehold_core::event::Event;
use leasehold_core::options::{OptionsInput, Scheduling};
use leasehold_core::runner::{LogKind, Ticket};
use leasehold_core::Millis;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

/// Queue scheduling, idle polls every `interval_ms`, `concurrency` slots.
fn queue_options(interval_ms: f64, concurrency: f64) -> OptionsInput {
    OptionsInput { concurrency: Some(concurrency), scheduling: Scheduling::Queue, ..options(interval_ms, 30_000.0) }
}

/// A queue the test fills while the runner works: each claim takes the front.
fn shared_queue() -> (Rc<RefCell<VecDeque<u64>>>, ClaimFn) {
    let jobs = Rc::new(RefCell::new(VecDeque::new()));
    let claim_from = Rc::clone(&jobs);
    (jobs, Box::new(move |_| Reply::After(1, Ok(claim_from.borrow_mut().pop_front()))))
}

/// Claims that raise while `failing` holds, and otherwise find nothing.
fn failing_claims(failing: Rc<Cell<bool>>) -> ClaimFn {
    Box::new(move |_| Reply::After(0, if failing.get() { Err("db down".into()) } else { Ok(None) }))
}

/// A started pool of `concurrency` slots whose claims raise while the flag
/// answered holds (it does at first), backing off with the recovery backoff
/// from 500 ms; with the start instant.
fn failing_pool(concurrency: f64) -> (Rc<Cell<bool>>, Host, u64) {
    let failing = Rc::new(Cell::new(true));
    let mut opts = queue_options(500.0, concurrency);
    opts.backoff = Some(recovery_backoff(500.0));
    let mut host = Host::new(opts, true, failing_claims(Rc::clone(&failing)), perform_ok(0));
    let t0 = host.start();
    (failing, host, t0)
}

fn claims_between(host: &Host, from: u64, to: u64) -> usize {
    host.claims.iter().filter(|&&at| at >= from && at < to).count()
}

#[test]
fn a_free_slot_takes_work_that_arrives_while_another_slot_runs_a_long_item() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().push_back(1);
    // Item 1 runs for a minute; the idle poll is an hour away.
    let perform: PerformFn = Box::new(|item| Reply::After(if item == 1 { 60_000 } else { 10 }, Ok(())));
    let mut host = Host::new(queue_options(3_600_000.0, 2.0), false, claim, perform);
    let t0 = host.start();
    host.run_until(t0 + 1_000);
    assert_eq!(host.performed.len(), 1, "item 1 runs; the queue answered nothing after it");
    jobs.borrow_mut().push_back(2);
    host.runner.wake(Millis(host.now));
    host.run_until(t0 + 2_000);
    let started: Vec<u64> = host.performed.iter().map(|(item, _)| *item).collect();
    assert_eq!(started, vec![1, 2], "the free slot claimed item 2 while item 1 still ran");
    assert_eq!(host.performed[1].1, t0 + 1_001, "at once, one claim's latency after the wake");
}

#[test]
fn under_passes_the_same_wake_waits_for_the_long_item() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().push_back(1);
    let perform: PerformFn = Box::new(|item| Reply::After(if item == 1 { 60_000 } else { 10 }, Ok(())));
    let mut opts = queue_options(3_600_000.0, 2.0);
    opts.scheduling = Scheduling::Passes;
    let mut host = Host::new(opts, false, claim, perform);
    let t0 = host.start();
    host.run_until(t0 + 1_000);
    jobs.borrow_mut().push_back(2);
    host.runner.wake(Millis(host.now));
    host.run_until(t0 + 2_000);
    assert_eq!(host.performed.len(), 1, "the pass drained at the first empty claim: item 2 waits for item 1");
}

#[test]
fn idle_slots_poll_once_per_interval_for_the_whole_pool_and_trace_nothing() {
    let mut host = Host::new(queue_options(500.0, 16.0), true, queue(0), perform_ok(0));
    let t0 = host.start();
    host.run_until(t0 + 10_000);
    // The claim at the start, then one every 500 ms: 16 idle slots poll as
    // often as one.
    assert_eq!(host.claims.len(), 21);
    assert!(host.claims.windows(2).all(|w| w[1] - w[0] == 500), "{:?}", host.claims);
    assert_eq!(host.max_claims_in_flight, 1);
    assert_eq!(host.ended.len(), 21, "each poll that found nothing is a pass of its own");
    assert!(host.events.is_empty(), "and traces nothing: {:?}", host.types());
}

#[test]
fn busy_slots_do_not_poll_and_a_slot_that_frees_claims_at_once() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().extend([1, 2, 3]);
    let mut host = Host::new(queue_options(500.0, 2.0), false, claim, perform_ok(5_000));
    let t0 = host.start();
    host.run_until(t0 + 4_000);
    assert_eq!(host.claims.len(), 2, "two claims filled both slots; none while both are busy");
    host.run_until(t0 + 5_002);
    assert_eq!(host.performed.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(host.performed[2].1, t0 + 5_002, "the slot freed at 5 001 claimed item 3 at once");
}

#[test]
fn a_burst_fills_every_free_slot_one_claim_after_another() {
    let (jobs, claim) = shared_queue();
    let mut host = Host::new(queue_options(60_000.0, 4.0), false, claim, perform_ok(1_000));
    let t0 = host.start();
    host.run_until(t0 + 100);
    jobs.borrow_mut().extend(1..=6);
    host.runner.wake(Millis(host.now));
    host.run_until(t0 + 200);
    assert_eq!(host.max_performing, 4, "four slots, four items at once");
    assert_eq!(host.max_claims_in_flight, 1, "claims stay serialized");
    host.run_until(t0 + 3_000);
    assert_eq!(host.performed.len(), 6);
}

#[test]
fn failed_claims_pause_the_pool_doubling_to_the_recovery_cap_then_one_probe_each() {
    let (failing, mut host, t0) = failing_pool(8.0);
    host.run_until(t0 + 5_999);
    let cap = RECOVERY_PROBE_MAX_MS as u64;
    let expected: Vec<u64> = [0, 500, 1_500, 1_500 + cap, 1_500 + 2 * cap].iter().map(|d| t0 + d).collect();
    assert_eq!(host.claims, expected, "0.5 s, 1 s, then the 1.5 s cap: one claim for 8 slots each time");
    assert_eq!(host.logs.iter().filter(|(kind, _)| *kind == LogKind::ClaimFailed).count(), expected.len());
    failing.set(false);
    host.run_until(t0 + 6_000 + cap);
    let answered = *host.claims.last().unwrap();
    host.run_until(answered + 1_000);
    assert_eq!(claims_between(&host, answered + 1, answered + 1_001), 2, "answered: idle polls every 500 ms again");
}

#[test]
fn wakes_wait_for_the_pause_after_a_failed_claim_and_a_tick_does_not() {
    let (_failing, mut host, t0) = failing_pool(4.0);
    host.run_until(t0 + 100);
    for _ in 0..10 {
        host.runner.wake(Millis(host.now));
    }
    host.run_until(t0 + 499);
    assert_eq!(host.claims, vec![t0], "a reconnecting listener's wakes do not each hit a failing store");
    host.run_until(t0 + 500);
    assert_eq!(host.claims, vec![t0, t0 + 500], "the wakes' claim is the one probe at the pause's end");
    let before = host.claims.len();
    let Ticket::Pass(_) = host.runner.tick(Millis(host.now)) else { panic!("not disposed") };
    host.run_until(host.now);
    assert_eq!(host.claims.len(), before + 1, "an explicit tick claims at once");
}

#[test]
fn item_failures_do_not_back_off() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().extend([1, 2, 3]);
    let perform: PerformFn = Box::new(|_| Reply::After(10, Err("exit code 1".into())));
    let mut opts = queue_options(500.0, 1.0);
    opts.backoff = Some(recovery_backoff(500.0));
    let mut host = Host::new(opts, true, claim, perform);
    let t0 = host.start();
    host.run_until(t0 + 100);
    let starts: Vec<u64> = host.performed.iter().map(|(_, at)| at - t0).collect();
    assert_eq!(starts, vec![1, 12, 23], "each failed item's slot claimed the next one at once");
    assert_eq!(host.logs.iter().filter(|(kind, _)| *kind == LogKind::WorkFailed).count(), 3);
    assert_eq!(host.runner.next_delay_ms(), 500, "no backoff: the next idle poll is an interval away");
    host.run_until(t0 + 1_100);
    assert_eq!(claims_between(&host, t0 + 100, t0 + 1_100), 2);
}

#[test]
fn a_pass_is_a_busy_period_unbounded_by_the_batch_limit() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().extend(1..=5);
    let mut opts = queue_options(500.0, 2.0);
    opts.batch_limit = Some(2.0);
    let mut host = Host::new(opts, true, claim, perform_ok(100));
    assert_eq!(host.runner.config().pool_size(), 2, "the batch limit does not shrink the pool");
    assert_eq!(host.tick(), report(5, 5, 0, 0), "one busy period: every item, until the queue answered nothing");
    // Five that found an item, the one that found nothing while item 5
    // ran, and the one item 5's freed slot made.
    assert_eq!(host.claims.len(), 7);
    let types = host.types();
    assert_eq!(types.iter().filter(|t| **t == "pass-start").count(), 1);
    assert_eq!(types.iter().filter(|t| **t == "pass-end").count(), 1);
    assert_eq!(host.next_delays(), vec![500], "pass-end says when the next idle poll is due");
}

#[test]
fn tick_joins_the_busy_period_in_flight() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().extend([1, 2]);
    let mut host = Host::new(queue_options(500.0, 1.0), false, claim, perform_ok(100));
    let a = host.runner.tick(Millis(host.now));
    host.run_until(host.now + 50);
    let b = host.runner.tick(Millis(host.now));
    assert_eq!(a, b);
    host.run_until(host.now + 1_000);
    assert_eq!(host.ended.len(), 1);
    assert_eq!(host.ended[0].1, report(2, 2, 0, 0));
}

#[test]
fn stop_ends_the_claims_and_quiesce_waits_for_the_items_in_flight() {
    let (jobs, claim) = shared_queue();
    jobs.borrow_mut().extend(1..=10);
    let mut host = Host::new(queue_options(500.0, 2.0), false, claim, perform_ok(1_000));
    let t0 = host.start();
    host.run_until(t0 + 500);
    let pass = host.runner.quiesce().expect("a busy period is in flight");
    host.run_until(t0 + 10_000);
    assert_eq!(host.performed.len(), 2, "the two items in flight ran; their slots claimed no more");
    assert_eq!(host.report_of(pass), Some(report(2, 2, 0, 0)), "the busy period ended with its items");
    assert_eq!(host.claims.len(), 2, "no idle poll after the stop");
    host.runner.wake(Millis(host.now));
    host.run_until(host.now + 100);
    assert_eq!(host.performed.len(), 4, "a wake claims again");
}

#[test]
fn a_claim_heard_after_its_write_tolerance_frees_its_slot_for_the_next_claim() {
    let mut opts = queue_options(500.0, 1.0);
    opts.stale_after_ms = 3_000.0;
    opts.heartbeat = true;
    opts.heartbeat_every_ms = Some(1_000.0);
    let mut n = 0;
    // The first claim answers after 1.5 s, past W = 3000 − 1000 − 500 − 1.
    let claim: ClaimFn = Box::new(move |_| {
        n += 1;
        match n {
            1 => Reply::After(1_500, Ok(Some(1))),
            2 => Reply::After(0, Ok(Some(2))),
            _ => Reply::After(0, Ok(None)),
        }
    });
    let mut host = Host::with_heartbeat(opts, true, claim, perform_ok(10), renew_true(1));
    assert_eq!(host.tick(), report(2, 1, 0, 1));
    assert_eq!(host.performed.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![2]);
    assert!(host.events.iter().any(|e| matches!(e, Event::ClaimLost { lapsed: true, .. })));
}
