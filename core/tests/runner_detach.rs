//! Detached items: the worker claims its next item while the host writes
//! the last one's outcome, and each item is counted as it really ended,
//! once the host reports it; the pass (and quiesce, dispose) waits for them.

mod common;
use common::*;
use leasehold_core::event::Event;
use leasehold_core::runner::{DetachedId, Ended, LogKind};
use leasehold_core::Millis;

fn detaching(perform: PerformFn, n: u64) -> Host {
    let mut host = Host::new(options(1000.0, 30000.0), true, queue(n), perform);
    host.detach_for = Some(50);
    host
}

#[test]
fn a_detached_item_frees_its_worker_for_the_next_claim_at_once() {
    let mut host = detaching(perform_ok(1), 3);
    let t0 = host.now;
    host.tick();
    // One worker: each item starts when the last one's work ended (1 ms each), not when its
    // outcome was reported (50 ms later).
    assert_eq!(host.performed.iter().map(|(_, at)| at - t0).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(host.detached_ends.iter().map(|at| at - t0).collect::<Vec<_>>(), vec![51, 52, 53]);
}

#[test]
fn detached_items_are_counted_as_they_ended_and_the_pass_ends_after_the_last_report() {
    let perform: PerformFn = Box::new(|item| {
        Reply::After(1, match item {
            1 => Err("boom".into()),
            2 => Err(LOST.into()),
            _ => Ok(()),
        })
    });
    let mut host = detaching(perform, 4);
    assert_eq!(host.tick(), report(4, 2, 1, 1));
    assert_eq!(host.logs, vec![(LogKind::WorkFailed, "boom".to_string())]);
    let ends: Vec<_> = host
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Performed { item, duration_ms, .. } => Some(format!("performed {item} {duration_ms}")),
            Event::ItemFailed { item, error, .. } => Some(format!("failed {item} {error}")),
            Event::ClaimLost { item, lapsed, .. } => Some(format!("lost {item} {lapsed}")),
            _ => None,
        })
        .collect();
    // durationMs runs to the report: the write is part of the item.
    assert_eq!(ends, ["performed 0 51", "failed 1 boom", "lost 2 false", "performed 3 51"]);
    let pass_end = host.events.iter().find_map(|e| if let Event::PassEnd { at, .. } = e { Some(at.0) } else { None });
    assert_eq!(pass_end, host.detached_ends.last().copied(), "the pass ends with the last report");
}

#[test]
fn dispose_waits_for_detached_items() {
    let mut host = detaching(perform_ok(1), 1);
    host.detach_for = Some(500);
    let t0 = host.now;
    host.runner.start(Millis(t0));
    host.run_until(t0 + 5);
    let pass = host.runner.dispose().expect("a pass holds the detached item");
    host.run_until(t0 + 400);
    assert_eq!(host.report_of(pass), None, "the pass waits for the report");
    host.run_until(t0 + 600);
    assert_eq!(host.report_of(pass), Some(report(1, 1, 0, 0)));
}

#[test]
fn an_unknown_or_repeated_report_changes_nothing() {
    let mut host = detaching(perform_ok(1), 2);
    assert_eq!(host.tick(), report(2, 2, 0, 0));
    let now = Millis(host.now);
    host.runner.detached_ended(now, DetachedId(0), Ended::Lost);
    host.runner.detached_ended(now, DetachedId(7), Ended::Performed);
    host.drain();
    assert_eq!(host.tick(), report(0, 0, 0, 0));
}
