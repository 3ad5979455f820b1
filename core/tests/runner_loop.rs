//! Seed 000, the loop: tick joins, wake coalesces, start/stop chains,
//! quiesce and dispose.

mod common;
use common::*;
use leasehold_core::runner::Ticket;
use leasehold_core::Millis;

/// One item per pass, each performed in 100 ms: a pass lasts 100 ms.
fn slow_host(interval_ms: f64) -> Host {
    Host::new(options(interval_ms, 30_000.0), false, one_per_pass(), perform_ok(100))
}

/// A [`slow_host`] started, 5 ms into its first pass (its perform takes 100).
fn started_mid_pass(interval_ms: f64) -> Host {
    let mut host = slow_host(interval_ms);
    host.runner.start(Millis(host.now));
    host.run_until(host.now + 5);
    host
}

fn passes(host: &Host) -> usize {
    host.ended.len()
}

#[test]
fn tick_during_a_pass_joins_that_pass() {
    let mut host = slow_host(10_000.0);
    let a = host.runner.tick(Millis(host.now));
    host.run_until(host.now + 5);
    let b = host.runner.tick(Millis(host.now));
    assert_eq!(a, b);
    host.run_until(host.now + 200);
    assert_eq!(passes(&host), 1);
}

#[test]
fn wake_while_idle_runs_one_pass_at_once() {
    let mut host = Host::new(options(10_000.0, 30_000.0), false, queue(0), perform_ok(0));
    host.runner.wake(Millis(host.now));
    host.run_until(host.now);
    assert_eq!(host.claims.len(), 1);
    assert_eq!(passes(&host), 1);
}

#[test]
fn wakes_during_a_pass_coalesce_into_exactly_one_follow_up_pass() {
    let mut host = slow_host(10_000.0);
    host.runner.tick(Millis(host.now));
    host.run_until(host.now + 5);
    for _ in 0..5 {
        host.runner.wake(Millis(host.now));
    }
    host.run_until(host.now + 1_000);
    assert_eq!(passes(&host), 2);
    host.run_until(host.now + 5_000);
    assert_eq!(passes(&host), 2, "no loop was started: nothing more runs");
}

#[test]
fn start_runs_a_pass_at_once_then_one_per_delay_and_a_second_start_does_nothing() {
    let mut host = Host::new(options(20.0, 30_000.0), false, queue(0), perform_ok(0));
    let t0 = host.start();
    host.runner.start(Millis(t0));
    host.run_until(t0);
    assert_eq!(host.claims, vec![t0]);
    host.run_until(t0 + 100);
    assert_eq!(host.claims, vec![t0, t0 + 20, t0 + 40, t0 + 60, t0 + 80, t0 + 100]);
}

#[test]
fn the_next_pass_is_scheduled_a_delay_after_the_pass_ends() {
    let mut host = slow_host(1_000.0);
    let t0 = host.start();
    host.run_until(t0 + 2_250);
    // Pass 1: claims at t0 and t0+100 (empty); next pass at t0+100+1000.
    assert_eq!(host.claims, vec![t0, t0 + 100, t0 + 1_100, t0 + 1_200, t0 + 2_200]);
}

#[test]
fn stop_ends_the_loop() {
    let mut host = Host::new(options(20.0, 30_000.0), false, queue(0), perform_ok(0));
    host.runner.start(Millis(host.now));
    host.run_until(host.now + 50);
    host.runner.stop();
    let seen = host.claims.len();
    host.run_until(host.now + 1_000);
    assert_eq!(host.claims.len(), seen);
    assert_eq!(host.runner.poll_timeout(), None);
}

#[test]
fn stop_drops_a_follow_up_that_a_wake_had_asked_for() {
    let mut host = slow_host(10_000.0);
    host.runner.tick(Millis(host.now));
    host.run_until(host.now + 5);
    host.runner.wake(Millis(host.now));
    host.runner.stop();
    host.run_until(host.now + 1_000);
    assert_eq!(passes(&host), 1);
}

#[test]
fn a_pass_that_outlives_its_stop_schedules_nothing_for_a_loop_started_again_since() {
    let mut host = slow_host(1_000.0);
    let t0 = host.start();
    host.run_until(t0 + 10);
    host.runner.stop();
    host.runner.start(Millis(host.now)); // joins the pass in flight: chain 2
    host.run_until(t0 + 150);
    assert_eq!(passes(&host), 1);
    // Exactly one timer: the new chain's, a delay after the pass ended.
    host.run_until(t0 + 3_000);
    assert_eq!(host.claims, vec![t0, t0 + 100, t0 + 1_100, t0 + 1_200, t0 + 2_200, t0 + 2_300]);
}

#[test]
fn quiesce_answers_the_pass_in_flight_and_the_loop_can_start_again() {
    let mut host = started_mid_pass(10_000.0);
    let waiting = host.runner.quiesce().expect("a pass is in flight");
    assert!(host.report_of(waiting).is_none());
    host.run_until(host.now + 200);
    assert!(host.report_of(waiting).is_some());
    assert_eq!(host.runner.poll_timeout(), None, "quiesced: nothing scheduled");
    host.runner.start(Millis(host.now));
    host.run_until(host.now + 5);
    assert_eq!(host.claims.len(), 3, "the restarted loop ran a pass at once");
}

#[test]
fn quiesce_when_idle_has_nothing_to_wait_for() {
    let mut host = slow_host(10_000.0);
    assert_eq!(host.runner.quiesce(), None);
}

#[test]
fn after_dispose_start_tick_and_wake_do_nothing_and_tick_answers_idle() {
    let mut host = Host::new(options(10.0, 30_000.0), false, queue(5), perform_ok(0));
    assert_eq!(host.runner.dispose(), None);
    assert_eq!(host.runner.dispose(), None);
    host.runner.start(Millis(host.now));
    assert_eq!(host.runner.tick(Millis(host.now)), Ticket::Done(report(0, 0, 0, 0)));
    host.runner.wake(Millis(host.now));
    host.run_until(host.now + 100);
    assert!(host.claims.is_empty());
}

#[test]
fn dispose_during_a_pass_drains_it_and_a_second_dispose_answers_at_once() {
    let mut host = started_mid_pass(10.0);
    let pass = host.runner.dispose().expect("in flight");
    assert_eq!(host.runner.dispose(), None);
    host.run_until(host.now + 1_000);
    assert_eq!(host.report_of(pass), Some(report(1, 1, 0, 0)));
    assert_eq!(passes(&host), 1, "nothing scheduled after dispose");
}
