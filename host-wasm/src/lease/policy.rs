//! The lease policy at the boundary: a JS object
//! `{ heartbeatIntervalMs, skewAllowanceMs, staleAfterMs, writeToleranceMs }`
//! read into a core [`LeasePolicy`] and checked by
//! [`LeasePolicy::validate`], so JS gets the core's refusals with the broken
//! relation named — in the option names JS uses.

use crate::options::{js_error, kind_of};
use crate::options::names::near_miss_of;
use core::fmt;
use js_sys::{Array, Object, Reflect};
use leasehold_core::lease::{LeasePolicy, PolicyError};
use leasehold_core::options::OptionError;
use wasm_bindgen::prelude::*;

/// The policy's fields by their JS names, in [`LeasePolicy`]'s field order.
const FIELDS: [&str; 4] = ["heartbeatIntervalMs", "skewAllowanceMs", "staleAfterMs", "writeToleranceMs"];

/// The core's message with its field names in the JS API's spelling
/// (`write_tolerance_ms` → `writeToleranceMs`), so the option named is the
/// one the caller wrote; the wording and the numbers stay the core's.
///
/// Every `_x` becomes `X`: the core's policy messages hold underscores only
/// in field names (the wasm tests compare whole messages). A character loop,
/// not `str::replace`, which would bring string searching and its panic
/// paths into the module for four names.
pub(crate) fn js_names(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut upper = false;
    for c in message.chars() {
        match (c, upper) {
            ('_', _) => upper = true,
            (c, true) => {
                out.push(c.to_ascii_uppercase());
                upper = false;
            }
            (c, false) => out.push(c),
        }
    }
    out
}

/// Why a policy object was refused. `Display` is the JS error's message; it
/// starts with `lease policy: ` and names the option or the relation.
#[derive(Clone, Debug, PartialEq)]
pub enum PolicyRefusal {
    /// `policy` is neither an object nor `undefined`/`null` (`TypeError`).
    NotAnObject {
        /// `typeof policy`, or `null`.
        got: &'static str,
    },
    /// A key that is not a field but close to one, e.g. `staleAfterMS`
    /// (`TypeError`): ignoring it would run on the default span unsaid.
    Misspelt {
        /// The key as given.
        key: String,
        /// The field it was probably meant to be.
        option: &'static str,
    },
    /// A field holds something other than a number (`TypeError`).
    WrongKind {
        /// The field's JS name, e.g. `staleAfterMs`.
        option: &'static str,
        /// `typeof` what it holds.
        got: &'static str,
    },
    /// A field is not finite (`TypeError`) or negative (`RangeError`).
    Invalid(OptionError),
    /// The set breaks a relation of [`LeasePolicy::validate`] (`RangeError`).
    Unsafe(PolicyError),
}

impl PolicyRefusal {
    /// The JS error to throw: `TypeError` for a value of the wrong kind or a
    /// non-finite number, `RangeError` for a number out of range or an
    /// unsafe set.
    pub fn to_js(&self) -> JsValue {
        let type_error = match self {
            PolicyRefusal::NotAnObject { .. } | PolicyRefusal::Misspelt { .. } | PolicyRefusal::WrongKind { .. } => true,
            PolicyRefusal::Invalid(e) => e.is_type_error(),
            PolicyRefusal::Unsafe(_) => false,
        };
        js_error(&self.to_string(), type_error)
    }
}

impl fmt::Display for PolicyRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PolicyRefusal::NotAnObject { got } => write!(f, "lease policy: policy must be an object, got {got}"),
            PolicyRefusal::Misspelt { key, option } => {
                write!(f, "lease policy: unknown field {key}: did you mean {option}?")
            }
            PolicyRefusal::WrongKind { option, got } => {
                write!(f, "lease policy: {option} must be a number, got {got}")
            }
            PolicyRefusal::Invalid(e) => write!(f, "lease policy: {e}"),
            // The core's message already starts with `lease policy: `.
            PolicyRefusal::Unsafe(e) => f.write_str(&js_names(&e.to_string())),
        }
    }
}

