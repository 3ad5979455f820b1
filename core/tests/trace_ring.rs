//! The trace ring (seed 000 `createJobTraceSink`, `resumeJobTrace`): passes
//! that claimed something become spans with one child per item, the ring is
//! bounded, and it can be saved and resumed.

use leasehold_core::Millis;
use leasehold_core::event::{Event, PassReport};
use leasehold_core::trace_ring::{
    ItemOutcome, MAX_ERROR_TEXT, SavedTrace, TRACE_FORMAT_VERSION, TraceRing, TraceRingError,
};

type Ev = Event<&'static str>;

/// Events of one pass at `t0` that claims `items` items, item i performed
/// (even), failed (i % 3 == 1) or lost (otherwise).
fn pass(t0: u64, items: u32) -> Vec<Ev> {
    let mut out = vec![Event::PassStart { at: Millis(t0) }];
    let mut report = PassReport::IDLE;
    for i in 0..items {
        let at = t0 + 10 * u64::from(i) + 1;
        out.push(Event::Claimed { at: Millis(at), item: i });
        report.claimed += 1;
        match i % 3 {
            0 => {
                out.push(Event::Heartbeat { at: Millis(at + 2), item: i });
                out.push(Event::Performed { at: Millis(at + 5), item: i, duration_ms: 4 });
                report.performed += 1;
            }
            1 => {
                out.push(Event::ItemFailed { at: Millis(at + 6), item: i, error: "boom" });
                report.failed += 1;
            }
            _ => {
                out.push(Event::HeartbeatFailed { at: Millis(at + 2), item: i, error: "db down" });
                out.push(Event::ClaimLost { at: Millis(at + 7), item: i, lapsed: true, unconfirmed_ms: 7 });
                report.claim_lost += 1;
            }
        }
    }
    out.push(Event::PassEnd { at: Millis(t0 + 100), report, next_delay_ms: 5_000 });
    out
}

fn feed(ring: &mut TraceRing, name: &str, events: &[Ev]) {
    for e in events {
        ring.record(name, e);
    }
}

#[test]
fn a_pass_that_claimed_something_becomes_one_span_with_a_child_per_item() {
    let mut ring = TraceRing::new(10).unwrap();
    feed(&mut ring, "mailer", &pass(1_000, 3));
    assert_eq!(ring.len(), 1);
    let span = ring.spans().next().unwrap();
    assert_eq!(span.name, "mailer");
    assert_eq!((span.start, span.end), (Millis(1_000), Millis(1_100)));
    assert_eq!(span.report, PassReport { claimed: 3, performed: 1, failed: 1, claim_lost: 1 });
    assert_eq!(span.next_delay_ms, 5_000);
    let items: Vec<_> = span.items.iter().map(|i| (i.item, i.outcome, i.duration_ms)).collect();
    assert_eq!(
        items,
        vec![(0, ItemOutcome::Performed, 4), (1, ItemOutcome::Failed, 6), (2, ItemOutcome::ClaimLost, 7)]
    );
    assert_eq!(span.items[0].heartbeats, 1);
    assert_eq!(span.items[1].error.as_deref(), Some("boom"));
    assert_eq!(span.items[2].heartbeat_failures, 1);
    assert!(span.items[2].lapsed);
}

#[test]
fn the_pass_end_answers_the_finished_span() {
    let mut ring = TraceRing::new(10).unwrap();
    let events = pass(0, 1);
    let (last, rest) = events.split_last().unwrap();
    for e in rest {
        assert!(ring.record("r", e).is_none());
    }
    assert_eq!(ring.open_passes(), 1);
    let finished = ring.record("r", last).expect("pass-end finishes a span");
    assert_eq!(finished.report.claimed, 1);
    assert_eq!(ring.open_passes(), 0);
}

