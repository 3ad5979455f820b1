//! Run leases at the JS boundary: `LeaseSupervisor` (the core's heartbeat
//! supervision as `heartbeatLoop` drives it), `leasePolicy`, `leaseIsAlive`
//! and `sameHostIncarnation` — what each accepts, refuses, and answers.

mod common;
use common::{func, set, thrown};
use js_sys::{Array, Float64Array, Object, Reflect};
use leasehold_wasm::record::STRIDE;
use leasehold_wasm::lease::{
    lease_is_alive, lease_liveness_window, lease_policy, same_host_incarnation, supervisor_protocol, LeaseSupervisor,
    LeaseWatch,
};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn object() -> JsValue {
    Object::new().into()
}

/// Valid `heartbeatLoop` options: runId, owner, store with both calls.
fn loop_options() -> JsValue {
    let owner = object();
    set(&owner, "hostId", "host-a");
    set(&owner, "pid", 4242.0);
    set(&owner, "nonce", "n");
    let store = object();
    set(&store, "heartbeat", func());
    set(&store, "reconfirm", func());
    let o = object();
    set(&o, "runId", "run-1");
    set(&o, "owner", owner);
    set(&o, "store", store);
    o
}

fn with(key: &str, value: impl Into<JsValue>) -> JsValue {
    let o = loop_options();
    set(&o, key, value);
    o
}

fn policy(fields: &[(&str, f64)]) -> JsValue {
    let p = object();
    for (key, value) in fields {
        set(&p, key, *value);
    }
    p
}

fn refusal(options: &JsValue) -> (&'static str, String) {
    match LeaseSupervisor::new(options) {
        Ok(_) => panic!("options were accepted"),
        Err(error) => thrown(error),
    }
}

/// Records as `[op, a, b, c]` rows (no step has more than three fields; the
/// rest of each record is zeros).
fn rows(records: Float64Array) -> Vec<[f64; 4]> {
    let flat = records.to_vec();
    assert_eq!(flat.len() % STRIDE, 0, "whole records");
    flat.chunks(STRIDE)
        .map(|r| {
            assert!(r[4..].iter().all(|v| *v == 0.0), "three fields at most");
            [r[0], r[1], r[2], r[3]]
        })
        .collect()
}

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).expect("readable")
}

fn op(name: &str) -> f64 {
    get(&get(&supervisor_protocol().into(), "ops"), name).as_f64().expect("an opcode")
}

fn started(options: &JsValue, now: f64) -> LeaseSupervisor {
    let mut supervisor = LeaseSupervisor::new(options).expect("valid options");
    supervisor.start(now);
    supervisor
}

#[wasm_bindgen_test]
fn the_protocol_names_each_step_opcode_and_the_record_stride() {
    let p: JsValue = supervisor_protocol().into();
    assert_eq!(get(&p, "stride").as_f64(), Some(STRIDE as f64), "the codec's stride, as the runner's");
    assert_eq!(get(&p, "maxDelayMs").as_f64(), Some(2_147_483_647.0));
    let names = ["renew", "reconfirm", "confirmed", "failed", "reconfirmed", "lost", "lapsed"];
    let codes: Vec<f64> = names.iter().map(|n| op(n)).collect();
    assert_eq!(codes, [20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0], "apart from the runner's codes");
    let kinds = get(&p, "kinds");
    let failed = get(&kinds, "failed");
    let offsets: Vec<f64> = ["code", "call", "at", "first"].iter().map(|k| get(&failed, k).as_f64().expect("a number")).collect();
    assert_eq!(offsets, [23.0, 1.0, 2.0, 3.0], "fields by name, at their slots");
    let notices = get(&p, "notices");
    assert_eq!(get(&notices, "renewalFailed").as_string().as_deref(), Some("run heartbeat write failed"));
}

