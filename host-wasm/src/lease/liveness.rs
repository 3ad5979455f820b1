//! The liveness checks JS gets, answered by the core's rules.
//!
//! The glue's `leaseLiveness(staleAfterMs?)` checks the window once with
//! [`lease_liveness_window`] and answers a function that calls
//! [`lease_is_alive`] with each context: one crossing per check.

use super::policy::span;
use crate::options::{js_error, kind_of};
use js_sys::Reflect;
use leasehold_core::lease::{LeaseLiveness, LeasePolicy, OwnerId};
use leasehold_core::Millis;
use wasm_bindgen::prelude::*;

fn type_error(message: &str) -> JsValue {
    js_error(message, true)
}

/// `leaseLiveness`'s window, checked: `undefined` or `null` is the default
/// stale-after (15 000 ms, [`LeasePolicy::DEFAULT`]); otherwise a finite,
/// non-negative number of ms, fractions truncated.
///
/// # Errors
/// `TypeError` for anything but a number or a non-finite one, `RangeError`
/// for a negative one; the message names `staleAfterMs`.
#[wasm_bindgen(js_name = leaseLivenessWindow)]
pub fn lease_liveness_window(stale_after_ms: &JsValue) -> Result<f64, JsValue> {
    if stale_after_ms.is_undefined() || stale_after_ms.is_null() {
        return Ok(LeasePolicy::DEFAULT.stale_after_ms as f64);
    }
    let Some(value) = stale_after_ms.as_f64() else {
        let got = kind_of(stale_after_ms);
        return Err(type_error(&format!("leaseLiveness: staleAfterMs must be a number, got {got}")));
    };
    span("staleAfterMs", value).map(|ms| ms as f64).map_err(|refusal| {
        js_error(&format!("leaseLiveness: {refusal}"), refusal.is_type_error())
    })
}

/// Reads `context[key]`: `Ok(None)` for `undefined` or `null`, the number
/// when it is a finite one, else a `TypeError` naming `context.<key>`.
fn time_field(context: &JsValue, key: &str) -> Result<Option<f64>, JsValue> {
    let value = Reflect::get(context, &JsValue::from_str(key))?;
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    match value.as_f64() {
        Some(number) if number.is_finite() => Ok(Some(number)),
        Some(number) => Err(type_error(&format!(
            "leaseLiveness: context.{key} must be a finite number, got {}",
            leasehold_core::options::JsNumber(number)
        ))),
        None => Err(type_error(&format!("leaseLiveness: context.{key} must be a number, got {}", kind_of(&value)))),
    }
}

/// One lease-only liveness check
/// applied to a `LivenessContext`: whether the owner whose persisted
/// heartbeat is `context.heartbeatAtMs` is still alive at `context.nowMs`,
/// by [`LeaseLiveness::is_fresh`]: alive while `heartbeatAtMs >= nowMs -
/// staleAfterMs`; a `null` heartbeat (none recorded) is gone.
///
/// Times cross as whole ms: fractions are truncated, negatives count as 0.
/// Truncating both sides can only keep an owner alive up to a millisecond
/// longer than the exact comparison would, never declare it gone sooner: the
/// safe direction for a check whose `false` permits a steal.
/// `window_ms` is [`lease_liveness_window`]'s answer.
///
/// # Errors
/// `TypeError` when `context` is not an object, `context.nowMs` is not a
/// finite number, or `context.heartbeatAtMs` is neither `null` nor a finite
/// number; the message names the field.
#[wasm_bindgen(js_name = leaseIsAlive)]
pub fn lease_is_alive(window_ms: f64, context: &JsValue) -> Result<bool, JsValue> {
    if !context.is_object() {
        return Err(type_error(&format!("leaseLiveness: context must be an object, got {}", kind_of(context))));
    }
    let heartbeat_at = time_field(context, "heartbeatAtMs")?;
    let Some(now) = time_field(context, "nowMs")? else {
        return Err(type_error("leaseLiveness: context.nowMs must be a number, got nothing"));
    };
    // `as` truncates and saturates: negatives are 0.
    let liveness = LeaseLiveness { stale_after_ms: window_ms as u64 };
    Ok(liveness.is_fresh(heartbeat_at.map(|at| Millis(at as u64)), Millis(now as u64)))
}

/// The host id of a JS owner (`{ hostId, pid, nonce }`), as a core
/// [`OwnerId`] carrying only it: `same_host_incarnation` reads nothing else.
fn host_of(owner: &JsValue, name: &str) -> Result<OwnerId, JsValue> {
    if !owner.is_object() {
        let got = kind_of(owner);
        return Err(type_error(&format!("sameHostIncarnation: {name} must be an owner object, got {got}")));
    }
    let host = Reflect::get(owner, &JsValue::from_str("hostId"))?;
    match host.as_string() {
        Some(host_id) => Ok(OwnerId::new(host_id, 0, "")),
        None => {
            let got = kind_of(&host);
            Err(type_error(&format!("sameHostIncarnation: {name}.hostId must be a string, got {got}")))
        }
    }
}

/// Whether the two
/// owners (`{ hostId, pid, nonce }`) are incarnations on the same host — their
/// `hostId`s are equal ([`leasehold_core::lease::same_host_incarnation`]).
/// The predicate a pid probe applies before it reads `expectedOwner.pid`.
///
/// # Errors
/// `TypeError` when either is not an object with a string `hostId`.
#[wasm_bindgen(js_name = sameHostIncarnation)]
pub fn same_host_incarnation(expected_owner: &JsValue, claimant: &JsValue) -> Result<bool, JsValue> {
    let expected = host_of(expected_owner, "expectedOwner")?;
    let claimant = host_of(claimant, "claimant")?;
    Ok(leasehold_core::lease::same_host_incarnation(&expected, &claimant))
}
