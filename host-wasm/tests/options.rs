//! Options at the boundary: `new Core(options)` refuses a bad option with a
//! `TypeError` (wrong kind, not finite) or `RangeError` (out of range) whose
//! message names it, and accepts what the seed accepts.

mod common;
use common::*;
use leasehold_wasm::Core;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

#[wasm_bindgen_test]
fn the_smallest_valid_options_are_accepted() {
    assert!(Core::new(&options()).is_ok());
}

#[wasm_bindgen_test]
fn options_that_are_not_an_object_are_a_type_error() {
    for value in [JsValue::UNDEFINED, JsValue::NULL, JsValue::from(3), JsValue::from_str("x")] {
        let (kind, message) = refusal(&value);
        assert_eq!(kind, "TypeError");
        assert!(message.contains("options must be an object"), "{message}");
    }
}

#[wasm_bindgen_test]
fn a_missing_or_non_function_callback_is_a_type_error_naming_it() {
    for key in ["claim", "perform"] {
        for value in [JsValue::UNDEFINED, JsValue::from(1)] {
            let (kind, message) = refusal(&with(key, value));
            assert_eq!(kind, "TypeError");
            assert!(message.contains(&format!("{key} must be a function")), "{message}");
        }
    }
    for key in ["heartbeat", "onEvent", "now"] {
        let (kind, message) = refusal(&with(key, "yes"));
        assert_eq!(kind, "TypeError", "{key}");
        assert!(message.contains(&format!("{key} must be a function, got string")), "{message}");
    }
    let (kind, message) = refusal(&with("logger", "yes"));
    assert_eq!(kind, "TypeError");
    let expected = "logger must be a logger object (with an error method) or a function answering one, got string";
    assert!(message.contains(expected), "{message}");
}

#[wasm_bindgen_test]
fn a_logger_object_needs_an_error_method() {
    let logger = js_sys::Object::new();
    let (kind, message) = refusal(&with("logger", logger.clone()));
    assert_eq!(kind, "TypeError");
    assert!(message.contains("logger.error must be a function, got undefined"), "{message}");
    js_sys::Reflect::set(&logger, &"error".into(), &js_sys::Function::new_no_args("")).unwrap();
    assert!(Core::new(&with("logger", logger)).is_ok());
}

#[wasm_bindgen_test]
fn a_key_close_to_an_option_is_a_type_error_naming_the_option() {
    let (kind, message) = refusal(&with("intervalMS", 5));
    assert_eq!(kind, "TypeError");
    assert!(message.ends_with("unknown option intervalMS: did you mean intervalMs?"), "{message}");
    assert!(Core::new(&with("intervalMilliseconds", 5)).is_ok(), "a far-away key is ignored");
}

#[wasm_bindgen_test]
fn absent_optional_callbacks_follow_the_seed_tests() {
    // heartbeat and onEvent are tested with `if` in the seed: any falsy value is absent.
    for value in [JsValue::UNDEFINED, JsValue::NULL, JsValue::FALSE, JsValue::from(0)] {
        assert!(Core::new(&with("heartbeat", value.clone())).is_ok());
        assert!(Core::new(&with("onEvent", value)).is_ok());
    }
    // logger and now use `??`: only undefined and null are absent.
    for key in ["logger", "now"] {
        assert!(Core::new(&with(key, JsValue::NULL)).is_ok());
        assert_eq!(refusal(&with(key, JsValue::FALSE)).0, "TypeError");
    }
}

#[wasm_bindgen_test]
fn the_name_must_be_a_string() {
    let (kind, message) = refusal(&with("name", 7));
    assert_eq!(kind, "TypeError");
    assert!(message.contains("name must be a string, got number"), "{message}");
}

#[wasm_bindgen_test]
fn a_number_given_as_another_kind_is_a_type_error_naming_it() {
    for key in ["intervalMs", "heartbeatEveryMs", "heartbeatSkewMs", "batchLimit", "concurrency"] {
        let (kind, message) = refusal(&with(key, "100"));
        assert_eq!(kind, "TypeError", "{key}");
        assert!(message.contains(&format!("{key} must be a number, got string")), "{message}");
    }
    let (kind, message) = refusal(&with("intervalMs", JsValue::UNDEFINED));
    assert_eq!((kind, message.contains("intervalMs must be a number, got undefined")), ("TypeError", true));
}