#[test]
fn a_pass_that_claimed_nothing_costs_nothing() {
    let mut ring = TraceRing::new(10).unwrap();
    // An idle pass emits nothing; a claim that raised before anything was
    // claimed emits only `claim-failed`, with no pass open.
    ring.record("r", &Ev::ClaimFailed { at: Millis(5), error: "db down" });
    ring.record("r", &Ev::PassEnd { at: Millis(6), report: PassReport::IDLE, next_delay_ms: 10 });
    assert!(ring.is_empty());
    assert_eq!(ring.open_passes(), 0);
}

#[test]
fn the_oldest_span_goes_first_when_full() {
    let mut ring = TraceRing::new(2).unwrap();
    for t in [0, 1_000, 2_000] {
        feed(&mut ring, "r", &pass(t, 1));
    }
    let starts: Vec<_> = ring.spans().map(|s| s.start).collect();
    assert_eq!(starts, vec![Millis(1_000), Millis(2_000)]);
    assert_eq!(ring.dropped(), 1);
}

#[test]
fn runners_sharing_a_ring_keep_their_passes_apart() {
    let mut ring = TraceRing::new(10).unwrap();
    let a = pass(0, 1);
    let b = pass(3, 2);
    // Interleave the two runners' events.
    let mut ia = a.iter();
    let mut ib = b.iter();
    loop {
        let (x, y) = (ia.next(), ib.next());
        if x.is_none() && y.is_none() {
            break;
        }
        if let Some(e) = x {
            ring.record("a", e);
        }
        if let Some(e) = y {
            ring.record("b", e);
        }
    }
    let mut spans: Vec<_> = ring.spans().map(|s| (s.name.clone(), s.items.len())).collect();
    spans.sort();
    assert_eq!(spans, vec![("a".into(), 1), ("b".into(), 2)]);
}

#[test]
fn a_claim_error_during_a_pass_is_on_its_span() {
    let mut ring = TraceRing::new(10).unwrap();
    let mut events = pass(0, 1);
    events.insert(events.len() - 1, Ev::ClaimFailed { at: Millis(50), error: "timeout" });
    feed(&mut ring, "r", &events);
    assert_eq!(ring.spans().next().unwrap().claim_error.as_deref(), Some("timeout"));
}

#[test]
fn a_pass_whose_end_was_lost_is_kept_as_abandoned() {
    let mut ring = TraceRing::new(10).unwrap();
    feed(&mut ring, "r", &[
        Ev::PassStart { at: Millis(0) },
        Ev::Claimed { at: Millis(1), item: 0 },
        Ev::Performed { at: Millis(3), item: 0, duration_ms: 2 },
        Ev::Claimed { at: Millis(4), item: 1 },
    ]);
    let abandoned = ring.record("r", &Ev::PassStart { at: Millis(20) }).cloned().expect("closed");
    assert_eq!(abandoned.end, Millis(20));
    assert_eq!(abandoned.report, PassReport { claimed: 2, performed: 1, failed: 1, claim_lost: 0 });
    assert_eq!(abandoned.items[1].outcome, ItemOutcome::Unsettled);
    assert_eq!(abandoned.items[1].duration_ms, 16);
    assert_eq!(ring.open_passes(), 1, "the new pass is open");
}

#[test]
fn a_claim_lost_after_the_item_performed_keeps_performed() {
    let mut ring = TraceRing::new(10).unwrap();
    feed(&mut ring, "r", &[
        Ev::PassStart { at: Millis(0) },
        Ev::Claimed { at: Millis(0), item: 0 },
        Ev::Performed { at: Millis(9), item: 0, duration_ms: 9 },
        Ev::ClaimLost { at: Millis(8), item: 0, lapsed: false, unconfirmed_ms: 0 },
    ]);
    let report = PassReport { claimed: 1, performed: 1, failed: 0, claim_lost: 0 };
    let span = ring.record("r", &Ev::PassEnd { at: Millis(10), report, next_delay_ms: 1 }).unwrap();
    assert_eq!(span.items[0].outcome, ItemOutcome::Performed);
}

