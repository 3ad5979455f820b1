//! The trace ring at the JS boundary (`TraceRing`, behind
//! `createJobTraceSink` / `resumeJobTrace`): runner events in, plain span
//! objects out, the saved shape round-trips, and bad options, saved rings and
//! events are refused with a `TypeError`/`RangeError` naming what was wrong,
//! leaving the ring usable.

mod common;
use js_sys::{Function, JSON, Reflect};
use leasehold_wasm::JsTraceRing;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

/// A JS value from an expression.
fn js(expression: &str) -> JsValue {
    Function::new_no_args(&format!("return ({expression});")).call0(&JsValue::NULL).expect("evaluates")
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).expect("readable")
}

fn json(value: &JsValue) -> String {
    JSON::stringify(value).expect("serialisable").into()
}

/// (kind, message) of a refusal.
fn refusal(error: JsValue) -> (&'static str, String) {
    common::thrown(error)
}

fn create(options: &str) -> JsTraceRing {
    JsTraceRing::create(&js(options)).expect("valid options")
}

fn record(ring: &mut JsTraceRing, event: &str) -> bool {
    ring.record(&js(event)).expect("a runner event")
}

/// One pass of runner `name` from `at`: item 0 performed, item 1 failed with
/// `new Error('boom')`, item 2's claim lost.
fn pass(ring: &mut JsTraceRing, name: &str, at: u32) -> bool {
    let n = format!("name: '{name}'");
    for event in [
        format!("{{ type: 'pass-start', {n}, at: {at} }}"),
        format!("{{ type: 'claimed', {n}, at: {}, item: 0 }}", at + 1),
        format!("{{ type: 'performed', {n}, at: {}, item: 0, durationMs: 9 }}", at + 10),
        format!("{{ type: 'claimed', {n}, at: {}, item: 1 }}", at + 11),
        format!("{{ type: 'item-failed', {n}, at: {}, item: 1, error: new Error('boom') }}", at + 15),
        format!("{{ type: 'claimed', {n}, at: {}, item: 2 }}", at + 16),
        format!("{{ type: 'heartbeat', {n}, at: {}, item: 2 }}", at + 17),
        format!("{{ type: 'claim-lost', {n}, at: {}, item: 2, lapsed: false }}", at + 20),
    ] {
        assert!(!record(ring, &event), "no span before pass-end");
    }
    record(
        ring,
        &format!(
            "{{ type: 'pass-end', {n}, at: {}, report: {{ claimed: 3, performed: 1, failed: 1, claimLost: 1 }}, nextDelayMs: 250 }}",
            at + 30
        ),
    )
}

#[wasm_bindgen_test]
fn a_pass_becomes_one_plain_span_with_an_item_span_per_claim() {
    let mut ring = create("undefined");
    assert!(pass(&mut ring, "mailer", 1000), "pass-end finishes the span");
    let spans = ring.spans().expect("spans");
    let expected = r#"[{"name":"mailer","start":1000,"end":1030,"report":{"claimed":3,"performed":1,"failed":1,"claimLost":1},"nextDelayMs":250,"claimError":null,"items":[{"item":0,"start":1001,"end":1010,"durationMs":9,"outcome":"performed","heartbeats":0,"heartbeatFailures":0,"lapsed":false,"error":null},{"item":1,"start":1011,"end":1015,"durationMs":4,"outcome":"failed","heartbeats":0,"heartbeatFailures":0,"lapsed":false,"error":"Error: boom"},{"item":2,"start":1016,"end":1020,"durationMs":4,"outcome":"claim-lost","heartbeats":1,"heartbeatFailures":0,"lapsed":false,"error":null}]}]"#;
    assert_eq!(json(&spans), expected);
    assert_eq!(json(&ring.latest().expect("latest")), expected[1..expected.len() - 1]);
    let first = js_sys::Array::from(&spans).get(0);
    assert_eq!(JsValue::from(js_sys::Object::get_prototype_of(&first)), js("Object.prototype"), "a plain object");
}

