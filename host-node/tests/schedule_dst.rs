//! Cron schedules across daylight saving time in Europe/Berlin (2026: clocks
//! go from 02:00 CET to 03:00 CEST on 29 March, and from 03:00 CEST back to
//! 02:00 CET on 25 October). The rule (croner's, see `leasehold::schedule`):
//! a fixed time that does not exist fires once at the first instant after
//! the gap; a fixed time that happens twice fires once, at its first
//! instant; wildcard and step fields fire at every real instant that
//! matches, so none in the gap and both in the repeated hour. Driven through
//! the store on both backends, and through the cadence alone.

#![cfg(feature = "sqlite")]

mod store_support;

use leasehold::core::Millis;
use leasehold::core::schedule::{CatchUp, FireTimes};
use leasehold::schedule::Cadence;
use leasehold::store::ScheduleSpec;
use serde_json::json;
use store_support::backend_test;

/// An RFC 3339 instant in ms since the Unix epoch.
fn at(text: &str) -> u64 {
    let ts: jiff::Timestamp = text.parse().unwrap();
    ts.as_millisecond() as u64
}

/// The slots of `expression` in Berlin in `(from, to]`, from the cadence.
fn berlin_slots(expression: &str, from: &str, to: &str) -> Vec<u64> {
    let mut slots = Cadence::cron(expression, Some("Europe/Berlin")).fire_times().unwrap();
    let (mut t, end) = (Millis(at(from)), at(to));
    let mut found = Vec::new();
    while let Some(next) = slots.next_after(t).filter(|n| n.0 <= end) {
        found.push(next.0);
        t = next;
    }
    found
}

#[test]
fn a_fixed_time_in_the_spring_forward_gap_fires_once_right_after_the_gap() {
    assert_eq!(
        berlin_slots("30 2 * * *", "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z"),
        vec![
            at("2026-03-28T01:30:00Z"), // 02:30 CET
            at("2026-03-29T01:00:00Z"), // 02:30 does not exist: 03:00 CEST
            at("2026-03-30T00:30:00Z"), // 02:30 CEST
        ]
    );
}

#[test]
fn a_fixed_time_in_the_repeated_autumn_hour_fires_once_at_its_first_instant() {
    assert_eq!(
        berlin_slots("30 2 * * *", "2026-10-23T12:00:00Z", "2026-10-26T12:00:00Z"),
        vec![
            at("2026-10-24T00:30:00Z"), // 02:30 CEST
            at("2026-10-25T00:30:00Z"), // the first 02:30 (CEST), not the second (01:30Z, CET)
            at("2026-10-26T01:30:00Z"), // 02:30 CET
        ]
    );
}

#[test]
fn a_step_expression_skips_the_gap_and_fires_in_both_repeated_hours() {
    // Every 30 minutes of wall clock: real time between slots stays 30 min.
    assert_eq!(
        berlin_slots("*/30 * * * *", "2026-03-28T23:45:00Z", "2026-03-29T01:45:00Z"),
        vec![at("2026-03-29T00:00:00Z"), at("2026-03-29T00:30:00Z"), at("2026-03-29T01:00:00Z"), at("2026-03-29T01:30:00Z")]
    );
    assert_eq!(
        berlin_slots("*/30 * * * *", "2026-10-24T23:45:00Z", "2026-10-25T02:15:00Z"),
        vec![
            at("2026-10-25T00:00:00Z"), // 02:00 CEST
            at("2026-10-25T00:30:00Z"), // 02:30 CEST
            at("2026-10-25T01:00:00Z"), // 02:00 CET
            at("2026-10-25T01:30:00Z"), // 02:30 CET
            at("2026-10-25T02:00:00Z"), // 03:00 CET
        ]
    );
}

#[test]
fn last_in_agrees_with_next_after_across_the_transitions() {
    let mut slots = Cadence::cron("30 2 * * *", Some("Europe/Berlin")).fire_times().unwrap();
    let floor = Millis(at("2026-03-28T12:00:00Z"));
    assert_eq!(slots.last_in(floor, Millis(at("2026-03-29T06:00:00Z"))), Some(Millis(at("2026-03-29T01:00:00Z"))));
    assert_eq!(slots.last_in(floor, Millis(at("2026-03-29T00:59:59Z"))), None);
    let floor = Millis(at("2026-10-24T12:00:00Z"));
    assert_eq!(slots.last_in(floor, Millis(at("2026-10-25T06:00:00Z"))), Some(Millis(at("2026-10-25T00:30:00Z"))));
}

#[test]
fn a_cron_without_a_zone_runs_in_utc() {
    let mut slots = Cadence::cron("0 3 * * *", None).fire_times().unwrap();
    assert_eq!(slots.next_after(Millis(at("2026-03-29T00:00:00Z"))), Some(Millis(at("2026-03-29T03:00:00Z"))));
}

/// Drives `expression` in Berlin through the store from `from` to `to` in
/// steps of 7 minutes; answers the due times of the jobs enqueued.
async fn driven(db: &store_support::TestDb, name: &str, expression: &str, from: &str, to: &str) -> Vec<u64> {
    let mut spec = ScheduleSpec::new(name, name, Cadence::cron(expression, Some("Europe/Berlin")), json!({"command": "true"}));
    spec.catch_up = CatchUp::All;
    db.store.add_schedule(&spec, Millis(at(from))).await.unwrap();
    let mut now = at(from);
    while now < at(to) {
        now += 7 * 60_000;
        db.store.run_due_schedules(name, Millis(now)).await.unwrap();
    }
    let mut due: Vec<u64> = db.store.list_jobs(Some(name), None, 1000).await.unwrap().iter().map(|j| j.run_at.0).collect();
    due.sort_unstable();
    due
}

backend_test! {
    async fn the_store_enqueues_berlin_slots_once_across_both_transitions(db) {
        assert_eq!(
            driven(&db, "spring", "30 2 * * *", "2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z").await,
            vec![at("2026-03-28T01:30:00Z"), at("2026-03-29T01:00:00Z"), at("2026-03-30T00:30:00Z")],
            "{}",
            db.label()
        );
        assert_eq!(
            driven(&db, "autumn", "30 2 * * *", "2026-10-23T12:00:00Z", "2026-10-26T12:00:00Z").await,
            vec![at("2026-10-24T00:30:00Z"), at("2026-10-25T00:30:00Z"), at("2026-10-26T01:30:00Z")],
            "{}",
            db.label()
        );
        assert_eq!(
            driven(&db, "halfhours", "*/30 * * * *", "2026-10-24T23:45:00Z", "2026-10-25T02:15:00Z").await.len(),
            5,
            "{}: both repeated hours",
            db.label()
        );
    }
}
