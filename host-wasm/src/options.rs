//! Reading `createJobRunner(options)` at the boundary.
//!
//! This file checks only what JavaScript can get wrong and Rust cannot: the
//! kind of each value (a number, a function, a string). Ranges, defaults and
//! normalisation are the core's ([`OptionsInput::validate`]). `heartbeat`,
//! `backoff` and `onEvent` are absent when falsy (`undefined`, `null`,
//! `false`, `0`, `''`, …); the numeric options and `logger`/`now` are absent
//! only when `undefined` or `null`. `logger` is a function answering a logger
//! or a logger object (`console`), and a key that looks like a misspelt option
//! is refused ([`names`]).

pub mod names;

use core::fmt;
use js_sys::Reflect;
use leasehold_core::backoff::Backoff;
use leasehold_core::options::{AbortGrace, Config, OptionError, OptionNames, OptionsInput, Scheduling};
use wasm_bindgen::{JsCast, JsValue};

/// The options, checked: the core's configuration and whether a trace sink
/// (`onEvent`) was given.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Checked {
    /// Validated and normalised by the core.
    pub config: Config,
    /// `onEvent` is a function: events are built.
    pub tracing: bool,
}

/// Why `createJobRunner` refused its options. `Display` is the message of the
/// JS error, which names the option.
#[derive(Clone, Debug, PartialEq)]
pub enum OptionsError {
    /// `options` itself is not an object (`TypeError`).
    NotAnObject {
        /// What was given instead (`typeof`, or `null`).
        got: &'static str,
    },
    /// An option holds the wrong kind of value (`TypeError`).
    WrongKind {
        /// The option's JS name, e.g. `intervalMs` or `backoff.maxMs`.
        option: &'static str,
        /// What it must be, e.g. `a number`.
        expected: &'static str,
        /// What was given (`typeof`, or `null`).
        got: &'static str,
    },
    /// The core refused a value (`TypeError` for a non-finite number,
    /// `RangeError` otherwise).
    Invalid(OptionError),
    /// A key that is no option but close to one (`TypeError`): see [`names`].
    Misspelt {
        /// The key as given, e.g. `intervalMS`.
        key: String,
        /// The option it is close to, e.g. `intervalMs`.
        option: &'static str,
    },
}

impl OptionsError {
    /// Whether JS throws a `TypeError` (wrong kind of value) rather than a
    /// `RangeError` (a number out of range).
    pub fn is_type_error(&self) -> bool {
        match self {
            OptionsError::NotAnObject { .. } | OptionsError::WrongKind { .. } | OptionsError::Misspelt { .. } => true,
            OptionsError::Invalid(e) => e.is_type_error(),
        }
    }

    /// The JS error to throw: a `TypeError` or `RangeError` with this message.
    pub fn to_js(&self) -> JsValue {
        js_error(&self.to_string(), self.is_type_error())
    }
}

impl fmt::Display for OptionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("createJobRunner: ")?;
        match self {
            OptionsError::NotAnObject { got } => write!(f, "options must be an object, got {got}"),
            OptionsError::WrongKind { option, expected, got } => {
                write!(f, "{option} must be {expected}, got {got}")
            }
            OptionsError::Invalid(e) => write!(f, "{e}"),
            OptionsError::Misspelt { key, option } => write!(f, "unknown option {key}: did you mean {option}?"),
        }
    }
}

/// The JS error to throw with `message`: a `TypeError` (a value of the wrong
/// kind) when `type_error`, else a `RangeError` (a number out of range).
pub(crate) fn js_error(message: &str, type_error: bool) -> JsValue {
    if type_error {
        js_sys::TypeError::new(message).into()
    } else {
        js_sys::RangeError::new(message).into()
    }
}

/// `typeof value`, with `null` told apart from objects.
pub(crate) fn kind_of(value: &JsValue) -> &'static str {
    if value.is_null() {
        return "null";
    }
    match value.js_typeof().as_string().as_deref() {
        Some("undefined") => "undefined",
        Some("boolean") => "boolean",
        Some("number") => "number",
        Some("bigint") => "bigint",
        Some("string") => "string",
        Some("symbol") => "symbol",
        Some("function") => "function",
        _ => "object",
    }
}

/// Reads `options[key]`. A getter (or proxy trap) that throws is rethrown as
/// it is: it is the caller's error, not ours to rename.
fn get(options: &JsValue, key: &str) -> Result<JsValue, JsValue> {
    Reflect::get(options, &JsValue::from_str(key))
}

fn nullish(value: &JsValue) -> bool {
    value.is_undefined() || value.is_null()
}

fn falsy(value: &JsValue) -> bool {
    !value.is_truthy()
}

fn wrong(option: &'static str, expected: &'static str, value: &JsValue) -> JsValue {
    OptionsError::WrongKind { option, expected, got: kind_of(value) }.to_js()
}

fn number(option: &'static str, value: &JsValue) -> Result<f64, JsValue> {
    value.as_f64().ok_or_else(|| wrong(option, "a number", value))
}

fn optional_number(options: &JsValue, option: &'static str) -> Result<Option<f64>, JsValue> {
    let value = get(options, option)?;
    if nullish(&value) { Ok(None) } else { number(option, &value).map(Some) }
}

/// A function, or absent when `absent(value)`.
fn optional_function(
    options: &JsValue,
    option: &'static str,
    absent: fn(&JsValue) -> bool,
) -> Result<bool, JsValue> {
    let value = get(options, option)?;
    if absent(&value) {
        return Ok(false);
    }
    if value.is_function() { Ok(true) } else { Err(wrong(option, "a function", &value)) }
}