/// A span in ms: finite, not negative, fractions truncated (the runner
/// options' rule, with [`OptionError`]'s refusals).
pub(super) fn span(option: &'static str, value: f64) -> Result<u64, OptionError> {
    if !value.is_finite() {
        return Err(OptionError::NotFinite { option, value });
    }
    if value < 0.0 {
        return Err(OptionError::Negative { option, value });
    }
    // Finite and not negative: `as` truncates, saturating above u64::MAX.
    Ok(value as u64)
}

/// Reads a JS policy object: each field a number of ms (fractions
/// truncated); a key close to a field's name but not it (`staleAfterMS`) is
/// refused, other keys are ignored; a field left `undefined` or `null` takes
/// [`LeasePolicy::DEFAULT`]'s value, and so does every field when `policy`
/// itself is `undefined` or `null`. Then [`LeasePolicy::validate`]: the
/// policy and its warnings (messages in JS names).
///
/// # Errors
/// The JS error to throw ([`PolicyRefusal::to_js`]); a throwing getter's own
/// error, rethrown as it is.
pub fn read_policy(policy: &JsValue) -> Result<(LeasePolicy, Vec<String>), JsValue> {
    let mut values = [
        LeasePolicy::DEFAULT.heartbeat_interval_ms,
        LeasePolicy::DEFAULT.skew_allowance_ms,
        LeasePolicy::DEFAULT.stale_after_ms,
        LeasePolicy::DEFAULT.write_tolerance_ms,
    ];
    if !(policy.is_undefined() || policy.is_null()) {
        if !policy.is_object() {
            return Err(PolicyRefusal::NotAnObject { got: kind_of(policy) }.to_js());
        }
        for key in Reflect::own_keys(policy.unchecked_ref())?.iter() {
            let Some(key) = key.as_string() else { continue };
            if let Some(option) = near_miss_of(&key, &FIELDS) {
                return Err(PolicyRefusal::Misspelt { key, option }.to_js());
            }
        }
        for (option, slot) in FIELDS.iter().zip(values.iter_mut()) {
            let value = Reflect::get(policy, &JsValue::from_str(option))?;
            if value.is_undefined() || value.is_null() {
                continue;
            }
            let Some(number) = value.as_f64() else {
                return Err(PolicyRefusal::WrongKind { option, got: kind_of(&value) }.to_js());
            };
            *slot = span(option, number).map_err(|e| PolicyRefusal::Invalid(e).to_js())?;
        }
    }
    let [heartbeat_interval_ms, skew_allowance_ms, stale_after_ms, write_tolerance_ms] = values;
    // A JS run's work is interrupted through its signal, never ended from
    // outside: no exit grace.
    let checked = LeasePolicy { heartbeat_interval_ms, skew_allowance_ms, stale_after_ms, write_tolerance_ms, exit_grace_ms: 0 };
    let warnings = checked.validate().map_err(|e| PolicyRefusal::Unsafe(e).to_js())?;
    Ok((checked, warnings.iter().map(|w| js_names(&w.to_string())).collect()))
}

/// `leasePolicy(policy?)`: the policy [`read_policy`] reads, checked, as a
/// plain object `{ heartbeatIntervalMs, skewAllowanceMs, staleAfterMs,
/// writeToleranceMs, warnings }` (whole ms; `warnings`: the messages of a
/// safe but wasteful set, usually empty). `leasePolicy()` answers the
/// defaults (2000, 1000, 15000, 11000).
///
/// # Errors
/// A `TypeError` or `RangeError` whose message names the option or the
/// broken relation (see [`PolicyRefusal`]).
#[wasm_bindgen(js_name = leasePolicy)]
pub fn lease_policy(policy: &JsValue) -> Result<Object, JsValue> {
    let (checked, warnings) = read_policy(policy)?;
    let out = Object::new();
    crate::set(&out, "heartbeatIntervalMs", checked.heartbeat_interval_ms as f64);
    crate::set(&out, "skewAllowanceMs", checked.skew_allowance_ms as f64);
    crate::set(&out, "staleAfterMs", checked.stale_after_ms as f64);
    crate::set(&out, "writeToleranceMs", checked.write_tolerance_ms as f64);
    let list: Array = warnings.iter().map(|w| JsValue::from_str(w)).collect();
    crate::set(&out, "warnings", list);
    Ok(out)
}
