//! Reading `heartbeatLoop(options)` at the boundary: the run,
//! the owner, the store, the policy, the hooks, `logger` and `now`, as one
//! options object.
//!
//! Only the kinds JavaScript can get wrong are checked here; the policy's
//! ranges and relations are the core's ([`super::read_policy`]).

use crate::options::kind_of;
use crate::options::names::near_miss_of;
use js_sys::Reflect;
use leasehold_core::lease::LeasePolicy;
use wasm_bindgen::{JsCast, JsValue};

/// The options `heartbeatLoop` reads: a key close to one of these but not it
/// (`Policy`, `onlapse`) is refused, since ignoring it would run on the default
/// policy, or without the hook, unsaid.
const KNOWN: [&str; 8] = ["runId", "owner", "store", "policy", "onReconfirm", "onLapse", "logger", "now"];

fn refuse(what: &str, expected: &str, value: &JsValue) -> JsValue {
    let got = kind_of(value);
    js_sys::TypeError::new(&format!("heartbeatLoop: {what} must be {expected}, got {got}")).into()
}

fn get(target: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(target, &JsValue::from_str(key))
}

fn nullish(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
}

/// A function, or absent (`undefined` or `null`).
fn optional_function(options: &JsValue, key: &str) -> Result<(), JsValue> {
    let value = get(options, key)?;
    if nullish(&value) || value.is_function() { Ok(()) } else { Err(refuse(key, "a function", &value)) }
}

/// Checks `heartbeatLoop`'s options and reads its policy.
///
/// Required: `runId` (a string), `owner` (an object, handed to the store as
/// it is), `store` (an object with `heartbeat` and `reconfirm` functions).
/// Optional (`undefined` or `null` when absent): `onReconfirm`, `onLapse`,
/// `now` (functions), `logger` (a logger object, or a function answering
/// one), `policy` (see [`super::read_policy`]). A key that is a near miss of
/// one of these ([`crate::options::names`]' rule) is refused; others are ignored.
///
/// # Errors
/// A `TypeError` naming the option for a value of the wrong kind; the
/// policy's `TypeError` or `RangeError`; a throwing getter's own error.
pub fn read_loop_options(options: &JsValue) -> Result<(LeasePolicy, Vec<String>), JsValue> {
    if !options.is_object() {
        return Err(refuse("options", "an object", options));
    }
    for key in Reflect::own_keys(options.unchecked_ref())?.iter() {
        let Some(key) = key.as_string() else { continue };
        if let Some(option) = near_miss_of(&key, &KNOWN) {
            let message = format!("heartbeatLoop: unknown option {key}: did you mean {option}?");
            return Err(js_sys::TypeError::new(&message).into());
        }
    }
    let run_id = get(options, "runId")?;
    if run_id.as_string().is_none() {
        return Err(refuse("runId", "a string", &run_id));
    }
    let owner = get(options, "owner")?;
    if !owner.is_object() {
        return Err(refuse("owner", "an object ({ hostId, pid, nonce })", &owner));
    }
    let store = get(options, "store")?;
    if !store.is_object() {
        return Err(refuse("store", "an object with heartbeat and reconfirm functions", &store));
    }
    for (key, what) in [("heartbeat", "store.heartbeat"), ("reconfirm", "store.reconfirm")] {
        let method = get(&store, key)?;
        if !method.is_function() {
            return Err(refuse(what, "a function", &method));
        }
    }
    for key in ["onReconfirm", "onLapse", "now"] {
        optional_function(options, key)?;
    }
    let logger = get(options, "logger")?;
    if !(nullish(&logger) || logger.is_object() || logger.is_function()) {
        return Err(refuse("logger", "a logger object or a function answering one", &logger));
    }
    super::read_policy(&get(options, "policy")?)
}
