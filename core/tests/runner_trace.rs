//! Seed 000, trace events: names, fields, order, the item ordinal, and no
//! events at all without a sink or for a pass that claimed nothing.

mod common;
use common::*;
use leasehold_core::event::Event;
use leasehold_core::Millis;

#[test]
fn a_pass_traces_start_claims_items_and_end_in_order() {
    let mut host = Host::new(options(250.0, 30_000.0), true, queue(2), perform_ok(7));
    let t0 = host.now;
    host.tick();
    assert_eq!(host.types(), vec!["pass-start", "claimed", "performed", "claimed", "performed", "pass-end"]);
    assert_eq!(host.events[0], Event::PassStart { at: Millis(t0) });
    assert_eq!(host.events[1], Event::Claimed { at: Millis(t0), item: 0 });
    assert_eq!(host.events[2], Event::Performed { at: Millis(t0 + 7), item: 0, duration_ms: 7 });
    assert_eq!(host.events[3], Event::Claimed { at: Millis(t0 + 7), item: 1 });
    assert_eq!(host.events[4], Event::Performed { at: Millis(t0 + 14), item: 1, duration_ms: 7 });
    assert_eq!(host.events[5], Event::PassEnd { at: Millis(t0 + 14), report: report(2, 2, 0, 0), next_delay_ms: 250 });
}

#[test]
fn pass_start_carries_the_time_read_at_the_head_of_the_pass() {
    // The first claim takes 30 ms: pass-start is published with it, stamped
    // with the head of the pass so a span covers the claim that found work.
    let claim = one_item(1, 30, 30);
    let mut host = Host::new(options(250.0, 30_000.0), true, claim, perform_ok(0));
    let t0 = host.now;
    host.tick();
    assert_eq!(host.events[0], Event::PassStart { at: Millis(t0) });
    assert_eq!(host.events[1], Event::Claimed { at: Millis(t0 + 30), item: 0 });
}

#[test]
fn a_pass_that_claimed_nothing_emits_nothing() {
    let mut host = Host::new(options(250.0, 30_000.0), true, queue(0), perform_ok(0));
    host.tick();
    assert!(host.events.is_empty());
}

#[test]
fn without_a_sink_no_event_is_built() {
    let perform: PerformFn = Box::new(|i| Reply::After(1, if i == 0 { Err("x".into()) } else { Ok(()) }));
    let mut host = Host::new(options(250.0, 30_000.0), false, queue(3), perform);
    assert_eq!(host.tick(), report(3, 2, 1, 0));
    assert!(host.events.is_empty());
    assert_eq!(host.logs.len(), 1, "logging does not depend on a sink");
}

#[test]
fn per_item_events_carry_the_item_ordinal_at_concurrency() {
    let perform: PerformFn = Box::new(|i| Reply::After(10 - i, Ok(())));
    let mut opts = options(250.0, 30_000.0);
    opts.concurrency = Some(4.0);
    let mut host = Host::new(opts, true, queue(4), perform);
    host.tick();
    let mut performed: Vec<u32> = host.events.iter().filter_map(|e| match e {
        Event::Performed { item, .. } => Some(*item),
        _ => None,
    }).collect();
    assert_eq!(performed, vec![3, 2, 1, 0], "later items finish first here");
    performed.sort_unstable();
    assert_eq!(performed, vec![0, 1, 2, 3]);
}