fn required_function(options: &JsValue, option: &'static str) -> Result<(), JsValue> {
    let value = get(options, option)?;
    if value.is_function() { Ok(()) } else { Err(wrong(option, "a function", &value)) }
}

/// `logger`: absent when nullish; else a function answering a logger at each
/// line, or a logger object used as it is (`console`), which
/// must have an `error` method (the level the runner logs at).
fn check_logger(options: &JsValue) -> Result<(), JsValue> {
    let value = get(options, "logger")?;
    if nullish(&value) || value.is_function() {
        return Ok(());
    }
    const EXPECTED: &str = "a logger object (with an error method) or a function answering one";
    if !value.is_object() {
        return Err(wrong("logger", EXPECTED, &value));
    }
    let error = get(&value, "error")?;
    if error.is_function() {
        Ok(())
    } else {
        Err(OptionsError::WrongKind { option: "logger.error", expected: "a function", got: kind_of(&error) }.to_js())
    }
}

/// Refuses the first own string key that is a near miss of an option. A
/// proxy whose `ownKeys` trap throws has its error rethrown as it is.
fn check_names(options: &JsValue) -> Result<(), JsValue> {
    for key in Reflect::own_keys(options.unchecked_ref())?.iter() {
        let Some(key) = key.as_string() else { continue };
        if let Some(option) = names::near_miss(&key) {
            return Err(OptionsError::Misspelt { key, option }.to_js());
        }
    }
    Ok(())
}

fn read_backoff(options: &JsValue) -> Result<Option<Backoff>, JsValue> {
    let value = get(options, "backoff")?;
    if falsy(&value) {
        return Ok(None);
    }
    if !value.is_object() {
        return Err(wrong("backoff", "an object ({ initialMs, maxMs, multiplier })", &value));
    }
    let field = |option: &'static str, key: &str| -> Result<f64, JsValue> { number(option, &get(&value, key)?) };
    Ok(Some(Backoff {
        initial_ms: field("backoff.initialMs", "initialMs")?,
        max_ms: field("backoff.maxMs", "maxMs")?,
        multiplier: field("backoff.multiplier", "multiplier")?,
    }))
}

/// Reads and checks `createJobRunner`'s options object.
///
/// Required: `name` (a string), `intervalMs` (a number), `claim` and
/// `perform` (functions), and `staleAfterMs` (a number) when a `heartbeat` is
/// given; without one nothing reads it, so it may be left out.
/// Optional: `heartbeat`, `onEvent`, `now` (functions), `logger` (a
/// function answering a logger, or a logger object with an `error` method),
/// `heartbeatEveryMs`, `heartbeatSkewMs`, `batchLimit`, `concurrency`
/// (numbers), `backoff` (`{ initialMs, maxMs, multiplier }`, numbers).
///
/// # Errors
/// The JS error to throw: a `TypeError` naming the option for a value of the
/// wrong kind or a non-finite number, a `RangeError` naming it for a number
/// out of range ([`OptionsError`]); a `TypeError` naming the option a key
/// is a near miss of ([`names`]); a throwing getter's own error.
pub fn read(options: &JsValue) -> Result<Checked, JsValue> {
    if !options.is_object() {
        return Err(OptionsError::NotAnObject { got: kind_of(options) }.to_js());
    }
    check_names(options)?;
    let name = get(options, "name")?;
    if name.as_string().is_none() {
        return Err(wrong("name", "a string", &name));
    }
    required_function(options, "claim")?;
    required_function(options, "perform")?;
    let heartbeat = optional_function(options, "heartbeat", falsy)?;
    let tracing = optional_function(options, "onEvent", falsy)?;
    check_logger(options)?;
    optional_function(options, "now", nullish)?;

    let interval_ms = number("intervalMs", &get(options, "intervalMs")?)?;
    let stale = get(options, "staleAfterMs")?;
    // With a heartbeat it is required: say so, since the table of options is where users look.
    let stale_after_ms = match (nullish(&stale), heartbeat) {
        (true, false) => 0.0,
        (true, true) => return Err(wrong("staleAfterMs", "a number (required with a heartbeat)", &stale)),
        (false, _) => number("staleAfterMs", &stale)?,
    };
    let input = OptionsInput {
        interval_ms,
        stale_after_ms,
        heartbeat,
        heartbeat_every_ms: optional_number(options, "heartbeatEveryMs")?,
        heartbeat_skew_ms: optional_number(options, "heartbeatSkewMs")?,
        backoff: read_backoff(options)?,
        batch_limit: optional_number(options, "batchLimit")?,
        concurrency: optional_number(options, "concurrency")?,
        // JS cannot interrupt a promise: an aborted perform runs to its end,
        // so the lease budget has no grace (G = 0) and the work must honour
        // its signal.
        abort_grace: AbortGrace::Never,
        names: OptionNames::JS,
        // The reference runner's passes: the JS API offers no other.
        scheduling: Scheduling::Passes,
        // A JS runner's job keeps no lease of its own in a store.
        store_lease_ms: None,
        // Never dropped (no grace), so never dropped early either.
        drop_by_exit_deadline: false,
    };
    let config = input.validate().map_err(|e| OptionsError::Invalid(e).to_js())?;
    Ok(Checked { config, tracing })
}
