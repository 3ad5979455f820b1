//! Seed 000, backoff: `jobBackoff(interval)`, the delay after k raising
//! passes, the reset after a clean pass, and our clamp of long delays.

mod common;
use common::*;
use leasehold_core::backoff::{job_backoff, Backoff, MAX_DELAY_MS};

#[test]
fn job_backoff_is_own_interval_up_to_ten_times_never_past_a_minute_unless_the_interval_is() {
    assert_eq!(job_backoff(100.0), Backoff { initial_ms: 100.0, max_ms: 1000.0, multiplier: 2.0 });
    assert_eq!(job_backoff(10_000.0), Backoff { initial_ms: 10_000.0, max_ms: 60_000.0, multiplier: 2.0 });
    assert_eq!(job_backoff(120_000.0), Backoff { initial_ms: 120_000.0, max_ms: 120_000.0, multiplier: 2.0 });
}

fn failing_claims(fail: std::rc::Rc<std::cell::Cell<bool>>) -> ClaimFn {
    // Each pass gets one item first (so pass-end is traced), then the claim raises.
    let mut calls = 0;
    Box::new(move |_| {
        calls += 1;
        if calls % 2 == 1 {
            Reply::After(0, Ok(Some(calls)))
        } else if fail.get() {
            Reply::After(0, Err("refused".into()))
        } else {
            Reply::After(0, Ok(None))
        }
    })
}

#[test]
fn a_raising_pass_doubles_the_next_delay_up_to_max_and_a_clean_pass_resets_it() {
    let fail = std::rc::Rc::new(std::cell::Cell::new(true));
    let mut opts = options(100.0, 3000.0);
    opts.backoff = Some(job_backoff(100.0));
    let mut host = Host::new(opts, true, failing_claims(fail.clone()), perform_ok(0));
    for _ in 0..6 {
        host.tick();
    }
    fail.set(false);
    host.tick();
    assert_eq!(host.next_delays(), vec![100, 200, 400, 800, 1000, 1000, 100]);
}

#[test]
fn without_backoff_a_raising_pass_waits_the_plain_interval() {
    let fail = std::rc::Rc::new(std::cell::Cell::new(true));
    let mut host = Host::new(options(70.0, 3000.0), true, failing_claims(fail), perform_ok(0));
    for _ in 0..3 {
        host.tick();
    }
    assert_eq!(host.next_delays(), vec![70, 70, 70]);
}

#[test]
fn a_fractional_multiplier_grows_step_by_step() {
    let b = Backoff { initial_ms: 100.0, max_ms: 1000.0, multiplier: 1.5 };
    let delays: Vec<u64> = (1..=7).map(|k| b.delay_after(k)).collect();
    assert_eq!(delays, vec![100, 150, 225, 337, 506, 759, 1000]);
}

#[test]
fn a_multiplier_under_one_counts_as_one() {
    let b = Backoff { initial_ms: 100.0, max_ms: 1000.0, multiplier: 0.5 };
    assert_eq!(b.delay_after(5), 100);
}

#[test]
fn the_exponent_stops_at_thirty_doublings() {
    let b = Backoff { initial_ms: 1.0, max_ms: 1e300, multiplier: 2.0 };
    assert_eq!(b.delay_after(31), 1 << 30);
    assert_eq!(b.delay_after(1_000), 1 << 30);
}

#[test]
fn delays_above_2_pow_31_minus_1_are_clamped_and_reported_as_scheduled() {
    let fail = std::rc::Rc::new(std::cell::Cell::new(true));
    let mut opts = options(1e12, 3000.0);
    opts.backoff = Some(Backoff { initial_ms: 1e12, max_ms: 1e13, multiplier: 2.0 });
    let mut host = Host::new(opts, true, failing_claims(fail.clone()), perform_ok(0));
    host.tick();
    fail.set(false);
    host.tick();
    assert_eq!(host.next_delays(), vec![MAX_DELAY_MS, MAX_DELAY_MS]);
}

#[test]
fn the_delays_a_store_binds_are_delay_after_each_failure_until_the_ceiling() {
    let backoff = leasehold_core::Backoff { initial_ms: 1_000.0, max_ms: 10_000.0, multiplier: 2.0 };
    assert_eq!(backoff.delays(), [1_000, 2_000, 4_000, 8_000, 10_000]);
    for (k, delay) in backoff.delays().iter().enumerate() {
        assert_eq!(*delay, backoff.delay_after(k as u32 + 1));
    }
    // A ceiling never reached stops at the doubling cap; later failures wait as long as the last.
    let unbounded = leasehold_core::Backoff { initial_ms: 1.0, max_ms: f64::MAX, multiplier: 2.0 };
    let delays = unbounded.delays();
    assert_eq!(delays.len(), leasehold_core::backoff::MAX_BACKOFF_DOUBLINGS as usize + 1);
    assert_eq!(*delays.last().unwrap(), unbounded.delay_after(1_000));
    // No growth: one element.
    assert_eq!(leasehold_core::Backoff { initial_ms: 5.0, max_ms: 5.0, multiplier: 2.0 }.delays(), [5]);
}
