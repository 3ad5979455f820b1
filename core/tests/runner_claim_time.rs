//! A claim answer's time: [`Runner::claim_found_reads_time`] says when the
//! runner does not read it, and then any time at or after the claim's `at`
//! gives the same actions and timeouts (hosts may skip a clock reading).

use leasehold_core::Millis;
use leasehold_core::options::OptionsInput;
use leasehold_core::runner::{Action, Runner};

fn runner(concurrency: f64, heartbeat: bool, tracing: bool) -> Runner<u32> {
    let input = OptionsInput {
        interval_ms: 1000.0,
        stale_after_ms: 30000.0,
        concurrency: Some(concurrency),
        batch_limit: Some(10.0),
        heartbeat,
        ..OptionsInput::default()
    };
    Runner::new(input.validate().expect("valid options"), tracing)
}

/// Writes the runner's next timeout to `seen`, then its next action, if
/// any, which it answers.
fn record(runner: &mut Runner<u32>, seen: &mut Vec<String>) -> Option<Action<u32>> {
    seen.push(format!("timeout {:?}", runner.poll_timeout()));
    let action = runner.poll_action()?;
    seen.push(format!("{action:?}"));
    Some(action)
}

/// Runs one pass of `items` items, each claim answered `answer_delay` ms
/// after it was made and each perform settling 5 ms after it started;
/// answers every action and timeout in order.
fn pass(mut runner: Runner<u32>, items: u32, answer_delay: u64) -> Vec<String> {
    let mut seen = Vec::new();
    let mut now = Millis(100);
    runner.tick(now);
    let mut claims = 0;
    loop {
        let Some(action) = record(&mut runner, &mut seen) else {
            break;
        };
        match action {
            Action::Claim { at } => {
                if claims == items {
                    runner.claim_empty(at);
                } else {
                    claims += 1;
                    // The answer's time: the claim's own, or later.
                    runner.claim_found(Millis(at.0 + answer_delay));
                }
            }
            Action::Perform { key } => {
                now = Millis(now.0 + 5);
                runner.item_settled(now, key, Ok(()));
            }
            _ => {}
        }
    }
    seen
}

#[test]
fn one_worker_without_heartbeat_or_trace_does_not_read_a_claim_answers_time() {
    assert!(!runner(1.0, false, false).claim_found_reads_time());
    assert_eq!(
        pass(runner(1.0, false, false), 4, 0),
        pass(runner(1.0, false, false), 4, 3)
    );
}

#[test]
fn a_pool_a_heartbeat_or_a_trace_sink_reads_it() {
    assert!(runner(2.0, false, false).claim_found_reads_time());
    assert!(runner(1.0, true, false).claim_found_reads_time());
    assert!(runner(1.0, false, true).claim_found_reads_time());
    // And it shows: a pool's next claim is made at the answer's time.
    assert_ne!(
        pass(runner(2.0, false, false), 4, 0),
        pass(runner(2.0, false, false), 4, 3)
    );
    assert_ne!(
        pass(runner(1.0, false, true), 4, 0),
        pass(runner(1.0, false, true), 4, 3)
    );
}

/// Runs one pass of `items` items on a pool, holding every perform until
/// no action is left (so the pool fills), then settling the oldest 10 ms
/// after the last settle. Each claim is answered 3 ms after it was made, or, with
/// `skip_unread`, at the claim's own `at` whenever
/// [`Runner::claim_found_reads_time_now`] says the answer's time is not
/// read. Answers the trace and how many answers took the claim's `at`.
fn held_pass(mut runner: Runner<u32>, items: u32, skip_unread: bool) -> (Vec<String>, u32) {
    let mut seen = Vec::new();
    let mut now = Millis(100);
    runner.tick(now);
    let (mut claims, mut skipped) = (0, 0);
    let mut held = std::collections::VecDeque::new();
    loop {
        let Some(action) = record(&mut runner, &mut seen) else {
            let Some(key) = held.pop_front() else { break };
            now = Millis(now.0 + 10);
            runner.item_settled(now, key, Ok(()));
            continue;
        };
        match action {
            Action::Claim { at } if claims == items => runner.claim_empty(at),
            Action::Claim { at } => {
                claims += 1;
                let answer = if skip_unread && !runner.claim_found_reads_time_now() {
                    skipped += 1;
                    at
                } else {
                    Millis(at.0 + 3)
                };
                runner.claim_found(answer);
            }
            Action::Perform { key } => held.push_back(key),
            _ => {}
        }
    }
    (seen, skipped)
}