#[wasm_bindgen_test]
fn events_of_a_runner_with_no_pass_open_cost_nothing() {
    let mut ring = create("{}");
    assert!(!record(&mut ring, "{ type: 'claimed', name: 'idle', at: 5, item: 0 }"));
    assert!(!record(
        &mut ring,
        "{ type: 'pass-end', name: 'idle', at: 6, report: { claimed: 0, performed: 0, failed: 0, claimLost: 0 }, nextDelayMs: 1 }"
    ));
    assert_eq!(ring.size(), 0.0);
    assert_eq!(ring.open_passes(), 0.0);
    assert!(ring.latest().expect("latest").is_undefined());
}

#[wasm_bindgen_test]
fn capacity_defaults_to_the_cores_and_the_oldest_span_goes_first() {
    assert_eq!(create("{}").capacity(), 100.0);
    let mut ring = create("{ capacity: 2 }");
    for (i, name) in ["a", "b", "c"].into_iter().enumerate() {
        pass(&mut ring, name, 1000 * (i as u32 + 1));
    }
    assert_eq!(ring.dropped(), 1.0);
    let names: Vec<String> = js_sys::Array::from(&ring.spans().expect("spans"))
        .iter()
        .map(|s| get(&s, "name").as_string().unwrap())
        .collect();
    assert_eq!(names, ["b", "c"]);
}