#[wasm_bindgen_test]
fn pulses_go_out_one_interval_after_the_previous_answer_until_a_lost_fence() {
    let mut s = started(&loop_options(), 1_000.0);
    assert_eq!(s.deadline(), 3_000.0, "first pulse one interval after the start");
    assert!(rows(s.timeout(2_999.0)).is_empty(), "an early timer does nothing");
    assert_eq!(rows(s.timeout(3_000.0)), [[op("renew"), 0.0, 3_000.0, 0.0]]);
    assert_eq!(rows(s.answered(3_100.0, 0, &JsValue::from_str("Updated"))), [[op("confirmed"), 0.0, 3_000.0, 0.0]]);
    assert_eq!(s.deadline(), 5_100.0);
    assert_eq!(rows(s.timeout(5_100.0)), [[op("renew"), 1.0, 5_100.0, 0.0]]);
    // The seed's tagged outcome object counts as Updated too.
    let tagged = object();
    set(&tagged, "_tag", "Updated");
    assert_eq!(rows(s.answered(5_100.0, 1, &tagged)), [[op("confirmed"), 1.0, 5_100.0, 0.0]]);
    assert_eq!(rows(s.timeout(7_100.0)), [[op("renew"), 2.0, 7_100.0, 0.0]]);
    assert_eq!(rows(s.answered(7_200.0, 2, &JsValue::from_str("LostToNewerToken"))), [[op("lost"), 7_100.0, 0.0, 0.0]]);
    assert!(s.ended());
    assert_eq!(s.deadline(), -1.0, "no deadline once ended");
    assert!(rows(s.timeout(99_999.0)).is_empty(), "nothing after the end");
}

#[wasm_bindgen_test]
fn anything_but_updated_is_a_lost_fence() {
    for outcome in [JsValue::UNDEFINED, JsValue::NULL, JsValue::TRUE, JsValue::from(1), JsValue::from_str("updated"), object()] {
        let mut s = started(&loop_options(), 0.0);
        s.timeout(2_000.0);
        assert_eq!(rows(s.answered(2_000.0, 0, &outcome)), [[op("lost"), 2_000.0, 0.0, 0.0]], "{outcome:?}");
    }
}

#[wasm_bindgen_test]
fn a_raising_write_is_reported_first_in_outage_once_then_the_deadline_reconfirms() {
    let mut s = started(&loop_options(), 0.0);
    s.timeout(2_000.0);
    assert_eq!(rows(s.raised(2_000.0, 0)), [[op("failed"), 0.0, 2_000.0, 1.0]]);
    s.timeout(4_000.0);
    assert_eq!(rows(s.raised(4_000.0, 1)), [[op("failed"), 1.0, 4_000.0, 0.0]], "second failure of the outage");
    s.timeout(6_000.0);
    // The renewal sent at 6000 hangs; at the deadline (0 + 11000) the reconfirmation goes out.
    assert_eq!(s.deadline(), 11_000.0);
    assert_eq!(rows(s.timeout(11_000.0)), [[op("reconfirm"), 3.0, 11_000.0, 0.0]]);
    assert_eq!(s.deadline(), 13_000.0, "bounded by one interval");
    assert_eq!(
        rows(s.answered(11_500.0, 3, &JsValue::from_str("Updated"))),
        [[op("confirmed"), 3.0, 11_000.0, 0.0], [op("reconfirmed"), 11_000.0, 10_500.0, 0.0]],
        "gap 11000, budget 11000 + 11000 - 11500"
    );
    assert_eq!(rows(s.receipt_failed(12_000.0)), [[op("lapsed"), 1_000.0, 0.0, 0.0]]);
    assert!(s.ended());
}

#[wasm_bindgen_test]
fn a_reconfirmation_that_times_out_lapses_with_the_unconfirmed_span() {
    let mut s = started(&loop_options(), 0.0);
    s.timeout(2_000.0);
    assert_eq!(rows(s.timeout(11_000.0)), [[op("reconfirm"), 1.0, 11_000.0, 0.0]]);
    assert_eq!(rows(s.timeout(13_000.0)), [[op("lapsed"), 13_000.0, 0.0, 0.0]]);
    assert!(rows(s.answered(13_001.0, 1, &JsValue::from_str("Updated"))).is_empty(), "a late answer is ignored");
}

#[wasm_bindgen_test]
fn times_that_are_not_whole_ms_cross_without_panicking() {
    let mut s = started(&loop_options(), 1_000.9);
    assert_eq!(s.deadline(), 3_000.0, "fractions truncated");
    assert!(rows(s.timeout(f64::NAN)).is_empty(), "NaN reads as 0");
    assert!(rows(s.timeout(-5.0)).is_empty(), "negatives read as 0");
    assert!(rows(s.answered(0.0, 999, &JsValue::from_str("Updated"))).is_empty(), "an unknown call is ignored");
    // Infinity saturates to the last representable ms: past the deadline, and
    // no reconfirmation bound fits after it, so the lease lapses at once.
    assert_eq!(rows(s.timeout(f64::INFINITY))[0][0], op("lapsed"));
}

