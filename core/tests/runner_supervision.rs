//! Our addition to seed 000: supervised renewals (seed 003's heartbeat
//! supervision per item). With S = 3000, I = 250: K = 125, W = S − I − K − 1 =
//! 2624 (strictly inside the lease; no grace, as a JS perform has none),
//! R = 250, so a lapse is decided by S − K − 1 = 2874 ms after the claim at
//! the latest.

mod common;
use common::*;
use leasehold_core::event::Event;
use leasehold_core::Millis;

fn hb_options() -> leasehold_core::OptionsInput {
    let mut opts = options(1000.0, 3000.0);
    opts.heartbeat = true;
    opts.heartbeat_every_ms = Some(250.0);
    opts
}

/// Renewals raise ("blip", after 1 ms) until `from` ms past the claim (the first renewal
/// is sent 250 ms after it), then confirm `answer_ms` after they are sent.
fn renewals_failing_until(from: u64, answer_ms: u64) -> RenewFn {
    let mut claimed = None;
    Box::new(move |_, at| {
        let claimed_at = *claimed.get_or_insert(at - 250);
        if at - claimed_at < from { Reply::After(1, Err("blip".into())) } else { Reply::After(answer_ms, Ok(true)) }
    })
}

fn lapses(host: &Host) -> Vec<Event<String>> {
    host.events.iter().filter(|e| matches!(e, Event::ClaimLost { lapsed: true, .. })).cloned().collect()
}

#[test]
fn renewals_that_hang_forever_lapse_the_claim_at_the_deadline_plus_the_reconfirm_bound() {
    let heartbeat: RenewFn = Box::new(|_, _| Reply::Never);
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), Box::new(|_| Reply::Never), heartbeat);
    host.abort_rejects_after = Some(0);
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert_eq!(host.aborts, vec![(0, true, t0 + 2874)]);
    assert_eq!(lapses(&host), vec![Event::ClaimLost { at: Millis(t0 + 2874), item: 0, lapsed: true, unconfirmed_ms: 2874 }]);
    let (stale, skew) = (3000, 125);
    assert!(host.aborts[0].2 - t0 < stale - skew, "decided strictly more than K before S");
    assert_eq!(host.renewals.len(), 1, "a hanging renewal is never overlapped");
}

#[test]
fn renewals_that_keep_raising_lapse_when_the_reconfirming_renewal_raises() {
    let heartbeat: RenewFn = Box::new(|_, _| Reply::After(1, Err("down".into())));
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), Box::new(|_| Reply::Never), heartbeat);
    host.abort_rejects_after = Some(0);
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    // Grid pulses 250..2500 raise; the deadline at 2624 sends a reconfirming
    // renewal, which raises at 2625: lapse.
    assert_eq!(host.renewals.last().map(|(_, at)| at - t0), Some(2624));
    assert_eq!(host.aborts, vec![(0, true, t0 + 2625)]);
}

#[test]
fn a_renewal_that_lands_again_before_the_deadline_keeps_the_claim() {
    let heartbeat = renewals_failing_until(2_000, 1);
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(10_000), heartbeat);
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert!(host.aborts.is_empty());
}

#[test]
fn a_reconfirming_renewal_that_lands_lets_the_work_go_on() {
    let heartbeat = renewals_failing_until(2_624, 100);
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(4_000), heartbeat);
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert!(host.aborts.is_empty());
    assert!(host.events.contains(&Event::Heartbeat { at: Millis(t0 + 2624), item: 0 }));
}

#[test]
fn a_renewal_confirming_after_the_reconfirm_bound_is_too_late() {
    // Pulses before 2500 raise; the one sent at 2500 answers true at 2900,
    // past the bound 2624 + 250 = 2874.
    let heartbeat = renewals_failing_until(2_500, 400);
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), Box::new(|_| Reply::Never), heartbeat);
    host.abort_rejects_after = Some(0);
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert_eq!(host.aborts, vec![(0, true, t0 + 2874)]);
}

#[test]
fn a_slow_renewal_that_confirms_within_the_bound_keeps_the_claim() {
    // Every renewal takes 2400 ms: the one sent at 250 confirms at 2650,
    // inside the bound (2624 + 250), so supervision goes on from 250.
    let heartbeat: RenewFn = Box::new(|_, _| Reply::After(2400, Ok(true)));
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(2_700), heartbeat);
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert!(host.aborts.is_empty());
}

#[test]
fn an_owner_whose_renewals_succeed_is_never_interrupted() {
    let mut host = Host::with_heartbeat(hb_options(), true, queue(3), perform_ok(60_000), renew_true(3));
    assert_eq!(host.tick(), report(3, 3, 0, 0));
    assert!(host.aborts.is_empty());
    assert_eq!(host.renewals.len(), 3 * 239);
}

#[test]
fn a_claim_answered_after_its_write_tolerance_is_not_performed() {
    // The claim takes 2700 ms to answer: past W = 2624 from its `at`, another
    // worker may hold the item by the time work would start.
    let claim = one_item(7, 2_700, 2_700);
    let mut host = Host::with_heartbeat(hb_options(), true, claim, perform_ok(10), renew_true(1));
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 0, 0, 1));
    assert!(host.performed.is_empty());
    assert!(host.events.contains(&Event::ClaimLost { at: Millis(t0 + 2_700), item: 0, lapsed: true, unconfirmed_ms: 2_700 }));
    assert_eq!(host.claims.len(), 2, "the worker went on to claim again");
}

/// The next renewal the runner asks for: its call and stamp.
fn next_renewal(runner: &mut leasehold_core::runner::Runner<String>) -> Option<(leasehold_core::supervision::CallId, Millis)> {
    std::iter::from_fn(|| runner.poll_action()).find_map(|a| match a {
        leasehold_core::runner::Action::Renew { call, at, .. } => Some((call, at)),
        _ => None,
    })
}

#[test]
fn the_exit_deadline_starts_at_the_claim_and_moves_with_each_confirmed_renewal_only() {
    use leasehold_core::runner::{Action, Runner, Ticket};
    let mut opts = hb_options();
    opts.abort_grace = leasehold_core::AbortGrace::Ms(500.0);
    let config = opts.validate().unwrap();
    // W = 3000 − 250 − 125 − 500 − 1 = 2124; W + I + G = 2874, before S − K = 2875.
    let policy = config.lease.unwrap();
    assert_eq!(policy.exit_deadline(Millis(0)), Millis(2_874));
    let mut runner: Runner<String> = Runner::new(config, false);
    let t0 = Millis(10_000);
    assert!(matches!(runner.tick(t0), Ticket::Pass(_)));
    assert!(matches!(runner.poll_action(), Some(Action::Claim { at }) if at == t0));
    let key = runner.claim_found(Millis(10_040)).expect("performed");
    // From the claim's `at`, the stamp the store holds, not from its answer.
    assert_eq!(runner.exit_deadline(key), Some(Millis(10_000 + 2_874)));
    runner.handle_timeout(Millis(10_290));
    let (call, at) = next_renewal(&mut runner).expect("a renewal at the first pulse");
    runner.renewal_answered(Millis(10_300), key, call, Err("blip".into()));
    assert_eq!(runner.exit_deadline(key), Some(Millis(10_000 + 2_874)), "a failed renewal moves nothing");
    runner.handle_timeout(Millis(10_540));
    let (call, at2) = next_renewal(&mut runner).expect("a renewal at the second pulse");
    assert!(at2 > at);
    runner.renewal_answered(Millis(10_600), key, call, Ok(true));
    assert_eq!(runner.exit_deadline(key), Some(at2.after(2_874)), "from the confirmed renewal's send time");
}
