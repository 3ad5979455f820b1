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

/// Runs one pass of `items` items, each claim answered `answer_delay` ms
/// after it was made and each perform settling 5 ms after it started;
/// answers every action and timeout in order.
fn pass(mut runner: Runner<u32>, items: u32, answer_delay: u64) -> Vec<String> {
    let mut seen = Vec::new();
    let mut now = Millis(100);
    runner.tick(now);
    let mut claims = 0;
    loop {
        seen.push(format!("timeout {:?}", runner.poll_timeout()));
        let Some(action) = runner.poll_action() else {
            break;
        };
        seen.push(format!("{action:?}"));
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