#[wasm_bindgen_test]
fn loop_options_of_the_wrong_kind_are_a_type_error_naming_them() {
    let store_without_reconfirm = object();
    set(&store_without_reconfirm, "heartbeat", func());
    let cases: [(JsValue, &str); 7] = [
        (JsValue::UNDEFINED, "heartbeatLoop: options must be an object, got undefined"),
        (with("runId", 1.0), "heartbeatLoop: runId must be a string, got number"),
        (with("owner", "host-a"), "heartbeatLoop: owner must be an object ({ hostId, pid, nonce }), got string"),
        (with("store", store_without_reconfirm), "heartbeatLoop: store.reconfirm must be a function, got undefined"),
        (with("onReconfirm", 1.0), "heartbeatLoop: onReconfirm must be a function, got number"),
        (with("logger", true), "heartbeatLoop: logger must be a logger object or a function answering one, got boolean"),
        (with("policy", "fast"), "lease policy: policy must be an object, got string"),
    ];
    for (options, message) in cases {
        assert_eq!(refusal(&options), ("TypeError", message.to_owned()));
    }
    for key in ["onReconfirm", "onLapse", "now", "logger", "policy"] {
        assert!(LeaseSupervisor::new(&with(key, JsValue::NULL)).is_ok(), "{key}: null is absent");
    }
}

#[wasm_bindgen_test]
fn an_unsafe_policy_is_a_range_error_naming_the_relation_in_js_names() {
    let (kind, message) = refusal(&with("policy", policy(&[("writeToleranceMs", 12_000.0)])));
    assert_eq!(kind, "RangeError");
    assert!(
        message.starts_with(
            "lease policy: writeToleranceMs + heartbeatIntervalMs + skewAllowanceMs (12000 + 2000 + 1000 = 15000) \
             must be less than staleAfterMs (15000)"
        ),
        "{message}"
    );
    assert_eq!(
        refusal(&with("policy", policy(&[("staleAfterMs", 0.0)]))),
        ("RangeError", "lease policy: staleAfterMs must be positive, got 0".to_owned())
    );
    assert_eq!(
        refusal(&with("policy", policy(&[("heartbeatIntervalMs", f64::INFINITY)]))).0,
        "TypeError",
        "not finite"
    );
}

#[wasm_bindgen_test]
fn a_wasteful_policy_is_accepted_with_its_warning() {
    let s = LeaseSupervisor::new(&with("policy", policy(&[("writeToleranceMs", 1_000.0)]))).expect("safe");
    let warnings: Vec<String> = s.warnings().iter().filter_map(|w| w.as_string()).collect();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("lease policy: writeToleranceMs (1000) is under one heartbeatIntervalMs (2000)"), "{}", warnings[0]);
    assert_eq!(LeaseSupervisor::new(&loop_options()).expect("defaults").warnings().length(), 0);
}

#[wasm_bindgen_test]
fn lease_policy_answers_the_checked_policy_as_a_plain_object() {
    let answer: JsValue = lease_policy(&JsValue::UNDEFINED).expect("defaults").into();
    let keys: Vec<String> = Object::keys(answer.unchecked_ref::<Object>()).iter().filter_map(|k| k.as_string()).collect();
    assert_eq!(keys, ["heartbeatIntervalMs", "skewAllowanceMs", "staleAfterMs", "writeToleranceMs", "warnings"]);
    let numbers: Vec<f64> = keys[..4].iter().filter_map(|k| get(&answer, k).as_f64()).collect();
    assert_eq!(numbers, [2_000.0, 1_000.0, 15_000.0, 11_000.0]);
    assert_eq!(get(&answer, "warnings").unchecked_into::<Array>().length(), 0);
    let partial: JsValue = lease_policy(&policy(&[("heartbeatIntervalMs", 1_500.7)])).expect("safe").into();
    assert_eq!(get(&partial, "heartbeatIntervalMs").as_f64(), Some(1_500.0), "fractions truncated");
    assert_eq!(get(&partial, "staleAfterMs").as_f64(), Some(15_000.0), "the rest defaulted");
}

