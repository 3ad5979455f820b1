//! The module-level exports: `protocol()` (what the glue reads the layout
//! from), `jobBackoff`, `wasmMemory`.

mod common;
use js_sys::{Array, Reflect};
use leasehold_wasm::protocol::{self, op};
use leasehold_wasm::{job_backoff, Core};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;

fn get(target: &JsValue, key: &str) -> JsValue {
    Reflect::get(target, &JsValue::from_str(key)).expect("readable")
}

fn num(target: &JsValue, key: &str) -> f64 {
    get(target, key).as_f64().unwrap_or_else(|| panic!("{key} is a number"))
}

#[wasm_bindgen_test]
fn job_backoff_is_the_seed_formula_as_a_plain_object() {
    for (interval, max) in [(100.0, 1000.0), (10_000.0, 60_000.0), (120_000.0, 120_000.0)] {
        let b: JsValue = job_backoff(interval).into();
        assert_eq!(num(&b, "initialMs"), interval);
        assert_eq!(num(&b, "maxMs"), max);
        assert_eq!(num(&b, "multiplier"), 2.0);
        let keys: Vec<String> = js_sys::Object::keys(&b.clone().unchecked_into::<js_sys::Object>()).iter().filter_map(|k| k.as_string()).collect();
        assert_eq!(keys, ["initialMs", "maxMs", "multiplier"], "own enumerable data properties");
    }
}

#[wasm_bindgen_test]
fn the_protocol_names_the_layout_and_every_opcode() {
    let p: JsValue = leasehold_wasm::protocol().into();
    assert_eq!(num(&p, "stride"), protocol::STRIDE as f64);
    assert_eq!(num(&p, "header"), protocol::HEADER as f64);
    assert_eq!(num(&p, "capacity"), protocol::CAPACITY as f64);
    assert_eq!(num(&p, "defaultBatchLimit"), 25.0);
    assert_eq!(num(&p, "maxDelayMs"), 2_147_483_647.0);
    let ops = get(&p, "ops");
    for (key, code) in [
        ("claim", op::CLAIM),
        ("perform", op::PERFORM),
        ("renew", op::RENEW),
        ("abort", op::ABORT),
        ("drop", op::DROP),
        ("log", op::LOG),
        ("passEnded", op::PASS_ENDED),
        ("more", op::MORE),
        ("event", op::EVENT),
    ] {
        assert_eq!(num(&ops, key), f64::from(code), "{key}");
    }
    let events: Vec<String> = get(&p, "events").unchecked_into::<Array>().iter().filter_map(|v| v.as_string()).collect();
    assert_eq!(
        events,
        [
            "pass-start",
            "pass-end",
            "claimed",
            "claim-failed",
            "performed",
            "item-failed",
            "heartbeat",
            "heartbeat-failed",
            "claim-lost"
        ]
    );
    let kinds = get(&p, "kinds");
    let renew = get(&kinds, "renew");
    let offsets: Vec<f64> = ["code", "slot", "gen", "call", "at"].iter().map(|k| num(&renew, k)).collect();
    assert_eq!(offsets, [f64::from(op::RENEW), 1.0, 2.0, 3.0, 4.0], "fields by name, at their slots");
    let event_kinds: Array = get(&p, "eventKinds").unchecked_into();
    let performed = event_kinds.get(4);
    assert_eq!(get(&performed, "type").as_string().as_deref(), Some("performed"));
    assert_eq!(num(&performed, "code"), f64::from(op::EVENT) + 4.0);
    let fields: Vec<String> = get(&performed, "fields")
        .unchecked_into::<Array>()
        .iter()
        .map(|row| {
            let row: Array = row.unchecked_into();
            format!("{}@{}:{}", row.get(0).as_string().unwrap_or_default(), row.get(1).as_f64().unwrap_or(-1.0), row.get(2).as_string().unwrap_or_default())
        })
        .collect();
    assert_eq!(fields, ["at@1:number", "item@2:number", "durationMs@3:number"]);
    let logs: Vec<String> = get(&p, "logMessages").unchecked_into::<Array>().iter().filter_map(|v| v.as_string()).collect();
    assert_eq!(logs, ["work failed", "claim failed"]);
}

#[wasm_bindgen_test]
fn the_action_buffer_lies_inside_wasm_memory() {
    let core = Core::new(&common::options()).expect("valid");
    let memory: js_sys::WebAssembly::Memory = leasehold_wasm::memory().unchecked_into();
    let bytes = memory.buffer().unchecked_into::<js_sys::ArrayBuffer>().byte_length();
    let end = core.buffer_ptr() as usize + protocol::LEN * 8;
    assert!(end <= bytes as usize);
    assert_eq!(core.buffer_ptr() % 8, 0, "aligned for a Float64Array view");
}