#[wasm_bindgen_test]
fn error_payloads_become_text() {
    for (error, text) in [
        ("new TypeError('bad row')", "TypeError: bad row"),
        ("'plain words'", "plain words"),
        ("{ code: 'E42', retry: false }", r#"{"code":"E42","retry":false}"#),
        ("undefined", "undefined"),
        ("'x'.repeat(2000)", &"x".repeat(512)),
    ] {
        let mut ring = create("{}");
        record(&mut ring, "{ type: 'pass-start', name: 'e', at: 1 }");
        record(&mut ring, "{ type: 'claimed', name: 'e', at: 2, item: 0 }");
        record(&mut ring, &format!("{{ type: 'item-failed', name: 'e', at: 3, item: 0, error: {error} }}"));
        record(&mut ring, "{ type: 'claim-failed', name: 'e', at: 4, error: new Error('db down') }");
        record(
            &mut ring,
            "{ type: 'pass-end', name: 'e', at: 5, report: { claimed: 1, performed: 0, failed: 1, claimLost: 0 }, nextDelayMs: 9 }",
        );
        let span = ring.latest().expect("latest");
        let item = js_sys::Array::from(&get(&span, "items")).get(0);
        assert_eq!(get(&item, "error").as_string().as_deref(), Some(text), "{error}");
        assert_eq!(get(&span, "claimError").as_string().as_deref(), Some("Error: db down"));
    }
}

#[wasm_bindgen_test]
fn an_event_that_is_not_a_runner_event_is_a_type_error_naming_the_field() {
    let mut ring = create("{}");
    record(&mut ring, "{ type: 'pass-start', name: 'g', at: 1 }");
    for (event, named) in [
        ("null", "event must be an object, got null"),
        ("'pass-end'", "event must be an object, got string"),
        ("{ type: 'pass-stop', name: 'g', at: 1 }", "event.type \"pass-stop\" is not a runner event type"),
        ("{ type: 7, name: 'g', at: 1 }", "event.type must be a string, got number"),
        ("{ type: 'claimed', at: 1, item: 0 }", "event.name must be a string, got undefined"),
        ("{ type: 'claimed', name: 'g', at: '1', item: 0 }", "event.at must be a number, got string"),
        ("{ type: 'claimed', name: 'g', at: 1 }", "event.item must be a number, got undefined"),
        ("{ type: 'pass-end', name: 'g', at: 2, nextDelayMs: 1 }", "event.report must be an object, got undefined"),
        (
            "{ type: 'pass-end', name: 'g', at: 2, report: { claimed: 1 }, nextDelayMs: 1 }",
            "event.report.performed must be a number",
        ),
        (
            "{ type: 'claimed', name: 'g', get at() { throw new Error('getter') }, item: 0 }",
            "reading event.at threw: Error: getter",
        ),
    ] {
        let (kind, message) = refusal(ring.record(&js(event)).expect_err(event));
        assert_eq!(kind, "TypeError", "{event}");
        assert!(message.starts_with("JobTraceSink: "), "{message}");
        assert!(message.contains(named), "{event}: {message}");
    }
    // The ring is whole and usable: the pass is still open and ends normally.
    assert_eq!(ring.open_passes(), 1.0);
    record(&mut ring, "{ type: 'claimed', name: 'g', at: 2, item: 0 }");
    assert!(record(
        &mut ring,
        "{ type: 'pass-end', name: 'g', at: 3, report: { claimed: 1, performed: 0, failed: 0, claimLost: 1 }, nextDelayMs: 1 }"
    ));
    assert_eq!(ring.size(), 1.0);
}

#[wasm_bindgen_test]
fn huge_or_odd_numbers_are_capped_so_the_ring_still_saves() {
    let mut ring = create("{}");
    record(&mut ring, "{ type: 'pass-start', name: 'n', at: 1e300 }");
    record(&mut ring, "{ type: 'claimed', name: 'n', at: -5, item: NaN }");
    record(&mut ring, "{ type: 'performed', name: 'n', at: NaN, item: 0, durationMs: -1 }");
    record(
        &mut ring,
        "{ type: 'pass-end', name: 'n', at: Infinity, report: { claimed: 1, performed: 0, failed: 0, claimLost: 0 }, nextDelayMs: 1.9 }",
    );
    let span = ring.latest().expect("a span that converts");
    assert_eq!(get(&span, "start").as_f64(), Some(9_007_199_254_740_991.0));
    assert_eq!(get(&span, "nextDelayMs").as_f64(), Some(1.0));
    // NaN and negatives read 0, as documented (NaN read as the cap before).
    let item = js_sys::Array::from(&get(&span, "items")).get(0);
    assert_eq!((get(&item, "item").as_f64(), get(&item, "end").as_f64()), (Some(0.0), Some(0.0)));
    assert_eq!(get(&item, "durationMs").as_f64(), Some(0.0));
    assert!(ring.save().is_ok());
}

#[wasm_bindgen_test]
fn bad_options_are_refused_naming_the_option() {
    for (options, kind, named) in [
        ("5", "TypeError", "createJobTraceSink: options must be an object, got number"),
        ("{ capacity: 0 }", "RangeError", "capacity must be an integer from 1 to 4294967295, got 0"),
        ("{ capacity: 2.5 }", "RangeError", "got 2.5"),
        ("{ capacity: 2 ** 32 }", "RangeError", "got 4294967296"),
        ("{ capacity: '10' }", "TypeError", "capacity must be a number, got string"),
        ("{ capacity: NaN }", "TypeError", "capacity must be a finite number, got NaN"),
        ("{ onSpan: 'log' }", "TypeError", "onSpan must be a function, got string"),
    ] {
        let Err(error) = JsTraceRing::create(&js(options)) else { panic!("{options} accepted") };
        let (got_kind, message) = refusal(error);
        assert_eq!(got_kind, kind, "{options}: {message}");
        assert!(message.contains(named), "{options}: {message}");
    }
    assert_eq!(create("null").capacity(), 100.0);
    assert_eq!(create("{ capacity: null, onSpan: null }").capacity(), 100.0);
}

#[wasm_bindgen_test]
fn a_saved_ring_resumes_from_its_object_or_its_text_and_goes_on() {
    let mut ring = create("{ capacity: 3 }");
    pass(&mut ring, "a", 1000);
    pass(&mut ring, "b", 2000);
    record(&mut ring, "{ type: 'pass-start', name: 'open', at: 3000 }");
    let saved = ring.save().expect("save");
    let text = json(&saved);
    assert!(text.starts_with(r#"{"version":1,"capacity":3,"dropped":0,"spans":[{"name":"a","#), "{text}");
    for input in [saved.clone(), JsValue::from_str(&text)] {
        let mut resumed = JsTraceRing::resume(&input, &JsValue::UNDEFINED).expect("resumes");
        assert_eq!(json(&resumed.save().expect("save")), text, "the same ring, open passes left out");
        assert_eq!(resumed.open_passes(), 0.0);
        pass(&mut resumed, "c", 4000);
        pass(&mut resumed, "d", 5000);
        assert_eq!(resumed.dropped(), 1.0);
        let names: Vec<String> = js_sys::Array::from(&resumed.spans().unwrap())
            .iter()
            .map(|s| get(&s, "name").as_string().unwrap())
            .collect();
        assert_eq!(names, ["b", "c", "d"]);
    }
    let with_to_json = js_sys::Object::new();
    let to_json = Function::new_with_args("", &format!("return {text};"));
    Reflect::set(&with_to_json, &JsValue::from_str("toJSON"), &to_json).expect("set");
    let via = JsTraceRing::resume(&with_to_json, &JsValue::UNDEFINED).expect("read as JSON.stringify shows it");
    assert_eq!(json(&via.save().expect("save")), text, "a value with toJSON (a sink) is read as its JSON");
    let smaller = JsTraceRing::resume(&saved, &js("{ capacity: 1 }")).expect("resumes");
    assert_eq!((smaller.capacity(), smaller.size(), smaller.dropped()), (1.0, 1.0, 1.0), "the oldest goes");
}

#[wasm_bindgen_test]
fn a_bad_saved_ring_is_refused_saying_what_and_where() {
    let good = r#"{"name":"a","start":1,"end":2,"report":{"claimed":1,"performed":1,"failed":0,"claimLost":0},"nextDelayMs":5,"claimError":null,"items":[{"item":0,"start":1,"end":2,"durationMs":1,"outcome":"performed","heartbeats":0,"heartbeatFailures":0,"lapsed":false,"error":null}]}"#;
    let bad_outcome = good.replace(r#""outcome":"performed""#, r#""outcome":"done""#);
    let no_start = good.replacen(r#""start":1,"#, "", 1);
    let mut cases: Vec<(JsValue, &str, String)> = vec![
        (JsValue::from(3), "TypeError", "saved must be a saved trace (an object, or its JSON text), got number".into()),
        (JsValue::UNDEFINED, "TypeError", "got undefined".into()),
        (JsValue::from_str("{"), "TypeError", "saved is not JSON: SyntaxError".into()),
        (js("[]"), "TypeError", "saved: ".into()),
        (js("{ capacity: 3 }"), "TypeError", "saved: missing field `version`".into()),
        (
            js("{ version: 2, capacity: 3, spans: 'new shape' }"),
            "RangeError",
            "saved.version: saved trace has format version 2; this build reads version 1".into(),
        ),
        (js("{ version: 1, capacity: 0, dropped: 0, spans: [] }"), "RangeError", "saved.capacity is 0".into()),
        (
            js("{ version: 1, capacity: 3, dropped: -1, spans: [] }"),
            "TypeError",
            "saved.dropped: invalid type: the number `-1.0`, expected a whole number, 0 or more".into(),
        ),
        (
            js("{ version: 1, capacity: 3, dropped: 0.5, spans: [] }"),
            "TypeError",
            "saved.dropped: invalid type: the number `0.5`, expected a whole number, 0 or more".into(),
        ),
        (
            js("{ version: 1, capacity: NaN, dropped: 0, spans: [] }"),
            "TypeError",
            "saved.capacity: invalid type: null (NaN and Infinity are saved as null), expected a whole number, 0 or more"
                .into(),
        ),
        (
            js("{ version: 1, capacity: 3, dropped: 0, spans: null }"),
            "TypeError",
            "saved.spans: expected an object or an array here, got null or a primitive".into(),
        ),
        (
            JsValue::from_str(&format!(r#"{{"version":1,"capacity":3,"dropped":0,"spans":[{good},{bad_outcome}]}}"#)),
            "TypeError",
            "saved.spans[1].items[0].outcome: unknown variant `done`".into(),
        ),
        (
            JsValue::from_str(&format!(r#"{{"version":1,"capacity":3,"dropped":0,"spans":[{no_start}]}}"#)),
            "TypeError",
            "saved.spans[0]: missing field `start`".into(),
        ),
    ];
    cases.push((
        js("(() => { const c = { version: 1, capacity: 3, dropped: 0, spans: [] }; c.self = c; return c; })()"),
        "TypeError",
        "reading saved threw: TypeError: Converting circular structure to JSON".into(),
    ));
    cases.push((
        js("{ version: 1, capacity: 3, get dropped() { throw new Error('getter') }, spans: [] }"),
        "TypeError",
        "reading saved threw: Error: getter".into(),
    ));
    cases.push((js("() => 1"), "TypeError", "got function".into()));
    for (saved, kind, named) in cases {
        let Err(error) = JsTraceRing::resume(&saved, &JsValue::UNDEFINED) else { panic!("{named}: accepted") };
        let (got_kind, message) = refusal(error);
        assert_eq!(got_kind, kind, "{message}");
        assert!(message.starts_with("resumeJobTrace: "), "{message}");
        assert!(message.contains(&named), "wanted {named:?} in {message:?}");
    }
    let Err(error) = JsTraceRing::resume(
        &JsValue::from_str(r#"{"version":1,"capacity":3,"dropped":0,"spans":[]}"#),
        &js("{ capacity: -1 }"),
    ) else {
        panic!("capacity -1 accepted")
    };
    assert_eq!(refusal(error).0, "RangeError", "the option is checked before the saved ring");
}

#[wasm_bindgen_test]
fn interleaved_runners_keep_their_own_passes() {
    let mut ring = create("{}");
    record(&mut ring, "{ type: 'pass-start', name: 'a', at: 1 }");
    record(&mut ring, "{ type: 'pass-start', name: 'b', at: 2 }");
    record(&mut ring, "{ type: 'claimed', name: 'a', at: 3, item: 0 }");
    record(&mut ring, "{ type: 'claimed', name: 'b', at: 4, item: 0 }");
    record(&mut ring, "{ type: 'claimed', name: 'b', at: 5, item: 1 }");
    record(&mut ring, "{ type: 'performed', name: 'b', at: 6, item: 1, durationMs: 1 }");
    record(&mut ring, "{ type: 'performed', name: 'a', at: 7, item: 0, durationMs: 4 }");
    assert_eq!(ring.open_passes(), 2.0);
    assert!(record(
        &mut ring,
        "{ type: 'pass-end', name: 'a', at: 8, report: { claimed: 1, performed: 1, failed: 0, claimLost: 0 }, nextDelayMs: 1 }"
    ));
    assert!(record(
        &mut ring,
        "{ type: 'pass-end', name: 'b', at: 9, report: { claimed: 2, performed: 1, failed: 0, claimLost: 0 }, nextDelayMs: 1 }"
    ));
    let spans = js_sys::Array::from(&ring.spans().expect("spans"));
    let shape: Vec<(String, Vec<String>)> = spans
        .iter()
        .map(|s| {
            let outcomes = js_sys::Array::from(&get(&s, "items"))
                .iter()
                .map(|i| get(&i, "outcome").as_string().unwrap())
                .collect();
            (get(&s, "name").as_string().unwrap(), outcomes)
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("a".to_string(), vec!["performed".to_string()]),
            ("b".to_string(), vec!["unsettled".to_string(), "performed".to_string()])
        ]
    );
    let (kind, message) = refusal(
        ring.record(&js("{ type: new String('claimed'), name: 'a', at: 1, item: 0 }")).expect_err("a String object"),
    );
    assert_eq!((kind, message.as_str()), ("TypeError", "JobTraceSink: event.type must be a string, got object"));
}
