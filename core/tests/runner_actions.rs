//! Reading the runner's actions in place ([`Runner::peek_action`], then
//! [`Runner::skip_action`]) gives what [`Runner::poll_action`] moves out,
//! in the same order.

use leasehold_core::options::OptionsInput;
use leasehold_core::runner::Runner;
use leasehold_core::Millis;

fn runner(concurrency: f64, heartbeat: bool, tracing: bool) -> Runner<u32> {
    let input = OptionsInput {
        interval_ms: 1000.0,
        stale_after_ms: 30000.0,
        concurrency: Some(concurrency),
        heartbeat,
        ..OptionsInput::default()
    };
    Runner::new(input.validate().expect("valid options"), tracing)
}

#[test]
fn peeking_answers_the_actions_polling_would_in_order_and_skipping_takes_them() {
    let (mut polled, mut peeked) = (runner(2.0, true, true), runner(2.0, true, true));
    let (mut by_poll, mut by_peek) = (Vec::new(), Vec::new());
    for (runner, seen, peek) in [(&mut polled, &mut by_poll, false), (&mut peeked, &mut by_peek, true)] {
        runner.tick(Millis(100));
        for at in [101, 102] {
            runner.claim_found(Millis(at));
        }
        loop {
            let action = if peek {
                let Some(action) = runner.peek_action().cloned() else { break };
                assert_eq!(runner.peek_action(), Some(&action), "a peek leaves the action in place");
                runner.skip_action();
                action
            } else {
                let Some(action) = runner.poll_action() else { break };
                action
            };
            seen.push(action);
        }
    }
    assert!(by_poll.len() >= 4, "{by_poll:?}");
    assert_eq!(by_peek, by_poll);
}