fn context(heartbeat_at: Option<f64>, now: f64) -> JsValue {
    let c = object();
    set(&c, "heartbeatAtMs", heartbeat_at.map_or(JsValue::NULL, JsValue::from));
    set(&c, "nowMs", now);
    c
}

#[wasm_bindgen_test]
fn lease_is_alive_applies_the_core_window() {
    let window = lease_liveness_window(&JsValue::UNDEFINED).expect("default");
    assert_eq!(window, 15_000.0);
    assert_eq!(lease_is_alive(window, &context(Some(1_000.0), 16_000.0)), Ok(true));
    assert_eq!(lease_is_alive(window, &context(Some(999.0), 16_000.0)), Ok(false));
    assert_eq!(lease_is_alive(window, &context(None, 16_000.0)), Ok(false));
    assert_eq!(lease_is_alive(window, &context(Some(20_000.0), 16_000.0)), Ok(true));
    let (kind, message) = thrown(lease_is_alive(window, &JsValue::from(3)).unwrap_err());
    assert_eq!((kind, message.as_str()), ("TypeError", "leaseLiveness: context must be an object, got number"));
    assert_eq!(thrown(lease_liveness_window(&JsValue::from(-1)).unwrap_err()).0, "RangeError");
    assert_eq!(thrown(lease_liveness_window(&JsValue::from_str("15000")).unwrap_err()).0, "TypeError");
}

fn owner(host: &str) -> JsValue {
    let o = object();
    set(&o, "hostId", host);
    set(&o, "pid", 1.0);
    set(&o, "nonce", "n");
    o
}

#[wasm_bindgen_test]
fn same_host_incarnation_compares_host_ids() {
    assert_eq!(same_host_incarnation(&owner("a"), &owner("a")), Ok(true));
    assert_eq!(same_host_incarnation(&owner("a"), &owner("b")), Ok(false));
    let (kind, message) = thrown(same_host_incarnation(&owner("a"), &object()).unwrap_err());
    assert_eq!((kind, message.as_str()), ("TypeError", "sameHostIncarnation: claimant.hostId must be a string, got undefined"));
}

/// `LeaseWatch` as the IndexedDB queue calls it: `performance.now()` readings
/// (fractions) and stamps from another clock, a renewal restarting the watch.
#[wasm_bindgen_test]
fn lease_watch_times_a_lease_on_the_monotonic_clock_only() {
    let mut watch = LeaseWatch::new();
    let stamp = Some(1_796_000_000_000.0); // an hour "ago" on a stepped wall clock
    assert!(!watch.unrenewed_for(7.0, 2.0, stamp, 6_000.0, 10.5));
    assert!(!watch.unrenewed_for(7.0, 2.0, stamp, 6_000.0, 6_010.9), "6000 ms seen: not more than the window");
    assert!(watch.unrenewed_for(7.0, 2.0, stamp, 6_000.0, 6_011.5));
    assert!(!watch.unrenewed_for(7.0, 2.0, Some(1_796_000_002_000.0), 6_000.0, 6_012.0), "renewed");
    assert!(!watch.unrenewed_for(8.0, 1.0, None, 6_000.0, 6_012.0), "another job, first seen");
    watch.forget_unseen_since(6_012.0);
    assert!(watch.unrenewed_for(7.0, 2.0, Some(1_796_000_002_000.0), 6_000.0, 20_000.0), "kept: watched since 6012");
}

/// `LeaseWatch` as the PGlite queue calls it for a job cancelled while it
/// ran and retried: a look sights the cancelled lease, a later claim names
/// it (`id:token`) once it has been watched for its window.
#[wasm_bindgen_test]
fn lease_watch_lets_a_cancelled_lease_go_once_watched_for_its_window() {
    let mut watch = LeaseWatch::new();
    assert!(!watch.cancelled_unrenewed_for(7.0, 3.0, Some(1_796_000_000_000.0), 6_000.0, 10.5));
    assert!(watch.cancelled_watched(6_010.9).is_empty(), "6000 ms seen: not more than the window");
    assert_eq!(watch.cancelled_watched(6_011.5), vec!["7:3".to_owned()]);
    assert!(watch.cancelled_unrenewed_for(7.0, 3.0, Some(1_796_000_000_000.0), 6_000.0, 6_011.5));
}
