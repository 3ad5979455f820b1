//! The one listing of event types and field names ([`EVENT_KINDS`]): every
//! event's values follow it, an event rebuilt from its values is the same
//! event, and the serde form uses its names (the JS event objects').

use leasehold_core::event::{Event, EventKind, FieldKind, PassReport, Value, EVENT_KINDS};
use leasehold_core::Millis;
use serde_json::json;

fn one_of_each() -> Vec<Event<String>> {
    let at = Millis(1_000);
    vec![
        Event::PassStart { at },
        Event::PassEnd { at, report: PassReport { claimed: 3, performed: 1, failed: 1, claim_lost: 1 }, next_delay_ms: 250 },
        Event::Claimed { at, item: 2 },
        Event::ClaimFailed { at, error: "db down".into() },
        Event::Performed { at, item: 2, duration_ms: 38 },
        Event::ItemFailed { at, item: 2, error: "boom".into() },
        Event::Heartbeat { at, item: 2 },
        Event::HeartbeatFailed { at, item: 2, error: "timeout".into() },
        Event::ClaimLost { at, item: 2, lapsed: true, unconfirmed_ms: 2_624 },
    ]
}

fn kind_fits(kind: &FieldKind, value: &Value<&String>) -> bool {
    matches!(
        (kind, value),
        (FieldKind::Number | FieldKind::WhenLapsed, Value::Number(_))
            | (FieldKind::Flag, Value::Flag(_))
            | (FieldKind::Report, Value::Report(_))
            | (FieldKind::Error, Value::Error(_))
    )
}

#[test]
fn every_event_gives_one_value_per_listed_field_of_the_listed_kind() {
    let events = one_of_each();
    assert_eq!(events.len(), EVENT_KINDS.len());
    for (index, event) in events.iter().enumerate() {
        let kind: &EventKind = event.kind();
        assert_eq!(event.kind_index(), index);
        assert_eq!(kind.fields[0].name, "at", "{}", kind.type_name);
        let values = event.fields();
        assert_eq!(values.iter().flatten().count(), kind.fields.len(), "{}", kind.type_name);
        for (field, value) in kind.fields.iter().zip(&values) {
            assert!(kind_fits(&field.kind, value.as_ref().expect("listed")), "{}.{}", kind.type_name, field.name);
        }
    }
}

#[test]
fn an_event_rebuilt_from_its_values_is_the_same_event() {
    for event in one_of_each() {
        let owned = event.fields().map(|v| {
            v.map(|v| match v {
                Value::Number(n) => Value::Number(n),
                Value::Flag(f) => Value::Flag(f),
                Value::Report(r) => Value::Report(r),
                Value::Error(e) => Value::Error(e.clone()),
            })
        });
        assert_eq!(Event::from_fields(event.kind_index(), owned), Some(event.clone()));
    }
}

#[test]
fn values_of_the_wrong_kind_or_an_unknown_type_build_nothing() {
    let at = || Some(Value::<String>::Number(5));
    assert_eq!(Event::from_fields(EVENT_KINDS.len(), [at(), None, None, None]), None);
    assert_eq!(Event::<String>::from_fields(2, [at(), Some(Value::Flag(true)), None, None]), None, "claimed with a flag item");
    assert_eq!(Event::<String>::from_fields(2, [at(), Some(Value::Number(1 << 40)), None, None]), None, "item past u32");
    assert_eq!(Event::<String>::from_fields(0, [Some(Value::Flag(false)), None, None, None]), None, "at must be a number");
}

#[test]
fn the_serde_form_is_the_js_event_object() {
    let json: Vec<_> = one_of_each().iter().map(|e| serde_json::to_value(e).unwrap()).collect();
    assert_eq!(json[0], json!({ "type": "pass-start", "at": 1_000 }));
    assert_eq!(
        json[1],
        json!({ "type": "pass-end", "at": 1_000, "report": { "claimed": 3, "performed": 1, "failed": 1, "claimLost": 1 }, "nextDelayMs": 250 })
    );
    assert_eq!(json[4], json!({ "type": "performed", "at": 1_000, "item": 2, "durationMs": 38 }));
    assert_eq!(json[7], json!({ "type": "heartbeat-failed", "at": 1_000, "item": 2, "error": "timeout" }));
    assert_eq!(json[8], json!({ "type": "claim-lost", "at": 1_000, "item": 2, "lapsed": true, "unconfirmedMs": 2_624 }));
    let lost = Event::<String>::ClaimLost { at: Millis(9), item: 0, lapsed: false, unconfirmed_ms: 0 };
    assert_eq!(serde_json::to_value(lost).unwrap(), json!({ "type": "claim-lost", "at": 9, "item": 0, "lapsed": false }), "as JS: no span unless lapsed");
}

#[test]
fn a_report_lists_its_field_names_once_in_the_order_of_its_counts() {
    let report = PassReport { claimed: 4, performed: 1, failed: 2, claim_lost: 1 };
    let json = serde_json::to_value(report).unwrap();
    let mut names: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    let mut listed = PassReport::FIELDS.to_vec();
    names.sort_unstable();
    listed.sort_unstable();
    assert_eq!(names, listed);
    for (name, count) in PassReport::FIELDS.iter().zip(report.counts()) {
        assert_eq!(json[name], count, "{name}");
    }
    assert_eq!(PassReport::from_counts(report.counts()), report);
}
