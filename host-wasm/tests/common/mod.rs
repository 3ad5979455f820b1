//! Shared helpers for the wasm-bindgen tests: option objects built the way a
//! JS caller builds them, and a reader for the action buffer.
#![allow(dead_code)]

use js_sys::{Function, Object, Reflect};
#[cfg(feature = "runner")]
use leasehold_wasm::Core;
#[cfg(feature = "runner")]
use leasehold_wasm::protocol::{CAPACITY, DEADLINE, END, HEADER, STRIDE};
use wasm_bindgen::{JsCast, JsValue};

/// A function that does nothing (the core never calls it; only its kind matters).
pub fn func() -> JsValue {
    Function::new_no_args("").into()
}

/// `target[key] = value`.
pub fn set(target: &JsValue, key: &str, value: impl Into<JsValue>) {
    Reflect::set(target, &JsValue::from_str(key), &value.into()).expect("set");
}

/// The smallest valid options: name, intervalMs, staleAfterMs, claim, perform.
pub fn options() -> JsValue {
    let o: JsValue = Object::new().into();
    set(&o, "name", "t");
    set(&o, "intervalMs", 1000.0);
    set(&o, "staleAfterMs", 30_000.0);
    set(&o, "claim", func());
    set(&o, "perform", func());
    o
}

/// `options()` with `key` set to `value`.
pub fn with(key: &str, value: impl Into<JsValue>) -> JsValue {
    let o = options();
    set(&o, key, value);
    o
}

#[cfg(feature = "runner")]
/// What `new Core(options)` threw: (kind, message), kind `TypeError` or
/// `RangeError` (or `other`).
pub fn refusal(options: &JsValue) -> (&'static str, String) {
    match Core::new(options) {
        Ok(_) => panic!("options were accepted"),
        Err(error) => thrown(error),
    }
}

/// A thrown JS error as (kind, message), kind `TypeError` or `RangeError`
/// (or `other`).
pub fn thrown(error: JsValue) -> (&'static str, String) {
    let kind = if error.is_instance_of::<js_sys::TypeError>() {
        "TypeError"
    } else if error.is_instance_of::<js_sys::RangeError>() {
        "RangeError"
    } else {
        "other"
    };
    let message = error.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default();
    (kind, message)
}

/// One record of the buffer: opcode and its fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Record {
    pub op: u8,
    pub fields: Vec<f64>,
}

#[cfg(feature = "runner")]
/// The records written since the buffer was last consumed, then consumes them
/// (as the glue does).
pub fn take(core: &mut Core) -> Vec<Record> {
    let buf = core.buffer();
    let end = buf[END] as usize;
    assert!(end <= CAPACITY);
    let records = (0..end)
        .map(|r| {
            let record = &buf[HEADER + r * STRIDE..][..STRIDE];
            Record { op: record[0] as u8, fields: record[1..].to_vec() }
        })
        .collect();
    core.consume();
    records
}

/// Opcodes only.
pub fn ops(records: &[Record]) -> Vec<u8> {
    records.iter().map(|r| r.op).collect()
}

#[cfg(feature = "runner")]
/// The deadline slot: `None` for -1.
pub fn deadline(core: &Core) -> Option<f64> {
    let d = core.buffer()[DEADLINE];
    (d >= 0.0).then_some(d)
}
