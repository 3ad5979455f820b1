//! `emit` (seed 004 `EventPump.emit`): producer events through the same
//! chain, identity filled from the source when the draft has none, chunked
//! like a pass, refused after close.

mod eventlog_support;

use leasehold::eventlog::read_log;
use leasehold::pump::{EventDraft, PumpError};
use serde_json::json;

use eventlog_support::{Fault, FaultyStorage, Journal, clock_at, frame_sizes, open_pump, pump_options, temp_log};

#[tokio::test(start_paused = true)]
async fn emit_fills_identity_fields_the_draft_has_none_for() {
    let (_dir, path) = temp_log();
    let a = Journal::new(0);
    a.set_identity("request", json!("r-1"));
    a.set_identity("labels", json!({ "team": "mail" }));
    let pump = open_pump(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(77_000)), &[("a", &a)]).await;
    pump.emit(
        "a",
        vec![
            EventDraft::new("waiting").body(json!({ "on": "approval" })),
            EventDraft::new("moving").at(5).identity("request", json!("r-9")),
        ],
    )
    .await
    .unwrap();
    pump.emit("stranger", vec![EventDraft::new("note")]).await.unwrap();
    let read = read_log(&path, 0).unwrap();
    let events: Vec<_> = read.records.iter().map(|r| &r.event).collect();
    assert_eq!(events[0].source, "a");
    assert_eq!(events[0].at, 77_000, "no time: the wall clock");
    assert_eq!(json!(events[0].identity), json!({ "request": "r-1", "labels": { "team": "mail" } }));
    assert_eq!(events[0].body, json!({ "on": "approval" }));
    assert_eq!(events[1].at, 5);
    assert_eq!(json!(events[1].identity), json!({ "request": "r-9", "labels": { "team": "mail" } }), "the draft's own wins");
    assert_eq!((events[2].source.as_str(), events[2].identity.len()), ("stranger", 0));
}

#[tokio::test(start_paused = true)]
async fn emit_appends_in_chunks() {
    let (_dir, path) = temp_log();
    let pump = open_pump(pump_options(&path, 2, &FaultyStorage::new(), &clock_at(0)), &[]).await;
    let drafts = (0..5).map(|i| EventDraft::new("n").at(i)).collect();
    pump.emit("p", drafts).await.unwrap();
    assert_eq!(frame_sizes(&path), vec![2, 2, 1]);
}

#[tokio::test(start_paused = true)]
async fn derived_events_carry_the_source_identity_too() {
    let (_dir, path) = temp_log();
    let a = Journal::new(2);
    a.set_identity("request", json!("r-5"));
    let pump = open_pump(pump_options(&path, 1024, &FaultyStorage::new(), &clock_at(0)), &[("a", &a)]).await;
    pump.close().await.unwrap();
    let read = read_log(&path, 0).unwrap();
    assert!(!read.records.is_empty());
    assert!(read.records.iter().all(|r| r.event.identity.get("request") == Some(&json!("r-5"))));
}

#[tokio::test(start_paused = true)]
async fn a_failed_emit_errors_and_the_next_one_reopens_the_log() {
    let (_dir, path) = temp_log();
    let storage = FaultyStorage::new();
    let pump = open_pump(pump_options(&path, 8, &storage, &clock_at(0)), &[]).await;
    storage.fail_append(0, Fault::WritePartial(5));
    assert!(matches!(pump.emit("p", vec![EventDraft::new("lost")]).await, Err(PumpError::Log(_))));
    pump.emit("p", vec![EventDraft::new("kept")]).await.unwrap();
    let kinds: Vec<_> = read_log(&path, 0).unwrap().records.into_iter().map(|r| r.event.kind).collect();
    assert_eq!(kinds, vec!["kept"], "the torn write was truncated, not left in the middle");
}

#[tokio::test(start_paused = true)]
async fn emit_after_close_is_refused() {
    let (_dir, path) = temp_log();
    let pump = open_pump(pump_options(&path, 8, &FaultyStorage::new(), &clock_at(0)), &[]).await;
    pump.close().await.unwrap();
    assert!(matches!(pump.emit("p", vec![EventDraft::new("late")]).await, Err(PumpError::Closed)));
}
