//! The runner's trace events recorded through the pump as a source, so the
//! command-line tool can show job history.

mod eventlog_support;

use std::sync::Arc;
use std::time::Duration;

use leasehold::core::Millis;
use leasehold::core::event::{Event, PassReport};
use leasehold::eventlog::read_log;
use leasehold::pump::{EventDraft, EventSource, Pump, TraceJournal};
use serde_json::json;
use tokio::time::sleep;

use eventlog_support::{FaultyStorage, clock_at, pump_options, temp_log};

fn one_pass() -> Vec<Event<String>> {
    vec![
        Event::PassStart { at: Millis(1_000) },
        Event::Claimed { at: Millis(1_001), item: 0 },
        Event::Heartbeat { at: Millis(1_010), item: 0 },
        Event::Performed { at: Millis(1_020), item: 0, duration_ms: 19 },
        Event::Claimed { at: Millis(1_021), item: 1 },
        Event::ItemFailed { at: Millis(1_030), item: 1, error: "smtp refused".into() },
        Event::PassEnd {
            at: Millis(1_031),
            report: PassReport { claimed: 2, performed: 1, failed: 1, claim_lost: 0 },
            next_delay_ms: 2_000,
        },
    ]
}

#[tokio::test(start_paused = true)]
async fn runner_events_are_logged_with_their_type_time_runner_and_fields() {
    let (_dir, path) = temp_log();
    let mut builder = Pump::builder(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)));
    let journal = Arc::new(TraceJournal::new("mailer", Some(builder.kicker()), 1_000));
    assert!(journal.source_name().starts_with("trace/mailer@"));
    builder.source(journal.source_name(), Arc::clone(&journal) as Arc<dyn EventSource>);
    let pump = builder.open().await.unwrap();

    for event in one_pass() {
        journal.record(&event);
    }
    sleep(Duration::from_millis(50)).await;
    pump.status().await.unwrap();

    let read = read_log(&path, 0).unwrap();
    let kinds: Vec<_> = read.records.iter().map(|r| r.event.kind.as_str()).collect();
    assert_eq!(kinds, vec!["pass-start", "claimed", "heartbeat", "performed", "claimed", "item-failed", "pass-end"]);
    let performed = &read.records[3].event;
    assert_eq!(performed.at, 1_020);
    assert_eq!(performed.source, journal.source_name());
    assert_eq!(performed.identity.get("runner"), Some(&json!("mailer")));
    assert_eq!(performed.body, json!({ "item": 0, "durationMs": 19 }));
    assert_eq!(read.records[5].event.body, json!({ "item": 1, "error": "smtp refused" }));
    assert_eq!(
        read.records[6].event.body,
        json!({ "report": { "claimed": 2, "performed": 1, "failed": 1, "claimLost": 0 }, "nextDelayMs": 2_000 })
    );

    // What the log holds is let go from memory; positions stay.
    assert_eq!(journal.committed_len(), 7);
    let mut out: Vec<EventDraft> = Vec::new();
    journal.derive(0, &mut out);
    assert!(out.is_empty(), "logged entries are released");

    // The journal's kicker does not keep the pump alive.
    drop(pump);
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    assert_eq!(Arc::strong_count(&journal), 1);
}

#[test]
fn a_full_journal_drops_its_oldest_unlogged_events_and_counts_them() {
    let journal = TraceJournal::new("r", None, 3);
    for event in one_pass() {
        journal.record(&event);
    }
    assert_eq!(journal.committed_len(), 7);
    assert_eq!(journal.dropped(), 4);
    let mut out = Vec::new();
    journal.derive(3, &mut out);
    assert!(out.is_empty(), "a dropped entry derives nothing");
    journal.derive(4, &mut out);
    assert_eq!(out[0].kind, "claimed");
}
