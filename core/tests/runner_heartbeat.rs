//! Seed 000, per-item heartbeat: a fixed grid from the claim, no overlap,
//! `true` → `heartbeat`, raise → `heartbeat-failed` (lease unchanged),
//! `false` → `claim-lost` and an aborted signal; settled items are forgotten.

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

fn renewal_times(host: &Host, t0: u64) -> Vec<u64> {
    host.renewals.iter().map(|(_, at)| at - t0).collect()
}

#[test]
fn renewals_beat_on_a_fixed_grid_from_the_claim() {
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(1000), renew_true(10));
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert_eq!(renewal_times(&host, t0), vec![250, 500, 750]);
}

#[test]
fn a_slot_that_finds_a_renewal_in_flight_is_skipped() {
    let mut host = Host::with_heartbeat(hb_options(), false, queue(1), perform_ok(1000), renew_true(300));
    let t0 = host.now;
    host.tick();
    // 250 answers at 550, so the 500 slot is skipped; 750 beats again.
    assert_eq!(renewal_times(&host, t0), vec![250, 750]);
}

#[test]
fn a_renewal_that_lands_traces_heartbeat_at_its_send_time() {
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(300), renew_true(20));
    let t0 = host.now;
    host.tick();
    let beats: Vec<_> = host.events.iter().filter(|e| matches!(e, Event::Heartbeat { .. })).cloned().collect();
    assert_eq!(beats, vec![Event::Heartbeat { at: Millis(t0 + 250), item: 0 }]);
}

#[test]
fn a_renewal_that_raises_traces_heartbeat_failed_and_leaves_the_lease_as_it_was() {
    let heartbeat: RenewFn = Box::new(|_, _| Reply::After(5, Err("timeout".into())));
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(600), heartbeat);
    let t0 = host.now;
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    let failed: Vec<_> = host.events.iter().filter(|e| matches!(e, Event::HeartbeatFailed { .. })).cloned().collect();
    assert_eq!(failed, vec![
        Event::HeartbeatFailed { at: Millis(t0 + 250), item: 0, error: "timeout".into() },
        Event::HeartbeatFailed { at: Millis(t0 + 500), item: 0, error: "timeout".into() },
    ]);
    assert!(host.aborts.is_empty());
}

#[test]
fn a_renewal_answering_false_stops_renewals_traces_claim_lost_and_aborts_the_signal() {
    let heartbeat: RenewFn = Box::new(|_, _| Reply::After(5, Ok(false)));
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(2000), heartbeat);
    let t0 = host.now;
    host.abort_rejects_after = None; // the work ignores the signal and completes
    assert_eq!(host.tick(), report(1, 1, 0, 0));
    assert_eq!(renewal_times(&host, t0), vec![250], "no renewal after the loss");
    assert_eq!(host.aborts, vec![(0, false, t0 + 255)]);
    assert!(host.events.contains(&Event::ClaimLost { at: Millis(t0 + 250), item: 0, lapsed: false, unconfirmed_ms: 0 }));
}

#[test]
fn renewals_in_flight_when_an_item_settles_are_abandoned_and_not_traced() {
    let mut host = Host::with_heartbeat(hb_options(), true, queue(1), perform_ok(260), renew_true(100));
    host.tick();
    assert_eq!(host.renewals.len(), 1);
    assert!(!host.events.iter().any(|e| matches!(e, Event::Heartbeat { .. })));
    assert_eq!(host.runner.poll_timeout(), None);
}

#[test]
fn without_a_heartbeat_nothing_is_renewed() {
    let mut opts = hb_options();
    opts.heartbeat = false;
    let mut host = Host::new(opts, true, queue(1), perform_ok(5_000));
    host.tick();
    assert!(host.renewals.is_empty());
}

#[test]
fn a_slots_next_item_is_supervised_from_its_own_claim() {
    // A slot keeps its last item's supervisor room for the next item: nothing
    // of the last item's lease (its grid, its calls, a lost claim) carries over.
    let mut answers = 0;
    let heartbeat: RenewFn = Box::new(move |_, _| {
        answers += 1;
        Reply::After(10, Ok(answers != 2)) // item 0's second renewal loses its claim
    });
    let mut host = Host::with_heartbeat(hb_options(), true, queue(2), perform_ok(600), heartbeat);
    host.abort_rejects_after = None; // the work ignores the signal and completes
    let t0 = host.now;
    assert_eq!(host.tick(), report(2, 2, 0, 0));
    let claims = host.renewals.iter().map(|(item, at)| (*item, at - t0)).collect::<Vec<_>>();
    assert_eq!(claims, vec![(0, 250), (0, 500), (1, 850), (1, 1100)], "item 1 beats on its own grid from t0 + 600");
    assert_eq!(host.aborts, vec![(0, false, t0 + 510)], "only item 0 was aborted");
}