#[wasm_bindgen_test]
fn non_finite_spans_are_a_type_error_and_negative_ones_a_range_error() {
    for key in ["intervalMs", "staleAfterMs", "heartbeatEveryMs", "batchLimit"] {
        let (kind, message) = refusal(&with(key, f64::NAN));
        assert_eq!(kind, "TypeError", "{key}");
        assert!(message.contains(key) && message.contains("finite"), "{message}");
        let (kind, message) = refusal(&with(key, -1.0));
        assert_eq!(kind, "RangeError", "{key}");
        assert!(message.contains(key) && message.contains("negative"), "{message}");
    }
    let (kind, message) = refusal(&with("intervalMs", f64::INFINITY));
    assert_eq!((kind, message.contains("intervalMs")), ("TypeError", true));
}

#[wasm_bindgen_test]
fn concurrency_keeps_the_seed_clamping_rather_than_refusing() {
    for value in [0.0, -3.0, 2.9, 1e9, f64::NAN, f64::INFINITY] {
        assert!(Core::new(&with("concurrency", value)).is_ok(), "{value}");
    }
}

#[wasm_bindgen_test]
fn backoff_fields_are_checked_by_name() {
    let backoff = leasehold_wasm::job_backoff(100.0);
    set(&backoff, "maxMs", -5.0);
    let (kind, message) = refusal(&with("backoff", backoff));
    assert_eq!(kind, "RangeError");
    assert!(message.contains("backoff.maxMs"), "{message}");

    let backoff = leasehold_wasm::job_backoff(100.0);
    set(&backoff, "multiplier", "2");
    let (kind, message) = refusal(&with("backoff", backoff));
    assert_eq!(kind, "TypeError");
    assert!(message.contains("backoff.multiplier must be a number"), "{message}");

    let (kind, message) = refusal(&with("backoff", 5));
    assert_eq!((kind, message.contains("backoff must be an object")), ("TypeError", true));
    assert!(Core::new(&with("backoff", leasehold_wasm::job_backoff(100.0))).is_ok());
}

#[wasm_bindgen_test]
fn with_a_heartbeat_the_cadence_must_fit_twice_in_the_stale_window() {
    let o = with("heartbeat", func());
    set(&o, "staleAfterMs", 1000.0);
    set(&o, "heartbeatEveryMs", 500.0);
    let (kind, message) = refusal(&o);
    assert_eq!(kind, "RangeError");
    assert!(message.contains("heartbeatEveryMs") && message.contains("staleAfterMs"), "{message}");
    set(&o, "heartbeatEveryMs", 499.0);
    assert!(Core::new(&o).is_ok());
    // Without a heartbeat there is no such rule.
    let o = with("heartbeatEveryMs", 500.0);
    set(&o, "staleAfterMs", 1000.0);
    assert!(Core::new(&o).is_ok());
}

#[wasm_bindgen_test]
fn a_skew_allowance_that_leaves_no_write_tolerance_is_a_range_error() {
    let o = with("heartbeat", func());
    set(&o, "staleAfterMs", 3000.0);
    set(&o, "heartbeatEveryMs", 1000.0);
    set(&o, "heartbeatSkewMs", 2000.0);
    let (kind, message) = refusal(&o);
    assert_eq!(kind, "RangeError");
    assert!(message.contains("heartbeatSkewMs"), "{message}");
}

#[wasm_bindgen_test]
fn stale_after_ms_may_be_left_out_only_without_a_heartbeat() {
    let o = options();
    set(&o, "staleAfterMs", JsValue::UNDEFINED);
    assert!(Core::new(&o).is_ok());
    set(&o, "heartbeat", func());
    let (kind, message) = refusal(&o);
    assert_eq!((kind, message.contains("staleAfterMs must be a number")), ("TypeError", true));
}

#[wasm_bindgen_test]
fn a_getter_that_throws_is_rethrown_as_it_is() {
    let o = options();
    let getter = js_sys::Function::new_no_args("throw new SyntaxError('from the getter')");
    let descriptor = js_sys::Object::new();
    set(&descriptor, "get", getter);
    js_sys::Object::define_property(o.unchecked_ref::<js_sys::Object>(), &JsValue::from_str("intervalMs"), &descriptor);
    let error = Core::new(&o).err().expect("refused");
    assert!(error.is_instance_of::<js_sys::SyntaxError>());
}