#[test]
fn long_error_texts_are_cut() {
    let mut ring = TraceRing::new(1).unwrap();
    ring.record("r", &Event::<String>::PassStart { at: Millis(0) });
    ring.record("r", &Event::<String>::Claimed { at: Millis(0), item: 0 });
    ring.record("r", &Event::ItemFailed { at: Millis(1), item: 0, error: "é".repeat(1_000) });
    let report = PassReport { claimed: 1, failed: 1, ..PassReport::IDLE };
    let span = ring.record("r", &Event::<String>::PassEnd { at: Millis(2), report, next_delay_ms: 0 }).unwrap();
    let text = span.items[0].error.as_ref().unwrap();
    assert!(text.len() <= leasehold_core::trace_ring::MAX_ERROR_TEXT && text.len() >= 500);
}

#[test]
fn zero_capacity_is_refused() {
    assert_eq!(TraceRing::new(0).unwrap_err(), TraceRingError::ZeroCapacity);
}

#[test]
fn a_saved_ring_resumes_with_its_spans_and_counters() {
    let mut ring = TraceRing::new(3).unwrap();
    for t in [0, 1_000, 2_000, 3_000] {
        feed(&mut ring, "r", &pass(t, 2));
    }
    ring.record("r", &Ev::PassStart { at: Millis(9_000) });
    let saved = ring.save();
    assert_eq!(saved.version, TRACE_FORMAT_VERSION);
    assert_eq!(saved.spans.len(), 3, "the open pass is not saved");
    let resumed = TraceRing::resume(saved.clone(), None).unwrap();
    assert_eq!(resumed.save(), saved);
    assert_eq!(resumed.dropped(), 1);
    assert_eq!(resumed.open_passes(), 0);

    let smaller = TraceRing::resume(saved, Some(1)).unwrap();
    assert_eq!(smaller.spans().map(|s| s.start).collect::<Vec<_>>(), vec![Millis(3_000)]);
    assert_eq!(smaller.dropped(), 3);
}

#[test]
fn a_resumed_ring_holds_error_texts_to_the_same_bound_as_recorded_ones() {
    let mut ring = TraceRing::new(3).unwrap();
    feed(&mut ring, "r", &pass(0, 1));
    let mut saved = ring.save();
    let long = "é".repeat(MAX_ERROR_TEXT); // two bytes each
    saved.spans[0].claim_error = Some(long.clone());
    saved.spans[0].items[0].error = Some(long);
    let resumed = TraceRing::resume(saved, None).unwrap();
    let span = resumed.spans().next().unwrap();
    for text in [span.claim_error.as_deref(), span.items[0].error.as_deref()] {
        let text = text.unwrap();
        assert!(text.len() <= MAX_ERROR_TEXT && text.len() >= MAX_ERROR_TEXT - 1, "{} bytes", text.len());
        assert!(text.chars().all(|c| c == 'é'), "cut at a character boundary");
    }
}

#[test]
fn a_saved_ring_of_another_version_is_refused() {
    let saved = SavedTrace { version: 99, capacity: 3, dropped: 0, spans: Vec::new() };
    assert_eq!(TraceRing::resume(saved, None).unwrap_err(), TraceRingError::UnknownVersion { found: 99 });
}

#[test]
fn the_saved_json_is_stable_and_round_trips() {
    let mut ring = TraceRing::new(5).unwrap();
    feed(&mut ring, "mailer", &pass(1_000, 1));
    let json = serde_json::to_value(ring.save()).unwrap();
    let expected = serde_json::json!({
        "version": 1, "capacity": 5, "dropped": 0,
        "spans": [{
            "name": "mailer", "start": 1000, "end": 1100,
            "report": {"claimed": 1, "performed": 1, "failed": 0, "claimLost": 0},
            "nextDelayMs": 5000, "claimError": null,
            "items": [{
                "item": 0, "start": 1001, "end": 1006, "durationMs": 4, "outcome": "performed",
                "heartbeats": 1, "heartbeatFailures": 0, "lapsed": false, "error": null
            }]
        }]
    });
    assert_eq!(json, expected);
    let back: SavedTrace = serde_json::from_value(json).unwrap();
    assert_eq!(TraceRing::resume(back, None).unwrap(), ring);
}