#[test]
fn a_full_pool_does_not_read_a_claim_answers_time() {
    let (read, none_skipped) = held_pass(runner(4.0, false, false), 10, false);
    let (skipping, skipped) = held_pass(runner(4.0, false, false), 10, true);
    assert_eq!(none_skipped, 0);
    // Every answer that fills the pool (the 4th, and each after a settle) skips its clock.
    assert!(skipped >= 6, "only {skipped} answers skipped the clock");
    assert_eq!(read, skipping);
}

#[test]
fn a_heartbeat_or_a_trace_sink_reads_every_answers_time() {
    for (heartbeat, tracing) in [(true, false), (false, true)] {
        let (_, skipped) = held_pass(runner(4.0, heartbeat, tracing), 10, true);
        assert_eq!(skipped, 0, "heartbeat {heartbeat}, tracing {tracing}");
    }
}

/// Runs one pass of `items` items on a pool whose claims are slower than
/// its items: a claim is answered (3 ms after it was made) only once every
/// perform has settled, each settle 10 ms after the last. With
/// `skip_unread`, a settle takes the latest claim's `at` instead whenever
/// [`Runner::performed_reads_time_now`] says its time is not read. Answers
/// the trace and how many settles took the claim's `at`.
fn slow_claims_pass(mut runner: Runner<u32>, items: u32, skip_unread: bool) -> (Vec<String>, u32) {
    let mut seen = Vec::new();
    let mut now = Millis(100);
    runner.start(now); // started: the pass's end times the next pass
    let (mut claims, mut skipped) = (0, 0);
    let (mut claim, mut last_claim_at) = (None, now);
    let mut held = std::collections::VecDeque::new();
    loop {
        if let Some(action) = record(&mut runner, &mut seen) {
            match action {
                Action::PassEnded { .. } => {
                    seen.push(format!("next pass {:?}", runner.poll_timeout()));
                    break;
                }
                Action::Claim { at } => {
                    claim = Some(at);
                    last_claim_at = at;
                }
                Action::Perform { key } => held.push_back(key),
                _ => {}
            }
        } else if let Some(key) = held.pop_front() {
            now = Millis(now.0 + 10);
            // The latest claim's `at`, in flight or not: a wrong answer shows.
            let at = if skip_unread && !runner.performed_reads_time_now() {
                skipped += 1;
                last_claim_at
            } else {
                now
            };
            runner.item_settled(at, key, Ok(()));
        } else if let Some(at) = claim.take() {
            if claims == items {
                runner.claim_empty(Millis(at.0 + 3));
            } else {
                claims += 1;
                runner.claim_found(Millis(at.0 + 3));
            }
        } else {
            break;
        }
    }
    (seen, skipped)
}

#[test]
fn a_settle_while_a_claim_is_in_flight_does_not_read_its_time() {
    let (read, none_skipped) = slow_claims_pass(runner(4.0, false, false), 10, false);
    let (skipping, skipped) = slow_claims_pass(runner(4.0, false, false), 10, true);
    assert_eq!(none_skipped, 0);
    assert!(skipped >= 6, "only {skipped} settles skipped the clock");
    assert_eq!(read, skipping);
    for (heartbeat, tracing) in [(true, false), (false, true)] {
        let (_, skipped) = slow_claims_pass(runner(4.0, heartbeat, tracing), 10, true);
        assert_eq!(skipped, 0, "heartbeat {heartbeat}, tracing {tracing}");
    }
}
